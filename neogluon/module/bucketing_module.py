"""``BucketingModule``: one :class:`Module` per bucket key (an RNN unrolled to each sequence
length, say), all sharing the default bucket's parameters, gradients, optimizer and memory,
as MXNet 1.x's ``mxnet.module.BucketingModule``.

``sym_gen(bucket_key)`` returns ``(symbol, data_names, label_names)``; it runs inside a fresh
``NameManager`` each time, so automatically named nodes (``embedding0``...) get the same names
in every bucket and the buckets' parameters line up by name.
"""
from __future__ import annotations

import logging
import numbers
import warnings

import numpy as np

from .. import context as ctx
from .. import ndarray as nd
from ..base import MXNetError, MXNetValueError
from ..initializer import Uniform
from ..io import DataDesc
from ..model import load_params
from ..name import NameManager
from .base_module import BaseModule, ModuleStateError, _check_input_names, _require
from .module import Module

__all__ = ["BucketingModule"]


class _BucketingAssertion(MXNetValueError, AssertionError):
    """A required argument missing (MXNet asserts these; the error is both a ValueError and
    an AssertionError)."""


def _names(value, what, bucket_key):
    """``data_names``/``label_names`` from sym_gen as a list of str (None is none)."""
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, (list, tuple)) or \
            not all(isinstance(n, str) for n in value):
        raise MXNetValueError(f"BucketingModule: sym_gen({bucket_key!r}) must return "
                              f"(symbol, data_names, label_names) with {what} a list or tuple "
                              f"of str, got {value!r}")
    return list(value)


