/*
 * test_api — the public C API, from a program that sees only "ember.h" and links the
 * shared libember: proof that the header and the exported symbols are enough.
 *
 *   test_api PLAN.tar X0 X1 … -- Y0 Y1 …
 *
 * PLAN is a .tar or .tgz plan with one f32 input. X… are the input's values (as many as
 * its fact has elements); Y… are the expected values of every output, flattened and
 * concatenated in output order. The plan is loaded from its path and from a buffer; both
 * must give the expected outputs. Error paths are exercised with bad arguments. Prints
 * "N passed, M failed"; exits 1 if anything failed.
 *
 *   test_api --memory PLAN.tar PLAN.tgz PLAN_DIR CONSTANT_BYTES
 *
 * The memory report (ember_runnable_memory) of one plan in three containers, whose
 * constants (CONSTANT_BYTES of them) are almost all weights that preparing packs: a .tar
 * by path is mapped and those pages are given back, a buffer, a .tgz and a directory
 * are read into memory; every way gives bit-identical outputs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember.h"

static int passed, failed;

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (cond) {                                                                        \
            passed++;                                                                      \
        } else {                                                                           \
            failed++;                                                                      \
            printf("FAIL %s:%d: %s — ", __FILE__, __LINE__, #cond);                        \
            printf(__VA_ARGS__);                                                           \
            printf("\n");                                                                  \
        }                                                                                  \
    } while (0)

typedef struct expectations {
    float *inputs;
    size_t input_count;
    float *outputs;
    size_t output_count;
} expectations;

static void *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *data = malloc(n > 0 ? (size_t)n : 1);
    if (data != NULL && fread(data, 1, (size_t)n, f) != (size_t)n) {
        free(data);
        data = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return data;
}

static size_t fact_count(const ember_fact *fact)
{
    size_t count = 1;
    for (int i = 0; i < fact->rank; i++)
        count *= (size_t)fact->shape[i];
    return count;
}

static void check_model_queries(const ember_model *model)
{
    ember_fact fact;
    CHECK(ember_model_input_count(model) == 1, "%zu inputs", ember_model_input_count(model));
    CHECK(ember_model_output_count(model) >= 1, "no outputs");
    CHECK(ember_model_node_count(model) >= 1, "no nodes");
    CHECK(ember_model_input_name(model, 0) != NULL && ember_model_input_name(model, 0)[0],
          "input name");
    CHECK(ember_model_output_name(model, 0) != NULL, "output name");
    CHECK(ember_model_input_name(model, 99) == NULL, "input name out of range");
    CHECK(ember_model_output_name(model, 99) == NULL, "output name out of range");
    CHECK(ember_model_input_fact(model, 0, &fact) == EMBER_OK && fact.datum_type == EMBER_F32,
          "input fact: %s", ember_last_error());
    CHECK(ember_model_output_fact(model, 0, &fact) == EMBER_OK, "output fact");
    CHECK(ember_model_input_fact(model, 5, &fact) == EMBER_ERROR_ARGUMENT, "bad input index");
    CHECK(strstr(ember_last_error(), "5") != NULL, "message names the index: %s",
          ember_last_error());
    CHECK(ember_model_output_fact(model, 5, &fact) == EMBER_ERROR_ARGUMENT, "bad output index");
    CHECK(ember_model_input_fact(model, 0, NULL) == EMBER_ERROR_ARGUMENT, "NULL fact");
    CHECK(ember_model_input_fact(NULL, 0, &fact) == EMBER_ERROR_ARGUMENT, "NULL model");
    CHECK(ember_model_input_count(NULL) == 0, "NULL model count");
}

/* Run once and compare every output with the expected values. */
static void check_run(const ember_model *model, const expectations *e, const char *how)
{
    ember_runnable *run = NULL;
    ember_tensor out;
    CHECK(ember_runnable_new(model, &run) == EMBER_OK, "%s: prepare: %s", how, ember_last_error());
    if (run == NULL)
        return;
    CHECK(ember_runnable_output(run, 0, &out) == EMBER_ERROR_ARGUMENT, "%s: output before run",
          how);
    CHECK(ember_runnable_memory_bytes(run) > 0, "%s: memory bytes", how);

    ember_fact fact;
    ember_model_input_fact(model, 0, &fact);
    ember_tensor in = {fact.datum_type, fact.rank, {0}, e->inputs};
    memcpy(in.shape, fact.shape, sizeof in.shape);
    CHECK(fact_count(&fact) == e->input_count, "%s: %zu input values for %zu elements", how,
          e->input_count, fact_count(&fact));
    for (int repeat = 0; repeat < 2; repeat++) { /* a second run must give the same */
        CHECK(ember_runnable_run(run, 1, &in) == EMBER_OK, "%s: run: %s", how, ember_last_error());
        CHECK(ember_last_error()[0] == '\0', "%s: message cleared on success", how);
        size_t k = 0;
        for (size_t o = 0; o < ember_model_output_count(model); o++) {
            CHECK(ember_runnable_output(run, o, &out) == EMBER_OK, "%s: output %zu", how, o);
            ember_model_output_fact(model, o, &fact);
            const size_t count = fact_count(&fact);
            CHECK(out.datum_type == EMBER_F32 && out.rank == fact.rank, "%s: output fact", how);
            for (size_t i = 0; i < count && k < e->output_count; i++, k++) {
                const float got = ((const float *)out.data)[i], want = e->outputs[k];
                CHECK(fabsf(got - want) <= 1e-5f + 1e-4f * fabsf(want),
                      "%s: output %zu[%zu] = %g, expected %g", how, o, i, got, want);
            }
        }
        CHECK(k == e->output_count, "%s: %zu expected values, outputs hold %zu", how,
              e->output_count, k);
    }
    CHECK(ember_runnable_output(run, 99, &out) == EMBER_ERROR_ARGUMENT, "bad output index");
    ember_runnable_free(run);
}

