/*
 * Ops along one axis, each lane (all indices but the axis) on its own:
 *   ember_cumsum(input, axis, exclusive = false, reverse = false)   running sums
 *   ember_cumprod(…)                                               running products
 *       (ONNX CumSum / CumProd: exclusive starts from 0 / 1, reverse runs from the end)
 *   (values, indices) = ember_topk(input, k, axis, largest = true)
 *       the k largest (or smallest) items of each lane and their i64 indices, in order,
 *       equal items by increasing index, NaN after every number (numpy's stable sort)
 * Any numeric datum type; sums and products in the type (integers wrap; floats in
 * double, rounded once per item).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "core/attr.h"
#include "core/op.h"
#include "core/shape.h"
#include "ops/items.h"
#include "ops/ops.h"

enum { CUMSUM, CUMPROD, TOPK };

typedef struct lane_attributes {
    int64_t axis, k;
    int exclusive, reverse, largest;
} lane_attributes;

static const ember_op_param cumulative_params[] = {
    {"input", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"axis", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"exclusive", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"reverse", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};
static const ember_op_param topk_params[] = {
    {"input", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"k", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"axis", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"largest", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};

static ember_status lane_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                               void **out)
{
    lane_attributes *a = calloc(1, sizeof *a);
    if (a == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = a;
    ember_status status;
    if (node->op->variant == TOPK) {
        status = ember_attr_int(node, "k", attrs[1], -1, &a->k);
        if (status == EMBER_OK)
            status = ember_attr_int(node, "axis", attrs[2], -1, &a->axis);
        if (status == EMBER_OK)
            status = ember_attr_bool(node, "largest", attrs[3], 1, &a->largest);
        if (status == EMBER_OK && a->k < 0)
            return ember_node_error(node, EMBER_ERROR_INVALID, "k must be given, >= 0");
        return status;
    }
    status = ember_attr_int(node, "axis", attrs[1], 0, &a->axis);
    if (status == EMBER_OK)
        status = ember_attr_bool(node, "exclusive", attrs[2], 0, &a->exclusive);
    if (status == EMBER_OK)
        status = ember_attr_bool(node, "reverse", attrs[3], 0, &a->reverse);
    return status;
}

static ember_status lane_infer(ember_node *node, const ember_value *const *inputs,
                               ember_value *output)
{
    lane_attributes *a = node->attributes;
    const ember_value *x = inputs[0];
    ember_status status = ember_attr_axes(node, "axis", &a->axis, 1, x->rank, 1);
    if (status != EMBER_OK)
        return status;
    if (x->datum_type == EMBER_BOOL)
        return ember_node_error(node, EMBER_ERROR_INVALID, "input is bool; %s takes numbers",
                                node->op->name);
    output[0].datum_type = x->datum_type;
    output[0].rank = x->rank;
    memcpy(output[0].shape, x->shape, sizeof x->shape);
    if (node->op->variant != TOPK)
        return EMBER_OK;
    if (node->output_count != 2)
        return ember_node_error(node, EMBER_ERROR_INVALID, "assigns %d results; topk gives 2 "
                                "(values, indices)", node->output_count);
    if (a->k > x->shape[a->axis])
        return ember_node_error(node, EMBER_ERROR_INVALID, "k = %lld is above the length %lld "
                                "of axis %lld", (long long)a->k,
                                (long long)x->shape[a->axis], (long long)a->axis);
    output[0].shape[a->axis] = a->k;
    output[1].datum_type = EMBER_I64; /* only the fact: the value's name is its own */
    output[1].rank = output[0].rank;
    memcpy(output[1].shape, output[0].shape, sizeof output[0].shape);
    return EMBER_OK;
}

/* outer × length × inner around the axis. */
static void lanes_of(const ember_tensor *x, int64_t axis, int64_t *outer, int64_t *length,
                     int64_t *inner)
{
    *outer = ember_shape_count(x->shape, (int)axis);
    *length = x->shape[axis];
    *inner = ember_shape_count(x->shape + axis + 1, x->rank - (int)axis - 1);
}

