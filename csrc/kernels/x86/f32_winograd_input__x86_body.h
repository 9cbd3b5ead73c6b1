/*
 * f32_winograd_input__x86_body.h — the Winograd F(2×2, 3×3) input transform (kernels.h)
 * written once over a vector of floats, for f32_winograd__avx2_fma.c (8 tiles a vector)
 * and f32_winograd__avx512f.c (16). A row's 2·LANES + 2 columns under a vector of tiles
 * are four loads (at c, c + LANES, c + 2, c + LANES + 2), split into even and odd columns
 * by permutes, so d B and Bᵀ (d B) stay in registers and each V_ξ gets one store; the
 * input planes are read in place, masked loads giving the padding's zeros. The body's
 * loops (f32_winograd__body.h), with the row transforms strided through a stack buffer
 * and an edge's rows copied into padded lines, took as long as the 16 GEMMs they feed on
 * a 3×3 128 -> 32 conv at 56×56 (perf, AVX2 loops on AVX-512: 33% of the run each). The
 * same adds and subtracts run in the same order, so the bits are the scalar kernel's.
 * The includer defines:
 *
 *   vf, LANES                  the float vector and its lanes
 *   vf_loadu vf_add vf_sub vf_zero
 *   vmask, vmask_first(count)   a lane mask: lanes [0, count), count clamped to [0, LANES]
 *   vf_store_lanes(p, m, x)     x's lanes in m stored at p (others touch no memory)
 *   vf_columns(row, c, width)   columns c .. c + LANES − 1 of a row of `width`, zeros
 *                               outside it (a masked load at winograd_column_address,
 *                               f32_winograd__body.h)
 *   vf_evens(a, b), vf_odds(a, b)  lanes 0, 2, 4, … (1, 3, 5, …) of a then b
 */
#ifndef EMBER_F32_WINOGRAD_INPUT_X86_BODY_H
#define EMBER_F32_WINOGRAD_INPUT_X86_BODY_H

#include <stddef.h>

/* The four row transforms and their sixteen vectors in registers: as calls, GCC passed
 * them through memory. */
#define WINOGRAD_ALWAYS_INLINE inline __attribute__((always_inline))

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

/* Column q of Bᵀ (d B) from column q of d B's rows x, y, z, w: V_q, V_4+q, V_8+q, V_12+q
 * (v at V_q), the lanes in m stored. */
static WINOGRAD_ALWAYS_INLINE void winograd_column_vector(vf x, vf y, vf z, vf w, vmask m,
                                                          float *v, size_t v_stride)
{
    vf_store_lanes(v, m, vf_sub(x, z));
    vf_store_lanes(v + 4 * v_stride, m, vf_add(y, z));
    vf_store_lanes(v + 8 * v_stride, m, vf_sub(z, y));
    vf_store_lanes(v + 12 * v_stride, m, vf_sub(y, w));
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
        const vmask m = vmask_first((ptrdiff_t)(n - t));
        float *o = v + t;
        winograd_column_vector(a0, b0, e0, f0, m, o, v_stride);
        winograd_column_vector(a1, b1, e1, f1, m, o + v_stride, v_stride);
        winograd_column_vector(a2, b2, e2, f2, m, o + 2 * v_stride, v_stride);
        winograd_column_vector(a3, b3, e3, f3, m, o + 3 * v_stride, v_stride);
    }
}

#endif /* EMBER_F32_WINOGRAD_INPUT_X86_BODY_H */
