/*
 * f32_vmath__x86_body.h — the x86 recipes of the elementwise transcendentals (exp,
 * sigmoid, tanh, erf; constants and derivations in f32_vmath_constants.h), written once
 * over a vector of floats and its operations, which the including header defines for
 * its ISA: f32_vmath__avx2_fma.h (8 lanes) or f32_vmath__avx512f.h (16 lanes). Every
 * lane runs the same operations in the same order on both, so their results are the same
 * bits (test_vmath checks it). The includer defines:
 *
 *   vf, vi                      the float and int32 vectors
 *   vf_set1 vf_add vf_sub vf_mul vf_div vf_max vf_min
 *   vf_fmadd(a, b, c)           a·b + c, one rounding;  vf_fnmadd(a, b, c): c − a·b
 *   vf_or vf_and vf_xor         bitwise;  vf_andnot(a, b): ~a & b
 *   vf_to_vi                    round to the nearest integer;  vi_as_vf: the bits as floats
 *   vi_set1 vi_add vi_sub       and vi_srai(v, n), vi_slli(v, n)
 *   vf_pick_if_sign(x, a, b)    b where x's sign bit is set, a elsewhere
 *   vf_pick_if_ge(x, t, a, b)   b where x ≥ t (false for NaN), a elsewhere
 *   vf_pick_if_lt(x, t, a, b)   b where x < t (false for NaN), a elsewhere
 */
#ifndef EMBER_F32_VMATH_X86_BODY_H
#define EMBER_F32_VMATH_X86_BODY_H

#include "kernels/f32_vmath_constants.h"

/* x = n·ln2 + r with n = round(x·log2e) (as a float) and |r| ≲ ln2/2, by Cody–Waite. */
static inline vf vmath_ln2_reduce(vf x, const ember_f32_ln2_reduction *k, vf *n)
{
    const vf magic = vf_set1(k->round_magic);
    *n = vf_sub(vf_fmadd(x, vf_set1(k->log2e), magic), magic);
    const vf r = vf_fnmadd(*n, vf_set1(k->ln2_hi), x);
    return vf_fnmadd(*n, vf_set1(k->ln2_lo), r);
}

/* 2^n for an integer n with -126 ≤ n ≤ 127, built in the exponent bits. */
static inline vf vmath_exp2i(vi n)
{
    return vi_as_vf(vi_slli(vi_add(n, vi_set1(127)), 23));
}

/* exp(x) for each lane: ember_f32_vexp_constants. */
static inline vf vmath_exp(vf x)
{
    const ember_f32_vexp_constants *k = &ember_f32_vexp_table;
    /* max/min return their second operand when either is NaN: NaN passes both clamps. */
    x = vf_max(vf_set1(k->x_min), x);
    x = vf_min(vf_set1(k->x_max), x);
    vf n;
    const vf r = vmath_ln2_reduce(x, &k->reduction, &n);
    vf p = vf_fmadd(vf_set1(k->c6), r, vf_set1(k->c5));
    p = vf_fmadd(p, r, vf_set1(k->c4));
    p = vf_fmadd(p, r, vf_set1(k->c3));
    p = vf_fmadd(p, r, vf_set1(k->c2));
    p = vf_fmadd(p, r, vf_set1(1.0f));
    p = vf_fmadd(p, r, vf_set1(1.0f));
    /* 2^n = 2^(n>>1) · 2^(n - (n>>1)), both factors normal for n in [-150, 128]: the
     * first product is exact, the second rounds once (to a subnormal, 0 or inf). */
    const vi ni = vf_to_vi(n);
    const vi n1 = vi_srai(ni, 1);
    const vi n2 = vi_sub(ni, n1);
    return vf_mul(vf_mul(p, vmath_exp2i(n1)), vmath_exp2i(n2));
}

/* 1 / (1 + exp(-x)): e = exp(-|x|), d = 1 + e, y = 1/d, or e/d where x's sign bit is set;
 * one correctly rounded divide. */
static inline vf vmath_sigmoid(vf x)
{
    const vf one = vf_set1(1.0f);
    const vf e = vmath_exp(vf_or(x, vf_set1(-0.0f))); /* exp(-|x|) */
    return vf_div(vf_pick_if_sign(x, one, e), vf_add(one, e));
}

