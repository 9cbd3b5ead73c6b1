/*
 * csrc/core/packed.h — packed weights shared by every prepared instance of a runnable.
 *
 * A symbolic plan is prepared once per binding of its symbols (core/runnable.h), but its
 * weights do not depend on the binding: conv and matmul ask the store for the packed
 * form of a constant in a given layout, pack it only the first time, and every later
 * instance reuses it. The store belongs to the runnable and frees the buffers with it,
 * so the weights are packed once and held once, however many bindings are prepared.
 */
#ifndef EMBER_CORE_PACKED_H
#define EMBER_CORE_PACKED_H

#include <stddef.h>
#include <stdint.h>

typedef struct ember_packed_entry {
    const void *source;      /* the constant's items */
    uint64_t layout;         /* what decides the packed form (ember_packed_layout) */
    size_t bytes;
    void *data;
} ember_packed_entry;

typedef struct ember_packed_store {
    ember_packed_entry *entries;
    size_t count, capacity;
    size_t bytes;            /* held in total */
} ember_packed_store;

/* A key of the numbers that decide a packed form (operand, tile sizes, dims, flags). */
uint64_t ember_packed_layout(const int64_t *numbers, size_t count);

/* The packed buffer of `source` in `layout`, of `bytes`: the stored one, or a new one
 * (then *fresh = 1 and the caller fills it). NULL when out of memory. */
void *ember_packed_acquire(ember_packed_store *store, const void *source, uint64_t layout,
                           size_t bytes, int *fresh);

void ember_packed_store_free(ember_packed_store *store);

#endif /* EMBER_CORE_PACKED_H */
