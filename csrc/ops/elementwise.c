/*
 * Elementwise ops: binary (add, sub, mul, div, min, max, pow) with numpy broadcasting,
 * unary (relu, sigmoid, tanh, exp, log, sqrt, rsqrt, abs, neg, copy), and clamp.
 *
 * Math is f32. copy moves bytes and so takes any datum type.
 *
 * Broadcasting: each operand is read through strides against the output shape (0 along
 * stretched dims). Dims that are contiguous for every operand are merged first, so the
 * common cases — same shapes, a scalar, a per-channel vector — become a few long rows,
 * and each row is one tight loop specialised for strides 1 and 0.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/op.h"
#include "core/shape.h"
#include "ops/activation.h"
#include "ops/binary_any.h"
#include "ops/items.h"
#include "ops/ops.h"

enum { ADD, SUB, MUL, DIV, MIN, MAX, POW };
enum { RELU, SIGMOID, TANH, EXP, LOG, SQRT, RSQRT, ABS, NEG, COPY };

/* ---------------------------------------------------------------- broadcasting */

#define MAX_OPERANDS 3

/* The output shape walked as rows: `rank` dims after merging, strides per operand. */
typedef struct broadcast_walk {
    int rank;
    int64_t dims[EMBER_MAX_RANK];
    int64_t strides[MAX_OPERANDS][EMBER_MAX_RANK];
    int operands;
} broadcast_walk;

static void broadcast_walk_init(broadcast_walk *w, const ember_op_io *io)
{
    const ember_tensor *out = io->output;
    int64_t strides[MAX_OPERANDS][EMBER_MAX_RANK];
    w->operands = (int)io->input_count;
    for (int k = 0; k < w->operands; k++)
        ember_broadcast_strides(io->inputs[k]->shape, io->inputs[k]->rank, out->shape,
                                out->rank, strides[k]);
    /* Merge inner dim i into the running outer dim when every operand steps through the
     * two as one (outer stride == inner stride × inner extent); drop size-1 dims. */
    w->rank = 0;
    for (int i = 0; i < out->rank; i++) {
        if (out->shape[i] == 1)
            continue;
        int merge = w->rank > 0;
        for (int k = 0; k < w->operands && merge; k++)
            merge = w->strides[k][w->rank - 1] == strides[k][i] * out->shape[i];
        if (merge) {
            /* The merged dim takes the inner stride. */
            w->dims[w->rank - 1] *= out->shape[i];
            for (int k = 0; k < w->operands; k++)
                w->strides[k][w->rank - 1] = strides[k][i];
            continue;
        }
        w->dims[w->rank] = out->shape[i];
        for (int k = 0; k < w->operands; k++)
            w->strides[k][w->rank] = strides[k][i];
        w->rank++;
    }
    if (w->rank == 0) { /* a single element */
        w->dims[0] = 1;
        for (int k = 0; k < w->operands; k++)
            w->strides[k][0] = 0;
        w->rank = 1;
    }
}

/* Calls row(base pointers, count, inner strides) for every row of the output. */
typedef void (*row_fn)(int variant, int64_t n, const float *const *in, const int64_t *stride,
                       float *out);

static void broadcast_run(const broadcast_walk *w, const ember_op_io *io, int variant, row_fn row)
{
    const int last = w->rank - 1;
    int64_t index[EMBER_MAX_RANK] = {0};
    int64_t offset[MAX_OPERANDS] = {0};
    int64_t inner[MAX_OPERANDS];
    for (int k = 0; k < w->operands; k++)
        inner[k] = w->strides[k][last];
    float *out = io->output->data;
    for (;;) {
        const float *in[MAX_OPERANDS];
        for (int k = 0; k < w->operands; k++)
            in[k] = (const float *)io->inputs[k]->data + offset[k];
        row(variant, w->dims[last], in, inner, out);
        out += w->dims[last];
        /* Odometer over the outer dims. */
        int d = last - 1;
        for (; d >= 0; d--) {
            for (int k = 0; k < w->operands; k++)
                offset[k] += w->strides[k][d];
            if (++index[d] < w->dims[d])
                break;
            for (int k = 0; k < w->operands; k++)
                offset[k] -= w->strides[k][d] * w->dims[d];
            index[d] = 0;
        }
        if (d < 0)
            return;
    }
}

