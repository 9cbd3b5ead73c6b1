"""Quantized ops through the product path: ONNX -> cook -> plan -> C runtime.

Each case is a tiny ONNX model (onnx.helper) cooked to a plan and run by the C runtime.
The C result must equal, bit for bit, the cook's numpy reference (the semantics of
docs/plan-format.md), the reference again after a plan round trip (the Python reader),
and ONNX's own reference evaluator (integers exactly; onnxruntime where it agrees).
"""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

pytest.importorskip("ember.runtime")

from ember.cook import nnef as cook_nnef  # noqa: E402
from ember.cook import onnx as cook_onnx  # noqa: E402
from ember.runtime import EmberError  # noqa: E402

RNG = np.random.default_rng(20261124)


def make_model(nodes, inputs, outputs, initializers=None, opset=21):
    infos = [helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(v.dtype),
                                           list(v.shape)) for name, v in inputs.items()]
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in (initializers or {}).items()]
    graph = helper.make_graph(nodes, "quant", infos,
                              [helper.make_empty_tensor_value_info(o) for o in outputs], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model


def bits(array):
    """A view that compares floats bit for bit (NaNs included)."""
    array = np.ascontiguousarray(array)
    if array.dtype.kind == "f":
        return array.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[array.dtype.itemsize])
    return array


def assert_same(got, expected, what):
    assert len(got) == len(expected), what
    for index, (g, e) in enumerate(zip(got, expected)):
        g, e = np.asarray(g), np.asarray(e)
        assert g.dtype == e.dtype, f"{what} output {index}: {g.dtype} != {e.dtype}"
        assert g.shape == e.shape, f"{what} output {index}: {g.shape} != {e.shape}"
        np.testing.assert_array_equal(bits(g), bits(e), err_msg=f"{what} output {index}")


def run_c(model, inputs, onnx_check=True):
    """C outputs, checked against the cook reference, its plan round trip and (when
    `onnx_check`) ONNX's reference evaluator."""
    typed = cook_onnx.load(model).into_model()
    plan = cook_nnef.to_tar_bytes(typed)
    got = typed.into_runnable().run(list(inputs.values()))
    assert_same(got, typed.run_reference(list(inputs.values())), "reference")
    reread = cook_nnef.load(plan)
    assert_same(got, reread.run_reference(list(inputs.values())), "plan round trip")
    if onnx_check:
        with np.errstate(all="ignore"):
            expected = ReferenceEvaluator(model).run(None, inputs)
        assert_same(got, expected, "onnx reference")
    return got, plan


def plan_text(plan):
    import io
    import tarfile
    with tarfile.open(fileobj=io.BytesIO(plan)) as tar:
        return tar.extractfile("graph.nnef").read().decode()


# ---------------------------------------------------------------- QuantizeLinear

def _ties(shape, scale):
    """Values whose quotient by `scale` is often exactly k + 0.5 (round half to even)."""
    halves = RNG.integers(-600, 600, size=shape) + 0.5
    return (halves * scale).astype(np.float32)


@pytest.mark.parametrize("to", [np.uint8, np.int8, np.uint16, np.int16])
@pytest.mark.parametrize("scale_as", ["initializer", "input"])
def test_quantize_per_tensor(to, scale_as):
    x = _ties((3, 5, 7), 0.25)
    x[0, 0, :2] = [1e6, -1e6]
    scale, zero = np.array(0.25, np.float32), np.array(3 if to != np.int8 else -5, to)
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])
    if scale_as == "input":
        model = make_model([node], {"x": x, "s": scale, "z": zero}, ["y"])
        inputs = {"x": x, "s": scale, "z": zero}
    else:
        model = make_model([node], {"x": x}, ["y"], {"s": scale, "z": zero})
        inputs = {"x": x}
    got, _ = run_c(model, inputs)
    assert got[0].dtype == to


def test_quantize_nan_gives_the_zero_point_and_infinities_saturate():
    x = np.array([np.nan, 1.0, -np.nan, np.inf, -np.inf], np.float32)
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])
    model = make_model([node], {"x": x}, ["y"], {"s": np.float32(0.5), "z": np.uint8(7)})
    got, _ = run_c(model, {"x": x}, onnx_check=False)
    np.testing.assert_array_equal(got[0], [7, 9, 7, 255, 0])


