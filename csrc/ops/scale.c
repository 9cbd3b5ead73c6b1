/*
 * The scale: mul(x, k), k a constant f32 that is a single item or varies along one axis of
 * the output (a BatchNorm's scale), x of the output's shape. It hosts a fused epilogue
 * (core/fuse.c): the add of a constant along the same axis, a clamp, and a gate (a mul by
 * x itself, last), so a BatchNorm and relu left before a conv (DenseNet's pre-activation:
 * mul, add, relu) or a hardswish take one pass instead of three or four. Each step rounds
 * as the unfused ops do (x·k, then + b, then the clamp, then ·x), so the values are the
 * same; a NaN stays NaN through the clamp, as in the GEMM epilogues. Any other mul may
 * still absorb a clamp (a relu after it), applied in a second pass (ember_scale_clamp).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/shape.h"
#include "ops/scale.h"

struct ember_scale {
    int scale;                     /* the one-pass path */
    int x_operand;                 /* which input is x (k is the other) */
    int64_t outer, length, inner;  /* the output seen around the axis k and b vary on */
    int64_t k_step;                /* 1 along that axis, 0 for a single item */
    float *k;                      /* k's items, copied: a run touches no page of the plan
                                      file for a few hundred bytes of it */
    float *bias;                   /* length items, or NULL */
    float min, max;
    int gate;                      /* times x, last (hardswish) */
};

/* Whether mul `node` is a scale: *x_operand, and *axis (-2 when k is a single item). */
static int scale_operands(const ember_model *model, const ember_node *node,
                          const ember_value *out, int *x_operand, int *axis)
{
    for (int i = 0; node->input_count == 2 && i < 2; i++) {
        const ember_value *x = &model->values[node->inputs[i]];
        const ember_value *k = &model->values[node->inputs[1 - i]];
        if (k->constant == NULL || k->datum_type != EMBER_F32 || x->datum_type != EMBER_F32 ||
            !ember_shape_equal(x->shape, x->rank, out->shape, out->rank))
            continue;
        *axis = ember_shape_varying_axis(k->shape, k->rank, out->shape, out->rank);
        *x_operand = i;
        if (*axis != -1)
            return 1;
    }
    return 0;
}

int ember_scale_accepts_bias_axis(const ember_model *model, const ember_node *node,
                                  const ember_value *output, int axis)
{
    int x_operand, k_axis;
    return scale_operands(model, node, output, &x_operand, &k_axis) &&
           (k_axis == -2 || k_axis == axis);
}

static int uniform(const float *v, int64_t n)
{
    for (int64_t i = 1; i < n; i++)
        if (v[i] != v[0] || signbit(v[i]) != signbit(v[0]))
            return 0;
    return 1;
}

/* The gate a scale takes is its own operand x: hardswish, x · clamp(x·k + b, 0, 1). */
int ember_scale_accepts_gate(const ember_model *model, const ember_node *node, int gate)
{
    int x_operand, axis;
    return scale_operands(model, node, &model->values[node->output], &x_operand, &axis) &&
           node->inputs[x_operand] == gate;
}

int ember_scale_prologue(const ember_model *model, const ember_node *node,
                         const ember_epilogue *e, ember_prologue *out)
{
    const ember_value *y = &model->values[node->output];
    int x_operand, axis;
    if (strcmp(node->op->name, "mul") != 0 || !scale_operands(model, node, y, &x_operand, &axis) ||
        (axis != 1 && axis != -2) || y->rank < 2 || e->gate >= 0 || e->hard_swished ||
        e->residual >= 0 || e->shuffle_groups != 0)
        return 0;
    const ember_value *k = ember_node_input(model, node, 1 - x_operand);
    memset(out, 0, sizeof *out);
    out->scale = k->constant;
    out->scale_count = ember_shape_count(k->shape, k->rank);
    if (e->bias != NULL) {
        if (e->bias_axis != 1 && !uniform(e->bias, e->bias_length))
            return 0;
        out->shift = e->bias;
        out->shift_count = e->bias_axis == 1 ? e->bias_length : 1;
    }
    out->min = e->min;
    out->max = e->max;
    out->x = node->inputs[x_operand];
    return 1;
}

