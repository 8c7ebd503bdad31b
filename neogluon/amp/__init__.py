"""``mx.amp`` (MXNet's ``mxnet.contrib.amp``): automatic mixed precision.

``init(target_dtype)`` makes neogluon's ``nd`` operators follow MXNet 1.9.1's AMP casting
decisions: operators on the low-precision list cast their floating-point inputs to
``target_dtype`` ('float16' or 'bfloat16'), those on the float32 list cast them to float32,
the "widest type" operators bring low-precision inputs up to float32 when another input is
float32, and the conditional ones (``Activation`` with ``act_type='softrelu'``...) run in
float32 for the listed parameter values. The lists are MXNet's own (``_lists.json``, written
by tools/gen_amp_fixtures.py from MXNet 1.9.1). As in MXNet, this works by replacing the
operator functions of ``nd`` (and ``nd.contrib``, the fluent NDArray methods and the
arithmetic operators) with casting wrappers, so Gluon layers (imperative and hybridized) and
``mx.sym`` graphs, which run ``nd`` operators, follow the same decisions. Nothing is wrapped
until ``init`` runs: a program that does not use AMP pays nothing.

``init_trainer(trainer)`` attaches a dynamic loss scaler with MXNet's schedule (start at
2**16, halve after an overflow, double after 2000 clean steps, at most 2**24; a change takes
effect from the step after the one that decided it); ``scale_loss(loss, trainer)`` yields the
loss times the scale and makes the Trainer divide the gradients by it; ``Trainer.step`` skips
the update when a gradient is not finite.
"""
from __future__ import annotations

import contextlib
import functools
import logging
from weakref import ref as _weakref

import numpy as np
import torch

from ..base import MXNetError, dtype_name

__all__ = ["init", "init_trainer", "scale_loss", "unscale", "convert_model",
           "convert_hybrid_block", "convert_symbol", "list_lp16_ops", "list_fp32_ops",
           "list_lp16_fp32_ops", "list_conditional_fp32_ops", "list_widest_type_cast",
           "list_loss_output_functions", "list_lp16_use_fp32_params", "LossScaler"]

#: MXNet's ``amp.amp.bfloat16``: the structured numpy dtype a bfloat16 NDArray reports
#: (``astype``/``amp_cast`` take it, and the name 'bfloat16')
from ..base import bfloat16  # noqa: E402

from ._lists_data import LISTS as _LISTS
from . import lists  # noqa: F401  (amp.lists.symbol_fp16 / symbol_bf16, as in MXNet)

_F32 = torch.float32
_LOW = {"float16": torch.float16, "bfloat16": torch.bfloat16}

# MXNet implements these NDArray methods natively (views or copies), not by calling an
# operator function, so AMP leaves them alone there too.
_NATIVE_METHODS = {"reshape", "astype", "copy", "copyto", "as_in_context", "asnumpy",
                   "asscalar", "tostype", "attach_grad", "backward", "detach", "wait_to_read"}

# Python arithmetic on NDArrays: the MXNet operator each form calls (array operand, scalar).
_DUNDERS = {
    "__add__": ("broadcast_add", "_plus_scalar"),
    "__radd__": ("broadcast_add", "_plus_scalar"),
    "__sub__": ("broadcast_sub", "_minus_scalar"),
    "__rsub__": ("broadcast_sub", "_rminus_scalar"),
    "__mul__": ("broadcast_mul", "_mul_scalar"),
    "__rmul__": ("broadcast_mul", "_mul_scalar"),
    "__truediv__": ("broadcast_div", "_div_scalar"),
    "__rtruediv__": ("broadcast_div", "_rdiv_scalar"),
    "__mod__": ("broadcast_mod", "_mod_scalar"),
    "__rmod__": ("broadcast_mod", "_rmod_scalar"),
    "__pow__": ("broadcast_power", "_power_scalar"),
    "__rpow__": ("broadcast_power", "_rpower_scalar"),
    "__neg__": (None, "_mul_scalar"),
    "__eq__": ("broadcast_equal", "_equal_scalar"),
    "__ne__": ("broadcast_not_equal", "_not_equal_scalar"),
    "__gt__": ("broadcast_greater", "_greater_scalar"),
    "__ge__": ("broadcast_greater_equal", "_greater_equal_scalar"),
    "__lt__": ("broadcast_lesser", "_lesser_scalar"),
    "__le__": ("broadcast_lesser_equal", "_lesser_equal_scalar"),
}


class _State:
    initialized = False
    target = None            # torch dtype
    installed = []           # (owner, attribute, original value) in installation order
    loss_scaler = None
    scaler_taken = False


_state = _State()
_NDArray = None  # neogluon.ndarray.NDArray, set by init (the ndarray package imports late)


# ---------------------------------------------------------------------------- lists
def _norm_target(target_dtype):
    if target_dtype in ("float16", np.float16) or (
            isinstance(target_dtype, np.dtype) and target_dtype == np.float16):
        return "float16"
    if target_dtype in ("bfloat16", torch.bfloat16) or (
            isinstance(target_dtype, np.dtype) and target_dtype == bfloat16):
        return "bfloat16"
    if target_dtype is torch.float16:
        return "float16"
    raise AssertionError("AMP currently supports only float16 or bfloat16 as a target_dtype, "
                         f"got {target_dtype!r}")


def list_lp16_ops(target_dtype):
    """MXNet 1.9.1's operators that AMP runs in the low-precision type."""
    return list(_LISTS[_norm_target(target_dtype)]["lp16"])


def list_fp32_ops(target_dtype):
    """MXNet 1.9.1's operators that AMP runs in float32."""
    return list(_LISTS[_norm_target(target_dtype)]["fp32"])


