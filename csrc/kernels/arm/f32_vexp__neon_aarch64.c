/*
 * f32_vexp__neon_aarch64 — y = exp(x), 4 lanes at a time, AArch64 Advanced SIMD.
 *
 * Recipe (f32_vmath_constants.h): clamp, Cody–Waite reduction by ln2, degree-6
 * polynomial by Horner, scale by 2^n in two exponent-bit factors so subnormal results
 * round once. Tail: through a 4-float stack copy.
 */
#include "kernels/kernels.h"
#include "kernels/arm/f32_vmath__neon_aarch64.h"

void ember_f32_vexp__neon_aarch64(size_t n, const float *x, float *y)
{
    EMBER_F32_VUNARY_LOOP_NEON(exp_neon, n, x, y);
}
