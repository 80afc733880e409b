"""Loop primitives: ``split``, ``fuse``, ``reorder`` (TVM's ``loop_transformation.cc``).

Each rewrites the loops around blocks and nothing inside them: the blocks'
bodies only see their iter vars, so only the bindings (``iter_values``), the
predicates and the loop headers change. New loops get fresh ``Var``s, so the
result stays well formed.

Where tirlite differs from TVM: loops need not start at zero (the old var
becomes ``min + ...``), and the affine-binding check of ``reorder`` is a
syntactic one (linear in the moved loops, floordiv/floormod by invariants
allowed), not TVM's iter-map detection, and it ignores block predicates.
"""

from __future__ import annotations

from typing import Any

from ...analysis.var_use import used_var_ids, uses_any_var
from ...arith import Analyzer
from ...block import Block, BlockRealize, IterVarType
from ...expr import Add, Cast, FloorDiv, FloorMod, IntImm, Mul, PrimExpr, Sub, Var
from ...function import PrimFunc
from ...functor import StmtMutator, substitute
from ...node import replace
from ...op import const, floordiv, floormod
from ...range import Range
from ...stmt import For, ForKind, Stmt
from .. import tree
from ..error import fail

# ------------------------------------------------------------------ helpers


def _check_plain(loop: For, primitive: str) -> None:
    """TVM refuses to split or fuse a loop that carries annotations or a thread binding."""
    if loop.annotations or loop.thread_binding is not None:
        keys = ", ".join(sorted(loop.annotations)) or "thread binding"
        raise fail(primitive, f"loop {loop.loop_var.name}",
                   f"the loop has annotations ({keys}); unannotate it first")


def _analyzer_above(func: PrimFunc, stmt: Stmt) -> Analyzer:
    """An analyzer knowing the ranges of the loops enclosing ``stmt``."""
    ana = Analyzer()
    for s in tree.above(func, stmt):
        if isinstance(s, For):
            ana.bind(s.loop_var, Range.from_min_extent(s.min, s.extent), allow_override=True)
    return ana


def _is_const(e: PrimExpr, value: int) -> bool:
    return isinstance(e, IntImm) and e.value == value


