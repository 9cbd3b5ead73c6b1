/*
 * f32_dwconv__avx2_fma — depthwise-conv runs (kernels.h), AVX2 + FMA3.
 *
 * A pass over the taps computes up to 32 outputs: four accumulators, so four FMA chains
 * hide the FMA latency, each tap's load feeding its FMA directly (loads and FMAs both
 * near their ports' rate). Nine taps (3×3, the common case) keep their weights and input
 * pointers in registers across the run; other counts broadcast each weight per pass.
 * The tail (n mod 32, when n ≥ 8) is one more pass over as many vectors as it needs, the
 * last one ending at n: it recomputes a few outputs already stored, to the same value,
 * instead of masking. Only a run shorter than 8 uses masked loads and stores (masked-off
 * lanes touch no memory). Clamp operands are ordered so that NaN passes, as in the scalar
 * kernel.
 *
 * The 3×3 stride-2 run splits each kernel row's 16 floats under 8 outputs into even and
 * odd columns with in-lane shuffles only (vshufps of two loads): that leaves the outputs
 * in lane order 0 1 4 5 2 3 6 7, the same for every tap, so the accumulator is put in
 * order once, at the store (one vpermpd), not once per row. Per row and 8 outputs: four
 * loads, three shuffles, three FMAs, shared by the row's three taps.
 */
#include "kernels/kernels.h"

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#define ALWAYS_INLINE inline __attribute__((always_inline))

enum { V = 8, ACCUMULATORS = 4, CHUNK = V * ACCUMULATORS };

static inline __m256 clamp8(__m256 v, __m256 vmin, __m256 vmax)
{
    v = _mm256_max_ps(vmin, v); /* vmin > v ? vmin : v: NaN kept */
    return _mm256_min_ps(vmax, v);
}

/* One pass: outputs at a0.. a0 + 8, a1.., a2.., a3.. (positions may repeat). Nine taps
 * (`nine`, constant after inlining) use the weight vectors w9 and pointers s9 the caller
 * holds in registers, unrolled; other counts read src and broadcast w per tap. */
static ALWAYS_INLINE void pass(int nine, const __m256 *w9, const float *const *s9, size_t taps,
                               const float *const *src, const float *w, size_t a0, size_t a1,
                               size_t a2, size_t a3, float bias, float *out, __m256 vmin,
                               __m256 vmax)
{
    __m256 c0 = _mm256_set1_ps(bias), c1 = c0, c2 = c0, c3 = c0;
#define EMBER_TAP(s, wt)                                                                     \
    do {                                                                                     \
        c0 = _mm256_fmadd_ps(wt, _mm256_loadu_ps((s) + a0), c0);                             \
        c1 = _mm256_fmadd_ps(wt, _mm256_loadu_ps((s) + a1), c1);                             \
        c2 = _mm256_fmadd_ps(wt, _mm256_loadu_ps((s) + a2), c2);                             \
        c3 = _mm256_fmadd_ps(wt, _mm256_loadu_ps((s) + a3), c3);                             \
    } while (0)
    if (nine) {
#define EMBER_TAP_OF_NINE(t) EMBER_TAP(s9[t], w9[t]);
        EMBER_EACH_OF_NINE(EMBER_TAP_OF_NINE)
#undef EMBER_TAP_OF_NINE
    } else {
        for (size_t t = 0; t < taps; t++) {
            const __m256 wt = _mm256_broadcast_ss(w + t);
            EMBER_TAP(src[t], wt);
        }
    }
#undef EMBER_TAP
    _mm256_storeu_ps(out + a0, clamp8(c0, vmin, vmax));
    _mm256_storeu_ps(out + a1, clamp8(c1, vmin, vmax));
    _mm256_storeu_ps(out + a2, clamp8(c2, vmin, vmax));
    _mm256_storeu_ps(out + a3, clamp8(c3, vmin, vmax));
}

/* A tail pass's vector at a, moved back to end at n when it would run past (its last
 * vector starts at last = n − 8). */
