/*
 * f32_gemm_4x4__scalar — the reference micro-kernel of the f32 GEMM family.
 *
 * Portable C that reads like the definition in kernels.h; every other kernel of the
 * family is tested against it. Its 4×4 tile keeps 16 accumulators, which compilers map
 * to registers on every target, so it is also a usable fallback, not just a reference.
 * Its in-place form (B row p at b + offsets[p]) shares the body.
 */
#include "kernels/kernels.h"

enum { MR = 4, NR = 4 };

static void tile(size_t m, size_t n, size_t k, const float *a, const float *b,
                 const int32_t *offsets, float *c, size_t c_row_stride,
                 const ember_f32_gemm_params *params)
{
    float acc[MR][NR] = {{0.0f}};
    for (size_t p = 0; p < k; p++) {
        const float *b_row = offsets ? b + offsets[p] : b + p * NR;
        for (size_t i = 0; i < MR; i++) {
            for (size_t j = 0; j < NR; j++) {
                acc[i][j] += a[p * MR + i] * b_row[j];
            }
        }
    }

    for (size_t i = 0; i < m; i++) {
        float *c_row = (float *)((char *)c + i * c_row_stride);
        const float bias_i = params->bias_row ? params->bias_row[i] : 0.0f;
        for (size_t j = 0; j < n; j++) {
            float v = acc[i][j] + bias_i;
            if (params->bias_col) {
                v += params->bias_col[j];
            }
            if (params->accumulate) {
                v += c_row[j];
            }
            /* Comparisons (not fminf/fmaxf) so that a NaN stays NaN, as in the SIMD kernels. */
            if (v < params->min) {
                v = params->min;
            }
            if (v > params->max) {
                v = params->max;
            }
            c_row[j] = params->hard_swish ? ember_f32_hard_swish_of(v, params->hard_swish) : v;
        }
    }
}

void ember_f32_gemm_4x4__scalar(size_t m, size_t n, size_t k, const float *a, const float *b,
                                float *c, size_t c_row_stride,
                                const ember_f32_gemm_params *params)
{
    tile(m, n, k, a, b, NULL, c, c_row_stride, params);
}

void ember_f32_gemm_4x4__scalar_indirect(size_t m, size_t n, size_t k, const float *a,
                                         const float *b, const int32_t *offsets, float *c,
                                         size_t c_row_stride,
                                         const ember_f32_gemm_params *params)
{
    tile(m, n, k, a, b, offsets, c, c_row_stride, params);
}
