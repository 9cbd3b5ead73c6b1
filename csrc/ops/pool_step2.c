/*
 * Step-2 pools onto half the plane's width (w = 2·ow or 2·ow + 1: the 3×3 and 2×2 step-2
 * pools of SqueezeNet, ResNet, DenseNet, ShuffleNet and Inception, padded or not), a
 * stack of planes at a time. The per-row path (pool_rows.c) pays a fixed cost per output
 * row — window bounds, a kernel call, the cut windows one by one — which at 7–28 outputs
 * a row outweighs the arithmetic (Inception v2's 576×14×14 max pool: ~60 ns a row, twice
 * onnxruntime's time). Here:
 *
 *   1. vertical: V[R] = ⊕ of the input rows of output row R's window inside its plane,
 *      a short inline loop per row, kept at a pitch of 2·ow floats; a row's cell past
 *      that (column 2·ow, when w is odd) is kept apart, in E[R];
 *   2. horizontal: with that pitch, output f of the stack taken flat reads cells
 *      2f − left + t of V taken flat, so one call of the f32_pool_row kernel (or the
 *      per-row path's constant-stride loop) pools the whole stack, right for every
 *      output whose window lies inside its row's pitch and, for an average, whose rows
 *      all lie inside the plane (the divisor the kernel applies is theirs);
 *   3. the rest redone, a column of outputs at a time: the windows a row's ends cut (the
 *      first with padding on the left, the last with padding on the right or reaching
 *      E) and, for an average, the rows a plane's edge cuts, each divided as the
 *      reference divides.
 *
 * Each output folds the same cells in the same order as the per-row path (its rows first,
 * then its columns), so the bits are unchanged.
 */
#include <math.h>

#include "ops/pool.h"

/* Input floats per stack: its V (half of them or less) stays near L1 (at least one
 * plane). */
#define STACK_FLOATS 16384

static int64_t stack_planes(const ember_pool_step2 *g)
{
    const int64_t planes = STACK_FLOATS / (g->h * g->w);
    return planes > 1 ? planes : 1;
}

static int64_t pitch(const ember_pool_step2 *g)
{
    return 2 * g->out_w;
}

size_t ember_pool_step2_scratch_floats(const ember_pool_step2 *g)
{
    const int64_t rows = stack_planes(g) * g->out_h;
    /* V, the float its last row writes past, then E */
    return (size_t)(rows * pitch(g) + 1 + rows);
}

/* The window rows [*first, *last] of output row oh that lie inside the plane. */
static void rows_inside(const ember_pool_step2 *g, int64_t oh, int64_t *first, int64_t *last)
{
    ember_pool_cells_inside(2 * oh - g->top, g->kh, 1, g->h, first, last);
}

/* Output rows [*lo, *hi] have every window row inside the plane. */
static void interior_rows(const ember_pool_step2 *g, int64_t *lo, int64_t *hi)
{
    *lo = (g->top + 1) / 2;
    *hi = (g->h - g->kh + g->top) / 2;
}

/* v[x] = ⊕ of rows src, src + w, … (terms of them), x < w: the 3-row case inline, as the
 * interior rows are short (7–56 cells) and many. pool_plane.c's combine_three folds
 * alike, but called per row (ember_pool_combine_rows), or even inlined from pool.h
 * without this one's single source pointer, the step-2 pools took 1.07-1.23x the time. */
static inline void fold_rows(float *restrict v, const float *restrict src, int64_t w,
                             int64_t terms, int is_max)
{
    if (terms == 3 && is_max) {
        for (int64_t x = 0; x < w; x++) {
            const float a = src[x], b = src[w + x], c = src[2 * w + x];
            const float ab = b > a ? b : a;
            v[x] = c > ab ? c : ab;
        }
        return;
    }
    if (terms == 3) {
        for (int64_t x = 0; x < w; x++)
            v[x] = (src[x] + src[w + x]) + src[2 * w + x];
        return;
    }
    ember_pool_combine_rows(v, src, w, terms, w, is_max);
}

static void vertical(const ember_pool_step2 *g, int64_t planes, const float *in, float *v,
                     float *e)
{
    const int64_t w = g->w, p = pitch(g);
    int64_t lo, hi;
    interior_rows(g, &lo, &hi);
    for (int64_t q = 0; q < planes; q++, in += g->h * w)
        for (int64_t oh = 0; oh < g->out_h; oh++, v += p, e++) {
            /* the row's w cells; the next row overwrites those past the pitch */
            if (oh >= lo && oh <= hi) {
                fold_rows(v, in + (2 * oh - g->top) * w, w, g->kh, g->is_max);
            } else {
                int64_t first, last;
                rows_inside(g, oh, &first, &last);
                ember_pool_combine_rows(v, in + (2 * oh - g->top + first) * w, w,
                                        last - first + 1, w, g->is_max);
            }
            *e = w > p ? v[p] : 0.0f; /* read only where w > p */
        }
}

/* ⊕ of a row's cells [first, last] (relative to `at`, the window's left column), in
 * column order; the cell at column `pitch` is e. Divided as an average of `rows` rows. */
static float window(const ember_pool_step2 *g, const float *row, float e, int64_t at,
                    int64_t first, int64_t last, int64_t rows)
{
    const int64_t p = pitch(g);
    float v = at + first < p ? row[at + first] : e;
    for (int64_t x = first + 1; x <= last; x++) {
        const float cell = at + x < p ? row[at + x] : e;
        v = g->is_max ? (cell > v ? cell : v) : v + cell;
    }
    if (g->is_max || !g->normalize)
        return v;
    return ember_pool_mean(v, rows * (last - first + 1), g->kh * g->kw, g->divide_inside);
}

