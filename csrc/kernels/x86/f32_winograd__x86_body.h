/*
 * f32_winograd__x86_body.h — the Winograd F(2×2, 3×3) input transform and output store
 * (kernels.h) written once over a vector of floats, for f32_winograd__avx2_fma.c (8 tiles
 * a vector) and f32_winograd__avx512f.c (16). A row's 2·LANES + 2 columns under a vector
 * of tiles are four loads (at c, c + LANES, c + 2, c + LANES + 2), split into even and odd
 * columns by permutes, so d B and Bᵀ (d B) stay in registers and each V_ξ gets one store; the
 * input planes are read in place, masked loads giving the padding's zeros. The body's
 * loops (f32_winograd__body.h), with the row transforms strided through a stack buffer
 * and an edge's rows copied into padded lines, took as long as the 16 GEMMs they feed on
 * a 3×3 128 -> 32 conv at 56×56 (perf, AVX2 loops on AVX-512: 33% of the run each). The
 * same adds and subtracts run in the same order, so the bits are the scalar kernel's.
 *
 * The store computes a vector of tiles' outputs and writes them into the image's two
 * rows, even and odd columns interleaved by permutes, with the residual and the clamp:
 * the body's output loops then ops/conv_winograd.c's scalar store_row took 6% of
 * Inception v2 on AVX-512 (perf). Same bits as those. The includer defines:
 *
 *   vf, LANES                  the float vector and its lanes
 *   vf_loadu vf_storeu vf_add vf_sub vf_zero vf_set1
 *   vf_max(a, b), vf_min(a, b)  a > b ? a : b, a < b ? a : b (b where either is NaN)
 *   vmask, vmask_first(count)   a lane mask: lanes [0, count), count clamped to [0, LANES]
 *   vf_load_lanes(p, m)         the lanes in m loaded from p, zeros elsewhere (others
 *                               touch no memory)
 *   vf_store_lanes(p, m, x)     x's lanes in m stored at p (others touch no memory)
 *   vf_interleave(e, o, lo, hi) e0 o0 e1 o1 … into *lo, its second half into *hi
 *   vf_columns(row, c, width)   columns c .. c + LANES − 1 of a row of `width`, zeros
 *                               outside it (a masked load at winograd_column_address,
 *                               f32_winograd__body.h)
 *   vf_evens(a, b), vf_odds(a, b)  lanes 0, 2, 4, … (1, 3, 5, …) of a then b
 */
#ifndef EMBER_F32_WINOGRAD_X86_BODY_H
#define EMBER_F32_WINOGRAD_X86_BODY_H

#include <stddef.h>

/* d B of a vector of tiles of one row (tile u's patch columns c + 2u .. c + 2u + 3). */
static WINOGRAD_ALWAYS_INLINE void winograd_row_vector(const float *row, ptrdiff_t c,
                                                       ptrdiff_t width, vf *r0, vf *r1, vf *r2,
                                                       vf *r3)
{
    vf a, b, e, f;
    if (row == NULL) {
        a = b = e = f = vf_zero();
    } else if (c >= 0 && c + 2 * LANES + 2 <= width) { /* every column inside */
        a = vf_loadu(row + c);
        b = vf_loadu(row + c + LANES);
        e = vf_loadu(row + c + 2);
        f = vf_loadu(row + c + LANES + 2);
    } else {
        a = vf_columns(row, c, width);
        b = vf_columns(row, c + LANES, width);
        e = vf_columns(row, c + 2, width);
        f = vf_columns(row, c + LANES + 2, width);
    }
    const vf d0 = vf_evens(a, b), d1 = vf_odds(a, b); /* columns c + 2u, c + 2u + 1 */
    const vf d2 = vf_evens(e, f), d3 = vf_odds(e, f); /* c + 2u + 2, c + 2u + 3 */
    *r0 = vf_sub(d0, d2);
    *r1 = vf_add(d1, d2);
    *r2 = vf_sub(d2, d1);
    *r3 = vf_sub(d1, d3);
}

