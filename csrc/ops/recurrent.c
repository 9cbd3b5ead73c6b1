/*
 * Recurrent layers with ONNX's semantics (layout 0), one op each:
 *
 *   y, y_h, y_c = ember_lstm(x, w, r, b = …, sequence_lens = …, initial_h = …,
 *                            initial_c = …, p = …, direction, activations,
 *                            activation_alpha, activation_beta, clip, input_forget)
 *   y, y_h = ember_gru(x, w, r, b = …, sequence_lens = …, initial_h = …, direction, …,
 *                      linear_before_reset)
 *   y, y_h = ember_rnn(x, w, r, b = …, sequence_lens = …, initial_h = …, direction, …)
 *
 * x [seq, batch, in]; w [dirs, G·H, in]; r [dirs, G·H, H]; b [dirs, 2·G·H]; sequence_lens
 * [batch] (i32 or i64); initial_h/c [dirs, batch, H]; p [dirs, 3·H] (G = 4, 3, 1; gates
 * in ONNX's order: iofc, zrh). An optional input left out is a scalar 0 and means zeros
 * (or every sequence whole). y [seq, dirs, batch, H], y_h and y_c [dirs, batch, H].
 * direction is "forward", "reverse" or "bidirectional"; activations lists the G-specific
 * functions of each direction (f, g, h for LSTM; f, g for GRU; f for RNN) by ONNX name in
 * lower case, with one alpha and one beta per function (ignored where unused). clip
 * (absent: none) bounds every gate's input before its activation. Steps at or past an
 * item's length leave its state alone and give zeros in y.
 *
 * Attributes and typing here; packing and running in recurrent_run.c.
 */
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"
#include "core/op.h"
#include "core/shape.h"
#include "ops/recurrent.h"

static const int function_count[] = {3, 2, 1};

#define RECURRENT_TENSORS                                                            \
    {"x", EMBER_PARAM_TENSOR, 0, 0.0f}, {"w", EMBER_PARAM_TENSOR, 0, 0.0f},                \
    {"r", EMBER_PARAM_TENSOR, 0, 0.0f}, {"b", EMBER_PARAM_TENSOR, 1, 0.0f},                \
    {"sequence_lens", EMBER_PARAM_TENSOR, 1, 0.0f},                                        \
    {"initial_h", EMBER_PARAM_TENSOR, 1, 0.0f}
#define RECURRENT_ATTRIBUTES                                                               \
    {"direction", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},                                         \
    {"activations", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},                                       \
    {"activation_alpha", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},                                  \
    {"activation_beta", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},                                   \
    {"clip", EMBER_PARAM_ATTRIBUTE, 0, 0.0f}

static const ember_op_param lstm_params[] = {
    RECURRENT_TENSORS, {"initial_c", EMBER_PARAM_TENSOR, 1, 0.0f},
    {"p", EMBER_PARAM_TENSOR, 1, 0.0f}, RECURRENT_ATTRIBUTES,
    {"input_forget", EMBER_PARAM_ATTRIBUTE, 0, 0.0f}};
static const ember_op_param gru_params[] = {
    RECURRENT_TENSORS, RECURRENT_ATTRIBUTES,
    {"linear_before_reset", EMBER_PARAM_ATTRIBUTE, 0, 0.0f}};
static const ember_op_param rnn_params[] = {RECURRENT_TENSORS, RECURRENT_ATTRIBUTES};

/* Where an op's attributes start among its parameters. */
static int first_attribute(int variant)
{
    return variant == LSTM ? 8 : 6;
}

/* ---------------------------------------------------------------- parse */

