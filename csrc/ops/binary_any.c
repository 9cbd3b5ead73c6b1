/*
 * Binary ops on every datum type, with numpy broadcasting, in the operands' own type:
 *
 *   arithmetic  add sub mul div min max pow (for types other than f32, which
 *               elementwise.c runs with its fast paths and fusion), ember_mod
 *               (ONNX Mod, fmod = 0: the sign of the divisor), ember_fmod (fmod = 1: the
 *               sign of the dividend), prelu (x < 0 ? alpha·x : x)
 *   comparison  eq ne lt gt le ge → bool
 *   logic       and or (bool)
 *   bitwise     ember_bitwise_and/or/xor, ember_shift_left/right (integers; a signed
 *               right shift is arithmetic; a shift count that is negative or not below
 *               the item width gives 0, or -1 shifting a negative number right, as
 *               numpy does)
 *   select      select(condition, true_value, false_value), any type
 *
 * Integer semantics are ONNX's: results wrap modulo 2^bits; division truncates toward
 * zero; a division or modulo by zero gives 0 and INT_MIN / -1 gives INT_MIN (ONNX leaves
 * both undefined; here they are defined and never trap); shifts by the item width or
 * more give 0 (see bitwise); pow with a negative exponent uses its absolute value (the cook's rule).
 * Floats compute in double (f16 through it too) and round once to the result type;
 * min and max propagate NaN. Each element goes through ember_item (ops/items.h): a
 * reference, not a fast path.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/op.h"
#include "core/shape.h"
#include "ops/binary_any.h"
#include "ops/items.h"
#include "ops/ops.h"

/* ---------------------------------------------------------------- broadcasting */

/* Calls fn(ctx, item offsets…, output index) over the output in row-major order. */
typedef struct walk {
    int rank;
    int64_t dims[EMBER_MAX_RANK];
    int64_t strides[3][EMBER_MAX_RANK];
    int operands;
} walk;

static void walk_init(walk *w, const ember_op_io *io, int operands)
{
    const ember_tensor *out = io->output;
    w->rank = out->rank;
    w->operands = operands;
    memcpy(w->dims, out->shape, sizeof w->dims);
    for (int k = 0; k < operands; k++)
        ember_broadcast_strides(io->inputs[k]->shape, io->inputs[k]->rank, out->shape,
                                out->rank, w->strides[k]);
}

/* Next index; the offsets follow. 0 at the end. */
static int walk_next(const walk *w, int64_t *index, int64_t *offset)
{
    for (int d = w->rank - 1; d >= 0; d--) {
        for (int k = 0; k < w->operands; k++)
            offset[k] += w->strides[k][d];
        if (++index[d] < w->dims[d])
            return 1;
        for (int k = 0; k < w->operands; k++)
            offset[k] -= w->strides[k][d] * w->dims[d];
        index[d] = 0;
    }
    return 0;
}

/* ---------------------------------------------------------------- the operations */

static int64_t int_div(int64_t a, int64_t b)
{
    if (b == 0)
        return 0;
    if (b == -1)
        return (int64_t)(0 - (uint64_t)a); /* INT64_MIN / -1 wraps, without trapping */
    return a / b;
}

static int64_t int_rem(int64_t a, int64_t b)
{
    return (b == 0 || b == -1) ? 0 : a % b;
}

static uint64_t int_pow(uint64_t base, uint64_t exponent)
{
    uint64_t result = 1;
    for (; exponent; exponent >>= 1, base *= base)
        if (exponent & 1)
            result *= base;
    return result;
}

static double float_op(int op, double a, double b)
{
    switch (op) {
    case EMBER_BIN_ADD: return a + b;
    case EMBER_BIN_SUB: return a - b;
    case EMBER_BIN_MUL: return a * b;
    case EMBER_BIN_DIV: return a / b;
    case EMBER_BIN_MIN: return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
    case EMBER_BIN_MAX: return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
    case EMBER_BIN_POW: return pow(a, b);
    case EMBER_BIN_FMOD: return fmod(a, b);
    case EMBER_BIN_MOD: {
        const double r = fmod(a, b);
        return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    }
    case EMBER_BIN_PRELU: return a < 0 ? a * b : a;
    default: return 0;
    }
}

