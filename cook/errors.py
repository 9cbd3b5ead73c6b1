"""The one exception hierarchy of the cooking side.

Every message names where the problem is (node, op, input facts) and, when there is
one, the fix. Callers catch `CookError`; the subclasses say which stage failed.
"""


class CookError(Exception):
    """Base of every error raised by `ember.cook`."""


class UnsupportedOp(CookError):
    """An ONNX/NNEF operator (or an attribute combination) the importer cannot translate."""


class BadAttribute(CookError):
    """An attribute is missing, malformed or out of range."""


class ShapeError(CookError):
    """Input facts are inconsistent with what the op requires."""


class MissingFact(CookError):
    """A fact needed for typing is unknown (usually a model input)."""


class FormatError(CookError):
    """A malformed file: ONNX protobuf, NNEF text, archive or .dat tensor."""


def node_context(node_name, op_name, input_facts=None):
    """'node "conv1" (Conv) with inputs [1,3,224,224,f32, 64,3,7,7,f32]' for messages."""
    text = f'node "{node_name}" ({op_name})'
    if input_facts is not None:
        text += " with inputs [" + ", ".join(str(f) for f in input_facts) + "]"
    return text
