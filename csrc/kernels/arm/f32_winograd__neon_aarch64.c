/*
 * f32_winograd__neon_aarch64 — the Winograd F(2×2, 3×3) transforms (kernels.h) for AArch64
 * NEON: the input transform in the intrinsics of f32_winograd__neon.h; the output and
 * filter transforms are the body's loops, which GCC vectorises here (the intrinsics
 * written for ARMv7 counted more instructions: Inception v2 533.1M against 519.2M).
 */
#include "kernels/arm/f32_winograd__neon.h"

void ember_f32_winograd_input__neon_aarch64(size_t n, const float *const rows[4], ptrdiff_t x0,
                                            ptrdiff_t width, float *v, size_t v_stride)
{
    neon_winograd_input(n, rows, x0, width, v, v_stride);
}

EMBER_F32_WINOGRAD_DEFINE_OUTPUT_FILTER(neon_aarch64)
