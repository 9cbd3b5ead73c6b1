/*
 * f32_gemv__neon_armv7 — a row vector by B packed in panels of 8 columns (kernels.h,
 * ember_f32_gemv_fn; the 4x8 kernel's panels), ARMv7 NEON.
 *
 * Per 4 rows of a panel: one load of x[p..p+4), eight of weights, eight vmla by lane
 * (multiply, round, add, round, as the GEMM kernel: no fused form before VFPv4), into
 * four accumulator pairs so the vmla latency never bounds the loop; the pairs are summed
 * at the end. The epilogue is the GEMM kernel's (f32_gemm_epilogue__neon.h); columns past
 * n come from the panel's zero fill and are not stored.
 */
#include "kernels/kernels.h"

#include "kernels/arm/f32_gemm_epilogue__neon.h"

/* One panel's sums (8 columns) over k rows, into out[0..8). */
static void panel(size_t k, const float *x, const float *b, float *out)
{
    float32x4_t l0 = vdupq_n_f32(0.0f), h0 = l0, l1 = l0, h1 = l0, l2 = l0, h2 = l0;
    float32x4_t l3 = l0, h3 = l0;
    size_t p = 0;
    for (; p + 4 <= k; p += 4, b += 32) {
        const float32x4_t xv = vld1q_f32(x + p);
        const float32x2_t x01 = vget_low_f32(xv), x23 = vget_high_f32(xv);
        l0 = vmlaq_lane_f32(l0, vld1q_f32(b), x01, 0);
        h0 = vmlaq_lane_f32(h0, vld1q_f32(b + 4), x01, 0);
        l1 = vmlaq_lane_f32(l1, vld1q_f32(b + 8), x01, 1);
        h1 = vmlaq_lane_f32(h1, vld1q_f32(b + 12), x01, 1);
        l2 = vmlaq_lane_f32(l2, vld1q_f32(b + 16), x23, 0);
        h2 = vmlaq_lane_f32(h2, vld1q_f32(b + 20), x23, 0);
        l3 = vmlaq_lane_f32(l3, vld1q_f32(b + 24), x23, 1);
        h3 = vmlaq_lane_f32(h3, vld1q_f32(b + 28), x23, 1);
    }
    for (; p < k; p++, b += 8) {
        const float32x2_t xp = vdup_n_f32(x[p]);
        l0 = vmlaq_lane_f32(l0, vld1q_f32(b), xp, 0);
        h0 = vmlaq_lane_f32(h0, vld1q_f32(b + 4), xp, 0);
    }
    vst1q_f32(out, vaddq_f32(vaddq_f32(l0, l1), vaddq_f32(l2, l3)));
    vst1q_f32(out + 4, vaddq_f32(vaddq_f32(h0, h1), vaddq_f32(h2, h3)));
}

void ember_f32_gemv__neon_armv7(size_t nr, size_t n, size_t k, const float *x,
                                const float *b, float *y, const ember_f32_gemm_params *params)
{
    (void)nr; /* 8: the panels of the kernel this GEMV is paired with */
    EMBER_F32_GEMV_NEON_PANELS(n, k, x, b, y, params);
}
