/*
 * test_pack — the GEMM operands' packing (kernels.h: ember_f32_pack_a / pack_b, shared by
 * every kernel), element by element against the definition of the panels: every panel
 * width of the kernels (1, 4, 6, 8, 12, 16), matrices of full and partial panels, K
 * around the 4-column steps of row-major A's transposes, in three layouts (row-major,
 * transposed, row-major inside a wider matrix); rows past m (A) or columns past n (B)
 * zero; the packed size exact, the panels ending at an inaccessible page so that a write
 * past them crashes (on_crash names the case).
 *
 * And every f32_pack_scaled kernel the CPU runs (B's rows scaled as they are packed: a
 * scale fused before a 1×1 conv) bit for bit against its definition, the multiply, the
 * add and the clamp each rounded on its own: panel widths of every kernel and a few more
 * (a plain copy's 56), n around the vector steps, with and without a shift, four clamps,
 * NaNs, infinities and zeros of both signs among the inputs; each source ending at an
 * inaccessible page after the last row's n floats, which a masked tail must not read.
 * Prints "dispatch: f32_pack_scaled -> name", then "N passed, M failed"; exits 1 on any
 * failure.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "kernels/kernels.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

static void fill_random(float *x, size_t count)
{
    for (size_t i = 0; i < count; i++)
        x[i] = (float)rand() / RAND_MAX * 2.0f - 1.0f;
}

static void test_packing(void)
{
    /* row-major A (cs = 1) packs four columns at a time, four rows (then two, then one)
     * at a time: panels of 4, 6, 8, 12 rows, full and partial, K past and short of 4s */
    static const size_t tiles[] = {1, 4, 6, 8, 12, 16};
    static const size_t sizes[] = {1, 2, 3, 5, 6, 8, 11, 17};
    static const size_t ks[] = {0, 1, 4, 7, 9, 20};
    char what[200];
    for (size_t ti = 0; ti < sizeof tiles / sizeof tiles[0]; ti++) {
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
                for (int layout = 0; layout < 3; layout++) {
                    const size_t tile = tiles[ti], rows = sizes[si], k = ks[ki];
                    /* layout 0: row-major; 1: transposed; 2: row-major inside a wider
                     * matrix (row stride k + 3), as a slice would be. */
                    const size_t rs = layout == 0 ? k : layout == 1 ? 1 : k + 3;
                    const size_t cs = layout == 1 ? rows : 1;
                    const size_t src_floats = rows * (k + 3) + 1;
                    float *src = malloc(src_floats * sizeof(float));
                    fill_random(src, src_floats);
                    const size_t expect = (rows + tile - 1) / tile * tile * k;

                    /* A: m = rows, element (i, p) at i*rs + p*cs. */
                    const size_t a_floats = ember_f32_packed_a_floats(tile, rows, k);
                    float *packed = guarded_floats(a_floats);
                    snprintf(current_case, sizeof current_case, "pack_a mr=%zu m=%zu k=%zu "
                             "layout=%d", tile, rows, k, layout);
                    ember_f32_pack_a(tile, rows, k, src, rs, cs, packed);
                    int ok = a_floats == expect;
                    for (size_t i0 = 0; ok && i0 < rows; i0 += tile) {
                        for (size_t p = 0; ok && p < k; p++) {
                            for (size_t r = 0; ok && r < tile; r++) {
                                const float want = i0 + r < rows ? src[(i0 + r) * rs + p * cs] : 0.0f;
                                ok = packed[i0 * k + p * tile + r] == want;
                            }
                        }
                    }
                    snprintf(what, sizeof what, "pack_a mr=%zu m=%zu k=%zu layout=%d", tile, rows,
                             k, layout);
                    check(ok, what);
                    guarded_floats_free(packed, a_floats);

                    /* B: n = rows, element (p, j) at p*cs + j*rs (the same storage read as
                     * the transpose of A's). */
                    const size_t b_floats = ember_f32_packed_b_floats(tile, k, rows);
                    packed = guarded_floats(b_floats);
                    snprintf(current_case, sizeof current_case, "pack_b nr=%zu n=%zu k=%zu "
                             "layout=%d", tile, rows, k, layout);
                    ember_f32_pack_b(tile, k, rows, src, cs, rs, packed);
                    ok = b_floats == expect;
                    for (size_t j0 = 0; ok && j0 < rows; j0 += tile) {
                        for (size_t p = 0; ok && p < k; p++) {
                            for (size_t c = 0; ok && c < tile; c++) {
                                const float want = j0 + c < rows ? src[p * cs + (j0 + c) * rs] : 0.0f;
                                ok = packed[j0 * k + p * tile + c] == want;
                            }
                        }
                    }
                    snprintf(what, sizeof what, "pack_b nr=%zu n=%zu k=%zu layout=%d", tile, rows,
                             k, layout);
                    check(ok, what);
                    guarded_floats_free(packed, b_floats);
                    free(src);
                }
            }
        }
    }
}

