/*
 * Views: reshape, squeeze, unsqueeze. The output holds exactly the input's bytes in the
 * same order, so these ops only compute a new shape; the executor makes the output
 * share the input's storage (EMBER_OP_VIEW) and never runs them. Any datum type.
 */
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"
#include "core/op.h"
#include "core/shape.h"
#include "ops/ops.h"

enum { RESHAPE, SQUEEZE, UNSQUEEZE };

typedef struct view_attributes {
    int64_t shape[EMBER_MAX_RANK]; /* reshape's shape, or the axes */
    int count;
    int64_t axis_start, axis_count;
} view_attributes;

static ember_status view_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                               void **out)
{
    view_attributes *a = calloc(1, sizeof *a);
    if (a == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = a;
    const char *list = node->op->variant == RESHAPE ? "shape" : "axes";
    if (attrs[1] == NULL)
        return ember_node_error(node, EMBER_ERROR_INVALID, "missing argument '%s'", list);
    ember_status status = ember_attr_int_list(node, list, attrs[1], a->shape, EMBER_MAX_RANK,
                                              &a->count);
    if (status == EMBER_OK && node->op->variant == RESHAPE)
        status = ember_attr_int(node, "axis_start", attrs[2], 0, &a->axis_start);
    if (status == EMBER_OK && node->op->variant == RESHAPE)
        status = ember_attr_int(node, "axis_count", attrs[3], -1, &a->axis_count);
    return status;
}

static ember_status reshape_error(const ember_node *node, const ember_value *x,
                                  const view_attributes *a, const char *why)
{
    char xs[EMBER_SHAPE_TEXT], ss[EMBER_SHAPE_TEXT];
    return ember_node_error(node, EMBER_ERROR_INVALID,
                            "cannot reshape %s (axis_start %lld, axis_count %lld) to %s: %s",
                            ember_shape_format(x->shape, x->rank, xs, sizeof xs),
                            (long long)a->axis_start, (long long)a->axis_count,
                            ember_shape_format(a->shape, a->count, ss, sizeof ss), why);
}

/* Dims [start, start + count) of the input become `shape`: 0 copies the input dim at
 * the same position, -1 takes what is left. */
static ember_status reshape_infer(const ember_node *node, const ember_value *x,
                                  const view_attributes *a, ember_value *y)
{
    const int64_t start = a->axis_start;
    const int64_t count = a->axis_count == -1 ? x->rank - start : a->axis_count;
    if (start < 0 || start > x->rank || count < 0 || start + count > x->rank)
        return reshape_error(node, x, a, "axis range out of bounds");
    if (x->rank - count + a->count > EMBER_MAX_RANK)
        return reshape_error(node, x, a, "rank too large");
    const int64_t replaced = ember_shape_count(x->shape + start, (int)count);
    int64_t known = 1;
    int inferred = -1;
    int64_t dims[EMBER_MAX_RANK];
    for (int i = 0; i < a->count; i++) {
        dims[i] = a->shape[i];
        if (dims[i] == 0) {
            if (i >= count)
                return reshape_error(node, x, a, "0 refers past the reshaped dims");
            dims[i] = x->shape[start + i];
        } else if (dims[i] == -1) {
            if (inferred >= 0)
                return reshape_error(node, x, a, "more than one -1");
            inferred = i;
            continue;
        } else if (dims[i] < 0) {
            return reshape_error(node, x, a, "negative dim");
        }
        if (dims[i] != 0 && known > INT64_MAX / dims[i])
            return reshape_error(node, x, a, "too many elements");
        known *= dims[i];
    }
    if (inferred >= 0) {
        if (known == 0 || replaced % known != 0)
            return reshape_error(node, x, a, "-1 cannot be inferred");
        dims[inferred] = replaced / known;
        known = replaced;
    }
    if (known != replaced)
        return reshape_error(node, x, a, "element counts differ");
    y->rank = 0;
    for (int64_t i = 0; i < start; i++)
        y->shape[y->rank++] = x->shape[i];
    for (int i = 0; i < a->count; i++)
        y->shape[y->rank++] = dims[i];
    for (int64_t i = start + count; i < x->rank; i++)
        y->shape[y->rank++] = x->shape[i];
    return EMBER_OK;
}

static ember_status squeeze_infer(const ember_node *node, const ember_value *x,
                                  view_attributes *a, ember_value *y)
{
    ember_status status = ember_attr_axes(node, "axes", a->shape, a->count, x->rank, 1);
    if (status != EMBER_OK)
        return status;
    y->rank = 0;
    for (int d = 0; d < x->rank; d++) {
        int removed = 0;
        for (int i = 0; i < a->count; i++)
            removed |= a->shape[i] == d;
        if (removed && x->shape[d] != 1) {
            char xs[EMBER_SHAPE_TEXT];
            return ember_node_error(node, EMBER_ERROR_INVALID, "cannot squeeze axis %d of %s",
                                    d, ember_shape_format(x->shape, x->rank, xs, sizeof xs));
        }
        if (!removed)
            y->shape[y->rank++] = x->shape[d];
    }
    return EMBER_OK;
}

/* Axes are positions in the output, which has rank + count dims. */
static ember_status unsqueeze_infer(const ember_node *node, const ember_value *x,
                                    view_attributes *a, ember_value *y)
{
    const int rank = x->rank + a->count;
    if (rank > EMBER_MAX_RANK)
        return ember_node_error(node, EMBER_ERROR_UNSUPPORTED, "rank %d exceeds %d", rank,
                                EMBER_MAX_RANK);
    ember_status status = ember_attr_axes(node, "axes", a->shape, a->count, rank, 1);
    if (status != EMBER_OK)
        return status;
    int next = 0;
    for (int d = 0; d < rank; d++) {
        int inserted = 0;
        for (int i = 0; i < a->count; i++)
            inserted |= a->shape[i] == d;
        y->shape[d] = inserted ? 1 : x->shape[next++];
    }
    y->rank = rank;
    return EMBER_OK;
}

static ember_status view_infer(ember_node *node, const ember_value *const *inputs,
                               ember_value *output)
{
    view_attributes *a = node->attributes;
    output->datum_type = inputs[0]->datum_type;
    switch (node->op->variant) {
    case RESHAPE:
        return reshape_infer(node, inputs[0], a, output);
    case SQUEEZE:
        return squeeze_infer(node, inputs[0], a, output);
    default:
        return unsqueeze_infer(node, inputs[0], a, output);
    }
}

/* Never called for a view; kept so every descriptor has a run. */
static void view_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)node;
    (void)prepared;
    (void)io;
}

static const ember_op_param reshape_params[] = {
    {"input", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"shape", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"axis_start", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"axis_count", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};
static const ember_op_param axes_params[] = {
    {"input", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"axes", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};

const ember_op ember_op_reshape = {.name = "reshape", .variant = RESHAPE,
    .flags = EMBER_OP_VIEW, .params = reshape_params, .param_count = 4,
    .parse = view_parse, .infer = view_infer, .run = view_run};
const ember_op ember_op_squeeze = {.name = "squeeze", .variant = SQUEEZE,
    .flags = EMBER_OP_VIEW, .params = axes_params, .param_count = 2,
    .parse = view_parse, .infer = view_infer, .run = view_run};
const ember_op ember_op_unsqueeze = {.name = "unsqueeze", .variant = UNSQUEEZE,
    .flags = EMBER_OP_VIEW, .params = axes_params, .param_count = 2,
    .parse = view_parse, .infer = view_infer, .run = view_run};