class BucketingModule(BaseModule):
    """A module for inputs of varying length: one Module per bucket key, all bound with the
    default bucket's module as ``shared_module``.

    Parameters
    ----------
    sym_gen : callable
        ``sym_gen(bucket_key)`` returns ``(symbol, data_names, label_names)``.
    default_bucket_key : hashable
        The key of the default bucket, bound by :meth:`bind`. It should be the largest bucket:
        the other buckets borrow its memory.
    logger : logging.Logger or module, default logging
    context : Context or list of Context, default cpu()
    work_load_list : list of number, optional
    fixed_param_names : list of str, optional
        Parameters that are not updated.
    state_names : list of str, optional
        Inputs set with ``set_states`` rather than given by the data iterator.
    group2ctxs : dict or list of dict, optional
        ``ctx_group`` to context, for model parallelism.
    compression_params : dict, optional
        Gradient compression for the KVStore.
    """

    def __init__(self, sym_gen, default_bucket_key=None, logger=logging, context=ctx.cpu(),
                 work_load_list=None, fixed_param_names=None, state_names=None,
                 group2ctxs=None, compression_params=None):
        super().__init__(logger=logger)
        if default_bucket_key is None:
            raise _BucketingAssertion("BucketingModule: default_bucket_key is required (the key "
                                      "of the bucket bind() sets up, usually the largest)")
        if not callable(sym_gen):
            raise TypeError(f"BucketingModule: sym_gen must be callable, got "
                            f"{type(sym_gen).__name__}")
        self._default_bucket_key = default_bucket_key
        self._sym_gen = sym_gen

        symbol, data_names, label_names = self._call_sym_gen(default_bucket_key)
        state_names = list(state_names) if state_names is not None else []
        fixed_param_names = list(fixed_param_names) if fixed_param_names is not None else []
        _check_input_names(symbol, data_names, "data", True)
        _check_input_names(symbol, label_names, "label", False)
        _check_input_names(symbol, state_names, "state", True)
        _check_input_names(symbol, fixed_param_names, "fixed_param", True)

        self._compression_params = compression_params
        self._fixed_param_names = fixed_param_names
        self._state_names = state_names
        self._context = context
        self._work_load_list = work_load_list
        self._group2ctxs = group2ctxs

        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None
        self._params_dirty = False
        self._monitor = None
        self._grad_req = None

    def _reset_bind(self):
        self.binded = False
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None

    def _call_sym_gen(self, bucket_key):
        """``sym_gen(bucket_key)`` under a fresh NameManager, its result checked."""
        with NameManager():
            result = self._sym_gen(bucket_key)
        from ..symbol import Symbol
        if not isinstance(result, (tuple, list)) or len(result) != 3:
            raise MXNetValueError(f"BucketingModule: sym_gen({bucket_key!r}) must return "
                                  "(symbol, data_names, label_names), got "
                                  f"{type(result).__name__} {result!r}"[:400])
        symbol, data_names, label_names = result
        if not isinstance(symbol, Symbol):
            raise MXNetValueError(f"BucketingModule: sym_gen({bucket_key!r}) must return a "
                                  f"Symbol first, got {type(symbol).__name__}")
        return (symbol, _names(data_names, "data_names", bucket_key),
                _names(label_names, "label_names", bucket_key))

    def _new_module(self, bucket_key, symbol=None, data_names=None, label_names=None):
        """An unbound Module for ``bucket_key`` (its symbol from sym_gen unless given)."""
        if symbol is None:
            symbol, data_names, label_names = self._call_sym_gen(bucket_key)
        try:
            return Module(symbol, data_names, label_names, logger=self.logger,
                          context=self._context, work_load_list=self._work_load_list,
                          fixed_param_names=self._fixed_param_names,
                          state_names=self._state_names, group2ctxs=self._group2ctxs,
                          compression_params=self._compression_params)
        except MXNetValueError as err:
            raise MXNetValueError(f"BucketingModule: bucket {bucket_key!r}: {err}") from None

    # ---------------------------------------------------------------- properties
    @property
    def default_bucket_key(self):
        """The key of the default bucket."""
        return self._default_bucket_key

    @property
    def data_names(self):
        """The current bucket's data names (the default bucket's before bind)."""
        if self.binded:
            return self._curr_module.data_names
        return self._call_sym_gen(self._default_bucket_key)[1]

    @property
    def output_names(self):
        """The current bucket's output names (the default bucket's before bind)."""
        if self.binded:
            return self._curr_module.output_names
        return self._call_sym_gen(self._default_bucket_key)[0].list_outputs()

    @property
    def data_shapes(self):
        _require(self.binded, "data_shapes", "bind the module first")
        return self._curr_module.data_shapes

    @property
    def label_shapes(self):
        _require(self.binded, "label_shapes", "bind the module first")
        return self._curr_module.label_shapes

    @property
    def output_shapes(self):
        _require(self.binded, "output_shapes", "bind the module first")
        return self._curr_module.output_shapes

    @property
    def symbol(self):
        """The current bucket's Symbol."""
        _require(self.binded, "symbol", "bind the module first")
        return self._curr_module.symbol

    # ---------------------------------------------------------------- parameters
    def get_params(self):
        """``(arg_params, aux_params)``, shared by every bucket."""
        _require(self.params_initialized and self._curr_module is not None, "get_params",
                 "initialise the parameters first")
        # updates ran in whichever bucket was current; the buckets share the parameter
        # arrays, so reading them back through the current one is enough
        self._curr_module._params_dirty = self._params_dirty or \
            self._curr_module._params_dirty
        params = self._curr_module.get_params()
        self._params_dirty = False
        return params

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Assign parameter values (to every bucket: they share the arrays)."""
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init,
                             allow_extra=allow_extra)
            return
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. set_params "
                          "call ignored.", stacklevel=2)
            return
        _require(self.binded, "set_params", "bind the module first")
        self._curr_module.set_params(arg_params, aux_params, allow_missing=allow_missing,
                                     force_init=force_init, allow_extra=allow_extra)
        # the master copies are read back from the executors when next asked for
        self._params_dirty = True
        self.params_initialized = True

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialise the parameters (through the current bucket; all buckets share them).
        A second call without ``force_init`` does nothing, as MXNet."""
        if self.params_initialized and not force_init:
            return
        _require(self.binded, "init_params", "call bind before initializing the parameters")
        self._curr_module.init_params(initializer=initializer, arg_params=arg_params,
                                      aux_params=aux_params, allow_missing=allow_missing,
                                      force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = False
        self.params_initialized = True

    def get_states(self, merge_multi_context=True):
        """The current bucket's state arrays."""
        _require(self.binded and self.params_initialized, "get_states",
                 "bind the module and initialise its parameters first")
        return self._curr_module.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        """Set the current bucket's states from arrays or one number."""
        _require(self.binded and self.params_initialized, "set_states",
                 "bind the module and initialise its parameters first")
        self._curr_module.set_states(states, value)

    # ---------------------------------------------------------------- binding
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Bind the default bucket's module (the others are bound by :meth:`switch_bucket`
        when first used). Parameters already initialised are kept across a rebind.

        Parameters
        ----------
        data_shapes, label_shapes : list of DataDesc or (str, tuple)
            For the default bucket.
        for_training, inputs_need_grad, force_rebind : bool
        shared_module : None
            Not supported for a BucketingModule.
        grad_req : str, list or dict, default 'write'
            Used by every bucket.
        """
        if self.params_initialized:
            arg_params, aux_params = self.get_params()
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if shared_module is not None:
            raise MXNetValueError("BucketingModule.bind: shared_module is not supported for "
                                  "a BucketingModule")
        if self._default_bucket_key in self._buckets:
            module = self._buckets[self._default_bucket_key]
        else:
            module = self._new_module(self._default_bucket_key)
        module.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                    force_rebind=False, shared_module=None, grad_req=grad_req)
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        self.binded = True
        self._curr_module = module
        self._curr_bucket_key = self._default_bucket_key
        self._buckets[self._default_bucket_key] = module
        if self.params_initialized:
            self.set_params(arg_params, aux_params)

    def switch_bucket(self, bucket_key, data_shapes, label_shapes=None):
        """Make ``bucket_key`` the current bucket, creating and binding its module (sharing
        the default bucket's parameters and memory) the first time.

        Parameters
        ----------
        bucket_key : hashable
        data_shapes, label_shapes : list of DataDesc or (str, tuple)
            The bucket's input shapes (``batch.provide_data``/``provide_label``); only needed
            when the bucket is not bound yet.
        """
        _require(self.binded, "switch_bucket", "call bind before switching bucket")
        module = self._buckets.get(bucket_key)
        if module is None or not module.binded:
            default = self._buckets[self._default_bucket_key]
            if not default.params_initialized:
                raise ModuleStateError(f"switch_bucket({bucket_key!r}): initialise the "
                                       "parameters (init_params) before binding another bucket "
                                       "(the buckets share the default bucket's parameters)")
            if data_shapes is None:
                raise MXNetValueError(f"switch_bucket({bucket_key!r}): bucket {bucket_key!r} is "
                                      "not bound yet, so data_shapes are needed")
            if module is None:
                module = self._new_module(bucket_key)
            module.bind(data_shapes, label_shapes, self._curr_module.for_training,
                        self._curr_module.inputs_need_grad, force_rebind=False,
                        shared_module=default, grad_req=self._grad_req)
            if self._monitor is not None:
                module.install_monitor(self._monitor)
            self._buckets[bucket_key] = module
        self._curr_module = module
        self._curr_bucket_key = bucket_key

    # ---------------------------------------------------------------- optimizer
    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """Set up the optimizer in the current bucket; the others borrow it."""
        _require(self.binded and self.params_initialized, "init_optimizer",
                 "bind the module and initialise its parameters first")
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring.")
            return
        self._curr_module.init_optimizer(kvstore, optimizer, optimizer_params,
                                         force_init=force_init)
        for mod in self._buckets.values():
            if mod is not self._curr_module:
                mod.borrow_optimizer(self._curr_module)
        self.optimizer_initialized = True

    def borrow_optimizer(self, shared_module):
        """Use ``shared_module``'s optimizer, store and updater in every bucket."""
        _require(self.binded, "borrow_optimizer", "bind the module first")
        _require(shared_module.optimizer_initialized, "borrow_optimizer",
                 "the shared module's optimizer is not initialised")
        if isinstance(shared_module, BucketingModule):
            shared_module = shared_module._curr_module
        for mod in self._buckets.values():
            mod.borrow_optimizer(shared_module)
        self.optimizer_initialized = True

    # ---------------------------------------------------------------- computation
    def _batch_key_and_shapes(self, data_batch):
        """The batch's bucket key (the default one when it has none) and input shapes."""
        if isinstance(data_batch, list):
            raise MXNetValueError("BucketingModule takes one DataBatch at a time, not a list "
                                  "of pre-sliced batches")
        bucket_key = getattr(data_batch, "bucket_key", None)
        if bucket_key is None:
            bucket_key = self._default_bucket_key
        data_shapes = getattr(data_batch, "provide_data", None)
        label_shapes = getattr(data_batch, "provide_label", None)
        module = self._buckets.get(bucket_key)
        if not data_shapes and (module is None or not module.binded) and data_batch.data:
            # a batch without descriptions: name its arrays after the bucket's inputs
            if module is None:
                module = self._new_module(bucket_key)
                self._buckets[bucket_key] = module
            data_shapes = [DataDesc(n, a.shape, a.dtype)
                           for n, a in zip(module.data_names, data_batch.data)]
            if data_batch.label and module.label_names:
                label_shapes = [DataDesc(n, a.shape, a.dtype)
                                for n, a in zip(module.label_names, data_batch.label)]
        return bucket_key, data_shapes, label_shapes

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Bind the batch's bucket if needed and let it pull its row-sparse rows; the current
        bucket stays as it was."""
        _require(self.binded and self.params_initialized, "prepare",
                 "bind the module and initialise its parameters first")
        original_bucket_key = self._curr_bucket_key
        bucket_key, data_shapes, label_shapes = self._batch_key_and_shapes(data_batch)
        self.switch_bucket(bucket_key, data_shapes, label_shapes)
        self._curr_module.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self.switch_bucket(original_bucket_key, None, None)

    def forward(self, data_batch, is_train=None):
        """Switch to the batch's bucket (``data_batch.bucket_key``) and run it forward."""
        _require(self.binded and self.params_initialized, "forward",
                 "bind the module and initialise its parameters first")
        bucket_key, data_shapes, label_shapes = self._batch_key_and_shapes(data_batch)
        self.switch_bucket(bucket_key, data_shapes, label_shapes)
        self._curr_module.forward(data_batch, is_train=is_train)

    def backward(self, out_grads=None):
        """Backward in the current bucket."""
        _require(self.binded and self.params_initialized, "backward",
                 "bind the module and initialise its parameters first")
        self._curr_module.backward(out_grads=out_grads)

    def update(self):
        """Apply the optimizer with the current bucket's gradients (the parameters are
        shared, so every bucket sees the update)."""
        _require(self.binded and self.params_initialized and self.optimizer_initialized,
                 "update", "bind the module, initialise its parameters and its optimizer first")
        self._params_dirty = True
        self._curr_module.update()

    def get_outputs(self, merge_multi_context=True):
        """The current bucket's outputs."""
        _require(self.binded and self.params_initialized, "get_outputs",
                 "bind the module and initialise its parameters first")
        return self._curr_module.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """The current bucket's input gradients (bind with ``inputs_need_grad=True``)."""
        _require(self.binded and self.params_initialized and self.inputs_need_grad,
                 "get_input_grads", "bind with inputs_need_grad=True and initialise the "
                 "parameters first")
        return self._curr_module.get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Accumulate ``eval_metric`` over the current bucket's outputs."""
        _require(self.binded and self.params_initialized, "update_metric",
                 "bind the module and initialise its parameters first")
        self._curr_module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        """Install ``mon`` on every bucket, and on the buckets bound later."""
        _require(self.binded, "install_monitor", "bind the module first")
        self._monitor = mon
        for mod in self._buckets.values():
            if mod.binded:
                mod.install_monitor(mon)

    # ---------------------------------------------------------------- checkpoints
    def save_checkpoint(self, prefix, epoch, remove_amp_cast=False):
        """Write MXNet's bucketing checkpoint: ``prefix-%04d.params`` (the shared
        parameters), ``prefix-<key>-symbol.json`` per bucket and ``prefix.buckets`` (the
        keys, an int32 array). Bucket keys must be integers, as MXNet's format stores them.
        """
        if not self._buckets:
            raise _BucketingAssertion("Empty BucketingModule cannot be saved: bind it first")
        keys = list(self._buckets)
        bad = [k for k in keys if not isinstance(k, numbers.Integral) or isinstance(k, bool)]
        if bad:
            raise MXNetValueError(f"BucketingModule.save_checkpoint: the checkpoint format "
                                  f"stores bucket keys as int32; bucket key {bad[0]!r} is not "
                                  "an integer")
        param_name = "%s-%04d.params" % (prefix, epoch)
        self.save_params(param_name)
        for bucket_key in keys:
            symbol = self._buckets[bucket_key].symbol
            symbol.save("%s-%s-symbol.json" % (prefix, bucket_key),
                        remove_amp_cast=remove_amp_cast)
        nd.save("%s.buckets" % prefix, nd.array(keys, dtype=np.int32))
        logging.info('Saved checkpoint to "%s"', param_name)

    @staticmethod
    def load(prefix, epoch, sym_gen=None, default_bucket_key=None, **kwargs):
        """A BucketingModule from a checkpoint written by :meth:`save_checkpoint` (MXNet's
        or neogluon's): each saved bucket's symbol, the shared parameters.

        Parameters
        ----------
        prefix : str
        epoch : int
        sym_gen : callable
            The function the saved module was built with (it gives the input names).
        default_bucket_key : int
            Must be one of the saved buckets.
        **kwargs
            The other constructor arguments (logger, context, ...).
        """
        from .. import symbol as sym
        if sym_gen is None:
            raise _BucketingAssertion("sym_gen is required for loading BucketingModule")
        if default_bucket_key is None:
            raise _BucketingAssertion("default_bucket_key is required for loading "
                                      "BucketingModule")
        saved = nd.load("%s.buckets" % prefix)
        if isinstance(saved, dict) or len(saved) != 1:
            raise MXNetError(f"{prefix}.buckets: expected one array of bucket keys")
        keys = [int(k) for k in saved[0].asnumpy().astype("int32").reshape(-1)]
        if default_bucket_key not in keys:
            raise MXNetValueError(f"BucketingModule.load: default_bucket_key "
                                  f"{default_bucket_key!r} is not among the saved buckets "
                                  f"{keys}")
        bucketing_mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        for bucket_key in keys:
            _, data_names, label_names = bucketing_mod._call_sym_gen(bucket_key)
            symbol = sym.load("%s-%s-symbol.json" % (prefix, bucket_key))
            bucketing_mod._buckets[bucket_key] = bucketing_mod._new_module(
                bucket_key, symbol, data_names, label_names)
        arg_params, aux_params = load_params(prefix, epoch)
        bucketing_mod._adopt_params(arg_params, aux_params)
        return bucketing_mod

    @staticmethod
    def load_dict(sym_dict=None, sym_gen=None, default_bucket_key=None, arg_params=None,
                  aux_params=None, **kwargs):
        """A BucketingModule from ``{bucket_key: symbol}`` and shared parameters.

        Parameters
        ----------
        sym_dict : dict of key to Symbol
            Must hold ``default_bucket_key``.
        sym_gen : callable
            Gives the input names (and the symbols of buckets not in ``sym_dict``).
        default_bucket_key : hashable
        arg_params, aux_params : dict of str to NDArray
        **kwargs
            The other constructor arguments (logger, context, ...).
        """
        for what, value in (("sym_dict", sym_dict), ("arg_params", arg_params),
                            ("aux_params", aux_params),
                            ("default_bucket_key", default_bucket_key)):
            if value is None:
                raise _BucketingAssertion(f"{what} needs to be provided for "
                                          "BucketingModule.load_dict")
        if default_bucket_key not in sym_dict:
            raise MXNetValueError(f"BucketingModule.load_dict: default_bucket_key "
                                  f"{default_bucket_key!r} is not a key of sym_dict "
                                  f"{list(sym_dict)}")
        bucketing_mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        for bucket_key, loaded_sym in sym_dict.items():
            _, data_names, label_names = bucketing_mod._call_sym_gen(bucket_key)
            bucketing_mod._buckets[bucket_key] = bucketing_mod._new_module(
                bucket_key, loaded_sym, data_names, label_names)
        bucketing_mod._adopt_params(arg_params, aux_params)
        return bucketing_mod

    def _adopt_params(self, arg_params, aux_params):
        """Loaded parameters: the default bucket holds them until bind copies them in."""
        default = self._buckets[self._default_bucket_key]
        default._arg_params = arg_params
        default._aux_params = aux_params
        default.params_initialized = True
        self._curr_module = default
        self._curr_bucket_key = self._default_bucket_key
        self.params_initialized = True


# Names MXNet 1.9.1's module of the same path exposes (programs import them from here).
from .. import symbol as sym  # noqa: E402,F401
