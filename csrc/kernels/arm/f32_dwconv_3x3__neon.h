/*
 * f32_dwconv_3x3__neon.h — the body of the 3×3 depthwise row kernels, shared by the
 * AArch64 and ARMv7 files: the two ISAs differ only in their multiply-add, which the
 * including file defines as `madd` together with EMBER_DWCONV_NEON_NAME(stride), the
 * kernel names. Included by exactly those two files.
 *
 * Three accumulators (one per input row, summed at the end), taps by scalar operand.
 * Stride 1: the taps of a row are unaligned loads at +0, +1, +2. Stride 2: vld2q splits
 * inputs 2o .. 2o+7 into even (tap 0) and odd (tap 1) columns; tap 2 is the even vector
 * moved down one lane (vext) with input 2o+8 on top, so nothing past (n−1)·2 + 3 is read.
 * Tails (n mod 4 outputs): the scalar recipe, in-kernel. vmax/vmin propagate NaN, as the
 * scalar kernel's compares do.
 */
#ifndef EMBER_F32_DWCONV_3X3_NEON_H
#define EMBER_F32_DWCONV_3X3_NEON_H

#include <arm_neon.h>

#include "kernels/kernels.h"

static inline float tail_output(size_t o, size_t s, const float *const rows[3],
                                const float *w, float bias,
                                const ember_f32_dwconv_params *params)
{
    float acc = bias;
    for (int ky = 0; ky < 3; ky++)
        for (int kx = 0; kx < 3; kx++)
            acc += w[3 * ky + kx] * rows[ky][o * s + (size_t)kx];
    acc = acc < params->min ? params->min : acc;
    return acc > params->max ? params->max : acc;
}

void EMBER_DWCONV_NEON_NAME(s1)(size_t n, const float *row0, const float *row1,
                                const float *row2, const float *w, float bias,
                                float *out, const ember_f32_dwconv_params *params)
{
    const float *const rows[3] = {row0, row1, row2};
    const float32x4_t vmin = vdupq_n_f32(params->min), vmax = vdupq_n_f32(params->max);
    size_t o = 0;
    for (; o + 4 <= n; o += 4) {
        float32x4_t a0 = madd(vdupq_n_f32(bias), vld1q_f32(row0 + o), w[0]);
        float32x4_t a1 = vmulq_n_f32(vld1q_f32(row1 + o), w[3]);
        float32x4_t a2 = vmulq_n_f32(vld1q_f32(row2 + o), w[6]);
        a0 = madd(a0, vld1q_f32(row0 + o + 1), w[1]);
        a1 = madd(a1, vld1q_f32(row1 + o + 1), w[4]);
        a2 = madd(a2, vld1q_f32(row2 + o + 1), w[7]);
        a0 = madd(a0, vld1q_f32(row0 + o + 2), w[2]);
        a1 = madd(a1, vld1q_f32(row1 + o + 2), w[5]);
        a2 = madd(a2, vld1q_f32(row2 + o + 2), w[8]);
        const float32x4_t v = vaddq_f32(vaddq_f32(a0, a1), a2);
        vst1q_f32(out + o, vminq_f32(vmaxq_f32(v, vmin), vmax));
    }
    for (; o < n; o++)
        out[o] = tail_output(o, 1, rows, w, bias, params);
}

static inline float32x4_t row_s2(float32x4_t acc, const float *row, const float *w)
{
    const float32x4x2_t x = vld2q_f32(row); /* row[0 .. 8) */
    acc = madd(acc, x.val[0], w[0]);
    acc = madd(acc, x.val[1], w[1]);
    return madd(acc, vextq_f32(x.val[0], vld1q_dup_f32(row + 8), 1), w[2]);
}

void EMBER_DWCONV_NEON_NAME(s2)(size_t n, const float *row0, const float *row1,
                                const float *row2, const float *w, float bias,
                                float *out, const ember_f32_dwconv_params *params)
{
    const float *const rows[3] = {row0, row1, row2};
    const float32x4_t vmin = vdupq_n_f32(params->min), vmax = vdupq_n_f32(params->max);
    size_t o = 0;
    for (; o + 4 <= n; o += 4) {
        const float32x4_t a0 = row_s2(vdupq_n_f32(bias), row0 + 2 * o, w);
        const float32x4_t a1 = row_s2(vdupq_n_f32(0.0f), row1 + 2 * o, w + 3);
        const float32x4_t a2 = row_s2(vdupq_n_f32(0.0f), row2 + 2 * o, w + 6);
        const float32x4_t v = vaddq_f32(vaddq_f32(a0, a1), a2);
        vst1q_f32(out + o, vminq_f32(vmaxq_f32(v, vmin), vmax));
    }
    for (; o < n; o++)
        out[o] = tail_output(o, 2, rows, w, bias, params);
}

#endif /* EMBER_F32_DWCONV_3X3_NEON_H */