static int64_t signed_op(int op, int64_t a, int64_t b, int bits)
{
    const uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    switch (op) {
    case EMBER_BIN_ADD: return (int64_t)(ua + ub);
    case EMBER_BIN_SUB: return (int64_t)(ua - ub);
    case EMBER_BIN_MUL: return (int64_t)(ua * ub);
    case EMBER_BIN_DIV: return int_div(a, b);
    case EMBER_BIN_MIN: return a < b ? a : b;
    case EMBER_BIN_MAX: return a > b ? a : b;
    case EMBER_BIN_POW: return (int64_t)int_pow(ua, b < 0 ? 0 - ub : ub);
    case EMBER_BIN_FMOD: return int_rem(a, b);
    case EMBER_BIN_MOD: {
        const int64_t r = int_rem(a, b);
        return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    }
    case EMBER_BIN_PRELU: return a < 0 ? (int64_t)(ua * ub) : a;
    case EMBER_BIN_BIT_AND: return a & b;
    case EMBER_BIN_BIT_OR: return a | b;
    case EMBER_BIN_BIT_XOR: return a ^ b;
    case EMBER_BIN_SHIFT_LEFT: return ub >= (uint64_t)bits ? 0 : (int64_t)(ua << ub);
    case EMBER_BIN_SHIFT_RIGHT: return ub >= (uint64_t)bits ? (a < 0 ? -1 : 0) : a >> ub;
    default: return 0;
    }
}

static uint64_t unsigned_op(int op, uint64_t a, uint64_t b, int bits)
{
    switch (op) {
    case EMBER_BIN_ADD: return a + b;
    case EMBER_BIN_SUB: return a - b;
    case EMBER_BIN_MUL: return a * b;
    case EMBER_BIN_DIV: return b ? a / b : 0;
    case EMBER_BIN_MIN: return a < b ? a : b;
    case EMBER_BIN_MAX: return a > b ? a : b;
    case EMBER_BIN_POW: return int_pow(a, b);
    case EMBER_BIN_MOD: case EMBER_BIN_FMOD: return b ? a % b : 0;
    case EMBER_BIN_PRELU: return a;
    case EMBER_BIN_BIT_AND: return a & b;
    case EMBER_BIN_BIT_OR: return a | b;
    case EMBER_BIN_BIT_XOR: return a ^ b;
    case EMBER_BIN_SHIFT_LEFT: return b >= (uint64_t)bits ? 0 : a << b;
    case EMBER_BIN_SHIFT_RIGHT: return b >= (uint64_t)bits ? 0 : a >> b;
    default: return 0;
    }
}

/* -1, 0, 1, or 2 when unordered (a NaN). */
static int compare(ember_item_kind kind, ember_item a, ember_item b)
{
    switch (kind) {
    case ITEM_FLOAT: return isnan(a.f) || isnan(b.f) ? 2 : (a.f > b.f) - (a.f < b.f);
    case ITEM_UNSIGNED: return (a.u > b.u) - (a.u < b.u);
    default: return (a.i > b.i) - (a.i < b.i);
    }
}

static int comparison(int op, int c)
{
    switch (op) {
    case EMBER_BIN_EQ: return c == 0;
    case EMBER_BIN_NE: return c != 0;
    case EMBER_BIN_LT: return c == -1;
    case EMBER_BIN_GT: return c == 1;
    case EMBER_BIN_LE: return c == -1 || c == 0;
    case EMBER_BIN_GE: return c == 1 || c == 0;
    default: return 0;
    }
}

static int returns_bool(int op)
{
    return op >= EMBER_BIN_EQ;
}

void ember_binary_any_run(int op, const ember_op_io *io)
{
    const ember_tensor *a = io->inputs[0], *b = io->inputs[1];
    const ember_datum_type dt = a->datum_type;
    const ember_item_kind kind = ember_item_kind_of(dt);
    const int bits = (int)ember_datum_size(dt) * 8;
    walk w;
    walk_init(&w, io, 2);
    int64_t index[EMBER_MAX_RANK] = {0}, offset[2] = {0, 0}, i = 0;
    if (ember_shape_count(io->output->shape, io->output->rank) == 0)
        return;
    do {
        const ember_item x = ember_item_get(dt, a->data, offset[0]);
        const ember_item y = ember_item_get(dt, b->data, offset[1]);
        ember_item r;
        if (op == EMBER_BIN_AND || op == EMBER_BIN_OR) {
            r.u = op == EMBER_BIN_AND ? (x.u && y.u) : (x.u || y.u);
        } else if (returns_bool(op)) {
            r.u = (uint64_t)comparison(op, compare(kind, x, y));
        } else if (kind == ITEM_FLOAT) {
            r.f = float_op(op, x.f, y.f);
        } else if (kind == ITEM_UNSIGNED) {
            r.u = unsigned_op(op, x.u, y.u, bits);
        } else {
            r.i = signed_op(op, x.i, y.i, bits);
        }
        ember_item_put(returns_bool(op) ? EMBER_BOOL : dt, io->output->data, i++, r);
    } while (walk_next(&w, index, offset));
}

