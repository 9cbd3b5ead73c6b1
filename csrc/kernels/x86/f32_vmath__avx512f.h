/*
 * f32_vmath__avx512f.h — the AVX-512F elementwise kernels' vector (16 lanes) and its
 * operations, the recipes over them (f32_vmath__x86_body.h, as for AVX2: the same
 * operations per lane, so the same bits), and the loop every kernel runs (whole vectors,
 * then one masked step). Masks where AVX2 blends on a sign or a compare; the bitwise
 * float operations through the integer ones (the _ps forms are AVX512DQ). Included only
 * by files compiled with -mavx512f -mfma.
 */
#ifndef EMBER_F32_VMATH_AVX512F_H
#define EMBER_F32_VMATH_AVX512F_H

#include <immintrin.h>
#include <stdint.h>

typedef __m512 vf;
typedef __m512i vi;
#define vf_set1 _mm512_set1_ps
#define vf_add _mm512_add_ps
#define vf_sub _mm512_sub_ps
#define vf_mul _mm512_mul_ps
#define vf_div _mm512_div_ps
#define vf_max _mm512_max_ps
#define vf_min _mm512_min_ps
#define vf_fmadd _mm512_fmadd_ps
#define vf_fnmadd _mm512_fnmadd_ps
#define vf_to_vi _mm512_cvtps_epi32
#define vi_as_vf _mm512_castsi512_ps
#define vi_set1 _mm512_set1_epi32
#define vi_add _mm512_add_epi32
#define vi_sub _mm512_sub_epi32
#define vi_srai _mm512_srai_epi32
#define vi_slli _mm512_slli_epi32
#define VF_BITWISE(op, a, b)                                                                 \
    _mm512_castsi512_ps(op(_mm512_castps_si512(a), _mm512_castps_si512(b)))
#define vf_or(a, b) VF_BITWISE(_mm512_or_si512, (a), (b))
#define vf_and(a, b) VF_BITWISE(_mm512_and_si512, (a), (b))
#define vf_andnot(a, b) VF_BITWISE(_mm512_andnot_si512, (a), (b))
#define vf_xor(a, b) VF_BITWISE(_mm512_xor_si512, (a), (b))
#define vf_pick_if_sign(x, a, b)                                                             \
    _mm512_mask_blend_ps(                                                                    \
        _mm512_test_epi32_mask(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN)), (a), (b))
#define vf_pick_if_ge(x, t, a, b)                                                            \
    _mm512_mask_blend_ps(_mm512_cmp_ps_mask((x), (t), _CMP_GE_OQ), (a), (b))
#define vf_pick_if_lt(x, t, a, b)                                                            \
    _mm512_mask_blend_ps(_mm512_cmp_ps_mask((x), (t), _CMP_LT_OQ), (a), (b))

#include "kernels/x86/f32_vmath__x86_body.h"

/* The loop of every kernel: whole vectors, then the tail with a mask (masked-off lanes
 * are neither read nor written, nor fault). OP is a function vf -> vf. */
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