/* A source value: mostly in [-2, 2], sometimes a NaN, an infinity or a signed zero. */
static float source_value(void)
{
    switch (rand() % 16) {
    case 0: return NAN;
    case 1: return rand() % 2 ? INFINITY : -INFINITY;
    case 2: return rand() % 2 ? 0.0f : -0.0f;
    default: return (float)rand() / RAND_MAX * 4.0f - 2.0f;
    }
}

static float scaled_value(float x, float s, const float *t, float lo, float hi)
{
    float v = x * s;
    if (t != NULL)
        v = v + *t;
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
}

static int same_or_both_nan(float a, float b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static void test_scaled_case(const ember_f32_pack_scaled_kernel *kernel, size_t nr, size_t k,
                             size_t n, int shifted, float lo, float hi)
{
    const size_t rs = n + 5, src_floats = k ? (k - 1) * rs + n : 0;
    float *src = guarded_floats(src_floats);
    for (size_t i = 0; i < src_floats; i++)
        src[i] = source_value();
    float scale[8], shift[8];
    for (size_t p = 0; p < k; p++) {
        scale[p] = p == 1 ? 0.0f : p == 2 ? -0.0f : (float)rand() / RAND_MAX * 3.0f - 1.5f;
        shift[p] = (float)rand() / RAND_MAX * 2.0f - 1.0f;
    }
    const ember_f32_scaled_rows rows = {scale, shifted ? shift : NULL, lo, hi};
    const size_t floats = ember_f32_packed_b_floats(nr, k, n);
    float *packed = guarded_floats(floats);
    snprintf(current_case, sizeof current_case, "%s nr=%zu k=%zu n=%zu shift=%d clamp=[%g, %g]",
             kernel->name, nr, k, n, shifted, lo, hi);
    kernel->fn(nr, k, n, src, rs, &rows, packed);
    int ok = 1;
    for (size_t j0 = 0; ok && j0 < n; j0 += nr)
        for (size_t p = 0; ok && p < k; p++)
            for (size_t c = 0; ok && c < nr; c++) {
                const float want = j0 + c < n ? scaled_value(src[p * rs + j0 + c], scale[p],
                                                             shifted ? &shift[p] : NULL, lo, hi)
                                              : 0.0f;
                ok = same_or_both_nan(packed[j0 * k + p * nr + c], want);
            }
    check(ok, current_case);
    guarded_floats_free(packed, floats);
    guarded_floats_free(src, src_floats);
}

static void test_scaled_packing(void)
{
    static const size_t widths[] = {4, 8, 16, 32, 56};
    static const size_t ns[] = {0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 49, 64, 100};
    static const size_t ks[] = {0, 1, 3, 8};
    static const float clamps[][2] = {{-INFINITY, INFINITY}, {0.0f, INFINITY}, {0.0f, 6.0f},
                                      {-1.0f, 1.0f}};
    for (size_t i = 0; i < ember_f32_pack_scaled_kernel_count; i++) {
        const ember_f32_pack_scaled_kernel *kernel = &ember_f32_pack_scaled_kernels[i];
        if (!ember_cpu_has(kernel->isa))
            continue;
        for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++)
            for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
                for (size_t b = 0; b < sizeof ks / sizeof ks[0]; b++)
                    for (size_t c = 0; c < sizeof clamps / sizeof clamps[0]; c++)
                        for (int shifted = 0; shifted < 2; shifted++)
                            test_scaled_case(kernel, widths[w], ks[b], ns[a], shifted,
                                             clamps[c][0], clamps[c][1]);
    }
}

int main(void)
{
    signal(SIGSEGV, on_crash);
    signal(SIGBUS, on_crash);
    srand(3);
    printf("dispatch: f32_pack_scaled -> %s\n", ember_kernel_config_get()->f32_pack_scaled->name);
    test_packing();
    test_scaled_packing();
    printf("%lu passed, %lu failed\n", passed, failed);
    return failed ? 1 : 0;
}
