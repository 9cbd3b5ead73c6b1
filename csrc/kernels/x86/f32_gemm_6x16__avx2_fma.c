/*
 * f32_gemm_6x16__avx2_fma — 6 rows × 16 columns, AVX2 + FMA3. Compiled with -mavx2 -mfma
 * (SConstruct, from the file name); called only when dispatch saw both on the CPU.
 *
 * Register budget (16 ymm): 12 accumulators (6 rows × 2 vectors of 8 columns), 2 for the
 * B row of the current k step, 1 for the broadcast A element: 15. Per k step: 2 loads,
 * 6 broadcasts and 12 FMAs, so two FMA ports stay busy with loads to spare.
 *
 * Two entry points share one body (inlined into each, so both keep the accumulators in
 * registers): B from a packed panel, or B read in place, row p at b + offsets[p] (the
 * implicit GEMM of a convolution: kernels.h).
 *
 * Tails: the packed panels are exactly k*6 and k*16 floats and are read exactly; rows
 * ≥ m of the tile are computed (the packer zero-filled them) but never loaded or stored;
 * columns ≥ n are masked off in every C / bias_col access with maskload / maskstore,
 * which do not touch (nor fault on) masked-off addresses. No alignment is assumed.
 */
#include "kernels/kernels.h"

#include <immintrin.h>

enum { MR = 6, NR = 16 };

#define ALWAYS_INLINE inline __attribute__((always_inline))

/* Row p of B: packed (offsets NULL, the branch folds away) or in place. */
#define B_ROW(b, offsets, p) ((offsets) ? (b) + (offsets)[p] : (b) + (p) * NR)

/* v · clamp(v · alpha + beta, lo, hi), each step rounded (no FMA), the clamp as max
 * then min: a NaN survives both. */
static inline __m256 hard_swish(__m256 v, const ember_f32_hard_swish *gate)
{
    const __m256 t = _mm256_add_ps(_mm256_mul_ps(v, _mm256_set1_ps(gate->alpha)),
                                   _mm256_set1_ps(gate->beta));
    return _mm256_mul_ps(v, _mm256_min_ps(_mm256_set1_ps(gate->hi),
                                          _mm256_max_ps(_mm256_set1_ps(gate->lo), t)));
}

/* Epilogue of one row: bias, accumulate, clamp, hard swish, (masked) store. */
static inline void store_row(__m256 lo, __m256 hi, float *c, float bias_row, __m256 bias_lo,
                             __m256 bias_hi, int accumulate, int full, __m256i mask_lo,
                             __m256i mask_hi, __m256 vmin, __m256 vmax,
                             const ember_f32_hard_swish *gate)
{
    const __m256 vbias_row = _mm256_set1_ps(bias_row);
    lo = _mm256_add_ps(lo, _mm256_add_ps(vbias_row, bias_lo));
    hi = _mm256_add_ps(hi, _mm256_add_ps(vbias_row, bias_hi));
    if (accumulate) {
        lo = _mm256_add_ps(lo, full ? _mm256_loadu_ps(c) : _mm256_maskload_ps(c, mask_lo));
        hi = _mm256_add_ps(hi, full ? _mm256_loadu_ps(c + 8)
                                    : _mm256_maskload_ps(c + 8, mask_hi));
    }
    /* max(min, x) then min(max, x): a NaN in x survives both, as in the scalar kernel. */
    lo = _mm256_min_ps(vmax, _mm256_max_ps(vmin, lo));
    hi = _mm256_min_ps(vmax, _mm256_max_ps(vmin, hi));
    if (gate) {
        lo = hard_swish(lo, gate);
        hi = hard_swish(hi, gate);
    }
    if (full) {
        _mm256_storeu_ps(c, lo);
        _mm256_storeu_ps(c + 8, hi);
    } else {
        _mm256_maskstore_ps(c, mask_lo, lo);
        _mm256_maskstore_ps(c + 8, mask_hi, hi);
    }
}

