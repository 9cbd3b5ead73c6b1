/*
 * f32_verf__avx512f — y = erf(x), 16 lanes at a time: the AVX2 kernel's recipe lane for
 * lane (f32_vmath_constants.h, ember_f32_verf_constants: a + a·P(a²) below the split,
 * 1 - exp(Q(min(a, 4))) above, the sign of x put back). Tail: one masked step.
 */
#include "kernels/kernels.h"
#include "kernels/x86/f32_vmath__avx512f.h"

static inline __m512 erf_avx512(__m512 x)
{
    const ember_f32_verf_constants *k = &ember_f32_verf_table;
    const __m512 sign = _mm512_set1_ps(-0.0f);
    const __m512 a = andnot_avx512(sign, x);

    const __m512 s = _mm512_mul_ps(a, a);
    __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(k->p6), s, _mm512_set1_ps(k->p5));
    p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(k->p4));
    p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(k->p3));
    p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(k->p2));
    p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(k->p1));
    p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(k->p0));
    const __m512 small = _mm512_fmadd_ps(a, p, a);

    const __m512 b = _mm512_min_ps(_mm512_set1_ps(k->x_max), a); /* NaN passes */
    __m512 q = _mm512_fmadd_ps(_mm512_set1_ps(k->q7), b, _mm512_set1_ps(k->q6));
    q = _mm512_fmadd_ps(q, b, _mm512_set1_ps(k->q5));
    q = _mm512_fmadd_ps(q, b, _mm512_set1_ps(k->q4));
    q = _mm512_fmadd_ps(q, b, _mm512_set1_ps(k->q3));
    q = _mm512_fmadd_ps(q, b, _mm512_set1_ps(k->q2));
    q = _mm512_fmadd_ps(q, b, _mm512_set1_ps(k->q1));
    q = _mm512_fmadd_ps(q, b, _mm512_set1_ps(k->q0));
    const __m512 large = _mm512_sub_ps(_mm512_set1_ps(1.0f), exp_avx512(q));

    /* a < split is false for NaN, whose large branch is NaN. */
    const __mmask16 is_small = _mm512_cmp_ps_mask(a, _mm512_set1_ps(k->split), _CMP_LT_OQ);
    return or_avx512(_mm512_mask_blend_ps(is_small, large, small), and_avx512(sign, x));
}

void ember_f32_verf__avx512f(size_t n, const float *x, float *y)
{
    EMBER_F32_VUNARY_LOOP_AVX512(erf_avx512, n, x, y);
}
