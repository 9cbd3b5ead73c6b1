"""Convolutions of every path on aarch64 and armv7 (under QEMU) against the host: the
implicit GEMM (B read in place from stride-phase planes, where conv_implicit.c's cost
model picks it) at strides 1 to 4, with dilation, groups, several bands and batch 2; the
im2col path beside it (more channels, stride 5); the transposed GEMM of few output pixels
(on armv7's 4×8 tiles from 197 output channels at 7×7); Winograd F(2×2, 3×3) (odd
sizes, blocks of tiles, groups, batch 2); depthwise convs through the
f32_dwconv kernel (3×3 stride 2, 5×5 dilated, a 7×7 plane with a channel multiplier,
stride 3 at batch 2, 3×3 "same" planes read in place); some of them with a skip
connection (add, relu) fused into the conv, some with a hardswish after (fused: in the
GEMM micro-kernels' registers, after the other paths' writes), grouped ones with a
channel shuffle after (fused: the conv stores its channels shuffled), and 1×1 ones after a
BatchNorm and relu (fused: the conv scales its input as it packs it). The host's results are
checked against a direct reference by tests/runtime/test_ops_conv.py and test_fusion.py."""
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import cross
import ember

# name: (x shape, filter shape, groups, pads (top, left, bottom, right), strides, dilations)
CASES = {
    "stride1-bands": ((1, 8, 40, 700), (8, 8, 3, 3), 1, (1, 1, 1, 1), (1, 1), (1, 1)),
    "stride2-stem-7x7": ((1, 3, 45, 47), (16, 3, 7, 7), 1, (3, 3, 3, 3), (2, 2), (1, 1)),
    "stride2-dilated-batch2": ((2, 6, 70, 400), (6, 6, 5, 3), 1, (2, 0, 1, 3), (2, 2), (2, 1)),
    "stride3x2-grouped": ((1, 12, 31, 29), (10, 6, 3, 3), 2, (1, 1, 1, 1), (3, 2), (1, 1)),
    "stride4-11x11": ((1, 3, 47, 45), (5, 3, 11, 11), 1, (2, 2, 2, 2), (4, 4), (1, 1)),
    "pointwise-stride2": ((1, 24, 15, 17), (12, 24, 1, 1), 1, (0, 0, 0, 0), (2, 2), (1, 1)),
    "few-pixels-200-channels": ((1, 8, 7, 7), (200, 8, 3, 3), 1, (1, 1, 1, 1), (1, 1), (1, 1)),
    "im2col-96-channels": ((1, 16, 19, 21), (96, 16, 3, 3), 1, (1, 1, 1, 1), (1, 1), (1, 1)),
    "im2col-k-slices": ((1, 100, 15, 14), (96, 100, 3, 3), 1, (1, 1, 1, 1), (1, 1), (1, 1)),
    "pointwise-k-slices": ((1, 800, 20, 20), (16, 800, 1, 1), 1, (0, 0, 0, 0), (1, 1), (1, 1)),
    # pointwise with B read in place on aarch64 (32 rows: 4 NEON tiles); armv7's 4-row
    # tiles are too many, and it packs B
    "pointwise-in-place": ((1, 96, 12, 12), (32, 96, 1, 1), 1, (0, 0, 0, 0), (1, 1), (1, 1)),
    "im2col-stride5": ((1, 3, 23, 21), (4, 3, 3, 3), 1, (1, 1, 1, 1), (5, 5), (1, 1)),
    "pointwise-grouped": ((1, 24, 14, 14), (36, 6, 1, 1), 4, (0, 0, 0, 0), (1, 1), (1, 1)),
    # 1x1 at 7x7 on the transposed GEMM (its 49 rows end on a tile of one), deep enough
    # for NEON's cost too (conv_few_pixels.c's TRANSPOSE_OUT_COST)
    "pointwise-few-pixels": ((1, 384, 7, 7), (160, 384, 1, 1), 1, (0, 0, 0, 0), (1, 1),
                             (1, 1)),
    # Winograd F(2x2, 3x3) (conv_winograd.c): blocks of tiles and of output channels (the
    # last panel partial for NEON's 8 and 4 rows), odd sizes, groups, batch 2
    "winograd-odd-blocks": ((1, 256, 21, 19), (62, 256, 3, 3), 1, (1, 1, 1, 1), (1, 1), (1, 1)),
    "winograd-grouped-asym": ((2, 256, 16, 17), (128, 128, 3, 3), 2, (0, 1, 2, 0), (1, 1),
                              (1, 1)),
    # depthwise through the f32_dwconv kernel over stride-phase planes (conv_depthwise.c)
    "depthwise-3x3-stride2": ((1, 8, 30, 33), (8, 1, 3, 3), 8, (1, 1, 1, 1), (2, 2), (1, 1)),
    "depthwise-5x5-dilated": ((1, 6, 17, 19), (6, 1, 5, 5), 6, (4, 2, 3, 1), (1, 1), (2, 1)),
    "depthwise-7x7-multiplier": ((1, 4, 7, 7), (8, 1, 3, 3), 4, (1, 1, 1, 1), (1, 1), (1, 1)),
    "depthwise-stride3-batch2": ((2, 5, 20, 22), (5, 1, 3, 4), 5, (1, 0, 2, 3), (3, 3), (1, 1)),
    # 3x3 stride 2 rows of 48 outputs or more, read in place (the stride-2 run a row)
    "depthwise-3x3-s2-in-place": ((1, 4, 9, 101), (4, 1, 3, 3), 4, (1, 1, 1, 1), (2, 2),
                                  (1, 1)),
    # 3x3 "same" stride 1, read and written in place (the kernel's runs over the planes)
    "depthwise-same-in-place-multiplier": ((2, 3, 13, 28), (6, 1, 3, 3), 3, (1, 1, 1, 1),
                                           (1, 1), (1, 1)),
    # their side columns are runs down the gathered columns: of 14 (half the NEON tail's
    # accumulators), 2 and 3 (under a vector: the kernel's loop one output at a time), 37
    # (a chunk and a tail of 5)
    "depthwise-same-14x14": ((1, 5, 14, 14), (5, 1, 3, 3), 5, (1, 1, 1, 1), (1, 1), (1, 1)),
    "depthwise-same-2-rows": ((1, 3, 2, 17), (3, 1, 3, 3), 3, (1, 1, 1, 1), (1, 1), (1, 1)),
    "depthwise-same-3-rows": ((1, 3, 3, 15), (3, 1, 3, 3), 3, (1, 1, 1, 1), (1, 1), (1, 1)),
    "depthwise-same-37-rows": ((1, 2, 37, 20), (2, 1, 3, 3), 2, (1, 1, 1, 1), (1, 1), (1, 1)),
}


