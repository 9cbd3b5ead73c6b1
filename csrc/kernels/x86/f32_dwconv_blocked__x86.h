/*
 * The blocked depthwise kernel (f32_dwconv.h) of one x86 ISA, a block of V channels: the
 * V planes transposed into scratch, a pixel's V channels one vector (8 × 8 transposes of
 * runs of 8 pixels of 8 planes), into a zero-padded input block; then each output is
 * Σ_taps w_t · block[pixel + offset_t], one FMA per tap for the V channels, eight outputs
 * a pass so eight chains overlap; then the output block transposed back into the V output
 * planes. The planes are walked as flat runs of pixels, 8 at a time, the last 8 ending at
 * the plane's end (rewriting a few: no mask, no read past the plane); each input pixel
 * goes to its padded position. Every output adds its taps to the bias in order, with the
 * same fused multiply-adds at any V: the AVX2 and AVX-512 kernels give the same bits.
 *
 * Included once by each ISA's f32_dwconv__<isa>.c after it defines:
 *   V, VEC, VEC_LOAD(p), VEC_STORE(p, v)   a vector of the scratch (at most 32-byte aligned)
 *   VEC_FMADD(a, b, c), VEC_CLAMP(v, lo, hi), VEC_SET1(x)
 *   EMBER_DWCONV_BLOCKED_NAME              the kernel's name
 * and at_most(a, last). Runs are 8 pixels at any V, each V / 8 transposes of 8 × 8 (planes
 * 8h .. 8h + 7 into floats 8h .. 8h + 7 of each pixel): AVX-512's in-lane shuffles run on
 * one port of Intel's cores where AVX2's run on two, so a 16 × 16 transpose (64 shuffles
 * for 256 floats) took longer than four 8 × 8 ones (96 for 256): a 3×3 stride-2 conv, 64
 * channels 24² -> 12², 1.23x the time of the AVX2 kernel with it, on an Emerald Rapids.
 */
#ifndef EMBER_F32_DWCONV_BLOCKED_X86_H
#define EMBER_F32_DWCONV_BLOCKED_X86_H

#include "kernels/x86/f32_transpose_8x8__avx.h"

#define RUN 8 /* pixels a transposed run */

/* The V planes' pixels [at, at + 8), transposed: pixel at + k's V channels to to[k]. */
static inline __attribute__((always_inline)) void
transposed_run(const float *const *plane, size_t at, float *const *to)
{
    for (size_t h = 0; h < V; h += 8)
        ember_transpose_8x8_rows(plane + h, at, to, h);
}

/* The 8 pixel vectors at from, transposed: the first `channels` planes' 8 pixels to
 * to + c·out_stride. */
static inline __attribute__((always_inline)) void
transposed_out(const float *from, size_t channels, float *to, size_t out_stride)
{
    for (size_t h = 0; h < channels; h += 8)
        ember_transpose_8x8_out(from + h, V, channels - h < 8 ? channels - h : 8,
                                to + h * out_stride, out_stride);
}

/* The input planes' pixels into the padded block at their (row + pad_top, column +
 * pad_left). Rows of 8 pixels or more go a row at a time, in runs of 8 (the last ending
 * at the row's end, rewriting a few) whose pixels land side by side; narrower rows in
 * runs of 8 across rows (the last ending at the plane's end), each pixel to its place,
 * its row and column counted along: a division per run (two 64-bit divides) took a fifth
 * of the kernel's time on 576 channels at 14×14 -> 7×7. A plane of fewer than 8 pixels
 * goes a float at a time. */
static void block_in(const ember_f32_dwconv_geometry *g, const float *const *plane,
                     size_t width, float *block)
{
    const size_t n = g->in_h * g->in_w;
    float *origin = block + (g->pad_top * width + g->pad_left) * V;
    if (n < RUN) {
        for (size_t p = 0; p < n; p++)
            for (size_t c = 0; c < V; c++)
                origin[((p / g->in_w) * width + p % g->in_w) * V + c] = plane[c][p];
        return;
    }
    float *to[RUN]; /* pixel at + k's place in the block */
    if (g->in_w >= RUN) {
        for (size_t row = 0; row < g->in_h; row++)
            for (size_t c = 0;; c += RUN) {
                const size_t column = c + RUN <= g->in_w ? c : g->in_w - RUN;
                float *const at = origin + (row * width + column) * V;
                for (size_t k = 0; k < RUN; k++)
                    to[k] = at + k * V;
                transposed_run(plane, row * g->in_w + column, to);
                if (column == g->in_w - RUN)
                    break;
            }
        return;
    }
    size_t row = 0, column = 0; /* of pixel p */
    for (size_t p = 0;; p += RUN) {
        const size_t at = p < n - RUN ? p : n - RUN;
        if (at != p) { /* the last run, moved back */
            row = at / g->in_w;
            column = at % g->in_w;
        }
        for (size_t k = 0; k < RUN; k++) {
            to[k] = origin + (row * width + column) * V;
            if (++column == g->in_w) {
                column = 0;
                row++;
            }
        }
        transposed_run(plane, at, to);
        if (at == n - RUN)
            return;
    }
}