/* x at p: whole (`whole` a constant where inlined), or its lanes in m. AVX2's masked
 * store is microcoded on AMD (Zen 3: a 3×3 128 -> 32 conv at 56×56 spent half its time in
 * the input transform, whose every store was masked, against a third in its GEMMs). */
#define STORE_LANES(p, whole, m, x)                                                        \
    do {                                                                                   \
        if (whole)                                                                         \
            vf_storeu((p), (x));                                                           \
        else                                                                               \
            vf_store_lanes((p), (m), (x));                                                 \
    } while (0)

/* Column q of Bᵀ (d B) from column q of d B's rows x, y, z, w: V_q, V_4+q, V_8+q, V_12+q
 * (v at V_q): all lanes stored when whole, else the lanes in m. */
static WINOGRAD_ALWAYS_INLINE void winograd_column_vector(vf x, vf y, vf z, vf w, int whole,
                                                          vmask m, float *v, size_t v_stride)
{
    STORE_LANES(v, whole, m, vf_sub(x, z));
    STORE_LANES(v + 4 * v_stride, whole, m, vf_add(y, z));
    STORE_LANES(v + 8 * v_stride, whole, m, vf_sub(z, y));
    STORE_LANES(v + 12 * v_stride, whole, m, vf_sub(y, w));
}

/* A vector of tiles' 16 stores: whole, or the first `count` lanes. Its operands in
 * registers, called once for each case: with them in an array of 16 vectors and one store
 * loop per case, GCC spilled a third more and the 128 -> 32 conv took 1.05-1.08x the time. */
static WINOGRAD_ALWAYS_INLINE void winograd_columns(vf a0, vf a1, vf a2, vf a3, vf b0, vf b1,
                                                    vf b2, vf b3, vf e0, vf e1, vf e2, vf e3,
                                                    vf f0, vf f1, vf f2, vf f3, int whole,
                                                    ptrdiff_t count, float *o, size_t v_stride)
{
    const vmask m = vmask_first(count);
    winograd_column_vector(a0, b0, e0, f0, whole, m, o, v_stride);
    winograd_column_vector(a1, b1, e1, f1, whole, m, o + v_stride, v_stride);
    winograd_column_vector(a2, b2, e2, f2, whole, m, o + 2 * v_stride, v_stride);
    winograd_column_vector(a3, b3, e3, f3, whole, m, o + 3 * v_stride, v_stride);
}

static inline void winograd_input_vectors(size_t n, const float *const rows[4], ptrdiff_t x0,
                                          ptrdiff_t width, float *v, size_t v_stride)
{
    for (size_t t = 0; t < n; t += LANES) {
        const ptrdiff_t c = x0 + 2 * (ptrdiff_t)t;
        vf a0, a1, a2, a3, b0, b1, b2, b3, e0, e1, e2, e3, f0, f1, f2, f3;
        winograd_row_vector(rows[0], c, width, &a0, &a1, &a2, &a3);
        winograd_row_vector(rows[1], c, width, &b0, &b1, &b2, &b3);
        winograd_row_vector(rows[2], c, width, &e0, &e1, &e2, &e3);
        winograd_row_vector(rows[3], c, width, &f0, &f1, &f2, &f3);
        if (t + LANES <= n)
            winograd_columns(a0, a1, a2, a3, b0, b1, b2, b3, e0, e1, e2, e3, f0, f1, f2, f3,
                             1, LANES, v + t, v_stride);
        else
            winograd_columns(a0, a1, a2, a3, b0, b1, b2, b3, e0, e1, e2, e3, f0, f1, f2, f3,
                             0, (ptrdiff_t)(n - t), v + t, v_stride);
    }
}

/* A vector at p: whole, or its lanes in m (zeros elsewhere). */
static WINOGRAD_ALWAYS_INLINE vf winograd_load(const float *p, int whole, vmask m)
{
    return whole ? vf_loadu(p) : vf_load_lanes(p, m);
}

