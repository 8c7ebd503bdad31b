"""``mx.npx``: MXNet's NumPy-extension operators (neural-network operators and switches).

The operators are neogluon's ``mx.nd`` operators, taking and returning ``mx.np.ndarray``
(the arrays are re-wrapped, never copied). The switches (``set_np``, ``reset_np``,
``is_np_array``, ``is_np_shape``, ``use_np``...) are those of :mod:`neogluon.util`.
"""
import functools

import torch

from ..util import (set_np, reset_np, is_np_array, is_np_shape, use_np, use_np_array,  # noqa: F401
                    use_np_shape, np_array, np_shape, get_cuda_compute_capability)
from ..context import Context, cpu, gpu, cpu_pinned, current_context, num_gpus, gpu_memory_info  # noqa: F401,E501
from ..base import MXNetError
from ..ndarray.ndarray import NDArray, waitall  # noqa: F401
from .. import ndarray as _nd
from ..numpy.multiarray import ndarray, _wrap, _np_tree, _nd_tree  # noqa: F401


_to_nd = _nd_tree
_to_np = _np_tree


def _make_op(name, target, rename=None, namespace=None):
    """npx.``name``: the nd operator ``target`` on mx.np arrays; ``rename`` maps npx's
    keyword names to the nd operator's."""
    @functools.wraps(target)
    def op(*args, **kwargs):
        if rename:
            kwargs = {rename.get(k, k): v for k, v in kwargs.items()}
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = _to_nd(out)
        r = target(*_to_nd(args), **{k: _to_nd(v) for k, v in kwargs.items()})
        return out if out is not None else _to_np(r)
    op.__name__ = op.__qualname__ = name
    op.__module__ = "mxnet.numpy_extension"
    (globals() if namespace is None else namespace)[name] = op
    return op


_DATA = {"x": "data", "a": "data"}
for _name, _target, _rename in [
        ("relu", _nd.relu, _DATA), ("sigmoid", _nd.sigmoid, _DATA),
        ("activation", _nd.Activation, _DATA), ("softmax", _nd.softmax, _DATA),
        ("log_softmax", _nd.log_softmax, _DATA), ("leaky_relu", _nd.LeakyReLU, _DATA),
        ("fully_connected", _nd.FullyConnected, _DATA),
        ("convolution", _nd.Convolution, _DATA), ("deconvolution", _nd.Deconvolution, _DATA),
        ("pooling", _nd.Pooling, _DATA), ("batch_norm", _nd.BatchNorm, _DATA),
        ("layer_norm", _nd.LayerNorm, _DATA), ("embedding", _nd.Embedding, _DATA),
        ("dropout", _nd.Dropout, _DATA), ("rnn", _nd.RNN, _DATA), ("pick", _nd.pick, _DATA),
        ("one_hot", _nd.one_hot, _DATA), ("topk", _nd.topk, _DATA),
        ("sequence_mask", _nd.SequenceMask, _DATA), ("batch_dot", _nd.batch_dot, None),
        ("batch_flatten", _nd.flatten, _DATA), ("gather_nd", _nd.gather_nd, _DATA),
        ("erf", _nd.erf, _DATA), ("erfinv", _nd.erfinv, _DATA), ("gamma", _nd.gamma, _DATA),
        ("gammaln", _nd.gammaln, _DATA), ("smooth_l1", _nd.smooth_l1, _DATA),
        ("cast", _nd.cast, _DATA), ("shape_array", _nd.shape_array, _DATA),
        ("slice", _nd.slice, _DATA), ("roi_pooling", _nd.ROIPooling, _DATA),
        ("reshape_like", _nd.reshape_like, None), ("group_norm", _nd.GroupNorm, _DATA),
        ("instance_norm", _nd.InstanceNorm, _DATA), ("stop_gradient", _nd.stop_gradient, _DATA),
        ("arange_like", _nd.contrib.arange_like, _DATA),
        ("multibox_prior", _nd.contrib.MultiBoxPrior, _DATA),
        ("multibox_target", _nd.contrib.MultiBoxTarget, None),
        ("multibox_detection", _nd.contrib.MultiBoxDetection, None),
        ("box_nms", _nd.contrib.box_nms, _DATA), ("box_iou", _nd.contrib.box_iou, None),
        ("index_copy", _nd.contrib.index_copy, None),
        ("broadcast_like", _nd.broadcast_like, None)]:
    _make_op(_name, _target, _rename)


