/*
 * f32_winograd__body.h — the Winograd F(2×2, 3×3) transforms (kernels.h), written as plain
 * loops over tiles for the compiler to vectorise: included by generic/f32_winograd__scalar.c
 * (the reference, built with the baseline flags: SSE2 on x86-64, NEON on aarch64) and by
 * x86/f32_winograd__avx2_fma.c (the same loops at eight floats a vector). The transforms
 * are adds, subtracts and exact halvings, in one order, so every build gives the same bits.
 */
#ifndef EMBER_KERNELS_F32_WINOGRAD_BODY_H
#define EMBER_KERNELS_F32_WINOGRAD_BODY_H

#include "kernels/kernels.h"

#include <stddef.h>
#include <stdint.h>

/* For helpers whose vectors must stay in registers, or whose function-pointer argument
 * must become a direct call: as calls, GCC passed the x86 row transforms' sixteen vectors
 * through memory. */
#define WINOGRAD_ALWAYS_INLINE inline __attribute__((always_inline))

/* Tiles per pass of the input transform: its row transforms stay in a stack buffer. */
#define WINOGRAD_CHUNK 32
/* Floats of a padded line: the 2n + 2 columns a pass of n ≤ WINOGRAD_CHUNK tiles reads. */
#define WINOGRAD_LINE (2 * WINOGRAD_CHUNK + 2)

/* A row of a pass of n ≤ WINOGRAD_CHUNK tiles whose patches start at column x0 (tile t's
 * at x0 + 2t), readable over [0, 2n + 2): the row itself from x0 when those columns lie
 * inside [0, width), else copied into `line` with zeros outside (all zeros for a NULL
 * row). Only a pass at the image's edge copies. */
static inline const float *winograd_line(size_t n, const float *row, ptrdiff_t x0,
                                         ptrdiff_t width, float *line)
{
    const ptrdiff_t span = 2 * (ptrdiff_t)n + 2;
    if (row != NULL && x0 >= 0 && x0 + span <= width)
        return row + x0;
    /* the line's columns [lo, hi) are the row's */
    ptrdiff_t lo = x0 < 0 ? -x0 : 0, hi = width - x0;
    lo = lo < span ? lo : span;
    hi = row == NULL || hi < lo ? lo : hi < span ? hi : span;
    ptrdiff_t j = 0;
    for (; j < lo; j++)
        line[j] = 0.0f;
    for (; j < hi; j++)
        line[j] = row[x0 + j];
    for (; j < span; j++)
        line[j] = 0.0f;
    return line;
}

/* The address of column c of a row, c possibly negative: formed as an integer, as it may
 * lie before the row's object (a vector kernel's masked-off lanes, never read). */
static inline const float *winograd_column_address(const float *row, ptrdiff_t c)
{
    return (const float *)((uintptr_t)row + (uintptr_t)(c * (ptrdiff_t)sizeof(float)));
}

/* d B of n ≤ WINOGRAD_CHUNK tiles of one input row: r[q][t] (q < 4) from line[2t + q']. */
static inline void winograd_row(size_t n, const float *restrict line,
                                float (*restrict r)[WINOGRAD_CHUNK])
{
    for (size_t t = 0; t < n; t++) {
        const float d0 = line[2 * t], d1 = line[2 * t + 1];
        const float d2 = line[2 * t + 2], d3 = line[2 * t + 3];
        r[0][t] = d0 - d2;
        r[1][t] = d1 + d2;
        r[2][t] = d2 - d1;
        r[3][t] = d1 - d3;
    }
}

/* The input transform of n ≤ WINOGRAD_CHUNK tiles from four lines (tile t's patch at
 * lines[i][2t ..]). */
