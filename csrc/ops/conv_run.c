/*
 * conv's run (conv.c types and prepares it): per image and group, the path prepare chose:
 * the transposed GEMM of few pixels, Winograd, the implicit GEMM, or im2col blocks (the
 * input itself for pointwise, read in place or packed) through the GEMM, K in slices;
 * depthwise convs and one-pixel convs by their own loops.
 */
#include <math.h>
#include <string.h>

#include "core/shape.h"
#include "ops/conv.h"

static const float *run_bias(conv_prepared *p, const ember_tensor *bias)
{
    if (!p->bias_computed)
        return p->bias;
    const float *b = bias->data;
    const int scalar = ember_shape_count(bias->shape, bias->rank) == 1;
    for (int64_t o = 0; o < p->out_channels; o++)
        p->run_bias[o] = p->bias[o] + b[scalar ? 0 : o];
    return p->run_bias;
}

/* The epilogue of one K slice: the slices after the first accumulate; the last adds the
 * bias and clamps. */
static ember_f32_gemm_params slice_params(const ember_f32_gemm_params *params, int after_first,
                                          int last)
{
    ember_f32_gemm_params slice = *params;
    slice.accumulate |= after_first;
    slice.bias_row = last ? params->bias_row : NULL;
    slice.min = last ? params->min : -INFINITY;
    slice.max = last ? params->max : INFINITY;
    slice.hard_swish = last ? params->hard_swish : NULL;
    return slice;
}

/* One group of one image through the GEMM: transposed for few pixels, Winograd, in place,
 * or over im2col blocks (the input itself for pointwise). A residual is added before the
 * clamp: copied into the output first and accumulated by the GEMM, or by the scratch
 * paths as they copy their result out. The output may be the residual's own bytes (the
 * core places it there when nothing reads the residual after): no copy then, and the
 * scratch paths read each residual element before writing the output's. */
/* The fused prologue's rows from input channel c on (p->prologue.scale not NULL). */
static ember_f32_scaled_rows prologue_from(const conv_prepared *p, int64_t c)
{
    const ember_f32_scaled_rows rows = {p->prologue.scale + c,
                                        p->prologue.shift ? p->prologue.shift + c : NULL,
                                        p->prologue.min, p->prologue.max};
    return rows;
}

static void conv_group(const conv_prepared *p, const float *in, int64_t first_channel,
                       const float *filter, const float *bias, const float *residual,
                       float *out, float *columns)
{
    if (p->few_pixels) {
        ember_f32_scaled_rows rows;
        if (p->prologue.scale != NULL)
            rows = prologue_from(p, first_channel);
        ember_conv_few_pixels_run(p, in, filter, bias, residual, out, columns,
                                  p->prologue.scale != NULL ? &rows : NULL);
        return;
    }
    if (p->winograd) {
        ember_conv_winograd_run(p, in, filter, bias, residual, out, columns);
        return;
    }
    ember_f32_gemm_params params = {
        .bias_row = bias, .min = p->min, .max = p->max, .hard_swish = ember_conv_gate(p)};
    if (p->implicit) {
        ember_conv_implicit_run(p, in, filter, &params, residual, out, columns);
        return;
    }
    if (residual != NULL) {
        if (residual != out)
            memcpy(out, residual, (size_t)(p->group_out * p->out_pixels) * sizeof(float));
        params.accumulate = 1;
    }
    /* C's rows: the group's channels, planes apart, or `shuffle` planes apart shuffled */
    const size_t row_bytes =
        (size_t)p->out_pixels * sizeof(float) * (size_t)(p->shuffle ? p->shuffle : 1);
    const int64_t taps = ember_conv_taps(p);
    float *rows = columns + (size_t)ember_conv_slice_depth(p) * (size_t)p->block;
    for (int64_t j = 0; j < p->out_pixels; j += p->block) {
        const int64_t count = p->out_pixels - j < p->block ? p->out_pixels - j : p->block;
        /* until the last slice; one pass at least: no input channels still write the bias */
        for (int64_t c0 = 0, last = 0; !last; c0 += p->slice_channels) {
            const int64_t channels = ember_conv_slice_width(p, c0);
            const float *slice_in = in + c0 * p->in_pixels;
            const float *filter_slice = filter + ember_conv_slice_offset(p, c0);
            last = c0 + channels >= p->group_in;
            const ember_f32_gemm_params slice = slice_params(&params, c0 > 0, last);
            if (p->pointwise_in_place) {
                ember_conv_pointwise_run(p, channels, slice_in + j, count, filter_slice,
                                         columns, out + j, row_bytes, &slice);
                continue;
            }
            if (p->pointwise && p->prologue.scale != NULL) {
                const ember_f32_scaled_rows rows = prologue_from(p, first_channel + c0);
                p->pack_scaled(p->kernel->nr, (size_t)channels, (size_t)count, slice_in + j,
                               (size_t)p->in_pixels, &rows, columns);
            } else if (p->pointwise) {
                ember_f32_pack_b(p->kernel->nr, (size_t)channels, (size_t)count, slice_in + j,
                                 (size_t)p->in_pixels, 1, columns);
            } else {
                ember_conv_pack_im2col(p, slice_in, channels, j, count, p->kernel->nr, columns,
                                       rows);
            }
            ember_f32_gemm_packed(p->kernel, (size_t)p->group_out, (size_t)count,
                                  (size_t)(channels * taps), filter_slice, columns,
                                  out + j, row_bytes, &slice);
        }
    }
}

void ember_conv_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)node;
    conv_prepared *p = prepared;
    const float *input = io->inputs[CONV_INPUT]->data;
    float *output = io->output->data;
    const float *bias = run_bias(p, io->inputs[CONV_BIAS]);
    if (p->depthwise) {
        const float *filter = p->packed_filter ? p->packed_filter : io->inputs[CONV_FILTER]->data;
        ember_conv_depthwise_run(p, input, filter, bias, output, io->scratch);
        return;
    }
    float *columns = io->scratch;
    const float *filter = p->packed_filter;
    if (filter == NULL) {
        float *packed = (float *)((char *)columns + p->filter_scratch_offset);
        ember_conv_pack_filter(p, io->inputs[CONV_FILTER]->data, packed);
        filter = packed;
    }
    const float *residual = io->residual != NULL ? io->residual->data : NULL;
    if (p->one_pixel) {
        ember_conv_one_pixel_run(p, input, bias, residual, output, columns);
        return;
    }
    for (int64_t n = 0; n < p->batch; n++)
        for (int64_t g = 0; g < p->groups; g++) {
            const int64_t at = (n * p->out_channels + g * p->group_out) * p->out_pixels;
            /* shuffled, the group's first channel is channel g */
            const int64_t to = p->shuffle ? (n * p->out_channels + g) * p->out_pixels : at;
            conv_group(p, input + (n * p->channels + g * p->group_in) * p->in_pixels,
                       g * p->group_in, filter + (size_t)g * p->group_filter_floats,
                       bias + g * p->group_out, residual ? residual + at : NULL, output + to,
                       columns);
        }
}