# convs whose output gets a skip connection: y = relu(conv(x) + r), fused into the conv
RESIDUAL = ("stride1-bands", "few-pixels-200-channels", "im2col-96-channels",
            "pointwise-stride2", "im2col-k-slices", "winograd-odd-blocks",
            "pointwise-in-place")


# convs followed by a hardswish, fused into the conv
HARD_SWISH = ("stride1-bands", "pointwise-stride2", "pointwise-in-place",
              "few-pixels-200-channels",
              "winograd-odd-blocks", "depthwise-3x3-stride2", "depthwise-3x3-s2-in-place",
              "depthwise-same-in-place-multiplier", "depthwise-7x7-multiplier")


# grouped convs followed by a channel shuffle in as many groups (Reshape, Transpose,
# Reshape: ShuffleNet's), fused into the conv, which stores its channels shuffled
SHUFFLE = ("stride3x2-grouped", "pointwise-grouped")


# 1×1 convs after a BatchNorm and relu (DenseNet's pre-activation), fused into the conv
PROLOGUE = ("pointwise-k-slices", "pointwise-in-place", "pointwise-grouped",
            "pointwise-few-pixels")


def conv_output_shape(name):
    xs, ws, _, pads, strides, dilations = CASES[name]
    return [xs[0], ws[0]] + [(xs[2 + d] + pads[d] + pads[d + 2] - (ws[2 + d] - 1) * dilations[d]
                              - 1) // strides[d] + 1 for d in range(2)]


def shuffle_nodes(name):
    n, c, h, w = conv_output_shape(name)
    groups = CASES[name][2]
    shapes = [numpy_helper.from_array(np.array(v, np.int64), f"shape{i}")
              for i, v in enumerate([[n, groups, c // groups, h, w], [n, c, h, w]])]
    nodes = [helper.make_node("Reshape", ["c", "shape0"], ["split"]),
             helper.make_node("Transpose", ["split"], ["swapped"], perm=[0, 2, 1, 3, 4]),
             helper.make_node("Reshape", ["swapped", "shape1"], ["y"])]
    return nodes, shapes


def batch_norm_relu(channels, rng):
    """BatchNormalization then Relu of x into "xr", and the BatchNorm's four constants."""
    names = ["bn_scale", "bn_bias", "bn_mean", "bn_var"]
    values = [rng.uniform(0.5, 1.5, channels), rng.standard_normal(channels) * 0.1,
              rng.standard_normal(channels) * 0.1, rng.uniform(0.5, 2.0, channels)]
    constants = [numpy_helper.from_array(v.astype(np.float32), n) for n, v in zip(names, values)]
    nodes = [helper.make_node("BatchNormalization", ["x"] + names, ["xn"]),
             helper.make_node("Relu", ["xn"], ["xr"])]
    return nodes, constants


def cook(name, directory, residual=False, hard_swish=False, shuffle=False, prologue=False):
    xs, ws, groups, pads, strides, dilations = CASES[name]
    rng = np.random.default_rng(len(name))
    w = numpy_helper.from_array(rng.standard_normal(ws).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(ws[0]).astype(np.float32), "b")
    pads = [pads[0], pads[1], pads[2], pads[3]]
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=list(ws[2:]),
                            pads=pads, strides=list(strides), dilations=list(dilations),
                            group=groups)
    nodes, inputs = [node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(xs))]
    if residual:
        node.output[0] = "c"
        nodes += [helper.make_node("Add", ["c", "r"], ["s"]), helper.make_node("Relu", ["s"], ["y"])]
        inputs.append(helper.make_tensor_value_info("r", TensorProto.FLOAT,
                                                    conv_output_shape(name)))
    if hard_swish:
        node.output[0] = "c"
        nodes.append(helper.make_node("HardSwish", ["c"], ["y"]))
    constants = [w, b]
    if prologue:
        more, bn = batch_norm_relu(xs[1], rng)
        node.input[0] = "xr"
        nodes = more + nodes
        constants += bn
    if shuffle:
        node.output[0] = "c"
        more, shapes = shuffle_nodes(name)
        nodes += more
        constants += shapes
    graph = helper.make_graph(nodes, name, inputs, [helper.make_tensor_value_info(
        "y", TensorProto.FLOAT, None)], constants)
    source = os.path.join(directory, name + ".onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), source)
    plan = os.path.join(directory, name + ".nnef.tar")
    ember.nnef().write_model_to_tar(ember.onnx().load(source).into_model(), plan)
    x = os.path.join(directory, name + ".x.npy")
    np.save(x, rng.standard_normal(xs).astype(np.float32))
    if not residual:
        return plan, [x]
    r = os.path.join(directory, name + ".r.npy")
    np.save(r, rng.standard_normal(conv_output_shape(name)).astype(np.float32))
    return plan, [x, r]


@pytest.mark.parametrize("arch", ["aarch64", "armv7"])
def test_conv_paths_match_the_host_under_qemu(arch, tmp_path):
    cross.require_cross(arch)
    cross.cross_build(arch)
    failures = []
    for name in sorted(CASES):
        plan, inputs = cook(name, str(tmp_path))
        # float sums in another order on the target
        problem = cross.compare_plan(arch, plan, inputs, 1, str(tmp_path), name, rtol=1e-4,
                                     atol=1e-4)
        if problem:
            failures.append(f"{name}: {problem}")
    for names, fused in ((RESIDUAL, "residual"), (HARD_SWISH, "hard_swish"),
                         (SHUFFLE, "shuffle"), (PROLOGUE, "prologue")):
        for name in names:
            plan, inputs = cook(name, str(tmp_path), **{fused: True})
            problem = cross.compare_plan(arch, plan, inputs, 1, str(tmp_path),
                                         f"{name}-{fused}", rtol=1e-4, atol=1e-4)
            if problem:
                failures.append(f"{name} with a fused {fused}: {problem}")
    assert not failures, "\n".join(failures)