@pytest.mark.parametrize("axis", [1, -1, 0])
def test_quantize_per_axis(axis):
    x = RNG.normal(size=(4, 3, 5)).astype(np.float32) * 50
    channels = x.shape[axis]
    scale = RNG.uniform(0.1, 2.0, size=channels).astype(np.float32)
    zero = RNG.integers(-20, 20, size=channels).astype(np.int8)
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=axis)
    model = make_model([node], {"x": x}, ["y"], {"s": scale, "z": zero})
    run_c(model, {"x": x})


def test_quantize_without_zero_point_and_f16_input():
    x = (RNG.normal(size=(2, 9)) * 300).astype(np.float16)
    node = helper.make_node("QuantizeLinear", ["x", "s"], ["y"])
    model = make_model([node], {"x": x}, ["y"], {"s": np.float16(1.5)})
    got, _ = run_c(model, {"x": x})
    assert got[0].dtype == np.uint8


def test_quantize_i32_input():
    x = RNG.integers(-100000, 100000, size=(17,)).astype(np.int32)
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])
    model = make_model([node], {"x": x}, ["y"], {"s": np.int32(3), "z": np.int16(11)})
    # ONNX's evaluator divides i32 by i32 in integers; ember divides exactly and rounds
    got, _ = run_c(model, {"x": x}, onnx_check=False)
    expected = np.clip(np.rint(x / 3.0) + 11, -32768, 32767).astype(np.int16)
    np.testing.assert_array_equal(got[0], expected)


def test_quantize_empty():
    x = np.zeros((0, 3), np.float32)
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])
    model = make_model([node], {"x": x}, ["y"], {"s": np.float32(0.1), "z": np.uint8(1)})
    got, _ = run_c(model, {"x": x})
    assert got[0].shape == (0, 3)


# ---------------------------------------------------------------- DequantizeLinear

@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int16, np.int32])
def test_dequantize_per_tensor(dtype):
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, int(info.max) + 1, size=(5, 11), dtype=np.int64).astype(dtype)
    zero = np.array(0 if dtype == np.int32 else info.max // 3, dtype)
    node = helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"])
    model = make_model([node], {"x": x}, ["y"], {"s": np.float32(0.0371), "z": zero})
    got, _ = run_c(model, {"x": x}, onnx_check=dtype not in (np.int32, np.uint16, np.int16))
    expected = ((x.astype(np.float64) - float(zero)) * np.float64(np.float32(0.0371)))
    np.testing.assert_array_equal(got[0], expected.astype(np.float32))


def test_dequantize_per_axis_f16_scale():
    x = RNG.integers(-128, 128, size=(3, 6, 2)).astype(np.int8)
    scale = RNG.uniform(0.01, 1.0, size=6).astype(np.float16)
    zero = RNG.integers(-5, 5, size=6).astype(np.int8)
    node = helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], axis=-2)
    model = make_model([node], {"x": x, "s": scale}, ["y"], {"z": zero})
    got, _ = run_c(model, {"x": x, "s": scale})
    assert got[0].dtype == np.float16


def test_dequantize_keeps_int8_weights_int8_in_the_plan():
    w = RNG.integers(-128, 128, size=(4, 8)).astype(np.int8)
    x = RNG.normal(size=(3, 4)).astype(np.float32)
    nodes = [helper.make_node("DequantizeLinear", ["w", "s", "z"], ["wf"], axis=1),
             helper.make_node("MatMul", ["x", "wf"], ["y"])]
    scale = RNG.uniform(0.01, 0.1, size=8).astype(np.float32)
    model = make_model(nodes, {"x": x}, ["y"],
                       {"w": w, "s": scale, "z": np.zeros(8, np.int8)})
    typed = cook_onnx.load(model).into_model()
    plan = cook_nnef.to_tar_bytes(typed)
    text = plan_text(plan)
    assert "ember_dequantize_linear(" in text and "variable<integer>" in text
    got = typed.into_runnable().run([x])
    expected = x @ (w.astype(np.float32) * scale)
    np.testing.assert_allclose(got[0], expected, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- DynamicQuantizeLinear

@pytest.mark.parametrize("kind", ["mixed", "positive", "negative", "zeros", "nan", "empty"])
def test_dynamic_quantize(kind):
    x = {"mixed": RNG.normal(size=(3, 7)) * 4,
         "positive": RNG.uniform(1, 9, size=(13,)),
         "negative": -RNG.uniform(1, 9, size=(2, 2, 5)),
         "zeros": np.zeros((4,)),
         "nan": np.array([1.5, np.nan, -2.25, 7.0]),
         "empty": np.zeros((0, 2))}[kind].astype(np.float32)
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])
    model = make_model([node], {"x": x}, ["y", "s", "z"], opset=11)
    got, _ = run_c(model, {"x": x}, onnx_check=kind in ("mixed", "positive", "negative"))
    assert [g.dtype for g in got] == [np.uint8, np.float32, np.uint8]


