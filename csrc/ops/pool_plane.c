/*
 * Stride-1 pools whose output keeps the input's size (3×3 padded by 1: Inception's
 * average pools and its last max pool), a stack of planes at a time. pool.c's per-row
 * path pays a fixed cost per output row (a row copy, border windows, short loops), which
 * at 7–28 columns outweighs the arithmetic; here every pass is one loop over the whole
 * stack, the planes taken as one tall image, and only the cells a plane's edge cuts are
 * redone, in loops that run across the stack too:
 *
 *   1. vertical: V[oh][x] = ⊕ of the input rows oh - top + t that lie inside the plane.
 *      Flat over the stack with every t, which is right for a plane's interior rows;
 *      its border rows (top above, kh - 1 - top below), which reached into the next
 *      plane, are redone from the rows they have, one loop per border row and plane;
 *   2. horizontal: out[i] = ⊕ V[i - left + s] over the stack taken flat, right for every
 *      column whose window lies inside its row; the border columns (kw - 1 per row) are
 *      redone from the cells of their row that are inside, one strided loop per border
 *      column down the whole stack;
 *   3. average: each sum divided by its cell count (kh · kw or, for border = ignore, the
 *      cells inside), as the reference divides, through a map of one plane's divisors
 *      made at prepare.
 * Padded cells never win a max, as in pool.c. Each output folds the same values in the
 * same order as the plane-at-a-time form this replaced, so the bits are unchanged; with
 * a plane at a time, Inception v2's pools on 7×7 and 14×14 planes (1024 and 576 of them)
 * took 4-5x onnxruntime's time, the fixed cost of ~10 short loops per plane.
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

/* y[i] = (a[i] ⊕ b[i]) ⊕ c[i]: a 3-wide window's pass in one loop, its three loads and one
 * store per value where combine_two and combine took six memory operations, folded in
 * the same order (bench_ab, Cascade Lake: a 3×3 stride-1 average pool 256×28×28 took
 * 0.79x the time, Inception v2 0.992x; outputs identical). */
static void combine_three(float *restrict y, const float *a, const float *b, const float *c,
                          int64_t n, int is_max)
{
    int64_t i = 0;
    if (is_max) {
        for (; i + BLOCK <= n; i += BLOCK)
            for (int k = 0; k < BLOCK; k++) {
                const float ab = b[i + k] > a[i + k] ? b[i + k] : a[i + k];
                y[i + k] = c[i + k] > ab ? c[i + k] : ab;
            }
        for (; i < n; i++) {
            const float ab = b[i] > a[i] ? b[i] : a[i];
            y[i] = c[i] > ab ? c[i] : ab;
        }
        return;
    }
    for (; i + BLOCK <= n; i += BLOCK)
        for (int k = 0; k < BLOCK; k++)
            y[i + k] = (a[i + k] + b[i + k]) + c[i + k];
    for (; i < n; i++)
        y[i] = (a[i] + b[i]) + c[i];
}

void ember_pool_combine_rows(float *restrict y, const float *x, int64_t step, int64_t terms,
                             int64_t n, int is_max)
{
    if (terms == 1) {
        memcpy(y, x, (size_t)n * sizeof(float));
        return;
    }
    if (terms == 3) {
        combine_three(y, x, x + step, x + 2 * step, n, is_max);
        return;
    }
    combine_two(y, x, x + step, n, is_max);
    for (int64_t t = 2; t < terms; t++)
        combine(y, x + t * step, n, is_max);
}

/* The window rows t in [*t_lo, *t_hi] inside the plane for output row oh. */
static void row_taps(const ember_pool_plane *g, int64_t oh, int64_t *t_lo, int64_t *t_hi)
{
    *t_lo = g->top - oh > 0 ? g->top - oh : 0;
    *t_hi = g->h - 1 - oh + g->top < g->kh - 1 ? g->h - 1 - oh + g->top : g->kh - 1;
}

/* The window columns' cells [*first, *last] inside the row for output column ow. */
static void column_cells(const ember_pool_plane *g, int64_t ow, int64_t *first, int64_t *last)
{
    *first = ow - g->left > 0 ? ow - g->left : 0;
    *last = ow - g->left + g->kw - 1 < g->w - 1 ? ow - g->left + g->kw - 1 : g->w - 1;
}

/* Planes per pass: the stack's V stays in L1 beside the output it is pooled into (at
 * least one plane); at 8192 floats V alone filled a 32 KiB L1 (bench_ab, Cascade Lake,
 * 4096 against 8192: 3×3 average pools 576×14×14 0.95x the time, 256×28×28 0.94x). */
