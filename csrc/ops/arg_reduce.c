/*
 * argmax_reduce(input, axes = [a]), argmin_reduce: the index (i64) of the largest or
 * smallest item along one axis, kept as a size-1 dim (NNEF); the first one of equal
 * items, or the last with tract's tract_core_argmax_reduce_last /
 * tract_core_argmin_reduce_last (ONNX select_last_index). A NaN counts as larger and
 * smaller than any number (numpy's argmax and argmin find the first NaN). Every numeric
 * datum type, compared in its own kind (ops/items.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"
#include "core/op.h"
#include "core/shape.h"
#include "ops/items.h"
#include "ops/ops.h"

enum { ARGMAX = 0, ARGMIN = 1, LAST = 2 };

typedef struct arg_attributes {
    int64_t axis;
} arg_attributes;

static const ember_op_param arg_params[] = {
    {"input", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"axes", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};

static ember_status arg_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                              void **out)
{
    arg_attributes *a = calloc(1, sizeof *a);
    if (a == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = a;
    int count = 0;
    ember_status status = ember_attr_int_list(node, "axes", attrs[1], &a->axis, 1, &count);
    if (status == EMBER_OK && count != 1)
        return ember_node_error(node, EMBER_ERROR_UNSUPPORTED, "axes must name one axis");
    return status;
}

static ember_status arg_infer(ember_node *node, const ember_value *const *inputs,
                              ember_value *output)
{
    arg_attributes *a = node->attributes;
    const ember_value *x = inputs[0];
    ember_status status = ember_attr_axes(node, "axes", &a->axis, 1, x->rank, 1);
    if (status != EMBER_OK)
        return status;
    if (x->shape[a->axis] == 0)
        return ember_node_error(node, EMBER_ERROR_INVALID, "axis %lld is empty: no index to "
                                "give", (long long)a->axis);
    output->datum_type = EMBER_I64;
    output->rank = x->rank;
    memcpy(output->shape, x->shape, sizeof output->shape);
    output->shape[a->axis] = 1;
    return EMBER_OK;
}

/* Whether `v` replaces the best so far `best` (for the first or last equal one). */
static int better(ember_item_kind kind, int variant, ember_item v, ember_item best)
{
    const int last = variant & LAST, min = variant & ARGMIN;
    int c;
    if (kind == ITEM_FLOAT) {
        if (isnan(best.f))
            return last && isnan(v.f); /* the first (or last) NaN stays */
        if (isnan(v.f))
            return 1;
        c = (v.f > best.f) - (v.f < best.f);
    } else if (kind == ITEM_UNSIGNED) {
        c = (v.u > best.u) - (v.u < best.u);
    } else {
        c = (v.i > best.i) - (v.i < best.i);
    }
    if (min)
        c = -c;
    return c > 0 || (c == 0 && last);
}

static void arg_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)prepared;
    const arg_attributes *a = node->attributes;
    const ember_tensor *x = io->inputs[0];
    const ember_item_kind kind = ember_item_kind_of(x->datum_type);
    const int64_t outer = ember_shape_count(x->shape, (int)a->axis);
    const int64_t length = x->shape[a->axis];
    const int64_t inner = ember_shape_count(x->shape + a->axis + 1, x->rank - (int)a->axis - 1);
    int64_t *out = io->output->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t n = 0; n < inner; n++) {
            const int64_t base = o * length * inner + n;
            ember_item best = ember_item_get(x->datum_type, x->data, base);
            int64_t index = 0;
            for (int64_t k = 1; k < length; k++) {
                const ember_item v = ember_item_get(x->datum_type, x->data, base + k * inner);
                if (better(kind, node->op->variant, v, best)) {
                    best = v;
                    index = k;
                }
            }
            out[o * inner + n] = index;
        }
}

#define ARG_OP(symbol, nnef_name, variant_)                                                \
    const ember_op ember_op_##symbol = {.name = nnef_name, .variant = variant_,            \
                                        .params = arg_params, .param_count = 2,            \
                                        .parse = arg_parse, .infer = arg_infer,            \
                                        .run = arg_run};
ARG_OP(argmax_reduce, "argmax_reduce", ARGMAX)
ARG_OP(argmin_reduce, "argmin_reduce", ARGMIN)
ARG_OP(argmax_reduce_last, "tract_core_argmax_reduce_last", ARGMAX | LAST)
ARG_OP(argmin_reduce_last, "tract_core_argmin_reduce_last", ARGMIN | LAST)