/* The output block back into the output planes (the first `channels` of the block). */
static void block_out(size_t n, const float *block, size_t channels, float *out,
                      size_t out_stride)
{
    if (n < RUN) {
        for (size_t p = 0; p < n; p++)
            for (size_t c = 0; c < channels; c++)
                out[c * out_stride + p] = block[p * V + c];
        return;
    }
    for (size_t p = 0;; p += RUN) {
        const size_t at = p < n - RUN ? p : n - RUN;
        transposed_out(block + at * V, channels, out + at, out_stride);
        if (at == n - RUN)
            return;
    }
}

/* The output block: passes of eight outputs in raster order (across rows: a row of 7 or
 * 14 leaves no partial pass but the last, whose outputs past the end repeat the last),
 * eight FMA chains, each tap one FMA of its weights' vector and the output's input pixel
 * at a fixed offset. */
static void block_outputs(const ember_f32_dwconv_geometry *g, const float *block, size_t width,
                          size_t taps, const ptrdiff_t *offset, const float *weights,
                          VEC bias, float *out, VEC vmin, VEC vmax)
{
    const size_t n = g->out_h * g->out_w;
    ember_f32_dwconv_walk walk = ember_f32_dwconv_walk_of(g, width, V);
    for (size_t p = 0; p < n; p += 8) {
        /* the outputs' input pixels, their first taps, one at a time: stored as an array
         * of 8 and read back, the compiler loaded them as one vector, which waited on
         * the 8 stores (a store-forwarding stall each pass) */
        const float *at[8];
        for (int k = 0; k < 8; k++) {
            size_t place;
            ember_f32_dwconv_walk_next(&walk, 1, &place);
            at[k] = block + place;
        }
        VEC c0 = bias, c1 = bias, c2 = bias, c3 = bias;
        VEC c4 = bias, c5 = bias, c6 = bias, c7 = bias;
        for (size_t t = 0; t < taps; t++) {
            const VEC wt = VEC_LOAD(weights + t * V);
            const ptrdiff_t d = offset[t];
            c0 = VEC_FMADD(wt, VEC_LOAD(at[0] + d), c0);
            c1 = VEC_FMADD(wt, VEC_LOAD(at[1] + d), c1);
            c2 = VEC_FMADD(wt, VEC_LOAD(at[2] + d), c2);
            c3 = VEC_FMADD(wt, VEC_LOAD(at[3] + d), c3);
            c4 = VEC_FMADD(wt, VEC_LOAD(at[4] + d), c4);
            c5 = VEC_FMADD(wt, VEC_LOAD(at[5] + d), c5);
            c6 = VEC_FMADD(wt, VEC_LOAD(at[6] + d), c6);
            c7 = VEC_FMADD(wt, VEC_LOAD(at[7] + d), c7);
        }
        const size_t last = n - 1 - p; /* stores past the end go to the last output */
        VEC_STORE(out + (p + 0) * V, VEC_CLAMP(c0, vmin, vmax));
        VEC_STORE(out + (p + at_most(1, last)) * V, VEC_CLAMP(c1, vmin, vmax));
        VEC_STORE(out + (p + at_most(2, last)) * V, VEC_CLAMP(c2, vmin, vmax));
        VEC_STORE(out + (p + at_most(3, last)) * V, VEC_CLAMP(c3, vmin, vmax));
        VEC_STORE(out + (p + at_most(4, last)) * V, VEC_CLAMP(c4, vmin, vmax));
        VEC_STORE(out + (p + at_most(5, last)) * V, VEC_CLAMP(c5, vmin, vmax));
        VEC_STORE(out + (p + at_most(6, last)) * V, VEC_CLAMP(c6, vmin, vmax));
        VEC_STORE(out + (p + at_most(7, last)) * V, VEC_CLAMP(c7, vmin, vmax));
    }
}

void EMBER_DWCONV_BLOCKED_NAME(const ember_f32_dwconv_geometry *g, size_t channels,
                               const float *in, size_t in_stride, const float *w,
                               const float *bias, float *out, size_t out_stride,
                               const ember_f32_dwconv_params *params, float *scratch)
{
    const size_t taps = g->kernel_h * g->kernel_w, out_pixels = g->out_h * g->out_w;
    const size_t width = ember_f32_dwconv_block_width(g);
    float *block = scratch, *outputs = scratch + ember_f32_dwconv_padding_floats(g, V);
    float *weights = outputs + out_pixels * V, *biases = weights + taps * V;
    const float *plane[V];
    ptrdiff_t offset[EMBER_F32_DWCONV_MAX_TAPS];
    ember_f32_dwconv_block_operands(g, channels, in, in_stride, w, bias, width, V, V, plane,
                                    weights, biases, offset);
    block_in(g, plane, width, block);
    const VEC vmin = VEC_SET1(params->min), vmax = VEC_SET1(params->max);
    block_outputs(g, block, width, taps, offset, weights, VEC_LOAD(biases), outputs, vmin,
                  vmax);
    block_out(out_pixels, outputs, channels, out, out_stride);
}

#undef RUN

#endif /* EMBER_F32_DWCONV_BLOCKED_X86_H */
