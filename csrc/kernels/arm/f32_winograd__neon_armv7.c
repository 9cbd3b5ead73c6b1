/*
 * f32_winograd__neon_armv7 — the Winograd F(2×2, 3×3) transforms (kernels.h) in ARMv7 NEON
 * intrinsics, four tiles or filter elements a vector: the input transform of
 * f32_winograd__neon.h, the output and filter transforms here. GCC leaves the plain loops
 * of f32_winograd__body.h scalar on ARMv7 (its NEON flushes subnormals, so it is not
 * IEEE); here the same adds, subtracts and halvings run in the same order, so the results
 * are the scalar kernel's bits but for subnormal values, which flush to zero (as in this
 * build's GEMM kernel). The tails (fewer than four) run the body's loops.
 */
#include "kernels/arm/f32_winograd__neon.h"

EMBER_F32_WINOGRAD_DEFINE_INPUT(neon_armv7, neon_winograd_input)

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

