/*
 * Ops that repeat their input, any datum type (items moved by size):
 *   tract_core_broadcast(input, shape)   numpy broadcasting of input to `shape`
 *                                        (ONNX Expand: the result has the broadcast
 *                                        of both shapes)
 *   tile(input, repeats)                 the input repeated repeats[i] times along axis i
 * Both map each output index to an input index per axis (a stride of 0 along a
 * stretched dim; the index modulo the input dim for tile), row by row.
 */
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"
#include "core/op.h"
#include "core/shape.h"
#include "ops/ops.h"

enum { BROADCAST, TILE };

typedef struct tile_attributes {
    int64_t values[EMBER_MAX_RANK]; /* broadcast: the shape; tile: the repeats */
    int count;
} tile_attributes;

static const ember_op_param broadcast_params[] = {
    {"input", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"shape", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};
static const ember_op_param tile_params[] = {
    {"input", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"repeats", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};

static ember_status tile_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                               void **out)
{
    tile_attributes *a = calloc(1, sizeof *a);
    if (a == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = a;
    const char *name = node->op->variant == TILE ? "repeats" : "shape";
    ember_status status = ember_attr_int_list(node, name, attrs[1], a->values, EMBER_MAX_RANK,
                                              &a->count);
    for (int i = 0; status == EMBER_OK && i < a->count; i++)
        if (a->values[i] < 0)
            return ember_node_error(node, EMBER_ERROR_INVALID, "%s[%d] is %lld: must not be "
                                    "negative", name, i, (long long)a->values[i]);
    return status;
}

static ember_status tile_infer(ember_node *node, const ember_value *const *inputs,
                               ember_value *output)
{
    const tile_attributes *a = node->attributes;
    const ember_value *x = inputs[0];
    output->datum_type = x->datum_type;
    if (node->op->variant == BROADCAST) {
        char have[EMBER_SHAPE_TEXT], want[EMBER_SHAPE_TEXT];
        int rank;
        if (ember_shape_broadcast(x->shape, x->rank, a->values, a->count, output->shape,
                                  &rank) != 0)
            return ember_node_error(node, EMBER_ERROR_INVALID, "%s does not broadcast to %s",
                                    ember_shape_format(x->shape, x->rank, have, sizeof have),
                                    ember_shape_format(a->values, a->count, want, sizeof want));
        output->rank = rank;
        return EMBER_OK;
    }
    if (a->count != x->rank)
        return ember_node_error(node, EMBER_ERROR_INVALID, "%d repeats for an input of rank %d",
                                a->count, (int)x->rank);
    output->rank = x->rank;
    for (int i = 0; i < x->rank; i++)
        if (__builtin_mul_overflow(x->shape[i], a->values[i], &output->shape[i]))
            return ember_node_error(node, EMBER_ERROR_INVALID, "tiled axis %d overflows", i);
    return EMBER_OK;
}

static void tile_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)prepared;
    const ember_tensor *x = io->inputs[0], *y = io->output;
    const int rank = y->rank, shift = y->rank - x->rank;
    const size_t size = ember_datum_size(x->datum_type);
    int64_t in_dims[EMBER_MAX_RANK], in_strides[EMBER_MAX_RANK], index[EMBER_MAX_RANK] = {0};
    for (int d = 0; d < rank; d++)
        in_dims[d] = d < shift ? 1 : x->shape[d - shift];
    ember_shape_strides(in_dims, rank, in_strides);
    const int64_t count = ember_shape_count(y->shape, rank);
    uint8_t *out = y->data;
    for (int64_t i = 0; i < count; i++, out += size) {
        int64_t offset = 0;
        for (int d = 0; d < rank; d++)
            offset += (in_dims[d] == 1 ? 0 : index[d] % in_dims[d]) * in_strides[d];
        memcpy(out, (const uint8_t *)x->data + (size_t)offset * size, size);
        for (int d = rank - 1; d >= 0 && ++index[d] == y->shape[d]; d--)
            index[d] = 0;
    }
    (void)node;
}

const ember_op ember_op_broadcast = {.name = "tract_core_broadcast", .variant = BROADCAST,
    .params = broadcast_params, .param_count = 2, .parse = tile_parse, .infer = tile_infer,
    .run = tile_run};
const ember_op ember_op_tile = {.name = "tile", .variant = TILE, .params = tile_params,
    .param_count = 2, .parse = tile_parse, .infer = tile_infer, .run = tile_run};