def list_lp16_fp32_ops(target_dtype):
    """MXNet 1.9.1's operators that run in whatever type they are given."""
    return list(_LISTS[_norm_target(target_dtype)]["lp16_fp32"])


def list_conditional_fp32_ops(target_dtype):
    """``(operator, parameter, values)``: float32 when the parameter has one of the values."""
    return [(op, arg, list(vals)) for op, arg, vals
            in _LISTS[_norm_target(target_dtype)]["conditional_fp32"]]


def list_widest_type_cast(target_dtype):
    """MXNet 1.9.1's multi-input operators that run in the widest type of their inputs."""
    return list(_LISTS[_norm_target(target_dtype)]["widest"])


def list_loss_output_functions(target_dtype):
    """Output operators whose ``grad_scale`` AMP multiplies by the loss scale."""
    return list(_LISTS[_norm_target(target_dtype)]["loss_output"])


def list_lp16_use_fp32_params(target_dtype):
    """For bfloat16: operators whose named parameters stay float32 when the operator is put
    on the low-precision list (None for float16, as in MXNet)."""
    t = _norm_target(target_dtype)
    if t == "float16":
        return None
    return {k: list(v) for k, v in _LISTS[t]["lp16_use_fp32_params"].items()}


# ---------------------------------------------------------------------------- casting
def _castable(t, target):
    # MXNet casts float32 and the CPU's (bfloat16) or the GPU's (float16) low type only.
    if t.dtype is target:
        return False
    if t.device.type == "cpu":
        return t.dtype is _F32 or t.dtype is torch.bfloat16
    return t.dtype is _F32 or t.dtype is torch.float16


def _cast(x, target, amp_cast):
    if isinstance(x, _NDArray) and x.stype == "default":
        t = x._t
        if not _castable(t, target):
            return x
        if x._ag is not None and t.grad_fn is None:
            return _cached_cast(x, t, target, amp_cast)
        return amp_cast(x, dtype=target)
    return x


# The casts of variables (Parameters' arrays, arrays with attach_grad), as torch.autocast
# caches its weight casts: (id(source tensor), dtype) -> (weak reference to the source, its
# version, the count of unversioned writes, recording flag, the cast array, its version).
# An entry serves while the source is unchanged (the optimizer's in-place update bumps its
# version; set_data and writes outside record() bump the global count), recording is the
# same, and a recorded cast still has its history (a backward without retain_graph turns
# the arrays of its graph into constants, so each step casts a weight once, for its graph).
# While hybridize captures a forward pass the casts run inside the recorded operator (the
# AMP wrapper is what the graph node calls), so a cached cast never becomes a graph input.
_CAST_CACHE = {}
_AG_STATE = None   # neogluon.autograd._state
_WRITES = None     # neogluon.autograd._UNVERSIONED_WRITES


def _cached_cast(x, t, target, amp_cast):
    key = (id(t), target)
    rec = _AG_STATE.recording
    e = _CAST_CACHE.get(key)
    if e is not None:
        ref, ver, writes, erec, out, over = e
        ot = out._t
        if ref() is t and ver == t._version and writes == _WRITES[0] and erec == rec and \
                ot._version == over and (not rec or ot.grad_fn is not None) and \
                out._ctx == x._ctx:
            return out
    out = amp_cast(x, dtype=target)
    if len(_CAST_CACHE) > 4096:
        _clear_cast_cache()
    _CAST_CACHE[key] = (_weakref(t), t._version, _WRITES[0], rec, out, out._t._version)
    return out


def _clear_cast_cache():
    """Drop every cached cast (the Trainer calls it after an update, so that the low-precision
    copies of the old weights are freed at once, as autocast frees its cache at the end of
    its region)."""
    _CAST_CACHE.clear()


def _cast_step(target, fp32_param, amp_cast):
    def step(args, kwargs):
        if fp32_param:
            args = tuple(a if (i < len(fp32_param) and fp32_param[i]) else
                         _cast(a, target, amp_cast) for i, a in enumerate(args))
            kwargs = {k: (v if (k in fp32_param or k == "out") else _cast(v, target, amp_cast))
                      for k, v in kwargs.items()}
        else:
            args = tuple([_cast(a, target, amp_cast) for a in args])
            if kwargs:
                kwargs = {k: (v if k == "out" else _cast(v, target, amp_cast))
                          for k, v in kwargs.items()}
        return args, kwargs
    return step


def _cond_step(param, values, amp_cast):
    inner = _cast_step(_F32, None, amp_cast)

    def step(args, kwargs):
        if param not in kwargs or kwargs[param] not in values:
            return args, kwargs
        return inner(args, kwargs)
    return step


def _widest_step(target, amp_cast):
    NDArray = _NDArray

    def step(args, kwargs):
        arrays = [a for a in args if isinstance(a, NDArray)]
        arrays += [v for k, v in kwargs.items() if k != "out" and isinstance(v, NDArray)]
        if not any(a._t.dtype is _F32 for a in arrays):
            return args, kwargs
        up = (lambda a: amp_cast(a, dtype=_F32)
              if isinstance(a, NDArray) and a._t.dtype is target else a)
        return (tuple(up(a) for a in args),
                {k: (v if k == "out" else up(v)) for k, v in kwargs.items()})
    return step


def _loss_scale_step():
    def step(args, kwargs):
        scaler = _state.loss_scaler
        kwargs = dict(kwargs)
        kwargs["grad_scale"] = kwargs.get("grad_scale", 1.0) * scaler.loss_scale
        return args, kwargs
    return step