static inline void winograd_input_lines(size_t n, const float *const lines[4], float *v,
                                        size_t v_stride)
{
    float r[4][4][WINOGRAD_CHUNK]; /* [input row][column q of d B][tile] */
    for (size_t i = 0; i < 4; i++)
        winograd_row(n, lines[i], r[i]);
    for (size_t q = 0; q < 4; q++) { /* Bᵀ (d B), column q */
        float *restrict v0 = v + q * v_stride, *restrict v1 = v0 + 4 * v_stride;
        float *restrict v2 = v1 + 4 * v_stride, *restrict v3 = v2 + 4 * v_stride;
        const float *restrict r0 = r[0][q], *restrict r1 = r[1][q];
        const float *restrict r2 = r[2][q], *restrict r3 = r[3][q];
        for (size_t t = 0; t < n; t++) {
            v0[t] = r0[t] - r2[t];
            v1[t] = r1[t] + r2[t];
            v2[t] = r2[t] - r1[t];
            v3[t] = r1[t] - r3[t];
        }
    }
}

/* The four lines of the pass of `chunk` tiles from tile t0 (kernels.h's input form). */
static inline void winograd_pass_lines(size_t chunk, const float *const rows[4], ptrdiff_t x0,
                                       ptrdiff_t width, size_t t0,
                                       float (*buffers)[WINOGRAD_LINE], const float *lines[4])
{
    for (size_t i = 0; i < 4; i++)
        lines[i] = winograd_line(chunk, rows[i], x0 + 2 * (ptrdiff_t)t0, width, buffers[i]);
}

/* Whether the rows are readable over the n tiles' columns as they are (padded lines, or a
 * run inside the image). */
static inline int winograd_rows_inside(size_t n, const float *const rows[4], ptrdiff_t x0,
                                       ptrdiff_t width)
{
    return rows[0] != NULL && rows[1] != NULL && rows[2] != NULL && rows[3] != NULL &&
           x0 >= 0 && x0 + 2 * (ptrdiff_t)n + 2 <= width;
}

/* A transform of n ≤ WINOGRAD_CHUNK tiles from four lines (winograd_input_lines, or a
 * vector kernel's). */
typedef void (*winograd_lines_fn)(size_t n, const float *const lines[4], float *v,
                                  size_t v_stride);

/* The input transform of kernels.h's form through `transform`, a pass of at most
 * WINOGRAD_CHUNK tiles at a time: rows readable as they are (padded lines, or a run
 * inside the image) are passed on, one check a call; others are copied into lines.
 * Always inlined, so `transform` is a direct call (or inlined) in each kernel. */
static WINOGRAD_ALWAYS_INLINE void
winograd_input_by_lines(size_t n, const float *const rows[4], ptrdiff_t x0, ptrdiff_t width,
                        float *v, size_t v_stride, winograd_lines_fn transform)
{
    const int inside = winograd_rows_inside(n, rows, x0, width);
    for (size_t t0 = 0; t0 < n; t0 += WINOGRAD_CHUNK) {
        const size_t chunk = n - t0 < WINOGRAD_CHUNK ? n - t0 : WINOGRAD_CHUNK;
        float buffers[4][WINOGRAD_LINE];
        const float *lines[4];
        if (inside)
            for (size_t i = 0; i < 4; i++)
                lines[i] = rows[i] + x0 + 2 * (ptrdiff_t)t0;
        else
            winograd_pass_lines(chunk, rows, x0, width, t0, buffers, lines);
        transform(chunk, lines, v + t0, v_stride);
    }
}

static inline void winograd_input_body(size_t n, const float *const rows[4], ptrdiff_t x0,
                                       ptrdiff_t width, float *v, size_t v_stride)
{
    winograd_input_by_lines(n, rows, x0, width, v, v_stride, winograd_input_lines);
}

/* Aᵀ M A of n tiles: the four outputs of tile t into y0..y3[t]. One restrict pointer per
 * output and per M row read: written with y[q · n + t] and m[ξ · m_stride + t], GCC could
 * not tell the outputs apart and left the loop scalar (a 3×3 64 -> 192 conv at 56×56 on
 * AVX-512 spent a quarter of its time here). */
