/*
 * transpose(input, axes): output dim i is input dim axes[i]. `axes` may be shorter than
 * the rank; the dims after it stay in place. Any datum type: a strided copy that reads
 * the input through permuted strides and writes the output in order.
 */
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"
#include "core/op.h"
#include "core/shape.h"
#include "ops/nd.h"
#include "ops/ops.h"
#include "ops/transpose.h"

typedef struct transpose_attributes {
    int64_t axes[EMBER_MAX_RANK];
    int axis_count;
    int64_t permutation[EMBER_MAX_RANK]; /* full rank, resolved by infer */
} transpose_attributes;

static ember_status transpose_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                                    void **out)
{
    transpose_attributes *a = calloc(1, sizeof *a);
    if (a == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = a;
    if (attrs[1] == NULL)
        return ember_node_error(node, EMBER_ERROR_INVALID, "missing argument 'axes'");
    return ember_attr_int_list(node, "axes", attrs[1], a->axes, EMBER_MAX_RANK, &a->axis_count);
}

static ember_status transpose_infer(ember_node *node, const ember_value *const *inputs,
                                    ember_value *output)
{
    transpose_attributes *a = node->attributes;
    const ember_value *x = inputs[0];
    char xs[EMBER_SHAPE_TEXT];
    if (a->axis_count > x->rank)
        return ember_node_error(node, EMBER_ERROR_INVALID, "%d axes for input %s", a->axis_count,
                                ember_shape_format(x->shape, x->rank, xs, sizeof xs));
    for (int i = 0; i < a->axis_count; i++)
        if (a->axes[i] < 0 || a->axes[i] >= a->axis_count)
            return ember_node_error(node, EMBER_ERROR_INVALID,
                                    "axes must be a permutation of 0..%d", a->axis_count - 1);
    ember_status status = ember_attr_axes(node, "axes", a->axes, a->axis_count, x->rank, 1);
    if (status != EMBER_OK)
        return status;
    output->datum_type = x->datum_type;
    output->rank = x->rank;
    for (int i = 0; i < x->rank; i++) {
        a->permutation[i] = i < a->axis_count ? a->axes[i] : i;
        output->shape[i] = x->shape[a->permutation[i]];
    }
    return EMBER_OK;
}

static void transpose_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)prepared;
    const transpose_attributes *a = node->attributes;
    const ember_tensor *x = io->inputs[0];
    int64_t in_strides[EMBER_MAX_RANK], read_strides[EMBER_MAX_RANK];
    ember_shape_strides(x->shape, x->rank, in_strides);
    for (int i = 0; i < x->rank; i++)
        read_strides[i] = in_strides[a->permutation[i]];
    ember_copy_strided(io->output->data, x->data, x->rank, io->output->shape, read_strides,
                       ember_datum_size(x->datum_type));
}

int ember_transpose_swaps(const ember_node *node, int a, int b)
{
    const transpose_attributes *t = node->attributes;
    for (int i = 0; i < t->axis_count; i++)
        if (t->axes[i] != (i == a ? b : i == b ? a : i))
            return 0;
    return a < t->axis_count && b < t->axis_count;
}

static const ember_op_param transpose_params[] = {
    {"input", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"axes", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};

const ember_op ember_op_transpose = {.name = "transpose", .params = transpose_params,
    .param_count = 2, .parse = transpose_parse, .infer = transpose_infer,
    .run = transpose_run};
