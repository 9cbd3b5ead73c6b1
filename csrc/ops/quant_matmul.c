/*
 * Integer matrix products (ember extensions, docs/plan-format.md):
 *
 *   ember_matmul_integer(A, B, a_zero_point = 0, b_zero_point = 0)          → i32
 *       Y[m, n] = Σ_k (A[m, k] - za[m]) · (B[k, n] - zb[n])
 *   ember_qlinear_matmul(A, a_scale, a_zero_point, B, b_scale, b_zero_point,
 *                        y_scale, y_zero_point, to = "u8", scale_type = "f32") → i8/u8
 *       acc as above; mult[m, n] = a_scale[m] · b_scale[n] / y_scale[m], each operation
 *       rounded to scale_type; Y = saturate(rint(acc · mult + y_zero[m])), in double.
 *
 * A and B are i8 or u8 with rank ≥ 2 and broadcasting leading (batch) dims; the a/y
 * parameters hold one value or one per row, the b ones one or one per column.
 *
 * The reference kernel keeps the data integer: B - zb is centred once as i16 (at
 * prepare when B is a constant, else per call in scratch), and each row of Y is
 *     acc[n] = Σ_k (A[m, k] - za[m]) · B'[k, n]
 * a multiply-add of one centred A item over a row of B', accumulated in 32 bits with
 * wrap-around (ONNX's i32). No hand-written SIMD yet: this is the portable path an
 * optimised i8 GEMM kernel will be tested against.
 */
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"
#include "core/half.h"
#include "core/op.h"
#include "core/shape.h"
#include "ops/nd.h"
#include "ops/ops.h"
#include "ops/quant.h"

enum { INTEGER, QLINEAR };

/* Operand slots of each variant. */
typedef struct slots {
    int a, b, a_zero, b_zero, a_scale, b_scale, y_scale, y_zero;
} slots;

static const slots integer_slots = {0, 1, 2, 3, -1, -1, -1, -1};
static const slots qlinear_slots = {0, 3, 2, 5, 1, 4, 6, 7};

typedef struct qmatmul_attributes {
    ember_datum_type to, scale_type; /* qlinear only */
} qmatmul_attributes;

static const slots *slots_of(const ember_node *node)
{
    return node->op->variant == QLINEAR ? &qlinear_slots : &integer_slots;
}

