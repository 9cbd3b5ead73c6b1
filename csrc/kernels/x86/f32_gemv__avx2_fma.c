/*
 * f32_gemv__avx2_fma — a row vector by a packed B (kernels.h, ember_f32_gemv_fn), AVX2 +
 * FMA, for panels of any multiple of 16 columns (the 6x16 kernel's, and the 8x32
 * AVX-512 kernel's).
 *
 * Each 16-column strip of a panel is one pass over k: x[p] broadcast once per row, the
 * row's two vectors multiply-added straight from memory. Four rows per iteration go to
 * four pairs of accumulators, so the FMA latency never bounds the loop; they are summed
 * at the end. Columns past n are computed from the panel's zero fill and not stored.
 */
#include "kernels/kernels.h"

#include <immintrin.h>
#include <string.h>

enum { STRIP = 16 };

static void strip(size_t nr, size_t k, const float *x, const float *b, __m256 *lo, __m256 *hi)
{
    __m256 l0 = _mm256_setzero_ps(), h0 = l0, l1 = l0, h1 = l0, l2 = l0, h2 = l0;
    __m256 l3 = l0, h3 = l0;
    size_t p = 0;
    for (; p + 4 <= k; p += 4, b += 4 * nr) {
        const __m256 x0 = _mm256_broadcast_ss(x + p), x1 = _mm256_broadcast_ss(x + p + 1);
        const __m256 x2 = _mm256_broadcast_ss(x + p + 2), x3 = _mm256_broadcast_ss(x + p + 3);
        l0 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(b), l0);
        h0 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(b + 8), h0);
        l1 = _mm256_fmadd_ps(x1, _mm256_loadu_ps(b + nr), l1);
        h1 = _mm256_fmadd_ps(x1, _mm256_loadu_ps(b + nr + 8), h1);
        l2 = _mm256_fmadd_ps(x2, _mm256_loadu_ps(b + 2 * nr), l2);
        h2 = _mm256_fmadd_ps(x2, _mm256_loadu_ps(b + 2 * nr + 8), h2);
        l3 = _mm256_fmadd_ps(x3, _mm256_loadu_ps(b + 3 * nr), l3);
        h3 = _mm256_fmadd_ps(x3, _mm256_loadu_ps(b + 3 * nr + 8), h3);
    }
    for (; p < k; p++, b += nr) {
        const __m256 xp = _mm256_broadcast_ss(x + p);
        l0 = _mm256_fmadd_ps(xp, _mm256_loadu_ps(b), l0);
        h0 = _mm256_fmadd_ps(xp, _mm256_loadu_ps(b + 8), h0);
    }
    *lo = _mm256_add_ps(_mm256_add_ps(l0, l1), _mm256_add_ps(l2, l3));
    *hi = _mm256_add_ps(_mm256_add_ps(h0, h1), _mm256_add_ps(h2, h3));
}

/* The epilogue of one strip: columns y[0..count), count ≤ 16. */
static void store(__m256 lo, __m256 hi, float *y, size_t count, const float *bias_col,
                  const ember_f32_gemm_params *params)
{
    float tmp[STRIP] = {0.0f};
    const int whole = count == STRIP;
    const __m256 bias_row = _mm256_set1_ps(params->bias_row ? params->bias_row[0] : 0.0f);
    lo = _mm256_add_ps(lo, bias_row);
    hi = _mm256_add_ps(hi, bias_row);
    if (bias_col) {
        const float *bias = bias_col;
        if (!whole)
            bias = memcpy(tmp, bias_col, count * sizeof(float));
        lo = _mm256_add_ps(lo, _mm256_loadu_ps(bias));
        hi = _mm256_add_ps(hi, _mm256_loadu_ps(bias + 8));
    }
    float *dst = whole ? y : tmp;
    if (params->accumulate) {
        if (!whole)
            memcpy(tmp, y, count * sizeof(float));
        lo = _mm256_add_ps(lo, _mm256_loadu_ps(dst));
        hi = _mm256_add_ps(hi, _mm256_loadu_ps(dst + 8));
    }
    /* max/min return their second operand when one is NaN: a NaN result stays NaN. */
    const __m256 vmin = _mm256_set1_ps(params->min), vmax = _mm256_set1_ps(params->max);
    _mm256_storeu_ps(dst, _mm256_min_ps(vmax, _mm256_max_ps(vmin, lo)));
    _mm256_storeu_ps(dst + 8, _mm256_min_ps(vmax, _mm256_max_ps(vmin, hi)));
    if (!whole)
        memcpy(y, tmp, count * sizeof(float));
}

void ember_f32_gemv__avx2_fma(size_t nr, size_t n, size_t k, const float *x, const float *b,
                              float *y, const ember_f32_gemm_params *params)
{
    /* panel by panel, its strips in turn: no division per strip (a 64-bit divide cost
     * ~12% of a 64 x 256 GEMV, an LSTM step's) */
    for (size_t j0 = 0; j0 < n; j0 += nr) {
        const float *panel = b + j0 * k;
        for (size_t j = j0; j < j0 + nr && j < n; j += STRIP) {
            const size_t count = n - j < STRIP ? n - j : STRIP;
            __m256 lo, hi;
            strip(nr, k, x, panel + (j - j0), &lo, &hi);
            store(lo, hi, y + j, count, params->bias_col ? params->bias_col + j : NULL, params);
        }
    }
}