#define STACK_FLOATS 4096

static int64_t stack_planes(const ember_pool_plane *g)
{
    const int64_t planes = STACK_FLOATS / (g->h * g->w);
    return planes > 1 ? planes : 1;
}

size_t ember_pool_same_scratch_floats(const ember_pool_plane *g)
{
    return (size_t)(stack_planes(g) * g->h * g->w); /* the stack's V */
}

static void vertical(const ember_pool_plane *g, int64_t planes, const float *in, float *v)
{
    const int64_t size = g->h * g->w, below = g->kh - 1 - g->top;
    const int64_t rows = planes * g->h - g->top - below; /* flat, from stack row top */
    if (rows > 0)
        ember_pool_combine_rows(v + g->top * g->w, in, g->w, g->kh, rows * g->w, g->is_max);
    for (int64_t oh = 0; oh < g->h; oh++) {
        if (oh >= g->top && oh < g->h - below)
            continue; /* an interior row: the flat pass had it right */
        int64_t t_lo, t_hi;
        row_taps(g, oh, &t_lo, &t_hi);
        const float *rows_in = in + (oh - g->top + t_lo) * g->w;
        for (int64_t q = 0; q < planes; q++)
            ember_pool_combine_rows(v + q * size + oh * g->w, rows_in + q * size, g->w,
                                    t_hi - t_lo + 1, g->w, g->is_max);
    }
}

/* Border column ow of every row of the stack: the ⊕ of its row's V cells inside. */
static void border_column(const ember_pool_plane *g, int64_t rows, const float *v, float *out,
                          int64_t ow)
{
    int64_t first, last;
    column_cells(g, ow, &first, &last);
    const float *cell = v;
    float *o = out + ow;
    if (g->is_max) {
        for (int64_t r = 0; r < rows; r++, cell += g->w, o += g->w) {
            float acc = cell[first];
            for (int64_t x = first + 1; x <= last; x++)
                acc = cell[x] > acc ? cell[x] : acc;
            *o = acc;
        }
        return;
    }
    for (int64_t r = 0; r < rows; r++, cell += g->w, o += g->w) {
        float acc = cell[first];
        for (int64_t x = first + 1; x <= last; x++)
            acc += cell[x];
        *o = acc;
    }
}

static void horizontal(const ember_pool_plane *g, int64_t planes, const float *v, float *out)
{
    const int64_t right = g->kw - 1 - g->left, n = planes * g->h * g->w - g->left - right;
    if (n > 0)
        ember_pool_combine_rows(out + g->left, v, 1, g->kw, n, g->is_max);
    const int64_t left_end = g->left < g->w ? g->left : g->w;
    const int64_t right_start = g->w - right > left_end ? g->w - right : left_end;
    for (int64_t ow = 0; ow < left_end; ow++)
        border_column(g, planes * g->h, v, out, ow);
    for (int64_t ow = right_start; ow < g->w; ow++)
        border_column(g, planes * g->h, v, out, ow);
}

void ember_pool_same_divisors(const ember_pool_plane *g, float *d)
{
    for (int64_t oh = 0; oh < g->h; oh++) {
        int64_t t_lo, t_hi;
        row_taps(g, oh, &t_lo, &t_hi);
        for (int64_t ow = 0; ow < g->w; ow++) {
            int64_t first, last;
            column_cells(g, ow, &first, &last);
            const int64_t cells = (t_hi - t_lo + 1) * (last - first + 1);
            d[oh * g->w + ow] =
                (float)ember_pool_divisor(cells, g->kh * g->kw, g->divide_inside);
        }
    }
}

static void divide(const float *restrict d, int64_t size, int64_t planes, float *restrict out)
{
    for (int64_t q = 0; q < planes; q++, out += size)
        for (int64_t i = 0; i < size; i++)
            out[i] /= d[i];
}

void ember_pool_same_planes(const ember_pool_plane *g, int64_t planes, const float *in,
                            const float *divisors, float *out, float *v)
{
    const int64_t size = g->h * g->w, stack = stack_planes(g);
    const int divides = !g->is_max && g->normalize;
    for (int64_t p = 0; p < planes; p += stack) {
        const int64_t n = planes - p < stack ? planes - p : stack;
        vertical(g, n, in + p * size, v);
        horizontal(g, n, v, out + p * size);
        if (divides)
            divide(divisors, size, n, out + p * size);
    }
}
