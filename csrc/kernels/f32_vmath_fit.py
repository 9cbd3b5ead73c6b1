"""Derives the polynomial coefficients of csrc/kernels/f32_vmath_constants.h.

    python3 csrc/kernels/f32_vmath_fit.py      # prints the C tables and the fit errors

Each polynomial is a weighted minimax fit (Lawson's iteratively reweighted least squares,
which converges to the minimax solution of a linear problem) on a dense grid, in double
precision, then rounded to float. The weights make the error the one that matters for
the float result (relative for exp / expm1 / small-x erf, absolute-in-erf for the erfc
tail). The printed errors are the approximation errors only (rounded coefficients, exact
arithmetic); the float evaluation adds its rounding, which tests/c/test_vmath.c measures.

Not part of the build: rerun it only to change a degree or an interval, then paste.
"""
import numpy as np
from scipy.special import erf, erfc

GRID = 20001
HALF_ULP = 2.0 ** -24


def lawson(x, f, weight, powers, iterations=500):
    """Coefficients c (of x**p for p in powers) minimising max |weight * (sum c x^p - f)|."""
    basis = np.stack([x ** p for p in powers], axis=1)
    u = np.full(len(x), 1.0 / len(x))
    for _ in range(iterations):
        s = np.sqrt(u) * weight
        c, *_ = np.linalg.lstsq(basis * s[:, None], f * s, rcond=None)
        e = np.abs((basis @ c - f) * weight)
        u = u * e
        u /= u.sum()
    return c


def as_float(c):
    return np.asarray(c, dtype=np.float32).astype(np.float64)


def hex_float(v):
    """C hex literal of a float32 value: exact, so the table is the fit bit for bit."""
    mantissa, exponent = float(v).hex().split("p")
    return f"{mantissa.rstrip('0').rstrip('.')}p{exponent}f"


def emit(name, c):
    for i, v in enumerate(np.asarray(c, dtype=np.float32)):
        print(f"    {hex_float(v)}, /* {name}{i}: {float(v):.9g} */")


def poly(c, x):
    return np.polyval(np.asarray(c)[::-1], x)


half_ln2 = np.log(2.0) / 2
r = np.linspace(-half_ln2, half_ln2, GRID)
r = r[r != 0]

# exp(r) = 1 + r + r^2 (c2 + c3 r + c4 r^2 + c5 r^3 + c6 r^4): c0 = c1 = 1 exactly, so
# exp(0) = 1 and exp(r) ~ 1 + r for tiny r without help from the fit.
c = as_float(lawson(r, (np.expm1(r) - r) / r**2, r**2 / np.exp(r), range(5)))
err = np.abs(1 + r + r**2 * poly(c, r) - np.exp(r)) / np.exp(r)
print(f"exp p6 on [-ln2/2, ln2/2]: max relative error {err.max():.3g} "
      f"({err.max() / HALF_ULP:.3f} x 2^-24)")
emit("exp c", c)

# expm1(r) = r + r^2 (c2 + ... + c6 r^4), relative to expm1(r) (tanh's core).
c = as_float(lawson(r, (np.expm1(r) - r) / r**2, r**2 / np.abs(np.expm1(r)), range(5)))
err = np.abs(r + r**2 * poly(c, r) - np.expm1(r)) / np.abs(np.expm1(r))
print(f"expm1 p6 on [-ln2/2, ln2/2]: max relative error {err.max():.3g} "
      f"({err.max() / HALF_ULP:.3f} x 2^-24)")
emit("expm1 c", c)

# erf, |x| < 0.921875: erf(x) = x + x P(x^2), P of degree 6, relative error. The leading
# term of erf(x)/x is 2/sqrt(pi) = 1.128...: fitting the part past 1 keeps the rounding of
# that constant to float (up to 2^-24 relative) out of the result.
split = 0.921875
x = np.linspace(0, split, GRID)[1:]
c = as_float(lawson(x * x, erf(x) / x - 1, x / erf(x), range(7)))
err = np.abs(x + x * poly(c, x * x) - erf(x)) / erf(x)
print(f"erf x + x P(x^2) on (0, {split}): max relative error {err.max():.3g} "
      f"({err.max() / HALF_ULP:.3f} x 2^-24)")
emit("erf small p", c)

# erf, 0.921875 <= |x| <= 4: erf(x) = 1 - exp(Q(x)), Q of degree 7 fitted to log erfc,
# weighted by erfc so that the error is the absolute error of erf. Past 4, erfc < 2^-26:
# erf rounds to 1.
x = np.linspace(split, 4.0, GRID)
c = as_float(lawson(x, np.log(erfc(x)), erfc(x), range(8)))
err = np.abs(np.exp(poly(c, x)) - erfc(x))
print(f"erf 1 - exp(Q(x)) on [{split}, 4]: max absolute error {err.max():.3g} "
      f"({err.max() / HALF_ULP:.3f} x 2^-24)")
emit("erf large q", c)
