"""The ONNX importer, op by op: run_reference against onnxruntime on small random graphs.

Each case also goes through the plan writer and reader (check_onnx), so every op's NNEF
form is exercised too.
"""
import numpy as np
import pytest

from cook_testing import check_onnx, make_model, node, rand


def single(op_type, inputs, attrs=None, initializers=None, opset=13, outputs=("y",)):
    """A one-node model; inputs {name: array}; initializers are constants."""
    names = list(inputs) + list(initializers or {})
    model = make_model([node(op_type, names, list(outputs), **(attrs or {}))], inputs,
                       list(outputs), initializers, opset)
    return model, inputs


CONV_CASES = [
    dict(x=(1, 3, 9, 9), w=(4, 3, 3, 3), attrs={}),
    dict(x=(2, 4, 10, 8), w=(6, 2, 3, 3), attrs=dict(group=2, strides=[2, 1], pads=[1, 0, 2, 1])),
    dict(x=(1, 6, 11, 11), w=(6, 1, 3, 3), attrs=dict(group=6, dilations=[2, 2],
                                                      pads=[2, 2, 2, 2])),
    dict(x=(1, 3, 10, 9), w=(5, 3, 4, 3), attrs=dict(auto_pad="SAME_UPPER", strides=[2, 2])),
    dict(x=(1, 3, 10, 9), w=(5, 3, 4, 2), attrs=dict(auto_pad="SAME_LOWER", strides=[3, 2])),
    dict(x=(1, 3, 10, 9), w=(5, 3, 3, 3), attrs=dict(auto_pad="VALID", strides=[2, 2])),
    dict(x=(1, 3, 10, 9), w=(5, 3, 1, 1), attrs=dict(auto_pad="NOTSET")),
    dict(x=(2, 4, 13), w=(3, 4, 5), attrs=dict(strides=[2], pads=[1, 2])),          # 1-D
    dict(x=(1, 2, 5, 6, 7), w=(3, 2, 2, 3, 2), attrs=dict(pads=[1, 0, 1, 0, 1, 1])),  # 3-D
]


@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: f"{c['x']}-{c['w']}-{c['attrs']}")
@pytest.mark.parametrize("bias", [False, True])
def test_conv(case, bias):
    inits = {"w": rand(*case["w"], seed=1)}
    if bias:
        inits["b"] = rand(case["w"][0], seed=2)
    check_onnx(*single("Conv", {"x": rand(*case["x"])}, case["attrs"], inits))


def test_conv_with_runtime_weights():
    x, w = rand(1, 3, 6, 6), rand(2, 3, 3, 3, seed=1)
    model = make_model([node("Conv", ["x", "w"], ["y"])], {"x": x, "w": w}, ["y"])
    check_onnx(model, {"x": x, "w": w})


POOL_CASES = [
    dict(kernel_shape=[3, 3], strides=[2, 2]),
    dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    dict(kernel_shape=[2, 3], strides=[2, 2], pads=[0, 1, 1, 0], ceil_mode=1),
    dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
    dict(kernel_shape=[3, 2], auto_pad="SAME_UPPER", strides=[2, 2]),
    dict(kernel_shape=[3, 3], auto_pad="SAME_LOWER", strides=[2, 1]),
    dict(kernel_shape=[2, 2], auto_pad="VALID"),
]


@pytest.mark.parametrize("attrs", POOL_CASES, ids=str)
def test_max_pool(attrs):
    check_onnx(*single("MaxPool", {"x": rand(2, 3, 10, 11)}, attrs, opset=12))


def test_max_pool_dilations():
    check_onnx(*single("MaxPool", {"x": rand(1, 2, 9, 9)},
                       dict(kernel_shape=[2, 2], dilations=[2, 2], pads=[1, 1, 1, 1]), opset=12))


@pytest.mark.parametrize("attrs", POOL_CASES + [
    dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1),
    dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 2, 0, 1], count_include_pad=1),
], ids=str)
def test_average_pool(attrs):
    check_onnx(*single("AveragePool", {"x": rand(2, 3, 10, 11)}, attrs, opset=12))


@pytest.mark.parametrize("op_type", ["GlobalAveragePool", "GlobalMaxPool"])
def test_global_pool(op_type):
    check_onnx(*single(op_type, {"x": rand(2, 5, 4, 3)}))


@pytest.mark.parametrize("size", [1, 3, 5])
def test_lrn(size):
    x = rand(1, 8, 4, 4) * 10
    check_onnx(*single("LRN", {"x": x}, dict(size=size, alpha=2e-3, beta=0.6, bias=1.5)))


def test_batch_normalization():
    rng = np.random.default_rng(3)
    inits = {"s": rng.uniform(0.5, 2, 4).astype(np.float32), "b": rand(4, seed=4),
             "m": rand(4, seed=5), "v": rng.uniform(0.5, 2, 4).astype(np.float32)}
    check_onnx(*single("BatchNormalization", {"x": rand(2, 4, 3, 5)}, dict(epsilon=1e-3),
                       inits, opset=9))


