/*
 * Step-2 pools whose input is exactly twice their output (h = 2·oh, w = 2·ow: the 3×3 and
 * 2×2 step-2 pools of ResNet, DenseNet, ShuffleNet and Inception, padded on either side),
 * a stack of planes at a time. The per-row path (pool_rows.c) pays a fixed cost per output
 * row — window bounds, a kernel call, the cut windows one by one — which at 7–28 outputs
 * a row outweighs the arithmetic (Inception v2's 576×14×14 max pool: ~60 ns a row, twice
 * onnxruntime's time). With the sizes exact, output row R of the stack taken as one tall
 * image reads input rows 2R − top + t, and output f of the stack taken flat reads
 * combined cells 2f − left + t, so:
 *
 *   1. vertical: V[R] = ⊕ of the input rows of row R's window inside its plane, a short
 *      fixed loop per row (no bounds for the interior rows, the rows inside for the
 *      plane's first and last);
 *   2. horizontal: out[f] = ⊕ of V[2f − left + t] for the whole stack in one call of the
 *      f32_pool_row kernel (or the per-row path's constant-stride loop), right for every
 *      output whose window lies inside its row and, for an average, whose rows all lie
 *      inside the plane (the divisor the kernel applies is theirs);
 *   3. the rest redone from V: the outputs whose window a row's end cuts (the first with
 *      padding on the left, the last with padding on the right) and, for an average,
 *      the rows a plane's edge cuts, each divided as the reference divides.
 *
 * Each output folds the same cells in the same order as the per-row path (its rows first,
 * then its columns), so the bits are unchanged.
 */
#include <math.h>

#include "ops/pool.h"

/* Input floats per stack: its V (half of them) stays near L1 (at least one plane). */
#define STACK_FLOATS 16384

static int64_t stack_planes(const ember_pool_step2 *g)
{
    const int64_t planes = STACK_FLOATS / (g->h * g->w);
    return planes > 1 ? planes : 1;
}

