/*
 * im2col for conv.c: the columns of one group's im2col matrix, a block of output pixels
 * at a time, written straight into the GEMM's packed-B panels (see conv.c's header), and
 * the per-tap tables prepare computes for it.
 */
#include <stdlib.h>
#include <string.h>

#include "core/shape.h"
#include "ops/conv.h"

/* The cursor's steps are a few floats each: called, they cost as much as the copying
 * (a 3x3 conv 128 -> 32 at 56x56: 5.0 -> 4.6 ms once inlined). */
#if defined(__GNUC__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif

/* one_pixel: where each kernel position of the one output pixel reads its channel. */
ember_status ember_conv_pixel_taps(conv_prepared *p, const ember_node *node)
{
    const int64_t taps = p->depth / p->group_in;
    p->pixel_taps = malloc((size_t)taps * sizeof *p->pixel_taps + 1);
    if (p->pixel_taps == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    int64_t kpos[MAX_SPATIAL] = {0};
    for (int64_t t = 0; t < taps; t++) {
        int64_t offset = 0;
        for (int d = 0; d < p->spatial && offset >= 0; d++) {
            const int64_t i = kpos[d] * p->dilation[d] - p->pad_before[d];
            offset = i >= 0 && i < p->in_dims[d] ? offset + i * p->in_strides[d] : -1;
        }
        p->pixel_taps[t] = offset;
        for (int d = p->spatial - 1; d >= 0 && ++kpos[d] == p->kernel_dims[d]; d--)
            kpos[d] = 0;
    }
    return EMBER_OK;
}

ember_status ember_conv_tap_ranges(conv_prepared *p, const ember_node *node)
{
    const int last = p->spatial - 1;
    p->tap_range = malloc(2 * (size_t)p->kernel_dims[last] * sizeof *p->tap_range + 1);
    if (p->tap_range == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    for (int64_t k = 0; k < p->kernel_dims[last]; k++)
        ember_conv_valid_range(k * p->dilation[last] - p->pad_before[last], p->stride[last],
                               p->in_dims[last], p->out_dims[last], &p->tap_range[2 * k],
                               &p->tap_range[2 * k + 1]);
    return EMBER_OK;
}

/* Where pack_im2col writes next: column `column` of the current panel row; a row of a
 * panel is nr floats, and the same row of the next panel is `step` floats further. */
typedef struct panel_cursor {
    float *row;
    size_t column, nr, step;
} panel_cursor;

static ALWAYS_INLINE void cursor_zero(panel_cursor *c, int64_t n)
{
    while (n > 0) {
        const size_t m = c->nr - c->column < (uint64_t)n ? c->nr - c->column : (size_t)n;
        memset(c->row + c->column, 0, m * sizeof(float));
        n -= (int64_t)m;
        if ((c->column += m) == c->nr) {
            c->column = 0;
            c->row += c->step;
        }
    }
}

/* n values plane[at], plane[at + s], …: contiguous copies when s = 1. */
static ALWAYS_INLINE void cursor_copy(panel_cursor *c, const float *plane, int64_t at,
                                      int64_t s, int64_t n)
{
    while (n > 0) {
        const size_t m = c->nr - c->column < (uint64_t)n ? c->nr - c->column : (size_t)n;
        float *restrict dst = c->row + c->column;
        const float *restrict src = plane + at;
        if (s == 1) { /* short runs: fixed blocks of 8 (inlined), not a memcpy call */
            size_t i = 0;
            for (; i + 8 <= m; i += 8)
                for (size_t t = 0; t < 8; t++)
                    dst[i + t] = src[i + t];
            for (; i < m; i++)
                dst[i] = src[i];
        } else
            for (size_t i = 0; i < m; i++)
                dst[i] = src[(int64_t)i * s];
        n -= (int64_t)m;
        at += (int64_t)m * s;
        if ((c->column += m) == c->nr) {
            c->column = 0;
            c->row += c->step;
        }
    }
}

/* n floats from src (every s-th when s > 1) to dst: short runs (an image row) in fixed
 * blocks the compiler inlines as vector moves, not a memcpy call each. */
static ALWAYS_INLINE void copy_run(float *restrict dst, const float *restrict src, int64_t s,
                                   int64_t n)
{
    int64_t i = 0;
    if (s == 1) {
        for (; i + 8 <= n; i += 8)
            memcpy(dst + i, src + i, 8 * sizeof(float));
        for (; i + 4 <= n; i += 4)
            memcpy(dst + i, src + i, 4 * sizeof(float));
    }
    for (; i < n; i++)
        dst[i] = src[i * s];
}

static ALWAYS_INLINE void zero_run(float *dst, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = 0.0f;
}

/* Row (kh, kw) of one channel's im2col for pixels [first, first + count): per output row
 * a zero border, one copy (contiguous for stride 1) and a border. */
static void im2col_row_2d(const conv_prepared *p, const float *plane, int64_t kh, int64_t kw,
                          int64_t first, int64_t count, float *row)
{
    const int64_t out_w = p->out_dims[1], in_h = p->in_dims[0], in_w = p->in_dims[1];
    const int64_t sw = p->stride[1];
    const int64_t lo = p->tap_range[2 * kw], hi = p->tap_range[2 * kw + 1];
    const int64_t dx = kw * p->dilation[1] - p->pad_before[1];
    const int64_t dy = kh * p->dilation[0] - p->pad_before[0];
    int64_t oh = first / out_w, ow = first % out_w;
    for (int64_t j = 0; j < count; oh++, ow = 0) {
        const int64_t run = out_w - ow < count - j ? out_w - ow : count - j;
        const int64_t ih = oh * p->stride[0] + dy;
        const int64_t a = lo > ow ? lo : ow;                 /* valid outputs */
        const int64_t b = hi < ow + run - 1 ? hi : ow + run - 1;
        if (ih >= 0 && ih < in_h && a <= b) {
            zero_run(row + j, a - ow);
            copy_run(row + j + (a - ow), plane + ih * in_w + a * sw + dx, sw, b - a + 1);
            zero_run(row + j + (b - ow) + 1, ow + run - 1 - b);
        } else {
            zero_run(row + j, run);
        }
        j += run;
    }
}

/*
 * pack_im2col for 2-d convolutions, the common case: one channel's taps at a time, built
 * as plain rows (for nr = count they are the destination), then packed into the panels
 * by the GEMM's packing, which moves whole panel rows. Writing the panels directly in
 * pieces that end at panel edges cost 10+ instructions per value on small images (13
 * wide rows against 8-wide panels); this costs about 2.
 */
static void pack_im2col_2d(const conv_prepared *p, const float *input, int64_t first,
                           int64_t count, int64_t nr, float *packed, float *rows)
{
    const int64_t taps = p->kernel_dims[0] * p->kernel_dims[1];
    for (int64_t c = 0; c < p->group_in; c++) {
        const float *plane = input + c * p->in_pixels;
        float *dst = nr == count ? packed + c * taps * count : rows;
        for (int64_t kh = 0; kh < p->kernel_dims[0]; kh++)
            for (int64_t kw = 0; kw < p->kernel_dims[1]; kw++)
                im2col_row_2d(p, plane, kh, kw, first, count,
                              dst + (kh * p->kernel_dims[1] + kw) * count);
        if (nr != count)
            ember_f32_pack_b_rows((size_t)nr, (size_t)taps, (size_t)count, rows, (size_t)count,
                                  1, packed + c * taps * nr, (size_t)(nr * p->depth));
    }
}

/*
 * Columns [first, first + count) of the im2col matrix of one group, written directly in
 * packed-B layout: panel t holds columns [t·nr, t·nr + nr) as `depth` groups of nr
 * floats. Row k of the matrix is tap k = (channel c, kernel position kpos); column j is
 * output pixel j. Rows are the outer loop so the kernel offsets are computed once per
 * row; along a row, pixels advance along the last spatial dim in runs. The output range
 * whose input stays inside the last dim is computed once per tap, so a run is zeros, one
 * copy (contiguous for stride 1) and zeros, with no per-element check.
 */
static void pack_im2col_nd(const conv_prepared *p, const float *input, int64_t first,
                           int64_t count, size_t nr, float *packed)
{
    const int last = p->spatial - 1;
    const int64_t s = p->stride[last];
    int64_t start[MAX_SPATIAL], kpos[MAX_SPATIAL] = {0};
    int64_t rest = first;
    for (int d = last; d >= 0; d--) {
        start[d] = rest % p->out_dims[d];
        rest /= p->out_dims[d];
    }
    int64_t channel = 0;
    for (int64_t k = 0; k < p->depth; k++) {
        int64_t offset[MAX_SPATIAL], coord[MAX_SPATIAL];
        for (int d = 0; d <= last; d++) {
            offset[d] = kpos[d] * p->dilation[d] - p->pad_before[d];
            coord[d] = start[d];
        }
        /* outputs along the last dim whose tap is inside */
        const int64_t lo = p->tap_range[2 * kpos[last]], hi = p->tap_range[2 * kpos[last] + 1];
        const float *plane = input + channel * p->in_pixels;
        panel_cursor cursor = {packed + (size_t)k * nr, 0, nr, nr * (size_t)p->depth};
        for (int64_t j = 0; j < count;) {
            /* A run of pixels sharing every coordinate but the last. */
            const int64_t c0 = coord[last];
            int64_t run = p->out_dims[last] - c0;
            if (run > count - j)
                run = count - j;
            int inside = 1;
            int64_t base = 0;
            for (int d = 0; d < last; d++) {
                const int64_t i = coord[d] * p->stride[d] + offset[d];
                inside &= i >= 0 && i < p->in_dims[d];
                base += i * p->in_strides[d];
            }
            const int64_t a = lo > c0 ? lo : c0, b = hi < c0 + run - 1 ? hi : c0 + run - 1;
            if (inside && a <= b) {
                cursor_zero(&cursor, a - c0);
                cursor_copy(&cursor, plane, base + a * s + offset[last], s, b - a + 1);
                cursor_zero(&cursor, c0 + run - 1 - b);
            } else {
                cursor_zero(&cursor, run);
            }
            j += run;
            coord[last] += run;
            for (int d = last; d > 0 && coord[d] == p->out_dims[d]; d--) {
                coord[d] = 0;
                coord[d - 1]++;
            }
        }
        if (cursor.column != 0) /* the last panel's padding columns */
            cursor_zero(&cursor, (int64_t)(nr - cursor.column));
        /* Next tap: the last kernel dim moves fastest, then the channel. */
        int d = last;
        for (; d >= 0; d--) {
            if (++kpos[d] < p->kernel_dims[d])
                break;
            kpos[d] = 0;
        }
        if (d < 0)
            channel++;
    }
}

size_t ember_conv_im2col_rows_floats(const conv_prepared *p)
{
    return p->spatial == 2 ? (size_t)(p->kernel_dims[0] * p->kernel_dims[1] * p->block) : 0;
}

void ember_conv_pack_im2col(const conv_prepared *p, const float *input, int64_t first,
                            int64_t count, size_t nr, float *packed, float *rows)
{
    if (p->spatial == 2)
        pack_im2col_2d(p, input, first, count, (int64_t)nr, packed, rows);
    else
        pack_im2col_nd(p, input, first, count, nr, packed);
}
