"""The Optimizer base class, the registry, and the Updater that keeps per-index states.

Built-in optimizers (this package) derive from :class:`_MultiTensor`: their ``update`` and
``update_multi_precision`` take one index or parallel lists, and update every tensor of a list
at once, never with a per-Parameter Python loop of small torch calls. Three paths, same numbers:

1. CPU, float32/float64: one call of a compiled C kernel (``_ckernels.py``) does the rescale,
   clipping, weight decay and state updates in a single pass over all tensors.
2. Elsewhere (CUDA): SGD, NAG without momentum, Adam and AdamW run torch's fused multi-tensor
   kernels with their arguments chosen so the result is MXNet's (``fused.py``).
3. Otherwise: ``torch._foreach_*`` sequences of MXNet's maths (``_math.py`` and each ``_step``),
   with the kernels' scalars (float32 hyper-parameters, products rounded as the kernel rounds
   them), so paths 2 and 3 stay within a float32 ulp of path 1. Paths 2 and 3 issue a fixed
   number of torch ops per update whatever the number of tensors (float16 gradients under
   multi-precision too: one ``_foreach_copy_`` into reused float32 buffers);
   ``fused.device_path()`` runs CPU tensors through them, for tests
   (tests/test_optimizer_device_path.py).

Users subclass
:class:`Optimizer` the MXNet way (``create_state`` and ``update`` written with NDArray ops);
the :class:`Updater` calls those one index at a time.

Updater states are saved without pickle: an ``.npz`` archive (``allow_pickle=False``) holding
every state array and a JSON header with the state structure and, on request, the optimizer's
hyper-parameters, update counts and learning-rate schedule.
"""
from __future__ import annotations

import array
import io
import json
import math
import operator
import struct
import warnings
import weakref
import zipfile
import zlib

import numpy as np
import torch

from ..base import MXNetError
from ..context import cpu
from ..ndarray.ndarray import NDArray, _new, _DENSE_TYPES
from .. import lr_scheduler as _lrs

__all__ = ["Optimizer", "Updater", "get_updater", "create", "register", "Test"]

_TSHAPE = operator.attrgetter("_t.shape")
_TDTYPE = operator.attrgetter("_t.dtype")
_TDEVICE = operator.attrgetter("_t.device")
_T = operator.attrgetter("_t")
_LR_MULT = operator.attrgetter("lr_mult")
_WD_MULT = operator.attrgetter("wd_mult")

_STATE_FORMAT = "neogluon-updater-states"
_STATE_VERSION = 1


def _f32(x):
    """A Python float rounded to float32, as MXNet's operators receive hyper-parameters."""
    return float(np.float32(x))


def _f32s(values):
    """:func:`_f32` over a list, in one conversion."""
    return array.array("f", values).tolist()


