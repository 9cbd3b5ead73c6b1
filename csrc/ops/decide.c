/*
 * Values only a run knows, made into symbols for the stages after it
 * (csrc/core/model_stages.h), and shapes made into values:
 *
 *   d = ember_decide_values(v, count = [a, b, …])
 *       binds a = v[0], b = v[1], … from an integer vector (or a one-item tensor for one
 *       symbol), each clamped to ±2^53; d holds those values as an i64 vector. What ONNX
 *       takes as a run-time operand (Reshape's shape, Tile's repeats, Slice's starts,
 *       TopK's k, Pad's pads) becomes symbols the next stage's attributes use. Values may
 *       be negative (a slice start): the ops that use them check them.
 *   d = ember_decide_dims(x, axes = [i, j, …], count = [a, b, …])
 *       binds a = dim i of x, b = dim j, …; d holds those dims as an i64 vector. The
 *       cook names the dims of a run-time reshape, expand or slice by fresh symbols; this
 *       binds them once the op has run.
 *   s = tract_core_shape_of(x)
 *       the dims of x as an i64 vector.
 */
#include <stdlib.h>

#include "core/attr.h"
#include "core/op.h"
#include "core/shape.h"
#include "ops/items.h"
#include "ops/ops.h"

enum { DECIDE_VALUES, DECIDE_DIMS };

/* Decided values are clamped to ±2^53, so they stay exact as plan numbers (doubles):
 * ONNX writes INT64_MAX for "to the end" of a slice. */
#define VALUE_LIMIT ((int64_t)1 << 53)

typedef struct decide_attributes {
    int64_t axes[EMBER_MAX_RANK];
    int count;                   /* how many symbols are decided */
} decide_attributes;

static const ember_op_param values_params[] = {
    {"input", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"count", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};
static const ember_op_param dims_params[] = {
    {"input", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"axes", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"count", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};

static ember_status decide_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                                 void **out)
{
    decide_attributes *a = calloc(1, sizeof *a);
    if (a == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = a;
    const int dims = node->op->variant == DECIDE_DIMS;
    /* In its own stage each symbol of `count` reads as -1 ("decided by this run"). */
    int64_t symbols[EMBER_MAX_RANK];
    ember_status status = ember_attr_int_list(node, "count", attrs[1 + dims], symbols,
                                              EMBER_MAX_RANK, &a->count);
    if (status != EMBER_OK)
        return status;
    for (int i = 0; i < a->count; i++)
        if (symbols[i] != -1)
            return ember_node_error(node, EMBER_ERROR_INVALID, "count must list symbols of "
                                    "the plan (their values are decided by the run)");
    if (a->count == 0)
        return ember_node_error(node, EMBER_ERROR_INVALID, "count names no symbol");
    if (!dims)
        return EMBER_OK;
    int axes = 0;
    status = ember_attr_int_list(node, "axes", attrs[1], a->axes, EMBER_MAX_RANK, &axes);
    if (status == EMBER_OK && axes != a->count)
        return ember_node_error(node, EMBER_ERROR_INVALID, "%d axes for %d symbols", axes,
                                a->count);
    return status;
}

static ember_status decide_infer(ember_node *node, const ember_value *const *inputs,
                                 ember_value *output)
{
    decide_attributes *a = node->attributes;
    const ember_value *x = inputs[0];
    output->datum_type = EMBER_I64;
    output->rank = 1;
    output->shape[0] = a->count;
    if (node->op->variant == DECIDE_DIMS)
        return ember_attr_axes(node, "axes", a->axes, a->count, x->rank, 0);
    const ember_item_kind kind = ember_item_kind_of(x->datum_type);
    if ((kind != ITEM_SIGNED && kind != ITEM_UNSIGNED) || x->datum_type == EMBER_BOOL ||
        x->rank > 1 || ember_shape_count(x->shape, x->rank) != a->count) {
        char xs[EMBER_SHAPE_TEXT];
        return ember_node_error(node, EMBER_ERROR_INVALID, "decides %d symbols from %s %s: "
                                "needs an integer vector of %d items", a->count,
                                ember_datum_type_name(x->datum_type),
                                ember_shape_format(x->shape, x->rank, xs, sizeof xs), a->count);
    }
    return EMBER_OK;
}

static void decide_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)prepared;
    const decide_attributes *a = node->attributes;
    const ember_tensor *x = io->inputs[0];
    int64_t *out = io->output->data;
    for (int i = 0; i < a->count; i++) {
        if (node->op->variant == DECIDE_DIMS) {
            out[i] = x->shape[a->axes[i]];
            continue;
        }
        const ember_item v = ember_item_get(x->datum_type, x->data, i);
        const int is_unsigned = ember_item_kind_of(x->datum_type) == ITEM_UNSIGNED;
        const int64_t value = is_unsigned && v.u > (uint64_t)VALUE_LIMIT ? VALUE_LIMIT : v.i;
        out[i] = value > VALUE_LIMIT ? VALUE_LIMIT : value < -VALUE_LIMIT ? -VALUE_LIMIT : value;
    }
}

static int64_t decided_item(const ember_node *node, const ember_tensor *outputs, size_t item)
{
    (void)node;
    return ((const int64_t *)outputs[0].data)[item];
}

const ember_op ember_op_ember_decide_values = {
    .name = "ember_decide_values", .variant = DECIDE_VALUES, .flags = EMBER_OP_DECIDES_SIZE,
    .params = values_params, .param_count = 2, .parse = decide_parse,
    .infer = decide_infer, .run = decide_run, .decided_count = decided_item};
const ember_op ember_op_ember_decide_dims = {
    .name = "ember_decide_dims", .variant = DECIDE_DIMS, .flags = EMBER_OP_DECIDES_SIZE,
    .params = dims_params, .param_count = 3, .parse = decide_parse, .infer = decide_infer,
    .run = decide_run, .decided_count = decided_item};

/* ---------------------------------------------------------------- shape_of */

static const ember_op_param shape_of_params[] = {{"input", EMBER_PARAM_TENSOR, 0, 0.0f}};

static ember_status shape_of_infer(ember_node *node, const ember_value *const *inputs,
                                   ember_value *output)
{
    (void)node;
    output->datum_type = EMBER_I64;
    output->rank = 1;
    output->shape[0] = inputs[0]->rank;
    return EMBER_OK;
}

static void shape_of_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)node;
    (void)prepared;
    const ember_tensor *x = io->inputs[0];
    int64_t *out = io->output->data;
    for (int i = 0; i < x->rank; i++)
        out[i] = x->shape[i];
}

const ember_op ember_op_shape_of = {.name = "tract_core_shape_of", .params = shape_of_params,
                                    .param_count = 1, .infer = shape_of_infer,
                                    .run = shape_of_run};
