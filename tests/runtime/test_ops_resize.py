"""Resize through the C runtime (lowered per axis to a gather of the taps, weighed and
summed) against ONNX's reference evaluator, and onnxruntime where it agrees with it (it
does not for align_corners and half_pixel_symmetric at scales whose output width is not
a whole number: ONNX's reference, the backend tests and ember take that width as the
float scale · size, onnxruntime as the rounded output size): every mode, coordinate
transformation and nearest rounding, scales and sizes, integer and f16 data."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember

RNG = np.random.default_rng(41)
TRANSFORMS = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
              "half_pixel_symmetric"]


def check(x, onnx_type, scales=None, sizes=None, rtol=1e-5, **attrs):
    inputs = ["x", "", "scales"] if scales is not None else ["x", "", "", "sizes"]
    inits = [numpy_helper.from_array(np.array(scales, np.float32), "scales")] \
        if scales is not None else [numpy_helper.from_array(np.array(sizes, np.int64), "sizes")]
    graph = helper.make_graph([helper.make_node("Resize", inputs, ["y"], **attrs)], "g",
                              [helper.make_tensor_value_info("x", onnx_type, list(x.shape))],
                              [helper.make_tensor_value_info("y", onnx_type, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator
    got = ember.onnx().load(model).into_model().into_runnable().run([x])[0]
    wants = [ReferenceEvaluator(model).run(None, {"x": x})[0]]
    whole = scales is None or all(float(s * d).is_integer() for s, d in zip(scales, x.shape))
    if whole or attrs.get("coordinate_transformation_mode") not in ("align_corners",
                                                                     "half_pixel_symmetric"):
        session = ort.InferenceSession(model.SerializeToString(),
                                       providers=["CPUExecutionProvider"])
        wants.append(session.run(None, {"x": x})[0])
    for want in wants:
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=rtol, atol=rtol)


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("transform", TRANSFORMS)
def test_resize_modes_and_transforms(mode, transform):
    x = RNG.standard_normal((1, 2, 5, 7)).astype(np.float32)
    check(x, TensorProto.FLOAT, scales=[1, 1, 2.0, 0.6], mode=mode,
          coordinate_transformation_mode=transform)
    check(x, TensorProto.FLOAT, sizes=[1, 2, 3, 11], mode=mode,
          coordinate_transformation_mode=transform)


@pytest.mark.parametrize("nearest_mode", ["round_prefer_floor", "round_prefer_ceil", "floor",
                                          "ceil"])
def test_nearest_rounding_on_integers_and_f16(nearest_mode):
    x = RNG.integers(0, 255, (1, 3, 4, 6)).astype(np.uint8)
    check(x, TensorProto.UINT8, scales=[1, 1, 2.5, 1.5], mode="nearest",
          nearest_mode=nearest_mode)
    h = RNG.standard_normal((1, 3, 4, 6)).astype(np.float16)
    check(h, TensorProto.FLOAT16, scales=[1, 1, 2, 2], mode="nearest",
          nearest_mode=nearest_mode)


def test_linear_on_f16_and_cubic_exclude_outside():
    h = RNG.standard_normal((1, 2, 6, 6)).astype(np.float16)
    check(h, TensorProto.FLOAT16, scales=[1, 1, 1.5, 2], mode="linear", rtol=2e-3)
    x = RNG.standard_normal((2, 3, 8, 5)).astype(np.float32)
    check(x, TensorProto.FLOAT, sizes=[2, 3, 5, 9], mode="cubic", exclude_outside=1,
          cubic_coeff_a=-0.5)
