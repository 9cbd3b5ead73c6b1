/*
 * tract_core_cast(input, to = "f32"): every item converted to the datum type `to`, for
 * every pair of ember's types, as numpy's astype does on the usual platforms:
 *   - integer → integer wraps modulo 2^bits (two's complement);
 *   - float → integer truncates toward zero; NaN, ±inf and values beyond int64 give
 *     INT64_MIN before wrapping (what x86's conversion gives, and numpy with it);
 *   - x → bool is x != 0 (NaN is true); bool → x is 0 or 1;
 *   - between floats, round to nearest even (f16 overflows to ±inf).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"
#include "core/op.h"
#include "core/shape.h"
#include "ops/items.h"
#include "ops/ops.h"

typedef struct cast_attributes {
    ember_datum_type to;
} cast_attributes;

static const ember_op_param cast_params[] = {
    {"input", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"to", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};

static ember_status cast_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                               void **out)
{
    cast_attributes *a = calloc(1, sizeof *a);
    if (a == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = a;
    const char *to = NULL;
    ember_status status = ember_attr_string(node, "to", attrs[1], NULL, &to);
    if (status != EMBER_OK)
        return status;
    if (to == NULL)
        return ember_node_error(node, EMBER_ERROR_INVALID, "missing attribute 'to'");
    a->to = ember_datum_type_from_name(to);
    if (a->to == 0)
        return ember_node_error(node, EMBER_ERROR_UNSUPPORTED, "cannot cast to '%s' (ember "
                                "has f16, f32, f64, i8…i64, u8…u64 and bool)", to);
    return EMBER_OK;
}

static ember_status cast_infer(ember_node *node, const ember_value *const *inputs,
                               ember_value *output)
{
    output->datum_type = ((const cast_attributes *)node->attributes)->to;
    output->rank = inputs[0]->rank;
    memcpy(output->shape, inputs[0]->shape, sizeof output->shape);
    return EMBER_OK;
}

/* A float as an int64, the way x86's cvttsd2si does it. */
static int64_t float_to_int(double f)
{
    if (!(f > -9223372036854775808.0 && f < 9223372036854775808.0))
        return INT64_MIN; /* NaN, ±inf, out of range */
    return (int64_t)f;
}

/* `v` of kind `from` as an item of kind `to_kind` (before the final wrap or rounding). */
static ember_item convert(ember_item v, ember_item_kind from, ember_datum_type to)
{
    const ember_item_kind to_kind = ember_item_kind_of(to);
    ember_item r = v;
    if (to == EMBER_BOOL) {
        r.u = from == ITEM_FLOAT ? v.f != 0 : v.u != 0;
    } else if (to_kind == ITEM_FLOAT) {
        if (from == ITEM_SIGNED)
            r.f = (double)v.i;
        else if (from == ITEM_UNSIGNED)
            r.f = (double)v.u;
    } else if (from == ITEM_FLOAT) {
        /* u64 takes values up to 2^64 through its own path, as numpy does */
        if (to == EMBER_U64 && v.f >= 9223372036854775808.0 && v.f < 18446744073709551616.0)
            r.u = (uint64_t)v.f;
        else
            r.i = float_to_int(v.f);
    }
    return r; /* integer → integer: the bits, wrapped by ember_item_put */
}

static void cast_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)prepared;
    const ember_tensor *x = io->inputs[0];
    const ember_datum_type to = ((const cast_attributes *)node->attributes)->to;
    const ember_item_kind from = ember_item_kind_of(x->datum_type);
    const int64_t n = ember_shape_count(x->shape, x->rank);
    if (to == x->datum_type) {
        memcpy(io->output->data, x->data, (size_t)n * ember_datum_size(to));
        return;
    }
    if (x->datum_type == EMBER_F64 && to == EMBER_F32) { /* the common case, vectorised */
        const double *in = x->data;
        float *out = io->output->data;
        for (int64_t i = 0; i < n; i++)
            out[i] = (float)in[i];
        return;
    }
    for (int64_t i = 0; i < n; i++)
        ember_item_put(to, io->output->data, i,
                       convert(ember_item_get(x->datum_type, x->data, i), from, to));
}

const ember_op ember_op_cast = {.name = "tract_core_cast", .params = cast_params,
                                .param_count = 2, .parse = cast_parse, .infer = cast_infer,
                                .run = cast_run};
