"""Control flow in the plan (ember_if, ember_loop; csrc/core/control.h): writing the
bodies as documents of their own, the operands and the result shapes, and reading them
back.

A body is a TypedModel written like the main graph into `<name>.nnef`, its constants in
`<name>/…dat`. The op passes every body input explicitly (a constant through `copy`:
the runtime runs a control op as a stage of its own, which reads computed values and
inputs only). `shapes` spells each result's shape in the plan's symbols, and `count`
lists the symbols that appear there for the first time: the run binds them from what
the body gave.
"""
from .. import dims
from ..errors import FormatError, UnsupportedOp
from ..ops.source import Const
from .syntax import fmt

MAX_BODY_DEPTH = 16          # as csrc/core/control.h


def write_body(writer, model, hint):
    """Writes `model` as a body document of the plan; returns the body's name."""
    from .writer import PlanWriter
    name = writer.fresh_body_name(hint)
    body = PlanWriter(model, prefix=f"{name}/", bodies=writer.bodies)
    files = body.write()
    files[f"{name}.nnef"] = files.pop("graph.nnef")
    writer.files.update(files)
    return name


def operand(writer, outlet):
    """The identifier of a control op's operand: a constant is copied into a value."""
    node = writer.graph.nodes[outlet.node]
    if not isinstance(node.op, Const):
        return writer.ident(outlet)
    key = ("control operand", outlet)
    if key not in writer.const_texts:
        name = writer.fresh(f"{node.name}_value")
        writer.emit(name, f"copy({writer.ident(outlet)})")
        writer.const_texts[key] = name
    return writer.const_texts[key]


def shapes_and_count(writer, node):
    """`shapes = […], count = […]` of a control op's results: symbols the plan does not
    know yet are bound by the run (each must stand alone as a dim)."""
    shapes, new = [], []
    for fact in node.outputs:
        for dim in fact.shape:
            unknown = dims.symbols(dim) - writer.known_symbols
            if not unknown:
                continue
            if dims.symbols(dim) != {dims.to_str(dim)}:
                raise UnsupportedOp(f"result dim {dim} of a control op: a size the run "
                                    "decides must be a symbol of its own")
            if dims.to_str(dim) not in new:
                new.append(dims.to_str(dim))
        shapes.append(f"[{', '.join(fmt(d) for d in fact.shape)}]")
    writer.known_symbols |= set(new)
    return f"shapes = [{', '.join(shapes)}], count = [{', '.join(new)}]"


def read_body(reader, call, attribute):
    """The TypedModel of the body a control op names."""
    from .reader import PlanReader
    name = call.kwarg(attribute)
    document = f"{name}.nnef"
    if not isinstance(name, str) or document not in reader.files:
        raise FormatError(f"{reader.where} line {call.line}: {call.op} names body {name!r}, "
                          "which the plan does not hold")
    if document in reader.chain:
        raise FormatError(f"{reader.where} line {call.line}: recursion: body {name!r} runs "
                          "itself")
    if len(reader.chain) > MAX_BODY_DEPTH:
        raise FormatError(f"{reader.where} line {call.line}: bodies nest too deeply")
    return PlanReader(reader.files, reader.where, document, reader.chain + (document,)).read()
