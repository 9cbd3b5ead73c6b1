"""Reading ONNX node attributes with messages that name the node."""
import numpy as np
from onnx import AttributeProto, numpy_helper

from ..errors import BadAttribute


class Attrs:
    def __init__(self, node_proto, where):
        self.where = where
        self.raw = {a.name: a for a in node_proto.attribute}

    def __contains__(self, name):
        return name in self.raw

    def _get(self, name, kind, default, required):
        if name not in self.raw:
            if required:
                raise BadAttribute(f"{self.where}: missing required attribute {name!r}")
            return None, default
        attr = self.raw[name]
        if attr.type != kind:
            raise BadAttribute(f"{self.where}: attribute {name!r} has type "
                               f"{AttributeProto.AttributeType.Name(attr.type)}, expected "
                               f"{AttributeProto.AttributeType.Name(kind)}")
        return attr, None

    def int(self, name, default=None, required=False):
        attr, default = self._get(name, AttributeProto.INT, default, required)
        return default if attr is None else int(attr.i)

    def ints(self, name, default=None, required=False):
        attr, default = self._get(name, AttributeProto.INTS, default, required)
        return default if attr is None else [int(i) for i in attr.ints]

    def float(self, name, default=None, required=False):
        attr, default = self._get(name, AttributeProto.FLOAT, default, required)
        return default if attr is None else float(attr.f)

    def floats(self, name, default=None, required=False):
        attr, default = self._get(name, AttributeProto.FLOATS, default, required)
        return default if attr is None else [float(f) for f in attr.floats]

    def string(self, name, default=None, required=False):
        attr, default = self._get(name, AttributeProto.STRING, default, required)
        return default if attr is None else attr.s.decode("utf-8")

    def tensor(self, name, default=None, required=False):
        attr, default = self._get(name, AttributeProto.TENSOR, default, required)
        return default if attr is None else numpy_helper.to_array(attr.t)

    def choice(self, name, allowed, default):
        value = self.string(name, default)
        if value not in allowed:
            raise BadAttribute(f"{self.where}: attribute {name} = {value!r} is not one of "
                               f"{', '.join(allowed)}")
        return value

    def check_unsupported(self, name, supported_values, default):
        """Refuse an attribute value we do not implement (with the node in the message)."""
        if name not in self.raw:
            return
        attr = self.raw[name]
        value = {AttributeProto.INT: lambda: attr.i, AttributeProto.STRING: lambda: attr.s.decode(),
                 AttributeProto.FLOAT: lambda: attr.f}.get(attr.type, lambda: None)()
        if value not in supported_values:
            raise BadAttribute(f"{self.where}: attribute {name} = {value!r} is not supported "
                               f"(supported: {supported_values}, default {default!r})")


def as_array(value):
    return np.asarray(value)
