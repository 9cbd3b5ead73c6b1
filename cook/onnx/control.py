"""Translators of ONNX control flow. The subgraphs (If branches, Scan and Loop bodies)
read outer-scope tensors through `OnnxNode.implicit` (`Translation.scope()`); a body is
either inlined into the target graph (`inline_graph`) or typed on its own as a
TypedModel (`typed_body`) that a cook-only op runs per iteration.

If: a constant condition inlines its branch; with a condition known only at run time
both branches are typed bodies of an If op (cook/ops/branch.py) and a run evaluates one.
Scan: the body runs per slice (cook/ops/scan.py). Loop: the body runs per iteration
(cook/ops/loop.py); when it cannot be typed once for all iterations (an op needs the
iteration number as a constant, a carried value changes rank) and the trip count is
known while cooking, the iterations are inlined instead."""
import numpy as np
from onnx import numpy_helper

from .. import dims
from ..errors import BadAttribute, CookError, UnsupportedOp
from ..facts import Fact, InferenceFact
from ..ir import Node
from ..ops.loop import BOOL_SCALAR, I64_SCALAR, Loop
from ..ops.scan import Scan
from ..ops.shape import Concat, Unsqueeze
from .registry import OnnxNode, subgraph_free_names, translator


def inline_graph(ctx, graph, suffix, bound=None):
    """Translate a subgraph into the target graph; returns the outlets of its outputs.
    `bound`: {subgraph input name: outlet} (a Loop body's inputs)."""
    tensors = dict(ctx.scope())
    tensors.update(bound or {})
    for init in graph.initializer:
        tensors[init.name] = ctx.const(numpy_helper.to_array(init), f"{suffix}_{init.name}")
    for index, proto in enumerate(graph.node):
        inputs = [tensors[n] if n else None for n in proto.input]
        while inputs and inputs[-1] is None:
            inputs.pop()
        implicit = [n for n in subgraph_free_names(proto) if n in tensors]
        inputs += [tensors[n] for n in implicit]
        name = f"{ctx.name}/{suffix}/{proto.name or proto.output[0] or index}"
        op = OnnxNode(proto, ctx.opset, implicit)
        node = Node(-1, name, op, inputs, [InferenceFact() for _ in proto.output])
        outlets = op.to_typed(ctx.target, node, inputs)
        for slot, output in enumerate(proto.output):
            if output:
                tensors[output] = outlets[slot]
    missing = [o.name for o in graph.output if o.name not in tensors]
    if missing:
        raise ctx.error(f"branch outputs {missing} are produced by nothing", BadAttribute)
    return [tensors[o.name] for o in graph.output]


@translator("If", types="all", notes="constant condition: the branch is inlined; otherwise "
            "both branches are kept and a run evaluates one (they must agree on datum types "
            "and ranks; dims they disagree on become symbols)")
def if_(ctx):
    from ..ops.branch import If, merged_shapes
    then_graph = ctx.attrs.raw["then_branch"].g
    else_graph = ctx.attrs.raw["else_branch"].g
    condition = ctx.fact(0)
    if condition.value is not None:
        taken = bool(np.asarray(condition.value).reshape(-1)[0])
        return inline_graph(ctx, then_graph if taken else else_graph,
                            "then" if taken else "else")
    implicit = ctx.scope()
    bodies, errors = [], []
    for graph in (then_graph, else_graph):
        try:
            bodies.append(typed_body(ctx, graph, [], implicit))
            errors.append(None)
        except CookError as error:
            bodies.append(None)
            errors.append(error)
    if bodies == [None, None]:
        raise errors[0]
    if None in bodies:          # a branch these inputs cannot take: a run taking it fails
        body = bodies[0] or bodies[1]
        shapes = [f.shape for f in body.output_facts()]
        return ctx.wire_or_run(If(bodies[0], bodies[1], shapes, errors),
                               [ctx.input(0)] + list(implicit.values()))
    then_body, else_body = bodies
    pairs = list(zip(then_body.output_facts(), else_body.output_facts()))
    constants = all(a.value is not None and b.value is not None for a, b in pairs)
    if all(a.datum_type is b.datum_type and (a.shape == b.shape or _one_item(a) and
                                              _one_item(b)) for a, b in pairs) and \
            (constants or any(a.rank != b.rank for a, b in pairs)):
        return select_branches(ctx, then_graph, else_graph)
    shapes = merged_shapes(then_body.output_facts(), else_body.output_facts(),
                           ctx.fresh_symbol, "If")
    return ctx.wire_or_run(If(then_body, else_body, shapes),
                           [ctx.input(0)] + list(implicit.values()))


