"""The ONNX model-zoo "light" models, with weights worth testing against.

The `onnx` package ships nine small-file versions of classic image classifiers in
onnx/backend/test/data/light/. Their weights are produced by ConstantOfShape nodes, so
every weight tensor holds one repeated value: a conv that swaps two taps, or a transposed
matmul, gives the same numbers on such weights. `randomized_light_model` replaces every
such weight by seeded random values (He-style scaling, so activations keep their size),
then recalibrates each BatchNormalization on a seeded input: node by node with
onnxruntime, its mean/var are set to the actual per-channel statistics of its input, so
deep residual nets stay in range. Comparing outputs should use the logits (the input of
the final Softmax): probabilities saturate and hide differences.

    from zoo import light_model_names, randomized_light_model, with_logits_output
    model = randomized_light_model("resnet50", seed=0)
    model, logits = with_logits_output(model)       # logits is the name of the new output
    x = light_model_input("resnet50", seed=0)

Used by the cook tests and by the C-runtime model tests; depends only on numpy, onnx and
onnxruntime (never on ember), so it is an independent reference.
"""
import functools
import os

import numpy as np
import onnx
from onnx import helper, numpy_helper

LIGHT_DIR = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def light_model_names():
    """["bvlc_alexnet", "densenet121", …]: the light models the installed onnx ships."""
    return sorted(f[len("light_"):-len(".onnx")] for f in os.listdir(LIGHT_DIR)
                  if f.startswith("light_") and f.endswith(".onnx"))


def light_model_path(name):
    if os.path.isabs(name):
        return name
    stem = name if name.startswith("light_") else "light_" + name
    return os.path.join(LIGHT_DIR, stem + ".onnx")


def light_model_input(name, seed=0):
    """A seeded standard-normal input of the model's input shape (1x3x224x224 f32)."""
    model = onnx.load(light_model_path(name))
    shape = _data_input_shape(model)
    return np.random.default_rng(seed + 1000).standard_normal(shape).astype(np.float32)


def randomized_light_model(name, seed=0):
    """The light model with seeded random weights and calibrated BatchNorm statistics.

    Each call returns a new ModelProto (callers may change it); the work is cached.
    """
    return randomized_model(light_model_path(name), seed)


def randomized_model(path, seed=0):
    """Any model storing its weights as ConstantOfShape nodes (the light zoo, and the
    torch exports of tests/data/torch), with seeded random weights; BatchNorms are
    calibrated on the light model input (a model with BatchNorm must be a light one)."""
    model = onnx.ModelProto()
    model.CopyFrom(_randomized(path, seed))
    return model


def with_logits_output(model, copy=True):
    """(model with the final Softmax's input as an extra output, that tensor's name).

    A model without a final Softmax (densenet121 outputs its logits) is returned
    unchanged, with its first output's name. With copy=False the model is changed in
    place (saves a copy of vgg19's 550 MB of weights).
    """
    if copy:
        model = onnx.ModelProto.FromString(model.SerializeToString())
    producers = {out: node for node in model.graph.node for out in node.output}
    output = model.graph.output[0].name
    node = producers.get(output)
    if node is None or node.op_type != "Softmax":
        return model, output
    logits = node.input[0]
    model.graph.output.append(helper.make_tensor_value_info(logits, onnx.TensorProto.FLOAT,
                                                            None))
    return model, logits


# -- implementation --------------------------------------------------------------------
def _data_input_shape(model):
    initializers = {i.name for i in model.graph.initializer}
    for graph_input in model.graph.input:
        if graph_input.name not in initializers:
            return [d.dim_value for d in graph_input.type.tensor_type.shape.dim]
    raise ValueError("model has no data input")


def _consumer_role(model, tensor):
    """What a weight is for: ("conv_w", node), ("bias", …), ("bn_scale", …), …"""
    consumers = [(n, list(n.input).index(tensor)) for n in model.graph.node if tensor in n.input]
    for node, index in consumers:
        if node.op_type in ("Unsqueeze", "Reshape") and index == 0:
            return _consumer_role(model, node.output[0])
        if node.op_type == "Conv":
            return ("conv_w", node) if index == 1 else ("bias", node)
        if node.op_type == "Gemm":
            return ("gemm_w", node) if index == 1 else ("bias", node)
        if node.op_type == "BatchNormalization":
            return (("bn_scale", "bias", "bn_mean", "bn_var")[index - 1], node)
        if node.op_type == "Mul":
            return ("scale", node)
        if node.op_type == "Add":
            return ("bias", node)
    return ("other", None)


