/*
 * Reductions: sum_reduce, mean_reduce, max_reduce, min_reduce and
 * tract_core_product_reduce over a list of axes, which stay in the result as size-1 dims
 * (NNEF semantics). sum_reduce also takes NNEF's `normalize` (true makes it a mean).
 *
 * The reference walks the input once in memory order and accumulates into the output
 * element it maps to (output strides, 0 along reduced axes), so every layout of axes
 * costs the same single pass. f32 sums, means and maxima take the vectorised path; every
 * other case accumulates in ember_item (ops/items.h): floats in double, integers in
 * their type (wrapping), a mean of integers truncated as numpy's astype does. Over empty
 * axes: sum 0, product 1, max/min the lowest/highest value of the type (±inf for
 * floats), mean NaN; max and min propagate NaN.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"
#include "core/op.h"
#include "core/shape.h"
#include "ops/items.h"
#include "ops/nd.h"
#include "ops/ops.h"
#include "ops/reduce.h"

enum { SUM, MEAN, MAX, MIN, PROD };

typedef struct reduce_attributes {
    int64_t axes[EMBER_MAX_RANK];
    int axis_count;
    int normalize;
} reduce_attributes;

static ember_status reduce_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                                 void **out)
{
    reduce_attributes *a = calloc(1, sizeof *a);
    if (a == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = a;
    if (attrs[1] == NULL)
        return ember_node_error(node, EMBER_ERROR_INVALID, "missing argument 'axes'");
    ember_status status = ember_attr_int_list(node, "axes", attrs[1], a->axes, EMBER_MAX_RANK,
                                              &a->axis_count);
    if (status == EMBER_OK && node->op->variant == SUM)
        status = ember_attr_bool(node, "normalize", attrs[2], 0, &a->normalize);
    if (node->op->variant == MEAN)
        a->normalize = 1;
    return status;
}

static ember_status reduce_infer(ember_node *node, const ember_value *const *inputs,
                                 ember_value *output)
{
    reduce_attributes *a = node->attributes;
    const ember_value *x = inputs[0];
    if (x->datum_type == EMBER_BOOL && node->op->variant != MAX && node->op->variant != MIN)
        return ember_node_error(node, EMBER_ERROR_INVALID, "%s of bool values",
                                node->op->name);
    ember_status status = ember_attr_axes(node, "axes", a->axes, a->axis_count, x->rank, 1);
    if (status != EMBER_OK)
        return status;
    output->datum_type = x->datum_type;
    output->rank = x->rank;
    memcpy(output->shape, x->shape, sizeof output->shape);
    for (int i = 0; i < a->axis_count; i++)
        output->shape[a->axes[i]] = 1;
    return EMBER_OK;
}

/* When every reduced axis of extent > 1 comes after every kept axis of extent > 1, each
 * output reduces one contiguous block of the input: its length; else 0. */
static int64_t contiguous_block(const reduce_attributes *a, const ember_tensor *x)
{
    int reduced[EMBER_MAX_RANK] = {0};
    for (int i = 0; i < a->axis_count; i++)
        reduced[a->axes[i]] = 1;
    int64_t block = 1;
    int kept_seen = 0;
    for (int d = x->rank - 1; d >= 0; d--) {
        if (x->shape[d] == 1)
            continue;
        if (!reduced[d])
            kept_seen = 1;
        else if (kept_seen)
            return 0;
        else
            block *= x->shape[d];
    }
    return block;
}

#define LANES 8 /* partial results per block: fixed-length inner loops vectorise at -O2 */

static float reduce_block(const float *in, int64_t n, int is_max)
{
    float lanes[LANES];
    for (int k = 0; k < LANES; k++)
        lanes[k] = is_max ? -INFINITY : 0.0f;
    int64_t j = 0;
    if (is_max)
        for (; j + LANES <= n; j += LANES)
            for (int k = 0; k < LANES; k++)
                lanes[k] = in[j + k] > lanes[k] ? in[j + k] : lanes[k];
    else
        for (; j + LANES <= n; j += LANES)
            for (int k = 0; k < LANES; k++)
                lanes[k] += in[j + k];
    float v = lanes[0];
    for (int k = 1; k < LANES; k++)
        v = is_max ? (lanes[k] > v ? lanes[k] : v) : v + lanes[k];
    for (; j < n; j++)
        v = is_max ? (in[j] > v ? in[j] : v) : v + in[j];
    return v;
}

