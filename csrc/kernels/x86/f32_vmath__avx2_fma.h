/*
 * f32_vmath__avx2_fma.h — pieces shared by the AVX2 + FMA elementwise kernels
 * (f32_v<op>__avx2_fma.c): the exp recipe on one vector, the tail mask, and the loop
 * every kernel runs. Included only by files compiled with -mavx2 -mfma.
 */
#ifndef EMBER_F32_VMATH_AVX2_FMA_H
#define EMBER_F32_VMATH_AVX2_FMA_H

#include "kernels/f32_vmath_constants.h"

#include <immintrin.h>

/* x = n·ln2 + r with n = round(x·log2e) (as a float) and |r| ≲ ln2/2, by Cody–Waite. */
static inline __m256 ln2_reduce_avx2(__m256 x, const ember_f32_ln2_reduction *k, __m256 *n)
{
    const __m256 magic = _mm256_set1_ps(k->round_magic);
    *n = _mm256_sub_ps(_mm256_fmadd_ps(x, _mm256_set1_ps(k->log2e), magic), magic);
    const __m256 r = _mm256_fnmadd_ps(*n, _mm256_set1_ps(k->ln2_hi), x);
    return _mm256_fnmadd_ps(*n, _mm256_set1_ps(k->ln2_lo), r);
}

/* 2^n for an integer n with -126 ≤ n ≤ 127, built in the exponent bits. */
static inline __m256 exp2i_avx2(__m256i n)
{
    const __m256i biased = _mm256_add_epi32(n, _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(biased, 23));
}

/* exp(x) for each lane: f32_vmath_constants.h, ember_f32_vexp_constants. */
static inline __m256 exp_avx2(__m256 x)
{
    const ember_f32_vexp_constants *k = &ember_f32_vexp_table;
    /* max/min return their second operand when either is NaN: NaN passes both clamps. */
    x = _mm256_max_ps(_mm256_set1_ps(k->x_min), x);
    x = _mm256_min_ps(_mm256_set1_ps(k->x_max), x);
    __m256 n;
    const __m256 r = ln2_reduce_avx2(x, &k->reduction, &n);
    __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(k->c6), r, _mm256_set1_ps(k->c5));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(k->c4));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(k->c3));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(k->c2));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    /* 2^n = 2^(n>>1) · 2^(n - (n>>1)), both factors normal for n in [-150, 128]: the
     * first product is exact, the second rounds once (to a subnormal, 0 or inf). */
    const __m256i ni = _mm256_cvtps_epi32(n);
    const __m256i n1 = _mm256_srai_epi32(ni, 1);
    const __m256i n2 = _mm256_sub_epi32(ni, n1);
    return _mm256_mul_ps(_mm256_mul_ps(p, exp2i_avx2(n1)), exp2i_avx2(n2));
}

/* Lanes [0, n) set, for maskload / maskstore (which neither read nor write, nor fault
 * on, masked-off lanes). 0 < n < 8. */
static inline __m256i tail_mask_avx2(size_t n)
{
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), lane);
}

/* The loop of every kernel: whole vectors, then the tail masked. OP is a function
 * __m256 -> __m256 inlined at each use. */
#define EMBER_F32_VUNARY_LOOP_AVX2(OP, n, x, y)                                              \
    do {                                                                                     \
        for (; (n) >= 8; (n) -= 8, (x) += 8, (y) += 8) {                                     \
            _mm256_storeu_ps((y), OP(_mm256_loadu_ps(x)));                                   \
        }                                                                                    \
        if ((n) != 0) {                                                                      \
            const __m256i mask_ = tail_mask_avx2(n);                                         \
            _mm256_maskstore_ps((y), mask_, OP(_mm256_maskload_ps((x), mask_)));             \
        }                                                                                    \
    } while (0)

#endif /* EMBER_F32_VMATH_AVX2_FMA_H */
