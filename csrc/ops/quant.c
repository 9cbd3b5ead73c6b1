/*
 * Quantization ops (ember extensions, docs/plan-format.md):
 *
 *   ember_quantize_linear(x, scale, zero_point = 0, axis = 1, to = "u8")
 *       y = saturate(rint(x / scale) + zero_point), x f32/f16/f64/i32 → i8/u8/i16/u16/i32
 *   ember_dequantize_linear(x, scale, zero_point = 0, axis = 1, to = "f32")
 *       y = (x - zero_point) · scale, x i8/u8/i16/u16/i32 → f32/f16/f64
 *   y, scale, zero = ember_dynamic_quantize_linear(x)     (ONNX DynamicQuantizeLinear)
 *   ember_bit_cast(x, to)                                 the same bytes, another type
 *
 * scale and zero_point hold one value (per tensor) or one per index of x's `axis` (per
 * axis). x is then walked as [outer, channels, inner] with a constant scale and zero
 * point along each run of `inner` items. Quantize divides in double (x / scale, exact
 * inputs, one rounding), dequantize multiplies in double and rounds once to `to`:
 * the numpy reference of cook/ops/quant.py, bit for bit. rint is round half to even.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"
#include "core/half.h"
#include "core/op.h"
#include "core/shape.h"
#include "ops/ops.h"
#include "ops/quant.h"

/* Items converted through a double buffer on the stack per pass: typed loops on both
 * sides, no per-item type switch. */
#define CHUNK 256

/* ---------------------------------------------------------------- shared helpers */

double ember_quant_load(const void *data, ember_datum_type dt, int64_t i)
{
    switch (dt) {
    case EMBER_F32: return ((const float *)data)[i];
    case EMBER_F16: return ember_f16_to_f32(((const uint16_t *)data)[i]);
    case EMBER_F64: return ((const double *)data)[i];
    case EMBER_I8: return ((const int8_t *)data)[i];
    case EMBER_U8: return ((const uint8_t *)data)[i];
    case EMBER_I16: return ((const int16_t *)data)[i];
    case EMBER_U16: return ((const uint16_t *)data)[i];
    case EMBER_I32: return ((const int32_t *)data)[i];
    case EMBER_U32: return ((const uint32_t *)data)[i];
    case EMBER_I64: return (double)((const int64_t *)data)[i];
    case EMBER_U64: return (double)((const uint64_t *)data)[i];
    case EMBER_BOOL: return ((const uint8_t *)data)[i] != 0;
    }
    return 0.0;
}

void ember_quant_store(void *data, ember_datum_type dt, int64_t i, int64_t v)
{
    switch (dt) {
    case EMBER_I8: ((int8_t *)data)[i] = (int8_t)v; break;
    case EMBER_U8: ((uint8_t *)data)[i] = (uint8_t)v; break;
    case EMBER_I16: ((int16_t *)data)[i] = (int16_t)v; break;
    case EMBER_U16: ((uint16_t *)data)[i] = (uint16_t)v; break;
    case EMBER_I32: ((int32_t *)data)[i] = (int32_t)v; break;
    default: break;
    }
}

int ember_quant_range(ember_datum_type dt, int64_t *low, int64_t *high)
{
    switch (dt) {
    case EMBER_I8: *low = INT8_MIN; *high = INT8_MAX; return 1;
    case EMBER_U8: *low = 0; *high = UINT8_MAX; return 1;
    case EMBER_I16: *low = INT16_MIN; *high = INT16_MAX; return 1;
    case EMBER_U16: *low = 0; *high = UINT16_MAX; return 1;
    case EMBER_I32: *low = INT32_MIN; *high = INT32_MAX; return 1;
    default: return 0;
    }
}

uint16_t ember_quant_f64_to_f16(double d)
{
    /* Rounding to odd into f32 (24 bits ≥ 11 + 2) and then to nearest even into f16
     * gives the correctly rounded f16: no double rounding. */
    float f = (float)d;
    if ((double)f != d && d == d) {
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        if (fabs((double)f) > fabs(d))
            bits -= 1; /* step toward zero: truncation */
        bits |= 1;     /* sticky */
        memcpy(&f, &bits, sizeof f);
    }
    return ember_f32_to_f16(f);
}