/* ---------------------------------------------------------------- shapes */

static int is_integer(ember_datum_type dt)
{
    return ember_item_kind_of(dt) != ITEM_FLOAT && dt != EMBER_BOOL;
}

/* Which datum types an op takes, as a message fragment, or NULL when `dt` is fine. */
static const char *refused_type(int op, ember_datum_type dt)
{
    switch (op) {
    case EMBER_BIN_AND: case EMBER_BIN_OR:
        return dt == EMBER_BOOL ? NULL : "bool";
    case EMBER_BIN_BIT_AND: case EMBER_BIN_BIT_OR: case EMBER_BIN_BIT_XOR:
        return is_integer(dt) ? NULL : "integers";
    case EMBER_BIN_EQ: case EMBER_BIN_NE: case EMBER_BIN_LT: case EMBER_BIN_GT:
    case EMBER_BIN_LE: case EMBER_BIN_GE:
        return ember_datum_size(dt) ? NULL : "any type";
    default:
        return dt != EMBER_BOOL && ember_datum_size(dt) ? NULL : "numbers";
    }
}

ember_status ember_broadcast_facts(ember_node *node, const ember_value *const *inputs,
                                   size_t count, ember_value *output)
{
    int rank = inputs[0]->rank;
    int64_t shape[EMBER_MAX_RANK];
    memcpy(shape, inputs[0]->shape, sizeof shape);
    for (size_t i = 1; i < count; i++) {
        char a[EMBER_SHAPE_TEXT], b[EMBER_SHAPE_TEXT];
        int64_t next[EMBER_MAX_RANK];
        int next_rank;
        if (ember_shape_broadcast(shape, rank, inputs[i]->shape, inputs[i]->rank, next,
                                  &next_rank) != 0)
            return ember_node_error(node, EMBER_ERROR_INVALID,
                                    "shapes %s and %s do not broadcast (input %zu '%s')",
                                    ember_shape_format(shape, rank, a, sizeof a),
                                    ember_shape_format(inputs[i]->shape, inputs[i]->rank, b,
                                                       sizeof b), i, inputs[i]->name);
        rank = next_rank;
        memcpy(shape, next, sizeof shape);
    }
    output->rank = rank;
    memcpy(output->shape, shape, sizeof shape);
    return EMBER_OK;
}

ember_status ember_binary_any_infer(int op, ember_node *node, const ember_value *const *inputs,
                                    ember_value *output)
{
    const ember_datum_type dt = inputs[0]->datum_type;
    if (inputs[1]->datum_type != dt)
        return ember_node_error(node, EMBER_ERROR_INVALID, "operands are %s and %s; they "
                                "must have one datum type",
                                ember_datum_type_name(dt),
                                ember_datum_type_name(inputs[1]->datum_type));
    const char *wanted = refused_type(op, dt);
    if (wanted != NULL)
        return ember_node_error(node, EMBER_ERROR_INVALID, "operands are %s; this op takes %s",
                                ember_datum_type_name(dt), wanted);
    output->datum_type = returns_bool(op) ? EMBER_BOOL : dt;
    return ember_broadcast_facts(node, inputs, 2, output);
}

/* ---------------------------------------------------------------- descriptors */

static ember_status any_infer(ember_node *node, const ember_value *const *inputs,
                              ember_value *output)
{
    return ember_binary_any_infer(node->op->variant, node, inputs, output);
}

static void any_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)prepared;
    ember_binary_any_run(node->op->variant, io);
}

static const ember_op_param binary_params[] = {
    {"x", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"y", EMBER_PARAM_TENSOR, 0, 0.0f},
};

#define ANY_OP(symbol, nnef_name, variant_)                                                \
    const ember_op ember_op_##symbol = {.name = nnef_name, .variant = variant_,            \
                                        .params = binary_params, .param_count = 2,         \
                                        .infer = any_infer, .run = any_run, .flags = EMBER_OP_BINARY};