@pytest.mark.parametrize("op_type", ["Relu", "Sigmoid", "Tanh", "Exp", "Abs", "Neg"])
def test_unary(op_type):
    check_onnx(*single(op_type, {"x": rand(3, 4, 5)}))


def test_unary_needing_positive_input():
    for op_type in ("Sqrt", "Log", "Reciprocal"):
        check_onnx(*single(op_type, {"x": np.abs(rand(3, 4)) + 0.5}))


BROADCASTS = [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((2, 1, 4), (3, 1)), ((1,), (2, 3)),
              ((), (2, 3)), ((5, 1, 1), (1, 4, 1))]


@pytest.mark.parametrize("op_type", ["Add", "Sub", "Mul", "Div"])
@pytest.mark.parametrize("shapes", BROADCASTS, ids=str)
@pytest.mark.parametrize("constant", [False, True])
def test_binary(op_type, shapes, constant):
    a = rand(*shapes[0], seed=1)
    b = rand(*shapes[1], seed=2) + (3.0 if op_type == "Div" else 0.0)
    if constant:
        check_onnx(*single(op_type, {"a": a}, initializers={"b": b.astype(np.float32)}))
    else:
        check_onnx(*single(op_type, {"a": a, "b": b.astype(np.float32)}))


def test_binary_constant_on_the_left():
    model = make_model([node("Sub", ["c", "x"], ["y"]), node("Div", ["c", "y"], ["z"])],
                       {"x": rand(2, 3)}, ["z"], {"c": np.array([1.5, 2, 3], np.float32)})
    check_onnx(model, {"x": rand(2, 3)})


@pytest.mark.parametrize("count", [1, 2, 4])
def test_sum(count):
    inputs = {f"x{i}": rand(2, 3, seed=i) for i in range(count)}
    check_onnx(*single("Sum", inputs))


def test_max_min_mean():
    for op_type in ("Max", "Min", "Mean"):
        check_onnx(*single(op_type, {"a": rand(2, 3), "b": rand(3, seed=1), "c": rand(2, 1, seed=2)}))


@pytest.mark.parametrize("bounds", [(0.0, 6.0), (-1.0, None), (None, 0.5), (None, None),
                                    (0.0, None)], ids=str)
def test_clip_opset11(bounds):
    inits, names = {}, ["x"]
    for name, value in zip(("lo", "hi"), bounds):
        if value is not None:
            inits[name] = np.array(value, np.float32)
        names.append(name if value is not None else "")
    model = make_model([node("Clip", names, ["y"])], {"x": rand(3, 4) * 4}, ["y"], inits)
    check_onnx(model, {"x": rand(3, 4) * 4})


def test_clip_opset6_attributes():
    check_onnx(*single("Clip", {"x": rand(3, 4) * 4}, dict(min=-1.0, max=2.0), opset=6))


def test_clip_runtime_bounds():
    x, lo, hi = rand(3, 4) * 4, np.array(-0.5, np.float32), np.array(1.0, np.float32)
    model = make_model([node("Clip", ["x", "lo", "hi"], ["y"])],
                       {"x": x, "lo": lo, "hi": hi}, ["y"])
    check_onnx(model, {"x": x, "lo": lo, "hi": hi})


MATMUL_SHAPES = [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)),
                 ((4,), (4, 5)), ((3, 4), (4,)), ((2, 1, 3, 4), (5, 4, 2))]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul(shapes):
    check_onnx(*single("MatMul", {"a": rand(*shapes[0]), "b": rand(*shapes[1], seed=1)}))


def test_matmul_constant_weights():
    check_onnx(*single("MatMul", {"a": rand(2, 3, 4)}, initializers={"b": rand(4, 6, seed=1)}))


GEMM_CASES = [dict(), dict(transA=1), dict(transB=1), dict(alpha=0.5, beta=2.0),
              dict(transA=1, transB=1, alpha=1.5, beta=0.0)]


@pytest.mark.parametrize("attrs", GEMM_CASES, ids=str)
@pytest.mark.parametrize("constant", [True, False])
@pytest.mark.parametrize("c_shape", [(5,), (3, 5), (1, 1), None], ids=str)
def test_gemm(attrs, constant, c_shape):
    a = rand(4, 3) if attrs.get("transA") else rand(3, 4)
    b = rand(5, 4, seed=1) if attrs.get("transB") else rand(4, 5, seed=1)
    inputs, inits = {"a": a}, {}
    (inits if constant else inputs)["b"] = b
    names = ["a", "b"]
    if c_shape is not None:
        inits["c"] = rand(*c_shape, seed=2)
        names.append("c")
    model = make_model([node("Gemm", names, ["y"], **attrs)], inputs, ["y"], inits)
    check_onnx(model, inputs)


