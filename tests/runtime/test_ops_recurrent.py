"""LSTM, GRU and RNN through the C runtime (ember_lstm / ember_gru / ember_rnn) against
onnxruntime: every direction, biases, initial states, sequence lengths, peepholes, clip,
input_forget, linear_before_reset, layout 1, activations with alpha and beta, outputs
left out, f64, and a dynamic time axis run at two lengths on one runnable."""
import copy

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from ember.cook.nnef import plan_files

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
SEQ, BATCH, IN, HIDDEN = 5, 3, 4, 6


def recurrent_model(op, direction="forward", bias=True, initial=False, lens=False,
                    peepholes=False, layout=0, outputs=("y", "y_h", "y_c"), dtype=np.float32,
                    seq=SEQ, seed=0, **attributes):
    rng = np.random.default_rng(seed)
    dirs = 2 if direction == "bidirectional" else 1
    gates = GATES[op] * HIDDEN
    elem = TensorProto.DOUBLE if dtype == np.float64 else TensorProto.FLOAT
    weights = {"w": rng.standard_normal((dirs, gates, IN)) * 0.5,
               "r": rng.standard_normal((dirs, gates, HIDDEN)) * 0.5}
    names = ["x", "w", "r", "", "", "", "", ""]
    if bias:
        weights["b"] = rng.standard_normal((dirs, 2 * gates)) * 0.3
        names[3] = "b"
    feeds = {}
    state = (BATCH, dirs, HIDDEN) if layout else (dirs, BATCH, HIDDEN)
    if initial:
        names[5] = "h0"
        feeds["h0"] = rng.standard_normal(state).astype(dtype)
        if op == "LSTM":
            names[6] = "c0"
            feeds["c0"] = rng.standard_normal(state).astype(dtype)
    if lens:
        names[4] = "lens"
        feeds["lens"] = np.array([seq, 2, seq - 1][:BATCH], np.int32)
    if peepholes:
        weights["p"] = rng.standard_normal((dirs, 3 * HIDDEN)) * 0.3
        names[7] = "p"
    if op != "LSTM":
        names = names[:6]
    while names[-1] == "":
        names.pop()
    initializers = [numpy_helper.from_array(v.astype(dtype), k) for k, v in weights.items()]
    outputs = [o for o in outputs if op == "LSTM" or o != "y_c"]
    node = helper.make_node(op, names, [o if o in outputs else "" for o in ("y", "y_h", "y_c")
                                        if op == "LSTM" or o != "y_c"],
                            hidden_size=HIDDEN, direction=direction, layout=layout,
                            **attributes)
    time = "T" if seq is None else seq
    x_shape = [BATCH, time, IN] if layout else [time, BATCH, IN]
    inputs = [helper.make_tensor_value_info("x", elem, x_shape)]
    inputs += [helper.make_tensor_value_info(k, elem, list(v.shape))
               for k, v in feeds.items() if k != "lens"]
    if lens:
        inputs.append(helper.make_tensor_value_info("lens", TensorProto.INT32, [BATCH]))
    graph = helper.make_graph([node], "g", inputs,
                              [helper.make_tensor_value_info(o, elem, None) for o in outputs],
                              initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    return model, feeds


def reference(model, feeds, layout):
    """onnxruntime's outputs; it has no layout 1, so that runs as layout 0 on transposes."""
    if layout:
        model = copy.deepcopy(model)
        for a in model.graph.node[0].attribute:
            if a.name == "layout":
                a.i = 0
        for value in model.graph.input:
            if value.name != "lens":
                dims = value.type.tensor_type.shape.dim
                first = copy.deepcopy(dims[0])
                dims[0].CopyFrom(dims[1])
                dims[1].CopyFrom(first)
        feeds = {k: v if k == "lens" else v.transpose(1, 0, 2) for k, v in feeds.items()}
    outputs = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"]).run(None, feeds)
    if layout:
        outputs = [o.transpose(2, 0, 1, 3) if o.ndim == 4 else o.transpose(1, 0, 2)
                   for o in outputs]
    return outputs


def check(model, feeds, seq=SEQ, dtype=np.float32, runnable=None, seed=1):
    rng = np.random.default_rng(seed)
    layout = next(a.i for a in model.graph.node[0].attribute if a.name == "layout")
    shape = (BATCH, seq, IN) if layout else (seq, BATCH, IN)
    feeds = {"x": rng.standard_normal(shape).astype(dtype), **feeds}
    names = [i.name for i in model.graph.input]
    want = reference(model, feeds, layout)
    if runnable is None:
        runnable = ember.onnx().load(model).into_model().into_runnable()
    got = runnable.run([feeds[n] for n in names])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)
    return runnable


@pytest.mark.parametrize("op", list(GATES))
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("variant", ["plain", "nobias", "initial", "lens", "layout1",
                                     "lens_initial_layout1"])
