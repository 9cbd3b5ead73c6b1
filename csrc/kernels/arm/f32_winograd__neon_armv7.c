/*
 * f32_winograd__neon_armv7 — the Winograd F(2×2, 3×3) transforms (kernels.h) in ARMv7 NEON
 * intrinsics, four tiles or filter elements a vector. GCC leaves the plain loops of
 * f32_winograd__body.h scalar on ARMv7 (its NEON flushes subnormals, so it is not IEEE);
 * here the same adds, subtracts and halvings run in the same order, so the results are
 * the scalar kernel's bits but for subnormal values, which flush to zero (as in this
 * build's GEMM kernel). The tails (fewer than four) run the body's loops.
 */
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

/* The input transform of n ≤ WINOGRAD_CHUNK tiles from four padded lines. */
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

void ember_f32_winograd_input__neon_armv7(size_t n, const float *const rows[4], ptrdiff_t x0,
                                          ptrdiff_t width, float *v, size_t v_stride)
{
    for (size_t t0 = 0; t0 < n; t0 += WINOGRAD_CHUNK) {
        const size_t chunk = n - t0 < WINOGRAD_CHUNK ? n - t0 : WINOGRAD_CHUNK;
        float buffers[4][WINOGRAD_LINE];
        const float *lines[4];
        winograd_pass_lines(chunk, rows, x0, width, t0, buffers, lines);
        input_lines(chunk, lines, v + t0, v_stride);
    }
}

void ember_f32_winograd_output__neon_armv7(size_t n, const float *m, size_t m_stride,
                                           float bias, float *y)
{
    const float32x4_t b = vdupq_n_f32(bias);
    size_t t = 0;
    for (; t + 4 <= n; t += 4) {
        float32x4_t s0[4], s1[4]; /* Aᵀ M */
        for (size_t q = 0; q < 4; q++) {
            const float32x4_t m0 = vld1q_f32(m + q * m_stride + t);
            const float32x4_t m1 = vld1q_f32(m + (4 + q) * m_stride + t);
            const float32x4_t m2 = vld1q_f32(m + (8 + q) * m_stride + t);
            const float32x4_t m3 = vld1q_f32(m + (12 + q) * m_stride + t);
            s0[q] = vaddq_f32(vaddq_f32(m0, m1), m2);
            s1[q] = vsubq_f32(vsubq_f32(m1, m2), m3);
        }
        vst1q_f32(y + t, vaddq_f32(vaddq_f32(vaddq_f32(s0[0], s0[1]), s0[2]), b));
        vst1q_f32(y + n + t, vaddq_f32(vsubq_f32(vsubq_f32(s0[1], s0[2]), s0[3]), b));
        vst1q_f32(y + 2 * n + t, vaddq_f32(vaddq_f32(vaddq_f32(s1[0], s1[1]), s1[2]), b));
        vst1q_f32(y + 3 * n + t, vaddq_f32(vsubq_f32(vsubq_f32(s1[1], s1[2]), s1[3]), b));
    }
    /* the tail's four runs are n apart, as the whole's: its tiles one by one */
    for (; t < n; t++) {
        float z[4];
        winograd_output_body(1, m + t, m_stride, bias, z);
        for (size_t r = 0; r < 4; r++)
            y[r * n + t] = z[r];
    }
}

/* 0.5 · (a + b + c) and 0.5 · (a − b + c): G's rows 1 and 2. */
static inline float32x4_t half_sum(float32x4_t a, float32x4_t b, float32x4_t c)
{
    return vmulq_n_f32(vaddq_f32(vaddq_f32(a, b), c), 0.5f);
}

static inline float32x4_t half_difference(float32x4_t a, float32x4_t b, float32x4_t c)
{
    return vmulq_n_f32(vaddq_f32(vsubq_f32(a, b), c), 0.5f);
}

/* One row of (G g) Gᵀ: u[0..3] from the row's three columns. */
static inline void filter_row(float32x4_t a0, float32x4_t a1, float32x4_t a2, float *u,
                              size_t u_stride)
{
    vst1q_f32(u, a0);
    vst1q_f32(u + u_stride, half_sum(a0, a1, a2));
    vst1q_f32(u + 2 * u_stride, half_difference(a0, a1, a2));
    vst1q_f32(u + 3 * u_stride, a2);
}

void ember_f32_winograd_filter__neon_armv7(size_t n, const float *g, float *u,
                                           size_t u_stride)
{
    enum { RUN = EMBER_F32_WINOGRAD_FILTER_RUN };
    for (size_t e0 = 0; e0 < n; e0 += RUN, g += 9 * RUN) {
        const size_t run = n - e0 < RUN ? n - e0 : RUN;
        size_t e = 0;
        for (; e + 4 <= run; e += 4) {
            float32x4_t t[9];
            for (size_t i = 0; i < 9; i++)
                t[i] = vld1q_f32(g + i * RUN + e);
            float32x4_t a[3], b[3]; /* rows 1 and 2 of G g */
            for (size_t j = 0; j < 3; j++) {
                a[j] = half_sum(t[j], t[3 + j], t[6 + j]);
                b[j] = half_difference(t[j], t[3 + j], t[6 + j]);
            }
            float *o = u + e0 + e;
            filter_row(t[0], t[1], t[2], o, u_stride);
            filter_row(a[0], a[1], a[2], o + 4 * u_stride, u_stride);
            filter_row(b[0], b[1], b[2], o + 8 * u_stride, u_stride);
            filter_row(t[6], t[7], t[8], o + 12 * u_stride, u_stride);
        }
        if (e < run) /* the run's tail: its elements from e on are a (shorter) run too */
            winograd_filter_body(run - e, g + e, u + e0 + e, u_stride);
    }
}
