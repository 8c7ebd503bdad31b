"""``mx.onnx.mx2onnx``: the module paths of MXNet 1.9.1's ONNX exporter.

``export_model`` is :func:`neogluon.onnx.export_model` (torch's ONNX exporter, not MXNet's
operator-by-operator translation); ``get_operator_support`` lists the MXNet operators it
exports. The private translation modules (``_op_translations``) hold MXNet's per-operator
converters and are empty here.
"""
from ._export_model import export_model, get_operator_support  # noqa: F401