/* An input written in place (ember_runnable_input): the same outputs as a copied one,
 * run after run when it is written again; then the errors. */
static void check_in_place(const ember_model *model, const expectations *e)
{
    ember_runnable *run = NULL;
    if (ember_runnable_new(model, &run) != EMBER_OK)
        return;
    ember_tensor slot, again, out;
    CHECK(ember_runnable_input(run, 0, &slot) == EMBER_OK, "input buffer: %s",
          ember_last_error());
    ember_fact fact;
    ember_model_input_fact(model, 0, &fact);
    CHECK(slot.datum_type == fact.datum_type && slot.rank == fact.rank &&
          memcmp(slot.shape, fact.shape, (size_t)fact.rank * sizeof *fact.shape) == 0 &&
          slot.data != NULL && slot.data != e->inputs, "input buffer has the input's fact");
    for (int repeat = 0; repeat < 2; repeat++) {
        memcpy(slot.data, e->inputs, e->input_count * sizeof(float));
        CHECK(ember_runnable_run(run, 1, &slot) == EMBER_OK, "in place: run: %s",
              ember_last_error());
        CHECK(ember_runnable_output(run, 0, &out) == EMBER_OK && e->output_count > 0 &&
              fabsf(((const float *)out.data)[0] - e->outputs[0]) <=
                  1e-5f + 1e-4f * fabsf(e->outputs[0]),
              "in place: output, run %d", repeat);
    }
    CHECK(ember_runnable_input(run, 0, &again) == EMBER_OK && again.data == slot.data,
          "the buffer stays where it is");
    CHECK(ember_runnable_input(run, 1, &again) == EMBER_ERROR_ARGUMENT &&
          strstr(ember_last_error(), "1") != NULL, "bad input index: %s", ember_last_error());
    CHECK(ember_runnable_input(run, 0, NULL) == EMBER_ERROR_ARGUMENT, "NULL out");
    CHECK(ember_runnable_input(NULL, 0, &again) == EMBER_ERROR_ARGUMENT, "NULL runnable");
    ember_runnable_free(run);
}

/* The model freed before its runnable (a garbage collector may free them in either
 * order): the runnable holds its own reference and still runs. */
