"""``gluon.Trainer``: applies an optimizer to a set of Parameters, as MXNet 1.9.1 does.

The behaviour (ordering, lazy set-up, ``update_on_kvstore`` rules, errors and warnings)
follows MXNet 1.9.1's Trainer. Two things are done differently, for speed, with the same
results:

- All Parameters of a context go to the updater in one call with lists, which runs the
  optimizer's multi-tensor path; with several contexts, all Parameters go to neogluon's own
  KVStore in one batched ``pushpull``. User stores (``KVStoreBase`` subclasses) get MXNet's
  per-Parameter calls.
- With several contexts and neogluon's store, the gradient buffers of each context are laid
  out back to back in one flat buffer (the NDArrays users hold stay the same objects and keep
  their values), so the store sums a whole context's gradients in one kernel.
"""
from __future__ import annotations

import operator
import os

import torch

from .. import optimizer as opt
from .._fileio import write_bytes as _atomic_write
from ..base import MXNetError
from ..kvstore import KVStore, KVStoreBase
from ..model import _create_kvstore, _create_sparse_kvstore
from .parameter import Parameter, ParameterDict

__all__ = ["Trainer"]

_GRAD_REQ = operator.attrgetter("_grad_req")
_DATA = operator.attrgetter("_data")
_GRAD = operator.attrgetter("_grad")
_FIRST = operator.itemgetter(0)
_AG = operator.attrgetter("_ag")
_FRESH = operator.attrgetter("fresh")

_STALE = ("Gradient of Parameter `%s` on context %s has not been updated by backward since "
          "last `step`. This could mean a bug in your model that made it only use a subset of "
          "the Parameters (Blocks) for this iteration. If you are intentionally only using a "
          "subset, call step with ignore_stale_grad=True to suppress this warning and skip "
          "updating of Parameters with stale gradient")


# AMP's cache of weight casts (neogluon.amp._CAST_CACHE, set by amp.init); None without AMP
_amp_cast_cache = None