class Optimizer:
    """The base class of all optimizers.

    Parameters
    ----------
    rescale_grad : float, default 1.0
        The gradient is multiplied by this before the update (the Trainer sets it to
        ``scale / batch_size`` at every step).
    param_idx2name : dict of int to str, optional
        Index to name. Without ``param_dict``, names not ending in ``_weight`` or ``_gamma``
        get a weight-decay multiplier of 0.
    wd : float, default 0.0
        Weight decay (L2 regularisation) coefficient.
    clip_gradient : float, optional
        Clip the rescaled gradient into ``[-clip_gradient, clip_gradient]``.
    learning_rate : float, optional
        Initial learning rate; overrides the scheduler's ``base_lr``. Defaults to 0.01 when
        there is no ``lr_scheduler``.
    lr_scheduler : LRScheduler, optional
        Called with ``num_update`` to give the learning rate.
    sym : None
        Accepted for compatibility; symbols are not supported.
    begin_num_update : int, default 0
        The initial number of updates.
    multi_precision : bool, default False
        Keep a float32 master copy of float16 weights and update that.
    param_dict : dict of int to Parameter, optional
        Index to Parameter; its ``lr_mult`` and ``wd_mult`` are read at every update.
    aggregate_num : int, optional
        How many tensors MXNet groups in one multi-tensor call. neogluon's built-in
        optimizers update a whole list at once; the value only matters where MXNet's numbers
        depend on it (LARS's momentum correction).
    """

    opt_registry: dict = {}

    def __init__(self, rescale_grad=1., param_idx2name=None, wd=0., clip_gradient=None,
                 learning_rate=None, lr_scheduler=None, sym=None, begin_num_update=0,
                 multi_precision=False, param_dict=None, aggregate_num=None):
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if self.lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        self.lr = learning_rate
        if self.lr_scheduler is not None and learning_rate is not None:
            if self.lr_scheduler.base_lr != learning_rate:
                warnings.warn("learning rate from ``lr_scheduler`` has been overwritten by "
                              "``learning_rate`` in optimizer.", UserWarning, stacklevel=2)
                self.lr_scheduler.base_lr = learning_rate
        self.wd = wd
        self.lr_mult = {}
        self.wd_mult = {}
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._all_index_update_counts = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        if aggregate_num is not None:
            self.aggregate_num = int(aggregate_num)
        elif not hasattr(self, "aggregate_num"):
            self.aggregate_num = 0
        if param_idx2name is None:
            param_idx2name = {}
        if not isinstance(param_idx2name, dict):
            raise AssertionError("param_idx2name should be a dict of param indexes to names.")
        self.idx2name = param_idx2name.copy()
        # A Symbol's variables may carry lr_mult/wd_mult attributes (Module passes its
        # symbol): they are the default multipliers by argument name.
        if sym is not None and not (hasattr(sym, "attr_dict") and
                                    hasattr(sym, "list_arguments")):
            raise MXNetError(f"Optimizer: sym must be a Symbol, got {type(sym).__name__}")
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict if param_dict else {}
        self.allow_np_array = False
        self.set_lr_mult({})
        self.set_wd_mult({})

    # ------------------------------------------------------------------ registry
    @staticmethod
    def register(klass):
        """Register an optimizer class under its lower-cased class name.

        Examples
        --------
        >>> @mx.optimizer.register
        ... class MyOptimizer(mx.optimizer.Optimizer):
        ...     pass
        >>> type(mx.optimizer.create('myoptimizer'))
        <class '__main__.MyOptimizer'>
        """
        if not isinstance(klass, type):
            raise AssertionError(f"register expects a class, got {klass!r}")
        name = klass.__name__.lower()
        if name in Optimizer.opt_registry:
            old = Optimizer.opt_registry[name]
            warnings.warn(f"WARNING: New optimizer {klass.__module__}.{klass.__name__} is "
                          f"overriding existing optimizer {old.__module__}.{old.__name__}",
                          stacklevel=2)
        Optimizer.opt_registry[name] = klass
        return klass

    @staticmethod
    def create_optimizer(name, **kwargs):
        """Create a registered optimizer by (case-insensitive) name.

        Parameters
        ----------
        name : str
            The optimizer's name, e.g. ``'sgd'`` or ``'Adam'``.
        **kwargs
            Passed to the optimizer's constructor.

        Returns
        -------
        Optimizer
        """
        key = name.lower()
        if key in Optimizer.opt_registry:
            return Optimizer.opt_registry[key](**kwargs)
        raise ValueError(f"Cannot find optimizer {name}")

    # ------------------------------------------------------------------ learning rate
    @property
    def learning_rate(self):
        """The current learning rate (the scheduler's value at ``num_update`` if any)."""
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    def set_learning_rate(self, lr):
        """Set the learning rate.

        Raises
        ------
        UserWarning
            When an ``lr_scheduler`` is set (as MXNet does).
        """
        if self.lr_scheduler is not None:
            raise UserWarning("LRScheduler of the optimizer has already been defined. Note "
                              "that set_learning_rate can mutate the value of the learning "
                              "rate of the optimizer only when the LRScheduler of the "
                              "optimizer is undefined.")
        self.lr = lr

    def set_lr_scale(self, args_lrscale):
        """Deprecated in MXNet; use :meth:`set_lr_mult`."""
        raise DeprecationWarning

    def set_lr_mult(self, args_lr_mult):
        """Set learning-rate multipliers by index or by name (``param_idx2name``).

        Parameters
        ----------
        args_lr_mult : dict of int or str to float
        """
        self.lr_mult = {}
        self.lr_mult.update(self._sym_mults("__lr_mult__"))
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult):
        """Set weight-decay multipliers by index or by name.

        Names from ``param_idx2name`` that end neither in ``_weight`` nor ``_gamma`` get 0
        unless given here.

        Parameters
        ----------
        args_wd_mult : dict of int or str to float
        """
        self.wd_mult = {}
        for n in self.idx2name.values():
            if not (n.endswith("_weight") or n.endswith("_gamma")):
                self.wd_mult[n] = 0.0
        self.wd_mult.update(self._sym_mults("__wd_mult__"))
        self.wd_mult.update(args_wd_mult)

    def _sym_mults(self, key):
        """``{argument name: multiplier}`` from the ``key`` attributes of ``sym``'s
        variables."""
        if not self.sym_info:
            return {}
        attr, arg_names = self.sym_info
        return {n: float(attr[n][key]) for n in arg_names if key in attr.get(n, {})}

    def _set_current_context(self, device_id):
        """Switch the per-index update counts to those of device ``device_id``."""
        if device_id not in self._all_index_update_counts:
            self._all_index_update_counts[device_id] = {}
        self._index_update_count = self._all_index_update_counts[device_id]

    def _update_count(self, index):
        """Count one more update of each index; ``num_update`` is the largest count."""
        if not isinstance(index, (list, tuple)):
            index = [index]
        counts = self._index_update_count
        begin = self.begin_num_update
        top = self.num_update
        for idx in index:
            c = counts.get(idx, begin) + 1
            counts[idx] = c
            if c > top:
                top = c
        self.num_update = top

    def _base_lr(self):
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    def _get_lrs(self, indices):
        """Learning rates of ``indices`` (scheduler or ``lr`` times the multipliers)."""
        lr = self._base_lr()
        return self._apply_lr_mult(lr, indices)

    def _apply_lr_mult(self, lr, indices):
        pd = self.param_dict
        if pd and all(map(pd.__contains__, indices)):  # the Trainer's case
            return [lr * m for m in map(_LR_MULT, map(pd.__getitem__, indices))]
        lrs = [lr] * len(indices)
        for i, index in enumerate(indices):
            if index in pd:
                lrs[i] *= pd[index].lr_mult
            elif index in self.lr_mult:
                lrs[i] *= self.lr_mult[index]
            elif index in self.idx2name:
                lrs[i] *= self.lr_mult.get(self.idx2name[index], 1.0)
        return lrs

    def _get_lr(self, index):
        return self._get_lrs([index])[0]

    def _get_wds(self, indices):
        """Weight decays of ``indices`` (``wd`` times the multipliers)."""
        pd = self.param_dict
        if pd and all(map(pd.__contains__, indices)):
            wd = self.wd
            return [wd * m for m in map(_WD_MULT, map(pd.__getitem__, indices))]
        wds = [self.wd] * len(indices)
        for i, index in enumerate(indices):
            if index in pd:
                wds[i] *= pd[index].wd_mult
            elif index in self.wd_mult:
                wds[i] *= self.wd_mult[index]
            elif index in self.idx2name:
                wds[i] *= self.wd_mult.get(self.idx2name[index], 1.0)
        return wds

    def _get_wd(self, index):
        return self._get_wds([index])[0]

    # ------------------------------------------------------------------ states and updates
    def create_state(self, index, weight):
        """Create the auxiliary state (e.g. momentum) of one weight; None when there is none.

        Parameters
        ----------
        index : int
            The weight's index.
        weight : NDArray
            The weight.
        """
        return None

    def create_state_multi_precision(self, index, weight):
        """Create the state, with a float32 master copy first for float16 weights when
        ``multi_precision`` is on: ``(weight32, create_state(index, weight32))``."""
        if self.multi_precision and weight.dtype == np.float16:
            master = weight.astype(np.float32)
            return (master,) + (self.create_state(index, master),)
        if weight.dtype == np.float16 and not self.multi_precision:
            warnings.warn("Accumulating with float16 in optimizer can lead to poor accuracy "
                          "or slow convergence. Consider using multi_precision=True option of "
                          "the optimizer", stacklevel=2)
        return self.create_state(index, weight)

    def update(self, index, weight, grad, state):
        """Update ``weight`` in place from ``grad`` and ``state``.

        Parameters
        ----------
        index : int
            The weight's index (for learning rate and weight decay multipliers).
        weight : NDArray
            The weight, updated in place.
        grad : NDArray
            The gradient (left unchanged).
        state : any
            What :meth:`create_state` returned.
        """
        raise NotImplementedError()

    def update_multi_precision(self, index, weight, grad, state):
        """:meth:`update`, on the float32 master copy for float16 weights when
        ``multi_precision`` is on. ``index``, ``weight``, ``grad`` and ``state`` may be
        parallel lists."""
        if isinstance(index, (list, tuple)):
            for i, w, g, s in zip(index, weight, grad, state):
                self.update_multi_precision(i, w, g, s)
            return
        if self.multi_precision and weight.dtype == np.float16:
            master, inner = state[0], state[1]
            self.update(index, master, grad.astype(np.float32), inner)
            weight._t.copy_(master._t)
        else:
            self.update(index, weight, grad, state)

    # ------------------------------------------------------------------ checkpoint support
    # Attributes that are not hyper-parameters or are restored separately.
    _NOT_CONFIG = ("param_dict", "lr_scheduler", "_all_index_update_counts",
                   "_index_update_count", "sym_info")

    def _config_dict(self):
        """The optimizer's JSON-serialisable attributes (hyper-parameters and counters)."""
        out = {}
        for k, v in vars(self).items():
            if k in self._NOT_CONFIG:
                continue
            enc = _encode_value(v)
            if enc is not _SKIP:
                out[k] = enc
        return out

    def _extra_arrays(self):
        """Optimizer-held arrays to checkpoint besides per-index states: name -> tensor."""
        return {}

    def _load_extra_arrays(self, arrays):
        if arrays:
            raise ValueError(f"unexpected optimizer arrays {sorted(arrays)}")