/* One output row's 2·LANES columns from its even and odd columns (the tiles' Y(r, 0) and
 * Y(r, 1)), plus the residual row's, clamped to [lo, hi]: the first `columns` stored. */
static WINOGRAD_ALWAYS_INLINE void winograd_store_row(vf even, vf odd, float *row,
                                                      const float *residual, ptrdiff_t columns,
                                                      vf lo, vf hi)
{
    vf a, b;
    vf_interleave(even, odd, &a, &b);
    const int whole = columns >= 2 * LANES;
    const vmask ma = vmask_first(columns), mb = vmask_first(columns - LANES);
    if (residual != NULL) {
        a = vf_add(a, winograd_load(residual, whole, ma));
        b = vf_add(b, winograd_load(residual + LANES, whole, mb));
    }
    STORE_LANES(row, whole, ma, vf_min(hi, vf_max(lo, a)));
    STORE_LANES(row + LANES, whole, mb, vf_min(hi, vf_max(lo, b)));
}

static inline void winograd_store_vectors(size_t n, const float *m, size_t m_stride,
                                          const ember_f32_winograd_rows *out)
{
    const vf bias = vf_set1(out->bias), lo = vf_set1(out->min), hi = vf_set1(out->max);
    for (size_t t = 0; t < n; t += LANES) {
        const vmask tiles = vmask_first((ptrdiff_t)(n - t));
        const int whole = t + LANES <= n;
        vf s0[4], s1[4]; /* Aᵀ M: column q's rows 0-2 summed, and rows 1 − 2 − 3 */
        for (size_t q = 0; q < 4; q++) {
            const vf m0 = winograd_load(m + q * m_stride + t, whole, tiles);
            const vf m1 = winograd_load(m + (4 + q) * m_stride + t, whole, tiles);
            const vf m2 = winograd_load(m + (8 + q) * m_stride + t, whole, tiles);
            const vf m3 = winograd_load(m + (12 + q) * m_stride + t, whole, tiles);
            s0[q] = vf_add(vf_add(m0, m1), m2);
            s1[q] = vf_sub(vf_sub(m1, m2), m3);
        }
        const vf y0 = vf_add(vf_add(vf_add(s0[0], s0[1]), s0[2]), bias);
        const vf y1 = vf_add(vf_sub(vf_sub(s0[1], s0[2]), s0[3]), bias);
        const vf y2 = vf_add(vf_add(vf_add(s1[0], s1[1]), s1[2]), bias);
        const vf y3 = vf_add(vf_sub(vf_sub(s1[1], s1[2]), s1[3]), bias);
        const ptrdiff_t columns = (ptrdiff_t)out->columns - 2 * (ptrdiff_t)t;
        winograd_store_row(y0, y1, out->rows[0] + 2 * t,
                           out->residual[0] ? out->residual[0] + 2 * t : NULL, columns, lo, hi);
        if (out->rows[1] != NULL)
            winograd_store_row(y2, y3, out->rows[1] + 2 * t,
                               out->residual[1] ? out->residual[1] + 2 * t : NULL, columns, lo,
                               hi);
    }
}

/* The four entry points of an x86 kernel file, for its ISA suffix. */
#define EMBER_F32_WINOGRAD_X86_DEFINE(suffix)                                              \
    EMBER_F32_WINOGRAD_DEFINE_INPUT(suffix, winograd_input_vectors)                        \
    void ember_f32_winograd_store__##suffix(size_t n, const float *m, size_t m_stride,     \
                                            const ember_f32_winograd_rows *out)            \
    {                                                                                      \
        winograd_store_vectors(n, m, m_stride, out);                                       \
    }                                                                                      \
    EMBER_F32_WINOGRAD_DEFINE_OUTPUT_FILTER(suffix)

#undef STORE_LANES

#endif /* EMBER_F32_WINOGRAD_X86_BODY_H */
