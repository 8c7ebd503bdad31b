"""``nd.contrib``: operators MXNet keeps under contrib."""
from __future__ import annotations

import math
import threading
import warnings

import torch

from ..base import MXNetError
from .ndarray import NDArray, _new, _run, _assign_out, _state
from .ops import isnan, isinf, isfinite  # noqa: F401
from ._deformable import DeformableConvolution, ModulatedDeformableConvolution  # noqa: F401
from .nn_ops import CTCLoss, ctc_loss  # noqa: F401  (MXNet's older names of nd.CTCLoss)
from .nn_ops import BatchNorm as _BatchNorm, Embedding as _Embedding
from .ops import relu as _relu

__all__ = ["isnan", "isinf", "isfinite", "DeformableConvolution",
           "ModulatedDeformableConvolution", "arange_like", "boolean_mask", "index_copy",
           "div_sqrt_dim", "AdaptiveAvgPooling2D", "BilinearResize2D", "SyncBatchNorm",
           "interleaved_matmul_selfatt_qk", "interleaved_matmul_selfatt_valatt",
           "interleaved_matmul_encdec_qk", "interleaved_matmul_encdec_valatt", "foreach",
           "while_loop", "cond", "BatchNormWithReLU", "SparseEmbedding", "CTCLoss", "ctc_loss"]


def _t(x, op, what="data"):
    if isinstance(x, NDArray):
        return x._t
    raise TypeError(f"{op}: {what} must be an NDArray, got {type(x).__name__}")


def arange_like(data, start=0.0, step=1.0, repeat=1, axis=None, ctx=None, out=None,
                name=None):
    """``start, start + step, ...`` shaped like ``data`` (or as long as its ``axis``)."""
    t = _t(data, "arange_like")
    n = t.numel() if axis is None else t.shape[axis]
    vals = start + step * torch.div(torch.arange(n, dtype=torch.float64, device=t.device),
                                    repeat, rounding_mode="floor")
    vals = vals.to(t.dtype)
    if axis is None:
        vals = vals.reshape(t.shape)
    if t.requires_grad and t.is_floating_point():
        # In MXNet the result is a node of the graph whose gradient to ``data`` is zero.
        vals = _run(_ZeroGradLike.apply, vals, t)
    return _assign_out(_new(vals, data._ctx), out)


class _ZeroGradLike(torch.autograd.Function):
    """``values``, recorded as a function of ``like`` with a zero gradient."""

    @staticmethod
    def forward(ctx, values, like):
        ctx.like_shape, ctx.like_dtype = like.shape, like.dtype
        return values.clone()

    @staticmethod
    def backward(ctx, grad):
        return None, torch.zeros(ctx.like_shape, dtype=ctx.like_dtype, device=grad.device)


def boolean_mask(data, index, axis=0, out=None, name=None):
    """The slices of ``data`` along ``axis`` where ``index`` is non-zero."""
    t = _t(data, "boolean_mask")
    m = _t(index, "boolean_mask", "index").detach()
    if m.dim() != 1 or m.shape[0] != t.shape[axis]:
        raise MXNetError(f"boolean_mask: index of shape {index.shape} must be 1-D with "
                         f"{t.shape[axis]} entries (axis {axis} of data shape {data.shape})")
    keep = torch.nonzero(m != 0).reshape(-1)
    return _assign_out(_new(_run(torch.index_select, t, axis, keep), data._ctx), out)


def index_copy(old_tensor, index_vector, new_tensor, out=None, name=None):
    """A copy of ``old_tensor`` whose rows ``index_vector`` are replaced by ``new_tensor``."""
    t = _t(old_tensor, "index_copy")
    idx = _t(index_vector, "index_copy", "index_vector").detach().long()
    v = _t(new_tensor, "index_copy", "new_tensor")
    return _assign_out(_new(_run(torch.index_copy, t, 0, idx, v), old_tensor._ctx), out)


def div_sqrt_dim(data, out=None, name=None):
    """``data / sqrt(data.shape[-1])``."""
    t = _t(data, "div_sqrt_dim")
    return _assign_out(_new(_run(torch.div, t, math.sqrt(t.shape[-1])), data._ctx), out)