/* The epilogue of a whole tile (6 × 16: most tiles of a conv), with accumulate and the
 * hard swish's presence constants: no masks, no test per row, the accumulators never
 * leave their registers (the general epilogue below spills them and its masks, and tests
 * each row: 3-7% of a tile with K = 64). Each row's operations in the order store_row's
 * take, so its bits are those of a partial tile's row. */
#define WHOLE_ROW(r, lo, hi, accumulate, gate)                                               \
    store_row(lo, hi, (float *)((char *)c + r * c_row_stride), bias_row[r], bias_lo,         \
              bias_hi, accumulate, 1, none, none, vmin, vmax, gate);
#define WHOLE_TILE(accumulate, gate)                                                         \
    {                                                                                        \
        WHOLE_ROW(0, c00, c01, accumulate, gate) WHOLE_ROW(1, c10, c11, accumulate, gate)    \
        WHOLE_ROW(2, c20, c21, accumulate, gate) WHOLE_ROW(3, c30, c31, accumulate, gate)    \
        WHOLE_ROW(4, c40, c41, accumulate, gate) WHOLE_ROW(5, c50, c51, accumulate, gate)    \
    }

static ALWAYS_INLINE void whole_tile(__m256 c00, __m256 c01, __m256 c10, __m256 c11,
                                     __m256 c20, __m256 c21, __m256 c30, __m256 c31,
                                     __m256 c40, __m256 c41, __m256 c50, __m256 c51, float *c,
                                     size_t c_row_stride, const ember_f32_gemm_params *params)
{
    static const float no_bias[MR];
    const float *bias_row = params->bias_row ? params->bias_row : no_bias;
    __m256 bias_lo = _mm256_setzero_ps(), bias_hi = _mm256_setzero_ps();
    if (params->bias_col) {
        bias_lo = _mm256_loadu_ps(params->bias_col);
        bias_hi = _mm256_loadu_ps(params->bias_col + 8);
    }
    const __m256 vmin = _mm256_set1_ps(params->min), vmax = _mm256_set1_ps(params->max);
    const __m256i none = _mm256_setzero_si256();
    const ember_f32_hard_swish *gate = params->hard_swish;
    if (gate != NULL && params->accumulate)
        WHOLE_TILE(1, gate)
    else if (gate != NULL)
        WHOLE_TILE(0, gate)
    else if (params->accumulate)
        WHOLE_TILE(1, NULL)
    else
        WHOLE_TILE(0, NULL)
}
#undef WHOLE_TILE
#undef WHOLE_ROW

/* A tile of one row (a recurrent step, a one-frame layer: M = 1): the other rows' FMAs
 * would be wasted, and one row's two accumulators would make the FMA latency the bound,
 * so k is unrolled by 4 into 8 accumulators; loads then bound it (2 per k step). */