static void cumulative_run(const ember_node *node, const ember_op_io *io)
{
    const lane_attributes *a = node->attributes;
    const ember_tensor *x = io->inputs[0];
    const ember_datum_type dt = x->datum_type;
    const ember_item_kind kind = ember_item_kind_of(dt);
    const int product = node->op->variant == CUMPROD;
    int64_t outer, length, inner;
    lanes_of(x, a->axis, &outer, &length, &inner);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t n = 0; n < inner; n++) {
            ember_item acc;
            if (kind == ITEM_FLOAT)
                acc.f = product;
            else
                acc.u = (uint64_t)product;
            for (int64_t step = 0; step < length; step++) {
                const int64_t k = a->reverse ? length - 1 - step : step;
                const int64_t at = (o * length + k) * inner + n;
                const ember_item v = ember_item_get(dt, x->data, at);
                if (a->exclusive)
                    ember_item_put(dt, io->output->data, at, acc);
                if (kind == ITEM_FLOAT)
                    acc.f = product ? acc.f * v.f : acc.f + v.f;
                else
                    acc.u = product ? acc.u * v.u : acc.u + v.u;
                if (!a->exclusive)
                    ember_item_put(dt, io->output->data, at, acc);
            }
        }
}

/* ---------------------------------------------------------------- topk */

typedef struct lane {
    const ember_tensor *x;
    ember_item_kind kind;
    int64_t base, inner;
    int largest;
} lane;

/* Whether item i comes strictly before item j (ties: the caller keeps index order). */
static int lane_before(const void *context, int64_t i, int64_t j)
{
    const lane *l = context;
    const ember_item a = ember_item_get(l->x->datum_type, l->x->data, l->base + i * l->inner);
    const ember_item b = ember_item_get(l->x->datum_type, l->x->data, l->base + j * l->inner);
    int c;
    if (l->kind == ITEM_FLOAT) {
        if (isnan(a.f) || isnan(b.f))
            return !isnan(a.f);  /* NaN last, in either order */
        c = (a.f > b.f) - (a.f < b.f);
    } else if (l->kind == ITEM_UNSIGNED) {
        c = (a.u > b.u) - (a.u < b.u);
    } else {
        c = (a.i > b.i) - (a.i < b.i);
    }
    return l->largest ? c > 0 : c < 0;
}

static void topk_run(const ember_node *node, const ember_op_io *io)
{
    const lane_attributes *a = node->attributes;
    const ember_tensor *x = io->inputs[0];
    const size_t size = ember_datum_size(x->datum_type);
    int64_t outer, length, inner;
    lanes_of(x, a->axis, &outer, &length, &inner);
    int64_t *order = io->scratch, *tmp = order + length;
    int64_t *indices = io->output[1].data;
    uint8_t *values = io->output[0].data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t n = 0; n < inner; n++) {
            const lane l = {x, ember_item_kind_of(x->datum_type), o * length * inner + n, inner,
                            a->largest};
            for (int64_t i = 0; i < length; i++)
                order[i] = i;
            ember_stable_sort(order, tmp, length, lane_before, &l);
            for (int64_t i = 0; i < a->k; i++) {
                const int64_t at = (o * a->k + i) * inner + n;
                indices[at] = order[i];
                memcpy(values + (size_t)at * size,
                       (const uint8_t *)x->data + (size_t)(l.base + order[i] * inner) * size, size);
            }
        }
}

static ember_status topk_prepare(ember_prepare_context *ctx, void **out_prepared)
{
    const lane_attributes *a = ctx->node->attributes;
    const ember_value *x = ember_node_input(ctx->model, ctx->node, 0);
    ctx->scratch_bytes = (size_t)(2 * x->shape[a->axis]) * sizeof(int64_t);
    *out_prepared = NULL;
    return EMBER_OK;
}

static void lane_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)prepared;
    if (node->op->variant == TOPK)
        topk_run(node, io);
    else
        cumulative_run(node, io);
}

const ember_op ember_op_cumsum = {.name = "ember_cumsum", .variant = CUMSUM,
    .params = cumulative_params, .param_count = 4, .parse = lane_parse, .infer = lane_infer,
    .run = lane_run};
const ember_op ember_op_cumprod = {.name = "ember_cumprod", .variant = CUMPROD,
    .params = cumulative_params, .param_count = 4, .parse = lane_parse, .infer = lane_infer,
    .run = lane_run};
const ember_op ember_op_topk = {.name = "ember_topk", .variant = TOPK,
    .params = topk_params, .param_count = 4, .parse = lane_parse, .infer = lane_infer,
    .prepare = topk_prepare, .run = lane_run, .max_outputs = 2};
