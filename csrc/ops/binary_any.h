/*
 * csrc/ops/binary_any.h — the type-generic binary ops of binary_any.c, for the op
 * families that run f32 themselves (elementwise.c) and hand every other type here.
 */
#ifndef EMBER_OPS_BINARY_ANY_H
#define EMBER_OPS_BINARY_ANY_H

#include "core/op.h"

/* Operations; those from EMBER_BIN_EQ on give bool. */
enum {
    EMBER_BIN_ADD, EMBER_BIN_SUB, EMBER_BIN_MUL, EMBER_BIN_DIV, EMBER_BIN_MIN, EMBER_BIN_MAX,
    EMBER_BIN_POW, EMBER_BIN_MOD, EMBER_BIN_FMOD, EMBER_BIN_PRELU, EMBER_BIN_BIT_AND,
    EMBER_BIN_BIT_OR, EMBER_BIN_BIT_XOR, EMBER_BIN_SHIFT_LEFT, EMBER_BIN_SHIFT_RIGHT,
    EMBER_BIN_EQ, EMBER_BIN_NE, EMBER_BIN_LT, EMBER_BIN_GT, EMBER_BIN_LE, EMBER_BIN_GE,
    EMBER_BIN_AND, EMBER_BIN_OR
};

/* Output fact of `op` on inputs[0..1] (same datum type, broadcasting), or an error. */
ember_status ember_binary_any_infer(int op, ember_node *node, const ember_value *const *inputs,
                                    ember_value *output);
/* Compute `op` item by item in the operands' type. */
void ember_binary_any_run(int op, const ember_op_io *io);
/* numpy broadcasting of `count` inputs: output->rank and shape. */
ember_status ember_broadcast_facts(ember_node *node, const ember_value *const *inputs,
                                   size_t count, ember_value *output);

#endif /* EMBER_OPS_BINARY_ANY_H */