ember_status ember_quant_attr_type(const ember_node *node, const char *name,
                                   const ember_nnef_expr *e, ember_datum_type fallback,
                                   const ember_datum_type *allowed, int count,
                                   ember_datum_type *out)
{
    const char *text;
    ember_status status = ember_attr_string(node, name, e, NULL, &text);
    if (status != EMBER_OK)
        return status;
    *out = text == NULL ? fallback : ember_datum_type_from_name(text);
    for (int i = 0; i < count; i++)
        if (*out == allowed[i])
            return EMBER_OK;
    return ember_node_error(node, EMBER_ERROR_UNSUPPORTED, "%s = \"%s\" is not supported here",
                            name, text ? text : ember_datum_type_name(fallback));
}

ember_status ember_quant_check_count(const ember_node *node, const char *what,
                                     const ember_value *value, int64_t count, int *per_axis)
{
    const int64_t n = ember_shape_count(value->shape, value->rank);
    *per_axis = n != 1;
    if (n == 1 || (value->rank == 1 && value->shape[0] == count))
        return EMBER_OK;
    char s[EMBER_SHAPE_TEXT];
    return ember_node_error(node, EMBER_ERROR_INVALID,
                            "%s '%s' %s: expected one value or [%lld]", what, value->name,
                            ember_shape_format(value->shape, value->rank, s, sizeof s),
                            (long long)count);
}

ember_status ember_quant_check_scale(const ember_node *node, const char *what,
                                     const ember_value *scale)
{
    if (scale->datum_type == EMBER_F32 || scale->datum_type == EMBER_F16 ||
        scale->datum_type == EMBER_F64 || scale->datum_type == EMBER_I32)
        return EMBER_OK; /* ONNX: i32 scales go with i32 input */
    return ember_node_error(node, EMBER_ERROR_UNSUPPORTED, "%s '%s' is %s, expected a float (or i32)",
                            what, scale->name, ember_datum_type_name(scale->datum_type));
}

ember_status ember_quant_check_zero_point(const ember_node *node, const char *what,
                                          const ember_value *zero, ember_datum_type quantized)
{
    if (zero->datum_type == quantized)
        return EMBER_OK;
    int64_t low, high;
    if (zero->datum_type == EMBER_F32 && zero->constant != NULL &&
        ember_quant_range(quantized, &low, &high)) {
        const int64_t n = ember_shape_count(zero->shape, zero->rank);
        for (int64_t i = 0; i < n; i++) {
            const double v = ((const float *)zero->constant)[i];
            if (!(v >= (double)low && v <= (double)high && v == floor(v)))
                return ember_node_error(node, EMBER_ERROR_INVALID,
                                        "%s '%s' holds %g, not a %s value", what, zero->name,
                                        v, ember_datum_type_name(quantized));
        }
        return EMBER_OK;
    }
    return ember_node_error(node, EMBER_ERROR_UNSUPPORTED, "%s '%s' is %s, expected %s", what,
                            zero->name, ember_datum_type_name(zero->datum_type),
                            ember_datum_type_name(quantized));
}

/* ---------------------------------------------------------------- quantize, dequantize */

enum { QUANTIZE, DEQUANTIZE };
enum { X, SCALE, ZERO, AXIS, TO };

typedef struct linear_attributes {
    int64_t axis;            /* normalised by infer */
    ember_datum_type to;
    int scale_per_axis, zero_per_axis;
} linear_attributes;

static const ember_datum_type quantized_types[] = {EMBER_I8, EMBER_U8, EMBER_I16, EMBER_U16,
                                                   EMBER_I32};
static const ember_datum_type float_types[] = {EMBER_F32, EMBER_F16, EMBER_F64};

