/*
 * matmul: batched matrix product with numpy-style broadcasting of the leading dims,
 * through the f32 GEMM.
 *
 *     C[b][i][j] = Σ_p A[b][i][p] · B[b][p][j]     (A, B optionally transposed)
 *
 * A constant operand (usually the weights B) is packed once at prepare, one packed
 * matrix per batch entry it holds; a computed operand is packed per call into scratch.
 * A computed A is packed in blocks of rows, so the scratch is bounded. When B is a
 * single matrix and A is a dense, untransposed stack, all of A's batches are one tall
 * matrix: one GEMM instead of many small ones (the [1, T, K] · [K, N] case of
 * sequence models).
 *
 * Epilogue: a fused bias is per column (along the last output axis) or per row (the
 * second to last), plus a clamp.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"
#include "core/op.h"
#include "core/shape.h"
#include "ops/ops.h"

/* Target size of a packed block of A rows. */
#define A_BLOCK_BYTES (128 * 1024)
/* Bytes of a constant B packed before their pages are given back (pack_b_releasing). */
#define B_SLAB_BYTES (1024 * 1024)
#define MAX_BATCH_RANK (EMBER_MAX_RANK - 2)

typedef struct matmul_attributes {
    int transpose_a, transpose_b;
} matmul_attributes;

