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
    X(sum_reduce) X(mean_reduce) X(max_reduce) X(min_reduce) X(prod_reduce)                \
    /* arg_reduce.c */                                                                     \
    X(argmax_reduce) X(argmin_reduce) X(argmax_reduce_last) X(argmin_reduce_last)                                             \
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
    /* value_sized.c */                                                                    \
    X(ember_nonzero) X(ember_compress) X(ember_unique) X(ember_range_count) X(ember_range)  \
    /* decide.c */                                                                         \
    X(ember_decide_values) X(ember_decide_dims) X(shape_of)                                \
    /* unary_math.c */                                                                     \
    X(floor) X(ceil) X(round_even) X(sign) X(rcp) X(sin) X(cos) X(tan) X(asin) X(acos)     \
    X(atan) X(sinh) X(cosh) X(asinh) X(acosh) X(atanh) X(erf) X(softplus) X(softsign)       \
    X(mish) X(elu) X(selu) X(celu) X(leaky_relu) X(thresholded_relu) X(shrink)              \
    X(is_nan) X(is_inf)                                                                    \
    /* pad.c */                                                                            \
    X(pad)                                                                                 \
    /* binary_any.c */                                                                     \
    X(eq) X(ne) X(lt) X(gt) X(le) X(ge) X(and) X(or) X(mod) X(fmod) X(prelu)              \
    X(bitwise_and) X(bitwise_or) X(bitwise_xor) X(shift_left) X(shift_right) X(not)      \
    X(bitwise_not) X(select)                                                               \
    /* cast.c */                                                                           \
    X(cast)                                                                                \
    /* tile.c, gather.c */                                                                 \
    X(broadcast) X(tile) X(gather) X(gather_elements)                                     \
    /* scatter.c */                                                                        \
    X(scatter_elements) X(scatter_nd) X(gather_nd)                                         \
    /* linalg.c */                                                                         \
    X(det)                                                                                 \
    /* core/control.c */                                                                   \
    X(ember_if) X(ember_loop) X(ember_scan)                                                \
    /* recurrent.c */                                                                      \
    X(ember_lstm) X(ember_gru) X(ember_rnn)                                                \
    /* grid_sample.c */                                                                    \
    X(grid_sample)                                                                         \
    /* cumulative.c */                                                                     \
    X(cumsum) X(cumprod) X(topk)                                                           \
    /* loss.c */                                                                           \
    X(nll_loss)                                                                            \
    /* quant.c, quant_matmul.c, quant_conv.c */                                            \
    X(ember_quantize_linear) X(ember_dequantize_linear) X(ember_dynamic_quantize_linear)  \
    X(ember_bit_cast) X(ember_matmul_integer) X(ember_qlinear_matmul)                     \
    X(ember_conv_integer) X(ember_qlinear_conv)

#define EMBER_DECLARE_OP(name) extern const ember_op ember_op_##name;
EMBER_OPS(EMBER_DECLARE_OP)
#undef EMBER_DECLARE_OP

#endif /* EMBER_OPS_OPS_H */
