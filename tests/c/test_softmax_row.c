/*
 * test_softmax_row — every f32_softmax_row kernel of this build that the CPU can run (a
 * softmax over one contiguous row, kernels.h) bit for bit against the scalar kernel, the
 * definition, given the exp kernel of the kernel's ISA (whose recipe it inlines; the
 * dispatched one for the scalar kernel);
 * and the scalar kernel against a double-precision softmax (within (8 + |x − max|) units
 * of 2^-24, relative: the rounding of x − max, exp's ulp or two, the sum and the scale).
 *
 * For every n in 1..MAX_N (whole vectors and every tail) and in place: rows uniform in
 * [-20, 20), rows with a NaN (every output NaN), with -inf (its output 0), with a +inf
 * (NaN: inf - inf), and of equal values. x ends exactly at an inaccessible page, y lies
 * between sentinels.
 * Prints "dispatch: f32_softmax_row -> name", then "N passed, M failed"; exits 1 on any
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

#define MAX_N 70
#define SENTINEL 12345.0f
/* Relative error against double, in units of 2^-24: x − max rounds to float (an error of
 * |x − max|·2^-24 in exp's argument: the same relative error in its result), then exp's
 * ulp or two, the sum's and the scale's roundings (SLACK units). */
#define SLACK 8.0

static double worst; /* the largest error seen, as a share of its bound */

enum { UNIFORM, A_NAN, MINUS_INF, PLUS_INF, EQUAL, KINDS };

static int same_bits(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

static void fill(float *x, size_t n, int kind)
{
    for (size_t i = 0; i < n; i++)
        x[i] = kind == EQUAL ? 0.75f : (float)rand() / RAND_MAX * 40.0f - 20.0f;
    const size_t at = (size_t)rand() % n;
    if (kind == A_NAN)
        x[at] = NAN;
    else if (kind == MINUS_INF)
        x[at] = -INFINITY;
    else if (kind == PLUS_INF)
        x[at] = INFINITY;
}

/* The scalar kernel against a softmax in double. */
static void check_definition(const float *x, const float *y, size_t n, int kind)
{
    double max = -INFINITY, sum = 0.0;
    for (size_t i = 0; i < n; i++)
        max = x[i] > max ? x[i] : max;
    for (size_t i = 0; i < n; i++)
        sum += exp((double)x[i] - max);
    int ok = 1;
    for (size_t i = 0; i < n; i++) {
        const double want = exp((double)x[i] - max) / sum;
        if (isnan(want) || kind == A_NAN || kind == PLUS_INF)
            ok &= isnan(y[i]) != 0;
        else if (want == 0.0) /* exp(-inf) */
            ok &= y[i] == 0.0f;
        else {
            const double bound = (SLACK + fabs((double)x[i] - max)) * 0x1p-24 * want;
            ok &= fabs(y[i] - want) <= bound;
            if (want > 0 && fabs(y[i] - want) / bound > worst)
                worst = fabs(y[i] - want) / bound;
        }
    }
    check(ok, current_case);
}

/* The exp kernel of `isa` (whose recipe that ISA's softmax kernel inlines), or the
 * dispatched one for the scalar kernel. */
static ember_f32_vunary_fn exp_of(ember_isa isa)
{
    for (size_t k = 0; isa != EMBER_ISA_SCALAR && k < ember_f32_vexp_kernel_count; k++)
        if (ember_f32_vexp_kernels[k].isa == isa)
            return ember_f32_vexp_kernels[k].fn;
    return ember_kernel_config_get()->f32_vexp->fn;
}

static void test_case(const ember_f32_softmax_row_kernel *kernel, size_t n, int kind,
                      int in_place)
{
    const ember_f32_softmax_row_kernel *scalar = &ember_f32_softmax_row_kernels[0];
    const ember_f32_vunary_fn vexp = exp_of(kernel->isa);
    float *x = guarded_floats(n);
    fill(x, n, kind);
    float want[MAX_N], y[MAX_N + 2], copy[MAX_N];
    memcpy(copy, x, n * sizeof(float));
    scalar->fn(n, copy, want, vexp);
    for (size_t i = 0; i < n + 2; i++)
        y[i] = SENTINEL;
    snprintf(current_case, sizeof current_case, "%s n %zu kind %d%s", kernel->name, n, kind,
             in_place ? " in place" : "");
    if (in_place) {
        memcpy(y + 1, x, n * sizeof(float));
        kernel->fn(n, y + 1, y + 1, vexp);
    } else {
        kernel->fn(n, x, y + 1, vexp);
    }
    int ok = y[0] == SENTINEL && y[n + 1] == SENTINEL;
    for (size_t i = 0; i < n; i++)
        ok &= same_bits(y[1 + i], want[i]);
    check(ok, current_case);
    if (kernel == scalar)
        check_definition(x, want, n, kind);
    guarded_floats_free(x, n);
}

int main(void)
{
    signal(SIGSEGV, on_crash);
    signal(SIGBUS, on_crash);
    srand(5);
    printf("dispatch: f32_softmax_row -> %s\n",
           ember_kernel_config_get()->f32_softmax_row->name);
    for (size_t k = 0; k < ember_f32_softmax_row_kernel_count; k++) {
        const ember_f32_softmax_row_kernel *kernel = &ember_f32_softmax_row_kernels[k];
        if (!ember_cpu_has(kernel->isa))
            continue;
        printf("testing %s\n", kernel->name);
        for (size_t n = 1; n <= MAX_N; n++)
            for (int kind = 0; kind < KINDS; kind++)
                for (int in_place = 0; in_place <= 1; in_place++)
                    test_case(kernel, n, kind, in_place);
    }
    printf("the definition's worst error: %.2f of its bound\n", worst);
    printf("%lu passed, %lu failed\n", passed, failed);
    return failed ? 1 : 0;
}
