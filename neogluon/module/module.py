"""``Module``: a Symbol trained with executors, a KVStore and an optimizer, as MXNet 1.x's
``mxnet.module.Module``.

The module keeps one master copy of the parameters (``get_params``), bound to one executor
per context through a :class:`DataParallelExecutorGroup`; ``update`` applies the optimizer
to each context's copy (or lets the KVStore do it, ``update_on_kvstore``), with the same
rules for picking the store as MXNet (``mx.model._create_kvstore``).
"""
from __future__ import annotations

import logging
import warnings

from .. import context as ctx
from .. import ndarray as nd
from .. import optimizer as opt
from .._fileio import write_bytes
from ..base import MXNetError, MXNetValueError
from ..initializer import InitDesc, Uniform
from ..optimizer._mxstates import dump_mxnet_states
from ..model import (_create_kvstore, _initialize_kvstore, _update_params,
                     _update_params_on_kvstore, load_checkpoint)
from .base_module import (BaseModule, ModuleStateError, _check_input_names, _parse_data_desc,
                          _require)
from .executor_group import DataParallelExecutorGroup
from ..gluon._executor import _copy_into

__all__ = ["Module"]


class _MissingParam(MXNetError):
    """A parameter with no value in the arrays given (MXNet raises RuntimeError)."""


