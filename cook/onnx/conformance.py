"""The ONNX backend test suite through the cooking pipeline: ONNX -> cook -> run_reference.

Sources (all from the installed onnx package):
  - the node tests, generated in memory from `onnx/backend/test/case/node` (the wheel
    does not ship their `data/node` files), each with its own rtol/atol;
  - the model directories `onnx/backend/test/data/{pytorch-converted,pytorch-operator,
    simple}/*/model.onnx` with `test_data_set_0/*.pb`, at the onnx runner's default
    tolerance (rtol 1e-3, atol 1e-7).
Each test sets the input facts from the data (concrete shapes), types and declutters the
model (`into_model`), runs `run_reference` and compares every output: same shape, same
dtype, values within `assert_allclose(rtol, atol)` (NaNs must match).

    python -m ember.cook.onnx.conformance            # print pass counts and failures
"""
import glob
import os
import re
import time
import warnings
from collections import namedtuple

import numpy as np

Case = namedtuple("Case", "name source op_type load rtol atol")
Result = namedtuple("Result", "name source op_type passed reason seconds")

DEFAULT_RTOL, DEFAULT_ATOL = 1e-3, 1e-7
DATA_DIRS = ("pytorch-converted", "pytorch-operator", "simple")

# Tests not run at all (named here so the ledger shows them): none yet.
SKIPPED = {}


def _data_root():
    import onnx
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")


def node_cases():
    """The generated node tests (about 1900), as Cases."""
    from onnx.backend.test.case import node as node_module
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            collected = node_module.collect_testcases(None)
    cases = []
    for test in collected:
        model = test.model
        op_types = sorted({n.op_type for n in model.graph.node})
        op_type = op_types[0] if len(op_types) == 1 else "+".join(op_types)
        inputs, outputs = test.data_sets[0] if test.data_sets else ([], [])

        def load(model=model, inputs=inputs, outputs=outputs):
            return model, [_value(v) for v in inputs], [_value(v) for v in outputs]
        cases.append(Case(test.name, "node", op_type, load, test.rtol, test.atol))
    return cases


def _value(value):
    import onnx
    from onnx import numpy_helper
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (list, tuple, dict)) or value is None:
        raise ValueError("sequence, map and optional values are not supported")
    return np.asarray(value)


def _read_pb(path):
    import onnx
    from onnx import numpy_helper
    tensor = onnx.TensorProto()
    with open(path, "rb") as handle:
        tensor.ParseFromString(handle.read())
    if tensor.data_type == 0:
        raise ValueError(f"{os.path.basename(path)} is not a tensor (sequence or map)")
    return numpy_helper.to_array(tensor)


def data_cases():
    import onnx
    cases = []
    for kind in DATA_DIRS:
        for directory in sorted(glob.glob(os.path.join(_data_root(), kind, "*"))):
            model_path = os.path.join(directory, "model.onnx")
            if not os.path.exists(model_path):
                continue

            def load(directory=directory, model_path=model_path):
                model = onnx.load(model_path)
                data = os.path.join(directory, "test_data_set_0")
                inputs = [_read_pb(p) for p in sorted(glob.glob(os.path.join(data, "input_*.pb")),
                                                      key=_index)]
                outputs = [_read_pb(p) for p in sorted(glob.glob(os.path.join(data,
                                                                              "output_*.pb")),
                                                       key=_index)]
                return model, inputs, outputs
            name = f"{kind}/{os.path.basename(directory)}"
            cases.append(Case(name, kind, "model", load, DEFAULT_RTOL, DEFAULT_ATOL))
    return cases


def _index(path):
    return int(os.path.basename(path).split("_")[1].split(".")[0])


def all_cases():
    return node_cases() + data_cases()


def without_facts(text):
    """An error message without its input facts: a reason shared by many tests."""
    return re.sub(r" with inputs \[[^\]]*\]", "", str(text))