static void check_free_order(const char *path, const expectations *e)
{
    ember_model *model = NULL;
    ember_runnable *run = NULL;
    if (ember_model_load(path, &model) != EMBER_OK || ember_runnable_new(model, &run) != EMBER_OK) {
        CHECK(0, "free order: %s", ember_last_error());
        ember_model_free(model);
        return;
    }
    ember_fact fact;
    ember_model_input_fact(model, 0, &fact);
    ember_model_free(model);
    ember_tensor in = {fact.datum_type, fact.rank, {0}, e->inputs}, out;
    memcpy(in.shape, fact.shape, sizeof in.shape);
    CHECK(ember_runnable_run(run, 1, &in) == EMBER_OK, "free order: run: %s", ember_last_error());
    CHECK(ember_runnable_output(run, 0, &out) == EMBER_OK && e->output_count > 0 &&
          fabsf(((const float *)out.data)[0] - e->outputs[0]) <= 1e-5f + 1e-4f * fabsf(e->outputs[0]),
          "free order: output after the model was freed");
    ember_runnable_free(run);
}

/* The per-node profile: every node once, times adding up to the total, its errors. */
static void check_profile(const ember_model *model, const expectations *e)
{
    ember_runnable *run = NULL;
    ember_profile *profile = NULL;
    if (ember_runnable_new(model, &run) != EMBER_OK)
        return;
    ember_fact fact;
    ember_model_input_fact(model, 0, &fact);
    ember_tensor in = {fact.datum_type, fact.rank, {0}, e->inputs};
    memcpy(in.shape, fact.shape, sizeof in.shape);
    CHECK(ember_runnable_profile(run, 1, &in, 0, &profile) == EMBER_ERROR_ARGUMENT &&
          profile == NULL, "profile: 0 runs refused");
    CHECK(ember_runnable_profile(run, 1, &in, 3, &profile) == EMBER_OK, "profile: %s",
          ember_last_error());
    const size_t count = ember_profile_node_count(profile);
    CHECK(count >= 2 && count <= ember_model_node_count(model), "profile: %zu nodes", count);
    double sum = 0.0;
    for (size_t i = 0; i < count; i++) {
        ember_node_profile node;
        CHECK(ember_profile_node(profile, i, &node) == EMBER_OK && node.seconds >= 0.0 &&
              node.name != NULL && node.op != NULL && node.form != NULL && node.bytes > 0.0,
              "profile node %zu", i);
        sum += node.seconds;
    }
    const double total = ember_profile_seconds(profile);
    CHECK(total > 0.0 && sum > 0.999 * total && sum < 1.001 * total, "profile: %g vs %g",
          sum, total);
    ember_node_profile node;
    CHECK(ember_profile_node(profile, count, &node) == EMBER_ERROR_ARGUMENT, "bad node index");
    ember_profile_free(profile);
    ember_profile_free(NULL);
    CHECK(ember_runnable_run(run, 1, &in) == EMBER_OK, "a run after the profile");
    ember_runnable_free(run);
}

