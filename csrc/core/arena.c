/*
 * Arena planning: one block of memory for every intermediate value and scratch buffer.
 *
 * Each request is an interval of steps [first, last] and a byte size. Two requests whose
 * intervals intersect are alive together and must not overlap in memory; the others
 * may. Finding the smallest arena is NP-hard (it is interval colouring with weights);
 * the usual greedy does well on network graphs: place the biggest buffers first, each
 * at the lowest offset where it fits among the already-placed buffers it coexists with
 * (TFLite Micro's "greedy memory planner" works the same way).
 */
#include <stdlib.h>

#include "base/error.h"
#include "base/sort.h"
#include "core/instance.h"

/* Offsets are rounded to EMBER_ARENA_ALIGNMENT so every tensor starts on a cache line and
 * any SIMD load in an op or kernel is aligned at the tensor start. */
static size_t align_up(size_t n)
{
    return (n + EMBER_ARENA_ALIGNMENT - 1) & ~(size_t)(EMBER_ARENA_ALIGNMENT - 1);
}

/* Placement order: biggest first; ties by first use (the stable sort keeps index order
 * after that: deterministic). */
static int placed_before(const void *context, int64_t i, int64_t j)
{
    const ember_arena_request *ra = (const ember_arena_request *)context + i;
    const ember_arena_request *rb = (const ember_arena_request *)context + j;
    if (ra->bytes != rb->bytes)
        return ra->bytes > rb->bytes;
    return ra->first < rb->first;
}

/* Placed neighbours are scanned by offset to find the first gap. */
static int by_offset(const void *a, const void *b)
{
    const ember_arena_request *ra = *(ember_arena_request *const *)a;
    const ember_arena_request *rb = *(ember_arena_request *const *)b;
    return ra->offset < rb->offset ? -1 : (ra->offset > rb->offset);
}

ember_status ember_arena_plan(ember_arena_request *requests, size_t count, size_t *out_total)
{
    int64_t *order = malloc((count + 1) * sizeof *order);
    int64_t *tmp = malloc((count + 1) * sizeof *tmp);
    ember_arena_request **coexisting = malloc((count + 1) * sizeof *coexisting);
    if (order == NULL || tmp == NULL || coexisting == NULL) {
        free(order);
        free(tmp);
        free(coexisting);
        return ember_error_set(EMBER_ERROR_MEMORY, "out of memory planning the arena");
    }
    for (size_t i = 0; i < count; i++)
        order[i] = (int64_t)i;
    ember_stable_sort(order, tmp, (int64_t)count, placed_before, requests);
    free(tmp);

    size_t total = 0;
    ember_status status = EMBER_OK;
    for (size_t n = 0; n < count && status == EMBER_OK; n++) {
        ember_arena_request *request = &requests[order[n]];
        request->offset = 0;
        if (request->bytes == 0)
            continue;
        /* The placed buffers alive at the same time as this one, by offset. */
        size_t k = 0;
        for (size_t m = 0; m < n; m++) {
            ember_arena_request *placed = &requests[order[m]];
            if (placed->bytes > 0 && placed->first <= request->last &&
                request->first <= placed->last)
                coexisting[k++] = placed;
        }
        qsort(coexisting, k, sizeof *coexisting, by_offset);
        /* First gap big enough, scanning upwards. */
        size_t offset = 0;
        for (size_t m = 0; m < k; m++) {
            if (offset + request->bytes <= coexisting[m]->offset)
                break;
            const size_t end = align_up(coexisting[m]->offset + coexisting[m]->bytes);
            if (end > offset)
                offset = end;
        }
        if (offset > SIZE_MAX / 2 - request->bytes) {
            status = ember_error_set(EMBER_ERROR_MEMORY, "the arena would exceed the address "
                                     "space");
            break;
        }
        request->offset = offset;
        if (offset + request->bytes > total)
            total = offset + request->bytes;
    }
    free(order);
    free(coexisting);
    *out_total = align_up(total);
    return status;
}
