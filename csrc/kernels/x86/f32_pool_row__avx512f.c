/*
 * f32_pool_row__avx512f — a row of a pool's step-2 windows (kernels.h), 16 outputs a
 * step: each row's 32 columns (and the 33rd a 3-wide window reaches) folded down the rows
 * in two vectors, split into the even and the odd columns by one vpermt2ps each, the even
 * ones moved down a lane (the 33rd column brought into the top lane by the same
 * instruction) for the third column. The outputs past the last multiple of 16 — all of
 * them in rows under 16 outputs, such as SqueezeNet's 13 and Inception's 7 and 14 — take
 * one step more with masked loads and a masked store: the loads' masks end at column
 * 2n - 2 + kw (a masked-off lane neither reads nor faults), the store's at output n.
 * Each output folds the same columns in the same order as the scalar kernel, so the bits
 * are its bits.
 *
 * Against the AVX2 kernel (8 a step, the last one taken back; 4 a step with SSE for rows
 * of 4-7, scalar under 4) on a Cascade Lake VM, 3×3 max windows from rows in cache, not
 * 16-byte aligned, a call: 13 outputs 22 -> 15-17 ns, 27: 37-42 -> 21-24, 55: 60-69 ->
 * 39-41. The pool ops (bench_ab against the build before, 40 pairs): SqueezeNet's
 * 256×27×27 0.90x the time, 128×55×55 0.95x, 64×111×111 0.87x, a 3×3 average pool
 * 256×27×27 0.87x; the whole models, SqueezeNet 0.977x, Inception v1 0.996x, v2 0.994x
 * (30 pairs): the ops' own loops and the memory traffic stay.
 */
#include "kernels/kernels.h"

#include <immintrin.h>
#include <stdint.h>

static inline __m512 fold16(__m512 held, __m512 next, int is_max)
{
    /* max_ps(next, held) is next > held ? next : held: a NaN held stays (kernels.h) */
    return is_max ? _mm512_max_ps(next, held) : _mm512_add_ps(held, next);
}

static inline __m128 fold1(__m128 held, __m128 next, int is_max)
{
    return is_max ? _mm_max_ss(next, held) : _mm_add_ss(held, next);
}

/* The columns a step reads in each row, as load masks: [0, 16) of the first vector,
 * [16, 32) of the second; a whole step has them all (and the 33rd, loaded apart). */
typedef struct step_masks {
    __mmask16 lo, hi, out;
} step_masks;

static const step_masks WHOLE = {0xFFFF, 0xFFFF, 0xFFFF};

/* Outputs [i, i + 16), or of them the lanes of m.out. A partial step (m.out not all set)
 * has at most 15 outputs, so its third columns all lie in the two vectors: the 33rd
 * column is read by whole steps only. */
static EMBER_ALWAYS_INLINE void sixteen(const float *const *rows, size_t kh, size_t kw,
                                        int is_max, float divisor, size_t i, step_masks m,
                                        int whole, float *y)
{
    const float *r = rows[0] + 2 * i;
    __m512 lo = _mm512_maskz_loadu_ps(m.lo, r), hi = _mm512_maskz_loadu_ps(m.hi, r + 16);
    __m128 last = kw == 3 && whole ? _mm_load_ss(r + 32) : _mm_setzero_ps();
    for (size_t t = 1; t < kh; t++) {
        r = rows[t] + 2 * i;
        lo = fold16(lo, _mm512_maskz_loadu_ps(m.lo, r), is_max);
        hi = fold16(hi, _mm512_maskz_loadu_ps(m.hi, r + 16), is_max);
        if (kw == 3 && whole)
            last = fold1(last, _mm_load_ss(r + 32), is_max);
    }
    /* lane k of lo:hi is column k, of lo:hi's second source 16 + k */
    const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24,
                                            26, 28, 30);
    const __m512i odds = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25,
                                           27, 29, 31);
    const __m512 even = _mm512_permutex2var_ps(lo, evens, hi);
    __m512 v = fold16(even, _mm512_permutex2var_ps(lo, odds, hi), is_max);
    if (kw == 3) {
        /* evens 1 .. 15, then the 33rd column (lane 0 of the second source) */
        const __m512i down = _mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
                                               15, 16);
        v = fold16(v, _mm512_permutex2var_ps(even, down, _mm512_castps128_ps512(last)),
                   is_max);
    }
    if (!is_max)
        v = _mm512_div_ps(v, _mm512_set1_ps(divisor));
    _mm512_mask_storeu_ps(y + i, m.out, v);
}

/* The masks of a last step of `outputs` (1 to 15) outputs: 2·outputs - 2 + kw columns,
 * at most 31. */
static inline step_masks tail_masks(size_t outputs, size_t kw)
{
    const uint32_t columns = ((uint32_t)1 << (2 * outputs - 2 + kw)) - 1;
    const step_masks m = {(__mmask16)columns, (__mmask16)(columns >> 16),
                          (__mmask16)(((uint32_t)1 << outputs) - 1)};
    return m;
}

/* The row's steps: the whole ones, then the rest in one masked step. */
static EMBER_ALWAYS_INLINE void steps(size_t n, const float *const *rows, size_t kh, size_t kw,
                                      int is_max, float divisor, float *y)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        sixteen(rows, kh, kw, is_max, divisor, i, WHOLE, 1, y);
    if (i < n)
        sixteen(rows, kh, kw, is_max, divisor, i, tail_masks(n - i, kw), 0, y);
}

/* is_max and kw constant, so each of the four copies has no branch on them; and kh too
 * where it is 3 or 2 (3×3 and 2×2 windows), whose rows then fold without a loop: 3 rows
 * of 13 outputs 16.5 -> 15.2 ns a call, of 55 48.8 -> 41.8. */
static EMBER_ALWAYS_INLINE void row(size_t n, const float *const *rows, size_t kh, size_t kw,
                                    int is_max, float divisor, float *y)
{
    if (kh == 3)
        steps(n, rows, 3, kw, is_max, divisor, y);
    else if (kh == 2)
        steps(n, rows, 2, kw, is_max, divisor, y);
    else
        steps(n, rows, kh, kw, is_max, divisor, y);
}

void ember_f32_pool_row__avx512f(size_t n, const float *const *rows, size_t kh, size_t kw,
                                 int is_max, float divisor, float *y)
{
    EMBER_F32_POOL_ROW_SPECIALISED(row, n, rows, kh, kw, is_max, divisor, y);
}