def getnnz(data=None, axis=None, out=None, name=None):
    """The number of stored values of a CSR matrix: in all (``axis=None``, a one-element
    int64 array) or per row (``axis=1``).

    Parameters
    ----------
    data : CSRNDArray
    axis : None or 1
        MXNet 1.9.1 supports no other axis.
    out : NDArray, optional
    """
    if getattr(data, "stype", None) != "csr":
        raise MXNetError(f"getnnz: data must be a CSRNDArray, got "
                         f"{getattr(data, 'stype', type(data).__name__)}")
    indptr = data.indptr._t.long()
    if axis is None:
        r = indptr[-1:].clone()
    elif axis in (1, -1):
        r = indptr[1:] - indptr[:-1]
    else:
        raise MXNetError(f"getnnz with axis = {axis} is not supported")
    return _assign_out(_new(r, data._ctx), out)


def rand_zipfian(true_classes, num_sampled, range_max, ctx=None):
    """Draw ``num_sampled`` classes (with replacement) from the log-uniform distribution
    ``P(c) = log((c+2)/(c+1)) / log(range_max+1)`` over ``[0, range_max)``.

    Parameters
    ----------
    true_classes : NDArray
        The target classes, for their expected counts.
    num_sampled : int
    range_max : int
    ctx : Context, optional
        Where the samples go (``true_classes``' context by default).

    Returns
    -------
    sampled_classes : NDArray
        int64, ``(num_sampled,)``.
    expected_count_true : NDArray
        float64, the expected count of each true class among ``num_sampled`` draws.
    expected_count_sampled : NDArray
        float64, the same for each sampled class.
    """
    from . import random as _random
    ctx = ctx or true_classes.context
    log_range = math.log(range_max + 1)
    u = _random.uniform(0, log_range, shape=(num_sampled,), dtype="float64", ctx=ctx)._t
    sampled = (torch.exp(u) - 1).long() % range_max

    def expected(c):
        c = c.double()
        return torch.log((c + 2.0) / (c + 1.0)) / log_range * num_sampled
    true_t = true_classes._t.detach().to(ctx.torch_device)
    return (_new(sampled, ctx), _new(expected(true_t), ctx), _new(expected(sampled), ctx))


# ------------------------------------------------- resizing, pooling, attention (GluonCV/NLP)
def _check_4d(data, op):
    t = _t(data, op)
    if t.dim() != 4:
        raise MXNetError(f"{op}: data must be 4-D (NCHW), got shape {data.shape}")
    return t


def _size_pair(output_size, op):
    if output_size is None or output_size == () or output_size == []:
        return (1, 1)
    if isinstance(output_size, int):
        return (output_size, output_size)
    size = tuple(int(v) for v in output_size)
    if len(size) == 1:
        return (size[0], size[0])
    if len(size) != 2 or min(size) < 1:
        raise MXNetError(f"{op}: output_size must be an int or (height, width) of positive "
                         f"ints, got {output_size!r}")
    return size


def AdaptiveAvgPooling2D(data, output_size=(), out=None, name=None):
    """Average pooling of NCHW ``data`` to ``output_size`` (an int, ``(h, w)``, or empty for
    1x1); window ``i`` covers rows ``floor(i*H/h)`` to ``ceil((i+1)*H/h)``, as in MXNet."""
    import torch.nn.functional as F
    t = _check_4d(data, "AdaptiveAvgPooling2D")
    size = _size_pair(output_size, "AdaptiveAvgPooling2D")
    return _assign_out(_new(_run(F.adaptive_avg_pool2d, t, size), data._ctx), out)


def _resize_dim(n, scale, mode):
    if mode == "odd_scale" and n % 2 == 1:
        return int((n - 1) * scale) + 1
    return int(n * scale)


_RESIZE_MODES = ("size", "like", "odd_scale", "to_even_down", "to_even_up", "to_odd_down",
                 "to_odd_up")


