/*
 * test_gemv — every f32 GEMV kernel of this build that the CPU can run, at every panel
 * width it serves, against a double-precision reference (kernels.h, ember_f32_gemv_fn).
 *
 * For n in 1..3·nr+1 and k in {0,1,3,4,7,8,9,16,25,33,128}: random x and B (packed by
 * ember_f32_pack_b), every epilogue (none, bias_col, bias_row, accumulate, clamp, all of
 * them). x, the packed panels and bias_col end exactly at a PROT_NONE page (reading past
 * them faults and the crash handler names the case); y sits between sentinels (a write
 * past y[n) is caught). Tolerance 1e-5 · (Σ|x·b| + |biases| + |y before| + 1): kernels sum
 * in their own order, ARMv7's vmla rounds twice. A NaN in x must give NaN out through a
 * clamp. Then the driver, ember_f32_gemv_packed, over each GEMM kernel's panels: walked
 * backward (chunk by chunk from the last, bias_col offset per chunk) it must give the
 * forward walk's bits, on the same guarded operands. Prints "dispatch: f32_gemv -> name"
 * and "N passed, M failed" last; exits 1 on any failure.
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
#include <sys/mman.h>

#include "test_support.h"

#define SENTINEL 12345.0f
#define MAX_N (3 * 32 + 1)
#define DRIVER_MAX_N 300

static float uniform(void)
{
    return (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
}

/* The panel widths a GEMV kernel serves (kernels.h, the X list's comment). */
static int serves(const char *gemv_name, size_t nr)
{
    if (strstr(gemv_name, "avx512"))
        return nr % 32 == 0;
    if (strstr(gemv_name, "avx2"))
        return nr % 16 == 0;
    if (strstr(gemv_name, "neon"))
        return nr == 8;
    return 1;
}

enum { BIAS_COL = 1, BIAS_ROW = 2, ACCUMULATE = 4, CLAMP = 8, EPILOGUES = 16 };

typedef struct gemv_case {
    const char *name;
    ember_f32_gemv_fn gemv;
    size_t nr, n, k;
    int epilogue;
} gemv_case;

static void run_case(const gemv_case *c, int nan_in_x)
{
    const size_t nr = c->nr, n = c->n, k = c->k;
    float *x = guarded_floats(k), *bias_col = guarded_floats(n), bias_row = uniform();
    float *b = guarded_floats(ember_f32_packed_b_floats(nr, k, n));
    float *dense = malloc((k * n + 1) * sizeof(float));
    float y[MAX_N + 2], before[MAX_N];
    for (size_t p = 0; p < k; p++)
        x[p] = uniform();
    for (size_t i = 0; i < k * n; i++)
        dense[i] = uniform();
    for (size_t j = 0; j < n; j++)
        bias_col[j] = uniform(), before[j] = uniform();
    if (nan_in_x && k > 0)
        x[k / 2] = NAN;
    ember_f32_pack_b(nr, k, n, dense, n, 1, b);
    y[0] = y[n + 1] = SENTINEL;
    memcpy(y + 1, before, n * sizeof(float));
    const int e = c->epilogue;
    const ember_f32_gemm_params params = {.bias_row = e & BIAS_ROW ? &bias_row : NULL,
                                          .bias_col = e & BIAS_COL ? bias_col : NULL,
                                          .accumulate = e & ACCUMULATE,
                                          .min = e & CLAMP ? -0.5f : -INFINITY,
                                          .max = e & CLAMP ? 0.5f : INFINITY};
    snprintf(current_case, sizeof current_case, "%s nr %zu n %zu k %zu epilogue %d%s",
             c->name, nr, n, k, e, nan_in_x ? " NaN" : "");
    c->gemv(nr, n, k, x, b, y + 1, &params);
    int ok = y[0] == SENTINEL && y[n + 1] == SENTINEL;
    for (size_t j = 0; j < n && ok; j++) {
        double sum = 0.0, magnitude = 1.0;
        for (size_t p = 0; p < k; p++) {
            sum += (double)x[p] * dense[p * n + j];
            magnitude += fabs((double)x[p] * dense[p * n + j]);
        }
        const double extras[] = {e & BIAS_ROW ? bias_row : 0.0f, e & BIAS_COL ? bias_col[j] : 0.0f,
                                 e & ACCUMULATE ? before[j] : 0.0f};
        for (int i = 0; i < 3; i++)
            sum += extras[i], magnitude += fabs(extras[i]);
        if (e & CLAMP)
            sum = sum < -0.5 ? -0.5 : sum > 0.5 ? 0.5 : sum;
        if (nan_in_x && k > 0)
            ok = isnan(y[1 + j]);
        else
            ok = fabs(y[1 + j] - sum) <= 1e-5 * magnitude;
    }
    char what[320];
    snprintf(what, sizeof what, "%s: wrong result or a write outside y", current_case);
    check(ok, what);
    free(dense);
    guarded_floats_free(x, k);
    guarded_floats_free(bias_col, n);
    guarded_floats_free(b, ember_f32_packed_b_floats(nr, k, n));
}

