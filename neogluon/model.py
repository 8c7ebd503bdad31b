"""``mx.model``: Module-era checkpoints (``save_checkpoint``, ``load_checkpoint``,
``load_params``), the helpers that pick a KVStore for training
(``mx.model._create_kvstore``), and MXNet 1.x's first training API, ``FeedForward`` (with
its loop, ``_train_multi_device``)."""
from __future__ import annotations

import logging
import os
import time
import warnings
from collections import namedtuple

import numpy as np

from . import io
from . import kvstore as kvs
from . import metric
from . import ndarray as nd
from . import optimizer as opt
from .base import MXNetError, MXNetValueError
from .context import Context, cpu
from .executor_manager import (DataParallelExecutorManager, _check_arguments, _load_data,
                               _provided_types)
from .initializer import Uniform
from .io import DataDesc
from .optimizer import get_updater

__all__ = ["BatchEndParam", "save_checkpoint", "load_checkpoint", "load_params",
           "FeedForward"]

# What a batch-end callback (mx.callback.Speedometer, ...) receives: the epoch, the batch index
# within it, the training metric (or None) and the caller's locals(). The type is named
# 'BatchEndParams' as in MXNet, so reprs read the same.
BatchEndParam = namedtuple("BatchEndParams", ["epoch", "nbatch", "eval_metric", "locals"])


def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """Write ``prefix-symbol.json`` and ``prefix-%04d.params`` as MXNet does: the same bytes
    as MXNet 1.9.1's files for the same graph and arrays. Each file is written atomically
    (a temporary file renamed into place) with the permissions the umask gives.

    Parameters
    ----------
    prefix : str
    epoch : int
    symbol : Symbol or None
        The graph (not written when None).
    arg_params, aux_params : dict of str to NDArray
        Saved as ``arg:<name>`` and ``aux:<name>``.
    remove_amp_cast : bool, default True
        Leave AMP cast nodes out of the symbol file.
    """
    from . import ndarray as nd
    from .context import cpu
    if symbol is not None:
        symbol.save(f"{prefix}-symbol.json", remove_amp_cast=remove_amp_cast)
    save_dict = {f"arg:{k}": v.as_in_context(cpu()) for k, v in arg_params.items()}
    save_dict.update({f"aux:{k}": v.as_in_context(cpu()) for k, v in aux_params.items()})
    param_name = "%s-%04d.params" % (prefix, epoch)
    nd.save(param_name, save_dict)   # atomic
    logging.info('Saved checkpoint to "%s"', param_name)


def load_params(prefix, epoch):
    """``(arg_params, aux_params)`` from ``prefix-%04d.params`` (keys ``arg:``/``aux:``)."""
    from . import ndarray as nd
    fname = "%s-%04d.params" % (prefix, epoch)
    if not os.path.isfile(fname):
        raise MXNetError(f"load_params: no parameter file {fname}")
    save_dict = nd.load(fname)
    if not save_dict:
        logging.warning("Params file '%s' is empty", fname)
        return {}, {}
    return _split_params(save_dict, fname)


def _split_params(save_dict, fname):
    """``(arg_params, aux_params)`` from the ``arg:``/``aux:`` keys of a loaded file."""
    from .base import MXNetValueError
    if not isinstance(save_dict, dict):
        raise MXNetValueError(f"Invalid param file {fname}: it holds a list of arrays, not "
                              "arg:/aux: names")
    arg_params, aux_params = {}, {}
    for k, value in save_dict.items():
        kind, _, name = k.partition(":")
        if kind == "arg" and name:
            arg_params[name] = value
        elif kind == "aux" and name:
            aux_params[name] = value
        else:
            raise MXNetValueError(f"Invalid param file {fname}: key {k!r} is neither "
                                  "arg:<name> nor aux:<name>")
    return arg_params, aux_params


def load_checkpoint(prefix, epoch):
    """``(symbol, arg_params, aux_params)`` from ``prefix-symbol.json`` and
    ``prefix-%04d.params`` (MXNet's or neogluon's). ``gluon.SymbolBlock.imports`` gives the
    same model as a Gluon block."""
    from . import symbol as sym
    fname = f"{prefix}-symbol.json"
    if not os.path.isfile(fname):
        raise MXNetError(f"load_checkpoint: no symbol file {fname}")
    symbol = sym.load(fname)
    arg_params, aux_params = load_params(prefix, epoch)
    return symbol, arg_params, aux_params

# Above this many elements in one parameter, the 'local' store updates on the devices.
_BIG_PARAM = 1024 * 1024 * 16


def _update_on_kvstore_env() -> bool:
    raw = os.getenv("MXNET_UPDATE_ON_KVSTORE", "1")
    try:
        return bool(int(raw))
    except ValueError:
        raise ValueError(f"MXNET_UPDATE_ON_KVSTORE must be an integer (0 or 1), got "
                         f"{raw!r}") from None