static ember_status linear_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                                 void **out)
{
    linear_attributes *a = calloc(1, sizeof *a);
    if (a == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = a;
    ember_status status = ember_attr_int(node, "axis", attrs[AXIS], 1, &a->axis);
    if (status != EMBER_OK)
        return status;
    if (node->op->variant == QUANTIZE)
        return ember_quant_attr_type(node, "to", attrs[TO], EMBER_U8, quantized_types, 5,
                                     &a->to);
    return ember_quant_attr_type(node, "to", attrs[TO], EMBER_F32, float_types, 3, &a->to);
}

static ember_status linear_infer(ember_node *node, const ember_value *const *inputs,
                                 ember_value *output)
{
    linear_attributes *a = node->attributes;
    const ember_value *x = inputs[X];
    const int quantize = node->op->variant == QUANTIZE;
    int64_t low, high;
    const int x_ok = quantize ? (x->datum_type == EMBER_F32 || x->datum_type == EMBER_F16 ||
                                 x->datum_type == EMBER_F64 || x->datum_type == EMBER_I32)
                              : ember_quant_range(x->datum_type, &low, &high);
    if (!x_ok)
        return ember_node_error(node, EMBER_ERROR_UNSUPPORTED, "input '%s' is %s, expected %s",
                                x->name, ember_datum_type_name(x->datum_type),
                                quantize ? "f32, f16, f64 or i32" : "i8, u8, i16, u16 or i32");
    ember_status status = ember_quant_check_scale(node, "scale", inputs[SCALE]);
    if (status == EMBER_OK)
        status = ember_quant_check_zero_point(node, "zero point", inputs[ZERO],
                                              quantize ? a->to : x->datum_type);
    if (status != EMBER_OK)
        return status;
    const int per_axis = ember_shape_count(inputs[SCALE]->shape, inputs[SCALE]->rank) != 1 ||
                         ember_shape_count(inputs[ZERO]->shape, inputs[ZERO]->rank) != 1;
    if (per_axis) {
        status = ember_attr_axes(node, "axis", &a->axis, 1, x->rank, 0);
        if (status != EMBER_OK)
            return status;
    }
    const int64_t channels = per_axis ? x->shape[a->axis] : 1;
    status = ember_quant_check_count(node, "scale", inputs[SCALE], channels, &a->scale_per_axis);
    if (status == EMBER_OK)
        status = ember_quant_check_count(node, "zero point", inputs[ZERO], channels,
                                         &a->zero_per_axis);
    if (status != EMBER_OK)
        return status;
    output->datum_type = a->to;
    output->rank = x->rank;
    memcpy(output->shape, x->shape, sizeof output->shape);
    return EMBER_OK;
}

static void load_chunk(const void *x, ember_datum_type dt, int64_t at, int64_t n, double *buf)
{
    switch (dt) {
#define LOAD(T, EXPR)                                                                      \
    {                                                                                      \
        const T *p = (const T *)x + at;                                                    \
        for (int64_t i = 0; i < n; i++)                                                    \
            buf[i] = (EXPR);                                                               \
        break;                                                                             \
    }
    case EMBER_F32: LOAD(float, p[i])
    case EMBER_F16: LOAD(uint16_t, ember_f16_to_f32(p[i]))
    case EMBER_F64: LOAD(double, p[i])
    case EMBER_I8: LOAD(int8_t, p[i])
    case EMBER_U8: LOAD(uint8_t, p[i])
    case EMBER_I16: LOAD(int16_t, p[i])
    case EMBER_U16: LOAD(uint16_t, p[i])
    case EMBER_I32: LOAD(int32_t, p[i])
#undef LOAD
    default: break;
    }
}

/* y[at … at+n) = saturate(rint(buf / scale) + zero) */
static void quantize_chunk(const double *buf, int64_t n, double scale, double zero,
                           ember_datum_type to, void *y, int64_t at)
{
    int64_t low = 0, high = 0;
    ember_quant_range(to, &low, &high);
    switch (to) {
#define STORE(T)                                                                           \
    {                                                                                      \
        T *p = (T *)y + at;                                                                \
        for (int64_t i = 0; i < n; i++)                                                    \
            p[i] = (T)ember_quant_round_add(buf[i] / scale, zero, low, high);              \
        break;                                                                             \
    }
    case EMBER_I8: STORE(int8_t)
    case EMBER_U8: STORE(uint8_t)
    case EMBER_I16: STORE(int16_t)
    case EMBER_U16: STORE(uint16_t)
    case EMBER_I32: STORE(int32_t)
#undef STORE
    default: break;
    }
}

/* y[at … at+n) = (buf - zero) · scale, rounded once to `to` */
static void dequantize_chunk(const double *buf, int64_t n, double scale, double zero,
                             ember_datum_type to, void *y, int64_t at)
{
    /* buf and zero hold integers: the difference is exact, the product rounds once. */
    switch (to) {
    case EMBER_F32:
        for (int64_t i = 0; i < n; i++)
            ((float *)y)[at + i] = (float)((buf[i] - zero) * scale);
        break;
    case EMBER_F64:
        for (int64_t i = 0; i < n; i++)
            ((double *)y)[at + i] = (buf[i] - zero) * scale;
        break;
    case EMBER_F16:
        for (int64_t i = 0; i < n; i++)
            ((uint16_t *)y)[at + i] = ember_quant_f64_to_f16((buf[i] - zero) * scale);
        break;
    default: break;
    }
}

static void linear_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)prepared;
    const linear_attributes *a = node->attributes;
    const ember_tensor *x = io->inputs[X], *scale = io->inputs[SCALE], *zero = io->inputs[ZERO];
    const int per_axis = a->scale_per_axis || a->zero_per_axis;
    int64_t outer = 1, channels = 1, inner = ember_shape_count(x->shape, x->rank);
    if (per_axis) {
        outer = ember_shape_count(x->shape, (int)a->axis);
        channels = x->shape[a->axis];
        inner = ember_shape_count(x->shape + a->axis + 1, x->rank - (int)a->axis - 1);
    }
    const int quantize = node->op->variant == QUANTIZE;
    double buf[CHUNK];
    int64_t at = 0;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t c = 0; c < channels; c++) {
            const double s = ember_quant_load(scale->data, scale->datum_type,
                                              a->scale_per_axis ? c : 0);
            const double z = ember_quant_load(zero->data, zero->datum_type,
                                              a->zero_per_axis ? c : 0);
            for (int64_t done = 0; done < inner; done += CHUNK) {
                const int64_t n = inner - done < CHUNK ? inner - done : CHUNK;
                load_chunk(x->data, x->datum_type, at, n, buf);
                if (quantize)
                    quantize_chunk(buf, n, s, z, a->to, io->output->data, at);
                else
                    dequantize_chunk(buf, n, s, z, a->to, io->output->data, at);
                at += n;
            }
        }
}

