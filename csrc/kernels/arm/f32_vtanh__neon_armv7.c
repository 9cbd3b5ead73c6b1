/*
 * f32_vtanh__neon_armv7 — y = tanh(x), 4 lanes at a time, ARMv7 NEON
 * (no divide, no FMA, subnormals flushed: f32_vmath__neon_armv7.h).
 *
 * Recipe (f32_vmath_constants.h, ember_f32_vtanh_constants): a = min(|x|, 10),
 * z = -2a = n·ln2 + r, p = expm1(r) of degree 6; below a = 0.625, m = expm1(z) and
 * q = -m / (m + 2); above, u = exp(z) and q = 1 - 2u / (1 + u); one divide; y = |q|
 * with the sign of x. Tail: through a 4-float stack copy.
 */
#include "kernels/kernels.h"
#include "kernels/arm/f32_vmath__neon_armv7.h"

static inline float32x4_t tanh_neon(float32x4_t x)
{
    const ember_f32_vtanh_constants *k = &ember_f32_vtanh_table;
    const float32x4_t one = vdupq_n_f32(1.0f);
    const float32x4_t a = vminq_f32(vabsq_f32(x), vdupq_n_f32(k->x_max)); /* NaN passes */
    const float32x4_t z = vmulq_f32(vdupq_n_f32(-2.0f), a);
    float32x4_t n;
    const float32x4_t r = ln2_reduce_neon(z, &k->reduction, &n);
    float32x4_t p = madd_neon(vdupq_n_f32(k->c5), vdupq_n_f32(k->c6), r);
    p = madd_neon(vdupq_n_f32(k->c4), p, r);
    p = madd_neon(vdupq_n_f32(k->c3), p, r);
    p = madd_neon(vdupq_n_f32(k->c2), p, r);
    p = madd_neon(r, vmulq_f32(r, r), p); /* expm1(r) */
    /* n ∈ [-29, 0]: 2^n is normal and 2^n - 1 is exact down to n = -24. */
    const float32x4_t t = exp2i_neon(vcvtq_s32_f32(n));
    const float32x4_t m = madd_neon(vsubq_f32(t, one), t, p); /* expm1(z) */
    const float32x4_t u = madd_neon(t, t, p);                 /* exp(z) */
    /* a ≥ split is false for NaN, which takes the first form and stays NaN. */
    const uint32x4_t large = vcgeq_f32(a, vdupq_n_f32(k->split));
    const float32x4_t num = vbslq_f32(large, vaddq_f32(u, u), vnegq_f32(m));
    const float32x4_t den =
        vbslq_f32(large, vaddq_f32(one, u), vaddq_f32(m, vdupq_n_f32(2.0f)));
    const float32x4_t d = divide_neon(num, den);
    const float32x4_t q = vbslq_f32(large, vsubq_f32(one, d), d);
    const uint32x4_t sign = vdupq_n_u32(0x80000000u);
    return vbslq_f32(sign, x, vabsq_f32(q));
}

void ember_f32_vtanh__neon_armv7(size_t n, const float *x, float *y)
{
    EMBER_F32_VUNARY_LOOP_NEON(tanh_neon, n, x, y);
}
