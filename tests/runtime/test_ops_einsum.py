"""Einsum through the C runtime (lowered to transposes, reshapes, diagonal slices, sums
and matmuls) against numpy's einsum: f32 through matmul, f64 and i64 by multiply and
sum, diagonals, ellipses, implicit outputs, three operands."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import ember

RNG = np.random.default_rng(37)
TYPES = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
         np.int64: TensorProto.INT64}
CASES = [
    ("ij->ji", [(3, 4)]), ("ij->i", [(3, 4)]), ("ii->i", [(4, 4)]), ("ii", [(5, 5)]),
    ("...ii->...i", [(2, 3, 3)]), ("i,i", [(6,), (6,)]), ("->", [()]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("ij,jk", [(3, 4), (4, 2)]),
    ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]), ("i,j->ij", [(3,), (4,)]),
    ("ijk,kj->i", [(2, 3, 4), (4, 3)]), ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 2)]), ("iij,jk->ik", [(3, 3, 2), (2, 4)]),
]


@pytest.mark.parametrize("dtype", list(TYPES))
@pytest.mark.parametrize("equation, shapes", CASES)
def test_einsum_matches_numpy(equation, shapes, dtype):
    names = [f"x{i}" for i in range(len(shapes))]
    graph = helper.make_graph(
        [helper.make_node("Einsum", names, ["y"], equation=equation)], "g",
        [helper.make_tensor_value_info(n, TYPES[dtype], list(s)) for n, s in zip(names, shapes)],
        [helper.make_tensor_value_info("y", TYPES[dtype], None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    feeds = [(RNG.standard_normal(s) * 3).astype(dtype) for s in shapes]
    got = ember.onnx().load(model).into_model().into_runnable().run(feeds)[0]
    want = np.einsum(equation, *feeds)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