static void check_run_errors(const ember_model *model, const expectations *e)
{
    ember_runnable *run = NULL;
    if (ember_runnable_new(model, &run) != EMBER_OK)
        return;
    ember_fact fact;
    ember_model_input_fact(model, 0, &fact);
    const char *name = ember_model_input_name(model, 0);
    ember_tensor in = {fact.datum_type, fact.rank, {0}, e->inputs};
    memcpy(in.shape, fact.shape, sizeof in.shape);

    CHECK(ember_runnable_run(run, 0, NULL) == EMBER_ERROR_ARGUMENT, "no inputs");
    CHECK(ember_runnable_run(run, 1, NULL) == EMBER_ERROR_ARGUMENT, "NULL inputs");
    CHECK(ember_runnable_run(NULL, 1, &in) == EMBER_ERROR_ARGUMENT, "NULL runnable");
    ember_tensor wrong = in;
    wrong.shape[wrong.rank - 1] += 1;
    CHECK(ember_runnable_run(run, 1, &wrong) == EMBER_ERROR_ARGUMENT, "wrong shape");
    CHECK(strstr(ember_last_error(), name) != NULL && strstr(ember_last_error(), "expected"),
          "message names the input: %s", ember_last_error());
    wrong = in;
    wrong.rank -= 1;
    CHECK(ember_runnable_run(run, 1, &wrong) == EMBER_ERROR_ARGUMENT, "wrong rank");
    wrong = in;
    wrong.datum_type = EMBER_I64;
    CHECK(ember_runnable_run(run, 1, &wrong) == EMBER_ERROR_ARGUMENT, "wrong datum type");
    CHECK(strstr(ember_last_error(), "i64") != NULL, "message names the type: %s",
          ember_last_error());
    wrong = in;
    wrong.rank = 99;
    CHECK(ember_runnable_run(run, 1, &wrong) == EMBER_ERROR_ARGUMENT, "absurd rank");
    CHECK(ember_runnable_new(NULL, &run) == EMBER_ERROR_ARGUMENT, "NULL model");
    CHECK(ember_runnable_new(model, NULL) == EMBER_ERROR_ARGUMENT, "NULL out");
    ember_runnable_free(run);
}

static void check_load_errors(void)
{
    ember_model *model = (ember_model *)1; /* must be set to NULL on failure */
    CHECK(ember_model_load(NULL, &model) == EMBER_ERROR_ARGUMENT, "NULL path");
    CHECK(ember_model_load("/nonexistent/plan.tgz", &model) == EMBER_ERROR_IO,
          "missing file: %s", ember_last_error());
    CHECK(model == NULL, "out_model reset on failure");
    CHECK(strstr(ember_last_error(), "/nonexistent/plan.tgz") != NULL, "message names the path");
    char garbage[1000];
    for (size_t i = 0; i < sizeof garbage; i++)
        garbage[i] = (char)(i * 7919 % 251);
    CHECK(ember_model_load_buffer(garbage, sizeof garbage, &model) == EMBER_ERROR_FORMAT,
          "garbage buffer: %s", ember_last_error());
    CHECK(ember_last_error()[0] != '\0', "garbage has a message");
    CHECK(ember_model_load_buffer(garbage, 0, &model) == EMBER_ERROR_FORMAT, "empty buffer");
    CHECK(ember_model_load_buffer(NULL, 10, &model) == EMBER_ERROR_ARGUMENT, "NULL buffer");
    CHECK(ember_model_load_buffer(garbage, 10, NULL) == EMBER_ERROR_ARGUMENT, "NULL out");
}

/* ---------------------------------------------------------------- memory */

#define MAX_OUTPUT_FLOATS 65536

/* Prepare a runnable of `model`, run it on a fixed input, copy every output into `out`
 * (MAX_OUTPUT_FLOATS); the runnable in *out_run (NULL on failure). */
static size_t prepare_and_run(const ember_model *model, ember_runnable **out_run, float *out,
                              const char *how)
{
    ember_fact fact;
    ember_tensor in, result;
    *out_run = NULL;
    if (ember_model_input_fact(model, 0, &fact) != EMBER_OK ||
        ember_runnable_new(model, out_run) != EMBER_OK) {
        CHECK(0, "%s: prepare: %s", how, ember_last_error());
        return 0;
    }
    float *x = malloc(fact_count(&fact) * sizeof *x);
    for (size_t i = 0; x != NULL && i < fact_count(&fact); i++)
        x[i] = sinf((float)i);
    in = (ember_tensor){fact.datum_type, fact.rank, {0}, x};
    memcpy(in.shape, fact.shape, sizeof in.shape);
    CHECK(x != NULL && ember_runnable_run(*out_run, 1, &in) == EMBER_OK, "%s: run: %s", how,
          ember_last_error());
    free(x);
    size_t count = 0;
    for (size_t o = 0; o < ember_model_output_count(model); o++) {
        if (ember_runnable_output(*out_run, o, &result) != EMBER_OK)
            break;
        ember_model_output_fact(model, o, &fact);
        const size_t n = fact_count(&fact);
        if (count + n <= MAX_OUTPUT_FLOATS)
            memcpy(out + count, result.data, n * sizeof(float));
        count += n;
    }
    CHECK(count > 0 && count <= MAX_OUTPUT_FLOATS, "%s: %zu output values", how, count);
    return count;
}