def _wrap(f, steps):
    """``f`` with the casting ``steps`` applied first (the last added runs first, as MXNet's
    nested wrappers do)."""
    order = tuple(reversed(steps))
    if len(order) == 1:  # the common case: one decision per operator, no loop
        only = order[0]

        @functools.wraps(f)
        def amp_op(*args, **kwargs):
            args, kwargs = only(args, kwargs)
            return f(*args, **kwargs)
    else:
        @functools.wraps(f)
        def amp_op(*args, **kwargs):
            for step in order:
                args, kwargs = step(args, kwargs)
            return f(*args, **kwargs)
    amp_op._amp_original = f
    return amp_op


def _decisions(target_name, target_precision_ops, conditional_fp32_ops, fp32_ops, amp_cast):
    """{MXNet operator name: [casting steps in MXNet's application order]}."""
    target = _LOW[target_name]
    lists = _LISTS[target_name]
    use_fp32 = lists["lp16_use_fp32_params"] or {}
    dec = {}
    lp16 = target_precision_ops if target_precision_ops is not None else lists["lp16"]
    for name in lp16:
        dec.setdefault(name, []).append(_cast_step(target, use_fp32.get(name), amp_cast))
    for name in (fp32_ops if fp32_ops is not None else lists["fp32"]):
        dec.setdefault(name, []).append(_cast_step(_F32, None, amp_cast))
    cond = conditional_fp32_ops if conditional_fp32_ops is not None \
        else lists["conditional_fp32"]
    for entry in cond:
        try:
            name, param, values = entry
        except (TypeError, ValueError):
            raise MXNetError(f"amp.init: conditional_fp32_ops entries are (operator, parameter, "
                             f"[values]), got {entry!r}") from None
        dec.setdefault(name, []).append(_cond_step(param, tuple(values), amp_cast))
    for name in lists["widest"]:
        dec.setdefault(name, []).append(_widest_step(target, amp_cast))
    for name in lists["loss_output"]:
        dec.setdefault(name, []).append(_loss_scale_step())
    return dec


def _places(name, nd):
    """Where neogluon keeps the function MXNet calls ``name``: [(owner, attribute)]."""
    from ..ndarray.ndarray import NDArray
    out = []
    for prefix, ns in (("_contrib_", "contrib"), ("_image_", "image")):
        if name.startswith(prefix):
            mod = getattr(nd, ns, None)
            short = name[len(prefix):]
            if mod is not None and callable(getattr(mod, short, None)):
                out.append((mod, short))
            return out
    if name.startswith(("_sparse_", "_linalg_", "_sample_")):
        return out  # sparse arrays are never cast; no linalg module
    if name.startswith("_random_"):
        short = name[len("_random_"):]
        if short.endswith("_like") and callable(getattr(nd.random, short, None)):
            out.append((nd.random, short))
        return out
    if name.startswith("_"):
        if callable(getattr(nd._internal, name, None)) and not name.startswith("__"):
            out.append((nd._internal, name))
        return out
    fn = nd.__dict__.get(name)
    if callable(fn) and not isinstance(fn, type):
        out.append((nd, name))
        if name == "RNN" and callable(nd.__dict__.get("_gluon_rnn")):
            out.append((nd, "_gluon_rnn"))  # the fused kernel neogluon's RNN layers call
    meth = NDArray.__dict__.get(name)
    if name not in _NATIVE_METHODS and callable(meth) and not isinstance(meth, type):
        out.append((NDArray, name))
    return out


def _install(owner, attr, value):
    _state.installed.append((owner, attr, owner.__dict__.get(attr, _MISSING)))
    setattr(owner, attr, value)


_MISSING = object()


def _wrap_dunder(orig, arr_steps, scalar_steps):
    from ..ndarray.ndarray import NDArray
    arr_order = tuple(reversed(arr_steps))
    sc_order = tuple(reversed(scalar_steps))

    @functools.wraps(orig)
    def amp_dunder(self, *other):
        if other and isinstance(other[0], NDArray):
            order = arr_order
        elif other and not isinstance(other[0], (int, float, np.number, bool)):
            return orig(self, *other)
        else:
            order = sc_order
        args = (self,) + other
        for step in order:
            args, _ = step(args, {})
        return orig(*args)
    return amp_dunder


