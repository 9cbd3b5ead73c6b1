/*
 * softmax(x, axes = [1]): exp(x - max) / Σ exp(x - max), the max and the sum taken over
 * `axes` (subtracting the max keeps exp from overflowing; the result is unchanged).
 *
 * The index space splits in two: the kept dims pick a group, the reduced dims walk
 * its members. Each group takes three passes over its members: max, exp and sum,
 * scale. When the only axis is the last one, members are contiguous.
 *
 * When the reduced axes are the innermost ones, each group is one contiguous row: f32 then
 * goes through the CPU's softmax row kernel (kernels.h: the max and the sum in eight
 * running lanes, exp by the CPU's vectorised recipe, csrc/kernels/README.md: about 1 ulp).
 *
 * f32 and f64 compute in their type; f16 is read as f32 and each result rounded once
 * (its exp is computed again in the last pass rather than stored at half precision).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"
#include "core/half.h"
#include "core/op.h"
#include "core/shape.h"
#include "ops/nd.h"
#include "ops/ops.h"

typedef struct softmax_attributes {
    int64_t axes[EMBER_MAX_RANK];
    int axis_count;
} softmax_attributes;

static ember_status softmax_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                                  void **out)
{
    softmax_attributes *a = calloc(1, sizeof *a);
    if (a == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = a;
    if (attrs[1] == NULL) { /* NNEF's default */
        a->axes[0] = 1;
        a->axis_count = 1;
        return EMBER_OK;
    }
    return ember_attr_int_list(node, "axes", attrs[1], a->axes, EMBER_MAX_RANK, &a->axis_count);
}

static ember_status softmax_infer(ember_node *node, const ember_value *const *inputs,
                                  ember_value *output)
{
    softmax_attributes *a = node->attributes;
    const ember_value *x = inputs[0];
    if (x->datum_type != EMBER_F32 && x->datum_type != EMBER_F64 && x->datum_type != EMBER_F16)
        return ember_node_error(node, EMBER_ERROR_UNSUPPORTED,
                                "softmax takes f32, f64 or f16, got %s",
                                ember_datum_type_name(x->datum_type));
    ember_status status = ember_attr_axes(node, "axes", a->axes, a->axis_count, x->rank, 1);
    if (status != EMBER_OK)
        return status;
    output->datum_type = x->datum_type;
    output->rank = x->rank;
    memcpy(output->shape, x->shape, sizeof output->shape);
    return EMBER_OK;
}

/* One group: its members are at offsets walked by `members`, from `base`. */
static void softmax_group_f32(const float *in, float *out, int64_t base,
                              const ember_nd_iter *members)
{
    ember_nd_iter it = *members;
    float max = -INFINITY;
    do {
        const float v = in[base + it.offset[0]];
        max = v > max ? v : max;
    } while (ember_nd_iter_next(&it));
    float sum = 0.0f;
    it = *members;
    do {
        const float e = expf(in[base + it.offset[0]] - max);
        out[base + it.offset[0]] = e;
        sum += e;
    } while (ember_nd_iter_next(&it));
    const float scale = 1.0f / sum;
    it = *members;
    do
        out[base + it.offset[0]] *= scale;
    while (ember_nd_iter_next(&it));
}

static void softmax_group_f64(const double *in, double *out, int64_t base,
                              const ember_nd_iter *members)
{
    ember_nd_iter it = *members;
    double max = -INFINITY;
    do {
        const double v = in[base + it.offset[0]];
        max = v > max ? v : max;
    } while (ember_nd_iter_next(&it));
    double sum = 0.0;
    it = *members;
    do {
        const double e = exp(in[base + it.offset[0]] - max);
        out[base + it.offset[0]] = e;
        sum += e;
    } while (ember_nd_iter_next(&it));
    const double scale = 1.0 / sum;
    it = *members;
    do
        out[base + it.offset[0]] *= scale;
    while (ember_nd_iter_next(&it));
}

