/*
 * f32_dwconv__avx512f — depthwise-conv runs and whole 3×3 stride-2 planes (kernels.h),
 * AVX-512F + FMA: f32_dwconv__avx2_fma's kernels at 16 floats a vector. Every output adds
 * its taps to the bias in the same order with the same fused multiply-adds as the AVX2
 * kernel, so the two give the same bits (tests/c/test_dwconv.c checks it), and the clamp
 * keeps NaN as there.
 *
 * The run: passes of four vectors (64 outputs), four FMA chains, nine taps' weights and
 * pointers held in registers; the tail takes as many vectors as it needs, the last moved
 * back to end at n; a run under 16 is one masked vector. The 3×3 stride-2 run and the
 * whole planes: see below; the blocked kernel: at the end.
 *
 * Against the AVX2 kernel on a Zen 5 (EPYC VM, one thread; kernel calls alternated in
 * one process, medians of 41): runs of 726 outputs of 9 taps 0.71x the time, of 100
 * 0.75x, of 54 0.89x, of 26 of 6 taps 0.99x, of 12 0.42x (the AVX2 kernel's vmaskmov);
 * the 3×3 stride-2 run a row of a 112² -> 56² plane 0.86x; whole planes 112² -> 56² (96
 * channels) 0.89x, 56² -> 28² 0.78x. Per node (ember-run --profile, EMBER_ISA=avx2_fma
 * alternated, medians of 4 × 50 runs): MobileNetV2's depthwise_in_place convs
 * 0.76-0.79x, its depthwise_planes_3x3s2 0.92x (96 × 56²) and 0.75x (144 × 28²);
 * ShuffleNet's 0.84-0.88x and 0.79x. The models (bench_ab against the build before, 30
 * pairs, two runs each): MobileNetV2 0.973-0.981, ShuffleNet 0.982-0.983, the outputs
 * identical.
 */
#include "kernels/kernels.h"

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#define ALWAYS_INLINE inline __attribute__((always_inline))

enum { V = 16, ACCUMULATORS = 4, CHUNK = V * ACCUMULATORS };

static inline __m512 clamp16(__m512 v, __m512 vmin, __m512 vmax)
{
    v = _mm512_max_ps(vmin, v); /* vmin > v ? vmin : v: NaN kept */
    return _mm512_min_ps(vmax, v);
}

/* The lanes below `count` (any count: none under 0, all 16 from 16). */
static inline __mmask16 lanes_below(ptrdiff_t count)
{
    if (count <= 0)
        return 0;
    return count >= V ? (__mmask16)0xFFFF : (__mmask16)((1u << count) - 1);
}

/* The 16 floats at p + i, lanes outside m zeros and untouched (the address is formed as
 * an integer: at a plane row's column −1 it may point before any object). */
static ALWAYS_INLINE __m512 load_masked(const float *p, ptrdiff_t i, __mmask16 m)
{
    return _mm512_maskz_loadu_ps(m, (const void *)((uintptr_t)p + (uintptr_t)(i * 4)));
}

static ALWAYS_INLINE void store_masked(float *p, ptrdiff_t i, __mmask16 m, __m512 v)
{
    _mm512_mask_storeu_ps((void *)((uintptr_t)p + (uintptr_t)(i * 4)), m, v);
}

/* a, or last (a vector ending at the end) where a would pass it. */
static inline size_t at_most(size_t a, size_t last)
{
    return a < last ? a : last;
}

/* One pass over `count` vectors (1 to 4, constant after inlining): outputs a[k] ..
 * a[k] + 16 (the last may overlap the one before), count FMA chains. Nine taps (`nine`, constant too)
 * take the weight vectors w9 and pointers s9 the caller holds in registers, unrolled;
 * other counts read src and broadcast w per tap. */
