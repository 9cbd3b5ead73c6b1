/*
 * ember-run — run a plan from the command line, on a device, with no Python.
 *
 *   ember-run PLAN [-i X.npy]... [-o Y.npy]... [--bench N] [--profile N] [--print] [--stream]
 *             [--memory]
 *   ember-run --version | --kernels | --help
 *
 * Inputs are given in model order; without -i every input is zeros of its fact. Each
 * -o writes the output of the same position. --bench N runs N times and reports load,
 * prepare and per-run median/min times. Otherwise each output's shape and first values
 * are printed (--print: every value). --stream runs a pulsed plan pulse by pulse over
 * whole signals given with -i (tools/stream_run.c). --memory then prints where the
 * runnable's memory goes (ember_runnable_memory) and the process's peak resident size.
 *
 * Uses the public API only (include/ember.h). Exit codes: 0 success, 1 failure (a
 * message on stderr), 2 bad usage.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>

#include "ember.h"
#include "tools/npy.h"
#include "tools/run_common.h"
#include "tools/profile_print.h"
#include "tools/stream_run.h"

#define MAX_FILES 64
/* Values printed per output without --print. */
#define PREVIEW_VALUES 8

typedef struct options {
    const char *plan;
    const char *inputs[MAX_FILES];
    int input_count;
    const char *outputs[MAX_FILES];
    int output_count;
    long bench;
    int print_all;
    int stream;
    long profile;
    int memory;
} options;

static void usage(FILE *to)
{
    fprintf(to, "usage: ember-run PLAN [-i X.npy]... [-o Y.npy]... [--bench N] [--print] "
                "[--stream] [--memory]\n"
                "       ember-run --version | --kernels | --help\n"
                "  PLAN       a plan directory, .tar or .nnef.tgz (cook an ONNX model into "
                "one first)\n"
                "  -i X.npy   an input, in model order (default: zeros)\n"
                "  -o Y.npy   write the output of the same position\n"
                "  --bench N  run N times, print load/prepare times and run median/min\n"
                "  --print    print every output value\n"
                "  --stream   a pulsed plan, pulse by pulse: each -i is a whole signal\n"
                "  --profile N  time every node over N runs: nodes by time, then per op\n"
                "  --memory   then print the memory held (constants, packed weights, arena)\n"
                "             and the process's peak resident size\n"
                "  --version  print ember's version\n"
                "  --kernels  print the kernels chosen for this CPU (EMBER_ISA forces an ISA)\n");
}

/* 0 on success, 2 on a usage error (message printed). */
static int parse_options(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const int has_value = i + 1 < argc;
        if ((strcmp(arg, "-i") == 0 || strcmp(arg, "-o") == 0) && has_value) {
            int *count = arg[1] == 'i' ? &o->input_count : &o->output_count;
            const char **files = arg[1] == 'i' ? o->inputs : o->outputs;
            if (*count == MAX_FILES) {
                fprintf(stderr, "ember-run: at most %d %s files\n", MAX_FILES, arg);
                return 2;
            }
            files[(*count)++] = argv[++i];
        } else if (strcmp(arg, "--bench") == 0 && has_value) {
            char *end;
            o->bench = strtol(argv[++i], &end, 10);
            if (*end != '\0' || o->bench < 1 || o->bench > 1000000) {
                fprintf(stderr, "ember-run: --bench wants a count between 1 and 1000000\n");
                return 2;
            }
        } else if (strcmp(arg, "--print") == 0) {
            o->print_all = 1;
        } else if (strcmp(arg, "--profile") == 0 && has_value) {
            char *end;
            o->profile = strtol(argv[++i], &end, 10);
            if (*end != '\0' || o->profile < 1 || o->profile > 1000000) {
                fprintf(stderr, "ember-run: --profile wants a count between 1 and 1000000\n");
                return 2;
            }
        } else if (strcmp(arg, "--stream") == 0) {
            o->stream = 1;
        } else if (strcmp(arg, "--memory") == 0) {
            o->memory = 1;
        } else if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(arg, "--version") == 0) {
            printf("ember-run %s\n", ember_version());
            exit(0);
        } else if (strcmp(arg, "--kernels") == 0) {
            fputs(ember_kernels(), stdout);
            exit(0);
        } else if (arg[0] != '-' && o->plan == NULL) {
            o->plan = arg;
        } else {
            fprintf(stderr, "ember-run: unexpected argument '%s'\n", arg);
            usage(stderr);
            return 2;
        }
    }
    if (o->plan == NULL) {
        usage(stderr);
        return 2;
    }
    const size_t length = strlen(o->plan);
    if (length >= 5 && strcasecmp(o->plan + length - 5, ".onnx") == 0) {
        fprintf(stderr, "ember-run: %s is an ONNX model; cook it into a plan first:\n"
                "  python -c \"import ember; m = ember.onnx().load('%s').into_model(); "
                "ember.nnef().write_model_to_tar(m, 'model.tar')\"\n", o->plan, o->plan);
        return 2;
    }
    return 0;
}

