/*
 * bench_ab — two builds of libember on one plan, in one process, runs alternated: the
 * time of build B as a ratio of build A's, robust to a shared machine whose speed moves
 * by 10-30% within minutes (separate processes, even interleaved, mostly measure that).
 * Each library is dlopen'ed on its own (RTLD_LOCAL: two copies of every symbol), both
 * prepare the plan, and each pair of runs is timed A then B or B then A, half the pairs
 * each way: the run after the other one's finds the caches as that one left them, and
 * the two halves' ratios show how much the order weighs. Inputs are uniform in [0, 1)
 * (f32, the plan's input shapes, which must be concrete), the same for both; the outputs
 * of the two are compared, so a change that alters the results is seen too.
 *
 * Not built by default:
 *
 *   gcc -std=c11 -O2 -D_GNU_SOURCE -Iinclude benchmarks/bench_ab.c -ldl -o build/bench_ab
 *   cp build/host/libember.so /tmp/a.so      # the build to compare against, copied
 *   ... change, rebuild ...
 *   ./build/bench_ab /tmp/a.so build/host/libember.so model.nnef.tar [pairs]
 *
 * (Two paths to one file would be one library to dlopen: copy one build away.)
 *
 * One build under two settings: a library argument may end in @NAME=VALUE[,NAME=VALUE…],
 * variables set while that library loads and prepares the plan (the kernel choice is
 * read once per loaded library, the conv forms at prepare), then unset:
 *
 *   ./build/bench_ab /tmp/a.so build/host/libember.so@EMBER_CORE=zen5 model.nnef.tar
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ember.h"

#define MAX_INPUTS 16

/* The public API of one loaded library. */
typedef struct build {
    const char *path;
    void *library;
    ember_status (*model_load)(const char *, ember_model **);
    size_t (*input_count)(const ember_model *);
    size_t (*output_count)(const ember_model *);
    ember_status (*input_fact)(const ember_model *, size_t, ember_fact *);
    ember_status (*runnable_new)(const ember_model *, ember_runnable **);
    ember_status (*run)(ember_runnable *, size_t, const ember_tensor *);
    ember_status (*output)(const ember_runnable *, size_t, ember_tensor *);
    const char *(*last_error)(void);
    ember_runnable *runnable;
} build;

static void fail(const char *what, const char *why)
{
    fprintf(stderr, "bench_ab: %s: %s\n", what, why);
    exit(2);
}

static void *symbol(build *b, const char *name)
{
    void *found = dlsym(b->library, name);
    if (found == NULL)
        fail(b->path, dlerror());
    return found;
}

static void open_library(build *b, const char *path, const char *plan)
{
    b->path = path;
    b->library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (b->library == NULL)
        fail(path, dlerror());
    *(void **)&b->model_load = symbol(b, "ember_model_load");
    *(void **)&b->input_count = symbol(b, "ember_model_input_count");
    *(void **)&b->output_count = symbol(b, "ember_model_output_count");
    *(void **)&b->input_fact = symbol(b, "ember_model_input_fact");
    *(void **)&b->runnable_new = symbol(b, "ember_runnable_new");
    *(void **)&b->run = symbol(b, "ember_runnable_run");
    *(void **)&b->output = symbol(b, "ember_runnable_output");
    *(void **)&b->last_error = symbol(b, "ember_last_error");
    ember_model *model = NULL;
    if (b->model_load(plan, &model) != EMBER_OK ||
        b->runnable_new(model, &b->runnable) != EMBER_OK)
        fail(path, b->last_error());
}

/* Sets (or, with `value` 0, unsets) each NAME=VALUE of a comma-separated list. */
static void set_environment(const char *settings, int value)
{
    char *list = strdup(settings); /* strtok cuts it */
    for (char *item = strtok(list, ","); item != NULL; item = strtok(NULL, ",")) {
        char *equals = strchr(item, '=');
        if (equals == NULL)
            fail(item, "a setting is NAME=VALUE");
        *equals = '\0';
        if (value ? setenv(item, equals + 1, 1) : unsetenv(item))
            fail(item, "cannot set");
    }
    free(list);
}

/* Loads the library of `argument` (PATH[@SETTINGS]) and prepares `plan` with it. */
static void open_build(build *b, char *argument, const char *plan)
{
    char *at = strchr(argument, '@');
    if (at != NULL) {
        *at = '\0';
        set_environment(at + 1, 1);
    }
    open_library(b, argument, plan);
    if (at != NULL) {
        set_environment(at + 1, 0);
        *at = '@';
    }
    b->path = argument;
}

