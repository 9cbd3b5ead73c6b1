/*
 * f32_dwconv__neon.h — the body of the depthwise-conv run kernels (kernels.h), shared by
 * the AArch64 and ARMv7 files, which define before including it:
 *   madd(acc, x, w)       acc + x·w (fused on AArch64; ARMv7's vmla rounds twice),
 *   madd_lane(acc, x, v, l) acc + x·v[l], the same by a lane of a vector,
 *   ACCUMULATORS          vectors of 4 outputs per pass over the taps (8 on AArch64's 32
 *                         registers, 4 on ARMv7's 16),
 *   EMBER_LOAD_CHUNK(p)   x0, x1, … = the ACCUMULATORS vectors from p on (AArch64 loads
 *                         four per instruction),
 *   EMBER_DWCONV_NEON_NAME, EMBER_DWCONV_3X3S2_NEON_NAME the kernels' names.
 * Included by exactly those two files.
 *
 * Per tap of a pass: one weight, ACCUMULATORS loads and multiply-adds, so the chains hide
 * the multiply-add latency; nine taps (3×3) keep weights and pointers in registers. The
 * tail (n mod chunk, when n ≥ 4) is one more pass over ACCUMULATORS vectors, the last
 * ending at n: it recomputes a few outputs already stored, to the same value. A run
 * shorter than 4 is computed one output at a time. vmax/vmin propagate NaN, as the
 * scalar kernel's compares do.
 *
 * The 3×3 stride-2 run computes 8 outputs per block as two vectors, the even outputs and
 * the odd ones: one vld4 of a kernel row's 16 floats gives every tap of both (plus one
 * float loaded alone and an ext), and one vst2 interleaves them back: per kernel row and
 * 8 outputs, three loads and six multiply-adds, with no copy into column phases. (Two
 * vld2 per 4 outputs, the first version, took 2 loads per 3 multiply-adds: more
 * instructions than the column-phase copy it saved on 112² planes.)
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

/* The nine taps' weights: w[0..4), w[4..8) and w[8], multiplied by lane. As nine floats,
 * ARMv7 GCC kept them on the stack and rebuilt each vmla's scalar in a register pass
 * after pass (ShuffleNet: the kernel 2.7x AArch64's instructions); three vectors stay in
 * registers on both, and a lane multiply-add rounds as the scalar form. */
typedef struct {
    float32x4_t lo, mid, last;
} weights9;

static inline weights9 weights9_of(const float *w)
{
    return (weights9){vld1q_f32(w), vld1q_f32(w + 4), vld1q_dup_f32(w + 8)};
}

/* acc + x·w[t] for tap t of nine (t constant after unrolling) */
#define EMBER_MADD_TAP(acc, x, w9, t)                                                        \
    madd_lane(acc, x, (t) < 4 ? (w9).lo : (t) < 8 ? (w9).mid : (w9).last, (t) % 4)

/* One pass: the vectors at at[0..active) + [0, 4) (positions may repeat), or with at
 * NULL the CHUNK outputs from o on (contiguous: loaded CHUNK at a time, all ACCUMULATORS
 * active). Nine taps (`nine`) use the pointers s9 and weights w9 the caller holds in
 * registers, unrolled; other counts read src and w per tap. `nine` and `active` are
 * constant after inlining: the inactive accumulators fold away. */
