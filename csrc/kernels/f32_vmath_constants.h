/*
 * f32_vmath_constants.h — the constants of the f32 elementwise transcendental families
 * (vexp, vsigmoid, vtanh, verf), one table per function, shared by every SIMD kernel so
 * that all ISAs compute the same recipe (README.md, "Elementwise transcendentals").
 *
 * The polynomial coefficients are our own weighted minimax fits, printed by
 * f32_vmath_fit.py (rerun it to change a degree or an interval); they are written as hex
 * float literals, exact in float, so the table is the fit bit for bit. The other values
 * are exact facts (ln 2 split, float range limits).
 *
 * The scalar kernels (generic/) call libm and do not use these tables.
 */
#ifndef EMBER_F32_VMATH_CONSTANTS_H
#define EMBER_F32_VMATH_CONSTANTS_H

/*
 * Range reduction x = n·ln2 + r, |r| ≤ ln2/2 (plus rounding), shared by exp and tanh.
 *
 * n = round(x·log2e): adding and subtracting 1.5·2^23 rounds a float of magnitude below
 * 2^22 to the nearest integer with the current (nearest-even) rounding, on every ISA
 * including those without a round instruction.
 * Cody–Waite: ln2 = ln2_hi + ln2_lo where ln2_hi has 15 significant bits, so n·ln2_hi is
 * exact for |n| < 2^9 and x - n·ln2_hi is exact (Sterbenz) even without an FMA; ln2_lo
 * carries the next 24 bits (ln2_hi + ln2_lo - ln2 ≈ -5.5e-14).
 */
typedef struct ember_f32_ln2_reduction {
    float log2e;       /* 1/ln2, rounded */
    float round_magic; /* 1.5·2^23 */
    float ln2_hi;      /* 0x3f317200 = 0.693145751953125 */
    float ln2_lo;      /* ln2 - ln2_hi, rounded */
} ember_f32_ln2_reduction;

#define EMBER_F32_LN2_REDUCTION                                                              \
    { 0x1.715476p+0f, 0x1.8p+23f, 0x1.62e4p-1f, 0x1.7f7d1cp-20f }

/*
 * exp(x) = 2^n · p(r), p(r) = 1 + r + r²(c2 + c3 r + c4 r² + c5 r³ + c6 r⁴) (degree 6;
 * fit error 3.8e-9 relative on |r| ≤ ln2/2). x is clamped to [x_min, x_max] first
 * (NaN passes): below x_min the result rounds to +0, above x_max it is +inf, and both
 * clamps keep n in [-150, 128] so that 2^n splits into two normal factors
 * 2^(n>>1) · 2^(n - (n>>1)) — the product by the second one is where an underflowing
 * result rounds, once, to its subnormal.
 */
typedef struct ember_f32_vexp_constants {
    ember_f32_ln2_reduction reduction;
    float x_min; /* -104 < ln(2^-150) ≈ -103.972: exp rounds to 0 */
    float x_max; /* 89 > ln(FLT_MAX) ≈ 88.7228: exp overflows to +inf */
    float c2, c3, c4, c5, c6;
} ember_f32_vexp_constants;

static const ember_f32_vexp_constants ember_f32_vexp_table = {
    EMBER_F32_LN2_REDUCTION,
    -104.0f,
    89.0f,
    0x1.fffffcp-2f,  /* 0.49999994 */
    0x1.555492p-3f,  /* 0.166665211 */
    0x1.5558f2p-5f,  /* 0.041668389 */
    0x1.1239d4p-7f,  /* 0.00836871006 */
    0x1.6a2444p-10f, /* 0.00138146081 */
};

/*
 * sigmoid(x) = 1 / (1 + e) for x ≥ 0, e / (1 + e) for x < 0, with e = exp(-|x|) from
 * the exp recipe above: both branches are quotients of positive terms, so the result is
 * accurate relative to itself on both sides (down to the subnormals of e^x for x ≪ 0),
 * and sigmoid(-x) = 1 - sigmoid(x) holds to rounding. No constants of its own.
 */