size_t ember_pool_step2_scratch_floats(const ember_pool_step2 *g)
{
    return (size_t)(stack_planes(g) * (g->h / 2) * g->w); /* the stack's V */
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

/* v[x] = ⊕ of rows src, src + w, … (terms of them), x < w: inline, as the interior rows
 * are short (7–56 cells) and many. */
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

static void vertical(const ember_pool_step2 *g, int64_t planes, const float *in, float *v)
{
    const int64_t out_h = g->h / 2, w = g->w;
    int64_t lo, hi;
    interior_rows(g, &lo, &hi);
    for (int64_t q = 0; q < planes; q++, in += g->h * w)
        for (int64_t oh = 0; oh < out_h; oh++, v += w) {
            if (oh >= lo && oh <= hi) {
                fold_rows(v, in + (2 * oh - g->top) * w, w, g->kh, g->is_max);
                continue;
            }
            int64_t first, last;
            rows_inside(g, oh, &first, &last);
            ember_pool_combine_rows(v, in + (2 * oh - g->top + first) * w, w, last - first + 1,
                                    w, g->is_max);
        }
}

/* ⊕ of cells [first, last] in column order, divided as an average of `rows` rows. */
static float window(const ember_pool_step2 *g, const float *cell, int64_t first, int64_t last,
                    int64_t rows)
{
    float v = cell[first];
    for (int64_t x = first + 1; x <= last; x++)
        v = g->is_max ? (cell[x] > v ? cell[x] : v) : v + cell[x];
    if (g->is_max || !g->normalize)
        return v;
    return ember_pool_mean(v, rows * (last - first + 1), g->kh * g->kw, g->divide_inside);
}

/* Output column ow of every row of the stack whose window rows are all inside, when a
 * row's end cuts its window: from the row's cells inside. */
static void cut_column(const ember_pool_step2 *g, int64_t planes, const float *v, float *out,
                       int64_t ow)
{
    const int64_t out_h = g->h / 2, out_w = g->w / 2;
    int64_t first, last, lo, hi;
    ember_pool_cells_inside(2 * ow - g->left, g->kw, 1, g->w, &first, &last);
    interior_rows(g, &lo, &hi);
    const int all_rows = g->is_max || !g->normalize; /* no divisor per row */
    v += 2 * ow - g->left;
    out += ow;
    for (int64_t q = 0; q < planes; q++)
        for (int64_t oh = 0; oh < out_h; oh++, v += g->w, out += out_w)
            if (all_rows || (oh >= lo && oh <= hi))
                *out = window(g, v, first, last, g->kh);
}

/* An average's rows whose windows a plane's edge cuts, every output of them redone with
 * its own divisor. */
static void cut_rows(const ember_pool_step2 *g, int64_t planes, const float *v, float *out)
{
    const int64_t out_h = g->h / 2, out_w = g->w / 2;
    int64_t lo, hi;
    interior_rows(g, &lo, &hi);
    for (int64_t q = 0; q < planes; q++)
        for (int64_t oh = 0; oh < out_h; oh++) {
            if (oh >= lo && oh <= hi)
                continue;
            int64_t first_row, last_row;
            rows_inside(g, oh, &first_row, &last_row);
            const float *row = v + (q * out_h + oh) * g->w;
            for (int64_t ow = 0; ow < out_w; ow++) {
                int64_t first, last;
                ember_pool_cells_inside(2 * ow - g->left, g->kw, 1, g->w, &first, &last);
                out[(q * out_h + oh) * out_w + ow] =
                    window(g, row + 2 * ow - g->left, first, last, last_row - first_row + 1);
            }
        }
}

/* The outputs of the stack the flat pass left wrong, redone from V. */
static void redo(const ember_pool_step2 *g, int64_t planes, const float *v, float *out)
{
    const int64_t out_w = g->w / 2;
    /* outputs [ow_first, ow_last] of a row have their window inside it */
    const int64_t ow_first = (g->left + 1) / 2, ow_last = (g->w - g->kw + g->left) / 2;
    for (int64_t ow = 0; ow < ow_first && ow < out_w; ow++)
        cut_column(g, planes, v, out, ow);
    for (int64_t ow = ow_last + 1 > ow_first ? ow_last + 1 : ow_first; ow < out_w; ow++)
        cut_column(g, planes, v, out, ow);
    if (!g->is_max && g->normalize)
        cut_rows(g, planes, v, out);
}

static void horizontal(const ember_pool_step2 *g, int64_t planes, const float *v, float *out)
{
    const int64_t cells = planes * (g->h / 2) * g->w, outputs = cells / 2;
    /* flat outputs [f0, f1) read cells [2·f0 − left, 2·(f1 − 1) − left + kw) of V */
    const int64_t f0 = (g->left + 1) / 2;
    int64_t f1 = (cells - g->kw + g->left) / 2 + 1;
    f1 = f1 < outputs ? f1 : outputs;
    if (f1 > f0) {
        const float *from = v + 2 * f0 - g->left;
        const float divisor =
            g->normalize ? (float)ember_pool_divisor(g->kh * g->kw, g->kh * g->kw, 0) : 1.0f;
        if (g->kernel != NULL)
            g->kernel((size_t)(f1 - f0), &from, 1, (size_t)g->kw, g->is_max, divisor,
                      out + f0);
        else
            ember_pool_step_interior(out + f0, from, f1 - f0, g->kw, 2, g->is_max, divisor);
    }
    redo(g, planes, v, out);
}

void ember_pool_step2_planes(const ember_pool_step2 *g, int64_t planes, const float *in,
                             float *out, float *v)
{
    const int64_t stack = stack_planes(g), in_size = g->h * g->w, out_size = in_size / 4;
    for (int64_t p = 0; p < planes; p += stack) {
        const int64_t n = planes - p < stack ? planes - p : stack;
        vertical(g, n, in + p * in_size, v);
        horizontal(g, n, v, out + p * out_size);
    }
}
