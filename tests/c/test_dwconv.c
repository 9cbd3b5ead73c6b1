/*
 * test_dwconv — every f32_dwconv kernel of this build that the CPU can run, its generic
 * and its 3×3 stride-2 run, against a double-precision reference and the scalar kernel.
 *
 * For 1, 2, 9 and 25 taps and every n in 0..3·32+1 (below, at and above every vector
 * width, chunk and their multiples, so every tail shape): random inputs and weights, with
 * and without a clamp (ReLU6-like bounds inside the value range), each tap's input ending
 * exactly at a PROT_NONE page (reading past src[t][n) faults), out between sentinels (a
 * write outside out[0..n) is caught). Tolerance 1e-5 · (Σ|w·x| + |bias| + 1): FMA and
 * the armv7 kernel's twice-rounded multiply-add differ from the scalar kernel's rounding.
 * Also a NaN input must give NaN at its output (no clamp swallows it) and nowhere else
 * (no lane of a tail mixes outputs), and the dispatch choice is printed
 * ("dispatch: f32_dwconv -> name"). The 3×3 stride-2 run: the same for every n in 0..97,
 * each row ending at a PROT_NONE page after the 2n + 2 floats it may read, the last of
 * them a NaN no output may take in.
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

#define MAX_N 97
#define SENTINEL 12345.0f

static int passed, failed;

static void check(int ok, const char *kernel, size_t taps, size_t n, const char *what)
{
    if (ok) {
        passed++;
        return;
    }
    if (failed++ < 20)
        printf("FAIL %s taps %zu n %zu: %s\n", kernel, taps, n, what);
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

enum { MAX_TAPS = 25 };

static void run_case(const ember_f32_dwconv_kernel *kernel, size_t taps, size_t n, int clamp)
{
    const ember_f32_dwconv_kernel *scalar = &ember_f32_dwconv_kernels[0];
    guarded inputs[MAX_TAPS];
    const float *src[MAX_TAPS];
    float w[MAX_TAPS], bias = uniform();
    for (size_t t = 0; t < taps; t++) {
        inputs[t] = guarded_new(n);
        for (size_t x = 0; x < n; x++)
            inputs[t].data[x] = uniform();
        src[t] = inputs[t].data;
        w[t] = uniform();
    }
    const ember_f32_dwconv_params params = {clamp ? -0.5f : -INFINITY, clamp ? 0.75f : INFINITY};
    float out[MAX_N + 2], ref[MAX_N + 2];
    for (size_t o = 0; o < n + 2; o++)
        out[o] = ref[o] = SENTINEL;
    kernel->fn(n, taps, src, w, bias, out + 1, &params);
    scalar->fn(n, taps, src, w, bias, ref + 1, &params);
    int ok_exact = 1, ok_scalar = 1;
    for (size_t o = 0; o < n; o++) {
        double sum = bias, magnitude = fabs(bias) + 1.0;
        for (size_t t = 0; t < taps; t++) {
            const double term = (double)w[t] * src[t][o];
            sum += term;
            magnitude += fabs(term);
        }
        sum = sum < params.min ? params.min : sum;
        sum = sum > params.max ? params.max : sum;
        const double tolerance = 1e-5 * magnitude;
        ok_exact &= fabs(out[o + 1] - sum) <= tolerance;
        ok_scalar &= fabs(out[o + 1] - ref[o + 1]) <= 2 * tolerance;
    }
    check(ok_exact, kernel->name, taps, n, "differs from the double reference");
    check(ok_scalar, kernel->name, taps, n, "differs from the scalar kernel");
    check(out[0] == SENTINEL && out[n + 1] == SENTINEL, kernel->name, taps, n,
          "wrote outside out[0..n)");
    if (n > 0 && !clamp) { /* a NaN input reaches its output, and only that one */
        const size_t at = (size_t)rand() % n;
        inputs[taps - 1].data[at] = NAN;
        kernel->fn(n, taps, src, w, bias, out + 1, &params);
        int others_finite = 1;
        for (size_t o = 0; o < n; o++)
            others_finite &= o == at || !isnan(out[o + 1]);
        check(isnan(out[at + 1]) && others_finite, kernel->name, taps, n,
              "NaN input did not give NaN exactly at its output");
    }
    for (size_t t = 0; t < taps; t++)
        munmap(inputs[t].base, inputs[t].bytes);
}

