"""Loop (ONNX Loop): the body is a TypedModel run per iteration (with numpy in
run_reference); in the plan it is ember_loop (csrc/core/control.h).

The trip count is `trips`: an int or a symbol when only a run decides it (a condition
computed in the body, a count read from the data). Like the counts of NonZero, such a
symbol is not an input symbol: run_reference does not need it bound. A carried value
whose dims change per iteration is typed with symbols for those dims (the body is typed
with them too, see cook/onnx/control.py).
"""
import numpy as np

from .. import datum, dims
from ..errors import ShapeError
from ..facts import Fact
from .scan import BodyOp, stack_items


class Loop(BodyOp):
    """Inputs: [max trip count] [condition] carried values, then outer-scope values the
    body reads. Outputs: final carried values, then scan outputs stacked on a new axis 0.

    body: (iteration i64, condition bool, carried...) + outer -> (condition, carried...,
    scan outputs...); `scan_shapes`: each scan output's shape per iteration."""

    name = "Loop"

    def __init__(self, body, has_max, has_cond, n_carried, trips, scan_shapes):
        self.body = body
        self.has_max = bool(has_max)
        self.has_cond = bool(has_cond)
        self.n_carried = int(n_carried)
        self.trips = trips
        self.scan_shapes = tuple(tuple(s) for s in scan_shapes)

    def output_facts(self, inputs):
        expected = self.has_max + self.has_cond + self.n_carried
        if len(inputs) < expected:
            raise ShapeError(f"expects at least {expected} inputs, got {len(inputs)}")
        carried = self.body.input_facts()[2:2 + self.n_carried]
        facts = [f.without_value() for f in carried]
        scans = self.body.output_facts()[1 + self.n_carried:]
        for fact, shape in zip(scans, self.scan_shapes):
            facts.append(Fact(fact.datum_type, (self.trips,) + shape))
        return facts

    def eval(self, inputs):
        inputs = list(inputs)
        limit = int(np.asarray(inputs.pop(0)).reshape(-1)[0]) if self.has_max else None
        going = bool(np.asarray(inputs.pop(0)).reshape(-1)[0]) if self.has_cond else True
        carried = inputs[:self.n_carried]
        outer = inputs[self.n_carried:]
        collected = []
        while going and (limit is None or len(collected) < limit):
            step = np.asarray(len(collected), np.int64)
            results = self.body.run_reference([step, np.asarray(going)] + carried + outer)
            # without a condition input, the body's condition is ignored (ONNX "for" loop)
            going = bool(np.asarray(results[0]).reshape(-1)[0]) if self.has_cond else True
            carried = results[1:1 + self.n_carried]
            collected.append(results[1 + self.n_carried:])
        first_inputs = [np.asarray(0, np.int64), np.asarray(True)] + carried + outer
        outputs = list(carried)
        for index, fact in enumerate(self.body.output_facts()[1 + self.n_carried:]):
            fact = Fact(fact.datum_type, self.scan_shapes[index])
            outputs.append(stack_items([c[index] for c in collected], fact, 0,
                                       body_inputs=first_inputs, body=self.body))
        return outputs


    def nnef_write(self, writer, node):
        from ..nnef.control import operand, shapes_and_count, write_body
        inputs = list(node.inputs)
        trips = "-1"                       # no trip count
        if self.has_max:
            outlet = inputs.pop(0)
            known = writer.graph.fact(outlet).value
            trips = str(int(np.asarray(known).reshape(-1)[0])) if known is not None \
                else operand(writer, outlet)
        # a literal condition means none: the body's condition is then ignored
        cond = operand(writer, inputs.pop(0)) if self.has_cond else "true"
        carried = [operand(writer, o) for o in inputs[:self.n_carried]]
        outer = [operand(writer, o) for o in inputs[self.n_carried:]]
        body = write_body(writer, self.body, f"{node.name}_body")
        writer.assign_all(node, f"ember_loop({trips}, {cond}, [{', '.join(carried)}], "
                                f"[{', '.join(outer)}], body = {writer.fmt(body)}, "
                                f"{shapes_and_count(writer, node)})")

    @staticmethod
    def _read(reader, call):
        from ..nnef.control import read_body
        body = read_body(reader, call, "body")
        trips, cond = call.arg(0), call.arg(1)
        inputs = []
        has_max = not (isinstance(trips, int) and trips < 0)
        if has_max:
            inputs.append(reader.outlet(trips, np.int64))
        has_cond = not isinstance(cond, bool)
        if has_cond:
            inputs.append(reader.outlet(cond))
        carried, outer = list(call.arg(2)), list(call.arg(3))
        inputs += [reader.outlet(v) for v in carried + outer]
        shapes = [[dims.from_value(d) for d in shape] for shape in call.kwarg("shapes")]
        scans = shapes[len(carried):]
        count = scans[0][0] if scans else (trips if has_max and isinstance(trips, int) else 0)
        op = Loop(body, has_max, has_cond, len(carried), count, [s[1:] for s in scans])
        return reader.wire(call, op, inputs)


Loop.NNEF_READERS = {"ember_loop": Loop._read}

BOOL_SCALAR = Fact(datum.BOOL, ())
I64_SCALAR = Fact(datum.I64, ())
