/*
 * pad(input, padding = [(before, after), …], border = "constant", value = 0.0): every
 * axis grows by its (before, after) pair (non-negative; the cook writes a slice first for
 * ONNX's negative pads). Cells outside the input take, by `border`:
 *   constant    `value` (converted to the datum type)
 *   reflect     the mirror image without repeating the edge (numpy's "reflect"),
 *               folded again for pads longer than the axis
 *   replicate   the nearest edge item (ONNX "edge")
 *   wrap        the input repeated periodically (ONNX "wrap")
 * Any datum type: rows are copied by item size, the interior with one memcpy per row.
 */
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"
#include "core/half.h"
#include "core/op.h"
#include "core/shape.h"
#include "ops/ops.h"

enum { CONSTANT, REFLECT, REPLICATE, WRAP };

typedef struct pad_attributes {
    int64_t before[EMBER_MAX_RANK], after[EMBER_MAX_RANK];
    int count, border;
    double value;
    uint8_t fill[8];         /* `value` as one item of the input's type (infer) */
} pad_attributes;

static const ember_op_param pad_params[] = {
    {"input", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"padding", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"border", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"value", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};

static ember_status pad_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                              void **out)
{
    pad_attributes *a = calloc(1, sizeof *a);
    if (a == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = a;
    const char *border = NULL;
    ember_status status = ember_attr_padding(node, "padding", attrs[1], a->before, a->after,
                                             EMBER_MAX_RANK, &a->count);
    if (status == EMBER_OK)
        status = ember_attr_string(node, "border", attrs[2], "constant", &border);
    if (status == EMBER_OK)
        status = ember_attr_float(node, "value", attrs[3], 0.0, &a->value);
    if (status != EMBER_OK)
        return status;
    static const char *const names[] = {"constant", "reflect", "replicate", "wrap"};
    a->border = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(border, names[i]) == 0)
            a->border = i;
    if (a->border < 0)
        return ember_node_error(node, EMBER_ERROR_UNSUPPORTED, "border '%s' (expected "
                                "constant, reflect, replicate or wrap)", border);
    return EMBER_OK; /* ember_attr_padding refused negative pads */
}

/* `value` as one item of `dt`. */
static void fill_item(ember_datum_type dt, double value, uint8_t *item)
{
    union { float f; double d; int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32;
            uint32_t u32; int64_t i64; uint64_t u64; } v;
    memset(&v, 0, sizeof v);
    switch (dt) {
    case EMBER_F32: v.f = (float)value; break;
    case EMBER_F64: v.d = value; break;
    case EMBER_F16: v.u16 = ember_f32_to_f16((float)value); break;
    case EMBER_I8: v.i8 = (int8_t)value; break;
    case EMBER_U8: v.u8 = (uint8_t)value; break;
    case EMBER_BOOL: v.u8 = value != 0; break;
    case EMBER_I16: v.i16 = (int16_t)value; break;
    case EMBER_U16: v.u16 = (uint16_t)value; break;
    case EMBER_I32: v.i32 = (int32_t)value; break;
    case EMBER_U32: v.u32 = (uint32_t)value; break;
    case EMBER_I64: v.i64 = (int64_t)value; break;
    case EMBER_U64: v.u64 = (uint64_t)value; break;
    }
    memcpy(item, &v, 8);
}

static ember_status pad_infer(ember_node *node, const ember_value *const *inputs,
                              ember_value *output)
{
    pad_attributes *a = node->attributes;
    const ember_value *x = inputs[0];
    if (a->count != x->rank)
        return ember_node_error(node, EMBER_ERROR_INVALID, "padding has %d pairs for an input "
                                "of rank %d", a->count, (int)x->rank);
    output->datum_type = x->datum_type;
    output->rank = x->rank;
    for (int i = 0; i < x->rank; i++) {
        if (a->border != CONSTANT && x->shape[i] == 0 && a->before[i] + a->after[i] > 0)
            return ember_node_error(node, EMBER_ERROR_INVALID, "axis %d is empty: there is "
                                    "nothing to %s", i, a->border == WRAP ? "wrap" : "mirror");
        if (__builtin_add_overflow(x->shape[i], a->before[i], &output->shape[i]) ||
            __builtin_add_overflow(output->shape[i], a->after[i], &output->shape[i]))
            return ember_node_error(node, EMBER_ERROR_INVALID, "padded axis %d overflows", i);
    }
    fill_item(x->datum_type, a->value, a->fill);
    return EMBER_OK;
}

/* The input index of output index `o` along an axis of `n` items padded by `before`;
 * -1 for a constant cell. */
static int64_t source(int border, int64_t o, int64_t before, int64_t n)
{
    int64_t i = o - before;
    if (i >= 0 && i < n)
        return i;
    switch (border) {
    case REPLICATE:
        return i < 0 ? 0 : n - 1;
    case WRAP:
        return ((i % n) + n) % n;
    case REFLECT: {
        if (n == 1)
            return 0;
        const int64_t period = 2 * (n - 1);
        i = ((i % period) + period) % period;
        return i < n ? i : period - i;
    }
    default:
        return -1;
    }
}

static void pad_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)prepared;
    const pad_attributes *a = node->attributes;
    const ember_tensor *x = io->inputs[0];
    const ember_tensor *y = io->output;
    const int rank = x->rank;
    const size_t size = ember_datum_size(x->datum_type);
    if (rank == 0) {
        memcpy(y->data, x->data, size);
        return;
    }
    const int last = rank - 1;
    const int64_t row = y->shape[last], in_row = x->shape[last];
    int64_t in_strides[EMBER_MAX_RANK], index[EMBER_MAX_RANK] = {0};
    ember_shape_strides(x->shape, rank, in_strides);
    const int64_t rows = ember_shape_count(y->shape, last);
    uint8_t *out = y->data;
    for (int64_t r = 0; r < rows; r++, out += (size_t)row * size) {
        /* The input row this output row reads, or none (a constant row). */
        int64_t offset = 0;
        int constant = 0;
        for (int d = 0; d < last && !constant; d++) {
            const int64_t s = source(a->border, index[d], a->before[d], x->shape[d]);
            constant = s < 0;
            offset += constant ? 0 : s * in_strides[d];
        }
        /* (a constant row reads nothing: `in` then stays at the start of the input) */
        const uint8_t *in = (const uint8_t *)x->data + (size_t)offset * size;
        for (int64_t c = 0; c < row; c++) {
            const int64_t s = constant ? -1 : source(a->border, c, a->before[last], in_row);
            if (s >= 0 && c == a->before[last] && in_row > 0) { /* the interior at once */
                memcpy(out + (size_t)c * size, in, (size_t)in_row * size);
                c += in_row - 1;
                continue;
            }
            memcpy(out + (size_t)c * size, s >= 0 ? in + (size_t)s * size : a->fill, size);
        }
        for (int d = last - 1; d >= 0 && ++index[d] == y->shape[d]; d--)
            index[d] = 0;
    }
}

const ember_op ember_op_pad = {.name = "pad", .params = pad_params, .param_count = 4,
                               .parse = pad_parse, .infer = pad_infer, .run = pad_run};
