"""Attention and RotaryEmbedding through the product path: ONNX -> cook -> plan -> C.

Neither has a plan op: the writer lowers both to plan ops (matmul, softmax, select, …;
cook/ops/attention.py). Each case is a tiny ONNX model (onnx.helper) whose C outputs
are compared with onnxruntime where it implements the case, else with ONNX's reference
evaluator, and always with the cook's numpy reference.
"""
import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

pytest.importorskip("ember.runtime")

from ember.cook import nnef as cook_nnef  # noqa: E402
from ember.cook import onnx as cook_onnx  # noqa: E402
from ember.cook.errors import CookError  # noqa: E402

ort = pytest.importorskip("onnxruntime")

RNG = np.random.default_rng(20261124)
ATTENTION_INPUTS = ("Q", "K", "V", "attn_mask", "past_key", "past_value", "nonpad_kv_seqlen")
ATTENTION_OUTPUTS = ("Y", "present_key", "present_value", "qk")
TYPES = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16,
         np.float64: TensorProto.DOUBLE,
         np.bool_: TensorProto.BOOL, np.int64: TensorProto.INT64}


def make_model(op_type, inputs, slots, outputs, attrs, opset=23, shapes=None):
    """One `op_type` node reading `inputs` ({name: array}) at the input `slots` it names
    (missing optional slots are left empty); `shapes` overrides declared shapes (symbols)."""
    names = [name if name in inputs else "" for name in slots]
    while names and not names[-1]:
        names.pop()
    infos = [helper.make_tensor_value_info(name, TYPES[value.dtype.type],
                                           (shapes or {}).get(name, list(value.shape)))
             for name, value in inputs.items()]
    node = helper.make_node(op_type, names, list(outputs), **attrs)
    graph = helper.make_graph([node], op_type.lower(), infos,
                              [helper.make_empty_tensor_value_info(o) for o in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model


def attention_model(inputs, outputs=1, opset=23, shapes=None, **attrs):
    return make_model("Attention", inputs, ATTENTION_INPUTS, ATTENTION_OUTPUTS[:outputs],
                      attrs, opset, shapes)


def rotary_model(inputs, shapes=None, **attrs):
    return make_model("RotaryEmbedding", inputs, ("X", "cos_cache", "sin_cache",
                                                  "position_ids"), ["Y"], attrs, 23, shapes)


def tolerance(dtype):
    return dict(rtol=2e-3, atol=2e-3) if dtype == np.float16 else dict(rtol=1e-5, atol=1e-5)


def check(model, inputs, expected="ort", runnable=None, typed=None):
    """Run `model` through C; compare with onnxruntime ("ort") or ONNX's reference
    evaluator ("onnx"), and with the cook's numpy reference. Returns the C outputs."""
    typed = typed or cook_onnx.load(model).into_model()
    runnable = runnable or typed.into_runnable()
    values = list(inputs.values())
    got = runnable.run(values)
    if expected == "ort":
        session = ort.InferenceSession(model.SerializeToString(),
                                       providers=["CPUExecutionProvider"])
        want = session.run(None, inputs)
    else:
        with np.errstate(all="ignore"):
            want = ReferenceEvaluator(model).run(None, inputs)
    reference = typed.run_reference(values)
    assert len(got) == len(want) == len(reference)
    for index, (g, w, r) in enumerate(zip(got, want, reference)):
        assert g.dtype == w.dtype and g.shape == w.shape, (index, g.dtype, g.shape, w.shape)
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64),
                                   err_msg=f"output {index} vs {expected}", **tolerance(g.dtype))
        np.testing.assert_allclose(g.astype(np.float64), r.astype(np.float64),
                                   err_msg=f"output {index} vs cook", **tolerance(g.dtype))
    return got


def plan_text(typed):
    import io
    import tarfile
    with tarfile.open(fileobj=io.BytesIO(cook_nnef.to_tar_bytes(typed))) as tar:
        return tar.extractfile("graph.nnef").read().decode()


