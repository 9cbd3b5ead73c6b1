/*
 * Elementwise math functions and parametrised activations on floats (f32, f64, and f16
 * computed in f32): rounding, trigonometric and hyperbolic functions, erf, softplus and
 * friends, ELU-family activations, and the float classification tests.
 *
 * NNEF standard names where NNEF has the function (floor, ceil, sign, rcp, sin, …, elu,
 * selu, leaky_relu, softplus), tract's where tract has one (tract_core_round_even,
 * tract_onnx_erf), ember_* otherwise (docs/plan-format.md). f32 uses the C library's
 * float functions, f64 the double ones; each op is one table row.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"
#include "core/half.h"
#include "core/op.h"
#include "core/shape.h"
#include "ops/activation.h"
#include "ops/ops.h"

typedef struct math_params {
    double alpha, beta;
} math_params;

/* ---------------------------------------------------------------- the functions */

static double sign_d(double x, const math_params *p)
{
    (void)p;
    return isnan(x) ? x : (x > 0) - (x < 0);
}

static double rcp_d(double x, const math_params *p) { (void)p; return 1.0 / x; }
static double floor_d(double x, const math_params *p) { (void)p; return floor(x); }
static double ceil_d(double x, const math_params *p) { (void)p; return ceil(x); }
/* Halfway cases to even, as ONNX Round (rint in the default rounding mode). */
static double round_even_d(double x, const math_params *p) { (void)p; return nearbyint(x); }
static double sin_d(double x, const math_params *p) { (void)p; return sin(x); }
static double cos_d(double x, const math_params *p) { (void)p; return cos(x); }
static double tan_d(double x, const math_params *p) { (void)p; return tan(x); }
static double asin_d(double x, const math_params *p) { (void)p; return asin(x); }
static double acos_d(double x, const math_params *p) { (void)p; return acos(x); }
static double atan_d(double x, const math_params *p) { (void)p; return atan(x); }
static double sinh_d(double x, const math_params *p) { (void)p; return sinh(x); }
static double cosh_d(double x, const math_params *p) { (void)p; return cosh(x); }
static double asinh_d(double x, const math_params *p) { (void)p; return asinh(x); }
static double acosh_d(double x, const math_params *p) { (void)p; return acosh(x); }
static double atanh_d(double x, const math_params *p) { (void)p; return atanh(x); }
static double erf_d(double x, const math_params *p) { (void)p; return erf(x); }

