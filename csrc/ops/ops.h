/*
 * csrc/ops/ops.h — the list of every op descriptor, one line each.
 *
 * X(descriptor) names `ember_op_<descriptor>`, defined in the family file shown in the
 * comment. op_table.c expands the list into the lookup table; nothing else needs to
 * change to add an op.
 */
#ifndef EMBER_OPS_OPS_H
#define EMBER_OPS_OPS_H

#include "core/op.h"

#define EMBER_OPS(X)                                                                       \
    /* elementwise.c */                                                                    \
    X(add) X(sub) X(mul) X(div) X(min) X(max) X(pow)                                       \
    X(relu) X(sigmoid) X(tanh) X(exp) X(log) X(sqrt) X(rsqrt) X(abs) X(neg) X(copy)       \
    X(clamp)                                                                               \
    /* conv.c */                                                                           \
    X(conv)                                                                                \
    /* pool.c */                                                                           \
    X(max_pool) X(avg_pool) X(box)                                                         \
    /* reduce.c */                                                                         \
    X(sum_reduce) X(mean_reduce) X(max_reduce)                                             \
    /* lrn.c */                                                                            \
    X(local_response_normalization)                                                        \
    /* matmul.c */                                                                         \
    X(matmul)                                                                              \
    /* softmax.c */                                                                        \
    X(softmax)                                                                             \
    /* reshape.c */                                                                        \
    X(reshape) X(squeeze) X(unsqueeze)                                                     \
    /* transpose.c */                                                                      \
    X(transpose)                                                                           \
    /* concat.c */                                                                         \
    X(concat)                                                                              \
    /* slice.c */                                                                          \
    X(slice)                                                                               \
    /* quant.c, quant_matmul.c, quant_conv.c */                                            \
    X(ember_quantize_linear) X(ember_dequantize_linear) X(ember_dynamic_quantize_linear)  \
    X(ember_bit_cast) X(ember_matmul_integer) X(ember_qlinear_matmul)                     \
    X(ember_conv_integer) X(ember_qlinear_conv)

#define EMBER_DECLARE_OP(name) extern const ember_op ember_op_##name;
EMBER_OPS(EMBER_DECLARE_OP)
#undef EMBER_DECLARE_OP

#endif /* EMBER_OPS_OPS_H */