def test_recurrent_matches_onnxruntime(op, direction, variant):
    options = {"plain": {}, "nobias": {"bias": False}, "initial": {"initial": True},
               "lens": {"lens": True}, "layout1": {"layout": 1},
               "lens_initial_layout1": {"lens": True, "initial": True, "layout": 1}}[variant]
    check(*recurrent_model(op, direction, **options))


@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_lstm_peepholes_clip_input_forget(direction):
    check(*recurrent_model("LSTM", direction, peepholes=True, initial=True, lens=True))
    check(*recurrent_model("LSTM", direction, clip=0.7))
    check(*recurrent_model("LSTM", direction, input_forget=1, initial=True))


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_gru_linear_before_reset(direction):
    check(*recurrent_model("GRU", direction, linear_before_reset=1, initial=True, lens=True))
    check(*recurrent_model("GRU", direction, linear_before_reset=1, bias=False, clip=0.5))


@pytest.mark.parametrize("op, activations, alpha, beta", [
    ("RNN", ["Relu"], None, None),
    ("RNN", ["LeakyRelu"], [0.2], None),
    ("RNN", ["Affine", "ThresholdedRelu"], [0.5, 0.1], [0.3]),
    ("RNN", ["Elu", "Softsign"], [0.7], None),
    ("RNN", ["Softplus", "HardSigmoid"], [0.3], [0.4]),
    ("GRU", ["HardSigmoid", "ScaledTanh"], [0.3, 0.8], [0.45, 1.2]),
    ("LSTM", ["HardSigmoid", "Softsign", "ScaledTanh"], [0.2, 0.7], [0.5, 1.1]),
    ("LSTM", ["Sigmoid", "Tanh", "Tanh", "HardSigmoid", "Elu", "Affine"], [0.25, 0.5, 2.0],
     [0.5, 0.1]),
])
def test_activations_with_alpha_and_beta(op, activations, alpha, beta):
    per = {"LSTM": 3, "GRU": 2, "RNN": 1}[op]
    direction = "bidirectional" if len(activations) == 2 * per else "forward"
    attributes = {"activations": activations}
    if alpha:
        attributes["activation_alpha"] = alpha
    if beta:
        attributes["activation_beta"] = beta
    check(*recurrent_model(op, direction, **attributes))


@pytest.mark.parametrize("op", list(GATES))
def test_outputs_left_out(op):
    check(*recurrent_model(op, "bidirectional", outputs=("y_h",)))
    check(*recurrent_model(op, "forward", outputs=("y",), initial=True))


@pytest.mark.parametrize("op", list(GATES))
def test_f64_computes_through_f32(op):
    """onnxruntime has no f64 recurrent kernels: the reference is the cook's numpy."""
    model, feeds = recurrent_model(op, "bidirectional", dtype=np.float64, initial=True)
    x = np.random.default_rng(3).standard_normal((SEQ, BATCH, IN))
    inputs = [x] + [feeds[i.name] for i in model.graph.input[1:]]
    typed = ember.onnx().load(model).into_model()
    for g, w in zip(typed.into_runnable().run(inputs), typed.run_reference(inputs)):
        assert g.dtype == np.float64
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("op", list(GATES))
@pytest.mark.parametrize("layout", [0, 1])
def test_dynamic_time_two_lengths_one_runnable(op, layout):
    model, feeds = recurrent_model(op, "bidirectional", seq=None, layout=layout, initial=True)
    runnable = check(model, feeds, seq=7)
    check(model, feeds, seq=3, runnable=runnable, seed=2)
    check(model, feeds, seq=7, runnable=runnable, seed=3)


def test_plan_form_reads_back(tmp_path):
    """The Python reader reads ember_lstm back to the same op: same outputs in numpy."""
    model, feeds = recurrent_model("LSTM", "bidirectional", peepholes=True, clip=2.0,
                                   initial=True, lens=True, activations=[
                                       "Sigmoid", "Tanh", "Tanh", "HardSigmoid", "Elu",
                                       "Softsign"], activation_alpha=[0.3, 0.9])
    typed = ember.onnx().load(model).into_model()
    path = str(tmp_path / "lstm.tgz")
    ember.nnef().write_model_to_tar_gz(typed, path)
    assert "ember_lstm(" in plan_files(typed)["graph.nnef"].decode()
    again = ember.nnef().load(path)
    x = np.random.default_rng(4).standard_normal((SEQ, BATCH, IN)).astype(np.float32)
    inputs = [x] + [feeds[i.name] for i in model.graph.input[1:]]
    want = typed.run_reference(inputs)
    for g, w in zip(again.run_reference(inputs), want):
        np.testing.assert_array_equal(g, w)
    for g, w in zip(ember.load_model(path).into_runnable().run(inputs), want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)