/* log(1 + e^x) without overflow: x + log1p(e^-x) for large x. */
static double softplus_d(double x, const math_params *p)
{
    (void)p;
    return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

static double softsign_d(double x, const math_params *p) { (void)p; return x / (1 + fabs(x)); }
static double mish_d(double x, const math_params *p) { return x * tanh(softplus_d(x, p)); }

static double elu_d(double x, const math_params *p)
{
    return x > 0 ? x : p->alpha * expm1(x);
}

/* selu(alpha, lambda = beta) */
static double selu_d(double x, const math_params *p)
{
    return p->beta * (x > 0 ? x : p->alpha * expm1(x));
}

static double celu_d(double x, const math_params *p)
{
    return (x > 0 ? x : 0) + fmin(0, p->alpha * expm1(x / p->alpha));
}

static double leaky_relu_d(double x, const math_params *p) { return x >= 0 ? x : p->alpha * x; }
static double thresholded_relu_d(double x, const math_params *p) { return x > p->alpha ? x : 0; }

/* shrink(lambda = alpha, bias = beta) */
static double shrink_d(double x, const math_params *p)
{
    return x < -p->alpha ? x + p->beta : x > p->alpha ? x - p->beta : 0;
}

/* ---- the f32 forms, with the float library functions */

#define F32_OF(name, call)                                                                 \
    static float name##_f(float x, const math_params *p) { (void)p; return call; }
F32_OF(floor, floorf(x))
F32_OF(ceil, ceilf(x))
F32_OF(round_even, nearbyintf(x))
F32_OF(sin, sinf(x))
F32_OF(cos, cosf(x))
F32_OF(tan, tanf(x))
F32_OF(asin, asinf(x))
F32_OF(acos, acosf(x))
F32_OF(atan, atanf(x))
F32_OF(sinh, sinhf(x))
F32_OF(cosh, coshf(x))
F32_OF(asinh, asinhf(x))
F32_OF(acosh, acoshf(x))
F32_OF(atanh, atanhf(x))
F32_OF(erf, erff(x))
F32_OF(rcp, 1.0f / x)

/* Functions of several steps are evaluated in double and rounded once: the f32 result
 * is then the correctly rounded value of the exact function in nearly every case. */
#define VIA_DOUBLE(name)                                                                   \
    static float name##_via(float x, const math_params *p) { return (float)name##_d(x, p); }
VIA_DOUBLE(sign)
VIA_DOUBLE(softplus)
VIA_DOUBLE(softsign)
VIA_DOUBLE(mish)
VIA_DOUBLE(elu)
VIA_DOUBLE(selu)
VIA_DOUBLE(celu)
VIA_DOUBLE(leaky_relu)
VIA_DOUBLE(thresholded_relu)
VIA_DOUBLE(shrink)

/* ---------------------------------------------------------------- the table */

typedef double (*math_d)(double, const math_params *);
typedef float (*math_f)(float, const math_params *);

typedef struct math_function {
    math_f f32;
    math_d f64;
    const char *alpha, *beta;      /* attribute names, or NULL */
    double alpha_default, beta_default;
} math_function;

enum {
    FLOOR, CEIL, ROUND_EVEN, SIGN, RCP, SIN, COS, TAN, ASIN, ACOS, ATAN, SINH, COSH, ASINH,
    ACOSH, ATANH, ERF, SOFTPLUS, SOFTSIGN, MISH, ELU, SELU, CELU, LEAKY_RELU,
    THRESHOLDED_RELU, SHRINK
};

static const math_function functions[] = {
    [FLOOR] = {floor_f, floor_d, NULL, NULL, 0, 0},
    [CEIL] = {ceil_f, ceil_d, NULL, NULL, 0, 0},
    [ROUND_EVEN] = {round_even_f, round_even_d, NULL, NULL, 0, 0},
    [SIGN] = {sign_via, sign_d, NULL, NULL, 0, 0},
    [RCP] = {rcp_f, rcp_d, NULL, NULL, 0, 0},
    [SIN] = {sin_f, sin_d, NULL, NULL, 0, 0},
    [COS] = {cos_f, cos_d, NULL, NULL, 0, 0},
    [TAN] = {tan_f, tan_d, NULL, NULL, 0, 0},
    [ASIN] = {asin_f, asin_d, NULL, NULL, 0, 0},
    [ACOS] = {acos_f, acos_d, NULL, NULL, 0, 0},
    [ATAN] = {atan_f, atan_d, NULL, NULL, 0, 0},
    [SINH] = {sinh_f, sinh_d, NULL, NULL, 0, 0},
    [COSH] = {cosh_f, cosh_d, NULL, NULL, 0, 0},
    [ASINH] = {asinh_f, asinh_d, NULL, NULL, 0, 0},
    [ACOSH] = {acosh_f, acosh_d, NULL, NULL, 0, 0},
    [ATANH] = {atanh_f, atanh_d, NULL, NULL, 0, 0},
    [ERF] = {erf_f, erf_d, NULL, NULL, 0, 0},
    [SOFTPLUS] = {softplus_via, softplus_d, NULL, NULL, 0, 0},
    [SOFTSIGN] = {softsign_via, softsign_d, NULL, NULL, 0, 0},
    [MISH] = {mish_via, mish_d, NULL, NULL, 0, 0},
    [ELU] = {elu_via, elu_d, "alpha", NULL, 1.0, 0},
    [SELU] = {selu_via, selu_d, "alpha", "lambda", 1.67326319217681884765625,
              1.05070102214813232421875},
    [CELU] = {celu_via, celu_d, "alpha", NULL, 1.0, 0},
    [LEAKY_RELU] = {leaky_relu_via, leaky_relu_d, "alpha", NULL, 0.01, 0},
    [THRESHOLDED_RELU] = {thresholded_relu_via, thresholded_relu_d, "alpha", NULL, 1.0, 0},
    [SHRINK] = {shrink_via, shrink_d, "lambda", "bias", 0.5, 0.0},
};

/* ---------------------------------------------------------------- the op */

/* Attributes are bound by name, so each kind of op declares its own. */
static const ember_op_param plain_params[] = {{"x", EMBER_PARAM_TENSOR, 0, 0.0f}};
static const ember_op_param alpha_params[] = {
    {"x", EMBER_PARAM_TENSOR, 0, 0.0f}, {"alpha", EMBER_PARAM_ATTRIBUTE, 0, 0.0f}};
static const ember_op_param selu_params[] = {
    {"x", EMBER_PARAM_TENSOR, 0, 0.0f}, {"alpha", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"lambda", EMBER_PARAM_ATTRIBUTE, 0, 0.0f}};
static const ember_op_param shrink_params[] = {
    {"x", EMBER_PARAM_TENSOR, 0, 0.0f}, {"lambda", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"bias", EMBER_PARAM_ATTRIBUTE, 0, 0.0f}};

static ember_status math_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                               void **out)
{
    const math_function *f = &functions[node->op->variant];
    const size_t count = node->op->param_count;
    math_params *p = calloc(1, sizeof *p);
    if (p == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = p;
    ember_status status = ember_attr_float(node, f->alpha ? f->alpha : "alpha",
                                           count > 1 ? attrs[1] : NULL, f->alpha_default,
                                           &p->alpha);
    if (status == EMBER_OK)
        status = ember_attr_float(node, f->beta ? f->beta : "beta",
                                  count > 2 ? attrs[2] : NULL, f->beta_default, &p->beta);
    if (status == EMBER_OK && node->op->variant == CELU && p->alpha == 0)
        return ember_node_error(node, EMBER_ERROR_INVALID, "alpha must not be 0");
    return status;
}

static int is_float(ember_datum_type dt)
{
    return dt == EMBER_F32 || dt == EMBER_F64 || dt == EMBER_F16;
}

static ember_status math_infer(ember_node *node, const ember_value *const *inputs,
                               ember_value *output)
{
    if (!is_float(inputs[0]->datum_type))
        return ember_node_error(node, EMBER_ERROR_INVALID, "input '%s' is %s; this function "
                                "takes f16, f32 or f64", inputs[0]->name,
                                ember_datum_type_name(inputs[0]->datum_type));
    output->datum_type = inputs[0]->datum_type;
    output->rank = inputs[0]->rank;
    memcpy(output->shape, inputs[0]->shape, sizeof output->shape);
    return EMBER_OK;
}

/* erf has a vectorised kernel family (csrc/kernels/README.md gives its error bound, about
 * 1 ulp as glibc's erff); the others go through the table's scalar function. */
static ember_status math_prepare(ember_prepare_context *ctx, void **out)
{
    return ember_prepare_vunary(ctx, ctx->node->op->variant == ERF ? ctx->kernels->f32_verf
                                                                   : NULL, out);
}

static void math_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    const ember_f32_vunary_fn *vectorised = prepared;
    const math_function *f = &functions[node->op->variant];
    const math_params *p = node->attributes;
    const ember_tensor *x = io->inputs[0];
    const int64_t n = ember_shape_count(x->shape, x->rank);
    switch (x->datum_type) {
    case EMBER_F64: {
        const double *in = x->data;
        double *out = io->output->data;
        for (int64_t i = 0; i < n; i++)
            out[i] = f->f64(in[i], p);
        break;
    }
    case EMBER_F16: {
        const uint16_t *in = x->data;
        uint16_t *out = io->output->data;
        for (int64_t i = 0; i < n; i++)
            out[i] = ember_f32_to_f16(f->f32(ember_f16_to_f32(in[i]), p));
        break;
    }
    default: {
        const float *in = x->data;
        float *out = io->output->data;
        if (vectorised != NULL) {
            (*vectorised)((size_t)n, in, out);
            break;
        }
        for (int64_t i = 0; i < n; i++)
            out[i] = f->f32(in[i], p);
        break;
    }
    }
}

