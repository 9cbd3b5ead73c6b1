/*
 * concat([x…], axis): inputs of one datum type and rank, equal except along `axis`.
 * Seen from `axis`, every tensor is `outer` rows of (extent × inner) items; the output
 * row is the inputs' rows side by side, so the copy is one memcpy per input per row.
 * An input whose producer wrote it in place (core/instance.c places the inputs of a
 * concat of one row inside its output) is not copied.
 */
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"
#include "core/op.h"
#include "core/shape.h"
#include "ops/ops.h"

typedef struct concat_attributes {
    int64_t axis;
} concat_attributes;

static ember_status concat_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                                 void **out)
{
    concat_attributes *a = calloc(1, sizeof *a);
    if (a == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = a;
    if (attrs[1] == NULL)
        return ember_node_error(node, EMBER_ERROR_INVALID, "missing argument 'axis'");
    return ember_attr_int(node, "axis", attrs[1], 0, &a->axis);
}

static ember_status concat_infer(ember_node *node, const ember_value *const *inputs,
                                 ember_value *output)
{
    concat_attributes *a = node->attributes;
    const ember_value *first = inputs[0];
    ember_status status = ember_attr_axes(node, "axis", &a->axis, 1, first->rank, 0);
    if (status != EMBER_OK)
        return status;
    output->datum_type = first->datum_type;
    output->rank = first->rank;
    memcpy(output->shape, first->shape, sizeof output->shape);
    output->shape[a->axis] = 0;
    for (size_t i = 0; i < node->input_count; i++) {
        const ember_value *x = inputs[i];
        int same = x->datum_type == first->datum_type && x->rank == first->rank;
        for (int d = 0; d < first->rank && same; d++)
            same = d == a->axis || x->shape[d] == first->shape[d];
        if (!same) {
            char xs[EMBER_SHAPE_TEXT], fs[EMBER_SHAPE_TEXT];
            return ember_node_error(node, EMBER_ERROR_INVALID,
                                    "input %zu '%s' is %s %s, input 0 is %s %s: they must "
                                    "agree except along axis %lld", i, x->name,
                                    ember_datum_type_name(x->datum_type),
                                    ember_shape_format(x->shape, x->rank, xs, sizeof xs),
                                    ember_datum_type_name(first->datum_type),
                                    ember_shape_format(first->shape, first->rank, fs, sizeof fs),
                                    (long long)a->axis);
        }
        if (output->shape[a->axis] > INT64_MAX / 2 - x->shape[a->axis])
            return ember_node_error(node, EMBER_ERROR_INVALID, "concatenation too large");
        output->shape[a->axis] += x->shape[a->axis];
    }
    return EMBER_OK;
}

static void concat_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)prepared;
    const concat_attributes *a = node->attributes;
    const ember_tensor *y = io->output;
    const int axis = (int)a->axis;
    const size_t item = ember_datum_size(y->datum_type);
    const int64_t outer = ember_shape_count(y->shape, axis);
    const int64_t inner = ember_shape_count(y->shape + axis + 1, y->rank - axis - 1);
    const size_t out_row = (size_t)(y->shape[axis] * inner) * item;
    size_t column = 0; /* byte offset of the current input inside an output row */
    for (size_t i = 0; i < io->input_count; i++) {
        const ember_tensor *x = io->inputs[i];
        const size_t row = (size_t)(x->shape[axis] * inner) * item;
        const uint8_t *src = x->data;
        uint8_t *dst = (uint8_t *)y->data + column;
        for (int64_t r = 0; r < outer && row > 0 && src != dst; r++)
            memcpy(dst + (size_t)r * out_row, src + (size_t)r * row, row);
        column += row;
    }
}

static const ember_op_param concat_params[] = {
    {"values", EMBER_PARAM_TENSOR_LIST, 0, 0.0f},
    {"axis", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};

const ember_op ember_op_concat = {.name = "concat", .params = concat_params,
    .param_count = 2, .parse = concat_parse, .infer = concat_infer, .run = concat_run};
