"""ONNX importer: `load(path | bytes | onnx.ModelProto) -> InferenceModel`.

The importer is a translator: each ONNX node becomes core ops (cook/ops) once its input
facts are known, through the table in registry.py filled by nn.py, arith.py, shape.py.
"""
from . import arith, control, nn, norm, select, shape, tensor  # noqa: F401  (translators)
from .loader import from_proto, load
from .registry import TRANSLATORS


def supported_ops():
    return sorted(TRANSLATORS)


__all__ = ["load", "from_proto", "supported_ops"]
