/*
 * f32_dwconv__neon.h — the body of the depthwise-conv run kernels (kernels.h), shared by
 * the AArch64 and ARMv7 files, which define before including it:
 *   madd(acc, x, w)       acc + x·w (fused on AArch64; ARMv7's vmla rounds twice),
 *   madd_lane(acc, x, v, l) acc + x·v[l], the same by a lane of a vector,
 *   ACCUMULATORS          vectors of 4 outputs per pass over the taps (8 on AArch64's 32
 *                         registers, 4 on ARMv7's 16),
 *   EMBER_LOAD_CHUNK(p)   x0, x1, … = the ACCUMULATORS vectors from p on (AArch64 loads
 *                         four per instruction),
 *   madd_vector(acc, x, w) acc + x·w of two vectors, as madd rounds,
 *   EMBER_DWCONV_NEON_NAME, EMBER_DWCONV_3X3S2_NEON_NAME, EMBER_DWCONV_BLOCKED_NEON_NAME
 *                         the kernels' names.
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

/* a, moved back to `last` when past it */
static inline size_t at_most4(size_t a, size_t last)
{
    return a < last ? a : last;
}

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

/*
 * The blocked kernel (f32_dwconv.h): a block of up to 8 channels' planes transposed into
 * scratch as two halves, channels 0-3 and 4-7 of every pixel one vector each (vst4 writes
 * four pixels' four channels from four planes' rows of four), zero-padded; each output
 * is Σ_taps w_t · x[pixel + offset_t], a multiply-add per tap and half, in the order and
 * with the multiply-add of the runs above (so a channel's outputs are the bits of its
 * laid-out plane's run); four outputs a pass, so eight chains; then the outputs back
 * into the planes (vld4 of four outputs' four channels). The planes' small rows cost
 * their ends and a call each in the runs above: 7×7 and 14×14 planes are mostly edges.
 * Rows of at least 4 pixels go four at a time, the last four ending at the row's end
 * (rewriting a few); narrower rows, and planes of fewer than 4 pixels, a float at a time.
 */
enum { HALF = EMBER_F32_DWCONV_BLOCK / 2 };
_Static_assert((int)HALF == (int)V, "a half of a block is one vector");

/* The planes' pixels into the two padded halves at their (row + pad_top, column +
 * pad_left). */
static void block_in(const ember_f32_dwconv_geometry *g, const float *const *plane,
                     size_t width, float *half0, float *half1)
{
    const size_t origin = (g->pad_top * width + g->pad_left) * HALF;
    if (g->in_w < HALF) {
        for (size_t r = 0; r < g->in_h; r++)
            for (size_t col = 0; col < g->in_w; col++)
                for (size_t c = 0; c < 2 * HALF; c++)
                    (c < HALF ? half0 : half1)[origin + (r * width + col) * HALF + c % HALF] =
                        plane[c][r * g->in_w + col];
        return;
    }
    for (size_t r = 0; r < g->in_h; r++)
        for (size_t col = 0;; col += HALF) {
            const size_t at = col + HALF <= g->in_w ? col : g->in_w - HALF;
            const size_t from = r * g->in_w + at, to = origin + (r * width + at) * HALF;
            const float32x4x4_t lo = {{vld1q_f32(plane[0] + from), vld1q_f32(plane[1] + from),
                                       vld1q_f32(plane[2] + from), vld1q_f32(plane[3] + from)}};
            const float32x4x4_t hi = {{vld1q_f32(plane[4] + from), vld1q_f32(plane[5] + from),
                                       vld1q_f32(plane[6] + from), vld1q_f32(plane[7] + from)}};
            vst4q_f32(half0 + to, lo);
            vst4q_f32(half1 + to, hi);
            if (at == g->in_w - HALF)
                break;
        }
}

/* The output halves back into the first `channels` output planes. */
static void block_out(size_t n, const float *half0, const float *half1, size_t channels,
                      float *out, size_t out_stride)
{
    if (n < HALF) {
        for (size_t p = 0; p < n; p++)
            for (size_t c = 0; c < channels; c++)
                out[c * out_stride + p] = (c < HALF ? half0 : half1)[p * HALF + c % HALF];
        return;
    }
    for (size_t p = 0;; p += HALF) {
        const size_t at = p + HALF <= n ? p : n - HALF;
        const float32x4x4_t lo = vld4q_f32(half0 + at * HALF);
        const float32x4x4_t hi = vld4q_f32(half1 + at * HALF);
        for (size_t c = 0; c < channels; c++)
            vst1q_f32(out + c * out_stride + at, c < HALF ? lo.val[c] : hi.val[c - HALF]);
        if (at == n - HALF)
            return;
    }
}