class Module(BaseModule):
    """A Symbol with data and label inputs, trained and run through executors.

    Parameters
    ----------
    symbol : Symbol
    data_names : sequence of str, default ('data',)
    label_names : sequence of str, default ('softmax_label',)
    logger : logging.Logger or module, default logging
    context : Context or list of Context, default cpu()
        One executor per context; each gets a slice of the batch.
    work_load_list : list of number, optional
        Relative slice sizes per context (equal by default).
    fixed_param_names : list of str, optional
        Parameters that are not updated.
    state_names : list of str, optional
        Inputs that are states (set with ``set_states``), not data or parameters.
    group2ctxs : dict or list of dict, optional
        ``ctx_group`` to context, for model parallelism.
    compression_params : dict, optional
        Gradient compression for the KVStore.
    """

    def __init__(self, symbol, data_names=("data",), label_names=("softmax_label",),
                 logger=logging, context=ctx.cpu(), work_load_list=None,
                 fixed_param_names=None, state_names=None, group2ctxs=None,
                 compression_params=None):
        super().__init__(logger=logger)
        from ..symbol import Symbol
        if not isinstance(symbol, Symbol):
            raise TypeError(f"Module: symbol must be a Symbol, got {type(symbol).__name__}")
        if isinstance(context, ctx.Context):
            context = [context]
        context = list(context)
        if not context or not all(isinstance(c, ctx.Context) for c in context):
            raise TypeError(f"Module: context must be a Context or a non-empty list of them, "
                            f"got {context!r}")
        self._context = context
        if work_load_list is None:
            work_load_list = [1] * len(self._context)
        if len(work_load_list) != len(self._context):
            raise MXNetValueError(f"Module: work_load_list has {len(work_load_list)} entries "
                                  f"for {len(self._context)} contexts")
        self._work_load_list = work_load_list
        self._group2ctxs = group2ctxs
        self._symbol = symbol

        data_names = list(data_names) if data_names is not None else []
        label_names = list(label_names) if label_names is not None else []
        state_names = list(state_names) if state_names is not None else []
        fixed_param_names = list(fixed_param_names) if fixed_param_names is not None else []
        _check_input_names(symbol, data_names, "data", True)
        _check_input_names(symbol, label_names, "label", False)
        _check_input_names(symbol, state_names, "state", True)
        _check_input_names(symbol, fixed_param_names, "fixed_param", True)

        arg_names = symbol.list_arguments()
        input_names = data_names + label_names + state_names
        self._param_names = [x for x in arg_names if x not in input_names]
        self._fixed_param_names = fixed_param_names
        self._aux_names = symbol.list_auxiliary_states()
        self._data_names = data_names
        self._label_names = label_names
        self._state_names = state_names
        self._output_names = symbol.list_outputs()

        self._arg_params = None
        self._aux_params = None
        self._params_dirty = False
        self._compression_params = compression_params
        self._optimizer = None
        self._kvstore = None
        self._update_on_kvstore = None
        self._updater = None
        self._preload_opt_states = None
        self._grad_req = None
        self._exec_group = None
        self._data_shapes = None
        self._label_shapes = None

    # ---------------------------------------------------------------- checkpoints
    @staticmethod
    def load(prefix, epoch, load_optimizer_states=False, **kwargs):
        """A Module from ``prefix-symbol.json`` and ``prefix-%04d.params`` (MXNet's files);
        with ``load_optimizer_states`` the optimizer states of ``prefix-%04d.states`` are
        restored when the optimizer is set up. ``kwargs`` go to the constructor."""
        sym, args, auxs = load_checkpoint(prefix, epoch)
        try:
            mod = Module(symbol=sym, **kwargs)
        except MXNetError as err:
            # (the graph does not have the inputs the Module is asked for: name the file)
            raise type(err)(f"{err} (symbol file '{prefix}-symbol.json')") from None
        mod._arg_params = args
        mod._aux_params = auxs
        mod.params_initialized = True
        if load_optimizer_states:
            mod._preload_opt_states = "%s-%04d.states" % (prefix, epoch)
        return mod

    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False, remove_amp_cast=True):
        """Write ``prefix-symbol.json``, ``prefix-%04d.params`` and, with
        ``save_optimizer_states``, ``prefix-%04d.states`` (each file atomically)."""
        self._symbol.save("%s-symbol.json" % prefix, remove_amp_cast=remove_amp_cast)
        param_name = "%s-%04d.params" % (prefix, epoch)
        self.save_params(param_name)
        logging.info('Saved checkpoint to "%s"', param_name)
        if save_optimizer_states:
            state_name = "%s-%04d.states" % (prefix, epoch)
            self.save_optimizer_states(state_name)
            logging.info('Saved optimizer state to "%s"', state_name)

    def _reset_bind(self):
        self.binded = False
        self._exec_group = None
        self._data_shapes = None
        self._label_shapes = None

    # ---------------------------------------------------------------- properties
    @property
    def data_names(self):
        return self._data_names

    @property
    def label_names(self):
        return self._label_names

    @property
    def output_names(self):
        return self._output_names

    @property
    def data_shapes(self):
        _require(self.binded, "data_shapes", "bind the module first")
        return self._data_shapes

    @property
    def label_shapes(self):
        _require(self.binded, "label_shapes", "bind the module first")
        return self._label_shapes

    @property
    def output_shapes(self):
        _require(self.binded, "output_shapes", "bind the module first")
        return self._exec_group.get_output_shapes()

    # ---------------------------------------------------------------- parameters
    def get_params(self):
        """``(arg_params, aux_params)``: the master copies, synchronised from the devices."""
        _require(self.params_initialized, "get_params", "initialise the parameters first")
        if self._params_dirty:
            self._sync_params_from_devices()
        return self._arg_params, self._aux_params

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Give every parameter and auxiliary state a value: from ``arg_params`` /
        ``aux_params`` where they name it, else from ``initializer`` (with the variable's
        ``__init__`` attribute, as MXNet's ``InitDesc``).

        Parameters
        ----------
        initializer : Initializer, default Uniform(0.01)
        arg_params, aux_params : dict of str to NDArray, optional
        allow_missing : bool
            Initialise what the dicts lack instead of raising.
        force_init : bool
            Re-initialise when already initialised.
        allow_extra : bool
            Ignore names in the dicts that the module does not have (else ValueError).
        """
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. init_params "
                          "call ignored.", stacklevel=2)
            return
        _require(self.binded, "init_params", "call bind before initializing the parameters")

        def _impl(name, arr, cache):
            if cache is not None:
                if name in cache:
                    src = cache[name]
                    if src is not arr:
                        _copy_into(src, arr, f"the value of parameter {name!r}")
                    return
                if not allow_missing:
                    raise _MissingParam(f"{name} is not presented")
                if initializer is not None:
                    initializer(name, arr)
            elif initializer is not None:
                initializer(name, arr)
            else:
                raise _MissingParam(f"{name} is not presented (no value and no initializer)")

        attrs = self._symbol.attr_dict()
        for name, arr in sorted(self._arg_params.items()):
            _impl(InitDesc(name, attrs.get(name, None)), arr, arg_params)
        for name, arr in sorted(self._aux_params.items()):
            _impl(InitDesc(name, attrs.get(name, None)), arr, aux_params)
        self.params_initialized = True
        self._params_dirty = False
        # copy the values into the executors
        self._exec_group.set_params(self._arg_params, self._aux_params,
                                    allow_extra=allow_extra)

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Assign values (``init_params`` without an initializer). With ``allow_missing``
        the values go straight into the executors, leaving the others as they are."""
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init,
                             allow_extra=allow_extra)
            return
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. set_params "
                          "call ignored.", stacklevel=2)
            return
        self._exec_group.set_params(arg_params, aux_params, allow_extra=allow_extra)
        # the master copies are read back from the devices when next asked for
        self._params_dirty = True
        self.params_initialized = True

    # ---------------------------------------------------------------- binding
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Bind executors for these input shapes.

        Parameters
        ----------
        data_shapes : list of DataDesc or (str, tuple)
        label_shapes : list of DataDesc or (str, tuple), optional
        for_training : bool, default True
        inputs_need_grad : bool, default False
            Compute the gradients of the data inputs too (``get_input_grads``).
        force_rebind : bool
            Rebind when already bound.
        shared_module : Module, optional
            Share parameters and memory with this bound, initialised module (bucketing).
        grad_req : str, list or dict, default 'write'
        """
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if not for_training and inputs_need_grad:
            raise MXNetValueError("bind: inputs_need_grad=True needs for_training=True")
        self._data_shapes, self._label_shapes = _parse_data_desc(
            self.data_names, self.label_names, data_shapes, label_shapes)
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req

        if shared_module is not None:
            if not (isinstance(shared_module, Module) and shared_module.binded and
                    shared_module.params_initialized):
                raise ModuleStateError("bind: shared_module must be a bound Module with "
                                       "initialised parameters")
            shared_group = shared_module._exec_group
            if len(shared_group.execs) < len(self._context):
                raise MXNetValueError("bind: shared_module has fewer contexts than this module")
        else:
            shared_group = None

        self._exec_group = DataParallelExecutorGroup(
            self._symbol, self._context, self._work_load_list, self._data_shapes,
            self._label_shapes, self._param_names, for_training, inputs_need_grad,
            shared_group, logger=self.logger, fixed_param_names=self._fixed_param_names,
            grad_req=grad_req, group2ctxs=self._group2ctxs, state_names=self._state_names)
        self._total_exec_bytes = self._exec_group._total_exec_bytes
        if shared_module is not None:
            self.params_initialized = True
            self._arg_params = shared_module._arg_params
            self._aux_params = shared_module._aux_params
        elif self.params_initialized:
            # parameters loaded before binding (Module.load): into the executors
            self._exec_group.set_params(self._arg_params, self._aux_params)
        else:
            if self._arg_params is not None or self._aux_params is not None:
                raise ModuleStateError("bind: parameters exist but are not initialised")
            self._arg_params = {
                name: nd.zeros(arrs[0].shape, dtype=arrs[0].dtype, stype=arrs[0].stype)
                for name, arrs in zip(self._param_names, self._exec_group.param_arrays)}
            self._aux_params = {
                name: nd.zeros(arrs[0].shape, dtype=arrs[0].dtype)
                for name, arrs in zip(self._aux_names, self._exec_group.aux_arrays)}
        if shared_module is not None and shared_module.optimizer_initialized:
            self.borrow_optimizer(shared_module)
        self.binded = True

    def reshape(self, data_shapes, label_shapes=None):
        """Re-shape the executors for new input shapes (sharing the parameters)."""
        _require(self.binded, "reshape", "bind the module first")
        self._data_shapes, self._label_shapes = _parse_data_desc(
            self.data_names, self.label_names, data_shapes, label_shapes)
        self._exec_group.reshape(self._data_shapes, self._label_shapes)

    # ---------------------------------------------------------------- optimizer
    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """Set up the optimizer and the KVStore.

        ``rescale_grad`` defaults to ``1 / batch_size`` (times the number of workers in a
        ``dist_*sync`` store). A store is used for several contexts or a distributed store;
        the optimizer runs in the store (``update_on_kvstore``) unless
        ``MXNET_UPDATE_ON_KVSTORE=0``, a 'local' store holds a parameter of over 16M
        values, or the store cannot run optimizers.
        """
        _require(self.binded and self.params_initialized, "init_optimizer",
                 "bind the module and initialise its parameters first")
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring...")
            return
        if self._params_dirty:
            self._sync_params_from_devices()

        kvstore, update_on_kvstore = _create_kvstore(kvstore, len(self._context),
                                                     self._arg_params)
        batch_size = self._exec_group.batch_size
        if kvstore and "dist" in kvstore.type and "_sync" in kvstore.type:
            batch_size *= kvstore.num_workers
        rescale_grad = 1.0 / batch_size

        idx2name = {}
        if update_on_kvstore:
            idx2name.update(enumerate(self._exec_group.param_names))
        else:
            n = len(self._context)
            for k in range(n):
                idx2name.update({i * n + k: name
                                 for i, name in enumerate(self._exec_group.param_names)})
        if isinstance(optimizer, str):
            optimizer_params = dict(optimizer_params)
            if "rescale_grad" not in optimizer_params:
                optimizer_params["rescale_grad"] = rescale_grad
            optimizer = opt.create(optimizer, sym=self.symbol, param_idx2name=idx2name,
                                   **optimizer_params)
        else:
            if not isinstance(optimizer, opt.Optimizer):
                raise TypeError(f"init_optimizer: optimizer must be a str or an Optimizer, "
                                f"got {type(optimizer).__name__}")
            if optimizer.rescale_grad != rescale_grad:
                warnings.warn("Optimizer created manually outside Module but rescale_grad is "
                              "not normalized to 1.0/batch_size/num_workers "
                              f"({optimizer.rescale_grad} vs. {rescale_grad}). Is this "
                              "intended?", stacklevel=2)
            if not optimizer.idx2name:
                optimizer.idx2name = idx2name.copy()

        self._optimizer = optimizer
        self._kvstore = kvstore
        self._update_on_kvstore = update_on_kvstore
        self._updater = None
        if kvstore:
            if self._compression_params:
                kvstore.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kvstore.set_optimizer(self._optimizer)
            # the store starts from the module's values (rank 0's in a dist job)
            _initialize_kvstore(kvstore=kvstore, param_arrays=self._exec_group.param_arrays,
                                arg_params=self._arg_params, param_names=self._param_names,
                                update_on_kvstore=update_on_kvstore)
        if not update_on_kvstore:
            self._updater = opt.get_updater(optimizer)
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    def borrow_optimizer(self, shared_module):
        """Use ``shared_module``'s optimizer, store and updater (bucketing)."""
        _require(shared_module.optimizer_initialized, "borrow_optimizer",
                 "the shared module's optimizer is not initialised")
        self._optimizer = shared_module._optimizer
        self._kvstore = shared_module._kvstore
        self._update_on_kvstore = shared_module._update_on_kvstore
        self._updater = shared_module._updater
        self.optimizer_initialized = True

    # ---------------------------------------------------------------- computation
    def forward(self, data_batch, is_train=None):
        """Load ``data_batch`` into the executors and compute the outputs; a batch of other
        shapes re-shapes the executors first (sharing the parameters)."""
        _require(self.binded and self.params_initialized, "forward",
                 "bind the module and initialise its parameters first")
        curr_data_shapes = tuple(i.shape for i in self._data_shapes)
        if isinstance(data_batch, list):
            if not data_batch:
                raise MXNetValueError("forward: encountered an empty list of data batches")
            new_data_shapes = []
            for i in range(len(data_batch[0].data)):
                shape = data_batch[0].data[i].shape
                for db in data_batch:
                    if shape != db.data[i].shape:
                        raise MXNetValueError("All data batches in a list need to have the "
                                              "same shape")
                new_data_shapes.append((len(data_batch) * shape[0],) + tuple(shape[1:]))
            new_data_shapes = tuple(new_data_shapes)
        else:
            if data_batch.data is None or len(data_batch.data) != len(self._data_shapes):
                got = 0 if data_batch.data is None else len(data_batch.data)
                raise MXNetValueError(f"forward: the batch has {got} data arrays but the module "
                                      f"has {len(self._data_shapes)} data inputs "
                                      f"({', '.join(self._data_names)})")
            new_data_shapes = tuple(tuple(i.shape) for i in data_batch.data)
        if curr_data_shapes != new_data_shapes:
            from ..io import DataDesc
            if getattr(data_batch, "provide_data", None):
                new_dshape = data_batch.provide_data
            else:
                new_dshape = [DataDesc(i.name, shape, i.dtype, i.layout)
                              for i, shape in zip(self._data_shapes, new_data_shapes)]
            if getattr(data_batch, "provide_label", None):
                new_lshape = data_batch.provide_label
            elif getattr(data_batch, "label", None) and self._label_shapes:
                new_lshape = [DataDesc(i.name, j.shape, i.dtype, i.layout)
                              for i, j in zip(self._label_shapes, data_batch.label)]
            else:
                new_lshape = None
            self.reshape(new_dshape, new_lshape)
        self._exec_group.forward(data_batch, is_train)

    def backward(self, out_grads=None):
        """Backward on every executor (``out_grads`` for outputs that are not losses)."""
        _require(self.binded and self.params_initialized, "backward",
                 "bind the module and initialise its parameters first")
        self._exec_group.backward(out_grads=out_grads)

    def update(self):
        """Apply the optimizer to the parameters with the last gradients."""
        _require(self.binded and self.params_initialized and self.optimizer_initialized,
                 "update", "bind the module, initialise its parameters and its optimizer first")
        self._params_dirty = True
        if self._update_on_kvstore:
            _update_params_on_kvstore(self._exec_group.param_arrays,
                                      self._exec_group.grad_arrays, self._kvstore,
                                      self._exec_group.param_names)
        else:
            _update_params(self._exec_group.param_arrays, self._exec_group.grad_arrays,
                           updater=self._updater, num_device=len(self._context),
                           kvstore=self._kvstore, param_names=self._exec_group.param_names)

    def get_outputs(self, merge_multi_context=True):
        """The outputs of the last forward (merged over contexts by default)."""
        _require(self.binded and self.params_initialized, "get_outputs",
                 "bind the module and initialise its parameters first")
        return self._exec_group.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """The gradients of the data inputs (bound with ``inputs_need_grad=True``)."""
        _require(self.binded and self.params_initialized and self.inputs_need_grad,
                 "get_input_grads", "bind with inputs_need_grad=True and initialise the "
                 "parameters first")
        return self._exec_group.get_input_grads(merge_multi_context=merge_multi_context)

    def get_states(self, merge_multi_context=True):
        """The state inputs' arrays."""
        _require(self.binded and self.params_initialized, "get_states",
                 "bind the module and initialise its parameters first")
        return self._exec_group.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        """Set the state inputs from arrays or one number."""
        _require(self.binded and self.params_initialized, "set_states",
                 "bind the module and initialise its parameters first")
        self._exec_group.set_states(states, value)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Accumulate ``eval_metric`` over the last outputs and ``labels``."""
        self._exec_group.update_metric(eval_metric, labels, pre_sliced)

    def _sync_params_from_devices(self):
        """Read the devices' parameter values into the master copies (row-sparse weights
        updated in the store are pulled whole)."""
        self._exec_group.get_params(self._arg_params, self._aux_params)
        if self._kvstore and self._update_on_kvstore:
            for name, val in sorted(self._arg_params.items()):
                if val.stype == "row_sparse":
                    row_ids = nd.arange(0, val.shape[0], dtype="int64")
                    self._kvstore.row_sparse_pull(name, val, row_ids=row_ids)
        self._params_dirty = False

    # ---------------------------------------------------------------- optimizer states
    def save_optimizer_states(self, fname):
        """Write the optimizer states to ``fname`` (atomically) in MXNet's format (the
        pickle of MXNet's ``Updater.get_states``), so that MXNet 1.9.1's Module loads the
        ``.states`` files of neogluon's checkpoints and the other way round. A distributed
        store writes its own (sharded) file."""
        _require(self.optimizer_initialized, "save_optimizer_states",
                 "initialise the optimizer first")
        updater = self._updater
        if self._update_on_kvstore:
            updater = getattr(self._kvstore, "_updater", None)
            if updater is None or not hasattr(updater, "states"):
                self._kvstore.save_optimizer_states(fname)
                return
        write_bytes(fname, dump_mxnet_states(updater.states))

    def load_optimizer_states(self, fname):
        """Read optimizer states written by :meth:`save_optimizer_states` (MXNet's
        pickled ``.states`` files too, through a restricted reader)."""
        _require(self.optimizer_initialized, "load_optimizer_states",
                 "initialise the optimizer first")
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
        else:
            with open(fname, "rb") as f:
                blob = f.read()
            try:
                self._updater.set_states(blob)
            except MXNetError as err:
                raise MXNetError(f"load_optimizer_states: {fname}: {err}") from None

    def install_monitor(self, mon):
        """Install a Monitor on every executor."""
        _require(self.binded, "install_monitor", "bind the module first")
        self._exec_group.install_monitor(mon)

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Pull the row-sparse rows the next batch needs (``sparse_row_id_fn(batch)`` gives
        ``{param name: row ids}``) when the store updates the parameters."""
        _require(self.binded, "prepare", "bind the module first")
        if sparse_row_id_fn is None:
            return
        if not self._kvstore or not self._update_on_kvstore:
            warnings.warn(UserWarning("Parameters are not updated in the KVStore. No need to "
                                      "call sparse_row_id_fn."))
            return
        row_ids = sparse_row_id_fn(data_batch)
        if not isinstance(row_ids, dict):
            raise MXNetValueError("Expected dict output from sparse_row_id_fn")
        for name, row_id in row_ids.items():
            idx = self._exec_group.param_names.index(name)
            val = self._exec_group.param_arrays[idx]
            if val[0].stype != "row_sparse":
                warnings.warn(UserWarning(f"{name}.stype is not 'row_sparse'. No need to "
                                          "perform row_sparse_pull."))
            else:
                self._kvstore.row_sparse_pull(name, val, row_ids=row_id, priority=-idx)


# Names MXNet 1.9.1's module of the same path exposes (programs import them from here).
from ..io import DataDesc  # noqa: E402,F401
from ..ndarray import zeros  # noqa: E402,F401
