/*
 * f32_gemm_8x32__avx512f — 8 rows × 32 columns, AVX-512F: the default GEMM kernel of an
 * AVX-512 machine (f32_gemm_avx512f__body.h).
 */
#define MR 8
#define KERNEL(suffix) ember_f32_gemm_8x32__avx512f##suffix
#include "kernels/x86/f32_gemm_avx512f__body.h"
