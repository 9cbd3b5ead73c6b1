/*
 * f32_gemm_one_row__neon.h — the one-row tile (M = 1: a recurrent step, a one-frame
 * layer) shared by the AArch64 and ARMv7 GEMM kernels: the other rows' multiply-adds
 * would be wasted, and one row's two accumulators would make their latency the bound,
 * so k is unrolled by 4 into 8 accumulators. The including kernel defines MR and NR
 * (NR = 8: two q registers per row) and one_row_madd(acc, b, a) = acc + b·a (vfmaq_n_f32
 * on AArch64, vmlaq_n_f32 on ARMv7, which has no fused form), and B_ROW(b, offsets, p):
 * row p of B, packed (offsets NULL) or in place.
 */
#ifndef EMBER_F32_GEMM_ONE_ROW_NEON_H
#define EMBER_F32_GEMM_ONE_ROW_NEON_H

static inline __attribute__((always_inline)) void
one_row(size_t k, const float *a, const float *b, const int32_t *offsets, float32x4_t *lo,
        float32x4_t *hi)
{
    float32x4_t l0 = vdupq_n_f32(0.0f), h0 = l0, l1 = l0, h1 = l0, l2 = l0, h2 = l0;
    float32x4_t l3 = l0, h3 = l0;
    size_t p = 0;
    for (; p + 4 <= k; p += 4, a += 4 * MR) {
        const float *b0 = B_ROW(b, offsets, p), *b1 = B_ROW(b, offsets, p + 1);
        const float *b2 = B_ROW(b, offsets, p + 2), *b3 = B_ROW(b, offsets, p + 3);
        l0 = one_row_madd(l0, vld1q_f32(b0), a[0]);
        h0 = one_row_madd(h0, vld1q_f32(b0 + 4), a[0]);
        l1 = one_row_madd(l1, vld1q_f32(b1), a[MR]);
        h1 = one_row_madd(h1, vld1q_f32(b1 + 4), a[MR]);
        l2 = one_row_madd(l2, vld1q_f32(b2), a[2 * MR]);
        h2 = one_row_madd(h2, vld1q_f32(b2 + 4), a[2 * MR]);
        l3 = one_row_madd(l3, vld1q_f32(b3), a[3 * MR]);
        h3 = one_row_madd(h3, vld1q_f32(b3 + 4), a[3 * MR]);
    }
    for (; p < k; p++, a += MR) {
        const float *bp = B_ROW(b, offsets, p);
        l0 = one_row_madd(l0, vld1q_f32(bp), a[0]);
        h0 = one_row_madd(h0, vld1q_f32(bp + 4), a[0]);
    }
    *lo = vaddq_f32(vaddq_f32(l0, l1), vaddq_f32(l2, l3));
    *hi = vaddq_f32(vaddq_f32(h0, h1), vaddq_f32(h2, h3));
}

#endif /* EMBER_F32_GEMM_ONE_ROW_NEON_H */