def normal(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def qkv(batch, heads, kv_heads, seq_q, seq_kv, size, size_v=None, rank=4, dtype=np.float32):
    size_v = size_v or size
    if rank == 4:
        return {"Q": normal(batch, heads, seq_q, size, dtype=dtype),
                "K": normal(batch, kv_heads, seq_kv, size, dtype=dtype),
                "V": normal(batch, kv_heads, seq_kv, size_v, dtype=dtype)}
    return {"Q": normal(batch, seq_q, heads * size, dtype=dtype),
            "K": normal(batch, seq_kv, kv_heads * size, dtype=dtype),
            "V": normal(batch, seq_kv, kv_heads * size_v, dtype=dtype)}


# ----------------------------------------------------------------------- Attention

@pytest.mark.parametrize("rank", [3, 4])
@pytest.mark.parametrize("heads, kv_heads", [(3, 3), (6, 2), (4, 1)])
def test_attention_heads_and_groups(rank, heads, kv_heads):
    inputs = qkv(2, heads, kv_heads, 5, 7, 6, size_v=3, rank=rank)
    attrs = dict(q_num_heads=heads, kv_num_heads=kv_heads) if rank == 3 else {}
    check(attention_model(inputs, **attrs), inputs)


def test_gqa_broadcasts_heads_without_copies():
    inputs = qkv(1, 6, 2, 4, 5, 8)
    model = attention_model(inputs, is_causal=1)
    typed = cook_onnx.load(model).into_model()
    text = plan_text(typed)
    assert "tile(" not in text and "tract_core_broadcast(" not in text
    assert text.count("matmul(") == 2
    check(model, inputs, typed=typed)


@pytest.mark.parametrize("causal", [0, 1])
@pytest.mark.parametrize("scale, softcap", [(None, None), (0.3, None), (None, 2.5),
                                            (0.7, 0.9)])
def test_attention_causal_scale_softcap(causal, scale, softcap):
    inputs = qkv(2, 4, 2, 6, 6, 5, rank=3)
    attrs = dict(q_num_heads=4, kv_num_heads=2, is_causal=causal)
    if scale is not None:
        attrs["scale"] = scale
    if softcap is not None:
        attrs["softcap"] = softcap
    check(attention_model(inputs, **attrs), inputs)


@pytest.mark.parametrize("shape", [(5, 7), (1, 5, 7), (2, 3, 5, 7), (2, 1, 1, 7)])
@pytest.mark.parametrize("kind", ["bool", "float"])
def test_attention_masks_broadcast(shape, kind):
    inputs = qkv(2, 3, 3, 5, 7, 4)
    if kind == "bool":
        mask = RNG.random(shape) < 0.7
        mask[..., 0] = True                       # keep a key in every row for ort
    else:
        mask = normal(*shape)
    inputs["attn_mask"] = mask
    # onnxruntime wants the mask's query dim in full
    check(attention_model(inputs), inputs, expected="onnx" if shape[-2] == 1 else "ort")


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_attention_short_mask_masks_the_rest(kind):
    """A mask shorter than the keys masks the keys it does not cover (ONNX pads it)."""
    inputs = qkv(1, 2, 2, 3, 6, 4)
    inputs["attn_mask"] = RNG.random((3, 4)) < 0.8 if kind == "bool" else normal(3, 4)
    check(attention_model(inputs), inputs, expected="onnx")


def test_attention_fully_masked_rows_give_zeros():
    inputs = qkv(1, 2, 2, 4, 5, 3)
    mask = RNG.random((4, 5)) < 0.6
    mask[1] = False
    mask[3] = [True, False, False, False, False]
    inputs["attn_mask"] = mask
    got = check(attention_model(inputs, outputs=4, qk_matmul_output_mode=3), inputs,
                expected="onnx")
    assert not np.isnan(got[0]).any()
    np.testing.assert_array_equal(got[0][:, :, 1], 0)
    np.testing.assert_array_equal(got[3][:, :, 1], 0)


@pytest.mark.parametrize("rank", [3, 4])
@pytest.mark.parametrize("causal", [0, 1])
def test_attention_past_and_present(rank, causal):
    inputs = qkv(2, 4, 2, 3, 3, 5, size_v=7, rank=rank)
    inputs["past_key"] = normal(2, 2, 4, 5)
    inputs["past_value"] = normal(2, 2, 4, 7)
    attrs = dict(q_num_heads=4, kv_num_heads=2) if rank == 3 else {}
    got = check(attention_model(inputs, outputs=4, is_causal=causal, **attrs), inputs)
    assert got[1].shape == (2, 2, 7, 5) and got[2].shape == (2, 2, 7, 7)
    assert got[3].shape == (2, 4, 3, 7)


def test_attention_present_of_4d_inputs_is_the_input():
    inputs = qkv(1, 2, 2, 3, 4, 5)
    got = check(attention_model(inputs, outputs=3), inputs)
    np.testing.assert_array_equal(got[1], inputs["K"])
    np.testing.assert_array_equal(got[2], inputs["V"])


@pytest.mark.parametrize("mode", [0, 1, 2, 3])
def test_attention_qk_matmul_output_modes(mode):
    inputs = qkv(1, 4, 2, 3, 5, 4)
    inputs["attn_mask"] = normal(3, 5)
    check(attention_model(inputs, outputs=4, qk_matmul_output_mode=mode, softcap=3.0,
                          is_causal=1), inputs, expected="onnx")


@pytest.mark.parametrize("causal", [0, 1])
def test_attention_fp16(causal):
    inputs = qkv(2, 4, 2, 5, 6, 8, rank=4, dtype=np.float16)
    inputs["attn_mask"] = normal(5, 6, dtype=np.float16)
    got = check(attention_model(inputs, is_causal=causal), inputs)
    assert got[0].dtype == np.float16


def test_attention_softmax_precision_fp16():
    inputs = qkv(1, 2, 2, 3, 4, 8, dtype=np.float16)
    check(attention_model(inputs, outputs=4, opset=24, qk_matmul_output_mode=3,
                          softmax_precision=TensorProto.FLOAT), inputs, expected="onnx")


@pytest.mark.parametrize("causal", [0, 1])
def test_attention_nonpad_kv_seqlen(causal):
    inputs = qkv(3, 4, 2, 2, 6, 4)
    inputs["nonpad_kv_seqlen"] = np.array([6, 3, 1], np.int64)
    check(attention_model(inputs, opset=24, is_causal=causal), inputs, expected="onnx")


def test_attention_symbolic_lengths_gqa_past_causal():
    """One runnable, T (new tokens) and P (cached tokens) symbolic, run at several
    lengths: the causal bias is built in the plan from iotas of length P + T."""
    inputs = qkv(1, 4, 2, 3, 3, 8, size_v=6, rank=3)
    inputs["past_key"] = normal(1, 2, 5, 8)
    inputs["past_value"] = normal(1, 2, 5, 6)
    model = attention_model(inputs, outputs=4, q_num_heads=4, kv_num_heads=2, is_causal=1,
                            shapes={"Q": [1, "T", 32], "K": [1, "T", 16], "V": [1, "T", 12],
                                    "past_key": [1, 2, "P", 8],
                                    "past_value": [1, 2, "P", 6]})
    typed = cook_onnx.load(model).into_model()
    runnable = typed.into_runnable()
    assert sorted(runnable.model.symbols) == ["P", "T"]
    for t, p in [(3, 5), (7, 2), (1, 0), (3, 5)]:
        given = qkv(1, 4, 2, t, t, 8, size_v=6, rank=3)
        given["past_key"] = normal(1, 2, p, 8)
        given["past_value"] = normal(1, 2, p, 6)
        got = check(model, given, runnable=runnable, typed=typed)
        assert got[0].shape == (1, t, 24) and got[3].shape == (1, 4, t, p + t)


@pytest.mark.parametrize("attrs", [dict(left_window_size=2), dict(right_window_size=1),
                                   dict(left_window_size=1, right_window_size=0, is_causal=1)])
def test_attention_symbolic_windows_and_nonpad(attrs):
    """Sliding windows and nonpad_kv_seqlen over symbolic lengths (opset 25 windows)."""
    inputs = qkv(2, 2, 2, 3, 5, 4)
    inputs["nonpad_kv_seqlen"] = np.array([5, 4], np.int64)
    model = attention_model(inputs, opset=25, shapes={
        "Q": [2, 2, "S", 4], "K": [2, 2, "T", 4], "V": [2, 2, "T", 4]}, **attrs)
    typed = cook_onnx.load(model).into_model()
    runnable = typed.into_runnable()
    for s, t in [(3, 5), (2, 8), (3, 5)]:
        given = qkv(2, 2, 2, s, t, 4)
        given["nonpad_kv_seqlen"] = np.array([t, max(t - 2, s)], np.int64)
        check(model, given, runnable=runnable, typed=typed, expected="onnx")


def test_attention_bad_heads_are_refused():
    inputs = qkv(1, 3, 3, 2, 2, 4, rank=3)                 # hidden 12
    with pytest.raises(CookError, match="hidden sizes"):
        cook_onnx.load(attention_model(inputs, q_num_heads=5, kv_num_heads=3)).into_model()
    inputs = qkv(1, 3, 2, 2, 2, 4)                         # 3 heads over 2
    with pytest.raises(CookError, match="group"):
        cook_onnx.load(attention_model(inputs)).into_model()


# ----------------------------------------------------------------- RotaryEmbedding

def caches(positions, half, dtype=np.float32):
    angles = RNG.random((positions, half)) * 6.0
    return np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)


