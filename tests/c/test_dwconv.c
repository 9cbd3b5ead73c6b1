/*
 * test_dwconv — every f32_dwconv kernel of this build that the CPU can run, against a
 * double-precision reference and the scalar kernel.
 *
 * For stride 1 and 2 and every n in 0..3·16+1 (below, at and above every vector width and
 * its multiples): random rows and taps, with and without a clamp (ReLU6-like bounds inside
 * the value range), rows ending exactly at a PROT_NONE page (reading past
 * row[(n−1)·s + 3) faults), out between sentinels (a write outside out[0..n) is caught).
 * Tolerance 1e-5 · (Σ|w·x| + |bias| + 1): the kernels sum in different orders, and the
 * armv7 one rounds twice per tap. Also NaN in an input must give NaN out (no clamp
 * swallows it), and the dispatch choice is printed ("dispatch: f32_dwconv -> name").
 * Prints "N passed, M failed" last; exits 1 on any failure.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "kernels/kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_N 49
#define SENTINEL 12345.0f

static int passed, failed;

static void check(int ok, const char *kernel, int s, size_t n, const char *what)
{
    if (ok) {
        passed++;
        return;
    }
    if (failed++ < 20)
        printf("FAIL %s stride %d n %zu: %s\n", kernel, s, n, what);
}

/* A buffer of `floats` floats ending exactly at an inaccessible page. */
typedef struct guarded {
    void *base;
    size_t bytes;
    float *data;
} guarded;

static guarded guarded_new(size_t floats)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t data = (floats * sizeof(float) + page - 1) / page * page;
    guarded g = {NULL, data + page, NULL};
    g.base = mmap(NULL, g.bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g.base == MAP_FAILED || mprotect((char *)g.base + data, page, PROT_NONE) != 0) {
        perror("test_dwconv: mmap");
        exit(2);
    }
    g.data = (float *)((char *)g.base + data) - floats;
    return g;
}

static float uniform(void)
{
    return (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
}

static void run_case(const ember_f32_dwconv_kernel *kernel, int s, size_t n, int clamp)
{
    const ember_f32_dwconv_kernel *scalar = &ember_f32_dwconv_kernels[0];
    const size_t width = n ? (n - 1) * (size_t)s + 3 : 0;
    guarded rows[3];
    const float *r[3];
    for (int i = 0; i < 3; i++) {
        rows[i] = guarded_new(width);
        for (size_t x = 0; x < width; x++)
            rows[i].data[x] = uniform();
        r[i] = rows[i].data;
    }
    float w[9], bias = uniform();
    for (int t = 0; t < 9; t++)
        w[t] = uniform();
    const ember_f32_dwconv_params params = {clamp ? -0.5f : -INFINITY, clamp ? 0.75f : INFINITY};
    float out[MAX_N + 2], ref[MAX_N + 2];
    for (size_t o = 0; o < n + 2; o++)
        out[o] = ref[o] = SENTINEL;
    ember_f32_dwconv_row_fn fn = s == 1 ? kernel->row_3x3s1 : kernel->row_3x3s2;
    ember_f32_dwconv_row_fn sfn = s == 1 ? scalar->row_3x3s1 : scalar->row_3x3s2;
    fn(n, r[0], r[1], r[2], w, bias, out + 1, &params);
    sfn(n, r[0], r[1], r[2], w, bias, ref + 1, &params);
    int ok_exact = 1, ok_scalar = 1;
    for (size_t o = 0; o < n; o++) {
        double sum = bias, magnitude = fabs(bias) + 1.0;
        for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++) {
                const double term = (double)w[3 * ky + kx] * r[ky][o * (size_t)s + (size_t)kx];
                sum += term;
                magnitude += fabs(term);
            }
        sum = sum < params.min ? params.min : sum;
        sum = sum > params.max ? params.max : sum;
        const double tolerance = 1e-5 * magnitude;
        ok_exact &= fabs(out[o + 1] - sum) <= tolerance;
        ok_scalar &= fabs(out[o + 1] - ref[o + 1]) <= 2 * tolerance;
    }
    check(ok_exact, kernel->name, s, n, "differs from the double reference");
    check(ok_scalar, kernel->name, s, n, "differs from the scalar kernel");
    check(out[0] == SENTINEL && out[n + 1] == SENTINEL, kernel->name, s, n,
          "wrote outside out[0..n)");
    if (n > 0 && !clamp) { /* a NaN input reaches its outputs */
        const size_t at = (n - 1) * (size_t)s + 1;
        rows[1].data[at] = NAN;
        fn(n, r[0], r[1], r[2], w, bias, out + 1, &params);
        check(isnan(out[n]), kernel->name, s, n, "NaN input did not give NaN");
    }
    for (int i = 0; i < 3; i++)
        munmap(rows[i].base, rows[i].bytes);
}

int main(void)
{
    srand(1);
    const ember_kernel_config *config = ember_kernel_config_get();
    const char *forced = getenv("EMBER_ISA");
    printf("dispatch: f32_dwconv -> %s (EMBER_ISA=%s)\n", config->f32_dwconv->name,
           forced ? forced : "");
    check(config->f32_dwconv != NULL && ember_cpu_has(config->f32_dwconv->isa), "dispatch", 0,
          0, "chosen kernel not runnable");
    for (size_t i = 0; i < ember_f32_dwconv_kernel_count; i++) {
        const ember_f32_dwconv_kernel *kernel = &ember_f32_dwconv_kernels[i];
        if (!ember_cpu_has(kernel->isa)) {
            printf("skip %s (CPU lacks %s)\n", kernel->name, ember_isa_name(kernel->isa));
            continue;
        }
        for (int s = 1; s <= 2; s++)
            for (size_t n = 0; n <= MAX_N; n++)
                for (int clamp = 0; clamp <= 1; clamp++)
                    run_case(kernel, s, n, clamp);
        printf("tested %s\n", kernel->name);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
