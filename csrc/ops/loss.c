/*
 * ember_nll_loss(input, target, weight, reduction = "mean", ignore_index = none): ONNX
 * NegativeLogLikelihoodLoss. input is [N, C, d…] (floats), target [N, d…] (i32 or i64
 * class indices), weight [C]. Each item's loss is -input[n, target, d…] · weight[target];
 * an item whose target equals ignore_index, or lies outside [0, C) (ONNX leaves it
 * undefined; here it never reads outside the input), counts 0 with weight 0. reduction
 * "none" gives the losses (target's shape), "sum" their sum, "mean" their sum divided by
 * the sum of the weights (0 when that is 0). Computed in double, rounded once.
 */
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"
#include "core/op.h"
#include "core/shape.h"
#include "ops/items.h"
#include "ops/ops.h"

enum { NONE, SUM, MEAN };

typedef struct loss_attributes {
    int reduction;
    int64_t ignore_index;
    int has_ignore;
} loss_attributes;

static const ember_op_param loss_params[] = {
    {"input", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"target", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"weight", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"reduction", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"ignore_index", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};

static ember_status loss_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                               void **out)
{
    loss_attributes *a = calloc(1, sizeof *a);
    if (a == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = a;
    const char *reduction = NULL;
    ember_status status = ember_attr_string(node, "reduction", attrs[3], "mean", &reduction);
    if (status != EMBER_OK)
        return status;
    a->reduction = strcmp(reduction, "none") == 0 ? NONE : strcmp(reduction, "sum") == 0 ? SUM
                   : strcmp(reduction, "mean") == 0 ? MEAN : -1;
    if (a->reduction < 0)
        return ember_node_error(node, EMBER_ERROR_INVALID, "reduction '%s' (expected none, "
                                "sum or mean)", reduction);
    a->has_ignore = attrs[4] != NULL;
    return ember_attr_int(node, "ignore_index", attrs[4], 0, &a->ignore_index);
}

static int is_float(ember_datum_type dt)
{
    return ember_item_kind_of(dt) == ITEM_FLOAT;
}

static ember_status loss_infer(ember_node *node, const ember_value *const *inputs,
                               ember_value *output)
{
    const loss_attributes *a = node->attributes;
    const ember_value *x = inputs[0], *target = inputs[1], *weight = inputs[2];
    char xs[EMBER_SHAPE_TEXT], ts[EMBER_SHAPE_TEXT];
    if (!is_float(x->datum_type) || weight->datum_type != x->datum_type)
        return ember_node_error(node, EMBER_ERROR_INVALID, "input and weight must be floats "
                                "of one type, got %s and %s",
                                ember_datum_type_name(x->datum_type),
                                ember_datum_type_name(weight->datum_type));
    if (target->datum_type != EMBER_I64 && target->datum_type != EMBER_I32)
        return ember_node_error(node, EMBER_ERROR_INVALID, "target must be i32 or i64");
    int ok = x->rank >= 2 && target->rank == x->rank - 1 && target->shape[0] == x->shape[0] &&
             weight->rank == 1 && weight->shape[0] == x->shape[1];
    for (int d = 2; ok && d < x->rank; d++)
        ok = target->shape[d - 1] == x->shape[d];
    if (!ok)
        return ember_node_error(node, EMBER_ERROR_INVALID, "input %s, target %s and weight "
                                "[C] do not match", ember_shape_format(x->shape, x->rank, xs,
                                                                       sizeof xs),
                                ember_shape_format(target->shape, target->rank, ts, sizeof ts));
    output->datum_type = x->datum_type;
    output->rank = a->reduction == NONE ? target->rank : 0;
    memcpy(output->shape, target->shape, sizeof output->shape);
    return EMBER_OK;
}

static void loss_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)prepared;
    const loss_attributes *a = node->attributes;
    const ember_tensor *x = io->inputs[0], *target = io->inputs[1], *weight = io->inputs[2];
    const ember_datum_type dt = x->datum_type;
    const int64_t n = x->shape[0], classes = x->shape[1];
    const int64_t inner = ember_shape_count(x->shape + 2, x->rank - 2);
    double total = 0, weights = 0;
    for (int64_t b = 0; b < n; b++)
        for (int64_t i = 0; i < inner; i++) {
            const int64_t at = b * inner + i;
            const int64_t t = target->datum_type == EMBER_I64
                                  ? ((const int64_t *)target->data)[at]
                                  : ((const int32_t *)target->data)[at];
            ember_item loss;
            loss.f = 0;
            if (!(a->has_ignore && t == a->ignore_index) && t >= 0 && t < classes) {
                const double w = ember_item_get(dt, weight->data, t).f;
                loss.f = -ember_item_get(dt, x->data, (b * classes + t) * inner + i).f * w;
                weights += w;
            }
            total += loss.f;
            if (a->reduction == NONE)
                ember_item_put(dt, io->output->data, at, loss);
        }
    if (a->reduction == NONE)
        return;
    ember_item result;
    result.f = a->reduction == SUM ? total : weights != 0 ? total / weights : 0;
    ember_item_put(dt, io->output->data, 0, result);
}

const ember_op ember_op_nll_loss = {.name = "ember_nll_loss", .params = loss_params,
    .param_count = 5, .parse = loss_parse, .infer = loss_infer, .run = loss_run};