#define MATH_OP_WITH(symbol, nnef_name, variant_, params_)                                 \
    const ember_op ember_op_##symbol = {.name = nnef_name, .variant = variant_,            \
                                        .params = params_,                                 \
                                        .param_count = sizeof params_ / sizeof *params_,   \
                                        .parse = math_parse, .infer = math_infer,          \
                                        .prepare = math_prepare, .run = math_run,          \
                                        .free_prepared = free};
#define MATH_OP(symbol, nnef_name, variant_) MATH_OP_WITH(symbol, nnef_name, variant_, plain_params)
MATH_OP(floor, "floor", FLOOR)
MATH_OP(ceil, "ceil", CEIL)
MATH_OP(round_even, "tract_core_round_even", ROUND_EVEN)
MATH_OP(sign, "sign", SIGN)
MATH_OP(rcp, "rcp", RCP)
MATH_OP(sin, "sin", SIN)
MATH_OP(cos, "cos", COS)
MATH_OP(tan, "tan", TAN)
MATH_OP(asin, "asin", ASIN)
MATH_OP(acos, "acos", ACOS)
MATH_OP(atan, "atan", ATAN)
MATH_OP(sinh, "sinh", SINH)
MATH_OP(cosh, "cosh", COSH)
MATH_OP(asinh, "asinh", ASINH)
MATH_OP(acosh, "acosh", ACOSH)
MATH_OP(atanh, "atanh", ATANH)
MATH_OP(erf, "tract_onnx_erf", ERF)
MATH_OP(softplus, "softplus", SOFTPLUS)
MATH_OP(softsign, "ember_softsign", SOFTSIGN)
MATH_OP(mish, "ember_mish", MISH)
MATH_OP_WITH(elu, "elu", ELU, alpha_params)
MATH_OP_WITH(selu, "selu", SELU, selu_params)
MATH_OP_WITH(celu, "ember_celu", CELU, alpha_params)
MATH_OP_WITH(leaky_relu, "leaky_relu", LEAKY_RELU, alpha_params)
MATH_OP_WITH(thresholded_relu, "ember_thresholded_relu", THRESHOLDED_RELU, alpha_params)
MATH_OP_WITH(shrink, "ember_shrink", SHRINK, shrink_params)

