"""``mx.contrib.onnx``: MXNet 1.9.1's ONNX import API, and its older path to export.

``import_model(model_file)`` -> ``(sym, arg_params, aux_params)``, ``get_model_metadata``
and ``import_to_gluon(model_file, ctx)`` -> ``gluon.SymbolBlock`` translate an ONNX graph
into neogluon's ``mx.sym`` operators (:mod:`neogluon.onnx._import`; needs the ``onnx``
package). ``export_model`` is :func:`neogluon.onnx.export_model` (MXNet 1.9.1 marks this path
as deprecated in favour of ``mx.onnx``). MXNet prints a deprecation notice on each call;
neogluon does not.
"""
from ...onnx import export_model
from ...onnx._import import (import_model, get_model_metadata, import_to_gluon,  # noqa: F401
                             supported_operators)
from . import onnx2mx  # noqa: F401

# MXNet 1.9.1 keeps the undecorated functions under these names (the public ones print its
# deprecation notice); here both are the same functions.
export_model_ = export_model
import_model_ = import_model
get_model_metadata_ = get_model_metadata
import_to_gluon_ = import_to_gluon

__all__ = ["export_model", "import_model", "get_model_metadata", "import_to_gluon"]
