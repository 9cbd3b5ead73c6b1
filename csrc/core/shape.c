#include "core/shape.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The one table of datum types: name (as in messages, .npy and tract's datum_type
 * strings) and item size. */
static const struct {
    ember_datum_type dt;
    const char *name;
    size_t size;
} datum_types[] = {
    {EMBER_F32, "f32", 4}, {EMBER_I64, "i64", 8}, {EMBER_I32, "i32", 4},
    {EMBER_I8, "i8", 1},   {EMBER_U8, "u8", 1},   {EMBER_BOOL, "bool", 1},
    {EMBER_I16, "i16", 2}, {EMBER_U16, "u16", 2}, {EMBER_U32, "u32", 4},
    {EMBER_U64, "u64", 8}, {EMBER_F16, "f16", 2}, {EMBER_F64, "f64", 8},
};
#define DATUM_TYPE_COUNT (sizeof datum_types / sizeof datum_types[0])

const char *ember_datum_type_name(ember_datum_type dt)
{
    for (size_t i = 0; i < DATUM_TYPE_COUNT; i++)
        if (datum_types[i].dt == dt)
            return datum_types[i].name;
    return "?";
}

/* Any case: tract writes datum_type = "F32". */
ember_datum_type ember_datum_type_from_name(const char *name)
{
    for (size_t i = 0; i < DATUM_TYPE_COUNT; i++)
        if (strcasecmp(datum_types[i].name, name) == 0)
            return datum_types[i].dt;
    return (ember_datum_type)0;
}

size_t ember_datum_size(ember_datum_type dt)
{
    for (size_t i = 0; i < DATUM_TYPE_COUNT; i++)
        if (datum_types[i].dt == dt)
            return datum_types[i].size;
    return 0;
}

/* No overflow check here on purpose: every shape reaching this was validated by
 * ember_shape_bytes when its value was created. */
int64_t ember_shape_count(const int64_t *shape, int rank)
{
    int64_t count = 1;
    for (int i = 0; i < rank; i++)
        count *= shape[i];
    return count;
}

int ember_shape_bytes(const int64_t *shape, int rank, size_t item_size, size_t *out_bytes)
{
    /* Multiply in uint64_t against a bound that fits size_t: a zero dim makes the
     * product 0, but every dim must still be non-negative and individually bounded. */
    const uint64_t limit = (uint64_t)EMBER_MAX_TENSOR_BYTES;
    uint64_t bytes = item_size;
    int zero = 0;
    for (int i = 0; i < rank; i++) {
        if (shape[i] < 0 || (uint64_t)shape[i] > limit)
            return -1;
        if (shape[i] == 0) {
            zero = 1;
            continue;
        }
        if (bytes > limit / (uint64_t)shape[i])
            return -1;
        bytes *= (uint64_t)shape[i];
    }
    *out_bytes = zero ? 0 : (size_t)bytes;
    return 0;
}

void ember_shape_strides(const int64_t *shape, int rank, int64_t *strides)
{
    int64_t stride = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[i] = stride;
        stride *= shape[i];
    }
}

/* `out` must not alias the inputs: it is written while they are still read. */
int ember_shape_broadcast(const int64_t *a, int rank_a, const int64_t *b, int rank_b,
                          int64_t *out, int *out_rank)
{
    const int rank = rank_a > rank_b ? rank_a : rank_b;
    for (int i = 0; i < rank; i++) {
        /* Align on the right: a missing leading dim acts as 1. */
        const int ia = i - (rank - rank_a), ib = i - (rank - rank_b);
        const int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
        if (da == db || db == 1)
            out[i] = da;
        else if (da == 1)
            out[i] = db;
        else
            return -1;
    }
    *out_rank = rank;
    return 0;
}

/* A stride of 0 makes a stretched dim re-read the same items: how every broadcasting op
 * walks its operands without materialising them. */
void ember_broadcast_strides(const int64_t *in, int rank_in, const int64_t *out, int rank_out,
                             int64_t *strides)
{
    int64_t own[EMBER_MAX_RANK];
    ember_shape_strides(in, rank_in, own);
    for (int i = 0; i < rank_out; i++) {
        const int j = i - (rank_out - rank_in);
        strides[i] = (j < 0 || (in[j] == 1 && out[i] != 1)) ? 0 : own[j];
    }
}

int ember_shape_equal(const int64_t *a, int rank_a, const int64_t *b, int rank_b)
{
    if (rank_a != rank_b)
        return 0;
    for (int i = 0; i < rank_a; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

int ember_shape_varying_axis(const int64_t *k, int rank_k, const int64_t *out, int rank_out)
{
    int axis = -2;
    if (rank_k > rank_out)
        return -1;
    for (int i = 0; i < rank_k; i++) {
        const int o = i + rank_out - rank_k;
        if (k[i] == 1)
            continue;
        if (k[i] != out[o] || axis != -2)
            return -1;
        axis = o;
    }
    return axis;
}

/* Messages quote shapes the way numpy users read them; truncation keeps a message
 * intact even for absurd ranks. */
const char *ember_shape_format(const int64_t *shape, int rank, char *buf, size_t capacity)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = -1; i <= rank; i++) {
        int n;
        if (i < 0)
            n = snprintf(buf + used, capacity - used, "[");
        else if (i == rank)
            n = snprintf(buf + used, capacity - used, "]");
        else
            n = snprintf(buf + used, capacity - used, "%s%lld", i ? ", " : "",
                         (long long)shape[i]);
        if (n < 0 || (size_t)n >= capacity - used) {
            if (capacity >= 4)
                memcpy(buf + capacity - 4, "...", 4);
            return buf;
        }
        used += (size_t)n;
    }
    return buf;
}
