"""``mx.contrib.onnx.onnx2mx.import_model``: ``import_model`` and ``get_model_metadata``."""
from ....onnx._import import import_model, get_model_metadata  # noqa: F401
from .import_onnx import GraphProto  # noqa: F401
