"""The Python plan reader on malformed plans: an ember error (CookError), never a raw
zlib/Unicode/Recursion/numpy exception, and no wrapped sizes in .dat headers."""
import gzip
import io
import struct
import tarfile

import numpy as np
import pytest

from ember.cook import CookError
from ember.cook.nnef import archive, dat, load

GRAPH = b"""version 1.0;
graph network(x) -> (y)
{
  x = external<scalar>(shape = [1, 4]);
  w = variable<scalar>(label = "w", shape = [4, 2]);
  y = matmul(x, w);
}
"""


def plan_files():
    return {"graph.nnef": GRAPH, "w.dat": dat.to_bytes(np.ones((4, 2), np.float32))}


def tar_bytes(files):
    return archive.to_tar_bytes(files)


def expect_ember_error(blob):
    try:
        load(blob)
    except CookError:
        pass


def test_the_valid_plan_loads():
    model = load(tar_bytes(plan_files()))
    assert [str(f) for f in model.output_facts()] == ["1,2,f32"]


@pytest.mark.parametrize("seed", range(4))
def test_mutated_archives_raise_ember_errors(seed):
    rng = np.random.default_rng(seed)
    for base in (tar_bytes(plan_files()), gzip.compress(tar_bytes(plan_files()))):
        for _ in range(150):
            blob = bytearray(base)
            for _ in range(int(rng.integers(1, 8))):
                blob[int(rng.integers(len(blob)))] = int(rng.integers(256))
            if rng.random() < 0.2:
                blob = blob[:int(rng.integers(len(blob)))]
            expect_ember_error(bytes(blob))


@pytest.mark.parametrize("graph", [
    b"\xff\xfe not utf-8",
    b"version 1.0; graph g(x) -> (y) { x = external(shape = [1]); y = " + b"(" * 5000
    + b"x" + b")" * 5000 + b"; }",
    b"version 1.0; graph g(x) -> (y) { x = external(shape = [-3]); y = relu(x); }",
    b"version 1.0; graph g(x) -> (y) { x = external(shape = [1, 2]); "
    b"y = reshape(x, shape = [7]); }",
])
def test_malformed_graphs_raise_ember_errors(graph):
    with pytest.raises(CookError):
        load(tar_bytes({"graph.nnef": graph}))


def test_dat_extents_whose_product_wraps_are_refused():
    # 2^32 × 2^32 items wrap to 0 in 64-bit arithmetic: the header must not pass as empty
    header = struct.pack("<2sBBII8IIHH", dat.MAGIC, 1, 0, 0, 2, 2 ** 32 - 1, 2 ** 32 - 1,
                         0, 0, 0, 0, 0, 0, 32, dat.FLOAT, 0)
    blob = header + b"\0" * (dat.HEADER_SIZE - len(header))
    with pytest.raises(dat.DatError, match="needs"):
        dat.from_bytes(blob, "huge.dat")
    assert issubclass(dat.DatError, CookError)
