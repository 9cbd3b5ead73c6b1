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

/* The blocked kernel (f32_dwconv_blocked__x86.h): a block's 8 channels one vector. */

#define VEC __m256
#define VEC_LOAD _mm256_load_ps
#define VEC_STORE _mm256_store_ps
#define VEC_FMADD _mm256_fmadd_ps
#define VEC_CLAMP clamp8
#define VEC_SET1 _mm256_set1_ps
#define EMBER_DWCONV_BLOCKED_NAME ember_f32_dwconv_blocked__avx2_fma
#include "kernels/x86/f32_dwconv_blocked__x86.h"