/* o[r·o_step] ⊕= x[r·x_step], r < rows: one more cell of a column of windows. */
static void fold_column(float *o, int64_t o_step, const float *x, int64_t x_step, int64_t rows,
                        int is_max)
{
    if (is_max)
        for (int64_t r = 0; r < rows; r++) {
            const float cell = x[r * x_step], held = o[r * o_step];
            o[r * o_step] = cell > held ? cell : held;
        }
    else
        for (int64_t r = 0; r < rows; r++)
            o[r * o_step] += x[r * x_step];
}

/* Output column ow of every row of the stack, when a row's end cuts its window or it
 * reaches past the pitch: its cells inside folded a cell at a time down the column, in
 * column order (an average's rows that a plane's edge cuts are redone after, cut_rows). */
static void cut_column(const ember_pool_step2 *g, int64_t planes, const float *v,
                       const float *e, float *out, int64_t ow)
{
    int64_t first, last;
    const int64_t at = 2 * ow - g->left, p = pitch(g), rows = planes * g->out_h;
    ember_pool_cells_inside(at, g->kw, 1, g->w, &first, &last);
    const int64_t v_last = at + last < p ? last : p - 1 - at; /* the rest is E */
    float *o = out + ow;
    for (int64_t r = 0; r < rows; r++)
        o[r * g->out_w] = first <= v_last ? v[r * p + at + first] : e[r];
    for (int64_t x = first + 1; x <= v_last; x++)
        fold_column(o, g->out_w, v + at + x, p, rows, g->is_max);
    if (at + last >= p && first <= v_last)
        fold_column(o, g->out_w, e, 1, rows, g->is_max);
    if (!g->is_max && g->normalize) {
        const float divisor = (float)ember_pool_divisor(g->kh * (last - first + 1),
                                                        g->kh * g->kw, g->divide_inside);
        for (int64_t r = 0; r < rows; r++)
            o[r * g->out_w] /= divisor;
    }
}

/* An average's rows whose windows a plane's edge cuts, every output of them redone with
 * its own divisor. */
static void cut_rows(const ember_pool_step2 *g, int64_t planes, const float *v,
                     const float *e, float *out)
{
    int64_t lo, hi;
    interior_rows(g, &lo, &hi);
    for (int64_t r = 0; r < planes * g->out_h; r++) {
        const int64_t oh = r % g->out_h;
        if (oh >= lo && oh <= hi)
            continue;
        int64_t first_row, last_row;
        rows_inside(g, oh, &first_row, &last_row);
        for (int64_t ow = 0; ow < g->out_w; ow++) {
            int64_t first, last;
            const int64_t at = 2 * ow - g->left;
            ember_pool_cells_inside(at, g->kw, 1, g->w, &first, &last);
            out[r * g->out_w + ow] = window(g, v + r * pitch(g), e[r], at, first, last,
                                            last_row - first_row + 1);
        }
    }
}

/* The outputs of the stack the flat pass left wrong, redone. */
static void redo(const ember_pool_step2 *g, int64_t planes, const float *v, const float *e,
                 float *out)
{
    /* outputs [ow_first, ow_last] of a row have their window inside its pitch */
    const int64_t ow_first = (g->left + 1) / 2, ow_last = (pitch(g) - g->kw + g->left) / 2;
    for (int64_t ow = 0; ow < ow_first && ow < g->out_w; ow++)
        cut_column(g, planes, v, e, out, ow);
    for (int64_t ow = ow_last + 1 > ow_first ? ow_last + 1 : ow_first; ow < g->out_w; ow++)
        cut_column(g, planes, v, e, out, ow);
    if (!g->is_max && g->normalize)
        cut_rows(g, planes, v, e, out);
}

static void horizontal(const ember_pool_step2 *g, int64_t planes, const float *v, float *out)
{
    const int64_t cells = planes * g->out_h * pitch(g), outputs = cells / 2;
    /* flat outputs [f0, f1) read cells [2·f0 − left, 2·(f1 − 1) − left + kw) of V */
    const int64_t f0 = (g->left + 1) / 2;
    int64_t f1 = (cells - g->kw + g->left) / 2 + 1;
    f1 = f1 < outputs ? f1 : outputs;
    if (f1 <= f0)
        return;
    const float *from = v + 2 * f0 - g->left;
    const float divisor = g->normalize ? (float)(g->kh * g->kw) : 1.0f; /* all inside */
    if (g->kernel != NULL)
        g->kernel((size_t)(f1 - f0), &from, 1, (size_t)g->kw, g->is_max, divisor, out + f0);
    else
        ember_pool_step_interior(out + f0, from, f1 - f0, g->kw, 2, g->is_max, divisor);
}

void ember_pool_step2_planes(const ember_pool_step2 *g, int64_t planes, const float *in,
                             float *out, float *scratch)
{
    const int64_t stack = stack_planes(g), in_size = g->h * g->w;
    const int64_t out_size = g->out_h * g->out_w;
    float *v = scratch, *e = scratch + stack * g->out_h * pitch(g) + 1;
    for (int64_t p = 0; p < planes; p += stack) {
        const int64_t n = planes - p < stack ? planes - p : stack;
        vertical(g, n, in + p * in_size, v, e);
        horizontal(g, n, v, out + p * out_size);
        redo(g, n, v, e, out + p * out_size);
    }
}
