/*
 * f32_vtanh__neon_aarch64 — y = tanh(x), 4 lanes at a time, AArch64 Advanced SIMD.
 *
 * Recipe (f32_vmath_constants.h, ember_f32_vtanh_constants): a = min(|x|, 10),
 * z = -2a = n·ln2 + r, p = expm1(r) of degree 6; below a = 0.625, m = expm1(z) and
 * q = -m / (m + 2); above, u = exp(z) and q = 1 - 2u / (1 + u); one divide; y = |q|
 * with the sign of x. Tail: through a 4-float stack copy.
 */
#include "kernels/kernels.h"
#include "kernels/arm/f32_vmath__neon_aarch64.h"

void ember_f32_vtanh__neon_aarch64(size_t n, const float *x, float *y)
{
    EMBER_F32_VUNARY_LOOP_NEON(tanh_neon, n, x, y);
}
