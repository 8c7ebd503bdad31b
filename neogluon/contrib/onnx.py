"""``mx.contrib.onnx``: MXNet's older path to the ONNX API (see :mod:`neogluon.onnx`).

``export_model`` is :func:`neogluon.onnx.export_model` (MXNet 1.9.1 marks this path as
deprecated in favour of ``mx.onnx``). Importing ONNX models (``import_model``,
``get_model_metadata``, ``import_to_gluon``) is not supported and raises MXNetError.
"""
from ..onnx import export_model, import_model, get_model_metadata, import_to_gluon

__all__ = ["export_model", "import_model", "get_model_metadata", "import_to_gluon"]