def init(target_dtype="float16", target_precision_ops=None, conditional_fp32_ops=None,
         fp32_ops=None):
    """Turn on AMP: from now on ``nd`` operators cast their inputs as MXNet 1.9.1's AMP does.

    Call it before building the network (graphs hybridized before keep their operators).
    As in MXNet, a second call does nothing.

    Parameters
    ----------
    target_dtype : {'float16', 'bfloat16'}
    target_precision_ops : list of str, optional
        Replaces the list of operators cast to ``target_dtype``.
    conditional_fp32_ops : list of (str, str, list of str), optional
        Replaces the ``(operator, parameter, values)`` list run in float32 conditionally.
    fp32_ops : list of str, optional
        Replaces the list of operators cast to float32.
    """
    if _state.initialized:
        return
    target_name = _norm_target(target_dtype)
    for what, value in (("target_precision_ops", target_precision_ops),
                        ("fp32_ops", fp32_ops), ("conditional_fp32_ops", conditional_fp32_ops)):
        if value is not None and not isinstance(value, (list, tuple)):
            raise MXNetError(f"amp.init: {what} must be a list, got {type(value).__name__}")
    global _NDArray, _AG_STATE, _WRITES
    from .. import ndarray as nd
    from .. import autograd as _autograd
    from ..ndarray.ndarray import NDArray
    _NDArray = NDArray
    from ..gluon.rnn import _op  # noqa: F401  (registers nd.RNN and nd._gluon_rnn)
    from ..gluon import block as _block
    from ..gluon import loss as _loss
    amp_cast = nd.amp_cast
    known = set()
    for key in ("lp16", "fp32", "lp16_fp32", "widest"):
        known.update(_LISTS[target_name][key])
    known.update(c[0] for c in _LISTS[target_name]["conditional_fp32"])
    user = list(target_precision_ops or ()) + list(fp32_ops or ()) + \
        [c[0] for c in (conditional_fp32_ops or ()) if isinstance(c, (list, tuple)) and c]
    unknown = sorted({n for n in user if n not in known and not _places(n, nd)})
    if unknown:
        raise MXNetError(f"amp.init: {unknown} are not operators (neither neogluon's nor on "
                         "MXNet's AMP lists: amp.list_lp16_ops, list_fp32_ops, "
                         "list_lp16_fp32_ops, list_conditional_fp32_ops)")
    dec = _decisions(target_name, target_precision_ops, conditional_fp32_ops, fp32_ops,
                     amp_cast)
    _state.target = _LOW[target_name]
    for name, steps in dec.items():
        for owner, attr in _places(name, nd):
            _install(owner, attr, _wrap(getattr(owner, attr), steps))
    # Python arithmetic, ``x.T`` and the fused softmax cross-entropy of the Gluon loss.
    for dunder, (arr_op, sc_op) in _DUNDERS.items():
        arr_steps = dec.get(arr_op, []) if arr_op else []
        sc_steps = dec.get(sc_op, [])
        orig = NDArray.__dict__.get(dunder)
        if orig is not None and (arr_steps or sc_steps):
            _install(NDArray, dunder, _wrap_dunder(orig, arr_steps, sc_steps))
    if "transpose" in dec:
        fget = NDArray.__dict__["T"].fget
        steps = tuple(reversed(dec["transpose"]))

        def _T(self):
            args = (self,)
            for step in steps:
                args, _ = step(args, {})
            return fget(args[0])
        _install(NDArray, "T", property(_T))
    fused = _loss.SoftmaxCrossEntropyLoss.__dict__["_fused"]
    if "log_softmax" in dec:
        def _fused(self, pred, label):
            return fused(self, _cast(pred, _F32, amp_cast), label)
        _install(_loss.SoftmaxCrossEntropyLoss, "_fused", _fused)
    _AG_STATE = _autograd._state
    _WRITES = _autograd._UNVERSIONED_WRITES
    _CAST_CACHE.clear()
    from ..gluon import trainer as _trainer
    _install(_trainer, "_amp_cast_cache", _CAST_CACHE)
    _block._install_traced_methods()  # hybridize's traced arrays call the wrapped methods
    _install_symbol_casts(target_name, target_precision_ops, conditional_fp32_ops, fp32_ops)
    _state.loss_scaler = LossScaler()
    _state.scaler_taken = False
    _state.initialized = True
    logging.info("Using AMP")


def _install_symbol_casts(target_name, target_precision_ops, conditional_fp32_ops, fp32_ops):
    """Symbols made from now on get ``amp_cast`` nodes in front of the operators AMP casts,
    as MXNet's wrapped ``mx.sym`` functions add them (named ``<scope>amp_cast<n>``), so
    ``infer_type`` and exported graphs show the casts. Widest-type operators get none (MXNet
    adds ``amp_multicast``); their ``nd`` twins still cast when the graph runs."""
    from ..symbol import symbol as symmod
    from ..name import NameManager
    lists = _LISTS[target_name]
    lp16 = set(target_precision_ops if target_precision_ops is not None else lists["lp16"])
    fp32 = set(fp32_ops if fp32_ops is not None else lists["fp32"])
    cond = {c[0]: (c[1], tuple(str(v) for v in c[2])) for c in
            (conditional_fp32_ops if conditional_fp32_ops is not None
             else lists["conditional_fp32"])}
    use_fp32 = lists["lp16_use_fp32_params"] or {}

    def add_casts(sym):
        if len({id(n) for n, _ in sym._outputs}) != 1:
            return sym
        node = sym._outputs[0][0]
        op = node.op
        if op in lp16:
            dtype = target_name
        elif op in fp32:
            dtype = "float32"
        elif op in cond and str(node.attrs.get(cond[op][0])) in cond[op][1]:
            dtype = "float32"
        else:
            return sym
        keep = set(symmod._MUTATE.get(op, ()))
        if dtype == target_name and op in use_fp32:
            keep |= {i for i, n in enumerate(use_fp32[op]) if n}
        for pos, entry in enumerate(node.inputs):
            if pos in keep:
                continue
            name = NameManager.current.get(None, "amp_cast")
            cast = symmod._Node("amp_cast", name, {"dtype": dtype}, [entry], path="amp_cast")
            node.inputs[pos] = (cast, 0)
        return sym

    make_op = symmod._make_op
    make_node = symmod._make_node

    @functools.wraps(make_op)
    def amp_make_op(*args, **kwargs):
        return add_casts(make_op(*args, **kwargs))

    @functools.wraps(make_node)
    def amp_make_node(*args, **kwargs):
        return add_casts(make_node(*args, **kwargs))
    _install(symmod, "_make_op", amp_make_op)
    _install(symmod, "_make_node", amp_make_node)


def _uninstall():
    """Undo ``init`` (neogluon only; tests use it to keep AMP out of other tests)."""
    while _state.installed:
        owner, attr, orig = _state.installed.pop()
        if orig is _MISSING:
            delattr(owner, attr)
        else:
            setattr(owner, attr, orig)
    from ..gluon import block as _block
    _block._install_traced_methods()
    _CAST_CACHE.clear()
    _state.initialized = False
    _state.target = None
    _state.loss_scaler = None
    _state.scaler_taken = False