/* f64 items to f32, in place (the buffer keeps its size). */
static void narrow_f64(npy_array *a)
{
    const size_t count = a->bytes / 8;
    const double *from = a->data;
    float *to = a->data;
    for (size_t i = 0; i < count; i++) {
        const double d = from[i]; /* read before the write: to[i] overlaps from[i / 2] */
        to[i] = (float)d;
    }
    a->datum_type = EMBER_F32;
    a->bytes = count * sizeof(float);
}

/* Input i's buffer in the runnable (ember_runnable_input) when the inputs are written
 * in place: for one run of a concrete plan, which then needs no buffer of its own per
 * input (nor a copy). Repeated runs (--bench, --profile) keep their own: a run reuses
 * the input's buffer. */
static int input_slot(ember_runnable *run, const options *o, size_t i, ember_tensor *slot)
{
    if (o->bench > 0 || o->profile > 0 || o->stream)
        return 0;
    return ember_runnable_input(run, i, slot) == EMBER_OK;
}

/* The inputs: from .npy files, or zeros of the input facts. `arrays` own the data, or
 * point at the runnable's input buffers (input_slot). A stream takes its user inputs
 * only (the plan's others are the state's). */
static int make_inputs(const ember_model *model, ember_runnable *run, const options *o,
                       ember_tensor *tensors, npy_array *arrays)
{
    const size_t count = o->stream ? ember_model_stream_input_count(model)
                                   : ember_model_input_count(model);
    char error[512];
    if (o->stream && ember_model_pulse(model) <= 0) {
        fprintf(stderr, "ember-run: --stream: the plan does not stream (cook it with "
                "model.pulse(P))\n");
        return 1;
    }
    if (o->stream && (size_t)o->input_count != count) {
        fprintf(stderr, "ember-run: --stream: the plan streams %zu inputs, %d given with -i\n",
                count, o->input_count);
        return 1;
    }
    if (o->input_count != 0 && (size_t)o->input_count != count) {
        fprintf(stderr, "ember-run: the model takes %zu inputs, %d given with -i\n", count,
                o->input_count);
        return 1;
    }
    for (size_t i = 0; i < count; i++) {
        npy_array *a = &arrays[i];
        ember_tensor slot;
        const int in_place = input_slot(run, o, i, &slot);
        if (o->input_count != 0) {
            if (npy_read_into(o->inputs[i], in_place ? &slot : NULL, a, error,
                              sizeof error) != 0) {
                fprintf(stderr, "ember-run: %s\n", error);
                return 1;
            }
            ember_fact fact;
            ember_model_input_fact(model, i, &fact);
            if (fact.datum_type == EMBER_F32 && a->datum_type == EMBER_F64)
                narrow_f64(a); /* numpy's default float type, fed to an f32 model */
        } else {
            ember_fact fact;
            ember_model_input_fact(model, i, &fact);
            for (int d = 0; d < fact.rank; d++)
                if (fact.shape[d] < 0) {
                    fprintf(stderr, "ember-run: input %zu '%s' has the symbolic dim %s: give "
                            "the inputs with -i\n", i, ember_model_input_name(model, i),
                            ember_model_input_dim(model, i, d));
                    return 1;
                }
            size_t bytes = ember_datum_type_size(fact.datum_type);
            for (int d = 0; d < fact.rank; d++)
                bytes *= (size_t)fact.shape[d];
            a->datum_type = fact.datum_type;
            a->rank = fact.rank;
            memcpy(a->shape, fact.shape, sizeof a->shape);
            a->in_place = in_place && bytes > 0;
            a->data = a->in_place ? memset(slot.data, 0, bytes) : calloc(bytes ? bytes : 1, 1);
            if (a->data == NULL) {
                fprintf(stderr, "ember-run: out of memory for input %zu\n", i);
                return 1;
            }
        }
        tensors[i].datum_type = a->datum_type;
        tensors[i].rank = a->rank;
        memcpy(tensors[i].shape, a->shape, sizeof tensors[i].shape);
        tensors[i].data = a->data;
    }
    return 0;
}

