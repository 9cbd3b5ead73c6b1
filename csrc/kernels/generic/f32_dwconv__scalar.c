/*
 * f32_dwconv__scalar — the reference depthwise-conv runs, generic and 3×3 stride 2: the
 * definitions in kernels.h, one output at a time, its taps added to the bias in order.
 * Every other f32_dwconv kernel is tested against these; the vector ones also call the
 * 3×3 stride-2 run here for runs shorter than a vector.
 */
#include "kernels/kernels.h"

void ember_f32_dwconv__scalar(size_t n, size_t taps, const float *const *src, const float *w,
                              float bias, float *out, const ember_f32_dwconv_params *params)
{
    for (size_t o = 0; o < n; o++) {
        float acc = bias;
        for (size_t t = 0; t < taps; t++)
            acc += w[t] * src[t][o];
        acc = acc < params->min ? params->min : acc; /* NaN passes both compares */
        out[o] = acc > params->max ? params->max : acc;
    }
}

void ember_f32_dwconv_3x3s2__scalar(size_t n, const float *const *row, const float *w,
                                    float bias, float *out, const ember_f32_dwconv_params *params)
{
    for (size_t o = 0; o < n; o++) {
        float acc = bias;
        for (size_t r = 0; r < 3; r++)
            for (size_t c = 0; c < 3; c++)
                acc += w[3 * r + c] * row[r][2 * o + c];
        acc = acc < params->min ? params->min : acc;
        out[o] = acc > params->max ? params->max : acc;
    }
}
