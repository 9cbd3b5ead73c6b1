/*
 * f32_hard_swish__avx2_fma — the hard-swish epilogue (kernels.h) in AVX2 intrinsics, eight
 * floats a vector, a row's tail masked (the conv paths call it on rows of a few floats as
 * well as on whole planes). No FMA: each step rounds as the plan's unfused ops do, so its
 * bits are the reference's (tests/c/test_kernels.c).
 */
#include "kernels/kernels.h"

#include <immintrin.h>

/* max(lo, t) then min(hi, t) return t when it is NaN: a NaN stays NaN, as in the clamp. */
static inline __m256 gated(__m256 v, __m256 alpha, __m256 beta, __m256 lo, __m256 hi)
{
    const __m256 t = _mm256_add_ps(_mm256_mul_ps(v, alpha), beta);
    return _mm256_mul_ps(v, _mm256_min_ps(hi, _mm256_max_ps(lo, t)));
}

void ember_f32_hard_swish__avx2_fma(size_t rows, size_t n, float *y, size_t row_stride,
                                    const ember_f32_hard_swish *gate)
{
    const __m256 alpha = _mm256_set1_ps(gate->alpha), beta = _mm256_set1_ps(gate->beta);
    const __m256 lo = _mm256_set1_ps(gate->lo), hi = _mm256_set1_ps(gate->hi);
    const __m256i tail = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n % 8)),
                                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    for (size_t r = 0; r < rows; r++) {
        float *row = (float *)((char *)y + r * row_stride);
        size_t j = 0;
        for (; j + 8 <= n; j += 8)
            _mm256_storeu_ps(row + j, gated(_mm256_loadu_ps(row + j), alpha, beta, lo, hi));
        if (j < n)
            _mm256_maskstore_ps(row + j, tail,
                                gated(_mm256_maskload_ps(row + j, tail), alpha, beta, lo, hi));
    }
}