static inline size_t at_most(size_t a, size_t last)
{
    return a < last ? a : last;
}

/* n ≥ 8: whole passes of 32, then one over the tail's vectors, the last at n − 8. */
static ALWAYS_INLINE void run(int nine, size_t n, size_t taps, const float *const *src,
                              const float *w, float bias, float *out, __m256 vmin, __m256 vmax)
{
    __m256 w9[9];
    const float *s9[9];
    for (int t = 0; nine && t < 9; t++) {
        w9[t] = _mm256_broadcast_ss(w + t);
        s9[t] = src[t];
    }
    size_t o = 0;
    for (; o + CHUNK <= n; o += CHUNK)
        pass(nine, w9, s9, taps, src, w, o, o + V, o + 2 * V, o + 3 * V, bias, out, vmin, vmax);
    if (o == n)
        return;
    const size_t last = n - V;
    pass(nine, w9, s9, taps, src, w, at_most(o, last), at_most(o + V, last),
         at_most(o + 2 * V, last), last, bias, out, vmin, vmax);
}

/* n < 8: one masked vector. */
static void short_run(size_t n, size_t taps, const float *const *src, const float *w,
                      float bias, float *out, __m256 vmin, __m256 vmax)
{
    const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n),
                                         _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    __m256 acc = _mm256_set1_ps(bias);
    for (size_t t = 0; t < taps; t++)
        acc = _mm256_fmadd_ps(_mm256_broadcast_ss(w + t), _mm256_maskload_ps(src[t], m), acc);
    _mm256_maskstore_ps(out, m, clamp8(acc, vmin, vmax));
}

void ember_f32_dwconv__avx2_fma(size_t n, size_t taps, const float *const *src,
                                const float *w, float bias, float *out,
                                const ember_f32_dwconv_params *params)
{
    const __m256 vmin = _mm256_set1_ps(params->min), vmax = _mm256_set1_ps(params->max);
    if (n < V) {
        if (n > 0)
            short_run(n, taps, src, w, bias, out, vmin, vmax);
        return;
    }
    if (taps == 9)
        run(1, n, taps, src, w, bias, out, vmin, vmax);
    else
        run(0, n, taps, src, w, bias, out, vmin, vmax);
}

/* 3×3 stride 2, one kernel row's three taps for 8 outputs from a row's floats x[0..17)
 * loaded as a = x[0..8), b = x[8..16), a2 = x[2..10), b9 = x[9..17) (x[16] the last
 * used), into acc in the lane order 0 1 4 5 2 3 6 7. */
static ALWAYS_INLINE __m256 taps_3x3s2(__m256 a, __m256 b, __m256 a2, __m256 b9,
                                       const __m256 *w, __m256 acc)
{
    acc = _mm256_fmadd_ps(w[0], _mm256_shuffle_ps(a, b, 0x88), acc);    /* x[2o] */
    acc = _mm256_fmadd_ps(w[1], _mm256_shuffle_ps(a, b, 0xDD), acc);    /* x[2o + 1] */
    return _mm256_fmadd_ps(w[2], _mm256_shuffle_ps(a2, b9, 0xD8), acc); /* x[2o + 2] */
}

static ALWAYS_INLINE __m256 row_3x3s2(const float *x, const __m256 *w, __m256 acc)
{
    return taps_3x3s2(_mm256_loadu_ps(x), _mm256_loadu_ps(x + 8), _mm256_loadu_ps(x + 2),
                      _mm256_loadu_ps(x + 9), w, acc);
}

/* Accumulator lanes 0 1 4 5 2 3 6 7 back in order: 64-bit pairs 0, 2, 1, 3. */
static inline __m256 in_order(__m256 v)
{
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), 0xD8));
}

