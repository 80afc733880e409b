"""The intrinsic table: what each ``Call`` op means to passes and codegen.

``elementwise`` intrinsics apply lane by lane, so the vectorizer may widen
them; ``pure`` ones have no side effects. Codegen maps each name to an LLVM
intrinsic or instruction (codegen/llvm).
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Intrinsic:
    """Properties of one intrinsic op."""

    name: str
    pure: bool = True
    elementwise: bool = True


_FLOAT_MATH = (
    "exp exp2 exp10 log log2 log10 log1p sqrt rsqrt sin cos tan tanh sigmoid erf floor ceil "
    "trunc round nearbyint fabs pow fma isnan isinf"
)
_INT_MATH = "bitwise_and bitwise_or bitwise_xor bitwise_not shift_left shift_right popcount"

INTRINSICS: dict[str, Intrinsic] = {}
for _name in (_FLOAT_MATH + " " + _INT_MATH + " reinterpret likely").split():
    INTRINSICS[f"tir.{_name}"] = Intrinsic(f"tir.{_name}")
# if_then_else evaluates one branch only: element-wise once both sides are safe to evaluate.
INTRINSICS["tir.if_then_else"] = Intrinsic("tir.if_then_else")
# get_active_lane_mask builds a whole mask from scalars: not applied lane by lane.
for _name in ("tir.vscale", "tir.get_active_lane_mask"):
    INTRINSICS[_name] = Intrinsic(_name, pure=True, elementwise=False)
for _name in ("tir.call_extern", "tir.call_pure_extern", "tir.ret", "tir.address_of",
              "tir.assume", "tir.undef", "tir.call_llvm_intrin", "tir.call_llvm_pure_intrin"):
    INTRINSICS[_name] = Intrinsic(_name, pure=_name.startswith("tir.call_pure")
                                  or _name == "tir.call_llvm_pure_intrin", elementwise=False)


def is_elementwise(op: str) -> bool:
    """Whether a call of ``op`` may be applied lane by lane on vectors."""
    info = INTRINSICS.get(op)
    return info is not None and info.elementwise


def is_pure(op: str) -> bool:
    """Whether a call of ``op`` has no side effects."""
    info = INTRINSICS.get(op)
    return info is not None and info.pure
