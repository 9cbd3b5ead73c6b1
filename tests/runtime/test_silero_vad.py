"""Every ONNX file the pip package silero-vad ships, cooked and run through the C runtime
against onnxruntime, chunk after chunk with the state fed back (how a voice-activity
detector runs). The models branch on their input: the chunk length (512 samples at
16 kHz, 256 at 8 kHz) is fixed while cooking, as a streaming application fixes it; the
sample rate stays a run-time input where the model has one, so its If is kept in the
plan (ember_if) and each run takes one branch."""
import glob
import importlib.util
import os

import numpy as np
import onnxruntime as ort
import pytest

import ember
from ember.cook import onnx as cook_onnx


def silero_dir():
    spec = importlib.util.find_spec("silero_vad")
    assert spec is not None, "the test extra installs silero-vad (its ONNX files)"
    return os.path.join(os.path.dirname(spec.origin), "data")


# file -> (input shape to cook and run, sample rate of the `sr` input or None)
CASES = {
    "silero_vad.onnx": [((1, 512), 16000), ((1, 256), 8000)],
    "silero_vad_16k_op15.onnx": [((1, 512), 16000)],
    "silero_vad_16k_sequence.onnx": [((3, 576), None)],   # time stays a symbol
    "silero_vad_half.onnx": [((1, 512), None)],
    "silero_vad_op18_ifless.onnx": [((1, 512), 16000), ((1, 256), 8000)],
    "silero_vad_openvino_16k.onnx": [((1, 576), None)],
}


def test_every_shipped_file_is_covered():
    shipped = {os.path.basename(p) for p in glob.glob(os.path.join(silero_dir(), "*.onnx"))}
    assert shipped == set(CASES)


def cooked(name, shape):
    path = os.path.join(silero_dir(), name)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    model = cook_onnx.load(path)
    if name != "silero_vad_16k_sequence.onnx":
        model.set_input_fact(names.index("input"), ",".join(map(str, shape)) + ",f32")
    return session, names, model.into_model()


@pytest.mark.parametrize("name, shape, rate",
                         [(n, s, r) for n, cases in CASES.items() for s, r in cases])
def test_silero_file_matches_onnxruntime_chunk_after_chunk(name, shape, rate):
    session, names, typed = cooked(name, shape)
    runnable = typed.into_runnable()
    rng = np.random.default_rng(shape[1])
    states = [i for i in session.get_inputs() if i.name not in ("input", "sr")]
    state = [np.zeros([d if isinstance(d, int) else 1 for d in i.shape], np.float32)
             for i in states]
    for _ in range(3):
        feeds = {"input": (rng.standard_normal(shape) * 0.3).astype(np.float32)}
        feeds.update({i.name: v for i, v in zip(states, state)})
        if rate is not None:
            feeds["sr"] = np.array(rate, np.int64)
        want = session.run(None, feeds)
        got = runnable.run([feeds[n] for n in names])
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=2e-5)
        state = got[1:]           # the state outputs, in the order of the state inputs


def test_main_model_keeps_its_rate_branch_and_refuses_the_wrong_chunk():
    """silero_vad.onnx cooked for 512-sample chunks keeps its If on `sr`: 16000 runs the
    16 kHz branch; 8000 on 512 samples fails in the 8 kHz branch, as onnxruntime does."""
    session, names, typed = cooked("silero_vad.onnx", (1, 512))
    assert "If" in typed.op_types()
    runnable = typed.into_runnable()
    feeds = {"input": np.zeros((1, 512), np.float32), "state": np.zeros((2, 1, 128), np.float32),
             "sr": np.array(8000, np.int64)}
    with pytest.raises(ember.EmberError, match="else branch cannot run"):
        runnable.run([feeds[n] for n in names])
    feeds["sr"] = np.array(16000, np.int64)
    want = session.run(None, feeds)
    for g, w in zip(runnable.run([feeds[n] for n in names]), want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=2e-5)