# ---------------------------------------------------------------------------- loss scaling
class LossScaler:
    """MXNet's dynamic loss scaler: the scale starts at 2**16; a step whose gradients
    overflow halves it, ``scale_seq_len`` (2000) clean steps in a row double it (at most
    2**24). As in MXNet, a new scale is used from the step after the one that decided it."""

    def __init__(self, init_scale=2.0 ** 16, scale_seq_len=2000, max_scale=2.0 ** 24):
        if init_scale <= 0 or scale_seq_len < 1 or max_scale <= 0:
            raise ValueError(f"invalid loss-scaler settings: init_scale={init_scale}, "
                             f"scale_seq_len={scale_seq_len}, max_scale={max_scale}")
        self._loss_scale = float(init_scale)
        self._next_loss_scale = self._loss_scale
        self._max_loss_scale = float(max_scale)
        self._scale_seq_len = int(scale_seq_len)
        self._unskipped = 0

    @property
    def loss_scale(self) -> float:
        return self._loss_scale

    @staticmethod
    def _grads(params):
        grads = []
        for param in params:
            if param.grad_req != "null" and param._grad is not None:
                for g in param.list_grad():
                    t = g._t if g.stype == "default" else getattr(g, "_sdata", None)
                    if t is not None and t.numel():
                        grads.append(t)
        return grads

    def has_overflow(self, params) -> bool:
        """Whether a gradient of ``params`` (on any context) holds inf or nan; moves the
        schedule one step."""
        found = _found_inf(self._grads(params))
        # The one host read of the step: MXNet skips the whole update (the optimizer's
        # update counts, the lr schedule and the states included) in the same step, which
        # needs the answer on the host (torch's GradScaler reads it too, for an optimizer
        # without a fused found_inf path). Everything before it stays on the device.
        overflow = bool(found) if found is not None else False
        self._loss_scale = self._next_loss_scale
        if overflow:
            self._next_loss_scale = self._loss_scale / 2.0
            self._unskipped = 0
            logging.info("AMP: decreasing loss scale to %f", self._next_loss_scale)
        else:
            self._unskipped += 1
        if self._unskipped == self._scale_seq_len:
            self._unskipped = 0
            self._next_loss_scale = min(self._max_loss_scale, self._loss_scale * 2.0)
            logging.info("AMP: increasing loss scale to %f", self._next_loss_scale)
        return overflow


def _found_inf(grads):
    """A float32 device tensor: 1.0 when a gradient in ``grads`` holds inf or nan, else 0.0
    (None for no gradients). One fused pass per (device, dtype) group
    (``torch._amp_foreach_non_finite_check_and_unscale_``, torch's GradScaler's check, with a
    unit scale so that the gradients keep their values); the groups' flags are combined on
    the first gradient's device. Nothing here reads a value back to the host."""
    if not grads:
        return None
    groups = {}
    for g in grads:
        groups.setdefault((g.device, g.dtype), []).append(g)
    dev = grads[0].device
    flags = []
    with torch.no_grad():
        for (d, dt), ts in groups.items():
            found = torch.zeros((1,), dtype=torch.float32, device=d)
            one = _UNIT.get(d)
            if one is None:
                one = _UNIT[d] = torch.ones((1,), dtype=torch.float32, device=d)
            if dt in (torch.float32, torch.float16, torch.bfloat16, torch.float64) and \
                    _FOREACH_CHECK is not None:
                _FOREACH_CHECK([t.detach() for t in ts], found, one)
            else:  # other float types: the same answer, one reduction per array
                for t in ts:
                    found = torch.maximum(found, (~torch.isfinite(t.detach())).any()
                                          .to(torch.float32).reshape(1))
            flags.append(found if d == dev else found.to(dev))
        return flags[0] if len(flags) == 1 else torch.stack(flags).amax().reshape(1)


_FOREACH_CHECK = getattr(torch, "_amp_foreach_non_finite_check_and_unscale_", None)
_UNIT = {}   # device -> a float32 [1.0] (the unit scale of the overflow check)


def _check_trainer(optimizer_or_trainer, fn):
    from ..gluon.trainer import Trainer
    from ..optimizer import Optimizer
    if isinstance(optimizer_or_trainer, Trainer):
        return
    if isinstance(optimizer_or_trainer, Optimizer):
        raise TypeError("AMP is currently only compatible with Gluon Trainer")
    raise TypeError(f"amp.{fn}: optimizer_or_trainer should be a Gluon Trainer or an "
                    f"optimizer, instead is {type(optimizer_or_trainer)}")


def init_trainer(optimizer_or_trainer):
    """Attach a dynamic loss scaler to a Trainer (the first Trainer gets the scaler that
    ``init`` made, whose scale ``SoftmaxOutput``'s ``grad_scale`` follows, as in MXNet)."""
    _check_trainer(optimizer_or_trainer, "init_trainer")
    if _state.initialized and not _state.scaler_taken:
        _state.scaler_taken = True
        scaler = _state.loss_scaler
    else:
        scaler = LossScaler()
    optimizer_or_trainer._amp_loss_scaler = scaler
    optimizer_or_trainer._amp_original_scale = optimizer_or_trainer._scale


def _scaler_of(trainer, fn):
    scaler = getattr(trainer, "_amp_loss_scaler", None)
    if scaler is None:
        raise MXNetError(f"amp.{fn}: the loss scaler is not initialized, did you forget to "
                         "call amp.init_trainer()?")
    return scaler


