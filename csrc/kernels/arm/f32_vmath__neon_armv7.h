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

/* x = n·ln2 + r with n = round(x·log2e) (as a float) and |r| ≲ ln2/2, by Cody–Waite:
 * n·ln2_hi is exact and so is x - n·ln2_hi (Sterbenz), without an FMA. */
static inline float32x4_t ln2_reduce_neon(float32x4_t x, const ember_f32_ln2_reduction *k,
                                          float32x4_t *n)
{
    const float32x4_t magic = vdupq_n_f32(k->round_magic);
    *n = vsubq_f32(madd_neon(magic, x, vdupq_n_f32(k->log2e)), magic);
    const float32x4_t r = msub_neon(x, *n, vdupq_n_f32(k->ln2_hi));
    return msub_neon(r, *n, vdupq_n_f32(k->ln2_lo));
}

/* 2^n for an integer n with -126 ≤ n ≤ 127, built in the exponent bits. */
static inline float32x4_t exp2i_neon(int32x4_t n)
{
    return vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n, vdupq_n_s32(127)), 23));
}

/* exp(x) for each lane: f32_vmath_constants.h, ember_f32_vexp_constants. */
static inline float32x4_t exp_neon(float32x4_t x)
{
    const ember_f32_vexp_constants *k = &ember_f32_vexp_table;
    /* vmaxq / vminq return NaN when either input is NaN: NaN passes both clamps. */
    x = vminq_f32(vmaxq_f32(x, vdupq_n_f32(k->x_min)), vdupq_n_f32(k->x_max));
    float32x4_t n;
    const float32x4_t r = ln2_reduce_neon(x, &k->reduction, &n);
    float32x4_t p = madd_neon(vdupq_n_f32(k->c5), vdupq_n_f32(k->c6), r);
    p = madd_neon(vdupq_n_f32(k->c4), p, r);
    p = madd_neon(vdupq_n_f32(k->c3), p, r);
    p = madd_neon(vdupq_n_f32(k->c2), p, r);
    p = madd_neon(vdupq_n_f32(1.0f), p, r);
    p = madd_neon(vdupq_n_f32(1.0f), p, r);
    /* 2^n = 2^(n>>1) · 2^(n - (n>>1)), both factors normal for n in [-150, 128] (here
     * results below 2^-126 flush to zero anyway; the split keeps the recipe one). */
    const int32x4_t ni = vcvtq_s32_f32(n);
    const int32x4_t n1 = vshrq_n_s32(ni, 1);
    const int32x4_t n2 = vsubq_s32(ni, n1);
    return vmulq_f32(vmulq_f32(p, exp2i_neon(n1)), exp2i_neon(n2));
}

/* The loop of every kernel: whole vectors, then the tail (1..3 floats) through a
 * 4-float stack copy, so nothing past x[n) is read or past y[n) written. */
#define EMBER_F32_VUNARY_LOOP_NEON(OP, n, x, y)                                              \
    do {                                                                                     \
        for (; (n) >= 4; (n) -= 4, (x) += 4, (y) += 4) {                                     \
            vst1q_f32((y), OP(vld1q_f32(x)));                                                \
        }                                                                                    \
        if ((n) != 0) {                                                                      \
            float tail_[4] = {0.0f, 0.0f, 0.0f, 0.0f};                                       \
            memcpy(tail_, (x), (n) * sizeof(float));                                         \
            vst1q_f32(tail_, OP(vld1q_f32(tail_)));                                          \
            memcpy((y), tail_, (n) * sizeof(float));                                         \
        }                                                                                    \
    } while (0)

#endif /* EMBER_F32_VMATH_NEON_ARMV7_H */
