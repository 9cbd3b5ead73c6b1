/*
 * Stride-1 pools whose output keeps the input's size (3×3 padded by 1: Inception's
 * average pools and its last max pool), a whole plane at a time. pool.c's per-row path
 * pays a fixed cost per output row (a row copy, border windows, short loops), which at
 * 7–28 columns outweighs the arithmetic; here every pass is one loop over many rows:
 *
 *   1. vertical: V[oh][x] = ⊕ of the input rows oh - top + t that lie inside the plane.
 *      Output rows with the same range of t (all interior rows: every t) form a run of
 *      consecutive rows of V and of the input, so a run costs one flat loop per t;
 *   2. horizontal: out[i] = ⊕ V[i - left + s] over the plane taken flat, which is right
 *      for every column whose window lies inside its row; the border columns (kw - 1
 *      per row) are then recomputed from the cells of their row that are inside;
 *   3. average: each sum divided by its cell count, kh · kw or, for border = ignore, the
 *      cells inside, exactly as the reference divides.
 * Padded cells never win a max, as in pool.c.
 */
#include <math.h>
#include <string.h>

#include "ops/pool.h"

/* Blocks of 8: fixed-length inner loops the compiler unrolls into whole vectors (on
 * aarch64 a plain loop of 4-wide steps cost SqueezeNet's stride-2 pools 1M instructions
 * more). */
#define BLOCK 8

static void combine(float *restrict acc, const float *restrict row, int64_t n, int is_max)
{
    int64_t i = 0;
    if (is_max) {
        for (; i + BLOCK <= n; i += BLOCK)
            for (int k = 0; k < BLOCK; k++)
                acc[i + k] = row[i + k] > acc[i + k] ? row[i + k] : acc[i + k];
        for (; i < n; i++)
            acc[i] = row[i] > acc[i] ? row[i] : acc[i];
        return;
    }
    for (; i + BLOCK <= n; i += BLOCK)
        for (int k = 0; k < BLOCK; k++)
            acc[i + k] += row[i + k];
    for (; i < n; i++)
        acc[i] += row[i];
}

/* y[i] = a[i] ⊕ b[i]: the first two terms of a pass in one loop, no copy before it. */
static void combine_two(float *restrict y, const float *a, const float *b, int64_t n, int is_max)
{
    int64_t i = 0;
    if (is_max) {
        for (; i + BLOCK <= n; i += BLOCK)
            for (int k = 0; k < BLOCK; k++)
                y[i + k] = b[i + k] > a[i + k] ? b[i + k] : a[i + k];
        for (; i < n; i++)
            y[i] = b[i] > a[i] ? b[i] : a[i];
        return;
    }
    for (; i + BLOCK <= n; i += BLOCK)
        for (int k = 0; k < BLOCK; k++)
            y[i + k] = a[i + k] + b[i + k];
    for (; i < n; i++)
        y[i] = a[i] + b[i];
}

void ember_pool_combine_rows(float *restrict y, const float *x, int64_t step, int64_t terms,
                             int64_t n, int is_max)
{
    if (terms == 1) {
        memcpy(y, x, (size_t)n * sizeof(float));
        return;
    }
    combine_two(y, x, x + step, n, is_max);
    for (int64_t t = 2; t < terms; t++)
        combine(y, x + t * step, n, is_max);
}

/* The window rows t in [*t_lo, *t_hi] inside the plane for output row oh, and the end
 * of the run of rows from oh that share that range. */
static int64_t row_run(const ember_pool_plane *g, int64_t oh, int64_t *t_lo, int64_t *t_hi)
{
    *t_lo = g->top - oh > 0 ? g->top - oh : 0;
    *t_hi = g->h - 1 - oh + g->top < g->kh - 1 ? g->h - 1 - oh + g->top : g->kh - 1;
    if (*t_lo > 0 || *t_hi < g->kh - 1)
        return oh + 1; /* a border row: its own range */
    int64_t end = oh + 1;  /* interior rows: while the last window row stays inside */
    const int64_t last_interior = g->h - g->kh + g->top;
    return last_interior + 1 > end ? last_interior + 1 : end;
}

