/*
 * f32_vmath__avx512f.h — the AVX-512 counterparts of f32_vmath__avx2_fma.h's pieces: the
 * exp recipe on one vector of 16 lanes, and the loop (whole vectors, then one masked step).
 * The operations per lane are the AVX2 ones, in the same order. Included only by files
 * compiled with -mavx512f -mfma.
 */
#ifndef EMBER_F32_VMATH_AVX512F_H
#define EMBER_F32_VMATH_AVX512F_H

#include "kernels/f32_vmath_constants.h"

#include <immintrin.h>
#include <stdint.h>

/* x = n·ln2 + r with n = round(x·log2e) (as a float) and |r| ≲ ln2/2, by Cody–Waite. */
static inline __m512 ln2_reduce_avx512(__m512 x, const ember_f32_ln2_reduction *k, __m512 *n)
{
    const __m512 magic = _mm512_set1_ps(k->round_magic);
    *n = _mm512_sub_ps(_mm512_fmadd_ps(x, _mm512_set1_ps(k->log2e), magic), magic);
    const __m512 r = _mm512_fnmadd_ps(*n, _mm512_set1_ps(k->ln2_hi), x);
    return _mm512_fnmadd_ps(*n, _mm512_set1_ps(k->ln2_lo), r);
}

/* 2^n for an integer n with -126 ≤ n ≤ 127, built in the exponent bits. */
static inline __m512 exp2i_avx512(__m512i n)
{
    const __m512i biased = _mm512_add_epi32(n, _mm512_set1_epi32(127));
    return _mm512_castsi512_ps(_mm512_slli_epi32(biased, 23));
}

/* exp(x) for each lane: f32_vmath_constants.h, ember_f32_vexp_constants. */
static inline __m512 exp_avx512(__m512 x)
{
    const ember_f32_vexp_constants *k = &ember_f32_vexp_table;
    /* max/min return their second operand when either is NaN: NaN passes both clamps. */
    x = _mm512_max_ps(_mm512_set1_ps(k->x_min), x);
    x = _mm512_min_ps(_mm512_set1_ps(k->x_max), x);
    __m512 n;
    const __m512 r = ln2_reduce_avx512(x, &k->reduction, &n);
    __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(k->c6), r, _mm512_set1_ps(k->c5));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(k->c4));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(k->c3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(k->c2));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    /* 2^n = 2^(n>>1) · 2^(n - (n>>1)), as in exp_avx2 */
    const __m512i ni = _mm512_cvtps_epi32(n);
    const __m512i n1 = _mm512_srai_epi32(ni, 1);
    const __m512i n2 = _mm512_sub_epi32(ni, n1);
    return _mm512_mul_ps(_mm512_mul_ps(p, exp2i_avx512(n1)), exp2i_avx512(n2));
}

/* Bitwise or, and, and-not, xor of float lanes in AVX-512F alone (the _ps forms are
 * AVX512DQ). */
static inline __m512 or_avx512(__m512 a, __m512 b)
{
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}

static inline __m512 and_avx512(__m512 a, __m512 b)
{
    return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}

static inline __m512 andnot_avx512(__m512 a, __m512 b) /* ~a & b */
{
    return _mm512_castsi512_ps(
        _mm512_andnot_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}

static inline __m512 xor_avx512(__m512 a, __m512 b)
{
    return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}

/* The lanes whose sign bit is set (what AVX2's blendv reads). */
static inline __mmask16 sign_lanes_avx512(__m512 x)
{
    return _mm512_test_epi32_mask(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN));
}

/* The loop of every kernel: whole vectors, then the tail with a mask (masked-off lanes
 * are neither read nor written, nor fault). OP is a function __m512 -> __m512. */
#define EMBER_F32_VUNARY_LOOP_AVX512(OP, n, x, y)                                            \
    do {                                                                                     \
        for (; (n) >= 16; (n) -= 16, (x) += 16, (y) += 16) {                                 \
            _mm512_storeu_ps((y), OP(_mm512_loadu_ps(x)));                                   \
        }                                                                                    \
        if ((n) != 0) {                                                                      \
            const __mmask16 mask_ = (__mmask16)((1u << (n)) - 1);                            \
            _mm512_mask_storeu_ps((y), mask_, OP(_mm512_maskz_loadu_ps(mask_, (x))));        \
        }                                                                                    \
    } while (0)

#endif /* EMBER_F32_VMATH_AVX512F_H */