class Test(Optimizer):
    """The test optimizer: ``weight += grad * rescale_grad``; the state keeps the weight."""

    def create_state(self, index, weight):
        # float32 whatever the weight's dtype, as MXNet's Test optimizer
        return _new(torch.zeros(weight._t.shape, dtype=torch.float32, device=weight._t.device),
                    weight.context)

    _state_dtype = np.float32

    def update(self, index, weight, grad, state):
        many = isinstance(index, (list, tuple))
        for i, w, g, s in zip(*((index, weight, grad, state) if many else
                                ([index], [weight], [grad], [state]))):
            _check_pair("Test.update", i, w, g)
            _check_state("Test.update", self, i, w, s)
        ws = [w._t for w in weight] if many else [weight._t]
        gs = [g._t for g in grad] if many else [grad._t]
        ss = [s._t for s in state] if many else [state._t]
        with torch.no_grad():   # the weights are autograd leaves
            torch._foreach_add_(ws, gs, alpha=self.rescale_grad)
            torch._foreach_copy_(ss, ws)


register = Optimizer.register
create = Optimizer.create_optimizer
register(Test)


# ---------------------------------------------------------------------------- value coding
_SKIP = object()


def _encode_value(v):
    """JSON form of plain attribute values; _SKIP for anything else (arrays, objects)."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if math.isfinite(f):
            return f
        return {"__float__": repr(f)}
    if isinstance(v, (list, tuple)):
        items = [_encode_value(x) for x in v]
        if any(x is _SKIP for x in items):
            return _SKIP
        return {"__tuple__": items} if isinstance(v, tuple) else items
    if isinstance(v, dict):
        pairs = []
        for k, x in v.items():
            ek, ex = _encode_value(k), _encode_value(x)
            if ek is _SKIP or ex is _SKIP:
                return _SKIP
            pairs.append([ek, ex])
        return {"__dict__": pairs}
    return _SKIP


def _decode_value(v):
    if isinstance(v, list):
        return [_decode_value(x) for x in v]
    if isinstance(v, dict):
        if "__tuple__" in v:
            return tuple(_decode_value(x) for x in v["__tuple__"])
        if "__dict__" in v:
            return {_hashable(_decode_value(k)): _decode_value(x) for k, x in v["__dict__"]}
        if "__float__" in v:
            return float(v["__float__"])
        raise ValueError(f"unknown encoded value {v!r}")
    return v


def _hashable(k):
    return tuple(k) if isinstance(k, list) else k


def _find_class(base, name):
    stack = [base]
    while stack:
        c = stack.pop()
        if c.__name__ == name:
            return c
        stack.extend(c.__subclasses__())
    return None


# ---------------------------------------------------------------------------- Updater
def _is_builtin_fast(opt):
    """True when every method the multi-tensor path relies on is neogluon's own."""
    cls = type(opt)
    if not getattr(cls, "_multi_tensor", False):
        return False
    for name in ("update", "update_multi_precision", "create_state",
                 "create_state_multi_precision", "_step"):
        fn = getattr(cls, name, None)
        if fn is None or not getattr(fn, "__module__", "").startswith("neogluon.optimizer"):
            return False
    return True