/* One pass of the 3×3 stride-2 run: the 8 outputs at each of a0..a3 (may repeat). */
static ALWAYS_INLINE void pass_3x3s2(const float *const *row, const __m256 *w, size_t a0,
                                     size_t a1, size_t a2, size_t a3, float bias, float *out,
                                     __m256 vmin, __m256 vmax)
{
    __m256 c0 = _mm256_set1_ps(bias), c1 = c0, c2 = c0, c3 = c0;
    for (int r = 0; r < 3; r++) {
        c0 = row_3x3s2(row[r] + 2 * a0, w + 3 * r, c0);
        c1 = row_3x3s2(row[r] + 2 * a1, w + 3 * r, c1);
        c2 = row_3x3s2(row[r] + 2 * a2, w + 3 * r, c2);
        c3 = row_3x3s2(row[r] + 2 * a3, w + 3 * r, c3);
    }
    _mm256_storeu_ps(out + a0, clamp8(in_order(c0), vmin, vmax));
    _mm256_storeu_ps(out + a1, clamp8(in_order(c1), vmin, vmax));
    _mm256_storeu_ps(out + a2, clamp8(in_order(c2), vmin, vmax));
    _mm256_storeu_ps(out + a3, clamp8(in_order(c3), vmin, vmax));
}

void ember_f32_dwconv_3x3s2__avx2_fma(size_t n, const float *const *row, const float *w,
                                      float bias, float *out,
                                      const ember_f32_dwconv_params *params)
{
    if (n < V) {
        ember_f32_dwconv_3x3s2__scalar(n, row, w, bias, out, params);
        return;
    }
    const __m256 vmin = _mm256_set1_ps(params->min), vmax = _mm256_set1_ps(params->max);
    __m256 w9[9];
    for (int t = 0; t < 9; t++)
        w9[t] = _mm256_broadcast_ss(w + t);
    size_t o = 0;
    for (; o + CHUNK <= n; o += CHUNK)
        pass_3x3s2(row, w9, o, o + V, o + 2 * V, o + 3 * V, bias, out, vmin, vmax);
    if (o == n)
        return;
    const size_t last = n - V;
    pass_3x3s2(row, w9, at_most(o, last), at_most(o + V, last), at_most(o + 2 * V, last), last,
               bias, out, vmin, vmax);
}

/*
 * Whole planes of a 3×3 stride-2 conv padded by one column on the left, read and written
 * in place: no laid-out copy of the plane, no call per row. Output q of a row reads
 * columns 2q − 1 .. 2q + 1 of its three input rows, so 8 outputs at q0 are row_3x3s2
 * from x = column 2q0 − 1, which reads x[0..17): a row as wide as 2·out_w is read to
 * its end and not past it. A row's first vector starts at column
 * −1: it loads columns 0..7 and moves them up a lane over a zero. Planes whose rows
 * are narrower than that, or end a column short (an odd width), take masked loads for
 * the vectors that reach outside, the columns outside zeros, which is the padding.
 * Input rows outside the plane add w · 0, as the definition's padding does (a
 * non-finite weight makes NaN). Four vectors a pass keep four FMA chains going; rows of
 * fewer than 8 outputs are one vector stored under a mask, wider ones end with a vector
 * at out_w − 8, rewriting a few outputs with the same values.
 */