def masked_softmax(data, mask, axis=-1, temperature=1.0, normalize=True):
    """softmax over ``axis`` where ``mask`` is true; masked positions give 0."""
    t = data._t
    m = mask._t.bool() if isinstance(mask, NDArray) else torch.as_tensor(mask).bool()
    x = t / temperature
    x = x.masked_fill(~m, float("-inf"))
    r = torch.softmax(x, dim=axis).masked_fill(~m, 0.0)
    return _wrap(r, data._ctx)


def masked_log_softmax(data, mask, axis=-1, temperature=1.0, normalize=True):
    t = data._t
    m = mask._t.bool() if isinstance(mask, NDArray) else torch.as_tensor(mask).bool()
    x = (t / temperature).masked_fill(~m, float("-inf"))
    return _wrap(torch.log_softmax(x, dim=axis).masked_fill(~m, float("-inf")), data._ctx)


def constraint_check(input, msg="Constraint violated."):  # noqa: A002 - MXNet's name
    """True (as a bool array) when every element of ``input`` is true; ValueError otherwise.
    ``input`` must be a bool array (MXNetError otherwise, as MXNet's operator checks)."""
    if not isinstance(input, NDArray) or input._t.dtype is not torch.bool:
        got = input.dtype if isinstance(input, NDArray) else type(input).__name__
        raise MXNetError(f"npx.constraint_check: input must be a bool array, got {got}")
    ok = bool(input._t.detach().all())
    if not ok:
        raise ValueError(msg)
    return _wrap(torch.tensor(True, device=input._t.device), input._ctx)


def nonzero(a):
    """The indices of the non-zero elements, one row per element (shape (N, a.ndim))."""
    t = a._t.detach()
    return _wrap(torch.nonzero(t.reshape(1) if t.dim() == 0 else t), a._ctx)


def reshape(a, newshape, reverse=False, order="C"):
    """Reshape with npx's special values: -1 infer, -2 copy this axis, -3 drop an axis of
    size 1, -4 copy all remaining axes, -5 merge two axes, -6 split an axis in two (the next
    two values give the parts, one may be -1)."""
    src = list(a.shape)
    spec = [newshape] if isinstance(newshape, int) else list(newshape)
    if reverse:
        src, spec = src[::-1], spec[::-1]
    out, i, j = [], 0, 0
    infer = None
    while j < len(spec):
        s = spec[j]
        if s >= 0:
            out.append(s)
            i += 1
        elif s == -1:
            if infer is not None:
                raise MXNetError(f"npx.reshape: more than one -1 in {newshape}")
            infer = len(out)
            out.append(1)
            i += 1
        elif s == -2:
            out.append(src[i])
            i += 1
        elif s == -3:
            if src[i] != 1:
                raise MXNetError(f"npx.reshape: -3 needs an axis of size 1, axis {i} of "
                                 f"{tuple(a.shape)} has {src[i]}")
            i += 1
        elif s == -4:
            out.extend(src[i:])
            i = len(src)
        elif s == -5:
            out.append(src[i] * src[i + 1])
            i += 2
        elif s == -6:
            d1, d2 = spec[j + 1], spec[j + 2]
            if d1 == -1:
                d1 = src[i] // d2
            if d2 == -1:
                d2 = src[i] // d1
            out += [d1, d2]
            i += 1
            j += 2
        else:
            raise MXNetError(f"npx.reshape: invalid value {s} in {newshape}")
        j += 1
    if infer is not None:
        known = 1
        for k, v in enumerate(out):
            if k != infer:
                known *= v
        total = 1
        for v in a.shape:
            total *= v
        out[infer] = total // known if known else 0
    if reverse:
        out = out[::-1]
    return a.reshape(tuple(out))


from .utils import save, load  # noqa: E402,F401
from . import utils  # noqa: E402,F401
from ..base import classproperty, with_metaclass  # noqa: E402,F401  (MXNet's npx has them)


from . import random  # noqa: E402,F401
from . import image  # noqa: E402,F401
from ..numpy import _hooks  # noqa: E402

# a hybridized block records the operators (not the switches and file functions)
_hooks.hook_module(globals(), [n for n, v in list(globals().items())
                               if not n.startswith("_") and getattr(v, "__module__", "") in
                               ("mxnet.numpy_extension", __name__)
                               and n not in ("save", "load", "constraint_check")],
                   "numpy_extension")