static ALWAYS_INLINE void one_row(size_t k, const float *a, const float *b,
                                  const int32_t *offsets, __m256 *lo, __m256 *hi)
{
    __m256 l0 = _mm256_setzero_ps(), h0 = _mm256_setzero_ps();
    __m256 l1 = _mm256_setzero_ps(), h1 = _mm256_setzero_ps();
    __m256 l2 = _mm256_setzero_ps(), h2 = _mm256_setzero_ps();
    __m256 l3 = _mm256_setzero_ps(), h3 = _mm256_setzero_ps();
    size_t p = 0;
    for (; p + 4 <= k; p += 4, a += 4 * MR) {
        const float *b0 = B_ROW(b, offsets, p), *b1 = B_ROW(b, offsets, p + 1);
        const float *b2 = B_ROW(b, offsets, p + 2), *b3 = B_ROW(b, offsets, p + 3);
        __m256 ai = _mm256_broadcast_ss(a);
        l0 = _mm256_fmadd_ps(ai, _mm256_loadu_ps(b0), l0);
        h0 = _mm256_fmadd_ps(ai, _mm256_loadu_ps(b0 + 8), h0);
        ai = _mm256_broadcast_ss(a + MR);
        l1 = _mm256_fmadd_ps(ai, _mm256_loadu_ps(b1), l1);
        h1 = _mm256_fmadd_ps(ai, _mm256_loadu_ps(b1 + 8), h1);
        ai = _mm256_broadcast_ss(a + 2 * MR);
        l2 = _mm256_fmadd_ps(ai, _mm256_loadu_ps(b2), l2);
        h2 = _mm256_fmadd_ps(ai, _mm256_loadu_ps(b2 + 8), h2);
        ai = _mm256_broadcast_ss(a + 3 * MR);
        l3 = _mm256_fmadd_ps(ai, _mm256_loadu_ps(b3), l3);
        h3 = _mm256_fmadd_ps(ai, _mm256_loadu_ps(b3 + 8), h3);
    }
    for (; p < k; p++, a += MR) {
        const float *bp = B_ROW(b, offsets, p);
        const __m256 ai = _mm256_broadcast_ss(a);
        l0 = _mm256_fmadd_ps(ai, _mm256_loadu_ps(bp), l0);
        h0 = _mm256_fmadd_ps(ai, _mm256_loadu_ps(bp + 8), h0);
    }
    *lo = _mm256_add_ps(_mm256_add_ps(l0, l1), _mm256_add_ps(l2, l3));
    *hi = _mm256_add_ps(_mm256_add_ps(h0, h1), _mm256_add_ps(h2, h3));
}

/* Row i of the tile: A[i][p] by the k step's B row (b0, b1) into (lo, hi). */
#define FMA_ROW(i, lo, hi)                                                                   \
    ai = _mm256_broadcast_ss(a + i);                                                         \
    lo = _mm256_fmadd_ps(ai, b0, lo);                                                        \
    hi = _mm256_fmadd_ps(ai, b1, hi);

static ALWAYS_INLINE void tile(size_t m, size_t n, size_t k, const float *a, const float *b,
                               const int32_t *offsets, float *c, size_t c_row_stride,
                               const ember_f32_gemm_params *params)
{
    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
    __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
    __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
    __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
    __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
    __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();

    /* Tiles of two to four rows (the last of M = 16, 32, 64 …) skip the FMAs of rows they
     * do not store: 8 a k step, not 12. Each sum runs over k in order in every loop but
     * one_row's, so a row's bits do not depend on the tile it falls in (a stream's pulses
     * tile their pixels otherwise than the whole signal: tests/stream); splitting two
     * rows' sums over even and odd k would save more, but changed them. */
    /* params->prefetch rides along the loop of tiles of five or six rows (the others are
     * shorter: there the range is asked for at once) */
    const size_t prefetch_step =
        ember_f32_gemm_prefetch_start(params, k, m > 4 && n > NR / 2);
    const char *prefetch = (const char *)params->prefetch;
    /* Two k steps an iteration in whole tiles: the loop's counter, pointer adds and branch
     * once for 24 multiply-adds (one process alternating runs: ResNet50, DenseNet121 0.95x
     * the time, Inception v2 0.96x; four steps gained nothing more). The same order of
     * sums. */
#define K_STEPS(prefetch)                                                                    \
    _Pragma("GCC unroll 2") for (size_t p = 0; p < k; p++, a += MR) {                        \
        const float *bp = B_ROW(b, offsets, p);                                              \
        const __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);               \
        __m256 ai;                                                                           \
        prefetch FMA_ROW(0, c00, c01) FMA_ROW(1, c10, c11) FMA_ROW(2, c20, c21)              \
        FMA_ROW(3, c30, c31) FMA_ROW(4, c40, c41) FMA_ROW(5, c50, c51)                       \
    }
    if (m == 1) {
        one_row(k, a, b, offsets, &c00, &c01);
    } else if (n <= NR / 2) {
        /* Tiles of 8 columns or fewer (the last of 196, 49 or 3025 pixels, of 100
         * frames) multiply-add the low vector only: 6 FMAs a step, the same sums. Six
         * chains leave the FMA latency the bound, so the saving is far from half (the
         * cost models count such a tile whole: kernels.h). */
        for (size_t p = 0; p < k; p++, a += MR) {
            const __m256 b0 = _mm256_loadu_ps(B_ROW(b, offsets, p));
            c00 = _mm256_fmadd_ps(_mm256_broadcast_ss(a), b0, c00);
            c10 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 1), b0, c10);
            c20 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 2), b0, c20);
            c30 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 3), b0, c30);
            c40 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 4), b0, c40);
            c50 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 5), b0, c50);
        }
    } else if (m <= 4) {
        for (size_t p = 0; p < k; p++, a += MR) {
            const float *bp = B_ROW(b, offsets, p);
            const __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
            __m256 ai;
            FMA_ROW(0, c00, c01) FMA_ROW(1, c10, c11) FMA_ROW(2, c20, c21) FMA_ROW(3, c30, c31)
        }
    } else if (prefetch_step != 0) {
        K_STEPS(_mm_prefetch(prefetch + p * prefetch_step, _MM_HINT_T1);)
    } else {
        K_STEPS()
    }
