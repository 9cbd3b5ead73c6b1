/*
 * f32_dwconv__neon_armv7 — depthwise-conv runs (kernels.h), ARMv7 NEON: 16 outputs per
 * pass (4 accumulators of its 16 q registers); vmla rounds the product before the add.
 * The body is f32_dwconv__neon.h.
 */
#include <arm_neon.h>

static inline float32x4_t madd(float32x4_t acc, float32x4_t x, float w)
{
    return vmlaq_n_f32(acc, x, w);
}

#define madd_lane(acc, x, v, lane)                                                           \
    vmlaq_lane_f32(acc, x, (lane) < 2 ? vget_low_f32(v) : vget_high_f32(v), (lane) % 2)

static inline float32x4_t madd_vector(float32x4_t acc, float32x4_t x, float32x4_t w)
{
    return vmlaq_f32(acc, x, w);
}

#define ACCUMULATORS 4
#define EMBER_LOAD_CHUNK(p)                                                                  \
    {                                                                                        \
        x0 = vld1q_f32(p), x1 = vld1q_f32((p) + 4);                                          \
        x2 = vld1q_f32((p) + 8), x3 = vld1q_f32((p) + 12);                                   \
    }

#define EMBER_DWCONV_NEON_NAME ember_f32_dwconv__neon_armv7
#define EMBER_DWCONV_3X3S2_NEON_NAME ember_f32_dwconv_3x3s2__neon_armv7
#define EMBER_DWCONV_BLOCKED_NEON_NAME ember_f32_dwconv_blocked__neon_armv7
#include "kernels/arm/f32_dwconv__neon.h"