static void vertical(const ember_pool_plane *g, const float *in, float *v)
{
    for (int64_t oh = 0, end; oh < g->h; oh = end) {
        int64_t t_lo, t_hi;
        end = row_run(g, oh, &t_lo, &t_hi);
        ember_pool_combine_rows(v + oh * g->w, in + (oh - g->top + t_lo) * g->w, g->w,
                                t_hi - t_lo + 1, (end - oh) * g->w, g->is_max);
    }
}

/* The interior windows of all rows at once (step 2); border columns come out wrong. */
static void horizontal_flat(const ember_pool_plane *g, const float *v, float *out)
{
    const int64_t right = g->kw - 1 - g->left, n = g->h * g->w - g->left - right;
    if (n > 0)
        ember_pool_combine_rows(out + g->left, v, 1, g->kw, n, g->is_max);
}

/* Divides the runs' sums by their interior columns' count (the border columns are
 * recomputed after). */
static void divide_runs(const ember_pool_plane *g, float *out)
{
    for (int64_t oh = 0, end; oh < g->h; oh = end) {
        int64_t t_lo, t_hi;
        end = row_run(g, oh, &t_lo, &t_hi);
        const float d = (float)(g->divide_inside ? (t_hi - t_lo + 1) * g->kw : g->kh * g->kw);
        float *rows = out + oh * g->w;
        for (int64_t i = 0; i < (end - oh) * g->w; i++)
            rows[i] /= d;
    }
}

/* Border column ow (its window reaches past the row): for every row, the ⊕ of the V
 * cells [first, last] inside, divided as the reference divides. Column by column, so the
 * window's range and divisor are worked out once per run of rows, not per cell. */
static void border_column(const ember_pool_plane *g, const float *v, float *out, int64_t ow)
{
    const int64_t first = ow - g->left > 0 ? ow - g->left : 0;
    const int64_t last = ow - g->left + g->kw - 1 < g->w - 1 ? ow - g->left + g->kw - 1 : g->w - 1;
    const int divide = !g->is_max && g->normalize;
    for (int64_t oh = 0, end; oh < g->h; oh = end) {
        int64_t t_lo, t_hi;
        end = row_run(g, oh, &t_lo, &t_hi);
        const int64_t cells = (last - first + 1) * (t_hi - t_lo + 1);
        const float d = (float)(g->divide_inside ? cells : g->kh * g->kw);
        const float *cell = v + oh * g->w;
        float *o = out + oh * g->w + ow;
        if (g->is_max) {
            for (int64_t r = oh; r < end; r++, cell += g->w, o += g->w) {
                float acc = cell[first];
                for (int64_t x = first + 1; x <= last; x++)
                    acc = cell[x] > acc ? cell[x] : acc;
                *o = acc;
            }
            continue;
        }
        for (int64_t r = oh; r < end; r++, cell += g->w, o += g->w) {
            float acc = cell[first];
            for (int64_t x = first + 1; x <= last; x++)
                acc += cell[x];
            *o = divide ? acc / d : acc;
        }
    }
}

static void border_columns(const ember_pool_plane *g, const float *v, float *out)
{
    const int64_t right = g->kw - 1 - g->left;
    const int64_t left_end = g->left < g->w ? g->left : g->w;
    const int64_t right_start = g->w - right > left_end ? g->w - right : left_end;
    for (int64_t ow = 0; ow < left_end; ow++)
        border_column(g, v, out, ow);
    for (int64_t ow = right_start; ow < g->w; ow++)
        border_column(g, v, out, ow);
}

void ember_pool_same_planes(const ember_pool_plane *g, int64_t planes, const float *in,
                            float *out, float *v)
{
    const int64_t size = g->h * g->w;
    for (int64_t p = 0; p < planes; p++, in += size, out += size) {
        vertical(g, in, v);
        horizontal_flat(g, v, out);
        if (!g->is_max && g->normalize)
            divide_runs(g, out);
        border_columns(g, v, out);
    }
}
