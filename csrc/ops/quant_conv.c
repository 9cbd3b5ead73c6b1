/*
 * Integer convolutions, NCHW with any number of spatial dims (ember extensions,
 * docs/plan-format.md):
 *
 *   ember_conv_integer(input, filter, x_zero_point = 0, w_zero_point = 0,
 *                      padding = [], stride = [], dilation = [], groups = 1)       → i32
 *       Y = conv(X - x_zero, W - w_zero[o]), padded cells contributing 0
 *   ember_qlinear_conv(input, x_scale, x_zero_point, filter, w_scale, w_zero_point,
 *                      y_scale, y_zero_point, bias = 0, padding = [], stride = [],
 *                      dilation = [], groups = 1, to = "u8")                     → i8/u8
 *       acc = conv(…) + bias[o] (i32); mult[o] = x_scale · w_scale[o] / y_scale (f32,
 *       each operation rounded); Y = saturate(rint(acc · mult[o] + y_zero)), in double
 *
 * X and W are i8 or u8. The geometry attributes are conv's (csrc/ops/conv.c): padding
 * [] is NNEF's automatic "same", groups = 0 means depthwise.
 *
 * The reference loop keeps the data in its integer type: for each output channel, it
 * accumulates one filter tap at a time, over the box of output positions that tap keeps
 * inside the input (computed once per tap, so the inner loop is a bounds-free
 * multiply-add along the last spatial dim). Accumulation is 32-bit with wrap-around.
 */
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"
#include "core/op.h"
#include "core/shape.h"
#include "ops/ops.h"
#include "ops/quant.h"

#define MAX_SPATIAL (EMBER_MAX_RANK - 2)
/* Geometry attributes beyond this are surely malformed; the bound keeps every product
 * of two of them far from int64 overflow. */
#define MAX_GEOMETRY ((int64_t)1 << 30)

enum { INTEGER, QLINEAR };

/* Tensor slots of each variant (-1: absent). */
typedef struct slots {
    int x, w, x_zero, w_zero, x_scale, w_scale, y_scale, y_zero, bias, first_attribute;
} slots;

static const slots integer_slots = {0, 1, 2, 3, -1, -1, -1, -1, -1, 4};
static const slots qlinear_slots = {0, 3, 2, 5, 1, 4, 6, 7, 8, 9};

typedef struct qconv_attributes {
    int64_t padding_before[MAX_SPATIAL], padding_after[MAX_SPATIAL];
    int padding_count; /* 0: automatic "same" */
    int64_t stride[MAX_SPATIAL], dilation[MAX_SPATIAL];
    int stride_count, dilation_count;
    int64_t groups;
    ember_datum_type to;
    /* Resolved by infer. */
    int spatial;
    int64_t resolved_groups;
    int64_t pad_before[MAX_SPATIAL], step[MAX_SPATIAL], dil[MAX_SPATIAL];
} qconv_attributes;

static const slots *slots_of(const ember_node *node)
{
    return node->op->variant == QLINEAR ? &qlinear_slots : &integer_slots;
}