class Updater:
    """Applies an optimizer to indexed weights and keeps each index's state.

    Call it as ``updater(index, grad, weight)``; ``index``, ``grad`` and ``weight`` may be
    parallel lists (the multi-tensor path the Trainer uses).

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer to apply.
    """

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self._states = {}
        self.states_synced = {}
        self.aggregate_updates = optimizer.aggregate_num > 0
        # Built-in fast paths may keep a state scaled by a known factor (see fused.py);
        # index -> factors. Reading `states` normalises them back to MXNet's layout.
        self._scales = {}

    @property
    def states(self):
        """Per-index states in MXNet's layout (dict index -> state)."""
        self._normalize_all()
        return self._states

    @states.setter
    def states(self, value):
        self._states = value
        self._scales = {}

    def _normalize_all(self):
        if self._scales:
            from .fused import normalize_states
            normalize_states(self._states, self._scales)

    def __call__(self, index, grad, weight):
        if not isinstance(index, (list, tuple)):
            indices, grads, weights = [index], [grad], [weight]
        else:
            indices, grads, weights = list(index), list(grad), list(weight)
            if not (len(indices) == len(grads) == len(weights)):
                raise MXNetError(f"Updater: {len(indices)} indices, {len(grads)} gradients and "
                                 f"{len(weights)} weights; the lists must be parallel")
        opt = self.optimizer
        states = self._states
        synced = self.states_synced
        fast = _is_builtin_fast(opt)
        keys = None
        if (set(map(type, weights)) <= _DENSE_TYPES and set(map(type, grads)) <= _DENSE_TYPES
                and list(map(_TSHAPE, weights)) == list(map(_TSHAPE, grads))
                and (wdts := list(map(_TDTYPE, weights))) == list(map(_TDTYPE, grads))
                and (wdevs := list(map(_TDEVICE, weights))) == list(map(_TDEVICE, grads))):
            # The usual call (dense NDArrays of matching shapes), checked in C-level passes.
            if fast and len(set(wdts)) == 1 and len(set(wdevs)) == 1:
                keys = ()  # one group
        else:
            keys = self._check_args(indices, weights, grads)
        if fast and keys is None:
            keys = [(w._t.dtype, w._t.get_device()) for w in weights]
        if weights:
            opt._set_current_context(weights[0].context.device_id)
        if (bytes in set(map(type, indices)) or not all(map(states.__contains__, indices))
                or not all(map(synced.get, indices))):
            self._prepare_states(indices, weights)
        if fast:
            chunk = opt.aggregate_num if self.aggregate_updates else 1
            k0 = keys[0] if keys else None
            if keys == ():
                groups = [list(range(len(weights)))] if weights else []
            elif all(k == k0 for k in keys):
                groups = [list(range(len(keys)))] if keys else []
            elif self.aggregate_updates or not _order_matters(opt, indices):
                # MXNet's Updater groups an aggregating optimizer's indices by dtype; for the
                # others the order of work changes no number here
                groups = [pos for _, pos in _groups(keys)]
            else:
                # MXNet updates the others index by index, in call order: consecutive runs
                # of one dtype keep that order
                groups = []
                for p, k in enumerate(keys):
                    if p and k == keys[p - 1]:
                        groups[-1].append(p)
                    else:
                        groups.append([p])
            for pos in groups:
                if len(groups) == 1:
                    idx_l, w_l, g_l = indices, weights, grads
                else:
                    idx_l = [indices[p] for p in pos]
                    w_l = [weights[p] for p in pos]
                    g_l = [grads[p] for p in pos]
                opt._update_impl(idx_l, w_l, g_l, [states[i] for i in idx_l],
                                 multi_precision=opt.multi_precision, scales=self._scales,
                                 checked=True, chunk=chunk)
        else:
            self._normalize_all()
            for i, w, g in zip(indices, weights, grads):
                opt.update_multi_precision(i, w, g, states[i])

    @staticmethod
    def _check_args(indices, weights, grads):
        """Check each (weight, grad) pair; returns their (dtype, device) grouping keys."""
        keys = []
        for i, w, g in zip(indices, weights, grads):
            _check_pair("Updater", i, w, g)
            keys.append((w._t.dtype, w._t.get_device()))
        return keys

    def _prepare_states(self, indices, weights):
        """Create missing states and move unsynced ones to their weight's context."""
        states, synced, opt = self._states, self.states_synced, self.optimizer
        for i, idx in enumerate(indices):
            if isinstance(idx, bytes):
                idx = idx.decode()
                indices[i] = idx
            if idx not in states:
                states[idx] = opt.create_state_multi_precision(idx, weights[i])
                synced[idx] = True
            elif not synced.get(idx, False):
                state = self.sync_state_context(states[idx], weights[i].context)
                if isinstance(opt, _MultiTensor):  # loaded states must fit their weight
                    _check_state("Updater.set_states", opt, idx, weights[i], state)
                states[idx] = state
                synced[idx] = True

    def sync_state_context(self, state, context):
        """Move a state (NDArray, or nested tuples/lists of them) to ``context``."""
        if isinstance(state, NDArray):
            return state.as_in_context(context)
        if isinstance(state, (tuple, list)):
            synced = [self.sync_state_context(s, context) for s in state]
            return tuple(synced) if isinstance(state, tuple) else synced
        return state

    # ------------------------------------------------------------------ serialisation
    def get_states(self, dump_optimizer=False):
        """The states as bytes (an ``.npz`` archive with a JSON header; no pickle).

        Parameters
        ----------
        dump_optimizer : bool, default False
            Also save the optimizer's hyper-parameters, update counts and learning-rate
            scheduler, so that :meth:`set_states` restores them.

        Returns
        -------
        bytes
        """
        self._normalize_all()
        arrays = {}
        counter = [0]

        def enc(s):
            if s is None:
                return None
            if isinstance(s, NDArray):
                k = f"s{counter[0]}"
                counter[0] += 1
                arrays[k] = _to_numpy(s._t)
                return {"a": k, "dtype": _dtype_name(s._t)}
            if isinstance(s, (tuple, list)):
                return {"t" if isinstance(s, tuple) else "l": [enc(x) for x in s]}
            v = _encode_value(s)
            if v is _SKIP:
                raise MXNetError(f"Updater.get_states: cannot save a state of type "
                                 f"{type(s).__name__}")
            return {"v": v}

        entries = [[_encode_value(k), enc(s)] for k, s in self._states.items()]
        header = {"format": _STATE_FORMAT, "version": _STATE_VERSION, "states": entries,
                  "optimizer": None}
        if dump_optimizer:
            header["optimizer"] = _dump_optimizer(self.optimizer, arrays)
        return _pack(header, arrays)

    def set_states(self, states):
        """Restore what :meth:`get_states` returned, or MXNet's pickled states.

        MXNet's ``Updater.get_states`` pickles (with or without ``dump_optimizer``, hence
        MXNet's ``.states`` files) are read by a restricted unpickler that builds only
        NDArrays, numbers, tuples, dicts and MXNet's built-in optimizers and schedulers
        (as their neogluon classes); see ``neogluon/optimizer/_mxstates.py``.

        Raises
        ------
        MXNetError
            When the bytes are not a neogluon Updater state blob nor MXNet's states pickle
            (truncated, foreign, or a pickle naming any other global, which is refused
            before anything runs); the Updater is then left unchanged.
        """
        if isinstance(states, (bytes, bytearray, memoryview)) and bytes(states[:1]) == b"\x80":
            from ._mxstates import load_mxnet_states
            new_states, new_opt = load_mxnet_states(states)
            self._install(new_states, new_opt)
            return
        header, arrays = _unpack(states)
        try:
            def dec(s):
                if s is None:
                    return None
                if "a" in s:
                    arr = arrays[s["a"]]
                    if arr.dtype.kind != "f":
                        raise ValueError(f"state array {s['a']} has dtype {arr.dtype}, not a "
                                         f"floating-point type")
                    t = _from_numpy(arr, s.get("dtype"))
                    return _new(t, cpu())
                if "t" in s:
                    return tuple(dec(x) for x in s["t"])
                if "l" in s:
                    return [dec(x) for x in s["l"]]
                if "v" in s:
                    return _decode_value(s["v"])
                raise ValueError(f"unknown state entry {s!r}")

            new_states = {_hashable(_decode_value(k)): dec(s) for k, s in header["states"]}
            new_opt = None
            if header.get("optimizer") is not None:
                new_opt = _load_optimizer(header["optimizer"], arrays)
        except MXNetError:
            raise
        except (KeyError, ValueError, TypeError, AttributeError) as e:
            raise MXNetError(f"Updater.set_states: malformed neogluon state blob ({e})") from e
        self._install(new_states, new_opt)

    def _install(self, new_states, new_opt):
        self._states = new_states
        self._scales = {}
        self.states_synced = dict.fromkeys(new_states, False)
        if new_opt is not None:
            self.optimizer = new_opt
            self.aggregate_updates = new_opt.aggregate_num > 0


