/*
 * csrc/plan/nnef_stdlib.c — the compound operations of the NNEF 1.0 standard library
 * that the runtime has no kernel of its own for, written as NNEF fragments over the ops
 * it has. The flattener (nnef_flatten.c) inlines them like a document's own fragments,
 * so `linear(x, w, b)` in a plan costs what matmul + add cost (and the builder fuses
 * the add into the matmul's epilogue).
 *
 * The semantics are the NNEF 1.0 specification's ("compound operations") and, for the
 * tract_core_* ones, tract's; the fragments are ours. A document that defines a fragment of the same
 * name uses its own: its definition is what its writer meant.
 */
#include "plan/plan.h"

const char ember_nnef_stdlib_text[] =
    "version 1.0;\n"

    /* element-wise */
    "fragment sqr(x: tensor<scalar>) -> (y: tensor<scalar>) { y = mul(x, x); }\n"
    "fragment rsqr(x: tensor<scalar>) -> (y: tensor<scalar>) { y = rcp(mul(x, x)); }\n"
    "fragment log2(x: tensor<scalar>) -> (y: tensor<scalar>)\n"
    "{ y = mul(log(x), 1.4426950408889634); }\n"
    "fragment silu(x: tensor<scalar>) -> (y: tensor<scalar>) { y = mul(x, sigmoid(x)); }\n"

    /* linear layers */
    "fragment linear(input: tensor<scalar>, filter: tensor<scalar>,\n"
    "                bias: tensor<scalar> = 0.0) -> (output: tensor<scalar>)\n"
    "{ output = add(matmul(input, filter, transposeA = false, transposeB = true), bias); }\n"

    "fragment planewise_conv(input: tensor<scalar>, filter: tensor<scalar>,\n"
    "    bias: tensor<scalar> = 0.0, border: string = 'constant', padding: (integer, integer)[] = [],\n"
    "    stride: integer[] = [], dilation: integer[] = []) -> (output: tensor<scalar>)\n"
    "{ output = conv(input, filter, bias, border = border, padding = padding, stride = stride,\n"
    "                dilation = dilation, groups = 0); }\n"

    "fragment separable_conv(input: tensor<scalar>, plane_filter: tensor<scalar>,\n"
    "    point_filter: tensor<scalar>, bias: tensor<scalar> = 0.0, border: string = 'constant',\n"
    "    padding: (integer, integer)[] = [], stride: integer[] = [], dilation: integer[] = [],\n"
    "    groups: integer = 1) -> (output: tensor<scalar>)\n"
    "{\n"
    "  filtered = conv(input, plane_filter, 0.0, border = border, padding = padding,\n"
    "                  stride = stride, dilation = dilation, groups = 0);\n"
    "  output = conv(filtered, point_filter, bias, groups = groups);\n"
    "}\n"

    /* pooling and normalization */
    "fragment rms_pool(input: tensor<scalar>, size: integer[], border: string = 'constant',\n"
    "    padding: (integer, integer)[] = [], stride: integer[] = [], dilation: integer[] = [])\n"
    "    -> (output: tensor<scalar>)\n"
    "{ output = sqrt(avg_pool(mul(input, input), size = size, border = border,\n"
    "                         padding = padding, stride = stride, dilation = dilation)); }\n"

    "fragment batch_normalization(input: tensor<scalar>, mean: tensor<scalar>,\n"
    "    variance: tensor<scalar>, offset: tensor<scalar>, scale: tensor<scalar>,\n"
    "    epsilon: scalar) -> (output: tensor<scalar>)\n"
    "{ output = add(offset, div(mul(scale, sub(input, mean)), sqrt(add(variance, epsilon)))); }\n"

    "fragment l1_normalization(input: tensor<scalar>, axes: integer[], bias: scalar = 0.0,\n"
    "    epsilon: scalar = 0.0) -> (output: tensor<scalar>)\n"
    "{ output = div(input, max(add(sum_reduce(abs(input), axes = axes), bias), epsilon)); }\n"

    "fragment l2_normalization(input: tensor<scalar>, axes: integer[], bias: scalar = 0.0,\n"
    "    epsilon: scalar = 0.0) -> (output: tensor<scalar>)\n"
    "{ output = div(input, max(sqrt(add(sum_reduce(mul(input, input), axes = axes), bias)),\n"
    "                          epsilon)); }\n"

    "fragment moments(input: tensor<scalar>, axes: integer[])\n"
    "    -> (mean: tensor<scalar>, variance: tensor<scalar>)\n"
    "{\n"
    "  mean = mean_reduce(input, axes = axes);\n"
    "  centered = sub(input, mean);\n"
    "  variance = mean_reduce(mul(centered, centered), axes = axes);\n"
    "}\n"

    /* tract's: every stride-th item from `modulo` (a positive stride: tract writes no
     * other for the models it cooks); end = 0 with begin >= 0 is "to the end" */
    "fragment tract_core_downsample(input: tensor<scalar>, axis: integer, stride: integer,\n"
    "    modulo: integer = 0) -> (output: tensor<scalar>)\n"
    "{ output = slice(input, axes = [axis], begin = [modulo], end = [0], stride = [stride]); }\n"

    "graph stdlib() -> () {}\n";
