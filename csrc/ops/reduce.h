/*
 * csrc/ops/reduce.h — reduce.c's contiguous reduction, which the pools share for windows
 * that cover a whole plane (global pooling written as avg_pool / max_pool).
 */
#ifndef EMBER_OPS_REDUCE_H
#define EMBER_OPS_REDUCE_H

#include <stdint.h>

/* The max (is_max) or the sum of in[0 .. n), n ≥ 1, in LANES partial results. */
float ember_reduce_block(const float *in, int64_t n, int is_max);

#endif