def _create_sparse_kvstore(kvstore):
    """Store for row_sparse weights: always one that runs the optimizer.

    Returns
    -------
    (KVStore, True)
    """
    if isinstance(kvstore, kvs.KVStore):
        kv = kvstore
    elif isinstance(kvstore, str):
        kv = kvs.create(kvstore)
    else:
        raise TypeError(f"Cannot create '{kvstore}' KVStore with row_sparse parameters. "
                        "The type must be KVStore or str.")
    if not kv.is_capable(kvs.KVStoreBase.OPTIMIZER):
        raise AssertionError(
            "KVStore with sparse weight requires optimizer support. However, "
            f"{type(kv).__name__} does not support optimizer. Please consider other kvstore "
            "backends (e.g. dist_device) instead.")
    return kv, True


def _create_kvstore(kvstore, num_device, arg_params):
    """Pick the store and whether the optimizer runs in it.

    Parameters
    ----------
    kvstore : KVStoreBase, str or None
        A store, a store type, or None for none.
    num_device : int
        Number of contexts. One context on one machine needs no store.
    arg_params : dict of str to NDArray
        The weights (their sizes decide 'local''s default).

    Returns
    -------
    (KVStoreBase or None, bool)
    """
    update_on_kvstore = _update_on_kvstore_env()
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, kvs.KVStoreBase):
        kv = kvstore
    elif isinstance(kvstore, str):
        if num_device == 1 and "dist" not in kvstore:
            kv = None
        else:
            kv = kvs.create(kvstore)
            if kvstore == "local":
                sizes = [int(np.prod(p.shape)) for p in arg_params.values()]
                if sizes and max(sizes) > _BIG_PARAM:
                    update_on_kvstore = False
    else:
        raise TypeError("kvstore must be KVStore, str or None")
    if kv is None:
        update_on_kvstore = False
    else:
        update_on_kvstore &= bool(kv.is_capable(kvs.KVStoreBase.OPTIMIZER))
    return kv, update_on_kvstore


def _initialize_kvstore(kvstore, param_arrays, arg_params, param_names, update_on_kvstore):
    """Put each parameter into the store: ``init`` (the store keeps the value), or, when the
    store runs the optimizer on dense weights, ``broadcast`` (init, then every device's copy
    pulls it)."""
    for idx, param_on_devs in enumerate(param_arrays):
        name = param_names[idx]
        if not update_on_kvstore or arg_params[name].stype != "default":
            kvstore.init(name, arg_params[name])
        else:
            kvstore.broadcast(name, arg_params[name], out=param_on_devs)


def _update_params_on_kvstore_nccl(param_arrays, grad_arrays, kvstore, param_names):
    """Push gradients and pull weights in groups of ``MXNET_UPDATE_AGGREGATION_SIZE``
    (default 16) parameters per call."""
    valid = [i for i, g in enumerate(grad_arrays) if g[0] is not None]
    batch = int(os.getenv("MXNET_UPDATE_AGGREGATION_SIZE", "16"))
    for start in range(0, len(valid), batch):
        part = valid[start:start + batch]
        kvstore.pushpull([param_names[i] for i in part], [grad_arrays[i] for i in part],
                         out=[param_arrays[i] for i in part], priority=-start)


def _update_params_on_kvstore(param_arrays, grad_arrays, kvstore, param_names):
    """The store runs the optimizer: push each gradient, pull the updated weight.

    MXNet pushes and pulls key by key (its engine overlaps the calls). With neogluon's own
    stores the dense parameters go in one ``pushpull`` of all their keys, so the store's
    optimizer updates them in one multi-tensor pass (a Python call per parameter cost more
    than a small network's step); each key's update is the same either way. Row-sparse
    ones, and every key of a user's own store, are pushed and pulled key by key, as in
    MXNet."""
    from .kvstore.local import KVStore as _OwnStore
    from .ndarray.ndarray import NDArray
    batched = isinstance(kvstore, _OwnStore)
    dense = []
    for index, (arg_list, grad_list) in enumerate(zip(param_arrays, grad_arrays)):
        if grad_list[0] is None:
            continue
        name = param_names[index]
        g0, a0 = grad_list[0], arg_list[0]
        dense_pair = (type(g0) is NDArray or g0.stype == "default") and \
            (type(a0) is NDArray or a0.stype == "default")
        if batched and dense_pair:
            dense.append((name, grad_list, arg_list))
        elif dense_pair:
            kvstore.pushpull(name, grad_list, out=arg_list, priority=-index)
        else:
            kvstore.push(name, grad_list, priority=-index)
            kvstore.pull(name, out=arg_list, priority=-index)
    if dense:
        names, grads, args = zip(*dense)
        kvstore.pushpull(list(names), list(grads), out=list(args))


