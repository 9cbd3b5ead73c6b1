/*
 * tests/fuzz/fuzz_shapes.c — the second fuzz target: real symbolic plans run on input
 * shapes and values the fuzzer chooses, on long-lived runnables.
 *
 * At start it loads every plan (.tar) of EMBER_FUZZ_SHAPE_PLANS (default
 * tests/fuzz/shape_plans, written by make_shape_plans.py) and makes one runnable per
 * plan, kept across inputs, so the binding cache (EMBER_BINDING_CACHE per stage) fills,
 * evicts and comes back to bindings it dropped. An input is read as
 *   byte 0         which plan
 *   one per symbol its value, 0 to 12 (binding A; binding B is A + 1 everywhere)
 *   one byte       flags: bit 0 perturbs one symbolic input dim by +1
 *   the rest       the inputs' contents, cycled (value-decided sizes depend on them)
 * Each input dim is its text (ember_model_input_dim) evaluated with the runtime's own
 * dim evaluator. The harness runs A, copies its outputs, runs B, runs A again and aborts
 * if A's outputs differ from the first time (state left behind by B or by the cache), or
 * if an output's shape differs from its fact's dims evaluated with A (dims a run decides
 * are not checked). Errors from the runtime (an inconsistent perturbed shape, a size a
 * value makes too large) are fine; crashes, sanitizer reports and mismatches are not.
 *
 * Built with libFuzzer (clang -fsanitize=fuzzer, see README.md), or with -DEMBER_FUZZ_DRIVER
 * into a plain program that runs N deterministic pseudo-random inputs (what the test
 * suite does with gcc or clang and the sanitizers: tests/runtime/test_fuzz_shapes.py).
 */
#include <ctype.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/symbols.h"
#include "ember.h"
#include "plan/plan.h"

#define MAX_PLANS 32
#define MAX_INPUTS 16
#define MAX_INPUT_BYTES ((size_t)4 << 20)

typedef struct plan {
    ember_model *model;
    ember_runnable *runnable;
    size_t symbols;
    const char *names[EMBER_MAX_SYMBOLS];
    int given[EMBER_MAX_SYMBOLS];      /* an input dim mentions it (others a run decides) */
} plan;

static plan plans[MAX_PLANS];
static size_t plan_count;
static long ran, compared;             /* runs of binding A that succeeded; re-runs checked */

/* Whether an input dim's text names `symbol` (as a whole identifier). */
static int mentioned(const ember_model *model, const char *symbol)
{
    const size_t n = strlen(symbol);
    for (size_t i = 0; i < ember_model_input_count(model); i++) {
        ember_fact fact;
        if (ember_model_input_fact(model, i, &fact) != EMBER_OK)
            continue;
        for (int d = 0; d < fact.rank; d++) {
            const char *text = ember_model_input_dim(model, i, d);
            for (const char *at = text; at && (at = strstr(at, symbol)) != NULL; at += n) {
                const int before = at > text && (isalnum((unsigned char)at[-1]) || at[-1] == '_');
                const int after = isalnum((unsigned char)at[n]) || at[n] == '_';
                if (!before && !after)
                    return 1;
            }
        }
    }
    return 0;
}

static void load_plans(void)
{
    const char *dir = getenv("EMBER_FUZZ_SHAPE_PLANS");
    dir = dir ? dir : "tests/fuzz/shape_plans";
    DIR *d = opendir(dir);
    if (d == NULL) {
        fprintf(stderr, "fuzz_shapes: no plan directory %s\n", dir);
        abort();
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL && plan_count < MAX_PLANS) {
        const size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".tar") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        plan *p = &plans[plan_count];
        if (ember_model_load(path, &p->model) != EMBER_OK ||
            ember_runnable_new(p->model, &p->runnable) != EMBER_OK) {
            fprintf(stderr, "fuzz_shapes: %s: %s\n", path, ember_last_error());
            abort();
        }
        p->symbols = ember_model_symbol_count(p->model);
        for (size_t s = 0; s < p->symbols && s < EMBER_MAX_SYMBOLS; s++) {
            p->names[s] = ember_model_symbol_name(p->model, s);
            p->given[s] = mentioned(p->model, p->names[s]);
        }
        plan_count++;
    }
    closedir(d);
}

