/*
 * f32_vexp__neon_armv7 — y = exp(x), 4 lanes at a time, ARMv7 NEON
 * (no divide, no FMA, subnormals flushed: f32_vmath__neon_armv7.h).
 *
 * Recipe (f32_vmath_constants.h): clamp, Cody–Waite reduction by ln2, degree-6
 * polynomial by Horner, scale by 2^n in two exponent-bit factors (subnormal results
 * flush to zero on this unit). Tail: through a 4-float stack copy.
 */
#include "kernels/kernels.h"
#include "kernels/arm/f32_vmath__neon_armv7.h"

void ember_f32_vexp__neon_armv7(size_t n, const float *x, float *y)
{
    EMBER_F32_VUNARY_LOOP_NEON(exp_neon, n, x, y);
}