def _update_params(param_arrays, grad_arrays, updater, num_device, kvstore=None,
                   param_names=None):
    """Update every device's copy with ``updater`` (after summing the gradients over the
    devices through ``kvstore`` when there is one). Index ``i * num_device + k`` is
    parameter ``i`` on device ``k``, so each copy keeps its own optimizer state, as in
    MXNet; each device's parameters go to the updater as one list (a multi-tensor update)."""
    updates = [[] for _ in range(num_device)]
    for i, (arg_list, grad_list) in enumerate(zip(param_arrays, grad_arrays)):
        if grad_list[0] is None:
            continue
        if kvstore:
            name = param_names[i]
            if grad_list[0].stype == "default" and arg_list[0].stype == "default":
                kvstore.pushpull(name, grad_list, priority=-i)
            else:
                kvstore.push(name, grad_list, priority=-i)
                kvstore.pull(name, out=grad_list, priority=-i)
        for k, (w, g) in enumerate(zip(arg_list, grad_list)):
            updates[k].append((i * num_device + k, g, w))
    for dev_updates in updates:
        if dev_updates:
            idx, grads, weights = zip(*dev_updates)
            updater(list(idx), list(grads), list(weights))


def _multiple_callbacks(callbacks, *args, **kwargs):
    """Call ``callbacks`` (None, one callable or a list of them) with the arguments."""
    if isinstance(callbacks, list):
        for cb in callbacks:
            cb(*args, **kwargs)
        return
    if callbacks:
        callbacks(*args, **kwargs)


# ---------------------------------------------------------------------------------------------
# FeedForward: MXNet 1.x's first training API (deprecated there in favour of mx.mod.Module).
#
# It trains through the legacy executor manager (mx.executor_manager.
# DataParallelExecutorManager), as MXNet does, rather than through mx.mod.Module: the two
# loops differ in what old scripts observe. FeedForward's batch-end callbacks count batches
# from 1, an epoch_size shorter than the data carries the iterator over into the next epoch
# instead of resetting it, validation runs through the training executors (so the
# validation batches must have the training batch size) and reuses the training metric,
# the parameters are copied back from the devices only for an epoch-end callback and after
# the last epoch, no 'Train-<metric>' line is logged, and prediction binds a separate
# inference executor on the first context.

class _LogValidationMetrics:
    """The default ``eval_end_callback`` of ``FeedForward.fit``: what
    ``mx.callback.LogValidationMetricsCallback()`` does (looked up when called, because
    mx.callback imports this module)."""

    def __call__(self, param):
        from .callback import LogValidationMetricsCallback
        LogValidationMetricsCallback()(param)

    def __repr__(self):
        return "LogValidationMetricsCallback()"


class _InputTypeError(MXNetError, TypeError):
    """An input of the wrong type (MXNet raises TypeError)."""