def BilinearResize2D(data, like=None, height=1, width=1, scale_height=None, scale_width=None,
                     mode="size", align_corners=True, out=None, name=None):
    """Bilinear resizing of NCHW ``data``, with MXNet 1.9.1's modes.

    ``mode='size'``: to ``(height, width)``, or ``(int(H*scale_height), int(W*scale_width))``
    when both scales are given; ``'odd_scale'``: the scaled size, ``(n-1)*scale+1`` for an odd
    dimension; ``'like'``: the height and width of ``like``; ``'to_even_down'``,
    ``'to_even_up'``, ``'to_odd_down'``, ``'to_odd_up'``: the nearest even/odd size below or
    above. ``align_corners`` (default True, as in MXNet) maps the corner pixels onto each other;
    False samples at pixel centres.
    """
    import torch.nn.functional as F
    op = "BilinearResize2D"
    t = _check_4d(data, op)
    if mode not in _RESIZE_MODES:
        raise MXNetError(f"{op}: mode must be one of {_RESIZE_MODES}, got {mode!r}")
    if (like is not None) != (mode == "like"):
        raise MXNetError(f"{op}: expects {2 if mode == 'like' else 1} inputs: the second "
                         "input `like` goes with mode='like' and only with it")
    H, W = t.shape[2], t.shape[3]
    if mode == "like":
        ls = like.shape
        if len(ls) != 4:
            raise MXNetError(f"{op}: like must be 4-D, got shape {ls}")
        oh, ow = ls[2], ls[3]
    elif mode in ("size", "odd_scale"):
        if scale_height is None and scale_width is None and mode == "size":
            oh, ow = int(height), int(width)
        elif scale_height is None or scale_width is None:
            raise MXNetError(f"{op}: mode={mode!r} with scales needs both scale_height and "
                             f"scale_width (got {scale_height!r}, {scale_width!r})")
        else:
            oh = _resize_dim(H, float(scale_height), mode)
            ow = _resize_dim(W, float(scale_width), mode)
    else:
        want_odd = "odd" in mode
        step = 1 if mode.endswith("_up") else -1

        def fix(n):
            return n if (n % 2 == 1) == want_odd else n + step
        oh, ow = fix(H), fix(W)
    if oh < 1 or ow < 1:
        raise MXNetError(f"{op}: the output size ({oh}, {ow}) of input shape {data.shape} "
                         f"(mode {mode!r}) must be positive")
    ac = bool(align_corners)

    def resize(x):
        # A dimension resized to 1 samples the first row/column (MXNet), not the centre.
        if oh == 1:
            x = x[:, :, :1, :]
        if ow == 1:
            x = x[:, :, :, :1]
        if x.dtype not in (torch.float32, torch.float64):
            return F.interpolate(x.float(), size=(oh, ow), mode="bilinear",
                                 align_corners=ac).to(x.dtype)
        return F.interpolate(x, size=(oh, ow), mode="bilinear", align_corners=ac)
    return _assign_out(_new(_run(resize, t), data._ctx), out)


class _AllReduceSum(torch.autograd.Function):
    """Sum of a tensor over the workers of the torch.distributed job; the gradient of each
    worker's copy of the sum is the sum of the workers' gradients (an all_reduce again)."""

    @staticmethod
    def forward(ctx, t):
        import torch.distributed as dist
        t = t.detach().clone()
        dist.all_reduce(t)
        return t

    @staticmethod
    def backward(ctx, grad):
        import torch.distributed as dist
        grad = grad.detach().clone().contiguous()
        dist.all_reduce(grad)
        return grad


def _dist_group_size():
    """The number of workers of an initialised torch.distributed job (1 without one)."""
    try:
        import torch.distributed as dist
    except ImportError:  # pragma: no cover - torch always ships it
        return 1
    if not (dist.is_available() and dist.is_initialized()):
        return 1
    return dist.get_world_size()


class _Round:
    def __init__(self, n):
        self.n = n
        self.parts = []
        self.total = None
        self.error = None


_SBN_LOCK = threading.Condition()
_SBN_ROUNDS = {}
_SBN_WARNED = set()


