/*
 * The recurrent ops' packing and run (recurrent.c parses and types them).
 *
 * f32 only (the cook computes other float types through casts). Per direction: the input
 * projection of every step in one GEMM (biases in its epilogue), then per step one product
 * of the state by R accumulated onto that step's projection (two for GRU; a GEMV reading
 * the state in place at batch 1), and the gate math over contiguous spans with the
 * vectorised sigmoid/tanh kernels. Constant weights are packed once per runnable.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/shape.h"
#include "ops/recurrent.h"

/* ---------------------------------------------------------------- prepare */

typedef struct recurrent_prepared {
    const ember_f32_gemm_kernel *kernel;
    ember_f32_vunary_fn sigmoid, tanh_;
    int64_t seq, batch, in, h;
    size_t w_floats, r_floats;   /* packed floats of one direction's W and R */
    const float *packed_w, *packed_r; /* all directions, from the store; NULL: per run */
    /* scratch offsets, in floats */
    size_t projected, packed_x, packed_h, state_h, state_c, temp, reset, bias, w_scratch,
        r_scratch;
} recurrent_prepared;

/* R's packed columns: for GRU the z and r gates (2H) and the h gate (H) pack apart,
 * since the h gate multiplies the reset state (or is scaled after the product). */
static size_t packed_r_floats(const recurrent_prepared *p, int variant)
{
    const size_t nr = p->kernel->nr, h = (size_t)p->h;
    if (variant == GRU)
        return ember_f32_packed_b_floats(nr, h, 2 * h) + ember_f32_packed_b_floats(nr, h, h);
    return ember_f32_packed_b_floats(nr, h, (size_t)recurrent_gates(variant) * h);
}

static void pack_w(const recurrent_prepared *p, int variant, const float *w, int dirs,
                   float *out)
{
    const size_t gh = (size_t)(recurrent_gates(variant) * p->h), in = (size_t)p->in;
    for (int d = 0; d < dirs; d++) /* element (q, j) of W^T is w[j·in + q] */
        ember_f32_pack_b(p->kernel->nr, in, gh, w + d * gh * in, 1, in, out + d * p->w_floats);
}

static void pack_r(const recurrent_prepared *p, int variant, const float *r, int dirs,
                   float *out)
{
    const size_t h = (size_t)p->h, gh = (size_t)recurrent_gates(variant) * h;
    for (int d = 0; d < dirs; d++) {
        const float *rd = r + d * gh * h;
        float *o = out + d * p->r_floats;
        if (variant == GRU) {
            ember_f32_pack_b(p->kernel->nr, h, 2 * h, rd, 1, h, o);
            ember_f32_pack_b(p->kernel->nr, h, h, rd + 2 * h * h, 1, h,
                             o + ember_f32_packed_b_floats(p->kernel->nr, h, 2 * h));
        } else {
            ember_f32_pack_b(p->kernel->nr, h, gh, rd, 1, h, o);
        }
    }
}

