/*
 * conv: N-d convolution in NCHW, through the f32 GEMM.
 *
 * Per batch item and group g, with K = C/groups × prod(kernel):
 *
 *     Out[o][pixel] = bias[o] + Σ_k W[o][k] · col[k][pixel]
 *
 * where col[k][pixel] is the input value tap k reads for output pixel `pixel` (0 in
 * the padding). W is the GEMM's A operand, packed once at prepare; col is the B operand,
 * built straight into the packed panel layout per call ("im2col + pack" in one pass),
 * a block of output pixels at a time so the scratch stays bounded (about
 * IM2COL_BLOCK_BYTES) whatever the image size. A 1×1, stride-1, unpadded conv needs no
 * im2col: the input plane of each channel already is a row of B, and is packed as is.
 * Other 2-d convs build no im2col where the kernel reads B in place and that pays
 * (conv_implicit.c); convs of a few output pixels run the GEMM transposed
 * (conv_few_pixels.c, and one_pixel here); depthwise convs are direct
 * (conv_depthwise.c).
 *
 * The bias (and any per-channel add, residual add or clamp fused by the core) is the GEMM
 * epilogue, or applied by the depthwise loop; a fused hard swish follows, over each piece
 * of output as its path writes it (ember_conv_hard_swish).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"
#include "core/op.h"
#include "core/shape.h"
#include "ops/conv.h"
#include "ops/ops.h"

/* Target size of one block of packed im2col columns: fits L2 beside the packed filter. */
#define IM2COL_BLOCK_BYTES (128 * 1024)
#define IM2COL_MIN_PANELS 4
#define IM2COL_MAX_BLOCK_BYTES (512 * 1024)
/* A group's packed filter past this does not stay in L2 beside a block: the GEMM streams
 * it from farther once per block of columns, so such convs take blocks of
 * IM2COL_MAX_BLOCK_BYTES, a quarter of the passes over it (AlexNet's and ZFNet's 3×3
 * convs at 13×13, SqueezeNet's classifier, 1×1 512 -> 1000 at 13×13: one block instead
 * of three). x86, one process alternating runs: ZFNet 0.90x the time, AlexNet 0.92x,
 * SqueezeNet 0.975x (its classifier 0.84x), VGG19 0.99x, the other models within noise;
 * at 1 MiB SqueezeNet, ResNet50 and VGG19 gained alike, AlexNet not. */
#define IM2COL_FILTER_STREAMED_BYTES (512 * 1024)
/* The K of the im2col and pointwise GEMMs is cut into depth / SLICE_DEPTH slices of whole
 * input channels (each SLICE_DEPTH to 2·SLICE_DEPTH − 1 deep, unless one channel's taps are
 * more). In one piece, a deep K left room in L2 for a block of a few panels only, and the
 * whole packed filter was re-read from memory for each: VGG19's 3×3 512 -> 512 convs at
 * 28×28 (K = 4608) took 16-pixel blocks, re-reading 9.4 MB of filter 49 times. Sliced, a
 * block's columns are built and multiplied one slice at a time, accumulating into the
 * output; the block is sized by the slice. VGG19 on x86, one process preparing both and
 * alternating runs (8 rounds): median 622 -> 535 ms (with the doubled block below);
 * ResNet50 (1.00x) and Inception v2 (1.01x) unchanged within noise. On aarch64
 * (Cortex-A76 count) the 28×28 conv takes 561.4M -> 566.2M instructions, its output
 * re-read per slice (the count cannot see the memory traffic saved, which boards
 * without an L3 feel most). */
#define SLICE_DEPTH 384
/* Geometry attributes (stride, dilation, padding) beyond this are surely malformed; the
 * bound keeps every product of two of them far from int64 overflow. */
#define MAX_GEOMETRY ((int64_t)1 << 30)

