/*
 * ember_det(input): the determinant of each matrix of input [..., n, n] (ONNX Det),
 * result [...]. f32, f64 and f16 in, computed in double by LU decomposition with partial
 * pivoting in the node's scratch, rounded once to the input's type. A singular matrix
 * gives 0 (or ±0 from the elimination); n = 0 gives 1, the empty product.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/op.h"
#include "core/shape.h"
#include "ops/items.h"
#include "ops/ops.h"

static const ember_op_param det_params[] = {{"input", EMBER_PARAM_TENSOR, 0, 0.0f}};

static ember_status det_infer(ember_node *node, const ember_value *const *inputs,
                              ember_value *output)
{
    const ember_value *x = inputs[0];
    const ember_datum_type dt = x->datum_type;
    if (dt != EMBER_F32 && dt != EMBER_F64 && dt != EMBER_F16)
        return ember_node_error(node, EMBER_ERROR_INVALID, "input is %s; det takes f16, f32 "
                                "or f64", ember_datum_type_name(dt));
    if (x->rank < 2 || x->shape[x->rank - 1] != x->shape[x->rank - 2]) {
        char xs[EMBER_SHAPE_TEXT];
        return ember_node_error(node, EMBER_ERROR_INVALID, "input %s is not a (batch of) "
                                "square matrices",
                                ember_shape_format(x->shape, x->rank, xs, sizeof xs));
    }
    output->datum_type = dt;
    output->rank = x->rank - 2;
    memcpy(output->shape, x->shape, (size_t)output->rank * sizeof(int64_t));
    return EMBER_OK;
}

static ember_status det_prepare(ember_prepare_context *ctx, void **out_prepared)
{
    const ember_value *x = ember_node_input(ctx->model, ctx->node, 0);
    const int64_t n = x->shape[x->rank - 1];
    ctx->scratch_bytes = (size_t)(n * n) * sizeof(double);
    *out_prepared = NULL;
    return EMBER_OK;
}

/* The determinant of the n×n matrix `a` (row-major), destroyed on the way. */
static double lu_determinant(double *a, int64_t n)
{
    double det = 1.0;
    for (int64_t c = 0; c < n; c++) {
        int64_t pivot = c;
        for (int64_t r = c + 1; r < n; r++)
            if (fabs(a[r * n + c]) > fabs(a[pivot * n + c]))
                pivot = r;
        if (a[pivot * n + c] == 0.0)
            return 0.0;
        if (pivot != c) {
            for (int64_t k = 0; k < n; k++) {
                const double t = a[c * n + k];
                a[c * n + k] = a[pivot * n + k];
                a[pivot * n + k] = t;
            }
            det = -det;
        }
        const double d = a[c * n + c];
        det *= d;
        for (int64_t r = c + 1; r < n; r++) {
            const double f = a[r * n + c] / d;
            for (int64_t k = c + 1; k < n; k++)
                a[r * n + k] -= f * a[c * n + k];
        }
    }
    return det;
}

static void det_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)node;
    (void)prepared;
    const ember_tensor *x = io->inputs[0];
    const ember_datum_type dt = x->datum_type;
    const int64_t n = x->shape[x->rank - 1];
    const int64_t count = ember_shape_count(x->shape, x->rank - 2);
    double *a = io->scratch;
    for (int64_t m = 0; m < count; m++) {
        for (int64_t i = 0; i < n * n; i++)
            a[i] = ember_item_get(dt, x->data, m * n * n + i).f;
        ember_item v;
        v.f = lu_determinant(a, n);
        ember_item_put(dt, io->output->data, m, v);
    }
}

const ember_op ember_op_det = {.name = "ember_det", .params = det_params, .param_count = 1,
                               .infer = det_infer, .prepare = det_prepare, .run = det_run};
