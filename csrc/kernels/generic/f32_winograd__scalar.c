/*
 * f32_winograd__scalar — the reference Winograd F(2×2, 3×3) transforms (kernels.h), the
 * loops of f32_winograd__body.h at the baseline flags (vectorised by the compiler where
 * the baseline has vectors: SSE2, aarch64's NEON). The AVX2 build is tested against it.
 */
#include "kernels/f32_winograd__body.h"

EMBER_F32_WINOGRAD_DEFINE(scalar)