ANY_OP(eq, "eq", EMBER_BIN_EQ)
ANY_OP(ne, "ne", EMBER_BIN_NE)
ANY_OP(lt, "lt", EMBER_BIN_LT)
ANY_OP(gt, "gt", EMBER_BIN_GT)
ANY_OP(le, "le", EMBER_BIN_LE)
ANY_OP(ge, "ge", EMBER_BIN_GE)
ANY_OP(and, "and", EMBER_BIN_AND)
ANY_OP(or, "or", EMBER_BIN_OR)
ANY_OP(mod, "ember_mod", EMBER_BIN_MOD)
ANY_OP(fmod, "ember_fmod", EMBER_BIN_FMOD)
ANY_OP(prelu, "prelu", EMBER_BIN_PRELU)
ANY_OP(bitwise_and, "ember_bitwise_and", EMBER_BIN_BIT_AND)
ANY_OP(bitwise_or, "ember_bitwise_or", EMBER_BIN_BIT_OR)
ANY_OP(bitwise_xor, "ember_bitwise_xor", EMBER_BIN_BIT_XOR)
ANY_OP(shift_left, "ember_shift_left", EMBER_BIN_SHIFT_LEFT)
ANY_OP(shift_right, "ember_shift_right", EMBER_BIN_SHIFT_RIGHT)

/* ---------------------------------------------------------------- not, select */

static ember_status not_infer(ember_node *node, const ember_value *const *inputs,
                              ember_value *output)
{
    const ember_datum_type dt = inputs[0]->datum_type;
    const int bitwise = node->op->variant;
    if (bitwise ? !is_integer(dt) : dt != EMBER_BOOL)
        return ember_node_error(node, EMBER_ERROR_INVALID, "input is %s; this op takes %s",
                                ember_datum_type_name(dt), bitwise ? "integers" : "bool");
    output->datum_type = dt;
    output->rank = inputs[0]->rank;
    memcpy(output->shape, inputs[0]->shape, sizeof output->shape);
    return EMBER_OK;
}

static void not_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)prepared;
    const ember_tensor *x = io->inputs[0];
    const int64_t n = ember_shape_count(x->shape, x->rank);
    for (int64_t i = 0; i < n; i++) {
        ember_item v = ember_item_get(x->datum_type, x->data, i);
        v.u = node->op->variant ? ~v.u : !v.u;
        ember_item_put(x->datum_type, io->output->data, i, v);
    }
}

static const ember_op_param not_params[] = {{"x", EMBER_PARAM_TENSOR, 0, 0.0f}};
const ember_op ember_op_not = {.name = "not", .variant = 0, .params = not_params,
    .param_count = 1, .infer = not_infer, .run = not_run};
const ember_op ember_op_bitwise_not = {.name = "ember_bitwise_not", .variant = 1,
    .params = not_params, .param_count = 1, .infer = not_infer, .run = not_run};

static ember_status select_infer(ember_node *node, const ember_value *const *inputs,
                                 ember_value *output)
{
    if (inputs[0]->datum_type != EMBER_BOOL)
        return ember_node_error(node, EMBER_ERROR_INVALID, "condition is %s; it must be bool",
                                ember_datum_type_name(inputs[0]->datum_type));
    if (inputs[1]->datum_type != inputs[2]->datum_type)
        return ember_node_error(node, EMBER_ERROR_INVALID, "true and false values are %s "
                                "and %s; they must have one datum type",
                                ember_datum_type_name(inputs[1]->datum_type),
                                ember_datum_type_name(inputs[2]->datum_type));
    output->datum_type = inputs[1]->datum_type;
    return ember_broadcast_facts(node, inputs, 3, output);
}

static void select_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)node;
    (void)prepared;
    const size_t size = ember_datum_size(io->output->datum_type);
    const uint8_t *condition = io->inputs[0]->data;
    const uint8_t *yes = io->inputs[1]->data, *no = io->inputs[2]->data;
    uint8_t *out = io->output->data;
    walk w;
    walk_init(&w, io, 3);
    int64_t index[EMBER_MAX_RANK] = {0}, offset[3] = {0, 0, 0};
    do {
        memcpy(out, condition[offset[0]] ? yes + (size_t)offset[1] * size
                                         : no + (size_t)offset[2] * size, size);
        out += size;
    } while (walk_next(&w, index, offset));
}

static const ember_op_param select_params[] = {
    {"condition", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"true_value", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"false_value", EMBER_PARAM_TENSOR, 0, 0.0f},
};
const ember_op ember_op_select = {.name = "select", .params = select_params,
    .param_count = 3, .infer = select_infer, .run = select_run};
