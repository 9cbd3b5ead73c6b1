/*
 * Packing of GEMM operands into the panels the micro-kernels read (see kernels.h).
 *
 * One implementation serves every kernel: only the tile sizes mr / nr differ. Inputs are
 * addressed by element strides, so a transposed or sliced operand packs without a copy.
 * Padding rows (A) and columns (B) are zero-filled: the kernels compute them but never
 * store them, and zeros keep the padded lanes finite.
 */
#include "kernels/kernels.h"

#include "base/move.h"

#include <string.h>

size_t ember_f32_packed_a_floats(size_t mr, size_t m, size_t k)
{
    return (m + mr - 1) / mr * mr * k;
}

size_t ember_f32_packed_b_floats(size_t nr, size_t k, size_t n)
{
    return (n + nr - 1) / nr * nr * k;
}

/*
 * A panel of A's contiguous rows (cs = 1: a matmul's activations, a recurrent layer's
 * frames), rows [0, rows) of the panel from `src` (row r at src + r·rs), transposed four
 * columns at a time: four rows' four floats in as vectors, out as four columns of the
 * panel (4 × 4 transposes by shuffles, which the compiler gives SSE2's or NEON's forms),
 * then a last pair of rows (AVX2's 6) as pairs, a last row float by float. Element by
 * element, with a load from each row per float stored, packing took 0.6-1.0 ns a float
 * on x86 (Zen 3), a fifth of a small transformer encoder's time. Where the compiler has
 * no vector extensions, the element loop serves (pack_a below).
 */
#if defined(__GNUC__)
#define EMBER_PACK_VECTORS 1
typedef float pack_v4 __attribute__((vector_size(16)));
typedef int pack_v4i __attribute__((vector_size(16)));
#if defined(__clang__)
#define PACK_SHUFFLE(a, b, i, j, k, l) __builtin_shufflevector(a, b, i, j, k, l)
#else
#define PACK_SHUFFLE(a, b, i, j, k, l) __builtin_shuffle(a, b, (pack_v4i){i, j, k, l})
#endif

