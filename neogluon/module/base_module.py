"""``BaseModule``: the interface every module implements, and the training, scoring and
prediction loops written once on top of it (``fit``, ``score``, ``predict``,
``iter_predict``), as MXNet 1.x's ``mxnet.module.base_module``."""
from __future__ import annotations

import logging
import time
import warnings

import numpy as np

from .. import metric
from .. import ndarray
from ..base import MXNetError, MXNetValueError, _as_list
from ..context import cpu
from ..initializer import Uniform
from ..io import DataBatch, DataDesc, DataIter
from ..model import BatchEndParam, _split_params

__all__ = ["BaseModule"]


class ModuleStateError(MXNetError, AssertionError):
    """A module method called before what it needs (bind, init_params, init_optimizer).
    MXNet asserts these; the error is both an ``MXNetError`` and an ``AssertionError``."""


def _require(ok, what, needs):
    if not ok:
        raise ModuleStateError(f"{what}: {needs}")


_PARAM_SUFFIXES = ("_weight", "_bias", "_gamma", "_beta")


def _check_input_names(symbol, names, typename, throw):
    """Each of ``names`` must be an argument of ``symbol`` (raise or warn, as MXNet)."""
    args = symbol.list_arguments()
    for name in names:
        if name in args:
            continue
        candidates = [a for a in args if not a.endswith(_PARAM_SUFFIXES)]
        msg = (f"You created Module with Module(..., {typename}_names={list(names)}) but input "
               f"with name '{name}' is not found in symbol.list_arguments(). Did you mean one "
               "of:\n\t" + "\n\t".join(candidates))
        if throw:
            raise MXNetValueError(msg)
        warnings.warn(msg, stacklevel=3)


def _check_names_match(data_names, data_shapes, name, throw):
    actual = [x[0] for x in data_shapes]
    if sorted(data_names) != sorted(actual):
        msg = (f"Data provided by {name}_shapes don't match names specified by {name}_names "
               f"({[tuple(x) for x in data_shapes]} vs. {list(data_names)})")
        if throw:
            raise MXNetValueError(msg)
        warnings.warn(msg, stacklevel=3)


def _as_desc(x, what):
    if isinstance(x, DataDesc):
        return x
    if not isinstance(x, (list, tuple)) or len(x) < 2 or not isinstance(x[0], str):
        raise TypeError(f"{what}: each entry must be a DataDesc or a (name, shape) pair, got "
                        f"{x!r}")
    shape = x[1]
    if not isinstance(shape, (list, tuple)) or \
            not all(isinstance(d, (int, np.integer)) for d in shape):
        raise TypeError(f"{what}: the shape of {x[0]!r} must be a tuple of int, got "
                        f"{type(shape).__name__} {shape!r}")
    return DataDesc(x[0], tuple(int(d) for d in shape), *x[2:])


def _parse_data_desc(data_names, label_names, data_shapes, label_shapes):
    """The given shapes as DataDesc lists, checked against the module's names."""
    data_shapes = [_as_desc(x, "data_shapes") for x in data_shapes]
    _check_names_match(data_names, data_shapes, "data", True)
    if label_shapes is not None:
        label_shapes = [_as_desc(x, "label_shapes") for x in label_shapes]
        _check_names_match(label_names, label_shapes, "label", False)
    else:
        _check_names_match(label_names, [], "label", False)
    return data_shapes, label_shapes


def _call_all(callbacks, *args):
    for cb in _as_list(callbacks):
        cb(*args)