@pytest.mark.parametrize("shape,target,attrs", [
    ((2, 3, 4), [6, 4], {}), ((2, 3, 4), [0, -1], {}), ((2, 3, 4), [-1], {}),
    ((2, 3, 4), [4, 0, 2], {}), ((2, 0, 4), [0, 4], {"allowzero": 1}),
], ids=str)
def test_reshape(shape, target, attrs):
    x = rand(*shape)
    model = make_model([node("Reshape", ["x", "s"], ["y"], **attrs)], {"x": x}, ["y"],
                       {"s": np.array(target, np.int64)}, opset=14)
    check_onnx(model, {"x": x}, round_trip=0 not in shape)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, 3])
def test_flatten(axis):
    check_onnx(*single("Flatten", {"x": rand(2, 3, 4)}, dict(axis=axis)))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat(axis):
    shapes = [[2, 3, 4], [2, 3, 4], [2, 3, 4]]
    for i, shape in enumerate(shapes):
        shape[axis] += i
    inputs = {f"x{i}": rand(*s, seed=i) for i, s in enumerate(shapes)}
    check_onnx(*single("Concat", inputs, dict(axis=axis)))


def test_concat_with_constant():
    check_onnx(*single("Concat", {"x": rand(2, 3)}, dict(axis=0),
                       initializers={"c": rand(1, 3, seed=1)}))


@pytest.mark.parametrize("perm", [None, [0, 2, 1, 3], [3, 1, 0, 2]], ids=str)
def test_transpose(perm):
    check_onnx(*single("Transpose", {"x": rand(2, 3, 4, 5)}, {} if perm is None else
                       dict(perm=perm)))


@pytest.mark.parametrize("opset", [11, 13])
def test_unsqueeze_and_squeeze(opset):
    x = rand(3, 1, 4)
    if opset < 13:
        nodes = [node("Unsqueeze", ["x"], ["u"], axes=[0, -1]),
                 node("Squeeze", ["u"], ["y"], axes=[0, 2])]
        inits = {}
    else:
        nodes = [node("Unsqueeze", ["x", "ua"], ["u"]), node("Squeeze", ["u", "sa"], ["y"])]
        inits = {"ua": np.array([0, -1], np.int64), "sa": np.array([0, 2], np.int64)}
    model = make_model(nodes, {"x": x}, ["y", "u"], inits, opset)
    check_onnx(model, {"x": x})


def test_squeeze_all_ones():
    check_onnx(*single("Squeeze", {"x": rand(1, 3, 1, 2)}))


@pytest.mark.parametrize("opset", [9, 13])
def test_softmax(opset):
    for axis in (0, 1, 2, -1):
        check_onnx(*single("Softmax", {"x": rand(2, 3, 4) * 3}, dict(axis=axis), opset=opset))


def test_softmax_default_axis():
    check_onnx(*single("Softmax", {"x": rand(2, 3, 4)}, opset=9))
    check_onnx(*single("Softmax", {"x": rand(2, 3, 4)}, opset=13))


def test_dropout_and_identity_are_removed():
    x = rand(2, 3)
    model = make_model([node("Dropout", ["x"], ["d"]), node("Identity", ["d"], ["i"]),
                        node("Relu", ["i"], ["y"])], {"x": x}, ["y"])
    typed = check_onnx(model, {"x": x})
    assert typed.op_types() == ["Source", "Relu"]


def test_slice():
    x = rand(5, 6, 7)
    inits = {"starts": np.array([1, -5, 0], np.int64), "ends": np.array([4, 100, -1], np.int64),
             "axes": np.array([0, 1, 2], np.int64), "steps": np.array([1, 2, 3], np.int64)}
    model = make_model([node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"])],
                       {"x": x}, ["y"], inits)
    check_onnx(model, {"x": x})


def test_shape_subgraph_folds_into_constants():
    # reshape(x, concat(shape(x)[0:1], [-1])) plus a ConstantOfShape sized from a shape
    from onnx import numpy_helper
    x = rand(2, 3, 4)
    nodes = [node("Shape", ["x"], ["s"]), node("Gather", ["s", "zero"], ["n"], axis=0),
             node("Unsqueeze", ["n", "axes"], ["n1"]),
             node("Concat", ["n1", "minus_one"], ["target"], axis=0),
             node("Reshape", ["x", "target"], ["r"]),
             node("Shape", ["r"], ["s2"]),
             node("Slice", ["s2", "one", "two"], ["d1"]),
             node("ConstantOfShape", ["d1"], ["ones"],
                  value=numpy_helper.from_array(np.array([1.0], np.float32))),
             node("Constant", [], ["k"], value_float=2.0),
             node("Mul", ["ones", "k"], ["twos"]),
             node("Add", ["r", "twos"], ["y"])]
    inits = {"zero": np.array(0, np.int64), "axes": np.array([0], np.int64),
             "minus_one": np.array([-1], np.int64), "one": np.array([1], np.int64),
             "two": np.array([2], np.int64)}
    typed = check_onnx(make_model(nodes, {"x": x}, ["y"], inits), {"x": x})
    assert typed.op_types() == ["Source", "Reshape", "Const", "Add"]
