"""Arithmetic analysis (placeholder until the analyzer lands): see analyzer.py."""

from .analyzer import Analyzer, ConstIntBound, ModularSet

__all__ = ["Analyzer", "ConstIntBound", "ModularSet"]
