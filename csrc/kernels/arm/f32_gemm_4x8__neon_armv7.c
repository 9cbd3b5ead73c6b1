/*
 * f32_gemm_4x8__neon_armv7 — 4 rows × 8 columns, ARMv7 NEON (hard-float ABI).
 *
 * ARMv7 NEON has no fused multiply-add before VFPv4, so the kernel uses vmla (multiply,
 * round, add, round): results differ from the scalar kernel by rounding, which the
 * tests allow for (tolerance relative to Σ|a·b|).
 *
 * Register budget (16 q): 8 accumulators (4 rows × 2 q of 4 columns), 1 q for the 4 A
 * values of a k step, 2 q for the 8 B values: 11. vmlaq_lane_f32 multiplies by one lane
 * of a d register, so A needs no broadcast. Per k step: 3 q loads, 8 vmla.
 *
 * Tails: as the aarch64 kernel — panels read exactly, rows ≥ m never loaded or stored,
 * a partial row (n < 8) goes through an 8-float stack copy. No alignment is assumed.
 */
#include "kernels/kernels.h"

#include <arm_neon.h>
#include <string.h>

enum { MR = 4, NR = 8 };

static inline void store_row(float32x4_t lo, float32x4_t hi, float *c, size_t n,
                             float bias_row, float32x4_t bias_lo, float32x4_t bias_hi,
                             int accumulate, float32x4_t vmin, float32x4_t vmax)
{
    const float32x4_t vbias_row = vdupq_n_f32(bias_row);
    lo = vaddq_f32(lo, vaddq_f32(vbias_row, bias_lo));
    hi = vaddq_f32(hi, vaddq_f32(vbias_row, bias_hi));
    float tmp[NR];
    float *dst = n == NR ? c : tmp;
    if (accumulate) {
        if (dst == tmp) {
            memcpy(tmp, c, n * sizeof(float));
        }
        lo = vaddq_f32(lo, vld1q_f32(dst));
        hi = vaddq_f32(hi, vld1q_f32(dst + 4));
    }
    /* vmaxq/vminq return NaN when an input is NaN, as the scalar comparisons do. */
    lo = vminq_f32(vmaxq_f32(lo, vmin), vmax);
    hi = vminq_f32(vmaxq_f32(hi, vmin), vmax);
    vst1q_f32(dst, lo);
    vst1q_f32(dst + 4, hi);
    if (dst == tmp) {
        memcpy(c, tmp, n * sizeof(float));
    }
}

#define ALWAYS_INLINE inline __attribute__((always_inline))
/* Row p of B: packed (offsets NULL, the branch folds away) or in place (kernels.h). */
#define B_ROW(b, offsets, p) ((offsets) ? (b) + (offsets)[p] : (b) + (p) * NR)
#define one_row_madd vmlaq_n_f32
#include "kernels/arm/f32_gemm_one_row__neon.h"

static ALWAYS_INLINE void tile(size_t m, size_t n, size_t k, const float *a, const float *b,
                               const int32_t *offsets, float *c, size_t c_row_stride,
                               const ember_f32_gemm_params *params)
{
    float32x4_t c00 = vdupq_n_f32(0.0f), c01 = c00, c10 = c00, c11 = c00;
    float32x4_t c20 = c00, c21 = c00, c30 = c00, c31 = c00;

    if (m == 1)
        one_row(k, a, b, offsets, &c00, &c01);
    for (size_t p = 0; m > 1 && p < k; p++) {
        const float32x4_t a0 = vld1q_f32(a);
        const float *bp = B_ROW(b, offsets, p);
        const float32x4_t b0 = vld1q_f32(bp);
        const float32x4_t b1 = vld1q_f32(bp + 4);
        a += MR;
        const float32x2_t a01 = vget_low_f32(a0), a23 = vget_high_f32(a0);
        c00 = vmlaq_lane_f32(c00, b0, a01, 0);
        c01 = vmlaq_lane_f32(c01, b1, a01, 0);
        c10 = vmlaq_lane_f32(c10, b0, a01, 1);
        c11 = vmlaq_lane_f32(c11, b1, a01, 1);
        c20 = vmlaq_lane_f32(c20, b0, a23, 0);
        c21 = vmlaq_lane_f32(c21, b1, a23, 0);
        c30 = vmlaq_lane_f32(c30, b0, a23, 1);
        c31 = vmlaq_lane_f32(c31, b1, a23, 1);
    }

    float32x4_t bias_lo = vdupq_n_f32(0.0f), bias_hi = bias_lo;
    if (params->bias_col) {
        if (n == NR) {
            bias_lo = vld1q_f32(params->bias_col);
            bias_hi = vld1q_f32(params->bias_col + 4);
        } else {
            float tmp[NR] = {0.0f};
            memcpy(tmp, params->bias_col, n * sizeof(float));
            bias_lo = vld1q_f32(tmp);
            bias_hi = vld1q_f32(tmp + 4);
        }
    }
    const float *bias_row = params->bias_row;
    const int accumulate = params->accumulate != 0;
    const float32x4_t vmin = vdupq_n_f32(params->min);
    const float32x4_t vmax = vdupq_n_f32(params->max);

#define EMBER_ROW(r, lo, hi)                                                                 \
    if (m > r) {                                                                             \
        store_row(lo, hi, (float *)((char *)c + r * c_row_stride), n,                       \
                  bias_row ? bias_row[r] : 0.0f, bias_lo, bias_hi, accumulate, vmin, vmax); \
    }
    EMBER_ROW(0, c00, c01)
    EMBER_ROW(1, c10, c11)
    EMBER_ROW(2, c20, c21)
    EMBER_ROW(3, c30, c31)
#undef EMBER_ROW
}

void ember_f32_gemm_4x8__neon_armv7(size_t m, size_t n, size_t k, const float *a, const float *b, float *c,
                                    size_t c_row_stride, const ember_f32_gemm_params *params)
{
    tile(m, n, k, a, b, NULL, c, c_row_stride, params);
}

void ember_f32_gemm_4x8__neon_armv7_indirect(size_t m, size_t n, size_t k, const float *a, const float *b,
                                             const int32_t *offsets, float *c, size_t c_row_stride,
                                             const ember_f32_gemm_params *params)
{
    tile(m, n, k, a, b, offsets, c, c_row_stride, params);
}