def _one_item(fact):
    return all(d == 1 for d in fact.shape)


def select_branches(ctx, then_graph, else_graph):
    """Both branches inlined and Where selecting: for branches of constants (folded once
    the condition is), and single items of different ranks (a scalar and [1]: ONNX
    functions spell a value both ways; the result has the larger rank)."""
    from ..ops.elementwise import Where
    then_outlets = inline_graph(ctx, then_graph, "then")
    else_outlets = inline_graph(ctx, else_graph, "else")
    return [ctx.wire(Where(), [ctx.input(0), a, b], f"select{index}")
            for index, (a, b) in enumerate(zip(then_outlets, else_outlets))]


def typed_body(ctx, graph, input_facts, implicit):
    """A subgraph as a TypedModel: its inputs, then the outer tensors it reads."""
    from onnx import helper

    from . import loader
    extra = [helper.make_tensor_value_info(name, ctx.target.fact(outlet).datum_type.onnx_code,
                                           None)
             for name, outlet in implicit.items()]
    body = helper.make_graph(list(graph.node), graph.name or "body",
                             list(graph.input) + extra, list(graph.output),
                             list(graph.initializer))
    model = helper.make_model(body, opset_imports=[helper.make_opsetid("", ctx.opset)])
    im = loader.from_proto(model)
    facts = list(input_facts) + [ctx.target.fact(o) for o in implicit.values()]
    for index, fact in enumerate(facts):
        if index >= len(input_facts) and fact.value is not None:
            im.set_input_value(index, fact.value)      # outer constants stay constants
        else:
            im.set_input_fact(index, InferenceFact(fact.datum_type, fact.shape))
    return im.into_model()


@translator("Scan", opsets="9+", types="all",
            notes="axes and directions of inputs and outputs; the body runs per step")
def scan(ctx):
    if ctx.opset < 9:
        raise ctx.error("Scan-8 (with sequence_lens and a batch axis) is not supported")
    attrs = ctx.attrs
    body = attrs.raw["body"].g
    implicit = ctx.scope()
    declared = [o for o in ctx.inputs[:len(ctx.inputs) - len(implicit)]]
    n_scan = attrs.int("num_scan_inputs", required=True)
    n_states = len(declared) - n_scan
    n_out = len(body.output) - n_states
    in_axes = attrs.ints("scan_input_axes", [0] * n_scan)
    in_dirs = attrs.ints("scan_input_directions", [0] * n_scan)
    out_axes = attrs.ints("scan_output_axes", [0] * n_out)
    out_dirs = attrs.ints("scan_output_directions", [0] * n_out)
    facts = [ctx.target.fact(o) for o in declared]
    body_facts = facts[:n_states]
    for fact, axis in zip(facts[n_states:], in_axes):
        axis = axis % fact.rank
        body_facts.append(Fact(fact.datum_type, fact.shape[:axis] + fact.shape[axis + 1:]))
    model = typed_body(ctx, body, body_facts, implicit)
    op = Scan(model, n_states, n_scan, in_axes, in_dirs, out_axes, out_dirs)
    return ctx.wire_or_run(op, declared + list(implicit.values()))


