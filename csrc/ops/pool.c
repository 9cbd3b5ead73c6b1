/*
 * Pools: max_pool, avg_pool and box, windows over every dim of the input.
 *
 * NNEF gives `size`, `padding`, `stride` and `dilation` one entry per input dim (usually
 * [1, 1, kh, kw]); entries for the spatial dims only are also accepted (the leading two
 * are then 1 / no padding). `padding = []` is NNEF's automatic "same" padding.
 *
 * Borders: padded cells never win a max (for `constant` as for `ignore`). For the mean
 * (avg_pool, box with normalize = true), `constant` counts padded cells as zeros in the
 * divisor — it is always prod(size) — while `ignore` divides by the cells inside.
 * box with normalize = false is the plain window sum.
 *
 * The reference implementation visits every window cell of every output, checking
 * each against the borders: simple and exact. The usual case — windows over the last
 * two dims only (NCHW) — has a fast path that computes, per output row and column, the
 * range of window cells inside the input, so its inner loops have no checks (pool_rows.c);
 * stride-1 pools that keep the plane's size go a stack of planes at a time
 * (pool_plane.c), and so do step-2 pools onto half the plane (pool_step2.c); a window
 * over each whole plane is reduced as mean_reduce reduces (reduce.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"
#include "core/op.h"
#include "core/shape.h"
#include "ops/nd.h"
#include "ops/ops.h"
#include "ops/pool.h"
#include "ops/reduce.h"

#define MAX_GEOMETRY ((int64_t)1 << 30)


/* Attribute positions in pool_params. */
enum { A_SIZE = 1, A_BORDER, A_PADDING, A_STRIDE, A_DILATION, A_NORMALIZE };

