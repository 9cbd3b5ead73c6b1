/*
 * test_pack — the GEMM operands' packing (kernels.h: ember_f32_pack_a / pack_b, shared by
 * every kernel), element by element against the definition of the panels: every panel
 * width of the kernels (1, 4, 6, 8, 12, 16), matrices of full and partial panels, K
 * around the 4-column steps of row-major A's transposes, in three layouts (row-major,
 * transposed, row-major inside a wider matrix); rows past m (A) or columns past n (B)
 * zero; the packed size exact, the panels ending at an inaccessible page so that a write
 * past them crashes (on_crash names the case).
 * Prints "N passed, M failed"; exits 1 on any failure.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "kernels/kernels.h"

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

int main(void)
{
    signal(SIGSEGV, on_crash);
    signal(SIGBUS, on_crash);
    srand(3);
    test_packing();
    printf("%lu passed, %lu failed\n", passed, failed);
    return failed ? 1 : 0;
}
