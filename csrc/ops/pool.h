/*
 * Pool paths shared between pool.c (attributes, the general and per-row paths) and
 * pool_plane.c (stride-1 pools that keep the plane's size, a whole plane at a time).
 */
#ifndef EMBER_OPS_POOL_H
#define EMBER_OPS_POOL_H

#include <stddef.h>
#include <stdint.h>

/* y = ⊕ of the `terms` (≥ 1) rows x, x + step, x + 2·step, … over n items: the max
 * (is_max) or the sum, taken in that order. y must not overlap the rows. */
void ember_pool_combine_rows(float *y, const float *x, int64_t step, int64_t terms, int64_t n,
                             int is_max);

/* One plane's geometry for ember_pool_same_planes: an h × w input, a kh × kw undilated
 * window at stride 1, `top` / `left` cells of padding before (kh - 1 - top, kw - 1 - left
 * after), so the output is h × w too. */
typedef struct ember_pool_plane {
    int64_t h, w, kh, kw, top, left;
    int is_max;
    int normalize;      /* average: divide the sums */
    int divide_inside;  /* by the cells inside the input (border = ignore), else kh · kw */
} ember_pool_plane;

/* Pools `planes` consecutive planes of `in` into `out`, with scratch of
 * ember_pool_same_scratch_floats(g) floats. */
size_t ember_pool_same_scratch_floats(const ember_pool_plane *g);
void ember_pool_same_planes(const ember_pool_plane *g, int64_t planes, const float *in,
                            float *out, float *scratch);

#endif
