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
    const int64_t taps = ember_conv_taps(p);
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
                ember_move_floats(dst + i, src + i, 8);
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

/* Slack after each build buffer: a stride-1 run is moved in whole blocks of 8 floats,
 * so it may read up to 7 floats past its source and write up to 7 past its destination
 * (which the next run, written after it, overwrites). */
#define RUN_SLACK 8

/* n floats from src (every s-th when s > 1) to dst: short runs (an image row) in fixed
 * blocks the compiler inlines as vector moves, with no tail loop; stride 2 its own loop. */
static ALWAYS_INLINE void copy_run(float *restrict dst, const float *restrict src, int64_t s,
                                   int64_t n)
{
    if (s == 1) {
        for (int64_t i = 0; i < n; i += RUN_SLACK)
            ember_move_floats(dst + i, src + i, RUN_SLACK);
        return;
    }
    if (s == 2) { /* a constant stride the compiler vectorises (two loads, one shuffle):
                   * ResNet50's 3×3 128 -> 128 stride-2 conv 0.93-0.95x the time on x86 */
        for (int64_t i = 0; i < n; i++)
            dst[i] = src[2 * i];
        return;
    }
    for (int64_t i = 0; i < n; i++)
        dst[i] = src[i * s];
}

static ALWAYS_INLINE void zero_run(float *dst, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = 0.0f;
}

/* The input rows and columns output rows [oh0, oh1] of a 2-d conv read, zero-padded:
 * band row r is input row top + r (top = oh0·sh − pad_top), band column x input column
 * x − pad_left. */
typedef struct padded_band {
    int64_t oh0, top, height, width;
} padded_band;

static padded_band band_of(const conv_prepared *p, int64_t first, int64_t count)
{
    const int64_t out_w = p->out_dims[1], oh0 = first / out_w, oh1 = (first + count - 1) / out_w;
    const padded_band band = {oh0, oh0 * p->stride[0] - p->pad_before[0],
                              (oh1 - oh0) * p->stride[0] + (p->kernel_dims[0] - 1) * p->dilation[0] + 1,
                              (out_w - 1) * p->stride[1] + (p->kernel_dims[1] - 1) * p->dilation[1] + 1};
    return band;
}

static void fill_band(const conv_prepared *p, const float *plane, const padded_band *band,
                      float *dst)
{
    const int64_t in_h = p->in_dims[0], in_w = p->in_dims[1], left = p->pad_before[1];
    const int64_t x0 = left > 0 ? left : 0;                              /* inside: [x0, x1) */
    const int64_t x1 = in_w + left < band->width ? in_w + left : band->width;
    for (int64_t r = 0; r < band->height; r++, dst += band->width) {
        const int64_t y = band->top + r;
        if (y < 0 || y >= in_h || x0 >= x1) {
            zero_run(dst, band->width);
            continue;
        }
        zero_run(dst, x0);
        memcpy(dst + x0, plane + y * in_w + (x0 - left), (size_t)(x1 - x0) * sizeof(float));
        zero_run(dst + x1, band->width - x1);
    }
}

/* Row (kh, kw) of one channel's im2col for pixels [first, first + count), from its
 * padded band: per output row one copy (contiguous for stride 1), no border cases. */
static void im2col_row_2d(const conv_prepared *p, const float *band_data,
                          const padded_band *band, int64_t kh, int64_t kw, int64_t first,
                          int64_t count, float *row)
{
    const int64_t out_w = p->out_dims[1], sh = p->stride[0], sw = p->stride[1];
    const float *tap = band_data + kh * p->dilation[0] * band->width + kw * p->dilation[1];
    int64_t oh = first / out_w, ow = first % out_w;
    for (int64_t j = 0; j < count; oh++, ow = 0) {
        const int64_t run = out_w - ow < count - j ? out_w - ow : count - j;
        copy_run(row + j, tap + (oh - band->oh0) * sh * band->width + ow * sw, sw, run);
        j += run;
    }
}

