"""The constants of the vector math lowerings: range-reduction splits and polynomial tables.

Polynomial coefficients come from ``scripts/fit_vector_math.py`` (a minimax
fit of each remainder on its reduced interval, rounded to float32 for the
float32 tables), lowest degree first. Split constants (``HI + LO`` of ln 2,
three float32 parts of pi/2) are derived here from exact values.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np


def _f32(value: float | Fraction) -> float:
    """``value`` rounded to the nearest float32, as a Python float."""
    return float(np.float32(float(value)))


def _table(hexes: str) -> tuple[float, ...]:
    return tuple(float.fromhex(h) for h in hexes.split())


# 40 digits: more than the three float32 parts of pi/2 below need (72 bits).
_PI = Fraction("3.141592653589793238462643383279502884197")
_LN2 = Fraction("0.6931471805599453094172321214581765680755")
_LOG2E = 1 / _LN2

LN2_HI = _f32(_LN2)
LN2_LO = _f32(_LN2 - Fraction(LN2_HI))
LOG2E = _f32(_LOG2E)
LOG2E_HI = LOG2E
LOG2E_LO = _f32(_LOG2E - Fraction(LOG2E_HI))
TWO_OVER_PI = _f32(2 / _PI)
PIO2_1 = _f32(_PI / 2)
PIO2_2 = _f32(_PI / 2 - Fraction(PIO2_1))
PIO2_3 = _f32(_PI / 2 - Fraction(PIO2_1) - Fraction(PIO2_2))

#: Adding 1.5 * 2^23 to a float32 of magnitude below 2^22 rounds it to an
#: integer (to even) held in the low mantissa bits: round() without a float-to-int cast.
SHIFTER = 12582912.0
SHIFTER_BITS = 0x4B400000
#: The same for float64 (1.5 * 2^52).
SHIFTER64 = 6755399441055744.0
SHIFTER64_BITS = 0x4338000000000000

#: Bits of the float32 / float64 nearest sqrt(1/2): mantissas are reduced to [sqrt(1/2), sqrt(2)).
SQRT_HALF_BITS = 0x3F3504F3
SQRT_HALF_BITS64 = 0x3FE6A09E667F3BCD

# exp(r) = 1 + r + r^2 * EXP(r), |r| <= ln2/2
EXP = _table("0x1.fffffcp-2 0x1.555492p-3 0x1.5558f2p-5 0x1.1239d4p-7 0x1.6a244cp-10")
# 2^r = 1 + r * EXP2(r), |r| <= 1/2
EXP2 = _table("0x1.62e430p-1 0x1.ebfbe0p-3 0x1.c6b08ap-5 0x1.3b29f4p-7 0x1.5d8a86p-10 "
              "0x1.445c84p-13 0x1.fde5fep-17")
# log(1+f) = f - f^2/2 + f^3 * LOG(f), sqrt(1/2) <= 1+f < sqrt(2)
LOG = _table("0x1.555554p-2 -0x1.000226p-2 0x1.99a008p-3 -0x1.547244p-3 0x1.22da1cp-3 "
             "-0x1.0d8542p-3 0x1.055b6ep-3 -0x1.38b586p-4")
# sin(r) = r + r^3 * SIN(r^2); cos(r) = 1 - r^2/2 + r^4 * COS(r^2); |r| <= pi/4
SIN = _table("-0x1.555556p-3 0x1.111108p-7 -0x1.a00f80p-13 0x1.6cd1f2p-19")
COS = _table("0x1.555556p-5 -0x1.6c16b8p-10 0x1.a010dep-16 -0x1.241e9cp-22")
# tanh(x) = x + x^3 * TANH(x^2), |x| < 0.625
TANH = _table("-0x1.555554p-2 0x1.111066p-3 -0x1.b9ee90p-5 0x1.638b58p-6 -0x1.0bf4fcp-7 "
              "0x1.18e1dcp-9")
# erf(x) = x + x * ERF_SMALL(x^2), |x| < 0.921875
ERF_SMALL = _table("0x1.06eba8p-3 -0x1.812744p-2 0x1.ce2e20p-4 -0x1.b8107cp-6 0x1.54dad8p-8 "
                   "-0x1.aae986p-11 0x1.5f1140p-14")
# erf(x) = ERF_LARGE(x - 2.4), 0.921875 <= x < 3.92 (beyond, erf(x) rounds to 1)
ERF_LARGE = _table("0x1.ffa5c2p-1 0x1.d208d4p-9 -0x1.17a1e0p-7 0x1.989dd0p-7 -0x1.8d080cp-7 "
                   "0x1.025ecep-7 -0x1.9488bcp-9 0x1.07be30p-12 0x1.137d5ap-11 -0x1.675474p-12 "
                   "0x1.e88fa0p-15 0x1.430fbep-15 -0x1.30b2cep-16 -0x1.19498ap-20 0x1.53accap-20")
ERF_SMALL_END = 0.921875
ERF_LARGE_CENTER = 2.4
ERF_ONE_FROM = 3.92

# float64, for pow: log(m) = 2s + s^3 * POW_LOG(s^2), s = (m-1)/(m+1), |s| <= 0.1716
POW_LOG = _table("0x1.5555555553c5bp-1 0x1.999999a1f9454p-2 0x1.249241ca39d05p-2 "
                 "0x1.c72250409a728p-3 0x1.7330a0faf0337p-3 0x1.58468c2fd70e9p-3")
# float64, for pow: 2^r = 1 + r * POW_EXP2(r), |r| <= 1/2
POW_EXP2 = _table("0x1.62e42fefa37d8p-1 0x1.ebfbdff81bdf7p-3 0x1.c6b08d70c889cp-5 "
                  "0x1.3b2ab72412900p-7 0x1.5d87fd937a430p-10 0x1.430897f1af5c0p-13 "
                  "0x1.ffce2fe053c00p-17 0x1.63e698963a000p-20 0x1.b3de1c52c0000p-24")
LOG2E_F64 = float(_LOG2E)