/* The outputs in passes of four in raster order (across rows; the last pass's outputs
 * past the end repeat the last one), each tap one multiply-add per half at a fixed
 * offset from the output's first input pixel. */
static void block_outputs(const ember_f32_dwconv_geometry *g, const float *half0,
                          const float *half1, size_t width, size_t taps,
                          const ptrdiff_t *offset, const float *weights, const float *biases,
                          float *out0, float *out1, float32x4_t vmin, float32x4_t vmax)
{
    const size_t n = g->out_h * g->out_w;
    const float32x4_t bias0 = vld1q_f32(biases), bias1 = vld1q_f32(biases + HALF);
    ember_f32_dwconv_walk walk = ember_f32_dwconv_walk_of(g, width, HALF);
    for (size_t p = 0; p < n; p += 4) {
        size_t at[4]; /* the outputs' first input pixels, in floats of a half */
        ember_f32_dwconv_walk_next(&walk, 4, at);
        float32x4_t a0 = bias0, a1 = bias0, a2 = bias0, a3 = bias0;
        float32x4_t b0 = bias1, b1 = bias1, b2 = bias1, b3 = bias1;
        for (size_t t = 0; t < taps; t++) {
            const float32x4_t w0 = vld1q_f32(weights + t * 2 * HALF);
            const float32x4_t w1 = vld1q_f32(weights + t * 2 * HALF + HALF);
            const float *x0 = half0 + offset[t], *x1 = half1 + offset[t];
            a0 = madd_vector(a0, vld1q_f32(x0 + at[0]), w0);
            a1 = madd_vector(a1, vld1q_f32(x0 + at[1]), w0);
            a2 = madd_vector(a2, vld1q_f32(x0 + at[2]), w0);
            a3 = madd_vector(a3, vld1q_f32(x0 + at[3]), w0);
            b0 = madd_vector(b0, vld1q_f32(x1 + at[0]), w1);
            b1 = madd_vector(b1, vld1q_f32(x1 + at[1]), w1);
            b2 = madd_vector(b2, vld1q_f32(x1 + at[2]), w1);
            b3 = madd_vector(b3, vld1q_f32(x1 + at[3]), w1);
        }
        const size_t last = n - 1 - p; /* stores past the end go to the last output */
        const size_t o1 = (p + at_most4(1, last)) * HALF, o2 = (p + at_most4(2, last)) * HALF;
        const size_t o3 = (p + at_most4(3, last)) * HALF;
        vst1q_f32(out0 + p * HALF, clamp4(a0, vmin, vmax));
        vst1q_f32(out0 + o1, clamp4(a1, vmin, vmax));
        vst1q_f32(out0 + o2, clamp4(a2, vmin, vmax));
        vst1q_f32(out0 + o3, clamp4(a3, vmin, vmax));
        vst1q_f32(out1 + p * HALF, clamp4(b0, vmin, vmax));
        vst1q_f32(out1 + o1, clamp4(b1, vmin, vmax));
        vst1q_f32(out1 + o2, clamp4(b2, vmin, vmax));
        vst1q_f32(out1 + o3, clamp4(b3, vmin, vmax));
    }
}

void EMBER_DWCONV_BLOCKED_NEON_NAME(const ember_f32_dwconv_geometry *g, size_t channels,
                                    const float *in, size_t in_stride, const float *w,
                                    const float *bias, float *out, size_t out_stride,
                                    const ember_f32_dwconv_params *params, float *scratch)
{
    const size_t taps = g->kernel_h * g->kernel_w, out_pixels = g->out_h * g->out_w;
    const size_t width = ember_f32_dwconv_block_width(g);
    const size_t padding = ember_f32_dwconv_padding_floats(g, EMBER_F32_DWCONV_BLOCK);
    float *half0 = scratch, *half1 = scratch + padding / 2, *outputs = scratch + padding;
    float *weights = outputs + out_pixels * 2 * HALF, *biases = weights + taps * 2 * HALF;
    const float *plane[2 * HALF];
    ptrdiff_t offset[EMBER_F32_DWCONV_MAX_TAPS];
    ember_f32_dwconv_block_operands(g, channels, in, in_stride, w, bias, width,
                                    EMBER_F32_DWCONV_BLOCK, HALF, plane, weights, biases,
                                    offset);
    block_in(g, plane, width, half0, half1);
    const float32x4_t vmin = vdupq_n_f32(params->min), vmax = vdupq_n_f32(params->max);
    block_outputs(g, half0, half1, width, taps, offset, weights, biases, outputs,
                  outputs + out_pixels * HALF, vmin, vmax);
    block_out(out_pixels, outputs, outputs + out_pixels * HALF, channels, out, out_stride);
}

#endif /* EMBER_F32_DWCONV_NEON_H */