/*
 * pack_im2col for 2-d convolutions, the common case: one channel's taps at a time, built
 * as plain rows (for nr = count they are the destination) from the channel's zero-padded
 * band, then packed into the panels by the GEMM's packing, which moves whole panel rows.
 * Writing the panels directly in pieces that end at panel edges, with the borders cut per
 * piece, cost 10+ instructions per value on small images (13-wide rows against 8-wide
 * panels).
 */
static void pack_im2col_2d(const conv_prepared *p, const float *input, int64_t channels,
                           int64_t first, int64_t count, int64_t nr, float *packed, float *rows)
{
    const int64_t taps = p->kernel_dims[0] * p->kernel_dims[1];
    padded_band band = band_of(p, first, count);
    float *band_data = rows + taps * p->block + RUN_SLACK;
    /* one tap, no padding and strided rows (a 1×1 stride-2 conv): no band to build, the
     * rows are read from the input planes (ResNet50's 1×1 stride-2 convs 0.97-0.98x the
     * time). Not for contiguous rows: their copy moves whole blocks past the row's end. */
    const int in_place = taps == 1 && p->pad_before[0] == 0 && p->pad_before[1] == 0 &&
                         p->stride[1] > 1;
    if (in_place)
        band.width = p->in_dims[1];
    for (int64_t c = 0; c < channels; c++) {
        const float *source = band_data;
        if (in_place)
            source = input + c * p->in_pixels + band.top * p->in_dims[1];
        else
            fill_band(p, input + c * p->in_pixels, &band, band_data);
        float *dst = nr == count ? packed + c * taps * count : rows;
        for (int64_t kh = 0; kh < p->kernel_dims[0]; kh++)
            for (int64_t kw = 0; kw < p->kernel_dims[1]; kw++)
                im2col_row_2d(p, source, &band, kh, kw, first, count,
                              dst + (kh * p->kernel_dims[1] + kw) * count);
        if (nr != count)
            ember_f32_pack_b_rows((size_t)nr, (size_t)taps, (size_t)count, rows, (size_t)count,
                                  1, packed + c * taps * nr, (size_t)(nr * channels * taps));
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
static void pack_im2col_nd(const conv_prepared *p, const float *input, int64_t channels,
                           int64_t first, int64_t count, size_t nr, float *packed)
{
    const int64_t depth = channels * ember_conv_taps(p);
    const int last = p->spatial - 1;
    const int64_t s = p->stride[last];
    int64_t start[MAX_SPATIAL], kpos[MAX_SPATIAL] = {0};
    int64_t rest = first;
    for (int d = last; d >= 0; d--) {
        start[d] = rest % p->out_dims[d];
        rest /= p->out_dims[d];
    }
    int64_t channel = 0;
    for (int64_t k = 0; k < depth; k++) {
        int64_t offset[MAX_SPATIAL], coord[MAX_SPATIAL];
        for (int d = 0; d <= last; d++) {
            offset[d] = kpos[d] * p->dilation[d] - p->pad_before[d];
            coord[d] = start[d];
        }
        /* outputs along the last dim whose tap is inside */
        const int64_t lo = p->tap_range[2 * kpos[last]], hi = p->tap_range[2 * kpos[last] + 1];
        const float *plane = input + channel * p->in_pixels;
        panel_cursor cursor = {packed + (size_t)k * nr, 0, nr, nr * (size_t)depth};
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
    if (p->spatial != 2)
        return 0;
    /* the rows of one channel's taps, then the largest band a block of pixels reads
     * (a block spans at most block / out_w + 2 output rows) */
    const int64_t out_w = p->out_dims[1];
    int64_t rows = p->block / out_w + 2;
    rows = rows < p->out_dims[0] ? rows : p->out_dims[0];
    const padded_band band = band_of(p, 0, rows * out_w);
    return (size_t)(p->kernel_dims[0] * p->kernel_dims[1] * p->block + RUN_SLACK +
                    band.height * band.width + RUN_SLACK);
}

void ember_conv_pack_im2col(const conv_prepared *p, const float *input, int64_t channels,
                            int64_t first, int64_t count, size_t nr, float *packed, float *rows)
{
    if (p->spatial == 2)
        pack_im2col_2d(p, input, channels, first, count, (int64_t)nr, packed, rows);
    else
        pack_im2col_nd(p, input, channels, first, count, nr, packed);
}