typedef struct conv_attributes {
    int64_t padding_before[MAX_SPATIAL], padding_after[MAX_SPATIAL];
    int padding_count; /* 0: NNEF automatic "same" padding */
    int64_t stride[MAX_SPATIAL];
    int stride_count;
    int64_t dilation[MAX_SPATIAL];
    int dilation_count;
    int64_t groups;    /* 0: depthwise */
    /* Resolved by infer, from the input shape. */
    int spatial;
    int64_t resolved_groups;
    int depthwise;     /* one input channel per group, several groups: the direct loops */
    int64_t pad_before[MAX_SPATIAL], pad_after[MAX_SPATIAL];
    int64_t resolved_stride[MAX_SPATIAL], resolved_dilation[MAX_SPATIAL];
} conv_attributes;

/* ---------------------------------------------------------------- attributes */

static ember_status conv_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                               void **out)
{
    conv_attributes *a = calloc(1, sizeof *a);
    if (a == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = a;
    const char *border;
    ember_status status = ember_attr_string(node, "border", attrs[3], "constant", &border);
    if (status == EMBER_OK && strcmp(border, "constant") != 0)
        return ember_node_error(node, EMBER_ERROR_UNSUPPORTED,
                                "border '%s': only 'constant' (zero padding) is supported",
                                border);
    if (status == EMBER_OK)
        status = ember_attr_padding(node, "padding", attrs[4], a->padding_before,
                                    a->padding_after, MAX_SPATIAL, &a->padding_count);
    if (status == EMBER_OK)
        status = ember_attr_int_list(node, "stride", attrs[5], a->stride, MAX_SPATIAL,
                                     &a->stride_count);
    if (status == EMBER_OK)
        status = ember_attr_int_list(node, "dilation", attrs[6], a->dilation, MAX_SPATIAL,
                                     &a->dilation_count);
    if (status == EMBER_OK)
        status = ember_attr_int(node, "groups", attrs[7], 1, &a->groups);
    if (status == EMBER_OK && (a->groups < 0 || a->groups > MAX_GEOMETRY))
        return ember_node_error(node, EMBER_ERROR_INVALID, "groups = %lld", (long long)a->groups);
    return status;
}

/* ---------------------------------------------------------------- shape rule */

/* stride/dilation: [] means all 1; otherwise one positive entry per spatial dim. */
static ember_status resolve_steps(const ember_node *node, const char *name, const int64_t *given,
                                  int count, int spatial, int64_t *resolved)
{
    if (count != 0 && count != spatial)
        return ember_node_error(node, EMBER_ERROR_INVALID,
                                "%s has %d entries for %d spatial dims", name, count, spatial);
    for (int d = 0; d < spatial; d++) {
        resolved[d] = count ? given[d] : 1;
        if (resolved[d] < 1 || resolved[d] > MAX_GEOMETRY)
            return ember_node_error(node, EMBER_ERROR_INVALID, "%s[%d] = %lld", name, d,
                                    (long long)resolved[d]);
    }
    return EMBER_OK;
}

/* Output extent of one spatial dim, resolving NNEF automatic padding when asked. */
static ember_status output_extent(const ember_node *node, conv_attributes *a, int d,
                                  int64_t in, int64_t k, int64_t *out)
{
    const int64_t s = a->resolved_stride[d], dil = a->resolved_dilation[d];
    if (k - 1 > (INT64_MAX / 4) / dil)
        return ember_node_error(node, EMBER_ERROR_INVALID, "kernel extent overflows");
    const int64_t window = (k - 1) * dil + 1;
    if (a->padding_count == 0) {
        /* NNEF "same": out = ceil(in / stride), the padding split evenly, extra after. */
        const int64_t o = (in + s - 1) / s;
        int64_t total = (o - 1) * s + window - in;
        if (total < 0)
            total = 0;
        a->pad_before[d] = total / 2;
        a->pad_after[d] = total - total / 2;
    } else {
        a->pad_before[d] = a->padding_before[d];
        a->pad_after[d] = a->padding_after[d];
        if (a->pad_before[d] > MAX_GEOMETRY || a->pad_after[d] > MAX_GEOMETRY)
            return ember_node_error(node, EMBER_ERROR_INVALID, "padding too large");
    }
    const int64_t padded = in + a->pad_before[d] + a->pad_after[d];
    if (padded < window)
        return ember_node_error(node, EMBER_ERROR_INVALID,
                                "spatial dim %d: padded input extent %lld is smaller than the "
                                "dilated kernel extent %lld", d, (long long)padded,
                                (long long)window);
    *out = (padded - window) / s + 1;
    return EMBER_OK;
}

static ember_status conv_infer(ember_node *node, const ember_value *const *inputs,
                               ember_value *output)
{
    conv_attributes *a = node->attributes;
    const ember_value *x = inputs[CONV_INPUT], *w = inputs[CONV_FILTER], *b = inputs[CONV_BIAS];
    char xs[EMBER_SHAPE_TEXT], ws[EMBER_SHAPE_TEXT];
    for (int i = 0; i < 3; i++)
        if (inputs[i]->datum_type != EMBER_F32)
            return ember_node_error(node, EMBER_ERROR_UNSUPPORTED,
                                    "input %d ('%s') is %s; conv computes in f32", i,
                                    inputs[i]->name, ember_datum_type_name(inputs[i]->datum_type));
    ember_shape_format(x->shape, x->rank, xs, sizeof xs);
    ember_shape_format(w->shape, w->rank, ws, sizeof ws);
    if (x->rank < 3 || w->rank != x->rank)
        return ember_node_error(node, EMBER_ERROR_INVALID,
                                "input %s and filter %s: expected [N, C, spatial…] and "
                                "[O, C/groups, kernel…] of the same rank ≥ 3", xs, ws);
    const int64_t channels = x->shape[1], out_channels = w->shape[0];
    a->spatial = x->rank - 2;
    a->resolved_groups = a->groups == 0 ? channels : a->groups;
    a->depthwise = a->resolved_groups > 1 && channels == a->resolved_groups;
    const int64_t g = a->resolved_groups;
    if (g < 1 || channels % g != 0 || out_channels % g != 0 || w->shape[1] * g != channels)
        return ember_node_error(node, EMBER_ERROR_INVALID,
                                "input %s, filter %s and groups = %lld disagree: the filter "
                                "must be [O, C/groups, …] with C and O multiples of groups",
                                xs, ws, (long long)g);
    /* A kernel extent of 0 has no window: output sizes would come out larger than
     * the input, a silent wrong answer rather than an error. */
    for (int d = 0; d < a->spatial; d++)
        if (w->shape[2 + d] < 1)
            return ember_node_error(node, EMBER_ERROR_INVALID,
                                    "filter %s: kernel extent %d is %lld, must be at least 1",
                                    ws, d, (long long)w->shape[2 + d]);
    if (a->padding_count != 0 && a->padding_count != a->spatial)
        return ember_node_error(node, EMBER_ERROR_INVALID,
                                "padding has %d entries for %d spatial dims", a->padding_count,
                                a->spatial);
    ember_status status = resolve_steps(node, "stride", a->stride, a->stride_count, a->spatial,
                                        a->resolved_stride);
    if (status == EMBER_OK)
        status = resolve_steps(node, "dilation", a->dilation, a->dilation_count, a->spatial,
                               a->resolved_dilation);
    output->datum_type = EMBER_F32;
    output->rank = x->rank;
    output->shape[0] = x->shape[0];
    output->shape[1] = out_channels;
    for (int d = 0; d < a->spatial && status == EMBER_OK; d++)
        status = output_extent(node, a, d, x->shape[2 + d], w->shape[2 + d],
                               &output->shape[2 + d]);
    if (status != EMBER_OK)
        return status;
    const int64_t bias_count = ember_shape_count(b->shape, b->rank);
    const int per_channel = (b->rank == 1 && b->shape[0] == out_channels) ||
                            (b->rank == 2 && b->shape[0] == 1 && b->shape[1] == out_channels);
    if (bias_count != 1 && !per_channel) {
        char bs[EMBER_SHAPE_TEXT];
        return ember_node_error(node, EMBER_ERROR_INVALID,
                                "bias %s: expected a scalar, [%lld] or [1, %lld]",
                                ember_shape_format(b->shape, b->rank, bs, sizeof bs),
                                (long long)out_channels, (long long)out_channels);
    }
    return EMBER_OK;
}

/* The GEMM paths add a residual (the direct depthwise loops do not). */
static int conv_accepts_residual(const ember_node *node)
{
    return !((const conv_attributes *)node->attributes)->depthwise;
}

/* Every path applies a hard swish to what it has just written (ember_conv_hard_swish). */
static int conv_accepts_hard_swish(const ember_node *node)
{
    (void)node;
    return 1;
}

/* A channel shuffle in as many groups as the conv has: each group's GEMM stores its rows
 * a plane · groups apart from plane g on (conv_group), so only the paths whose output is
 * the GEMM's C take it (conv_prepare keeps a shuffled conv on them), and nothing is
 * applied after the GEMM: no residual, gate or hard swish. */
static int conv_accepts_shuffle(const ember_node *node, const ember_epilogue *epilogue,
                                int64_t groups)
{
    const conv_attributes *a = node->attributes;
    return !a->depthwise && a->resolved_groups == groups && groups > 1 &&
           epilogue->residual < 0 && epilogue->gate < 0 && !epilogue->hard_swished;
}

/* A scale before the conv on its input's channels (op.h's prologue): a 1×1 conv, stride 1,
 * unpadded, not depthwise. It applies it to each block of its input as it packs it (the
 * pointwise path: B read in place takes it packed instead, the same sums in the same
 * order), or few pixels, to a scaled copy that it then packs (ember_conv_prologue_prepare). */
static int conv_accepts_prologue(const ember_model *model, const ember_node *node,
                                 const ember_epilogue *epilogue, const ember_prologue *prologue)
{
    (void)epilogue;
    (void)prologue; /* along the input's channels or a single item (ember_scale_prologue) */
    const conv_attributes *a = node->attributes;
    const ember_value *w = ember_node_input(model, node, CONV_FILTER);
    if (a->depthwise)
        return 0;
    for (int d = 0; d < a->spatial; d++)
        if (w->shape[2 + d] != 1 || a->resolved_stride[d] != 1 || a->pad_before[d] != 0 ||
            a->pad_after[d] != 0)
            return 0;
    return 1;
}

static int conv_accepts_bias_axis(const ember_model *model, const ember_node *node,
                                  const ember_value *output, int axis)
{
    (void)model;
    (void)node;
    (void)output;
    return axis == 1;
}

/* ---------------------------------------------------------------- prepare */
/* conv_prepared: ops/conv.h */

static void conv_free(void *p)
{
    conv_prepared *prepared = p;
    if (prepared == NULL)
        return;
    free(prepared->bias);
    free(prepared->run_bias);
    free(prepared->tap_range);
    free(prepared->pixel_taps);
    free(prepared->b_offsets);
    free(prepared->prologue_items);
    free(prepared);
}

/* Input channels per K slice (see SLICE_DEPTH): the slices as even as whole channels
 * make them. */
static int64_t slice_channels(const conv_prepared *p)
{
    const int64_t slices = p->depth / SLICE_DEPTH;
    if (slices <= 1)
        return p->group_in;
    return (p->group_in + slices - 1) / slices;
}

static void conv_geometry(conv_prepared *p, const ember_node *node, const ember_value *x,
                          const ember_value *w, const ember_value *y)
{
    const conv_attributes *a = node->attributes;
    p->spatial = a->spatial;
    p->batch = x->shape[0];
    p->channels = x->shape[1];
    p->out_channels = y->shape[1];
    p->groups = a->resolved_groups;
    p->group_in = p->channels / p->groups;
    p->group_out = p->out_channels / p->groups;
    p->in_pixels = p->out_pixels = 1;
    p->pointwise = 1;
    for (int d = 0; d < p->spatial; d++) {
        p->in_dims[d] = x->shape[2 + d];
        p->out_dims[d] = y->shape[2 + d];
        p->kernel_dims[d] = w->shape[2 + d];
        p->stride[d] = a->resolved_stride[d];
        p->dilation[d] = a->resolved_dilation[d];
        p->pad_before[d] = a->pad_before[d];
        p->in_pixels *= p->in_dims[d];
        p->out_pixels *= p->out_dims[d];
        p->pointwise &= p->kernel_dims[d] == 1 && p->stride[d] == 1 && a->pad_before[d] == 0 &&
                        a->pad_after[d] == 0;
    }
    p->depth = p->group_in * ember_conv_taps(p);
    ember_shape_strides(p->in_dims, p->spatial, p->in_strides);
    /* one input channel per group, and groups: a single-channel input (audio, a gray
     * image; silero's STFT is 258 filters of 256 taps) is a plain GEMM, not 258 planes
     * of per-tap loops */
    p->depthwise = p->group_in == 1 && p->groups > 1;
}

static ember_status conv_bias(conv_prepared *p, const ember_prepare_context *ctx,
                              const ember_value *b)
{
    const size_t count = (size_t)p->out_channels + 1;
    p->bias_computed = b->constant == NULL;
    p->bias = calloc(count, sizeof(float));
    /* a computed bias is added to the constant part at each run, into a second row */
    p->run_bias = p->bias_computed ? calloc(count, sizeof(float)) : NULL;
    if (p->bias == NULL || (p->bias_computed && p->run_bias == NULL))
        return ember_node_error(ctx->node, EMBER_ERROR_MEMORY, "out of memory");
    const int scalar = ember_shape_count(b->shape, b->rank) == 1;
    for (int64_t o = 0; o < p->out_channels && !p->bias_computed; o++)
        p->bias[o] = ((const float *)b->constant)[scalar ? 0 : o];
    if (ctx->epilogue->bias != NULL)
        for (int64_t o = 0; o < p->out_channels; o++)
            p->bias[o] += ctx->epilogue->bias[o];
    return EMBER_OK;
}

/* The im2col path's scratch: a block of packed columns, then (2-d, not pointwise) the
 * rows of one channel's taps that are packed into it. */
static size_t im2col_floats(const conv_prepared *p)
{
    return (size_t)ember_conv_slice_depth(p) * (size_t)p->block +
           (p->pointwise ? 0 : ember_conv_im2col_rows_floats(p));
}

static ember_status conv_prepare(ember_prepare_context *ctx, void **out)
{
    const ember_model *model = ctx->model;
    const ember_node *node = ctx->node;
    const ember_value *x = ember_node_input(model, node, CONV_INPUT);
    const ember_value *w = ember_node_input(model, node, CONV_FILTER);
    const ember_value *y = &model->values[node->output];
    conv_prepared *p = calloc(1, sizeof *p);
    if (p == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = p;
    p->kernel = ctx->kernels->f32_gemm;
    p->core = ctx->kernels->core;
    p->min = ctx->epilogue->min;
    p->max = ctx->epilogue->max;
    p->shuffle = ctx->epilogue->shuffle_groups;
    if (ctx->epilogue->hard_swished) {
        p->gate = ctx->epilogue->hard_swish;
        p->gate.apply = ctx->kernels->f32_hard_swish->fn;
    }
    conv_geometry(p, node, x, w, y);
    ember_status status = ember_conv_prologue_prepare(p, ctx);
    if (status != EMBER_OK)
        return status;

    if (p->depthwise) { /* reads the filter in its plan layout: copied, not packed */
        status = ember_conv_depthwise_prepare(p, ctx->kernels->f32_dwconv, node,
                                              &ctx->scratch_bytes);
        if (status == EMBER_OK && w->constant != NULL)
            status = ember_conv_own_filter(p, ctx, node, w, 'D', 0,
                                           (size_t)ember_shape_count(w->shape, w->rank) *
                                               sizeof(float));
        if (status != EMBER_OK)
            return status;
        ctx->packed_bytes += 2 * (size_t)p->out_channels * sizeof(float);
        return conv_bias(p, ctx, ember_node_input(model, node, CONV_BIAS));
    }
    /* before the path is chosen: the paths' costs and the filter's packing take its mr */
    p->kernel = ember_f32_gemm_for_rows(p->kernel, (size_t)p->group_out);
    status = ember_conv_tap_ranges(p, node);
    if (status != EMBER_OK)
        return status;
    const size_t nr = p->kernel->nr;
    p->slice_channels = slice_channels(p);
    const int64_t depth = ember_conv_slice_depth(p) > 0 ? ember_conv_slice_depth(p) : 1; /* no channels: 0 */
    /* a filter past L2: the largest blocks (above); sliced, twice the bytes: the block's
     * filter slices stream from memory once per block, and its output stays in L2 across
     * the slices (VGG19's 28×28 convs: 0.92x the time with 128 KiB blocks, one process
     * alternating runs; shallower convs within noise either way) */
    const int64_t group_filter = p->group_out * p->depth * (int64_t)sizeof(float);
    const int64_t budget = group_filter > IM2COL_FILTER_STREAMED_BYTES ? IM2COL_MAX_BLOCK_BYTES
                           : p->slice_channels < p->group_in ? 2 * IM2COL_BLOCK_BYTES
                                                             : IM2COL_BLOCK_BYTES;
    int64_t block = budget / (int64_t)sizeof(float) / depth;
    block = block / (int64_t)nr * (int64_t)nr;
    /* up to IM2COL_MIN_PANELS panels, within IM2COL_MAX_BLOCK_BYTES: packing costs per
     * tap and per block, and a deep conv's one-panel blocks made that cost twice the
     * GEMM's (a 3x3 conv 128 -> 32 at 56x56 on x86: 7.8 -> 6.6 ms with 4 panels) */
    int64_t roomy =
        IM2COL_MAX_BLOCK_BYTES / (int64_t)sizeof(float) / depth;
    roomy = roomy / (int64_t)nr * (int64_t)nr;
    if (roomy > IM2COL_MIN_PANELS * (int64_t)nr)
        roomy = IM2COL_MIN_PANELS * (int64_t)nr;
    if (block < roomy)
        block = roomy;
    const int64_t all = (p->out_pixels + (int64_t)nr - 1) / (int64_t)nr * (int64_t)nr;
    p->block = block < all ? block : all;
    if ((uint64_t)depth > (uint64_t)(SIZE_MAX / 8) / sizeof(float) / (uint64_t)p->block)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "im2col block too large");

    /* a shuffled conv stays on the im2col / pointwise GEMMs (conv_accepts_shuffle), one
     * with a prologue on the packed pointwise or few-pixel ones (conv_accepts_prologue) */
    p->one_pixel = !p->shuffle && p->out_pixels == 1 && !p->pointwise && w->constant != NULL;
    const int few_pixels_pay = !p->shuffle && !p->one_pixel && w->constant != NULL &&
                               ember_conv_few_pixels_pays(p);
    p->winograd = !p->shuffle && w->constant != NULL &&
                  ember_conv_winograd_pays(p, few_pixels_pay);
    p->few_pixels = few_pixels_pay && !p->winograd;
    const int filter_as_b = p->one_pixel || p->few_pixels; /* the transposed GEMMs */
    p->group_filter_floats = p->winograd ? ember_conv_winograd_filter_floats(p)
        : filter_as_b
        ? ember_f32_packed_b_floats(p->kernel->nr, (size_t)p->depth, (size_t)p->group_out)
        : ember_f32_packed_a_floats(p->kernel->mr, (size_t)p->group_out, (size_t)p->depth);
    const size_t filter_bytes = (size_t)p->groups * p->group_filter_floats * sizeof(float);
    ctx->scratch_bytes = p->few_pixels ? ember_conv_few_pixels_scratch(p)
                                       : im2col_floats(p) * sizeof(float);
    if (p->winograd)
        ember_conv_winograd_prepare(p, ctx->kernels->f32_winograd, &ctx->scratch_bytes);
    else if (!p->few_pixels && !p->shuffle && p->prologue.scale == NULL &&
             (status = ember_conv_implicit_prepare(p, node, ctx->epilogue->residual >= 0,
                                                   &ctx->scratch_bytes)) != EMBER_OK)
        return status;
    if ((status = ember_conv_pointwise_prepare(p, node)) != EMBER_OK)
        return status;
    if (p->implicit || filter_as_b || p->winograd) /* these read the filter packed whole */
        p->slice_channels = p->group_in;
    if (p->one_pixel) { /* the pixel's taps gathered as a one-row A */
        ctx->scratch_bytes = ember_f32_packed_a_floats(p->kernel->mr, 1, (size_t)p->depth) *
                             sizeof(float);
        if ((status = ember_conv_pixel_taps(p, node)) != EMBER_OK)
            return status;
    }
    if (w->constant != NULL) {
        const int64_t form = p->winograd ? 'W' : filter_as_b ? 'B' : 'C';
        status = ember_conv_own_filter(p, ctx, node, w, form,
                                       (int64_t)(filter_as_b ? p->kernel->nr : p->kernel->mr),
                                       filter_bytes);
        if (status != EMBER_OK)
            return status;
    } else { /* packed per run, after the im2col block or the implicit band */
        p->filter_scratch_offset = (ctx->scratch_bytes + 63) / 64 * 64;
        ctx->scratch_bytes = p->filter_scratch_offset + filter_bytes;
    }
    ctx->packed_bytes += 2 * (size_t)p->out_channels * sizeof(float);
    return conv_bias(p, ctx, ember_node_input(model, node, CONV_BIAS));
}

/* The form prepare chose, as profiles name it (ember_node_profile.form). */
static const char *conv_form(const void *prepared)
{
    const conv_prepared *p = prepared;
    if (p->depthwise)
        return ember_conv_depthwise_form(p);
    if (p->winograd)
        return "winograd";
    if (p->one_pixel)
        return "one_pixel";
    if (p->few_pixels)
        return "few_pixels";
    if (p->pointwise)
        return p->pointwise_in_place ? "pointwise_in_place" : "pointwise";
    return p->implicit ? "implicit" : "im2col";
}

/* ---------------------------------------------------------------- descriptor */

static const ember_op_param conv_params[] = {
    {"input", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"filter", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"bias", EMBER_PARAM_TENSOR, 1, 0.0f},
    {"border", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"padding", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"stride", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"dilation", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"groups", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};

const ember_op ember_op_conv = {.name = "conv", .flags = EMBER_OP_FUSES_EPILOGUE,
    .params = conv_params, .param_count = 8, .parse = conv_parse, .infer = conv_infer,
    .accepts_bias_axis = conv_accepts_bias_axis, .accepts_residual = conv_accepts_residual,
    .accepts_hard_swish = conv_accepts_hard_swish, .accepts_shuffle = conv_accepts_shuffle,
    .accepts_prologue = conv_accepts_prologue, .prepare = conv_prepare,
    .run = ember_conv_run, .free_prepared = conv_free, .form = conv_form};
