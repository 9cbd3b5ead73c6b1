/*
 * slice(input, axes, begin, end, stride = []): per listed axis, the items
 * begin, begin + stride, … up to end (exclusive), Python-style:
 *   - a negative begin/end counts from the end of the axis;
 *   - out-of-range bounds are clamped;
 *   - end = 0 with begin ≥ 0 and a positive stride means "to the end" (tract's rule);
 *   - a negative stride walks backwards.
 * Any datum type: a strided copy starting at the first selected item.
 */
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"
#include "core/op.h"
#include "core/shape.h"
#include "ops/nd.h"
#include "ops/ops.h"

typedef struct slice_attributes {
    int64_t axes[EMBER_MAX_RANK], begin[EMBER_MAX_RANK], end[EMBER_MAX_RANK];
    int64_t stride[EMBER_MAX_RANK];
    int count;
    /* Resolved by infer, per input dim. */
    int64_t first[EMBER_MAX_RANK], step[EMBER_MAX_RANK];
} slice_attributes;

static ember_status slice_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                                void **out)
{
    slice_attributes *a = calloc(1, sizeof *a);
    if (a == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = a;
    int axes, begins, ends, strides;
    ember_status status = ember_attr_int_list(node, "axes", attrs[1], a->axes, EMBER_MAX_RANK,
                                              &axes);
    if (status == EMBER_OK)
        status = ember_attr_int_list(node, "begin", attrs[2], a->begin, EMBER_MAX_RANK, &begins);
    if (status == EMBER_OK)
        status = ember_attr_int_list(node, "end", attrs[3], a->end, EMBER_MAX_RANK, &ends);
    if (status == EMBER_OK)
        status = ember_attr_int_list(node, "stride", attrs[4], a->stride, EMBER_MAX_RANK,
                                     &strides);
    if (status != EMBER_OK)
        return status;
    if (begins != axes || ends != axes || (strides != 0 && strides != axes))
        return ember_node_error(node, EMBER_ERROR_INVALID,
                                "axes, begin, end (and stride) must have the same length "
                                "(%d, %d, %d, %d)", axes, begins, ends, strides);
    for (int i = 0; i < axes; i++) {
        if (strides == 0)
            a->stride[i] = 1;
        if (a->stride[i] == 0)
            return ember_node_error(node, EMBER_ERROR_INVALID, "stride 0 on axis %lld",
                                    (long long)a->axes[i]);
    }
    a->count = axes;
    return EMBER_OK;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* First index and item count of one sliced axis of extent `dim`. */
static void slice_axis(int64_t dim, int64_t begin, int64_t end, int64_t step, int64_t *first,
                       int64_t *count)
{
    if (step > 0) {
        if (end == 0 && begin >= 0)
            end = dim;
        begin = clamp64(begin < 0 ? begin + dim : begin, 0, dim);
        end = clamp64(end < 0 ? end + dim : end, 0, dim);
        *count = end > begin ? (end - begin + step - 1) / step : 0;
    } else {
        begin = clamp64(begin < 0 ? begin + dim : begin, -1, dim - 1);
        end = clamp64(end < 0 ? end + dim : end, -1, dim - 1);
        *count = begin > end ? (begin - end + (-step) - 1) / (-step) : 0;
    }
    *first = begin;
}

static ember_status slice_infer(ember_node *node, const ember_value *const *inputs,
                                ember_value *output)
{
    slice_attributes *a = node->attributes;
    const ember_value *x = inputs[0];
    ember_status status = ember_attr_axes(node, "axes", a->axes, a->count, x->rank, 1);
    if (status != EMBER_OK)
        return status;
    output->datum_type = x->datum_type;
    output->rank = x->rank;
    for (int d = 0; d < x->rank; d++) {
        a->first[d] = 0;
        a->step[d] = 1;
        output->shape[d] = x->shape[d];
    }
    for (int i = 0; i < a->count; i++) {
        const int d = (int)a->axes[i];
        /* Bounds beyond ±2^62 are clamped anyway; keep the arithmetic from wrapping. */
        const int64_t limit = (int64_t)1 << 62;
        slice_axis(x->shape[d], clamp64(a->begin[i], -limit, limit),
                   clamp64(a->end[i], -limit, limit), clamp64(a->stride[i], -limit, limit),
                   &a->first[d], &output->shape[d]);
        a->step[d] = a->stride[i];
    }
    return EMBER_OK;
}

static void slice_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)prepared;
    const slice_attributes *a = node->attributes;
    const ember_tensor *x = io->inputs[0];
    const size_t item = ember_datum_size(x->datum_type);
    int64_t in_strides[EMBER_MAX_RANK], read_strides[EMBER_MAX_RANK];
    ember_shape_strides(x->shape, x->rank, in_strides);
    int64_t start = 0;
    for (int d = 0; d < x->rank; d++) {
        start += a->first[d] * in_strides[d];
        read_strides[d] = a->step[d] * in_strides[d];
    }
    ember_copy_strided(io->output->data, (const uint8_t *)x->data + start * (int64_t)item,
                       x->rank, io->output->shape, read_strides, item);
}

static const ember_op_param slice_params[] = {
    {"input", EMBER_PARAM_TENSOR, 0, 0.0f},    {"axes", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"begin", EMBER_PARAM_ATTRIBUTE, 0, 0.0f}, {"end", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"stride", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};

const ember_op ember_op_slice = {.name = "slice", .params = slice_params,
    .param_count = 5, .parse = slice_parse, .infer = slice_infer, .run = slice_run};
