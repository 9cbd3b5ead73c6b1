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

/* 3×3 stride 2: out[o] for 8 outputs from a row's floats x[0..18), in the lane order
 * 0 1 4 5 2 3 6 7 (x[16] is the last used; x[17] is read). */
static ALWAYS_INLINE __m256 row_3x3s2(const float *x, const __m256 *w, __m256 acc)
{
    const __m256 a = _mm256_loadu_ps(x), b = _mm256_loadu_ps(x + 8);
    const __m256 a2 = _mm256_loadu_ps(x + 2), b2 = _mm256_loadu_ps(x + 10);
    acc = _mm256_fmadd_ps(w[0], _mm256_shuffle_ps(a, b, 0x88), acc);    /* x[2o] */
    acc = _mm256_fmadd_ps(w[1], _mm256_shuffle_ps(a, b, 0xDD), acc);    /* x[2o + 1] */
    return _mm256_fmadd_ps(w[2], _mm256_shuffle_ps(a2, b2, 0x88), acc); /* x[2o + 2] */
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
