/*
 * Reductions: sum_reduce, mean_reduce, max_reduce over a list of axes, which stay in the
 * result as size-1 dims (NNEF semantics). sum_reduce also takes NNEF's `normalize`
 * (true makes it a mean).
 *
 * The reference walks the input once in memory order and accumulates into the output
 * element it maps to (output strides, 0 along reduced axes), so every layout of axes
 * costs the same single pass.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"
#include "core/op.h"
#include "core/shape.h"
#include "ops/nd.h"
#include "ops/ops.h"

enum { SUM, MEAN, MAX };

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
    if (x->datum_type != EMBER_F32)
        return ember_node_error(node, EMBER_ERROR_UNSUPPORTED, "reductions compute in f32, got %s",
                                ember_datum_type_name(x->datum_type));
    ember_status status = ember_attr_axes(node, "axes", a->axes, a->axis_count, x->rank, 1);
    if (status != EMBER_OK)
        return status;
    output->datum_type = EMBER_F32;
    output->rank = x->rank;
    memcpy(output->shape, x->shape, sizeof output->shape);
    for (int i = 0; i < a->axis_count; i++) {
        if (node->op->variant == MAX && x->shape[a->axes[i]] == 0)
            return ember_node_error(node, EMBER_ERROR_INVALID, "max over an empty axis %lld",
                                    (long long)a->axes[i]);
        output->shape[a->axes[i]] = 1;
    }
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

static void reduce_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    const reduce_attributes *ra = node->attributes;
    const ember_tensor *rx = io->inputs[0];
    const int64_t block = ember_shape_count(rx->shape, rx->rank) > 0
                              ? contiguous_block(ra, rx) : 0;
    if (block > 0) { /* the common case (global pooling): one contiguous block per output */
        const int64_t outputs = ember_shape_count(io->output->shape, io->output->rank);
        const float *in = rx->data;
        float *out = io->output->data;
        for (int64_t o = 0; o < outputs; o++) {
            const float v = reduce_block(in + o * block, block, node->op->variant == MAX);
            out[o] = ra->normalize ? v / (float)block : v;
        }
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
    .infer = reduce_infer, .run = reduce_run};
const ember_op ember_op_mean_reduce = {.name = "mean_reduce", .variant = MEAN,
    .params = reduce_params, .param_count = 2, .parse = reduce_parse,
    .infer = reduce_infer, .run = reduce_run};
const ember_op ember_op_max_reduce = {.name = "max_reduce", .variant = MAX,
    .params = reduce_params, .param_count = 2, .parse = reduce_parse,
    .infer = reduce_infer, .run = reduce_run};