static ember_status parse_functions(const ember_node *node, const ember_nnef_expr *list,
                                    const ember_nnef_expr *alphas,
                                    const ember_nnef_expr *betas, recurrent_attributes *a)
{
    const int per = function_count[node->op->variant], count = per * a->directions;
    static const ember_activation_kind defaults[3][3] = {
        {ACT_SIGMOID, ACT_TANH, ACT_TANH}, {ACT_SIGMOID, ACT_TANH}, {ACT_TANH}};
    for (int i = 0; i < count; i++)
        a->functions[i / per][i % per].kind = defaults[node->op->variant][i % per];
    if (list != NULL) {
        if (list->kind != EMBER_NNEF_ARRAY || list->u.list.count != (size_t)count)
            return ember_node_error(node, EMBER_ERROR_INVALID, "activations must list %d "
                                    "functions (%d per direction)", count, per);
        for (int i = 0; i < count; i++) {
            const char *name;
            ember_status status = ember_attr_string(node, "activations",
                                                    list->u.list.items[i], NULL, &name);
            if (status != EMBER_OK)
                return status;
            if (!ember_activation_find(name, &a->functions[i / per][i % per].kind))
                return ember_node_error(node, EMBER_ERROR_UNSUPPORTED,
                                        "unknown activation '%s'", name);
        }
    }
    double alpha[6], beta[6];
    int alpha_count, beta_count;
    ember_status status = ember_attr_float_list(node, "activation_alpha", alphas, alpha, 6,
                                                &alpha_count);
    if (status == EMBER_OK)
        status = ember_attr_float_list(node, "activation_beta", betas, beta, 6, &beta_count);
    if (status != EMBER_OK)
        return status;
    if ((alpha_count && alpha_count != count) || (beta_count && beta_count != count))
        return ember_node_error(node, EMBER_ERROR_INVALID, "activation_alpha and "
                                "activation_beta give one value per function (%d)", count);
    for (int i = 0; i < count; i++) {
        ember_activation *f = &a->functions[i / per][i % per];
        ember_activation_defaults(f);
        if (alpha_count)
            f->alpha = (float)alpha[i];
        if (beta_count)
            f->beta = (float)beta[i];
    }
    return EMBER_OK;
}