/* Lanes whose column first + lane lies in [0, width). */
static ALWAYS_INLINE __m256i columns_inside(ptrdiff_t first, ptrdiff_t width)
{
    const __m256i column = _mm256_add_epi32(_mm256_set1_epi32((int)first),
                                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    return _mm256_and_si256(_mm256_cmpgt_epi32(column, _mm256_set1_epi32(-1)),
                            _mm256_cmpgt_epi32(_mm256_set1_epi32((int)width), column));
}

/* The 8 floats of `row` from column `first`, zeros outside [0, width): masked-off lanes
 * touch no memory (the address is formed as an integer: it may precede the row). */
static ALWAYS_INLINE __m256 load_inside(const float *row, ptrdiff_t first, ptrdiff_t width)
{
    const float *at = (const float *)((uintptr_t)row + (uintptr_t)(first * (ptrdiff_t)4));
    return _mm256_maskload_ps(at, columns_inside(first, width));
}

/* The 8 outputs from input column x0 of one input row's three taps into acc, columns
 * outside [0, width) zeros. */
static ALWAYS_INLINE __m256 row_masked(const float *row, ptrdiff_t x0, ptrdiff_t width,
                                       const __m256 *w, __m256 acc)
{
    return taps_3x3s2(load_inside(row, x0, width), load_inside(row, x0 + 8, width),
                      load_inside(row, x0 + 2, width), load_inside(row, x0 + 9, width), w, acc);
}

/* The same inside the row: x0 + 16 < width, or x0 = −1 (`left`: columns 0..6 one lane
 * up over a zero). */
static ALWAYS_INLINE __m256 row_inside(const float *row, ptrdiff_t x0, int left,
                                       const __m256 *w, __m256 acc)
{
    if (!left)
        return row_3x3s2(row + x0, w, acc);
    const __m256i up = _mm256_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6);
    const __m256 a = _mm256_blend_ps(_mm256_permutevar8x32_ps(_mm256_loadu_ps(row), up),
                                     _mm256_setzero_ps(), 0x01);
    return taps_3x3s2(a, _mm256_loadu_ps(row + 7), _mm256_loadu_ps(row + 1),
                      _mm256_loadu_ps(row + 8), w, acc);
}

/* A vector of 8 outputs: its output row's three input rows (the zero row outside the
 * plane), its first output q (0 when `left`), where the row's outputs go. */
typedef struct plane_vector {
    const float *const *rows;
    size_t q;
    int left;
    float *out;
} plane_vector;

/* Four vectors (may repeat), four FMA chains: rows at least 2·out_w wide. */
static ALWAYS_INLINE void pass_inside(const plane_vector *v, const __m256 *w9, __m256 bias,
                                      __m256 vmin, __m256 vmax)
{
    __m256 c0 = bias, c1 = bias, c2 = bias, c3 = bias;
    for (int r = 0; r < 3; r++) {
        c0 = row_inside(v[0].rows[r], 2 * (ptrdiff_t)v[0].q - 1, v[0].left, w9 + 3 * r, c0);
        c1 = row_inside(v[1].rows[r], 2 * (ptrdiff_t)v[1].q - 1, v[1].left, w9 + 3 * r, c1);
        c2 = row_inside(v[2].rows[r], 2 * (ptrdiff_t)v[2].q - 1, v[2].left, w9 + 3 * r, c2);
        c3 = row_inside(v[3].rows[r], 2 * (ptrdiff_t)v[3].q - 1, v[3].left, w9 + 3 * r, c3);
    }
    _mm256_storeu_ps(v[0].out + v[0].q, clamp8(in_order(c0), vmin, vmax));
    _mm256_storeu_ps(v[1].out + v[1].q, clamp8(in_order(c1), vmin, vmax));
    _mm256_storeu_ps(v[2].out + v[2].q, clamp8(in_order(c2), vmin, vmax));
    _mm256_storeu_ps(v[3].out + v[3].q, clamp8(in_order(c3), vmin, vmax));
}

/* Output row r's input rows (the zero row outside the plane). */
static void input_rows(const ember_f32_dwconv_geometry *g, const float *in, const float *zeros,
                       size_t r, const float **rows)
{
    for (size_t i = 0; i < 3; i++) {
        const size_t ih = 2 * r + i; /* + pad_top */
        rows[i] = ih >= g->pad_top && ih - g->pad_top < g->in_h
                      ? in + (ih - g->pad_top) * g->in_w : zeros;
    }
}

