/*
 * f32_hard_swish__scalar — the reference hard-swish epilogue (kernels.h): each value
 * through ember_f32_hard_swish_of, a multiply, an add, the clamp and a multiply, each
 * rounded on its own as the plan's unfused mul, add, clamp and mul. The compiler vectorises it where the baseline has IEEE vectors
 * (SSE2, aarch64's NEON); armv7, whose NEON flushes subnormals, keeps it scalar.
 */
#include "kernels/kernels.h"

void ember_f32_hard_swish__scalar(size_t rows, size_t n, float *y, size_t row_stride,
                                  const ember_f32_hard_swish *gate)
{
    const ember_f32_hard_swish g = *gate; /* held: the rows may alias it for all C knows */
    for (size_t r = 0; r < rows; r++) {
        float *row = (float *)((char *)y + r * row_stride);
        for (size_t j = 0; j < n; j++)
            row[j] = ember_f32_hard_swish_of(row[j], &g);
    }
}
