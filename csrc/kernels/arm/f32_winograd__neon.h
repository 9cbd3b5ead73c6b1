/*
 * f32_winograd__neon.h — the Winograd F(2×2, 3×3) input transform (kernels.h) in NEON
 * intrinsics, four tiles a vector, for f32_winograd__neon_armv7.c and
 * f32_winograd__neon_aarch64.c: vld2q splits a row's even and odd columns, and d B and
 * Bᵀ (d B) stay in registers. The same adds and subtracts run in the same order as the
 * body's loops (f32_winograd__body.h), so the results are the scalar kernel's bits (on
 * ARMv7 but for subnormal values, which its NEON flushes to zero, as in that build's GEMM
 * kernel). The tails (fewer than four tiles) run the body's loops. On AArch64, where GCC
 * vectorises the body's loops but takes the row transforms through a stack buffer, this
 * took Inception v2 from 529.2M to 519.2M instructions (Cortex-A76, arm_icount).
 */
#ifndef EMBER_F32_WINOGRAD_NEON_H
#define EMBER_F32_WINOGRAD_NEON_H

#include <arm_neon.h>

#include "kernels/f32_winograd__body.h"

/* d B of four tiles of one input row: their 4×4 patches' columns q = 0..3 of the row. */
static inline void row_transform(const float *line, float32x4_t r[4])
{
    const float32x4x2_t lo = vld2q_f32(line);     /* columns 2t, 2t + 1 */
    const float32x4x2_t hi = vld2q_f32(line + 2); /* columns 2t + 2, 2t + 3 */
    r[0] = vsubq_f32(lo.val[0], hi.val[0]);
    r[1] = vaddq_f32(lo.val[1], hi.val[0]);
    r[2] = vsubq_f32(hi.val[0], lo.val[1]);
    r[3] = vsubq_f32(lo.val[1], hi.val[1]);
}

/* The input transform of n tiles from four lines (tile t's patch at lines[i][2t ..]). */
static void input_lines(size_t n, const float *const lines[4], float *v, size_t v_stride)
{
    size_t t = 0;
    for (; t + 4 <= n; t += 4) {
        float32x4_t r[4][4]; /* [input row][column q of d B] */
        for (size_t i = 0; i < 4; i++)
            row_transform(lines[i] + 2 * t, r[i]);
        for (size_t q = 0; q < 4; q++) { /* Bᵀ (d B), column q */
            vst1q_f32(v + q * v_stride + t, vsubq_f32(r[0][q], r[2][q]));
            vst1q_f32(v + (4 + q) * v_stride + t, vaddq_f32(r[1][q], r[2][q]));
            vst1q_f32(v + (8 + q) * v_stride + t, vsubq_f32(r[2][q], r[1][q]));
            vst1q_f32(v + (12 + q) * v_stride + t, vsubq_f32(r[1][q], r[3][q]));
        }
    }
    if (t < n) {
        const float *const tail[4] = {lines[0] + 2 * t, lines[1] + 2 * t, lines[2] + 2 * t,
                                      lines[3] + 2 * t};
        winograd_input_lines(n - t, tail, v + t, v_stride);
    }
}

static void neon_winograd_input(size_t n, const float *const rows[4], ptrdiff_t x0,
                                ptrdiff_t width, float *v, size_t v_stride)
{
    if (winograd_rows_inside(n, rows, x0, width)) { /* padded lines: all n at once */
        const float *const lines[4] = {rows[0] + x0, rows[1] + x0, rows[2] + x0, rows[3] + x0};
        input_lines(n, lines, v, v_stride);
        return;
    }
    winograd_input_by_lines(n, rows, x0, width, v, v_stride, input_lines);
}

#endif /* EMBER_F32_WINOGRAD_NEON_H */