def _sbn_sum(t, key, ndev, dist_world):
    """Differentiable sum of ``t`` over the ``ndev`` replicas of this process that run the
    layer ``key`` in their own threads, then over the workers of the dist job."""
    if ndev > 1:
        with _SBN_LOCK:
            r = _SBN_ROUNDS.get(key)
            if r is None:
                r = _SBN_ROUNDS[key] = _Round(ndev)
            r.parts.append(t)
            if len(r.parts) == ndev:
                del _SBN_ROUNDS[key]
                dev = r.parts[0].device
                total = r.parts[0]
                for p in r.parts[1:]:
                    total = total + p.to(dev)
                if dist_world > 1:
                    total = _AllReduceSum.apply(total)
                r.total = total
                _SBN_LOCK.notify_all()
            else:
                from ..kvstore._dist_env import collective_timeout
                limit = collective_timeout()
                ok = _SBN_LOCK.wait_for(lambda: r.total is not None or r.error is not None,
                                        timeout=limit)
                if r.error is not None:
                    raise MXNetError(r.error)
                if not ok:
                    if _SBN_ROUNDS.get(key) is r:
                        del _SBN_ROUNDS[key]
                    r.error = (f"SyncBatchNorm {key!r}: only {len(r.parts)} of num_devices="
                               f"{ndev} replicas ran their forward within {limit:g} s "
                               "(NEOGLUON_KVSTORE_TIMEOUT); run each context's forward in its "
                               "own thread, or set num_devices to the number of replicas")
                    _SBN_LOCK.notify_all()
                    raise MXNetError(r.error)
        return r.total.to(t.device)
    if dist_world > 1:
        return _AllReduceSum.apply(t)
    return t


def SyncBatchNorm(data, gamma, beta, moving_mean, moving_var, eps=1e-3, momentum=0.9,
                  fix_gamma=True, use_global_stats=False, output_mean_var=False, ndev=1,
                  key=None, out=None, name=None):
    """MXNet's ``_contrib_SyncBatchNorm``: BatchNorm over channel axis 1 whose training-mode
    statistics (per-channel mean and biased variance) are those of the whole batch of one
    step: the slices of the ``ndev`` replicas of this process that call it with the same
    ``key`` from their own threads, and of every worker of an initialised torch.distributed
    job (a dist kvstore's process group), through a differentiable all_reduce.

    Every participant must call it the same number of times in training mode (it is a
    collective). With ``ndev > 1`` called from the main thread (the replicas' forwards one
    after the other) there is nobody to wait for: each replica uses its own slice's
    statistics (still combined across dist workers), with a warning once per key.
    """
    from .nn_ops import BatchNorm, _moving_update, _tt
    world = _dist_group_size()
    ndev = int(ndev or 1)
    training = _state.training and not use_global_stats
    if ndev > 1 and threading.current_thread() is threading.main_thread():
        if key not in _SBN_WARNED:
            _SBN_WARNED.add(key)
            warnings.warn(f"SyncBatchNorm {key!r}: num_devices={ndev} but the forward runs in "
                          "the main thread, one replica after the other; each replica "
                          "normalises with its own slice's statistics (run each context's "
                          "forward in its own thread to synchronise them)", UserWarning)
        ndev = 1
    if not training or (ndev <= 1 and world <= 1):
        return BatchNorm(data, gamma, beta, moving_mean, moving_var, eps=eps, momentum=momentum,
                         fix_gamma=fix_gamma, use_global_stats=use_global_stats,
                         output_mean_var=output_mean_var, out=out)
    x = _tt(data, "SyncBatchNorm")
    g = _tt(gamma, "SyncBatchNorm", "gamma")
    b = _tt(beta, "SyncBatchNorm", "beta")
    mm = _tt(moving_mean, "SyncBatchNorm", "moving_mean")
    mv = _tt(moving_var, "SyncBatchNorm", "moving_var")
    if x.dim() < 2:
        raise MXNetError(f"SyncBatchNorm: data must have a channel axis 1, got shape "
                         f"{data.shape}")
    c = x.shape[1]
    for arr, what in ((g, "gamma"), (b, "beta"), (mm, "moving_mean"), (mv, "moving_var")):
        if arr.numel() != c:
            raise MXNetError(f"SyncBatchNorm: {what} has shape {tuple(arr.shape)} but data "
                             f"shape {data.shape} has {c} channels on axis 1")
    if fix_gamma:
        with torch.no_grad():
            g.fill_(1.0)
        if _state.recording and g.requires_grad:
            g = g * 0.0 + 1.0
        else:
            g = torch.ones_like(g, requires_grad=False)
    key = str(key)

    def compute(x, g, b):
        cdt = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
        xf = x.to(cdt)
        dims = [0] + list(range(2, x.dim()))
        view = (1, c) + (1,) * (x.dim() - 2)
        n_local = xf.numel() // max(c, 1)
        s = xf.sum(dims)
        tot = _sbn_sum(torch.cat([s, s.new_full((1,), float(n_local))]), key + "/sum", ndev,
                       world)
        n = tot[c:].detach()
        mean = tot[:c] / n
        d = xf - mean.view(view)
        var = _sbn_sum((d * d).sum(dims), key + "/sq", ndev, world) / n
        y = d * torch.rsqrt(var + eps).view(view) * g.to(cdt).view(view) + b.to(cdt).view(view)
        return y.to(x.dtype), mean, var

    r, mean, var = _run(compute, x, g, b)
    mean_d, var_d = mean.detach().to(mm.dtype), var.detach().to(mv.dtype)
    if _state.recording and r.requires_grad:
        r.register_hook(_moving_update(mm, mv, mean_d, var_d, float(momentum)))
    res = _assign_out(_new(r, data._ctx), out)
    if output_mean_var:
        return [res, _new(mean_d.clone(), data._ctx),
                _new(torch.rsqrt(var_d + eps), data._ctx)]
    return res


