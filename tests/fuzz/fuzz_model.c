/*
 * tests/fuzz/fuzz_model.c — libFuzzer target for the layers above the plan reader:
 * building the graph (csrc/core, csrc/ops), preparing it (kernel choice, weight
 * packing, arena plan) and running it, through the public API (include/ember.h) only.
 *
 * Two input modes, chosen by content:
 *
 * - graph text (the main mode): the input is graph.nnef. The harness parses it with
 *   the plan reader only to find the `variable` invocations, synthesises one .dat per
 *   label with the declared shape and deterministic contents, writes graph.nnef and the
 *   .dat files into a ustar archive in memory, and loads that with
 *   ember_model_load_buffer. Mutations so explore the graph semantics (ops, attributes,
 *   shapes) instead of breaking the tar checksum.
 *   The datum type of a synthesised tensor follows the generic type of the variable
 *   (`variable<integer>` i64, `variable<logical>` bool, otherwise f32), or a suffix of
 *   the label: "…:i64", "…:i32", "…:i8", "…:u8", "…:bool", "…:f32".
 * - archive: an input holding a ustar magic at offset 257 or starting with the gzip
 *   magic is given as is to ember_model_load_buffer (seeds: real plans as .tar).
 *
 * Symbolic plans: an input dim that is symbolic (-1 in its fact) gets a small size
 * derived from the fuzz input (0 to 9), the same for every dim with the same text, so
 * the run exercises binding, specialisation and shapes that vary with the input; other
 * texts (expressions) get their own size, which the runtime may rightly refuse.
 *
 * After a successful load: ember_runnable_new, then — when the inputs and the
 * runnable's memory stay under the caps below, so the fuzzer explores logic rather
 * than allocation sizes — ember_runnable_run with zero-filled inputs of the model's
 * input facts, then every output is read byte by byte and its shape checked against
 * the model's output fact (a mismatch aborts: the facts are what callers size their
 * buffers with).
 *
 * EMBER_FUZZ_WRITE_TAR=path (environment) writes the archive built in graph-text mode
 * to `path`, so a reproducer can be replayed outside the fuzzer (ember-run, Python).
 *
 * Build and run: see tests/fuzz/README.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember.h"
#include "plan/plan.h"

#define MAX_WEIGHT_BYTES ((size_t)16 << 20) /* all synthesised .dat data together */
#define MAX_INPUT_BYTES ((size_t)64 << 20)  /* all zero-filled inputs together */
#define MAX_MEMORY_BYTES ((size_t)64 << 20) /* ember_runnable_memory_bytes */
#define MAX_VARIABLES 256

/* A plan may legitimately ask for more memory than exists (a 4 TB arena): the runtime
 * must then fail with EMBER_ERROR_MEMORY, so let ASan return NULL, as malloc would,
 * instead of reporting allocation-size-too-big. (Requests between -malloc_limit_mb and
 * ASan's 1 TB maximum are still reported by libFuzzer as out-of-memory: run with
 * -fork=1 -ignore_ooms=1, see README.md.) */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}

/* ---------------------------------------------------------------- in-memory tar */

typedef struct {
    uint8_t *data;
    size_t size, capacity;
} buffer;

static int reserve(buffer *b, size_t more)
{
    if (b->size + more <= b->capacity)
        return 0;
    size_t capacity = b->capacity ? b->capacity : 4096;
    while (capacity < b->size + more)
        capacity *= 2;
    uint8_t *data = realloc(b->data, capacity);
    if (data == NULL)
        return -1;
    b->data = data;
    b->capacity = capacity;
    return 0;
}

/* Appends a ustar entry of `size` bytes; returns where its (zeroed) data goes, or NULL. */
static uint8_t *tar_add(buffer *b, const char *name, size_t size)
{
    size_t name_len = strlen(name);
    if (name_len == 0 || name_len >= 100)
        return NULL;
    size_t padded = (size + 511) / 512 * 512;
    if (reserve(b, 512 + padded) != 0)
        return NULL;
    uint8_t *h = b->data + b->size;
    memset(h, 0, 512 + padded);
    memcpy(h, name, name_len);
    memcpy(h + 100, "0000644", 7);
    memcpy(h + 108, "0000000", 7);
    memcpy(h + 116, "0000000", 7);
    snprintf((char *)h + 124, 12, "%011llo", (unsigned long long)size);
    memcpy(h + 136, "00000000000", 11);
    h[156] = '0';
    memcpy(h + 257, "ustar", 6);
    memcpy(h + 263, "00", 2);
    memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (int i = 0; i < 512; i++)
        sum += h[i];
    snprintf((char *)h + 148, 8, "%06o", sum);
    h[155] = ' ';
    b->size += 512 + padded;
    return h + 512;
}