static void softmax_group_f16(const uint16_t *in, uint16_t *out, int64_t base,
                              const ember_nd_iter *members)
{
    ember_nd_iter it = *members;
    float max = -INFINITY;
    do {
        const float v = ember_f16_to_f32(in[base + it.offset[0]]);
        max = v > max ? v : max;
    } while (ember_nd_iter_next(&it));
    float sum = 0.0f;
    it = *members;
    do
        sum += expf(ember_f16_to_f32(in[base + it.offset[0]]) - max);
    while (ember_nd_iter_next(&it));
    const float scale = 1.0f / sum;
    it = *members;
    do {
        const float e = expf(ember_f16_to_f32(in[base + it.offset[0]]) - max);
        out[base + it.offset[0]] = ember_f32_to_f16(e * scale);
    } while (ember_nd_iter_next(&it));
}

/* The kernels for this CPU's f32 rows: the row's and the exp it calls. */
typedef struct softmax_prepared {
    ember_f32_softmax_row_fn row;
    ember_f32_vunary_fn vexp;
} softmax_prepared;

static ember_status softmax_prepare(ember_prepare_context *ctx, void **out)
{
    *out = NULL; /* without the kernels, the general loops */
    if (ctx->kernels->f32_softmax_row == NULL || ctx->kernels->f32_vexp == NULL)
        return EMBER_OK;
    softmax_prepared *p = malloc(sizeof *p);
    if (p == NULL)
        return ember_node_error(ctx->node, EMBER_ERROR_MEMORY, "out of memory");
    p->row = ctx->kernels->f32_softmax_row->fn;
    p->vexp = ctx->kernels->f32_vexp->fn;
    *out = p;
    return EMBER_OK;
}

/* Members per group when the reduced axes are exactly the innermost ones, else 0. */
static int64_t innermost_members(const softmax_attributes *a, const ember_tensor *x)
{
    int64_t members = 1;
    for (int d = x->rank - 1; d >= x->rank - a->axis_count; d--) {
        int reduced = 0;
        for (int i = 0; i < a->axis_count; i++)
            reduced |= a->axes[i] == d;
        if (!reduced)
            return 0;
        members *= x->shape[d];
    }
    return members;
}

static void softmax_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    const softmax_prepared *p = prepared;
    const softmax_attributes *a = node->attributes;
    const ember_tensor *x = io->inputs[0];
    const int64_t row = innermost_members(a, x);
    if (x->datum_type == EMBER_F32 && p != NULL && row > 0) {
        const int64_t count = ember_shape_count(x->shape, x->rank);
        for (int64_t base = 0; base < count; base += row)
            p->row((size_t)row, (const float *)x->data + base,
                   (float *)io->output->data + base, p->vexp);
        return;
    }
    int64_t strides[EMBER_MAX_RANK];
    ember_shape_strides(x->shape, x->rank, strides);

    /* Split dims into kept (groups) and reduced (members), each with its strides. */
    int64_t group_dims[EMBER_MAX_RANK], group_strides[EMBER_MAX_RANK];
    int64_t member_dims[EMBER_MAX_RANK], member_strides[EMBER_MAX_RANK];
    int groups_rank = 0, members_rank = 0;
    for (int d = 0; d < x->rank; d++) {
        int reduced = 0;
        for (int i = 0; i < a->axis_count; i++)
            reduced |= a->axes[i] == d;
        if (reduced) {
            member_dims[members_rank] = x->shape[d];
            member_strides[members_rank++] = strides[d];
        } else {
            group_dims[groups_rank] = x->shape[d];
            group_strides[groups_rank++] = strides[d];
        }
    }
    ember_nd_iter members, groups;
    ember_nd_iter_init(&members, members_rank, member_dims, member_strides, NULL);
    ember_nd_iter_init(&groups, groups_rank, group_dims, group_strides, NULL);
    do {
        if (x->datum_type == EMBER_F64)
            softmax_group_f64(x->data, io->output->data, groups.offset[0], &members);
        else if (x->datum_type == EMBER_F16)
            softmax_group_f16(x->data, io->output->data, groups.offset[0], &members);
        else
            softmax_group_f32(x->data, io->output->data, groups.offset[0], &members);
    } while (ember_nd_iter_next(&groups));
}

static const ember_op_param softmax_params[] = {
    {"x", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"axes", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};

const ember_op ember_op_softmax = {.name = "softmax", .params = softmax_params,
    .param_count = 2, .parse = softmax_parse, .infer = softmax_infer,
    .prepare = softmax_prepare, .run = softmax_run, .free_prepared = free};