static inline pack_v4 load4(const float *p)
{
    pack_v4 v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void store4(float *p, pack_v4 v)
{
    memcpy(p, &v, sizeof v);
}

/* Columns [p, p + 4) of four rows (row r at src + r·rs) into the panel's groups p .. p + 3
 * (group q at out + q·mr), as its rows [0, 4). */
static inline void transpose_4x4(const float *src, size_t rs, size_t mr, float *out)
{
    const pack_v4 r0 = load4(src), r1 = load4(src + rs);
    const pack_v4 r2 = load4(src + 2 * rs), r3 = load4(src + 3 * rs);
    const pack_v4 t0 = PACK_SHUFFLE(r0, r1, 0, 4, 1, 5), t1 = PACK_SHUFFLE(r0, r1, 2, 6, 3, 7);
    const pack_v4 t2 = PACK_SHUFFLE(r2, r3, 0, 4, 1, 5), t3 = PACK_SHUFFLE(r2, r3, 2, 6, 3, 7);
    store4(out, PACK_SHUFFLE(t0, t2, 0, 1, 4, 5));
    store4(out + mr, PACK_SHUFFLE(t0, t2, 2, 3, 6, 7));
    store4(out + 2 * mr, PACK_SHUFFLE(t1, t3, 0, 1, 4, 5));
    store4(out + 3 * mr, PACK_SHUFFLE(t1, t3, 2, 3, 6, 7));
}

/* The same for two rows: groups p .. p + 3 get a pair each. */
static inline void transpose_2x4(const float *src, size_t rs, size_t mr, float *out)
{
    const pack_v4 r0 = load4(src), r1 = load4(src + rs);
    const pack_v4 t0 = PACK_SHUFFLE(r0, r1, 0, 4, 1, 5), t1 = PACK_SHUFFLE(r0, r1, 2, 6, 3, 7);
    memcpy(out, &t0, 2 * sizeof(float));
    memcpy(out + mr, (const float *)&t0 + 2, 2 * sizeof(float));
    memcpy(out + 2 * mr, &t1, 2 * sizeof(float));
    memcpy(out + 3 * mr, (const float *)&t1 + 2, 2 * sizeof(float));
}

static void panel_of_rows(size_t mr, size_t rows, size_t k, const float *src, size_t rs,
                          float *packed)
{
    size_t p = 0;
    for (; p + 4 <= k; p += 4) {
        float *out = packed + p * mr;
        size_t r = 0;
        for (; r + 4 <= rows; r += 4)
            transpose_4x4(src + r * rs + p, rs, mr, out + r);
        if (r + 2 <= rows) {
            transpose_2x4(src + r * rs + p, rs, mr, out + r);
            r += 2;
        }
        for (; r < rows; r++) {
            const float *row = src + r * rs + p;
            out[r] = row[0];
            out[mr + r] = row[1];
            out[2 * mr + r] = row[2];
            out[3 * mr + r] = row[3];
        }
        for (; r < mr; r++)
            out[r] = out[mr + r] = out[2 * mr + r] = out[3 * mr + r] = 0.0f;
    }
    for (; p < k; p++) {
        float *out = packed + p * mr;
        size_t r = 0;
        for (; r < rows; r++)
            out[r] = src[r * rs + p];
        for (; r < mr; r++)
            out[r] = 0.0f;
    }
}
#else
#define EMBER_PACK_VECTORS 0
#endif

void ember_f32_pack_a(size_t mr, size_t m, size_t k, const float *a, size_t rs, size_t cs,
                      float *packed)
{
    if (rs == 1) { /* a column of A is contiguous: B's layout of A^T, and its fast path */
        ember_f32_pack_b(mr, k, m, a, cs, 1, packed);
        return;
    }
#if EMBER_PACK_VECTORS
    if (cs == 1 && mr >= 4) {
        for (size_t i0 = 0; i0 < m; i0 += mr, packed += mr * k)
            panel_of_rows(mr, m - i0 < mr ? m - i0 : mr, k, a + i0 * rs, rs, packed);
        return;
    }
#endif
    for (size_t i0 = 0; i0 < m; i0 += mr) {
        const size_t rows = m - i0 < mr ? m - i0 : mr;
        for (size_t p = 0; p < k; p++) {
            const float *src = a + i0 * rs + p * cs;
            size_t r = 0;
            for (; r < rows; r++) {
                packed[r] = src[r * rs];
            }
            for (; r < mr; r++) {
                packed[r] = 0.0f;
            }
            packed += mr;
        }
    }
}

/* A whole panel of contiguous rows (cs = 1, nr columns), nr a constant once inlined: each
 * row is one fixed-size copy the compiler turns into vector moves, four rows per loop
 * test (aarch64: 0.57 instructions per float packed where the general loop below spent
 * 3.7, for a 1x1 conv's input of 128 x 3025). */
static inline __attribute__((always_inline)) void
whole_panel(size_t nr, size_t k, const float *src, size_t rs, float *packed)
{
    size_t p = 0;
    for (; p + 4 <= k; p += 4, src += 4 * rs, packed += 4 * nr) { /* one loop test per 4 */
        ember_move_floats(packed, src, nr);
        ember_move_floats(packed + nr, src + rs, nr);
        ember_move_floats(packed + 2 * nr, src + 2 * rs, nr);
        ember_move_floats(packed + 3 * nr, src + 3 * rs, nr);
    }
    for (; p < k; p++, src += rs, packed += nr) {
        ember_move_floats(packed, src, nr);
    }
}

/* The fast path where it applies: a whole panel of a kernel's width, rows contiguous. */
static int packed_whole_panel(size_t nr, size_t k, size_t cols, const float *src, size_t rs,
                              size_t cs, float *packed)
{
    if (cs != 1 || cols != nr) {
        return 0;
    }
    switch (nr) {
    case 4: whole_panel(4, k, src, rs, packed); return 1;
    case 6: whole_panel(6, k, src, rs, packed); return 1; /* AVX2's mr, as pack_a's A^T */
    case 8: whole_panel(8, k, src, rs, packed); return 1;
    case 16: whole_panel(16, k, src, rs, packed); return 1;
    case 32: whole_panel(32, k, src, rs, packed); return 1;
    default: return 0;
    }
}

/* Each of B's k rows into row p of every whole panel, read front to back, four panels
 * per loop test (aarch64: the loop's own instructions were a third of the copy's). */
static inline __attribute__((always_inline)) void
rows_across_panels(size_t nr, size_t k, size_t panels, const float *b, size_t rs,
                   float *packed, size_t panel_floats)
{
    for (size_t p = 0; p < k; p++, b += rs, packed += nr) {
        const float *src = b;
        float *dst = packed;
        size_t q = 0;
        for (; q + 4 <= panels; q += 4, src += 4 * nr, dst += 4 * panel_floats) {
            ember_move_floats(dst, src, nr);
            ember_move_floats(dst + panel_floats, src + nr, nr);
            ember_move_floats(dst + 2 * panel_floats, src + 2 * nr, nr);
            ember_move_floats(dst + 3 * panel_floats, src + 3 * nr, nr);
        }
        for (; q < panels; q++, src += nr, dst += panel_floats)
            ember_move_floats(dst, src, nr);
    }
}

/* Contiguous rows (cs = 1) into whole panels a row at a time: each row of B is one stream
 * read front to back, which the prefetchers follow. Panel by panel, the k rows were k
 * streams read 64 bytes at a time, more than the prefetchers track (a 1x1 conv's input of
 * 144 channels), and planes a few cache sets apart evicted each other. Returns the
 * columns packed (whole panels only; 0 if nr is not one of the widths below). */
static size_t packed_by_rows(size_t nr, size_t k, size_t n, const float *b, size_t rs,
                             size_t cs, float *packed, size_t panel_floats)
{
    const size_t panels = n / nr;
    if (cs != 1 || panels < 2)
        return 0;
    switch (nr) {
    case 8: rows_across_panels(8, k, panels, b, rs, packed, panel_floats); break;
    case 16: rows_across_panels(16, k, panels, b, rs, packed, panel_floats); break;
    case 32: rows_across_panels(32, k, panels, b, rs, packed, panel_floats); break;
    default: return 0;
    }
    return panels * nr;
}

/* Row p of a partial panel: its `cols` floats, cs apart, then zeros to the panel's width.
 * Inlined with cs = 1 where the columns are contiguous, so the copy is vectorised: a 1×1
 * conv's last panel of a block (196 pixels: 4 columns of AVX-512's 32) went a float at a
 * time, a quarter of MobileNetV2's packing on an Emerald Rapids. */
static inline __attribute__((always_inline)) void
partial_row(size_t cols, size_t nr, const float *restrict src, size_t cs, float *restrict row)
{
    size_t j = 0;
    for (; j < cols; j++)
        row[j] = src[j * cs];
    for (; j < nr; j++)
        row[j] = 0.0f;
}

void ember_f32_pack_b_rows(size_t nr, size_t k, size_t n, const float *b, size_t rs,
                           size_t cs, float *packed, size_t panel_floats)
{
    const size_t done = packed_by_rows(nr, k, n, b, rs, cs, packed, panel_floats);
    packed += done / nr * panel_floats;
    for (size_t j0 = done; j0 < n; j0 += nr, packed += panel_floats) {
        const size_t cols = n - j0 < nr ? n - j0 : nr;
        if (packed_whole_panel(nr, k, cols, b + j0 * cs, rs, cs, packed)) {
            continue;
        }
        float *row = packed;
        for (size_t p = 0; p < k; p++, row += nr) {
            const float *src = b + p * rs + j0 * cs;
            if (cs == 1)
                partial_row(cols, nr, src, 1, row);
            else
                partial_row(cols, nr, src, cs, row);
        }
    }
}

void ember_f32_pack_b(size_t nr, size_t k, size_t n, const float *b, size_t rs, size_t cs,
                      float *packed)
{
    ember_f32_pack_b_rows(nr, k, n, b, rs, cs, packed, nr * k);
}

/* count floats of one row, scaled: the multiply, the add where `shifted`, the clamp. */
static inline __attribute__((always_inline)) void
scaled_run(size_t count, const float *restrict src, float s, float t, int shifted, float lo,
           float hi, float *restrict dst)
{
    if (shifted)
        for (size_t j = 0; j < count; j++) {
            float v = src[j] * s + t;
            v = v < lo ? lo : v;
            dst[j] = v > hi ? hi : v;
        }
    else
        for (size_t j = 0; j < count; j++) {
            float v = src[j] * s;
            v = v < lo ? lo : v;
            dst[j] = v > hi ? hi : v;
        }
}

/* Row p of B across the panels, front to back (one stream, as packed_by_rows reads), four
 * panels per loop test. */
static inline __attribute__((always_inline)) void
scaled_row(size_t nr, size_t n, const float *restrict src, float s, float t, int shifted,
           float lo, float hi, float *restrict dst, size_t panel_floats)
{
    size_t j0 = 0;
    for (; j0 + 4 * nr <= n; j0 += 4 * nr, dst += 4 * panel_floats) {
        scaled_run(nr, src + j0, s, t, shifted, lo, hi, dst);
        scaled_run(nr, src + j0 + nr, s, t, shifted, lo, hi, dst + panel_floats);
        scaled_run(nr, src + j0 + 2 * nr, s, t, shifted, lo, hi, dst + 2 * panel_floats);
        scaled_run(nr, src + j0 + 3 * nr, s, t, shifted, lo, hi, dst + 3 * panel_floats);
    }
    for (; j0 + nr <= n; j0 += nr, dst += panel_floats)
        scaled_run(nr, src + j0, s, t, shifted, lo, hi, dst);
    if (j0 < n) {
        scaled_run(n - j0, src + j0, s, t, shifted, lo, hi, dst);
        memset(dst + (n - j0), 0, (nr - (n - j0)) * sizeof(float));
    }
}

void ember_f32_pack_scaled__scalar(size_t nr, size_t k, size_t n, const float *b, size_t rs,
                                   const ember_f32_scaled_rows *rows, float *packed)
{
    const int shifted = rows->shift != NULL;
    const float lo = rows->min, hi = rows->max;
    for (size_t p = 0; p < k; p++, b += rs, packed += nr) {
        const float s = rows->scale[p], t = shifted ? rows->shift[p] : 0.0f;
        switch (nr) { /* the kernels' widths as constants: whole vectors, no remainder */
        case 8: scaled_row(8, n, b, s, t, shifted, lo, hi, packed, 8 * k); break;
        case 16: scaled_row(16, n, b, s, t, shifted, lo, hi, packed, 16 * k); break;
        case 32: scaled_row(32, n, b, s, t, shifted, lo, hi, packed, 32 * k); break;
        default: scaled_row(nr, n, b, s, t, shifted, lo, hi, packed, nr * k);
        }
    }
}
