"""ONNX ModelProto -> InferenceModel.

Initializers become Const nodes (also when, as in old files, they are listed among the
graph inputs too); the remaining graph inputs become Source nodes with the partial fact
the file declares; every ONNX node becomes an `OnnxNode` inference op, translated into
core ops by `InferenceModel.into_typed`. Shapes the file declares for intermediate and
output tensors are kept as hints.
"""
import os
import re

import onnx
from onnx import numpy_helper

from .. import datum, dims
from ..errors import CookError, FormatError
from ..facts import InferenceFact
from ..ir import Graph, Outlet
from ..model import InferenceModel
from ..ops.source import Const
from .registry import OnnxNode, subgraph_free_names


def symbol_name(dim_param):
    """An ONNX dim_param as a symbol name ("batch size" -> "batch_size")."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", dim_param.strip())
    if not name or name[0].isdigit():
        name = "_" + name
    return name


def type_proto_fact(type_proto, symbolic=False):
    """InferenceFact of an ONNX TypeProto.

    Dims given by value are ints. With `symbolic` (graph inputs), a `dim_param` becomes
    the symbol of that name; otherwise (hints) named dims are unknown. Absent or negative
    dims are unknown: typing gives them fresh symbols.
    """
    if not type_proto.HasField("tensor_type"):
        return InferenceFact()
    tensor = type_proto.tensor_type
    datum_type = None
    if tensor.elem_type:
        try:
            datum_type = datum.from_onnx(tensor.elem_type)
        except CookError:
            datum_type = None
    shape = None
    if tensor.HasField("shape"):
        shape = tuple(_dim(d, symbolic) for d in tensor.shape.dim)
    return InferenceFact(datum_type, shape)


def _dim(dim, symbolic):
    if dim.HasField("dim_value") and dim.dim_value >= 0:
        return int(dim.dim_value)
    if symbolic and dim.HasField("dim_param") and dim.dim_param.strip() \
            and not re.fullmatch(r"unk__\d+|\?", dim.dim_param.strip()):
        return dims.symbol(symbol_name(dim.dim_param))
    return None


def load_proto(source):
    if isinstance(source, onnx.ModelProto):
        return source
    if isinstance(source, (bytes, bytearray)):
        return onnx.load_from_string(bytes(source))
    path = os.fspath(source)
    if not os.path.exists(path):
        raise FormatError(f"{path}: no such file")
    try:
        return onnx.load(path, load_external_data=True)
    except Exception as error:       # protobuf raises its own DecodeError
        raise FormatError(f"{path}: not a readable ONNX model ({error})") from None


def default_opset(model):
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return entry.version
    return 1 if not model.opset_import else max(e.version for e in model.opset_import)


def from_proto(model):
    opset = default_opset(model)
    onnx_graph = model.graph
    graph = Graph(typed=False)
    tensors = {}                                   # ONNX tensor name -> outlet
    hints = {vi.name: type_proto_fact(vi.type) for vi in onnx_graph.value_info}
    for output in onnx_graph.output:
        hints[output.name] = type_proto_fact(output.type)

    initializers = {init.name: init for init in onnx_graph.initializer}
    for graph_input in onnx_graph.input:
        if graph_input.name in initializers:
            continue
        outlet = graph.add_source(graph_input.name,
                                  type_proto_fact(graph_input.type, symbolic=True))
        tensors[graph_input.name] = outlet
    for name, init in initializers.items():
        value = numpy_helper.to_array(init)
        node = graph.add_node(name, Const(value), [], [InferenceFact(
            datum.from_numpy(value.dtype), value.shape, value)])
        tensors[name] = node.outlet()

    for index, proto in enumerate(onnx_graph.node):
        name = proto.name or (proto.output[0] if proto.output else f"node{index}")
        inputs = []
        for input_name in proto.input:
            if input_name == "":
                inputs.append(None)
            elif input_name in tensors:
                inputs.append(tensors[input_name])
            else:
                raise FormatError(f'node "{name}" ({proto.op_type}): input {input_name!r} is '
                                  "not produced by any node, input or initializer (nodes "
                                  "must be topologically sorted)")
        while inputs and inputs[-1] is None:
            inputs.pop()
        implicit = [n for n in subgraph_free_names(proto) if n in tensors]
        inputs += [tensors[n] for n in implicit]
        facts = [hints.get(out, InferenceFact()) for out in proto.output]
        node = graph.add_node(name, OnnxNode(proto, opset, implicit), inputs, facts)
        for slot, output_name in enumerate(proto.output):
            if output_name:
                tensors[output_name] = Outlet(node.id, slot)

    for output in onnx_graph.output:
        if output.name not in tensors:
            raise FormatError(f"graph output {output.name!r} is produced by no node")
        graph.set_output(tensors[output.name], output.name)
    graph.tensor_outlets = tensors
    graph.properties["onnx.opset"] = opset
    return InferenceModel(graph)


def load(source):
    """An InferenceModel from a path, bytes or an onnx.ModelProto."""
    return from_proto(load_proto(source))
