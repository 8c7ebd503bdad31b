"""``mx.contrib.onnx.onnx2mx``: the module paths of MXNet 1.9.1's ONNX importer.

``onnx2mx.import_model.import_model``/``get_model_metadata``,
``onnx2mx.import_to_gluon.import_to_gluon`` and ``onnx2mx.import_onnx.GraphProto`` are
neogluon's importer (:mod:`neogluon.onnx._import`), so scripts that import them from these
paths run. The private translation modules (``_import_helper``, ``_op_translations``,
``_translation_utils``) hold MXNet's per-operator functions; neogluon's importer has its own
table (``mx.contrib.onnx.supported_operators()``), and those modules are empty here.
"""
from . import import_model, import_onnx, import_to_gluon  # noqa: F401
