/*
 * f32_vtanh__avx512f — y = tanh(x), 16 lanes at a time: the AVX2 kernel's recipe lane for
 * lane (f32_vmath_constants.h, ember_f32_vtanh_constants; one divide). Tail: one masked
 * step.
 */
#include "kernels/kernels.h"
#include "kernels/x86/f32_vmath__avx512f.h"

static inline __m512 tanh_avx512(__m512 x)
{
    const ember_f32_vtanh_constants *k = &ember_f32_vtanh_table;
    const __m512 sign = _mm512_set1_ps(-0.0f);
    __m512 a = andnot_avx512(sign, x);
    a = _mm512_min_ps(_mm512_set1_ps(k->x_max), a); /* NaN passes */
    const __m512 z = _mm512_mul_ps(_mm512_set1_ps(-2.0f), a);
    __m512 n;
    const __m512 r = ln2_reduce_avx512(z, &k->reduction, &n);
    __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(k->c6), r, _mm512_set1_ps(k->c5));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(k->c4));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(k->c3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(k->c2));
    p = _mm512_fmadd_ps(_mm512_mul_ps(r, r), p, r); /* expm1(r) */
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 t = exp2i_avx512(_mm512_cvtps_epi32(n));
    const __m512 m = _mm512_fmadd_ps(t, p, _mm512_sub_ps(t, one)); /* expm1(z) */
    const __m512 u = _mm512_fmadd_ps(t, p, t);                      /* exp(z) */
    /* a ≥ split is false for NaN, which takes the first form and stays NaN. */
    const __mmask16 large = _mm512_cmp_ps_mask(a, _mm512_set1_ps(k->split), _CMP_GE_OQ);
    const __m512 num = _mm512_mask_blend_ps(large, xor_avx512(m, sign), _mm512_add_ps(u, u));
    const __m512 den =
        _mm512_mask_blend_ps(large, _mm512_add_ps(m, _mm512_set1_ps(2.0f)), _mm512_add_ps(one, u));
    const __m512 d = _mm512_div_ps(num, den);
    const __m512 q = _mm512_mask_blend_ps(large, d, _mm512_sub_ps(one, d));
    return or_avx512(andnot_avx512(sign, q), and_avx512(sign, x));
}

void ember_f32_vtanh__avx512f(size_t n, const float *x, float *y)
{
    EMBER_F32_VUNARY_LOOP_AVX512(tanh_avx512, n, x, y);
}
