/*
 * f32_dwconv__neon.h — the body of the depthwise-conv run kernels (kernels.h), shared by
 * the AArch64 and ARMv7 files, which define before including it:
 *   madd(acc, x, w)       acc + x·w (fused on AArch64; ARMv7's vmla rounds twice),
 *   ACCUMULATORS          vectors of 4 outputs per pass over the taps (8 on AArch64's 32
 *                         registers, 4 on ARMv7's 16),
 *   load_chunk(s, x)      x[0..ACCUMULATORS) = s[0 .. 4·ACCUMULATORS) (AArch64 loads four
 *                         vectors per instruction),
 *   EMBER_DWCONV_NEON_NAME the kernel's name.
 * Included by exactly those two files.
 *
 * Per tap of a pass: one weight, ACCUMULATORS loads and multiply-adds, so the chains hide
 * the multiply-add latency. The tail (n mod chunk, when n ≥ 4) is one more pass over up
 * to ACCUMULATORS vectors, the last ending at n: it recomputes a few outputs already
 * stored, to the same value. A run shorter than 4 is computed one output at a time.
 * vmax/vmin propagate NaN, as the scalar kernel's compares do.
 */
#ifndef EMBER_F32_DWCONV_NEON_H
#define EMBER_F32_DWCONV_NEON_H

#include <arm_neon.h>

#include "kernels/kernels.h"

enum { V = 4, CHUNK = V * ACCUMULATORS };

static inline float32x4_t clamp4(float32x4_t v, float32x4_t vmin, float32x4_t vmax)
{
    return vminq_f32(vmaxq_f32(v, vmin), vmax);
}

/* Outputs [o, o + CHUNK). */
static inline void chunk(size_t o, size_t taps, const float *const *src, const float *w,
                         float bias, float *out, float32x4_t vmin, float32x4_t vmax)
{
    float32x4_t acc[ACCUMULATORS], x[ACCUMULATORS];
    for (int i = 0; i < ACCUMULATORS; i++)
        acc[i] = vdupq_n_f32(bias);
    for (size_t t = 0; t < taps; t++) {
        const float wt = w[t];
        load_chunk(src[t] + o, x);
        for (int i = 0; i < ACCUMULATORS; i++)
            acc[i] = madd(acc[i], x[i], wt);
    }
    for (int i = 0; i < ACCUMULATORS; i++)
        vst1q_f32(out + o + V * i, clamp4(acc[i], vmin, vmax));
}

/* Vectors at[0..ACCUMULATORS) + [0, 4) (positions may repeat). */
static inline void tail(const size_t *at, size_t taps, const float *const *src,
                        const float *w, float bias, float *out, float32x4_t vmin,
                        float32x4_t vmax)
{
    float32x4_t acc[ACCUMULATORS];
    for (int i = 0; i < ACCUMULATORS; i++)
        acc[i] = vdupq_n_f32(bias);
    for (size_t t = 0; t < taps; t++) {
        const float *s = src[t];
        const float wt = w[t];
        for (int i = 0; i < ACCUMULATORS; i++)
            acc[i] = madd(acc[i], vld1q_f32(s + at[i]), wt);
    }
    for (int i = 0; i < ACCUMULATORS; i++)
        vst1q_f32(out + at[i], clamp4(acc[i], vmin, vmax));
}

void EMBER_DWCONV_NEON_NAME(size_t n, size_t taps, const float *const *src, const float *w,
                            float bias, float *out, const ember_f32_dwconv_params *params)
{
    if (n < V) {
        for (size_t o = 0; o < n; o++) {
            float acc = bias;
            for (size_t t = 0; t < taps; t++)
                acc += w[t] * src[t][o];
            acc = acc < params->min ? params->min : acc;
            out[o] = acc > params->max ? params->max : acc;
        }
        return;
    }
    const float32x4_t vmin = vdupq_n_f32(params->min), vmax = vdupq_n_f32(params->max);
    size_t o = 0;
    for (; o + CHUNK <= n; o += CHUNK)
        chunk(o, taps, src, w, bias, out, vmin, vmax);
    if (o < n) { /* 1..CHUNK − 1 left, n ≥ 4: vectors from o on, the last at n − 4 */
        size_t at[ACCUMULATORS];
        for (size_t i = 0; i < ACCUMULATORS; i++)
            at[i] = o + i * V < n - V ? o + i * V : n - V;
        tail(at, taps, src, w, bias, out, vmin, vmax);
    }
}

#endif /* EMBER_F32_DWCONV_NEON_H */
