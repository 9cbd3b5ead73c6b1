/*
 * bench_gemm — GFLOP/s of every f32 GEMM kernel this CPU runs, through the driver
 * (ember_f32_gemm_packed) on operands packed once, single thread, and each as a share of
 * the peak it assumes: the rate of a loop of independent vector multiply-adds in
 * registers (12 chains, no loads) with the widest ISA the dispatched kernel uses, measured
 * right after each round of the GEMM, so a throttled or shared core lowers both sides of
 * each round's ratio. Not built by default:
 *
 *   scons -j2 build/host/libember.a
 *   gcc -std=c11 -O2 -D_GNU_SOURCE -Iinclude -Icsrc benchmarks/bench_gemm.c \
 *       build/host/libember.a -lm -lpthread -o build/host/bench_gemm
 *   ./build/host/bench_gemm            # or: ./build/host/bench_gemm M N K
 *
 * A '*' after a kernel's name marks the one the runtime runs that shape with.
 *
 * A shape of one row (m = 1: a fully connected layer at batch 1) runs as the runtime runs
 * it, through the kernel's GEMV over the same packed B (ops/matmul.c), and is reported
 * against the bound a GEMV has instead: the rate at which this core reads B's bytes
 * (a loop of vector loads summing a buffer of B's size, right after each round), since
 * each weight is read once for one multiply-add.
 *
 * Cross-built binaries can be run on a device; never time them under QEMU.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "kernels/kernels.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Multiply-adds of `iterations` × 12 independent vector chains; returns flops done. The
 * chains are written out (an array of vectors would live in memory at -O2) and their sum
 * goes to *sink so the loop is not removed. */
#define EMBER_CHAINS(X, ...)                                                                 \
    X(0, __VA_ARGS__) X(1, __VA_ARGS__) X(2, __VA_ARGS__) X(3, __VA_ARGS__) X(4, __VA_ARGS__) \
    X(5, __VA_ARGS__) X(6, __VA_ARGS__) X(7, __VA_ARGS__) X(8, __VA_ARGS__) X(9, __VA_ARGS__) \
    X(10, __VA_ARGS__) X(11, __VA_ARGS__)
#define EMBER_DECLARE(i, vec, set1) vec c##i = set1((float)(i));
#define EMBER_STEP(i, madd) c##i = madd(c##i, a, b);
#define EMBER_SUM(i, add) sum = add(sum, c##i);
/* The body of one ISA's loop: its vector type, set1, madd(c, a, b) = c·a + b, add, store
 * and lanes per vector. */
#define EMBER_FMA_LOOP(vec, set1, madd, add, store, lanes)                                 \
    const vec a = set1(0.999f), b = set1(1e-3f);                                             \
    vec sum = set1(0.0f);                                                                    \
    EMBER_CHAINS(EMBER_DECLARE, vec, set1)                                                   \
    for (uint64_t it = 0; it < iterations; it++) {                                           \
        EMBER_CHAINS(EMBER_STEP, madd)                                                       \
    }                                                                                        \
    EMBER_CHAINS(EMBER_SUM, add)                                                             \
    store(sink, sum);                                                                        \
    return 12.0 * (lanes) * 2 * (double)iterations;
#if defined(__x86_64__)
#include <immintrin.h>
__attribute__((target("avx2,fma"))) static double fma_loop_avx2(uint64_t iterations, float *sink)
{
    EMBER_FMA_LOOP(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, _mm256_storeu_ps, 8)
}
__attribute__((target("avx512f"))) static double fma_loop_avx512(uint64_t iterations, float *sink)
{
    EMBER_FMA_LOOP(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, _mm512_storeu_ps, 16)
}
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#define EMBER_NEON_MADD(c, a, b) vmlaq_f32(b, c, a)
static double fma_loop_neon(uint64_t iterations, float *sink)
{
    EMBER_FMA_LOOP(float32x4_t, vdupq_n_f32, EMBER_NEON_MADD, vaddq_f32, vst1q_f32, 4)
}
#endif

/* One run of `isa`'s multiply-add loop, GFLOP/s (0 where this build has no such loop:
 * the scalar kernel). 2·10^6 iterations: a few milliseconds. */
static double peak_gflops(ember_isa isa)
{
    float sink[16];
    const uint64_t iterations = 2 * 1000 * 1000;
    const double start = now();
    double flops = 0.0;
#if defined(__x86_64__)
    if (isa == EMBER_ISA_AVX512F)
        flops = fma_loop_avx512(iterations, sink);
    else if (isa == EMBER_ISA_AVX2_FMA)
        flops = fma_loop_avx2(iterations, sink);
#elif defined(__ARM_NEON)
    if (isa != EMBER_ISA_SCALAR)
        flops = fma_loop_neon(iterations, sink);
#else
    (void)isa;
#endif
    return flops / (now() - start) * 1e-9;
}

