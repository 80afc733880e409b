"""Fit the polynomial coefficients of ``transform/vector_math`` (minimax, Lawson's algorithm).

Each polynomial approximates a smooth remainder of one math function on its
reduced interval (after the range reduction the pass performs), weighted so
that the *relative* error of the final result is what is minimized. The
fit is Lawson's iteratively reweighted least squares on Chebyshev-spaced
points, which converges to the minimax (Remez) solution; everything is
float64, ample for coefficients that end up rounded to float32.

    .venv/bin/python scripts/fit_vector_math.py

prints, per polynomial, its coefficients (lowest degree first, float32 ones
as float32-rounded hex) and the fitted weighted error, in units of 2^-24
(one float32 ulp at 1.0) or 2^-53 for the float64 ones. The tables in
``transform/vector_math/coefficients.py`` were pasted from this output.
"""

from __future__ import annotations

import math

import numpy as np

_erf = np.vectorize(math.erf)


def minimax(target, weight, lo: float, hi: float, degree: int, shift: float = 0.0,
            points: int = 8000, rounds: int = 400) -> tuple[np.ndarray, float]:
    """Coefficients c of ``sum c[k] * (x - shift)**k`` minimizing max |weight * (target - p)|."""
    t = np.cos(np.linspace(0.0, np.pi, points))
    xs = (lo + hi) / 2 + (hi - lo) / 2 * t
    w = weight(xs)
    basis = np.stack([(xs - shift) ** k for k in range(degree + 1)], axis=1) * w[:, None]
    y = target(xs) * w
    u = np.full(points, 1.0 / points)
    for _ in range(rounds):
        s = np.sqrt(u)
        c = np.linalg.lstsq(basis * s[:, None], y * s, rcond=None)[0]
        err = np.abs(basis @ c - y)
        u = u * err
        u /= u.sum()
    return c, float(err.max())


def _safe(fn):
    """``fn`` with 0/0 at the interval's end replaced by the limit at a nearby point."""
    def apply(x):
        x = np.where(np.abs(x) < 1e-9, 1e-9, x)
        return fn(x)
    return apply


LN2 = math.log(2.0)
SQRT_HALF = math.sqrt(0.5)

# name: (target, weight, lo, hi, degree, shift, kind); each target is the remainder the
# pass evaluates, each weight turns its error into the result's relative error.
FITS = {
    # exp(r) = 1 + r + r^2 * P(r), |r| <= ln2/2
    "exp": (_safe(lambda r: (np.expm1(r) - r) / r**2), lambda r: r**2 / np.exp(r),
            -LN2 / 2, LN2 / 2, 4, 0.0, "f32"),
    # 2^r = 1 + r * P(r), |r| <= 1/2
    "exp2": (_safe(lambda r: np.expm1(r * LN2) / r), lambda r: np.abs(r) / np.exp2(r),
             -0.5, 0.5, 6, 0.0, "f32"),
    # log(1+f) = f - f^2/2 + f^3 * P(f), sqrt(1/2) <= 1+f < sqrt(2)
    "log": (_safe(lambda f: (np.log1p(f) - f + f * f / 2) / f**3),
            _safe(lambda f: np.abs(f**3 / np.log1p(f))), SQRT_HALF - 1, 2 * SQRT_HALF - 1, 7,
            0.0, "f32"),
    # sin(r) = r + r^3 * P(r^2), |r| <= pi/4 (fitted in u = r^2)
    "sin": (_safe(lambda u: (np.sin(np.sqrt(u)) - np.sqrt(u)) / u**1.5),
            _safe(lambda u: u**1.5 / np.sin(np.sqrt(u))), 0.0, (math.pi / 4) ** 2, 3, 0.0, "f32"),
    # cos(r) = 1 - r^2/2 + r^4 * P(r^2)
    "cos": (_safe(lambda u: (np.cos(np.sqrt(u)) - 1 + u / 2) / u**2),
            lambda u: u**2 / np.cos(np.sqrt(u)), 0.0, (math.pi / 4) ** 2, 3, 0.0, "f32"),
    # tanh(x) = x + x^3 * P(x^2), |x| < 0.625
    "tanh": (_safe(lambda u: (np.tanh(np.sqrt(u)) - np.sqrt(u)) / u**1.5),
             _safe(lambda u: u**1.5 / np.tanh(np.sqrt(u))), 0.0, 0.625**2, 5, 0.0, "f32"),
    # erf(x) = x + x * P(x^2), |x| < 0.921875
    "erf_small": (_safe(lambda u: (_erf(np.sqrt(u)) - np.sqrt(u)) / np.sqrt(u)),
                  _safe(lambda u: np.sqrt(u) / _erf(np.sqrt(u))), 0.0, 0.921875**2, 6, 0.0,
                  "f32"),
    # erf(x) = P(x - 2.4) on 0.921875 <= x <= 3.92 (beyond, erf rounds to 1)
    "erf_large": (_erf, lambda x: 1 / _erf(x), 0.921875, 3.92, 14, 2.4, "f32"),
    # pow's float64 log: log(m) = 2s + s^3 * P(s^2), s = (m-1)/(m+1), |s| <= 0.1716
    "pow_log": (_safe(lambda u: (2 * np.arctanh(np.sqrt(u)) - 2 * np.sqrt(u)) / u**1.5),
                _safe(lambda u: u**1.5 / (2 * np.arctanh(np.sqrt(u)))),
                0.0, ((math.sqrt(2) - 1) / (math.sqrt(2) + 1)) ** 2, 5, 0.0, "f64"),
    # pow's float64 exp2: 2^r = 1 + r * P(r), |r| <= 1/2
    "pow_exp2": (_safe(lambda r: np.expm1(r * LN2) / r), lambda r: np.abs(r) / np.exp2(r),
                 -0.5, 0.5, 8, 0.0, "f64"),
}


def main() -> None:
    """Fit every polynomial and print its coefficients and error."""
    for name, (target, weight, lo, hi, degree, shift, kind) in FITS.items():
        coeffs, err = minimax(target, weight, lo, hi, degree, shift)
        unit = 2.0**-24 if kind == "f32" else 2.0**-53
        if kind == "f32":
            coeffs = coeffs.astype(np.float32).astype(np.float64)
            text = ", ".join(float(c).hex() for c in coeffs)
        else:
            text = ", ".join(float(c).hex() for c in coeffs)
        print(f"{name} (degree {degree}, error {err / unit:.3g} units): ({text})")


if __name__ == "__main__":
    main()
