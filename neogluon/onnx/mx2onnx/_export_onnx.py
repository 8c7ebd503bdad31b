"""``mx.onnx.mx2onnx._export_onnx``: ``MXNetGraph``."""
from ... import ndarray as nd  # noqa: F401
from ...base import MXNetError


class MXNetGraph:
    """MXNet 1.9.1's operator-by-operator ONNX converter. neogluon exports through torch's
    ONNX exporter instead (``mx.onnx.export_model``), so this class has no converters:
    creating one raises MXNetError saying so."""

    registry_ = {}

    def __init__(self, *args, **kwargs):
        raise MXNetError(
            "MXNetGraph: neogluon has no operator-by-operator ONNX converter (MXNet's "
            "registry of per-operator functions); export with mx.onnx.export_model(sym, "
            "params, in_shapes, ...), which traces the graph with torch.export and writes it "
            "with torch's ONNX exporter")
