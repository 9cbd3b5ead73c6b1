/*
 * f32_gemm_epilogue__neon.h — the epilogue of the NEON GEMM and GEMV kernels (AArch64
 * and ARMv7; 8 columns = two q registers per row): the column biases of a tile, and one
 * row's bias, accumulation, clamp, hard swish (GEMM only) and store. A partial row
 * (n < 8) goes through an 8-float stack copy, so C and bias_col are touched only in
 * columns < n.
 */
#ifndef EMBER_F32_GEMM_EPILOGUE_NEON_H
#define EMBER_F32_GEMM_EPILOGUE_NEON_H

#include <arm_neon.h>
#include <string.h>

/* bias_col[0..n) in two vectors (zeros past n, and everywhere when bias_col is NULL). */
static inline void load_bias_col(const float *bias_col, size_t n, float32x4_t *lo,
                                 float32x4_t *hi)
{
    if (bias_col == NULL) {
        *lo = *hi = vdupq_n_f32(0.0f);
        return;
    }
    float tmp[8] = {0.0f};
    const float *from = n == 8 ? bias_col : memcpy(tmp, bias_col, n * sizeof(float));
    *lo = vld1q_f32(from);
    *hi = vld1q_f32(from + 4);
}

/* v · clamp(v · alpha + beta, lo, hi), each step rounded (no fused multiply-add). */
static inline float32x4_t hard_swish(float32x4_t v, const ember_f32_hard_swish *gate)
{
    const float32x4_t t = vaddq_f32(vmulq_n_f32(v, gate->alpha), vdupq_n_f32(gate->beta));
    return vmulq_f32(v, vminq_f32(vmaxq_f32(t, vdupq_n_f32(gate->lo)), vdupq_n_f32(gate->hi)));
}

static inline void store_row(float32x4_t lo, float32x4_t hi, float *c, size_t n,
                             float bias_row, float32x4_t bias_lo, float32x4_t bias_hi,
                             int accumulate, float32x4_t vmin, float32x4_t vmax,
                             const ember_f32_hard_swish *gate)
{
    const float32x4_t vbias_row = vdupq_n_f32(bias_row);
    lo = vaddq_f32(lo, vaddq_f32(vbias_row, bias_lo));
    hi = vaddq_f32(hi, vaddq_f32(vbias_row, bias_hi));
    float tmp[8];
    float *dst = n == 8 ? c : tmp;
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
    if (gate) {
        lo = hard_swish(lo, gate);
        hi = hard_swish(hi, gate);
    }
    vst1q_f32(dst, lo);
    vst1q_f32(dst + 4, hi);
    if (dst == tmp) {
        memcpy(c, tmp, n * sizeof(float));
    }
}

/*
 * The GEMV over panels of 8 columns (ember_f32_gemv_fn), for a kernel that defines
 * panel(k, x, b, sums): one panel's 8 column sums over k rows.
 */
#define EMBER_F32_GEMV_NEON_PANELS(n, k, x, b, y, params)                                    \
    do {                                                                                     \
        const float32x4_t vmin_ = vdupq_n_f32((params)->min);                                \
        const float32x4_t vmax_ = vdupq_n_f32((params)->max);                                \
        const float bias_row_ = (params)->bias_row ? (params)->bias_row[0] : 0.0f;           \
        for (size_t j_ = 0; j_ < (n); j_ += 8) {                                             \
            const size_t count_ = (n) - j_ < 8 ? (n) - j_ : 8;                               \
            float sums_[8];                                                                  \
            float32x4_t bias_lo_, bias_hi_;                                                  \
            panel((k), (x), (b) + j_ * (k), sums_);                                          \
            load_bias_col((params)->bias_col ? (params)->bias_col + j_ : NULL, count_,      \
                          &bias_lo_, &bias_hi_);                                             \
            store_row(vld1q_f32(sums_), vld1q_f32(sums_ + 4), (y) + j_, count_, bias_row_,   \
                      bias_lo_, bias_hi_, (params)->accumulate != 0, vmin_, vmax_, NULL);    \
        }                                                                                    \
    } while (0)

#endif /* EMBER_F32_GEMM_EPILOGUE_NEON_H */
