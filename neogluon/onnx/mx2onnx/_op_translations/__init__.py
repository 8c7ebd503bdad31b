"""MXNet 1.9.1's private per-operator ONNX converters (opsets 12 and 13); neogluon exports
through torch's ONNX exporter, so these modules are empty."""
from . import _op_translations_opset12, _op_translations_opset13  # noqa: F401