/* ---------------------------------------------------------------- classification */

/* ember_is_nan(x), ember_is_inf(x, detect_positive, detect_negative) → bool. */
static const ember_op_param class_params[] = {
    {"x", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"detect_positive", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"detect_negative", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};

typedef struct class_attributes {
    int positive, negative;
} class_attributes;

static ember_status class_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                                void **out)
{
    class_attributes *a = calloc(1, sizeof *a);
    if (a == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = a;
    const int with_flags = node->op->param_count == 3;
    ember_status status = ember_attr_bool(node, "detect_positive", with_flags ? attrs[1] : NULL,
                                          1, &a->positive);
    if (status == EMBER_OK)
        status = ember_attr_bool(node, "detect_negative", with_flags ? attrs[2] : NULL, 1,
                                 &a->negative);
    return status;
}

static ember_status class_infer(ember_node *node, const ember_value *const *inputs,
                                ember_value *output)
{
    ember_status status = math_infer(node, inputs, output);
    output->datum_type = EMBER_BOOL;
    return status;
}

static void class_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)prepared;
    const class_attributes *a = node->attributes;
    const ember_tensor *x = io->inputs[0];
    const int64_t n = ember_shape_count(x->shape, x->rank);
    uint8_t *out = io->output->data;
    for (int64_t i = 0; i < n; i++) {
        const double v = x->datum_type == EMBER_F64 ? ((const double *)x->data)[i]
                         : x->datum_type == EMBER_F16
                             ? ember_f16_to_f32(((const uint16_t *)x->data)[i])
                             : ((const float *)x->data)[i];
        out[i] = node->op->variant == 0 ? isnan(v) != 0
                                        : isinf(v) && (v > 0 ? a->positive : a->negative);
    }
}

const ember_op ember_op_is_nan = {.name = "ember_is_nan", .variant = 0,
    .params = class_params, .param_count = 1, .parse = class_parse, .infer = class_infer,
    .run = class_run};
const ember_op ember_op_is_inf = {.name = "ember_is_inf", .variant = 1,
    .params = class_params, .param_count = 3, .parse = class_parse, .infer = class_infer,
    .run = class_run};