UNROLL_LIMIT = 256      # iterations inlined at most: beyond, the graph grows too much


@translator("Loop", types="all",
            notes="tensors only (no sequences); the trip count is a symbol unless M is a "
                  "constant and the condition stays true; carried dims that change get "
                  "symbols; a body that needs a constant iteration number is inlined per "
                  f"iteration when the trip count is known (at most {UNROLL_LIMIT})")
def loop(ctx):
    graph = ctx.attrs.raw["body"].g
    implicit = ctx.scope()
    n_carried = len(graph.input) - 2
    declared = list(ctx.inputs[:len(ctx.inputs) - len(implicit)])
    declared += [None] * (2 + n_carried - len(declared))
    if n_carried < 0 or len(declared) != 2 + n_carried \
            or len(graph.output) < 1 + n_carried:
        raise ctx.error(f"the body has {len(graph.input)} inputs and {len(graph.output)} "
                        f"outputs for {len(declared)} Loop inputs", BadAttribute)
    if declared[0] is None and declared[1] is None:
        raise ctx.error("neither a trip count nor a condition: this loop never ends")
    try:
        body = typed_loop_body(ctx, graph, declared[2:], implicit)
    except CookError as error:      # e.g. a carried dim made a symbol no longer broadcasts
        return unroll_loop(ctx, graph, declared, error)
    inputs = [o for o in declared if o is not None] + list(implicit.values())
    outer = set()
    for outlet in inputs:
        for dim in ctx.target.fact(outlet).shape:
            outer |= dims.symbols(dim)
    op = Loop(body, declared[0] is not None, declared[1] is not None, n_carried,
              trip_count(ctx, declared, body), scan_shapes(ctx, body, n_carried, outer))
    return ctx.wire_or_run(op, inputs)


def typed_loop_body(ctx, graph, initial, implicit):
    """The body typed once for all iterations: a carried dim that an iteration changes
    becomes a fresh symbol (and the body is typed again with it)."""
    names = [i.name for i in graph.input[2:]]
    carried = [ctx.target.fact(o).without_value() for o in initial]
    loose = set()                       # (carried index, axis) typed with a symbol
    while True:
        body = typed_body(ctx, graph, [I64_SCALAR, BOOL_SCALAR] + carried, implicit)
        after = body.output_facts()[1:1 + len(carried)]
        if not loosen_carried(ctx, names, carried, after, loose):
            return body


def loosen_carried(ctx, names, carried, after, loose):
    """Give a fresh symbol to each carried dim the body changes; True when one did."""
    changed = False
    for index, (before, out) in enumerate(zip(carried, after)):
        if out.datum_type is not before.datum_type or out.rank != before.rank:
            raise ctx.error(f"loop-carried value {names[index]!r} is {before} before an "
                            f"iteration and {out} after it: a carried value must keep its "
                            "datum type and rank")
        shape = list(before.shape)
        for axis, (a, b) in enumerate(zip(before.shape, out.shape)):
            if a != b and (index, axis) not in loose:
                shape[axis] = ctx.fresh_symbol(f"{names[index]}_{axis}")
                loose.add((index, axis))
                changed = True
        carried[index] = Fact(before.datum_type, shape)
    return changed


def known_scalar(ctx, outlet):
    """The value of a scalar input known while cooking (a constant, or a dim computed
    from shapes); None when only a run knows it."""
    fact = ctx.target.fact(outlet)
    if fact.value is not None:
        return np.asarray(fact.value).reshape(-1)[0].item()
    if fact.symbolic is not None:
        return np.asarray(fact.symbolic).reshape(-1)[0]
    return None


