"""float32 math as TIR: range reduction and a polynomial per function, one function each.

Every builder takes a float32 (or float32xN) var (or another expression cheap
to repeat: the pass binds each call's argument to a var first) and returns an
expression of the same dtype built only from element-wise nodes: ``fma``,
``Select``, ``reinterpret``, integer shifts and masks, ``+ - * /``. Rules the
builders keep (see the package docstring for why):

- a product never feeds an add directly (every ``a*b + c`` is a ``tir.fma``),
  so LLVM's contraction has nothing to fuse and every build rounds alike;
- inputs are sanitized before any float-to-integer step (NaN, infinities
  and out-of-range values are replaced by a harmless value and the special
  result is selected at the end), so no lane ever computes a poison value.
"""

from __future__ import annotations

from tir import dtype as dt
from tir import op
from tir.expr import Call, Cast, Let, PrimExpr, Var

from . import coefficients as K

INF = float("inf")
NAN = float("nan")
#: The smallest normal float32.
MIN_NORMAL = 2.0**-126


class Lets:
    """Let-bindings collected in order, so that a lowering reads as straight-line code."""

    def __init__(self) -> None:
        self.bindings: list[tuple[Var, PrimExpr]] = []

    def __call__(self, name: str, value: PrimExpr) -> Var:
        """Bind ``value`` to a fresh var named ``name`` and return the var."""
        var = Var(name, value.dtype)
        self.bindings.append((var, value))
        return var

    def wrap(self, body: PrimExpr) -> PrimExpr:
        """``body`` inside every binding, the first one outermost."""
        for var, value in reversed(self.bindings):
            body = Let(var, value, body)
        return body


def like(x: PrimExpr, element: str) -> str:
    """``element`` with as many lanes as ``x``."""
    lanes = dt.lanes_of(x.dtype)
    return element if lanes == 1 else dt.with_lanes(element, lanes)


def horner(x: PrimExpr, coeffs: tuple[float, ...]) -> PrimExpr:
    """``sum(coeffs[k] * x**k)`` by Horner's rule, one fma per step."""
    acc = op.fma(x, coeffs[-1], coeffs[-2])
    for c in reversed(coeffs[:-2]):
        acc = op.fma(acc, x, c)
    return acc


def bits(x: PrimExpr) -> PrimExpr:
    """The bits of a float32 expression as int32."""
    return op.reinterpret(like(x, "int32"), x)


def from_bits(i: PrimExpr) -> PrimExpr:
    """An int32 expression's bits read as float32."""
    return op.reinterpret(like(i, "float32"), i)


def pow2i(k: PrimExpr) -> PrimExpr:
    """2^k as float32 for an int32 ``k`` in [-126, 127]."""
    return from_bits(op.shift_left(k + 127, 23))


def clamp(x: PrimExpr, lo: float, hi: float) -> PrimExpr:
    """``x`` limited to [lo, hi]; NaN becomes ``lo`` (ordered compares are false for NaN)."""
    return op.select(x > lo, op.select(x < hi, x, hi), lo)


def quiet_nan_of(x: PrimExpr, value: PrimExpr) -> PrimExpr:
    """``value``, or for a NaN ``x`` that NaN made quiet (as libm returns it)."""
    return op.select(x != x, x + x, value)


def scale(y: PrimExpr, k: PrimExpr) -> PrimExpr:
    """``y * 2^k`` for int32 ``k`` in [-252, 254], in two factors so 2^k itself never
    overflows or underflows; a denormal result is rounded once, in the last product."""
    half = op.shift_right(k, 1)
    return y * pow2i(half) * pow2i(k - half)


# ---------------------------------------------------------------- exp, exp2


def exp(x: PrimExpr) -> PrimExpr:
    """e^x: x = n ln2 + r (Cody-Waite, two parts of ln 2), e^r by a degree-6 polynomial."""
    b = Lets()
    xc = b("exp_x", clamp(x, -104.0, 89.0))  # beyond: 0 and inf after scaling
    t = b("exp_t", op.fma(xc, K.LOG2E, K.SHIFTER))
    n = b("exp_n", t - K.SHIFTER)
    r = b("exp_r", op.fma(n, -K.LN2_HI, xc))
    r = b("exp_r", op.fma(n, -K.LN2_LO, r))
    k = b("exp_k", bits(t) - K.SHIFTER_BITS)
    y = op.fma(horner(r, K.EXP), r * r, r) + 1.0
    return b.wrap(quiet_nan_of(x, scale(y, k)))