static int tar_finish(buffer *b)
{
    if (reserve(b, 1024) != 0)
        return -1;
    memset(b->data + b->size, 0, 1024);
    b->size += 1024;
    return 0;
}

/* ---------------------------------------------------------------- synthesised weights */

typedef struct {
    const char *label;
    ember_datum_type dt;
    int rank;
    uint32_t extents[EMBER_MAX_RANK];
    uint64_t count;
} variable;

static size_t datum_size(ember_datum_type dt)
{
    switch (dt) {
    case EMBER_F32: case EMBER_I32: return 4;
    case EMBER_I64: return 8;
    case EMBER_I8: case EMBER_U8: case EMBER_BOOL: return 1;
    default: return 0;
    }
}

static const ember_nnef_expr *named_arg(const ember_nnef_expr *call, const char *name, size_t pos)
{
    for (size_t i = 0; i < call->u.invocation.arg_count; i++) {
        const ember_nnef_arg *a = &call->u.invocation.args[i];
        if (a->name != NULL ? strcmp(a->name, name) == 0 : i == pos)
            return a->value;
    }
    return NULL;
}

static int has_suffix(const char *s, const char *suffix, size_t *stem)
{
    size_t ls = strlen(s), lx = strlen(suffix);
    if (ls < lx || strcmp(s + ls - lx, suffix) != 0)
        return 0;
    *stem = ls - lx;
    return 1;
}

/* Reads a `variable<T>(label = "L", shape = [...])` invocation into `v`; 0 on success. */
static int read_variable(const ember_nnef_expr *call, variable *v)
{
    const ember_nnef_expr *label = named_arg(call, "label", 0);
    const ember_nnef_expr *shape = named_arg(call, "shape", 1);
    if (label == NULL || label->kind != EMBER_NNEF_STRING || shape == NULL ||
        shape->kind != EMBER_NNEF_ARRAY || shape->u.list.count > EMBER_MAX_RANK)
        return -1;
    v->label = label->u.string;
    const char *generic = call->u.invocation.generic_type;
    v->dt = generic && strcmp(generic, "integer") == 0   ? EMBER_I64
            : generic && strcmp(generic, "logical") == 0 ? EMBER_BOOL
                                                         : EMBER_F32;
    static const struct { const char *suffix; ember_datum_type dt; } suffixes[] = {
        {":f32", EMBER_F32}, {":i64", EMBER_I64}, {":i32", EMBER_I32},
        {":i8", EMBER_I8},   {":u8", EMBER_U8},   {":bool", EMBER_BOOL},
    };
    size_t stem;
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++)
        if (has_suffix(v->label, suffixes[i].suffix, &stem))
            v->dt = suffixes[i].dt;
    v->rank = (int)shape->u.list.count;
    v->count = 1;
    for (int i = 0; i < v->rank; i++) {
        const ember_nnef_expr *d = shape->u.list.items[i];
        if (d->kind != EMBER_NNEF_NUMBER || !d->u.number.is_integer || d->u.number.value < 0 ||
            d->u.number.value > (double)UINT32_MAX)
            return -1;
        v->extents[i] = (uint32_t)d->u.number.value;
        if (v->extents[i] != 0 && v->count > MAX_WEIGHT_BYTES / v->extents[i])
            return -1;
        v->count *= v->extents[i];
    }
    return v->count * datum_size(v->dt) <= MAX_WEIGHT_BYTES ? 0 : -1;
}

