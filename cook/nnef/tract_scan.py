"""tract_core_scan, as tract and torch-to-nnef write recurrent nets, read as a Scan op.

    (y, …) = tract_core_scan(body = "f", scan = [("x_t", x, axis, chunk), …],
                             full = [("w", w), …], state = [("h_prev", h0, "h"), …],
                             output = [("h", "full" | "last", axis, chunk), …], skip = 0)

Fragment `f` (a flat body of the document, see csrc/plan/nnef_flatten.c) runs once per
chunk: a scan parameter gets the next `chunk` items of x along `axis` (the axis kept), a
full parameter the whole value, a state parameter the body's value `h` of the previous
iteration (h0 first). The results follow `output`: "full" concatenates the body's value
of every iteration along its axis, "last" is its value after the last one. A negative
chunk walks backwards.

ember's Scan (ONNX semantics) gives the body one item with the axis removed: read with
chunks of one item, the fragment's scan parameter is that item unsqueezed, and a full
output is the body's value squeezed, stacked back on its axis. Other chunk sizes, `skip`
and a "last" of a value that is not a state are refused.
"""
from ..errors import FormatError, UnsupportedOp
from ..facts import Fact
from ..ir import Outlet
from ..ops.scan import Scan
from ..ops.shape import Squeeze, Unsqueeze


def _entries(reader, call, name, arity):
    entries = call.kwarg(name, [])
    if not isinstance(entries, list) or any(
            not isinstance(e, tuple) or len(e) != arity for e in entries):
        raise FormatError(f"{reader.where} line {call.line}: tract_core_scan: `{name}` must "
                          f"be a list of {arity}-tuples")
    return entries


def _chunk(reader, call, chunk):
    if chunk not in (1, -1):
        raise UnsupportedOp(f"{reader.where} line {call.line}: tract_core_scan: chunks of "
                            f"{chunk} items are not supported (1 or -1 only)")
    return int(chunk < 0)


def _body_source(body, reader, name, fact, env):
    outlet = body.graph.add_source(name, fact)
    env[name] = outlet
    return outlet


def read_tract_scan(reader, call):
    from .reader import PlanReader
    name = call.kwarg("body")
    doc = reader.doc
    if not isinstance(name, str) or doc is None or doc.fragments.get(name) is None:
        raise FormatError(f"{reader.where} line {call.line}: tract_core_scan names body "
                          f"{name!r}, which the document does not define")
    if call.kwarg("skip", 0) != 0:
        raise UnsupportedOp(f"{reader.where} line {call.line}: tract_core_scan: `skip` is "
                            "not supported")
    params, results = doc.signatures[name]
    scans = _entries(reader, call, "scan", 4)
    fulls = _entries(reader, call, "full", 2)
    states = _entries(reader, call, "state", 3)
    outputs = _entries(reader, call, "output", 4)
    bound = [e[0] for e in scans + fulls + states]
    if sorted(bound) != sorted(params):
        raise FormatError(f"{reader.where} line {call.line}: tract_core_scan binds "
                          f"{sorted(bound)}, body {name!r} takes {sorted(params)}")

    body = PlanReader(reader.files, reader.where, reader.document, reader.chain)
    body.doc = doc
    body.env = {k: v for k, v in reader.env.items() if not isinstance(v, Outlet)}
    inputs, in_axes, in_reverse = [], [], []
    for param, init, _next in states:
        init = reader.outlet(init)
        _body_source(body, reader, param, reader.fact(init).without_value(), body.env)
        inputs.append(init)
    for param, x, axis, chunk in scans:
        x = reader.outlet(x)
        fact = reader.fact(x)
        axis = int(axis) % fact.rank
        item = Fact(fact.datum_type, [d for k, d in enumerate(fact.shape) if k != axis])
        source = _body_source(body, reader, f"{param}_item", item, {})
        body.env[param] = body.graph.wire1(param, Unsqueeze([axis]), [source])
        inputs.append(x)
        in_axes.append(axis)
        in_reverse.append(_chunk(reader, call, chunk))
    for param, value in fulls:
        value = reader.outlet(value)
        _body_source(body, reader, param, reader.fact(value).without_value(), body.env)
        inputs.append(value)
    body.replay(doc.fragments[name])

    def body_value(result):
        if result not in results or not isinstance(body.env.get(result), Outlet):
            raise FormatError(f"{reader.where} line {call.line}: tract_core_scan: body "
                              f"{name!r} gives no {result!r}")
        return body.env[result]

    for _param, _init, next_name in states:
        body.graph.set_output(body_value(next_name), f"{next_name}_next")
    out_axes, out_reverse, picks = [], [], []
    state_results = [s[2] for s in states]
    for result, mode, axis, chunk in outputs:
        if mode == "last":
            if result not in state_results:
                raise UnsupportedOp(f"{reader.where} line {call.line}: tract_core_scan: the "
                                    f"last value of {result!r}, which is not a state")
            picks.append(state_results.index(result))
            continue
        if mode != "full":
            raise FormatError(f"{reader.where} line {call.line}: tract_core_scan: output "
                              f"mode {mode!r} (\"full\" or \"last\")")
        value = body_value(result)
        rank = body.graph.fact(value).rank
        axis = int(axis) % rank
        squeezed = body.graph.wire1(f"{result}_item", Squeeze([axis]), [value])
        body.graph.set_output(squeezed, f"{result}_item")
        picks.append(len(states) + len(out_axes))
        out_axes.append(axis)
        out_reverse.append(_chunk(reader, call, chunk))
    model = body.finish()
    op = Scan(model, len(states), len(scans), in_axes, in_reverse, out_axes, out_reverse)
    outlets = reader.wire(call, op, inputs)
    return [outlets[k] for k in picks]
