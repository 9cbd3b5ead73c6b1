/*
 * bench_gemm — GFLOP/s of every f32 GEMM kernel this CPU runs, through the driver
 * (ember_f32_gemm_packed) on operands packed once, single thread. Not built by default:
 *
 *   scons -j2 build/host/libember.a
 *   gcc -std=c11 -O2 -D_GNU_SOURCE -Iinclude -Icsrc benchmarks/bench_gemm.c \
 *       build/host/libember.a -lm -lpthread -o build/host/bench_gemm
 *   ./build/host/bench_gemm            # or: ./build/host/bench_gemm M N K
 *
 * Cross-built binaries can be run on a device; never time them under QEMU.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "kernels/kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void bench(const ember_f32_gemm_kernel *kernel, size_t m, size_t n, size_t k)
{
    float *a = malloc(m * k * sizeof(float)), *b = malloc(k * n * sizeof(float));
    float *c = malloc(m * n * sizeof(float)), *bias = malloc(n * sizeof(float));
    float *pa = malloc((ember_f32_packed_a_floats(kernel->mr, m, k) + 1) * sizeof(float));
    float *pb = malloc((ember_f32_packed_b_floats(kernel->nr, k, n) + 1) * sizeof(float));
    for (size_t i = 0; i < m * k; i++) a[i] = (float)((i * 7919) % 1000) * 1e-3f - 0.5f;
    for (size_t i = 0; i < k * n; i++) b[i] = (float)((i * 104729) % 1000) * 1e-3f - 0.5f;
    for (size_t i = 0; i < n; i++) bias[i] = 0.1f;
    ember_f32_pack_a(kernel->mr, m, k, a, k, 1, pa);
    ember_f32_pack_b(kernel->nr, k, n, b, n, 1, pb);
    const ember_f32_gemm_params params = {NULL, bias, 0, 0.0f, INFINITY};

    /* Repeat until 0.2 s, best of 3 such runs. */
    double best = INFINITY;
    for (int run = 0; run < 3; run++) {
        size_t reps = 0;
        const double start = now();
        double elapsed;
        do {
            ember_f32_gemm_packed(kernel, m, n, k, pa, pb, c, n * sizeof(float), &params);
            reps++;
            elapsed = now() - start;
        } while (elapsed < 0.2);
        if (elapsed / reps < best) best = elapsed / reps;
    }
    printf("%-30s m=%5zu n=%5zu k=%5zu  %8.2f GFLOP/s\n", kernel->name, m, n, k,
           2.0 * m * n * k / best * 1e-9);
    free(a); free(b); free(c); free(bias); free(pa); free(pb);
}

int main(int argc, char **argv)
{
    static const size_t sizes[][3] = {
        {64, 64, 64}, {256, 256, 256}, {512, 512, 512}, {196, 256, 1152}, /* 3×3 conv, 14×14 */
        {3136, 64, 64}, /* 1×1 conv, 56×56 */ {1, 1000, 1024}, /* matrix-vector */
    };
    printf("dispatch picks %s\n", ember_kernel_config_get()->f32_gemm->name);
    for (size_t i = 0; i < ember_f32_gemm_kernel_count; i++) {
        const ember_f32_gemm_kernel *kernel = &ember_f32_gemm_kernels[i];
        if (!ember_cpu_has(kernel->isa)) continue;
        if (argc == 4) {
            bench(kernel, strtoul(argv[1], NULL, 10), strtoul(argv[2], NULL, 10),
                  strtoul(argv[3], NULL, 10));
            continue;
        }
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            bench(kernel, sizes[s][0], sizes[s][1], sizes[s][2]);
        }
    }
    return 0;
}