static ember_status matmul_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                                 void **out)
{
    matmul_attributes *a = calloc(1, sizeof *a);
    if (a == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = a;
    ember_status status = ember_attr_bool(node, "transposeA", attrs[2], 0, &a->transpose_a);
    if (status == EMBER_OK)
        status = ember_attr_bool(node, "transposeB", attrs[3], 0, &a->transpose_b);
    return status;
}

static ember_status matmul_infer(ember_node *node, const ember_value *const *inputs,
                                 ember_value *output)
{
    const matmul_attributes *attr = node->attributes;
    const ember_value *a = inputs[0], *b = inputs[1];
    char as[EMBER_SHAPE_TEXT], bs[EMBER_SHAPE_TEXT];
    ember_shape_format(a->shape, a->rank, as, sizeof as);
    ember_shape_format(b->shape, b->rank, bs, sizeof bs);
    if (a->datum_type != EMBER_F32 || b->datum_type != EMBER_F32)
        return ember_node_error(node, EMBER_ERROR_UNSUPPORTED, "matmul computes in f32, got %s "
                                "and %s", ember_datum_type_name(a->datum_type),
                                ember_datum_type_name(b->datum_type));
    if (a->rank < 2 || b->rank < 2)
        return ember_node_error(node, EMBER_ERROR_INVALID,
                                "operands %s and %s: both need rank ≥ 2", as, bs);
    const int64_t m = a->shape[a->rank - (attr->transpose_a ? 1 : 2)];
    const int64_t ka = a->shape[a->rank - (attr->transpose_a ? 2 : 1)];
    const int64_t kb = b->shape[b->rank - (attr->transpose_b ? 1 : 2)];
    const int64_t n = b->shape[b->rank - (attr->transpose_b ? 2 : 1)];
    if (ka != kb)
        return ember_node_error(node, EMBER_ERROR_INVALID,
                                "inner dims differ: A %s%s and B %s%s", as,
                                attr->transpose_a ? " (transposed)" : "", bs,
                                attr->transpose_b ? " (transposed)" : "");
    int rank;
    if (ember_shape_broadcast(a->shape, a->rank - 2, b->shape, b->rank - 2, output->shape,
                              &rank) != 0)
        return ember_node_error(node, EMBER_ERROR_INVALID,
                                "batch dims of A %s and B %s do not broadcast", as, bs);
    output->datum_type = EMBER_F32;
    output->rank = rank + 2;
    output->shape[rank] = m;
    output->shape[rank + 1] = n;
    return EMBER_OK;
}

static int matmul_accepts_bias_axis(const ember_model *model, const ember_node *node,
                                    const ember_value *output, int axis)
{
    (void)model;
    (void)node;
    return axis == output->rank - 1 || axis == output->rank - 2;
}

/* ---------------------------------------------------------------- prepare */

typedef struct matmul_prepared {
    const ember_f32_gemm_kernel *kernel;
    int64_t m, n, k;
    int transpose_a, transpose_b;
    int batch_rank;
    int64_t batch_dims[MAX_BATCH_RANK];    /* output batch dims */
    int64_t a_strides[MAX_BATCH_RANK];     /* in matrices, 0 where A broadcasts */
    int64_t b_strides[MAX_BATCH_RANK];
    int64_t batch, a_matrices, b_matrices;
    int fold;                              /* A's batches form one tall matrix */
    int64_t row_block;                     /* rows of A packed at once, multiple of mr */
    size_t a_floats, b_floats;             /* packed floats of one matrix */
    float *packed_a, *packed_b;            /* per matrix of a constant operand, else NULL */
    float *bias_row, *bias_col;
    float min, max;
} matmul_prepared;

static void matmul_free(void *p)
{
    matmul_prepared *prepared = p;
    if (prepared == NULL)
        return;
    free(prepared->bias_row);
    free(prepared->bias_col);
    free(prepared);
}

/* Pack rows [first, first + rows) of matrix `a` as the GEMM's A operand. */
static void pack_a_rows(const matmul_prepared *p, const float *a, int64_t first, int64_t rows,
                        float *packed)
{
    if (p->transpose_a) /* stored [K, M]: element (i, q) at q·M + i */
        ember_f32_pack_a(p->kernel->mr, (size_t)rows, (size_t)p->k, a + first, 1, (size_t)p->m,
                         packed);
    else
        ember_f32_pack_a(p->kernel->mr, (size_t)rows, (size_t)p->k, a + first * p->k,
                         (size_t)p->k, 1, packed);
}

static void pack_b_matrix(const matmul_prepared *p, const float *b, float *packed)
{
    if (p->transpose_b) /* stored [N, K]: element (q, j) at j·K + q */
        ember_f32_pack_b(p->kernel->nr, (size_t)p->k, (size_t)p->n, b, 1, (size_t)p->k, packed);
    else
        ember_f32_pack_b(p->kernel->nr, (size_t)p->k, (size_t)p->n, b, (size_t)p->n, 1, packed);
}

/* Pack constant matrix `b` a slab at a time in the order it is stored, giving each
 * slab's pages back once packed (ember_model_release_constant): the raw weights and
 * their packed form are never both whole in memory (VGG's first dense layer is 411 MB).
 * The result is pack_b_matrix's, byte for byte. Slabs rely on the panel layout of
 * kernels.h: panel t holds columns [t·nr, t·nr + nr) as k groups of nr floats, so rows
 * [k0, k1) of a panel are its floats [k0·nr, k1·nr). Only whole pages are given back, so
 * each release reaches back over the slab before: the page two slabs share goes too. */
static void pack_b_releasing(const matmul_prepared *p, const ember_model *model,
                             const float *b, float *packed)
{
    const size_t nr = p->kernel->nr, k = (size_t)p->k, n = (size_t)p->n;
    const float *previous = b; /* the start of the slab before */
    if (p->transpose_b) { /* stored [N, K]: a panel reads nr whole stored rows */
        const size_t panel_bytes = nr * (k ? k : 1) * sizeof(float);
        const size_t step = (B_SLAB_BYTES / panel_bytes ? B_SLAB_BYTES / panel_bytes : 1) * nr;
        for (size_t j0 = 0; j0 < n; j0 += step) {
            const size_t columns = n - j0 < step ? n - j0 : step;
            ember_f32_pack_b(nr, k, columns, b + j0 * k, 1, k,
                             packed + ember_f32_packed_b_floats(nr, k, j0));
            ember_model_release_constant(model, previous, (size_t)(b + (j0 + columns) * k -
                                                                   previous) * sizeof(float));
            previous = b + j0 * k;
        }
        return;
    }
    /* stored [K, N]: every panel reads every stored row, so slabs are blocks of rows */
    const size_t row_bytes = (n ? n : 1) * sizeof(float);
    const size_t rows = B_SLAB_BYTES / row_bytes ? B_SLAB_BYTES / row_bytes : 1;
    for (size_t k0 = 0; k0 < k; k0 += rows) {
        const size_t block = k - k0 < rows ? k - k0 : rows;
        for (size_t j0 = 0; j0 < n; j0 += nr)
            ember_f32_pack_b(nr, block, n - j0 < nr ? n - j0 : nr, b + k0 * n + j0, n, 1,
                             packed + j0 * k + k0 * nr);
        ember_model_release_constant(model, previous, (size_t)(b + (k0 + block) * n -
                                                               previous) * sizeof(float));
        previous = b + k0 * n;
    }
}

static void matmul_geometry(matmul_prepared *p, const ember_node *node, const ember_value *a,
                            const ember_value *b, const ember_value *y)
{
    const matmul_attributes *attr = node->attributes;
    p->transpose_a = attr->transpose_a;
    p->transpose_b = attr->transpose_b;
    p->m = y->shape[y->rank - 2];
    p->n = y->shape[y->rank - 1];
    p->k = a->shape[a->rank - (attr->transpose_a ? 2 : 1)];
    p->batch_rank = y->rank - 2;
    memcpy(p->batch_dims, y->shape, (size_t)p->batch_rank * sizeof(int64_t));
    ember_broadcast_strides(a->shape, a->rank - 2, p->batch_dims, p->batch_rank, p->a_strides);
    ember_broadcast_strides(b->shape, b->rank - 2, p->batch_dims, p->batch_rank, p->b_strides);
    p->batch = ember_shape_count(p->batch_dims, p->batch_rank);
    p->a_matrices = ember_shape_count(a->shape, a->rank - 2);
    p->b_matrices = ember_shape_count(b->shape, b->rank - 2);
}

/* The packed matrices of a constant operand, from the runnable's store: *fresh when
 * they still have to be packed. */
static ember_status pack_constant(const ember_node *node, const matmul_prepared *p,
                                  const void *source, char operand, int64_t matrices,
                                  size_t floats, float **out, int *fresh,
                                  ember_prepare_context *ctx)
{
    /* Only what shapes this operand: B's packing does not depend on A's rows (which a
     * symbol may vary), and the other way round. */
    const int64_t layout[] = {'M', operand, operand == 'A' ? p->transpose_a : p->transpose_b,
                              operand == 'A' ? p->m : p->n, p->k, matrices,
                              (int64_t)(operand == 'A' ? p->kernel->mr : p->kernel->nr)};
    *out = ember_packed_acquire(ctx->packed, source, ember_packed_layout(layout, 7),
                                ((size_t)matrices * floats + 1) * sizeof(float), fresh);
    if (*out == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory packing weights");
    return EMBER_OK;
}

static ember_status matmul_epilogue(matmul_prepared *p, ember_prepare_context *ctx,
                                    const ember_value *y)
{
    const ember_epilogue *e = ctx->epilogue;
    p->min = e->min;
    p->max = e->max;
    if (e->bias == NULL)
        return EMBER_OK;
    float **target = e->bias_axis == y->rank - 1 ? &p->bias_col : &p->bias_row;
    *target = malloc((size_t)e->bias_length * sizeof(float) + sizeof(float));
    if (*target == NULL)
        return ember_node_error(ctx->node, EMBER_ERROR_MEMORY, "out of memory");
    memcpy(*target, e->bias, (size_t)e->bias_length * sizeof(float));
    ctx->packed_bytes += (size_t)e->bias_length * sizeof(float);
    return EMBER_OK;
}

static ember_status matmul_prepare(ember_prepare_context *ctx, void **out)
{
    const ember_model *model = ctx->model;
    const ember_node *node = ctx->node;
    const ember_value *a = ember_node_input(model, node, 0), *b = ember_node_input(model, node, 1);
    const ember_value *y = &model->values[node->output];
    matmul_prepared *p = calloc(1, sizeof *p);
    if (p == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = p;
    p->kernel = ctx->kernels->f32_gemm;
    matmul_geometry(p, node, a, b, y);
    ember_status status = matmul_epilogue(p, ctx, y);
    if (status != EMBER_OK)
        return status;
    const size_t mr = p->kernel->mr;
    p->fold = a->constant == NULL && !p->transpose_a && p->b_matrices == 1 &&
              p->a_matrices == p->batch && p->bias_row == NULL;
    const int64_t rows = p->fold ? p->batch * p->m : p->m;

    int64_t block = A_BLOCK_BYTES / (int64_t)sizeof(float) / (p->k > 0 ? p->k : 1);
    block = block / (int64_t)mr * (int64_t)mr;
    if (block < (int64_t)mr)
        block = (int64_t)mr;
    const int64_t all = (rows + (int64_t)mr - 1) / (int64_t)mr * (int64_t)mr;
    p->row_block = block < all ? block : all;
    p->a_floats = ember_f32_packed_a_floats(mr, (size_t)p->m, (size_t)p->k);
    p->b_floats = ember_f32_packed_b_floats(p->kernel->nr, (size_t)p->k, (size_t)p->n);

    ctx->scratch_bytes = 0;
    int fresh = 0;
    if (a->constant != NULL) {
        status = pack_constant(node, p, a->constant, 'A', p->a_matrices, p->a_floats,
                               &p->packed_a, &fresh, ctx);
        for (int64_t i = 0; status == EMBER_OK && fresh && i < p->a_matrices; i++)
            pack_a_rows(p, (const float *)a->constant + i * p->m * p->k, 0, p->m,
                        p->packed_a + (size_t)i * p->a_floats);
        if (status == EMBER_OK && fresh) /* the run reads packed_a only */
            ember_model_release_constant(model, a->constant, (size_t)(p->a_matrices * p->m *
                                                                      p->k) * sizeof(float));
    } else {
        ctx->scratch_bytes += ember_f32_packed_a_floats(mr, (size_t)p->row_block,
                                                        (size_t)p->k) * sizeof(float);
    }
    if (status == EMBER_OK && b->constant != NULL) {
        status = pack_constant(node, p, b->constant, 'B', p->b_matrices, p->b_floats,
                               &p->packed_b, &fresh, ctx);
        /* the run reads packed_b only: B's pages go back as it is packed */
        for (int64_t i = 0; status == EMBER_OK && fresh && i < p->b_matrices; i++)
            pack_b_releasing(p, model, (const float *)b->constant + i * p->k * p->n,
                             p->packed_b + (size_t)i * p->b_floats);
    } else if (status == EMBER_OK) {
        ctx->scratch_bytes += p->b_floats * sizeof(float);
    }
    return status;
}

/* ---------------------------------------------------------------- run */

/* One product: `rows` rows of A (from matrix a_matrix, or packed) times packed B. */
static void multiply(const matmul_prepared *p, const float *a, int64_t a_index,
                     const float *packed_b, int64_t rows, float *c, float *a_scratch)
{
    const ember_f32_gemm_params base = {.bias_col = p->bias_col, .min = p->min, .max = p->max};
    if (rows == 1 && p->packed_a == NULL && (!p->transpose_a || p->m == 1)) {
        /* one row, contiguous either way: a GEMV reads it in place (a one-frame layer) */
        ember_f32_gemm_params params = base;
        params.bias_row = p->bias_row;
        p->kernel->gemv(p->kernel->nr, (size_t)p->n, (size_t)p->k, a, packed_b, c, &params);
        return;
    }
    for (int64_t i = 0; i < rows; i += p->row_block) {
        const int64_t count = rows - i < p->row_block ? rows - i : p->row_block;
        const float *packed_a;
        if (p->packed_a != NULL) {
            /* Panels are consecutive and i is a multiple of mr: rows from i start at i·k. */
            packed_a = p->packed_a + (size_t)a_index * p->a_floats + (size_t)(i * p->k);
        } else {
            pack_a_rows(p, a, i, count, a_scratch);
            packed_a = a_scratch;
        }
        ember_f32_gemm_params params = base;
        params.bias_row = p->bias_row ? p->bias_row + i : NULL;
        ember_f32_gemm_packed(p->kernel, (size_t)count, (size_t)p->n, (size_t)p->k, packed_a,
                              packed_b, c + i * p->n, (size_t)p->n * sizeof(float), &params);
    }
}

static void matmul_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)node;
    const matmul_prepared *p = prepared;
    const float *a = io->inputs[0]->data, *b = io->inputs[1]->data;
    float *c = io->output->data;
    float *a_scratch = io->scratch;
    float *b_scratch = (float *)io->scratch +
                       (p->packed_a ? 0 : ember_f32_packed_a_floats(p->kernel->mr,
                                                                    (size_t)p->row_block,
                                                                    (size_t)p->k));
    if (p->fold) {
        const float *packed_b = p->packed_b;
        if (packed_b == NULL) {
            pack_b_matrix(p, b, b_scratch);
            packed_b = b_scratch;
        }
        multiply(p, a, 0, packed_b, p->batch * p->m, c, a_scratch);
        return;
    }
    /* Walk the output batch; a_index / b_index follow with broadcast strides. */
    int64_t index[MAX_BATCH_RANK] = {0};
    int64_t a_index = 0, b_index = 0;
    for (int64_t t = 0; t < p->batch; t++) {
        const float *packed_b;
        if (p->packed_b != NULL) {
            packed_b = p->packed_b + (size_t)b_index * p->b_floats;
        } else {
            pack_b_matrix(p, b + b_index * p->k * p->n, b_scratch);
            packed_b = b_scratch;
        }
        multiply(p, a + a_index * p->m * p->k, a_index, packed_b, p->m, c + t * p->m * p->n,
                 a_scratch);
        for (int d = p->batch_rank - 1; d >= 0; d--) {
            a_index += p->a_strides[d];
            b_index += p->b_strides[d];
            if (++index[d] < p->batch_dims[d])
                break;
            a_index -= p->a_strides[d] * p->batch_dims[d];
            b_index -= p->b_strides[d] * p->batch_dims[d];
            index[d] = 0;
        }
    }
}

static const ember_op_param matmul_params[] = {
    {"A", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"B", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"transposeA", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"transposeB", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};

const ember_op ember_op_matmul = {.name = "matmul", .flags = EMBER_OP_FUSES_EPILOGUE,
    .params = matmul_params, .param_count = 4, .parse = matmul_parse,
    .infer = matmul_infer, .accepts_bias_axis = matmul_accepts_bias_axis,
    .prepare = matmul_prepare, .run = matmul_run, .free_prepared = matmul_free};