static const ember_op_param linear_params[] = {
    {"x", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"scale", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"zero_point", EMBER_PARAM_TENSOR, 1, 0.0f},
    {"axis", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"to", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};

const ember_op ember_op_ember_quantize_linear = {.name = "ember_quantize_linear",
    .variant = QUANTIZE, .params = linear_params, .param_count = 5, .parse = linear_parse,
    .infer = linear_infer, .run = linear_run};

const ember_op ember_op_ember_dequantize_linear = {.name = "ember_dequantize_linear",
    .variant = DEQUANTIZE, .params = linear_params, .param_count = 5, .parse = linear_parse,
    .infer = linear_infer, .run = linear_run};

/* ---------------------------------------------------------------- dynamic quantize */

/* ONNX DynamicQuantizeLinear, in f32 as ONNX computes it (cook/ops/quant.py):
 *   low = min(0, min x), high = max(0, max x)      NaNs ignored
 *   scale = (high - low) / 255, or 1 when high == low (onnxruntime's choice)
 *   zero = rint(clamp(0 - low / scale, 0, 255))
 *   y = clamp(rint(x / scale) + zero, 0, 255)      NaN → zero */
static ember_status dynamic_infer(ember_node *node, const ember_value *const *inputs,
                                  ember_value *output)
{
    if (node->output_count != 3)
        return ember_node_error(node, EMBER_ERROR_INVALID,
                                "assigns %d results; it gives 3 (y, scale, zero point)",
                                node->output_count);
    if (inputs[0]->datum_type != EMBER_F32)
        return ember_node_error(node, EMBER_ERROR_UNSUPPORTED, "input '%s' is %s, expected f32",
                                inputs[0]->name, ember_datum_type_name(inputs[0]->datum_type));
    output[0].datum_type = EMBER_U8;
    output[0].rank = inputs[0]->rank;
    memcpy(output[0].shape, inputs[0]->shape, sizeof output[0].shape);
    output[1].datum_type = EMBER_F32;
    output[1].rank = 0;
    output[2].datum_type = EMBER_U8;
    output[2].rank = 0;
    return EMBER_OK;
}

static void dynamic_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)node;
    (void)prepared;
    const ember_tensor *xt = io->inputs[0];
    const float *x = xt->data;
    const int64_t n = ember_shape_count(xt->shape, xt->rank);
    float low = 0.0f, high = 0.0f;
    for (int64_t i = 0; i < n; i++) { /* comparisons are false for NaN: ignored */
        if (x[i] < low)
            low = x[i];
        if (x[i] > high)
            high = x[i];
    }
    const float scale = high != low ? (high - low) / 255.0f : 1.0f;
    float zero = 0.0f - low / scale;
    zero = rintf(zero < 0.0f ? 0.0f : zero > 255.0f ? 255.0f : zero);
    uint8_t *y = io->output[0].data;
    for (int64_t i = 0; i < n; i++) {
        float q = rintf(x[i] / scale);
        if (q != q)
            q = 0.0f;
        q = q + zero;
        y[i] = (uint8_t)(q <= 0.0f ? 0.0f : q >= 255.0f ? 255.0f : q);
    }
    *(float *)io->output[1].data = scale;
    *(uint8_t *)io->output[2].data = (uint8_t)zero;
}