def _train_multi_device(symbol, ctx, arg_names, param_names, aux_names,
                        arg_params, aux_params,
                        begin_epoch, end_epoch, epoch_size, optimizer,
                        kvstore, update_on_kvstore,
                        train_data, eval_data=None, eval_metric=None,
                        epoch_end_callback=None, batch_end_callback=None,
                        logger=None, work_load_list=None, monitor=None,
                        eval_end_callback=None,
                        eval_batch_end_callback=None, sym_gen=None):
    """Train ``symbol`` data-parallel over the contexts ``ctx`` (one context works too):
    the loop behind ``FeedForward.fit``.

    Parameters
    ----------
    symbol : Symbol
    ctx : list of Context
    arg_names, param_names, aux_names : list of str
        The symbol's arguments, the trainable ones, its auxiliary states.
    arg_params, aux_params : dict of str to NDArray
        The starting values; they receive the trained values (in place) after the last
        epoch, and after each epoch when there is an ``epoch_end_callback``.
    begin_epoch, end_epoch : int
        Epochs ``begin_epoch`` to ``end_epoch - 1`` are run.
    epoch_size : int or None
        Batches per epoch. None: one pass over ``train_data``. Otherwise exactly this many
        batches, reading on from where the previous epoch stopped and resetting the
        iterator whenever it runs out.
    optimizer : Optimizer
    kvstore : KVStore or None
    update_on_kvstore : bool
        The store runs the optimizer (else an updater per context copy does).
    train_data : DataIter
    eval_data : DataIter, optional
        Scored after every epoch with the training executors (same batch size).
    eval_metric : EvalMetric
        Used for training, then reset and reused for ``eval_data``.
    epoch_end_callback : callable or list, optional
        ``cb(epoch, symbol, arg_params, aux_params)``.
    batch_end_callback : callable or list, optional
        ``cb(BatchEndParam)``; ``nbatch`` counts the batches done, from 1.
    logger : logging.Logger or module, optional
    work_load_list : list of number, optional
    monitor : Monitor, optional
    eval_end_callback, eval_batch_end_callback : callable or list, optional
        After validation (``nbatch``: the number of batches) and after each validation
        batch (``nbatch`` from 0).
    sym_gen : callable, optional
        Bucketing: the symbol of a bucket key.
    """
    if logger is None:
        logger = logging
    manager = DataParallelExecutorManager(symbol=symbol, sym_gen=sym_gen, ctx=ctx,
                                          train_data=train_data, param_names=param_names,
                                          arg_names=arg_names, aux_names=aux_names,
                                          work_load_list=work_load_list, logger=logger)
    if monitor:
        manager.install_monitor(monitor)
    manager.set_params(arg_params, aux_params)
    if update_on_kvstore:
        kvstore.set_optimizer(optimizer)
    else:
        updater = get_updater(optimizer)
    if kvstore:
        _initialize_kvstore(kvstore=kvstore, param_arrays=manager.param_arrays,
                            arg_params=arg_params, param_names=manager.param_names,
                            update_on_kvstore=update_on_kvstore)

    train_data.reset()
    for epoch in range(begin_epoch, end_epoch):
        tic = time.time()
        eval_metric.reset()
        nbatch = 0
        # With an epoch_size, an epoch may end in the middle of the data (the next one
        # reads on) or take more than one pass (resetting in between).
        empty_passes = 0
        while True:
            do_reset = True
            nbatch_before = nbatch
            for data_batch in train_data:
                manager.load_data_batch(data_batch)
                if monitor is not None:
                    monitor.tic()
                manager.forward(is_train=True)
                manager.backward()
                if update_on_kvstore:
                    if "nccl" in kvstore.type:
                        _update_params_on_kvstore_nccl(manager.param_arrays,
                                                       manager.grad_arrays, kvstore,
                                                       manager.param_names)
                    else:
                        _update_params_on_kvstore(manager.param_arrays, manager.grad_arrays,
                                                  kvstore, manager.param_names)
                else:
                    _update_params(manager.param_arrays, manager.grad_arrays,
                                   updater=updater, num_device=len(ctx), kvstore=kvstore,
                                   param_names=manager.param_names)
                if monitor is not None:
                    monitor.toc_print()
                # the outputs are those of this batch's forward, before the update
                manager.update_metric(eval_metric, data_batch.label)
                nbatch += 1
                if batch_end_callback is not None:
                    _multiple_callbacks(batch_end_callback,
                                        BatchEndParam(epoch=epoch, nbatch=nbatch,
                                                      eval_metric=eval_metric,
                                                      locals=locals()))
                if epoch_size is not None and nbatch >= epoch_size:
                    do_reset = False
                    break
            if do_reset:
                logger.info("Epoch[%d] Resetting Data Iterator", epoch)
                train_data.reset()
            if epoch_size is None or nbatch >= epoch_size:
                break
            # (an iterator that stays empty after a reset would loop here for ever)
            empty_passes = empty_passes + 1 if nbatch == nbatch_before else 0
            if empty_passes >= 2:
                raise MXNetError(f"_train_multi_device: train_data yields no batch after a "
                                 f"reset (epoch {epoch}, epoch_size={epoch_size})")
        toc = time.time()
        logger.info("Epoch[%d] Time cost=%.3f", epoch, toc - tic)

        if epoch_end_callback or epoch + 1 == end_epoch:
            manager.copy_to(arg_params, aux_params)
        _multiple_callbacks(epoch_end_callback, epoch, symbol, arg_params, aux_params)

        if eval_data is not None:
            eval_metric.reset()
            eval_data.reset()
            total_num_batch = 0
            for i, eval_batch in enumerate(eval_data):
                manager.load_data_batch(eval_batch)
                manager.forward(is_train=False)
                manager.update_metric(eval_metric, eval_batch.label)
                if eval_batch_end_callback is not None:
                    _multiple_callbacks(eval_batch_end_callback,
                                        BatchEndParam(epoch=epoch, nbatch=i,
                                                      eval_metric=eval_metric,
                                                      locals=locals()))
                total_num_batch += 1
            if eval_end_callback is not None:
                _multiple_callbacks(eval_end_callback,
                                    BatchEndParam(epoch=epoch, nbatch=total_num_batch,
                                                  eval_metric=eval_metric, locals=locals()))
            eval_data.reset()