static ALWAYS_INLINE void pass(int nine, const float *const *s9, weights9 w9, size_t taps,
                               const float *const *src, const float *w, size_t o,
                               const size_t *at, size_t active, float bias, float *out,
                               float32x4_t vmin, float32x4_t vmax)
{
    const int contiguous = at == NULL;
#define EMBER_INIT(i)                                                                        \
    float32x4_t c##i = vdupq_n_f32(bias), x##i;                                              \
    const size_t a##i = contiguous ? o + (size_t)(i) * V : at[i];
#define EMBER_LOAD(i)                                                                        \
    if ((i) < active)                                                                        \
        x##i = vld1q_f32(s + a##i);
#define EMBER_MADD(i)                                                                        \
    if ((i) < active)                                                                        \
        c##i = madd(c##i, x##i, wt);
#define EMBER_MADD_LANE(i)                                                                   \
    if ((i) < active)                                                                        \
        c##i = EMBER_MADD_TAP(c##i, x##i, w9, tap);
/* a tap's loads, then MADD(i) for each accumulator (wt or tap in scope) */
#define EMBER_TAP(s_, MADD)                                                                  \
    do {                                                                                     \
        const float *s = (s_);                                                               \
        if (contiguous) {                                                                    \
            EMBER_LOAD_CHUNK(s + a0)                                                         \
        } else {                                                                             \
            EMBER_EACH_ACCUMULATOR(EMBER_LOAD)                                               \
        }                                                                                    \
        EMBER_EACH_ACCUMULATOR(MADD)                                                         \
    } while (0)
#define EMBER_STORE(i)                                                                       \
    if ((i) < active)                                                                        \
        vst1q_f32(out + a##i, clamp4(c##i, vmin, vmax));
    EMBER_EACH_ACCUMULATOR(EMBER_INIT)
    if (nine) {
#define EMBER_TAP_OF_NINE(t)                                                                 \
    {                                                                                        \
        enum { tap = t };                                                                    \
        EMBER_TAP(s9[t], EMBER_MADD_LANE);                                                   \
    }
        EMBER_EACH_OF_NINE(EMBER_TAP_OF_NINE)
#undef EMBER_TAP_OF_NINE
    } else {
        for (size_t t = 0; t < taps; t++) {
            const float wt = w[t];
            EMBER_TAP(src[t], EMBER_MADD);
        }
    }
    EMBER_EACH_ACCUMULATOR(EMBER_STORE)
#undef EMBER_INIT
#undef EMBER_LOAD
#undef EMBER_MADD
#undef EMBER_MADD_LANE
#undef EMBER_TAP
#undef EMBER_STORE
}

/* n ≥ 4: whole passes of CHUNK, then one over the tail's vectors, the last at n − 4: half
 * the accumulators where the tail is half a chunk or less (a 14-wide plane's rows and
 * columns, 12 and 14 outputs: all eight on AArch64 computed four vectors twice). */
static ALWAYS_INLINE void run(int nine, size_t n, size_t taps, const float *const *src,
                              const float *w, float bias, float *out, float32x4_t vmin,
                              float32x4_t vmax)
{
    const float *s9[9];
    weights9 w9 = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
    if (nine) {
        for (int t = 0; t < 9; t++)
            s9[t] = src[t];
        w9 = weights9_of(w);
    }
    size_t o = 0;
    for (; o + CHUNK <= n; o += CHUNK)
        pass(nine, s9, w9, taps, src, w, o, NULL, ACCUMULATORS, bias, out, vmin, vmax);
    if (o == n)
        return;
    size_t at[ACCUMULATORS];
    for (size_t i = 0; i < ACCUMULATORS; i++)
        at[i] = o + i * V < n - V ? o + i * V : n - V;
    if (n - o <= CHUNK / 2)
        pass(nine, s9, w9, taps, src, w, o, at, ACCUMULATORS / 2, bias, out, vmin, vmax);
    else
        pass(nine, s9, w9, taps, src, w, o, at, ACCUMULATORS, bias, out, vmin, vmax);
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

/* 3×3 stride 2: blocks of 8 outputs, two per pass (an even and an odd accumulator each).
 * Four blocks on AArch64 need 16 registers for their vld4s, 8 accumulators and the
 * weights, which GCC spreads into 9 vectors: more than 32, and the loop spilled. One
 * block per pass counts 2% fewer instructions (96 ch 112² -> 56²: 4.49M vs 4.59M) but
 * leaves two multiply-add chains of 9, which an in-order core (A53, A55) would wait on. */
#define EMBER_EACH_BLOCK(X) X(0) X(1)
enum { BLOCK = 8, BLOCKS = 2 };

/* Kernel row r of block i (outputs a_i..a_i + 8): vld4 splits x[2a_i..2a_i + 16) by
 * column mod 4, so the even outputs' three taps are columns 0, 1, 2 and the odd
 * outputs' are 2, 3 and 0 shifted by one (x[2a_i + 16] loaded alone). */
#define EMBER_S2_ROW(i, r)                                                                   \
    {                                                                                        \
        const float *x = row[r] + 2 * a##i;                                                  \
        const float32x4x4_t q = vld4q_f32(x);                                                \
        const float32x4_t c0 = q.val[0], c1 = q.val[1], c2 = q.val[2], c3 = q.val[3];        \
        const float32x4_t c4 = vextq_f32(c0, vld1q_dup_f32(x + 16), 1);                      \
        e##i = EMBER_MADD_TAP(e##i, c0, w9, 3 * (r));                                        \
        e##i = EMBER_MADD_TAP(e##i, c1, w9, 3 * (r) + 1);                                    \
        e##i = EMBER_MADD_TAP(e##i, c2, w9, 3 * (r) + 2);                                    \
        d##i = EMBER_MADD_TAP(d##i, c2, w9, 3 * (r));                                        \
        d##i = EMBER_MADD_TAP(d##i, c3, w9, 3 * (r) + 1);                                    \
        d##i = EMBER_MADD_TAP(d##i, c4, w9, 3 * (r) + 2);                                    \
    }

void EMBER_DWCONV_3X3S2_NEON_NAME(size_t n, const float *const *row, const float *w,
                                  float bias, float *out, const ember_f32_dwconv_params *params)
{
    if (n < BLOCK) {
        ember_f32_dwconv_3x3s2__scalar(n, row, w, bias, out, params);
        return;
    }
    const float32x4_t vmin = vdupq_n_f32(params->min), vmax = vdupq_n_f32(params->max);
    const weights9 w9 = weights9_of(w);
    const size_t last = n - BLOCK;
    for (size_t o = 0; o < n; o += BLOCK * BLOCKS) { /* the last block of a run ends at n */
#define EMBER_S2_INIT(i)                                                                     \
    const size_t a##i = o + (i) * BLOCK < last ? o + (i) * BLOCK : last;                     \
    float32x4_t e##i = vdupq_n_f32(bias), d##i = e##i;
#define EMBER_S2_ROW0(i) EMBER_S2_ROW(i, 0)
#define EMBER_S2_ROW1(i) EMBER_S2_ROW(i, 1)
#define EMBER_S2_ROW2(i) EMBER_S2_ROW(i, 2)
#define EMBER_S2_STORE(i)                                                                    \
    {                                                                                        \
        const float32x4x2_t even_odd = {{clamp4(e##i, vmin, vmax), clamp4(d##i, vmin, vmax)}}; \
        vst2q_f32(out + a##i, even_odd);                                                     \
    }
        EMBER_EACH_BLOCK(EMBER_S2_INIT)
        EMBER_EACH_BLOCK(EMBER_S2_ROW0)
        EMBER_EACH_BLOCK(EMBER_S2_ROW1)
        EMBER_EACH_BLOCK(EMBER_S2_ROW2)
        EMBER_EACH_BLOCK(EMBER_S2_STORE)
#undef EMBER_S2_INIT
#undef EMBER_S2_ROW0
#undef EMBER_S2_ROW1
#undef EMBER_S2_ROW2
#undef EMBER_S2_STORE
    }
}

#endif /* EMBER_F32_DWCONV_NEON_H */