def get_updater(optimizer):
    """Return an :class:`Updater` for ``optimizer``."""
    return Updater(optimizer)


def _dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def _to_numpy(t):
    t = t.detach()
    if t.dtype is torch.bfloat16:
        t = t.float()
    return t.cpu().numpy()


def _from_numpy(arr, dtype_name):
    t = torch.from_numpy(np.array(arr, copy=True))
    if dtype_name == "bfloat16":
        t = t.to(torch.bfloat16)
    return t


def _pack(header, arrays):
    buf = io.BytesIO()
    payload = dict(arrays)
    payload["__header__"] = np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)
    np.savez(buf, **payload)
    return buf.getvalue()


def _check_npz_sizes(blob):
    """Refuse an archive member whose ``.npy`` header declares more data than the member
    holds, before numpy allocates it."""
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        for info in zf.infolist():
            with zf.open(info) as f:
                version = np.lib.format.read_magic(f)
                if version == (1, 0):
                    shape, _, dtype = np.lib.format.read_array_header_1_0(f)
                elif version == (2, 0):
                    shape, _, dtype = np.lib.format.read_array_header_2_0(f)
                else:
                    raise ValueError(f"member {info.filename!r}: .npy version {version}")
                need = math.prod(shape) * dtype.itemsize
                have = info.file_size - f.tell()
                if need > have:
                    raise MXNetError(f"Updater.set_states: corrupt state blob (member "
                                     f"{info.filename!r} declares shape {shape} of "
                                     f"{dtype}: {need} bytes, it holds {have})")