void ember_reduce_blocks(const float *in, int64_t blocks, int64_t block, int is_max,
                         int normalize, float *out)
{
    for (int64_t o = 0; o < blocks; o++) {
        const float v = reduce_block(in + o * block, block, is_max);
        out[o] = normalize ? v / (float)block : v;
    }
}

/* ---------------------------------------------------------------- every type */

/* The starting value of an accumulator of `kind` for this reduction. */
static ember_item neutral(int variant, ember_datum_type dt)
{
    const ember_item_kind kind = ember_item_kind_of(dt);
    const int bits = (int)ember_datum_size(dt) * 8;
    ember_item v;
    v.u = 0;
    if (variant == PROD) {
        if (kind == ITEM_FLOAT)
            v.f = 1;
        else
            v.u = 1;
    } else if (variant == MAX || variant == MIN) {
        const int high = variant == MIN;
        if (kind == ITEM_FLOAT)
            v.f = high ? INFINITY : -INFINITY;
        else if (dt == EMBER_BOOL)
            v.u = (uint64_t)high;
        else if (kind == ITEM_UNSIGNED)
            v.u = high ? (bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1) : 0;
        else
            v.i = high ? (int64_t)(((uint64_t)1 << (bits - 1)) - 1)
                       : (int64_t)(0 - ((uint64_t)1 << (bits - 1)));
    }
    return v;
}

static ember_item combine(int variant, ember_item_kind kind, ember_item acc, ember_item v)
{
    switch (kind) {
    case ITEM_FLOAT:
        if (variant == MAX || variant == MIN) {
            if (isnan(acc.f) || isnan(v.f))
                acc.f = NAN;
            else if (variant == MAX ? v.f > acc.f : v.f < acc.f)
                acc.f = v.f;
        } else {
            acc.f = variant == PROD ? acc.f * v.f : acc.f + v.f;
        }
        return acc;
    case ITEM_UNSIGNED:
        if (variant == MAX || variant == MIN)
            acc.u = (variant == MAX ? v.u > acc.u : v.u < acc.u) ? v.u : acc.u;
        else
            acc.u = variant == PROD ? acc.u * v.u : acc.u + v.u;
        return acc;
    default:
        if (variant == MAX || variant == MIN)
            acc.i = (variant == MAX ? v.i > acc.i : v.i < acc.i) ? v.i : acc.i;
        else
            acc.u = variant == PROD ? acc.u * v.u : acc.u + v.u; /* wraps, as numpy */
        return acc;
    }
}

static void reduce_any(const ember_node *node, const ember_op_io *io)
{
    const reduce_attributes *a = node->attributes;
    const ember_tensor *x = io->inputs[0], *y = io->output;
    const ember_datum_type dt = x->datum_type;
    const ember_item_kind kind = ember_item_kind_of(dt);
    const int variant = node->op->variant;
    ember_item *acc = io->scratch;
    const int64_t out_count = ember_shape_count(y->shape, y->rank);
    const int64_t in_count = ember_shape_count(x->shape, x->rank);
    for (int64_t i = 0; i < out_count; i++)
        acc[i] = neutral(variant, dt);
    if (in_count > 0) {
        int64_t out_strides[EMBER_MAX_RANK];
        ember_shape_strides(y->shape, y->rank, out_strides);
        for (int i = 0; i < a->axis_count; i++)
            out_strides[a->axes[i]] = 0;
        ember_nd_iter it;
        ember_nd_iter_init(&it, x->rank, x->shape, out_strides, NULL);
        int64_t i = 0;
        do {
            ember_item *slot = &acc[it.offset[0]];
            *slot = combine(variant, kind, *slot, ember_item_get(dt, x->data, i++));
        } while (ember_nd_iter_next(&it));
    }
    const double cells = out_count ? (double)in_count / (double)out_count : 0;
    for (int64_t i = 0; i < out_count; i++) {
        ember_item v = acc[i];
        if (a->normalize && kind == ITEM_FLOAT)
            v.f = v.f / cells;
        else if (a->normalize) { /* numpy: the mean in double, then truncated */
            const double mean = (kind == ITEM_SIGNED ? (double)v.i : (double)v.u) / cells;
            v.i = mean == mean ? (int64_t)mean : 0;
        }
        ember_item_put(dt, y->data, i, v);
    }
}