static ember_status qmatmul_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                                  void **out)
{
    qmatmul_attributes *a = calloc(1, sizeof *a);
    if (a == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = a;
    static const ember_datum_type eight[] = {EMBER_I8, EMBER_U8};
    static const ember_datum_type scales[] = {EMBER_F32, EMBER_F16};
    ember_status status = ember_quant_attr_type(node, "to", attrs[8], EMBER_U8, eight, 2,
                                                &a->to);
    if (status == EMBER_OK)
        status = ember_quant_attr_type(node, "scale_type", attrs[9], EMBER_F32, scales, 2,
                                       &a->scale_type);
    return status;
}

static ember_status qmatmul_infer(ember_node *node, const ember_value *const *inputs,
                                  ember_value *output)
{
    const slots *s = slots_of(node);
    const ember_value *a = inputs[s->a], *b = inputs[s->b];
    char as[EMBER_SHAPE_TEXT], bs[EMBER_SHAPE_TEXT];
    ember_shape_format(a->shape, a->rank, as, sizeof as);
    ember_shape_format(b->shape, b->rank, bs, sizeof bs);
    for (int i = 0; i < 2; i++) {
        const ember_value *v = i ? b : a;
        if (v->datum_type != EMBER_I8 && v->datum_type != EMBER_U8)
            return ember_node_error(node, EMBER_ERROR_UNSUPPORTED, "operand '%s' is %s, "
                                    "expected i8 or u8", v->name,
                                    ember_datum_type_name(v->datum_type));
    }
    int64_t batch[EMBER_MAX_RANK];
    int batch_rank;
    if (a->rank < 2 || b->rank < 2 || a->shape[a->rank - 1] != b->shape[b->rank - 2] ||
        ember_shape_broadcast(a->shape, a->rank - 2, b->shape, b->rank - 2, batch,
                              &batch_rank) != 0)
        return ember_node_error(node, EMBER_ERROR_INVALID, "cannot multiply %s by %s", as, bs);
    const int64_t m = a->shape[a->rank - 2], n = b->shape[b->rank - 1];
    int per_axis;
    ember_status status = ember_quant_check_zero_point(node, "a zero point", inputs[s->a_zero],
                                                       a->datum_type);
    if (status == EMBER_OK)
        status = ember_quant_check_count(node, "a zero point", inputs[s->a_zero], m, &per_axis);
    if (status == EMBER_OK)
        status = ember_quant_check_zero_point(node, "b zero point", inputs[s->b_zero],
                                              b->datum_type);
    if (status == EMBER_OK)
        status = ember_quant_check_count(node, "b zero point", inputs[s->b_zero], n, &per_axis);
    output->datum_type = EMBER_I32;
    if (node->op->variant == QLINEAR) {
        const qmatmul_attributes *qa = node->attributes;
        const struct { int slot; const char *what; int64_t count; } scales[] = {
            {s->a_scale, "a scale", m}, {s->b_scale, "b scale", n}, {s->y_scale, "y scale", m}};
        for (int i = 0; i < 3 && status == EMBER_OK; i++) {
            status = ember_quant_check_scale(node, scales[i].what, inputs[scales[i].slot]);
            if (status == EMBER_OK)
                status = ember_quant_check_count(node, scales[i].what, inputs[scales[i].slot],
                                                 scales[i].count, &per_axis);
        }
        if (status == EMBER_OK)
            status = ember_quant_check_zero_point(node, "y zero point", inputs[s->y_zero],
                                                  qa->to);
        if (status == EMBER_OK)
            status = ember_quant_check_count(node, "y zero point", inputs[s->y_zero], m,
                                             &per_axis);
        output->datum_type = qa->to;
    }
    if (status != EMBER_OK)
        return status;
    output->rank = batch_rank + 2;
    memcpy(output->shape, batch, sizeof(int64_t) * (size_t)batch_rank);
    output->shape[batch_rank] = m;
    output->shape[batch_rank + 1] = n;
    return EMBER_OK;
}

/* B - zb as i16 (zb one value or one per column), so the inner loop multiplies
 * same-width integers, which compilers vectorise. */
static void centre_b(const void *b, ember_datum_type b_type, int64_t count, int64_t n,
                     const void *zb, ember_datum_type zb_type, int64_t zb_count, int16_t *out)
{
    for (int64_t at = 0; at < count; at += n)
        for (int64_t j = 0; j < n; j++) {
            const int32_t v = b_type == EMBER_I8 ? ((const int8_t *)b)[at + j]
                                                 : ((const uint8_t *)b)[at + j];
            out[at + j] = (int16_t)(v - (int32_t)ember_quant_load(zb, zb_type,
                                                                  zb_count == 1 ? 0 : j));
        }
}

/* A constant B (with a constant zb) is centred once, every batch matrix of it. */
typedef struct qmatmul_prepared {
    int16_t *packed_b;
} qmatmul_prepared;

static void qmatmul_free(void *prepared)
{
    qmatmul_prepared *p = prepared;
    if (p != NULL)
        free(p->packed_b);
    free(p);
}

/* Scratch: the centred B matrix (unless packed), then for qlinear an i32 accumulator
 * row and the row's multipliers (doubles), each 64-byte aligned. */
static size_t scratch_layout(int64_t k, int64_t n, int qlinear, int packed, size_t *acc_at,
                             size_t *mult_at)
{
    const size_t centred = packed ? 0 : (size_t)(k * n) * sizeof(int16_t);
    *acc_at = (centred + 63) / 64 * 64;
    *mult_at = *acc_at + ((size_t)n * sizeof(uint32_t) + 63) / 64 * 64;
    return qlinear ? *mult_at + (size_t)n * sizeof(double) : centred;
}

static ember_status qmatmul_prepare(ember_prepare_context *ctx, void **out)
{
    const slots *s = slots_of(ctx->node);
    const ember_value *b = ember_node_input(ctx->model, ctx->node, (size_t)s->b);
    const ember_value *zb = ember_node_input(ctx->model, ctx->node, (size_t)s->b_zero);
    const int64_t k = b->shape[b->rank - 2], n = b->shape[b->rank - 1];
    const int64_t count = ember_shape_count(b->shape, b->rank);
    qmatmul_prepared *p = NULL;
    if (b->constant != NULL && zb->constant != NULL && count > 0) {
        p = calloc(1, sizeof *p);
        if (p != NULL)
            p->packed_b = malloc((size_t)count * sizeof(int16_t));
        if (p == NULL || p->packed_b == NULL) {
            qmatmul_free(p);
            return ember_node_error(ctx->node, EMBER_ERROR_MEMORY, "out of memory");
        }
        centre_b(b->constant, b->datum_type, count, n, zb->constant, zb->datum_type,
                 ember_shape_count(zb->shape, zb->rank), p->packed_b);
        ctx->packed_bytes = (size_t)count * sizeof(int16_t);
    }
    size_t acc_at, mult_at;
    ctx->scratch_bytes = scratch_layout(k, n, ctx->node->op->variant == QLINEAR, p != NULL,
                                        &acc_at, &mult_at);
    *out = p;
    return EMBER_OK;
}

/* acc[0 … n) += av · b[0 … n), wrapping in 32 bits; blocks of 8 (fixed-length loops
 * vectorise even at -O2). */
static void row_fma(uint32_t *restrict acc, int32_t av, const int16_t *restrict b, int64_t n)
{
    int64_t j = 0;
    for (; j + 8 <= n; j += 8)
        for (int q = 0; q < 8; q++)
            acc[j + q] += (uint32_t)(av * b[j + q]);
    for (; j < n; j++)
        acc[j] += (uint32_t)(av * b[j]);
}

/* One row of (A - za) · (B - zb) into acc (N wrapping i32), B already centred. */
static void integer_row(ember_datum_type a_type, const uint8_t *a_row, const int16_t *b,
                        int64_t k, int64_t n, int32_t za, uint32_t *acc)
{
    memset(acc, 0, (size_t)n * sizeof *acc);
    for (int64_t i = 0; i < k; i++) {
        const int32_t av = (a_type == EMBER_I8 ? (int32_t)((const int8_t *)a_row)[i]
                                               : (int32_t)a_row[i]) - za;
        if (av != 0)
            row_fma(acc, av, b + i * n, n);
    }
}

/* x rounded to f16 and back when the scales compute in f16 (numpy's f16 arithmetic:
 * the f32 result of two f16 values, rounded once more, is the correctly rounded one). */
static float scale_round(float x, ember_datum_type scale_type)
{
    return scale_type == EMBER_F16 ? ember_f16_to_f32(ember_f32_to_f16(x)) : x;
}

static void qmatmul_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    const qmatmul_prepared *p = prepared;
    const slots *s = slots_of(node);
    const ember_tensor *a = io->inputs[s->a], *b = io->inputs[s->b];
    const ember_tensor *za = io->inputs[s->a_zero], *zb = io->inputs[s->b_zero];
    ember_tensor *y = io->output;
    const int64_t m = a->shape[a->rank - 2], k = a->shape[a->rank - 1];
    const int64_t n = b->shape[b->rank - 1];
    const int batch_rank = y->rank - 2;
    const int qlinear = node->op->variant == QLINEAR;
    size_t acc_at, mult_at;
    scratch_layout(k, n, qlinear, p != NULL, &acc_at, &mult_at);
    const int64_t za_count = ember_shape_count(za->shape, za->rank);
    const int64_t zb_count = ember_shape_count(zb->shape, zb->rank);

    const qmatmul_attributes *qa = node->attributes;
    uint32_t *acc = qlinear ? (uint32_t *)(void *)((uint8_t *)io->scratch + acc_at)
                            : NULL; /* integer: the output row itself */
    double *mult = qlinear ? (double *)(void *)((uint8_t *)io->scratch + mult_at) : NULL;
    int64_t low = 0, high = 0;
    if (qlinear)
        ember_quant_range(qa->to, &low, &high);

    /* Batch walk: offsets of the A and B matrices for each output matrix. */
    int64_t a_strides[EMBER_MAX_RANK], b_strides[EMBER_MAX_RANK];
    ember_broadcast_strides(a->shape, a->rank - 2, y->shape, batch_rank, a_strides);
    ember_broadcast_strides(b->shape, b->rank - 2, y->shape, batch_rank, b_strides);
    ember_nd_iter it;
    ember_nd_iter_init(&it, batch_rank, y->shape, a_strides, b_strides);
    const size_t a_item = ember_datum_size(a->datum_type);
    int64_t matrix = 0, centred_b = -1;
    do {
        const uint8_t *a_matrix = (const uint8_t *)a->data + it.offset[0] * m * k * (int64_t)a_item;
        const int16_t *b_matrix = p != NULL ? p->packed_b + it.offset[1] * k * n : io->scratch;
        if (p == NULL && centred_b != it.offset[1]) { /* a broadcast B is centred once */
            centre_b((const uint8_t *)b->data + it.offset[1] * k * n, b->datum_type, k * n, n,
                     zb->data, zb->datum_type, zb_count, io->scratch);
            centred_b = it.offset[1];
        }
        for (int64_t i = 0; i < m; i++) {
            const int64_t row = (matrix * m + i) * n;
            const int32_t za_i = (int32_t)ember_quant_load(za->data, za->datum_type,
                                                           za_count == 1 ? 0 : i);
            uint32_t *row_acc = qlinear ? acc : (uint32_t *)((int32_t *)y->data + row);
            integer_row(a->datum_type, a_matrix + i * k * (int64_t)a_item, b_matrix, k, n, za_i,
                        row_acc);
            if (!qlinear)
                continue;
            const ember_tensor *as = io->inputs[s->a_scale], *bs = io->inputs[s->b_scale];
            const ember_tensor *ys = io->inputs[s->y_scale], *yz = io->inputs[s->y_zero];
            const float a_scale = (float)ember_quant_load(
                as->data, as->datum_type, ember_shape_count(as->shape, as->rank) == 1 ? 0 : i);
            const float y_scale = (float)ember_quant_load(
                ys->data, ys->datum_type, ember_shape_count(ys->shape, ys->rank) == 1 ? 0 : i);
            const double zero = ember_quant_load(
                yz->data, yz->datum_type, ember_shape_count(yz->shape, yz->rank) == 1 ? 0 : i);
            const int64_t bs_count = ember_shape_count(bs->shape, bs->rank);
            for (int64_t j = 0; j < n; j++) {
                const float b_scale = (float)ember_quant_load(bs->data, bs->datum_type,
                                                              bs_count == 1 ? 0 : j);
                const float product = scale_round(a_scale * b_scale, qa->scale_type);
                mult[j] = scale_round(product / y_scale, qa->scale_type);
            }
            for (int64_t j = 0; j < n; j++) {
                const double p = (double)(int32_t)acc[j] * mult[j];
                ember_quant_store(y->data, qa->to, row + j,
                                  ember_quant_add_round(p, zero, low, high));
            }
        }
        matrix++;
    } while (ember_nd_iter_next(&it));
}

static const ember_op_param integer_params[] = {
    {"A", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"B", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"a_zero_point", EMBER_PARAM_TENSOR, 1, 0.0f},
    {"b_zero_point", EMBER_PARAM_TENSOR, 1, 0.0f},
};

const ember_op ember_op_ember_matmul_integer = {.name = "ember_matmul_integer",
    .variant = INTEGER, .params = integer_params, .param_count = 4, .infer = qmatmul_infer,
    .prepare = qmatmul_prepare, .run = qmatmul_run, .free_prepared = qmatmul_free};

static const ember_op_param qlinear_params[] = {
    {"A", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"a_scale", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"a_zero_point", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"B", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"b_scale", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"b_zero_point", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"y_scale", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"y_zero_point", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"to", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"scale_type", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};

const ember_op ember_op_ember_qlinear_matmul = {.name = "ember_qlinear_matmul",
    .variant = QLINEAR, .params = qlinear_params, .param_count = 10, .parse = qmatmul_parse,
    .infer = qmatmul_infer, .prepare = qmatmul_prepare, .run = qmatmul_run,
    .free_prepared = qmatmul_free};
