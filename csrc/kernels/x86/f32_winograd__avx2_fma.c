/*
 * f32_winograd__avx2_fma — the Winograd F(2×2, 3×3) transforms of f32_winograd__body.h
 * built for AVX2 (eight floats a vector where the baseline build has four: the input
 * and output transforms took a quarter of a 3×3 256 -> 256 conv at 14×14 with SSE2).
 * Adds and subtracts only, so its bits are the reference's (tests/c/test_winograd.c).
 */
#include "kernels/f32_winograd__body.h"

EMBER_F32_WINOGRAD_DEFINE(avx2_fma)