class FeedForward:
    """A symbol with one data input and one label, trained, scored and run for prediction
    (MXNet 1.x's ``mxnet.model.FeedForward``, deprecated there in favour of
    ``mx.mod.Module``: constructing one warns with a DeprecationWarning).

    Parameters
    ----------
    symbol : Symbol or callable
        The network, or ``sym_gen(bucket_key)`` giving the network of a bucket (the
        training iterator then has a ``default_bucket_key``).
    ctx : Context or list of Context, optional
        Training splits each batch over these (default ``[cpu()]``); prediction and
        scoring run on the first.
    num_epoch : int, optional
        Epochs to train (required by :meth:`fit`).
    epoch_size : int, optional
        Batches per epoch (default: one pass over the data).
    optimizer : str or Optimizer, default 'sgd'
    initializer : Initializer, default Uniform(0.01)
        Fills the parameters ``arg_params``/``aux_params`` do not give (called with the
        parameter's name, so the name's suffix chooses the fill).
    numpy_batch_size : int, default 128
        Batch size used when ``X`` is an array.
    arg_params, aux_params : dict of str to NDArray, optional
        Starting (or trained) values.
    allow_extra_params : bool, default False
        Drop names of ``arg_params``/``aux_params`` the symbol does not have (else they are
        an error when training or predicting).
    begin_epoch : int, default 0
    **kwargs
        Passed to the optimizer when ``optimizer`` is a name (``learning_rate``, ``wd``,
        ``momentum``...).
    """

    def __init__(self, symbol, ctx=None, num_epoch=None, epoch_size=None, optimizer="sgd",
                 initializer=Uniform(0.01), numpy_batch_size=128, arg_params=None,
                 aux_params=None, allow_extra_params=False, begin_epoch=0, **kwargs):
        warnings.warn("\033[91mmxnet.model.FeedForward has been deprecated. Please use "
                      "mxnet.mod.Module instead.\033[0m", DeprecationWarning, stacklevel=2)
        from .symbol import Symbol
        if isinstance(symbol, Symbol):
            self.symbol = symbol
            self.sym_gen = None
        elif callable(symbol):
            self.symbol = None
            self.sym_gen = symbol
        else:
            raise _InputTypeError(f"FeedForward: symbol must be a Symbol or a callable "
                                  f"sym_gen(bucket_key), got {type(symbol).__name__}")
        self.arg_params = arg_params
        self.aux_params = aux_params
        self.allow_extra_params = allow_extra_params
        self.argument_checked = False
        if self.sym_gen is None:
            self._check_arguments()
        if ctx is None:
            ctx = [cpu()]
        elif isinstance(ctx, Context):
            ctx = [ctx]
        self.ctx = ctx
        self.num_epoch = num_epoch
        self.epoch_size = epoch_size
        self.kwargs = kwargs.copy()
        self.optimizer = optimizer
        self.initializer = initializer
        self.numpy_batch_size = numpy_batch_size
        # the inference executor of predict/score, kept while the input shapes stay
        self._pred_exec = None
        self.begin_epoch = begin_epoch

    def _check_arguments(self):
        """Check the symbol's names (no duplicates) once; with ``allow_extra_params`` drop
        the given values the symbol does not take."""
        if self.argument_checked:
            return
        if self.symbol is None:
            raise MXNetError("FeedForward: no symbol yet (a sym_gen model gets one in fit)")
        self.argument_checked = True
        _check_arguments(self.symbol)
        if self.allow_extra_params:
            if self.arg_params:
                names = set(self.symbol.list_arguments())
                self.arg_params = {k: v for k, v in self.arg_params.items() if k in names}
            if self.aux_params:
                names = set(self.symbol.list_auxiliary_states())
                self.aux_params = {k: v for k, v in self.aux_params.items() if k in names}

    def _refuse_unknown_params(self, what):
        """Values for names the symbol lacks are an error unless ``allow_extra_params``
        (usually a misspelt name whose value would otherwise be silently unused)."""
        if self.allow_extra_params:
            return
        for given, names, kind in (
                (self.arg_params, self.symbol.list_arguments(), "arguments"),
                (self.aux_params, self.symbol.list_auxiliary_states(), "auxiliary states")):
            unknown = sorted(set(given or {}) - set(names))
            if unknown:
                raise MXNetValueError(
                    f"FeedForward.{what}: {'arg' if kind == 'arguments' else 'aux'}_params "
                    f"has {', '.join(repr(n) for n in unknown)}, which the symbol does not "
                    f"have (its {kind}: {', '.join(names) or 'none'}); pass "
                    "allow_extra_params=True to ignore such names")

    @staticmethod
    def _is_data_arg(name):
        """Whether an argument name is that of an input (ends with 'data' or 'label')."""
        return name.endswith("data") or name.endswith("label")

    def _init_params(self, inputs, overwrite=False):
        """Fresh arrays for every parameter and auxiliary state (shapes and dtypes inferred
        from the inputs), filled from the given values or, where none is given (or with
        ``overwrite``), by the initializer. Returns ``(arg_names, param_names, aux_names)``.
        """
        inputs = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in inputs]
        self._refuse_unknown_params("fit")
        input_shapes = {item.name: item.shape for item in inputs}
        arg_shapes, _, aux_shapes = self.symbol.infer_shape(**input_shapes)
        if arg_shapes is None:
            raise MXNetValueError(f"FeedForward.fit: the input shapes {input_shapes} do not "
                                  "determine every parameter's shape")
        arg_dtypes, _, aux_dtypes = self.symbol.infer_type(
            **{item.name: item.dtype for item in inputs})
        if arg_dtypes is None:
            raise MXNetValueError("FeedForward.fit: the input types do not determine every "
                                  "parameter's type")
        arg_names = self.symbol.list_arguments()
        param_names = [name for name in arg_names if name not in input_shapes]
        aux_names = self.symbol.list_auxiliary_states()
        arg_params = {name: nd.zeros(shape=s, dtype=t)
                      for name, s, t in zip(arg_names, arg_shapes, arg_dtypes)
                      if name in param_names}
        aux_params = {name: nd.zeros(shape=s, dtype=t)
                      for name, s, t in zip(aux_names, aux_shapes, aux_dtypes)}
        for fresh, given in ((arg_params, self.arg_params), (aux_params, self.aux_params)):
            for name, arr in fresh.items():
                if given and name in given and not overwrite:
                    _fill_param(arr, given[name], name)
                else:
                    self.initializer(name, arr)
        self.arg_params = arg_params
        self.aux_params = aux_params
        return arg_names, list(param_names), aux_names

    def __getstate__(self):
        state = self.__dict__.copy()
        # executors are not pickled; prediction binds a new one
        state["_pred_exec"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    def _init_predictor(self, input_shapes, type_dict=None):
        """Bind (or keep) the inference executor for these input shapes, on the first
        context, and give it the current parameter values."""
        if self.symbol is None:
            raise MXNetError("FeedForward: no symbol to predict with (a sym_gen model gets "
                             "one when it is fitted)")
        if self.arg_params is None:
            raise MXNetError("FeedForward: the model has no parameters; fit it or pass "
                             "arg_params (and aux_params)")
        self._refuse_unknown_params("predict")
        shapes = {name: arr.shape for name, arr in self.arg_params.items()}
        shapes.update(dict(input_shapes))
        if self._pred_exec is not None:
            arg_shapes, _, _ = self.symbol.infer_shape(**shapes)
            if arg_shapes is None:
                raise MXNetValueError(f"FeedForward: incomplete input shapes {shapes}")
            if [tuple(s) for s in arg_shapes] != \
                    [tuple(a.shape) for a in self._pred_exec.arg_arrays]:
                self._pred_exec = None
        if self._pred_exec is None:
            self._pred_exec = self.symbol.simple_bind(self.ctx[0], grad_req="null",
                                                      type_dict=type_dict, **shapes)
            _check_arguments(self.symbol)
        # Copied on every call, not only when binding (MXNet kept the values of the first
        # bind, so predicting after more training, or after changing arg_params, used
        # stale parameters).
        self._pred_exec.copy_params_from(self.arg_params, self.aux_params)

    def _init_iter(self, X, y, is_train):
        """A DataIter over ``X`` (and ``y``): ``X`` itself, or an NDArrayIter over arrays
        (shuffled, rolling the last incomplete batch over, for training)."""
        if isinstance(X, (np.ndarray, nd.NDArray)):
            if y is None:
                if is_train:
                    raise MXNetValueError("y must be specified when X is numpy.ndarray")
                y = np.zeros(X.shape[0])
            if not isinstance(y, (np.ndarray, nd.NDArray)):
                raise _InputTypeError(f"y must be ndarray when X is numpy.ndarray, got "
                                      f"{type(y).__name__}")
            if X.shape[0] != y.shape[0]:
                raise MXNetValueError(f"The numbers of data points and labels not equal: X "
                                      f"has {X.shape[0]} examples, y has {y.shape[0]}")
            if y.ndim == 2 and y.shape[1] == 1:
                y = y.reshape((y.shape[0],))
            if y.ndim != 1:
                raise MXNetValueError(f"Label must be 1D or 2D (with 2nd dimension being 1), "
                                      f"got y of shape {tuple(y.shape)}")
            batch_size = min(X.shape[0], self.numpy_batch_size)
            if is_train:
                return io.NDArrayIter(X, y, batch_size, shuffle=True,
                                      last_batch_handle="roll_over")
            return io.NDArrayIter(X, y, batch_size, shuffle=False)
        if not isinstance(X, io.DataIter):
            raise _InputTypeError(f"X must be DataIter, NDArray or numpy.ndarray, got "
                                  f"{type(X).__name__}")
        return X

    def _init_eval_iter(self, eval_data):
        """A DataIter for ``eval_data``: a DataIter, or a ``(data, label)`` pair."""
        if eval_data is None:
            return None
        if isinstance(eval_data, (tuple, list)) and len(eval_data) == 2:
            data, label = eval_data
            if data is None:
                raise MXNetValueError("Eval data is NONE: eval_data=(None, ...)")
            if label is None and isinstance(data, io.DataIter):
                return data
            data = np.array(data) if isinstance(data, list) else data
            label = np.array(label) if isinstance(label, list) else label
            return self._init_iter(data, label, is_train=True)
        if not isinstance(eval_data, io.DataIter):
            raise _InputTypeError("Eval data must be DataIter, or NDArray/numpy.ndarray/list "
                                  f"pair (i.e. tuple/list of length 2), got "
                                  f"{type(eval_data).__name__}")
        return eval_data

    def _bind_for(self, X):
        data_shapes = X.provide_data
        data_names = [x[0] for x in data_shapes]
        type_dict = {name: arr.dtype for name, arr in (self.arg_params or {}).items()}
        type_dict.update(_provided_types(data_shapes))
        self._init_predictor(data_shapes, type_dict)
        return [self._pred_exec.arg_dict[name] for name in data_names]

    def predict(self, X, num_batch=None, return_data=False, reset=True):
        """The outputs for ``X``, on the first context, padding removed.

        Parameters
        ----------
        X : DataIter, NDArray or numpy.ndarray
        num_batch : int, optional
            Stop after this many batches (default: all).
        return_data : bool, default False
            Also return the data and labels the outputs are for.
        reset : bool, default True
            Reset the iterator first.

        Returns
        -------
        numpy.ndarray or list of numpy.ndarray
            The output (a list when the symbol has several); with ``return_data``,
            ``(outputs, data, label)``, each likewise an array or a list.
        """
        X = self._init_iter(X, None, is_train=False)
        if reset:
            X.reset()
        data_arrays = self._bind_for(X)
        batch_size = X.batch_size
        output_list = [[] for _ in self._pred_exec.outputs]
        if return_data:
            data_list = [[] for _ in X.provide_data]
            label_list = [[] for _ in X.provide_label]
        i = 0
        for batch in X:
            _load_data(batch, data_arrays)
            self._pred_exec.forward(is_train=False)
            real_size = batch_size - (batch.pad or 0)
            for o_list, o_nd in zip(output_list, self._pred_exec.outputs):
                o_list.append(o_nd[0:real_size].asnumpy())
            if return_data:
                for j, x in enumerate(batch.data):
                    data_list[j].append(x[0:real_size].asnumpy())
                for j, x in enumerate(batch.label):
                    label_list[j].append(x[0:real_size].asnumpy())
            i += 1
            if num_batch is not None and i == num_batch:
                break
        if not output_list[0]:
            raise MXNetValueError("FeedForward.predict: the data iterator yielded no batch "
                                  "(reset it, or pass reset=True)")
        outputs = _single([np.concatenate(x) for x in output_list])
        if return_data:
            data = _single([np.concatenate(x) for x in data_list])
            label = _single([np.concatenate(x) for x in label_list])
            return outputs, data, label
        return outputs

    def score(self, X, eval_metric="acc", num_batch=None, batch_end_callback=None,
              reset=True):
        """Evaluate ``eval_metric`` over ``X`` on the first context.

        Returns
        -------
        float or list of float
            The metric's value (a list for a composite metric). Padded examples of the last
            batch are counted, as in MXNet.
        """
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        X = self._init_iter(X, None, is_train=False)
        if reset:
            X.reset()
        data_arrays = self._bind_for(X)
        for i, batch in enumerate(X):
            if num_batch is not None and i == num_batch:
                break
            _load_data(batch, data_arrays)
            self._pred_exec.forward(is_train=False)
            eval_metric.update(batch.label, self._pred_exec.outputs)
            if batch_end_callback is not None:
                _multiple_callbacks(batch_end_callback,
                                    BatchEndParam(epoch=0, nbatch=i, eval_metric=eval_metric,
                                                  locals=locals()))
        return eval_metric.get()[1]

    def fit(self, X, y=None, eval_data=None, eval_metric="acc", epoch_end_callback=None,
            batch_end_callback=None, kvstore="local", logger=None, work_load_list=None,
            monitor=None, eval_end_callback=_LogValidationMetrics(),
            eval_batch_end_callback=None):
        """Train for epochs ``begin_epoch`` to ``num_epoch - 1``.

        Parameters
        ----------
        X : DataIter, NDArray or numpy.ndarray
            Training data; an array needs ``y`` and is iterated in shuffled batches of
            ``numpy_batch_size``.
        y : NDArray or numpy.ndarray, optional
            Labels, 1-D or (n, 1), as many as ``X`` has examples.
        eval_data : DataIter or (data, label) pair, optional
            Scored after each epoch (logged as ``Epoch[i] Validation-<metric>=...`` by
            the default ``eval_end_callback``); its batches must have the training batch
            size.
        eval_metric : str, EvalMetric or callable, default 'acc'
        epoch_end_callback : callable or list, optional
            ``cb(epoch, symbol, arg_params, aux_params)``.
        batch_end_callback : callable or list, optional
            ``cb(BatchEndParam)``, ``nbatch`` counting from 1.
        kvstore : str or KVStore, default 'local'
        logger : logging.Logger, optional
        work_load_list : list of number, optional
            Relative batch share of each context.
        monitor : Monitor, optional
        eval_end_callback, eval_batch_end_callback : callable or list, optional
        """
        if self.num_epoch is None:
            raise MXNetValueError("FeedForward.fit: num_epoch is not set; pass "
                                  "num_epoch=<int> to FeedForward(...) or FeedForward.create")
        data = self._init_iter(X, y, is_train=True)
        eval_data = self._init_eval_iter(eval_data)
        if self.sym_gen:
            self.symbol = self.sym_gen(data.default_bucket_key)
            self._check_arguments()
        self.kwargs["sym"] = self.symbol
        arg_names, param_names, aux_names = self._init_params(
            list(data.provide_data) + list(data.provide_label))
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)

        kvstore, update_on_kvstore = _create_kvstore(kvstore, len(self.ctx), self.arg_params)
        param_idx2name = {}
        if update_on_kvstore:
            param_idx2name.update(enumerate(param_names))
        else:
            for i, name in enumerate(param_names):
                for k in range(len(self.ctx)):
                    param_idx2name[i * len(self.ctx) + k] = name
        self.kwargs["param_idx2name"] = param_idx2name

        if isinstance(self.optimizer, str):
            batch_size = data.batch_size
            if kvstore and "dist" in kvstore.type and "_async" not in kvstore.type:
                batch_size *= kvstore.num_workers
            optimizer = opt.create(self.optimizer, rescale_grad=1.0 / batch_size,
                                   **self.kwargs)
        elif isinstance(self.optimizer, opt.Optimizer):
            optimizer = self.optimizer
            if not optimizer.idx2name:
                optimizer.idx2name = param_idx2name.copy()
        else:
            raise _InputTypeError(f"FeedForward: optimizer must be a name or an Optimizer, "
                                  f"got {type(self.optimizer).__name__}")
        # the inference executor is bound anew (with the trained values) when next needed
        self._pred_exec = None
        _train_multi_device(self.symbol, self.ctx, arg_names, param_names, aux_names,
                            self.arg_params, self.aux_params,
                            begin_epoch=self.begin_epoch, end_epoch=self.num_epoch,
                            epoch_size=self.epoch_size, optimizer=optimizer,
                            train_data=data, eval_data=eval_data, eval_metric=eval_metric,
                            epoch_end_callback=epoch_end_callback,
                            batch_end_callback=batch_end_callback, kvstore=kvstore,
                            update_on_kvstore=update_on_kvstore, logger=logger,
                            work_load_list=work_load_list, monitor=monitor,
                            eval_end_callback=eval_end_callback,
                            eval_batch_end_callback=eval_batch_end_callback,
                            sym_gen=self.sym_gen)

    def save(self, prefix, epoch=None, remove_amp_cast=True):
        """Write ``prefix-symbol.json`` and ``prefix-%04d.params`` (MXNet's files, which
        MXNet's ``FeedForward.load`` and ``mx.model.load_checkpoint`` read).

        Parameters
        ----------
        prefix : str
        epoch : int, optional
            Default ``num_epoch``.
        remove_amp_cast : bool, default True
        """
        if epoch is None:
            epoch = self.num_epoch
        if epoch is None:
            raise MXNetValueError("FeedForward.save: no epoch given and num_epoch is not set")
        if self.symbol is None or self.arg_params is None:
            raise MXNetError("FeedForward.save: the model has no symbol or no parameters "
                             "yet; fit it first")
        save_checkpoint(prefix, epoch, self.symbol, self.arg_params, self.aux_params or {},
                        remove_amp_cast=remove_amp_cast)

    @staticmethod
    def load(prefix, epoch, ctx=None, **kwargs):
        """A FeedForward from ``prefix-symbol.json`` and ``prefix-%04d.params`` (MXNet's or
        neogluon's), starting at ``begin_epoch=epoch``; ``kwargs`` go to the constructor
        (``num_epoch``, ``optimizer``, ``numpy_batch_size``...)."""
        symbol, arg_params, aux_params = load_checkpoint(prefix, epoch)
        return FeedForward(symbol, ctx=ctx, arg_params=arg_params, aux_params=aux_params,
                           begin_epoch=epoch, **kwargs)

    @staticmethod
    def create(symbol, X, y=None, ctx=None, num_epoch=None, epoch_size=None, optimizer="sgd",
               initializer=Uniform(0.01), eval_data=None, eval_metric="acc",
               epoch_end_callback=None, batch_end_callback=None, kvstore="local", logger=None,
               work_load_list=None, eval_end_callback=_LogValidationMetrics(),
               eval_batch_end_callback=None, **kwargs):
        """Construct a FeedForward and fit it on ``X`` (see the constructor and
        :meth:`fit`); ``kwargs`` go to the constructor (optimizer settings). Returns the
        trained model."""
        model = FeedForward(symbol, ctx=ctx, num_epoch=num_epoch, epoch_size=epoch_size,
                            optimizer=optimizer, initializer=initializer, **kwargs)
        model.fit(X, y, eval_data=eval_data, eval_metric=eval_metric,
                  epoch_end_callback=epoch_end_callback, batch_end_callback=batch_end_callback,
                  kvstore=kvstore, logger=logger, work_load_list=work_load_list,
                  eval_end_callback=eval_end_callback,
                  eval_batch_end_callback=eval_batch_end_callback)
        return model