@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("rotary_dim", [0, 4])
@pytest.mark.parametrize("rank", [3, 4])
def test_rotary_with_positions(interleaved, rotary_dim, rank):
    batch, heads, seq, size = 2, 3, 5, 10
    x = normal(batch, heads, seq, size) if rank == 4 else normal(batch, seq, heads * size)
    cos, sin = caches(16, (rotary_dim or size) // 2)
    inputs = {"X": x, "cos_cache": cos, "sin_cache": sin,
              "position_ids": RNG.integers(0, 16, (batch, seq)).astype(np.int64)}
    attrs = dict(interleaved=interleaved, rotary_embedding_dim=rotary_dim)
    if rank == 3:
        attrs["num_heads"] = heads
    check(rotary_model(inputs, **attrs), inputs)


@pytest.mark.parametrize("interleaved", [0, 1])
def test_rotary_without_positions(interleaved):
    batch, heads, seq, size = 2, 2, 4, 6
    x = normal(batch, heads, seq, size)
    angles = RNG.random((batch, seq, size // 2)) * 6.0
    inputs = {"X": x, "cos_cache": np.cos(angles).astype(np.float32),
              "sin_cache": np.sin(angles).astype(np.float32)}
    check(rotary_model(inputs, interleaved=interleaved), inputs)


def test_rotary_fp16():
    x = normal(1, 2, 3, 8, dtype=np.float16)
    cos, sin = caches(8, 4, np.float16)
    inputs = {"X": x, "cos_cache": cos, "sin_cache": sin,
              "position_ids": np.array([[0, 5, 7]], np.int64)}
    got = check(rotary_model(inputs, interleaved=1), inputs)
    assert got[0].dtype == np.float16


def test_rotary_symbolic_sequence():
    cos, sin = caches(32, 3)
    inputs = {"X": normal(1, 4, 18), "cos_cache": cos, "sin_cache": sin,
              "position_ids": np.arange(4, dtype=np.int64)[None]}
    model = rotary_model(inputs, num_heads=3, shapes={"X": [1, "S", 18],
                                                      "position_ids": [1, "S"]})
    typed = cook_onnx.load(model).into_model()
    runnable = typed.into_runnable()
    for s in (4, 9, 1):
        given = dict(inputs, X=normal(1, s, 18),
                     position_ids=RNG.integers(0, 32, (1, s)).astype(np.int64))
        got = check(model, given, runnable=runnable, typed=typed)
        assert got[0].shape == (1, s, 18)


# ------------------------------------------ softmax in f64 and f16 (softmax_precision)

@pytest.mark.parametrize("dtype", [np.float64, np.float16])
@pytest.mark.parametrize("axis", [1, -1])
def test_softmax_f64_and_f16(dtype, axis):
    """ONNX's Attention function body runs its softmax in softmax_precision's type."""
    x = normal(3, 5, 7, dtype=dtype)
    x[0, 1] = -np.inf
    x[1, 2, 3] = -np.inf
    model = make_model("Softmax", {"x": x}, ("x",), ["y"], dict(axis=axis), opset=13)
    got, = cook_onnx.load(model).into_model().into_runnable().run([x])
    wide = x.astype(np.float64)
    with np.errstate(invalid="ignore"):           # the all -inf row gives NaNs
        e = np.exp(wide - wide.max(axis=axis, keepdims=True))
        want = (e / e.sum(axis=axis, keepdims=True)).astype(dtype)
    assert got.dtype == dtype
    rtol = 1e-3 if dtype == np.float16 else 1e-13
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0)


def test_rotary_bad_caches_are_refused():
    cos, sin = caches(8, 3)
    inputs = {"X": normal(1, 2, 3, 8), "cos_cache": cos, "sin_cache": sin,
              "position_ids": np.zeros((1, 3), np.int64)}
    with pytest.raises(CookError, match="features"):           # head 8 wants 4 features
        cook_onnx.load(rotary_model(inputs)).into_model()
    inputs["X"] = normal(1, 3, 14)
    with pytest.raises(CookError, match="multiple of 4 heads"):
        cook_onnx.load(rotary_model(inputs, num_heads=4)).into_model()


def test_long_causal_mask_is_built_at_run_time():
    """A causal mask over long known lengths is computed from iotas in the plan, not
    stored as a [S, T] constant."""
    inputs = qkv(1, 1, 1, 300, 300, 2)
    model = attention_model(inputs, is_causal=1)
    typed = cook_onnx.load(model).into_model()
    plan = cook_nnef.to_tar_bytes(typed)
    assert len(plan) < 40_000 and "le(" in plan_text(typed)
    check(model, inputs, typed=typed)
    small = qkv(1, 1, 1, 30, 30, 2)
    assert "le(" not in plan_text(cook_onnx.load(attention_model(small, is_causal=1))
                                  .into_model())
