"""pad through the C runtime against numpy: every border, every datum type, pads longer
than the axis (reflect folds again, wrap repeats), empty and rank-0 inputs."""
import numpy as np
import pytest

import ember
from ember.cook.nnef import dat

RNG = np.random.default_rng(11)
NUMPY_MODE = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "wrap": "wrap"}
TYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i8": np.int8,
         "u8": np.uint8, "i32": np.int32, "i64": np.int64, "bool": np.bool_}


def run_pad(tmp_path, x, pairs, border, value):
    (tmp_path / "x.dat").write_bytes(dat.to_bytes(x))
    padding = ", ".join(f"({b}, {a})" for b, a in pairs)
    (tmp_path / "graph.nnef").write_text(
        "version 1.0;\ngraph g(i) -> (y)\n{\n"
        f"  i = external<scalar>(shape = [1]);\n"
        f'  x = variable<scalar>(label = "x", shape = {list(x.shape)});\n'
        f'  y = pad(x, padding = [{padding}], border = "{border}", value = {value});\n}}\n')
    runnable = ember.load_model(str(tmp_path)).into_runnable()
    return runnable.run([np.zeros(1, np.float32)])[0]


@pytest.mark.parametrize("border", list(NUMPY_MODE))
@pytest.mark.parametrize("type_name", list(TYPES))
def test_pad_matches_numpy(tmp_path, border, type_name):
    dtype = TYPES[type_name]
    for shape, pairs in [((3, 5), [(1, 2), (4, 0)]), ((2, 3, 4), [(0, 0), (5, 7), (2, 9)]),
                         ((1, 1, 6), [(1, 1), (0, 3), (11, 1)])]:
        x = (RNG.standard_normal(shape) * 20).astype(dtype)
        value = 1 if dtype == np.bool_ else 3
        got = run_pad(tmp_path, x, pairs, border, value)
        kwargs = {"constant_values": np.asarray(value).astype(dtype)} \
            if border == "constant" else {}
        want = np.pad(x, pairs, mode=NUMPY_MODE[border], **kwargs)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_pad_constant_of_an_empty_axis_and_refusals(tmp_path):
    x = np.zeros((0, 3), np.float32)
    got = run_pad(tmp_path, x, [(2, 1), (0, 0)], "constant", 1.5)
    np.testing.assert_array_equal(got, np.full((3, 3), 1.5, np.float32))
    with pytest.raises(ember.EmberError, match="nothing to mirror"):
        run_pad(tmp_path, x, [(2, 1), (0, 0)], "reflect", 0)
    with pytest.raises(ember.EmberError, match="negative padding"):
        run_pad(tmp_path, np.ones((2, 2), np.float32), [(-1, 0), (0, 0)], "constant", 0)
    with pytest.raises(ember.EmberError, match="border 'mirror'"):
        run_pad(tmp_path, np.ones((2, 2), np.float32), [(1, 0), (0, 0)], "mirror", 0)
