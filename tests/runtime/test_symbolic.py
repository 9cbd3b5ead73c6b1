"""Plans with symbolic dims run on the C runtime at any consistent input shapes.

The symbols are read from each run's input shapes (a bare symbol binds, an expression
such as S+2 is solved), every input is checked against them, and each binding is
prepared once and cached (core/runnable.h). Inconsistent or impossible shapes are
errors naming the inputs and the symbol, never a crash or a huge allocation.
"""
import numpy as np
import pytest

import ember
import zoo
from ember.runtime import EmberError

RNG = np.random.default_rng(7)


def conv1d_model():
    return zoo.symbolic_conv1d_model(seed=7)


def write_plan(tmp_path, inputs, body, outputs, symbols):
    lines = ["version 1.0;", ""] + [f"extension tract_symbol {s};" for s in symbols] + [
        "", f"graph network({', '.join(inputs)}) -> ({', '.join(outputs)})", "{"]
    lines += [f"  {name} = external<scalar>(shape = {shape});" for name, shape in inputs.items()]
    lines += ["  " + line for line in body] + ["}", ""]
    (tmp_path / "graph.nnef").write_text("\n".join(lines))
    return str(tmp_path)


def test_cooked_model_runs_at_several_shapes_on_one_runnable():
    import onnxruntime as ort
    model = conv1d_model()
    typed = ember.onnx().load(model).into_model()
    runnable = typed.into_runnable()            # no set_symbols: the plan stays symbolic
    facts = runnable.model
    assert [str(f) for f in facts.input_facts()] == ["N,4,T,f32"]
    assert [str(f) for f in facts.output_facts()] == ["N,8*T,f32"]
    assert facts.symbols == ["N", "T"]
    session = ort.InferenceSession(model.SerializeToString())
    for n, t in [(1, 10), (2, 33), (1, 10), (3, 1), (2, 33)]:
        x = RNG.standard_normal((n, 4, t)).astype(np.float32)
        got, = runnable.run([x])
        want, = session.run(None, {"x": x})
        assert got.shape == (n, 8 * t)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_bindings_are_cached_and_bounded():
    runnable = ember.onnx().load(conv1d_model()).into_model().into_runnable()
    x = {t: RNG.standard_normal((1, 4, t)).astype(np.float32) for t in range(3, 10)}
    first = {t: runnable.run([x[t]])[0] for t in (3, 4)}
    two = runnable.memory_bytes
    np.testing.assert_array_equal(runnable.run([x[3]])[0], first[3])
    assert runnable.memory_bytes == two                  # a binding seen before: no growth
    for t in range(3, 10):                               # more bindings than the cache holds
        runnable.run([x[t]])
    assert runnable.memory_bytes <= 4 * max(two, 1)      # at most 4 prepared bindings
    np.testing.assert_array_equal(runnable.run([x[4]])[0], first[4])   # evicted, rebuilt


def test_expression_dims_are_solved(tmp_path):
    # h is [S+2, 4]: S comes from x, and h must agree; y = x + h[1:S+1]
    plan = write_plan(tmp_path, {"x": "[S, 4]", "h": "[S + 2, 4]"},
                      ["m = slice(h, axes = [0], begin = [1], end = [S + 1]);",
                       "y = add(x, m);"], ["y"], ["S"])
    runnable = ember.load_model(plan).into_runnable()
    assert [str(f) for f in runnable.model.input_facts()] == ["S,4,f32", "S+2,4,f32"]
    for s in (1, 6):
        x = RNG.standard_normal((s, 4)).astype(np.float32)
        h = RNG.standard_normal((s + 2, 4)).astype(np.float32)
        np.testing.assert_allclose(runnable.run([x, h])[0], x + h[1:s + 1], rtol=1e-6)
    # only h given a length that no S fits
    with pytest.raises(EmberError, match=r"input 1 'h': dim 0 must be S\+2 = 7, got 9"):
        runnable.run([np.zeros((5, 4), np.float32), np.zeros((9, 4), np.float32)])


