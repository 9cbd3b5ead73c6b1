/*
 * f32_dwconv__neon_aarch64 — depthwise-conv runs (kernels.h), AArch64 NEON: 32 outputs
 * per pass (8 accumulators), fused multiply-adds, four vectors per load. The body is
 * f32_dwconv__neon.h.
 */
#include <arm_neon.h>

static inline float32x4_t madd(float32x4_t acc, float32x4_t x, float w)
{
    return vfmaq_n_f32(acc, x, w);
}

#define ACCUMULATORS 8

static inline void load_chunk(const float *s, float32x4_t x[ACCUMULATORS])
{
    const float32x4x4_t lo = vld1q_f32_x4(s), hi = vld1q_f32_x4(s + 16);
    for (int i = 0; i < 4; i++) {
        x[i] = lo.val[i];
        x[4 + i] = hi.val[i];
    }
}

#define EMBER_DWCONV_NEON_NAME ember_f32_dwconv__neon_aarch64
#include "kernels/arm/f32_dwconv__neon.h"
