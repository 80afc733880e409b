"""Every tir expression node is known to every component that dispatches on node classes.

The node classes come from the namespaces of tir's modules, not from a hand
list, so a node added anywhere under tir/ is checked. Each component is
asked through its dispatch table: a ``visit_<snake_name>`` method found along
the node's bases (the convention of ``tir.functor`` and of the visitors built
on it), a class in a table, or, for the components driven by field metadata,
the node's attrs field declarations. No program is built or run.

A node a component deliberately does not handle is in ``ALLOWED`` with the
reason. The list of places is in the docstring of ``tir/expr.py``.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable, Iterable

import attrs
import pytest

import tir
from codegen.interp.machine import Machine
from codegen.llvm.codegen_llvm import CodeGenLLVM
from tir.arith.pattern import PConst, PVar
from tir.expr import EXPR_BASES, Any, PrimExpr
from tir.functor import method_name
from tir.node import EXPR, EXPRS
from tir.printer import _Printer
from tir.schedule.trace_json import EXPR_CLASSES
from tir.script import builtins as T
from tir.script import expr as script_expr
from tir.te.reduce import Reduce
from transform.vector.vectorizer.expr_rules import ExprVectorizer

#: PrimExpr subclasses under tir/ that are not IR nodes, and why.
NOT_NODES = {
    PVar: "a pattern variable of the simplifier's rule language (tir/arith/pattern.py)",
    PConst: "a pattern constant of the simplifier's rule language (tir/arith/pattern.py)",
}


def expr_node_classes() -> list[type]:
    """Every concrete PrimExpr class defined in a module of the tir package."""
    found = set()
    for info in pkgutil.walk_packages(tir.__path__, "tir."):
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, PrimExpr) \
                    and obj.__module__ == module.__name__:
                found.add(obj)
    found -= set(EXPR_BASES) | set(NOT_NODES)
    return sorted(found, key=lambda cls: (cls.__module__, cls.__name__))


# ---------------------------------------------------------------- how each component knows


def has_visit_method(visitor: type, cls: type) -> bool:
    """``visitor`` has ``visit_<snake_name>`` for ``cls`` or one of its node bases.

    The walk stops at PrimExpr, as ``tir.functor``'s dispatch does: ``visit_prim_expr``
    would be a catch-all, not knowledge of the node.
    """
    for base in cls.__mro__:
        if base is PrimExpr:
            return False
        if getattr(visitor, method_name(base), None) is not None:
            return True
    return False


def fields_declared(cls: type) -> bool:
    """An attrs node whose PrimExpr fields are declared as children (``expr_field``...).

    The visitors and mutators (tir.functor), structural equality, hashing and
    digest, and pickling walk nodes by these declarations alone.
    """
    if not attrs.has(cls):
        return False
    return all(f.metadata.get("kind") in (EXPR, EXPRS)
               for f in attrs.fields(cls) if "PrimExpr" in str(f.type))


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z][a-z])", "_", name).lower()


def _script_syntax_classes() -> set[type]:
    """The node classes in the TVMScript evaluator's syntax tables (``+``, ``<``, ...)."""
    return {cls for table in vars(script_expr).values() if isinstance(table, dict)
            for cls in table.values() if isinstance(cls, type) and issubclass(cls, PrimExpr)}


def parser_knows(cls: type) -> bool:
    """TVMScript spells ``cls`` as ``T.<ClassName>``/``T.<snake_name>`` or as syntax."""
    names = vars(T)
    return (cls.__name__ in names or _snake(cls.__name__) in names
            or cls in _script_syntax_classes())


#: component -> whether it knows a node class.
COMPONENTS: dict[str, Callable[[type], bool]] = {
    "fields (functor, structural equal/hash/digest, pickling)": fields_declared,
    "printer (tir/printer/exprs.py)": lambda cls: has_visit_method(_Printer, cls),
    "TVMScript parser (tir/script)": parser_knows,
    "vectorizer (ExprVectorizer)": lambda cls: has_visit_method(ExprVectorizer, cls),
    "LLVM emitter (CodeGenLLVM)": lambda cls: has_visit_method(CodeGenLLVM, cls),
    "interpreter (codegen/interp Machine)": lambda cls: has_visit_method(Machine, cls),
    "trace JSON (EXPR_CLASSES)": lambda cls: EXPR_CLASSES.get(cls.__name__) is cls,
}

