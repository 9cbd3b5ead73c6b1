/*
 * The scale (scale.c): a mul by a constant that is a single item or varies along one axis,
 * hosting the fused add, clamp and gate after it. elementwise.c's mul descriptor uses
 * these as its prepare, epilogue tests and fast path.
 */
#ifndef EMBER_OPS_SCALE_H
#define EMBER_OPS_SCALE_H

#include "core/op.h"

typedef struct ember_scale ember_scale;

/* EMBER_OP_FUSES_EPILOGUE hooks of mul: a bias along `axis` (the constant's own axis, or
 * any for a single item), and the gate (x itself). */
int ember_scale_accepts_bias_axis(const ember_model *model, const ember_node *node,
                                  const ember_value *output, int axis);
int ember_scale_accepts_gate(const ember_model *model, const ember_node *node, int gate);

/* Whether mul `node`, with the epilogue it hosts, is a scale of its operand x along axis 1
 * (or by a single item) with at most an add and a clamp after it; then *out describes it
 * as a prologue of x's reader (op.h), its arrays pointing into the model's constant and
 * e's bias (valid while the instance is prepared). */
int ember_scale_prologue(const ember_model *model, const ember_node *node,
                         const ember_epilogue *e, ember_prologue *out);

/* *out: an ember_scale for any mul (released by ember_scale_free), which knows
 * whether the node is a scale and the epilogue it hosts. */
ember_status ember_scale_prepare(ember_prepare_context *ctx, void **out);
void ember_scale_free(void *prepared);

/* Runs the node in one pass when it is a scale and returns 1; 0 otherwise (the caller
 * computes the product, then calls ember_scale_clamp for the fused clamp, if any). */
int ember_scale_run(const ember_scale *scale, const ember_op_io *io);
void ember_scale_clamp(const ember_scale *scale, ember_tensor *y);

#endif /* EMBER_OPS_SCALE_H */