# ---------------------------------------------------------------- MatMulInteger

@pytest.mark.parametrize("a_type,b_type", [(np.uint8, np.uint8), (np.int8, np.int8),
                                           (np.uint8, np.int8), (np.int8, np.uint8)])
@pytest.mark.parametrize("zeros", ["none", "scalar", "vector", "b_only"])
@pytest.mark.parametrize("b_const", [False, True])
def test_matmul_integer(a_type, b_type, zeros, b_const):
    m, k, n = 5, 19, 7
    a = RNG.integers(np.iinfo(a_type).min, int(np.iinfo(a_type).max) + 1, size=(2, 1, m, k),
                     dtype=np.int64).astype(a_type)
    b = RNG.integers(np.iinfo(b_type).min, int(np.iinfo(b_type).max) + 1, size=(3, k, n),
                     dtype=np.int64).astype(b_type)
    names, inits = ["a", "b"], {}
    if zeros in ("scalar", "vector"):
        shape = (m,) if zeros == "vector" else ()
        inits["za"] = RNG.integers(0, 100, size=shape).astype(a_type)
        names.append("za")
    if zeros != "none":
        if zeros == "b_only":
            names.append("")
        shape = (n,) if zeros in ("vector", "b_only") else ()
        inits["zb"] = RNG.integers(0, 100, size=shape).astype(b_type)
        names.append("zb")
    node = helper.make_node("MatMulInteger", names, ["y"])
    inputs = {"a": a} if b_const else {"a": a, "b": b}
    if b_const:          # B (and zb) constants: centred once at prepare
        inits["b"] = b
    model = make_model([node], inputs, ["y"], inits, opset=13)
    got, _ = run_c(model, inputs, onnx_check=zeros != "vector")
    za = inits.get("za", np.zeros((), a_type)).astype(np.int64)
    zb = inits.get("zb", np.zeros((), b_type)).astype(np.int64)
    expected = np.matmul(a.astype(np.int64) - (za.reshape(-1, 1) if za.ndim else za),
                         b.astype(np.int64) - zb)
    np.testing.assert_array_equal(got[0], expected.astype(np.int32))


def test_matmul_integer_zero_points_as_inputs():
    a = RNG.integers(0, 256, size=(4, 6)).astype(np.uint8)
    b = RNG.integers(-128, 128, size=(6, 3)).astype(np.int8)
    za, zb = np.array(17, np.uint8), np.array(-3, np.int8)
    node = helper.make_node("MatMulInteger", ["a", "b", "za", "zb"], ["y"])
    inputs = {"a": a, "b": b, "za": za, "zb": zb}
    run_c(make_model([node], inputs, ["y"], opset=13), inputs)


# ---------------------------------------------------------------- QLinearMatMul

@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("scale_type", [np.float32, np.float16])
@pytest.mark.parametrize("batch", [(), (3,), (2, 1)])
def test_qlinear_matmul(dtype, scale_type, batch):
    low, high = np.iinfo(dtype).min, int(np.iinfo(dtype).max) + 1
    a = RNG.integers(low, high, size=batch + (4, 9), dtype=np.int64).astype(dtype)
    b = RNG.integers(low, high, size=(9, 5), dtype=np.int64).astype(dtype)
    params = {"sa": np.array(0.0125, scale_type), "za": np.array(low + 100, dtype),
              "sb": np.array(0.0331, scale_type), "zb": np.array(low + 120, dtype),
              "sy": np.array(0.07, scale_type), "zy": np.array(low + 128, dtype)}
    node = helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"],
                            ["y"])
    model = make_model([node], {"a": a, "b": b}, ["y"], params)
    run_c(model, {"a": a, "b": b})


def test_qlinear_matmul_per_column_b_scale():
    a = RNG.integers(0, 256, size=(3, 8)).astype(np.uint8)
    b = RNG.integers(0, 256, size=(8, 6)).astype(np.uint8)
    params = {"sa": np.float32(0.02), "za": np.uint8(128),
              "sb": RNG.uniform(0.001, 0.05, size=6).astype(np.float32),
              "zb": RNG.integers(100, 150, size=6).astype(np.uint8),
              "sy": np.float32(0.05), "zy": np.uint8(100)}
    node = helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"],
                            ["y"])
    run_c(make_model([node], {"a": a, "b": b}, ["y"], params), {"a": a, "b": b})
    params["b"] = b
    run_c(make_model([node], {"a": a}, ["y"], params), {"a": a})