static ember_status pool_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                               void **out)
{
    pool_attributes *a = calloc(1, sizeof *a);
    if (a == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = a;
    const char *border;
    if (attrs[A_SIZE] == NULL)
        return ember_node_error(node, EMBER_ERROR_INVALID, "missing argument 'size'");
    ember_status status = ember_attr_int_list(node, "size", attrs[A_SIZE], a->size,
                                              EMBER_MAX_RANK, &a->size_count);
    if (status == EMBER_OK)
        status = ember_attr_string(node, "border", attrs[A_BORDER], "constant", &border);
    if (status != EMBER_OK)
        return status;
    if (strcmp(border, "constant") == 0)
        a->border = BORDER_CONSTANT;
    else if (strcmp(border, "ignore") == 0)
        a->border = BORDER_IGNORE;
    else
        return ember_node_error(node, EMBER_ERROR_UNSUPPORTED,
                                "border '%s': only 'constant' and 'ignore' are supported", border);
    status = ember_attr_padding(node, "padding", attrs[A_PADDING], a->padding_before,
                                a->padding_after, EMBER_MAX_RANK, &a->padding_count);
    if (status == EMBER_OK)
        status = ember_attr_int_list(node, "stride", attrs[A_STRIDE], a->stride, EMBER_MAX_RANK,
                                     &a->stride_count);
    if (status == EMBER_OK)
        status = ember_attr_int_list(node, "dilation", attrs[A_DILATION], a->dilation,
                                     EMBER_MAX_RANK, &a->dilation_count);
    if (status == EMBER_OK && node->op->variant == BOX)
        status = ember_attr_bool(node, "normalize", attrs[A_NORMALIZE], 0, &a->normalize);
    if (node->op->variant == AVG_POOL)
        a->normalize = 1;
    return status;
}

/* An attribute list of `count` entries for a rank-`rank` input: full rank, spatial only
 * (leading two dims get `fill`), or empty (all `fill`). Returns the lead offset, or -1. */
static int align_list(int count, int rank, int allow_empty)
{
    if (count == rank)
        return 0;
    if (count == rank - 2 && rank >= 2 && count > 0)
        return 2;
    if (count == 0 && allow_empty)
        return rank; /* everything is the default */
    return -1;
}

static ember_status pool_resolve(const ember_node *node, pool_attributes *a, int rank)
{
    const int size_lead = align_list(a->size_count, rank, 0);
    const int stride_lead = align_list(a->stride_count, rank, 1);
    const int dilation_lead = align_list(a->dilation_count, rank, 1);
    if (size_lead < 0 || stride_lead < 0 || dilation_lead < 0 ||
        (a->padding_count != 0 && align_list(a->padding_count, rank, 0) < 0))
        return ember_node_error(node, EMBER_ERROR_INVALID,
                                "size/padding/stride/dilation need one entry per input dim "
                                "(rank %d) or per spatial dim", rank);
    for (int d = 0; d < rank; d++) {
        a->window[d] = d >= size_lead ? a->size[d - size_lead] : 1;
        a->step[d] = d >= stride_lead ? a->stride[d - stride_lead] : 1;
        a->dilate[d] = d >= dilation_lead ? a->dilation[d - dilation_lead] : 1;
        if (a->window[d] < 1 || a->window[d] > MAX_GEOMETRY || a->step[d] < 1 ||
            a->step[d] > MAX_GEOMETRY || a->dilate[d] < 1 || a->dilate[d] > MAX_GEOMETRY)
            return ember_node_error(node, EMBER_ERROR_INVALID,
                                    "dim %d: size %lld, stride %lld, dilation %lld must be "
                                    "positive", d, (long long)a->window[d],
                                    (long long)a->step[d], (long long)a->dilate[d]);
    }
    return EMBER_OK;
}

static ember_status pool_infer(ember_node *node, const ember_value *const *inputs,
                               ember_value *output)
{
    pool_attributes *a = node->attributes;
    const ember_value *x = inputs[0];
    if (x->datum_type != EMBER_F32)
        return ember_node_error(node, EMBER_ERROR_UNSUPPORTED, "pools compute in f32, got %s",
                                ember_datum_type_name(x->datum_type));
    ember_status status = pool_resolve(node, a, x->rank);
    if (status != EMBER_OK)
        return status;
    const int pad_lead = a->padding_count ? x->rank - a->padding_count : 0;
    output->datum_type = EMBER_F32;
    output->rank = x->rank;
    for (int d = 0; d < x->rank; d++) {
        const int64_t in = x->shape[d], s = a->step[d];
        const int64_t extent = (a->window[d] - 1) * a->dilate[d] + 1;
        int64_t before, after;
        if (a->padding_count == 0) { /* NNEF "same": out = ceil(in / stride) */
            const int64_t total = (in + s - 1) / s * s - s + extent - in;
            before = total > 0 ? total / 2 : 0;
            after = total > 0 ? total - total / 2 : 0;
        } else {
            before = d >= pad_lead ? a->padding_before[d - pad_lead] : 0;
            after = d >= pad_lead ? a->padding_after[d - pad_lead] : 0;
            if (before > MAX_GEOMETRY || after > MAX_GEOMETRY)
                return ember_node_error(node, EMBER_ERROR_INVALID, "padding too large");
        }
        a->pad_before[d] = before;
        if (in + before + after < extent) {
            char xs[EMBER_SHAPE_TEXT];
            return ember_node_error(node, EMBER_ERROR_INVALID,
                                    "input %s: dim %d padded to %lld is smaller than the window "
                                    "extent %lld", ember_shape_format(x->shape, x->rank, xs, sizeof xs),
                                    d, (long long)(in + before + after), (long long)extent);
        }
        output->shape[d] = (in + before + after - extent) / s + 1;
    }
    return EMBER_OK;
}

void ember_pool_cells_inside(int64_t start, int64_t cells, int64_t dilation, int64_t extent,
                         int64_t *lo, int64_t *hi)
{
    if (dilation == 1) {
        *lo = start >= 0 ? 0 : -start;
        *hi = extent - 1 - start < cells - 1 ? extent - 1 - start : cells - 1;
        return;
    }
    *lo = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
    *hi = extent - 1 - start < 0 ? -1 : (extent - 1 - start) / dilation;
    if (*hi > cells - 1)
        *hi = cells - 1;
}

/* Whether only the last two dims are windowed (the others pass straight through). */
static int is_planar(const pool_attributes *a, int rank)
{
    if (rank < 2)
        return 0;
    for (int d = 0; d < rank - 2; d++)
        if (a->window[d] != 1 || a->step[d] != 1 || a->dilate[d] != 1 || a->pad_before[d] != 0)
            return 0;
    return 1;
}

static void pool_planar(const pool_attributes *a, int variant, const ember_tensor *x,
                        const ember_tensor *y)
{
    const int h = x->rank - 2, w = x->rank - 1;
    const int64_t in_h = x->shape[h], in_w = x->shape[w];
    const int64_t out_h = y->shape[h], out_w = y->shape[w];
    const int64_t planes = ember_shape_count(x->shape, h);
    const int64_t window_cells = a->window[h] * a->window[w];
    const int divide_inside = a->border == BORDER_IGNORE;
    for (int64_t p = 0; p < planes; p++) {
        const float *in = (const float *)x->data + p * in_h * in_w;
        float *out = (float *)y->data + p * out_h * out_w;
        for (int64_t oh = 0; oh < out_h; oh++) {
            const int64_t top = oh * a->step[h] - a->pad_before[h];
            int64_t lo_h, hi_h;
            ember_pool_cells_inside(top, a->window[h], a->dilate[h], in_h, &lo_h, &hi_h);
            for (int64_t ow = 0; ow < out_w; ow++) {
                const int64_t left = ow * a->step[w] - a->pad_before[w];
                int64_t lo_w, hi_w;
                ember_pool_cells_inside(left, a->window[w], a->dilate[w], in_w, &lo_w, &hi_w);
                float acc = variant == MAX_POOL ? -INFINITY : 0.0f;
                for (int64_t i = lo_h; i <= hi_h; i++) {
                    /* Indices, not a row pointer: `left` may be negative, and a pointer
                     * before the plane is undefined even if never read. */
                    const int64_t row = (top + i * a->dilate[h]) * in_w + left;
                    for (int64_t j = lo_w; j <= hi_w; j++) {
                        const float v = in[row + j * a->dilate[w]];
                        acc = variant == MAX_POOL ? (v > acc ? v : acc) : acc + v;
                    }
                }
                if (variant != MAX_POOL && a->normalize) {
                    const int64_t inside = hi_h >= lo_h && hi_w >= lo_w
                                               ? (hi_h - lo_h + 1) * (hi_w - lo_w + 1) : 0;
                    acc = ember_pool_mean(acc, inside, window_cells, divide_inside);
                }
                *out++ = acc;
            }
        }
    }
}

static int planar_rows_fit(const pool_attributes *a, int rank)
{
    return is_planar(a, rank) && a->dilate[rank - 2] == 1 && a->dilate[rank - 1] == 1;
}

/* The whole-plane path's geometry, when the pool fits it: planar, undilated, stride 1,
 * and padded to keep the size (k - 1 cells in all, none negative). */
static int same_plane_fits(const pool_attributes *a, int variant, const int64_t *in_shape,
                           int rank, ember_pool_plane *g)
{
    if (!planar_rows_fit(a, rank))
        return 0;
    const int h = rank - 2, w = rank - 1;
    g->h = in_shape[h];
    g->w = in_shape[w];
    g->kh = a->window[h];
    g->kw = a->window[w];
    g->top = a->pad_before[h];
    g->left = a->pad_before[w];
    g->is_max = variant == MAX_POOL;
    g->normalize = variant != MAX_POOL && a->normalize;
    g->divide_inside = a->border == BORDER_IGNORE;
    return a->step[h] == 1 && a->step[w] == 1 && g->top >= 0 && g->top < g->kh &&
           g->left >= 0 && g->left < g->kw && g->h > 0 && g->w > 0;
}

/* The step-2 path's geometry, when the pool fits it: planar, undilated, step 2 both ways
 * onto half the input's width (rounded down), 2- or 3-wide windows starting inside the
 * plane. `kernel`: the f32_pool_row kernel, where the CPU has a vector one. */
static int step2_fits(const pool_attributes *a, int variant, const int64_t *in_shape,
                      const int64_t *out_shape, int rank,
                      const ember_f32_pool_row_kernel *kernel, ember_pool_step2 *g)
{
    if (!planar_rows_fit(a, rank))
        return 0;
    const int h = rank - 2, w = rank - 1;
    *g = (ember_pool_step2){.h = in_shape[h], .w = in_shape[w], .out_h = out_shape[h],
                            .out_w = out_shape[w], .kh = a->window[h],
                            .kw = a->window[w], .top = a->pad_before[h],
                            .left = a->pad_before[w], .is_max = variant == MAX_POOL,
                            .normalize = variant != MAX_POOL && a->normalize,
                            .divide_inside = a->border == BORDER_IGNORE,
                            .kernel = kernel->isa == EMBER_ISA_SCALAR ? NULL : kernel->fn};
    /* Where the per-row path runs the vector kernel straight from the input rows (no
     * padding left) over rows of a whole kernel step or more, its one pass beats this
     * path's two (x86, bench_ab: SqueezeNet's 128×55×55 1.06x the time here, 64×111×111
     * 1.08x; but 256×27×27, 13 outputs a row, 0.94x, and Inception v2's 576×14×14 0.56x;
     * ResNet's 64×112×112, padded left, 0.82x). */
    const int per_row_kernel = g->kernel != NULL && g->left == 0 && g->out_w >= 16;
    return !per_row_kernel && a->step[h] == 2 && a->step[w] == 2 && g->out_h > 0 &&
           g->out_w > 0 &&
           (g->w == 2 * g->out_w || g->w == 2 * g->out_w + 1) && g->h >= g->kh &&
           g->w >= g->kw && (g->kw == 2 || g->kw == 3) && g->top >= 0 && g->top < g->kh &&
           g->left >= 0 && g->left < g->kw && 2 * (g->out_h - 1) - g->top <= g->h - 1;
}

/* Whether one window covers each whole plane, unpadded (global pooling written as a pool:
 * Inception v2's 7×7 average, 1024 planes, took 80 ns a plane through the per-row path,
 * three times onnxruntime's time): the planes are reduced as mean_reduce reduces them. */
static int whole_window(const pool_attributes *a, const int64_t *in_shape, int rank)
{
    const int h = rank - 2, w = rank - 1;
    return planar_rows_fit(a, rank) && a->window[h] == in_shape[h] &&
           a->window[w] == in_shape[w] && a->pad_before[h] == 0 && a->pad_before[w] == 0 &&
           in_shape[h] > 0 && in_shape[w] > 0;
}

typedef enum { GENERAL, PER_ROW, WHOLE_PLANE, STEP2, WHOLE_WINDOW } pool_path;

typedef struct pool_prepared {
    pool_path path;
    ember_pool_plane plane;     /* WHOLE_PLANE's geometry */
    ember_pool_step2 step2_planes; /* STEP2's */
    ember_f32_pool_row_fn step2; /* PER_ROW at step 2, 2- or 3-wide windows, or NULL */
    float divisors[];           /* WHOLE_PLANE averages: a plane's divisors (h · w) */
} pool_prepared;

/* The f32_pool_row kernel for a per-row pool whose windows fit it (step 2, 2 or 3 wide,
 * no more rows than it takes, none left of the row: pool_planar_rows checks the right
 * side), where the CPU has a vector one: the scalar kernel is the reference, and on its
 * own the per-row path's flat loops (vectorised by the compiler) beat it. */
static ember_f32_pool_row_fn step2_kernel(const ember_f32_pool_row_kernel *kernel,
                                          const pool_attributes *a, int rank)
{
    const int64_t kw = a->window[rank - 1];
    if (kernel->isa == EMBER_ISA_SCALAR || a->step[rank - 1] != 2 || (kw != 2 && kw != 3) ||
        a->window[rank - 2] > EMBER_F32_POOL_ROW_MAX_KH || a->pad_before[rank - 1] != 0)
        return NULL;
    return kernel->fn;
}

/* The path and its scratch: a stack of planes for the whole-plane path (and, for an
 * average, a plane's divisors kept with the prepared state, made once here), one input
 * row for the per-row path. The output keeps the input's size exactly when the padding
 * says so. */
static ember_status pool_prepare(ember_prepare_context *ctx, void **out)
{
    const ember_value *x = ember_node_input(ctx->model, ctx->node, 0);
    const ember_value *y = &ctx->model->values[ctx->node->output];
    ember_pool_plane g;
    const int whole_plane =
        same_plane_fits(ctx->node->attributes, ctx->node->op->variant, x->shape, x->rank, &g) &&
        y->shape[x->rank - 2] == g.h && y->shape[x->rank - 1] == g.w;
    const int divides = whole_plane && !g.is_max && g.normalize;
    /* a plane of the input, whose bytes the loader has already counted */
    pool_prepared *p =
        calloc(1, sizeof *p + (divides ? (size_t)(g.h * g.w) * sizeof(float) : 0));
    if (p == NULL)
        return ember_node_error(ctx->node, EMBER_ERROR_MEMORY, "out of memory");
    *out = p;
    p->path = GENERAL;
    if (whole_window(ctx->node->attributes, x->shape, x->rank) &&
        y->shape[x->rank - 2] == 1 && y->shape[x->rank - 1] == 1) {
        p->path = WHOLE_WINDOW;
    } else if (whole_plane) {
        p->path = WHOLE_PLANE;
        p->plane = g;
        if (divides)
            ember_pool_same_divisors(&g, p->divisors);
        ctx->scratch_bytes = ember_pool_same_scratch_floats(&g) * sizeof(float);
    } else if (step2_fits(ctx->node->attributes, ctx->node->op->variant, x->shape, y->shape,
                          x->rank, ctx->kernels->f32_pool_row, &p->step2_planes)) {
        p->path = STEP2;
        ctx->scratch_bytes = ember_pool_step2_scratch_floats(&p->step2_planes) * sizeof(float);
    } else if (planar_rows_fit(ctx->node->attributes, x->rank)) {
        p->path = PER_ROW;
        p->step2 = step2_kernel(ctx->kernels->f32_pool_row, ctx->node->attributes, x->rank);
        ctx->scratch_bytes = (size_t)x->shape[x->rank - 1] * sizeof(float);
    }
    return EMBER_OK;
}

static void pool_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    const pool_prepared *p = prepared;
    const pool_path path = p != NULL ? p->path : GENERAL;
    const ember_tensor *x = io->inputs[0], *y = io->output;
    if (path == WHOLE_PLANE) {
        ember_pool_same_planes(&p->plane, ember_shape_count(x->shape, x->rank - 2), x->data,
                               p->divisors, y->data, io->scratch);
        return;
    }
    if (path == WHOLE_WINDOW) {
        const int is_max = node->op->variant == MAX_POOL;
        ember_reduce_blocks(x->data, ember_shape_count(x->shape, x->rank - 2),
                            x->shape[x->rank - 2] * x->shape[x->rank - 1], is_max,
                            !is_max && ((const pool_attributes *)node->attributes)->normalize,
                            y->data);
        return;
    }
    if (path == STEP2) {
        ember_pool_step2_planes(&p->step2_planes, ember_shape_count(x->shape, x->rank - 2),
                                x->data, y->data, io->scratch);
        return;
    }
    if (path == PER_ROW) {
        ember_pool_planar_rows(node->attributes, node->op->variant, io->inputs[0], io->output,
                         p->step2, io->scratch);
        return;
    }
    if (is_planar(node->attributes, io->inputs[0]->rank)) {
        pool_planar(node->attributes, node->op->variant, io->inputs[0], io->output);
        return;
    }
    const pool_attributes *a = node->attributes;
    const int rank = x->rank, variant = node->op->variant;
    const float *in = x->data;
    float *out = io->output->data;
    int64_t in_strides[EMBER_MAX_RANK];
    ember_shape_strides(x->shape, rank, in_strides);
    const int64_t window_cells = ember_shape_count(a->window, rank);

    ember_nd_iter it;
    ember_nd_iter_init(&it, rank, io->output->shape, NULL, NULL);
    do {
        int64_t origin[EMBER_MAX_RANK], cell[EMBER_MAX_RANK] = {0};
        for (int d = 0; d < rank; d++)
            origin[d] = it.index[d] * a->step[d] - a->pad_before[d];
        float acc = variant == MAX_POOL ? -INFINITY : 0.0f;
        int64_t inside_cells = 0;
        for (;;) {
            int64_t offset = 0;
            int inside = 1;
            for (int d = 0; d < rank && inside; d++) {
                const int64_t i = origin[d] + cell[d] * a->dilate[d];
                inside = i >= 0 && i < x->shape[d];
                offset += i * in_strides[d];
            }
            if (inside) {
                const float v = in[offset];
                if (variant == MAX_POOL)
                    acc = v > acc ? v : acc;
                else
                    acc += v;
                inside_cells++;
            }
            int d = rank - 1;
            for (; d >= 0; d--) {
                if (++cell[d] < a->window[d])
                    break;
                cell[d] = 0;
            }
            if (d < 0)
                break;
        }
        if (variant != MAX_POOL && a->normalize) {
            acc = ember_pool_mean(acc, inside_cells, window_cells, a->border == BORDER_IGNORE);
        }
        *out++ = acc;
    } while (ember_nd_iter_next(&it));
}

static const ember_op_param pool_params[] = {
    {"input", EMBER_PARAM_TENSOR, 0, 0.0f},     {"size", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"border", EMBER_PARAM_ATTRIBUTE, 0, 0.0f}, {"padding", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"stride", EMBER_PARAM_ATTRIBUTE, 0, 0.0f}, {"dilation", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"normalize", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};

const ember_op ember_op_max_pool = {.name = "max_pool", .variant = MAX_POOL,
    .params = pool_params, .param_count = 6, .parse = pool_parse, .infer = pool_infer,
    .prepare = pool_prepare, .run = pool_run, .free_prepared = free};
const ember_op ember_op_avg_pool = {.name = "avg_pool", .variant = AVG_POOL,
    .params = pool_params, .param_count = 6, .parse = pool_parse, .infer = pool_infer,
    .prepare = pool_prepare, .run = pool_run, .free_prepared = free};
const ember_op ember_op_box = {.name = "box", .variant = BOX, .params = pool_params,
    .param_count = 7, .parse = pool_parse, .infer = pool_infer, .prepare = pool_prepare,
    .run = pool_run, .free_prepared = free};
