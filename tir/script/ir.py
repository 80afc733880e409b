"""The ``I.`` namespace of TVMScript: ``from tir.script import ir as I``."""

from .entry import ir_module

__all__ = ["ir_module"]