/* Rows of at most two vectors (out_w ≤ 16: at 0 and out_w − 8), two rows a pass. */
static void narrow_rows_inside(const ember_f32_dwconv_geometry *g, const float *in,
                               const float *zeros, const __m256 *w9, __m256 bias,
                               float *out, __m256 vmin, __m256 vmax)
{
    const size_t last = g->out_w - V;
    for (size_t r = 0; r < g->out_h; r += 2) {
        const size_t s = r + 1 < g->out_h ? r + 1 : r; /* an odd last row goes twice */
        const float *rows_r[3], *rows_s[3];
        input_rows(g, in, zeros, r, rows_r);
        input_rows(g, in, zeros, s, rows_s);
        const plane_vector v[4] = {{rows_r, 0, 1, out + r * g->out_w},
                                   {rows_r, last, last == 0, out + r * g->out_w},
                                   {rows_s, 0, 1, out + s * g->out_w},
                                   {rows_s, last, last == 0, out + s * g->out_w}};
        pass_inside(v, w9, bias, vmin, vmax);
    }
}

static void plane_3x3s2(const ember_f32_dwconv_geometry *g, const float *in, const float *w,
                        float bias, float *out, const float *zeros, __m256 vmin, __m256 vmax)
{
    __m256 w9[9];
    for (int t = 0; t < 9; t++)
        w9[t] = _mm256_broadcast_ss(w + t);
    const __m256 start = _mm256_set1_ps(bias);
    const size_t out_w = g->out_w;
    /* rows of 8 outputs or more reading no column past their end: plain loads */
    const int inside = out_w >= V && g->in_w >= 2 * out_w;
    if (inside && out_w <= 2 * V) {
        narrow_rows_inside(g, in, zeros, w9, start, out, vmin, vmax);
        return;
    }
    const size_t last = out_w < V ? 0 : out_w - V;
    const __m256i lanes = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)out_w),
                                             _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    for (size_t r = 0; r < g->out_h; r++, out += out_w) {
        const float *rows[3];
        input_rows(g, in, zeros, r, rows);
        if (inside) {
            for (size_t q0 = 0;; q0 += CHUNK) {
                const size_t q3 = at_most(q0 + 3 * V, last);
                /* q0 too: unclamped, rows of 33 .. 39 outputs (and 32, 64, ... more)
                 * put a vector past the row's end, read and written */
                const plane_vector v[4] = {{rows, at_most(q0, last), q0 == 0, out},
                                           {rows, at_most(q0 + V, last), 0, out},
                                           {rows, at_most(q0 + 2 * V, last), 0, out},
                                           {rows, q3, 0, out}};
                pass_inside(v, w9, start, vmin, vmax);
                if (q3 == last)
                    break;
            }
            continue;
        }
        for (size_t q0 = 0;; q0 += V) { /* one vector at a time, masked */
            q0 = at_most(q0, last);
            __m256 acc = start;
            for (int i = 0; i < 3; i++)
                acc = row_masked(rows[i], 2 * (ptrdiff_t)q0 - 1, (ptrdiff_t)g->in_w, w9 + 3 * i,
                                 acc);
            const __m256 y = clamp8(in_order(acc), vmin, vmax);
            if (out_w < V)
                _mm256_maskstore_ps(out, lanes, y);
            else
                _mm256_storeu_ps(out + q0, y);
            if (q0 == last)
                break;
        }
    }
}

void ember_f32_dwconv_plane_3x3s2__avx2_fma(const ember_f32_dwconv_geometry *g,
                                            size_t channels, const float *in, size_t in_stride,
                                            const float *w, const float *bias, float *out,
                                            size_t out_stride,
                                            const ember_f32_dwconv_params *params,
                                            float *scratch)
{
    const __m256 vmin = _mm256_set1_ps(params->min), vmax = _mm256_set1_ps(params->max);
    for (size_t c = 0; c < channels; c++, in += in_stride, w += 9, out += out_stride)
        plane_3x3s2(g, in, w, bias[c], out, scratch, vmin, vmax);
}

