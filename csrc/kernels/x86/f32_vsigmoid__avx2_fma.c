/*
 * f32_vsigmoid__avx2_fma — y = 1 / (1 + exp(-x)), 8 lanes at a time, AVX2 + FMA3.
 *
 * e = exp(-|x|) ∈ [0, 1] by the exp recipe (it never overflows); d = 1 + e ∈ [1, 2];
 * y = 1/d for x ≥ 0 and e/d for x < 0 — both quotients of positive terms, so accurate
 * relative to the result on both sides. One divide (vdivps: a fast, correctly rounded
 * divide on x86, so no Newton step is needed). Tail: one masked load / store.
 */
#include "kernels/kernels.h"
#include "kernels/x86/f32_vmath__avx2_fma.h"

static inline __m256 sigmoid_avx2(__m256 x)
{
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 e = exp_avx2(_mm256_or_ps(x, sign)); /* exp(-|x|) */
    const __m256 d = _mm256_add_ps(_mm256_set1_ps(1.0f), e);
    /* The sign bit of x chooses e or 1 as the numerator (blendv reads only that bit). */
    const __m256 numerator = _mm256_blendv_ps(_mm256_set1_ps(1.0f), e, x);
    return _mm256_div_ps(numerator, d);
}

void ember_f32_vsigmoid__avx2_fma(size_t n, const float *x, float *y)
{
    EMBER_F32_VUNARY_LOOP_AVX2(sigmoid_avx2, n, x, y);
}
