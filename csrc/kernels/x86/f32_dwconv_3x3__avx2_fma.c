/*
 * f32_dwconv_3x3__avx2_fma — 3×3 depthwise conv rows, 8 outputs per step, AVX2 + FMA3.
 *
 * Register budget: 9 broadcast taps, bias, min, max, 3 accumulators (one per input row,
 * summed at the end so the 9 FMAs form three short chains), 1–3 inputs: 16 ymm.
 * Stride 1: the three taps of a row are unaligned loads at +0, +1, +2. Stride 2: two loads
 * of 8 (inputs 2o .. 2o+15) deinterleaved into even (tap 0) and odd (tap 1) columns; tap 2
 * is the even vector moved down one lane with input 2o+16 put in the top lane, so nothing
 * past (n−1)·2 + 3 is read. Tails (n mod 8 outputs): the inputs they need are copied to a
 * zero-padded stack buffer, the same vector body runs on it, and the store is masked.
 * Clamp operands are ordered so that NaN passes, as in the scalar kernel.
 */
#include "kernels/kernels.h"

#include <immintrin.h>

/* The last n < 8 outputs: their inputs ((n−1)·s + 3 ≤ 17 floats per row) go through a
 * zero-padded stack copy so the vector body serves them too; the store is masked. */
typedef struct tail_rows {
    float row[3][24];
} tail_rows;

static inline void tail_copy(tail_rows *t, const float *const rows[3], size_t n, size_t s)
{
    const size_t width = (n - 1) * s + 3;
    for (int ky = 0; ky < 3; ky++)
        for (size_t x = 0; x < 24; x++)
            t->row[ky][x] = x < width ? rows[ky][x] : 0.0f;
}

static inline __m256i tail_mask(size_t n)
{
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), lanes);
}

static inline __m256 clamp8(__m256 v, __m256 vmin, __m256 vmax)
{
    v = _mm256_max_ps(vmin, v); /* vmin > v ? vmin : v: NaN kept */
    return _mm256_min_ps(vmax, v);
}

static inline __m256 row8_s1(const float *row0, const float *row1, const float *row2,
                             const __m256 k[9], __m256 vbias)
{
    __m256 a0 = _mm256_fmadd_ps(k[0], _mm256_loadu_ps(row0), vbias);
    __m256 a1 = _mm256_mul_ps(k[3], _mm256_loadu_ps(row1));
    __m256 a2 = _mm256_mul_ps(k[6], _mm256_loadu_ps(row2));
    a0 = _mm256_fmadd_ps(k[1], _mm256_loadu_ps(row0 + 1), a0);
    a1 = _mm256_fmadd_ps(k[4], _mm256_loadu_ps(row1 + 1), a1);
    a2 = _mm256_fmadd_ps(k[7], _mm256_loadu_ps(row2 + 1), a2);
    a0 = _mm256_fmadd_ps(k[2], _mm256_loadu_ps(row0 + 2), a0);
    a1 = _mm256_fmadd_ps(k[5], _mm256_loadu_ps(row1 + 2), a1);
    a2 = _mm256_fmadd_ps(k[8], _mm256_loadu_ps(row2 + 2), a2);
    return _mm256_add_ps(_mm256_add_ps(a0, a1), a2);
}

void ember_f32_dwconv_3x3s1__avx2_fma(size_t n, const float *row0, const float *row1,
                                      const float *row2, const float *w, float bias,
                                      float *out, const ember_f32_dwconv_params *params)
{
    __m256 k[9];
    for (int t = 0; t < 9; t++)
        k[t] = _mm256_set1_ps(w[t]);
    const __m256 vbias = _mm256_set1_ps(bias);
    const __m256 vmin = _mm256_set1_ps(params->min), vmax = _mm256_set1_ps(params->max);
    size_t o = 0;
    for (; o + 8 <= n; o += 8)
        _mm256_storeu_ps(out + o, clamp8(row8_s1(row0 + o, row1 + o, row2 + o, k, vbias),
                                         vmin, vmax));
    if (o < n) {
        const float *const rows[3] = {row0 + o, row1 + o, row2 + o};
        tail_rows t;
        tail_copy(&t, rows, n - o, 1);
        const __m256 v = row8_s1(t.row[0], t.row[1], t.row[2], k, vbias);
        _mm256_maskstore_ps(out + o, tail_mask(n - o), clamp8(v, vmin, vmax));
    }
}

/* Columns 2o+0, 2o+1, 2o+2 of 8 consecutive outputs, from row[0 .. 17). */
static inline void deinterleave(const float *row, __m256 *c0, __m256 *c1, __m256 *c2)
{
    const __m256 lo = _mm256_loadu_ps(row), hi = _mm256_loadu_ps(row + 8);
    /* shuffle_ps works per 128-bit lane: [l0 l2 h0 h2 | l4 l6 h4 h6]; the 64-bit permute
     * 0xD8 (0, 2, 1, 3) puts the pairs in order. */
    const __m256 even = _mm256_castpd_ps(
        _mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0x88)), 0xD8));
    const __m256 odd = _mm256_castpd_ps(
        _mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0xDD)), 0xD8));
    const __m256 down = _mm256_permutevar8x32_ps(even, _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 0));
    *c0 = even;
    *c1 = odd;
    *c2 = _mm256_blend_ps(down, _mm256_broadcast_ss(row + 16), 0x80);
}

static inline __m256 row8_s2(const float *row0, const float *row1, const float *row2,
                             const __m256 k[9], __m256 vbias)
{
    __m256 x0, x1, x2;
    deinterleave(row0, &x0, &x1, &x2);
    __m256 a0 = _mm256_fmadd_ps(k[0], x0, vbias);
    a0 = _mm256_fmadd_ps(k[1], x1, a0);
    a0 = _mm256_fmadd_ps(k[2], x2, a0);
    deinterleave(row1, &x0, &x1, &x2);
    __m256 a1 = _mm256_mul_ps(k[3], x0);
    a1 = _mm256_fmadd_ps(k[4], x1, a1);
    a1 = _mm256_fmadd_ps(k[5], x2, a1);
    deinterleave(row2, &x0, &x1, &x2);
    __m256 a2 = _mm256_mul_ps(k[6], x0);
    a2 = _mm256_fmadd_ps(k[7], x1, a2);
    a2 = _mm256_fmadd_ps(k[8], x2, a2);
    return _mm256_add_ps(_mm256_add_ps(a0, a1), a2);
}

void ember_f32_dwconv_3x3s2__avx2_fma(size_t n, const float *row0, const float *row1,
                                      const float *row2, const float *w, float bias,
                                      float *out, const ember_f32_dwconv_params *params)
{
    __m256 k[9];
    for (int t = 0; t < 9; t++)
        k[t] = _mm256_set1_ps(w[t]);
    const __m256 vbias = _mm256_set1_ps(bias);
    const __m256 vmin = _mm256_set1_ps(params->min), vmax = _mm256_set1_ps(params->max);
    size_t o = 0;
    for (; o + 8 <= n; o += 8)
        _mm256_storeu_ps(out + o, clamp8(row8_s2(row0 + 2 * o, row1 + 2 * o, row2 + 2 * o, k,
                                                 vbias), vmin, vmax));
    if (o < n) {
        const float *const rows[3] = {row0 + 2 * o, row1 + 2 * o, row2 + 2 * o};
        tail_rows t;
        tail_copy(&t, rows, n - o, 2);
        const __m256 v = row8_s2(t.row[0], t.row[1], t.row[2], k, vbias);
        _mm256_maskstore_ps(out + o, tail_mask(n - o), clamp8(v, vmin, vmax));
    }
}
