/*
 * f32_dwconv__neon.h — the body of the depthwise-conv run kernels (kernels.h), shared by
 * the AArch64 and ARMv7 files, which define before including it:
 *   madd(acc, x, w)       acc + x·w (fused on AArch64; ARMv7's vmla rounds twice),
 *   ACCUMULATORS          vectors of 4 outputs per pass over the taps (8 on AArch64's 32
 *                         registers, 4 on ARMv7's 16),
 *   EMBER_LOAD_CHUNK(p)   x0, x1, … = the ACCUMULATORS vectors from p on (AArch64 loads
 *                         four per instruction),
 *   EMBER_DWCONV_NEON_NAME the kernel's name.
 * Included by exactly those two files.
 *
 * Per tap of a pass: one weight, ACCUMULATORS loads and multiply-adds, so the chains hide
 * the multiply-add latency; nine taps (3×3) keep weights and pointers in registers. The
 * tail (n mod chunk, when n ≥ 4) is one more pass over ACCUMULATORS vectors, the last
 * ending at n: it recomputes a few outputs already stored, to the same value. A run
 * shorter than 4 is computed one output at a time. vmax/vmin propagate NaN, as the
 * scalar kernel's compares do.
 */
#ifndef EMBER_F32_DWCONV_NEON_H
#define EMBER_F32_DWCONV_NEON_H

#include <arm_neon.h>

#include "kernels/kernels.h"

#define ALWAYS_INLINE inline __attribute__((always_inline))

enum { V = 4, CHUNK = V * ACCUMULATORS };

/* X(i) for each accumulator: written out, since loops over arrays of vectors are not
 * unrolled at -O2 and would keep the accumulators in memory. */
#if ACCUMULATORS == 8
#define EMBER_EACH_ACCUMULATOR(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#else
#define EMBER_EACH_ACCUMULATOR(X) X(0) X(1) X(2) X(3)
#endif

static inline float32x4_t clamp4(float32x4_t v, float32x4_t vmin, float32x4_t vmax)
{
    return vminq_f32(vmaxq_f32(v, vmin), vmax);
}

/* One pass: the vectors at at[0..ACCUMULATORS) + [0, 4) (positions may repeat), or with
 * at NULL the CHUNK outputs from o on (contiguous: loaded CHUNK at a time). Nine taps
 * (`nine`, constant after inlining) use the pointers s9 and weights w9 the caller holds
 * in registers, unrolled; other counts read src and w per tap. */
static ALWAYS_INLINE void pass(int nine, const float *const *s9, const float *w9, size_t taps,
                               const float *const *src, const float *w, size_t o,
                               const size_t *at, float bias, float *out, float32x4_t vmin,
                               float32x4_t vmax)
{
    const int contiguous = at == NULL;
#define EMBER_INIT(i)                                                                        \
    float32x4_t c##i = vdupq_n_f32(bias), x##i;                                              \
    const size_t a##i = contiguous ? o + (size_t)(i) * V : at[i];
#define EMBER_LOAD(i) x##i = vld1q_f32(s + a##i);
#define EMBER_MADD(i) c##i = madd(c##i, x##i, wt);
#define EMBER_TAP(s_, w_)                                                                    \
    do {                                                                                     \
        const float *s = (s_);                                                               \
        const float wt = (w_);                                                               \
        if (contiguous) {                                                                    \
            EMBER_LOAD_CHUNK(s + a0)                                                         \
        } else {                                                                             \
            EMBER_EACH_ACCUMULATOR(EMBER_LOAD)                                               \
        }                                                                                    \
        EMBER_EACH_ACCUMULATOR(EMBER_MADD)                                                   \
    } while (0)
#define EMBER_STORE(i) vst1q_f32(out + a##i, clamp4(c##i, vmin, vmax));
    EMBER_EACH_ACCUMULATOR(EMBER_INIT)
    if (nine) {
        EMBER_TAP(s9[0], w9[0]);
        EMBER_TAP(s9[1], w9[1]);
        EMBER_TAP(s9[2], w9[2]);
        EMBER_TAP(s9[3], w9[3]);
        EMBER_TAP(s9[4], w9[4]);
        EMBER_TAP(s9[5], w9[5]);
        EMBER_TAP(s9[6], w9[6]);
        EMBER_TAP(s9[7], w9[7]);
        EMBER_TAP(s9[8], w9[8]);
    } else {
        for (size_t t = 0; t < taps; t++)
            EMBER_TAP(src[t], w[t]);
    }
    EMBER_EACH_ACCUMULATOR(EMBER_STORE)
#undef EMBER_INIT
#undef EMBER_LOAD
#undef EMBER_MADD
#undef EMBER_TAP
#undef EMBER_STORE
}

/* n ≥ 4: whole passes of CHUNK, then one over the tail's vectors, the last at n − 4. */
static ALWAYS_INLINE void run(int nine, size_t n, size_t taps, const float *const *src,
                              const float *w, float bias, float *out, float32x4_t vmin,
                              float32x4_t vmax)
{
    const float *s9[9];
    float w9[9];
    for (int t = 0; nine && t < 9; t++) {
        s9[t] = src[t];
        w9[t] = w[t];
    }
    size_t o = 0;
    for (; o + CHUNK <= n; o += CHUNK)
        pass(nine, s9, w9, taps, src, w, o, NULL, bias, out, vmin, vmax);
    if (o == n)
        return;
    size_t at[ACCUMULATORS];
    for (size_t i = 0; i < ACCUMULATORS; i++)
        at[i] = o + i * V < n - V ? o + i * V : n - V;
    pass(nine, s9, w9, taps, src, w, o, at, bias, out, vmin, vmax);
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
    if (taps == 9)
        run(1, n, taps, src, w, bias, out, vmin, vmax);
    else
        run(0, n, taps, src, w, bias, out, vmin, vmax);
}

#endif /* EMBER_F32_DWCONV_NEON_H */
