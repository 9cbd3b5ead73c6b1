/*
 * f32_winograd__neon_aarch64 — the Winograd F(2×2, 3×3) transforms (kernels.h) for AArch64
 * NEON: the input transform in the intrinsics of f32_winograd__neon.h; the output and
 * filter transforms are the body's loops, which GCC vectorises here (the intrinsics
 * written for ARMv7 counted more instructions: Inception v2 533.1M against 519.2M).
 */
#include "kernels/arm/f32_winograd__neon.h"

EMBER_F32_WINOGRAD_DEFINE_INPUT(neon_aarch64, neon_winograd_input)
EMBER_F32_WINOGRAD_DEFINE_OUTPUT_FILTER(neon_aarch64)
