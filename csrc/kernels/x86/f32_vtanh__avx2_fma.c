/*
 * f32_vtanh__avx2_fma — y = tanh(x), 8 lanes at a time, AVX2 + FMA3.
 *
 * Recipe (f32_vmath_constants.h, ember_f32_vtanh_constants): a = min(|x|, 10),
 * z = -2a = n·ln2 + r, p = expm1(r) of degree 6; below a = 0.625, m = expm1(z) and
 * q = -m / (m + 2); above, u = exp(z) and q = 1 - 2u / (1 + u); one correctly rounded
 * divide; y = |q| with the sign of x.
 * Tail: one masked load / store.
 */
#include "kernels/kernels.h"
#include "kernels/x86/f32_vmath__avx2_fma.h"

static inline __m256 tanh_avx2(__m256 x)
{
    const ember_f32_vtanh_constants *k = &ember_f32_vtanh_table;
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 a = _mm256_andnot_ps(sign, x);
    a = _mm256_min_ps(_mm256_set1_ps(k->x_max), a); /* NaN passes */
    const __m256 z = _mm256_mul_ps(_mm256_set1_ps(-2.0f), a);
    __m256 n;
    const __m256 r = ln2_reduce_avx2(z, &k->reduction, &n);
    __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(k->c6), r, _mm256_set1_ps(k->c5));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(k->c4));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(k->c3));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(k->c2));
    p = _mm256_fmadd_ps(_mm256_mul_ps(r, r), p, r); /* expm1(r) */
    /* n ∈ [-29, 0]: 2^n is normal and 2^n - 1 is exact down to n = -24. */
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 t = exp2i_avx2(_mm256_cvtps_epi32(n));
    const __m256 m = _mm256_fmadd_ps(t, p, _mm256_sub_ps(t, one)); /* expm1(z) */
    const __m256 u = _mm256_fmadd_ps(t, p, t);                      /* exp(z) */
    /* a ≥ split is false for NaN, which takes the first form and stays NaN. */
    const __m256 large = _mm256_cmp_ps(a, _mm256_set1_ps(k->split), _CMP_GE_OQ);
    const __m256 num = _mm256_blendv_ps(_mm256_xor_ps(m, sign), _mm256_add_ps(u, u), large);
    const __m256 den =
        _mm256_blendv_ps(_mm256_add_ps(m, _mm256_set1_ps(2.0f)), _mm256_add_ps(one, u), large);
    const __m256 d = _mm256_div_ps(num, den);
    const __m256 q = _mm256_blendv_ps(d, _mm256_sub_ps(one, d), large);
    return _mm256_or_ps(_mm256_andnot_ps(sign, q), _mm256_and_ps(sign, x));
}

void ember_f32_vtanh__avx2_fma(size_t n, const float *x, float *y)
{
    EMBER_F32_VUNARY_LOOP_AVX2(tanh_avx2, n, x, y);
}