static void collect_variables(const ember_nnef_expr *e, variable *vars, size_t *n, int depth)
{
    if (e == NULL || depth > 64 || *n == MAX_VARIABLES)
        return;
    switch (e->kind) {
    case EMBER_NNEF_INVOCATION:
        if (strcmp(e->u.invocation.op, "variable") == 0 && read_variable(e, &vars[*n]) == 0) {
            (*n)++;
            return;
        }
        for (size_t i = 0; i < e->u.invocation.arg_count; i++)
            collect_variables(e->u.invocation.args[i].value, vars, n, depth + 1);
        return;
    case EMBER_NNEF_ARRAY:
    case EMBER_NNEF_TUPLE:
        for (size_t i = 0; i < e->u.list.count; i++)
            collect_variables(e->u.list.items[i], vars, n, depth + 1);
        return;
    default:
        return;
    }
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Writes the .dat file of `v` (128-byte header, then deterministic data). */
static int add_dat(buffer *tar, const variable *v)
{
    char name[128];
    if (snprintf(name, sizeof name, "%s.dat", v->label) >= (int)sizeof name)
        return -1;
    size_t item = datum_size(v->dt);
    size_t data_bytes = (size_t)v->count * item;
    uint8_t *p = tar_add(tar, name, 128 + data_bytes);
    if (p == NULL)
        return -1;
    p[0] = 0x4e;
    p[1] = 0xef;
    p[2] = 1;
    p[3] = 0;
    put_u32(p + 4, (uint32_t)data_bytes);
    put_u32(p + 8, (uint32_t)v->rank);
    for (int i = 0; i < v->rank; i++)
        put_u32(p + 12 + 4 * i, v->extents[i]);
    put_u32(p + 44, (uint32_t)(item * 8));
    unsigned item_type = v->dt == EMBER_F32 ? 0 : v->dt == EMBER_U8 ? 1 : v->dt == EMBER_BOOL ? 5 : 4;
    p[48] = (uint8_t)item_type;
    uint8_t *d = p + 128;
    for (uint64_t i = 0; i < v->count; i++) {
        uint32_t h = (uint32_t)(i * 2654435761u);
        switch (v->dt) {
        case EMBER_F32: {
            float f = (float)((int)(h >> 24) - 128) / 64.0f; /* in [-2, 2) */
            memcpy(d + 4 * i, &f, 4);
            break;
        }
        case EMBER_I64: {
            int64_t x = (int64_t)(i % 4); /* small: these are often shapes or axes */
            memcpy(d + 8 * i, &x, 8);
            break;
        }
        case EMBER_I32: {
            int32_t x = (int32_t)(i % 4);
            memcpy(d + 4 * i, &x, 4);
            break;
        }
        default:
            d[i] = (uint8_t)(v->dt == EMBER_BOOL ? i & 1 : h >> 24);
            break;
        }
    }
    return 0;
}

/* Builds a tar holding `text` as graph.nnef and synthesised weights; 0 on success. */
static int build_archive(const uint8_t *text, size_t size, buffer *tar)
{
    ember_nnef_document doc;
    if (ember_nnef_parse((const char *)text, size, "fuzz:graph.nnef", &doc) != EMBER_OK)
        return -1;
    static variable vars[MAX_VARIABLES];
    size_t n = 0;
    for (size_t i = 0; i < doc.graph_body_count; i++)
        collect_variables(doc.graph_body[i].rvalue, vars, &n, 0);
    int status = 0;
    uint8_t *g = tar_add(tar, "graph.nnef", size);
    if (g == NULL) {
        status = -1;
    } else {
        memcpy(g, text, size);
        size_t total = 0;
        for (size_t i = 0; i < n && status == 0; i++) {
            int seen = 0; /* one file per label: the first declaration wins */
            for (size_t j = 0; j < i && !seen; j++)
                seen = strcmp(vars[i].label, vars[j].label) == 0;
            if (seen)
                continue;
            total += (size_t)vars[i].count * datum_size(vars[i].dt);
            if (total > MAX_WEIGHT_BYTES)
                status = -1;
            else
                (void)add_dat(tar, &vars[i]); /* a label that does not fit is left out */
        }
    }
    if (status == 0)
        status = tar_finish(tar);
    ember_nnef_document_free(&doc);
    return status;
}

/* ---------------------------------------------------------------- load, prepare, run */

/* 0..9 from the dim's text and the input's hash: equal texts, equal sizes. */
static int64_t symbolic_size(const char *text, uint32_t seed)
{
    for (; text != NULL && *text; text++)
        seed = (seed ^ (uint8_t)*text) * 16777619u;
    return (int64_t)(seed % 10);
}

static int same_shape(const ember_tensor *t, const ember_fact *f)
{
    if (t->datum_type != f->datum_type || t->rank != f->rank)
        return 0;
    for (int i = 0; i < t->rank; i++)
        if (f->shape[i] >= 0 && t->shape[i] != f->shape[i]) /* -1: symbolic */
            return 0;
    return 1;
}

static void exercise(const uint8_t *plan, size_t size)
{
    ember_model *model = NULL;
    if (ember_model_load_buffer(plan, size, &model) != EMBER_OK)
        return;
    size_t n_inputs = ember_model_input_count(model);
    size_t n_outputs = ember_model_output_count(model);
    (void)ember_model_node_count(model);
    for (size_t i = 0; i < n_outputs; i++)
        (void)ember_model_output_name(model, i);

    uint32_t seed = 2166136261u; /* FNV-1a of the input: the sizes of symbolic dims */
    for (size_t b = 0; b < size; b++)
        seed = (seed ^ plan[b]) * 16777619u;
    ember_tensor *inputs = calloc(n_inputs ? n_inputs : 1, sizeof *inputs);
    ember_runnable *run = NULL;
    int ok = inputs != NULL;
    size_t total = 0;
    for (size_t i = 0; ok && i < n_inputs; i++) {
        ember_fact fact;
        (void)ember_model_input_name(model, i);
        if (ember_model_input_fact(model, i, &fact) != EMBER_OK || fact.rank < 0 ||
            fact.rank > EMBER_MAX_RANK) {
            ok = 0;
            break;
        }
        size_t bytes = ember_datum_type_size(fact.datum_type);
        for (int d = 0; d < fact.rank; d++)
            if (fact.shape[d] < 0)
                fact.shape[d] = symbolic_size(ember_model_input_dim(model, i, d), seed);
        for (int d = 0; d < fact.rank && ok; d++) {
            if (fact.shape[d] < 0 || (fact.shape[d] > 0 && bytes > MAX_INPUT_BYTES / (size_t)fact.shape[d]))
                ok = 0;
            else
                bytes *= (size_t)fact.shape[d];
        }
        total += bytes;
        if (!ok || total > MAX_INPUT_BYTES) {
            ok = 0;
            break;
        }
        inputs[i].datum_type = fact.datum_type;
        inputs[i].rank = fact.rank;
        memcpy(inputs[i].shape, fact.shape, sizeof fact.shape);
        inputs[i].data = calloc(bytes ? bytes : 1, 1);
        if (inputs[i].data == NULL)
            ok = 0;
    }
    if (ember_runnable_new(model, &run) == EMBER_OK) {
        if (ok && ember_runnable_memory_bytes(run) <= MAX_MEMORY_BYTES &&
            ember_runnable_run(run, n_inputs, inputs) == EMBER_OK) {
            for (size_t i = 0; i < n_outputs; i++) {
                ember_tensor out;
                ember_fact fact;
                if (ember_runnable_output(run, i, &out) != EMBER_OK)
                    abort(); /* the index is in range and the run succeeded */
                if (ember_model_output_fact(model, i, &fact) != EMBER_OK) {
                    if (ember_model_symbol_count(model) == 0)
                        abort(); /* only a symbolic plan may lack output facts */
                    fact.datum_type = out.datum_type;
                    fact.rank = out.rank;
                    for (int d = 0; d < out.rank; d++)
                        fact.shape[d] = -1;
                }
                if (!same_shape(&out, &fact)) {
                    fprintf(stderr, "fuzz_model: output %zu does not match its fact\n", i);
                    abort();
                }
                size_t bytes = ember_datum_type_size(out.datum_type);
                for (int d = 0; d < out.rank; d++)
                    bytes *= (size_t)out.shape[d];
                volatile uint8_t sink = 0;
                for (size_t b = 0; b < bytes; b++)
                    sink ^= ((const uint8_t *)out.data)[b];
                (void)sink;
            }
        }
        ember_runnable_free(run);
    }
    for (size_t i = 0; inputs != NULL && i < n_inputs; i++)
        free(inputs[i].data);
    free(inputs);
    ember_model_free(model);
}

static int is_archive(const uint8_t *data, size_t size)
{
    return (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) ||
           (size >= 512 && memcmp(data + 257, "ustar", 5) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (is_archive(data, size)) {
        exercise(data, size);
        return 0;
    }
    buffer tar = {0};
    if (build_archive(data, size, &tar) == 0) {
        const char *path = getenv("EMBER_FUZZ_WRITE_TAR");
        if (path != NULL) {
            FILE *f = fopen(path, "wb");
            if (f != NULL) {
                fwrite(tar.data, 1, tar.size, f);
                fclose(f);
            }
        }
        exercise(tar.data, tar.size);
    }
    free(tar.data);
    return 0;
}
