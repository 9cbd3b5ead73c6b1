/*
 * The AVX-512F GEMM micro-kernels' body: MR rows (8 or 12) × 32 columns, included by
 * f32_gemm_8x32__avx512f.c and f32_gemm_12x32__avx512f.c, which define MR and KERNEL(x),
 * the entry points' names (SConstruct compiles them with -mavx512f -mfma, from their
 * names); called only when dispatch saw AVX-512F on the CPU and the OS saving its state.
 *
 * Register budget (32 zmm): MR × 2 accumulators (rows × 2 vectors of 16 columns), 2 for
 * the B row of the current k step, 1 for the broadcast A element: 19, or 27 with 12 rows.
 * Per k step: 2 loads, MR broadcasts, 2·MR FMAs — 16 or 24 independent chains cover the
 * FMA latency on two ports; with params->prefetch, one prefetch more. With its operands
 * in L1 (one tile, k 256, called in a loop; Cascade Lake) the 8-row loop ran a step in
 * 9.5 ticks of the 2.5 GHz TSC: about 8.4 cycles at the ~2.2 GHz of bench_gemm's peak
 * loop, 95% of its FMA rate. The GEMMs' shortfall is in feeding it, not in the loop. With 12 rows, each B row loaded (from L2 where a panel
 * outgrows L1: K × 32 floats) serves 24 FMAs instead of 16; but a conv whose rows leave
 * a last tile mostly empty (64 output channels: 5 tiles and a third) wastes more than
 * that gains, so dispatch gives the 12-row kernel to the convs its rows fit
 * (ember_f32_gemm_for_rows).
 *
 * Two entry points share one body, as in the AVX2 kernel: B from a packed panel, or B
 * read in place, row p at b + offsets[p] (the implicit GEMM of a convolution: kernels.h).
 * Without the in-place form, an AVX-512 machine ran every k×k conv through im2col.
 *
 * Tails: panels read exactly (k*MR and k*32 floats); rows ≥ m computed, never loaded or
 * stored; columns ≥ n masked off with k-masks (masked loads and stores neither touch nor
 * fault on masked-off addresses). No alignment is assumed. Rows 8-11 are written under
 * `MR > 8` tests, which the 8-row kernel's compiler folds away.
 */
#include "kernels/kernels.h"

#include <immintrin.h>

#if !defined(MR) || !defined(KERNEL)
#error "define MR (8 or 12) and KERNEL(suffix), the entry points' names, first"
#endif
enum { NR = 32 };

/* Row p of B: packed (offsets NULL, the branch folds away) or in place. */
#define B_ROW(b, offsets, p) ((offsets) ? (b) + (offsets)[p] : (b) + (p) * NR)

/* v · clamp(v · alpha + beta, lo, hi), each step rounded (no FMA), the clamp as max
 * then min: a NaN survives both. */
static inline __m512 hard_swish(__m512 v, const ember_f32_hard_swish *gate)
{
    const __m512 t = _mm512_add_ps(_mm512_mul_ps(v, _mm512_set1_ps(gate->alpha)),
                                   _mm512_set1_ps(gate->beta));
    return _mm512_mul_ps(v, _mm512_min_ps(_mm512_set1_ps(gate->hi),
                                          _mm512_max_ps(_mm512_set1_ps(gate->lo), t)));
}

static inline void store_row(__m512 lo, __m512 hi, float *c, float bias_row, __m512 bias_lo,
                             __m512 bias_hi, int accumulate, __mmask16 mask_lo,
                             __mmask16 mask_hi, __m512 vmin, __m512 vmax,
                             const ember_f32_hard_swish *gate)
{
    const __m512 vbias_row = _mm512_set1_ps(bias_row);
    lo = _mm512_add_ps(lo, _mm512_add_ps(vbias_row, bias_lo));
    hi = _mm512_add_ps(hi, _mm512_add_ps(vbias_row, bias_hi));
    if (accumulate) {
        lo = _mm512_add_ps(lo, _mm512_maskz_loadu_ps(mask_lo, c));
        hi = _mm512_add_ps(hi, _mm512_maskz_loadu_ps(mask_hi, c + 16));
    }
    /* max(min, x) then min(max, x): a NaN in x survives both, as in the scalar kernel. */
    lo = _mm512_min_ps(vmax, _mm512_max_ps(vmin, lo));
    hi = _mm512_min_ps(vmax, _mm512_max_ps(vmin, hi));
    if (gate) {
        lo = hard_swish(lo, gate);
        hi = hard_swish(hi, gate);
    }
    _mm512_mask_storeu_ps(c, mask_lo, lo);
    _mm512_mask_storeu_ps(c + 16, mask_hi, hi);
}