/* Uniform f32 inputs of the model's (concrete) input shapes. */
static size_t make_inputs(build *b, const ember_model *model, const char *plan,
                          ember_tensor *inputs)
{
    const size_t count = b->input_count(model);
    if (count > MAX_INPUTS)
        fail(plan, "too many inputs");
    for (size_t i = 0; i < count; i++) {
        ember_fact fact;
        b->input_fact(model, i, &fact);
        size_t items = 1;
        for (int d = 0; d < fact.rank; d++) {
            if (fact.shape[d] < 0)
                fail(plan, "a symbolic input dim: cook the plan at a fixed input shape");
            items *= (size_t)fact.shape[d];
        }
        if (fact.datum_type != EMBER_F32)
            fail(plan, "an input that is not f32");
        float *data = malloc(items * sizeof(float) + 1);
        for (size_t x = 0; x < items; x++)
            data[x] = (float)rand() / ((float)RAND_MAX + 1.0f);
        inputs[i] = (ember_tensor){EMBER_F32, fact.rank, {0}, data};
        memcpy(inputs[i].shape, fact.shape, sizeof fact.shape);
    }
    return count;
}

static double seconds(build *b, size_t n_inputs, const ember_tensor *inputs)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (b->run(b->runnable, n_inputs, inputs) != EMBER_OK)
        fail(b->path, b->last_error());
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
}

/* The largest |A − B| over every f32 output item (NaN where only one is NaN). */
static double output_difference(build *a, build *b, size_t outputs)
{
    double worst = 0.0;
    for (size_t i = 0; i < outputs; i++) {
        ember_tensor ya, yb;
        a->output(a->runnable, i, &ya);
        b->output(b->runnable, i, &yb);
        size_t items = 1;
        for (int d = 0; d < ya.rank; d++)
            items *= (size_t)ya.shape[d];
        for (size_t x = 0; ya.datum_type == EMBER_F32 && x < items; x++) {
            const double u = ((const float *)ya.data)[x], v = ((const float *)yb.data)[x];
            const double gap = isnan(u) != isnan(v) ? NAN : isnan(u) ? 0.0 : fabs(u - v);
            worst = isnan(gap) || gap > worst ? gap : worst;
        }
    }
    return worst;
}

static int by_value(const void *x, const void *y)
{
    const double u = *(const double *)x, v = *(const double *)y;
    return u < v ? -1 : u > v;
}

/* The q-quantile of n values (sorted in place). */
static double quantile(double *values, size_t n, double q)
{
    qsort(values, n, sizeof *values, by_value);
    return values[(size_t)(q * (double)(n - 1) + 0.5)];
}

int main(int argc, char **argv)
{
    if (argc < 4 || argc > 5) {
        fprintf(stderr, "usage: bench_ab LIB_A LIB_B PLAN [PAIRS (default 31)]\n");
        return 2;
    }
    const size_t pairs = argc == 5 ? strtoul(argv[4], NULL, 10) : 31;
    if (pairs < 2)
        fail(argv[4], "at least 2 pairs");
    build a, b;
    open_build(&a, argv[1], argv[3]);
    open_build(&b, argv[2], argv[3]);
    ember_model *model = NULL; /* A's, for the facts (left loaded: the process ends soon) */
    if (a.model_load(argv[3], &model) != EMBER_OK)
        fail(argv[3], a.last_error());
    ember_tensor inputs[MAX_INPUTS];
    srand(1);
    const size_t n_inputs = make_inputs(&a, model, argv[3], inputs);
    for (int warm = 0; warm < 3; warm++) {
        seconds(&a, n_inputs, inputs);
        seconds(&b, n_inputs, inputs);
    }
    const double difference = output_difference(&a, &b, a.output_count(model));

    double *ta = malloc(pairs * sizeof *ta), *tb = malloc(pairs * sizeof *tb);
    double *ratio = malloc(pairs * sizeof *ratio);
    for (size_t p = 0; p < pairs; p++) { /* first half A then B, second half B then A */
        if (p < pairs / 2) {
            ta[p] = seconds(&a, n_inputs, inputs);
            tb[p] = seconds(&b, n_inputs, inputs);
        } else {
            tb[p] = seconds(&b, n_inputs, inputs);
            ta[p] = seconds(&a, n_inputs, inputs);
        }
        ratio[p] = tb[p] / ta[p];
    }
    const size_t half = pairs / 2;
    const double a_first = quantile(ratio, half, 0.5);
    const double b_first = quantile(ratio + half, pairs - half, 0.5);
    printf("%s: %zu pairs\n", argv[3], pairs);
    printf("A %s: median %.3f ms, min %.3f ms\n", argv[1], quantile(ta, pairs, 0.5) * 1e3,
           quantile(ta, pairs, 0.0) * 1e3);
    printf("B %s: median %.3f ms, min %.3f ms\n", argv[2], quantile(tb, pairs, 0.5) * 1e3,
           quantile(tb, pairs, 0.0) * 1e3);
    printf("B/A: median of pairs %.3f (quartiles %.3f-%.3f); A run first %.3f, B first %.3f\n",
           quantile(ratio, pairs, 0.5), quantile(ratio, pairs, 0.25),
           quantile(ratio, pairs, 0.75), a_first, b_first);
    if (difference == 0.0)
        printf("outputs: identical\n");
    else
        printf("outputs: differ, max |A - B| = %g\n", difference);
    return 0;
}