static ALWAYS_INLINE void pass(int count, int nine, const __m512 *w9, const float *const *s9,
                               size_t taps, const float *const *src, const float *w,
                               const size_t *a, float bias, float *out, __m512 vmin,
                               __m512 vmax)
{
    __m512 c0 = _mm512_set1_ps(bias), c1 = c0, c2 = c0, c3 = c0;
#define EMBER_TAP(s, wt)                                                                     \
    do {                                                                                     \
        c0 = _mm512_fmadd_ps(wt, _mm512_loadu_ps((s) + a[0]), c0);                           \
        if (count > 1)                                                                       \
            c1 = _mm512_fmadd_ps(wt, _mm512_loadu_ps((s) + a[1]), c1);                       \
        if (count > 2)                                                                       \
            c2 = _mm512_fmadd_ps(wt, _mm512_loadu_ps((s) + a[2]), c2);                       \
        if (count > 3)                                                                       \
            c3 = _mm512_fmadd_ps(wt, _mm512_loadu_ps((s) + a[3]), c3);                       \
    } while (0)
    if (nine) {
#define EMBER_TAP_OF_NINE(t) EMBER_TAP(s9[t], w9[t]);
        EMBER_EACH_OF_NINE(EMBER_TAP_OF_NINE)
#undef EMBER_TAP_OF_NINE
    } else {
        for (size_t t = 0; t < taps; t++) {
            const __m512 wt = _mm512_set1_ps(w[t]);
            EMBER_TAP(src[t], wt);
        }
    }
#undef EMBER_TAP
    _mm512_storeu_ps(out + a[0], clamp16(c0, vmin, vmax));
    if (count > 1)
        _mm512_storeu_ps(out + a[1], clamp16(c1, vmin, vmax));
    if (count > 2)
        _mm512_storeu_ps(out + a[2], clamp16(c2, vmin, vmax));
    if (count > 3)
        _mm512_storeu_ps(out + a[3], clamp16(c3, vmin, vmax));
}

/* n ≥ 16: whole passes of 64, then the tail's vectors (1 to 4), the last at n − 16,
 * rewriting a few outputs with the same values. Not four vectors whatever the tail, as
 * the AVX2 kernel: where one or two would do, the other two or three cost their time (a
 * run of 26, six taps: 14 ns a call, the AVX2 kernel's 10.5; as many as needed, 9.9).
 * Masked loads and stores instead of moving the last vector back took 1.1x the AVX2
 * kernel's time on tails of 38 and 36 (this one 0.9x): they are slower than plain ones
 * on a Zen 5, a mask of all lanes as well. */
static ALWAYS_INLINE void run(int nine, size_t n, size_t taps, const float *const *src,
                              const float *w, float bias, float *out, __m512 vmin, __m512 vmax)
{
    __m512 w9[9];
    const float *s9[9];
    for (int t = 0; nine && t < 9; t++) {
        w9[t] = _mm512_set1_ps(w[t]);
        s9[t] = src[t];
    }
    size_t o = 0;
    for (; o + CHUNK <= n; o += CHUNK) {
        const size_t a[ACCUMULATORS] = {o, o + V, o + 2 * V, o + 3 * V};
        pass(4, nine, w9, s9, taps, src, w, a, bias, out, vmin, vmax);
    }
    if (o == n)
        return;
    const size_t last = n - V, left = n - o;
    const size_t a4[4] = {o, o + V, o + 2 * V, last}, a3[3] = {o, o + V, last};
    const size_t a2[2] = {o, last};
    if (left > 3 * V)
        pass(4, nine, w9, s9, taps, src, w, a4, bias, out, vmin, vmax);
    else if (left > 2 * V)
        pass(3, nine, w9, s9, taps, src, w, a3, bias, out, vmin, vmax);
    else if (left > V)
        pass(2, nine, w9, s9, taps, src, w, a2, bias, out, vmin, vmax);
    else
        pass(1, nine, w9, s9, taps, src, w, &last, bias, out, vmin, vmax);
}

/* n < 16: one masked vector. */
static void short_run(size_t n, size_t taps, const float *const *src, const float *w,
                      float bias, float *out, __m512 vmin, __m512 vmax)
{
    const __mmask16 m = lanes_below((ptrdiff_t)n);
    __m512 acc = _mm512_set1_ps(bias);
    for (size_t t = 0; t < taps; t++)
        acc = _mm512_fmadd_ps(_mm512_set1_ps(w[t]), _mm512_maskz_loadu_ps(m, src[t]), acc);
    _mm512_mask_storeu_ps(out, m, clamp16(acc, vmin, vmax));
}

