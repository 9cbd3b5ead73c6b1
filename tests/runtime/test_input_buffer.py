"""Inputs written in place (ember_runnable_input, Runnable.input_buffer) and outputs fed
back as inputs: both must give exactly what a run on a copied input gives."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from ember.runtime import EmberError, ffi, lib

RNG = np.random.default_rng(5)


def cooked(tmp_path, model, name="plan"):
    """A runnable of `model` through a plan on disk."""
    path = str(tmp_path / f"{name}.onnx")
    onnx.save(model, path)
    plan = str(tmp_path / f"{name}.tar")
    ember.nnef().write_model_to_tar(ember.onnx().load(path).into_model(), plan)
    return ember.load_model(plan).into_runnable()


def conv_relu(shape):
    """x [1, 3, H, W] -> conv 3x3 (8 channels) -> relu; H, W may be symbols."""
    weight = numpy_helper.from_array(RNG.standard_normal((8, 3, 3, 3)).astype(np.float32), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, shape)], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, None)], [weight])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def state_step(n):
    """s [1, n] -> tanh(tanh(s W1) W2) [1, n]: a recurrent state's update, to feed back."""
    inits = [numpy_helper.from_array((RNG.standard_normal(shape) / np.sqrt(shape[0]))
                                     .astype(np.float32), name)
             for name, shape in (("w1", (n, 3 * n)), ("w2", (3 * n, n)))]
    nodes = [helper.make_node("MatMul", ["s", "w1"], ["m1"]),
             helper.make_node("Tanh", ["m1"], ["h"]),
             helper.make_node("MatMul", ["h", "w2"], ["m2"]),
             helper.make_node("Tanh", ["m2"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(
        "s", TensorProto.FLOAT, [1, n])], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, [1, n])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_an_input_written_in_place_gives_the_copied_inputs_outputs(tmp_path):
    runnable = cooked(tmp_path, conv_relu([1, 3, 20, 24]))
    buffer = runnable.input_buffer(0)
    assert buffer.shape == (1, 3, 20, 24) and buffer.dtype == np.float32
    for seed in range(3):     # the run reuses the buffer: each run writes it again
        x = np.random.default_rng(seed).standard_normal((1, 3, 20, 24)).astype(np.float32)
        expected = runnable.run([x])[0]
        buffer[...] = x
        got = runnable.run([buffer])[0]
        assert np.array_equal(got, expected)
        assert float(np.abs(expected).max()) > 0.1
    del runnable                 # the buffer keeps its runnable alive
    buffer[...] = 0.0


def test_a_symbolic_plan_has_no_input_buffer(tmp_path):
    runnable = cooked(tmp_path, conv_relu([1, 3, "H", "W"]))
    with pytest.raises(EmberError) as error:
        runnable.input_buffer(0)
    assert error.value.kind == "unsupported"
    assert "symbolic" in str(error.value) and "'x'" in str(error.value)
    with pytest.raises(EmberError):
        cooked(tmp_path, conv_relu([1, 3, 8, 8]), "fixed").input_buffer(1)


def run_pointer(runnable, tensor):
    """Run on a C tensor as is (no numpy copy in between); the C output 0."""
    assert lib.ember_runnable_run(runnable._handle, 1, tensor) == lib.EMBER_OK, \
        ffi.string(lib.ember_last_error()).decode()
    out = ffi.new("ember_tensor *")
    assert lib.ember_runnable_output(runnable._handle, 0, out) == lib.EMBER_OK
    return out


@pytest.mark.parametrize("n", [8, 24, 61])
def test_an_output_fed_back_as_the_next_input_runs_as_a_copy(tmp_path, n):
    model = state_step(n)
    fed, copied = cooked(tmp_path, model, "fed"), cooked(tmp_path, model, "copied")
    state = np.random.default_rng(n).standard_normal((1, n)).astype(np.float32)
    expected = state
    c_state = ffi.new("ember_tensor *")
    c_state.datum_type, c_state.rank = lib.EMBER_F32, 2
    c_state.shape[0], c_state.shape[1] = 1, n
    c_state.data = ffi.from_buffer(state)
    for step in range(4):
        out = run_pointer(fed, c_state)    # the output's memory, straight back in
        c_state.data = out.data
        expected = copied.run([expected])[0]
        got = np.frombuffer(ffi.buffer(out.data, 4 * n), np.float32).reshape(1, n)
        assert np.array_equal(got, expected), f"step {step}"
