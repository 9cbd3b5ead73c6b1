"""The C runtime from Python: load a plan, prepare it, run it.

A thin layer over include/ember.h through cffi. Every C status becomes an EmberError
carrying ember_last_error()'s message; numpy arrays go in and come out.
"""
import math
import os

import numpy as np

from ._native import ffi, lib

_DTYPES = {
    lib.EMBER_F32: np.dtype(np.float32), lib.EMBER_I64: np.dtype(np.int64),
    lib.EMBER_I32: np.dtype(np.int32), lib.EMBER_I8: np.dtype(np.int8),
    lib.EMBER_U8: np.dtype(np.uint8), lib.EMBER_BOOL: np.dtype(np.bool_),
    lib.EMBER_I16: np.dtype(np.int16), lib.EMBER_U16: np.dtype(np.uint16),
    lib.EMBER_U32: np.dtype(np.uint32), lib.EMBER_U64: np.dtype(np.uint64),
    lib.EMBER_F16: np.dtype(np.float16), lib.EMBER_F64: np.dtype(np.float64),
}
_CODES = {dtype: code for code, dtype in _DTYPES.items()}
_NAMES = {np.dtype(np.float32): "f32", np.dtype(np.int64): "i64", np.dtype(np.int32): "i32",
          np.dtype(np.int8): "i8", np.dtype(np.uint8): "u8", np.dtype(np.bool_): "bool",
          np.dtype(np.int16): "i16", np.dtype(np.uint16): "u16", np.dtype(np.uint32): "u32",
          np.dtype(np.uint64): "u64",
          np.dtype(np.float16): "f16", np.dtype(np.float64): "f64"}

STATUS_NAMES = {
    lib.EMBER_ERROR_IO: "io", lib.EMBER_ERROR_FORMAT: "format",
    lib.EMBER_ERROR_UNSUPPORTED: "unsupported", lib.EMBER_ERROR_INVALID: "invalid",
    lib.EMBER_ERROR_ARGUMENT: "argument", lib.EMBER_ERROR_MEMORY: "memory",
}


class EmberError(RuntimeError):
    """A failure reported by the C runtime; `status` is the ember_status code."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.kind = STATUS_NAMES.get(status, str(status))


def _check(status):
    if status != lib.EMBER_OK:
        raise EmberError(status, ffi.string(lib.ember_last_error()).decode("utf-8", "replace"))


def version():
    return ffi.string(lib.ember_version()).decode()


class RuntimeFact:
    """Datum type and concrete shape of a runtime input or output."""

    def __init__(self, dtype, shape):
        self.dtype = dtype
        self.shape = tuple(shape)

    @property
    def datum_type(self):
        return _NAMES[self.dtype]

    def __str__(self):
        return ",".join([str(d) for d in self.shape] + [self.datum_type])

    def __repr__(self):
        return f"RuntimeFact({self})"

    def __eq__(self, other):
        return str(self) == str(other)


def _fact(c_fact, dim_text=None):
    """A RuntimeFact; a symbolic dim (-1) shows as its expression text ("S+2")."""
    shape = []
    for axis in range(c_fact.rank):
        text = dim_text(axis) if dim_text is not None and c_fact.shape[axis] < 0 else ffi.NULL
        shape.append(ffi.string(text).decode() if text != ffi.NULL else c_fact.shape[axis])
    return RuntimeFact(_DTYPES[c_fact.datum_type], shape)


class Model:
    """A plan loaded by the C runtime (immutable; shareable between threads)."""

    def __init__(self, handle):
        self._handle = ffi.gc(handle, lib.ember_model_free)

    @classmethod
    def load(cls, source):
        """`source` is a path (directory, .tar, .tgz) or the bytes of a .tar/.tgz."""
        out = ffi.new("ember_model **")
        if isinstance(source, (bytes, bytearray, memoryview)):
            data = bytes(source)
            _check(lib.ember_model_load_buffer(data, len(data), out))
        else:
            _check(lib.ember_model_load(os.fsencode(source), out))
        return cls(out[0])

    def _names(self, count, getter):
        return [ffi.string(getter(self._handle, i)).decode() for i in range(count)]

    @property
    def input_names(self):
        return self._names(lib.ember_model_input_count(self._handle), lib.ember_model_input_name)

    @property
    def output_names(self):
        return self._names(lib.ember_model_output_count(self._handle), lib.ember_model_output_name)

    def _facts(self, count, getter, dim_getter):
        facts = []
        for i in range(count):
            c_fact = ffi.new("ember_fact *")
            _check(getter(self._handle, i, c_fact))
            facts.append(_fact(c_fact, lambda axis, i=i: dim_getter(self._handle, i, axis)))
        return facts

    def input_facts(self):
        return self._facts(lib.ember_model_input_count(self._handle), lib.ember_model_input_fact,
                           lib.ember_model_input_dim)

    def output_facts(self):
        return self._facts(lib.ember_model_output_count(self._handle),
                           lib.ember_model_output_fact, lib.ember_model_output_dim)

    @property
    def symbols(self):
        """Names of the plan's symbols (`extension tract_symbol`), in declaration order."""
        return [ffi.string(lib.ember_model_symbol_name(self._handle, i)).decode()
                for i in range(lib.ember_model_symbol_count(self._handle))]

    @property
    def node_count(self):
        return lib.ember_model_node_count(self._handle)

    @property
    def pulse(self):
        """Frames per call of a pulsed plan's streamed inputs; None for a batch plan."""
        return lib.ember_model_pulse(self._handle) or None

    @property
    def stream_input_axes(self):
        """Per user input of a pulsed plan, its time axis (None: not streamed)."""
        n = lib.ember_model_stream_input_count(self._handle)
        return [None if a < 0 else a for a in
                (lib.ember_model_stream_input_axis(self._handle, i) for i in range(n))]

    @property
    def stream_output_axes(self):
        n = lib.ember_model_stream_output_count(self._handle)
        return [lib.ember_model_stream_output_axis(self._handle, i) for i in range(n)]

    @property
    def stream_output_delays(self):
        """Per user output of a pulsed plan, how many frames it comes late."""
        n = lib.ember_model_stream_output_count(self._handle)
        return [lib.ember_model_stream_output_delay(self._handle, i) for i in range(n)]

    def into_runnable(self):
        return Runnable(self)