/* ---------------------------------------------------------------- binary */

/* One row of a binary op, with the stride patterns that matter made explicit so the
 * compiler vectorises them: both dense, a broadcast scalar on either side. */
#define BINARY_ROW(name, EXPR)                                                             \
    static void name(int64_t n, const float *a, int64_t sa, const float *b, int64_t sb,    \
                     float *o)                                                             \
    {                                                                                      \
        if (sa == 1 && sb == 1) {                                                          \
            for (int64_t i = 0; i < n; i++) {                                              \
                const float x = a[i], y = b[i];                                            \
                o[i] = (EXPR);                                                             \
            }                                                                              \
        } else if (sa == 1 && sb == 0) {                                                   \
            const float y = b[0];                                                          \
            for (int64_t i = 0; i < n; i++) {                                              \
                const float x = a[i];                                                      \
                o[i] = (EXPR);                                                             \
            }                                                                              \
        } else if (sa == 0 && sb == 1) {                                                   \
            const float x = a[0];                                                          \
            for (int64_t i = 0; i < n; i++) {                                              \
                const float y = b[i];                                                      \
                o[i] = (EXPR);                                                             \
            }                                                                              \
        } else {                                                                           \
            for (int64_t i = 0; i < n; i++) {                                              \
                const float x = a[i * sa], y = b[i * sb];                                  \
                o[i] = (EXPR);                                                             \
            }                                                                              \
        }                                                                                  \
    }

BINARY_ROW(add_row, x + y)
BINARY_ROW(sub_row, x - y)
BINARY_ROW(mul_row, x * y)
BINARY_ROW(div_row, x / y)
BINARY_ROW(min_row, y < x ? y : x)
BINARY_ROW(max_row, y > x ? y : x)
BINARY_ROW(pow_row, powf(x, y))

static void binary_row(int variant, int64_t n, const float *const *in, const int64_t *s,
                       float *out)
{
    static void (*const rows[])(int64_t, const float *, int64_t, const float *, int64_t,
                                float *) = {add_row, sub_row, mul_row, div_row,
                                            min_row, max_row, pow_row};
    rows[variant](n, in[0], s[0], in[1], s[1], out);
}

static ember_status require_f32(const ember_node *node, const ember_value *const *inputs,
                                size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (inputs[i]->datum_type != EMBER_F32)
            return ember_node_error(node, EMBER_ERROR_UNSUPPORTED,
                                    "input %zu ('%s') is %s; this op computes in f32", i,
                                    inputs[i]->name, ember_datum_type_name(inputs[i]->datum_type));
    return EMBER_OK;
}

/* numpy broadcasting of every input into `output`. */
static ember_status broadcast_infer(ember_node *node, const ember_value *const *inputs,
                                    size_t count, ember_value *output)
{
    ember_status status = require_f32(node, inputs, count);
    if (status != EMBER_OK)
        return status;
    output->datum_type = EMBER_F32;
    return ember_broadcast_facts(node, inputs, count, output);
}

/* add … pow on other types than f32 compute in binary_any.c, in the operands' type. */
static const int any_of_variant[] = {EMBER_BIN_ADD, EMBER_BIN_SUB, EMBER_BIN_MUL, EMBER_BIN_DIV,
                                     EMBER_BIN_MIN, EMBER_BIN_MAX, EMBER_BIN_POW};

static ember_status binary_infer(ember_node *node, const ember_value *const *inputs,
                                 ember_value *output)
{
    if (inputs[0]->datum_type != EMBER_F32 || inputs[1]->datum_type != EMBER_F32)
        return ember_binary_any_infer(any_of_variant[node->op->variant], node, inputs, output);
    return broadcast_infer(node, inputs, 2, output);
}

static void binary_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)prepared;
    if (io->inputs[0]->datum_type != EMBER_F32) {
        ember_binary_any_run(any_of_variant[node->op->variant], io);
        return;
    }
    broadcast_walk w;
    broadcast_walk_init(&w, io);
    broadcast_run(&w, io, node->op->variant, binary_row);
}

static const ember_op_param binary_params[] = {
    {"x", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"y", EMBER_PARAM_TENSOR, 0, 0.0f},
};

