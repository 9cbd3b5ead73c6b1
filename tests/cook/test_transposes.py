"""The transposes pass: op lists before and after declutter, outputs unchanged.

Each case is a small ONNX graph; "before" is the typed model (no declutter), "after" the
decluttered one, and both must match onnxruntime.
"""
from cook_testing import assert_close, make_model, node, rand, run_ort
from ember.cook import onnx as cook_onnx


def cook(model, feeds):
    """(typed op list, decluttered op list, decluttered model), outputs checked."""
    inputs = [feeds[i.name] for i in model.graph.input if i.name in feeds]
    expected = run_ort(model, feeds)
    typed = cook_onnx.load(model).into_typed()
    decluttered = cook_onnx.load(model).into_model()
    assert_close(typed.run_reference(inputs), expected, what="typed")
    assert_close(decluttered.run_reference(inputs), expected, what="decluttered")
    return _ops(typed), _ops(decluttered), decluttered


def _ops(model):
    return [n.op.name for n in model.nodes() if n.op.name not in ("Source", "Const")]


NHWC = [0, 2, 3, 1]
NCHW = [0, 3, 1, 2]


def test_inverse_around_relu_cancels():
    x = rand(1, 3, 4, 5)
    model = make_model([node("Transpose", ["x"], ["a"], perm=NHWC),
                        node("Relu", ["a"], ["b"]),
                        node("Transpose", ["b"], ["y"], perm=NCHW)], {"x": x}, ["y"])
    before, after, _ = cook(model, {"x": x})
    assert before == ["Transpose", "Relu", "Transpose"]
    assert after == ["Relu"]


def test_inverse_around_add_constant_permutes_it():
    x, c = rand(1, 3, 4, 5), rand(5, 3, seed=1)          # broadcast over [1, 4, 5, 3]
    model = make_model([node("Transpose", ["x"], ["a"], perm=NHWC),
                        node("Add", ["a", "c"], ["b"]),
                        node("Sigmoid", ["b"], ["d"]),
                        node("Transpose", ["d"], ["y"], perm=NCHW)], {"x": x}, ["y"],
                       {"c": c})
    before, after, model = cook(model, {"x": x})
    assert before == ["Transpose", "Add", "Sigmoid", "Transpose"]
    assert after == ["Add", "Sigmoid"]
    add = [n for n in model.nodes() if n.op.name == "Add"][0]
    assert model.graph.fact(add.inputs[1]).shape == (1, 3, 1, 5)


def test_chain_merges():
    x = rand(2, 3, 4)
    model = make_model([node("Transpose", ["x"], ["a"], perm=[1, 0, 2]),
                        node("Transpose", ["a"], ["y"], perm=[2, 0, 1])], {"x": x}, ["y"])
    before, after, _ = cook(model, {"x": x})
    assert before == ["Transpose", "Transpose"] and after == ["Transpose"]


def test_two_transposed_operands_become_one_transpose():
    a, b = rand(1, 3, 4, 5), rand(1, 3, 4, 5, seed=1)
    model = make_model([node("Transpose", ["a"], ["ta"], perm=NHWC),
                        node("Transpose", ["b"], ["tb"], perm=NHWC),
                        node("Mul", ["ta", "tb"], ["y"])], {"a": a, "b": b}, ["y"])
    before, after, _ = cook(model, {"a": a, "b": b})
    assert before.count("Transpose") == 2 and after == ["Mul", "Transpose"]


def test_keras_style_blocks():
    """NCHW input, NHWC body (relu, bias add, reduce over channels), NCHW output."""
    x, bias = rand(1, 8, 6, 6), rand(8, seed=2)
    model = make_model([node("Transpose", ["x"], ["a"], perm=NHWC),
                        node("Add", ["a", "bias"], ["b"]),
                        node("Relu", ["b"], ["c"]),
                        node("Transpose", ["c"], ["d"], perm=NCHW),
                        node("Transpose", ["d"], ["e"], perm=NHWC),
                        node("ReduceMean", ["e"], ["f"], axes=[3], keepdims=1),
                        node("Transpose", ["f"], ["y"], perm=NCHW)], {"x": x}, ["y"],
                       {"bias": bias})
    before, after, _ = cook(model, {"x": x})
    assert before.count("Transpose") == 4 and "Transpose" not in after


def test_reduce_does_not_move_without_a_transpose_to_meet():
    x = rand(1, 3, 4, 5)
    model = make_model([node("Transpose", ["x"], ["a"], perm=NHWC),
                        node("ReduceMean", ["a"], ["y"], axes=[3], keepdims=1)],
                       {"x": x}, ["y"])
    before, after, _ = cook(model, {"x": x})
    assert after == before == ["Transpose", "Reduce<mean>"]


def test_softmax_moves_to_meet_a_transpose():
    x = rand(2, 3, 4)
    model = make_model([node("Transpose", ["x"], ["a"], perm=[0, 2, 1]),
                        node("Softmax", ["a"], ["b"], axis=1),
                        node("Transpose", ["b"], ["y"], perm=[0, 2, 1])],
                       {"x": x}, ["y"], opset=11)
    _, after, _ = cook(model, {"x": x})
    assert "Transpose" not in after


