/*
 * f32_verf__neon_armv7 — y = erf(x), 4 lanes at a time, ARMv7 NEON
 * (no divide, no FMA, subnormals flushed: f32_vmath__neon_armv7.h).
 *
 * Recipe (f32_vmath_constants.h, ember_f32_verf_constants), on a = |x|:
 *   a < 0.921875:  a + a·P(a²), P of degree 6 (scaled by 2^24 around, for the
 *                  flush-to-zero of this unit);
 *   otherwise:     1 - exp(Q(min(a, 4))), Q of degree 7, exp by the vexp recipe;
 * both computed, one chosen per lane, the sign of x put back. Tail: 4-float stack copy.
 */
#include "kernels/kernels.h"
#include "kernels/arm/f32_vmath__neon_armv7.h"

static inline float32x4_t erf_neon(float32x4_t x)
{
    const ember_f32_verf_constants *k = &ember_f32_verf_table;
    const float32x4_t a = vabsq_f32(x);

    const float32x4_t s = vmulq_f32(a, a);
    float32x4_t p = madd_neon(vdupq_n_f32(k->p5), vdupq_n_f32(k->p6), s);
    p = madd_neon(vdupq_n_f32(k->p4), p, s);
    p = madd_neon(vdupq_n_f32(k->p3), p, s);
    p = madd_neon(vdupq_n_f32(k->p2), p, s);
    p = madd_neon(vdupq_n_f32(k->p1), p, s);
    p = madd_neon(vdupq_n_f32(k->p0), p, s);
    /* a + a·P computed at 2^24·a and scaled back (exact): a·P alone would flush to zero
     * for a < 2^-123, which this unit does to subnormal products. */
    const float32x4_t a24 = vmulq_f32(a, vdupq_n_f32(0x1p24f));
    const float32x4_t small = vmulq_f32(madd_neon(a24, a24, p), vdupq_n_f32(0x1p-24f));

    const float32x4_t b = vminq_f32(a, vdupq_n_f32(k->x_max)); /* NaN passes */
    float32x4_t q = madd_neon(vdupq_n_f32(k->q6), vdupq_n_f32(k->q7), b);
    q = madd_neon(vdupq_n_f32(k->q5), q, b);
    q = madd_neon(vdupq_n_f32(k->q4), q, b);
    q = madd_neon(vdupq_n_f32(k->q3), q, b);
    q = madd_neon(vdupq_n_f32(k->q2), q, b);
    q = madd_neon(vdupq_n_f32(k->q1), q, b);
    q = madd_neon(vdupq_n_f32(k->q0), q, b);
    const float32x4_t large = vsubq_f32(vdupq_n_f32(1.0f), exp_neon(q));

    /* a < split is false for NaN, whose large branch is NaN. */
    const float32x4_t e = vbslq_f32(vcltq_f32(a, vdupq_n_f32(k->split)), small, large);
    return vbslq_f32(vdupq_n_u32(0x80000000u), x, e);
}

void ember_f32_verf__neon_armv7(size_t n, const float *x, float *y)
{
    EMBER_F32_VUNARY_LOOP_NEON(erf_neon, n, x, y);
}
