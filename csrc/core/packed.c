/* Packed weights shared between instances (core/packed.h). A linear search: a model has
 * tens to hundreds of packed constants, looked up once per prepare. */
#include "core/packed.h"

#include <stdlib.h>
#include <string.h>

uint64_t ember_packed_layout(const int64_t *numbers, size_t count)
{
    uint64_t h = 14695981039346656037ull; /* FNV-1a over the numbers' bytes */
    for (size_t i = 0; i < count; i++)
        for (int b = 0; b < 8; b++)
            h = (h ^ (uint8_t)((uint64_t)numbers[i] >> (8 * b))) * 1099511628211ull;
    return h;
}

void *ember_packed_acquire(ember_packed_store *store, const void *source, uint64_t layout,
                           size_t bytes, int *fresh)
{
    for (size_t i = 0; i < store->count; i++) {
        const ember_packed_entry *e = &store->entries[i];
        if (e->source == source && e->layout == layout && e->bytes == bytes) {
            *fresh = 0;
            return e->data;
        }
    }
    if (store->count == store->capacity) {
        const size_t capacity = store->capacity ? 2 * store->capacity : 16;
        ember_packed_entry *bigger = realloc(store->entries, capacity * sizeof *bigger);
        if (bigger == NULL)
            return NULL;
        store->entries = bigger;
        store->capacity = capacity;
    }
    void *data = malloc(bytes ? bytes : 1);
    if (data == NULL)
        return NULL;
    store->entries[store->count++] = (ember_packed_entry){source, layout, bytes, data};
    store->bytes += bytes;
    *fresh = 1;
    return data;
}

void ember_packed_store_free(ember_packed_store *store)
{
    for (size_t i = 0; i < store->count; i++)
        free(store->entries[i].data);
    free(store->entries);
    memset(store, 0, sizeof *store);
}
