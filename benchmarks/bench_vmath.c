/*
 * bench_vmath — throughput of every f32 elementwise transcendental kernel of this build,
 * in Gelem/s, single-threaded, on an L1-resident (4 KiB) and an L2-resident (256 KiB)
 * array of inputs in [-10, 10]. Not built by default:
 *
 *   gcc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Icsrc benchmarks/bench_vmath.c \
 *       build/host/libember.a -lm -lpthread -o build/host/bench_vmath
 *
 * Never time under QEMU.
 */
#include "kernels/kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double gelems(const ember_f32_vunary_kernel *kernel, size_t n, const float *x, float *y)
{
    size_t reps = 1;
    double elapsed = 0.0;
    for (;;) { /* double the repetitions until a run takes 0.2 s */
        const double start = now();
        for (size_t r = 0; r < reps; r++) {
            kernel->fn(n, x, y);
        }
        elapsed = now() - start;
        if (elapsed > 0.2) {
            break;
        }
        reps *= 2;
    }
    return (double)n * (double)reps / elapsed * 1e-9;
}

static void bench_family(const ember_f32_vunary_kernel *kernels, size_t count, const float *x,
                         float *y)
{
    static const size_t SIZES[] = {1024, 65536};
    for (size_t k = 0; k < count; k++) {
        if (!ember_cpu_has(kernels[k].isa)) {
            continue;
        }
        printf("%-28s", kernels[k].name);
        for (size_t s = 0; s < sizeof SIZES / sizeof SIZES[0]; s++) {
            printf(" %10.2f", gelems(&kernels[k], SIZES[s], x, y));
        }
        printf("\n");
    }
}

int main(void)
{
    const size_t n = 65536;
    float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
    if (!x || !y) {
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        x[i] = -10.0f + 20.0f * (float)((i * 2654435761u) % n) / (float)n;
    }
    printf("%-28s %10s %10s   (Gelem/s)\n", "kernel", "n=1024", "n=65536");
    bench_family(ember_f32_vexp_kernels, ember_f32_vexp_kernel_count, x, y);
    bench_family(ember_f32_vsigmoid_kernels, ember_f32_vsigmoid_kernel_count, x, y);
    bench_family(ember_f32_vtanh_kernels, ember_f32_vtanh_kernel_count, x, y);
    bench_family(ember_f32_verf_kernels, ember_f32_verf_kernel_count, x, y);
    free(x);
    free(y);
    return 0;
}
