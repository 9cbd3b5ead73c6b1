/*
 * f32_hard_swish__scalar — the reference hard-swish epilogue (kernels.h): a multiply, an
 * add, the clamp by comparisons (a NaN fails both and stays NaN) and a multiply, each
 * rounded on its own (-std=c11 contracts nothing into an FMA), as the plan's unfused mul,
 * add, clamp and mul. The compiler vectorises it where the baseline has IEEE vectors
 * (SSE2, aarch64's NEON); armv7, whose NEON flushes subnormals, keeps it scalar.
 */
#include "kernels/kernels.h"

void ember_f32_hard_swish__scalar(size_t rows, size_t n, float *y, size_t row_stride,
                                  const ember_f32_hard_swish *gate)
{
    const float alpha = gate->alpha, beta = gate->beta, lo = gate->lo, hi = gate->hi;
    for (size_t r = 0; r < rows; r++) {
        float *row = (float *)((char *)y + r * row_stride);
        for (size_t j = 0; j < n; j++) {
            float t = row[j] * alpha + beta;
            t = t < lo ? lo : t;
            t = t > hi ? hi : t;
            row[j] *= t;
        }
    }
}