static const ember_op_param dynamic_params[] = {{"x", EMBER_PARAM_TENSOR, 0, 0.0f}};

const ember_op ember_op_ember_dynamic_quantize_linear = {
    .name = "ember_dynamic_quantize_linear", .params = dynamic_params, .param_count = 1,
    .infer = dynamic_infer, .run = dynamic_run, .max_outputs = 3};

/* ---------------------------------------------------------------- bit cast */

/* The output is input 0's bytes read as `to` (same item size): a view, never run. */
static ember_status bit_cast_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                                   void **out)
{
    static const ember_datum_type any[] = {EMBER_F32, EMBER_F16, EMBER_F64, EMBER_I8, EMBER_U8,
                                           EMBER_I16, EMBER_U16, EMBER_I32, EMBER_U32, EMBER_I64,
                                           EMBER_U64, EMBER_BOOL};
    ember_datum_type *to = malloc(sizeof *to);
    if (to == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = to;
    if (attrs[1] == NULL)
        return ember_node_error(node, EMBER_ERROR_INVALID, "needs the attribute 'to'");
    return ember_quant_attr_type(node, "to", attrs[1], EMBER_F32, any,
                                 (int)(sizeof any / sizeof any[0]), to);
}

static ember_status bit_cast_infer(ember_node *node, const ember_value *const *inputs,
                                   ember_value *output)
{
    const ember_datum_type to = *(const ember_datum_type *)node->attributes;
    const ember_value *x = inputs[0];
    if (ember_datum_size(to) != ember_datum_size(x->datum_type))
        return ember_node_error(node, EMBER_ERROR_INVALID, "%s and %s differ in width",
                                ember_datum_type_name(x->datum_type), ember_datum_type_name(to));
    output->datum_type = to;
    output->rank = x->rank;
    memcpy(output->shape, x->shape, sizeof output->shape);
    return EMBER_OK;
}

static const ember_op_param bit_cast_params[] = {
    {"x", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"to", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};

const ember_op ember_op_ember_bit_cast = {.name = "ember_bit_cast", .flags = EMBER_OP_VIEW,
    .params = bit_cast_params, .param_count = 2, .parse = bit_cast_parse,
    .infer = bit_cast_infer};
