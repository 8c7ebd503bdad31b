"""``SVRGModule``: a Module trained with stochastic variance-reduced gradients (Johnson &
Zhang, 2013), as MXNet 1.9.1's ``mxnet.contrib.svrg_optimization.svrg_module``.

Every ``update_freq`` epochs the module takes a snapshot of its parameters into a second
module (``_mod_aux``) and averages that snapshot's gradients over a whole pass of the data
(the *full gradient*, ``_param_dict``, one dict per context). Each training batch then runs
forward and backward through both modules, and the gradient handed to the optimizer is::

    grad(current weights, batch) - grad(snapshot, batch) + full gradient

The optimizer is the user's, wrapped in ``_SVRGOptimizer``; with a KVStore the full
gradients are summed over the devices (and workers) in the store under the keys
``<param>_full``.
"""
from __future__ import annotations

import logging
import warnings

import neogluon as mx  # noqa: F401  (MXNet's module does `import mxnet as mx`)

from ... import context as ctx
from ... import ndarray as nd
from ... import optimizer as opt
from ...base import MXNetError, MXNetValueError
from ...model import _create_kvstore
from ...module import Module
from ...module.base_module import _require
from .svrg_optimizer import _FULL_SUFFIX, _SVRGOptimizer

__all__ = ["SVRGModule"]


class _UpdateFreqTypeError(MXNetError, TypeError):
    """``update_freq`` is not an integer (MXNet raises TypeError)."""