class Trainer:
    """Applies an ``Optimizer`` on a set of Parameters; use it together with ``autograd``.

    Updates always happen on the kvstore (``update_on_kvstore=False`` is refused) for a
    distributed store with sparse weights or gradients and for a distributed async store.

    Parameters
    ----------
    params : ParameterDict, dict of Parameter, or list of Parameter
        The Parameters to optimise. Dict keys are taken in sorted order.
    optimizer : str or Optimizer
        The optimizer, by name or as an instance.
    optimizer_params : dict, optional
        Keyword arguments for the optimizer's constructor, e.g. ``{'learning_rate': 0.1}``
        (``learning_rate``, ``wd``, ``clip_gradient``, ``lr_scheduler``, ...). Must be empty
        when ``optimizer`` is an instance.
    kvstore : str or KVStoreBase, default 'device'
        The store that synchronises several contexts (see ``mx.kv.create``). With one context
        and a non-distributed store type, no store is used.
    compression_params : dict, optional
        Gradient compression for the store, e.g. ``{'type': '2bit', 'threshold': 0.5}``.
    update_on_kvstore : bool, optional
        Whether the store runs the optimizer. None lets the Trainer choose (and then the
        environment variable ``MXNET_UPDATE_ON_KVSTORE`` is honoured).

    Attributes
    ----------
    learning_rate : float
        The optimizer's current learning rate.
    optimizer : Optimizer
        The optimizer in use.
    """

    def __init__(self, params, optimizer, optimizer_params=None, kvstore="device",
                 compression_params=None, update_on_kvstore=None):
        if isinstance(params, (dict, ParameterDict)):
            params = [params[key] for key in sorted(list(params.keys()))]
        if not isinstance(params, (list, tuple)):
            raise ValueError(f"First argument must be a list or dict of Parameters, got "
                             f"{type(params)}.")
        self._params = []
        self._contains_sparse_weight = False
        self._contains_sparse_grad = False
        self._param2idx = {}
        for i, param in enumerate(params):
            if not isinstance(param, Parameter):
                raise ValueError(f"First argument must be a list or dict of Parameters, got "
                                 f"list of {type(param)}.")
            self._param2idx[param.name] = i
            self._params.append(param)
            param._set_trainer(self)
            if param._stype != "default":
                self._contains_sparse_weight = True
            if param._grad_stype != "default":
                self._contains_sparse_grad = True
        self._compression_params = compression_params
        self._contexts = self._check_contexts()
        self._init_optimizer(optimizer, optimizer_params if optimizer_params else {})
        self._scale = self._optimizer.rescale_grad
        self._kvstore_params = {"kvstore": kvstore, "update_on_kvstore": update_on_kvstore}
        self._kv_initialized = False
        self._kvstore = None
        self._update_on_kvstore = None
        self._distributed = None
        self._params_to_init = []
        self._buckets = None
        self._overlap = None
        self._reset_kvstore()
        self._sync_initial_weights()

    # ------------------------------------------------------------------ set-up
    def _check_contexts(self):
        contexts = None
        for param in self._params:
            ctx = param.list_ctx()
            if contexts is not None and contexts != ctx:
                raise AssertionError(
                    f"All Parameters must be initialized on the same set of contexts, but "
                    f"Parameter {param.name} is initialized on {ctx} while previous Parameters "
                    f"are initialized on {contexts}.")
            contexts = ctx
        return contexts if contexts is not None else []

    def _init_optimizer(self, optimizer, optimizer_params):
        param_dict = {i: param for i, param in enumerate(self._params)}
        if isinstance(optimizer, opt.Optimizer):
            if optimizer_params:
                raise AssertionError("optimizer_params must be None if optimizer is an instance "
                                     "of Optimizer instead of str")
            self._optimizer = optimizer
            # Not a copy: lr_mult / wd_mult changes made later must reach the optimizer.
            self._optimizer.param_dict = param_dict
        else:
            self._optimizer = opt.create(optimizer, param_dict=param_dict, **optimizer_params)
        self._updaters = [opt.get_updater(self._optimizer) for _ in self._contexts]

    def _sync_initial_weights(self):
        """Distributed store: give every worker rank 0's initial weights now.

        MXNet 1.9.1 does this only at the first ``step``, so each worker's first forward and
        backward ran on its own random initialisation unless all workers were seeded alike.
        Doing it at construction makes the first step use rank 0's weights everywhere (a
        collective: every worker creates its Trainers in the same order). Parameters whose
        shapes are still unknown (deferred initialisation) get rank 0's values at the first
        ``step``, as in MXNet.
        """
        kv = self._kvstore_params["kvstore"]
        if isinstance(kv, str) and "dist" in kv.lower():
            from ..kvstore import create
            kv = create(kv)
            self._kvstore_params["kvstore"] = kv
        from ..kvstore.dist import DistKVStore
        if not isinstance(kv, DistKVStore) or kv.num_workers == 1:
            return
        arrays = [p._data for p in self._params
                  if p._data is not None and p._stype == "default"]
        if arrays:
            kv.broadcast_values(arrays)

    def _init_params(self):
        """Put the initialised Parameters into the kvstore; deferred ones wait."""
        if not self._kv_initialized:
            raise AssertionError("Cannot initialize parameters in KVStore when KVStore is not "
                                 "initialized.")
        waiting = []
        kv = self._kvstore
        if kv:
            batched = isinstance(kv, KVStore)
            keys, values, outs = [], [], []
            for param in self._params_to_init:
                if param._deferred_init:
                    waiting.append(param)
                    continue
                arrays = param._check_and_get(param._data, list)
                idx = self._param2idx[param.name]
                if param._stype != "default":
                    kv.init(idx, arrays[0])
                elif batched:
                    keys.append(idx)
                    values.append(arrays[0])
                    outs.append(arrays)
                else:
                    kv.broadcast(idx, arrays[0], arrays)
            if keys:
                kv.broadcast(keys, values, outs)
        self._params_to_init = waiting
        self._buckets = None

    def _reset_kvstore(self):
        """Forget the kvstore; it is set up again on the next use (e.g. after a load)."""
        if self._kvstore and "dist" in self._kvstore.type:
            raise RuntimeError("Cannot reset distributed KVStore.")
        self._kv_initialized = False
        self._kvstore = None
        self._distributed = None
        self._update_on_kvstore = None
        self._params_to_init = [param for param in self._params]
        self._buckets = None

    def _init_kvstore(self):
        """Create the kvstore and decide ``update_on_kvstore``, following MXNet's rules."""
        config = self._kvstore_params
        if self._contains_sparse_weight:
            kvstore, update_on_kvstore = _create_sparse_kvstore(config["kvstore"])
            self._distributed = "dist" in kvstore.type
            if config["update_on_kvstore"] is False:
                raise ValueError("Cannot set update_on_kvstore=False when sparse weights "
                                 "are present.")
        elif self._contains_sparse_grad:
            # One machine: sparse gradients are summed and the update runs locally (faster);
            # several machines can only update on the store.
            arg_arrays = {p.name: p.data(self._contexts[0]) for p in self._params}
            kvstore, _ = _create_kvstore(config["kvstore"], len(self._contexts), arg_arrays)
            self._distributed = "dist" in kvstore.type if kvstore else False
            update_on_kvstore = self._distributed
            if config["update_on_kvstore"] is not None:
                if config["update_on_kvstore"] is False and self._distributed:
                    raise ValueError("Cannot set update_on_kvstore=False on dist kvstore "
                                     "when sparse gradients are present.")
                update_on_kvstore = config["update_on_kvstore"]
            if kvstore is not None and not isinstance(kvstore, KVStore):
                raise ValueError(f"Cannot use {type(kvstore)} for multi-device training with "
                                 "sparse gradients")
        else:
            arg_arrays = {p.name: p.data(self._contexts[0]) for p in self._params}
            kvstore, update_on_kvstore = _create_kvstore(config["kvstore"],
                                                         len(self._contexts), arg_arrays)
            self._distributed = "dist" in kvstore.type if kvstore else False
            if self._distributed and "async" in kvstore.type:
                update_on_kvstore = True
                if config["update_on_kvstore"] is False:
                    raise ValueError("Please set update_on_kvstore=True when training in "
                                     "async mode.")
            if config["update_on_kvstore"] is not None:
                update_on_kvstore = config["update_on_kvstore"]
            if update_on_kvstore and kvstore is None:
                # (MXNet 1.9.1 fails here with "'NoneType' object has no attribute
                # 'is_capable'"; the error stays an AttributeError, and says why.)
                raise AttributeError(
                    f"update_on_kvstore=True needs a kvstore, but with "
                    f"{len(self._contexts)} context(s) and kvstore={config['kvstore']!r} the "
                    "Trainer uses none (one context on one machine needs no store). Leave "
                    "update_on_kvstore unset, or pass a store object such as "
                    "mx.kv.create('device')")
            if update_on_kvstore and not kvstore.is_capable("optimizer"):
                if config["update_on_kvstore"]:
                    raise ValueError(f"Please set update_on_kvstore=False when training with "
                                     f"{type(kvstore)}")
                update_on_kvstore = False
        if kvstore:
            if self._compression_params:
                kvstore.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                # Before init, so multi-precision weights are set up as the optimizer wants.
                kvstore.set_optimizer(self._optimizer)
            self._kvstore = kvstore
            self._update_on_kvstore = update_on_kvstore
        else:
            self._kvstore = None
            self._update_on_kvstore = None
        self._kv_initialized = True

    def _ensure_kvstore(self):
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()

    # ------------------------------------------------------------------ learning rate
    @property
    def learning_rate(self):
        """The optimizer's current learning rate."""
        if not isinstance(self._optimizer, opt.Optimizer):
            raise UserWarning("Optimizer has to be defined before its learning rate can be "
                              "accessed.")
        return self._optimizer.learning_rate

    @property
    def optimizer(self):
        """The optimizer in use (after ``load_states``, the loaded one)."""
        if isinstance(self._optimizer, opt.Optimizer):
            return self._optimizer
        raise UserWarning("Optimizer has not been initialized yet")

    def set_learning_rate(self, lr):
        """Set a new learning rate of the optimizer.

        Parameters
        ----------
        lr : float
            The new learning rate.
        """
        if not isinstance(self._optimizer, opt.Optimizer):
            raise UserWarning("Optimizer has to be defined before its learning rate is "
                              "mutated.")
        self._optimizer.set_learning_rate(lr)

    # ------------------------------------------------------------------ sparse pull
    def _row_sparse_pull(self, parameter, out, row_id, full_idx=False):
        """Pull rows of a row_sparse Parameter from the kvstore (all rows with ``full_idx``)."""
        self._ensure_kvstore()
        idx = self._param2idx[parameter.name]
        if full_idx and "dist" not in self._kvstore.type:
            if row_id.size != out.shape[0]:
                raise AssertionError(f"row_id has {row_id.size} rows but the output has "
                                     f"{out.shape[0]}")
            self._kvstore.pull(idx, out=out, priority=-idx, ignore_sparse=False)
        else:
            self._kvstore.row_sparse_pull(idx, out=out, row_ids=row_id, priority=-idx)

    # ------------------------------------------------------------------ steps
    def _check_and_rescale_grad(self, scale):
        if self._update_on_kvstore and self._distributed and self._kv_initialized:
            if self._optimizer.rescale_grad != scale:
                raise UserWarning("Possible change in the `batch_size` from previous `step` "
                                  "detected. Optimizer gradient normalizing factor will not "
                                  "change w.r.t new batch_size when update_on_kvstore=True and "
                                  "when distributed kvstore is used.")
        self._optimizer.rescale_grad = scale

    def step(self, batch_size, ignore_stale_grad=False):
        """Make one step of parameter update: ``allreduce_grads()`` then ``update()``.

        Call it after ``backward`` and outside ``record()``.

        Parameters
        ----------
        batch_size : int
            The batch size; gradients are normalised by ``1/batch_size``. Use 1 when the
            loss is already a mean.
        ignore_stale_grad : bool, default False
            Skip Parameters whose gradient was not written by ``backward`` since the last
            step, instead of raising.
        """
        self._check_and_rescale_grad(self._scale / batch_size)
        self._ensure_kvstore()
        loss_scaler = getattr(self, "_amp_loss_scaler", None)
        if loss_scaler is not None and self._kvstore and self._update_on_kvstore:
            # The store updates while it reduces: look for an overflow before pushing
            # (MXNet 1.9.1 looks after, when the update is already made).
            if loss_scaler.has_overflow(self._params):
                return
        self._allreduce_grads()
        self._update(ignore_stale_grad)

    def allreduce_grads(self):
        """Sum each Parameter's gradients over the contexts (in place).

        Call it after ``backward`` and before ``update``; transform the summed gradients in
        between (e.g. clip them). Not available when the kvstore runs the optimizer.
        """
        self._ensure_kvstore()
        if self._kvstore and self._update_on_kvstore:
            raise AssertionError("allreduce_grads() when parameters are updated on kvstore is "
                                 "not supported. Try setting `update_on_kvstore` to False when "
                                 "creating trainer.")
        self._allreduce_grads()

    def _allreduce_grads(self):
        kv = self._kvstore
        if not kv:
            return
        if isinstance(kv, KVStore):
            self._allreduce_batched(kv)
            return
        for i, param in enumerate(self._params):
            if param.grad_req == "null":
                continue
            grad_list = param.list_grad()
            if grad_list[0].stype != "default":
                self._push_pull_sparse(kv, i, param, grad_list)
            elif self._update_on_kvstore:
                kv.pushpull(i, grad_list, out=param.list_data(), priority=-i)
            else:
                kv.pushpull(i, grad_list, priority=-i)

    def _push_pull_sparse(self, kv, i, param, grad_list):
        kv.push(i, grad_list, priority=-i)
        if param._stype == "default":
            pull_list = param.list_data() if self._update_on_kvstore else param.list_grad()
            kv.pull(i, pull_list, priority=-i, ignore_sparse=self._distributed)

    def _allreduce_batched(self, kv):
        keys, grads, outs = [], [], []
        uok = self._update_on_kvstore
        for i, param in enumerate(self._params):
            if param.grad_req == "null":
                continue
            grad_list = param.list_grad()
            if grad_list[0].stype != "default":
                self._push_pull_sparse(kv, i, param, grad_list)
                continue
            keys.append(i)
            grads.append(grad_list)
            if uok:
                outs.append(param.list_data())
        if not keys:
            return
        ov = self._overlap
        if ov is not None:
            if ov.keys == keys:
                if ov.take():  # a collective: every worker decides the same
                    ov.finish(outs if uok else grads)
                    return
            else:
                ov.close()
                self._overlap = None
        if len(self._contexts) > 1:
            self._bucket_grads(keys, grads)
        if uok:
            kv.pushpull(keys, grads, out=outs)
        else:
            kv.pushpull(keys, grads)
        if self._overlap is None and self._overlap_wanted(kv, keys, grads):
            from ..kvstore.dist import GradOverlap
            self._overlap = GradOverlap(
                kv, keys, [self._params[i]._data[0] for i in keys], [g[0] for g in grads], uok,
                int(float(os.environ.get("NEOGLUON_DIST_BUCKET_MB", "8")) * 2 ** 20))

    def _overlap_wanted(self, kv, keys, grads):
        """Reduce gradient buckets during backward (``NEOGLUON_DIST_OVERLAP=1``): a distributed
        sync store of several workers, one context, dense 'write' gradients of one dtype."""
        if os.environ.get("NEOGLUON_DIST_OVERLAP", "0").lower() not in ("1", "true", "on"):
            return False
        from ..kvstore.dist import DistKVStore
        if (not isinstance(kv, DistKVStore) or kv.num_workers == 1 or kv._async
                or kv._compression is not None or len(self._contexts) != 1
                or self._contains_sparse_weight or self._contains_sparse_grad):
            return False
        if any(self._params[i].grad_req != "write" for i in keys):
            return False
        ts = [g[0]._t for g in grads]
        return len({(t.dtype, t.device) for t in ts}) == 1

    def _bucket_grads(self, keys, grads):
        """Lay each context's gradient buffers out back to back in one flat buffer.

        The gradient NDArrays stay the same objects with the same values (only the memory
        behind them moves), and backward keeps writing into them; the store then sums a whole
        context at once. Rebuilt whenever the set of gradients changes.
        """
        b = self._buckets
        if b is not None and b[0] == keys and all(
                g._t is t for gl, tl in zip(grads, b[1]) for g, t in zip(gl, tl)):
            return
        self._buckets = None
        nctx = len(grads[0])
        first = [gl[0]._t for gl in grads]
        dtype = first[0].dtype
        if any(len(gl) != nctx for gl in grads) or any(t.dtype is not dtype for t in first):
            return
        views = [[None] * nctx for _ in grads]
        with torch.no_grad():
            for c in range(nctx):
                ts = [gl[c]._t for gl in grads]
                dev = ts[0].device
                if any(t.device != dev or t.dtype is not dtype for t in ts):
                    return
                flat = torch.empty(sum(t.numel() for t in ts), dtype=dtype, device=dev)
                off = 0
                for j, (gl, t) in enumerate(zip(grads, ts)):
                    v = flat[off:off + t.numel()].view(t.shape)
                    v.copy_(t)
                    off += t.numel()
                    views[j][c] = v
            for gl, vl in zip(grads, views):
                for g, v in zip(gl, vl):
                    g._t = v
        self._buckets = (list(keys), views)

    def update(self, batch_size, ignore_stale_grad=False):
        """Apply the optimizer to the (already summed) gradients.

        Call it after ``allreduce_grads``. Not available when the kvstore runs the optimizer.

        Parameters
        ----------
        batch_size : int
            The batch size; gradients are normalised by ``1/batch_size``.
        ignore_stale_grad : bool, default False
            Skip Parameters with stale gradients instead of raising.
        """
        self._ensure_kvstore()
        if self._kvstore and self._update_on_kvstore:
            raise AssertionError("update() when parameters are updated on kvstore is not "
                                 "supported. Try setting `update_on_kvstore` to False when "
                                 "creating trainer.")
        self._check_and_rescale_grad(self._scale / batch_size)
        self._update(ignore_stale_grad)

    def _update(self, ignore_stale_grad=False):
        if _amp_cast_cache:
            _amp_cast_cache.clear()  # AMP's low-precision copies of the weights about to change
        on_kv = bool(self._kvstore and self._update_on_kvstore)
        loss_scaler = getattr(self, "_amp_loss_scaler", None)
        if loss_scaler is not None and not on_kv and loss_scaler.has_overflow(self._params):
            return  # skip the step: the gradients overflowed (step() checked when on_kv)
        if not on_kv and self._fast_update():
            return
        nupd = len(self._updaters)
        indices = [[] for _ in range(nupd)]
        grads = [[] for _ in range(nupd)]
        weights = [[] for _ in range(nupd)]
        for i, param in enumerate(self._params):
            if param.grad_req == "null":
                continue
            datas = param._check_and_get(param._data, list)
            if not ignore_stale_grad:
                for data in datas:
                    if not data._fresh_grad:
                        raise UserWarning(_STALE % (param.name, str(data.context)))
            if on_kv:
                continue
            for k, (arr, grad) in enumerate(zip(datas, param.list_grad())):
                if not ignore_stale_grad or arr._fresh_grad:
                    indices[k].append(i)
                    grads[k].append(grad)
                    weights[k].append(arr)
                    arr._fresh_grad = False
        if on_kv:
            return
        for updater, idx, g, w in zip(self._updaters, indices, grads, weights):
            if idx:
                updater(idx, g, w)

    def _fast_update(self):
        """The common step in C-level passes: every Parameter trains, is initialised and has a
        fresh gradient on every context. Returns False, having changed nothing, otherwise; the
        loop in :meth:`_update` then gives MXNet's exact errors and skipping rules."""
        params = self._params
        if not params or "null" in map(_GRAD_REQ, params):
            return False
        datas = list(map(_DATA, params))
        grads = list(map(_GRAD, params))
        if None in datas or None in grads:
            return False
        nupd = len(self._updaters)
        if set(map(len, datas)) != {nupd} or set(map(len, grads)) != {nupd}:
            return False
        if nupd == 1:
            per_ctx = [(list(map(_FIRST, datas)), list(map(_FIRST, grads)))]
        else:
            per_ctx = [([d[k] for d in datas], [g[k] for g in grads]) for k in range(nupd)]
        ags = [ag for ws, _ in per_ctx for ag in map(_AG, ws)]
        try:
            if not all(map(_FRESH, ags)):
                return False
        except AttributeError:  # an array with no gradient record
            return False
        for ag in ags:
            ag.fresh = False
        indices = list(range(len(params)))
        for updater, (ws, gs) in zip(self._updaters, per_ctx):
            updater(indices, gs, ws)
        return True

    # ------------------------------------------------------------------ states
    def save_states(self, fname):
        """Save the optimizer states (momentum, update counts, schedule) to a file.

        The file is written atomically and holds no pickle. ``optimizer.param_dict`` (the
        Parameters' ``lr_mult``/``wd_mult``) is not saved.

        Parameters
        ----------
        fname : str
            Path of the states file.
        """
        if self._optimizer is None:
            raise AssertionError("the Trainer has no optimizer")
        self._ensure_kvstore()
        if self._update_on_kvstore:
            if self._params_to_init:
                raise AssertionError("Cannot save trainer states when some parameters are not "
                                     "yet initialized in kvstore.")
            self._kvstore.save_optimizer_states(fname, dump_optimizer=True)
        else:
            blob = self._updaters[0].get_states(dump_optimizer=True)
            # Reading states brings fused-path states back to MXNet's layout, which changes
            # later rounding; do it on every context so they stay identical (and so a run
            # resumed from this file continues exactly as this one does).
            for updater in self._updaters[1:]:
                getattr(updater, "states", None)
            _atomic_write(fname, blob)

    def load_states(self, fname):
        """Load optimizer states saved by :meth:`save_states`, or by MXNet 1.x.

        The optimizer (its configuration, update counts and learning-rate schedule) comes
        from the file; ``optimizer.param_dict`` is set to this Trainer's Parameters, so
        ``lr_mult``/``wd_mult`` changes made afterwards take effect. MXNet's pickled
        ``.states`` files are recognised by their content and read with a restricted
        unpickler (see :meth:`neogluon.optimizer.Updater.set_states`).

        Parameters
        ----------
        fname : str
            Path of the states file.

        Raises
        ------
        MXNetError
            When the file is truncated, not a neogluon or MXNet states file (a pickle naming
            any global besides MXNet's NDArray, optimizers and schedulers is refused before
            anything in it runs), or was saved for another optimizer or for Parameters of
            other shapes. The Trainer is then unchanged.
        """
        self._ensure_kvstore()
        with open(fname, "rb") as f:
            blob = f.read()
        uok = self._update_on_kvstore
        if not uok or isinstance(self._kvstore, KVStore):
            self._check_states(fname, blob)
        if uok:
            self._kvstore.load_optimizer_states(fname)
            updater = getattr(self._kvstore, "_updater", None)
            if updater is None and getattr(self._kvstore, "_async", False):
                updater = self._kvstore._server.updater
                if updater is None:
                    # a dist_async worker other than rank 0 holds no optimizer: it takes the
                    # file's too (its schedule, rescale_grad and update counts), as rank 0 does
                    updater = opt.get_updater(self._optimizer)
                    updater.set_states(blob)
            if updater is not None:
                self._optimizer = updater.optimizer
        else:
            for updater in self._updaters:
                updater.set_states(blob)
                updater.optimizer = self._updaters[0].optimizer
            if self._updaters:
                self._optimizer = self._updaters[0].optimizer
        self._optimizer.param_dict = {i: param for i, param in enumerate(self._params)}

    def _check_states(self, fname, blob):
        """Raise (and change nothing) unless ``blob`` fits this Trainer's optimizer and shapes."""
        probe = opt.get_updater(self._optimizer)
        try:
            probe.set_states(blob)
        except MXNetError as err:
            raise MXNetError(f"Trainer.load_states: cannot load '{fname}': {err}") from None
        loaded = probe.optimizer
        if type(loaded) is not type(self._optimizer):
            raise MXNetError(f"Trainer.load_states: '{fname}' holds states of optimizer "
                             f"{type(loaded).__name__}, but this Trainer uses "
                             f"{type(self._optimizer).__name__}")
        nparams = len(self._params)
        for idx, state in probe.states.items():
            if not isinstance(idx, int) or not 0 <= idx < nparams:
                raise MXNetError(f"Trainer.load_states: '{fname}' holds a state for parameter "
                                 f"index {idx!r}, but this Trainer has {nparams} Parameters "
                                 "(states of another model?)")
            param = self._params[idx]
            if param._data is None or param._stype != "default":
                continue
            weight = param._data[0]
            expected = self._optimizer.create_state_multi_precision(idx, weight)
            problem = _state_mismatch(expected, state)
            if problem:
                raise MXNetError(f"Trainer.load_states: '{fname}' does not match Parameter "
                                 f"'{param.name}' (index {idx}, shape {weight.shape}): {problem} "
                                 "(states of another model?)")


def _state_mismatch(expected, got):
    from ..ndarray.ndarray import NDArray
    if isinstance(expected, NDArray):
        if not isinstance(got, NDArray):
            return f"expected an array state, found {type(got).__name__}"
        if expected.shape != got.shape:
            return f"the saved state has shape {got.shape}, expected {expected.shape}"
        if expected._t.dtype is not got._t.dtype:
            return (f"the saved state has dtype {got.dtype.__name__}, expected "
                    f"{expected.dtype.__name__}")
        return None
    if isinstance(expected, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            return "the saved state has another structure"
        for e, g in zip(expected, got):
            problem = _state_mismatch(e, g)
            if problem:
                return problem
        return None
    if expected is None and isinstance(got, NDArray):
        return "the saved state has an array where none is expected"
    return None