/* The epilogue of a whole tile (8 × 32: most tiles of a conv), with accumulate and the
 * hard swish's presence constants: no masks, no test per row, as the AVX2 kernel's. Each
 * row's operations in store_row's order, so its bits are those of a partial tile's row. */
#define WHOLE_ROW(r, lo, hi, accumulate, gate)                                               \
    store_row(lo, hi, (float *)((char *)c + r * c_row_stride), bias_row[r], bias_lo,         \
              bias_hi, accumulate, all, all, vmin, vmax, gate);
#define WHOLE_TILE(accumulate, gate)                                                         \
    {                                                                                        \
        WHOLE_ROW(0, c00, c01, accumulate, gate) WHOLE_ROW(1, c10, c11, accumulate, gate)    \
        WHOLE_ROW(2, c20, c21, accumulate, gate) WHOLE_ROW(3, c30, c31, accumulate, gate)    \
        WHOLE_ROW(4, c40, c41, accumulate, gate) WHOLE_ROW(5, c50, c51, accumulate, gate)    \
        WHOLE_ROW(6, c60, c61, accumulate, gate) WHOLE_ROW(7, c70, c71, accumulate, gate)    \
        if (MR > 8) {                                                                        \
            WHOLE_ROW(8, c80, c81, accumulate, gate) WHOLE_ROW(9, c90, c91, accumulate, gate) \
            WHOLE_ROW(10, cA0, cA1, accumulate, gate)                                        \
            WHOLE_ROW(11, cB0, cB1, accumulate, gate)                                        \
        }                                                                                    \
    }

