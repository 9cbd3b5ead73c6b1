"""ember.cook: the cooking side of ember (import, type, declutter, write plans).

    from ember.cook import onnx as cook_onnx, nnef as cook_nnef
    model = cook_onnx.load("model.onnx").into_model()
    cook_nnef.write_tar_gz(model, "model.nnef.tgz")

Dims may be symbolic (cook/dims.py): ONNX dim_params become symbols, unnamed dims fresh
ones, and `set_input_fact(0, "1,S,40,f32")` declares them. A symbolic TypedModel runs
(`run_reference` binds the symbols from the input shapes), writes (`extension
tract_symbol S;`), and becomes concrete with `model.set_symbols({"S": 100})`.
Support matrix and conformance ledger of the ONNX importer: docs/ops.md.
"""
from .errors import (BadAttribute, CookError, FormatError, MissingFact, ShapeError,
                     UnsupportedOp)
from .facts import Fact, InferenceFact, parse_fact
from .model import InferenceModel, TypedModel

__version__ = "0.1.0"

__all__ = ["CookError", "UnsupportedOp", "BadAttribute", "ShapeError", "MissingFact",
           "FormatError", "Fact", "InferenceFact", "parse_fact", "InferenceModel",
           "TypedModel", "__version__"]