/* A dim's text evaluated with the symbols' values; -1 when it cannot be (a symbol a run
 * decides, or no text). */
static int64_t eval_dim(const plan *p, const char *text, const int64_t *values)
{
    if (text == NULL)
        return -1;
    char doc_text[512];
    if (snprintf(doc_text, sizeof doc_text, "version 1.0;\ngraph g() -> (y)\n{\n  y = f(%s);\n}\n",
                 text) >= (int)sizeof doc_text)
        return -1;
    ember_nnef_document doc;
    if (ember_nnef_parse(doc_text, strlen(doc_text), "dim", &doc) != EMBER_OK)
        return -1;
    ember_binding binding;
    memset(&binding, 0, sizeof binding);
    binding.count = p->symbols;
    binding.names = p->names;
    for (size_t s = 0; s < p->symbols; s++) {
        binding.values[s] = values[s];
        binding.bound[s] = (uint8_t)p->given[s];
    }
    int64_t out = -1;
    const char *problem = NULL;
    const ember_nnef_expr *call = doc.graph_body_count ? doc.graph_body[0].rvalue : NULL;
    if (call == NULL || call->kind != EMBER_NNEF_INVOCATION || call->u.invocation.arg_count != 1 ||
        ember_dim_eval(call->u.invocation.args[0].value, &binding, &out, &problem) != EMBER_DIM_OK)
        out = -1;
    ember_nnef_document_free(&doc);
    return out;
}

typedef struct inputs {
    ember_tensor tensors[MAX_INPUTS];
    size_t count;
} inputs;

static void free_inputs(inputs *in)
{
    for (size_t i = 0; i < in->count; i++)
        free(in->tensors[i].data);
    in->count = 0;
}

/* Inputs of the binding `values`, filled from `bytes`; 0 when they cannot be made. */
static int make_inputs(const plan *p, const int64_t *values, int perturb, const uint8_t *bytes,
                       size_t size, inputs *in)
{
    const size_t count = ember_model_input_count(p->model);
    size_t total = 0, cursor = 0;
    in->count = 0;
    if (count > MAX_INPUTS)
        return 0;
    for (size_t i = 0; i < count; i++) {
        ember_fact fact;
        if (ember_model_input_fact(p->model, i, &fact) != EMBER_OK)
            return 0;
        ember_tensor *t = &in->tensors[in->count++];
        memset(t, 0, sizeof *t);
        t->datum_type = fact.datum_type;
        t->rank = fact.rank;
        size_t items = 1;
        for (int d = 0; d < fact.rank; d++) {
            int64_t dim = fact.shape[d];
            if (dim < 0) {
                dim = eval_dim(p, ember_model_input_dim(p->model, i, d), values);
                if (perturb && dim >= 0) {
                    dim += 1;
                    perturb = 0;
                }
            }
            if (dim < 0 || dim > 4096)
                return 0;
            t->shape[d] = dim;
            items *= (size_t)dim;
        }
        const size_t item = ember_datum_type_size(fact.datum_type);
        total += items * item;
        if (total > MAX_INPUT_BYTES)
            return 0;
        t->data = calloc(items ? items : 1, item);
        if (t->data == NULL)
            return 0;
        for (size_t k = 0; k < items && size > 0; k++, cursor++) {
            const uint8_t b = bytes[cursor % size];
            uint8_t *at = (uint8_t *)t->data + k * item;
            if (fact.datum_type == EMBER_F32) {
                const float f = (float)((int)b - 128) / 32.0f;
                memcpy(at, &f, sizeof f);
            } else if (fact.datum_type == EMBER_I64) {
                const int64_t v = (int64_t)(b % 16) - 4;
                memcpy(at, &v, sizeof v);
            } else if (fact.datum_type == EMBER_BOOL) {
                *at = b & 1;
            }
        }
    }
    return 1;
}

typedef struct snapshot {
    ember_tensor tensors[MAX_INPUTS];
    size_t count;
} snapshot;

