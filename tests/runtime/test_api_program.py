"""Runs tests/c/test_api (the public C API through the shared library) on a small plan,
and its --memory mode (the memory report, a .tar mapped by path against a buffer, a .tgz
and a directory) on a plan whose weights are mostly one 4 MB dense layer.

The program must exist: a missing binary is a failure, not a skip.
"""
import importlib.util
import io
import os
import subprocess
import tarfile

import numpy as np

import sanitized

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEST_API = os.path.join(ROOT, "build", "host", "tests", "test_api")

try:
    from ember.cook.nnef import dat
except ImportError:
    _spec = importlib.util.spec_from_file_location("dat", os.path.join(ROOT, "cook", "nnef", "dat.py"))
    dat = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(dat)

GRAPH = """version 1.0;

graph network(data_0) -> (y, total)
{
  data_0 = external<scalar>(shape = [2, 3]);
  w = variable<scalar>(label = "dense/w", shape = [3, 5]);
  b = variable<scalar>(label = "dense/b", shape = [1, 5]);
  m = matmul(data_0, w);
  s = add(m, b);
  y = relu(s);
  total = sum_reduce(y, axes = [1]);
}
"""


# A conv (packed, its small filter kept) then a dense layer of 4 MB whose weights matmul
# packs and gives back.
MEMORY_GRAPH = """version 1.0;

graph network(x) -> (y)
{
  x = external<scalar>(shape = [1, 4, 8, 8]);
  k = variable<scalar>(label = "conv/k", shape = [8, 4, 3, 3]);
  s = variable<scalar>(label = "norm/scale", shape = [1, 4, 1, 1]);
  t = variable<scalar>(label = "norm/shift", shape = [1, 4, 1, 1]);
  xs = mul(x, s);
  n = relu(add(xs, t));
  c = conv(n, k, padding = [(1, 1), (1, 1)]);
  r = relu(c);
  f = reshape(r, shape = [1, 512]);
  w = variable<scalar>(label = "dense/w", shape = [512, 2048]);
  b = variable<scalar>(label = "dense/b", shape = [1, 2048]);
  m = matmul(f, w);
  y = add(m, b);
}
"""


def plan_tar(w, b):
    return tar_of({"graph.nnef": GRAPH.encode(), "dense/w.dat": dat.to_bytes(w),
                   "dense/b.dat": dat.to_bytes(b)})


def tar_of(files, mode="w"):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode, format=tarfile.USTAR_FORMAT) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def memory_plan(tmp_path):
    """(.tar, .tgz, directory) of MEMORY_GRAPH, and the bytes of its weights."""
    rng = np.random.default_rng(11)
    weights = {"conv/k": rng.standard_normal((8, 4, 3, 3)).astype(np.float32),
               "norm/scale": rng.standard_normal((1, 4, 1, 1)).astype(np.float32),
               "norm/shift": rng.standard_normal((1, 4, 1, 1)).astype(np.float32),
               "dense/w": rng.standard_normal((512, 2048)).astype(np.float32),
               "dense/b": rng.standard_normal((1, 2048)).astype(np.float32)}
    files = {"graph.nnef": MEMORY_GRAPH.encode()}
    files.update({label + ".dat": dat.to_bytes(w) for label, w in weights.items()})
    tar, tgz, directory = tmp_path / "big.tar", tmp_path / "big.tgz", tmp_path / "big"
    tar.write_bytes(tar_of(files))
    tgz.write_bytes(tar_of(files, "w:gz"))
    for name, data in files.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_bytes(data)
    return tar, tgz, directory, sum(w.nbytes for w in weights.values())


def test_api_program(tmp_path):
    assert os.path.exists(TEST_API), f"{TEST_API} is missing: run scons"
    _run(TEST_API, tmp_path)


def _run(program, tmp_path):
    rng = np.random.default_rng(7)
    w = rng.standard_normal((3, 5)).astype(np.float32)
    b = rng.standard_normal((1, 5)).astype(np.float32)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    y = np.maximum(x @ w + b, 0)
    total = y.sum(axis=1, keepdims=True)
    plan = tmp_path / "plan.tar"
    plan.write_bytes(plan_tar(w, b))
    values = [repr(float(v)) for v in x.ravel()] + ["--"] + \
             [repr(float(v)) for v in np.concatenate([y.ravel(), total.ravel()])]
    result = subprocess.run([program, str(plan)] + values, capture_output=True, text=True,
                            timeout=60)
    print(result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 failed" in result.stdout, result.stdout


def test_api_program_memory(tmp_path):
    assert os.path.exists(TEST_API), f"{TEST_API} is missing: run scons"
    _run_memory(TEST_API, tmp_path)


def _run_memory(program, tmp_path):
    tar, tgz, directory, weight_bytes = memory_plan(tmp_path)
    result = subprocess.run([program, "--memory", str(tar), str(tgz), str(directory),
                             str(weight_bytes)], capture_output=True, text=True, timeout=60)
    print(result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 failed" in result.stdout, result.stdout


def test_memory_report_from_python(tmp_path):
    """runnable.memory(): the same report through the binding, for a .tar by path (the
    packed weights' pages given back) and for its bytes (a copy, all resident)."""
    import ember
    tar, _tgz, _directory, weight_bytes = memory_plan(tmp_path)
    by_path = ember.load_model(str(tar)).into_runnable()
    by_bytes = ember.load_model(tar.read_bytes()).into_runnable()
    x = np.random.default_rng(3).standard_normal((1, 4, 8, 8)).astype(np.float32)
    assert np.array_equal(by_path.run([x])[0], by_bytes.run([x])[0])
    mapped, copied = by_path.memory(), by_bytes.memory()
    assert set(mapped) == {"constant_bytes", "constant_resident_bytes", "packed_bytes",
                           "arena_bytes"}
    assert mapped["constant_bytes"] == copied["constant_bytes"] == weight_bytes
    assert mapped["constant_resident_bytes"] == 0, mapped  # test_api.c says why
    assert copied["constant_resident_bytes"] == weight_bytes, copied
    assert mapped["packed_bytes"] == copied["packed_bytes"] >= 512 * 2048 * 4
    assert by_path.memory_bytes == mapped["packed_bytes"] + mapped["arena_bytes"]


def test_api_program_sanitized(tmp_path):
    """The same program under AddressSanitizer + UBSan: a use after free (the model freed
    before its runnable) or a leak would abort it."""
    exe, log = sanitized.build(os.path.join("tests", "test_api"))
    assert exe is not None, log
    _run(exe, tmp_path)
    _run_memory(exe, tmp_path)
