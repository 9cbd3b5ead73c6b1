/*
 * Depthwise convolutions for conv.c (one input channel per group): direct, not through the
 * GEMM, where they would be a 1-row product wasting all but one row of every tile. 2-d
 * 3×3 ones of stride 1 or 2 copy each input plane into a zero-padded plane (scratch) and
 * go row by row through the f32_dwconv kernels; the others accumulate one tap at a time
 * over the output range that tap keeps inside the input.
 */
#include <string.h>

#include "ops/conv.h"

/* One output plane of a depthwise conv: out = clamp(bias + Σ_taps w·in). Rows are the
 * output positions sharing all coordinates but the last. */
static void depthwise_plane(const conv_prepared *p, const float *in, const float *taps,
                            float bias, float *out)
{
    const int last = p->spatial - 1;
    const int64_t row_length = p->out_dims[last], rows = p->out_pixels / row_length;
    const int64_t s = p->stride[last];
    int64_t kpos[MAX_SPATIAL] = {0};
    for (int64_t j = 0; j < p->out_pixels; j++)
        out[j] = bias;
    for (int64_t t = 0; t < p->depth; t++) {
        const float w = taps[t];
        const int64_t offset = kpos[last] * p->dilation[last] - p->pad_before[last];
        int64_t lo, hi;
        ember_conv_valid_range(offset, s, p->in_dims[last], row_length, &lo, &hi);
        int64_t coord[MAX_SPATIAL] = {0};
        for (int64_t r = 0; r < rows && lo <= hi; r++) {
            int inside = 1;
            int64_t base = offset;
            for (int d = 0; d < last; d++) {
                const int64_t i = coord[d] * p->stride[d] + kpos[d] * p->dilation[d] -
                                  p->pad_before[d];
                inside &= i >= 0 && i < p->in_dims[d];
                base += i * p->in_strides[d];
            }
            /* Pointers start at the first valid position: `in + base` alone may point
             * before the plane, which C does not allow even unread. */
            const int64_t n = hi - lo + 1;
            float *restrict dst = out + r * row_length + lo;
            const float *restrict src = inside ? in + base + lo * s : in;
            if (inside && s == 1) {
                for (int64_t o = 0; o < n; o++)
                    dst[o] += w * src[o];
            } else if (inside) {
                for (int64_t o = 0; o < n; o++)
                    dst[o] += w * src[o * s];
            }
            for (int d = last - 1; d >= 0; d--) { /* next row */
                if (++coord[d] < p->out_dims[d])
                    break;
                coord[d] = 0;
            }
        }
        for (int d = last; d >= 0; d--) { /* next tap */
            if (++kpos[d] < p->kernel_dims[d])
                break;
            kpos[d] = 0;
        }
    }
    for (int64_t j = 0; j < p->out_pixels; j++) {
        const float v = out[j] < p->min ? p->min : out[j];
        out[j] = v > p->max ? p->max : v;
    }
}

/*
 * One output plane of a 2-d 3×3 depthwise conv of stride s ∈ {1, 2} through the
 * f32_dwconv row kernel. The input plane is copied into a zero-padded plane (scratch,
 * whose borders the caller zeroed once per run and no plane writes), so every output
 * row is one kernel call over the whole row: no border cases, and rows as long as possible
 * for the vector body (the small planes of mobile nets are 7 to 56 wide).
 */
static void depthwise_3x3_plane(const conv_prepared *p, const float *in, const float *taps,
                                float bias, float *out, float *padded)
{
    const int64_t s = p->stride[1], in_h = p->in_dims[0], in_w = p->in_dims[1];
    const int64_t out_h = p->out_dims[0], out_w = p->out_dims[1], pw = p->padded_w;
    for (int64_t y = 0; y < in_h; y++)
        memcpy(padded + (p->pad_before[0] + y) * pw + p->pad_before[1], in + y * in_w,
               (size_t)in_w * sizeof(float));
    const ember_f32_dwconv_params params = {p->min, p->max};
    for (int64_t oh = 0; oh < out_h; oh++) {
        const float *row = padded + oh * s * pw;
        p->dw_row((size_t)out_w, row, row + pw, row + 2 * pw, taps, bias, out + oh * out_w,
                  &params);
    }
}

void ember_conv_depthwise_run(const conv_prepared *p, const float *input, const float *filter,
                              const float *bias, float *output, float *scratch)
{
    if (p->dw_row)
        memset(scratch, 0, (size_t)p->padded_h * (size_t)p->padded_w * sizeof(float));
    for (int64_t n = 0; n < p->batch; n++)
        for (int64_t o = 0; o < p->out_channels; o++) {
            const float *in = input + (n * p->channels + o / p->group_out) * p->in_pixels;
            float *out = output + (n * p->out_channels + o) * p->out_pixels;
            if (p->dw_row)
                depthwise_3x3_plane(p, in, filter + o * p->depth, bias[o], out, scratch);
            else
                depthwise_plane(p, in, filter + o * p->depth, bias[o], out);
        }
}
