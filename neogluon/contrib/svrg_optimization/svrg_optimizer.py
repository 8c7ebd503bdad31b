"""The two optimizers behind :class:`~.svrg_module.SVRGModule`, as MXNet 1.9.1's
``mxnet.contrib.svrg_optimization.svrg_optimizer``.

``_SVRGOptimizer`` routes each key to one of two optimizers by the parameter's name: the
full-gradient keys (``<param>_full``, where the module accumulates the average gradient of a
pass over the data, also in a KVStore) go to ``_AssignmentOptimizer``, which stores the
pushed value as it is; every other key goes to the user's optimizer. Both are registered, so
``mx.optimizer.create('_SVRGOptimizer', ...)`` works as in MXNet. They are meant for
``SVRGModule``; on their own they are only useful in a KVStore, as MXNet's tests use them.
"""
from __future__ import annotations

import neogluon as mx  # noqa: F401  (MXNet's module does `import mxnet as mx`)

from ... import optimizer as opt
from ...base import MXNetError, MXNetValueError

__all__ = ["_AssignmentOptimizer", "_SVRGOptimizer"]

# Suffix of the names under which SVRGModule keeps the full gradients.
_FULL_SUFFIX = "_full"


class _UnknownIndexError(MXNetError, KeyError):
    """A key the SVRG optimizer cannot name (MXNet raises KeyError)."""

    def __str__(self):  # KeyError would print the message quoted
        return str(self.args[0])


@opt.register
class _AssignmentOptimizer(opt.Optimizer):
    """Stores the pushed value as the weight (``weight[:] = grad``), unscaled and unclipped:
    the KVStore's sum of the pushed full gradients becomes the stored value."""

    def update(self, index, weight, grad, state):
        """Assign ``grad`` to ``weight`` in place.

        Parameters
        ----------
        index : int or str
            The key (unused).
        weight : NDArray
            The stored value, overwritten.
        grad : NDArray
            The value pushed (summed over devices and workers by the store).
        state : None
            There is no state.
        """
        weight[:] = grad

    def update_multi_precision(self, index, weight, grad, state):
        """:meth:`update` (an assignment needs no float32 master copy)."""
        self.update(index, weight, grad, state)


# The parameters of the base Optimizer, which the wrapper keeps for itself (the wrapped
# optimizer gets every parameter).
_BASE_PARAMS = ("rescale_grad", "param_idx2name", "wd", "clip_gradient", "learning_rate",
                "lr_scheduler", "sym", "begin_num_update", "multi_precision", "param_dict")


@opt.register
class _SVRGOptimizer(opt.Optimizer):
    """Sends the full-gradient keys of SVRGModule to :class:`_AssignmentOptimizer` and
    every other key to ``default_optimizer``.

    A key is an index named through ``param_idx2name`` or a name (what a KVStore with string
    keys passes). It is a full-gradient key when its name is ``<name>_full`` and ``<name>``
    is also one of the names in ``param_idx2name``; MXNet 1.9.1 takes any name that contains
    "full", so it overwrote the weights of an automatically named ``FullyConnected`` layer
    (``fullyconnected0_weight``) with their gradient.

    Parameters
    ----------
    default_optimizer : str or Optimizer
        The optimizer of the parameters: a registered name, created with all the other
        keyword arguments, or an Optimizer used as it is.
    **kwargs
        The Optimizer parameters; this wrapper keeps those of the base class
        (``rescale_grad``, ``param_idx2name``, ``learning_rate``...).
    """

    def __init__(self, default_optimizer, **kwargs):
        super().__init__(**self._check_params(**kwargs))
        if isinstance(default_optimizer, str):
            if default_optimizer.lower() not in opt.Optimizer.opt_registry:
                raise MXNetValueError(
                    f"_SVRGOptimizer: unknown optimizer {default_optimizer!r} (default_optimizer "
                    f"must be a registered name such as 'sgd' or an Optimizer)")
            self.default_opt = opt.create(default_optimizer, **kwargs)
        elif isinstance(default_optimizer, opt.Optimizer):
            self.default_opt = default_optimizer
        else:
            raise TypeError(f"_SVRGOptimizer: default_optimizer must be a str or an Optimizer, "
                            f"got {type(default_optimizer).__name__}")
        self.aux_opt = opt.create(_AssignmentOptimizer.__name__)

    @staticmethod
    def _check_params(**kwargs):
        """The entries of ``kwargs`` that the base Optimizer takes."""
        return {k: v for k, v in kwargs.items() if k in _BASE_PARAMS}

    def _check_index(self, index):
        """The name of ``index`` (a name is its own)."""
        if isinstance(index, str) and index in self.idx2name.values():
            return index
        if index in self.idx2name:
            return self.idx2name[index]
        raise _UnknownIndexError(
            f"_SVRGOptimizer: key {index!r} has no name in param_idx2name; the SVRG optimizer "
            f"tells the full-gradient keys ('<param>{_FULL_SUFFIX}') from the parameters by "
            f"name")

    def _is_full_key(self, index):
        name = self._check_index(index)
        if not name.endswith(_FULL_SUFFIX):
            return False
        return name[:-len(_FULL_SUFFIX)] in self.idx2name.values()

    def _route(self, index):
        return self.aux_opt if self._is_full_key(index) else self.default_opt

    def create_state(self, index, weight):
        """The state of the optimizer that ``index`` goes to (None for full gradients)."""
        return self._route(index).create_state(index, weight)

    def create_state_multi_precision(self, index, weight):
        """The wrapped optimizer's state, with its float32 master copy where it keeps one."""
        return self._route(index).create_state_multi_precision(index, weight)

    def update(self, index, weight, grad, state):
        """Assign a full-gradient key; update a parameter with the wrapped optimizer.

        Parameters
        ----------
        index : int or str
            The key: an index of ``param_idx2name`` or a name.
        weight : NDArray
            Updated in place.
        grad : NDArray
            The gradient (the pushed full gradient for a full-gradient key).
        state : any
            What :meth:`create_state` returned for ``index``.
        """
        self._route(index).update(index, weight, grad, state)

    def update_multi_precision(self, index, weight, grad, state):
        """:meth:`update` through the wrapped optimizer's multi-precision update."""
        self._route(index).update_multi_precision(index, weight, grad, state)
