/*
 * What recurrent.c (attributes, typing, the op table) and recurrent_run.c (packing and
 * the steps) share: the ops' variants, their inputs' positions and the parsed attributes.
 */
#ifndef EMBER_OPS_RECURRENT_H
#define EMBER_OPS_RECURRENT_H

#include "core/op.h"
#include "ops/activation.h"
#include "ops/ops.h"

enum { LSTM, GRU, RNN };
enum { X, W, R, B, LENS, INITIAL_H, INITIAL_C, PEEPHOLES };

/* Gates per variant: LSTM's iofc, GRU's zrh, RNN's one. */
static inline int recurrent_gates(int variant)
{
    return variant == LSTM ? 4 : variant == GRU ? 3 : 1;
}

typedef struct recurrent_attributes {
    int directions;          /* 1 or 2 */
    int reverse;             /* a single direction running from the last step */
    ember_activation functions[2][3];
    int clipped;
    float clip;
    int input_forget, linear_before_reset;
} recurrent_attributes;

ember_status ember_recurrent_prepare(ember_prepare_context *ctx, void **out);
void ember_recurrent_run(const ember_node *node, void *prepared, const ember_op_io *io);

#endif
