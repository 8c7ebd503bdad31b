"""Optimizer updates with sparse weights or gradients, as MXNet 1.9.1 computes them.

Lazy updates (only the rows a row_sparse gradient names change, in the weight and in its
states) where MXNet has sparse kernels:

* SGD with ``lazy_update`` (with or without momentum),
* Adam with ``lazy_update``,
* AdaGrad and GroupAdaGrad (always lazy for a row_sparse gradient; no weight decay),
* Ftrl when the weight itself is row_sparse,
* LARS with ``lazy_update`` and LBSGD (whose SGD step MXNet runs with the default lazy update).

Every other case (``lazy_update=False``, optimizers without a sparse kernel, csr weights or
gradients) is the dense update on the densified gradient: MXNet's standard update and its storage
fallback both compute exactly that. Sparse weights and states are then updated through dense
copies written back in place, keeping their storage type.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from ..base import MXNetError
from ..ndarray import sparse as _sp
from ..ndarray.ndarray import NDArray, _new
from . import fused


def _lazy_kind(opt, weight, grad, state):
    """Which lazy kernel applies, or None for the dense update."""
    if grad.stype != "row_sparse" or weight.stype not in ("default", "row_sparse"):
        return None
    name = type(opt).__name__
    if name in ("SGD", "ccSGD") and getattr(opt, "lazy_update", False):
        return "sgd"
    if name == "Adam" and getattr(opt, "lazy_update", False):
        return "adam"
    if name == "AdaGrad":
        return "adagrad"
    if name == "GroupAdaGrad":
        return "group_adagrad"
    if name == "Ftrl" and weight.stype == "row_sparse":
        return "ftrl"
    if name == "LARS" and getattr(opt, "lazy_update", False):
        return "lars"
    if name == "LBSGD" and getattr(opt, "batch_scale", 1) == 1:
        return "lbsgd"  # MXNet's LBSGD calls sgd_mom_update with its default lazy_update
    return None


def _is_mp(opt, weight, state):
    return bool(opt.multi_precision) and weight.dtype == np.float16 and \
        isinstance(state, (tuple, list))


def _count_and_rates(opt, index):
    if getattr(opt, "_count_first", True):
        opt._update_count(index)
        lr = opt._get_lrs([index])[0]
    else:
        lr = opt._get_lrs([index])[0]
        opt._update_count(index)
    return lr, opt._get_wds([index])[0]


def _clip(opt):
    c = opt.clip_gradient
    return c if (c is not None and c > 0) else None


def _lazy_step(kind, opt, index, weight, grad, state):
    lr, wd = _count_and_rates(opt, index)
    rescale = opt.rescale_grad
    clip = _clip(opt)
    if kind == "sgd":
        mom = state if isinstance(state, NDArray) else None
        _sp.lazy_sgd_update(weight, grad, mom, lr, wd, opt.momentum, rescale, clip)
    elif kind == "adam":
        mean, var = state
        t = opt._index_update_count[index]
        lr_t = lr * math.sqrt(1.0 - opt.beta2 ** t) / (1.0 - opt.beta1 ** t)
        _sp.lazy_adam_update(weight, grad, mean, var, lr_t, opt.beta1, opt.beta2, opt.epsilon,
                             wd, rescale, clip)
    elif kind == "adagrad":
        hist = state[0] if isinstance(state, (tuple, list)) else state
        _sp.sparse_adagrad_update(weight, grad, hist, lr, opt.float_stable_eps, wd, rescale,
                                  clip)
    elif kind == "group_adagrad":
        if wd != 0:
            raise MXNetError(f"GroupAdaGrad: weight decay is not supported (wd={wd} for index "
                             f"{index!r})")
        hist = state[0] if isinstance(state, (tuple, list)) else state
        _sp.sparse_group_adagrad_update(weight, grad, hist, lr, opt.float_stable_eps, rescale,
                                        clip)
    elif kind == "lars":
        lr = _lars_rate(opt, index, weight, grad, lr, wd)
        mom = opt.momentum
        if mom > 0 and opt.momentum_correction and opt.last_lr:
            mom = mom * (opt.cur_lr / opt.last_lr)
        _sp.lazy_sgd_update(weight, grad, state if isinstance(state, NDArray) else None, lr, wd,
                            mom if mom > 0 else 0.0, rescale, clip)
    elif kind == "lbsgd":
        c = opt.cumgrads.get(index)
        num = c["num_cums"] + 1 if c and c["num_cums"] > 0 else opt.init_updates + 1
        if opt.warmup_strategy == "lars":
            lbmult = opt._get_lars(weight._t, grad._t, wd)
        else:
            lbmult = opt._get_lbmult(num)
        mom = opt.momentum if opt.momentum > 0 else 0.0
        _sp.lazy_sgd_update(weight, grad, state if isinstance(state, NDArray) else None,
                            lr * lbmult, wd, mom, rescale, clip)
        opt.cumgrads[index] = {"cum_grad": 0, "num_cums": num}
    elif kind == "ftrl":
        z, n = state
        _sp.sparse_ftrl_update(weight, grad, z, n, lr, opt.lamda1, opt.beta, wd, rescale, clip)


def _lazy_step_mp(kind, opt, index, weight, grad, state):
    mi, si = (1, 0) if getattr(opt, "_mp_master_last", False) else (0, 1)
    master, inner = state[mi], state[si]
    g32 = grad.astype(np.float32)
    _lazy_step(kind, opt, index, master, g32, inner)
    idx = grad._aux[0]
    with torch.no_grad():
        dst = _sp._full_rows(weight)
        dst.index_copy_(0, idx, _sp._full_rows(master).index_select(0, idx).to(dst.dtype))


def _lars_rate(opt, index, weight, grad, lr, wd):
    """MXNet LARS's layer-wise rate for one (possibly sparse) gradient: ``eta * |w| /
    (|g * rescale| + wd * |w| + eps)`` times ``lr``, except for biases and norm parameters."""
    name = opt.idx2name[index] if index in opt.idx2name else str(index)
    if name.endswith("gamma") or name.endswith("beta") or name.endswith("bias"):
        return lr
    g = grad._sdata if grad.stype != "default" else grad._t
    w_norm = float(weight._t.detach().float().norm())
    g_norm = float((g.detach().float() * opt.rescale_grad).norm())
    if w_norm > 0.0 and g_norm > 0.0:
        return lr * opt.eta * w_norm / (g_norm + wd * w_norm + opt.eps)
    return lr


def _dense_proxy(arr):
    if isinstance(arr, NDArray) and arr.stype != "default":
        return _new(arr._t.detach().clone(), arr.context)
    return arr


def _map_state(state, fn):
    if isinstance(state, NDArray):
        return fn(state)
    if isinstance(state, tuple):
        return tuple(_map_state(s, fn) for s in state)
    if isinstance(state, list):
        return [_map_state(s, fn) for s in state]
    return state


def _write_back(orig, proxy):
    if isinstance(orig, NDArray):
        if orig is not proxy:
            orig._assign(proxy)
        return
    if isinstance(orig, (tuple, list)):
        for o, p in zip(orig, proxy):
            _write_back(o, p)


def sparse_update(opt, indices, weights, grads, states, multi_precision=False, scales=None):
    """Update ``weights`` in place where some weight or gradient is sparse."""
    if scales:
        fused.make_exact(indices, scales)
    dense = []
    for p, (i, w, g, s) in enumerate(zip(indices, weights, grads, states)):
        kind = _lazy_kind(opt, w, g, s)
        if kind is not None and _is_mp(opt, w, s):
            # MXNet's SGD family has no lazy multi-precision kernel (dense update); the other
            # optimizers update the float32 master copy lazily and cast it back
            if kind in ("sgd", "lars", "lbsgd"):
                kind = None
            else:
                _lazy_step_mp(kind, opt, i, w, g, s)
                continue
        if kind is None:
            dense.append(p)
        else:
            _lazy_step(kind, opt, i, w, g, s)
    if not dense:
        return
    d_idx = [indices[p] for p in dense]
    d_w = [_dense_proxy(weights[p]) for p in dense]
    d_g = [_dense_proxy(grads[p]) for p in dense]
    d_s = [_map_state(states[p], _dense_proxy) for p in dense]
    opt._update_impl(d_idx, d_w, d_g, d_s, multi_precision=multi_precision, scales=None)
    for p, w, s in zip(dense, d_w, d_s):
        _write_back(weights[p], w)
        _write_back(states[p], s)
