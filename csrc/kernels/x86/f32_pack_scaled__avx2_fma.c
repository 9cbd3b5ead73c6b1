/*
 * f32_pack_scaled__avx2_fma — B packed with its rows scaled (kernels.h), eight floats a
 * vector, for panels of whole vectors (AVX2's 16 columns); other widths take the scalar
 * loops. No FMA: the multiply and the add round on their own, as the scale op's do, so
 * the bits are the scalar kernel's (tests/c/test_pack.c).
 */
#include "kernels/kernels.h"

#include <immintrin.h>

/* max(lo, v) then min(hi, v) return v when it is NaN, and v of either sign against a
 * bound of zero: the scalar comparisons' results. */
static inline __attribute__((always_inline)) __m256
scaled(__m256 v, __m256 s, __m256 t, int shifted, __m256 lo, __m256 hi)
{
    v = _mm256_mul_ps(v, s);
    if (shifted)
        v = _mm256_add_ps(v, t);
    return _mm256_min_ps(hi, _mm256_max_ps(lo, v));
}

/* Row p of B (src) into row p of every panel (dst, panels panel_floats apart): the whole
 * panels, then the last one's `tail` columns, zeros after them. */
static inline __attribute__((always_inline)) void
scaled_row(size_t vectors, size_t whole, size_t tail, const float *src, __m256 s, __m256 t,
           int shifted, __m256 lo, __m256 hi, float *dst, size_t panel_floats)
{
    const size_t nr = 8 * vectors;
    for (size_t j0 = 0; j0 < whole; j0 += nr, dst += panel_floats)
        for (size_t v = 0; v < vectors; v++)
            _mm256_storeu_ps(dst + 8 * v,
                             scaled(_mm256_loadu_ps(src + j0 + 8 * v), s, t, shifted, lo, hi));
    if (tail == 0)
        return;
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (size_t v = 0; v < vectors; v++) {
        const size_t left = tail > 8 * v ? tail - 8 * v : 0;
        const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(left < 8 ? left : 8)), lane);
        const __m256 x = _mm256_maskload_ps(src + whole + 8 * v, mask);
        _mm256_storeu_ps(dst + 8 * v, _mm256_and_ps(scaled(x, s, t, shifted, lo, hi),
                                                     _mm256_castsi256_ps(mask)));
    }
}

void ember_f32_pack_scaled__avx2_fma(size_t nr, size_t k, size_t n, const float *b, size_t rs,
                                     const ember_f32_scaled_rows *rows, float *packed)
{
    if (nr % 8 != 0 || nr == 0) {
        ember_f32_pack_scaled__scalar(nr, k, n, b, rs, rows, packed);
        return;
    }
    const size_t vectors = nr / 8, whole = n / nr * nr, tail = n - whole;
    const __m256 lo = _mm256_set1_ps(rows->min), hi = _mm256_set1_ps(rows->max);
    for (size_t p = 0; p < k; p++, b += rs, packed += nr) {
        const __m256 s = _mm256_set1_ps(rows->scale[p]);
        if (rows->shift != NULL)
            scaled_row(vectors, whole, tail, b, s, _mm256_set1_ps(rows->shift[p]), 1, lo, hi,
                       packed, nr * k);
        else
            scaled_row(vectors, whole, tail, b, s, _mm256_setzero_ps(), 0, lo, hi, packed,
                       nr * k);
    }
}
