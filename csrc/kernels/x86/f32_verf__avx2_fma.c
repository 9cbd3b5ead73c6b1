/*
 * f32_verf__avx2_fma — y = erf(x), 8 lanes at a time, AVX2 + FMA3.
 *
 * Recipe (f32_vmath_constants.h, ember_f32_verf_constants), on a = |x|:
 *   a < 0.921875:  a + a·P(a²), P of degree 6;
 *   otherwise:     1 - exp(Q(min(a, 4))), Q of degree 7, exp by the vexp recipe;
 * both computed, one chosen per lane, the sign of x put back. Tail: masked load / store.
 */
#include "kernels/kernels.h"
#include "kernels/x86/f32_vmath__avx2_fma.h"

static inline __m256 erf_avx2(__m256 x)
{
    const ember_f32_verf_constants *k = &ember_f32_verf_table;
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 a = _mm256_andnot_ps(sign, x);

    const __m256 s = _mm256_mul_ps(a, a);
    __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(k->p6), s, _mm256_set1_ps(k->p5));
    p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(k->p4));
    p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(k->p3));
    p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(k->p2));
    p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(k->p1));
    p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(k->p0));
    const __m256 small = _mm256_fmadd_ps(a, p, a);

    const __m256 b = _mm256_min_ps(_mm256_set1_ps(k->x_max), a); /* NaN passes */
    __m256 q = _mm256_fmadd_ps(_mm256_set1_ps(k->q7), b, _mm256_set1_ps(k->q6));
    q = _mm256_fmadd_ps(q, b, _mm256_set1_ps(k->q5));
    q = _mm256_fmadd_ps(q, b, _mm256_set1_ps(k->q4));
    q = _mm256_fmadd_ps(q, b, _mm256_set1_ps(k->q3));
    q = _mm256_fmadd_ps(q, b, _mm256_set1_ps(k->q2));
    q = _mm256_fmadd_ps(q, b, _mm256_set1_ps(k->q1));
    q = _mm256_fmadd_ps(q, b, _mm256_set1_ps(k->q0));
    const __m256 large = _mm256_sub_ps(_mm256_set1_ps(1.0f), exp_avx2(q));

    /* a < split is false for NaN, whose large branch is NaN. */
    const __m256 is_small = _mm256_cmp_ps(a, _mm256_set1_ps(k->split), _CMP_LT_OQ);
    const __m256 e = _mm256_blendv_ps(large, small, is_small);
    return _mm256_or_ps(e, _mm256_and_ps(sign, x));
}

void ember_f32_verf__avx2_fma(size_t n, const float *x, float *y)
{
    EMBER_F32_VUNARY_LOOP_AVX2(erf_avx2, n, x, y);
}