/* The sum of `floats` floats, read in vectors into 8 accumulators (enough independent adds
 * that the loads, not the adds, set the pace); returns the floats read (whole steps). */
#define EMBER_READ_LOOP(vec, set1, load, add, store, lanes)                                  \
    const size_t step = 8 * (lanes);                                                         \
    vec s0 = set1(0.0f), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;      \
    for (size_t i = 0; i + step <= floats; i += step) {                                      \
        s0 = add(s0, load(data + i));                                                        \
        s1 = add(s1, load(data + i + (lanes)));                                              \
        s2 = add(s2, load(data + i + 2 * (lanes)));                                          \
        s3 = add(s3, load(data + i + 3 * (lanes)));                                          \
        s4 = add(s4, load(data + i + 4 * (lanes)));                                          \
        s5 = add(s5, load(data + i + 5 * (lanes)));                                          \
        s6 = add(s6, load(data + i + 6 * (lanes)));                                          \
        s7 = add(s7, load(data + i + 7 * (lanes)));                                          \
    }                                                                                        \
    store(sink, add(add(add(s0, s1), add(s2, s3)), add(add(s4, s5), add(s6, s7))));          \
    return floats / step * step;
#if defined(__x86_64__)
__attribute__((target("avx2"))) static size_t read_avx2(const float *data, size_t floats, float *sink)
{
    EMBER_READ_LOOP(__m256, _mm256_set1_ps, _mm256_loadu_ps, _mm256_add_ps, _mm256_storeu_ps, 8)
}
__attribute__((target("avx512f"))) static size_t read_avx512(const float *data, size_t floats,
                                                           float *sink)
{
    EMBER_READ_LOOP(__m512, _mm512_set1_ps, _mm512_loadu_ps, _mm512_add_ps, _mm512_storeu_ps, 16)
}
#elif defined(__ARM_NEON)
static size_t read_neon(const float *data, size_t floats, float *sink)
{
    EMBER_READ_LOOP(float32x4_t, vdupq_n_f32, vld1q_f32, vaddq_f32, vst1q_f32, 4)
}
#endif

/* GB/s at which `isa`'s vector loads read `floats` floats at `data` (passes repeated for
 * 5 ms): the read bandwidth from wherever that buffer lives. 0 for the scalar ISA. */
static double read_gbps(ember_isa isa, const float *data, size_t floats)
{
    float sink[16];
    size_t read = 0;
    const double start = now();
    double elapsed;
    do {
#if defined(__x86_64__)
        if (isa == EMBER_ISA_AVX512F)
            read += read_avx512(data, floats, sink);
        else if (isa == EMBER_ISA_AVX2_FMA)
            read += read_avx2(data, floats, sink);
        else
            return 0.0;
#elif defined(__ARM_NEON)
        if (isa == EMBER_ISA_SCALAR)
            return 0.0;
        read += read_neon(data, floats, sink);
#else
        (void)isa;
        return 0.0;
#endif
        elapsed = now() - start;
    } while (elapsed < 0.005);
    return (double)read * sizeof(float) / elapsed * 1e-9;
}

static int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile of n values (sorted in place), nearest rank. */
static double quantile(double *values, size_t n, double q)
{
    qsort(values, n, sizeof *values, compare_doubles);
    return values[(size_t)(q * (double)(n - 1) + 0.5)];
}

enum { ROUNDS = 15 };

/* `floats` floats on whole cache lines, as the runtime's arena and packed weights are
 * (EMBER_ARENA_ALIGNMENT): malloc's 16-byte alignment splits a packed B row (16 floats
 * of AVX2, 32 of AVX-512) over two lines, which costs the kernel several percent. */
static float *cache_lines(size_t floats)
{
    const size_t bytes = (floats * sizeof(float) + 63) / 64 * 64;
    return aligned_alloc(64, bytes ? bytes : 64);
}

/* ROUNDS rounds, each the GEMM repeated for 20 ms then the peak loop once, right after:
 * the share of peak is taken round by round, so a machine whose speed moves (a shared
 * core, a clock that steps) moves both sides of each ratio. Prints the median GFLOP/s
 * and the median share with its quartiles. */
