/*
 * f32_vmath__neon_aarch64.h — pieces shared by the AArch64 Advanced SIMD elementwise
 * kernels (f32_v<op>__neon_aarch64.c): the exp recipe on one vector and the loop every
 * kernel runs. AArch64 has a fused multiply-add (vfmaq) and a correctly rounded divide
 * (vdivq), both used.
 */
#ifndef EMBER_F32_VMATH_NEON_AARCH64_H
#define EMBER_F32_VMATH_NEON_AARCH64_H

#include "kernels/f32_vmath_constants.h"

#include <arm_neon.h>
#include <string.h>

/* a + b·c, fused. */
static inline float32x4_t madd_neon(float32x4_t a, float32x4_t b, float32x4_t c)
{
    return vfmaq_f32(a, b, c);
}

/* a - b·c, fused. */
static inline float32x4_t msub_neon(float32x4_t a, float32x4_t b, float32x4_t c)
{
    return vfmsq_f32(a, b, c);
}

/* num / den, correctly rounded. */
static inline float32x4_t divide_neon(float32x4_t num, float32x4_t den)
{
    return vdivq_f32(num, den);
}

/* The recipes, written once over the primitives above. */
#include "kernels/arm/f32_vmath__neon.h"

#endif /* EMBER_F32_VMATH_NEON_AARCH64_H */
