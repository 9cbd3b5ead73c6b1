/*
 * test_pool_row — every f32_pool_row kernel of this build that the CPU can run (a row of
 * a pool's step-2 windows, kernels.h) bit for bit against the definition written out
 * here: each column folded down the rows, the window's columns folded left to right, a
 * sum then divided. Max folds keep the held value unless the next is greater, so NaNs,
 * signed zeros and subnormals planted in the rows test the order too (the sums' rows are
 * normal numbers: ARMv7's NEON flushes subnormals).
 *
 * For every n in 0..MAX_N (below, at and past the 4-, 8- and 16-wide steps, and rows
 * ending on a partial step of each), kh 1..4, kw 2 and 3, max and sum: each row a buffer
 * ending exactly at an inaccessible page after the 2n - 2 + kw floats it may read, y
 * between sentinels.
 * Prints "dispatch: f32_pool_row -> name", then "N passed, M failed"; exits 1 on any
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

#define MAX_N 50
#define MAX_KH 4
#define SENTINEL 12345.0f

static float fold(float held, float next, int is_max)
{
    return is_max ? (next > held ? next : held) : held + next;
}

static float expected(const float *const *rows, size_t kh, size_t kw, int is_max,
                      float divisor, size_t i)
{
    float window = 0.0f;
    for (size_t s = 0; s < kw; s++) {
        float column = rows[0][2 * i + s];
        for (size_t t = 1; t < kh; t++)
            column = fold(column, rows[t][2 * i + s], is_max);
        window = s == 0 ? column : fold(window, column, is_max);
    }
    return is_max ? window : window / divisor;
}

static int same_bits(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

static void test_case(const ember_f32_pool_row_kernel *kernel, size_t n, size_t kh, size_t kw,
                      int is_max)
{
    const size_t reads = n ? 2 * n - 2 + kw : 0;
    float *rows[MAX_KH];
    for (size_t t = 0; t < kh; t++) {
        rows[t] = guarded_floats(reads);
        for (size_t j = 0; j < reads; j++)
            rows[t][j] = (float)rand() / RAND_MAX * 4.0f - 2.0f;
        /* max: signed zeros and subnormals among the numbers (a key of ARMv7's kernel
         * must order them as the floats compare: −0 = +0, the held one kept), a NaN in
         * the last row (dropped by a held number) and in some others (held) */
        for (size_t j = 0; is_max && j < reads; j++)
            if (rand() % 4 == 0) {
                static const float near_zero[] = {0.0f, -0.0f, 1e-40f, -1e-40f, 1e-45f, -3e-39f};
                rows[t][j] = near_zero[(size_t)rand() % 6];
            }
        if (is_max && reads > 3 && (t == kh - 1 || rand() % 2))
            rows[t][(size_t)rand() % reads] = NAN;
    }
    float y[MAX_N + 2];
    for (size_t i = 0; i < n + 2; i++)
        y[i] = SENTINEL;
    const float divisor = (float)(kh * kw);
    snprintf(current_case, sizeof current_case, "%s n %zu kh %zu kw %zu %s", kernel->name, n,
             kh, kw, is_max ? "max" : "sum");
    kernel->fn(n, (const float *const *)rows, kh, kw, is_max, divisor, y + 1);
    int ok = y[0] == SENTINEL && y[n + 1] == SENTINEL;
    for (size_t i = 0; i < n; i++)
        ok &= same_bits(y[1 + i], expected((const float *const *)rows, kh, kw, is_max,
                                           divisor, i));
    check(ok, current_case);
    for (size_t t = 0; t < kh; t++)
        guarded_floats_free(rows[t], reads);
}

int main(void)
{
    signal(SIGSEGV, on_crash);
    signal(SIGBUS, on_crash);
    srand(11);
    printf("dispatch: f32_pool_row -> %s\n", ember_kernel_config_get()->f32_pool_row->name);
    for (size_t k = 0; k < ember_f32_pool_row_kernel_count; k++) {
        const ember_f32_pool_row_kernel *kernel = &ember_f32_pool_row_kernels[k];
        if (!ember_cpu_has(kernel->isa))
            continue;
        printf("testing %s\n", kernel->name);
        for (size_t n = 0; n <= MAX_N; n++)
            for (size_t kh = 1; kh <= MAX_KH; kh++)
                for (size_t kw = 2; kw <= 3; kw++)
                    for (int is_max = 0; is_max <= 1; is_max++)
                        test_case(kernel, n, kh, kw, is_max);
    }
    printf("%lu passed, %lu failed\n", passed, failed);
    return failed ? 1 : 0;
}
