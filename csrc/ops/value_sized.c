/*
 * Ops whose output size the input values decide (EMBER_OP_DECIDES_SIZE, see
 * core/model_stages.h). Each names the symbol of that size in its `count` attribute,
 * which the stage builder substitutes by -1; infer gives the largest possible shape (the
 * buffers are sized for it), run writes the actual shape into its outputs, and
 * decided_count reads the size back for the stages after it.
 *
 *   ember_nonzero(input, count)              i64 [rank, count]: the indices of the
 *                                            non-zero items, row-major order
 *   ember_compress(input, condition, axis, count)
 *                                            the slices along `axis` whose condition is
 *                                            true (condition: bool, 1-D, may be shorter
 *                                            than the axis: missing entries are false)
 *   values, indices, inverse, counts = ember_unique(input, axis, sorted, count)
 *                                            the distinct slices along `axis` (sorted
 *                                            lexicographically, or in order of first
 *                                            occurrence), the index of each one's first
 *                                            occurrence, each slice's index in `values`,
 *                                            and how often each occurs (ONNX Unique)
 *
 * Any datum type; floats compare by value (-0 equals 0; NaNs compare equal to each
 * other and after every number, as numpy sorts them).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "core/attr.h"
#include "core/half.h"
#include "core/op.h"
#include "core/shape.h"
#include "ops/items.h"
#include "ops/ops.h"

enum { NONZERO, COMPRESS, UNIQUE };

typedef struct sized_attributes {
    int64_t axis;            /* compress, unique; resolved against the rank by infer */
    int sorted;
} sized_attributes;

/* ---------------------------------------------------------------- items as numbers */

/* Item i of a tensor as a double (exact for every type but 64-bit integers beyond 2^53,
 * which compare_items handles separately). */
static double item(ember_datum_type dt, const void *data, int64_t i)
{
    switch (dt) {
    case EMBER_F32: return ((const float *)data)[i];
    case EMBER_F64: return ((const double *)data)[i];
    case EMBER_F16: return ember_f16_to_f32(((const uint16_t *)data)[i]);
    case EMBER_I8: return ((const int8_t *)data)[i];
    case EMBER_U8: case EMBER_BOOL: return ((const uint8_t *)data)[i];
    case EMBER_I16: return ((const int16_t *)data)[i];
    case EMBER_U16: return ((const uint16_t *)data)[i];
    case EMBER_I32: return ((const int32_t *)data)[i];
    case EMBER_U32: return ((const uint32_t *)data)[i];
    case EMBER_I64: return (double)((const int64_t *)data)[i];
    case EMBER_U64: return (double)((const uint64_t *)data)[i];
    }
    return 0;
}

static int is_nonzero(ember_datum_type dt, const void *data, int64_t i)
{
    switch (dt) {
    case EMBER_I64: return ((const int64_t *)data)[i] != 0;
    case EMBER_U64: return ((const uint64_t *)data)[i] != 0;
    default: return item(dt, data, i) != 0; /* NaN is non-zero, as in numpy */
    }
}

/* -1, 0, 1: a before, equal to, after b. */
static int compare_items(ember_datum_type dt, const void *a, int64_t i, const void *b,
                         int64_t j)
{
    if (dt == EMBER_I64) {
        const int64_t x = ((const int64_t *)a)[i], y = ((const int64_t *)b)[j];
        return (x > y) - (x < y);
    }
    if (dt == EMBER_U64) {
        const uint64_t x = ((const uint64_t *)a)[i], y = ((const uint64_t *)b)[j];
        return (x > y) - (x < y);
    }
    const double x = item(dt, a, i), y = item(dt, b, j);
    if (isnan(x) || isnan(y))
        return isnan(x) - isnan(y);
    return (x > y) - (x < y);
}

/* ---------------------------------------------------------------- shapes */

