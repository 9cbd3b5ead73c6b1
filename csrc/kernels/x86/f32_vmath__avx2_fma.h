/*
 * f32_vmath__avx2_fma.h — the AVX2 + FMA elementwise kernels' vector (8 lanes) and its
 * operations, the recipes over them (f32_vmath__x86_body.h: vmath_exp, vmath_sigmoid,
 * vmath_tanh, vmath_erf), the tail mask, and the loop every kernel runs. Included only
 * by files compiled with -mavx2 -mfma.
 */
#ifndef EMBER_F32_VMATH_AVX2_FMA_H
#define EMBER_F32_VMATH_AVX2_FMA_H

#include <immintrin.h>

typedef __m256 vf;
typedef __m256i vi;
#define vf_set1 _mm256_set1_ps
#define vf_add _mm256_add_ps
#define vf_sub _mm256_sub_ps
#define vf_mul _mm256_mul_ps
#define vf_div _mm256_div_ps
#define vf_max _mm256_max_ps
#define vf_min _mm256_min_ps
#define vf_fmadd _mm256_fmadd_ps
#define vf_fnmadd _mm256_fnmadd_ps
#define vf_or _mm256_or_ps
#define vf_and _mm256_and_ps
#define vf_andnot _mm256_andnot_ps
#define vf_xor _mm256_xor_ps
#define vf_to_vi _mm256_cvtps_epi32
#define vi_as_vf _mm256_castsi256_ps
#define vi_set1 _mm256_set1_epi32
#define vi_add _mm256_add_epi32
#define vi_sub _mm256_sub_epi32
#define vi_srai _mm256_srai_epi32
#define vi_slli _mm256_slli_epi32
/* blendv reads only the sign bit of its mask */
#define vf_pick_if_sign(x, a, b) _mm256_blendv_ps((a), (b), (x))
#define vf_pick_if_ge(x, t, a, b) _mm256_blendv_ps((a), (b), _mm256_cmp_ps((x), (t), _CMP_GE_OQ))
#define vf_pick_if_lt(x, t, a, b) _mm256_blendv_ps((a), (b), _mm256_cmp_ps((x), (t), _CMP_LT_OQ))

#include "kernels/x86/f32_vmath__x86_body.h"

/* Lanes [0, n) set, for maskload / maskstore (which neither read nor write, nor fault
 * on, masked-off lanes). 0 < n < 8. */
static inline __m256i tail_mask_avx2(size_t n)
{
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), lane);
}

/* The loop of every kernel: whole vectors, then the tail masked. OP is a function
 * vf -> vf inlined at each use. */
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