static void test_kernel(const char *name, ember_f32_gemv_fn gemv)
{
    static const size_t depths[] = {0, 1, 3, 4, 7, 8, 9, 16, 25, 33, 128};
    for (size_t nr = 4; nr <= 32; nr *= 2) {
        if (!serves(name, nr))
            continue;
        for (size_t n = 1; n <= 3 * nr + 1; n++)
            for (size_t d = 0; d < sizeof depths / sizeof depths[0]; d++)
                for (int e = 0; e < EPILOGUES; e++) {
                    const gemv_case c = {name, gemv, nr, n, depths[d], e};
                    run_case(&c, 0);
                }
        const gemv_case nan_case = {name, gemv, nr, 2 * nr + 3, 33, CLAMP | ACCUMULATE};
        run_case(&nan_case, 1);
    }
}

/* ember_f32_gemv_packed backward against forward: the same bits, nothing written past y,
 * at widths that end mid-chunk and mid-panel, with every epilogue. */
static void test_driver(const ember_f32_gemm_kernel *kernel)
{
    static const size_t widths[] = {1, 31, 32, 63, 64, 65, 97, 130, 256, DRIVER_MAX_N};
    const size_t k = 37;
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        const size_t n = widths[w], packed = ember_f32_packed_b_floats(kernel->nr, k, n);
        float *x = guarded_floats(k), *bias_col = guarded_floats(n), *b = guarded_floats(packed);
        float *dense = malloc(k * n * sizeof(float)), bias_row = uniform();
        for (size_t p = 0; p < k; p++)
            x[p] = uniform();
        for (size_t i = 0; i < k * n; i++)
            dense[i] = uniform();
        for (size_t j = 0; j < n; j++)
            bias_col[j] = uniform();
        ember_f32_pack_b(kernel->nr, k, n, dense, n, 1, b);
        for (int e = 0; e < EPILOGUES; e++) {
            const ember_f32_gemm_params params = {
                .bias_row = e & BIAS_ROW ? &bias_row : NULL,
                .bias_col = e & BIAS_COL ? bias_col : NULL, .accumulate = e & ACCUMULATE,
                .min = e & CLAMP ? -0.5f : -INFINITY, .max = e & CLAMP ? 0.5f : INFINITY};
            float forward[DRIVER_MAX_N + 2], backward[DRIVER_MAX_N + 2];
            for (size_t j = 0; j < n + 2; j++)
                forward[j] = backward[j] = j == 0 || j == n + 1 ? SENTINEL : (float)j;
            ember_f32_gemv_packed(kernel, n, k, x, b, forward + 1, &params, 0);
            ember_f32_gemv_packed(kernel, n, k, x, b, backward + 1, &params, 1);
            char what[200];
            snprintf(what, sizeof what, "%s: gemv_packed backward = forward, n %zu epilogue %d",
                     kernel->name, n, e);
            check(memcmp(forward, backward, (n + 2) * sizeof(float)) == 0 &&
                      backward[n + 1] == SENTINEL,
                  what);
        }
        free(dense);
        guarded_floats_free(x, k);
        guarded_floats_free(bias_col, n);
        guarded_floats_free(b, packed);
    }
}

int main(void)
{
    signal(SIGSEGV, on_crash);
    signal(SIGBUS, on_crash);
    srand(7);
    const ember_kernel_config *config = ember_kernel_config_get();
    printf("dispatch: f32_gemv -> %s\n", config->f32_gemm->gemv_name);
    const char *tested[8];
    size_t tested_count = 0;
    for (size_t i = 0; i < ember_f32_gemm_kernel_count; i++) {
        const ember_f32_gemm_kernel *kernel = &ember_f32_gemm_kernels[i];
        int seen = 0;
        for (size_t t = 0; t < tested_count; t++)
            seen |= strcmp(tested[t], kernel->gemv_name) == 0;
        if (seen || !ember_cpu_has(kernel->isa) || tested_count == 8)
            continue;
        tested[tested_count++] = kernel->gemv_name;
        printf("testing %s\n", kernel->gemv_name);
        test_kernel(kernel->gemv_name, kernel->gemv);
    }
    for (size_t i = 0; i < ember_f32_gemm_kernel_count; i++)
        if (ember_cpu_has(ember_f32_gemm_kernels[i].isa))
            test_driver(&ember_f32_gemm_kernels[i]);
    check(serves(config->f32_gemm->gemv_name, config->f32_gemm->nr),
          "the chosen GEMM kernel's GEMV serves its panel width");
    printf("%lu passed, %lu failed\n", passed, failed);
    return failed ? 1 : 0;
}