#define BINARY_OP(op_name, op_variant)                                                     \
    const ember_op ember_op_##op_name = {.name = #op_name, .variant = op_variant,           \
                                         .params = binary_params, .param_count = 2,        \
                                         .infer = binary_infer, .run = binary_run, .flags = EMBER_OP_BINARY};
BINARY_OP(add, ADD)
BINARY_OP(sub, SUB)
BINARY_OP(div, DIV)
BINARY_OP(min, MIN)
BINARY_OP(max, MAX)
BINARY_OP(pow, POW)

/* ---------------------------------------------------------------- clamp */

static void clamp_row(int variant, int64_t n, const float *const *in, const int64_t *s,
                      float *out)
{
    (void)variant;
    const float *x = in[0], *lo = in[1], *hi = in[2];
    if (s[0] == 1 && s[1] == 0 && s[2] == 0) { /* the usual case: scalar bounds */
        const float a = lo[0], b = hi[0];
        for (int64_t i = 0; i < n; i++) {
            const float v = x[i] < a ? a : x[i];
            out[i] = v > b ? b : v;
        }
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        const float a = lo[i * s[1]], b = hi[i * s[2]];
        const float v = x[i * s[0]] < a ? a : x[i * s[0]];
        out[i] = v > b ? b : v;
    }
}

static ember_status clamp_infer(ember_node *node, const ember_value *const *inputs,
                                ember_value *output)
{
    return broadcast_infer(node, inputs, 3, output);
}

static void clamp_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)node;
    (void)prepared;
    broadcast_walk w;
    broadcast_walk_init(&w, io);
    broadcast_run(&w, io, 0, clamp_row);
}

static const ember_op_param clamp_params[] = {
    {"x", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"a", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"b", EMBER_PARAM_TENSOR, 0, 0.0f},
};

const ember_op ember_op_clamp = {.name = "clamp", .params = clamp_params,
    .param_count = 3, .infer = clamp_infer, .run = clamp_run};

/* ---------------------------------------------------------------- mul: a scale */

/*
 * mul(x, k), k a constant f32 that is a single item or varies along one axis of the
 * output (a BatchNorm's scale), x of the output's shape: a "scale". It hosts a fused
 * epilogue (core/fuse.c): the add of a constant along the same axis and a clamp, so a
 * BatchNorm and relu left before a conv (DenseNet's pre-activation: mul, add, relu)
 * take one pass instead of three. Each step rounds as the unfused ops do (x·k, then
 * + b), so the values are the same; a NaN stays NaN through the clamp, as in the GEMM
 * epilogues. Any other mul may still absorb a clamp (a relu after it), applied in a
 * second pass.
 */
typedef struct mul_prepared {
    int scale;                     /* the one-pass path */
    int x_operand;                 /* which input is x (k is the other) */
    int64_t outer, length, inner;  /* the output seen around the axis k and b vary on */
    int64_t k_step;                /* 1 along that axis, 0 for a single item */
    float *bias;                   /* length items, or NULL */
    float min, max;
    int gate;                      /* times x, last (hardswish) */
} mul_prepared;

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