def trip_count(ctx, declared, body):
    """The iterations' count: M when the condition cannot stop the loop, else a symbol."""
    limit = known_scalar(ctx, declared[0]) if declared[0] is not None else None
    start = known_scalar(ctx, declared[1]) if declared[1] is not None else True
    if start is False or (isinstance(limit, int) and limit <= 0):
        return 0
    out = body.graph.outputs[0]
    stays = declared[1] is None or out == body.graph.inputs[1] or (
        body.graph.fact(out).value is not None and bool(np.all(body.graph.fact(out).value)))
    if stays and start is True and limit is not None:
        return limit
    if stays and start is True and declared[0] is None:
        raise ctx.error("the condition stays true and there is no trip count: this loop "
                        "never ends")
    return ctx.fresh_symbol("trips")


def scan_shapes(ctx, body, n_carried, outer):
    """Per-iteration shapes of the scan outputs, in the outer graph's symbols: a dim the
    body decides (one of its counts, a changing carried dim) becomes a fresh symbol."""
    shapes = []
    for index, fact in enumerate(body.output_facts()[1 + n_carried:]):
        shapes.append(tuple(d if dims.symbols(d) <= outer
                            else ctx.fresh_symbol(f"scan{index}_{axis}")
                            for axis, d in enumerate(fact.shape)))
    return shapes


def unroll_loop(ctx, graph, declared, error):
    """The iterations inlined one after the other (each typed with its own iteration
    number and carried facts) when the count is known while cooking; else `error`."""
    limit = known_scalar(ctx, declared[0]) if declared[0] is not None else None
    going = known_scalar(ctx, declared[1]) if declared[1] is not None else True
    if declared[0] is not None and not isinstance(limit, int):
        raise UnsupportedOp(f"{error}; so its iterations must be inlined, and for that the "
                            "trip count (input 0) must be a constant; a value known only at "
                            "run time is not supported") from None
    if going is None:
        raise UnsupportedOp(f"{error}; so its iterations must be inlined, and for that the "
                            "condition (input 1) must be a constant; a value known only at "
                            "run time is not supported") from None
    n_carried = len(declared) - 2
    carried, scans = list(declared[2:]), []
    try:
        while going and (limit is None or len(scans) < limit):
            if len(scans) == UNROLL_LIMIT:
                raise ctx.error(f"more than {UNROLL_LIMIT} iterations to inline")
            outs = inline_iteration(ctx, graph, len(scans), going, carried)
            if declared[1] is not None:
                going = known_scalar(ctx, outs[0])
                if going is None:
                    raise ctx.error("the condition is known only at run time")
            carried = outs[1:1 + n_carried]
            scans.append(outs[1 + n_carried:])
        return carried + stack_scans(ctx, graph, scans, carried)
    except CookError as failure:
        raise type(error)(f"{error} (inlining the iterations failed too: {failure})") \
            from None


def inline_iteration(ctx, graph, step, going, carried):
    names = [i.name for i in graph.input]
    first = [ctx.const(np.asarray(step, np.int64), f"iter{step}"),
             ctx.const(np.asarray(bool(going)), f"cond{step}")]
    return inline_graph(ctx, graph, f"iter{step}", dict(zip(names, first + carried)))


def stack_scans(ctx, graph, scans, carried):
    """Scan outputs stacked on a new axis 0; with no iteration, empty tensors shaped
    like one iteration's outputs (inlined to learn them, then pruned)."""
    if not scans:
        probe = inline_iteration(ctx, graph, 0, True, carried)[1 + len(carried):]
        facts = [ctx.target.fact(o) for o in probe]
        if not all(f.is_concrete for f in facts):
            raise ctx.error("no iteration runs and the scan outputs' shapes are not known")
        return [ctx.const(np.zeros((0,) + tuple(f.shape), f.dtype), f"scan{i}")
                for i, f in enumerate(facts)]
    stacked = []
    for index in range(len(scans[0])):
        items = [ctx.wire(Unsqueeze((0,)), [s[index]], f"scan{index}_{step}")
                 for step, s in enumerate(scans)]
        stacked.append(ctx.wire(Concat(0), items, f"scan{index}"))
    return stacked