def _unpack(blob):
    if isinstance(blob, (bytearray, memoryview)):
        blob = bytes(blob)
    if not isinstance(blob, bytes):
        raise MXNetError(f"Updater.set_states expects bytes, got {type(blob).__name__}")
    if not blob.startswith(b"PK\x03\x04"):
        raise MXNetError(f"Updater.set_states: not a neogluon optimizer state blob (it is not "
                         f"an .npz archive; its first bytes are {blob[:8]!r})")
    try:
        _check_npz_sizes(blob)
        with np.load(io.BytesIO(blob), allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except MXNetError:
        raise
    except (ValueError, OSError, zipfile.BadZipFile, EOFError, NotImplementedError,
            RuntimeError, KeyError, UnicodeDecodeError, zlib.error, struct.error) as e:
        # (zipfile: an unknown compression method is NotImplementedError, an encrypted
        # member RuntimeError, a corrupt deflate stream zlib.error)
        raise MXNetError(f"Updater.set_states: not a neogluon optimizer state blob (truncated "
                         f"or foreign data: {type(e).__name__}: {e})") from e
    raw = arrays.pop("__header__", None)
    if raw is None:
        raise MXNetError("Updater.set_states: not a neogluon optimizer state blob (no header)")
    try:
        header = json.loads(raw.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise MXNetError(f"Updater.set_states: corrupt state header ({e})") from e
    if not isinstance(header, dict) or header.get("format") != _STATE_FORMAT:
        raise MXNetError("Updater.set_states: not a neogluon optimizer state blob (wrong "
                         "format tag)")
    if header.get("version") != _STATE_VERSION:
        raise MXNetError(f"Updater.set_states: state blob version {header.get('version')} is "
                         f"not supported (expected {_STATE_VERSION})")
    return header, arrays


def _dump_optimizer(opt, arrays):
    extra = {}
    for k, t in opt._extra_arrays().items():
        key = f"opt_{k}"
        arrays[key] = _to_numpy(t)
        extra[k] = {"a": key, "dtype": _dtype_name(t)}
    counts = [[_encode_value(dev), [[_encode_value(i), c] for i, c in d.items()]]
              for dev, d in opt._all_index_update_counts.items()]
    cur = next((dev for dev, d in opt._all_index_update_counts.items()
                if d is opt._index_update_count), 0)
    sched = None
    if opt.lr_scheduler is not None:
        sched = opt.lr_scheduler.state_dict()
    return {"class": type(opt).__name__, "module": type(opt).__module__,
            "config": opt._config_dict(), "counts": counts, "current_device": cur,
            "lr_scheduler": sched, "extra": extra}


def _config_kind(v):
    """The kind of value an optimizer attribute holds, for checking a loaded config."""
    if v is None:
        return None
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float, np.integer, np.floating)):
        return "number"
    if isinstance(v, str):
        return "str"
    if isinstance(v, (tuple, list)):
        return "sequence"
    if isinstance(v, dict):
        return "dict"
    return "other"