def _short(text, limit=160):
    text = " ".join(without_facts(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


ENGINES = ("reference", "c")

# The short list: what the C runtime may fail of the tests the reference passes, each
# class with its reason. A pattern matches the failure message of the run through C.
C_SHORT_LIST = (
    (r"unsupported datum_type|cannot cast to|of type bfloat16|"
     r"(quantizing to|dequantizing) (f8|f4|i4|u4|i2|u2)",
     "narrow datum types (bf16, float8, float4, int4/uint4, int2/uint2): not among the C "
     "runtime's types (f16, f32, f64, i8…i64, u8…u64, bool)"),
    (r"matmul computes in f32, got f64", "f64 matrix products: the runtime's matmul is f32 "
     "(f16 goes through it by casts; f64 would lose precision)"),
)


def c_short_list_reason(failure):
    """The short list's reason for a failure through C, or None."""
    for pattern, reason in C_SHORT_LIST:
        if re.search(pattern, failure):
            return reason
    return None



def run_case(case, engine="reference"):
    """(passed, reason) of one case through `engine`: "reference" (cook + run_reference)
    or "c" (cook + plan + the C runtime); never raises."""
    from .. import CookError, UnsupportedOp
    from ..errors import ShapeError
    if case.name in SKIPPED:
        return False, f"skipped: {SKIPPED[case.name]}"
    try:
        model, inputs, expected = case.load()
    except Exception as error:               # noqa: BLE001 (a ledger records everything)
        return False, f"test data: {_short(error)}"
    if any(np.asarray(v).dtype.kind in "OSU" for v in list(inputs) + list(expected)):
        return False, "string tensors are not supported"
    try:
        try:
            got = _run(model, inputs, freeze=False, engine=engine)
        except (UnsupportedOp, ShapeError) as error:
            # attribute-like operands given as inputs: fixed as values, as a model
            # holding them as constants would have them (typing, or the plan, needs them;
            # sizes they decide may not broadcast with others while only symbols)
            if isinstance(error, UnsupportedOp) and "must be a constant" not in str(error) \
                    and "known only at run time" not in str(error):
                raise
            got = _run(model, inputs, freeze=True, engine=engine)
    except CookError as error:
        return False, f"{type(error).__name__}: {_short(error)}"
    except RuntimeError as error:            # ember.EmberError, from the C runtime
        if type(error).__name__ != "EmberError":
            return False, f"internal error {type(error).__name__}: {_short(error)}"
        return False, f"C runtime ({error.kind}): {_short(_no_location(error))}"
    except Exception as error:               # noqa: BLE001
        return False, f"internal error {type(error).__name__}: {_short(error)}"
    if len(got) != len(expected):
        return False, f"{len(got)} outputs, expected {len(expected)}"
    for index, (g, e) in enumerate(zip(got, expected)):
        e = np.asarray(e)
        if e.dtype.kind in "OSU":
            return False, "string tensors are not supported"
        if g.shape != e.shape:
            return False, f"output {index}: shape {list(g.shape)}, expected {list(e.shape)}"
        if g.dtype != e.dtype:
            return False, f"output {index}: dtype {g.dtype}, expected {e.dtype}"
        if e.dtype.kind == "V":                   # ml_dtypes' narrow types
            g, e = g.astype(np.float32), e.astype(np.float32)
        try:
            if e.dtype.kind in "fc":
                np.testing.assert_allclose(g, e, rtol=case.rtol, atol=case.atol)
            else:
                np.testing.assert_array_equal(g, e)
        except AssertionError:
            return False, f"output {index}: values differ"
    return True, ""


def _no_location(error):
    """A C runtime message without its plan location (the same reason in every test)."""
    return re.sub(r"^\S*graph\.nnef:\d+: ", "", str(error))


def typed_model(model, inputs, freeze=False):
    """The typed, decluttered model of a case, input facts set from its data (with
    `freeze`, the small integer inputs are fixed as values, see _run)."""
    from . import loader
    from ..datum import from_numpy
    from ..errors import FormatError
    from ..facts import InferenceFact
    im = loader.from_proto(model)
    if len(inputs) != im.input_count():
        raise FormatError(f"test data: {len(inputs)} inputs for {im.input_count()} model inputs")
    for index, value in enumerate(inputs):
        value = np.asarray(value)
        if freeze and value.ndim <= 1:
            im.set_input_value(index, value)
        else:
            im.set_input_fact(index, InferenceFact(from_numpy(value.dtype), value.shape))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return im.into_model()


def _run(model, inputs, freeze, engine="reference"):
    """ONNX -> typed, decluttered model -> run_reference (or the C runtime). With `freeze`,
    the integer vectors and the scalars (attribute-like: axes, shape, pads, k…) get their
    values fixed (`set_input_value`), as a model would have them as constants."""
    typed = typed_model(model, inputs, freeze)
    if engine == "reference":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"):
                return typed.run_reference(inputs)
    runnable = typed.into_runnable()
    return runnable.run([np.asarray(v, dtype=f.dtype) if np.asarray(v).dtype != f.dtype
                         else v for v, f in zip(inputs, typed.input_facts())])


def run_all(cases=None, progress=None, engine="reference"):
    """[Result] of every case (in order)."""
    results = []
    for case in cases if cases is not None else all_cases():
        start = time.perf_counter()
        passed, reason = run_case(case, engine)
        results.append(Result(case.name, case.source, case.op_type, passed, reason,
                              time.perf_counter() - start))
        if progress:
            progress(results[-1])
    return results


def main(argv=()):
    """--c: through the C runtime; --only REGEX: the cases whose name or op matches."""
    argv = list(argv)
    engine = "c" if "--c" in argv else "reference"
    cases = all_cases()
    if "--only" in argv:
        pattern = re.compile(argv[argv.index("--only") + 1])
        cases = [c for c in cases if pattern.search(c.name) or pattern.search(c.op_type)]
    results = run_all(cases, engine=engine)
    passed = [r for r in results if r.passed]
    print(f"{len(passed)} / {len(results)} pass ({engine})")
    for result in results:
        if not result.passed:
            print(f"{result.name}: {result.reason}")
    slow = sorted(results, key=lambda r: -r.seconds)[:10]
    print("slowest:", ", ".join(f"{r.name} {r.seconds:.2f}s" for r in slow))


if __name__ == "__main__":
    import sys
    main(sys.argv[1:])
