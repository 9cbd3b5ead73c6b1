/*
 * f32_pool_row__avx2_fma — a row of a pool's step-2 windows (kernels.h), 8 outputs a
 * step: each row's 16 columns (and the 17th a 3-wide window reaches) folded down the
 * rows in two vectors, split into the even and the odd columns by shuffles, the even
 * ones moved down a lane for the third column; rows of 4 to 7 outputs 4 a step with SSE,
 * shorter ones by the scalar kernel. Each output folds the same columns in the same order
 * as the scalar kernel, so the bits are its bits. Against the per-row path (a vertical
 * combine of whole rows, then the windows' loop, compiled for SSE2), in the models:
 * SqueezeNet's three max pools 0.68x the time, Inception v1's thirteen 0.80x (README).
 */
#include "kernels/kernels.h"

#include <immintrin.h>

static inline __m256 fold8(__m256 held, __m256 next, int is_max)
{
    /* max_ps(next, held) is next > held ? next : held: a NaN held stays (kernels.h) */
    return is_max ? _mm256_max_ps(next, held) : _mm256_add_ps(held, next);
}

static inline __m128 fold4(__m128 held, __m128 next, int is_max)
{
    return is_max ? _mm_max_ps(next, held) : _mm_add_ps(held, next);
}

static inline __m128 fold1(__m128 held, __m128 next, int is_max)
{
    return is_max ? _mm_max_ss(next, held) : _mm_add_ss(held, next);
}

/* Columns 0, 2, … 14 (odd = 0) or 1, 3, … 15 (odd = 1) of lo:hi, in order. */
static inline __m256 every_other(__m256 lo, __m256 hi, int odd)
{
    const __m256 s = odd ? _mm256_shuffle_ps(lo, hi, 0xDD) : _mm256_shuffle_ps(lo, hi, 0x88);
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(s), 0xD8));
}

/* Outputs [i, i + 8). */
static EMBER_ALWAYS_INLINE void eight(const float *const *rows, size_t kh, size_t kw,
                                      int is_max, float divisor, size_t i, float *y)
{
    const float *r = rows[0] + 2 * i;
    __m256 lo = _mm256_loadu_ps(r), hi = _mm256_loadu_ps(r + 8);
    __m128 last = kw == 3 ? _mm_load_ss(r + 16) : _mm_setzero_ps();
    for (size_t t = 1; t < kh; t++) {
        r = rows[t] + 2 * i;
        lo = fold8(lo, _mm256_loadu_ps(r), is_max);
        hi = fold8(hi, _mm256_loadu_ps(r + 8), is_max);
        if (kw == 3)
            last = fold1(last, _mm_load_ss(r + 16), is_max);
    }
    const __m256 even = every_other(lo, hi, 0);
    __m256 v = fold8(even, every_other(lo, hi, 1), is_max);
    if (kw == 3) {
        const __m256i down = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 7);
        const __m256 third = _mm256_blend_ps(_mm256_permutevar8x32_ps(even, down),
                                             _mm256_broadcastss_ps(last), 0x80);
        v = fold8(v, third, is_max);
    }
    _mm256_storeu_ps(y + i, is_max ? v : _mm256_div_ps(v, _mm256_set1_ps(divisor)));
}

/* Outputs [i, i + 4): eight's steps at half the width. */
static EMBER_ALWAYS_INLINE void four(const float *const *rows, size_t kh, size_t kw, int is_max,
                                     float divisor, size_t i, float *y)
{
    const float *r = rows[0] + 2 * i;
    __m128 lo = _mm_loadu_ps(r), hi = _mm_loadu_ps(r + 4);
    __m128 last = kw == 3 ? _mm_load_ss(r + 8) : _mm_setzero_ps();
    for (size_t t = 1; t < kh; t++) {
        r = rows[t] + 2 * i;
        lo = fold4(lo, _mm_loadu_ps(r), is_max);
        hi = fold4(hi, _mm_loadu_ps(r + 4), is_max);
        if (kw == 3)
            last = fold1(last, _mm_load_ss(r + 8), is_max);
    }
    const __m128 even = _mm_shuffle_ps(lo, hi, 0x88);
    __m128 v = fold4(even, _mm_shuffle_ps(lo, hi, 0xDD), is_max);
    if (kw == 3) /* even 1, 2, 3 and last: (even 3, even 3, last, last) picked into place */
        v = fold4(v, _mm_shuffle_ps(even, _mm_shuffle_ps(even, last, 0x0F), 0x89), is_max);
    _mm_storeu_ps(y + i, is_max ? v : _mm_div_ps(v, _mm_set1_ps(divisor)));
}

/* The loops with is_max and kw constant, so each of the four copies has no branch on them.
 * A row that does not end on a whole step ends with one taken back over the outputs before
 * it (they come out the same: y is not read), so only rows under 4 outputs go scalar. */
static EMBER_ALWAYS_INLINE void row(size_t n, const float *const *rows, size_t kh, size_t kw,
                                    int is_max, float divisor, float *y)
{
    if (n >= 8) {
        for (size_t i = 0; i + 8 <= n; i += 8)
            eight(rows, kh, kw, is_max, divisor, i, y);
        if (n % 8)
            eight(rows, kh, kw, is_max, divisor, n - 8, y);
    } else if (n >= 4) {
        four(rows, kh, kw, is_max, divisor, 0, y);
        four(rows, kh, kw, is_max, divisor, n - 4, y);
    } else {
        ember_f32_pool_row__scalar(n, rows, kh, kw, is_max, divisor, y);
    }
}

void ember_f32_pool_row__avx2_fma(size_t n, const float *const *rows, size_t kh, size_t kw,
                                  int is_max, float divisor, float *y)
{
    EMBER_F32_POOL_ROW_SPECIALISED(row, n, rows, kh, kw, is_max, divisor, y);
}