static ember_status qconv_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                                void **out)
{
    qconv_attributes *a = calloc(1, sizeof *a);
    if (a == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = a;
    const int at = slots_of(node)->first_attribute;
    ember_status status = ember_attr_padding(node, "padding", attrs[at], a->padding_before,
                                             a->padding_after, MAX_SPATIAL, &a->padding_count);
    if (status == EMBER_OK)
        status = ember_attr_int_list(node, "stride", attrs[at + 1], a->stride, MAX_SPATIAL,
                                     &a->stride_count);
    if (status == EMBER_OK)
        status = ember_attr_int_list(node, "dilation", attrs[at + 2], a->dilation, MAX_SPATIAL,
                                     &a->dilation_count);
    if (status == EMBER_OK)
        status = ember_attr_int(node, "groups", attrs[at + 3], 1, &a->groups);
    if (status == EMBER_OK && (a->groups < 0 || a->groups > MAX_GEOMETRY))
        return ember_node_error(node, EMBER_ERROR_INVALID, "groups = %lld", (long long)a->groups);
    a->to = EMBER_I32;
    if (status == EMBER_OK && node->op->variant == QLINEAR) {
        static const ember_datum_type eight[] = {EMBER_I8, EMBER_U8};
        status = ember_quant_attr_type(node, "to", attrs[at + 4], EMBER_U8, eight, 2, &a->to);
    }
    return status;
}

/* Output extent of spatial dim d (conv's rule, resolving automatic padding). */
static ember_status output_extent(const ember_node *node, qconv_attributes *a, int d, int64_t in,
                                  int64_t k, int64_t *out)
{
    const int64_t s = a->step[d], dil = a->dil[d];
    const int64_t window = (k - 1) * dil + 1;
    int64_t before, after;
    if (a->padding_count == 0) {
        const int64_t o = (in + s - 1) / s;
        int64_t total = (o - 1) * s + window - in;
        if (total < 0)
            total = 0;
        before = total / 2;
        after = total - before;
    } else {
        before = a->padding_before[d];
        after = a->padding_after[d];
        if (before < 0 || after < 0 || before > MAX_GEOMETRY || after > MAX_GEOMETRY)
            return ember_node_error(node, EMBER_ERROR_INVALID, "padding (%lld, %lld) on spatial "
                                    "dim %d", (long long)before, (long long)after, d);
    }
    a->pad_before[d] = before;
    if (in + before + after < window)
        return ember_node_error(node, EMBER_ERROR_INVALID,
                                "spatial dim %d: padded input extent %lld is smaller than the "
                                "dilated kernel extent %lld", d,
                                (long long)(in + before + after), (long long)window);
    *out = (in + before + after - window) / s + 1;
    return EMBER_OK;
}

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

static ember_status check_parameters(ember_node *node, const ember_value *const *inputs,
                                     const ember_value *x, const ember_value *w)
{
    const slots *s = slots_of(node);
    const qconv_attributes *a = node->attributes;
    const int64_t out_channels = w->shape[0];
    int per_axis;
    ember_status status = ember_quant_check_zero_point(node, "x zero point", inputs[s->x_zero],
                                                       x->datum_type);
    if (status == EMBER_OK)
        status = ember_quant_check_count(node, "x zero point", inputs[s->x_zero], 1, &per_axis);
    if (status == EMBER_OK)
        status = ember_quant_check_zero_point(node, "w zero point", inputs[s->w_zero],
                                              w->datum_type);
    if (status == EMBER_OK)
        status = ember_quant_check_count(node, "w zero point", inputs[s->w_zero], out_channels,
                                         &per_axis);
    if (status != EMBER_OK || node->op->variant != QLINEAR)
        return status;
    const struct { int slot; const char *what; int64_t count; } scales[] = {
        {s->x_scale, "x scale", 1}, {s->w_scale, "w scale", out_channels},
        {s->y_scale, "y scale", 1}};
    for (int i = 0; i < 3 && status == EMBER_OK; i++) {
        status = ember_quant_check_scale(node, scales[i].what, inputs[scales[i].slot]);
        if (status == EMBER_OK)
            status = ember_quant_check_count(node, scales[i].what, inputs[scales[i].slot],
                                             scales[i].count, &per_axis);
    }
    if (status == EMBER_OK)
        status = ember_quant_check_zero_point(node, "y zero point", inputs[s->y_zero], a->to);
    if (status == EMBER_OK)
        status = ember_quant_check_count(node, "y zero point", inputs[s->y_zero], 1, &per_axis);
    const ember_value *bias = inputs[s->bias];
    int64_t low, high;
    if (status == EMBER_OK && bias->datum_type != EMBER_I32 &&
        !(bias->datum_type == EMBER_F32 && bias->constant != NULL))
        return ember_node_error(node, EMBER_ERROR_UNSUPPORTED, "bias '%s' is %s, expected i32",
                                bias->name, ember_datum_type_name(bias->datum_type));
    if (status == EMBER_OK && bias->datum_type == EMBER_F32) {
        /* A literal: integers within i32. */
        ember_quant_range(EMBER_I32, &low, &high);
        const int64_t n = ember_shape_count(bias->shape, bias->rank);
        for (int64_t i = 0; i < n; i++) {
            const double v = ((const float *)bias->constant)[i];
            if (!(v >= (double)low && v <= (double)high && v == (double)(int64_t)v))
                return ember_node_error(node, EMBER_ERROR_INVALID,
                                        "bias '%s' holds %g, not an i32 value", bias->name, v);
        }
    }
    if (status == EMBER_OK)
        status = ember_quant_check_count(node, "bias", bias, out_channels, &per_axis);
    return status;
}

static ember_status qconv_infer(ember_node *node, const ember_value *const *inputs,
                                ember_value *output)
{
    qconv_attributes *a = node->attributes;
    const slots *s = slots_of(node);
    const ember_value *x = inputs[s->x], *w = inputs[s->w];
    char xs[EMBER_SHAPE_TEXT], ws[EMBER_SHAPE_TEXT];
    ember_shape_format(x->shape, x->rank, xs, sizeof xs);
    ember_shape_format(w->shape, w->rank, ws, sizeof ws);
    for (int i = 0; i < 2; i++) {
        const ember_value *v = i ? w : x;
        if (v->datum_type != EMBER_I8 && v->datum_type != EMBER_U8)
            return ember_node_error(node, EMBER_ERROR_UNSUPPORTED,
                                    "%s '%s' is %s, expected i8 or u8", i ? "filter" : "input",
                                    v->name, ember_datum_type_name(v->datum_type));
    }
    if (x->rank < 3 || w->rank != x->rank)
        return ember_node_error(node, EMBER_ERROR_INVALID,
                                "input %s and filter %s: expected [N, C, spatial…] and "
                                "[O, C/groups, kernel…] of the same rank ≥ 3", xs, ws);
    const int64_t channels = x->shape[1], out_channels = w->shape[0];
    a->spatial = x->rank - 2;
    a->resolved_groups = a->groups == 0 ? channels : a->groups;
    const int64_t g = a->resolved_groups;
    if (g < 1 || channels % g != 0 || out_channels % g != 0 || w->shape[1] * g != channels)
        return ember_node_error(node, EMBER_ERROR_INVALID,
                                "input %s, filter %s and groups = %lld disagree: the filter "
                                "must be [O, C/groups, …] with C and O multiples of groups",
                                xs, ws, (long long)g);
    for (int d = 0; d < a->spatial; d++)
        if (w->shape[2 + d] < 1 || w->shape[2 + d] > MAX_GEOMETRY)
            return ember_node_error(node, EMBER_ERROR_INVALID,
                                    "filter %s: kernel extent %d is %lld", ws, d,
                                    (long long)w->shape[2 + d]);
    if (a->padding_count != 0 && a->padding_count != a->spatial)
        return ember_node_error(node, EMBER_ERROR_INVALID, "padding has %d entries for %d "
                                "spatial dims", a->padding_count, a->spatial);
    ember_status status = resolve_steps(node, "stride", a->stride, a->stride_count, a->spatial,
                                        a->step);
    if (status == EMBER_OK)
        status = resolve_steps(node, "dilation", a->dilation, a->dilation_count, a->spatial,
                               a->dil);
    output->datum_type = a->to;
    output->rank = x->rank;
    output->shape[0] = x->shape[0];
    output->shape[1] = out_channels;
    for (int d = 0; d < a->spatial && status == EMBER_OK; d++)
        status = output_extent(node, a, d, x->shape[2 + d], w->shape[2 + d],
                               &output->shape[2 + d]);
    if (status == EMBER_OK)
        status = check_parameters(node, inputs, x, w);
    return status;
}

/* Scratch: the group's input channels centred as i16 (x - x_zero: the inner loop then
 * is a same-width multiply-add, which compilers vectorise), then for QLinear an i32
 * accumulator plane. */
static size_t scratch_layout(int64_t cg, int64_t in_plane, int64_t out_plane, int qlinear,
                             size_t *plane_at)
{
    const size_t centred = (size_t)(cg * in_plane) * sizeof(int16_t);
    *plane_at = (centred + 63) / 64 * 64;
    return *plane_at + (qlinear ? (size_t)out_plane * sizeof(int32_t) : 0);
}

static ember_status qconv_prepare(ember_prepare_context *ctx, void **out)
{
    const slots *s = slots_of(ctx->node);
    const ember_value *x = ember_node_input(ctx->model, ctx->node, (size_t)s->x);
    const ember_value *w = ember_node_input(ctx->model, ctx->node, (size_t)s->w);
    const ember_value *y = &ctx->model->values[ctx->node->output];
    size_t plane_at;
    ctx->scratch_bytes = scratch_layout(w->shape[1], ember_shape_count(x->shape + 2, x->rank - 2),
                                        ember_shape_count(y->shape + 2, y->rank - 2),
                                        ctx->node->op->variant == QLINEAR, &plane_at);
    *out = NULL;
    return EMBER_OK;
}

/* plane[0 … n) += wv · x[0, step, 2·step …), wrapping in 32 bits. Unit strides go by
 * blocks of 8: fixed-length loops of same-width integers vectorise even at -O2. */
static void row_tap(uint32_t *restrict plane, const int16_t *restrict x, int64_t step,
                    int64_t n, int32_t wv)
{
    int64_t i = 0;
    if (step == 1) {
        for (; i + 8 <= n; i += 8)
            for (int k = 0; k < 8; k++)
                plane[i + k] += (uint32_t)(x[i + k] * wv);
        for (; i < n; i++)
            plane[i] += (uint32_t)(x[i] * wv);
        return;
    }
    for (; i < n; i++)
        plane[i] += (uint32_t)(x[i * step] * wv);
}

/* The group's cg input planes of batch item b, minus the zero point, as i16. */
static void centre_group(const ember_tensor *x, const uint8_t *channels, int64_t count,
                         int32_t xz, int16_t *out)
{
    if (x->datum_type == EMBER_I8)
        for (int64_t i = 0; i < count; i++)
            out[i] = (int16_t)((const int8_t *)channels)[i] - (int16_t)xz;
    else
        for (int64_t i = 0; i < count; i++)
            out[i] = (int16_t)(channels[i] - xz);
}

/* One (batch item, output channel) plane: Σ over the group's input channels and taps. */
static void accumulate_plane(const qconv_attributes *a, const ember_tensor *x,
                             const ember_tensor *w, const int16_t *x_channels, int64_t o,
                             int32_t wz, const int64_t *out_shape, uint32_t *plane)
{
    const int sp = a->spatial;
    const int64_t cg = w->shape[1];
    const int64_t taps = ember_shape_count(w->shape + 2, sp);
    const int64_t in_plane = ember_shape_count(x->shape + 2, sp);
    const int64_t out_plane = ember_shape_count(out_shape, sp);
    int64_t in_strides[MAX_SPATIAL], out_strides[MAX_SPATIAL];
    ember_shape_strides(x->shape + 2, sp, in_strides);
    ember_shape_strides(out_shape, sp, out_strides);
    memset(plane, 0, (size_t)out_plane * sizeof *plane);
    const int w_signed = w->datum_type == EMBER_I8;
    for (int64_t c = 0; c < cg; c++) {
        const int16_t *xc = x_channels + c * in_plane;
        for (int64_t t = 0; t < taps; t++) {
            const int64_t wi = (o * cg + c) * taps + t;
            const int32_t wv = (w_signed ? (int32_t)((const int8_t *)w->data)[wi]
                                         : (int32_t)((const uint8_t *)w->data)[wi]) - wz;
            if (wv == 0)
                continue;
            /* The tap's kernel index, its input offset per dim and its valid output box. */
            int64_t lo[MAX_SPATIAL] = {0}, hi[MAX_SPATIAL] = {0}, offset[MAX_SPATIAL] = {0};
            int64_t rest = t, empty = 0;
            for (int d = sp - 1; d >= 0; d--) {
                const int64_t k = rest % w->shape[2 + d];
                rest /= w->shape[2 + d];
                offset[d] = k * a->dil[d] - a->pad_before[d];
                const int64_t s = a->step[d], extent = x->shape[2 + d];
                lo[d] = offset[d] >= 0 ? 0 : (-offset[d] + s - 1) / s;
                hi[d] = extent - 1 - offset[d] < 0 ? -1 : (extent - 1 - offset[d]) / s;
                if (hi[d] > out_shape[d] - 1)
                    hi[d] = out_shape[d] - 1;
                empty |= lo[d] > hi[d];
            }
            if (empty)
                continue;
            const int last = sp - 1;
            const int64_t n = hi[last] - lo[last] + 1;
            int64_t index[MAX_SPATIAL], in_step[MAX_SPATIAL];
            int64_t out_at = 0, in_at = 0;
            for (int d = 0; d < sp; d++) {
                index[d] = lo[d];
                in_step[d] = a->step[d] * in_strides[d];
                out_at += lo[d] * out_strides[d];
                in_at += (lo[d] * a->step[d] + offset[d]) * in_strides[d];
            }
            for (;;) { /* rows of the box: an odometer over every dim but the last */
                row_tap(plane + out_at, xc + in_at, a->step[last], n, wv);
                int d = last - 1;
                for (; d >= 0; d--) {
                    if (++index[d] <= hi[d]) {
                        out_at += out_strides[d];
                        in_at += in_step[d];
                        break;
                    }
                    out_at -= (hi[d] - lo[d]) * out_strides[d];
                    in_at -= (hi[d] - lo[d]) * in_step[d];
                    index[d] = lo[d];
                }
                if (d < 0)
                    break;
            }
        }
    }
}

static void qconv_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)prepared;
    const qconv_attributes *a = node->attributes;
    const slots *s = slots_of(node);
    const ember_tensor *x = io->inputs[s->x], *w = io->inputs[s->w];
    const ember_tensor *xzt = io->inputs[s->x_zero], *wzt = io->inputs[s->w_zero];
    ember_tensor *y = io->output;
    const int qlinear = node->op->variant == QLINEAR;
    const int64_t batch = x->shape[0], channels = x->shape[1], out_channels = w->shape[0];
    const int64_t per_group = out_channels / a->resolved_groups, cg = w->shape[1];
    const int64_t in_plane = ember_shape_count(x->shape + 2, a->spatial);
    const int64_t out_plane = ember_shape_count(y->shape + 2, a->spatial);
    const int32_t xz = (int32_t)ember_quant_load(xzt->data, xzt->datum_type, 0);
    const int64_t wz_count = ember_shape_count(wzt->shape, wzt->rank);
    int64_t low = 0, high = 0;
    ember_quant_range(a->to, &low, &high);
    size_t plane_at;
    scratch_layout(cg, in_plane, out_plane, qlinear, &plane_at);
    int16_t *centred = io->scratch;
    uint32_t *scratch_plane = (uint32_t *)(void *)((uint8_t *)io->scratch + plane_at);
    for (int64_t b = 0; b < batch; b++)
        for (int64_t o = 0; o < out_channels; o++) {
            const int64_t group = o / per_group;
            if (o % per_group == 0)
                centre_group(x, (const uint8_t *)x->data + (b * channels + group * cg) * in_plane,
                             cg * in_plane, xz, centred);
            const int32_t wz = (int32_t)ember_quant_load(wzt->data, wzt->datum_type,
                                                         wz_count == 1 ? 0 : o);
            const int64_t at = (b * out_channels + o) * out_plane;
            uint32_t *plane = qlinear ? scratch_plane : (uint32_t *)((int32_t *)y->data + at);
            accumulate_plane(a, x, w, centred, o, wz, y->shape + 2, plane);
            if (!qlinear)
                continue;
            const ember_tensor *bias = io->inputs[s->bias], *xs = io->inputs[s->x_scale];
            const ember_tensor *ws = io->inputs[s->w_scale], *ys = io->inputs[s->y_scale];
            const ember_tensor *yz = io->inputs[s->y_zero];
            const int64_t b_count = ember_shape_count(bias->shape, bias->rank);
            const int64_t ws_count = ember_shape_count(ws->shape, ws->rank);
            const uint32_t bias_o = (uint32_t)(int32_t)ember_quant_load(
                bias->data, bias->datum_type, b_count == 1 ? 0 : o);
            const float product = (float)ember_quant_load(xs->data, xs->datum_type, 0) *
                                  (float)ember_quant_load(ws->data, ws->datum_type,
                                                          ws_count == 1 ? 0 : o);
            const float mult = product / (float)ember_quant_load(ys->data, ys->datum_type, 0);
            const double zero = ember_quant_load(yz->data, yz->datum_type, 0);
            for (int64_t p = 0; p < out_plane; p++) {
                const double v = (double)(int32_t)(plane[p] + bias_o) * (double)mult;
                ember_quant_store(y->data, a->to, at + p,
                                  ember_quant_add_round(v, zero, low, high));
            }
        }
}

static const ember_op_param integer_params[] = {
    {"input", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"filter", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"x_zero_point", EMBER_PARAM_TENSOR, 1, 0.0f},
    {"w_zero_point", EMBER_PARAM_TENSOR, 1, 0.0f},
    {"padding", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"stride", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"dilation", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"groups", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};

const ember_op ember_op_ember_conv_integer = {.name = "ember_conv_integer", .variant = INTEGER,
    .params = integer_params, .param_count = 8, .parse = qconv_parse, .infer = qconv_infer,
    .prepare = qconv_prepare, .run = qconv_run, .free_prepared = NULL};

static const ember_op_param qlinear_params[] = {
    {"input", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"x_scale", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"x_zero_point", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"filter", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"w_scale", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"w_zero_point", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"y_scale", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"y_zero_point", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"bias", EMBER_PARAM_TENSOR, 1, 0.0f},
    {"padding", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"stride", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"dilation", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"groups", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"to", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};

const ember_op ember_op_ember_qlinear_conv = {.name = "ember_qlinear_conv", .variant = QLINEAR,
    .params = qlinear_params, .param_count = 14, .parse = qconv_parse, .infer = qconv_infer,
    .prepare = qconv_prepare, .run = qconv_run};