def _heads_split(t, heads, parts, op, what):
    """(L, B, heads*parts*D) -> list of ``parts`` tensors (B*heads, L, D)."""
    if t.dim() != 3:
        raise MXNetError(f"{op}: {what} must be 3-D (length, batch, features), got shape "
                         f"{tuple(t.shape)}")
    L, B, E = t.shape
    if heads < 1 or E % (heads * parts):
        raise MXNetError(f"{op}: the {E} features of {what} do not split into {heads} heads "
                         f"x {parts} interleaved projections")
    x = t.reshape(L, B, heads, parts, E // (heads * parts))
    return [x[:, :, :, i, :].permute(1, 2, 0, 3).reshape(B * heads, L, -1)
            for i in range(parts)]


def _heads_merge(t, heads, length, batch):
    """(B*heads, L, D) -> (L, B, heads*D)."""
    return t.reshape(batch, heads, length, -1).permute(2, 0, 1, 3).reshape(length, batch, -1)


def _check_att(att, shape, op):
    if tuple(att.shape) != tuple(shape):
        raise MXNetError(f"{op}: attention must have shape {tuple(shape)}, got "
                         f"{tuple(att.shape)}")


def interleaved_matmul_selfatt_qk(queries_keys_values, heads, out=None, name=None):
    """``q k^T / sqrt(d)`` per head, from the interleaved ``(L, B, heads*3*d)`` projections
    (per head: q, k, v); output ``(B*heads, L, L)``."""
    op = "interleaved_matmul_selfatt_qk"
    t = _t(queries_keys_values, op, "queries_keys_values")
    heads = int(heads)

    def f(x):
        q, k = _heads_split(x, heads, 3, op, "queries_keys_values")[:2]
        return torch.bmm(q / math.sqrt(q.shape[-1]), k.transpose(1, 2))
    return _assign_out(_new(_run(f, t), queries_keys_values._ctx), out)


def interleaved_matmul_selfatt_valatt(queries_keys_values, attention, heads, out=None,
                                      name=None):
    """``attention @ v`` per head, back in ``(L, B, heads*d)`` layout."""
    op = "interleaved_matmul_selfatt_valatt"
    t = _t(queries_keys_values, op, "queries_keys_values")
    a = _t(attention, op, "attention")
    heads = int(heads)

    def f(x, att):
        v = _heads_split(x, heads, 3, op, "queries_keys_values")[2]
        L, B = x.shape[0], x.shape[1]
        _check_att(att, (B * heads, L, L), op)
        return _heads_merge(torch.bmm(att, v), heads, L, B)
    return _assign_out(_new(_run(f, t, a), queries_keys_values._ctx), out)


def interleaved_matmul_encdec_qk(queries, keys_values, heads, out=None, name=None):
    """``q k^T / sqrt(d)`` per head: queries ``(Lq, B, heads*d)``, interleaved keys/values
    ``(Lk, B, heads*2*d)``; output ``(B*heads, Lq, Lk)``."""
    op = "interleaved_matmul_encdec_qk"
    tq = _t(queries, op, "queries")
    tkv = _t(keys_values, op, "keys_values")
    heads = int(heads)

    def f(q, kv):
        (qh,) = _heads_split(q, heads, 1, op, "queries")
        k = _heads_split(kv, heads, 2, op, "keys_values")[0]
        if qh.shape[0] != k.shape[0] or qh.shape[-1] != k.shape[-1]:
            raise MXNetError(f"{op}: queries {tuple(q.shape)} and keys_values "
                             f"{tuple(kv.shape)} disagree on batch or head size")
        return torch.bmm(qh / math.sqrt(qh.shape[-1]), k.transpose(1, 2))
    return _assign_out(_new(_run(f, tq, tkv), queries._ctx), out)


def interleaved_matmul_encdec_valatt(keys_values, attention, heads, out=None, name=None):
    """``attention @ v`` per head (attention ``(B*heads, Lq, Lk)``), as ``(Lq, B, heads*d)``."""
    op = "interleaved_matmul_encdec_valatt"
    tkv = _t(keys_values, op, "keys_values")
    a = _t(attention, op, "attention")
    heads = int(heads)

    def f(kv, att):
        v = _heads_split(kv, heads, 2, op, "keys_values")[1]
        if att.dim() != 3 or att.shape[0] != v.shape[0] or att.shape[2] != v.shape[1]:
            raise MXNetError(f"{op}: attention must have shape (batch*heads={v.shape[0]}, "
                             f"query length, {v.shape[1]}), got {tuple(att.shape)}")
        return _heads_merge(torch.bmm(att, v), heads, att.shape[1], kv.shape[1])
    return _assign_out(_new(_run(f, tkv, a), keys_values._ctx), out)


# ------------------------------------------------------------------------- control flow
# MXNet 1.9.1 runs these imperatively as Python loops too (GluonNLP's ELMo encoder uses foreach,
# its hybrid beam search while_loop and cond). In a hybridized block the loop cannot be
# captured as one recorded operator: the block warns once and runs imperatively.
def _flatten(x, what):
    if isinstance(x, NDArray):
        return [x], None
    if isinstance(x, (list, tuple)):
        flat, fmt = [], []
        for item in x:
            f, m = _flatten(item, what)
            flat.extend(f)
            fmt.append((len(f), m))
        return flat, fmt
    raise MXNetError(f"{what} must be an NDArray or a nested list of NDArrays, got "
                     f"{type(x).__name__}")


def _regroup(flat, fmt):
    if fmt is None:
        return flat[0]
    out, i = [], 0
    for n, sub in fmt:
        out.append(_regroup(flat[i:i + n], sub))
        i += n
    return out


def _as_bool(x, what):
    if hasattr(x, "asscalar"):
        x = x.asscalar()
    try:
        return bool(x)
    except (TypeError, ValueError):
        raise MXNetError(f"{what} must be a scalar, got {x!r}") from None


def foreach(body, data, init_states, name="foreach"):
    """Run ``outputs, states = body(data[i], states)`` for each ``i`` along axis 0 of ``data``
    (an NDArray or a list of them); returns the outputs stacked along a new axis 0 (same
    nesting as one step's) and the final states."""
    from .ndarray import stack
    _flatten(data, "foreach: data")
    _flatten(init_states, "foreach: init_states")
    single = isinstance(data, NDArray)
    n = data.shape[0] if single else data[0].shape[0]
    states, steps, fmt = init_states, [], None
    for i in range(n):
        outs, states = body(data[i] if single else [d[i] for d in data], states)
        flat, fmt = _flatten(outs, "foreach: the body's outputs")
        steps.append(flat)
    if not steps:
        raise MXNetError("foreach: data has no entries along axis 0")
    return _regroup([stack(*col) for col in zip(*steps)], fmt), states


def while_loop(cond, func, loop_vars, max_iterations=None, name="while_loop"):
    """``while cond(*loop_vars)`` (at most ``max_iterations`` times): ``step_output, loop_vars =
    func(*loop_vars)``. Returns the step outputs stacked along axis 0 and padded to
    ``max_iterations`` rows (the padding rows are unspecified, as in MXNet) and the final
    loop variables."""
    from .ndarray import concat, empty
    if max_iterations is None:
        raise ValueError("max_iterations should be specified")
    max_iterations = int(max_iterations.asscalar() if hasattr(max_iterations, "asscalar")
                         else max_iterations)
    single = isinstance(loop_vars, NDArray)
    loop_vars = [loop_vars] if single else list(loop_vars)
    if not loop_vars:
        raise ValueError("loop_vars should contain at least one element")
    outputs, fmt, steps = [], None, 0
    while steps < max_iterations and _as_bool(cond(*loop_vars), "while_loop: cond's result"):
        out, new_vars = func(*loop_vars)
        out = [] if out is None else (list(out) if isinstance(out, tuple) else out)
        new_vars = [] if new_vars is None else new_vars
        new_vars = [new_vars] if isinstance(new_vars, NDArray) else list(new_vars)
        if len(new_vars) != len(loop_vars):
            raise ValueError("The length of loop_vars should be consistent during the loop")
        loop_vars = new_vars
        flat, fmt = _flatten(out, "while_loop: step output")
        if outputs and len(flat) != len(outputs[0]):
            raise ValueError("Number of elements in step_output should be the same in each "
                             "step")
        outputs.append(flat)
        steps += 1
    stacked = []
    for k, items in enumerate(zip(*outputs)):
        items = [x.expand_dims(0) for x in items]
        shapes = {tuple(x.shape) for x in items}
        if len(shapes) != 1:
            raise ValueError(f"Shapes of {k + 1}-th elements in step_outputs are inconsistent: "
                             f"{[tuple(x.shape) for x in items]}")
        if steps != max_iterations:
            items.append(empty((max_iterations - steps,) + tuple(items[0].shape[1:]),
                               ctx=items[0].context, dtype=items[0].dtype))
        stacked.append(concat(*items, dim=0))
    if outputs:      # (a bare NDArray step output gives a bare NDArray, as in MXNet)
        stacked = _regroup(stacked, fmt)
    return stacked, (loop_vars[0] if single else loop_vars)


def cond(pred, then_func, else_func, name="cond"):
    """``then_func()`` if the scalar ``pred`` is true, else ``else_func()``."""
    return then_func() if _as_bool(pred, "cond: pred") else else_func()


def BatchNormWithReLU(data, gamma, beta, moving_mean, moving_var, out=None, name=None,
                      **kwargs):
    """MXNet's fused ``BatchNorm`` + ``relu`` (its oneDNN builds' ``contrib`` operator).

    Takes ``BatchNorm``'s arguments and updates the moving statistics the same way; the first
    output goes through ``relu`` (gradients too), the optional mean/var outputs do not.
    """
    res = _BatchNorm(data, gamma, beta, moving_mean, moving_var, **kwargs)
    if isinstance(res, (list, tuple)):
        return [_relu(res[0], out=out)] + list(res[1:])
    return _relu(res, out=out)


def SparseEmbedding(data, weight, input_dim=None, output_dim=None, dtype="float32",
                    deterministic=False, out=None, name=None, **kwargs):
    """MXNet's deprecated ``contrib.SparseEmbedding``: ``Embedding`` whose weight gradient is
    ``row_sparse``. ``deterministic`` is accepted: neogluon's gradient is always
    deterministic (the ids are sorted and summed in a fixed order)."""
    kwargs.pop("sparse_grad", None)
    return _Embedding(data, weight, input_dim=input_dim, output_dim=output_dim, dtype=dtype,
                     sparse_grad=True, out=out, name=name, **kwargs)