# ---------------------------------------------------------------- ConvInteger, QLinearConv

CONV_CASES = [
    dict(x=(1, 3, 7, 8), w=(4, 3, 3, 3), pads=[1, 1, 1, 1]),
    dict(x=(2, 4, 9, 6), w=(6, 2, 3, 2), strides=[2, 1], dilations=[1, 2], group=2),
    dict(x=(1, 3, 11), w=(3, 1, 4), pads=[2, 0], strides=[3], group=3),
    dict(x=(1, 2, 4, 5, 3), w=(2, 2, 2, 3, 1), pads=[0, 1, 0, 1, 0, 0]),
    dict(x=(1, 2, 5, 5), w=(3, 2, 3, 3), auto_pad="SAME_UPPER", strides=[2, 2]),
]


def _conv_attrs(case):
    return {k: v for k, v in case.items() if k not in ("x", "w")}


def _ints(dtype, shape):
    low, high = np.iinfo(dtype).min, int(np.iinfo(dtype).max) + 1
    return RNG.integers(low, high, size=shape, dtype=np.int64).astype(dtype)


@pytest.mark.parametrize("case", CONV_CASES)
@pytest.mark.parametrize("x_type,w_type", [(np.uint8, np.uint8), (np.int8, np.int8),
                                           (np.uint8, np.int8)])
def test_conv_integer(case, x_type, w_type):
    x, w = _ints(x_type, case["x"]), _ints(w_type, case["w"])
    inits = {"w": w, "xz": np.array(7, x_type), "wz": np.array(-2 if w_type == np.int8 else 3,
                                                               w_type)}
    node = helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], **_conv_attrs(case))
    model = make_model([node], {"x": x}, ["y"], inits, opset=13)
    got, _ = run_c(model, {"x": x})
    assert got[0].dtype == np.int32


def test_conv_integer_per_channel_w_zero_and_defaults():
    x, w = _ints(np.uint8, (1, 2, 6, 6)), _ints(np.uint8, (3, 2, 2, 2))
    wz = np.array([1, 200, 37], np.uint8)
    node = helper.make_node("ConvInteger", ["x", "w", "", "wz"], ["y"])
    model = make_model([node], {"x": x, "w": w}, ["y"], {"wz": wz}, opset=13)
    run_c(model, {"x": x, "w": w}, onnx_check=False)
    node = helper.make_node("ConvInteger", ["x", "w"], ["y"])
    run_c(make_model([node], {"x": x, "w": w}, ["y"], opset=13), {"x": x, "w": w})


@pytest.mark.parametrize("case", CONV_CASES)
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("bias", [False, True])
def test_qlinear_conv(case, dtype, bias):
    x, w = _ints(dtype, case["x"]), _ints(dtype, case["w"])
    out_channels = case["w"][0]
    low = np.iinfo(dtype).min
    params = {"sx": np.float32(0.0173), "zx": np.array(low + 130, dtype), "w": w,
              "sw": RNG.uniform(0.001, 0.01, size=out_channels).astype(np.float32),
              "zw": np.array(low + 128, dtype), "sy": np.float32(0.21),
              "zy": np.array(low + 125, dtype)}
    names = ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy"]
    if bias:
        params["b"] = RNG.integers(-5000, 5000, size=out_channels).astype(np.int32)
        names.append("b")
    node = helper.make_node("QLinearConv", names, ["y"], **_conv_attrs(case))
    model = make_model([node], {"x": x}, ["y"], params, opset=13)
    # ONNX's evaluator expands a per-channel w_scale for 2-d convs only
    got, plan = run_c(model, {"x": x}, onnx_check=len(case["x"]) == 4)
    assert "ember_qlinear_conv(" in plan_text(plan)
    assert got[0].dtype == dtype


# ---------------------------------------------------------------- BitCast

@pytest.mark.parametrize("source,target", [
    (np.float32, np.int32), (np.int32, np.float32), (np.float64, np.uint64),
    (np.int16, np.float16), (np.float16, np.uint16), (np.bool_, np.uint8),
    (np.int8, np.uint8), (np.uint32, np.float32)])
def test_bit_cast(source, target):
    raw = RNG.integers(0, 256, size=(3, 5 * np.dtype(source).itemsize), dtype=np.int64)
    x = raw.astype(np.uint8).view(source) if source != np.bool_ else raw[:, :5] % 2 == 1
    node = helper.make_node("BitCast", ["x"], ["y"],
                            to=helper.np_dtype_to_tensor_dtype(np.dtype(target)))
    model = make_model([node], {"x": x}, ["y"], opset=26)
    typed = cook_onnx.load(model).into_model()
    got = typed.into_runnable().run([x])
    assert_same(got, [x.view(target)], "bit cast")


