"""Vector math for ``LowerVectorMath``: float32 ``exp``, ``log``, ``sin``, ... as plain TIR.

Method. Each function is a range reduction followed by a polynomial, written
with element-wise TIR nodes only, so LLVM emits straight vector code for a
vector call and the same scalar code for a scalar one:

- ``exp``: x = n ln2 + r (Cody-Waite with ln2 in two float32 parts, n from the
  1.5*2^23 shifter trick), e^r = 1 + r + r^2 P(r) (degree 6), times 2^n built
  from integer bits in two factors (so denormal results round once).
- ``exp2``: x = n + r exactly, 2^r by a degree-7 polynomial.
- ``log``/``log2``: x = 2^e (1+f) from the bits (denormals scaled by 2^23 first),
  log1p(f) = f - f^2/2 + f^3 P(f) (degree 10 in all), plus e ln2 (fma-exact) or e.
- ``sin``/``cos``: x = q pi/2 + r with pi/2 in three float32 parts (fma), an
  odd/even polynomial of r picked and signed by q mod 4. Lanes with
  |x| > 2^17 (and inf, NaN) call the float64 libm function instead and round
  it (a correct, slower path: a branch skips it when no lane needs it).
- ``tanh``: x + x^3 P(x^2) below 0.625, else 1 - 2/(e^{2|x|} + 1).
- ``sigmoid``: from e = e^-|x|: 1/(1+e) for x >= 0, e/(1+e) below (never overflows).
- ``erf``: x + x P(x^2) below 0.921875, a degree-14 polynomial of |x| - 2.4 up to 3.92, then 1.
- ``pow``: 2^(y log2|x|) in float64 (log2 by atanh series, 2^t by polynomial), rounded
  once to float32; sign and special cases as C's ``powf``.
- ``sqrt`` stays ``llvm.sqrt`` (a correctly rounded vector instruction);
  ``rsqrt`` is ``1 / sqrt(x)``.

Coefficients are minimax fits computed by ``scripts/fit_vector_math.py``
(``coefficients.py`` holds them). Every ``a*b + c`` is an explicit
``tir.fma``, so results do not depend on ``codegen.llvm.fp_contract``, and the
interpreter (whose ``tir.fma`` rounds once) computes the same bits.

Accuracy: max error in float32 ulps against a float64 reference
(``benchmarks/vector_math_accuracy.py``; denormal results counted in denormal
ulps). "all" is every one of the 2^32 float32 inputs (``--full``); pow,
with two arguments, is measured on 2^22 random pairs. The test suite checks
each bound (rounded up) on a fresh sample of 2^17 inputs over every exponent
plus the special values and thresholds.

    ========  =======  ================================  =======
    function  max ulp  domain                            inputs
    ========  =======  ================================  =======
    exp       1.01     all float32                       all
    exp2      0.87     all float32                       all
    log       0.92     all float32                       all
    log2      1.09     all float32                       all
    sin, cos  1.58     all float32 (> 2^17: libm path)   all
    tanh      1.34     all float32                       all
    sigmoid   2.41     all float32                       all
    erf       1.98     all float32                       all
    sqrt      0.50     all float32 (llvm.sqrt)           all
    rsqrt     1.49     all float32                       all
    pow       0.50     x over all exponents, y in        2^22 pairs
                       [-300, 300] or |y| <= 2^8
    ========  =======  ================================  =======

Special values follow C: NaN in gives NaN out; exp(+-inf) = inf, 0; exp
overflows to inf above 88.72 and gives denormals down to 2^-149; log(0) = -inf,
log(x < 0) = NaN, log(inf) = inf; sin/cos(+-inf) = NaN; sin(-0) = -0;
tanh/erf(+-inf) = +-1; pow as powf, including pow(x, +-0) = 1 and pow(1, y) = 1
for NaN x or y, pow(-1, +-inf) = 1, signed zeros and infinities for odd
integer y, NaN for a negative base and a non-integer exponent.

Not lowered: float64 calls keep calling libm (and LLVM intrinsics), as
``"tir.vector_math": "libm"`` makes every call do; float16 calls are lowered
in float32 and rounded back, as codegen has always computed half math.
"""

from __future__ import annotations

from . import float32
from .pow import pow

#: TIR op -> the builder of its float32 lowering (argument vars in, expression out).
LOWERINGS = {
    "tir.exp": float32.exp,
    "tir.exp2": float32.exp2,
    "tir.log": float32.log,
    "tir.log2": float32.log2,
    "tir.sin": float32.sin,
    "tir.cos": float32.cos,
    "tir.tanh": float32.tanh,
    "tir.sigmoid": float32.sigmoid,
    "tir.erf": float32.erf,
    "tir.rsqrt": float32.rsqrt,
    "tir.pow": pow,
}
