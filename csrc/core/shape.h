/*
 * csrc/core/shape.h — facts about shapes and datum types shared by the core and the ops:
 * element counts with overflow checks, numpy broadcasting, contiguous strides, and the
 * text forms used in error messages ("f32 [1, 3, 224, 224]").
 *
 * Sizes read from files are hostile until checked: every byte size goes through
 * ember_shape_bytes, which refuses anything that does not fit a size_t on this target
 * (32-bit on armv7), so later arithmetic in int64_t/size_t cannot wrap.
 */
#ifndef EMBER_CORE_SHAPE_H
#define EMBER_CORE_SHAPE_H

#include <stddef.h>
#include <stdint.h>

#include "ember.h"

/* The largest byte size of one tensor: half the address space, so that sums of a few
 * sizes (arena offsets, alignment) still fit a size_t. */
#define EMBER_MAX_TENSOR_BYTES (SIZE_MAX / 4)

/* "f32", "i64", …; "?" for an unknown value. */
const char *ember_datum_type_name(ember_datum_type dt);
/* The datum type spelled `name` ("f32", "i64", "bool", …); 0 if unknown. */
ember_datum_type ember_datum_type_from_name(const char *name);
size_t ember_datum_size(ember_datum_type dt);

/* Number of elements; the shape must have passed ember_shape_bytes. */
int64_t ember_shape_count(const int64_t *shape, int rank);

/* Bytes of a tensor of this shape and item size; 0 on success, -1 if a dim is negative
 * or the size exceeds EMBER_MAX_TENSOR_BYTES. */
int ember_shape_bytes(const int64_t *shape, int rank, size_t item_size, size_t *out_bytes);

/* Row-major strides in elements. */
void ember_shape_strides(const int64_t *shape, int rank, int64_t *strides);

/* numpy broadcasting of two shapes (aligned on the right, 1 stretches);
 * returns 0 and writes the result, or -1 if they are incompatible. */
int ember_shape_broadcast(const int64_t *a, int rank_a, const int64_t *b, int rank_b,
                          int64_t *out, int *out_rank);

/* Strides (in elements) to read a tensor of shape `in` as if it had the broadcast shape
 * `out` (rank_out ≥ rank_in): 0 along stretched or missing dims. */
void ember_broadcast_strides(const int64_t *in, int rank_in, const int64_t *out, int rank_out,
                             int64_t *strides);

int ember_shape_equal(const int64_t *a, int rank_a, const int64_t *b, int rank_b);

/* The one axis of `out` along which a tensor of shape `k` varies once aligned right to
 * `out` (a per-channel constant: its channel axis); -2 if it has a single item, -1 if
 * it varies along several axes or is not broadcastable to `out` without growing it. */
int ember_shape_varying_axis(const int64_t *k, int rank_k, const int64_t *out, int rank_out);

/* "[1, 3, 224, 224]" into buf (always NUL-terminated; truncated with "…" if long). */
const char *ember_shape_format(const int64_t *shape, int rank, char *buf, size_t capacity);

/* Buffer size that holds any formatted shape of rank ≤ EMBER_MAX_RANK. */
#define EMBER_SHAPE_TEXT 200

#endif /* EMBER_CORE_SHAPE_H */
