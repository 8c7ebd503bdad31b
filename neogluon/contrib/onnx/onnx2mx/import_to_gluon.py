"""``mx.contrib.onnx.onnx2mx.import_to_gluon``: ``import_to_gluon``."""
from ....onnx._import import import_to_gluon  # noqa: F401
from .import_onnx import GraphProto  # noqa: F401