def exp2(x: PrimExpr) -> PrimExpr:
    """2^x: x = n + r exactly, 2^r by a degree-7 polynomial."""
    b = Lets()
    xc = b("exp2_x", clamp(x, -152.0, 129.0))
    t = b("exp2_t", xc + K.SHIFTER)
    r = b("exp2_r", xc - (t - K.SHIFTER))
    k = b("exp2_k", bits(t) - K.SHIFTER_BITS)
    y = op.fma(horner(r, K.EXP2), r, 1.0)
    return b.wrap(quiet_nan_of(x, scale(y, k)))


# ---------------------------------------------------------------- log, log2


def _log_reduce(b: Lets, x: PrimExpr) -> tuple[PrimExpr, PrimExpr, PrimExpr]:
    """x = 2^e * (1 + f), sqrt(1/2) <= 1+f < sqrt(2): returns (e as float32, f, f^2 * t)
    where log(1+f) = f + f^2 * t; denormal x is scaled by 2^23 first."""
    tiny = b("log_tiny", x < MIN_NORMAL)
    xs = op.select(tiny, x * 2.0**23, x)
    ix = b("log_ix", bits(op.select(xs > 0.0, xs, 1.0)))  # NaN, 0 and negatives read as 1
    e = b("log_e", op.shift_right(ix - K.SQRT_HALF_BITS, 23))
    f = b("log_f", from_bits(ix - op.shift_left(e, 23)) - 1.0)
    ef = b("log_ef", Cast(like(x, "float32"), op.select(tiny, e - 23, e)))
    tail = b("log_tail", (f * f) * op.fma(horner(f, K.LOG), f, -0.5))
    return ef, f, tail


def _log_specials(x: PrimExpr, finite: PrimExpr) -> PrimExpr:
    """log's value at x, given its value ``finite`` for finite x > 0."""
    positive = op.select(x < INF, finite, x)
    at_most_zero = op.select(x == 0.0, op.const(-INF, x.dtype), quiet_nan_of(x, NAN))
    return op.select(x > 0.0, positive, at_most_zero)


def log(x: PrimExpr) -> PrimExpr:
    """log x: log(2^e (1+f)) = e ln2 + log1p(f), log1p by f - f^2/2 + f^3 P(f) (degree 7)."""
    b = Lets()
    ef, f, tail = _log_reduce(b, x)
    y = op.fma(ef, K.LN2_HI, op.fma(ef, K.LN2_LO, tail) + f)
    return b.wrap(_log_specials(x, y))


def log2(x: PrimExpr) -> PrimExpr:
    """log2 x = e + log1p(f) * log2(e), with log2(e) in two parts."""
    b = Lets()
    ef, f, tail = _log_reduce(b, x)
    z = op.fma(f, K.LOG2E_HI, op.fma(f, K.LOG2E_LO, tail * K.LOG2E))
    return b.wrap(_log_specials(x, ef + z))


# ---------------------------------------------------------------- sin, cos

#: Above this |x| (and for inf and NaN) the lanes take the float64 libm path; at and below
#: it, the three-part Cody-Waite reduction keeps the error within the documented bound.
TRIG_FAST_MAX = 2.0**17
_TRIG_FAST_MAX_BITS = 0x48000000


