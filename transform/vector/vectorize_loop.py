"""``VectorizeLoop``: turn ``ForKind.VECTORIZED`` loops into vector code.

The loop disappears; its var becomes the index vector ``Ramp(min, 1, lanes)``
and every value that depends on it becomes a vector (TVM's vectorizer)::

    for i in range(n):                       for i in range(n):
        for j in vectorized(4):        ->        A[Ramp(i*4, 1, 4)] = (
            A[i*4 + j] = A[i*4 + j] + 1f             A[Ramp(i*4, 1, 4)] + Broadcast(1f, 4))

A statement that cannot become vector code (an ``if`` whose condition
depends on the var, a call that is not element-wise, ...) stays correct: it
runs in a serial loop of its own. Nested vectorized loops merge into one
wider vector. A loop the pass cannot accept (extent not a constant, below 1,
a ``While`` inside) raises ``VectorizeError``, a ``ValueError``.

Usage::

    import transform
    with transform.collect_remarks() as remarks:
        mod = transform.VectorizeLoop()(mod)
    for remark in remarks:
        print(remark)    # main: loop j (4 lanes): vectorized
                         # main: loop k (8 lanes): scalarized: if condition depends on k
                         # main: loop v (8 lanes): not vectorized: a[v] reads what a[v + 1]
                         #     writes in the previous iteration (distance 1)

    # print the remarks as the pass runs
    with transform.PassContext(config={"tir.vectorize_remarks": True}):
        mod = transform.VectorizeLoop()(mod)

    # vectorization off: vectorized loops become serial loops (VectorizeSkipper)
    mod = transform.VectorizeLoop(enable_vectorize=False)(mod)
    with transform.PassContext(config={"tir.disable_vectorize": True}):
        mod = transform.VectorizeLoop()(mod)

Before rewriting a loop, the legality analysis (``analysis/legality.py``)
checks that running its iterations as lanes keeps every dependence in order;
a loop where it would not stays serial (remark ``not vectorized``, naming the
dependence). The loop annotation ``"tir.vectorize.assume_independent": True``
skips that check, as ``#pragma GCC ivdep`` does: the user promises the
iterations are independent (TVM's meaning of a vectorized loop).

With config ``tir.enable_buffer_level_predication`` (TVM's key; when unset, on
for SVE targets and off elsewhere, as in TVM), an ``if``
whose condition is a tail guard ``base + j < limit`` and whose accesses are
all at ``base + j`` is replaced by its branch, each access predicated with
``get_active_lane_mask(base, limit)`` (``tail.py``). The loop
annotation ``"tir.vectorize.predicate_tail": True`` does the same for one loop:
``StripMineVectorLoops`` (run before this pass by ``codegen.build``) puts it on
the tail vectors it peels, so only those are predicated.

Each remark (``VectorizeRemark``) has ``func_name``, ``loop_var``, ``lanes``,
``outcome`` (``"vectorized"``, ``"predicated"``, ``"partially vectorized"``,
``"scalarized"`` or ``"not vectorized"``), ``reason``, ``hint`` (an annotation that
would help, if any) and ``pass_name``; the remarks of the copies other passes made of a
loop fold into one per loop the user wrote (remarks.py). The pass's output is IR only (what
TVM's pass returns); the remarks go to ``transform.collect_remarks()``
scopes, to the entered ``PassContext`` (``ctx.remarks``) and, after
``codegen.build``, to ``Module.remarks``.

The rules live in ``transform/vector/vectorizer/``: expression rules in
expr_rules.py (``visit_add``, ``visit_mul``, ...), statement rules and
scalarization in stmt_rules.py.
"""

from __future__ import annotations

from tir.function import IRModule, PrimFunc

from ..pass_base import PrimFuncPass, function_name, prim_func_pass
from ..pass_context import PassContext
from ..remarks import emit_remark
from .analysis.aliasing import shared_memory
from .analysis.legality import ASSUME_INDEPENDENT
from .options import VectorOptions, function_target
from .remarks import VectorizeError, VectorizeRemark
from .vectorize_skipper import VectorizeSkipper
from .vectorizer.loops import LoopVectorizer


def vectorize_function(func: PrimFunc, name: str = "main", print_remarks: bool = False,
                       predicate: bool | None = False, any_dim: bool = False) -> PrimFunc:
    """``func`` with its vectorized loops vectorized; its remarks are emitted (``emit_remark``).

    ``predicate`` turns tail guards into lane masks (buffer-level predication);
    None leaves it to the target: on for SVE targets (TVM's rule). ``any_dim``
    lets any index of an access widen and masks the loads of ``if_then_else``
    branches (config ``tir.vectorize.any_dim_access``).
    """
    vectorizer = LoopVectorizer(name, function_target(func), predicate, any_dim,
                                shared_memory(func))
    body = vectorizer(func.body)
    for remark in vectorizer.remarks:
        if print_remarks:
            print(f"remark: {remark}")
        emit_remark(remark, loop=vectorizer.remark_loops.get(id(remark)))
    return func if body is func.body else func.with_body(body)


def VectorizeLoop(enable_vectorize: bool = True, any_dim_access: bool = False) -> PrimFuncPass:
    """The ``tir.VectorizeLoop`` pass (opt level 0); ``False`` makes vectorized loops serial.

    Config ``tir.disable_vectorize`` also turns vectorization off;
    ``tir.vectorize_remarks`` prints the remarks; ``tir.enable_buffer_level_predication``
    turns tail guards (``if base + lane < limit``) into predicated loads and stores
    (unset: on for SVE targets -- the ``AttrStmt("target")`` around the loop, the
    function's ``"target"`` attribute, or the entered ``codegen.Target`` -- as in TVM).
    Config ``tir.vectorize.any_dim_access`` lets an index in any dimension widen and
    turns ``tir.if_then_else`` on the var into masked loads (padded reads);
    ``any_dim_access`` is its value when the config does not set it (False, TVM's
    rule; ``codegen.build``'s pipeline passes True).

    Raises:
        VectorizeError: a vectorized loop with a non-constant or non-positive
            extent, or a ``While`` inside a vectorized loop.
    """

    def transform_function(func: PrimFunc, mod: IRModule, ctx: PassContext) -> PrimFunc:
        options = VectorOptions.from_context(ctx)
        if not enable_vectorize or options.disable_vectorize:
            return func.with_body(VectorizeSkipper()(func.body))
        # Unset, predication defaults to "on for SVE targets" (TVM); an explicit False wins.
        any_dim = any_dim_access if options.any_dim_access is None else options.any_dim_access
        return vectorize_function(func, function_name(mod, func), options.print_remarks,
                                  options.buffer_predication, any_dim)

    return prim_func_pass(transform_function, opt_level=0, name="tir.VectorizeLoop")


__all__ = [
    "ASSUME_INDEPENDENT",
    "LoopVectorizer",
    "VectorizeError",
    "VectorizeLoop",
    "VectorizeRemark",
    "VectorizeSkipper",
    "vectorize_function",
]