def _check_config(cls, config):
    """Refuse a loaded optimizer config whose attributes would break the optimizer: names
    that are not plain attributes (dunders, the class's methods and properties) and values
    of another kind than the optimizer's defaults hold (a list where it keeps a number).
    Returns the defaults of a fresh optimizer of ``cls`` (empty if it needs arguments)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = vars(cls())
    except Exception:  # noqa: BLE001 - an optimizer needing arguments: names checked only
        ref = {}
    for k, v in config.items():
        if not isinstance(k, str) or k.startswith("__") or (
                hasattr(cls, k) and (callable(getattr(cls, k)) or
                                     isinstance(getattr(cls, k), property))):
            raise ValueError(f"the optimizer config sets {k!r}, which is not an attribute "
                             f"of {cls.__name__}")
        if k not in ref or v is None:
            # (None is an unset setting: clip_gradient, or lr while a scheduler drives it)
            continue
        want, got = _config_kind(ref[k]), _config_kind(v)
        if want is None or want == got or (want == "bool" and got == "number" and
                                           isinstance(v, int)):
            continue
        if want == "number" and got == "bool":
            continue
        raise ValueError(f"the optimizer config sets {k}={v!r}, but {cls.__name__}.{k} holds "
                         f"a {type(ref[k]).__name__}")
    return {k: v for k, v in ref.items()
            if k not in cls._NOT_CONFIG and _encode_value(v) is not _SKIP}


def _load_optimizer(d, arrays):
    cls = _find_class(Optimizer, d["class"])
    if cls is None:
        cls = Optimizer.opt_registry.get(d["class"].lower())
    if cls is None:
        raise MXNetError(f"Updater.set_states: the blob holds optimizer {d['class']!r}, which "
                         f"is not defined in this process; import or register it first")
    opt = cls.__new__(cls)
    if not isinstance(d["config"], dict):
        raise ValueError(f"the optimizer config is a {type(d['config']).__name__}, not an "
                         "object")
    config = {k: _decode_value(v) for k, v in d["config"].items()}
    for k, v in _check_config(cls, config).items():
        config.setdefault(k, v)   # (attributes a file leaves out keep their defaults)
    for k, v in config.items():
        setattr(opt, k, v)
    opt.param_dict = {}
    opt.sym_info = ()
    opt._all_index_update_counts = {
        _hashable(_decode_value(dev)): {_hashable(_decode_value(i)): int(c) for i, c in items}
        for dev, items in d["counts"]}
    if not opt._all_index_update_counts:
        opt._all_index_update_counts = {0: {}}
    cur = _hashable(_decode_value(d.get("current_device", 0)))
    opt._index_update_count = opt._all_index_update_counts.setdefault(cur, {})
    opt.lr_scheduler = None
    if d.get("lr_scheduler") is not None:
        sd = d["lr_scheduler"]
        scls = _find_class(_lrs.LRScheduler, sd.get("class", ""))
        if scls is None:
            raise MXNetError(f"Updater.set_states: unknown lr_scheduler class "
                             f"{sd.get('class')!r}")
        sched = scls.__new__(scls)
        sched.load_state_dict(sd)
        opt.lr_scheduler = sched
    extra = {k: _from_numpy(arrays[v["a"]], v.get("dtype")) for k, v in d["extra"].items()}
    opt._load_extra_arrays(extra)
    return opt


# ---------------------------------------------------------------------------- multi-tensor
class _MultiTensor(Optimizer):
    """Base of the built-in optimizers: one code path for one index or lists of them.

    Subclasses implement ``_step(indices, ws, gs, states, lrs, wds, scales)`` on torch tensor
    lists (the float32 master weights under multi-precision), with ``states`` the per-index
    inner states as tuples of tensors (None entries allowed).
    """

    _multi_tensor = True
    # State layout under multi-precision: MXNet's SGD family keeps (state, weight32); the base
    # class keeps (weight32, state).
    _mp_master_last = False
    # Whether `clip_gradient` is honoured when truthy (MXNet's operators) or when not None
    # (MXNet's Python-written optimizers).
    _clip_if_truthy = True
    # Count the update before reading the learning rate (all but LBSGD).
    _count_first = True
    # MXNet's class defines update_multi_precision itself (not via `update`).
    _own_mp = False
    # State shared between indices, so the order of their updates changes the numbers.
    _order_dependent = False

    def _state_shape(self, weight):
        """The shape of each of this optimizer's state arrays for ``weight``."""
        return weight.shape

    def _clip(self):
        c = self.clip_gradient
        if self._clip_if_truthy:
            return c if (c and c >= 0) else None
        return c

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        if not self._own_mp and not getattr(type(self).update, "__module__", "").startswith(
                "neogluon.optimizer"):
            # A subclass replaced `update`: MXNet's base class routes the multi-precision
            # update through it (SGD, NAG, LARS and LAMB have their own and do not).
            return Optimizer.update_multi_precision(self, index, weight, grad, state)
        self._update_impl(index, weight, grad, state, multi_precision=self.multi_precision)
        return None

    def create_state_multi_precision(self, index, weight):
        if self.multi_precision and weight.dtype == np.float16:
            master = weight.astype(np.float32)
            inner = self.create_state(index, master)
            return (inner, master) if self._mp_master_last else (master, inner)
        if weight.dtype == np.float16 and not self.multi_precision:
            warnings.warn("Accumulating with float16 in optimizer can lead to poor accuracy "
                          "or slow convergence. Consider using multi_precision=True option of "
                          f"the {type(self).__name__} optimizer", stacklevel=2)
        return self.create_state(index, weight)

    def _sparse_update(self, indices, weights, grads, states, multi_precision=False,
                       scales=None):
        from ._sparse import sparse_update  # lazy row_sparse updates live there
        sparse_update(self, indices, weights, grads, states, multi_precision, scales)

    def _update_impl(self, index, weight, grad, state, multi_precision=False, scales=None,
                     checked=False, chunk=None):
        if not isinstance(index, (list, tuple)):
            index, weight, grad, state = [index], [weight], [grad], [state]
        elif not isinstance(index, list):
            index = list(index)
        if not index:
            return
        if not checked:  # a direct call: the Updater checks its own arguments
            who = f"{type(self).__name__}.update"
            if not (len(index) == len(weight) == len(grad) == len(state)):
                raise MXNetError(f"{who}: {len(index)} indices, {len(weight)} weights, "
                                 f"{len(grad)} gradients and {len(state)} states; the lists "
                                 f"must be parallel")
            for i, w, g, st in zip(index, weight, grad, state):
                _check_pair(who, i, w, g)
                _check_state(who, self, i, w, st)
        if not (set(map(type, weight)) <= _DENSE_TYPES and set(map(type, grad)) <= _DENSE_TYPES) \
                and any(w.stype != "default" or g.stype != "default"
                        for w, g in zip(weight, grad)):
            # The dispatch point for row_sparse gradients (lazy updates).
            return self._sparse_update(index, weight, grad, state, multi_precision, scales)
        mp = bool(multi_precision) and weight[0]._t.dtype is torch.float16 and \
            isinstance(state[0], (tuple, list))
        if mp:
            mi, si = (1, 0) if self._mp_master_last else (0, 1)
            ws = [s[mi]._t for s in state]
            inner = [s[si] for s in state]
            gs = _float32_grads(list(map(_T, grad)))
        else:
            ws = list(map(_T, weight))
            inner = state
            gs = list(map(_T, grad))
        if inner and set(map(type, inner)) <= _DENSE_TYPES:  # one state array per weight
            sts = list(zip(map(_T, inner)))
        else:
            sts = [_as_tuple(s) for s in inner]
        lrs = self._count_and_get_lrs(index, chunk)
        wds = self._get_wds(index)
        prev = torch.is_grad_enabled()
        torch._C._set_grad_enabled(False)   # cheaper than `with torch.no_grad()` per step
        try:
            self._step(index, ws, gs, sts, lrs, wds, scales)
            if mp:
                torch._foreach_copy_([w._t for w in weight], ws)
        finally:
            torch._C._set_grad_enabled(prev)

    def _count_and_get_lrs(self, index, chunk=None):
        """Count the updates of ``index`` and return their learning rates, in MXNet's order.

        MXNet's Updater counts and reads the learning rates ``chunk`` indices at a time (its
        aggregate size, or 1 for an optimizer it updates index by index; None: the whole list
        at once, as a direct ``update`` call does). That changes the rates only under a
        schedule when the indices' counts differ, so only then is the work split."""
        if chunk is not None and chunk < len(index) and _rates_depend_on_order(self, index):
            lrs = []
            for k in range(0, len(index), chunk):
                lrs += self._count_and_get_lrs(index[k:k + chunk])
            return lrs
        if self._count_first:
            self._update_count(index)
            return self._get_lrs(index)
        lrs = self._get_lrs(index)
        self._update_count(index)
        return lrs

    def _step(self, indices, ws, gs, states, lrs, wds, scales):
        raise NotImplementedError


# float16 gradient tensor -> its float32 copy for the multi-precision update, reused while the
# gradient lives (Gluon keeps a Parameter's gradient array across steps). One
# ``_foreach_copy_`` converts the whole list (a single multi-tensor kernel on CUDA) where
# ``g.float()`` launched one conversion per tensor. The caching allocator would keep the
# per-step copies' memory anyway, so keeping them costs no extra device memory in steady state.
_G32 = {}  # id(gradient) -> (weak reference to it, float32 buffer); dropped with the gradient


def _float32_grads(gs):
    """float32 copies of the float16 gradients ``gs``, in one multi-tensor copy."""
    cache = _G32
    bufs = []
    for g in gs:
        e = cache.get(id(g))
        if e is None or e[0]() is not g or e[1].shape != g.shape:
            k = id(g)
            e = (weakref.ref(g, lambda _r, k=k: cache.pop(k, None)),
                 torch.empty(g.shape, dtype=torch.float32, device=g.device))
            cache[k] = e
        bufs.append(e[1])
    torch._foreach_copy_(bufs, gs)
    return bufs