static inline void winograd_output_rows(size_t n, const float *const m[16], float bias,
                                        float *restrict y0, float *restrict y1,
                                        float *restrict y2, float *restrict y3)
{
    const float *restrict m0 = m[0], *restrict m1 = m[1], *restrict m2 = m[2];
    const float *restrict m3 = m[3], *restrict m4 = m[4], *restrict m5 = m[5];
    const float *restrict m6 = m[6], *restrict m7 = m[7], *restrict m8 = m[8];
    const float *restrict m9 = m[9], *restrict m10 = m[10], *restrict m11 = m[11];
    const float *restrict m12 = m[12], *restrict m13 = m[13], *restrict m14 = m[14];
    const float *restrict m15 = m[15];
    for (size_t t = 0; t < n; t++) {
        /* Aᵀ M: column q sums rows 0-2 (s0) and takes rows 1 − 2 − 3 (s1) */
        const float s00 = m0[t] + m4[t] + m8[t], s10 = m4[t] - m8[t] - m12[t];
        const float s01 = m1[t] + m5[t] + m9[t], s11 = m5[t] - m9[t] - m13[t];
        const float s02 = m2[t] + m6[t] + m10[t], s12 = m6[t] - m10[t] - m14[t];
        const float s03 = m3[t] + m7[t] + m11[t], s13 = m7[t] - m11[t] - m15[t];
        y0[t] = s00 + s01 + s02 + bias;
        y1[t] = s01 - s02 - s03 + bias;
        y2[t] = s10 + s11 + s12 + bias;
        y3[t] = s11 - s12 - s13 + bias;
    }
}

static inline void winograd_output_body(size_t n, const float *m, size_t m_stride, float bias,
                                        float *y)
{
    const float *rows[16];
    for (size_t xi = 0; xi < 16; xi++)
        rows[xi] = m + xi * m_stride;
    winograd_output_rows(n, rows, bias, y, y + n, y + 2 * n, y + 3 * n);
}

/* 0.5 · (a + b + c) and 0.5 · (a − b + c): G's rows 1 and 2 (the halving is exact). */
static inline float winograd_half_sum(float a, float b, float c)
{
    return 0.5f * (a + b + c);
}

static inline float winograd_half_difference(float a, float b, float c)
{
    return 0.5f * (a - b + c);
}

/* A row (x0, x1, x2) of G g times Gᵀ: its four entries of U, at element e. A macro: as an
 * inline function of its own restrict pointers, GCC left the loop scalar. */
#define EMBER_WINOGRAD_FILTER_ROW(x0, x1, x2, e, r0, r1, r2, r3)                           \
    do {                                                                                   \
        (r0)[e] = (x0);                                                                    \
        (r1)[e] = winograd_half_sum(x0, x1, x2);                                           \
        (r2)[e] = winograd_half_difference(x0, x1, x2);                                    \
        (r3)[e] = (x2);                                                                    \
    } while (0)

/* U = G g Gᵀ of n ≤ RUN elements: g's rows combined first (G g: rows 0 and 3 are g's rows 0
 * and 2, rows 1 and 2 halved sums), then each of those rows' columns (· Gᵀ, the same
 * combination), all in registers. One restrict pointer per output: with a stride alone
 * the compiler cannot tell the outputs apart and leaves the loop scalar. */
