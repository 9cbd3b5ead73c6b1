/*
 * f32_dwconv_3x3__scalar — reference 3×3 depthwise conv rows, stride 1 and 2: the
 * definition in kernels.h, taps summed row by row. Every other f32_dwconv kernel is
 * tested against this one.
 */
#include "kernels/kernels.h"

static void dwconv_3x3_row(size_t n, size_t s, const float *row0, const float *row1,
                           const float *row2, const float *w, float bias, float *out,
                           const ember_f32_dwconv_params *params)
{
    const float *rows[3] = {row0, row1, row2};
    for (size_t o = 0; o < n; o++) {
        float acc = bias;
        for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++)
                acc += w[3 * ky + kx] * rows[ky][o * s + (size_t)kx];
        acc = acc < params->min ? params->min : acc;
        out[o] = acc > params->max ? params->max : acc;
    }
}

void ember_f32_dwconv_3x3s1__scalar(size_t n, const float *row0, const float *row1,
                                    const float *row2, const float *w, float bias, float *out,
                                    const ember_f32_dwconv_params *params)
{
    dwconv_3x3_row(n, 1, row0, row1, row2, w, bias, out, params);
}

void ember_f32_dwconv_3x3s2__scalar(size_t n, const float *row0, const float *row1,
                                    const float *row2, const float *w, float bias, float *out,
                                    const ember_f32_dwconv_params *params)
{
    dwconv_3x3_row(n, 2, row0, row1, row2, w, bias, out, params);
}
