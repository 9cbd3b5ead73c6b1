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
#include "ops/scale.h"

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

/* ---------------------------------------------------------------- mul */

/* mul by a per-axis constant hosts an epilogue (scale.c); any other runs as a binary op,
 * with a fused clamp after it. */
static void mul_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    if (ember_scale_run(prepared, io))
        return;
    binary_run(node, NULL, io);
    ember_scale_clamp(prepared, io->output);
}

const ember_op ember_op_mul = {.name = "mul", .variant = MUL, .params = binary_params,
    .param_count = 2, .flags = EMBER_OP_BINARY | EMBER_OP_FUSES_EPILOGUE,
    .infer = binary_infer, .accepts_bias_axis = ember_scale_accepts_bias_axis,
    .accepts_gate = ember_scale_accepts_gate, .prepare = ember_scale_prepare, .run = mul_run,
    .free_prepared = ember_scale_free};

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