ember_status ember_scale_prepare(ember_prepare_context *ctx, void **out)
{
    const ember_epilogue *e = ctx->epilogue;
    const ember_value *y = &ctx->model->values[ctx->node->output];
    ember_scale *p = calloc(1, sizeof *p);
    if (p == NULL)
        return ember_node_error(ctx->node, EMBER_ERROR_MEMORY, "out of memory");
    *out = p;
    p->min = e != NULL ? e->min : -INFINITY;
    p->max = e != NULL ? e->max : INFINITY;
    int axis;
    p->scale = scale_operands(ctx->model, ctx->node, y, &p->x_operand, &axis);
    if (!p->scale)
        return e != NULL && (e->bias != NULL || e->gate >= 0)
                   ? ember_node_error(ctx->node, EMBER_ERROR_INVALID,
                                      "a bias or gate was fused into a mul that is not a scale")
                   : EMBER_OK;
    p->gate = e != NULL && e->gate >= 0;
    const ember_value *k = ember_node_input(ctx->model, ctx->node, 1 - p->x_operand);
    const size_t k_count = (size_t)ember_shape_count(k->shape, k->rank);
    p->k_step = k_count == 1 ? 0 : 1;
    p->k = malloc(k_count * sizeof(float));
    if (p->k == NULL)
        return ember_node_error(ctx->node, EMBER_ERROR_MEMORY, "out of memory");
    memcpy(p->k, k->constant, k_count * sizeof(float));
    ctx->packed_bytes += k_count * sizeof(float);
    if (e != NULL && e->bias != NULL) {
        axis = e->bias_axis; /* the scale's own axis, or any for a single-item k */
        p->bias = malloc((size_t)e->bias_length * sizeof(float) + sizeof(float));
        if (p->bias == NULL)
            return ember_node_error(ctx->node, EMBER_ERROR_MEMORY, "out of memory");
        memcpy(p->bias, e->bias, (size_t)e->bias_length * sizeof(float));
        ctx->packed_bytes += (size_t)e->bias_length * sizeof(float);
        if (p->k_step == 0 && uniform(p->bias, e->bias_length))
            axis = -2; /* a single k and a single b (hardswish's x/6 + 1/2): one long row */
    }
    p->outer = axis < 0 ? 1 : ember_shape_count(y->shape, axis);
    p->length = axis < 0 ? 1 : y->shape[axis];
    p->inner = axis < 0 ? ember_shape_count(y->shape, y->rank)
                        : ember_shape_count(y->shape + axis + 1, y->rank - axis - 1);
    return EMBER_OK;
}

void ember_scale_free(void *prepared)
{
    ember_scale *p = prepared;
    if (p != NULL) {
        free(p->k);
        free(p->bias);
    }
    free(p);
}

/* The fused clamp over n items of y, in place (comparisons: a NaN stays NaN). */
static void clamp_in_place(float *y, int64_t n, float min, float max)
{
    if (min == -INFINITY && max == INFINITY)
        return;
    for (int64_t i = 0; i < n; i++) {
        const float v = y[i] < min ? min : y[i];
        y[i] = v > max ? max : v;
    }
}

/* The rest of the epilogue over n items of y, x being the scale's operand (never y's
 * memory: both are alive at this step, so the arena keeps them apart). */
static void finish_block(const ember_scale *p, const float *x, float *y, int64_t n)
{
    clamp_in_place(y, n, p->min, p->max);
    if (p->gate)
        for (int64_t i = 0; i < n; i++)
            y[i] *= x[i];
}

/* One loop per epilogue shape: each step as its own op would round it, the clamp with
 * comparisons (a NaN stays NaN; infinite bounds change nothing). */
#define SCALE_LOOP(VALUE, RESULT)                                                          \
    for (int64_t i = 0; i < n; i++) {                                                      \
        float t = (VALUE);                                                                 \
        t = t < lo ? lo : t;                                                               \
        t = t > hi ? hi : t;                                                               \
        y[i] = (RESULT);                                                                   \
    }

/* n items sharing one scale s and bias b (a channel's plane, or the whole tensor). */
static void scale_run_of(const ember_scale *p, int64_t n, const float *x, float s, float b,
                         float *y)
{
    const float lo = p->min, hi = p->max;
    if (p->bias != NULL && p->gate)
        SCALE_LOOP(x[i] * s + b, x[i] * t)
    else if (p->bias != NULL)
        SCALE_LOOP(x[i] * s + b, t)
    else if (p->gate)
        SCALE_LOOP(x[i] * s, x[i] * t)
    else
        SCALE_LOOP(x[i] * s, t)
}
#undef SCALE_LOOP

/* y[c] = x[c]·k[c] (+ b[c]) along one row of the scale's axis. */
static void scale_along_row(const ember_scale *p, const float *x, const float *k, float *y)
{
    const int64_t n = p->length;
    if (p->k_step == 0) {
        const float scale = k[0];
        if (p->bias != NULL)
            for (int64_t c = 0; c < n; c++)
                y[c] = x[c] * scale + p->bias[c];
        else
            for (int64_t c = 0; c < n; c++)
                y[c] = x[c] * scale;
    } else if (p->bias != NULL) {
        for (int64_t c = 0; c < n; c++)
            y[c] = x[c] * k[c] + p->bias[c];
    } else {
        for (int64_t c = 0; c < n; c++)
            y[c] = x[c] * k[c];
    }
}

void ember_scale_clamp(const ember_scale *p, ember_tensor *y)
{
    if (p != NULL && y->datum_type == EMBER_F32)
        clamp_in_place(y->data, ember_shape_count(y->shape, y->rank), p->min, p->max);
}

int ember_scale_run(const ember_scale *p, const ember_op_io *io)
{
    if (p == NULL || !p->scale)
        return 0;
    const float *x = io->inputs[p->x_operand]->data, *k = p->k;
    float *y = io->output->data;
    if (p->inner == 1) { /* the innermost axis (LayerNorm's gamma, beta): rows along it */
        for (int64_t o = 0; o < p->outer; o++, x += p->length, y += p->length) {
            scale_along_row(p, x, k, y);
            finish_block(p, x, y, p->length);
        }
        return 1;
    }
    for (int64_t o = 0; o < p->outer; o++)
        for (int64_t c = 0; c < p->length; c++, x += p->inner, y += p->inner)
            scale_run_of(p, p->inner, x, k[c * p->k_step], p->bias != NULL ? p->bias[c] : 0.0f,
                         y);
    return 1;
}