static inline __attribute__((always_inline)) void
whole_tile(__m512 c00, __m512 c01, __m512 c10, __m512 c11, __m512 c20, __m512 c21,
           __m512 c30, __m512 c31, __m512 c40, __m512 c41, __m512 c50, __m512 c51,
           __m512 c60, __m512 c61, __m512 c70, __m512 c71, __m512 c80, __m512 c81,
           __m512 c90, __m512 c91, __m512 cA0, __m512 cA1, __m512 cB0, __m512 cB1, float *c,
           size_t c_row_stride,
           const ember_f32_gemm_params *params)
{
    static const float no_bias[MR];
    const float *bias_row = params->bias_row ? params->bias_row : no_bias;
    __m512 bias_lo = _mm512_setzero_ps(), bias_hi = bias_lo;
    if (params->bias_col) {
        bias_lo = _mm512_loadu_ps(params->bias_col);
        bias_hi = _mm512_loadu_ps(params->bias_col + 16);
    }
    const __m512 vmin = _mm512_set1_ps(params->min), vmax = _mm512_set1_ps(params->max);
    const __mmask16 all = (__mmask16)0xffff;
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

/* A tile of one row (M = 1: a recurrent step, a one-frame layer): k unrolled by 4 into 8
 * accumulators, as the AVX2 kernel's, so the FMA latency is not the bound. */
static inline __attribute__((always_inline)) void
one_row(size_t k, const float *a, const float *b, const int32_t *offsets, __m512 *lo,
        __m512 *hi)
{
    __m512 l0 = _mm512_setzero_ps(), h0 = l0, l1 = l0, h1 = l0;
    __m512 l2 = l0, h2 = l0, l3 = l0, h3 = l0;
    size_t p = 0;
    for (; p + 4 <= k; p += 4, a += 4 * MR) {
        const float *b0 = B_ROW(b, offsets, p), *b1 = B_ROW(b, offsets, p + 1);
        const float *b2 = B_ROW(b, offsets, p + 2), *b3 = B_ROW(b, offsets, p + 3);
        __m512 ai = _mm512_set1_ps(a[0]);
        l0 = _mm512_fmadd_ps(ai, _mm512_loadu_ps(b0), l0);
        h0 = _mm512_fmadd_ps(ai, _mm512_loadu_ps(b0 + 16), h0);
        ai = _mm512_set1_ps(a[MR]);
        l1 = _mm512_fmadd_ps(ai, _mm512_loadu_ps(b1), l1);
        h1 = _mm512_fmadd_ps(ai, _mm512_loadu_ps(b1 + 16), h1);
        ai = _mm512_set1_ps(a[2 * MR]);
        l2 = _mm512_fmadd_ps(ai, _mm512_loadu_ps(b2), l2);
        h2 = _mm512_fmadd_ps(ai, _mm512_loadu_ps(b2 + 16), h2);
        ai = _mm512_set1_ps(a[3 * MR]);
        l3 = _mm512_fmadd_ps(ai, _mm512_loadu_ps(b3), l3);
        h3 = _mm512_fmadd_ps(ai, _mm512_loadu_ps(b3 + 16), h3);
    }
    for (; p < k; p++, a += MR) {
        const float *bp = B_ROW(b, offsets, p);
        const __m512 ai = _mm512_set1_ps(a[0]);
        l0 = _mm512_fmadd_ps(ai, _mm512_loadu_ps(bp), l0);
        h0 = _mm512_fmadd_ps(ai, _mm512_loadu_ps(bp + 16), h0);
    }
    *lo = _mm512_add_ps(_mm512_add_ps(l0, l1), _mm512_add_ps(l2, l3));
    *hi = _mm512_add_ps(_mm512_add_ps(h0, h1), _mm512_add_ps(h2, h3));
}

/* Row i of the tile: A[i][p] by the k step's B row (b0, b1) into (lo, hi). */
#define FMA_ROW(i, lo, hi)                                                                   \
    ai = _mm512_set1_ps(a[i]);                                                               \
    lo = _mm512_fmadd_ps(ai, b0, lo);                                                        \
    hi = _mm512_fmadd_ps(ai, b1, hi);
#define ROWS_0_3                                                                             \
    FMA_ROW(0, c00, c01) FMA_ROW(1, c10, c11) FMA_ROW(2, c20, c21) FMA_ROW(3, c30, c31)
#define ROWS_4_7                                                                             \
    FMA_ROW(4, c40, c41) FMA_ROW(5, c50, c51) FMA_ROW(6, c60, c61) FMA_ROW(7, c70, c71)
#define ROWS_8_11                                                                            \
    FMA_ROW(8, c80, c81) FMA_ROW(9, c90, c91) FMA_ROW(10, cA0, cA1) FMA_ROW(11, cB0, cB1)
/* The k loop over whole 32-column rows of B, `rows` the FMA_ROWs of the tile's rows,
 * `prefetch` nothing or PREFETCH_STEP (params->prefetch spread over the loop). */
#define K_STEPS(unroll, rows, prefetch)                                                      \
    unroll for (size_t p = 0; p < k; p++, a += MR) {                                         \
        const float *bp = B_ROW(b, offsets, p);                                              \
        const __m512 b0 = _mm512_loadu_ps(bp), b1 = _mm512_loadu_ps(bp + 16);               \
        __m512 ai;                                                                           \
        prefetch rows                                                                        \
    }
#define PREFETCH_STEP _mm_prefetch(prefetch + p * prefetch_step, _MM_HINT_T1);
/* A whole tile's k loop, with the prefetch spread over it or without. */
#define K_STEPS_PREFETCHING(rows)                                                            \
    if (prefetch_step != 0) {                                                                \
        K_STEPS(_Pragma("GCC unroll 2"), rows, PREFETCH_STEP)                                \
    } else {                                                                                 \
        K_STEPS(_Pragma("GCC unroll 2"), rows, )                                             \
    }

static inline __attribute__((always_inline)) void
tile(size_t m, size_t n, size_t k, const float *a, const float *b, const int32_t *offsets,
     float *c, size_t c_row_stride, const ember_f32_gemm_params *params)
{
    __m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00;
    __m512 c20 = c00, c21 = c00, c30 = c00, c31 = c00;
    __m512 c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    __m512 c60 = c00, c61 = c00, c70 = c00, c71 = c00;
    __m512 c80 = c00, c81 = c00, c90 = c00, c91 = c00; /* rows 8-11: the 12-row kernel's */
    __m512 cA0 = c00, cA1 = c00, cB0 = c00, cB1 = c00;

    /* Tiles of two to four rows skip the FMAs of the rows they do not store. Each sum
     * runs over k in order in every loop but one_row's, so a row's bits do not depend on
     * the tile it falls in (the AVX2 kernel's rule: tests/stream tiles pulses otherwise
     * than the whole signal). */
    /* the prefetch rides along the loops of whole tiles (the loops of short or narrow
     * tiles are shorter: there the range is asked for at once) */
    const size_t prefetch_step = ember_f32_gemm_prefetch_start(params, k, m > 4 && n > NR / 2);
    const char *prefetch = (const char *)params->prefetch;
    if (m == 1) {
        one_row(k, a, b, offsets, &c00, &c01);
    } else if (n <= NR / 2) {
        /* Tiles of 16 columns or fewer (a row of 112 or 48 pixels ends on one, a plane of
         * 28×28 too) multiply-add the low vector only: half the FMAs, the same sums. */
        for (size_t p = 0; p < k; p++, a += MR) {
            const __m512 b0 = _mm512_loadu_ps(B_ROW(b, offsets, p));
            c00 = _mm512_fmadd_ps(_mm512_set1_ps(a[0]), b0, c00);
            c10 = _mm512_fmadd_ps(_mm512_set1_ps(a[1]), b0, c10);
            c20 = _mm512_fmadd_ps(_mm512_set1_ps(a[2]), b0, c20);
            c30 = _mm512_fmadd_ps(_mm512_set1_ps(a[3]), b0, c30);
            c40 = _mm512_fmadd_ps(_mm512_set1_ps(a[4]), b0, c40);
            c50 = _mm512_fmadd_ps(_mm512_set1_ps(a[5]), b0, c50);
            c60 = _mm512_fmadd_ps(_mm512_set1_ps(a[6]), b0, c60);
            c70 = _mm512_fmadd_ps(_mm512_set1_ps(a[7]), b0, c70);
            if (MR > 8) {
                c80 = _mm512_fmadd_ps(_mm512_set1_ps(a[8]), b0, c80);
                c90 = _mm512_fmadd_ps(_mm512_set1_ps(a[9]), b0, c90);
                cA0 = _mm512_fmadd_ps(_mm512_set1_ps(a[10]), b0, cA0);
                cB0 = _mm512_fmadd_ps(_mm512_set1_ps(a[11]), b0, cB0);
            }
        }
    } else if (m <= 4) {
        K_STEPS(, ROWS_0_3, )
    } else if (MR == 8 || m <= 8) {
        K_STEPS_PREFETCHING(ROWS_0_3 ROWS_4_7)
    } else {
        K_STEPS_PREFETCHING(ROWS_0_3 ROWS_4_7 ROWS_8_11)
    }
#undef K_STEPS_PREFETCHING
#undef PREFETCH_STEP
#undef K_STEPS
#undef ROWS_8_11
#undef ROWS_4_7
#undef ROWS_0_3
#undef FMA_ROW

    if (m == MR && n == NR) {
        whole_tile(c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51, c60, c61, c70,
                   c71, c80, c81, c90, c91, cA0, cA1, cB0, cB1, c, c_row_stride, params);
        return;
    }
    const __mmask16 mask_lo = n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1);
    const __mmask16 mask_hi =
        n >= 32 ? (__mmask16)0xffff : n > 16 ? (__mmask16)((1u << (n - 16)) - 1) : 0;
    __m512 bias_lo = _mm512_setzero_ps(), bias_hi = bias_lo;
    if (params->bias_col) {
        bias_lo = _mm512_maskz_loadu_ps(mask_lo, params->bias_col);
        bias_hi = _mm512_maskz_loadu_ps(mask_hi, params->bias_col + 16);
    }
    const float *bias_row = params->bias_row;
    const int accumulate = params->accumulate != 0;
    const __m512 vmin = _mm512_set1_ps(params->min);
    const __m512 vmax = _mm512_set1_ps(params->max);

#define EMBER_ROW(r, lo, hi)                                                                 \
    if (MR > r && m > r) {                                                                   \
        store_row(lo, hi, (float *)((char *)c + r * c_row_stride), bias_row ? bias_row[r] : 0.0f, \
                  bias_lo, bias_hi, accumulate, mask_lo, mask_hi, vmin, vmax,               \
                  params->hard_swish);                                                      \
    }
    EMBER_ROW(0, c00, c01)
    EMBER_ROW(1, c10, c11)
    EMBER_ROW(2, c20, c21)
    EMBER_ROW(3, c30, c31)
    EMBER_ROW(4, c40, c41)
    EMBER_ROW(5, c50, c51)
    EMBER_ROW(6, c60, c61)
    EMBER_ROW(7, c70, c71)
    EMBER_ROW(8, c80, c81)
    EMBER_ROW(9, c90, c91)
    EMBER_ROW(10, cA0, cA1)
    EMBER_ROW(11, cB0, cB1)
#undef EMBER_ROW
}

void KERNEL()(size_t m, size_t n, size_t k, const float *a, const float *b, float *c,
              size_t c_row_stride, const ember_f32_gemm_params *params)
{
    tile(m, n, k, a, b, NULL, c, c_row_stride, params);
}

void KERNEL(_indirect)(size_t m, size_t n, size_t k, const float *a, const float *b,
                       const int32_t *offsets, float *c, size_t c_row_stride,
                       const ember_f32_gemm_params *params)
{
    if (offsets == NULL) /* the driver always passes a table (kernels.h) */
        __builtin_unreachable();
    tile(m, n, k, a, b, offsets, c, c_row_stride, params);
}