def test_two_consumers_do_not_push():
    """The transposed tensor is read by relu and by a second output: moving it below
    relu would leave it for the other reader and add one."""
    x = rand(1, 3, 4, 5)
    model = make_model([node("Transpose", ["x"], ["a"], perm=NHWC),
                        node("Relu", ["a"], ["b"]),
                        node("Transpose", ["b"], ["y"], perm=NCHW),
                        node("Exp", ["a"], ["z"])], {"x": x}, ["y", "z"])
    before, after, _ = cook(model, {"x": x})
    assert after.count("Transpose") == before.count("Transpose") == 2


def test_shared_big_constant_is_not_permuted():
    x, c = rand(1, 64, 32, 16), rand(32, 16, 64, seed=3)   # 128 KiB, read twice
    model = make_model([node("Transpose", ["x"], ["a"], perm=NHWC),
                        node("Add", ["a", "c"], ["b"]),
                        node("Transpose", ["b"], ["y"], perm=NCHW),
                        node("Transpose", ["c"], ["ct"], perm=[2, 0, 1]),
                        node("Mul", ["x", "ct"], ["z"])],
                       {"x": x}, ["y", "z"], {"c": c})
    _, after, model = cook(model, {"x": x})
    assert after.count("Transpose") >= 2
    consts = [n for n in model.nodes() if n.op.name == "Const"]
    assert sum(n.op.value.nbytes for n in consts) <= c.nbytes


def test_attention_key_transpose_becomes_a_matmul_flag():
    """torch attention: heads split by transposes (which mix the sequence axis with the
    heads, so they stay), K^T as a second transpose: that one becomes transpose_b."""
    b, s, h, d = 1, 5, 2, 4
    q, k, v = (rand(b, s, h, d, seed=i) for i in range(3))
    model = make_model([node("Transpose", ["q"], ["tq"], perm=[0, 2, 1, 3]),
                        node("Transpose", ["k"], ["tk"], perm=[0, 2, 1, 3]),
                        node("Transpose", ["tk"], ["kt"], perm=[0, 1, 3, 2]),
                        node("Transpose", ["v"], ["tv"], perm=[0, 2, 1, 3]),
                        node("MatMul", ["tq", "kt"], ["scores"]),
                        node("Softmax", ["scores"], ["p"], axis=-1),
                        node("MatMul", ["p", "tv"], ["o"]),
                        node("Transpose", ["o"], ["y"], perm=[0, 2, 1, 3])],
                       {"q": q, "k": k, "v": v}, ["y"])
    before, after, model = cook(model, {"q": q, "k": k, "v": v})
    assert before.count("Transpose") == 5 and after.count("Transpose") == 4
    scores = [n for n in model.nodes() if n.op.name == "MatMul"][0]
    assert scores.op.transpose_b


def test_matmul_with_weights_after_batch_transpose():
    x, w = rand(2, 3, 4, 5), rand(5, 6, seed=4)
    model = make_model([node("Transpose", ["x"], ["a"], perm=[1, 0, 2, 3]),
                        node("MatMul", ["a", "w"], ["b"]),
                        node("Transpose", ["b"], ["y"], perm=[1, 0, 2, 3])],
                       {"x": x}, ["y"], {"w": w})
    _, after, _ = cook(model, {"x": x})
    assert after == ["MatMul"]


def test_plan_round_trip():
    from ember.cook import nnef as cook_nnef
    x, c = rand(1, 3, 4, 5), rand(3, seed=1)
    onnx_model = make_model([node("Transpose", ["x"], ["a"], perm=NHWC),
                             node("Mul", ["a", "c"], ["b"]),
                             node("Transpose", ["b"], ["y"], perm=NCHW)], {"x": x}, ["y"],
                            {"c": c})
    _, after, model = cook(onnx_model, {"x": x})
    assert after == ["Mul"]
    reread = cook_nnef.load(cook_nnef.to_tar_bytes(model))
    assert_close(reread.run_reference([x]), run_ort(onnx_model, {"x": x}))



def test_tf_style_convs_keep_only_the_boundary_transposes():
    """tf2onnx: NHWC model, each conv wrapped in NHWC->NCHW / NCHW->NHWC, bias add and
    relu in NHWC between: the inner pairs cancel and the bias folds into the conv."""
    x = rand(1, 6, 6, 3)
    w1, w2, bias = rand(4, 3, 3, 3, seed=1), rand(5, 4, 1, 1, seed=2), rand(4, seed=3)
    model = make_model([node("Transpose", ["x"], ["a"], perm=NCHW),
                        node("Conv", ["a", "w1"], ["b"], pads=[1, 1, 1, 1]),
                        node("Transpose", ["b"], ["c"], perm=NHWC),
                        node("Add", ["c", "bias"], ["d"]),
                        node("Relu", ["d"], ["e"]),
                        node("Transpose", ["e"], ["f"], perm=NCHW),
                        node("Conv", ["f", "w2"], ["g"]),
                        node("Transpose", ["g"], ["y"], perm=NHWC)], {"x": x}, ["y"],
                       {"w1": w1, "w2": w2, "bias": bias})
    before, after, _ = cook(model, {"x": x})
    assert before.count("Transpose") == 4
    assert after == ["Transpose", "Conv", "Relu", "Conv", "Transpose"]