/* The 3×3 stride-2 run: each row holds exactly the 2n + 2 floats the contract lets it
 * read, the last one a NaN that no output may use. */
static void run_case_3x3s2(const ember_f32_dwconv_kernel *kernel, size_t n, int clamp)
{
    const ember_f32_dwconv_kernel *scalar = &ember_f32_dwconv_kernels[0];
    const size_t floats = 2 * n + 2;
    guarded rows[3];
    const float *row[3];
    float w[9], bias = uniform();
    for (size_t r = 0; r < 3; r++) {
        rows[r] = guarded_new(floats);
        for (size_t x = 0; x < floats; x++)
            rows[r].data[x] = x + 1 == floats ? NAN : uniform();
        row[r] = rows[r].data;
    }
    for (size_t t = 0; t < 9; t++)
        w[t] = uniform();
    const ember_f32_dwconv_params params = {clamp ? -0.5f : -INFINITY, clamp ? 0.75f : INFINITY};
    float out[MAX_N + 2], ref[MAX_N + 2];
    for (size_t o = 0; o < n + 2; o++)
        out[o] = ref[o] = SENTINEL;
    kernel->fn_3x3s2(n, row, w, bias, out + 1, &params);
    scalar->fn_3x3s2(n, row, w, bias, ref + 1, &params);
    int ok_exact = 1, ok_scalar = 1;
    for (size_t o = 0; o < n; o++) {
        double sum = bias, magnitude = fabs(bias) + 1.0;
        for (size_t t = 0; t < 9; t++) {
            const double term = (double)w[t] * row[t / 3][2 * o + t % 3];
            sum += term;
            magnitude += fabs(term);
        }
        sum = sum < params.min ? params.min : sum;
        sum = sum > params.max ? params.max : sum;
        const double tolerance = 1e-5 * magnitude;
        ok_exact &= fabs(out[o + 1] - sum) <= tolerance; /* false for a NaN */
        ok_scalar &= fabs(out[o + 1] - ref[o + 1]) <= 2 * tolerance;
    }
    check(ok_exact, kernel->name, 9, n, "3x3s2 differs from the double reference");
    check(ok_scalar, kernel->name, 9, n, "3x3s2 differs from the scalar kernel");
    check(out[0] == SENTINEL && out[n + 1] == SENTINEL, kernel->name, 9, n,
          "3x3s2 wrote outside out[0..n)");
    if (n > 0 && !clamp) { /* an odd column is the middle tap of its output only */
        const size_t at = (size_t)rand() % n, r = (size_t)rand() % 3;
        rows[r].data[2 * at + 1] = NAN;
        kernel->fn_3x3s2(n, row, w, bias, out + 1, &params);
        int others_finite = 1;
        for (size_t o = 0; o < n; o++)
            others_finite &= o == at || !isnan(out[o + 1]);
        check(isnan(out[at + 1]) && others_finite, kernel->name, 9, n,
              "3x3s2: NaN input did not give NaN exactly at its output");
    }
    for (size_t r = 0; r < 3; r++)
        munmap(rows[r].base, rows[r].bytes);
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
        static const size_t tap_counts[] = {1, 2, 9, MAX_TAPS};
        for (size_t i_taps = 0; i_taps < sizeof tap_counts / sizeof *tap_counts; i_taps++)
            for (size_t n = 0; n <= MAX_N; n++)
                for (int clamp = 0; clamp <= 1; clamp++)
                    run_case(kernel, tap_counts[i_taps], n, clamp);
        for (size_t n = 0; n <= MAX_N; n++)
            for (int clamp = 0; clamp <= 1; clamp++)
                run_case_3x3s2(kernel, n, clamp);
        printf("tested %s\n", kernel->name);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
