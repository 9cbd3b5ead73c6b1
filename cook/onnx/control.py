"""Translators of ONNX control flow. If: a constant condition inlines its branch; a
condition known only at run time evaluates both branches and selects with Where (both
must give the same types). Loop and Scan are not supported yet."""
import numpy as np
from onnx import numpy_helper

from ..errors import BadAttribute
from ..facts import InferenceFact
from ..ir import Node
from ..ops.elementwise import Where
from .registry import OnnxNode, subgraph_free_names, translator


def inline_graph(ctx, graph, suffix):
    """Translate a subgraph into the target graph; returns the outlets of its outputs."""
    tensors = dict(ctx.scope())
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
            "both branches run and Where selects (same output types needed)")
def if_(ctx):
    then_graph = ctx.attrs.raw["then_branch"].g
    else_graph = ctx.attrs.raw["else_branch"].g
    condition = ctx.fact(0)
    if condition.value is not None:
        taken = bool(np.asarray(condition.value).reshape(-1)[0])
        return inline_graph(ctx, then_graph if taken else else_graph,
                            "then" if taken else "else")
    then_outlets = inline_graph(ctx, then_graph, "then")
    else_outlets = inline_graph(ctx, else_graph, "else")
    results = []
    for index, (a, b) in enumerate(zip(then_outlets, else_outlets)):
        fa, fb = ctx.target.fact(a), ctx.target.fact(b)
        if not fa.same_type(fb):
            raise ctx.error(f"output {index}: the branches give {fa} and {fb}; a condition "
                            "known only at run time needs equal types")
        results.append(ctx.wire(Where(), [ctx.input(0), a, b], f"select{index}"))
    return results


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


@translator("Scan", opsets="9+", types="all", cook_only=True,
            notes="axes and directions of inputs and outputs; the body runs per step")
def scan(ctx):
    from ..facts import Fact
    from ..ops.scan import Scan
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
    node = ctx.target.add_node(ctx.name, op, declared + list(implicit.values()))
    return [node.outlet(i) for i in range(len(node.outputs))]