void ember_f32_dwconv__avx512f(size_t n, size_t taps, const float *const *src, const float *w,
                               float bias, float *out, const ember_f32_dwconv_params *params)
{
    const __m512 vmin = _mm512_set1_ps(params->min), vmax = _mm512_set1_ps(params->max);
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

/*
 * 3×3 stride 2: one kernel row's three taps for 16 outputs from a row's floats x[0..33),
 * loaded as x[0..16), x[16..32), x[2..18), x[17..33) and split into the even and odd
 * columns with in-lane shuffles only (vshufps of two loads, as the AVX2 kernel): each
 * 128-bit lane L of the accumulator holds outputs 2L, 2L + 1, 2L + 8, 2L + 9, the same
 * for every tap, so it is put in order once, at the store (in_order), not per row.
 * vpermt2ps splits (the pool row's) leave it in order but cost three cross-lane permutes
 * a row against one a vector: 1.17x the time on planes of 144 channels 56² -> 28², 1.05x
 * on their rows as runs.
 */

/* The lanes of each of the four loads that may be read (all set: plain loads). */
typedef struct row_masks {
    __mmask16 a, b, a2, b17;
} row_masks;

static const row_masks ALL_LOADS = {0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF};

static ALWAYS_INLINE __m512 row_3x3s2(const float *x, ptrdiff_t at, row_masks m,
                                      const __m512 *w, __m512 acc)
{
    const __m512 a = load_masked(x, at, m.a), b = load_masked(x, at + V, m.b);
    const __m512 a2 = load_masked(x, at + 2, m.a2), b17 = load_masked(x, at + V + 1, m.b17);
    acc = _mm512_fmadd_ps(w[0], _mm512_shuffle_ps(a, b, 0x88), acc);
    acc = _mm512_fmadd_ps(w[1], _mm512_shuffle_ps(a, b, 0xDD), acc);
    return _mm512_fmadd_ps(w[2], _mm512_shuffle_ps(a2, b17, 0xD8), acc);
}

/* Lanes 0 1 8 9 | 2 3 10 11 | 4 5 12 13 | 6 7 14 15 back in order. */
static inline __m512 in_order(__m512 v)
{
    const __m512i from = _mm512_setr_epi32(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11,
                                           14, 15);
    return _mm512_permutexvar_ps(from, v);
}

/* Of a load of floats [at, at + 16) of a row of `width` floats, the lanes inside. */
static inline __mmask16 inside(ptrdiff_t at, ptrdiff_t width)
{
    return (__mmask16)(lanes_below(width - at) & ~lanes_below(-at));
}

/* The masks of the four loads from float `at` of rows `width` long. */
static inline row_masks row_masks_at(ptrdiff_t at, ptrdiff_t width)
{
    const row_masks m = {inside(at, width), inside(at + V, width), inside(at + 2, width),
                         inside(at + V + 1, width)};
    return m;
}

/* A vector of 16 outputs: its three input rows, the float of theirs its loads start from
 * (2q − 1 for outputs from q in a plane), its masks, where its first output goes. */
typedef struct s2_vector {
    const float *const *rows;
    ptrdiff_t at;
    row_masks m;
    float *out;
} s2_vector;

/* `count` vectors (1 to 4, constant after inlining; may repeat), as many FMA chains, the
 * three rows written out (GCC kept a loop over them: weights and masks reloaded from the
 * stack for every row, a plane of 14-wide rows 1.5x the AVX2 kernel's time); stores under
 * `lanes`. */
static ALWAYS_INLINE void pass_3x3s2(int count, const s2_vector *v, const __m512 *w9,
                                     __m512 bias, __mmask16 lanes, __m512 vmin, __m512 vmax)
{
    __m512 c0 = bias, c1 = bias, c2 = bias, c3 = bias;
#define EMBER_ROW(r)                                                                       \
    do {                                                                                   \
        c0 = row_3x3s2(v[0].rows[r], v[0].at, v[0].m, w9 + 3 * (r), c0);                   \
        if (count > 1)                                                                     \
            c1 = row_3x3s2(v[1].rows[r], v[1].at, v[1].m, w9 + 3 * (r), c1);               \
        if (count > 2)                                                                     \
            c2 = row_3x3s2(v[2].rows[r], v[2].at, v[2].m, w9 + 3 * (r), c2);               \
        if (count > 3)                                                                     \
            c3 = row_3x3s2(v[3].rows[r], v[3].at, v[3].m, w9 + 3 * (r), c3);               \
    } while (0)
    EMBER_ROW(0);
    EMBER_ROW(1);
    EMBER_ROW(2);
#undef EMBER_ROW
    _mm512_mask_storeu_ps(v[0].out, lanes, clamp16(in_order(c0), vmin, vmax));
    if (count > 1)
        _mm512_mask_storeu_ps(v[1].out, lanes, clamp16(in_order(c1), vmin, vmax));
    if (count > 2)
        _mm512_mask_storeu_ps(v[2].out, lanes, clamp16(in_order(c2), vmin, vmax));
    if (count > 3)
        _mm512_mask_storeu_ps(v[3].out, lanes, clamp16(in_order(c3), vmin, vmax));
}

/* The run's vector at output o. */
static inline s2_vector run_vector(const float *const *row, size_t o, float *out)
{
    const s2_vector v = {row, 2 * (ptrdiff_t)o, ALL_LOADS, out + o};
    return v;
}

void ember_f32_dwconv_3x3s2__avx512f(size_t n, const float *const *row, const float *w,
                                     float bias, float *out,
                                     const ember_f32_dwconv_params *params)
{
    if (n == 0)
        return;
    const __m512 vmin = _mm512_set1_ps(params->min), vmax = _mm512_set1_ps(params->max);
    const __m512 start = _mm512_set1_ps(bias);
    __m512 w9[9];
    for (int t = 0; t < 9; t++)
        w9[t] = _mm512_set1_ps(w[t]);
    if (n < V) { /* one vector, its loads of the floats used, x[0 .. 2n + 1) */
        const s2_vector v = {row, 0, row_masks_at(0, 2 * (ptrdiff_t)n + 1), out};
        pass_3x3s2(1, &v, w9, start, lanes_below((ptrdiff_t)n), vmin, vmax);
        return;
    }
    size_t o = 0;
    for (; o + CHUNK <= n; o += CHUNK) {
        const s2_vector v[4] = {run_vector(row, o, out), run_vector(row, o + V, out),
                                run_vector(row, o + 2 * V, out),
                                run_vector(row, o + 3 * V, out)};
        pass_3x3s2(4, v, w9, start, 0xFFFF, vmin, vmax);
    }
    if (o == n)
        return;
    /* the tail's vectors, as the generic run's: as many as needed, the last at n − 16 */
    const size_t last = n - V, left = n - o;
    const s2_vector v[4] = {run_vector(row, o, out), run_vector(row, o + V, out),
                            run_vector(row, o + 2 * V, out), run_vector(row, last, out)};
    if (left > 3 * V)
        pass_3x3s2(4, v, w9, start, 0xFFFF, vmin, vmax);
    else if (left > 2 * V)
        pass_3x3s2(3, (const s2_vector[]){v[0], v[1], v[3]}, w9, start, 0xFFFF, vmin, vmax);
    else if (left > V)
        pass_3x3s2(2, (const s2_vector[]){v[0], v[3]}, w9, start, 0xFFFF, vmin, vmax);
    else
        pass_3x3s2(1, &v[3], w9, start, 0xFFFF, vmin, vmax);
}

/*
 * Whole planes of a 3×3 stride-2 conv padded by one column on the left, read and written
 * in place, as f32_dwconv__avx2_fma's: output q of a row reads columns 2q − 1 .. 2q + 1 of
 * its three input rows, so 16 outputs at q are row_3x3s2 from column 2q − 1, which reads
 * 33 floats, to column 2q + 31: a row 2·out_w wide is read to its end and not past it.
 * The first vector of a row masks off the load's lane at column −1 (a zero, the padding),
 * the last of a row one column short (an odd width) the lane past its end; no other load
 * is masked (masked loads, all lanes set too, are slower than plain ones on the Zen 5
 * this was written on). Input rows outside the plane are the zero row (w · 0, as the
 * definition's padding: a non-finite weight makes NaN).
 *
 * Rows of 17..32 outputs are two vectors (at 0 and out_w − 16), two rows a pass; wider
 * ones passes of four vectors, the last at out_w − 16 (rewriting a few outputs with the
 * same values). Rows of 16 outputs or fewer take the AVX2 kernel's planes: a vector
 * there reads past the row on both sides, under masks on every load, or, plainly, into
 * the next row, which needs the rows at the plane's ends apart; either way it was slower
 * than the AVX2 kernel's two 8-wide vectors a row (28² -> 14², 192 channels: 1.10x and
 * 1.05x its time). Rows short of 2·out_w − 1 columns (right padding of two or more) load
 * every vector under the masks of its columns.
 */

/* Output row r's input rows (the zero row outside the plane). */
static ALWAYS_INLINE void input_rows(const ember_f32_dwconv_geometry *g, const float *in,
                                     const float *zeros, size_t r, const float **rows)
{
    for (size_t i = 0; i < 3; i++) {
        const size_t ih = 2 * r + i; /* + pad_top */
        rows[i] = ih >= g->pad_top && ih - g->pad_top < g->in_h
                      ? in + (ih - g->pad_top) * g->in_w : zeros;
    }
}

/* The vector at output q of a row, its first load under mask a, its last under b17. */
static inline s2_vector plane_vector(const float *const *rows, size_t q, __mmask16 a,
                                     __mmask16 b17, float *out_row)
{
    const s2_vector v = {rows, 2 * (ptrdiff_t)q - 1, {a, 0xFFFF, 0xFFFF, b17},
                         out_row + q};
    return v;
}

/* Rows of two vectors (16 < out_w ≤ 32: at 0 and out_w − 16), two rows a pass; `end`
 * the last load's mask in the second. */
static void two_vector_rows(const ember_f32_dwconv_geometry *g, const float *in,
                            const float *zeros, const __m512 *w9, __m512 bias, float *out,
                            __mmask16 end, __m512 vmin, __m512 vmax)
{
    const size_t w = g->out_w, last = w - V;
    for (size_t r = 0; r < g->out_h; r += 2) {
        const size_t s = at_most(r + 1, g->out_h - 1); /* an odd last row goes twice */
        const float *rows_r[3], *rows_s[3];
        input_rows(g, in, zeros, r, rows_r);
        input_rows(g, in, zeros, s, rows_s);
        const s2_vector v[4] = {plane_vector(rows_r, 0, 0xFFFE, 0xFFFF, out + r * w),
                                plane_vector(rows_r, last, 0xFFFF, end, out + r * w),
                                plane_vector(rows_s, 0, 0xFFFE, 0xFFFF, out + s * w),
                                plane_vector(rows_s, last, 0xFFFF, end, out + s * w)};
        pass_3x3s2(4, v, w9, bias, 0xFFFF, vmin, vmax);
    }
}

/* Rows of more than two vectors, a row at a time, passes of four: the first vector of a
 * row at column −1 and only the last at out_w − 16 (the others moved back to at most
 * out_w − 17, not onto it), so that only those two take masks. */
static void wide_rows(const ember_f32_dwconv_geometry *g, const float *in, const float *zeros,
                      const __m512 *w9, __m512 bias, float *out, __mmask16 end, __m512 vmin,
                      __m512 vmax)
{
    const size_t w = g->out_w, last = w - V;
    for (size_t r = 0; r < g->out_h; r++) {
        const float *rows[3];
        input_rows(g, in, zeros, r, rows);
        float *out_row = out + r * w;
        for (size_t q0 = 0;; q0 += CHUNK) {
            const int final = q0 + 3 * V >= last;
            const size_t q1 = at_most(q0 + V, last - 1), q2 = at_most(q0 + 2 * V, last - 1);
            const s2_vector v[4] = {
                plane_vector(rows, at_most(q0, last - 1), q0 == 0 ? 0xFFFE : 0xFFFF, 0xFFFF,
                             out_row),
                plane_vector(rows, q1, 0xFFFF, 0xFFFF, out_row),
                plane_vector(rows, q2, 0xFFFF, 0xFFFF, out_row),
                plane_vector(rows, final ? last : q0 + 3 * V, 0xFFFF, final ? end : 0xFFFF,
                             out_row)};
            pass_3x3s2(4, v, w9, bias, 0xFFFF, vmin, vmax);
            if (final)
                break;
        }
    }
}

/* Rows short of 2·out_w − 1 columns: every load under the mask of its columns, the
 * rows' vectors four a pass (the last pass as many as are left). */
static void masked_rows(const ember_f32_dwconv_geometry *g, const float *in, const float *zeros,
                        const __m512 *w9, __m512 bias, float *out, __m512 vmin, __m512 vmax)
{
    const size_t w = g->out_w, last = w - V;
    const float *rows[4][3];
    s2_vector v[4];
    int k = 0;
    for (size_t r = 0; r < g->out_h; r++)
        for (size_t q = 0;; q += V) {
            q = at_most(q, last);
            input_rows(g, in, zeros, r, rows[k]);
            const ptrdiff_t at = 2 * (ptrdiff_t)q - 1;
            v[k] = (s2_vector){rows[k], at, row_masks_at(at, (ptrdiff_t)g->in_w),
                               out + r * w + q};
            if (++k == 4) {
                pass_3x3s2(4, v, w9, bias, 0xFFFF, vmin, vmax);
                k = 0;
            }
            if (q == last)
                break;
        }
    if (k == 3)
        pass_3x3s2(3, v, w9, bias, 0xFFFF, vmin, vmax);
    else if (k == 2)
        pass_3x3s2(2, v, w9, bias, 0xFFFF, vmin, vmax);
    else if (k == 1)
        pass_3x3s2(1, v, w9, bias, 0xFFFF, vmin, vmax);
}

/* A plane of rows of more than 16 outputs. */
static void plane_3x3s2(const ember_f32_dwconv_geometry *g, const float *in, const float *w,
                        float bias, float *out, const float *zeros, __m512 vmin, __m512 vmax)
{
    __m512 w9[9];
    for (int t = 0; t < 9; t++)
        w9[t] = _mm512_set1_ps(w[t]);
    const __m512 start = _mm512_set1_ps(bias);
    /* the last vector's last load: its top lane is column 2·out_w − 1 */
    const __mmask16 end = g->in_w >= 2 * g->out_w ? 0xFFFF : 0x7FFF;
    if (g->in_w + 1 < 2 * g->out_w)
        masked_rows(g, in, zeros, w9, start, out, vmin, vmax);
    else if (g->out_w <= 2 * V)
        two_vector_rows(g, in, zeros, w9, start, out, end, vmin, vmax);
    else
        wide_rows(g, in, zeros, w9, start, out, end, vmin, vmax);
}

void ember_f32_dwconv_plane_3x3s2__avx512f(const ember_f32_dwconv_geometry *g, size_t channels,
                                           const float *in, size_t in_stride, const float *w,
                                           const float *bias, float *out, size_t out_stride,
                                           const ember_f32_dwconv_params *params,
                                           float *scratch)
{
    if (g->out_w <= V) {
        ember_f32_dwconv_plane_3x3s2__avx2_fma(g, channels, in, in_stride, w, bias, out,
                                               out_stride, params, scratch);
        return;
    }
    const __m512 vmin = _mm512_set1_ps(params->min), vmax = _mm512_set1_ps(params->max);
    for (size_t c = 0; c < channels; c++, in += in_stride, w += 9, out += out_stride)
        plane_3x3s2(g, in, w, bias[c], out, scratch, vmin, vmax);
}

/* ---------------------------------------------------------------- the blocked kernel */

/* (f32_dwconv_blocked__x86.h): a block's 16 channels one vector, half the multiply-adds
 * of the AVX2 kernel's two blocks of 8. */

#define VEC __m512
#define VEC_LOAD _mm512_loadu_ps /* the scratch is 32-byte aligned, not 64 */
#define VEC_STORE _mm512_storeu_ps
#define VEC_FMADD _mm512_fmadd_ps
#define VEC_CLAMP clamp16
#define VEC_SET1 _mm512_set1_ps
#define EMBER_DWCONV_BLOCKED_NAME ember_f32_dwconv_blocked__avx512f
#include "kernels/x86/f32_dwconv_blocked__x86.h"