static void print_value(const ember_tensor *t, size_t i)
{
    switch (t->datum_type) {
    case EMBER_F32: printf(" %g", (double)((const float *)t->data)[i]); break;
    case EMBER_F64: printf(" %g", ((const double *)t->data)[i]); break;
    case EMBER_F16: printf(" 0x%04x", ((const uint16_t *)t->data)[i]); break;
    case EMBER_I64: printf(" %lld", (long long)((const int64_t *)t->data)[i]); break;
    case EMBER_I32: printf(" %ld", (long)((const int32_t *)t->data)[i]); break;
    case EMBER_U64: printf(" %llu", (unsigned long long)((const uint64_t *)t->data)[i]); break;
    case EMBER_U32: printf(" %lu", (unsigned long)((const uint32_t *)t->data)[i]); break;
    case EMBER_I16: printf(" %d", ((const int16_t *)t->data)[i]); break;
    case EMBER_U16: printf(" %u", ((const uint16_t *)t->data)[i]); break;
    case EMBER_I8: printf(" %d", ((const int8_t *)t->data)[i]); break;
    default: printf(" %u", ((const uint8_t *)t->data)[i]); break;
    }
}

void ember_run_print_output(const ember_model *model, size_t index, const ember_tensor *t,
                            int all)
{
    size_t count = 1;
    printf("output %zu '%s': [", index, ember_model_output_name(model, index));
    for (int d = 0; d < t->rank; d++) {
        printf("%s%lld", d ? ", " : "", (long long)t->shape[d]);
        count *= (size_t)t->shape[d];
    }
    printf("]:");
    const size_t shown = all || count <= PREVIEW_VALUES ? count : PREVIEW_VALUES;
    for (size_t i = 0; i < shown; i++)
        print_value(t, i);
    printf("%s\n", shown < count ? " ..." : "");
}

static int bench(ember_runnable *run, size_t n_inputs, const ember_tensor *inputs, long times)
{
    double *ms = malloc((size_t)times * sizeof *ms);
    if (ms == NULL) {
        fprintf(stderr, "ember-run: out of memory\n");
        return 1;
    }
    for (long i = 0; i < times; i++) {
        const double start = now_ms();
        if (ember_runnable_run(run, n_inputs, inputs) != EMBER_OK) {
            free(ms);
            return fail_ember("run");
        }
        ms[i] = now_ms() - start;
    }
    sort_times(ms, (size_t)times);
    const double median = times % 2 ? ms[times / 2] : (ms[times / 2 - 1] + ms[times / 2]) / 2;
    printf("run: median %.3f ms, min %.3f ms over %ld runs\n", median, ms[0], times);
    free(ms);
    return 0;
}

static int write_and_print(const ember_model *model, const ember_runnable *run, const options *o)
{
    char error[512];
    for (size_t i = 0; i < ember_model_output_count(model); i++) {
        ember_tensor t;
        if (ember_runnable_output(run, i, &t) != EMBER_OK)
            return fail_ember("output");
        if ((int)i < o->output_count && npy_write(o->outputs[i], &t, error, sizeof error) != 0) {
            fprintf(stderr, "ember-run: %s\n", error);
            return 1;
        }
        if (o->bench == 0 || o->print_all)
            ember_run_print_output(model, i, &t, o->print_all);
    }
    return 0;
}

static double megabytes(size_t bytes)
{
    return (double)bytes / 1e6;
}

/* A "Name: N kB" field of /proc/self/status in bytes; 0 where there is none (not Linux). */
static size_t status_bytes(const char *name)
{
    unsigned long long kib = 0;
#if defined(__linux__)
    FILE *status = fopen("/proc/self/status", "r");
    char line[256];
    const size_t length = strlen(name);
    /* strtoull, not sscanf: scanf's code (36 KB on x86-64) would be mapped for this */
    while (status != NULL && fgets(line, sizeof line, status) != NULL)
        if (strncmp(line, name, length) == 0 && line[length] == ':') {
            kib = strtoull(line + length + 1, NULL, 10);
            break;
        }
    if (status != NULL)
        fclose(status);
#else
    (void)name;
#endif
    return (size_t)kib * 1024;
}