static void take(const plan *p, snapshot *s)
{
    s->count = ember_model_output_count(p->model);
    for (size_t i = 0; i < s->count && i < MAX_INPUTS; i++) {
        ember_tensor out;
        if (ember_runnable_output(p->runnable, i, &out) != EMBER_OK)
            abort();
        size_t bytes = ember_datum_type_size(out.datum_type);
        for (int d = 0; d < out.rank; d++)
            bytes *= (size_t)out.shape[d];
        s->tensors[i] = out;
        s->tensors[i].data = malloc(bytes ? bytes : 1);
        if (s->tensors[i].data == NULL)
            abort();
        memcpy(s->tensors[i].data, out.data, bytes);
    }
}

static void check_same(const plan *p, const snapshot *first)
{
    snapshot again;
    take(p, &again);
    for (size_t i = 0; i < first->count && i < MAX_INPUTS; i++) {
        const ember_tensor *a = &first->tensors[i], *b = &again.tensors[i];
        size_t bytes = ember_datum_type_size(a->datum_type);
        int same = a->rank == b->rank && a->datum_type == b->datum_type;
        for (int d = 0; same && d < a->rank; d++) {
            same = a->shape[d] == b->shape[d];
            bytes *= (size_t)a->shape[d];
        }
        if (!same || memcmp(a->data, b->data, bytes) != 0) {
            fprintf(stderr, "fuzz_shapes: output %zu changed between two runs of one "
                    "binding\n", i);
            abort();
        }
        free(b->data);
    }
}

static void check_facts(const plan *p, const int64_t *values, const snapshot *s)
{
    for (size_t i = 0; i < s->count && i < MAX_INPUTS; i++)
        for (int d = 0; d < s->tensors[i].rank; d++) {
            const int64_t want = eval_dim(p, ember_model_output_dim(p->model, i, d), values);
            if (want >= 0 && want != s->tensors[i].shape[d]) {
                fprintf(stderr, "fuzz_shapes: output %zu dim %d is %lld, its fact says %lld\n",
                        i, d, (long long)s->tensors[i].shape[d], (long long)want);
                abort();
            }
        }
}

static int run(const plan *p, const int64_t *values, int perturb, const uint8_t *bytes,
               size_t size)
{
    inputs in;
    int ok = make_inputs(p, values, perturb, bytes, size, &in) &&
             ember_runnable_run(p->runnable, in.count, in.tensors) == EMBER_OK;
    free_inputs(&in);
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (plan_count == 0)
        load_plans();
    if (size < 1 || plan_count == 0)
        return 0;
    const plan *p = &plans[data[0] % plan_count];
    size_t at = 1;
    int64_t a[EMBER_MAX_SYMBOLS], b[EMBER_MAX_SYMBOLS];
    for (size_t s = 0; s < p->symbols; s++) {
        a[s] = at < size ? data[at++] % 13 : 1;
        b[s] = a[s] + 1;
    }
    const int flags = at < size ? data[at++] : 0;
    const uint8_t *bytes = data + at;
    const size_t rest = size - at;
    if (flags & 1) /* an inconsistent shape: an error or a run, never a crash */
        (void)run(p, a, 1, bytes, rest);
    if (!run(p, a, 0, bytes, rest))
        return 0;
    ran++;
    snapshot first;
    take(p, &first);
    check_facts(p, a, &first);
    (void)run(p, b, 0, bytes, rest);
    if (run(p, a, 0, bytes, rest)) {
        check_same(p, &first);
        compared++;
    }
    for (size_t i = 0; i < first.count && i < MAX_INPUTS; i++)
        free(first.tensors[i].data);
    return 0;
}

#ifdef EMBER_FUZZ_DRIVER
/* fuzz_shapes N [seed]: N pseudo-random inputs, deterministic for a seed. */
int main(int argc, char **argv)
{
    const long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
    uint64_t state = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    uint8_t input[512];
    for (long k = 0; k < n; k++) {
        const size_t size = 1 + (size_t)(k % (long)sizeof input);
        for (size_t i = 0; i < size; i++) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            input[i] = (uint8_t)(state >> 24);
        }
        LLVMFuzzerTestOneInput(input, size);
    }
    printf("fuzz_shapes: %ld inputs over %zu plans: %ld ran, %ld compared after another "
           "binding\n", n, plan_count, ran, compared);
    return 0;
}
#endif
