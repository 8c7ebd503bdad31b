"""``mx.onnx.mx2onnx._export_model``: ``export_model`` and ``get_operator_support``."""
from ... import symbol  # noqa: F401
from ...base import string_types  # noqa: F401
from .. import export_model  # noqa: F401
from .._import import _need_onnx
from ._export_helper import load_module  # noqa: F401
from ._export_onnx import MXNetGraph  # noqa: F401


def get_operator_support(opset_version=None):
    """The MXNet operator names ``export_model`` can write (sorted).

    neogluon exports through ``torch.export`` and torch's ONNX exporter: a graph is traced into
    the torch operations neogluon runs for it, so every MXNet operator neogluon computes is
    listed, whatever ``opset_version`` (accepted for MXNet's signature; needs ``onnx``, as in
    MXNet). An operator whose torch operations have no ONNX form at the chosen opset fails at
    export with torch's exporter's message."""
    _need_onnx("get_operator_support")
    if opset_version is not None:
        try:
            int(opset_version)
        except (TypeError, ValueError):
            from ...base import MXNetError
            raise MXNetError(f"get_operator_support: opset_version must be an int, got "
                             f"{opset_version!r}") from None
    import neogluon as ng
    from ..._opmodule import registry_names
    out = []
    for name in registry_names():
        if name.startswith("_backward"):
            continue
        ns, short = ng.ndarray, name
        for prefix, sub in (("_contrib_", "contrib"), ("_linalg_", "linalg"),
                            ("_image_", "image"), ("_random_", "random")):
            if name.startswith(prefix):
                ns, short = getattr(ng.ndarray, sub, None), name[len(prefix):]
                break
        if ns is not None and callable(getattr(ns, short, None)):
            out.append(name)
    return sorted(out)