/* The process's peak resident set size in bytes, or 0 when unknown. On Linux the peak of
 * this program's own memory (VmHWM): getrusage's ru_maxrss also counts the high-water
 * mark of the process that spawned it (exec keeps it), which from a large parent — a
 * benchmark holding the model — hides ember-run's own. */
static size_t peak_rss_bytes(void)
{
    const size_t hwm = status_bytes("VmHWM");
    if (hwm > 0)
        return hwm;
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0)
        return 0;
#if defined(__APPLE__)
    return (size_t)usage.ru_maxrss; /* bytes there */
#else
    return (size_t)usage.ru_maxrss * 1024; /* KiB on Linux and the BSDs */
#endif
}

/* Where the memory goes, then the peak: what the whole run (load, prepare, runs) cost. */
static int print_memory(const ember_runnable *run)
{
    ember_memory m;
    if (ember_runnable_memory(run, &m) != EMBER_OK)
        return fail_ember("memory");
    printf("memory: constants %.2f MB (resident %.2f MB), packed %.2f MB, arena %.2f MB\n",
           megabytes(m.constant_bytes), megabytes(m.constant_resident_bytes),
           megabytes(m.packed_bytes), megabytes(m.arena_bytes));
    printf("peak RSS: %.2f MB\n", megabytes(peak_rss_bytes()));
    /* Of it, pages mapped from files (this program's code and read-only data: shared
     * with every process running it): a fixed cost beside the model's memory. */
    const size_t files = status_bytes("RssFile");
    if (files > 0)
        printf("resident now: %.2f MB private, %.2f MB mapped from files\n",
               megabytes(status_bytes("RssAnon")), megabytes(files));
    return 0;
}

int main(int argc, char **argv)
{
    options o;
    int status = parse_options(argc, argv, &o);
    if (status != 0)
        return status;
    ember_model *model = NULL;
    ember_runnable *run = NULL;
    ember_tensor inputs[MAX_FILES];
    npy_array arrays[MAX_FILES];
    memset(arrays, 0, sizeof arrays);

    double start = now_ms();
    if (ember_model_load(o.plan, &model) != EMBER_OK)
        return fail_ember("load");
    const double load_ms = now_ms() - start;
    start = now_ms();
    if (ember_runnable_new(model, &run) != EMBER_OK) {
        ember_model_free(model);
        return fail_ember("prepare");
    }
    const double prepare_ms = now_ms() - start;

    const size_t n_inputs = ember_model_input_count(model);
    const size_t n_outputs = o.stream ? ember_model_stream_output_count(model)
                                      : ember_model_output_count(model);
    if ((size_t)o.output_count > n_outputs) {
        fprintf(stderr, "ember-run: %d -o files for %zu outputs\n", o.output_count, n_outputs);
        status = 1;
    } else if (n_inputs > MAX_FILES) {
        fprintf(stderr, "ember-run: the model has %zu inputs, at most %d supported\n", n_inputs,
                MAX_FILES);
        status = 1;
    } else {
        status = make_inputs(model, run, &o, inputs, arrays);
    }
    if (status == 0 && o.profile > 0 && !o.stream) {
        status = ember_run_profile(run, n_inputs, inputs, (int)o.profile);
    } else if (status == 0 && o.stream) {
        status = ember_run_stream(run, model, arrays, o.outputs, o.output_count, o.print_all);
    } else if (status == 0 && o.bench > 0) {
        printf("load: %.3f ms\nprepare: %.3f ms\n", load_ms, prepare_ms);
        status = bench(run, n_inputs, inputs, o.bench);
    } else if (status == 0 && ember_runnable_run(run, n_inputs, inputs) != EMBER_OK) {
        status = fail_ember("run");
    }
    if (status == 0 && !o.stream && o.profile == 0)
        status = write_and_print(model, run, &o);
    if (status == 0 && o.memory)
        status = print_memory(run);
    for (size_t i = 0; i < n_inputs && i < MAX_FILES; i++)
        npy_free(&arrays[i]);
    ember_runnable_free(run);
    ember_model_free(model);
    return status;
}
