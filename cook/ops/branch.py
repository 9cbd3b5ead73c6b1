"""If with a condition only a run knows (ONNX If): both branches are TypedModels of
their own, typed from the outer values they read; a run evaluates one. In the plan it
is ember_if (csrc/core/control.h), each branch a body document.

Inputs: the condition, then the outer values the branches read (both branches take
them all, in that order). The results' facts are the branches' where they agree; a
dim they disagree on is a fresh symbol (`shapes`), which the run binds.

A branch that cannot be typed for these inputs (silero-vad's 8 kHz branch given 16 kHz
chunks: it feeds its LSTM a rank-5 tensor, and onnxruntime fails there too) is kept as
its error: a run that takes it fails with that message (`then_error` / `else_error`
in the plan, the body name left empty).
"""
import numpy as np

from .. import dims
from ..errors import ShapeError
from ..facts import Fact
from .base import Op


class If(Op):
    name = "If"

    def __init__(self, then_body, else_body, shapes, errors=(None, None)):
        # a body is a TypedModel, or None with its typing error in `errors`
        self.then_body = then_body
        self.else_body = else_body
        self.shapes = tuple(tuple(s) for s in shapes)
        self.errors = tuple(errors)

    @property
    def typed_body(self):
        return self.then_body if self.then_body is not None else self.else_body

    def output_facts(self, inputs):
        body = self.typed_body
        if len(inputs) != 1 + len(body.input_facts()):
            raise ShapeError(f"expects the condition and {len(body.input_facts())} values "
                             "the branches read")
        return [Fact(fact.datum_type, shape)
                for fact, shape in zip(body.output_facts(), self.shapes)]

    def eval(self, inputs):
        taken = bool(np.asarray(inputs[0]).reshape(-1)[0])
        body = self.then_body if taken else self.else_body
        if body is None:
            raise ShapeError(f"the {'then' if taken else 'else'} branch cannot run on these "
                             f"inputs: {self.errors[0 if taken else 1]}")
        return body.run_reference(list(inputs[1:]))

    def substitute(self, values):
        return self

    def nnef_write(self, writer, node):
        from ..nnef.control import operand, shapes_and_count, write_body
        branches = []
        for which, body, error in (("then", self.then_body, self.errors[0]),
                                   ("else", self.else_body, self.errors[1])):
            name = write_body(writer, body, f"{node.name}_{which}") if body is not None else ""
            branches.append(f"{which} = {writer.fmt(name)}")
            if body is None:
                branches.append(f"{which}_error = {writer.fmt(str(error)[:400])}")
        operands = [operand(writer, o) for o in node.inputs[1:]]
        writer.assign_all(node, f"ember_if({operand(writer, node.inputs[0])}, "
                                f"[{', '.join(operands)}], {', '.join(branches)}, "
                                f"{shapes_and_count(writer, node)})")

    @staticmethod
    def _read(reader, call):
        from ..nnef.control import read_body
        bodies = [read_body(reader, call, which) if call.kwarg(which, "") else None
                  for which in ("then", "else")]
        if bodies == [None, None]:
            raise reader.unsupported(call, "an If without any branch")
        errors = [call.kwarg(f"{which}_error", "not written") if body is None else None
                  for which, body in zip(("then", "else"), bodies)]
        shapes = [[dims.from_value(d) for d in shape] for shape in call.kwarg("shapes")]
        inputs = [reader.outlet(call.arg(0))] + [reader.outlet(v) for v in call.arg(1)]
        return reader.wire(call, If(*bodies, shapes, errors), inputs)


If.NNEF_READERS = {"ember_if": If._read}


def merged_shapes(then_facts, else_facts, fresh_symbol, what):
    """Each result's shape: the branches' dims where they agree, a fresh symbol where
    they do not. Datum types and ranks must agree."""
    shapes = []
    for index, (a, b) in enumerate(zip(then_facts, else_facts)):
        if a.datum_type is not b.datum_type or a.rank != b.rank:
            raise ShapeError(f"{what} output {index}: the branches give {a} and {b}; with a "
                             "condition known only at run time they must agree on datum "
                             "type and rank (fix the input facts so that the condition is "
                             "known while cooking)")
        shapes.append(tuple(x if x == y else fresh_symbol(f"branch{index}_{axis}")
                            for axis, (x, y) in enumerate(zip(a.shape, b.shape))))
    return shapes
