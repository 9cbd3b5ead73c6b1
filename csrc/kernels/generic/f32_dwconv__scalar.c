/*
 * f32_dwconv__scalar — the reference depthwise-conv run: the definition in kernels.h,
 * one output at a time, its taps added to the bias in order. Every other f32_dwconv
 * kernel is tested against this one.
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