class Runnable:
    """A model prepared for this CPU, with its working memory. One thread at a time."""

    def __init__(self, model):
        self.model = model  # keeps the C model alive as long as the runnable
        out = ffi.new("ember_runnable **")
        _check(lib.ember_runnable_new(model._handle, out))
        # The C runnable holds its own reference to the C model, so the two finalizers
        # may run in either order (a garbage-collection pass over a cycle picks one).
        self._handle = ffi.gc(out[0], lib.ember_runnable_free)
        self._output_count = lib.ember_model_output_count(model._handle)

    def input_facts(self):
        return self.model.input_facts()

    def output_facts(self):
        return self.model.output_facts()

    @property
    def memory_bytes(self):
        """Bytes the runnable holds: memory()'s packed_bytes + arena_bytes."""
        return lib.ember_runnable_memory_bytes(self._handle)

    def memory(self):
        """Where the memory goes (ember_runnable_memory in ember.h), in bytes:
        constant_bytes (the plan's weights as stored), constant_resident_bytes (of those,
        in memory now: a .tar loaded by path is mapped, and the pages of the weights
        preparing packed are given back), packed_bytes (weights in the kernels' layouts),
        arena_bytes (activations, scratch and per-binding prepared state)."""
        report = ffi.new("ember_memory *")
        _check(lib.ember_runnable_memory(self._handle, report))
        return {field: getattr(report, field) for field in
                ("constant_bytes", "constant_resident_bytes", "packed_bytes", "arena_bytes")}

    def input_buffer(self, index):
        """Input `index`'s own buffer in the runnable's memory, as a writable numpy array
        (ember_runnable_input): fill it, then pass it to run(), which then copies nothing
        for it. The run reuses the buffer once the input is read, so fill it again before
        every run. A plan with symbolic dims or control flow has none (EmberError)."""
        c_tensor = ffi.new("ember_tensor *")
        _check(lib.ember_runnable_input(self._handle, index, c_tensor))
        return np.asarray(_InputBuffer(self, c_tensor))

    def run(self, inputs):
        """Run on a list of numpy arrays (model order); returns a list of new arrays."""
        arrays, c_inputs = c_tensors(inputs)
        _check(lib.ember_runnable_run(self._handle, len(arrays), c_inputs))
        return [self._output(i) for i in range(self._output_count)]

    def _output(self, index):
        c_tensor = ffi.new("ember_tensor *")
        _check(lib.ember_runnable_output(self._handle, index, c_tensor))
        return array_of(c_tensor)

    def profile(self, inputs, runs=100):
        """Time every node over `runs` runs (after a warm-up run): a list of dicts, in
        the order nodes first ran — name, op, form (the one prepare chose for an op of
        several: "winograd", "pointwise", "depthwise_blocked", … for conv; else ""),
        seconds (mean per run), flops (2 per multiply-add for conv, matmul and recurrent
        ops; one per output item for the others), bytes (inputs read and output
        written), shape (of the output)."""
        arrays, c_inputs = c_tensors(inputs)
        out = ffi.new("ember_profile **")
        _check(lib.ember_runnable_profile(self._handle, len(arrays), c_inputs, int(runs), out))
        handle = ffi.gc(out[0], lib.ember_profile_free)
        node = ffi.new("ember_node_profile *")
        result = []
        for index in range(lib.ember_profile_node_count(handle)):
            _check(lib.ember_profile_node(handle, index, node))
            result.append({"name": ffi.string(node.name).decode(),
                           "op": ffi.string(node.op).decode(),
                           "form": ffi.string(node.form).decode(), "seconds": node.seconds,
                           "flops": node.flops, "bytes": node.bytes,
                           "shape": list(node.shape[0:node.rank])})
        return result

    def profile_json(self, inputs, runs=100):
        """The profile as JSON in the shape of tract's `profile_json`: {"nodes": [{
        "node_name", "op_name", "secs_per_iter", "cost": {"FMA(F32)": …}} …],
        "profiling_info": {"iterations", "secs_per_iter"}}, each node also with ember's
        "form", "flops", "bytes" and "shape"."""
        import json
        nodes = self.profile(inputs, runs)
        return json.dumps({
            "nodes": [{"node_name": n["name"], "op_name": n["op"],
                       "secs_per_iter": n["seconds"],
                       "cost": {"FMA(F32)": str(int(n["flops"] // 2))}, "form": n["form"],
                       "flops": n["flops"], "bytes": n["bytes"], "shape": n["shape"]}
                      for n in nodes],
            "profiling_info": {"iterations": int(runs),
                               "secs_per_iter": sum(n["seconds"] for n in nodes)}})

    def spawn_state(self):
        """A stream on this runnable of a pulsed plan (see ember.stream.State)."""
        from .stream import State
        return State(self)


class _InputBuffer:
    """An input's buffer in a runnable, seen by numpy; the array keeps it (and so the
    runnable) alive."""

    def __init__(self, runnable, c_tensor):
        self._runnable = runnable
        dtype = _DTYPES[c_tensor.datum_type]
        self.__array_interface__ = {
            "version": 3, "typestr": dtype.str, "shape": tuple(c_tensor.shape[0:c_tensor.rank]),
            "data": (int(ffi.cast("uintptr_t", c_tensor.data)), False)}


def c_tensors(inputs):
    """(arrays kept alive, ember_tensor[]) viewing numpy inputs."""
    # np.asarray, not np.ascontiguousarray: the latter turns a 0-d array into 1-d.
    arrays = [np.asarray(x, order="C") for x in inputs]
    c_inputs = ffi.new("ember_tensor[]", max(len(arrays), 1))
    for c_tensor, array in zip(c_inputs, arrays):
        if array.dtype not in _CODES:
            raise EmberError(lib.EMBER_ERROR_ARGUMENT,
                             f"datum type {array.dtype} is not supported by ember")
        if array.ndim > lib.EMBER_MAX_RANK:
            raise EmberError(lib.EMBER_ERROR_ARGUMENT, f"rank {array.ndim} is too large")
        c_tensor.datum_type = _CODES[array.dtype]
        c_tensor.rank = array.ndim
        for axis, dim in enumerate(array.shape):
            c_tensor.shape[axis] = dim
        # from_buffer: the cheapest way to the data pointer (a streaming call is ~µs)
        c_tensor.data = ffi.from_buffer(array) if array.size else ffi.NULL
    return arrays, c_inputs


def array_of(c_tensor, index=None):
    """A numpy copy of a tensor the runtime owns (of its part `index`, a tuple of
    slices, when given)."""
    dtype = _DTYPES[c_tensor.datum_type]
    shape = tuple(c_tensor.shape[0:c_tensor.rank])
    count = math.prod(shape)
    buffer = ffi.buffer(c_tensor.data, count * dtype.itemsize) if count else b""
    view = np.frombuffer(buffer, dtype=dtype).reshape(shape)
    return (view if index is None else view[index]).copy()


def load_model(source):
    """Load a plan (path or .tar/.tgz bytes) into the C runtime."""
    return Model.load(source)