/* The f32 fast paths: sums, means and maxima. */
static int is_fast(const ember_node *node, ember_datum_type dt)
{
    return dt == EMBER_F32 && node->op->variant <= MAX;
}

static ember_status reduce_prepare(ember_prepare_context *ctx, void **out_prepared)
{
    const ember_value *y = &ctx->model->values[ctx->node->output];
    *out_prepared = NULL;
    if (!is_fast(ctx->node, y->datum_type))
        ctx->scratch_bytes = (size_t)ember_shape_count(y->shape, y->rank) * sizeof(ember_item);
    return EMBER_OK;
}

static void reduce_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    const reduce_attributes *ra = node->attributes;
    const ember_tensor *rx = io->inputs[0];
    if (!is_fast(node, rx->datum_type)) {
        reduce_any(node, io);
        return;
    }
    const int64_t block = ember_shape_count(rx->shape, rx->rank) > 0
                              ? contiguous_block(ra, rx) : 0;
    if (block > 0) { /* the common case (global pooling): one contiguous block per output */
        ember_reduce_blocks(rx->data, ember_shape_count(io->output->shape, io->output->rank),
                            block, node->op->variant == MAX, ra->normalize, io->output->data);
        return;
    }
    (void)prepared;
    const reduce_attributes *a = node->attributes;
    const ember_tensor *x = io->inputs[0], *y = io->output;
    const float *in = x->data;
    float *out = y->data;
    const int64_t out_count = ember_shape_count(y->shape, y->rank);
    const int is_max = node->op->variant == MAX;
    for (int64_t i = 0; i < out_count; i++)
        out[i] = is_max ? -INFINITY : 0.0f;
    const int64_t in_count = ember_shape_count(x->shape, x->rank);
    if (in_count == 0)
        return;

    int64_t out_strides[EMBER_MAX_RANK];
    ember_shape_strides(y->shape, y->rank, out_strides);
    for (int i = 0; i < a->axis_count; i++)
        out_strides[a->axes[i]] = 0;
    ember_nd_iter it;
    ember_nd_iter_init(&it, x->rank, x->shape, out_strides, NULL);
    int64_t i = 0;
    do {
        float *slot = &out[it.offset[0]];
        const float v = in[i++];
        if (is_max)
            *slot = v > *slot ? v : *slot;
        else
            *slot += v;
    } while (ember_nd_iter_next(&it));

    if (a->normalize) {
        const float cells = (float)(in_count / out_count); /* inputs per output */
        for (int64_t j = 0; j < out_count; j++)
            out[j] /= cells;
    }
}

static const ember_op_param reduce_params[] = {
    {"input", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"axes", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"normalize", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};

const ember_op ember_op_sum_reduce = {.name = "sum_reduce", .variant = SUM,
    .params = reduce_params, .param_count = 3, .parse = reduce_parse,
    .infer = reduce_infer, .prepare = reduce_prepare, .run = reduce_run};
const ember_op ember_op_mean_reduce = {.name = "mean_reduce", .variant = MEAN,
    .params = reduce_params, .param_count = 2, .parse = reduce_parse,
    .infer = reduce_infer, .prepare = reduce_prepare, .run = reduce_run};
const ember_op ember_op_min_reduce = {.name = "min_reduce", .variant = MIN,
    .params = reduce_params, .param_count = 2, .parse = reduce_parse,
    .infer = reduce_infer, .prepare = reduce_prepare, .run = reduce_run};
const ember_op ember_op_prod_reduce = {.name = "tract_core_product_reduce", .variant = PROD,
    .params = reduce_params, .param_count = 2, .parse = reduce_parse,
    .infer = reduce_infer, .prepare = reduce_prepare, .run = reduce_run};
const ember_op ember_op_max_reduce = {.name = "max_reduce", .variant = MAX,
    .params = reduce_params, .param_count = 2, .parse = reduce_parse,
    .infer = reduce_infer, .prepare = reduce_prepare, .run = reduce_run};