@contextlib.contextmanager
def scale_loss(loss, optimizer_or_trainer):
    """Yield ``loss * loss_scale`` (a list for a list) and have the Trainer divide the
    gradients by the scale."""
    scaler = _scaler_of(optimizer_or_trainer, "scale_loss")
    optimizer_or_trainer._scale = optimizer_or_trainer._amp_original_scale / scaler.loss_scale
    if isinstance(loss, (list, tuple)):
        yield [l * scaler.loss_scale for l in loss]
    else:
        yield loss * scaler.loss_scale


def unscale(optimizer_or_trainer):
    """Divide the gradients by the loss scale now (to clip them by hand before ``step``)."""
    _check_trainer(optimizer_or_trainer, "unscale")
    scaler = _scaler_of(optimizer_or_trainer, "unscale")
    inv = 1.0 / scaler.loss_scale
    with torch.no_grad():
        for param in optimizer_or_trainer._params:
            if param.grad_req != "null" and param._grad is not None:
                for g in param.list_grad():
                    t = getattr(g, "_sdata", None)  # a sparse gradient's stored values
                    (g._t if t is None else t).mul_(inv)
    optimizer_or_trainer._scale = optimizer_or_trainer._amp_original_scale


# ---------------------------------------------------------------------------- conversion
_DTYPE_CODE = {"float32": "0", "float16": "2", "bfloat16": "12"}


def _conversion_lists(target, target_dtype_ops, fp32_ops, conditional_fp32_ops):
    lists = _LISTS[target]
    for what, value in (("target_dtype_ops", target_dtype_ops), ("fp32_ops", fp32_ops),
                        ("conditional_fp32_ops", conditional_fp32_ops)):
        if value is not None and not isinstance(value, list):
            raise AssertionError(f"{what} should be a list")
    lp16 = list(target_dtype_ops) if target_dtype_ops is not None else lists["lp16"]
    fp32 = list(fp32_ops) if fp32_ops is not None else lists["fp32"]
    cond = conditional_fp32_ops if conditional_fp32_ops is not None \
        else lists["conditional_fp32"]
    cond_map = {}
    for entry in cond:
        if not (isinstance(entry, (list, tuple)) and len(entry) == 3 and
                isinstance(entry[0], str) and isinstance(entry[1], str) and
                isinstance(entry[2], list)):
            raise AssertionError("conditional_fp32_ops should be a list of "
                                 f"(str, str, list of str), got {entry!r}")
        cond_map[entry[0]] = (entry[1], [str(v) for v in entry[2]])
    for a, b, names in (("target_dtype_ops", "fp32_ops", set(lp16) & set(fp32)),
                        ("target_dtype_ops", "conditional_fp32_ops", set(lp16) & set(cond_map)),
                        ("fp32_ops", "conditional_fp32_ops", set(fp32) & set(cond_map))):
        if names:
            raise AssertionError(f"Ops cannot be in two or more lists. Common ops in {a} and "
                                 f"{b} {sorted(names)}")
    known = set(lists["lp16"]) | set(lists["fp32"]) | set(lists["lp16_fp32"]) | \
        {c[0] for c in lists["conditional_fp32"]}
    illegal = (set(lp16) | set(fp32) | set(cond_map)) - known
    if illegal:
        raise AssertionError(f"Can only choose ops from amp.list_lp16_ops, list_fp32_ops, "
                             f"list_lp16_fp32_ops or list_conditional_fp32_ops: "
                             f"{sorted(illegal)} are in none of them")
    return set(lp16), set(fp32), cond_map