/*
 * tanh(x) = sign(x) · q(a), a = min(|x|, x_max), from one reduction of z = -2a = n·ln2 + r
 * and p = expm1(r) = r + r²(c2 + … + c6 r⁴) (fit error 1.7e-8 relative), t = 2^n:
 *   a < split:   m = expm1(z) = t·p + (t - 1) ∈ (-0.72, 0], q = -m / (m + 2) — no
 *                cancellation, and for tiny a, m = -2a exactly so q = a;
 *   a ≥ split:   u = exp(z) = t·p + t ∈ (0, 0.29], q = 1 - 2u / (1 + u) — the error of
 *                u only reaches the result through the small 2u/(1+u), where the first
 *                form would double the error of m ≈ -1 (measured: 2.5 → 1.5 ulp).
 * One divide either way (numerator and denominator chosen per lane). Past x_max, tanh
 * rounds to ±1.
 */
typedef struct ember_f32_vtanh_constants {
    ember_f32_ln2_reduction reduction;
    float split; /* 0.625: tanh ≈ 0.555, 2u/(1+u) ≈ 0.445 */
    float x_max; /* 10: 1 - tanh(10) ≈ 4e-9 < 2^-25, so tanh rounds to 1 from 9.01 on */
    float c2, c3, c4, c5, c6;
} ember_f32_vtanh_constants;

static const ember_f32_vtanh_constants ember_f32_vtanh_table = {
    EMBER_F32_LN2_REDUCTION,
    0.625f,
    10.0f,
    0x1.fffffep-2f,  /* 0.49999997 */
    0x1.5554bp-3f,   /* 0.166665435 */
    0x1.555674p-5f,  /* 0.0416672006 */
    0x1.122768p-7f,  /* 0.008366514 */
    0x1.6bec02p-10f, /* 0.0013882519 */
};

/*
 * erf(x) = sign(x) · e(|x|), two branches split at `split`:
 *   a < split:        e = a + a·P(a²), P = p0 + p1 s + … + p6 s⁶ (s = a²) fitted to
 *                      erf(a)/a - 1 (fit error 1.1e-8 relative). Fitting the part past 1
 *                      keeps the rounding of 2/√π out of the result.
 *   split ≤ a:        e = 1 - exp(Q(min(a, x_max))), Q = q0 + q1 a + … + q7 a⁷ fitted to
 *                      log erfc(a) on [split, 4], weighted by erfc (fit error 4.3e-9
 *                      absolute in erf); exp is the recipe above.
 * Past 4, erfc < 1.6e-8 < 2^-25 and erf rounds to 1, which the clamp gives.
 */
typedef struct ember_f32_verf_constants {
    float split; /* 0.921875 */
    float x_max; /* 4 */
    float p0, p1, p2, p3, p4, p5, p6;
    float q0, q1, q2, q3, q4, q5, q6, q7;
} ember_f32_verf_constants;

static const ember_f32_verf_constants ember_f32_verf_table = {
    0.921875f,
    4.0f,
    0x1.06eba8p-3f,   /* 0.128379166 */
    -0x1.812744p-2f,  /* -0.376126349 */
    0x1.ce2e2p-4f,    /* 0.112836957 */
    -0x1.b8107cp-6f,  /* -0.0268593989 */
    0x1.54dad6p-8f,   /* 0.00520103192 */
    -0x1.aae972p-11f, /* -0.000814269821 */
    0x1.5f10fap-14f,  /* 8.37007319e-05 */
    0x1.71da1ep-13f,  /* 0.000176359186 */
    -0x1.21286ep+0f,  /* -1.12952316 */
    -0x1.4443d4p-1f,  /* -0.633329988 */
    -0x1.bb97dp-4f,   /* -0.108299077 */
    0x1.9bc2f4p-6f,   /* 0.0251319297 */
    -0x1.11abep-8f,   /* -0.00417589396 */
    0x1.c8a144p-12f,  /* 0.00043547625 */
    -0x1.636908p-16f, /* -2.11841034e-05 */
};

#endif /* EMBER_F32_VMATH_CONSTANTS_H */