#undef K_STEPS
#undef FMA_ROW

    if (m == MR && n == NR) {
        whole_tile(c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51, c,
                   c_row_stride, params);
        return;
    }

    const int full = n == NR;
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i vn = _mm256_set1_epi32((int)n);
    const __m256i mask_lo = _mm256_cmpgt_epi32(vn, lane);
    const __m256i mask_hi = _mm256_cmpgt_epi32(vn, _mm256_add_epi32(lane, _mm256_set1_epi32(8)));

    __m256 bias_lo = _mm256_setzero_ps(), bias_hi = _mm256_setzero_ps();
    if (params->bias_col) {
        bias_lo = _mm256_maskload_ps(params->bias_col, mask_lo);
        bias_hi = _mm256_maskload_ps(params->bias_col + 8, mask_hi);
    }
    const float *bias_row = params->bias_row;
    const int accumulate = params->accumulate != 0;
    const __m256 vmin = _mm256_set1_ps(params->min);
    const __m256 vmax = _mm256_set1_ps(params->max);

#define EMBER_ROW(r, lo, hi)                                                                 \
    if (m > r) {                                                                             \
        store_row(lo, hi, (float *)((char *)c + r * c_row_stride), bias_row ? bias_row[r] : 0.0f, \
                  bias_lo, bias_hi, accumulate, full, mask_lo, mask_hi, vmin, vmax,         \
                  params->hard_swish);                                                      \
    }
    EMBER_ROW(0, c00, c01)
    EMBER_ROW(1, c10, c11)
    EMBER_ROW(2, c20, c21)
    EMBER_ROW(3, c30, c31)
    EMBER_ROW(4, c40, c41)
    EMBER_ROW(5, c50, c51)
#undef EMBER_ROW
}

void ember_f32_gemm_6x16__avx2_fma(size_t m, size_t n, size_t k, const float *a,
                                   const float *b, float *c, size_t c_row_stride,
                                   const ember_f32_gemm_params *params)
{
    tile(m, n, k, a, b, NULL, c, c_row_stride, params);
}

void ember_f32_gemm_6x16__avx2_fma_indirect(size_t m, size_t n, size_t k, const float *a,
                                            const float *b, const int32_t *offsets, float *c,
                                            size_t c_row_stride,
                                            const ember_f32_gemm_params *params)
{
    /* The driver always passes a table (kernels.h). Said here, the k loops lose their
     * per-step test of offsets and the packed form's unused B pointer: 26 instructions a
     * step instead of 29, where 6 cycles of multiply-adds leave room for about 27. */
    if (offsets == NULL)
        __builtin_unreachable();
    tile(m, n, k, a, b, offsets, c, c_row_stride, params);
}