# ---------------------------------------------------------------- errors

def _load_plan(body, inputs="x", external='x = tract_core_external(shape = [2, 3], '
                                         'datum_type = "f32");'):
    import ember
    text = "\n".join(["version 1.0;", f"graph network({inputs}) -> (y)", "{", "  " + external]
                     + ["  " + line for line in body] + ["}", ""])
    import io
    import tarfile
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        data = text.encode()
        info = tarfile.TarInfo("graph.nnef")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return ember.load_model(buffer.getvalue())


@pytest.mark.parametrize("body,message", [
    (['y = ember_quantize_linear(x, 0.5, 300.0, to = "u8");'], "not a u8 value"),
    (['y = ember_quantize_linear(x, 0.5, 1.5, to = "i8");'], "not a i8 value"),
    (['y = ember_quantize_linear(x, [0.5, 0.25], to = "i8", axis = 1);'], "expected one value"),
    (['y = ember_quantize_linear(x, [0.5, 0.25], to = "i8", axis = 5);'], "axis"),
    (['y = ember_quantize_linear(x, 0.5, to = "f32");'], "not supported"),
    (['y = ember_dequantize_linear(x, 0.5);'], "expected i8, u8"),
    (['y = ember_matmul_integer(x, x);'], "expected i8 or u8"),
    (['y = ember_bit_cast(x, to = "i64");'], "differ in width"),
])
def test_bad_plans_are_refused(body, message):
    with pytest.raises(EmberError, match=message) as error:
        _load_plan(body)
    assert "'y'" in str(error.value)


@pytest.mark.parametrize("a_shape,b_shape", [((6,), (6, 4)), ((2, 3, 6), (6,)), ((6,), (6,))])
def test_integer_matmuls_of_vectors(a_shape, b_shape):
    a, b = _ints(np.uint8, a_shape), _ints(np.int8, b_shape)
    node = helper.make_node("MatMulInteger", ["a", "b", "za", "zb"], ["y"])
    inits = {"za": np.uint8(9), "zb": np.int8(-4)}
    run_c(make_model([node], {"a": a, "b": b}, ["y"], inits, opset=13), {"a": a, "b": b})
    node = helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"],
                            ["y"])
    inits.update({"sa": np.float32(0.1), "sb": np.float32(0.02), "sy": np.float32(0.3),
                  "zy": np.uint8(128)})
    run_c(make_model([node], {"a": a, "b": b}, ["y"], inits), {"a": a, "b": b})


# ---------------------------------------------------------------- f16 conversions

@pytest.mark.parametrize("scale", [1.0, 2.0 ** -20, 3.7, 0.00012345, 2.0 ** -30])
def test_dequantize_to_f16_rounds_once(scale):
    """Every i16 value times scale, rounded to f16 (subnormals, overflow to inf, ties)."""
    x = np.arange(-32768, 32768, dtype=np.int32).astype(np.int16)
    # output_dtype f16 with an f32 scale: the f64 products are rounded straight to f16
    node = helper.make_node("DequantizeLinear", ["x", "s"], ["y"],
                            output_dtype=TensorProto.FLOAT16)
    model = make_model([node], {"x": x}, ["y"], {"s": np.float32(scale)}, opset=25)
    typed = cook_onnx.load(model).into_model()
    got = typed.into_runnable().run([x])
    with np.errstate(over="ignore"):
        expected = (x.astype(np.float64) * np.float64(np.float32(scale))).astype(np.float16)
    assert got[0].dtype == np.float16
    np.testing.assert_array_equal(bits(got[0]), bits(expected))


@pytest.mark.parametrize("scale", [2.0 ** -24, 1.0, 0.3])
def test_quantize_every_f16(scale):
    """Every f16 bit pattern (subnormals, inf, NaN) quantized through f32."""
    x = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])
    model = make_model([node], {"x": x}, ["y"], {"s": np.float16(scale), "z": np.int16(0)})
    with np.errstate(invalid="ignore"):
        got, _ = run_c(model, {"x": x}, onnx_check=False)
    with np.errstate(invalid="ignore"):
        q = np.rint(x.astype(np.float64) / np.float64(np.float16(scale)))
    expected = np.clip(np.nan_to_num(q, nan=0.0, posinf=32767, neginf=-32768), -32768,
                       32767).astype(np.int16)
    np.testing.assert_array_equal(got[0], expected)
