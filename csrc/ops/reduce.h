/*
 * csrc/ops/reduce.h — reduce.c's contiguous reduction, which the pools share for windows
 * that cover a whole plane (global pooling written as avg_pool / max_pool).
 */
#ifndef EMBER_OPS_REDUCE_H
#define EMBER_OPS_REDUCE_H

#include <stdint.h>

/* out[o] = the max (is_max) or the sum of the o-th block of `block` (≥ 1) contiguous
 * floats of in, divided by `block` when normalize (the mean), for o < blocks. */
void ember_reduce_blocks(const float *in, int64_t blocks, int64_t block, int is_max,
                         int normalize, float *out);

#endif
