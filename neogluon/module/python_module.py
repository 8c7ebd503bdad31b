"""Modules written in Python, as MXNet 1.x's ``mxnet.module.python_module``:
``PythonModule`` gives the module interface with do-nothing parameter, optimizer and update
methods, and ``PythonLossModule`` is a loss at the end of a :class:`SequentialModule` whose
gradient comes from a Python function."""
from __future__ import annotations

import logging

from .. import ndarray as nd
from ..base import MXNetValueError
from ..initializer import Uniform
from .base_module import BaseModule, _require

__all__ = ["PythonModule", "PythonLossModule"]


class _PythonModuleError(MXNetValueError, AssertionError):
    """Bad arguments to a Python module (MXNet asserts these; the error is both a ValueError
    and an AssertionError)."""


def _desc_name(desc):
    return desc.name if hasattr(desc, "name") else tuple(desc)[0]


def _desc_shape(desc):
    return tuple(desc.shape) if hasattr(desc, "shape") else tuple(tuple(desc)[1])


class PythonModule(BaseModule):
    """A module implemented in Python: subclasses write ``forward``, ``backward``,
    ``get_outputs``, ``get_input_grads`` and ``_compute_output_shapes``; the parameter,
    optimizer and update methods do nothing unless overridden.

    Parameters
    ----------
    data_names : list of str
    label_names : list of str or None
        None for a module that takes no labels.
    output_names : list of str
    logger : logging.Logger or module, default logging
    """

    def __init__(self, data_names, label_names, output_names, logger=logging):
        super().__init__(logger=logger)
        self._data_names = list(data_names)
        self._label_names = list(label_names) if label_names is not None else None
        self._output_names = list(output_names)
        self._data_shapes = None
        self._label_shapes = None
        self._output_shapes = None

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
        return self._data_shapes

    @property
    def label_shapes(self):
        return self._label_shapes

    @property
    def output_shapes(self):
        return self._output_shapes

    # ---------------------------------------------------------------- parameters
    def get_params(self):
        """No parameters: ``({}, {})``."""
        return {}, {}

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Nothing to initialise (marks the module initialised)."""
        self.params_initialized = True

    def update(self):
        """Nothing to update."""

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Evaluate the outputs against ``labels`` (nothing when bound without labels)."""
        if self._label_shapes is None:
            return
        if pre_sliced:
            raise MXNetValueError("PythonModule does not support pre-sliced labels")
        eval_metric.update(labels, self.get_outputs())

    # ---------------------------------------------------------------- set-up
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Record the input shapes and compute the output shapes
        (``_compute_output_shapes``); only ``grad_req='write'`` is supported."""
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if grad_req != "write":
            raise _PythonModuleError(f"Python module only support write gradient, got "
                                     f"grad_req={grad_req!r}")
        data_names = [_desc_name(x) for x in data_shapes]
        if data_names != self._data_names:
            raise _PythonModuleError(f"{type(self).__name__}.bind: data_shapes name "
                                     f"{data_names} but the module's data names are "
                                     f"{self._data_names}")
        if label_shapes is not None:
            label_names = [_desc_name(x) for x in label_shapes]
            if self._label_names is None or label_names != self._label_names:
                raise _PythonModuleError(f"{type(self).__name__}.bind: label_shapes name "
                                         f"{label_names} but the module's label names are "
                                         f"{self._label_names}")
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._data_shapes = data_shapes
        self._label_shapes = label_shapes
        self._output_shapes = self._compute_output_shapes()
        self.binded = True

    def _compute_output_shapes(self):
        """``[(name, shape)]`` of the outputs, from ``self._data_shapes`` and
        ``self._label_shapes`` (subclasses implement it)."""
        raise NotImplementedError(f"{type(self).__name__} must implement "
                                  "_compute_output_shapes")

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """No optimizer needed (marks it initialised)."""
        self.optimizer_initialized = True

    def install_monitor(self, mon):
        """No executors to monitor."""
        raise NotImplementedError(f"{type(self).__name__} has no executors to monitor")


class PythonLossModule(PythonModule):
    """A loss written in Python: its output is its input (the scores), and backward gives
    ``grad_func(scores, labels)`` as the gradient of the scores.

    Parameters
    ----------
    name : str, default 'pyloss'
        The output is named ``name + '_output'``.
    data_names : list of one str, default ('data',)
    label_names : list of one str, default ('softmax_label',)
    logger : logging.Logger or module, default logging
    grad_func : callable, optional
        ``grad_func(scores, labels)`` returns the gradient of the loss with respect to the
        scores (an NDArray or a numpy array). Without it, subclasses override
        ``_backward_impl``.
    """

    def __init__(self, name="pyloss", data_names=("data",), label_names=("softmax_label",),
                 logger=logging, grad_func=None):
        if len(data_names) != 1 or len(label_names) != 1:
            raise _PythonModuleError(f"PythonLossModule takes one data and one label name, got "
                                     f"data_names={list(data_names)}, "
                                     f"label_names={list(label_names)}")
        if grad_func is not None and not callable(grad_func):
            raise TypeError(f"PythonLossModule: grad_func must be callable, got "
                            f"{type(grad_func).__name__}")
        super().__init__(data_names, label_names, [name + "_output"], logger=logger)
        self._name = name
        self._scores = None
        self._labels = None
        self._scores_grad = None
        self._grad_func = grad_func

    def _compute_output_shapes(self):
        return [(self._name + "_output", _desc_shape(self._data_shapes[0]))]

    def forward(self, data_batch, is_train=None):
        """Keep the scores (``data_batch.data[0]``) and, when training, the labels."""
        self._scores = data_batch.data[0]
        if is_train is None:
            is_train = self.for_training
        if is_train:
            if not data_batch.label:
                raise MXNetValueError(f"{type(self).__name__}.forward: training needs the "
                                      "batch's labels (data_batch.label is empty)")
            self._labels = data_batch.label[0]

    def get_outputs(self, merge_multi_context=True):
        """``[scores]``: the loss module passes its input through."""
        if merge_multi_context is not True:
            raise MXNetValueError("PythonLossModule runs on one context: merge_multi_context "
                                  "must be True")
        return [self._scores]

    def backward(self, out_grads=None):
        """Compute the gradient of the scores (``grad_func``)."""
        if out_grads is not None:
            raise MXNetValueError("For a loss module, out_grads should be None")
        _require(self.for_training, "backward", "bind with for_training=True")
        self._backward_impl()

    def _backward_impl(self):
        """Set ``self._scores_grad`` from ``self._scores`` and ``self._labels``: by
        ``grad_func`` when given (subclasses may override this instead)."""
        if self._grad_func is None:
            raise NotImplementedError(f"{type(self).__name__} {self._name!r}: pass grad_func= "
                                      "or override _backward_impl to compute the gradient")
        grad = self._grad_func(self._scores, self._labels)
        if not isinstance(grad, nd.NDArray):
            grad = nd.array(grad)
        self._scores_grad = grad

    def get_input_grads(self, merge_multi_context=True):
        """``[gradient of the scores]`` from the last backward."""
        if merge_multi_context is not True:
            raise MXNetValueError("PythonLossModule runs on one context: merge_multi_context "
                                  "must be True")
        return [self._scores_grad]
