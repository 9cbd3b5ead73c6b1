/*
 * Pool paths shared between pool.c (attributes, the general loop, prepare and run),
 * pool_rows.c (the per-row path), pool_plane.c (stride-1 pools that keep the plane's
 * size, a stack of planes at a time) and pool_step2.c (step-2 pools onto half the plane,
 * likewise).
 */
#ifndef EMBER_OPS_POOL_H
#define EMBER_OPS_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "core/op.h"

enum { MAX_POOL, AVG_POOL, BOX };
enum { BORDER_CONSTANT, BORDER_IGNORE };

typedef struct pool_attributes {
    int64_t size[EMBER_MAX_RANK];
    int size_count;
    int border;
    int64_t padding_before[EMBER_MAX_RANK], padding_after[EMBER_MAX_RANK];
    int padding_count; /* 0: automatic */
    int64_t stride[EMBER_MAX_RANK];
    int stride_count;
    int64_t dilation[EMBER_MAX_RANK];
    int dilation_count;
    int normalize;
    /* Resolved by infer: one entry per input dim. */
    int64_t window[EMBER_MAX_RANK], pad_before[EMBER_MAX_RANK];
    int64_t step[EMBER_MAX_RANK], dilate[EMBER_MAX_RANK];
} pool_attributes;

/* The window cells [*lo, *hi] that land inside [0, extent) for a window starting at
 * input index `start`, with `cells` cells `dilation` apart. Empty when *lo > *hi. */
void ember_pool_cells_inside(int64_t start, int64_t cells, int64_t dilation, int64_t extent,
                             int64_t *lo, int64_t *hi);

/* The per-row path (pool_rows.c) of a pool windowed over x's last two dims only,
 * undilated: `acc` is scratch of one input row; `step2` the f32_pool_row kernel for the
 * rows whose windows lie inside the row, or NULL. */
void ember_pool_planar_rows(const pool_attributes *a, int variant, const ember_tensor *x,
                            const ember_tensor *y, ember_f32_pool_row_fn step2, float *acc);

/* y = ⊕ of the `terms` (≥ 1) rows x, x + step, x + 2·step, … over n items: the max
 * (is_max) or the sum, taken in that order. y must not overlap the rows. */
void ember_pool_combine_rows(float *y, const float *x, int64_t step, int64_t terms, int64_t n,
                             int is_max);

/* The divisor of an average window with `inside` of its `window` cells inside the input:
 * those cells (border = ignore) or all of them. 0 for a window wholly outside, whose
 * average is then 0 (ember_pool_mean). */
static inline int64_t ember_pool_divisor(int64_t inside, int64_t window, int divide_inside)
{
    return divide_inside ? inside : window;
}

/* A window's sum divided as the reference divides. */
static inline float ember_pool_mean(float sum, int64_t inside, int64_t window, int divide_inside)
{
    const int64_t divisor = ember_pool_divisor(inside, window, divide_inside);
    return divisor > 0 ? sum / (float)divisor : 0.0f;
}

/* One plane's geometry for ember_pool_same_planes: an h × w input, a kh × kw undilated
 * window at stride 1, `top` / `left` cells of padding before (kh - 1 - top, kw - 1 - left
 * after), so the output is h × w too. */
typedef struct ember_pool_plane {
    int64_t h, w, kh, kw, top, left;
    int is_max;
    int normalize;      /* average: divide the sums */
    int divide_inside;  /* by the cells inside the input (border = ignore), else kh · kw */
} ember_pool_plane;

/* An average's divisor for each of a plane's h · w outputs, written to d (at prepare). */
void ember_pool_same_divisors(const ember_pool_plane *g, float *d);
/* Pools `planes` consecutive planes of `in` into `out`, averages divided by `divisors`
 * (ember_pool_same_divisors; unread for max and unnormalized sums), with scratch of
 * ember_pool_same_scratch_floats(g) floats. */
size_t ember_pool_same_scratch_floats(const ember_pool_plane *g);
void ember_pool_same_planes(const ember_pool_plane *g, int64_t planes, const float *in,
                            const float *divisors, float *out, float *scratch);

/* One plane's geometry for ember_pool_step2_planes: an h × w input (at least kh × kw)
 * pooled at step 2 into out_h × out_w, w = 2·out_w or 2·out_w + 1, by a kh × kw
 * undilated window (kw 2 or 3) with `top` < kh and `left` < kw cells of padding before,
 * every window starting inside the plane. */
typedef struct ember_pool_step2 {
    int64_t h, w, out_h, out_w, kh, kw, top, left;
    int is_max;
    int normalize;     /* average: divide the sums */
    int divide_inside; /* by the cells inside the input (border = ignore), else kh · kw */
    ember_f32_pool_row_fn kernel; /* the windows inside a row, or NULL: the per-row
                                     path's loop (ember_pool_step_interior) */
} ember_pool_step2;

/* Pools `planes` consecutive planes of `in` into `out` (pool_step2.c), with scratch of
 * ember_pool_step2_scratch_floats(g) floats. */
size_t ember_pool_step2_scratch_floats(const ember_pool_step2 *g);
void ember_pool_step2_planes(const ember_pool_step2 *g, int64_t planes, const float *in,
                             float *out, float *scratch);

/* out[i] = (⊕ of the kw (2 or 3) cells from cell[i·sw]) / divisor (sums only; max
 * ignores it), i < n: the per-row path's interior loop (pool_rows.c). */
void ember_pool_step_interior(float *out, const float *cell, int64_t n, int64_t kw, int64_t sw,
                              int is_max, float divisor);

#endif
