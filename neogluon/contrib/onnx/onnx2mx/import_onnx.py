"""``mx.contrib.onnx.onnx2mx.import_onnx``: ``GraphProto``, the importer of an ONNX graph.

MXNet 1.9.1's class turns an ``onnx.GraphProto`` (not a file) into a symbol; neogluon's wraps
the same importer the file-level functions use. ``convert_map`` maps each ONNX operator type
neogluon translates to its translation function (neogluon's own, called with the importer and
the node, not MXNet's ``(attrs, inputs, proto_obj)``).
"""
from .... import ndarray as nd  # noqa: F401
from .... import symbol  # noqa: F401
from ....base import MXNetError, string_types  # noqa: F401
from ....onnx import _import as _imp

convert_map = {**_imp._CONVERT, **_imp._FOLD}


def _model(graph, opset_version, what):
    onnx = _imp._need_onnx(what)
    if not isinstance(graph, onnx.GraphProto):
        raise MXNetError(f"{what}: expected an onnx.GraphProto, got {type(graph).__name__}")
    if opset_version is None:
        opset_version = onnx.defs.onnx_opset_version()
    try:
        opset_version = int(opset_version)
    except (TypeError, ValueError):
        raise MXNetError(f"{what}: opset_version must be an int, got {opset_version!r}") from None
    return onnx.helper.make_model(
        graph, opset_imports=[onnx.helper.make_opsetid("", opset_version)])


class GraphProto:
    """Imports ONNX graphs (``onnx.GraphProto``) into neogluon symbols, as MXNet's
    ``GraphProto``: ``from_onnx``, ``get_graph_metadata``, ``graph_to_gluon``."""

    def __init__(self):
        self.opset_version = None

    def from_onnx(self, graph, opset_version=None):
        """``(sym, arg_params, aux_params)`` of ``graph`` read with operator set
        ``opset_version`` (the installed onnx's newest when None)."""
        model = _model(graph, opset_version, "GraphProto.from_onnx")
        self.opset_version = model.opset_import[0].version
        return _imp._Importer(model, f"<graph {graph.name or 'unnamed'}>",
                              "GraphProto.from_onnx").run()

    def get_graph_metadata(self, graph):
        """``{'input_tensor_data': [(name, shape, elem_type)...], 'output_tensor_data':
        [(name, shape)...]}`` of ``graph``, as ``get_model_metadata``."""
        _model(graph, None, "GraphProto.get_graph_metadata")
        return _imp._metadata(graph)

    def graph_to_gluon(self, graph, ctx, opset_version=None):
        """A ``gluon.SymbolBlock`` of ``graph`` with its parameters loaded on ``ctx``."""
        import os
        import tempfile
        model = _model(graph, opset_version, "GraphProto.graph_to_gluon")
        self.opset_version = model.opset_import[0].version
        fd, path = tempfile.mkstemp(suffix=".onnx")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(model.SerializeToString())
            return _imp.import_to_gluon(path, ctx)
        finally:
            os.unlink(path)