static const ember_op_param nonzero_params[] = {
    {"input", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"count", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};
static const ember_op_param compress_params[] = {
    {"input", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"condition", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"axis", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"count", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};
static const ember_op_param unique_params[] = {
    {"input", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"axis", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"sorted", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"count", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};

static ember_status sized_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                                void **out)
{
    sized_attributes *a = calloc(1, sizeof *a);
    if (a == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = a;
    const size_t count_param = node->op->param_count - 1;
    int64_t count = 0;
    ember_status status = ember_attr_int(node, "count", attrs[count_param], 0, &count);
    if (status == EMBER_OK && count != -1)
        return ember_node_error(node, EMBER_ERROR_INVALID, "count must name a symbol of the "
                                "plan (its size is decided by the run)");
    if (status == EMBER_OK && node->op->variant != NONZERO)
        status = ember_attr_int(node, "axis", attrs[node->op->variant == COMPRESS ? 2 : 1], 0,
                                &a->axis);
    if (status == EMBER_OK && node->op->variant == UNIQUE)
        status = ember_attr_bool(node, "sorted", attrs[2], 1, &a->sorted);
    return status;
}

static ember_status resolve_axis(const ember_node *node, const ember_value *x)
{
    sized_attributes *a = node->attributes;
    if (x->rank == 0 || a->axis < -x->rank || a->axis >= x->rank)
        return ember_node_error(node, EMBER_ERROR_INVALID, "axis %lld is out of range for "
                                "rank %d", (long long)a->axis, (int)x->rank);
    if (a->axis < 0)
        a->axis += x->rank;
    return EMBER_OK;
}

static ember_status sized_infer(ember_node *node, const ember_value *const *inputs,
                                ember_value *output)
{
    const ember_value *x = inputs[0];
    const int64_t items = ember_shape_count(x->shape, x->rank);
    const int variant = node->op->variant;
    if (variant == NONZERO) {
        output->datum_type = EMBER_I64;
        output->rank = 2;
        output->shape[0] = x->rank;
        output->shape[1] = items;
        return EMBER_OK;
    }
    ember_status status = resolve_axis(node, x);
    if (status != EMBER_OK)
        return status;
    if (variant == COMPRESS && (inputs[1]->datum_type != EMBER_BOOL || inputs[1]->rank != 1))
        return ember_node_error(node, EMBER_ERROR_INVALID, "condition must be a 1-D bool "
                                "tensor, got %s of rank %d",
                                ember_datum_type_name(inputs[1]->datum_type),
                                (int)inputs[1]->rank);
    output[0].datum_type = x->datum_type;
    output[0].rank = x->rank;
    memcpy(output[0].shape, x->shape, sizeof x->shape); /* the axis at its largest */
    if (variant == COMPRESS)
        return EMBER_OK;
    if (node->output_count != 4)
        return ember_node_error(node, EMBER_ERROR_INVALID, "assigns %d results; unique gives "
                                "4 (values, indices, inverse, counts)", node->output_count);
    const int64_t length = x->shape[((sized_attributes *)node->attributes)->axis];
    for (int k = 1; k < 4; k++) {
        output[k].datum_type = EMBER_I64;
        output[k].rank = 1;
        output[k].shape[0] = length;
    }
    return EMBER_OK;
}

/* ---------------------------------------------------------------- run */

static void nonzero_run(const ember_op_io *io)
{
    const ember_tensor *x = io->inputs[0];
    const int64_t items = ember_shape_count(x->shape, x->rank);
    int64_t count = 0;
    for (int64_t i = 0; i < items; i++)
        count += is_nonzero(x->datum_type, x->data, i);
    int64_t *out = io->output->data, strides[EMBER_MAX_RANK], k = 0;
    ember_shape_strides(x->shape, x->rank, strides);
    for (int64_t i = 0; i < items; i++) {
        if (!is_nonzero(x->datum_type, x->data, i))
            continue;
        for (int d = 0; d < x->rank; d++)
            out[d * count + k] = (i / strides[d]) % x->shape[d];
        k++;
    }
    io->output->shape[1] = count;
}

/* outer × length × inner around `axis`. */
static void split_at(const ember_tensor *x, int64_t axis, int64_t *outer, int64_t *length,
                     int64_t *inner)
{
    *outer = ember_shape_count(x->shape, (int)axis);
    *length = x->shape[axis];
    *inner = ember_shape_count(x->shape + axis + 1, x->rank - (int)axis - 1);
}

/* Slice `from` along the axis copied to position `to` of `out` (of `out_length`). */
static void copy_slice(const ember_tensor *x, int64_t outer, int64_t length, int64_t inner,
                       int64_t from, void *out, int64_t out_length, int64_t to)
{
    const size_t size = ember_datum_size(x->datum_type);
    for (int64_t o = 0; o < outer; o++)
        memcpy((char *)out + ((o * out_length + to) * inner) * size,
               (const char *)x->data + ((o * length + from) * inner) * size,
               (size_t)inner * size);
}

static void compress_run(const ember_node *node, const ember_op_io *io)
{
    const sized_attributes *a = node->attributes;
    const ember_tensor *x = io->inputs[0], *condition = io->inputs[1];
    int64_t outer, length, inner, count = 0;
    split_at(x, a->axis, &outer, &length, &inner);
    const int64_t given = condition->shape[0] < length ? condition->shape[0] : length;
    const uint8_t *keep = condition->data;
    for (int64_t i = 0; i < given; i++)
        count += keep[i] != 0;
    for (int64_t i = 0, k = 0; i < given; i++)
        if (keep[i])
            copy_slice(x, outer, length, inner, i, io->output->data, count, k++);
    io->output->shape[a->axis] = count;
}

/* ---- unique */

typedef struct slices {
    const ember_tensor *x;
    int64_t outer, length, inner;
} slices;

/* Lexicographic order of slices i and j (item order: outer, then inner). */
static int compare_slices(const slices *s, int64_t i, int64_t j)
{
    for (int64_t o = 0; o < s->outer; o++)
        for (int64_t n = 0; n < s->inner; n++) {
            const int64_t base = o * s->length * s->inner + n;
            const int c = compare_items(s->x->datum_type, s->x->data, base + i * s->inner,
                                        s->x->data, base + j * s->inner);
            if (c != 0)
                return c;
        }
    return 0;
}

/* Equal slices keep their order in the stable sort: the first of a run is the first
 * occurrence. */
static int slice_before(const void *context, int64_t i, int64_t j)
{
    return compare_slices(context, i, j) < 0;
}

static void unique_run(const ember_node *node, const ember_op_io *io)
{
    const sized_attributes *a = node->attributes;
    slices s = {io->inputs[0], 0, 0, 0};
    split_at(s.x, a->axis, &s.outer, &s.length, &s.inner);
    int64_t *order = io->scratch, *tmp = order + s.length, *group = tmp + s.length;
    int64_t *mark = group + s.length;
    int64_t *first = io->output[1].data, *inverse = io->output[2].data;
    int64_t *counts = io->output[3].data;
    for (int64_t i = 0; i < s.length; i++)
        order[i] = i;
    ember_stable_sort(order, tmp, s.length, slice_before, &s);
    /* Groups of equal slices, in sorted order: group[i] for slice order[i]. */
    int64_t count = 0;
    for (int64_t i = 0; i < s.length; i++) {
        if (i == 0 || compare_slices(&s, order[i - 1], order[i]) != 0)
            first[count++] = order[i]; /* the smallest index of its group: stable sort */
        group[i] = count - 1;
    }
    /* rank[g]: where group g goes in the output — g itself when sorted, else its place
     * in order of first occurrence (first indices are distinct: one pass over them). */
    int64_t *rank = tmp;
    for (int64_t g = 0; g < count; g++)
        rank[g] = g;
    if (!a->sorted) {
        for (int64_t i = 0; i < s.length; i++)
            mark[i] = -1;
        for (int64_t g = 0; g < count; g++)
            mark[first[g]] = g;
        for (int64_t i = 0, r = 0; i < s.length; i++)
            if (mark[i] >= 0)
                rank[mark[i]] = r++;
    }
    int64_t *ordered_first = counts; /* counts is rewritten below, after its use here */
    for (int64_t g = 0; g < count; g++)
        ordered_first[rank[g]] = first[g];
    memcpy(first, ordered_first, (size_t)count * sizeof *first);
    for (int64_t g = 0; g < count; g++)
        counts[g] = 0;
    for (int64_t i = 0; i < s.length; i++) {
        inverse[order[i]] = rank[group[i]];
        counts[rank[group[i]]]++;
    }
    for (int64_t g = 0; g < count; g++)
        copy_slice(s.x, s.outer, s.length, s.inner, first[g], io->output[0].data, count, g);
    io->output[0].shape[a->axis] = count;
    io->output[1].shape[0] = count;
    io->output[3].shape[0] = count;
}

static ember_status unique_prepare(ember_prepare_context *ctx, void **out_prepared)
{
    const ember_value *x = ember_node_input(ctx->model, ctx->node, 0);
    const int64_t length = x->shape[((const sized_attributes *)ctx->node->attributes)->axis];
    ctx->scratch_bytes = (size_t)(4 * length) * sizeof(int64_t);
    *out_prepared = NULL;
    return EMBER_OK;
}

static void sized_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)prepared;
    switch (node->op->variant) {
    case NONZERO: nonzero_run(io); break;
    case COMPRESS: compress_run(node, io); break;
    default: unique_run(node, io); break;
    }
}

static int64_t sized_count(const ember_node *node, const ember_tensor *outputs, size_t item)
{
    (void)item;
    const sized_attributes *a = node->attributes;
    switch (node->op->variant) {
    case NONZERO: return outputs[0].shape[1];
    case COMPRESS: return outputs[0].shape[a->axis];
    default: return outputs[1].shape[0];
    }
}

const ember_op ember_op_ember_nonzero = {
    .name = "ember_nonzero", .variant = NONZERO, .flags = EMBER_OP_DECIDES_SIZE,
    .params = nonzero_params, .param_count = 2, .parse = sized_parse, .infer = sized_infer,
    .run = sized_run, .decided_count = sized_count};
const ember_op ember_op_ember_compress = {
    .name = "ember_compress", .variant = COMPRESS, .flags = EMBER_OP_DECIDES_SIZE,
    .params = compress_params, .param_count = 4, .parse = sized_parse, .infer = sized_infer,
    .run = sized_run, .decided_count = sized_count};
const ember_op ember_op_ember_unique = {
    .name = "ember_unique", .variant = UNIQUE, .flags = EMBER_OP_DECIDES_SIZE,
    .params = unique_params, .param_count = 4, .parse = sized_parse, .infer = sized_infer,
    .prepare = unique_prepare, .run = sized_run, .max_outputs = 4,
    .decided_count = sized_count};

/* ---------------------------------------------------------------- range */

/*
 *   n_ = ember_range_count(start, limit, delta, count = n)   decides n =
 *        max(ceil((limit - start) / delta), 0) from the three scalars (its output is n
 *        as an i64 scalar); then, in the next stage,
 *   y = ember_range(start, limit, delta, size = n)           start, start + delta, …
 *        (n items, in start's type)
 * ONNX Range, whose length only its values give. A delta of 0 gives 0 items (ONNX leaves
 * it undefined). Integers are computed in the type; floats in double.
 */
static double scalar_of(const ember_tensor *t)
{
    const ember_item v = ember_item_get(t->datum_type, t->data, 0);
    switch (ember_item_kind_of(t->datum_type)) {
    case ITEM_FLOAT: return v.f;
    case ITEM_UNSIGNED: return (double)v.u;
    default: return (double)v.i;
    }
}

static int64_t range_length(const ember_op_io *io)
{
    const double start = scalar_of(io->inputs[0]), limit = scalar_of(io->inputs[1]);
    const double delta = scalar_of(io->inputs[2]);
    if (delta == 0 || !(fabs((limit - start) / delta) < 9.0e15))
        return 0; /* also NaN and absurd lengths: an empty range, never a huge one */
    const double n = ceil((limit - start) / delta);
    return n > 0 ? (int64_t)n : 0;
}

static const ember_op_param range_params[] = {
    {"start", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"limit", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"delta", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"count", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};
static const ember_op_param range_sized_params[] = {
    {"start", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"limit", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"delta", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"size", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};

static ember_status range_check(ember_node *node, const ember_value *const *inputs)
{
    for (int i = 0; i < 3; i++)
        if (ember_shape_count(inputs[i]->shape, inputs[i]->rank) != 1 ||
            inputs[i]->datum_type != inputs[0]->datum_type ||
            inputs[0]->datum_type == EMBER_BOOL)
            return ember_node_error(node, EMBER_ERROR_INVALID, "start, limit and delta must be "
                                    "one-item numbers of one datum type");
    return EMBER_OK;
}

static ember_status count_infer(ember_node *node, const ember_value *const *inputs,
                                ember_value *output)
{
    output->datum_type = EMBER_I64;
    output->rank = 0;
    return range_check(node, inputs);
}

static void count_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)node;
    (void)prepared;
    *(int64_t *)io->output->data = range_length(io);
}

static int64_t count_decided(const ember_node *node, const ember_tensor *outputs,
                             size_t item)
{
    (void)node;
    (void)item;
    return *(const int64_t *)outputs[0].data;
}

typedef struct range_attributes {
    int64_t size;
} range_attributes;

static ember_status range_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                                void **out)
{
    range_attributes *a = calloc(1, sizeof *a);
    if (a == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = a;
    ember_status status = ember_attr_int(node, "size", attrs[3], -1, &a->size);
    if (status == EMBER_OK && a->size < 0)
        return ember_node_error(node, EMBER_ERROR_INVALID, "size must be given, >= 0");
    return status;
}

static ember_status range_infer(ember_node *node, const ember_value *const *inputs,
                                ember_value *output)
{
    output->datum_type = inputs[0]->datum_type;
    output->rank = 1;
    output->shape[0] = ((const range_attributes *)node->attributes)->size;
    return range_check(node, inputs);
}

static void range_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)prepared;
    const ember_tensor *start = io->inputs[0], *delta = io->inputs[2];
    const ember_datum_type dt = start->datum_type;
    const ember_item first = ember_item_get(dt, start->data, 0);
    const ember_item step = ember_item_get(dt, delta->data, 0);
    const int64_t n = ((const range_attributes *)node->attributes)->size;
    for (int64_t i = 0; i < n; i++) {
        ember_item v;
        if (ember_item_kind_of(dt) == ITEM_FLOAT)
            v.f = first.f + (double)i * step.f;
        else
            v.u = first.u + (uint64_t)i * step.u; /* wraps in the type, as numpy's arange */
        ember_item_put(dt, io->output->data, i, v);
    }
}

static ember_status count_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                                void **out)
{
    int64_t count = 0;
    *out = NULL;
    ember_status status = ember_attr_int(node, "count", attrs[3], 0, &count);
    if (status == EMBER_OK && count != -1)
        return ember_node_error(node, EMBER_ERROR_INVALID, "count must name a symbol of the "
                                "plan (its size is decided by the run)");
    return status;
}

const ember_op ember_op_ember_range_count = {
    .name = "ember_range_count", .flags = EMBER_OP_DECIDES_SIZE, .params = range_params,
    .param_count = 4, .parse = count_parse, .infer = count_infer, .run = count_run,
    .decided_count = count_decided};
const ember_op ember_op_ember_range = {
    .name = "ember_range", .params = range_sized_params, .param_count = 4,
    .parse = range_parse, .infer = range_infer, .run = range_run};
