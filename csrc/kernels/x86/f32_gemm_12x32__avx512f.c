/*
 * f32_gemm_12x32__avx512f — 12 rows × 32 columns, AVX-512F, for the convs whose output
 * channels fill its rows (ember_f32_gemm_for_rows; f32_gemm_avx512f__body.h).
 */
#define MR 12
#define KERNEL(suffix) ember_f32_gemm_12x32__avx512f##suffix
#include "kernels/x86/f32_gemm_avx512f__body.h"
