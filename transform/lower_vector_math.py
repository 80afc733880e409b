"""``LowerVectorMath``: float32 math calls become range reduction + polynomial TIR.

``tir.exp(v)`` on a ``float32x16`` would otherwise reach LLVM as
``llvm.exp.v16f32``, which x86 lowers to sixteen scalar ``expf`` calls. This
pass replaces float32 (and float16, computed in float32) calls of ``exp``,
``exp2``, ``log``, ``log2``, ``sin``, ``cos``, ``tanh``, ``sigmoid``, ``erf``,
``pow`` and ``rsqrt`` by the expressions of ``transform/vector_math`` (method,
accuracy table and special values in its docstring), built from element-wise
nodes only, so a vector call becomes straight vector code.

Scalar calls are lowered too, by the same expressions: a vectorized loop and
the same loop built serial (``tir.disable_vectorize``) compute bit-identical
results, and so does the interpreter, which runs the lowered TIR.

Config ``"tir.vector_math"``: ``"polynomial"`` (the default) lowers;
``"libm"`` leaves every call alone (libm / LLVM intrinsics, lane by lane on
vectors). float64 calls are never lowered.
"""

from __future__ import annotations

from typing import Any

from tir import dtype as dt
from tir.expr import Call, Cast, Let, PrimExpr, Var
from tir.functor import StmtExprMutator

from .config import register_config
from .pass_base import PrimFuncPass, prim_func_pass
from .vector_math import LOWERINGS

MODES = ("polynomial", "libm")


def _check_mode(value: str) -> str | None:
    if value in MODES:
        return None
    return f"expects one of {', '.join(map(repr, MODES))}, got {value!r}"


register_config(
    "tir.vector_math", str, "polynomial",
    "How float32 math calls (exp, log, sin, pow, ...) compile: 'polynomial' lowers them to "
    "vectorizable TIR (LowerVectorMath), 'libm' keeps the libm / LLVM intrinsic calls.",
    check=_check_mode,
)


#: Element types whose math calls are lowered (the 16-bit ones through float32).
_LOWERED = ("float32", "float16", "bfloat16")


class VectorMathLowerer(StmtExprMutator):
    """Replace each float32/float16/bfloat16 call that ``LOWERINGS`` knows by its expression
    (the 16-bit types computed in float32, rounded once at the end)."""

    def visit_call(self, call: Call) -> PrimExpr:
        call = self.generic_visit(call)
        lower = LOWERINGS.get(call.op)
        element = dt.element_of(call.dtype)
        if lower is None or element not in _LOWERED or "vscale" in call.dtype:
            return call
        args = list(call.args)
        if element != "float32":
            wide = dt.with_lanes("float32", dt.lanes_of(call.dtype))
            wide = "float32" if dt.lanes_of(call.dtype) == 1 else wide
            args = [Cast(wide, a) for a in args]
        params = [a if isinstance(a, Var) else Var(f"{call.op[4:]}_arg", a.dtype) for a in args]
        out = lower(*params)
        for param, arg in reversed(list(zip(params, args))):
            if param is not arg:  # bound once: the builders read their argument many times
                out = Let(param, arg, out)
        return out if element == "float32" else Cast(call.dtype, out)


def lower_vector_math(stmt: Any) -> Any:
    """``stmt`` with its float32 math calls lowered (the same object when there are none)."""
    return VectorMathLowerer()(stmt)


def LowerVectorMath() -> PrimFuncPass:
    """The ``tir.LowerVectorMath`` pass (a no-op under config ``"tir.vector_math": "libm"``)."""

    def transform_function(func, mod, ctx):
        if ctx.config.get("tir.vector_math") == "libm":
            return func
        return func.with_body(lower_vector_math(func.body))

    return prim_func_pass(transform_function, opt_level=0, name="tir.LowerVectorMath")
