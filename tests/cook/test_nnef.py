"""The plan writer and reader: the text follows docs/plan-format.md, every container
round-trips to identical outputs, and tract's spellings read back."""
import io
import re
import tarfile

import numpy as np
import pytest

from cook_testing import make_model, node, rand
from ember.cook import CookError, FormatError
from ember.cook import nnef as cook_nnef
from ember.cook import onnx as cook_onnx
from ember.cook.nnef import archive, dat
from ember.cook.nnef.syntax import parse

IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def mixed_model():
    """A small net touching most ops, with awkward tensor names."""
    inits = {"conv.w": rand(6, 3, 3, 3, seed=1), "conv.b": rand(6, seed=2),
             "dw.w": rand(6, 1, 3, 3, seed=3), "fc/w": rand(6 * 4 * 4, 5, seed=4),
             "fc/b": rand(5, seed=5), "lo": np.array(0.0, np.float32),
             "hi": np.array(6.0, np.float32), "shape": np.array([1, -1], np.int64),
             "scale": rand(1, 6, 1, 1, seed=6)}
    nodes = [
        node("Conv", ["in:0", "conv.w", "conv.b"], ["c1"], pads=[1, 1, 1, 1]),
        node("Clip", ["c1", "lo", "hi"], ["r1"]),
        node("Conv", ["r1", "dw.w"], ["c2"], group=6, strides=[2, 2], pads=[1, 1, 1, 1]),
        node("Mul", ["c2", "scale"], ["m"]),
        node("Relu", ["m"], ["r2"]),
        node("AveragePool", ["r2"], ["p"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
             count_include_pad=1),
        node("MaxPool", ["p"], ["q"], kernel_shape=[2, 2], strides=[1, 1], pads=[0, 0, 1, 1]),
        node("Reshape", ["q", "shape"], ["flat"]),
        node("Gemm", ["flat", "fc/w", "fc/b"], ["logits"]),
        node("Softmax", ["logits"], ["out/prob"], axis=1),
    ]
    x = rand(1, 3, 8, 8)
    return make_model(nodes, {"in:0": x}, ["out/prob", "logits"], inits), x


def test_plan_text_follows_the_format():
    onnx_model, _ = mixed_model()
    model = cook_onnx.load(onnx_model).into_model()
    files = cook_nnef.writer.plan_files(model)
    text = files["graph.nnef"].decode()
    assert text.startswith("version 1.0;\n")
    assert "extension tract_registry tract_core;" in text
    assert '("ember.plan_version", 1)' in text and '("producer", "ember-cook ' in text
    assert '("ember.input_names", ["in:0"])' in text
    assert '("ember.output_names", ["out/prob", "logits"])' in text
    assert "graph network(in_0) -> (out_prob, logits)" in text
    assert "in_0 = external<scalar>(shape = [1, 3, 8, 8]);" in text
    assert "clamp(" in text and ", 0.0, 6.0)" in text
    assert "relu(" in text
    assert "padding = []" not in text
    assert re.search(r"conv_b = variable<scalar>\(label = \"conv_b\", shape = \[6\]\)", text)
    assert 'avg_pool(' in text and 'border = "constant"' in text
    assert re.search(r"max_pool\(\w+, size = \[1, 1, 2, 2\], padding = \[\(0, 0\), \(0, 0\), "
                     r"\(0, 1\), \(0, 1\)\], stride = \[1, 1, 1, 1\], dilation = "
                     r"\[1, 1, 1, 1\], border = \"ignore\"\)", text)
    doc = parse(text)
    for lhs, rhs in doc.body:
        assert IDENT.match(lhs), lhs
        if getattr(rhs, "op", None) == "variable":
            assert rhs.kwargs["label"] == lhs and lhs + ".dat" in files
    assert set(files) == {"graph.nnef"} | {lhs + ".dat" for lhs, rhs in doc.body
                                           if getattr(rhs, "op", None) == "variable"}


def test_binary_operands_have_equal_rank():
    # a rank-1 bias added to a rank-3 tensor, a rank-2 variable added to a rank-3 one
    x, y = rand(2, 3, 4), rand(3, 4, seed=1)
    onnx_model = make_model([node("Add", ["x", "b"], ["s"]), node("Add", ["s", "y"], ["z"])],
                            {"x": x, "y": y}, ["z"], {"b": rand(4, seed=2)})
    model = cook_onnx.load(onnx_model).into_model()
    text = cook_nnef.writer.plan_files(model)["graph.nnef"].decode()
    assert 'shape = [1, 1, 4]' in text
    assert "unsqueeze(y, axes = [0])" in text
    reread = cook_nnef.load(cook_nnef.to_tar_bytes(model))
    np.testing.assert_array_equal(reread.run_reference([x, y])[0], model.run_reference([x, y])[0])


@pytest.mark.parametrize("container", ["dir", "tar", "tgz", "bytes"])
def test_round_trip(container, tmp_path):
    onnx_model, x = mixed_model()
    model = cook_onnx.load(onnx_model).into_model()
    if container == "dir":
        cook_nnef.write_dir(model, tmp_path / "plan")
        source = tmp_path / "plan"
    elif container == "tar":
        cook_nnef.write_tar(model, tmp_path / "plan.nnef.tar")
        source = tmp_path / "plan.nnef.tar"
    elif container == "tgz":
        cook_nnef.write_tar_gz(model, tmp_path / "plan.nnef.tgz")
        source = tmp_path / "plan.nnef.tgz"
    else:
        source = cook_nnef.to_tar_bytes(model)
    reread = cook_nnef.load(source)
    assert reread.input_names == ["in:0"]
    assert reread.output_names == ["out/prob", "logits"]
    assert [str(f) for f in reread.input_facts()] == ["1,3,8,8,f32"]
    assert reread.op_types() == model.op_types()
    for got, expected in zip(reread.run_reference([x]), model.run_reference([x])):
        np.testing.assert_array_equal(got, expected)
    # and writing the reread model gives the same plan
    assert cook_nnef.to_tar_bytes(reread) == cook_nnef.to_tar_bytes(model)


def test_an_unchanged_plan_goes_to_the_c_runtime_as_it_is(tmp_path, monkeypatch):
    """into_runnable of a model read from an ember plan loads that plan; once the model
    changes (here: a symbol bound), it writes the changed model."""
    onnx_model, x = mixed_model()
    cook_nnef.write_tar(cook_onnx.load(onnx_model).into_model(), tmp_path / "plan.tar")
    reread = cook_nnef.load(tmp_path / "plan.tar")
    written = []
    original = cook_nnef.to_tar_bytes
    monkeypatch.setattr(cook_nnef, "to_tar_bytes", lambda m: written.append(m) or original(m))
    expected = reread.run_reference([x])
    for got, want in zip(reread.into_runnable().run([x]), expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert written == []
    reread.graph.output_names[1] = "renamed"       # a change through the graph
    reread.into_runnable()
    assert len(written) == 1


def test_plans_are_deterministic_ustar():
    onnx_model, _ = mixed_model()
    model = cook_onnx.load(onnx_model).into_model()
    blob = cook_nnef.to_tar_bytes(model)
    assert blob == cook_nnef.to_tar_bytes(model)
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        names = tar.getnames()
        assert names[0] == "graph.nnef"
        assert all(m.isfile() for m in tar.getmembers())


def test_shared_weight_is_written_once():
    w = rand(4, 4, seed=1)
    onnx_model = make_model([node("MatMul", ["x", "w"], ["a"]), node("MatMul", ["a", "w"], ["b"]),
                             node("Add", ["b", "w"], ["y"])], {"x": rand(4, 4)}, ["y"], {"w": w})
    model = cook_onnx.load(onnx_model).into_model()
    files = cook_nnef.writer.plan_files(model)
    assert [f for f in files if f.endswith(".dat")] == ["w.dat"]
    np.testing.assert_array_equal(dat.from_bytes(files["w.dat"]), w)


def test_output_that_is_an_input_and_repeated_outputs():
    x = rand(2, 3)
    onnx_model = make_model([node("Identity", ["x"], ["same"]), node("Relu", ["x"], ["r"])],
                            {"x": x}, ["same", "r"])
    model = cook_onnx.load(onnx_model).into_model()
    text = cook_nnef.writer.plan_files(model)["graph.nnef"].decode()
    assert "same = copy(x);" in text
    reread = cook_nnef.load(cook_nnef.to_tar_bytes(model))
    assert reread.output_names == ["same", "r"]
    got = reread.run_reference([x])
    np.testing.assert_array_equal(got[0], x)
    np.testing.assert_array_equal(got[1], np.maximum(x, 0))


def tract_style_plan():
    """The spellings tract writes (0.23): external without type, max with a literal for
    relu, box for average pooling, scalar and rank-1 conv biases, literals bound to names,
    reshape with axis_start/axis_count, slice, squeeze, a tract_core_cast property."""
    text = """version 1.0;

extension tract_registry tract_core;

fragment tract_core_properties(
) -> (properties: (string, tensor<scalar>)[])
{
  properties = [("onnx.ir_version", tract_core_cast(3, to = "i64")), ("tract_nnef_ser_version", "0.23.9")];
}

graph network(data_0) -> (out) {
  data_0 = external(shape = [1, 2, 6, 6]);
  w = variable<scalar>(label = "conv/w", shape = [4, 2, 3, 3]);
  b = variable<scalar>(label = "b", shape = [4]);
  n0_bias = 0.0;
  c0 = conv(data_0, w, b, dilation = [1, 1], stride = [1, 1], border = "constant", groups = 1, padding = [(1, 1), (1, 1)]);
  c1 = conv(c0, w2, n0_bias, dilation = [1, 1], stride = [2, 2], border = "constant", groups = 2, padding = [(0, 1), (0, 1)]);
  low_cst = [[[[0.0]]]];
  r = max(c1, low_cst);
  p = box(r, size = [1, 1, 3, 3], dilation = [1, 1, 1, 1], stride = [1, 1, 1, 1], border = "ignore", padding = [(0, 0), (0, 0), (1, 1), (1, 1)], normalize = true);
  m = max_pool(p, size = [1, 1, 2, 2], dilation = [1, 1, 1, 1], stride = [1, 1, 1, 1], border = "ignore", padding = [(0, 0), (0, 0), (0, 1), (0, 1)]);
  s = slice(m, axes = [2, 3], begin = [1, 0], end = [0, 2], stride = [1, 1]);
  f = reshape(s, shape = [4], axis_start = 2, axis_count = 2);
  g = sum_reduce(f, axes = [2]);
  h = squeeze(g, axes = [2]);
  k = mul(h, [[0.25]]);
  out = add(k, bias2);
}
"""
    # w2 and bias2 are declared after use in the text above: declare them first
    text = text.replace("  n0_bias = 0.0;\n", "  n0_bias = 0.0;\n  w2 = variable<scalar>("
                        "label = \"w2\", shape = [4, 2, 2, 2]);\n  bias2 = variable<scalar>("
                        "label = \"bias2\", shape = [1, 4]);\n")
    weights = {"conv/w": rand(4, 2, 3, 3, seed=1), "b": rand(4, seed=2),
               "w2": rand(4, 2, 2, 2, seed=3), "bias2": rand(1, 4, seed=4)}
    files = {"graph.nnef": text.encode()}
    files.update({k + ".dat": dat.to_bytes(v) for k, v in weights.items()})
    return files, weights


def numpy_tract_style(x, weights):
    from ember.cook.ops import AvgPool, Conv, MaxPool
    c0 = Conv([1, 1], [1, 1], [(1, 1), (1, 1)]).eval([x, weights["conv/w"], weights["b"]])[0]
    c1 = Conv([2, 2], [1, 1], [(0, 1), (0, 1)], 2).eval([c0, weights["w2"]])[0]
    r = np.maximum(c1, 0)
    p = AvgPool([3, 3], [1, 1], [(1, 1), (1, 1)], False).eval([r])[0]
    m = MaxPool([2, 2], [1, 1], [1, 1], [(0, 1), (0, 1)]).eval([p])[0]
    s = m[:, :, 1:, 0:2]
    f = s.reshape(1, 4, -1)
    h = f.sum(axis=2)
    return h * 0.25 + weights["bias2"]


def test_reads_tract_spellings():
    files, weights = tract_style_plan()
    model = cook_nnef.load(archive.to_tar_bytes(files))
    assert model.input_names == ["data_0"] and model.output_names == ["out"]
    ops = model.op_types()
    assert "Relu" in ops and "AvgPool" in ops and "Max" not in ops
    x = rand(1, 2, 6, 6, seed=9)
    np.testing.assert_allclose(model.run_reference([x])[0], numpy_tract_style(x, weights),
                               rtol=1e-5, atol=1e-6)
    assert model.properties["tract_nnef_ser_version"] == "0.23.9"


def test_reader_errors_name_the_problem():
    files, _ = tract_style_plan()
    broken = dict(files)
    del broken["b.dat"]
    with pytest.raises(FormatError, match="b.dat"):
        cook_nnef.load(archive.to_tar_bytes(broken))
    unknown = dict(files)
    unknown["graph.nnef"] = files["graph.nnef"].replace(b"squeeze(", b"frobnicate(")
    with pytest.raises(CookError, match="frobnicate"):
        cook_nnef.load(archive.to_tar_bytes(unknown))
    bad = dict(files)
    bad["graph.nnef"] = files["graph.nnef"].replace(b"shape = [4, 2, 3, 3]", b"shape = [4, 2]")
    with pytest.raises(FormatError, match="declares shape"):
        cook_nnef.load(archive.to_tar_bytes(bad))
    # syntax errors come from the C parser both readers share: file, line and column
    with pytest.raises(FormatError, match=r"graph\.nnef:2:25: expected an expression"):
        cook_nnef.load(archive.to_tar_bytes({"graph.nnef": b"version 1.0;\ngraph g(x) -> (y) { y = ; }"}))
    with pytest.raises(FormatError):
        cook_nnef.load(b"not a tar")


def test_integer_and_boolean_io(tmp_path):
    from ember.cook.ir import Graph
    from ember.cook.model import TypedModel
    from ember.cook.facts import Fact
    from ember.cook.ops import Binary, Concat
    graph = Graph()
    a = graph.add_source("a", Fact("i64", (2, 3)))
    k = graph.add_const("k", np.arange(3, dtype=np.int64))
    s = graph.wire1("s", Binary("add"), [a, k])
    c = graph.wire1("c", Concat(0), [s, a])
    graph.set_output(c, "c")
    model = TypedModel(graph).declutter()
    text = cook_nnef.writer.plan_files(model)["graph.nnef"].decode()
    assert "a = external<integer>(shape = [2, 3]);" in text
    assert "variable<integer>" in text
    reread = cook_nnef.load(cook_nnef.to_tar_bytes(model))
    x = np.arange(6, dtype=np.int64).reshape(2, 3)
    np.testing.assert_array_equal(reread.run_reference([x])[0], model.run_reference([x])[0])
    assert reread.input_facts()[0].datum_type == "i64"


@pytest.mark.parametrize("value,text", [(0.0, "0.0"), (6.0, "6.0"), (1e-05, "1.0e-05"),
                                        (-2.5, "-2.5"), (1e20, "1.0e+20"), (True, "true"),
                                        (3, "3"), ("a\"b", '"a\\"b"'),
                                        ([(1, 2), (0, 0)], "[(1, 2), (0, 0)]")])
def test_literal_format(value, text):
    from ember.cook.nnef.syntax import fmt
    assert fmt(value) == text
