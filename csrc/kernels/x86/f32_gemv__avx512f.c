/*
 * f32_gemv__avx512f — a row vector by a packed B (kernels.h, ember_f32_gemv_fn), AVX-512F,
 * for panels of any multiple of 32 columns (the 8x32 kernel's).
 *
 * Why not the AVX2 GEMV on these panels: it walks a panel in strips of 16 columns, each a
 * pass over k, so every 128-byte row of a 32-wide panel is read twice, a cache line per
 * pass; a layer whose weights outgrow the caches (VGG19's 25088 -> 4096, 411 MB) then
 * read them from memory twice: 70 ms where onnxruntime took 36. Here a strip is the whole
 * 32-column row, read once, front to back.
 *
 * The sums run in the AVX2 GEMV's order, lane for lane (four rows per iteration into four
 * accumulator sets, summed (0 + 1) + (2 + 3) at the end, the rows past a multiple of four
 * into set 0), so both give the same bits. Columns past n are computed from the panel's
 * zero fill and masked off in every y and bias_col access.
 */
#include "kernels/kernels.h"

#include <immintrin.h>

enum { STRIP = 32 };

static void strip(size_t nr, size_t k, const float *x, const float *b, __m512 *lo, __m512 *hi)
{
    __m512 l0 = _mm512_setzero_ps(), h0 = l0, l1 = l0, h1 = l0, l2 = l0, h2 = l0;
    __m512 l3 = l0, h3 = l0;
    size_t p = 0;
    for (; p + 4 <= k; p += 4, b += 4 * nr) {
        const __m512 x0 = _mm512_set1_ps(x[p]), x1 = _mm512_set1_ps(x[p + 1]);
        const __m512 x2 = _mm512_set1_ps(x[p + 2]), x3 = _mm512_set1_ps(x[p + 3]);
        l0 = _mm512_fmadd_ps(x0, _mm512_loadu_ps(b), l0);
        h0 = _mm512_fmadd_ps(x0, _mm512_loadu_ps(b + 16), h0);
        l1 = _mm512_fmadd_ps(x1, _mm512_loadu_ps(b + nr), l1);
        h1 = _mm512_fmadd_ps(x1, _mm512_loadu_ps(b + nr + 16), h1);
        l2 = _mm512_fmadd_ps(x2, _mm512_loadu_ps(b + 2 * nr), l2);
        h2 = _mm512_fmadd_ps(x2, _mm512_loadu_ps(b + 2 * nr + 16), h2);
        l3 = _mm512_fmadd_ps(x3, _mm512_loadu_ps(b + 3 * nr), l3);
        h3 = _mm512_fmadd_ps(x3, _mm512_loadu_ps(b + 3 * nr + 16), h3);
    }
    for (; p < k; p++, b += nr) {
        const __m512 xp = _mm512_set1_ps(x[p]);
        l0 = _mm512_fmadd_ps(xp, _mm512_loadu_ps(b), l0);
        h0 = _mm512_fmadd_ps(xp, _mm512_loadu_ps(b + 16), h0);
    }
    *lo = _mm512_add_ps(_mm512_add_ps(l0, l1), _mm512_add_ps(l2, l3));
    *hi = _mm512_add_ps(_mm512_add_ps(h0, h1), _mm512_add_ps(h2, h3));
}

/* The epilogue of one strip, y[0..count) with count ≤ 32: bias_row, bias_col, what y
 * held, then the clamp, in the AVX2 GEMV's order. */
static void store(__m512 lo, __m512 hi, float *y, size_t count, const float *bias_col,
                  const ember_f32_gemm_params *params)
{
    const __mmask16 mask_lo = count >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << count) - 1);
    const __mmask16 mask_hi = count >= 32   ? (__mmask16)0xffff
                              : count > 16 ? (__mmask16)((1u << (count - 16)) - 1)
                                           : 0;
    const __m512 bias_row = _mm512_set1_ps(params->bias_row ? params->bias_row[0] : 0.0f);
    lo = _mm512_add_ps(lo, bias_row);
    hi = _mm512_add_ps(hi, bias_row);
    if (bias_col) {
        lo = _mm512_add_ps(lo, _mm512_maskz_loadu_ps(mask_lo, bias_col));
        hi = _mm512_add_ps(hi, _mm512_maskz_loadu_ps(mask_hi, bias_col + 16));
    }
    if (params->accumulate) {
        lo = _mm512_add_ps(lo, _mm512_maskz_loadu_ps(mask_lo, y));
        hi = _mm512_add_ps(hi, _mm512_maskz_loadu_ps(mask_hi, y + 16));
    }
    /* max(min, x) then min(max, x): a NaN in x survives both. */
    const __m512 vmin = _mm512_set1_ps(params->min), vmax = _mm512_set1_ps(params->max);
    _mm512_mask_storeu_ps(y, mask_lo, _mm512_min_ps(vmax, _mm512_max_ps(vmin, lo)));
    _mm512_mask_storeu_ps(y + 16, mask_hi, _mm512_min_ps(vmax, _mm512_max_ps(vmin, hi)));
}

void ember_f32_gemv__avx512f(size_t nr, size_t n, size_t k, const float *x, const float *b,
                             float *y, const ember_f32_gemm_params *params)
{
    /* panel by panel, its strips in turn: no division per strip (a 64-bit divide cost
     * ~12% of a 64 x 256 GEMV, an LSTM step's) */
    for (size_t j0 = 0; j0 < n; j0 += nr) {
        const float *panel = b + j0 * k;
        for (size_t j = j0; j < j0 + nr && j < n; j += STRIP) {
            const size_t count = n - j < STRIP ? n - j : STRIP;
            __m512 lo, hi;
            strip(nr, k, x, panel + (j - j0), &lo, &hi);
            store(lo, hi, y + j, count, params->bias_col ? params->bias_col + j : NULL, params);
        }
    }
}