/* The packed form of a constant W or R from the runnable's store (packed on first use). */
static ember_status packed_constant(ember_prepare_context *ctx, recurrent_prepared *p,
                                    int which, const float **out)
{
    const ember_node *node = ctx->node;
    const int variant = node->op->variant;
    const recurrent_attributes *a = node->attributes;
    const ember_value *v = ember_node_input(ctx->model, node, (size_t)which);
    *out = NULL;
    if (v->constant == NULL)
        return EMBER_OK;
    const size_t floats = which == W ? p->w_floats : p->r_floats;
    const int64_t layout[] = {'R', which, variant, a->directions, p->h, p->in,
                              (int64_t)p->kernel->nr};
    int fresh = 0;
    float *packed = ember_packed_acquire(ctx->packed, v->constant,
                                         ember_packed_layout(layout, 7),
                                         ((size_t)a->directions * floats + 1) * sizeof(float),
                                         &fresh);
    if (packed == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory packing weights");
    if (fresh && which == W)
        pack_w(p, variant, v->constant, a->directions, packed);
    else if (fresh)
        pack_r(p, variant, v->constant, a->directions, packed);
    if (fresh) /* the run reads the packed form only (it packs a computed W or R) */
        ember_model_release_constant(ctx->model, v->constant,
                                     (size_t)ember_shape_count(v->shape, v->rank) *
                                         sizeof(float));
    *out = packed;
    return EMBER_OK;
}

/* Lay out the scratch: each region starts on a 64-byte boundary. */
static size_t region(size_t *cursor, size_t floats)
{
    const size_t at = *cursor;
    *cursor += (floats + 15) / 16 * 16;
    return at;
}

ember_status ember_recurrent_prepare(ember_prepare_context *ctx, void **out)
{
    const ember_node *node = ctx->node;
    const int variant = node->op->variant;
    const recurrent_attributes *a = node->attributes;
    const ember_value *x = ember_node_input(ctx->model, node, X);
    recurrent_prepared *p = calloc(1, sizeof *p);
    if (p == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = p;
    p->kernel = ctx->kernels->f32_gemm;
    p->sigmoid = ctx->kernels->f32_vsigmoid->fn;
    p->tanh_ = ctx->kernels->f32_vtanh->fn;
    p->seq = x->shape[0], p->batch = x->shape[1], p->in = x->shape[2];
    p->h = ember_node_input(ctx->model, node, R)->shape[2];
    const size_t mr = p->kernel->mr, nr = p->kernel->nr, h = (size_t)p->h;
    const size_t gh = (size_t)recurrent_gates(variant) * h, rows = (size_t)(p->seq * p->batch);
    p->w_floats = ember_f32_packed_b_floats(nr, (size_t)p->in, gh);
    p->r_floats = packed_r_floats(p, variant);
    ember_status status = packed_constant(ctx, p, W, &p->packed_w);
    if (status == EMBER_OK)
        status = packed_constant(ctx, p, R, &p->packed_r);
    if (status != EMBER_OK)
        return status;
    size_t cursor = 0;
    const size_t batch = (size_t)p->batch;
    p->projected = region(&cursor, rows * gh);
    p->packed_x = region(&cursor, ember_f32_packed_a_floats(mr, rows, (size_t)p->in));
    p->packed_h = region(&cursor, ember_f32_packed_a_floats(mr, batch, h));
    p->state_h = region(&cursor, batch * h);
    p->state_c = region(&cursor, batch * h);
    p->temp = region(&cursor, batch * h);
    p->reset = region(&cursor, batch * h);
    p->bias = region(&cursor, gh + h);
    p->w_scratch = region(&cursor, p->packed_w ? 0 : (size_t)a->directions * p->w_floats);
    p->r_scratch = region(&cursor, p->packed_r ? 0 : (size_t)a->directions * p->r_floats);
    ctx->scratch_bytes = cursor * sizeof(float);
    return EMBER_OK;
}

/* ---------------------------------------------------------------- run */

static void activate(const recurrent_prepared *p, const ember_activation *f, float *x,
                     size_t n)
{
    ember_activation_apply(f, p->sigmoid, p->tanh_, x, n);
}

static void clip_span(const recurrent_attributes *a, float *x, size_t n)
{
    if (a->clipped)
        for (size_t i = 0; i < n; i++)
            x[i] = fminf(fmaxf(x[i], -a->clip), a->clip);
}

/* Everything one direction's steps read. */
typedef struct direction_run {
    const recurrent_prepared *p;
    const recurrent_attributes *a;
    const ember_activation *f;   /* this direction's functions */
    const float *packed_r, *peepholes, *bias_h;
    float *projected, *h, *c, *temp, *reset, *packed_h;
    const ember_tensor *lens;
} direction_run;

static int active(const direction_run *run, int64_t t, int64_t item)
{
    if (run->lens == NULL)
        return 1;
    const int64_t n = run->lens->datum_type == EMBER_I32
                          ? ((const int32_t *)run->lens->data)[item]
                          : ((const int64_t *)run->lens->data)[item];
    return t < n;
}

/* out = epilogue(rows · R^T) for `columns` gate columns of each batch row (out's row
 * stride `stride`); rows holds batch × H floats. At batch 1 (streaming) a GEMV reads the
 * state in place, R's panels walked backward at odd steps t: an R past L2 (LSTM 256: 1
 * MB) then starts each step on what the last left cached (x86, LSTM 256 over 100 steps:
 * see ember_f32_gemv_packed); a larger batch packs it into packed_h for the GEMM. */
static void state_product(const recurrent_prepared *p, int64_t t, const float *rows,
                          float *packed_h, const float *packed_r, size_t columns, float *out,
                          size_t stride, const ember_f32_gemm_params *params)
{
    const size_t batch = (size_t)p->batch, h = (size_t)p->h;
    if (batch == 1) {
        ember_f32_gemv_packed(p->kernel, columns, h, rows, packed_r, out, params, (int)(t & 1));
        return;
    }
    ember_f32_pack_a(p->kernel->mr, batch, h, rows, h, 1, packed_h);
    ember_f32_gemm_packed(p->kernel, batch, columns, h, packed_h, packed_r, out,
                          stride * sizeof(float), params);
}

/* z += rows · R^T (the gates' recurrent part onto the step's input projection). */
static void add_product(const recurrent_prepared *p, int64_t t, const float *rows,
                        float *packed_h, const float *packed_r, size_t columns, float *z,
                        size_t stride)
{
    const ember_f32_gemm_params params = {.accumulate = 1, .min = -INFINITY, .max = INFINITY};
    state_product(p, t, rows, packed_h, packed_r, columns, z, stride, &params);
}

static void lstm_row(const direction_run *run, float *z, float *h, float *c)
{
    const size_t n = (size_t)run->p->h;
    const float *peep = run->peepholes;
    float *i = z, *o = z + n, *f = z + 2 * n, *g = z + 3 * n;
    clip_span(run->a, z, 4 * n);
    if (peep != NULL)
        for (size_t k = 0; k < n; k++)
            i[k] += peep[k] * c[k], f[k] += peep[2 * n + k] * c[k];
    /* without peepholes o does not wait for c: i, o and f (contiguous) in one call */
    const int ifo_at_once = peep == NULL && !run->a->input_forget;
    activate(run->p, &run->f[0], i, ifo_at_once ? 3 * n : n);
    activate(run->p, &run->f[1], g, n);
    if (run->a->input_forget)
        for (size_t k = 0; k < n; k++)
            f[k] = 1.0f - i[k];
    else if (!ifo_at_once)
        activate(run->p, &run->f[0], f, n);
    for (size_t k = 0; k < n; k++)
        c[k] = f[k] * c[k] + i[k] * g[k];
    if (peep != NULL)
        for (size_t k = 0; k < n; k++)
            o[k] += peep[n + k] * c[k];
    if (!ifo_at_once)
        activate(run->p, &run->f[0], o, n);
    memcpy(h, c, n * sizeof(float));
    activate(run->p, &run->f[2], h, n);
    for (size_t k = 0; k < n; k++)
        h[k] *= o[k];
}

/* One GRU step over the batch: z and r gates, then the candidate from the reset state. */
static void gru_step(const direction_run *run, float *z_rows, int64_t t, float *y_rows,
                     size_t y_stride)
{
    const recurrent_prepared *p = run->p;
    const size_t n = (size_t)p->h, gh = 3 * n, batch = (size_t)p->batch;
    const size_t zr_floats = ember_f32_packed_b_floats(p->kernel->nr, n, 2 * n);
    add_product(p, t, run->h, run->packed_h, run->packed_r, 2 * n, z_rows, gh);
    for (size_t b = 0; b < batch; b++) {
        float *z = z_rows + b * gh;
        clip_span(run->a, z, 2 * n);
        activate(p, &run->f[0], z, 2 * n);
        for (size_t k = 0; k < n; k++) /* the reset state, or r kept for after R_h */
            run->reset[b * n + k] = run->a->linear_before_reset ? z[n + k]
                                                                 : z[n + k] * run->h[b * n + k];
    }
    if (run->a->linear_before_reset) {
        const ember_f32_gemm_params params = {.bias_col = run->bias_h, .min = -INFINITY,
                                              .max = INFINITY};
        state_product(p, t, run->h, run->packed_h, run->packed_r + zr_floats, n, run->temp,
                      n, &params);
        for (size_t i = 0; i < batch * n; i++)
            z_rows[(i / n) * gh + 2 * n + i % n] += run->reset[i] * run->temp[i];
    } else {
        add_product(p, t, run->reset, run->packed_h, run->packed_r + zr_floats, n,
                    z_rows + 2 * n, gh);
    }
    for (size_t b = 0; b < batch; b++) {
        float *z = z_rows + b * gh, *candidate = z + 2 * n, *h = run->h + b * n;
        if (!active(run, t, (int64_t)b)) {
            memset(y_rows + b * y_stride, 0, n * sizeof(float));
            continue;
        }
        clip_span(run->a, candidate, n);
        activate(p, &run->f[1], candidate, n);
        for (size_t k = 0; k < n; k++)
            h[k] = (1.0f - z[k]) * candidate[k] + z[k] * h[k];
        memcpy(y_rows + b * y_stride, h, n * sizeof(float));
    }
}

/* One LSTM or RNN step over the batch. */
static void step(const direction_run *run, int variant, float *z_rows, int64_t t,
                 float *y_rows, size_t y_stride)
{
    const recurrent_prepared *p = run->p;
    const size_t n = (size_t)p->h, gh = (size_t)recurrent_gates(variant) * n;
    add_product(p, t, run->h, run->packed_h, run->packed_r, gh, z_rows, gh);
    for (size_t b = 0; b < (size_t)p->batch; b++) {
        float *z = z_rows + b * gh, *h = run->h + b * n, *y = y_rows + b * y_stride;
        if (!active(run, t, (int64_t)b)) {
            memset(y, 0, n * sizeof(float));
            continue;
        }
        if (variant == LSTM) {
            lstm_row(run, z, h, run->c + b * n);
        } else {
            clip_span(run->a, z, n);
            activate(p, &run->f[0], z, n);
            memcpy(h, z, n * sizeof(float));
        }
        memcpy(y, h, n * sizeof(float));
    }
}

/* The biases of direction d folded for the projection GEMM: Wb + Rb, except GRU's R_h
 * bias under linear_before_reset, which goes inside the reset product (bias + gh). */
static void fold_bias(const ember_tensor *b, int variant, int linear_before_reset, int d,
                      size_t n, float *bias)
{
    const size_t gh = (size_t)recurrent_gates(variant) * n;
    if (b->rank == 0) {
        memset(bias, 0, (gh + n) * sizeof(float));
        return;
    }
    const float *wb = (const float *)b->data + d * 2 * gh, *rb = wb + gh;
    for (size_t j = 0; j < gh; j++)
        bias[j] = wb[j] + rb[j];
    if (variant == GRU && linear_before_reset)
        for (size_t j = 0; j < n; j++)
            bias[2 * n + j] = wb[2 * n + j], bias[gh + j] = rb[2 * n + j];
}

static void initial_state(const ember_tensor *given, int d, size_t floats, float *state)
{
    if (given->rank == 0)
        memset(state, 0, floats * sizeof(float));
    else
        memcpy(state, (const float *)given->data + d * floats, floats * sizeof(float));
}

static void run_direction(const ember_node *node, const recurrent_prepared *p,
                          const ember_op_io *io, int d, float *scratch)
{
    const recurrent_attributes *a = node->attributes;
    const int variant = node->op->variant;
    const size_t n = (size_t)p->h, gh = (size_t)recurrent_gates(variant) * n;
    const size_t batch = (size_t)p->batch, rows = (size_t)(p->seq * p->batch);
    const ember_tensor *const *in = io->inputs;
    const float *packed_w = (p->packed_w ? p->packed_w : scratch + p->w_scratch) +
                            d * p->w_floats;
    direction_run run = {p, a, a->functions[d],
                         (p->packed_r ? p->packed_r : scratch + p->r_scratch) + d * p->r_floats,
                         NULL, scratch + p->bias + gh, scratch + p->projected,
                         scratch + p->state_h, scratch + p->state_c, scratch + p->temp,
                         scratch + p->reset, scratch + p->packed_h,
                         in[LENS]->rank ? in[LENS] : NULL};
    if (variant == LSTM && in[PEEPHOLES]->rank)
        run.peepholes = (const float *)in[PEEPHOLES]->data + d * 3 * n;
    float *bias = scratch + p->bias;
    fold_bias(in[B], variant, a->linear_before_reset, d, n, bias);
    const ember_f32_gemm_params projection = {.bias_col = bias, .min = -INFINITY,
                                               .max = INFINITY};
    ember_f32_gemm_packed(p->kernel, rows, gh, (size_t)p->in, scratch + p->packed_x, packed_w,
                          run.projected, gh * sizeof(float), &projection);
    initial_state(in[INITIAL_H], d, batch * n, run.h);
    if (variant == LSTM)
        initial_state(in[INITIAL_C], d, batch * n, run.c);
    const int reverse = a->directions == 2 ? d == 1 : a->reverse;
    const size_t y_stride = (size_t)a->directions * batch * n;
    float *y = io->output[0].data;
    for (int64_t s = 0; s < p->seq; s++) {
        const int64_t t = reverse ? p->seq - 1 - s : s;
        float *z_rows = run.projected + (size_t)t * batch * gh;
        float *y_rows = y + (size_t)t * y_stride + (size_t)d * batch * n;
        if (variant == GRU)
            gru_step(&run, z_rows, t, y_rows, n);
        else
            step(&run, variant, z_rows, t, y_rows, n);
    }
    for (int i = 1; i < node->output_count; i++)
        memcpy((float *)io->output[i].data + (size_t)d * batch * n, i == 1 ? run.h : run.c,
               batch * n * sizeof(float));
}

void ember_recurrent_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    const recurrent_prepared *p = prepared;
    const recurrent_attributes *a = node->attributes;
    const int variant = node->op->variant;
    float *scratch = io->scratch;
    if (p->packed_w == NULL)
        pack_w(p, variant, io->inputs[W]->data, a->directions, scratch + p->w_scratch);
    if (p->packed_r == NULL)
        pack_r(p, variant, io->inputs[R]->data, a->directions, scratch + p->r_scratch);
    /* the input, packed once for every direction's projection */
    ember_f32_pack_a(p->kernel->mr, (size_t)(p->seq * p->batch), (size_t)p->in,
                     io->inputs[X]->data, (size_t)p->in, 1, scratch + p->packed_x);
    for (int d = 0; d < a->directions; d++)
        run_direction(node, p, io, d, scratch);
}
