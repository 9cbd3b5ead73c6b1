/*
 * f32_dwconv_3x3__neon_armv7 — 3×3 depthwise conv rows, 4 outputs per step,
 * ARMv7 NEON (vmla: multiply and add round separately; no FMA before VFPv4).
 * The recipe is in f32_dwconv_3x3__neon.h; this file supplies the multiply-add.
 */
#include <arm_neon.h>

static inline float32x4_t madd(float32x4_t acc, float32x4_t x, float w)
{
    return vmlaq_n_f32(acc, x, w);
}

#define EMBER_DWCONV_NEON_NAME(stride) ember_f32_dwconv_3x3##stride##__neon_armv7
#include "kernels/arm/f32_dwconv_3x3__neon.h"