def _rates_depend_on_order(opt, indices):
    """Whether the order in which ``indices`` are counted changes their learning rates: only
    under a schedule, and only when their update counts differ."""
    return opt.lr_scheduler is not None and \
        len(set(map(opt._index_update_count.get, indices))) > 1


def _order_matters(opt, indices):
    """Whether updating ``indices`` out of call order could change a number: an optimizer
    with state shared between indices (Nadam's schedule product), or their learning rates."""
    return opt._order_dependent or _rates_depend_on_order(opt, indices)


def _check_pair(who, index, w, g):
    """A weight and its gradient must be NDArrays of one shape, dtype and device (MXNet's
    update operators check the same; the kernels index both by the weight's layout)."""
    if not isinstance(w, NDArray) or not isinstance(g, NDArray):
        raise MXNetError(f"{who}: index {index!r}: weight and grad must be NDArrays, got "
                         f"{type(w).__name__} and {type(g).__name__}")
    dense = type(w) in _DENSE_TYPES and type(g) in _DENSE_TYPES  # sparse store rows only
    if (w._t.shape != g._t.shape) if dense else (w.shape != g.shape):
        raise MXNetError(f"{who}: index {index!r}: weight shape {w.shape} and gradient shape "
                         f"{g.shape} differ")
    if w.dtype != g.dtype:
        raise MXNetError(f"{who}: index {index!r}: weight dtype {np.dtype(w.dtype).name} and "
                         f"gradient dtype {np.dtype(g.dtype).name} differ")
    if dense and w._t.device != g._t.device:
        raise MXNetError(f"{who}: index {index!r}: weight on {w.context} and gradient on "
                         f"{g.context}")


def _state_arrays(state):
    if isinstance(state, NDArray):
        yield state
    elif isinstance(state, (tuple, list)):
        for s in state:
            yield from _state_arrays(s)


def _check_state(who, opt, index, weight, state):
    """Each state array of a built-in optimizer must have the shape the optimizer gives it for
    this weight (``_state_shape``), the weight's dtype (or the optimizer's ``_state_dtype``)
    and the weight's device; under multi-precision a float16 weight's state is a float32
    master copy of the weight's shape beside float32 inner states. States an optimizer
    subclass creates itself are its own."""
    if not getattr(type(opt).create_state, "__module__", "").startswith("neogluon.optimizer"):
        return
    shape_of = getattr(opt, "_state_shape", None)
    want = tuple(shape_of(weight) if shape_of else weight.shape)
    dtype = getattr(opt, "_state_dtype", None) or weight.dtype
    if opt.multi_precision and weight.dtype == np.float16 and \
            isinstance(state, (tuple, list)) and len(state) == 2:
        mi = 1 if getattr(opt, "_mp_master_last", False) else 0
        _check_arrays(who, index, weight, [state[mi]], tuple(weight.shape), np.float32)
        state, dtype = state[1 - mi], np.float32
    _check_arrays(who, index, weight, _state_arrays(state), want, dtype)


def _check_arrays(who, index, weight, arrays, want, dtype):
    dev = weight._t.device if type(weight) in _DENSE_TYPES else None
    for a in arrays:
        if tuple(a.shape) != want:
            raise MXNetError(f"{who}: index {index!r}: a state array has shape {a.shape}, "
                             f"expected {want} for the weight of shape {weight.shape} (states "
                             f"from another model or optimizer?)")
        if a.dtype != dtype:
            raise MXNetError(f"{who}: index {index!r}: a state array has dtype "
                             f"{np.dtype(a.dtype).name}, expected {np.dtype(dtype).name} for "
                             f"the {np.dtype(weight.dtype).name} weight")
        if dev is not None and type(a) in _DENSE_TYPES and a._t.device != dev:
            raise MXNetError(f"{who}: index {index!r}: a state array is on {a.context}, the "
                             f"weight on {weight.context}")


def _as_tuple(s):
    if s is None:
        return (None,)
    if isinstance(s, NDArray):
        return (s._t,)
    return tuple(None if x is None else x._t for x in s)


def _groups(keys):
    """Positions grouped by equal key, in first-seen order."""
    out = {}
    for p, k in enumerate(keys):
        out.setdefault(k, []).append(p)
    return list(out.items())


def _ck_clip(clip):
    """The kernels' clip argument: negative means no clipping."""
    return -1.0 if clip is None else float(clip)


def _zeros_like(weight, dtype=None):
    t = weight._t
    return _new(torch.zeros(t.shape, dtype=dtype or t.dtype, device=t.device), weight.context)


# MXNet 1.9.1 defines every optimizer class in ``mxnet/optimizer/optimizer.py`` and programs
# import them from there (``from mxnet.optimizer.optimizer import SGD``); neogluon keeps them in
# sibling modules, imported on first use here (they import this module themselves).
_CLASSES = {"SGD": "sgd", "ccSGD": "sgd", "NAG": "sgd", "Signum": "sgd", "LARS": "sgd",
            "LBSGD": "sgd", "DCASGD": "sgd", "SGLD": "sgd", "Adam": "adam", "AdamW": "adam",
            "Adamax": "adam", "Nadam": "adam", "LAMB": "adam", "FTML": "adam",
            "AdaGrad": "adaptive", "AdaDelta": "adaptive", "RMSProp": "adaptive",
            "Ftrl": "adaptive"}
__all__ += [n for n in _CLASSES if n != "AdamW"] + ["NDabs"]


def __getattr__(name):
    if name in _CLASSES:
        import importlib
        value = getattr(importlib.import_module(f".{_CLASSES[name]}", __package__), name)
    elif name == "NDabs":   # MXNet's optimizer module imports nd.abs under this name
        from ..ndarray import abs as value
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}", name=name)
    globals()[name] = value
    return value