def convert_symbol(sym, target_dtype="float16", target_dtype_ops=None, fp32_ops=None,
                   conditional_fp32_ops=None, excluded_sym_names=None, data_names=None,
                   cast_optional_params=False):
    """A copy of ``sym`` with ``amp_cast`` nodes before the operators AMP runs in
    ``target_dtype`` or in float32 (MXNet's lists unless overridden). Nodes named in
    ``excluded_sym_names`` are left alone. With ``cast_optional_params``, parameters that
    feed only low-precision operators are marked (``__dtype__``) to be stored in the
    low-precision type, and their casts dropped."""
    from ..symbol.symbol import Symbol, _Node, _MUTATE, _var_dtype
    if not isinstance(sym, Symbol):
        raise AssertionError("First argument to convert_symbol should be Symbol")
    if target_dtype not in ("float16", "bfloat16"):
        raise AssertionError("Only target_dtype float16 and bfloat16 are supported currently")
    if excluded_sym_names is not None and not isinstance(excluded_sym_names, list):
        raise AssertionError("excluded_sym_names should be a list of strs")
    lp16, fp32, cond_map = _conversion_lists(target_dtype, target_dtype_ops, fp32_ops,
                                             conditional_fp32_ops)
    excluded = set(excluded_sym_names or ())
    use_fp32 = (_LISTS[target_dtype]["lp16_use_fp32_params"] or {}) \
        if target_dtype == "bfloat16" else {}
    order = sym._order()
    if data_names is None:
        data_names = [n.name for n in order if n.is_var and "__dtype__" not in n.attrs]
    data_names = set(data_names)
    new = {}
    casts = {}          # (id(source node), index, dtype) -> cast node
    consumers = {}      # id(new var node) -> [the dtype each use casts it to, or None]
    known = {}          # (id(new node), index) -> dtype its output has, where known
    widest = set(_LISTS[target_dtype]["widest"])

    def cast_of(nsrc, idx, dtype):
        key = (id(nsrc), idx, dtype)
        c = casts.get(key)
        if c is None:
            label = nsrc.name if nsrc.is_var else \
                (f"{nsrc.name}_output" if nsrc.nout == 1 else f"{nsrc.name}_output{idx}")
            c = _Node("amp_cast", f"{label}_amp_cast_{dtype}", {"dtype": dtype},
                      [(nsrc, idx)], path="amp_cast")
            casts[key] = c
            known[(id(c), 0)] = dtype
        return c

    for node in order:
        if node.is_var:
            copy = _Node("null", node.name, dict(node.attrs), extra=dict(node.extra),
                         raw=node.raw)
            new[id(node)] = copy
            consumers[id(copy)] = []
            if node.name not in data_names:
                known[(id(copy), 0)] = _var_dtype(node) or "float32"
            continue
        dtype = None
        if node.name not in excluded:
            if node.op in lp16:
                dtype = target_dtype
            elif node.op in fp32:
                dtype = "float32"
            elif node.op in cond_map:
                param, values = cond_map[node.op]
                if str(node.attrs.get(param)) in values:
                    dtype = "float32"
        keep = set(_MUTATE.get(node.op, ()))
        if dtype == target_dtype and node.op in use_fp32:
            keep |= {i for i, n in enumerate(use_fp32[node.op]) if n}
        if dtype is None and node.op in widest and node.name not in excluded:
            # MXNet inserts amp_multicast; where the input types are known here, casting
            # the low-precision ones up to float32 is the same thing.
            types = {known.get((id(new[id(s)]), i)) for s, i in node.inputs}
            if "float32" in types and target_dtype in types:
                inputs = []
                for src, idx in node.inputs:
                    nsrc = new[id(src)]
                    if known.get((id(nsrc), idx)) == target_dtype:
                        inputs.append((cast_of(nsrc, idx, "float32"), 0))
                    else:
                        inputs.append((nsrc, idx))
                    if nsrc.is_var:
                        consumers[id(nsrc)].append(None)
                node_inputs = inputs
            else:
                node_inputs = None
        else:
            node_inputs = None
        inputs = []
        for pos, (src, idx) in enumerate(node.inputs if node_inputs is None else ()):
            nsrc = new[id(src)]
            if dtype is None or pos in keep or known.get((id(nsrc), idx)) == dtype:
                inputs.append((nsrc, idx))
                if nsrc.is_var:
                    consumers[id(nsrc)].append(None if known.get((id(nsrc), idx)) != dtype
                                               else dtype)
                continue
            inputs.append((cast_of(nsrc, idx, dtype), 0))
            if nsrc.is_var:
                consumers[id(nsrc)].append(dtype)
        if node_inputs is not None:
            inputs = node_inputs
        copy = _Node(node.op, node.name, dict(node.attrs), inputs,
                     input_names=node.input_names, extra=dict(node.extra), path=node.path,
                     variadic=node.variadic, raw=node.raw)
        new[id(node)] = copy
        in_types = [known.get((id(s), i)) for s, i in inputs]
        if dtype is not None:
            out_t = dtype
        elif node.op in widest and "float32" in in_types:
            out_t = "float32"
        else:
            out_t = next((t for t in in_types if t is not None), None)
        if node.attrs.get("dtype") not in (None, "None"):
            out_t = None  # casts and creation ops: their own attribute decides
        if out_t is not None:
            for i in range(copy.nout):
                known[(id(copy), i)] = out_t
    if cast_optional_params:
        # A parameter read only through casts to the low type is stored in that type.
        for node in order:
            nv = new[id(node)]
            uses = consumers.get(id(nv))
            if node.is_var and node.name not in data_names and uses and \
                    all(u == target_dtype for u in uses):
                nv.attrs["__dtype__"] = _DTYPE_CODE[target_dtype]
                known[(id(nv), 0)] = target_dtype
        # ... and read directly, its casts dropped.
        dropped = {id(c): c.inputs[0] for c in casts.values()
                   if c.inputs[0][0].is_var and "__dtype__" in c.inputs[0][0].attrs and
                   c.attrs["dtype"] == target_dtype}
        for node in order:
            nv = new[id(node)]
            nv.inputs = [dropped.get(id(s), (s, i)) for s, i in nv.inputs]
    # The outputs come back in float32, as MXNet's pass does.
    outs = []
    for n, i in sym._outputs:
        nn_ = new[id(n)]
        if known.get((id(nn_), i)) == target_dtype:
            outs.append((cast_of(nn_, i, "float32"), 0))
        else:
            outs.append((nn_, i))
    return Symbol(outs)


def _param_dtype(sym, name):
    from ..symbol.symbol import _var_dtype
    for node in sym._order():
        if node.is_var and node.name == name:
            return _var_dtype(node) if "__dtype__" in node.attrs else None
    return None


def convert_model(sym, arg_params, aux_params, target_dtype="float16", target_dtype_ops=None,
                  fp32_ops=None, conditional_fp32_ops=None, excluded_sym_names=None,
                  cast_optional_params=False):
    """``(converted symbol, arg_params, aux_params)``: :func:`convert_symbol` with the
    model's parameters, cast where the converted symbol marks them (cast_optional_params)."""
    if excluded_sym_names is not None and not isinstance(excluded_sym_names, list):
        raise ValueError("excluded_sym_names must be a list of strings representing the "
                         "names of the symbols that should not be casted, while received "
                         f"type {type(excluded_sym_names)}")
    if target_dtype not in ("float16", "bfloat16"):
        raise AssertionError("Only target_dtype float16 and bfloat16 are supported currently")
    from ..symbol.symbol import Symbol
    if not isinstance(sym, Symbol):
        raise AssertionError("First argument to convert_model should be Symbol")
    if not isinstance(arg_params, dict):
        raise AssertionError("Second argument to convert_model should be a dict of name to "
                             "ndarray")
    if not isinstance(aux_params, dict):
        raise AssertionError("Third argument to convert_model should be a dict of name to "
                             "ndarray")
    names = set(arg_params) | set(aux_params)
    data_names = [n for n in sym.list_inputs() if n not in names]
    out = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops,
                         excluded_sym_names, data_names, cast_optional_params)
    for params in (arg_params, aux_params):
        for k in list(params):
            d = _param_dtype(out, k)
            if d is not None and dtype_name(params[k]._t.dtype) != d:
                params[k] = params[k].astype(d)
    return out, arg_params, aux_params