def _trig(x: PrimExpr, is_cos: bool) -> PrimExpr:
    """sin or cos: x = q pi/2 + r (|r| <= pi/4, pi/2 in three float32 parts), then the sin or
    cos polynomial of r by the quadrant q mod 4, and the sign by the quadrant."""
    b = Lets()
    xs = b("trig_x", op.select(op.abs(x) <= TRIG_FAST_MAX, x, 0.0))
    t = b("trig_t", op.fma(xs, K.TWO_OVER_PI, K.SHIFTER))
    q = b("trig_q", t - K.SHIFTER)
    r = op.fma(q, -K.PIO2_1, xs)
    r = op.fma(q, -K.PIO2_2, r)
    r = b("trig_r", op.fma(q, -K.PIO2_3, r))
    r2 = b("trig_r2", r * r)
    sin_r = op.fma(r * r2, horner(r2, K.SIN), r)
    cos_r = op.fma(r2 * r2, horner(r2, K.COS), op.fma(r2, -0.5, 1.0))
    quadrant = b("trig_quadrant", bits(t) + (1 if is_cos else 0))  # cos x = sin(x + pi/2)
    odd = op.bitwise_and(quadrant, 1) != 0
    value = op.select(odd, cos_r, sin_r)
    sign = op.shift_left(op.bitwise_and(quadrant, 2), 30)
    fast = from_bits(op.bitwise_xor(bits(value), sign))
    if not is_cos:  # the polynomial turns -0 into +0
        fast = op.select(xs == 0.0, xs, fast)
    fast = b("trig_fast", fast)
    return b.wrap(_trig_huge(x, fast, "tir.cos" if is_cos else "tir.sin"))


def _trig_huge(x: PrimExpr, fast: PrimExpr, name: str) -> PrimExpr:
    """``fast``, except lanes with |x| > TRIG_FAST_MAX, inf or NaN: those call the float64
    libm function (exact reduction) and round. A branch skips that path when no lane needs it."""
    big = op.bitwise_and(bits(x), 0x7FFFFFFF) > _TRIG_FAST_MAX_BITS
    wide = Cast(like(x, "float64"), x)
    slow = op.select(big, Cast(x.dtype, Call(wide.dtype, name, [wide])), fast)
    if dt.lanes_of(x.dtype) == 1:
        return op.if_then_else(big, slow, fast)
    flags = Cast(like(x, "int32"), big)
    any_big = Call("int32", "tir.vector_reduce_max", [flags]) > 0
    return op.if_then_else(any_big, slow, fast)


def sin(x: PrimExpr) -> PrimExpr:
    """sin x (see ``_trig``)."""
    return _trig(x, is_cos=False)


def cos(x: PrimExpr) -> PrimExpr:
    """cos x (see ``_trig``)."""
    return _trig(x, is_cos=True)


# ---------------------------------------------------------------- tanh, sigmoid, erf


def tanh(x: PrimExpr) -> PrimExpr:
    """tanh x: x + x^3 P(x^2) below |x| = 0.625, else sign(x) (1 - 2 / (e^{2|x|} + 1))."""
    b = Lets()
    a = b("tanh_a", op.abs(x))
    u = b("tanh_u", x * x)
    small = op.select(x == 0.0, x, op.fma(x * u, horner(u, K.TANH), x))
    large = b("tanh_large", 1.0 - 2.0 / (exp(a + a) + 1.0))
    signed = op.select(x < 0.0, -large, large)
    return b.wrap(op.select(a < 0.625, small, signed))


def sigmoid(x: PrimExpr) -> PrimExpr:
    """1 / (1 + e^-x), from e = e^-|x| so nothing overflows: 1/(1+e) or e/(1+e) by sign."""
    b = Lets()
    e = b("sigmoid_e", exp(-op.abs(x)))
    d = b("sigmoid_d", e + 1.0)
    return b.wrap(op.select(x >= 0.0, 1.0 / d, e / d))


def erf(x: PrimExpr) -> PrimExpr:
    """erf x: x + x P(x^2) below |x| = 0.921875, a degree-14 polynomial of |x| - 2.4 up to
    3.92, then +-1 (erf rounds to 1 there)."""
    b = Lets()
    a = b("erf_a", op.abs(x))
    small = op.fma(x, horner(x * x, K.ERF_SMALL), x)
    poly = horner(a - K.ERF_LARGE_CENTER, K.ERF_LARGE)
    large = b("erf_large", op.select(a >= K.ERF_ONE_FROM, 1.0, poly))  # NaN stays NaN
    signed = op.select(x < 0.0, -large, large)
    return b.wrap(op.select(a < K.ERF_SMALL_END, small, signed))


def rsqrt(x: PrimExpr) -> PrimExpr:
    """1 / sqrt(x), sqrt being the correctly rounded instruction (two roundings in all)."""
    return 1.0 / op.sqrt(x)