class SVRGModule(Module):
    """A :class:`~neogluon.module.Module` whose updates use SVRG gradients.

    Parameters
    ----------
    symbol : Symbol
    data_names : sequence of str, default ('data',)
    label_names : sequence of str, default ('softmax_label',)
    logger : logging.Logger or module, default logging
    context : Context or list of Context, default cpu()
    work_load_list : list of number, optional
    fixed_param_names : list of str, optional
        Parameters that are not updated (they get no SVRG gradient either).
    state_names : list of str, optional
    group2ctxs : dict or list of dict, optional
    compression_params : dict, optional
    update_freq : int
        Required: the full gradient is recomputed at every epoch that is a multiple of it
        (``fit``). A positive integer.

    Raises
    ------
    TypeError (an MXNetError)
        When ``update_freq`` is not an integer.
    ValueError (an MXNetError)
        When ``update_freq`` is not positive.

    Examples
    --------
    >>> mod = SVRGModule(symbol=lro, data_names=['data'], label_names=['lin_reg_label'],
    ...                  update_freq=2)
    >>> mod.fit(train_iter, eval_metric='mse', optimizer='sgd',
    ...         optimizer_params=(('learning_rate', 0.025),), num_epoch=10)
    """

    def __init__(self, symbol, data_names=("data",), label_names=("softmax_label",),
                 logger=logging, context=ctx.cpu(), work_load_list=None,
                 fixed_param_names=None, state_names=None, group2ctxs=None,
                 compression_params=None, update_freq=None):
        super().__init__(symbol, data_names=data_names, label_names=label_names, logger=logger,
                         context=context, work_load_list=work_load_list,
                         fixed_param_names=fixed_param_names, state_names=state_names,
                         group2ctxs=group2ctxs, compression_params=compression_params)
        if not isinstance(update_freq, int):
            raise _UpdateFreqTypeError(
                f"SVRGModule: update_freq must be a positive integer (the number of epochs "
                f"between two full-gradient passes), got {type(update_freq).__name__} "
                f"{update_freq!r}")
        if update_freq <= 0:
            raise MXNetValueError(f"SVRGModule: update_freq must be a positive integer (the "
                                  f"number of epochs between two full-gradient passes), got "
                                  f"{update_freq}")
        self.update_freq = update_freq
        for name in self._param_names:
            if name + _FULL_SUFFIX in self._param_names:
                raise MXNetValueError(
                    f"SVRGModule: parameters {name!r} and {name + _FULL_SUFFIX!r} cannot both "
                    f"exist: the full gradient of {name!r} is kept under the key "
                    f"{name + _FULL_SUFFIX!r}")
        # The snapshot module: same graph and contexts, its own parameter copies.
        self._mod_aux = Module(symbol, data_names=data_names, label_names=label_names,
                               logger=logger, context=context, work_load_list=work_load_list,
                               fixed_param_names=fixed_param_names, state_names=state_names,
                               group2ctxs=group2ctxs, compression_params=compression_params)
        self._param_dict = None
        self._ctx_len = len(self._context)
        # whether the snapshot module ran forward on the batch that backward will see
        self._aux_forwarded = False

    # ---------------------------------------------------------------- binding
    def _reset_bind(self):
        super()._reset_bind()
        self._mod_aux._reset_bind()
        self._aux_forwarded = False

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Bind this module, and, for training, the snapshot module, to these shapes.

        Parameters are those of :meth:`Module.bind`. With a ``shared_module`` that is an
        SVRGModule, the snapshot modules share their memory too (once the shared one has a
        snapshot); otherwise the snapshot module has memory of its own, so that its weights
        stay those of the snapshot (MXNet shares it with ``shared_module``'s live weights).
        """
        super().bind(data_shapes, label_shapes, for_training, inputs_need_grad, force_rebind,
                     shared_module, grad_req)
        if not (self.binded and self.for_training) or self._mod_aux.binded:
            return
        aux_shared = None
        if isinstance(shared_module, SVRGModule):
            other = shared_module._mod_aux
            if other.binded and other.params_initialized:
                aux_shared = other
        self._mod_aux.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                           force_rebind, aux_shared, grad_req)

    def reshape(self, data_shapes, label_shapes=None):
        """Re-shape both modules' executors for new input shapes."""
        super().reshape(data_shapes, label_shapes=label_shapes)
        if self._mod_aux.binded:
            self._mod_aux.reshape(data_shapes, label_shapes=label_shapes)

    # ---------------------------------------------------------------- optimizer
    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """Set up ``optimizer`` wrapped in ``_SVRGOptimizer``, the KVStore, and zero full
        gradients.

        With a KVStore, each parameter also gets the key ``<name>_full`` (zeros) where the
        devices' full gradients are summed.

        Parameters
        ----------
        kvstore : str, KVStore or None, default 'local'
        optimizer : str or Optimizer, default 'sgd'
            The optimizer of the parameters.
        optimizer_params : dict or sequence of pairs
            Its parameters (``rescale_grad`` defaults to ``1 / batch_size``, as in Module).
        force_init : bool
            Set up again when already set up.

        Raises
        ------
        MXNetError
            Before bind and init_params; ValueError (an MXNetError) for an unknown optimizer
            name.
        """
        _require(self.binded and self.params_initialized, "init_optimizer",
                 "bind the module and initialise its parameters first")
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring...")
            return
        arg_params = self.get_params()[0]
        self._param_dict = [{name: nd.zeros(arr.shape, ctx=c, dtype=arr.dtype)
                             for name, arr in arg_params.items()} for c in self._context]
        svrg_optimizer = self._create_optimizer(_SVRGOptimizer.__name__, default_opt=optimizer,
                                                kvstore=kvstore,
                                                optimizer_params=optimizer_params)
        super().init_optimizer(kvstore=kvstore, optimizer=svrg_optimizer,
                               optimizer_params=optimizer_params, force_init=force_init)
        if self._kvstore:
            # MXNet 1.9.1 also pulls these zeros into the devices' weights when the store
            # runs the optimizer, so its first batch computed the gradient at zero weights.
            for name in self._exec_group.param_names:
                self._kvstore.init(name + _FULL_SUFFIX,
                                   nd.zeros(self._arg_params[name].shape,
                                            dtype=self._arg_params[name].dtype))

    def _create_optimizer(self, optimizer, default_opt, kvstore, optimizer_params):
        """The ``_SVRGOptimizer`` (registered name ``optimizer``) around ``default_opt``,
        with Module's ``rescale_grad`` and an index-to-name map that also names the
        full-gradient keys."""
        batch_size = self._exec_group.batch_size
        kv_store, update_on_kvstore = _create_kvstore(kvstore, self._ctx_len, self._arg_params)
        if kv_store and "dist" in kv_store.type and "_sync" in kv_store.type:
            batch_size *= kv_store.num_workers
        rescale_grad = 1.0 / batch_size

        param_names = self._exec_group.param_names
        idx2name = {}
        if update_on_kvstore:
            idx2name.update(enumerate(param_names))
        else:
            n = self._ctx_len
            for k in range(n):
                idx2name.update({i * n + k: name for i, name in enumerate(param_names)})
        # the full-gradient keys come after the parameters' indices
        for name in self._param_dict[0]:
            idx2name[max(idx2name) + 1 if idx2name else 0] = name + _FULL_SUFFIX

        if isinstance(optimizer_params, dict):
            optimizer_params = dict(optimizer_params)
        else:
            try:
                optimizer_params = dict(optimizer_params)
            except (TypeError, ValueError):
                raise MXNetValueError(f"init_optimizer: optimizer_params must be a dict or a "
                                      f"sequence of (name, value) pairs, got "
                                      f"{optimizer_params!r}") from None
        optimizer_params.setdefault("rescale_grad", rescale_grad)
        if isinstance(default_opt, str):
            # variables' lr_mult/wd_mult attributes count, as in Module (MXNet's SVRGModule
            # leaves the symbol out and ignores them)
            optimizer_params.setdefault("sym", self.symbol)
        elif isinstance(default_opt, opt.Optimizer):
            if default_opt.rescale_grad != rescale_grad:
                warnings.warn("Optimizer created manually outside Module but rescale_grad is "
                              "not normalized to 1.0/batch_size/num_workers "
                              f"({default_opt.rescale_grad} vs. {rescale_grad}). Is this "
                              "intended?", stacklevel=3)
            if not default_opt.idx2name:
                default_opt.idx2name = idx2name.copy()
        else:
            raise TypeError(f"init_optimizer: optimizer must be a str or an Optimizer, got "
                            f"{type(default_opt).__name__}")
        optimizer_params["default_optimizer"] = default_opt
        optimizer_params["param_idx2name"] = idx2name
        return opt.create(optimizer, **optimizer_params)

    # ---------------------------------------------------------------- computation
    def forward(self, data_batch, is_train=None):
        """Forward through this module, and in training through the snapshot module too.

        ``is_train=None`` means ``for_training``, for the snapshot module as well (MXNet
        1.9.1 runs the snapshot only when ``is_train`` is given as True).

        Raises
        ------
        MXNetError
            On a training forward before there is a snapshot (``update_full_grads``, which
            ``fit`` calls, takes it).
        """
        if is_train is None:
            is_train = self.for_training
        super().forward(data_batch, is_train)
        self._aux_forwarded = False
        if is_train and self._mod_aux.binded:
            _require(self._mod_aux.params_initialized, "SVRGModule.forward",
                     "there is no snapshot of the parameters yet; call "
                     "update_full_grads(train_data) before training (fit does)")
            self._mod_aux.forward(data_batch, is_train)
            self._aux_forwarded = True

    def backward(self, out_grads=None):
        """Backward through this module and, after a training forward, the snapshot."""
        super().backward(out_grads)
        if self._aux_forwarded:
            self._mod_aux.backward(out_grads)

    def update(self):
        """Replace the gradients by the SVRG gradients, then update as Module does."""
        _require(self.binded and self.params_initialized and self.optimizer_initialized,
                 "update", "bind the module, initialise its parameters and its optimizer first")
        self._update_svrg_gradients()
        super().update()

    def update_full_grads(self, train_data):
        """Take a snapshot of the parameters and average its gradients over ``train_data``.

        One pass over ``train_data`` (reset first) through the snapshot module; each batch's
        gradient is added up, and the sum is divided by the number of batches, the padding
        of the last batch counted as a fraction of a batch (as MXNet). With a KVStore the
        devices' averages are summed in the store and each device gets their mean. Every call
        starts from zero (MXNet 1.9.1 adds the previous full gradient into the new sum).

        Parameters
        ----------
        train_data : DataIter
        """
        _require(self.binded and self.params_initialized, "update_full_grads",
                 "bind the module and initialise its parameters first")
        _require(self._mod_aux.binded, "update_full_grads",
                 "the module is bound for inference; bind it with for_training=True")
        _require(self.optimizer_initialized, "update_full_grads",
                 "initialise the optimizer first (init_optimizer)")
        param_names = self._exec_group.param_names
        arg_params, aux_params = self.get_params()
        self._mod_aux.set_params(arg_params=arg_params, aux_params=aux_params)
        sums = [{name: nd.zeros(arr.shape, ctx=c, dtype=arr.dtype)
                 for name, arr in arg_params.items()} for c in self._context]
        aux_grads = self._mod_aux._exec_group.grad_arrays
        train_data.reset()
        nbatch = 0
        padding = 0
        last_batch = None
        for batch in train_data:
            self._mod_aux.forward(batch, is_train=True)
            self._mod_aux.backward()
            nbatch += 1
            for k in range(self._ctx_len):
                for index, name in enumerate(param_names):
                    grad = aux_grads[index][k]
                    if grad is not None:  # fixed parameters have none
                        sums[k][name] += grad
            padding = batch.pad or 0
            last_batch = batch
        self._aux_forwarded = False
        if nbatch == 0:
            raise MXNetValueError("update_full_grads: train_data yielded no batch")
        batch_size = getattr(train_data, "batch_size", None) or last_batch.data[0].shape[0]
        true_num_batch = nbatch - padding / batch_size
        self._param_dict = sums
        for name in param_names:
            grad_list = []
            for k in range(self._ctx_len):
                sums[k][name] /= true_num_batch
                grad_list.append(sums[k][name])
            if self._kvstore:
                self._accumulate_kvstore(name, grad_list)

    def _accumulate_kvstore(self, key, value):
        """Sum the devices' (and workers') full gradients of parameter ``key`` in the store
        (key ``<key>_full``) and give each device their mean (``_param_dict``)."""
        full_key = key + _FULL_SUFFIX
        self._kvstore.push(full_key, value)
        barrier = getattr(self._kvstore, "_barrier", None)
        if barrier is not None:
            barrier()
        self._kvstore.pull(full_key, value)
        self._allocate_gradients(key, value)

    def _allocate_gradients(self, key, value):
        """``_param_dict[i][key]`` = ``value[i]`` divided by the number of contexts."""
        for i in range(self._ctx_len):
            self._param_dict[i][key] = value[i] / self._ctx_len

    @staticmethod
    def _svrg_grads_update_rule(g_curr_batch_curr_weight, g_curr_batch_special_weight,
                                g_special_weight_all_batch):
        """In place on the first list: ``g_curr - g_snapshot + g_full``, element by element;
        returns that list."""
        for index, grad in enumerate(g_curr_batch_curr_weight):
            grad -= g_curr_batch_special_weight[index]
            grad += g_special_weight_all_batch[index]
        return g_curr_batch_curr_weight

    def _update_svrg_gradients(self):
        """Turn every context's gradients into SVRG gradients, in the executors' buffers."""
        param_names = self._exec_group.param_names
        grads = self._exec_group.grad_arrays
        aux_grads = self._mod_aux._exec_group.grad_arrays if self._mod_aux.binded else None
        if aux_grads is None:
            raise MXNetError("update: the snapshot module is not bound (bind the module with "
                             "for_training=True)")
        for k in range(self._ctx_len):
            for index, name in enumerate(param_names):
                grad = grads[index][k]
                if grad is None:  # a fixed parameter
                    continue
                self._svrg_grads_update_rule(grad, aux_grads[index][k],
                                             self._param_dict[k][name])

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Prepare both modules for ``data_batch`` (row-sparse pulls, as Module)."""
        super().prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        if self._mod_aux.binded:
            self._mod_aux.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)

    # ---------------------------------------------------------------- training loop
    # BaseModule.fit runs the loop; SVRG adds a full-gradient snapshot at the start of every
    # epoch that is a multiple of update_freq (after resetting the data), and logs the
    # epoch's local metric values, as MXNet's SVRGModule.fit does.
    def _fit_epoch_begin(self, epoch, train_data):
        if epoch % self.update_freq == 0:
            self.update_full_grads(train_data)
        train_data.reset()

    def _fit_train_metric(self, eval_metric):
        return eval_metric.get_name_value()