/* tanh(x): a = min(|x|, 10), z = -2a = n·ln2 + r, p = expm1(r) of degree 6; below
 * a = 0.625, m = expm1(z) and q = -m / (m + 2); above, u = exp(z) and
 * q = 1 - 2u / (1 + u); one divide; y = |q| with the sign of x. */
static inline vf vmath_tanh(vf x)
{
    const ember_f32_vtanh_constants *k = &ember_f32_vtanh_table;
    const vf sign = vf_set1(-0.0f);
    vf a = vf_andnot(sign, x);
    a = vf_min(vf_set1(k->x_max), a); /* NaN passes */
    const vf z = vf_mul(vf_set1(-2.0f), a);
    vf n;
    const vf r = vmath_ln2_reduce(z, &k->reduction, &n);
    vf p = vf_fmadd(vf_set1(k->c6), r, vf_set1(k->c5));
    p = vf_fmadd(p, r, vf_set1(k->c4));
    p = vf_fmadd(p, r, vf_set1(k->c3));
    p = vf_fmadd(p, r, vf_set1(k->c2));
    p = vf_fmadd(vf_mul(r, r), p, r); /* expm1(r) */
    /* n ∈ [-29, 0]: 2^n is normal and 2^n - 1 is exact down to n = -24. */
    const vf one = vf_set1(1.0f);
    const vf t = vmath_exp2i(vf_to_vi(n));
    const vf m = vf_fmadd(t, p, vf_sub(t, one)); /* expm1(z) */
    const vf u = vf_fmadd(t, p, t);              /* exp(z) */
    /* a ≥ split is false for NaN, which takes the first form and stays NaN. */
    const vf split = vf_set1(k->split);
    const vf num = vf_pick_if_ge(a, split, vf_xor(m, sign), vf_add(u, u));
    const vf den = vf_pick_if_ge(a, split, vf_add(m, vf_set1(2.0f)), vf_add(one, u));
    const vf d = vf_div(num, den);
    const vf q = vf_pick_if_ge(a, split, d, vf_sub(one, d));
    return vf_or(vf_andnot(sign, q), vf_and(sign, x));
}

/* erf(x), on a = |x|: a + a·P(a²) below the split, 1 - exp(Q(min(a, 4))) above, both
 * computed and one chosen per lane, the sign of x put back. */
static inline vf vmath_erf(vf x)
{
    const ember_f32_verf_constants *k = &ember_f32_verf_table;
    const vf sign = vf_set1(-0.0f);
    const vf a = vf_andnot(sign, x);

    const vf s = vf_mul(a, a);
    vf p = vf_fmadd(vf_set1(k->p6), s, vf_set1(k->p5));
    p = vf_fmadd(p, s, vf_set1(k->p4));
    p = vf_fmadd(p, s, vf_set1(k->p3));
    p = vf_fmadd(p, s, vf_set1(k->p2));
    p = vf_fmadd(p, s, vf_set1(k->p1));
    p = vf_fmadd(p, s, vf_set1(k->p0));
    const vf small = vf_fmadd(a, p, a);

    const vf b = vf_min(vf_set1(k->x_max), a); /* NaN passes */
    vf q = vf_fmadd(vf_set1(k->q7), b, vf_set1(k->q6));
    q = vf_fmadd(q, b, vf_set1(k->q5));
    q = vf_fmadd(q, b, vf_set1(k->q4));
    q = vf_fmadd(q, b, vf_set1(k->q3));
    q = vf_fmadd(q, b, vf_set1(k->q2));
    q = vf_fmadd(q, b, vf_set1(k->q1));
    q = vf_fmadd(q, b, vf_set1(k->q0));
    const vf large = vf_sub(vf_set1(1.0f), vmath_exp(q));

    /* a < split is false for NaN, whose large branch is NaN. */
    return vf_or(vf_pick_if_lt(a, vf_set1(k->split), large, small), vf_and(sign, x));
}

#endif /* EMBER_F32_VMATH_X86_BODY_H */