def _single(arrays):
    return arrays[0] if len(arrays) == 1 else arrays


def _fill_param(dst, src, name):
    if tuple(src.shape) != tuple(dst.shape):
        raise MXNetValueError(f"FeedForward: the given value of {name!r} has shape "
                              f"{tuple(src.shape)} but the symbol needs {tuple(dst.shape)}")
    dst[:] = src if isinstance(src, nd.NDArray) else np.asarray(src)


# Names MXNet 1.9.1's module of the same path exposes (programs import them from here).
from . import symbol as sym  # noqa: E402,F401


def __dir__():
    # the names __getattr__ supplies on first use are in MXNet's dir(mxnet.model) too
    return sorted(set(globals()) | {"LogValidationMetricsCallback", "SKLEARN_INSTALLED"})


def __getattr__(name):
    # (mx.callback imports this module: its class is looked up on first use)
    if name == "LogValidationMetricsCallback":
        from .callback import LogValidationMetricsCallback
        return LogValidationMetricsCallback
    if name == "SKLEARN_INSTALLED":
        # MXNet's model.py records whether scikit-learn is there (its old FeedForward
        # sklearn mixin); looked up on first use, as importing it takes 1-2 s
        import importlib.util
        globals()[name] = importlib.util.find_spec("sklearn") is not None
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}", name=name)


