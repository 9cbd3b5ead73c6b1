/*
 * f32_vmath__neon.h — the elementwise recipes shared by the AArch64 and ARMv7 kernels
 * (f32_v<op>__neon_<isa>.c): ln2 range reduction, 2^n, exp, sigmoid and tanh on one
 * vector, and the loop every kernel runs. The two ISAs differ only in their multiply-add,
 * multiply-subtract and divide, which the including ISA header (f32_vmath__neon_aarch64.h
 * or f32_vmath__neon_armv7.h) defines first as madd_neon, msub_neon and divide_neon.
 */
#ifndef EMBER_F32_VMATH_NEON_H
#define EMBER_F32_VMATH_NEON_H

/* x = n·ln2 + r with n = round(x·log2e) (as a float) and |r| ≲ ln2/2, by Cody–Waite. */
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
    /* 2^n = 2^(n>>1) · 2^(n - (n>>1)), both factors normal for n in [-150, 128]: the
     * first product is exact, the second rounds once (to a subnormal, 0 or inf; ARMv7
     * flushes results below 2^-126 to zero anyway, the split keeps the recipe one). */
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

/* sigmoid: see f32_vsigmoid__neon_*.c for the recipe. */
static inline float32x4_t sigmoid_neon(float32x4_t x)
{
    const float32x4_t one = vdupq_n_f32(1.0f);
    const float32x4_t e = exp_neon(vnegq_f32(vabsq_f32(x)));
    const float32x4_t numerator = vbslq_f32(vcltq_f32(x, vdupq_n_f32(0.0f)), e, one);
    return divide_neon(numerator, vaddq_f32(one, e));
}

/* tanh: see f32_vtanh__neon_*.c for the recipe. */
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

#endif /* EMBER_F32_VMATH_NEON_H */
