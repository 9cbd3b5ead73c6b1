/*
 * The per-row path of pool.c: pools windowed over the last two dims only, undilated.
 * Per output row, the window's rows inside the input are first reduced column by column
 * into one row (scratch asked by prepare; contiguous, so the compiler vectorises it),
 * then each output takes its window's columns of that row. A k×k window then costs k
 * loads per input column plus k per output instead of k² per output, and neither loop
 * checks borders. Rows of a step-2 pool whose windows lie inside the row go through the
 * f32_pool_row kernel instead, straight from the input rows.
 */
#include <math.h>

#include "core/shape.h"
#include "ops/pool.h"

/* Max over the cells of a kw-wide window starting at `left` that fall inside [0, in_w). */
static float border_max(const float *acc, int64_t left, int64_t kw, int64_t in_w)
{
    float v = -INFINITY;
    for (int64_t j = left < 0 ? 0 : left; j < left + kw && j < in_w; j++)
        v = acc[j] > v ? acc[j] : v;
    return v;
}

/* The average of the cells of a kw-wide window starting at `left` that fall inside
 * [0, in_w), over `rows` rows summed in `acc`: the general loop's rule, for a border. */
static float average(const float *acc, int64_t left, int64_t kw, int64_t in_w, int64_t rows,
                     int64_t kh, int divide_inside, int normalize)
{
    float v = 0.0f;
    int64_t cells = 0;
    for (int64_t j = left < 0 ? 0 : left; j < left + kw && j < in_w; j++, cells++)
        v += acc[j];
    if (!normalize)
        return v;
    return ember_pool_mean(v, rows * cells, kh * kw, divide_inside);
}

/* The interior outputs of a 2- or 3-wide window row: out[i] = max of the kw cells from
 * cell[i·sw]. The steps 1 and 2 (nearly every pool) get loops of constant stride, which
 * the compiler vectorises; a variable stride stays scalar. */
static inline float max2(float a, float b)
{
    return b > a ? b : a;
}

#define INTERIOR_LOOPS(S)                                                                  \
    if (kw == 3)                                                                           \
        for (int64_t i = 0; i < n; i++)                                                    \
            out[i] = WINDOW3(cell[(S) * i], cell[(S) * i + 1], cell[(S) * i + 2]);         \
    else                                                                                   \
        for (int64_t i = 0; i < n; i++)                                                    \
            out[i] = WINDOW2(cell[(S) * i], cell[(S) * i + 1]);

/* The constant-stride loops for steps 1 and 2, a variable stride otherwise. */
#define INTERIOR_BY_STRIDE(sw)                                                             \
    if ((sw) == 1) {                                                                       \
        INTERIOR_LOOPS(1)                                                                  \
    } else if ((sw) == 2) {                                                                \
        INTERIOR_LOOPS(2)                                                                  \
    } else {                                                                               \
        INTERIOR_LOOPS(sw)                                                                 \
    }

static void interior_max(float *restrict out, const float *restrict cell, int64_t n, int64_t kw,
                         int64_t sw)
{
#define WINDOW3(a, b, c) max2(max2(a, b), c)
#define WINDOW2(a, b) max2(a, b)
    INTERIOR_BY_STRIDE(sw)
#undef WINDOW3
#undef WINDOW2
}

static void interior_average(float *restrict out, const float *restrict cell, int64_t n,
                             int64_t kw, int64_t sw, float divisor)
{
#define WINDOW3(a, b, c) ((a) + (b) + (c)) / divisor
#define WINDOW2(a, b) ((a) + (b)) / divisor
    INTERIOR_BY_STRIDE(sw)
#undef WINDOW3
#undef WINDOW2
}
#undef INTERIOR_BY_STRIDE
#undef INTERIOR_LOOPS

void ember_pool_step_interior(float *out, const float *cell, int64_t n, int64_t kw, int64_t sw,
                              int is_max, float divisor)
{
    if (is_max)
        interior_max(out, cell, n, kw, sw);
    else
        interior_average(out, cell, n, kw, sw, divisor);
}

/* The first n outputs of a row of a step-2 pool, whose windows lie inside the row,
 * through the f32_pool_row kernel straight from the window's rows inside the plane: no
 * combined row. (Rows with windows left of the row keep the per-row path: at 7-14
 * columns, as ShuffleNet's padded average pools have, its combined row serves the borders
 * for less.) */
static void step2_row(ember_f32_pool_row_fn kernel, const float *in, int64_t in_w,
                      int64_t rows, int64_t kh, int64_t kw, int64_t n, int is_max,
                      int divide_inside, int normalize, float *out)
{
    const float *row[EMBER_F32_POOL_ROW_MAX_KH];
    for (int64_t t = 0; t < rows; t++)
        row[t] = in + t * in_w;
    const float divisor =
        normalize ? (float)ember_pool_divisor(rows * kw, kh * kw, divide_inside) : 1.0f;
    kernel((size_t)n, row, (size_t)rows, (size_t)kw, is_max, divisor, out);
}

/* An average window's sum over its `rows` rows and columns [lo_w, hi_w] inside the
 * input, divided as the reference divides (the cells inside, or kh · kw). */
static float window_average(float sum, int64_t rows, int64_t lo_w, int64_t hi_w, int64_t kh,
                            int64_t kw, int divide_inside)
{
    const int64_t inside = hi_w >= lo_w ? rows * (hi_w - lo_w + 1) : 0;
    return ember_pool_mean(sum, inside, kh * kw, divide_inside);
}