/* The report's fields, and how many constants it finds resident. */
static size_t check_report(const ember_runnable *run, size_t constant_bytes, const char *how)
{
    ember_memory m;
    memset(&m, 0xff, sizeof m);
    CHECK(ember_runnable_memory(run, &m) == EMBER_OK, "%s: memory: %s", how, ember_last_error());
    CHECK(m.constant_bytes == constant_bytes, "%s: constant_bytes %zu, the plan's weights "
          "hold %zu", how, m.constant_bytes, constant_bytes);
    CHECK(m.constant_resident_bytes <= m.constant_bytes, "%s: resident %zu of %zu", how,
          m.constant_resident_bytes, m.constant_bytes);
    /* a conv filter and a dense weight, packed: at least the dense weight */
    CHECK(m.packed_bytes >= constant_bytes / 2, "%s: packed_bytes %zu", how, m.packed_bytes);
    CHECK(m.arena_bytes > 0, "%s: arena_bytes 0", how);
    CHECK(ember_runnable_memory_bytes(run) == m.packed_bytes + m.arena_bytes,
          "%s: memory_bytes %zu is not packed + arena (%zu + %zu)", how,
          ember_runnable_memory_bytes(run), m.packed_bytes, m.arena_bytes);
    return m.constant_resident_bytes;
}

/* Load `path`, run, compare with `reference`; how many constant bytes are resident
 * after preparing. */
static size_t check_container(const char *path, size_t constant_bytes, const float *reference,
                              size_t count, const char *how)
{
    static float got[MAX_OUTPUT_FLOATS];
    ember_model *model = NULL;
    ember_runnable *run = NULL;
    CHECK(ember_model_load(path, &model) == EMBER_OK, "%s: load: %s", how, ember_last_error());
    if (model == NULL)
        return 0;
    size_t resident = 0;
    if (prepare_and_run(model, &run, got, how) == count && run != NULL) {
        CHECK(memcmp(got, reference, count * sizeof *got) == 0, "%s: outputs differ from "
              "the buffer's", how);
        resident = check_report(run, constant_bytes, how);
    }
    ember_runnable_free(run);
    ember_model_free(model);
    return resident;
}

/* A .tar by path: the weights' pages go back once packed — even for a second runnable,
 * whose packing reads them again from the file — and the values never change. */
static void check_mapped_tar(const char *path, size_t constant_bytes, const float *reference,
                             size_t count)
{
    static float got[MAX_OUTPUT_FLOATS];
    ember_model *model = NULL;
    ember_runnable *runs[2] = {NULL, NULL};
    CHECK(ember_model_load(path, &model) == EMBER_OK, "tar: load: %s", ember_last_error());
    for (int r = 0; model != NULL && r < 2; r++) {
        if (prepare_and_run(model, &runs[r], got, "tar by path") != count || !runs[r])
            continue;
        CHECK(memcmp(got, reference, count * sizeof *got) == 0,
              "tar by path, runnable %d: outputs differ from the buffer's", r + 1);
        const size_t resident = check_report(runs[r], constant_bytes, "tar by path");
        /* packing touched every page of the weights, and the prepare read the small
         * ones (the scale's k and b) and the tar headers around them: every op of this
         * plan copies or packs what it reads, so once the prepare gives the plan's pages
         * back, a run touches none of them */
        CHECK(resident == 0, "tar by path, runnable %d: %zu of %zu constant bytes still "
              "resident after preparing and running", r + 1, resident, constant_bytes);
    }
    CHECK(ember_runnable_memory(runs[0], NULL) == EMBER_ERROR_ARGUMENT, "NULL report");
    ember_memory m;
    CHECK(ember_runnable_memory(NULL, &m) == EMBER_ERROR_ARGUMENT, "NULL runnable");
    ember_runnable_free(runs[0]);
    ember_runnable_free(runs[1]);
    ember_model_free(model);
}