static int mul_accepts_bias_axis(const ember_model *model, const ember_node *node,
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
static int mul_accepts_gate(const ember_model *model, const ember_node *node, int gate)
{
    int x_operand, axis;
    return scale_operands(model, node, &model->values[node->output], &x_operand, &axis) &&
           node->inputs[x_operand] == gate;
}

static ember_status mul_prepare(ember_prepare_context *ctx, void **out)
{
    const ember_epilogue *e = ctx->epilogue;
    const ember_value *y = &ctx->model->values[ctx->node->output];
    mul_prepared *p = calloc(1, sizeof *p);
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
    p->k_step = ember_shape_count(k->shape, k->rank) == 1 ? 0 : 1;
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

static void mul_free(void *prepared)
{
    mul_prepared *p = prepared;
    if (p != NULL)
        free(p->bias);
    free(p);
}

/* The fused clamp over n items of y, in place. */
static void clamp_in_place(float *y, int64_t n, float min, float max)
{
    if (min == -INFINITY && max == INFINITY)
        return;
    const float *in[] = {y, &min, &max};
    const int64_t strides[] = {1, 0, 0};
    clamp_row(0, n, in, strides, y);
}

/* The rest of the epilogue over n items of y, x being the scale's operand (never y's
 * memory: both are alive at this step, so the arena keeps them apart). */
static void finish_block(const mul_prepared *p, const float *x, float *y, int64_t n)
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
static void scale_run_of(const mul_prepared *p, int64_t n, const float *x, float s, float b,
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
static void scale_along_row(const mul_prepared *p, const float *x, const float *k, float *y)
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

static void mul_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    const mul_prepared *p = prepared;
    if (p == NULL || !p->scale) {
        binary_run(node, NULL, io);
        if (p != NULL && io->output->datum_type == EMBER_F32)
            clamp_in_place(io->output->data,
                           ember_shape_count(io->output->shape, io->output->rank), p->min,
                           p->max);
        return;
    }
    const float *x = io->inputs[p->x_operand]->data, *k = io->inputs[1 - p->x_operand]->data;
    float *y = io->output->data;
    if (p->inner == 1) { /* the innermost axis (LayerNorm's gamma, beta): rows along it */
        for (int64_t o = 0; o < p->outer; o++, x += p->length, y += p->length) {
            scale_along_row(p, x, k, y);
            finish_block(p, x, y, p->length);
        }
        return;
    }
    for (int64_t o = 0; o < p->outer; o++)
        for (int64_t c = 0; c < p->length; c++, x += p->inner, y += p->inner)
            scale_run_of(p, p->inner, x, k[c * p->k_step], p->bias != NULL ? p->bias[c] : 0.0f,
                         y);
}

const ember_op ember_op_mul = {.name = "mul", .variant = MUL, .params = binary_params,
    .param_count = 2, .flags = EMBER_OP_BINARY | EMBER_OP_FUSES_EPILOGUE,
    .infer = binary_infer, .accepts_bias_axis = mul_accepts_bias_axis,
    .accepts_gate = mul_accepts_gate, .prepare = mul_prepare, .run = mul_run,
    .free_prepared = mul_free};

/* ---------------------------------------------------------------- unary */

static void unary_f32(int variant, int64_t n, const float *x, float *y)
{
    switch (variant) {
    case RELU: { /* blocks of 8: fixed-length inner loops are vectorised even at -O2 */
        int64_t i = 0;
        for (; i + 8 <= n; i += 8) { /* through a local: y may be x */
            float block[8];
            for (int k = 0; k < 8; k++)
                block[k] = x[i + k] > 0.0f ? x[i + k] : 0.0f;
            memcpy(y + i, block, sizeof block);
        }
        for (; i < n; i++)
            y[i] = x[i] > 0.0f ? x[i] : 0.0f;
        break;
    }
    case SIGMOID:
        for (int64_t i = 0; i < n; i++)
            y[i] = 1.0f / (1.0f + expf(-x[i]));
        break;
    case TANH:
        for (int64_t i = 0; i < n; i++)
            y[i] = tanhf(x[i]);
        break;
    case EXP:
        for (int64_t i = 0; i < n; i++)
            y[i] = expf(x[i]);
        break;
    case LOG:
        for (int64_t i = 0; i < n; i++)
            y[i] = logf(x[i]);
        break;
    case SQRT:
        for (int64_t i = 0; i < n; i++)
            y[i] = sqrtf(x[i]);
        break;
    case RSQRT:
        for (int64_t i = 0; i < n; i++)
            y[i] = 1.0f / sqrtf(x[i]);
        break;
    case ABS:
        for (int64_t i = 0; i < n; i++)
            y[i] = fabsf(x[i]);
        break;
    case NEG:
        for (int64_t i = 0; i < n; i++)
            y[i] = -x[i];
        break;
    }
}

/* The unary ops on other types than f32, item by item: floats in double (f16 through
 * f32), and abs, neg, relu on integers in their type (neg wraps). */
static void unary_any(int variant, const ember_tensor *x, ember_tensor *y)
{
    const ember_item_kind kind = ember_item_kind_of(x->datum_type);
    const int64_t n = ember_shape_count(x->shape, x->rank);
    for (int64_t i = 0; i < n; i++) {
        ember_item v = ember_item_get(x->datum_type, x->data, i);
        if (kind == ITEM_FLOAT) {
            const double f = v.f;
            switch (variant) {
            case RELU: v.f = f > 0 ? f : 0; break;
            case SIGMOID: v.f = 1 / (1 + exp(-f)); break;
            case TANH: v.f = tanh(f); break;
            case EXP: v.f = exp(f); break;
            case LOG: v.f = log(f); break;
            case SQRT: v.f = sqrt(f); break;
            case RSQRT: v.f = 1 / sqrt(f); break;
            case ABS: v.f = fabs(f); break;
            case NEG: v.f = -f; break;
            }
        } else if (kind == ITEM_SIGNED) {
            if (variant == ABS || (variant == RELU && v.i < 0) || variant == NEG)
                v.u = variant == RELU ? 0 : (variant == NEG || v.i < 0) ? 0 - v.u : v.u;
        } else if (variant == NEG) {
            v.u = 0 - v.u;
        }
        ember_item_put(x->datum_type, y->data, i, v);
    }
}

static int unary_takes(int variant, ember_datum_type dt)
{
    if (variant == COPY || ember_item_kind_of(dt) == ITEM_FLOAT)
        return 1;
    return dt != EMBER_BOOL && (variant == ABS || variant == NEG || variant == RELU);
}

static ember_status unary_infer(ember_node *node, const ember_value *const *inputs,
                                ember_value *output)
{
    if (!unary_takes(node->op->variant, inputs[0]->datum_type))
        return ember_node_error(node, EMBER_ERROR_INVALID, "input '%s' is %s; %s takes "
                                "floats%s", inputs[0]->name,
                                ember_datum_type_name(inputs[0]->datum_type), node->op->name,
                                node->op->variant == ABS || node->op->variant == NEG ||
                                        node->op->variant == RELU ? " and integers" : "");
    output->datum_type = inputs[0]->datum_type;
    output->rank = inputs[0]->rank;
    memcpy(output->shape, inputs[0]->shape, sizeof output->shape);
    return EMBER_OK;
}

/* exp, sigmoid and tanh have vectorised kernel families (polynomial approximations with
 * measured error bounds, csrc/kernels/README.md); the kernel for this CPU is chosen at
 * prepare. The other unary ops are simple enough for the compiler to vectorise. */
static ember_status unary_prepare(ember_prepare_context *ctx, void **out)
{
    const ember_kernel_config *k = ctx->kernels;
    switch (ctx->node->op->variant) {
    case EXP: return ember_prepare_vunary(ctx, k->f32_vexp, out);
    case SIGMOID: return ember_prepare_vunary(ctx, k->f32_vsigmoid, out);
    case TANH: return ember_prepare_vunary(ctx, k->f32_vtanh, out);
    default: return ember_prepare_vunary(ctx, NULL, out);
    }
}

static void unary_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    const ember_f32_vunary_fn *fn = prepared;
    const ember_tensor *x = io->inputs[0];
    const int64_t n = ember_shape_count(x->shape, x->rank);
    if (node->op->variant == COPY)
        memcpy(io->output->data, x->data, (size_t)n * ember_datum_size(x->datum_type));
    else if (x->datum_type != EMBER_F32)
        unary_any(node->op->variant, x, io->output);
    else if (fn != NULL)
        (*fn)((size_t)n, x->data, io->output->data);
    else
        unary_f32(node->op->variant, n, x->data, io->output->data);
}

static const ember_op_param unary_params[] = {{"x", EMBER_PARAM_TENSOR, 0, 0.0f}};

#define UNARY_OP(op_name, op_variant)                                                      \
    const ember_op ember_op_##op_name = {.name = #op_name, .variant = op_variant,           \
                                         .params = unary_params, .param_count = 1,         \
                                         .infer = unary_infer, .prepare = unary_prepare,   \
                                         .run = unary_run, .free_prepared = free};
UNARY_OP(relu, RELU)
UNARY_OP(sigmoid, SIGMOID)
UNARY_OP(tanh, TANH)
UNARY_OP(exp, EXP)
UNARY_OP(log, LOG)
UNARY_OP(sqrt, SQRT)
UNARY_OP(rsqrt, RSQRT)
UNARY_OP(abs, ABS)
UNARY_OP(neg, NEG)
UNARY_OP(copy, COPY)
