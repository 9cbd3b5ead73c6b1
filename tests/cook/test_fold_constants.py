"""Constant folding within a memory budget: folded results never store a weight twice
or a broadcast in full; outputs unchanged against onnxruntime (and the plan round trip).
"""
import io
import tarfile

import numpy as np

from cook_testing import check_onnx, make_model, node, rand
from ember.cook import nnef as cook_nnef
from ember.cook import onnx as cook_onnx
from ember.cook.nnef.writer import plan_files
from ember.cook.passes.fold_constants import FOLD_ALLOWANCE


def const_bytes(model):
    return sum(n.op.value.nbytes for n in model.nodes() if n.op.name == "Const")


def plan_variables(model):
    """{name: bytes} of the .dat files of the written plan."""
    with tarfile.open(fileobj=io.BytesIO(cook_nnef.to_tar_bytes(model))) as tar:
        return {m.name: m.size for m in tar.getmembers() if m.name.endswith(".dat")}


def ops(model):
    return [n.op.name for n in model.nodes() if n.op.name not in ("Source", "Const")]


BIG = (256, 128)          # 128 KiB of f32: above FOLD_ALLOWANCE
assert rand(*BIG).nbytes > FOLD_ALLOWANCE


def test_shared_weight_direct_and_transposed_matmul_is_stored_once():
    x, x2, w = rand(2, 128), rand(2, 256, seed=1), rand(*BIG, seed=2)
    model = make_model([node("Transpose", ["w"], ["wt"], perm=[1, 0]),
                        node("MatMul", ["x2", "w"], ["y"]),
                        node("MatMul", ["x", "wt"], ["z"])],
                       {"x": x, "x2": x2}, ["y", "z"], {"w": w})
    typed = cook_onnx.load(model).into_typed()
    assert sorted(ops(typed)) == ["MatMul", "MatMul", "Transpose"]
    decluttered = check_onnx(model, {"x": x, "x2": x2})
    # the transpose became the second matmul's flag: one copy of w
    assert ops(decluttered) == ["MatMul", "MatMul"]
    assert const_bytes(decluttered) == w.nbytes
    assert sum(plan_variables(decluttered).values()) < 2 * w.nbytes


def test_shared_weight_through_transpose_stays_a_transpose_in_the_plan():
    x, w = rand(256, 128), rand(*BIG, seed=2)
    model = make_model([node("Transpose", ["w"], ["wt"], perm=[1, 0]),
                        node("Add", ["x", "w"], ["y"]),
                        node("Relu", ["wt"], ["z"])],
                       {"x": x}, ["y", "z"], {"w": w})
    decluttered = check_onnx(model, {"x": x})
    assert sorted(ops(decluttered)) == ["Add", "Relu", "Transpose"]
    assert const_bytes(decluttered) == w.nbytes
    assert "transpose(" in plan_files(decluttered)["graph.nnef"].decode()
    assert len(plan_variables(decluttered)) == 1


def test_weight_used_only_through_transpose_is_folded():
    x, w = rand(2, 256), rand(*BIG, seed=2)
    model = make_model([node("Transpose", ["w"], ["wt"], perm=[1, 0]),
                        node("Add", ["x", "x"], ["x2"]),
                        node("Gemm", ["x2", "wt"], ["y"], transB=1)],
                       {"x": x}, ["y"], {"w": w})
    decluttered = check_onnx(model, {"x": x})
    assert ops(decluttered) == ["Add", "MatMul"]
    consts = [n for n in decluttered.nodes() if n.op.name == "Const"]
    assert len(consts) == 1 and consts[0].op.value.shape == (256, 128)


def test_shape_subgraph_still_folds():
    x = rand(2, 3, 4)
    model = make_model([node("Shape", ["x"], ["s"]),
                        node("Gather", ["s", "i"], ["d"], axis=0),
                        node("Concat", ["d", "minus1"], ["shape"], axis=0),
                        node("Reshape", ["x", "shape"], ["y"])],
                       {"x": x}, ["y"],
                       {"i": np.array([0], np.int64), "minus1": np.array([-1], np.int64)})
    decluttered = check_onnx(model, {"x": x})
    assert ops(decluttered) == ["Reshape"]


def test_large_expand_of_small_constant_is_not_materialised():
    x, c = rand(512, 64), rand(1, 64, seed=3)
    model = make_model([node("Expand", ["c", "shape"], ["e"]),
                        node("Add", ["x", "e"], ["y"])],
                       {"x": x}, ["y"], {"c": c, "shape": np.array([512, 64], np.int64)})
    decluttered = check_onnx(model, {"x": x})
    assert ops(decluttered) == ["Add"]
    assert const_bytes(decluttered) == c.nbytes


def test_small_expand_folds():
    x, c = rand(4, 8), rand(1, 8, seed=3)
    model = make_model([node("Expand", ["c", "shape"], ["e"]),
                        node("Concat", ["x", "e"], ["y"], axis=0)],
                       {"x": x}, ["y"], {"c": c, "shape": np.array([4, 8], np.int64)})
    decluttered = check_onnx(model, {"x": x})
    assert ops(decluttered) == ["Concat"]


def test_dequantize_of_constant_stays():
    # Add, not MatMul: onnxruntime would fuse the latter into an integer matmul that
    # also quantizes x, which no longer matches a float reference.
    x = rand(4, 4)
    w = np.arange(-8, 8, dtype=np.int8).reshape(4, 4)
    model = make_model([node("DequantizeLinear", ["w", "scale", "zero"], ["wf"]),
                        node("Add", ["x", "wf"], ["y"])],
                       {"x": x}, ["y"], {"w": w, "scale": np.array(0.5, np.float32),
                                          "zero": np.array(1, np.int8)})
    decluttered = check_onnx(model, {"x": x}, round_trip=False)   # no plan form yet
    assert "Dequantize" in ops(decluttered)


def test_cook_only_op_over_budget_still_folds():
    """Einsum has no plan form: left unfolded the model could not be written at all."""
    x, w = rand(*BIG), rand(*BIG, seed=2)
    model = make_model([node("Add", ["x", "w"], ["y"]),
                        node("Einsum", ["w", "w"], ["z"], equation="ij,ij->ij")],
                       {"x": x}, ["y", "z"], {"w": w})
    decluttered = check_onnx(model, {"x": x})
    assert ops(decluttered) == ["Add"]
    assert const_bytes(decluttered) == 2 * w.nbytes


def test_op_with_a_plan_form_over_budget_runs_at_run_time():
    """Tile has a plan form: over the budget it stays an op, the model stays small."""
    x, w = rand(*BIG), rand(*BIG, seed=2)
    model = make_model([node("Add", ["x", "w"], ["y"]),
                        node("Tile", ["w", "repeats"], ["z"])],
                       {"x": x}, ["y", "z"], {"w": w, "repeats": np.array([2, 1], np.int64)})
    decluttered = check_onnx(model, {"x": x})
    assert ops(decluttered) == ["Add", "Tile"]
    assert const_bytes(decluttered) == w.nbytes