/*
 * The blocked kernel: 8 channels' planes transposed into scratch, a pixel's 8 channels one
 * vector (8 × 8 transposes of 8 pixels of 8 planes: unpacks, shuffles, lane swaps), into
 * a zero-padded input block; then each output is Σ_taps w_t · block[pixel + offset_t],
 * one FMA per tap for the 8 channels, four outputs a pass so four chains overlap; then
 * the output block transposed back into the 8 output planes. The planes are walked as
 * flat runs of pixels, 8 at a time, the last 8 ending at the plane's end (rewriting a
 * few: no mask, no read past the plane); each input pixel goes to its padded position.
 */

/* r0..r7 (8 vectors, named: an array was kept on the stack, every step a store and a
 * load) transposed in place: unpacks, in-lane shuffles, lane swaps. */
#define EMBER_TRANSPOSE_8X8(r0, r1, r2, r3, r4, r5, r6, r7)                                \
    do {                                                                                   \
        const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);     \
        const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);     \
        const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);     \
        const __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);     \
        const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44);                                 \
        const __m256 u1 = _mm256_shuffle_ps(t0, t2, 0xEE);                                 \
        const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44);                                 \
        const __m256 u3 = _mm256_shuffle_ps(t1, t3, 0xEE);                                 \
        const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44);                                 \
        const __m256 u5 = _mm256_shuffle_ps(t4, t6, 0xEE);                                 \
        const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44);                                 \
        const __m256 u7 = _mm256_shuffle_ps(t5, t7, 0xEE);                                 \
        r0 = _mm256_permute2f128_ps(u0, u4, 0x20);                                         \
        r1 = _mm256_permute2f128_ps(u1, u5, 0x20);                                         \
        r2 = _mm256_permute2f128_ps(u2, u6, 0x20);                                         \
        r3 = _mm256_permute2f128_ps(u3, u7, 0x20);                                         \
        r4 = _mm256_permute2f128_ps(u0, u4, 0x31);                                         \
        r5 = _mm256_permute2f128_ps(u1, u5, 0x31);                                         \
        r6 = _mm256_permute2f128_ps(u2, u6, 0x31);                                         \
        r7 = _mm256_permute2f128_ps(u3, u7, 0x31);                                         \
    } while (0)

/* The 8 planes' pixels [at, at + 8), transposed: pixel at + k's 8 channels to to[k]. */
static ALWAYS_INLINE void transposed_run(const float *const *plane, size_t at,
                                         float *const *to)
{
    __m256 r0 = _mm256_loadu_ps(plane[0] + at), r1 = _mm256_loadu_ps(plane[1] + at);
    __m256 r2 = _mm256_loadu_ps(plane[2] + at), r3 = _mm256_loadu_ps(plane[3] + at);
    __m256 r4 = _mm256_loadu_ps(plane[4] + at), r5 = _mm256_loadu_ps(plane[5] + at);
    __m256 r6 = _mm256_loadu_ps(plane[6] + at), r7 = _mm256_loadu_ps(plane[7] + at);
    EMBER_TRANSPOSE_8X8(r0, r1, r2, r3, r4, r5, r6, r7);
    _mm256_store_ps(to[0], r0);
    _mm256_store_ps(to[1], r1);
    _mm256_store_ps(to[2], r2);
    _mm256_store_ps(to[3], r3);
    _mm256_store_ps(to[4], r4);
    _mm256_store_ps(to[5], r5);
    _mm256_store_ps(to[6], r6);
    _mm256_store_ps(to[7], r7);
}

/* The input planes' pixels into the padded block at their (row + pad_top, column +
 * pad_left). Rows of 8 pixels or more go a row at a time, in runs of 8 (the last ending
 * at the row's end, rewriting a few) whose pixels land side by side; narrower rows in
 * runs of 8 across rows (the last ending at the plane's end), each pixel to its place,
 * its row and column counted along: a division per run (two 64-bit divides) took a fifth
 * of the kernel's time on 576 channels at 14×14 -> 7×7. A plane of fewer than 8 pixels
 * goes a float at a time. */
