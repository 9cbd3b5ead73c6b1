"""Plans tract writes load and run in ember, and plans ember writes run in tract, both
matching onnxruntime.

tract (pip `tract`, 0.23.9) cooks the ONNX model and writes its NNEF plan, in its plain
and in its extended identifier syntax. The plan then runs straight through the C
runtime and through the Python reader. What the models exercise: tract's variable
labels ("/features/features.0/Conv.bias" stored as features/features.0/Conv.bias.dat),
`i"…"` identifiers, `datum_type = "F32"`, symbols named after ONNX dims with dots
(`extension tract_symbol batch.size;`, then `batch_size` in shapes), `box` pooling,
`max(x, 0)` relus, `tract_core_downsample` (resnet50's strided 1x1 convolutions).

Of the light zoo, tract 0.23.9 itself fails to write bvlc_alexnet, inception_v1 and
zfnet512 ("Translating model to AST"), so they are not here. The other way, tract runs
ember's plans of the light zoo (ember's extension ops — ember_lstm, ember_scan, ember_if,
… — are unknown to tract, so plans holding them are not for tract).
"""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
import tract
from onnx import TensorProto, helper

import ember
from zoo import light_model_input, randomized_light_model

ROOT = __file__.rsplit("/tests/", 1)[0]


def tract_plan(onnx_path, directory, extended):
    model = tract.onnx().load(str(onnx_path)).into_model()
    writer = tract.nnef()
    if extended:
        writer = writer.with_extended_identifier_syntax()
    path = str(directory / ("plan_ext" if extended else "plan"))
    writer.write_model_to_dir(model, path)
    return path


def reference(onnx_path, x):
    session = ort.InferenceSession(str(onnx_path))
    return session.run(None, {session.get_inputs()[0].name: x})[0]


def check_both_readers(plan, x, expected, atol):
    for how, runnable in (("C loader", ember.load_model(plan).into_runnable()),
                          ("Python reader", ember.nnef().load(plan).into_runnable())):
        got = runnable.run([x])[0]
        assert got.shape == expected.shape, how
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=atol, err_msg=how)


@pytest.mark.parametrize("extended", [False, True], ids=["plain", "extended"])
def test_digits_with_slash_labels(tmp_path, extended):
    onnx_path = f"{ROOT}/examples/digits.onnx"
    plan = tract_plan(onnx_path, tmp_path, extended)
    text = open(f"{plan}/graph.nnef").read()
    assert 'label = "/features/features.0/Conv.bias"' in text     # what the test is about
    x = np.random.default_rng(0).standard_normal((1, 1, 8, 8)).astype(np.float32)
    check_both_readers(plan, x, reference(onnx_path, x), 1e-5)


@pytest.mark.parametrize("extended", [False, True], ids=["plain", "extended"])
def test_dotted_symbol(tmp_path, extended):
    x_info = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch.size", 4])
    y_info = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch.size", 4])
    weights = helper.make_tensor("w", TensorProto.FLOAT, [4], [1.0, -2.0, 3.0, 0.5])
    node = helper.make_node("Mul", ["x", "w"], ["y"], name="/stem/Mul")
    graph = helper.make_graph([node], "g", [x_info], [y_info], [weights])
    onnx_path = tmp_path / "dotted.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), onnx_path)
    plan = tract_plan(onnx_path, tmp_path, extended)
    assert "extension tract_symbol batch.size;" in open(f"{plan}/graph.nnef").read()
    model = ember.load_model(plan)
    assert model.symbols == ["batch.size"]
    assert str(ember.nnef().load(plan).input_fact(0)) == "batch.size,4,f32"
    for batch in (3, 1):
        x = np.random.default_rng(batch).standard_normal((batch, 4)).astype(np.float32)
        check_both_readers(plan, x, reference(onnx_path, x), 0)


@pytest.mark.parametrize("name", ["squeezenet", "shufflenet", "inception_v2", "resnet50"])
def test_light_zoo(tmp_path, name):
    onnx_path = tmp_path / f"{name}.onnx"
    onnx.save(randomized_light_model(name, seed=0), onnx_path)
    plan = tract_plan(onnx_path, tmp_path, extended=False)
    x = light_model_input(name, seed=0)
    check_both_readers(plan, x, reference(onnx_path, x), 2e-4)


@pytest.mark.parametrize("name", ["squeezenet", "shufflenet", "inception_v2", "resnet50"])
def test_ember_plans_run_in_tract(tmp_path, name):
    onnx_path = tmp_path / f"{name}.onnx"
    onnx.save(randomized_light_model(name, seed=1), onnx_path)
    plan = tmp_path / "plan.tar"
    ember.nnef().write_model_to_tar(ember.onnx().load(str(onnx_path)).into_model(), plan)
    x = light_model_input(name, seed=1)
    got = tract.nnef().load(str(plan)).into_runnable().run([x])[0].to_numpy()
    expected = reference(onnx_path, x)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=2e-4)
