/*
 * f32_dwconv_3x3__avx2_fma — 3×3 depthwise conv rows, 8 outputs per step, AVX2 + FMA3.
 *
 * Register budget: 9 broadcast taps, bias, min, max, 3 accumulators (one per input row,
 * summed at the end so the 9 FMAs form three short chains), 1–3 inputs: 16 ymm.
 * Stride 1: the three taps of a row are unaligned loads at +0, +1, +2. Stride 2: two loads
 * of 8 (inputs 2o .. 2o+15) deinterleaved into even (tap 0) and odd (tap 1) columns; tap 2
 * is the even vector moved down one lane with input 2o+16 put in the top lane, so nothing
 * past (n−1)·2 + 3 is read. Tails (the last n mod 8 outputs): the same body on masked
 * loads (masked-off lanes read as 0 and touch no memory), then a masked store.
 * Clamp operands are ordered so that NaN passes, as in the scalar kernel.
 */
#include "kernels/kernels.h"

#include <immintrin.h>

/* Lanes [0, n) of a mask (n ≤ 8; n ≤ 0 gives none). */
static inline __m256i lane_mask(long n)
{
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), lanes);
}

static inline __m256 clamp8(__m256 v, __m256 vmin, __m256 vmax)
{
    v = _mm256_max_ps(vmin, v); /* vmin > v ? vmin : v: NaN kept */
    return _mm256_min_ps(vmax, v);
}

/* Tap kx of a stride-1 row: inputs row[kx .. kx + 8), or the lanes of `m` (tails). */
#define TAP_S1(row, kx, masked, m)                                                         \
    ((masked) ? _mm256_maskload_ps((row) + (kx), (m)) : _mm256_loadu_ps((row) + (kx)))

static inline __m256 row8_s1(const float *row0, const float *row1, const float *row2,
                             const __m256 k[9], __m256 vbias, int masked, __m256i m)
{
    __m256 a0 = _mm256_fmadd_ps(k[0], TAP_S1(row0, 0, masked, m), vbias);
    __m256 a1 = _mm256_mul_ps(k[3], TAP_S1(row1, 0, masked, m));
    __m256 a2 = _mm256_mul_ps(k[6], TAP_S1(row2, 0, masked, m));
    a0 = _mm256_fmadd_ps(k[1], TAP_S1(row0, 1, masked, m), a0);
    a1 = _mm256_fmadd_ps(k[4], TAP_S1(row1, 1, masked, m), a1);
    a2 = _mm256_fmadd_ps(k[7], TAP_S1(row2, 1, masked, m), a2);
    a0 = _mm256_fmadd_ps(k[2], TAP_S1(row0, 2, masked, m), a0);
    a1 = _mm256_fmadd_ps(k[5], TAP_S1(row1, 2, masked, m), a1);
    a2 = _mm256_fmadd_ps(k[8], TAP_S1(row2, 2, masked, m), a2);
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
    const __m256i all = _mm256_set1_epi32(-1);
    for (; o + 8 <= n; o += 8)
        _mm256_storeu_ps(out + o, clamp8(row8_s1(row0 + o, row1 + o, row2 + o, k, vbias, 0, all),
                                         vmin, vmax));
    if (o < n) { /* lane i reads row[o + i + kx] ≤ row[n + 1], inside the row */
        const __m256i m = lane_mask((long)(n - o));
        const __m256 v = row8_s1(row0 + o, row1 + o, row2 + o, k, vbias, 1, m);
        _mm256_maskstore_ps(out + o, m, clamp8(v, vmin, vmax));
    }
}

/* Columns 2o+0, 2o+1, 2o+2 of 8 consecutive outputs, from row[0 .. 17); in a tail of
 * `rem` < 8 outputs (masked), only row[0 .. 2·rem + 1) is read and the rest taken as 0. */
static inline void deinterleave(const float *row, __m256 *c0, __m256 *c1, __m256 *c2,
                                int masked, long rem)
{
    __m256 lo, hi, top;
    if (masked) {
        lo = _mm256_maskload_ps(row, lane_mask(2 * rem + 1));
        hi = _mm256_maskload_ps(row + 8, lane_mask(2 * rem + 1 - 8));
        top = _mm256_setzero_ps(); /* input 16 is needed by output 7 only */
    } else {
        lo = _mm256_loadu_ps(row);
        hi = _mm256_loadu_ps(row + 8);
        top = _mm256_broadcast_ss(row + 16);
    }
    /* shuffle_ps works per 128-bit lane: [l0 l2 h0 h2 | l4 l6 h4 h6]; the 64-bit permute
     * 0xD8 (0, 2, 1, 3) puts the pairs in order. */
    const __m256 even = _mm256_castpd_ps(
        _mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0x88)), 0xD8));
    const __m256 odd = _mm256_castpd_ps(
        _mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0xDD)), 0xD8));
    const __m256 down = _mm256_permutevar8x32_ps(even, _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 0));
    *c0 = even;
    *c1 = odd;
    *c2 = _mm256_blend_ps(down, top, 0x80);
}

static inline __m256 row8_s2(const float *row0, const float *row1, const float *row2,
                             const __m256 k[9], __m256 vbias, int masked, long rem)
{
    __m256 x0, x1, x2;
    deinterleave(row0, &x0, &x1, &x2, masked, rem);
    __m256 a0 = _mm256_fmadd_ps(k[0], x0, vbias);
    a0 = _mm256_fmadd_ps(k[1], x1, a0);
    a0 = _mm256_fmadd_ps(k[2], x2, a0);
    deinterleave(row1, &x0, &x1, &x2, masked, rem);
    __m256 a1 = _mm256_mul_ps(k[3], x0);
    a1 = _mm256_fmadd_ps(k[4], x1, a1);
    a1 = _mm256_fmadd_ps(k[5], x2, a1);
    deinterleave(row2, &x0, &x1, &x2, masked, rem);
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
                                                 vbias, 0, 8), vmin, vmax));
    if (o < n) {
        const long rem = (long)(n - o);
        const __m256 v = row8_s2(row0 + 2 * o, row1 + 2 * o, row2 + 2 * o, k, vbias, 1, rem);
        _mm256_maskstore_ps(out + o, lane_mask(rem), clamp8(v, vmin, vmax));
    }
}