static inline void winograd_filter_run(size_t n, const float *restrict g, float *restrict u0,
                                       float *restrict u1, float *restrict u2,
                                       float *restrict u3, float *restrict u4,
                                       float *restrict u5, float *restrict u6,
                                       float *restrict u7, float *restrict u8,
                                       float *restrict u9, float *restrict u10,
                                       float *restrict u11, float *restrict u12,
                                       float *restrict u13, float *restrict u14,
                                       float *restrict u15)
{
    enum { RUN = EMBER_F32_WINOGRAD_FILTER_RUN };
    for (size_t e = 0; e < n; e++) {
        const float t0 = g[e], t1 = g[RUN + e], t2 = g[2 * RUN + e];
        const float t3 = g[3 * RUN + e], t4 = g[4 * RUN + e], t5 = g[5 * RUN + e];
        const float t6 = g[6 * RUN + e], t7 = g[7 * RUN + e], t8 = g[8 * RUN + e];
        /* G g, rows 1 and 2 */
        const float a0 = winograd_half_sum(t0, t3, t6);
        const float a1 = winograd_half_sum(t1, t4, t7);
        const float a2 = winograd_half_sum(t2, t5, t8);
        const float b0 = winograd_half_difference(t0, t3, t6);
        const float b1 = winograd_half_difference(t1, t4, t7);
        const float b2 = winograd_half_difference(t2, t5, t8);
        /* (G g) Gᵀ, a row of G g at a time */
        EMBER_WINOGRAD_FILTER_ROW(t0, t1, t2, e, u0, u1, u2, u3);
        EMBER_WINOGRAD_FILTER_ROW(a0, a1, a2, e, u4, u5, u6, u7);
        EMBER_WINOGRAD_FILTER_ROW(b0, b1, b2, e, u8, u9, u10, u11);
        EMBER_WINOGRAD_FILTER_ROW(t6, t7, t8, e, u12, u13, u14, u15);
    }
}
#undef EMBER_WINOGRAD_FILTER_ROW

/* GCC splits a plain copy out of the run's loop as a memmove call */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
static inline void winograd_filter_body(size_t n, const float *g, float *u, size_t u_stride)
{
    enum { RUN = EMBER_F32_WINOGRAD_FILTER_RUN };
    for (size_t e0 = 0; e0 < n; e0 += RUN, g += 9 * RUN) {
        float *o = u + e0;
        const size_t s = u_stride;
        winograd_filter_run(n - e0 < RUN ? n - e0 : RUN, g, o, o + s, o + 2 * s, o + 3 * s,
                            o + 4 * s, o + 5 * s, o + 6 * s, o + 7 * s, o + 8 * s, o + 9 * s,
                            o + 10 * s, o + 11 * s, o + 12 * s, o + 13 * s, o + 14 * s,
                            o + 15 * s);
    }
}

/* The output and filter entry points of a kernel file, for its ISA suffix; ..._DEFINE the
 * three (a file with an input transform of its own uses the first). */
#define EMBER_F32_WINOGRAD_DEFINE_OUTPUT_FILTER(suffix)                                    \
    void ember_f32_winograd_output__##suffix(size_t n, const float *m, size_t m_stride,   \
                                             float bias, float *y)                         \
    {                                                                                      \
        winograd_output_body(n, m, m_stride, bias, y);                                     \
    }                                                                                      \
    void ember_f32_winograd_filter__##suffix(size_t n, const float *g, float *u,          \
                                             size_t u_stride)                              \
    {                                                                                      \
        winograd_filter_body(n, g, u, u_stride);                                           \
    }

/* The input entry point, for its ISA suffix, calling `transform` (of the same form). */
#define EMBER_F32_WINOGRAD_DEFINE_INPUT(suffix, transform)                                 \
    void ember_f32_winograd_input__##suffix(size_t n, const float *const rows[4],         \
                                            ptrdiff_t x0, ptrdiff_t width, float *v,       \
                                            size_t v_stride)                               \
    {                                                                                      \
        transform(n, rows, x0, width, v, v_stride);                                        \
    }

#define EMBER_F32_WINOGRAD_DEFINE(suffix)                                                  \
    EMBER_F32_WINOGRAD_DEFINE_INPUT(suffix, winograd_input_body)                           \
    EMBER_F32_WINOGRAD_DEFINE_OUTPUT_FILTER(suffix)

#endif /* EMBER_KERNELS_F32_WINOGRAD_BODY_H */