/* The output whose window starts at column `left` of `rows` rows (at least one) and which
 * padding cuts short on the right, straight from the rows: each column's rows combined
 * first, then the columns, as the per-row path's combined row does, so the bits are its. */
static float cut_window(const float *in, int64_t in_w, int64_t rows, int64_t left,
                        int64_t kw, int64_t kh, int is_max, int divide_inside, int normalize)
{
    int64_t lo_w, hi_w;
    ember_pool_cells_inside(left, kw, 1, in_w, &lo_w, &hi_w);
    float v = is_max ? -INFINITY : 0.0f;
    for (int64_t j = left + lo_w; j <= left + hi_w; j++) {
        float cell = in[j];
        for (int64_t r = 1; r < rows; r++) {
            const float next = in[r * in_w + j];
            cell = is_max ? (next > cell ? next : cell) : cell + next;
        }
        v = is_max ? (cell > v ? cell : v) : v + cell;
    }
    return normalize ? window_average(v, rows, lo_w, hi_w, kh, kw, divide_inside) : v;
}

void ember_pool_planar_rows(const pool_attributes *a, int variant, const ember_tensor *x,
                            const ember_tensor *y, ember_f32_pool_row_fn step2, float *acc)
{
    const int h = x->rank - 2, w = x->rank - 1;
    const int64_t in_h = x->shape[h], in_w = x->shape[w];
    const int64_t out_h = y->shape[h], out_w = y->shape[w];
    const int64_t planes = ember_shape_count(x->shape, h);
    const int64_t kh = a->window[h], kw = a->window[w], sw = a->step[w], pw = a->pad_before[w];
    const int is_max = variant == MAX_POOL, divide_inside = a->border == BORDER_IGNORE;
    const int normalize = !is_max && a->normalize;
    /* Outputs [first, last] have their whole window inside the row. */
    const int64_t first = pw <= 0 ? 0 : (pw + sw - 1) / sw;
    int64_t last = in_w - kw + pw < 0 ? -1 : (in_w - kw + pw) / sw;
    if (last > out_w - 1)
        last = out_w - 1;
    /* the kernel for the windows inside the row (the prepared rule: none left of it); the
     * few right of it, which padding cuts short (Inception v2's 3×3 step-2 max pools end
     * on one), one by one */
    const ember_f32_pool_row_fn kernel = last >= 0 ? step2 : NULL;
    for (int64_t p = 0; p < planes; p++) {
        const float *in = (const float *)x->data + p * in_h * in_w;
        float *out = (float *)y->data + p * out_h * out_w;
        for (int64_t oh = 0; oh < out_h; oh++, out += out_w) {
            const int64_t top = oh * a->step[h] - a->pad_before[h];
            int64_t lo_h, hi_h;
            ember_pool_cells_inside(top, kh, 1, in_h, &lo_h, &hi_h);
            const int64_t rows = hi_h >= lo_h ? hi_h - lo_h + 1 : 0;
            const float *window_rows = rows > 0 ? in + (top + lo_h) * in_w : in;
            int64_t ow = 0;
            if (kernel != NULL && rows > 0) {
                step2_row(kernel, window_rows, in_w, rows, kh, kw, last + 1, is_max,
                          divide_inside, normalize, out);
                for (ow = last + 1; ow < out_w; ow++)
                    out[ow] = cut_window(window_rows, in_w, rows, ow * sw - pw, kw, kh, is_max,
                                         divide_inside, normalize);
                continue;
            }
            if (rows > 0)
                ember_pool_combine_rows(acc, window_rows, in_w, rows, in_w, is_max);
            /* Border outputs (window partly outside the row) by the general loop below;
             * the interior of 2- and 3-wide max windows straight. */
            if (is_max && rows > 0 && first <= last && (kw == 2 || kw == 3)) {
                for (; ow < first; ow++)
                    out[ow] = border_max(acc, ow * sw - pw, kw, in_w);
                interior_max(out + first, acc + (first * sw - pw), last - first + 1, kw, sw);
                ow = last + 1;
            }
            /* The interior of 2- and 3-wide average windows: every one holds rows × kw
             * cells, the divisor is the same (Inception's 3×3 stride-1 average pools
             * were 6% of the model through the general loop). */
            if (!is_max && rows > 0 && first <= last && (kw == 2 || kw == 3)) {
                for (; ow < first; ow++)
                    out[ow] = average(acc, ow * sw - pw, kw, in_w, rows, kh, divide_inside,
                                      normalize);
                const float divisor =
                    normalize ? (float)ember_pool_divisor(rows * kw, kh * kw, divide_inside)
                              : 1.0f;
                interior_average(out + first, acc + (first * sw - pw), last - first + 1, kw, sw,
                                 divisor);
                ow = last + 1;
            }
            for (; ow < out_w; ow++) {
                const int64_t left = ow * sw - pw;
                int64_t lo_w = 0, hi_w = kw - 1;
                if (ow < first || ow > last)
                    ember_pool_cells_inside(left, kw, 1, in_w, &lo_w, &hi_w);
                float v = is_max ? -INFINITY : 0.0f;
                if (rows > 0) { /* indices: `acc + left` may lie before the array */
                    if (is_max)
                        for (int64_t j = left + lo_w; j <= left + hi_w; j++)
                            v = acc[j] > v ? acc[j] : v;
                    else
                        for (int64_t j = left + lo_w; j <= left + hi_w; j++)
                            v += acc[j];
                }
                out[ow] = normalize ? window_average(v, rows, lo_w, hi_w, kh, kw, divide_inside)
                                    : v;
            }
        }
    }
}

