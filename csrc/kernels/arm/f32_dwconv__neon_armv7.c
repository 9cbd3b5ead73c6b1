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

#define ACCUMULATORS 4

static inline void load_chunk(const float *s, float32x4_t x[ACCUMULATORS])
{
    for (int i = 0; i < ACCUMULATORS; i++)
        x[i] = vld1q_f32(s + 4 * i);
}

#define EMBER_DWCONV_NEON_NAME ember_f32_dwconv__neon_armv7
#include "kernels/arm/f32_dwconv__neon.h"
