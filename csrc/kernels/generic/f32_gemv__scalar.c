/*
 * f32_gemv__scalar — the reference of the f32 GEMV family (a row vector by a packed B),
 * portable C that reads like the definition in kernels.h, for any panel width nr. Every
 * other GEMV kernel is tested against it; it also serves the scalar GEMM kernel.
 */
#include "kernels/kernels.h"

void ember_f32_gemv__scalar(size_t nr, size_t n, size_t k, const float *x, const float *b,
                            float *y, const ember_f32_gemm_params *params)
{
    const float bias_row = params->bias_row ? params->bias_row[0] : 0.0f;
    for (size_t j = 0; j < n; j++) {
        const float *column = b + (j / nr) * nr * k + j % nr;
        float sum = 0.0f;
        for (size_t p = 0; p < k; p++) {
            sum += x[p] * column[p * nr];
        }
        float v = sum + bias_row;
        if (params->bias_col) {
            v += params->bias_col[j];
        }
        if (params->accumulate) {
            v += y[j];
        }
        /* Comparisons (not fminf/fmaxf) so that a NaN stays NaN, as in the SIMD kernels. */
        if (v < params->min) {
            v = params->min;
        }
        if (v > params->max) {
            v = params->max;
        }
        y[j] = v;
    }
}
