/*
 * csrc/ops/transpose.h — what transpose.c tells the core about a transpose node: the
 * fusion of a channel shuffle (core/fuse.c) reads its permutation.
 */
#ifndef EMBER_OPS_TRANSPOSE_H
#define EMBER_OPS_TRANSPOSE_H

#include "core/model.h"

/* Whether the node's permutation swaps axes a and b and keeps every other. */
int ember_transpose_swaps(const ember_node *node, int a, int b);

#endif
