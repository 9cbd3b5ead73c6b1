/*
 * f32_dwconv__neon_aarch64 — depthwise-conv runs (kernels.h), AArch64 NEON: 32 outputs
 * per pass (8 accumulators), fused multiply-adds. The body is f32_dwconv__neon.h.
 */
#include <arm_neon.h>

static inline float32x4_t madd(float32x4_t acc, float32x4_t x, float w)
{
    return vfmaq_n_f32(acc, x, w);
}

#define madd_lane(acc, x, v, lane) vfmaq_laneq_f32(acc, x, v, lane)

static inline float32x4_t madd_vector(float32x4_t acc, float32x4_t x, float32x4_t w)
{
    return vfmaq_f32(acc, x, w);
}

#define ACCUMULATORS 8
#define EMBER_LOAD_CHUNK(p)                                                                  \
    {                                                                                        \
        const float32x4x4_t lo = vld1q_f32_x4(p), hi = vld1q_f32_x4((p) + 16);               \
        x0 = lo.val[0], x1 = lo.val[1], x2 = lo.val[2], x3 = lo.val[3];                      \
        x4 = hi.val[0], x5 = hi.val[1], x6 = hi.val[2], x7 = hi.val[3];                      \
    }

#define EMBER_DWCONV_NEON_NAME ember_f32_dwconv__neon_aarch64
#define EMBER_DWCONV_3X3S2_NEON_NAME ember_f32_dwconv_3x3s2__neon_aarch64
#define EMBER_DWCONV_BLOCKED_NEON_NAME ember_f32_dwconv_blocked__neon_aarch64
#include "kernels/arm/f32_dwconv__neon.h"
