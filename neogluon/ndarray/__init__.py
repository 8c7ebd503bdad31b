"""``mx.nd``: arrays and the operators on them."""
from .ndarray import (NDArray, array, empty, zeros, ones, full, arange, linspace, eye, from_torch, to_torch,
                      from_numpy, from_dlpack, to_dlpack_for_read, to_dlpack_for_write, waitall,
                      concat, stack, infer_reshape)
from .ops import *  # noqa: F401,F403
from .nn_ops import *  # noqa: F401,F403
from . import random
globals().update(random._LEGACY)  # nd.random_uniform, nd.sample_normal, nd.shuffle, ...
from . import contrib
from . import _internal
from . import sparse
from . import image
from . import linalg
for _name in linalg.__all__:  # MXNet's flat names: nd.linalg_gemm2, nd.linalg_potrf, ...
    globals()["linalg_" + _name] = getattr(linalg, _name)
from .legacy_ops import *  # noqa: F401,F403
from .io import save, load, load_frombuffer, save_tobuffer
from ..operator import Custom  # nd.Custom: operators written in Python (mx.operator)
from .optimizer_ops import *  # noqa: F401,F403  multi-tensor and two-phase update operators
from . import optimizer_ops as _optimizer_ops
for _name in _optimizer_ops.CONTRIB:  # nd.contrib.adamw_update & co
    setattr(contrib, _name, getattr(_optimizer_ops, _name))
from . import detection_ops as _detection_ops
for _name in _detection_ops.__all__:  # nd.contrib.box_nms, MultiBoxPrior, ROIAlign & co
    setattr(contrib, _name, getattr(_detection_ops, _name))
ROIPooling = _detection_ops.ROIPooling
from . import quantization as _quantization
for _name in ("quantize_v2", "dequantize", "quantized_pooling", "quantized_concat",
              "quantized_flatten", "requantize"):  # nd.contrib.quantize_v2 & co (int8)
    setattr(contrib, _name, getattr(_quantization, _name))
from . import quantized_ops as _quantized_ops
for _name in _quantized_ops.__all__:  # nd.contrib.quantize, quantized_conv & co (unfused int8)
    setattr(contrib, _name, getattr(_quantized_ops, _name))
_internal._sg_mkldnn_conv = _quantization._sg_mkldnn_conv  # fused nodes of quantized graphs
_internal._sg_mkldnn_fully_connected = _quantization._sg_mkldnn_fully_connected
from .nn_legacy import *  # noqa: F401,F403  loss heads, Crop, im2col, samplers, *_v1
from .rnn_op import RNN, _gluon_rnn, _rnn_param_concat  # noqa: F401  the fused RNN operator
_internal._rnn_param_concat = _rnn_param_concat
from . import contrib_more as _contrib_more
for _name in _contrib_more.__all__:  # nd.contrib.PSROIPooling, fft, hawkesll & co
    setattr(contrib, _name, getattr(_contrib_more, _name))
from ._internal_more import imdecode  # MXNet 1.x's deprecated nd.imdecode

__all__ = ["NDArray", "array", "empty", "zeros", "ones", "full", "arange", "linspace", "eye",
           "from_torch",
           "to_torch", "from_numpy", "from_dlpack", "waitall", "random", "save", "load",
           "contrib", "sparse", "image", "linalg"]


def __getattr__(name):
    # nd.CachedOp runs a Symbol; the symbol layer sits above nd, so it is looked up lazily.
    if name == "CachedOp":
        from ..symbol.symbol import CachedOp
        return CachedOp
    if name in ("_DTYPE_NP_TO_MX", "_DTYPE_MX_TO_NP", "_GRAD_REQ_MAP"):   # MXNet's code maps
        from . import ndarray as _ndarray_module
        return getattr(_ndarray_module, name)
    if name in ("np", "numpy", "npx", "numpy_extension"):
        # F.np / F.npx inside hybrid_forward in NumPy mode (the layer above, looked up lazily)
        import importlib
        return importlib.import_module(".numpy" if name in ("np", "numpy")
                                       else ".numpy_extension", "neogluon")
    if name == "op" or name.startswith("gen_"):   # MXNet's operator modules (see _opmodule)
        import importlib
        try:
            return importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError:
            pass
    raise AttributeError(f"module 'neogluon.ndarray' has no attribute {name!r}")
