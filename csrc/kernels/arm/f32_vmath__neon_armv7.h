/*
 * f32_vmath__neon_armv7.h — pieces shared by the ARMv7 NEON elementwise kernels
 * (f32_v<op>__neon_armv7.c): the exp recipe on one vector, the reciprocal, and the loop
 * every kernel runs.
 *
 * ARMv7 NEON has neither a divide nor (before VFPv4, which the armv7 build does not
 * assume) a fused multiply-add: multiply-adds are vmla (two roundings) and 1/d is a
 * Newton–Raphson refinement of vrecpe. It also flushes subnormal inputs and results to
 * zero, always (the Advanced SIMD unit of ARMv7 ignores FPSCR.FZ).
 */
#ifndef EMBER_F32_VMATH_NEON_ARMV7_H
#define EMBER_F32_VMATH_NEON_ARMV7_H

#include "kernels/f32_vmath_constants.h"

#include <arm_neon.h>
#include <string.h>

/* a + b·c, rounded twice (no FMA). */
static inline float32x4_t madd_neon(float32x4_t a, float32x4_t b, float32x4_t c)
{
    return vmlaq_f32(a, b, c);
}

/* a - b·c, rounded twice (no FMA). */
static inline float32x4_t msub_neon(float32x4_t a, float32x4_t b, float32x4_t c)
{
    return vmlsq_f32(a, b, c);
}

/* num / den for den in [1, 2] (all the kernels need): no divide instruction, so
 * num · 1/den, with 1/den from vrecpe (8 bits) refined by two Newton–Raphson steps
 * r' = r·(2 - den·r) (vrecps), each doubling the correct bits. */
static inline float32x4_t divide_neon(float32x4_t num, float32x4_t den)
{
    float32x4_t r = vrecpeq_f32(den);
    r = vmulq_f32(r, vrecpsq_f32(den, r));
    r = vmulq_f32(r, vrecpsq_f32(den, r));
    return vmulq_f32(num, r);
}

/* The recipes, written once over the primitives above. */
#include "kernels/arm/f32_vmath__neon.h"

#endif /* EMBER_F32_VMATH_NEON_ARMV7_H */
