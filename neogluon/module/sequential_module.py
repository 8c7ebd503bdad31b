"""``SequentialModule``: modules chained one after another, each one's outputs the next one's
data, as MXNet 1.x's ``mxnet.module.SequentialModule``. A convenience: one symbolic graph in
one :class:`Module` does the same work with less copying."""
from __future__ import annotations

import copy
import logging

from ..base import MXNetValueError
from ..initializer import Uniform
from .base_module import BaseModule, _require

__all__ = ["SequentialModule"]


class _ChainError(MXNetValueError, AssertionError):
    """A chain set up wrongly (MXNet asserts these; the error is both a ValueError and an
    AssertionError)."""


class SequentialModule(BaseModule):
    """Modules run in sequence: the first takes the data, each next one takes the previous
    one's outputs, and backward sends each module's input gradients to the module before it.

    Parameters
    ----------
    logger : logging.Logger or module, default logging
    """

    #: ``add(module, take_labels=True)``: the module gets the batch's labels (any module in
    #: the chain may; they all get the same labels)
    META_TAKE_LABELS = "take_labels"
    #: ``add(module, auto_wiring=True)``: the previous outputs are renamed to this module's
    #: data names, in order
    META_AUTO_WIRING = "auto_wiring"

    def __init__(self, logger=logging):
        super().__init__(logger=logger)
        self._modules = []
        self._metas = []
        self._label_shapes = None
        self._data_shapes = None
        self._meta_keys = {SequentialModule.META_TAKE_LABELS, SequentialModule.META_AUTO_WIRING}

    def add(self, module, **kwargs):
        """Append ``module`` to the chain; ``kwargs`` are its meta flags (``take_labels``,
        ``auto_wiring``). The chain must be bound and initialised again afterwards.

        Returns
        -------
        SequentialModule
            ``self``, so calls can be chained.
        """
        if not isinstance(module, BaseModule):
            raise TypeError(f"SequentialModule.add: module must be a BaseModule, got "
                            f"{type(module).__name__}")
        for key in kwargs:
            if key not in self._meta_keys:
                raise _ChainError(f'Unknown meta "{key}", a typo? SequentialModule.add takes '
                                  f"{sorted(self._meta_keys)}")
        self._modules.append(module)
        self._metas.append(kwargs)
        self.binded = False
        self.params_initialized = False
        self.optimizer_initialized = False
        return self

    def _takes_labels(self, i):
        return bool(self._metas[i].get(SequentialModule.META_TAKE_LABELS, False))

    # ---------------------------------------------------------------- properties
    @property
    def data_names(self):
        """The first module's data names."""
        return self._modules[0].data_names if self._modules else []

    @property
    def output_names(self):
        """The last module's output names."""
        return self._modules[-1].output_names if self._modules else []

    @property
    def data_shapes(self):
        """The first module's data shapes."""
        _require(self.binded, "data_shapes", "bind the module first")
        return self._modules[0].data_shapes

    @property
    def label_shapes(self):
        """The label shapes (None when no module takes labels)."""
        _require(self.binded, "label_shapes", "bind the module first")
        return self._label_shapes

    @property
    def output_shapes(self):
        """The last module's output shapes."""
        _require(self.binded, "output_shapes", "bind the module first")
        return self._modules[-1].output_shapes

    # ---------------------------------------------------------------- parameters
    def get_params(self):
        """``(arg_params, aux_params)``: every module's, merged."""
        _require(self.binded and self.params_initialized, "get_params",
                 "bind the module and initialise its parameters first")
        arg_params, aux_params = {}, {}
        for module in self._modules:
            arg, aux = module.get_params()
            arg_params.update(arg)
            aux_params.update(aux)
        return arg_params, aux_params

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialise every module's parameters; two modules may not have a parameter of
        the same name (raises ValueError)."""
        if self.params_initialized and not force_init:
            return
        _require(self.binded, "init_params", "call bind before initializing the parameters")
        for module in self._modules:
            module.init_params(initializer=initializer, arg_params=arg_params,
                               aux_params=aux_params, allow_missing=allow_missing,
                               force_init=force_init, allow_extra=allow_extra)

        def check_unique(known, names, i):
            for name in names:
                if name in known:
                    j = known[name]
                    raise _ChainError(
                        f'Duplicated parameter names: name "{name}" in layer {i} '
                        f"({type(self._modules[i]).__name__}) is already used in layer {j} "
                        f"({type(self._modules[j]).__name__}).")
                known[name] = i

        arg_names, aux_names = {}, {}
        for i, module in enumerate(self._modules):
            args, auxs = module.get_params()
            check_unique(arg_names, args.keys(), i)
            check_unique(aux_names, auxs.keys(), i)
        self.params_initialized = True

    # ---------------------------------------------------------------- binding
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Bind each module in turn: the first to ``data_shapes``, each next one to the
        previous one's output shapes; modules after the first compute their input gradients
        when training (backward needs them). Modules added with ``take_labels`` get
        ``label_shapes``."""
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if inputs_need_grad and not for_training:
            raise MXNetValueError("bind: inputs_need_grad=True needs for_training=True")
        if shared_module is not None:
            raise MXNetValueError("SequentialModule.bind: shared_module is not supported")
        if not self._modules:
            raise _ChainError("Attempting to bind an empty SequentialModule: add modules "
                              "first")
        self._label_shapes = label_shapes
        my_data_shapes = data_shapes
        anybody_needs_label = False
        for i, module in enumerate(self._modules):
            if self._takes_labels(i):
                my_label_shapes = label_shapes
                anybody_needs_label = True
            else:
                my_label_shapes = None
            my_inputs_need_grad = bool(inputs_need_grad or (for_training and i > 0))
            if self._metas[i].get(SequentialModule.META_AUTO_WIRING, False):
                data_names = module.data_names
                if len(data_names) != len(my_data_shapes):
                    raise _ChainError(
                        f"SequentialModule: auto_wiring layer {i} ({type(module).__name__}) "
                        f"has {len(data_names)} data inputs {list(data_names)} but receives "
                        f"{len(my_data_shapes)}: {[tuple(x)[:2] for x in my_data_shapes]}")
                my_data_shapes = [(new_name, tuple(desc)[1])
                                  for new_name, desc in zip(data_names, my_data_shapes)]
            module.bind(data_shapes=my_data_shapes, label_shapes=my_label_shapes,
                        for_training=for_training, inputs_need_grad=my_inputs_need_grad,
                        force_rebind=force_rebind, shared_module=None, grad_req=grad_req)
            my_data_shapes = module.output_shapes
        if not anybody_needs_label:
            self._label_shapes = None
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.binded = True

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """Set up an optimizer in every module."""
        _require(self.binded and self.params_initialized, "init_optimizer",
                 "bind the module and initialise its parameters first")
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring.")
            return
        for module in self._modules:
            module.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                                  optimizer_params=optimizer_params, force_init=force_init)
        self.optimizer_initialized = True

    # ---------------------------------------------------------------- computation
    def forward(self, data_batch, is_train=None):
        """Run the modules in order, each on the previous one's outputs (and the batch's
        labels)."""
        _require(self.binded and self.params_initialized, "forward",
                 "bind the module and initialise its parameters first")
        # a shallow copy keeps the batch's other fields (bucket_key, pad...) for every module
        data_batch = copy.copy(data_batch)
        provide_label = getattr(data_batch, "provide_label", None)
        for i, module in enumerate(self._modules):
            # provide_label would make a module bound without labels re-shape to them
            data_batch.provide_label = provide_label if self._takes_labels(i) else None
            module.forward(data_batch, is_train=is_train)
            if i + 1 == len(self._modules):
                break
            data_batch.data = module.get_outputs()
            if self._metas[i + 1].get(SequentialModule.META_AUTO_WIRING, False):
                names = list(self._modules[i + 1].data_names)
            else:
                names = [x[0] for x in module.output_shapes]
            if len(names) != len(data_batch.data):
                raise _ChainError(f"SequentialModule: layer {i} ({type(module).__name__}) "
                                  f"gave {len(data_batch.data)} outputs for {len(names)} "
                                  f"names {names}")
            # the next module may re-shape (a smaller last batch): describe what it gets
            data_batch.provide_data = [(name, x.shape) for name, x in
                                       zip(names, data_batch.data)]

    def backward(self, out_grads=None):
        """Backward through the modules in reverse, each one's input gradients the out_grads
        of the module before it."""
        _require(self.binded and self.params_initialized, "backward",
                 "bind the module and initialise its parameters first")
        for i in range(len(self._modules) - 1, -1, -1):
            module = self._modules[i]
            module.backward(out_grads=out_grads)
            if i == 0:
                break
            out_grads = module.get_input_grads()

    def update(self):
        """Update every module's parameters."""
        _require(self.binded and self.params_initialized and self.optimizer_initialized,
                 "update", "bind the module, initialise its parameters and its optimizer first")
        for module in self._modules:
            module.update()

    def get_outputs(self, merge_multi_context=True):
        """The last module's outputs."""
        _require(self.binded and self.params_initialized, "get_outputs",
                 "bind the module and initialise its parameters first")
        return self._modules[-1].get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """The first module's input gradients (bind with ``inputs_need_grad=True``)."""
        _require(self.binded and self.params_initialized and self.inputs_need_grad,
                 "get_input_grads", "bind with inputs_need_grad=True and initialise the "
                 "parameters first")
        return self._modules[0].get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Accumulate ``eval_metric`` in every module added with ``take_labels``."""
        _require(self.binded and self.params_initialized, "update_metric",
                 "bind the module and initialise its parameters first")
        for i, module in enumerate(self._modules):
            if self._takes_labels(i):
                module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        """Install ``mon`` in every module."""
        _require(self.binded, "install_monitor", "bind the module first")
        for module in self._modules:
            module.install_monitor(mon)
