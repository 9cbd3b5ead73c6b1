/*
 * csrc/base/sort.h — a stable merge sort of indices with a context: C11's qsort has no
 * context argument, and a static one would make concurrent prepares or runs race.
 * Used by the arena planner (request order), Unique and TopK (item order).
 */
#ifndef EMBER_BASE_SORT_H
#define EMBER_BASE_SORT_H

#include <stdint.h>
#include <string.h>

/* Whether item a must come strictly before item b; equal items keep their order. */
typedef int (*ember_before_fn)(const void *context, int64_t a, int64_t b);

/* Sort order[0..n) stably; tmp holds n items of scratch. Recursion depth is log2(n). */
static inline void ember_stable_sort(int64_t *order, int64_t *tmp, int64_t n,
                                     ember_before_fn before, const void *context)
{
    if (n < 2)
        return;
    const int64_t half = n / 2;
    ember_stable_sort(order, tmp, half, before, context);
    ember_stable_sort(order + half, tmp, n - half, before, context);
    int64_t i = 0, j = half, k = 0;
    while (i < half && j < n)
        tmp[k++] = before(context, order[j], order[i]) ? order[j++] : order[i++];
    while (i < half)
        tmp[k++] = order[i++];
    while (j < n)
        tmp[k++] = order[j++];
    memcpy(order, tmp, (size_t)n * sizeof *order);
}

#endif /* EMBER_BASE_SORT_H */
