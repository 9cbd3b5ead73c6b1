/*
 * local_response_normalization(input, size, alpha = 1, beta = 0.5, bias = 1):
 *
 *     y = x / (bias + alpha / prod(size) · Σ_window x²)^beta
 *
 * The window is `size` (one entry per input dim) centred on the element: along a dim of
 * extent s it spans [i - floor((s-1)/2), i + ceil((s-1)/2)], cut at the borders — ONNX's
 * LRN is size = [1, n, 1, 1]. The reference sums each window directly.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"
#include "core/op.h"
#include "core/shape.h"
#include "ops/nd.h"
#include "ops/ops.h"

typedef struct lrn_attributes {
    int64_t size[EMBER_MAX_RANK];
    int size_count;
    double alpha, beta, bias;
} lrn_attributes;

static ember_status lrn_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                              void **out)
{
    lrn_attributes *a = calloc(1, sizeof *a);
    if (a == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = a;
    if (attrs[1] == NULL)
        return ember_node_error(node, EMBER_ERROR_INVALID, "missing argument 'size'");
    ember_status status = ember_attr_int_list(node, "size", attrs[1], a->size, EMBER_MAX_RANK,
                                              &a->size_count);
    if (status == EMBER_OK)
        status = ember_attr_float(node, "alpha", attrs[2], 1.0, &a->alpha);
    if (status == EMBER_OK)
        status = ember_attr_float(node, "beta", attrs[3], 0.5, &a->beta);
    if (status == EMBER_OK)
        status = ember_attr_float(node, "bias", attrs[4], 1.0, &a->bias);
    return status;
}

static ember_status lrn_infer(ember_node *node, const ember_value *const *inputs,
                              ember_value *output)
{
    const lrn_attributes *a = node->attributes;
    const ember_value *x = inputs[0];
    if (x->datum_type != EMBER_F32)
        return ember_node_error(node, EMBER_ERROR_UNSUPPORTED, "LRN computes in f32, got %s",
                                ember_datum_type_name(x->datum_type));
    if (a->size_count != x->rank)
        return ember_node_error(node, EMBER_ERROR_INVALID,
                                "size has %d entries for an input of rank %d", a->size_count,
                                x->rank);
    for (int d = 0; d < x->rank; d++)
        if (a->size[d] < 1 || a->size[d] > ((int64_t)1 << 30))
            return ember_node_error(node, EMBER_ERROR_INVALID, "size[%d] = %lld", d,
                                    (long long)a->size[d]);
    output->datum_type = EMBER_F32;
    output->rank = x->rank;
    memcpy(output->shape, x->shape, sizeof output->shape);
    return EMBER_OK;
}

static void lrn_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)prepared;
    const lrn_attributes *a = node->attributes;
    const ember_tensor *x = io->inputs[0];
    const int rank = x->rank;
    const float *in = x->data;
    float *out = io->output->data;
    int64_t strides[EMBER_MAX_RANK];
    ember_shape_strides(x->shape, rank, strides);
    const double scale = a->alpha / (double)ember_shape_count(a->size, rank);

    ember_nd_iter it;
    ember_nd_iter_init(&it, rank, x->shape, NULL, NULL);
    int64_t i = 0;
    do {
        /* The window, clipped to the tensor: [lo, hi) per dim. */
        int64_t lo[EMBER_MAX_RANK], hi[EMBER_MAX_RANK], cell[EMBER_MAX_RANK];
        for (int d = 0; d < rank; d++) {
            lo[d] = it.index[d] - (a->size[d] - 1) / 2;
            hi[d] = lo[d] + a->size[d];
            lo[d] = lo[d] < 0 ? 0 : lo[d];
            hi[d] = hi[d] > x->shape[d] ? x->shape[d] : hi[d];
            cell[d] = lo[d];
        }
        double sum = 0.0;
        for (;;) {
            int64_t offset = 0;
            for (int d = 0; d < rank; d++)
                offset += cell[d] * strides[d];
            sum += (double)in[offset] * in[offset];
            int d = rank - 1;
            for (; d >= 0; d--) {
                if (++cell[d] < hi[d])
                    break;
                cell[d] = lo[d];
            }
            if (d < 0)
                break;
        }
        out[i] = (float)(in[i] / pow(a->bias + scale * sum, a->beta));
        i++;
    } while (ember_nd_iter_next(&it));
}

static const ember_op_param lrn_params[] = {
    {"input", EMBER_PARAM_TENSOR, 0, 0.0f}, {"size", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"alpha", EMBER_PARAM_ATTRIBUTE, 0, 0.0f}, {"beta", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"bias", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};

const ember_op ember_op_local_response_normalization = {
    .name = "local_response_normalization", .params = lrn_params, .param_count = 5,
    .parse = lrn_parse, .infer = lrn_infer, .run = lrn_run};