def test_solving_from_an_expression_alone(tmp_path):
    # the only input is [2*S+1]: S is solved from it, and reshape uses S
    plan = write_plan(tmp_path, {"x": "[2 * S + 1]"},
                      ["a = slice(x, axes = [0], begin = [1], end = [2 * S + 1]);",
                       "y = reshape(a, shape = [S, 2]);"], ["y"], ["S"])
    runnable = ember.load_model(plan).into_runnable()
    x = np.arange(11, dtype=np.float32)
    np.testing.assert_array_equal(runnable.run([x])[0], x[1:].reshape(5, 2))
    with pytest.raises(EmberError, match="2\\*S\\+1"):
        runnable.run([np.zeros(10, np.float32)])          # even: no S gives 2*S+1 = 10


def test_inconsistent_inputs_name_the_symbol(tmp_path):
    plan = write_plan(tmp_path, {"a": "[S, 3]", "b": "[S, 3]"}, ["y = add(a, b);"], ["y"], ["S"])
    runnable = ember.load_model(plan).into_runnable()
    with pytest.raises(EmberError, match=r"input 1 'b' gives S=7, input 0 'a' gave S=5"):
        runnable.run([np.zeros((5, 3), np.float32), np.zeros((7, 3), np.float32)])
    y, = runnable.run([np.ones((2, 3), np.float32), np.ones((2, 3), np.float32)])
    np.testing.assert_array_equal(y, np.full((2, 3), 2, np.float32))
    with pytest.raises(EmberError, match="expected f32 of rank 2, got f32 of rank 3"):
        runnable.run([np.zeros((2, 3, 1), np.float32), np.zeros((2, 3), np.float32)])


def test_negative_and_overflowing_dims_are_errors(tmp_path):
    plan = write_plan(tmp_path, {"x": "[S]"},
                      ["a = slice(x, axes = [0], begin = [0], end = [S - 5]);",
                       "y = reshape(a, shape = [S - 5]);"], ["y"], ["S"])
    runnable = ember.load_model(plan).into_runnable()
    np.testing.assert_array_equal(runnable.run([np.arange(8, dtype=np.float32)])[0], [0, 1, 2])
    with pytest.raises(EmberError):
        runnable.run([np.arange(3, dtype=np.float32)])    # S - 5 < 0
    huge = write_plan(tmp_path, {"x": "[S]"}, ["y = reshape(x, shape = [S * S * S * S * S]);"],
                      ["y"], ["S"])
    runnable = ember.load_model(huge).into_runnable()
    with pytest.raises(EmberError, match="overflow|exceed|too large|reshape"):
        runnable.run([np.zeros(1 << 14, np.float32)])     # (2^14)^5 = 2^70


def test_unknown_op_in_a_symbolic_plan_is_refused_at_load(tmp_path):
    plan = write_plan(tmp_path, {"x": "[S]"}, ["y = no_such_op(x);"], ["y"], ["S"])
    with pytest.raises(EmberError, match="unknown op 'no_such_op'"):
        ember.load_model(plan)


def test_plan_without_output_facts_says_so(tmp_path):
    plan = write_plan(tmp_path, {"x": "[S]"}, ["y = relu(x);"], ["y"], ["S"])
    model = ember.load_model(plan)
    with pytest.raises(EmberError, match="output_facts"):
        model.output_facts()
    y, = model.into_runnable().run([np.array([-1, 2], np.float32)])
    np.testing.assert_array_equal(y, [0, 2])


def test_weights_are_packed_once_for_every_binding():
    """A new binding prepares the model again, but its packed weights are shared."""
    from onnx import TensorProto, helper, numpy_helper
    w = RNG.standard_normal((256, 256)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["S", 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "W")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    runnable = ember.onnx().load(model).into_model().into_runnable()
    weights = w.nbytes
    for s in (1, 2, 3, 4):
        x = RNG.standard_normal((s, 256)).astype(np.float32)
        np.testing.assert_allclose(runnable.run([x])[0], x @ w, rtol=1e-4, atol=1e-4)
    # four bindings prepared: one packed copy of W (plus small arenas), not four
    assert weights <= runnable.memory_bytes < 1.5 * weights, runnable.memory_bytes
