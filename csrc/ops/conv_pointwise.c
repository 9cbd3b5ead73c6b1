/*
 * Pointwise convs (1×1, stride 1, unpadded) with B read in place for conv.c: the input
 * planes are B's rows already, so where few row tiles read them, the GEMM's indirect
 * kernel reads them where they are (row c at in + c · in_pixels) instead of a packed
 * copy of each block.
 */
#include <stdint.h>
#include <stdlib.h>

#include "ops/conv.h"

/*
 * Whether a pointwise conv reads its B in place (the indirect kernel, row c of B at
 * in + c · in_pixels) rather than packing it block by block. Packing copies K floats per
 * column, once for every row tile that multiplies them; in place, every tile loads a row
 * pointer per k step and reads B from K planes a plane apart, which costs more the more
 * row tiles read it. So it pays for few output channels: a linear bottleneck's
 * projection. x86 AVX2 (Zen 3, node times of two runnables alternated, packed -> in
 * place): MobileNetV2's 144 -> 24 at 56×56 0.84x the time, 96 -> 24 0.89x, 192 -> 32 at
 * 28×28 0.81-0.85x, 144 -> 32 0.88x, Inception v2's 192 -> 32 at 28×28 0.81x; but 8 row
 * tiles and more lost (384 -> 48 at 13×13 1.15x, 384 -> 64 at 14×14 1.13x, 24 -> 144 at
 * 56×56 1.09x), and so did a K of 32 (32 -> 16 at 112×112, 1.09x: the shallow walk's
 * spans of B, packed, stay in L1 whole). The planes must be whole cache lines (tensors
 * start on one in the arena), so that a 16-float row of B is one line, not two: with
 * 27×27 planes (729 floats) Inception v1's 192 -> 16, 192 -> 32 and 256 -> 32 took
 * 1.09-1.10x, SqueezeNet's 128 -> 32 and 256 -> 32 0.99-1.02x; the rule gives up its
 * 128 -> 16 and 64 -> 16 at 55×55 (3025 floats), which gained 0.87-0.95x. K stays within one pass of the
 * in-place walk, so the sums run in the packed form's order: the same bits. On aarch64
 * the count moved by 0.06% at most (Cortex-A76, every such conv in place: SqueezeNet
 * 117.12M -> 117.05M, MobileNetV2 126.98M -> 127.00M): the copies saved cost about as
 * many instructions as the row pointers.
 */
#define POINTWISE_IN_PLACE_MAX_ROW_TILES 6
#define POINTWISE_IN_PLACE_MIN_DEPTH 64

static int in_place_pays(const conv_prepared *p)
{
    const int64_t mr = (int64_t)p->kernel->mr;
    return p->pointwise && p->kernel->indirect != NULL && !p->few_pixels &&
           p->prologue.scale == NULL &&
           (p->group_out + mr - 1) / mr <= POINTWISE_IN_PLACE_MAX_ROW_TILES &&
           p->depth >= POINTWISE_IN_PLACE_MIN_DEPTH &&
           p->depth <= EMBER_F32_GEMM_INDIRECT_PASS && p->in_pixels * sizeof(float) % 64 == 0 &&
           p->in_pixels <= INT32_MAX / p->depth;
}

ember_status ember_conv_pointwise_prepare(conv_prepared *p, const ember_node *node)
{
    if (!in_place_pays(p))
        return EMBER_OK;
    p->b_offsets = malloc((size_t)p->group_in * sizeof *p->b_offsets);
    if (p->b_offsets == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    for (int64_t c = 0; c < p->group_in; c++)
        p->b_offsets[c] = (int32_t)(c * p->in_pixels);
    p->pointwise_in_place = 1;
    return EMBER_OK;
}

ember_status ember_conv_prologue_prepare(conv_prepared *p, const ember_prepare_context *ctx)
{
    const ember_prologue *pro = &ctx->epilogue->prologue;
    if (pro->scale == NULL)
        return EMBER_OK;
    const size_t channels = (size_t)p->channels;
    p->prologue_items = malloc(2 * channels * sizeof(float) + sizeof(float));
    if (p->prologue_items == NULL)
        return ember_node_error(ctx->node, EMBER_ERROR_MEMORY, "out of memory");
    float *scale = p->prologue_items, *shift = scale + channels;
    for (size_t c = 0; c < channels; c++) {
        scale[c] = pro->scale[pro->scale_count == 1 ? 0 : c];
        shift[c] = pro->shift != NULL ? pro->shift[pro->shift_count == 1 ? 0 : c] : 0.0f;
    }
    p->pack_scaled = ctx->kernels->f32_pack_scaled->fn;
    p->prologue = (ember_f32_scaled_rows){
        .scale = scale, .shift = pro->shift != NULL ? shift : NULL, .min = pro->min,
        .max = pro->max};
    return EMBER_OK;
}

/* A block of one K slice: its whole column tiles straight from the input planes, the last
 * partial tile, which would read past them, packed into `columns` (AVX-512's 32 columns
 * over planes of 16-float multiples). */
void ember_conv_pointwise_run(const conv_prepared *p, int64_t channels, const float *in,
                              int64_t count, const float *filter, float *columns, float *out,
                              size_t row_bytes, const ember_f32_gemm_params *slice)
{
    const int64_t nr = (int64_t)p->kernel->nr, whole = count / nr * nr;
    if (whole > 0)
        ember_f32_gemm_indirect(p->kernel, (size_t)p->group_out, (size_t)whole,
                                (size_t)channels, filter, in, p->b_offsets, out, row_bytes,
                                slice);
    if (whole < count) {
        ember_f32_pack_b((size_t)nr, (size_t)channels, (size_t)(count - whole), in + whole,
                         (size_t)p->in_pixels, 1, columns);
        ember_f32_gemm_packed(p->kernel, (size_t)p->group_out, (size_t)(count - whole),
                              (size_t)channels, filter, columns, out + whole, row_bytes, slice);
    }
}