static void block_in(const ember_f32_dwconv_geometry *g, const float *const *plane,
                     size_t width, float *block)
{
    const size_t n = g->in_h * g->in_w;
    float *origin = block + (g->pad_top * width + g->pad_left) * V;
    if (n < V) {
        for (size_t p = 0; p < n; p++)
            for (size_t c = 0; c < V; c++)
                origin[((p / g->in_w) * width + p % g->in_w) * V + c] = plane[c][p];
        return;
    }
    if (g->in_w >= V) {
        for (size_t row = 0; row < g->in_h; row++)
            for (size_t c = 0;; c += V) {
                const size_t column = c + V <= g->in_w ? c : g->in_w - V;
                float *const at = origin + (row * width + column) * V;
                float *const to[V] = {at,         at + V,     at + 2 * V, at + 3 * V,
                                      at + 4 * V, at + 5 * V, at + 6 * V, at + 7 * V};
                transposed_run(plane, row * g->in_w + column, to);
                if (column == g->in_w - V)
                    break;
            }
        return;
    }
    size_t row = 0, column = 0; /* of pixel p */
    for (size_t p = 0;; p += V) {
        const size_t at = p < n - V ? p : n - V;
        if (at != p) { /* the last run, moved back */
            row = at / g->in_w;
            column = at % g->in_w;
        }
        float *to[V]; /* pixel at + k's place in the block */
        for (size_t k = 0; k < V; k++) {
            to[k] = origin + (row * width + column) * V;
            if (++column == g->in_w) {
                column = 0;
                row++;
            }
        }
        transposed_run(plane, at, to);
        if (at == n - V)
            return;
    }
}

/* The output block back into the output planes (the first `channels` of the block). */
static void block_out(size_t n, const float *block, size_t channels, float *out,
                      size_t out_stride)
{
    if (n < V) {
        for (size_t p = 0; p < n; p++)
            for (size_t c = 0; c < channels; c++)
                out[c * out_stride + p] = block[p * V + c];
        return;
    }
    for (size_t p = 0;; p += V) {
        const size_t at = p < n - V ? p : n - V;
        const float *from = block + at * V;
        __m256 r0 = _mm256_load_ps(from), r1 = _mm256_load_ps(from + V);
        __m256 r2 = _mm256_load_ps(from + 2 * V), r3 = _mm256_load_ps(from + 3 * V);
        __m256 r4 = _mm256_load_ps(from + 4 * V), r5 = _mm256_load_ps(from + 5 * V);
        __m256 r6 = _mm256_load_ps(from + 6 * V), r7 = _mm256_load_ps(from + 7 * V);
        EMBER_TRANSPOSE_8X8(r0, r1, r2, r3, r4, r5, r6, r7);
        float *to = out + at;
        const __m256 rows[V] = {r0, r1, r2, r3, r4, r5, r6, r7};
        if (channels == V) {
            _mm256_storeu_ps(to, r0);
            _mm256_storeu_ps(to + out_stride, r1);
            _mm256_storeu_ps(to + 2 * out_stride, r2);
            _mm256_storeu_ps(to + 3 * out_stride, r3);
            _mm256_storeu_ps(to + 4 * out_stride, r4);
            _mm256_storeu_ps(to + 5 * out_stride, r5);
            _mm256_storeu_ps(to + 6 * out_stride, r6);
            _mm256_storeu_ps(to + 7 * out_stride, r7);
        } else {
            for (size_t c = 0; c < channels; c++)
                _mm256_storeu_ps(to + c * out_stride, rows[c]);
        }
        if (at == n - V)
            return;
    }
}

/* The output block: passes of eight outputs in raster order (across rows: a row of 7 or
 * 14 leaves no partial pass but the last, whose outputs past the end repeat the last),
 * eight FMA chains, each tap one FMA of its weights' vector and the output's input pixel
 * at a fixed offset. */