def convert_bucketing_module(bucketing_mod, target_dtype="float16", target_dtype_ops=None,
                             fp32_ops=None, conditional_fp32_ops=None, excluded_sym_names=None,
                             cast_optional_params=False):
    """A new BucketingModule running ``bucketing_mod``'s network in mixed precision: each
    bucket's symbol goes through :func:`convert_model` with the module's parameters (cast
    where ``cast_optional_params`` allows), and the new module's ``sym_gen`` converts the
    symbols of buckets first seen later the same way. ``bucketing_mod`` must have its
    parameters initialised; the result is unbound, ready for ``bind``."""
    # mx.mod is built on the layers amp sits on; only this function needs it
    from ..module.bucketing_module import BucketingModule
    if not isinstance(bucketing_mod, BucketingModule):
        raise AssertionError("module should be instance of bucketing module, got "
                             f"{type(bucketing_mod).__name__}")
    if not bucketing_mod._buckets:
        raise AssertionError("Bucketing Module should not be empty")
    if not bucketing_mod.params_initialized:
        raise AssertionError("bucketing_mod params should be initialized for mixed precision "
                             "conversion")
    arg_params, aux_params = bucketing_mod.get_params()
    options = dict(target_dtype=target_dtype, target_dtype_ops=target_dtype_ops,
                   fp32_ops=fp32_ops, conditional_fp32_ops=conditional_fp32_ops,
                   excluded_sym_names=excluded_sym_names,
                   cast_optional_params=cast_optional_params)
    sym_dict = {}
    for key, mod in bucketing_mod._buckets.items():
        # convert_model casts the dicts' arrays in place: each call gets its own dicts
        sym_dict[key], args, auxs = convert_model(mod.symbol, dict(arg_params),
                                                  dict(aux_params), **options)
        if key == bucketing_mod._default_bucket_key:
            result_args, result_auxs = args, auxs
    param_names = set(arg_params) | set(aux_params)
    original_gen = bucketing_mod._sym_gen

    def converted_sym_gen(bucket_key):
        sym, data_names, label_names = original_gen(bucket_key)
        inputs = [n for n in sym.list_inputs() if n not in param_names]
        return (convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops,
                               conditional_fp32_ops, excluded_sym_names, inputs,
                               cast_optional_params), data_names, label_names)

    return BucketingModule.load_dict(
        sym_dict, sym_gen=converted_sym_gen, default_bucket_key=bucketing_mod._default_bucket_key,
        arg_params=result_args, aux_params=result_auxs, logger=bucketing_mod.logger,
        context=bucketing_mod._context, work_load_list=bucketing_mod._work_load_list,
        fixed_param_names=bucketing_mod._fixed_param_names,
        state_names=bucketing_mod._state_names, group2ctxs=bucketing_mod._group2ctxs,
        compression_params=bucketing_mod._compression_params)


def convert_hybrid_block(block, target_dtype="float16", target_dtype_ops=None, fp32_ops=None,
                         conditional_fp32_ops=None, excluded_sym_names=None, ctx=None,
                         cast_optional_params=False):
    """A SymbolBlock running ``block``'s forward pass in mixed precision (for inference):
    :func:`convert_symbol` on the hybridized graph, with ``block``'s parameters copied to
    ``ctx`` (cast to the low type where ``cast_optional_params`` allows). ``block`` must be
    hybridized and have run forward once."""
    from ..gluon.block import HybridBlock, SymbolBlock
    from ..context import current_context
    if not isinstance(block, HybridBlock):
        raise AssertionError("block input should be a HybridBlock")
    if not block._cached_graph:
        raise RuntimeError("Please first call block.hybridize() and then run forward with "
                           "this block at least once before calling export.")
    text, sym, graph = block._graph_text()
    if sym is None:
        raise MXNetError(f"convert_hybrid_block: the forward pass of {block.name} cannot run "
                         "on symbols, so it cannot be converted")
    if graph is not None:
        n = len(graph.inputs)
        input_names = ["data"] if n == 1 else [f"data{i}" for i in range(n)]
    else:
        input_names = [s.name for s in block._input_syms]
    converted = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops,
                               conditional_fp32_ops, excluded_sym_names,
                               data_names=input_names,
                               cast_optional_params=cast_optional_params)
    from .. import symbol as _sym
    inputs = [_sym.var(n) for n in input_names]
    ret = SymbolBlock(converted, inputs)
    ctx = ctx if ctx is not None else current_context()
    src = {p.name: p for p in block.collect_params().values()}
    for name, p in ret.collect_params().items():
        if name not in src:
            raise MXNetError(f"convert_hybrid_block: the converted graph reads {name!r}, "
                             "which the block has no parameter for")
        d = _param_dtype(converted, name) or dtype_name(src[name].data()._t.dtype)
        p._load_init(src[name]._reduce(), ctx, cast_dtype=True, dtype_source="saved")
        if dtype_name(p.data()._t.dtype) != d:
            p.cast(d)
    return ret

from . import amp, loss_scaler  # noqa: E402,F401  (MXNet's submodules: mx.contrib.amp.amp ...)
