/*
 * Per-node profile: timing and static costs (see core/profile.h).
 */
#include "core/profile.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "core/shape.h"

double ember_profile_clock(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void ember_profile_run_start(ember_profile *profile)
{
    profile->cursor = 0;
}

static double count_of(const ember_tensor *t)
{
    return t != NULL ? (double)ember_shape_count(t->shape, t->rank) : 0.0;
}

static double bytes_of(const ember_tensor *t)
{
    return count_of(t) * (double)ember_datum_type_size(t->datum_type);
}

/* Multiply-adds × 2 for the ops that are products, from their operands' shapes; one per
 * output item for the others. */
static double flops_of(const char *op, const ember_tensor *const *in, size_t n,
                       const ember_tensor *out)
{
    const double items = count_of(out);
    if ((strcmp(op, "conv") == 0 || strcmp(op, "ember_qlinear_conv") == 0) && n >= 2)
        return 2.0 * items * count_of(in[1]) / (double)(in[1]->shape[0] ? in[1]->shape[0] : 1);
    if (strcmp(op, "matmul") == 0 && n >= 2 && in[0]->rank >= 2 && in[1]->rank >= 2) {
        const int64_t a_last = in[0]->shape[in[0]->rank - 1];
        const int64_t b_rows = in[1]->shape[in[1]->rank - 2], b_last = in[1]->shape[in[1]->rank - 1];
        const int64_t k = a_last == b_rows || a_last == b_last ? a_last
                                                               : in[0]->shape[in[0]->rank - 2];
        return 2.0 * items * (double)k;
    }
    if (strncmp(op, "ember_lstm", 10) == 0 || strncmp(op, "ember_gru", 9) == 0 ||
        strncmp(op, "ember_rnn", 9) == 0) {
        if (n < 3 || in[0]->rank < 2)
            return items;
        const double steps = (double)in[0]->shape[0] * (double)in[0]->shape[1];
        return 2.0 * steps * (count_of(in[1]) + count_of(in[2]));
    }
    return items;
}

static ember_node_profile *record_for(ember_profile *profile, const char *name)
{
    if (profile->cursor < profile->count &&
        strcmp(profile->nodes[profile->cursor].name, name) == 0)
        return &profile->nodes[profile->cursor++];
    for (size_t i = 0; i < profile->count; i++)
        if (strcmp(profile->nodes[i].name, name) == 0) {
            profile->cursor = i + 1;
            return &profile->nodes[i];
        }
    return NULL;
}

ember_status ember_profile_add(ember_profile *profile, const char *op, const char *form,
                               const char *name, double seconds,
                               const ember_tensor *const *inputs, size_t input_count,
                               const ember_tensor *output)
{
    profile->seconds += seconds;
    ember_node_profile *record = record_for(profile, name);
    if (record != NULL) {
        record->seconds += seconds;
        return EMBER_OK;
    }
    if (profile->count == profile->capacity) {
        const size_t capacity = profile->capacity ? 2 * profile->capacity : 64;
        ember_node_profile *grown = realloc(profile->nodes, capacity * sizeof *grown);
        if (grown == NULL)
            return ember_error_set(EMBER_ERROR_MEMORY, "out of memory profiling");
        profile->nodes = grown;
        profile->capacity = capacity;
    }
    record = &profile->nodes[profile->count];
    memset(record, 0, sizeof *record);
    record->name = strdup(name);
    record->op = op;               /* static storage: the op table */
    record->form = form != NULL ? form : "";
    if (record->name == NULL)
        return ember_error_set(EMBER_ERROR_MEMORY, "out of memory profiling");
    profile->count++;
    profile->cursor = profile->count;
    record->seconds = seconds;
    if (output != NULL) {
        record->flops = flops_of(op, inputs, input_count, output);
        record->bytes = bytes_of(output);
        for (size_t i = 0; i < input_count; i++)
            record->bytes += inputs[i] != NULL ? bytes_of(inputs[i]) : 0.0;
        record->rank = output->rank;
        memcpy(record->shape, output->shape, sizeof record->shape);
    }
    return EMBER_OK;
}

EMBER_API size_t ember_profile_node_count(const ember_profile *profile)
{
    return profile != NULL ? profile->count : 0;
}

EMBER_API ember_status ember_profile_node(const ember_profile *profile, size_t index,
                                          ember_node_profile *out_node)
{
    if (profile == NULL || out_node == NULL || index >= profile->count)
        return ember_error_set(EMBER_ERROR_ARGUMENT, "ember_profile_node: %s",
                               profile && out_node ? "index out of range" : "NULL argument");
    *out_node = profile->nodes[index];
    out_node->seconds /= profile->runs > 0 ? profile->runs : 1;
    return EMBER_OK;
}

EMBER_API double ember_profile_seconds(const ember_profile *profile)
{
    return profile != NULL && profile->runs > 0 ? profile->seconds / profile->runs : 0.0;
}

EMBER_API void ember_profile_free(ember_profile *profile)
{
    if (profile == NULL)
        return;
    for (size_t i = 0; i < profile->count; i++)
        free((char *)profile->nodes[i].name);
    free(profile->nodes);
    free(profile);
}