static ember_status recurrent_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                                    void **out)
{
    recurrent_attributes *a = calloc(1, sizeof *a);
    if (a == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = a;
    const ember_nnef_expr *const *at = attrs + first_attribute(node->op->variant);
    const char *direction;
    ember_status status = ember_attr_string(node, "direction", at[0], "forward", &direction);
    if (status != EMBER_OK)
        return status;
    if (strcmp(direction, "bidirectional") == 0)
        a->directions = 2;
    else if (strcmp(direction, "forward") == 0 || strcmp(direction, "reverse") == 0)
        a->directions = 1, a->reverse = direction[0] == 'r';
    else
        return ember_node_error(node, EMBER_ERROR_INVALID, "direction '%s' is not forward, "
                                "reverse or bidirectional", direction);
    status = parse_functions(node, at[1], at[2], at[3], a);
    double clip = 0.0;
    if (status == EMBER_OK)
        status = ember_attr_float(node, "clip", at[4], 0.0, &clip);
    if (status != EMBER_OK)
        return status;
    if (at[4] != NULL && !(clip > 0.0))
        return ember_node_error(node, EMBER_ERROR_INVALID, "clip must be positive");
    a->clipped = at[4] != NULL;
    a->clip = (float)clip;
    if (node->op->variant == LSTM)
        status = ember_attr_bool(node, "input_forget", at[5], 0, &a->input_forget);
    else if (node->op->variant == GRU)
        status = ember_attr_bool(node, "linear_before_reset", at[5], 0,
                                 &a->linear_before_reset);
    return status;
}

/* ---------------------------------------------------------------- infer */

static int given(const ember_value *v)
{
    return v->rank != 0;
}

static ember_status expect_shape(ember_node *node, const char *what, const ember_value *v,
                                 const int64_t *shape, int rank)
{
    if (v->datum_type == EMBER_F32 && ember_shape_equal(v->shape, v->rank, shape, rank))
        return EMBER_OK;
    char got[EMBER_SHAPE_TEXT], want[EMBER_SHAPE_TEXT];
    return ember_node_error(node, EMBER_ERROR_INVALID, "%s is %s %s; expected f32 %s", what,
                            ember_datum_type_name(v->datum_type),
                            ember_shape_format(v->shape, v->rank, got, sizeof got),
                            ember_shape_format(shape, rank, want, sizeof want));
}

static ember_status recurrent_infer(ember_node *node, const ember_value *const *inputs,
                                    ember_value *output)
{
    const recurrent_attributes *a = node->attributes;
    const int variant = node->op->variant, gates = recurrent_gates(variant);
    const ember_value *x = inputs[X], *r = inputs[R];
    if (x->datum_type != EMBER_F32 || x->rank != 3)
        return expect_shape(node, "x", x, (const int64_t[]){-1, -1, -1}, 3);
    if (r->rank != 3)
        return ember_node_error(node, EMBER_ERROR_INVALID, "r must be [dirs, %d·H, H]", gates);
    const int64_t seq = x->shape[0], batch = x->shape[1], in = x->shape[2];
    const int64_t dirs = a->directions, h = r->shape[2], gh = gates * h;
    ember_status status = expect_shape(node, "w", inputs[W], (int64_t[]){dirs, gh, in}, 3);
    if (status == EMBER_OK)
        status = expect_shape(node, "r", r, (int64_t[]){dirs, gh, h}, 3);
    if (status == EMBER_OK && given(inputs[B]))
        status = expect_shape(node, "b", inputs[B], (int64_t[]){dirs, 2 * gh}, 2);
    const ember_value *lens = inputs[LENS];
    if (status == EMBER_OK && given(lens) &&
        ((lens->datum_type != EMBER_I32 && lens->datum_type != EMBER_I64) ||
         lens->rank != 1 || lens->shape[0] != batch))
        return ember_node_error(node, EMBER_ERROR_INVALID, "sequence_lens must be i32 or "
                                "i64 [%lld]", (long long)batch);
    const int64_t state[] = {dirs, batch, h};
    if (status == EMBER_OK && given(inputs[INITIAL_H]))
        status = expect_shape(node, "initial_h", inputs[INITIAL_H], state, 3);
    if (variant == LSTM && status == EMBER_OK && given(inputs[INITIAL_C]))
        status = expect_shape(node, "initial_c", inputs[INITIAL_C], state, 3);
    if (variant == LSTM && status == EMBER_OK && given(inputs[PEEPHOLES]))
        status = expect_shape(node, "p", inputs[PEEPHOLES], (int64_t[]){dirs, 3 * h}, 2);
    if (status != EMBER_OK)
        return status;
    if (node->output_count > (variant == LSTM ? 3 : 2))
        return ember_node_error(node, EMBER_ERROR_INVALID, "gives at most %d results",
                                variant == LSTM ? 3 : 2);
    output[0].datum_type = EMBER_F32;
    output[0].rank = 4;
    memcpy(output[0].shape, (int64_t[]){seq, dirs, batch, h}, 4 * sizeof(int64_t));
    for (int i = 1; i < node->output_count; i++) {
        output[i].datum_type = EMBER_F32;
        output[i].rank = 3;
        memcpy(output[i].shape, state, sizeof state);
    }
    return EMBER_OK;
}

#define RECURRENT_OP(op_name, VARIANT, params_)                                            \
    {.name = op_name, .variant = VARIANT, .params = params_,                               \
     .param_count = sizeof params_ / sizeof params_[0], .parse = recurrent_parse,          \
     .infer = recurrent_infer, .prepare = ember_recurrent_prepare, .run = ember_recurrent_run,         \
     .free_prepared = free, .max_outputs = VARIANT == LSTM ? 3 : 2}

const ember_op ember_op_ember_lstm = RECURRENT_OP("ember_lstm", LSTM, lstm_params);
const ember_op ember_op_ember_gru = RECURRENT_OP("ember_gru", GRU, gru_params);
const ember_op ember_op_ember_rnn = RECURRENT_OP("ember_rnn", RNN, rnn_params);
