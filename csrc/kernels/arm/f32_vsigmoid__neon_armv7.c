/*
 * f32_vsigmoid__neon_armv7 — y = 1 / (1 + exp(-x)), 4 lanes at a time, ARMv7 NEON
 * (no divide, no FMA: f32_vmath__neon_armv7.h).
 *
 * e = exp(-|x|) ∈ [0, 1] by the exp recipe (it never overflows); d = 1 + e ∈ [1, 2];
 * y = 1/d for x ≥ 0 and e/d for x < 0 — both quotients of positive terms, so accurate
 * relative to the result on both sides. Tail: through a 4-float stack copy.
 */
#include "kernels/kernels.h"
#include "kernels/arm/f32_vmath__neon_armv7.h"

void ember_f32_vsigmoid__neon_armv7(size_t n, const float *x, float *y)
{
    EMBER_F32_VUNARY_LOOP_NEON(sigmoid_neon, n, x, y);
}