_TE_ONLY = ("te only: create_prim_func turns it into a block with an init and an update "
            "before any pass, backend or schedule sees it")

#: (component, node class) -> why the component does not handle the node.
ALLOWED: dict[tuple[str, type], str] = {
    ("printer (tir/printer/exprs.py)", Reduce):
        "te only; Reduce.script() prints it (T.sum(...)) where it is shown on its own",
    ("TVMScript parser (tir/script)", Reduce): _TE_ONLY,
    ("vectorizer (ExprVectorizer)", Reduce): _TE_ONLY,
    ("LLVM emitter (CodeGenLLVM)", Reduce): _TE_ONLY,
    ("interpreter (codegen/interp Machine)", Reduce): _TE_ONLY,
    ("trace JSON (EXPR_CLASSES)", Reduce): _TE_ONLY,
    ("vectorizer (ExprVectorizer)", Any):
        "a scalar leaf without operands: the generic mutator keeps it, as a scalar must be",
    ("LLVM emitter (CodeGenLLVM)", Any):
        "an unknown dimension has no value to emit: the build raises 'Any is not supported "
        "by the LLVM backend'",
    ("interpreter (codegen/interp Machine)", Any):
        "an unknown dimension has no value: the interpreter raises 'no rule for Any nodes'",
    ("trace JSON (EXPR_CLASSES)", Any):
        "each Any() is its own unknown (a hidden token), which a trace cannot name",
    ("TVMScript parser (tir/script)", tir.IntImm): "Python int literals (and T.int32(4) ...)",
    ("TVMScript parser (tir/script)", tir.FloatImm): "Python float literals (T.float32(0.5))",
    ("TVMScript parser (tir/script)", tir.And): "Python's `and` (Evaluator.boolop)",
    ("TVMScript parser (tir/script)", tir.Or): "Python's `or` (Evaluator.boolop)",
    ("TVMScript parser (tir/script)", tir.Not): "Python's `not` (Evaluator.unaryop)",
    ("TVMScript parser (tir/script)", tir.BufferLoad): "a subscript A[i] of a buffer",
}


def missing(classes: Iterable[type],
            components: dict[str, Callable[[type], bool]] = COMPONENTS,
            allowed: dict[tuple[str, type], str] = ALLOWED) -> dict[str, list[str]]:
    """component -> the names of the classes it does not know and ``allowed`` does not excuse."""
    out: dict[str, list[str]] = {}
    for cls in classes:
        for component, knows in components.items():
            if not knows(cls) and (component, cls) not in allowed:
                out.setdefault(component, []).append(cls.__name__)
    return out


# ---------------------------------------------------------------- tests


def test_the_node_list_comes_from_every_module_and_skips_bases():
    names = {cls.__name__ for cls in expr_node_classes()}
    assert {"Add", "Var", "SizeVar", "Call", "BufferLoad", "Ramp", "Shuffle", "Reduce"} <= names
    assert not names & {"PrimExpr", "BinaryOpNode", "CmpOpNode", "PVar", "PConst"}


def test_every_expression_node_is_known_to_every_component():
    assert missing(expr_node_classes()) == {}


def test_a_new_node_is_reported_missing_by_every_component():
    class Fresh(PrimExpr):
        """A node nobody has heard of."""

    assert missing([Fresh]) == {component: ["Fresh"] for component in COMPONENTS}


def test_a_node_class_with_an_undeclared_child_is_reported():
    @tir.node.node
    class Undeclared(PrimExpr):
        value: PrimExpr  # a plain attrs field: visitors and structural equality skip it
        dtype: str = "int32"

    assert not fields_declared(Undeclared)


@pytest.mark.parametrize("component, cls", list(ALLOWED), ids=lambda v: getattr(v, "__name__", v))
def test_every_allowed_gap_is_still_a_gap(component, cls):
    """An entry whose node the component now knows is stale: remove it."""
    assert not COMPONENTS[component](cls), f"{component} now knows {cls.__name__}"
