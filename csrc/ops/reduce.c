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

static void reduce_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
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

const ember_op ember_op_sum_reduce = {"sum_reduce", SUM, 0, reduce_params, 3, reduce_parse,
                                      reduce_infer, NULL, NULL, reduce_run, NULL};
const ember_op ember_op_mean_reduce = {"mean_reduce", MEAN, 0, reduce_params, 2, reduce_parse,
                                       reduce_infer, NULL, NULL, reduce_run, NULL};
const ember_op ember_op_max_reduce = {"max_reduce", MAX, 0, reduce_params, 2, reduce_parse,
                                      reduce_infer, NULL, NULL, reduce_run, NULL};