static void bench(const ember_f32_gemm_kernel *kernel, size_t m, size_t n, size_t k)
{
    float *a = malloc(m * k * sizeof(float)), *b = malloc(k * n * sizeof(float));
    float *c = cache_lines(m * n), *bias = malloc(n * sizeof(float));
    float *pa = cache_lines(ember_f32_packed_a_floats(kernel->mr, m, k) + 1);
    float *pb = cache_lines(ember_f32_packed_b_floats(kernel->nr, k, n) + 1);
    for (size_t i = 0; i < m * k; i++) a[i] = (float)((i * 7919) % 1000) * 1e-3f - 0.5f;
    for (size_t i = 0; i < k * n; i++) b[i] = (float)((i * 104729) % 1000) * 1e-3f - 0.5f;
    for (size_t i = 0; i < n; i++) bias[i] = 0.1f;
    ember_f32_pack_a(kernel->mr, m, k, a, k, 1, pa);
    ember_f32_pack_b(kernel->nr, k, n, b, n, 1, pb);
    const ember_f32_gemm_params params = {.bias_col = bias, .min = 0.0f, .max = INFINITY};

    double rates[ROUNDS], shares[ROUNDS];
    const int gemv = m == 1; /* as ops/matmul.c runs one row */
    const size_t b_floats = ember_f32_packed_b_floats(kernel->nr, k, n);
    for (int round = -1; round < ROUNDS; round++) { /* round -1 warms up */
        size_t reps = 0;
        const double start = now();
        double elapsed;
        do {
            if (gemv)
                kernel->gemv(kernel->nr, n, k, a, pb, c, &params);
            else
                ember_f32_gemm_packed(kernel, m, n, k, pa, pb, c, n * sizeof(float), &params);
            reps++;
            elapsed = now() - start;
        } while (elapsed < 0.02);
        if (round < 0)
            continue;
        rates[round] = 2.0 * m * n * k * reps / elapsed * 1e-9;
        const double bound = gemv ? read_gbps(kernel->isa, pb, b_floats) * 0.5 /* flop/byte */
                                  : peak_gflops(kernel->isa);
        shares[round] = bound > 0.0 ? rates[round] / bound : 0.0;
    }
    /* '*': the kernel the runtime runs this shape with (dispatch's, or for its rows the
     * taller one: ember_f32_gemm_for_rows) */
    const ember_f32_gemm_kernel *chosen = ember_kernel_config_get()->f32_gemm;
    const int runtime = kernel == ember_f32_gemm_for_rows(chosen, m);
    printf("%-30s%c m=%5zu n=%5zu k=%5zu  %8.2f GFLOP/s", gemv ? kernel->gemv_name : kernel->name,
           runtime ? '*' : ' ', m, n, k, quantile(rates, ROUNDS, 0.5));
    if (shares[0] > 0.0) {
        const double median = quantile(shares, ROUNDS, 0.5);
        printf("  %5.1f%% of %s (quartiles %.1f-%.1f)", 100.0 * median,
               gemv ? "B's read rate" : "peak", 100.0 * quantile(shares, ROUNDS, 0.25),
               100.0 * quantile(shares, ROUNDS, 0.75));
    }
    printf("\n");
    free(a); free(b); free(c); free(bias); free(pa); free(pb);
}

int main(int argc, char **argv)
{
    /* m = output channels, n = pixels, k = input channels × taps for the convs */
    static const size_t sizes[][3] = {
        {64, 64, 64}, {256, 256, 256}, {512, 512, 512}, {196, 256, 1152}, /* 3×3 conv, 14×14 */
        {3136, 64, 64}, /* 1×1 conv, 56×56 */ {1, 1000, 1024}, /* matrix-vector */
        {64, 3136, 576},  /* ResNet50 3×3 64 -> 64, 56×56 */
        {64, 3136, 256},  /* ResNet50 1×1 256 -> 64, 56×56 */
        {256, 196, 2304}, /* ResNet50 3×3 256 -> 256, 14×14 */
        {128, 3136, 1152}, /* VGG19 3×3 128 -> 128 at 56×56 */
        {576, 196, 96},   /* MobileNetV2 1×1 96 -> 576, 14×14 */
        {64, 3025, 144},  /* SqueezeNet 3×3 16 -> 64, 55×55 */
    };
    printf("dispatch picks %s\n", ember_kernel_config_get()->f32_gemm->name);
    for (size_t i = 0; i < ember_f32_gemm_kernel_count; i++) {
        const ember_f32_gemm_kernel *kernel = &ember_f32_gemm_kernels[i];
        if (!ember_cpu_has(kernel->isa)) continue;
        double peaks[5];
        for (int run = 0; run < 5; run++)
            peaks[run] = peak_gflops(kernel->isa);
        if (peaks[0] > 0.0)
            printf("%s: peak %.2f GFLOP/s now (12 chains of %s multiply-adds, median of 5; "
                   "measured again after every round)\n",
                   kernel->name, quantile(peaks, 5, 0.5), ember_isa_name(kernel->isa));
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
