/*
 * f32_pool_row__neon_armv7 — a row of a pool's step-2 windows (kernels.h), ARMv7 NEON, 8
 * outputs a step in two vectors of 4: vld2 splits each row's 16 columns into the even and
 * odd ones, folded down the rows; the third column of a 3-wide window is the even columns
 * moved down a lane (vext) with the 17th column, folded down the rows alone. Each output
 * folds the same columns in the same order as the scalar kernel, so the bits are its
 * bits, subnormals included:
 *   - max compares integer keys, not floats: ARMv7 GCC turns vcgtq_f32 into four VFP
 *     compares (NEON's would flush subnormals), which made this kernel slower than the
 *     per-row path's scalar loops. A float's key orders as the float does, with −0 = +0;
 *     a NaN is never greater, and a held NaN is never replaced (kernels.h);
 *   - sums add with NEON (which flushes subnormals, as this unit's other kernels do);
 *     NEON has no divide, so the four sums are divided one by one by VFP.
 * A row that does not end on a whole step ends with one taken back over the outputs before
 * it (y is not read), so only rows under 4 outputs go scalar. AArch64 keeps the per-row
 * and step-2 paths' loops, which GCC vectorises: this kernel's form counted more there.
 */
#include <arm_neon.h>

#include "kernels/kernels.h"

/* A vector of values with their keys for the max fold (the sums carry no keys). */
typedef struct {
    float32x4_t v;
    int32x4_t key;
} held4;

/* The key of each lane, and whether it is a NaN (|key| past +inf's). A negative x of
 * magnitude m keys as −m (INT_MIN − bits, wrapping), so −0 keys as +0. */
static inline int32x4_t key_of(float32x4_t v, uint32x4_t *nan)
{
    const int32x4_t bits = vreinterpretq_s32_f32(v);
    const uint32x4_t negative = vreinterpretq_u32_s32(vshrq_n_s32(bits, 31));
    const int32x4_t key = vbslq_s32(negative, vsubq_s32(vdupq_n_s32(INT32_MIN), bits), bits);
    *nan = vcgtq_s32(vabsq_s32(key), vdupq_n_s32(0x7f800000));
    return key;
}

/* next > held ? next : held, lane by lane: a NaN next keys below everything, a NaN held
 * above, so neither is ever greater. */
static inline held4 max4(held4 held, float32x4_t next)
{
    uint32x4_t nan;
    const int32x4_t raw = key_of(next, &nan);
    const int32x4_t next_key = vbslq_s32(nan, vdupq_n_s32(INT32_MIN), raw);
    const uint32x4_t greater = vcgtq_s32(next_key, held.key);
    return (held4){vbslq_f32(greater, next, held.v), vbslq_s32(greater, next_key, held.key)};
}

static inline held4 fold4(held4 held, float32x4_t next, int is_max)
{
    if (is_max)
        return max4(held, next);
    return (held4){vaddq_f32(held.v, next), held.key};
}

static inline held4 start4(float32x4_t v, int is_max)
{
    if (!is_max)
        return (held4){v, vdupq_n_s32(0)};
    uint32x4_t nan;
    const int32x4_t key = key_of(v, &nan);
    return (held4){v, vbslq_s32(nan, vdupq_n_s32(INT32_MAX), key)};
}

static inline float32x4_t result4(held4 h, int is_max, float divisor)
{
    if (is_max)
        return h.v;
    float lanes[4];
    vst1q_f32(lanes, h.v);
    for (int k = 0; k < 4; k++)
        lanes[k] /= divisor;
    return vld1q_f32(lanes);
}

/* Outputs [i, i + 4 · vectors), vectors 1 or 2 (constant after inlining). */
static inline __attribute__((always_inline)) void step(const float *const *rows, size_t kh,
                                                       size_t kw, int is_max, float divisor,
                                                       size_t i, int vectors, float *y)
{
    const float *r = rows[0] + 2 * i;
    const float32x4x2_t a0 = vld2q_f32(r), b0 = vectors == 2 ? vld2q_f32(r + 8) : a0;
    held4 ae = start4(a0.val[0], is_max), ao = start4(a0.val[1], is_max);
    held4 be = start4(b0.val[0], is_max), bo = start4(b0.val[1], is_max);
    /* lane 0: the column after the step's last even one */
    held4 last = start4(kw == 3 ? vld1q_dup_f32(r + 8 * vectors) : vdupq_n_f32(0.0f), is_max);
    for (size_t t = 1; t < kh; t++) {
        r = rows[t] + 2 * i;
        const float32x4x2_t ra = vld2q_f32(r);
        ae = fold4(ae, ra.val[0], is_max);
        ao = fold4(ao, ra.val[1], is_max);
        if (vectors == 2) {
            const float32x4x2_t rb = vld2q_f32(r + 8);
            be = fold4(be, rb.val[0], is_max);
            bo = fold4(bo, rb.val[1], is_max);
        }
        if (kw == 3)
            last = fold4(last, vld1q_dup_f32(r + 8 * vectors), is_max);
    }
    held4 va = fold4(ae, ao.v, is_max), vb = vectors == 2 ? fold4(be, bo.v, is_max) : va;
    if (kw == 3) { /* the third columns: even columns 1.. of a, then of b (or `last`) */
        va = fold4(va, vextq_f32(ae.v, vectors == 2 ? be.v : last.v, 1), is_max);
        if (vectors == 2)
            vb = fold4(vb, vextq_f32(be.v, last.v, 1), is_max);
    }
    vst1q_f32(y + i, result4(va, is_max, divisor));
    if (vectors == 2)
        vst1q_f32(y + i + 4, result4(vb, is_max, divisor));
}

/* The loops with is_max and kw constant: four copies, no branch on them inside. */
static inline __attribute__((always_inline)) void row(size_t n, const float *const *rows,
                                                      size_t kh, size_t kw, int is_max,
                                                      float divisor, float *y)
{
    if (n >= 8) {
        for (size_t i = 0; i + 8 <= n; i += 8)
            step(rows, kh, kw, is_max, divisor, i, 2, y);
        if (n % 8 > 4)
            step(rows, kh, kw, is_max, divisor, n - 8, 2, y);
        else if (n % 8)
            step(rows, kh, kw, is_max, divisor, n - 4, 1, y);
    } else if (n >= 4) {
        step(rows, kh, kw, is_max, divisor, 0, 1, y);
        if (n > 4)
            step(rows, kh, kw, is_max, divisor, n - 4, 1, y);
    } else {
        ember_f32_pool_row__scalar(n, rows, kh, kw, is_max, divisor, y);
    }
}

void ember_f32_pool_row__neon_armv7(size_t n, const float *const *rows, size_t kh, size_t kw,
                                    int is_max, float divisor, float *y)
{
    EMBER_F32_POOL_ROW_SPECIALISED(row, n, rows, kh, kw, is_max, divisor, y);
}