class BaseModule:
    """A computation unit that binds to data shapes, holds parameters, and runs forward,
    backward and update; the loops (``fit``, ``score``, ``predict``) use only that interface.

    States, as MXNet: ``binded``, ``for_training``, ``inputs_need_grad``,
    ``params_initialized``, ``optimizer_initialized``.

    Parameters
    ----------
    logger : logging.Logger or module, default logging
    """

    def __init__(self, logger=logging):
        self.logger = logger
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol = None
        self._total_exec_bytes = 0

    # ---------------------------------------------------------------- high level
    def forward_backward(self, data_batch):
        """``forward(data_batch, is_train=True)`` then ``backward()``."""
        self.forward(data_batch, is_train=True)
        self.backward()

    def score(self, eval_data, eval_metric, num_batch=None, batch_end_callback=None,
              score_end_callback=None, reset=True, epoch=0, sparse_row_id_fn=None):
        """Run over ``eval_data`` in inference mode and evaluate ``eval_metric``.

        Returns
        -------
        list of (str, float)
            The metric's name-value pairs.
        """
        _require(self.binded and self.params_initialized, "score",
                 "bind the module and initialise its parameters first")
        if reset:
            eval_data.reset()
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        eval_metric.reset()
        actual_num_batch = 0
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            if isinstance(eval_batch, list):
                self.update_metric(eval_metric, [eb.label for eb in eval_batch],
                                   pre_sliced=True)
            else:
                self.update_metric(eval_metric, eval_batch.label)
            if batch_end_callback is not None:
                params = BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                                       locals=locals())
                _call_all(batch_end_callback, params)
            actual_num_batch += 1
        if score_end_callback:
            params = BatchEndParam(epoch=epoch, nbatch=actual_num_batch,
                                   eval_metric=eval_metric, locals=locals())
            _call_all(score_end_callback, params)
        return eval_metric.get_name_value()

    def iter_predict(self, eval_data, num_batch=None, reset=True, sparse_row_id_fn=None):
        """Yield ``(outputs, nbatch, batch)`` for each batch (padding cut off)."""
        _require(self.binded and self.params_initialized, "iter_predict",
                 "bind the module and initialise its parameters first")
        if reset:
            eval_data.reset()
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            pad = eval_batch.pad or 0
            outputs = [out[0:out.shape[0] - pad] for out in self.get_outputs()]
            yield outputs, nbatch, eval_batch

    def predict(self, eval_data, num_batch=None, merge_batches=True, reset=True,
                always_output_list=False, sparse_row_id_fn=None):
        """The outputs over ``eval_data`` (a DataIter, or one array for a single batch).

        With ``merge_batches`` the batches' outputs are concatenated (padding removed); a
        single output is returned bare unless ``always_output_list``.
        """
        _require(self.binded and self.params_initialized, "predict",
                 "bind the module and initialise its parameters first")
        if isinstance(eval_data, (ndarray.NDArray, np.ndarray)):
            if isinstance(eval_data, np.ndarray):
                eval_data = ndarray.array(eval_data)
            self.forward(DataBatch([eval_data]))
            return self.get_outputs()[0]
        if not isinstance(eval_data, DataIter):
            raise ValueError("eval_data must be of type NDArray or DataIter")
        if reset:
            eval_data.reset()
        output_list = []
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            pad = eval_batch.pad or 0
            output_list.append([out[0:out.shape[0] - pad].copy()
                                for out in self.get_outputs()])
        if not output_list:
            return output_list
        if merge_batches:
            num_outputs = len(output_list[0])
            for out in output_list:
                if len(out) != num_outputs:
                    raise MXNetError("Cannot merge batches, as num of outputs is not the same "
                                     "in mini-batches. Maybe bucketing is used?")
            merged = [ndarray.concatenate([out[i] for out in output_list])
                      for i in range(num_outputs)]
            if num_outputs == 1 and not always_output_list:
                return merged[0]
            return merged
        return output_list

    def fit(self, train_data, eval_data=None, eval_metric="acc", epoch_end_callback=None,
            batch_end_callback=None, kvstore="local", optimizer="sgd",
            optimizer_params=(("learning_rate", 0.01),), eval_end_callback=None,
            eval_batch_end_callback=None, initializer=Uniform(0.01), arg_params=None,
            aux_params=None, allow_missing=False, force_rebind=False, force_init=False,
            begin_epoch=0, num_epoch=None, validation_metric=None, monitor=None,
            sparse_row_id_fn=None):
        """Train on ``train_data`` for ``num_epoch`` epochs (bind, init_params and
        init_optimizer first), logging ``Epoch[i] Train-<metric>=...`` and ``Time cost``,
        calling the batch-end and epoch-end callbacks, and scoring ``eval_data`` after each
        epoch, as MXNet's ``BaseModule.fit``.

        Parameters
        ----------
        train_data : DataIter
        eval_data : DataIter, optional
        eval_metric : str or EvalMetric, default 'acc'
        epoch_end_callback : callable or list, optional
            Called as ``cb(epoch, symbol, arg_params, aux_params)``.
        batch_end_callback : callable or list, optional
            Called with a ``BatchEndParam``.
        kvstore : str or KVStore, default 'local'
        optimizer : str or Optimizer, default 'sgd'
        optimizer_params : dict or sequence of pairs
        initializer : Initializer, default Uniform(0.01)
        arg_params, aux_params : dict of str to NDArray, optional
            Values that take precedence over the initializer.
        begin_epoch : int
        num_epoch : int
            Required.
        validation_metric : str or EvalMetric, optional
            For ``eval_data`` (default: ``eval_metric``).
        monitor : Monitor, optional
        sparse_row_id_fn : callable, optional
        """
        if num_epoch is None:
            raise MXNetValueError("fit: please specify number of epochs (num_epoch)")
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                            optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)

        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            eval_metric.reset()
            nbatch = 0
            self._fit_epoch_begin(epoch, train_data)
            data_iter = iter(train_data)
            end_of_batch = False
            try:
                next_data_batch = next(data_iter)
            except StopIteration:
                raise MXNetError(f"fit: train_data yielded no batch in epoch {epoch}") from None
            eval_name_vals = []
            while not end_of_batch:
                data_batch = next_data_batch
                if monitor is not None:
                    monitor.tic()
                self.forward_backward(data_batch)
                self.update()
                if isinstance(data_batch, list):
                    self.update_metric(eval_metric, [db.label for db in data_batch],
                                       pre_sliced=True)
                else:
                    self.update_metric(eval_metric, data_batch.label)
                try:
                    # the next batch is prepared while this one's work may still run
                    next_data_batch = next(data_iter)
                    self.prepare(next_data_batch, sparse_row_id_fn=sparse_row_id_fn)
                except StopIteration:
                    end_of_batch = True
                if monitor is not None:
                    monitor.toc_print()
                if end_of_batch:
                    eval_name_vals = self._fit_train_metric(eval_metric)
                if batch_end_callback is not None:
                    params = BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                                           locals=locals())
                    _call_all(batch_end_callback, params)
                nbatch += 1
            for name, val in eval_name_vals:
                self.logger.info("Epoch[%d] Train-%s=%f", epoch, name, val)
            toc = time.time()
            self.logger.info("Epoch[%d] Time cost=%.3f", epoch, toc - tic)

            # the parameters from the devices, and back (the kvstore/devices agree again)
            arg_params, aux_params = self.get_params()
            self.set_params(arg_params, aux_params)
            if epoch_end_callback is not None:
                _call_all(epoch_end_callback, epoch, self.symbol, arg_params, aux_params)
            if eval_data is not None:
                res = self.score(eval_data, validation_metric,
                                 score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, val in res:
                    self.logger.info("Epoch[%d] Validation-%s=%f", epoch, name, val)
            train_data.reset()

    def _fit_epoch_begin(self, epoch, train_data):
        """What ``fit`` does before each epoch's batches (SVRG takes its snapshot here)."""

    def _fit_train_metric(self, eval_metric):
        """The ``Train-`` values ``fit`` logs at the end of an epoch."""
        return eval_metric.get_global_name_value()

    # ---------------------------------------------------------------- symbol and params
    @property
    def data_names(self):
        """Names of the data inputs."""
        raise NotImplementedError()

    @property
    def output_names(self):
        """Names of the outputs."""
        raise NotImplementedError()

    @property
    def data_shapes(self):
        """DataDesc of the data inputs."""
        raise NotImplementedError()

    @property
    def label_shapes(self):
        """DataDesc of the labels (None when there are none)."""
        raise NotImplementedError()

    @property
    def output_shapes(self):
        """(name, shape) of each output."""
        raise NotImplementedError()

    def get_params(self):
        """``(arg_params, aux_params)``: dicts of name to NDArray (on the CPU)."""
        raise NotImplementedError()

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialise the parameters and auxiliary states."""
        raise NotImplementedError()

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Assign parameter and auxiliary-state values (``init_params`` without an
        initializer)."""
        self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init,
                         allow_extra=allow_extra)

    def save_params(self, fname):
        """Write the parameters to ``fname`` (``arg:``/``aux:`` keys, MXNet's format)."""
        arg_params, aux_params = self.get_params()
        save_dict = {f"arg:{k}": v.as_in_context(cpu()) for k, v in arg_params.items()}
        save_dict.update({f"aux:{k}": v.as_in_context(cpu()) for k, v in aux_params.items()})
        ndarray.save(fname, save_dict)

    def load_params(self, fname):
        """Read parameters written by :meth:`save_params` (MXNet's or neogluon's)."""
        arg_params, aux_params = _split_params(ndarray.load(fname), fname)
        self.set_params(arg_params, aux_params)

    def get_states(self, merge_multi_context=True):
        """The states (RNN state inputs); none for a module without state names."""
        _require(self.binded and self.params_initialized, "get_states",
                 "bind the module and initialise its parameters first")
        if merge_multi_context:
            raise ModuleStateError("get_states: this module has no states to merge")
        return []

    def set_states(self, states=None, value=None):
        """Set the states; a module without states accepts nothing."""
        _require(self.binded and self.params_initialized, "set_states",
                 "bind the module and initialise its parameters first")
        if states or value:
            raise ModuleStateError("set_states: this module has no states")

    def install_monitor(self, mon):
        """Install a Monitor on every executor."""
        raise NotImplementedError()

    # ---------------------------------------------------------------- computation
    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Get ready for ``data_batch`` (switch bucket, pull row-sparse rows)."""
        if sparse_row_id_fn is not None:
            warnings.warn(UserWarning("sparse_row_id_fn is not invoked for BaseModule."))

    def forward(self, data_batch, is_train=None):
        """Compute the outputs for ``data_batch``."""
        raise NotImplementedError()

    def backward(self, out_grads=None):
        """Compute the gradients (``out_grads`` for outputs that are not losses)."""
        raise NotImplementedError()

    def get_outputs(self, merge_multi_context=True):
        """The outputs of the last forward."""
        raise NotImplementedError()

    def get_input_grads(self, merge_multi_context=True):
        """The gradients of the data inputs (bind with ``inputs_need_grad=True``)."""
        raise NotImplementedError()

    def update(self):
        """Apply the optimizer to the parameters."""
        raise NotImplementedError()

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Accumulate ``eval_metric`` over the last outputs."""
        raise NotImplementedError()

    # ---------------------------------------------------------------- set-up
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Allocate executors for these shapes."""
        raise NotImplementedError()

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """Set up the optimizer (and KVStore)."""
        raise NotImplementedError()

    @property
    def symbol(self):
        """The module's Symbol."""
        return self._symbol