def _and(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    return b if _is_const(a, 1) and a.dtype == "bool" else a & b


class _AddPredicate(StmtMutator):
    """``pred`` added to each outermost block realize (nested blocks inherit it)."""

    def __init__(self, pred: PrimExpr):
        self.pred = pred

    def visit_block_realize(self, r: BlockRealize) -> Stmt:
        return replace(r, predicate=_and(r.predicate, self.pred))


class _SimplifyBindings(StmtMutator):
    """Simplify the bindings that mention the new loop vars (others are left as written)."""

    def __init__(self, ana: Analyzer, new_vars: list[Var], unit_vars: dict):
        self.ana, self.new_ids, self.unit_vars = ana, {id(v) for v in new_vars}, unit_vars

    def visit_for(self, f: For) -> Stmt:
        # inner loops' ranges help simplify, e.g. floordiv(i * 8 + j, 8) -> i for j < 8
        with self.ana.loop_scope(f.loop_var, f.min, f.extent):
            return self.generic_visit(f)

    def visit_block_realize(self, r: BlockRealize) -> Stmt:
        values = []
        for v in r.iter_values:
            if uses_any_var(v, self.new_ids):
                v = self.ana.simplify(substitute(v, self.unit_vars) if self.unit_vars else v)
            values.append(v)
        block = self.visit_stmt(r.block)
        if all(a is b for a, b in zip(values, r.iter_values)) and block is r.block:
            return r
        return replace(r, iter_values=tuple(values), block=block)


def _rebind(body: Stmt, ana: Analyzer, new_loops: list[tuple[Var, PrimExpr]],
            outer: list[For], preserve_unit_iters: bool) -> Stmt:
    """Simplify the bindings; without ``preserve_unit_iters`` unit loops' vars become 0."""
    unit: dict = {}
    if not preserve_unit_iters:
        for v, ext in new_loops:
            if _is_const(ext, 1):
                unit[v] = const(0, v.dtype)
        for f in outer:
            if _is_const(f.extent, 1):
                unit[f.loop_var] = f.min
    return _SimplifyBindings(ana, [v for v, _ in new_loops], unit).visit_stmt(body)


# ------------------------------------------------------------------ split


def split(func: PrimFunc, loop: Var, factors: list, preserve_unit_iters: bool = True
          ) -> tuple[PrimFunc, list[Var]]:
    """Split ``loop`` into ``len(factors)`` nested loops; returns ``(new_func, new vars)``.

    The new loops are named ``<name>_0``, ``<name>_1``, ... (outer first) and
    start at 0; the old var becomes ``min + ((l0 * f1 + l1) * f2 + l2) ...``.
    When the factors' product is not provably the extent, the blocks under the
    loop get the guard ``fused < extent`` in their predicate.
    """
    target = tree.loop_for(func, loop, "split")
    name = loop.name
    _check_plain(target, "split")
    ana = _analyzer_above(func, target)
    factors = _split_factors(target, factors, ana)
    dtype = loop.dtype
    new_vars = [Var(f"{name}_{k}", dtype) for k in range(len(factors))]
    fused: PrimExpr | None = None
    for v, f in zip(new_vars, factors):
        fused = v if fused is None else fused * f + v
        ana.bind(v, Range.from_min_extent(const(0, dtype), f))
    value = fused if _is_const(target.min, 0) else target.min + fused
    body = substitute(target.body, {loop: value})
    guard = fused < target.extent
    if not ana.can_prove(guard):
        body = _AddPredicate(guard).visit_stmt(body)
    outer = tree.loops_above(func, target)
    body = _rebind(body, ana, list(zip(new_vars, factors)), outer, preserve_unit_iters)
    for v, f in reversed(list(zip(new_vars, factors))):
        body = For(v, const(0, dtype), f, ForKind.SERIAL, body)
    return tree.replace(func, {target: body}), new_vars


def _split_factors(target: For, factors: Any, ana: Analyzer) -> list[PrimExpr]:
    """The factors as expressions of the loop's dtype, the None one inferred; checked."""
    where = f"loop {target.loop_var.name}"
    if not isinstance(factors, (list, tuple)) or not factors:
        raise fail("split", where, "factors must be a non-empty list")
    if sum(f is None for f in factors) > 1:
        raise fail("split", where, "only one factor may be None (it is inferred)")
    dtype = target.loop_var.dtype
    out: list[Any] = [None if f is None else _split_factor(k, f, dtype, where)
                      for k, f in enumerate(factors)]
    known = [f for f in out if f is not None]
    product = known[0] if known else const(1, dtype)
    for f in known[1:]:
        product = product * f
    extent = target.extent
    if None in out:
        out[out.index(None)] = ana.simplify(floordiv(extent + product - 1, product))
    elif not ana.can_prove(product >= extent):
        shown = " * ".join(str(f) for f in out)
        raise fail("split", where, f"the factors {shown} = {ana.simplify(product)} do not "
                   f"cover the extent {extent}")
    return out


def _split_factor(k: int, f: Any, dtype: str, where: str) -> PrimExpr:
    """Factor ``k`` (an int or integer expression) as an expression of ``dtype``; checked."""
    if isinstance(f, int) and not isinstance(f, bool):
        f = const(f, dtype)
    if not isinstance(f, PrimExpr) or not f.dtype.startswith("int"):
        raise fail("split", where, f"factor {k} must be an int or an integer expression, "
                   f"got {f!r}")
    if f.dtype != dtype:
        f = Cast(dtype, f)
    if isinstance(f, IntImm) and f.value <= 0:
        raise fail("split", where, f"factor {k} is {f.value}: factors must be positive")
    return f


# ------------------------------------------------------------------ fuse


def fuse(func: PrimFunc, loops: list[Var], preserve_unit_iters: bool = True
         ) -> tuple[PrimFunc, Var]:
    """Fuse perfectly nested ``loops`` (outer first) into one; returns ``(new_func, fused var)``.

    The fused loop ``i_j_fused`` runs ``[0, prod(extents))``; loop ``k``'s var
    becomes ``min_k + floordiv(floormod(fused, ext_k * inner), inner)``.
    """
    if not loops:
        raise fail("fuse", "loops", "give at least one loop")
    fors = [tree.loop_for(func, v, "fuse") for v in loops]
    _check_nest(fors)
    dtype = fors[0].loop_var.dtype
    if any(f.loop_var.dtype != dtype for f in fors):
        raise fail("fuse", _names(fors), "the loop vars have different dtypes")
    name = "_".join(f.loop_var.name for f in fors) + "_fused"
    fused = Var(name, dtype)
    ana = _analyzer_above(func, fors[0])
    extent = fors[0].extent
    for f in fors[1:]:
        extent = extent * f.extent
    extent = ana.simplify(extent)
    ana.bind(fused, Range.from_min_extent(const(0, dtype), extent))
    vmap, inner = {}, None
    for k in range(len(fors) - 1, -1, -1):
        f = fors[k]
        if _is_const(f.extent, 1):
            part = const(0, dtype)
        elif inner is None:
            part = floormod(fused, f.extent) if k > 0 else fused
        else:
            part = floordiv(floormod(fused, inner * f.extent) if k > 0 else fused, inner)
        vmap[f.loop_var] = part if _is_const(f.min, 0) else f.min + part
        inner = f.extent if inner is None else inner * f.extent
    body = substitute(fors[-1].body, vmap)
    outer = tree.loops_above(func, fors[0])
    body = _rebind(body, ana, [(fused, extent)], outer, preserve_unit_iters)
    new = For(fused, const(0, dtype), extent, ForKind.SERIAL, body)
    return tree.replace(func, {fors[0]: new}), fused


def _names(fors: list[For]) -> str:
    return "loops " + ", ".join(f.loop_var.name for f in fors)


def _check_nest(fors: list[For]) -> None:
    """Each loop's body is exactly the next loop; no extent depends on an outer one."""
    outer_ids: set[int] = set()
    for k, f in enumerate(fors):
        _check_plain(f, "fuse")
        if k > 0 and fors[k - 1].body is not f:
            prev = fors[k - 1].loop_var.name
            raise fail("fuse", _names(fors),
                       f"loop {f.loop_var.name} is not the only statement in the body of "
                       f"loop {prev} (fuse takes perfectly nested loops, outer first)")
        used = used_var_ids(f.extent) | used_var_ids(f.min)
        if used & outer_ids:
            dep = next(g.loop_var.name for g in fors[:k] if id(g.loop_var) in used)
            raise fail("fuse", f"loop {f.loop_var.name}",
                       f"its range depends on loop {dep}, which is fused with it")
        outer_ids.add(id(f.loop_var))


# ------------------------------------------------------------------ reorder


def reorder(func: PrimFunc, loops: list[Var]) -> PrimFunc:
    """Put ``loops`` in the given order (outer first); the loops not given keep their places.

    The loops must lie on one chain of single-child loops under one block;
    the blocks below must have only spatial and reduction iter vars, bound
    affinely to the loops of the chain; a loop whose range uses another
    loop's var cannot move above it.
    """
    fors = [tree.loop_for(func, v, "reorder") for v in loops]
    seen: set[int] = set()
    for f in fors:
        if id(f) in seen:
            raise fail("reorder", f"loop {f.loop_var.name}", "the loop is given more than once")
        seen.add(id(f))
    if len(fors) <= 1:
        return func
    chain = _chain(func, fors)
    _check_blocks_below(chain, chain[-1])
    given = iter(fors)
    order = [next(given) if id(f) in seen else f for f in chain]
    new = _build_chain(order, chain[-1].body)
    return tree.replace(func, {chain[0]: new})


def _chain(func: PrimFunc, fors: list[For]) -> list[For]:
    """The loops from the outermost to the innermost given one (each the body of the last)."""
    paths = {id(f): tree.above(func, f) for f in fors}
    scopes = {id(_scope(paths[id(f)])) for f in fors}
    if len(scopes) > 1:
        raise fail("reorder", _names(fors), "the loops are not under the same block")
    bottom = max(fors, key=lambda f: len(paths[id(f)]))
    path = list(paths[id(bottom)]) + [bottom]
    on_path = {id(s) for s in path}
    for f in fors:
        if id(f) not in on_path:
            raise fail("reorder", _names(fors), f"loop {f.loop_var.name} is not on the path "
                       f"from the outer loops to loop {bottom.loop_var.name} (the loops are "
                       "not in a chain)")
    given = {id(f) for f in fors}
    start = next(k for k, s in enumerate(path) if id(s) in given)
    chain = path[start:]
    for k, (outer, inner) in enumerate(zip(chain, chain[1:])):
        if not isinstance(inner, For) or outer.body is not inner:
            below = next(s for s in chain[k + 1:] if isinstance(s, For))
            raise fail("reorder", f"loop {outer.loop_var.name}",
                       f"its body is not just loop {below.loop_var.name}: the loops to "
                       "reorder must form a chain of single-child loops")
    return chain


def _scope(path: tuple) -> Any:
    for s in reversed(path):
        if isinstance(s, Block):
            return s
    return None


def _check_blocks_below(chain: list[For], bottom: For) -> None:
    """Blocks under the chain: spatial/reduction iter vars, affine bindings in the chain's vars."""
    loop_ids = {id(f.loop_var) for f in chain}
    for s, _ in tree.walk(bottom.body):
        if isinstance(s, For):
            loop_ids.add(id(s.loop_var))
    for s, above in tree.walk(bottom.body):
        if not isinstance(s, BlockRealize) or any(isinstance(a, Block) for a in above):
            continue
        for iv, value in zip(s.block.iter_vars, s.iter_values):
            if iv.iter_type not in (IterVarType.DataPar, IterVarType.CommReduce):
                raise fail("reorder", f"block {s.block.name_hint}",
                           f"iter var {iv.var.name} is neither spatial nor a reduction")
            if not _affine(value, loop_ids):
                raise fail("reorder", f"block {s.block.name_hint}",
                           f"the binding {iv.var.name} = {value} is not affine in the "
                           "loops being reordered")


def _affine(e: PrimExpr, loop_ids: set[int]) -> bool:
    """``e`` is linear in the loop vars (floordiv/floormod by loop-invariant divisors allowed)."""
    if not uses_any_var(e, loop_ids):
        return True
    if isinstance(e, Var):
        return True
    if isinstance(e, (Add, Sub)):
        return _affine(e.a, loop_ids) and _affine(e.b, loop_ids)
    if isinstance(e, Mul):
        a_uses, b_uses = uses_any_var(e.a, loop_ids), uses_any_var(e.b, loop_ids)
        return not (a_uses and b_uses) and _affine(e.a, loop_ids) and _affine(e.b, loop_ids)
    if isinstance(e, (FloorDiv, FloorMod)):
        return not uses_any_var(e.b, loop_ids) and _affine(e.a, loop_ids)
    if isinstance(e, Cast):
        return _affine(e.value, loop_ids)
    return False


def _build_chain(order: list[For], body: Stmt) -> Stmt:
    """The loops of ``order`` nested outer first around ``body``; checks range dependences."""
    inner_ids: dict[int, str] = {}
    for f in reversed(order):
        used = used_var_ids(f.min) | used_var_ids(f.extent)
        for vid, vname in inner_ids.items():
            if vid in used:
                raise fail("reorder", f"loop {f.loop_var.name}",
                           f"its range depends on loop {vname}, which would be inside it")
        body = replace(f, body=body)
        inner_ids[id(f.loop_var)] = f.loop_var.name
    return body


__all__: list[Any] = ["split", "fuse", "reorder"]