static void block_outputs(const ember_f32_dwconv_geometry *g, const float *block, size_t width,
                          size_t taps, const ptrdiff_t *offset, const float *weights,
                          __m256 bias, float *out, __m256 vmin, __m256 vmax)
{
    const size_t n = g->out_h * g->out_w;
    ember_f32_dwconv_walk walk = ember_f32_dwconv_walk_of(g, width, V);
    for (size_t p = 0; p < n; p += 8) {
        size_t place[8]; /* the outputs' input pixels, their first taps */
        ember_f32_dwconv_walk_next(&walk, 8, place);
        const float *at[8];
        for (int k = 0; k < 8; k++)
            at[k] = block + place[k];
        __m256 c0 = bias, c1 = bias, c2 = bias, c3 = bias;
        __m256 c4 = bias, c5 = bias, c6 = bias, c7 = bias;
        for (size_t t = 0; t < taps; t++) {
            const __m256 wt = _mm256_load_ps(weights + t * V);
            const ptrdiff_t d = offset[t];
            c0 = _mm256_fmadd_ps(wt, _mm256_load_ps(at[0] + d), c0);
            c1 = _mm256_fmadd_ps(wt, _mm256_load_ps(at[1] + d), c1);
            c2 = _mm256_fmadd_ps(wt, _mm256_load_ps(at[2] + d), c2);
            c3 = _mm256_fmadd_ps(wt, _mm256_load_ps(at[3] + d), c3);
            c4 = _mm256_fmadd_ps(wt, _mm256_load_ps(at[4] + d), c4);
            c5 = _mm256_fmadd_ps(wt, _mm256_load_ps(at[5] + d), c5);
            c6 = _mm256_fmadd_ps(wt, _mm256_load_ps(at[6] + d), c6);
            c7 = _mm256_fmadd_ps(wt, _mm256_load_ps(at[7] + d), c7);
        }
        const size_t last = n - 1 - p; /* stores past the end go to the last output */
        _mm256_store_ps(out + (p + 0) * V, clamp8(c0, vmin, vmax));
        _mm256_store_ps(out + (p + at_most(1, last)) * V, clamp8(c1, vmin, vmax));
        _mm256_store_ps(out + (p + at_most(2, last)) * V, clamp8(c2, vmin, vmax));
        _mm256_store_ps(out + (p + at_most(3, last)) * V, clamp8(c3, vmin, vmax));
        _mm256_store_ps(out + (p + at_most(4, last)) * V, clamp8(c4, vmin, vmax));
        _mm256_store_ps(out + (p + at_most(5, last)) * V, clamp8(c5, vmin, vmax));
        _mm256_store_ps(out + (p + at_most(6, last)) * V, clamp8(c6, vmin, vmax));
        _mm256_store_ps(out + (p + at_most(7, last)) * V, clamp8(c7, vmin, vmax));
    }
}

void ember_f32_dwconv_blocked__avx2_fma(const ember_f32_dwconv_geometry *g, size_t channels,
                                        const float *in, size_t in_stride, const float *w,
                                        const float *bias, float *out, size_t out_stride,
                                        const ember_f32_dwconv_params *params, float *scratch)
{
    const size_t taps = g->kernel_h * g->kernel_w, out_pixels = g->out_h * g->out_w;
    const size_t width = ember_f32_dwconv_block_width(g);
    float *block = scratch, *outputs = scratch + ember_f32_dwconv_padding_floats(g);
    float *weights = outputs + out_pixels * V, *biases = weights + taps * V;
    const float *plane[V];
    ptrdiff_t offset[EMBER_F32_DWCONV_MAX_TAPS];
    ember_f32_dwconv_block_operands(g, channels, in, in_stride, w, bias, width, V, plane,
                                    weights, biases, offset);
    block_in(g, plane, width, block);
    const __m256 vmin = _mm256_set1_ps(params->min), vmax = _mm256_set1_ps(params->max);
    block_outputs(g, block, width, taps, offset, weights, _mm256_load_ps(biases), outputs,
                  vmin, vmax);
    block_out(out_pixels, outputs, channels, out, out_stride);
}