def _random_weight(role, node, shape, rng):
    shape = tuple(int(d) for d in shape)
    if role in ("conv_w", "gemm_w"):
        # He-uniform: variance 2 / fan_in keeps activations at the same scale through ReLUs
        if role == "conv_w":
            fan_in = int(np.prod(shape[1:]))
        else:
            trans_b = any(a.name == "transB" and a.i for a in node.attribute)
            fan_in = shape[1] if trans_b else shape[0]
        limit = np.float32(np.sqrt(6.0 / fan_in))
        weights = rng.random(shape, dtype=np.float32)
        weights *= 2 * limit
        weights -= limit
        return weights
    normal = rng.standard_normal(shape, dtype=np.float32)
    if role in ("bn_scale", "scale"):
        return rng.random(shape, dtype=np.float32) + np.float32(0.5)
    if role == "bn_mean":
        return np.zeros(shape, np.float32)
    if role == "bn_var":
        return np.ones(shape, np.float32)
    return normal * np.float32(0.1)


@functools.lru_cache(maxsize=4)
def _randomized(path, seed):
    model = onnx.load(path)
    rng = np.random.default_rng(seed)
    graph = model.graph
    initializers = {i.name: i for i in graph.initializer}
    kept_nodes, new_weights = [], {}
    for node in graph.node:
        if node.op_type == "ConstantOfShape" and node.input[0] in initializers:
            shape = numpy_helper.to_array(initializers[node.input[0]]).astype(np.int64)
            role, consumer = _consumer_role(model, node.output[0])
            new_weights[node.output[0]] = _random_weight(role, consumer, shape, rng)
        else:
            kept_nodes.append(node)
    used = {name for node in kept_nodes for name in node.input}
    del graph.node[:]
    graph.node.extend(kept_nodes)
    kept_inits = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept_inits)
    graph.initializer.extend(numpy_helper.from_array(v, k) for k, v in new_weights.items())
    init_names = {i.name for i in graph.initializer}
    data_inputs = [i for i in graph.input if i.name not in init_names and i.name in used]
    del graph.input[:]
    graph.input.extend(data_inputs)
    model.ir_version = max(model.ir_version, 4)     # initializers need not be inputs
    if any(n.op_type == "BatchNormalization" for n in model.graph.node):
        _calibrate_batchnorms(model, light_model_input(path, seed))
    return model


def _calibrate_batchnorms(model, x):
    """Run the graph node by node with onnxruntime; set each BatchNorm's mean/var from its input."""
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opsets = list(model.opset_import)
    initializers = {i.name: i for i in model.graph.initializer}
    values = {model.graph.input[0].name: x}
    for init in model.graph.initializer:
        values[init.name] = numpy_helper.to_array(init)
    for node in model.graph.node:
        if node.op_type == "BatchNormalization":
            data = values[node.input[0]].astype(np.float64)
            axes = (0,) + tuple(range(2, data.ndim))
            for slot, stat in ((3, data.mean(axis=axes)), (4, data.var(axis=axes))):
                array = stat.astype(np.float32)
                initializers[node.input[slot]].CopyFrom(
                    numpy_helper.from_array(array, node.input[slot]))
                values[node.input[slot]] = array
        inputs = [n for n in node.input if n]
        graph = helper.make_graph(
            [node], "step",
            [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(values[n].dtype),
                                           values[n].shape) for n in inputs],
            [helper.make_empty_tensor_value_info(n) for n in node.output if n])
        step = helper.make_model(graph, opset_imports=opsets)
        step.ir_version = model.ir_version
        session = ort.InferenceSession(step.SerializeToString(), options,
                                       providers=["CPUExecutionProvider"])
        outputs = session.run(None, {n: values[n] for n in inputs})
        for name, value in zip([n for n in node.output if n], outputs):
            values[name] = value


def symbolic_conv1d_model(seed=0):
    """A tiny causal conv1d net with free batch N and time T: Conv(pad 2, 0) → Relu →
    Transpose → Reshape to [N, 8*T]. For tests of symbolic shapes (host and QEMU)."""
    from onnx import TensorProto
    w = np.random.default_rng(seed).standard_normal((8, 4, 3)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], pads=[2, 0]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1]),
             helper.make_node("Reshape", ["t", "shape"], ["y"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4, "T"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "W"),
         numpy_helper.from_array(np.array([0, -1], np.int64), "shape")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
