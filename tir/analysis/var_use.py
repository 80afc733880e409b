"""Which variables an expression or statement uses (TVM: ``tir/analysis/var_touch.cc``
``UsesVar``; Halide: ``ExprUsesVar.h``).

A *use* is an occurrence of the ``Var`` object below the node, as the walkers of
``tir.functor`` see it: binding positions (``For.loop_var``, ``Let.var``,
``LetStmt.var``) are not uses, but an occurrence of a var bound inside the
node is (as in TVM's ``UsesVar``); buffers are leaves, so a ``BufferLoad`` uses
the vars of its indices but not its buffer's data var, shape or strides (ask
about those expressions directly). Vars are told apart by identity, never by name.

The questions stop at the first use they find (``functor.contains``), since
analyses ask them about every index they look at. Each takes one node or a
list or tuple of them (the indices of an access).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from collections.abc import Set as AbstractSet
from typing import Any, Callable

from ..expr import Var
from ..functor import contains, post_order_visit


def uses_var(node: Any, var: Var) -> bool:
    """Whether ``node`` (an expression, statement or function) uses ``var``."""
    return _contains(node, lambda n: n is var)


def uses_any_var(node: Any, vars_or_ids: Collection) -> bool:
    """Whether ``node`` uses one of ``vars_or_ids``: ``Var`` objects, or their ``id``s.

    A set of ids is used as it is (callers asking many questions build it once).
    """
    ids = var_ids(vars_or_ids)
    if not ids:
        return False
    return _contains(node, lambda n: isinstance(n, Var) and id(n) in ids)


def uses_a_var(node: Any) -> bool:
    """Whether ``node`` uses any var at all."""
    return _contains(node, lambda n: isinstance(n, Var))


def uses_only(node: Any, allowed: Collection) -> bool:
    """Whether every var ``node`` uses is one of ``allowed`` (``Var`` objects or ``id``s)."""
    ids = var_ids(allowed)
    return not _contains(node, lambda n: isinstance(n, Var) and id(n) not in ids)


def used_vars(node: Any) -> list[Var]:
    """The vars ``node`` uses, each once, in the order a post-order walk meets them."""
    out: list[Var] = []
    seen: set[int] = set()

    def note(n: Any) -> None:
        if isinstance(n, Var) and id(n) not in seen:  # several nodes may share a var
            seen.add(id(n))
            out.append(n)

    for one in _nodes(node):
        post_order_visit(one, note)
    return out


def used_var_ids(node: Any) -> set[int]:
    """The ``id``s of the vars ``node`` uses."""
    return {id(v) for v in used_vars(node)}


def _contains(node: Any, predicate: Callable[[Any], bool]) -> bool:
    return any(contains(one, predicate) for one in _nodes(node))


def _nodes(node: Any) -> tuple | list:
    return node if isinstance(node, (tuple, list)) else (node,)


def var_ids(vars_or_ids: Iterable) -> AbstractSet[int]:
    """``vars_or_ids`` as a set of ids: a set of ints (or a dict's keys) is returned as it is."""
    if isinstance(vars_or_ids, AbstractSet) and all(type(x) is int for x in vars_or_ids):
        return vars_or_ids
    return {x if type(x) is int else id(x) for x in vars_or_ids}


__all__ = ["used_var_ids", "used_vars", "uses_a_var", "uses_any_var", "uses_only", "uses_var",
           "var_ids"]