static int memory_main(int argc, char **argv)
{
    static float reference[MAX_OUTPUT_FLOATS];
    if (argc != 6) {
        fprintf(stderr, "usage: test_api --memory PLAN.tar PLAN.tgz PLAN_DIR CONSTANT_BYTES\n");
        return 2;
    }
    const size_t constant_bytes = (size_t)strtoull(argv[5], NULL, 10);
    size_t size = 0, count = 0;
    void *bytes = read_file(argv[2], &size);
    ember_model *model = NULL;
    ember_runnable *run = NULL;
    CHECK(bytes != NULL && ember_model_load_buffer(bytes, size, &model) == EMBER_OK,
          "buffer: load: %s", ember_last_error());
    if (model != NULL)
        count = prepare_and_run(model, &run, reference, "buffer");
    if (run != NULL)
        CHECK(check_report(run, constant_bytes, "buffer") == constant_bytes,
              "buffer: the copy is resident, all of it");
    ember_runnable_free(run);
    ember_model_free(model);
    if (count > 0) {
        check_mapped_tar(argv[2], constant_bytes, reference, count);
        CHECK(check_container(argv[3], constant_bytes, reference, count, "tgz") ==
              constant_bytes, "tgz: inflated into memory, all resident");
        CHECK(check_container(argv[4], constant_bytes, reference, count, "directory") ==
              constant_bytes, "directory: read into memory, all resident");
    }
    free(bytes);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

static int parse_expectations(int argc, char **argv, expectations *e)
{
    int i = 2;
    e->inputs = calloc((size_t)argc, sizeof(float));
    e->outputs = calloc((size_t)argc, sizeof(float));
    for (; i < argc && strcmp(argv[i], "--") != 0; i++)
        e->inputs[e->input_count++] = strtof(argv[i], NULL);
    if (i == argc)
        return -1;
    for (i++; i < argc; i++)
        e->outputs[e->output_count++] = strtof(argv[i], NULL);
    return 0;
}

int main(int argc, char **argv)
{
    expectations e = {0};
    if (argc > 1 && strcmp(argv[1], "--memory") == 0)
        return memory_main(argc, argv);
    if (argc < 3 || parse_expectations(argc, argv, &e) != 0) {
        fprintf(stderr, "usage: test_api PLAN.tar X0 X1 ... -- Y0 Y1 ...\n");
        return 2;
    }
    CHECK(strcmp(ember_version(), "0.1.0") == 0, "version %s", ember_version());
    CHECK(ember_datum_type_size(EMBER_F32) == 4 && ember_datum_type_size(EMBER_I64) == 8 &&
          ember_datum_type_size((ember_datum_type)77) == 0, "datum type sizes");
    ember_model_free(NULL);
    ember_runnable_free(NULL);

    ember_model *model = NULL;
    CHECK(ember_model_load(argv[1], &model) == EMBER_OK, "load %s: %s", argv[1], ember_last_error());
    if (model != NULL) {
        check_model_queries(model);
        check_run(model, &e, "from path");
        check_run_errors(model, &e);
        check_in_place(model, &e);
        ember_model_free(model);
    }
    check_free_order(argv[1], &e);
    model = NULL;
    if (ember_model_load(argv[1], &model) == EMBER_OK)
        check_profile(model, &e);
    ember_model_free(model);

    size_t size = 0;
    void *bytes = read_file(argv[1], &size);
    CHECK(bytes != NULL, "read %s", argv[1]);
    model = NULL;
    if (bytes != NULL) {
        CHECK(ember_model_load_buffer(bytes, size, &model) == EMBER_OK, "load buffer: %s",
              ember_last_error());
        memset(bytes, 0, size); /* the model must not depend on the caller's buffer */
        free(bytes);
    }
    if (model != NULL) {
        check_run(model, &e, "from buffer");
        ember_model_free(model);
    }
    check_load_errors();
    free(e.inputs);
    free(e.outputs);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
