/*
 * f32_dwconv__scalar — the reference depthwise-conv runs, generic and 3×3 stride 2, and
 * the blocked planes: the definitions in kernels.h, one output at a time, its taps added
 * to the bias in order (the blocked one reads the planes in place, no scratch).
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

/* One output of a channel of the blocked kernel's definition. */
static float blocked_output(const ember_f32_dwconv_geometry *g, const float *in, const float *w,
                            float bias, size_t r, size_t o)
{
    float acc = bias;
    for (size_t i = 0; i < g->kernel_h; i++) {
        const size_t ih = r * g->stride_h + i * g->dilation_h; /* + pad_top */
        for (size_t j = 0; j < g->kernel_w; j++) {
            const size_t iw = o * g->stride_w + j * g->dilation_w; /* + pad_left */
            const int inside = ih >= g->pad_top && ih - g->pad_top < g->in_h &&
                               iw >= g->pad_left && iw - g->pad_left < g->in_w;
            const float x = inside ? in[(ih - g->pad_top) * g->in_w + iw - g->pad_left] : 0.0f;
            acc += w[i * g->kernel_w + j] * x;
        }
    }
    return acc;
}

void ember_f32_dwconv_blocked__scalar(const ember_f32_dwconv_geometry *g, size_t channels,
                                      const float *in, size_t in_stride, const float *w,
                                      const float *bias, float *out, size_t out_stride,
                                      const ember_f32_dwconv_params *params, float *scratch)
{
    (void)scratch;
    const size_t taps = g->kernel_h * g->kernel_w;
    for (size_t c = 0; c < channels; c++, in += in_stride, w += taps, out += out_stride)
        for (size_t r = 0; r < g->out_h; r++)
            for (size_t o = 0; o < g->out_w; o++) {
                float acc = blocked_output(g, in, w, bias[c], r, o);
                acc = acc < params->min ? params->min : acc;
                out[r * g->out_w + o] = acc > params->max ? params->max : acc;
            }
}
