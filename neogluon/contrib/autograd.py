"""``mx.contrib.autograd``: MXNet's first autograd API, kept for old scripts.

Here "training" means both recording operations for ``backward`` and running layers in
training mode; :mod:`neogluon.autograd` separates the two (``record``, ``train_mode``), and this
module is a thin layer over it.
"""
from __future__ import annotations

import functools

from .. import autograd as _ag

__all__ = ["set_is_training", "TrainingStateScope", "train_section", "test_section",
           "mark_variables", "backward", "compute_gradient", "grad_and_loss", "grad"]


def set_is_training(is_train):
    """Turn training (recording and training mode together) on or off.

    Parameters
    ----------
    is_train : bool

    Returns
    -------
    bool
        The previous recording state.
    """
    _ag.set_training(is_train)
    return _ag.set_recording(is_train)


class TrainingStateScope:
    """Scope that sets training on or off and restores the previous state on exit.

    Parameters
    ----------
    enter_state : bool
        The training state inside the scope.
    """

    def __init__(self, enter_state):
        self._enter_state = enter_state
        self._prev = None
        self._prev_train = None

    def __enter__(self):
        self._prev_train = _ag.is_training()
        self._prev = set_is_training(self._enter_state)

    def __exit__(self, ptype, value, trace):
        _ag.set_recording(self._prev)
        _ag.set_training(self._prev_train)


def train_section():
    """Scope in which operations are recorded and layers run in training mode.

    Examples
    --------
    >>> with autograd.train_section():
    ...     y = model(x)
    ...     compute_gradient([y])
    """
    return TrainingStateScope(True)


def test_section():
    """Scope (usually inside ``train_section``) in which nothing is recorded and layers run
    in inference mode."""
    return TrainingStateScope(False)


def mark_variables(variables, gradients, grad_reqs="write"):
    """Mark NDArrays as variables whose gradients ``backward`` writes into ``gradients``.

    Parameters
    ----------
    variables : list of NDArray
    gradients : list of NDArray
    grad_reqs : str or list of str
        'write', 'add' or 'null', for all variables or one each.
    """
    _ag.mark_variables(variables, gradients, grad_reqs)


def backward(outputs, out_grads=None, retain_graph=False):
    """Compute the gradients of ``outputs`` with respect to the marked variables.

    Parameters
    ----------
    outputs : list or tuple of NDArray
    out_grads : list of NDArray or None, optional
        Head gradients; ``None`` (or a ``None`` entry) means ones.
    retain_graph : bool
        Keep the graph for another ``backward``.
    """
    if not isinstance(outputs, (list, tuple)):
        raise TypeError("outputs must be a list or tuple of NDArrays, got "
                        f"{type(outputs).__name__}")
    if out_grads is not None and len(out_grads) != len(outputs):
        raise ValueError(f"outputs and out_grads must have the same length, got "
                         f"{len(outputs)} and {len(out_grads)}")
    _ag.backward(list(outputs), None if out_grads is None else list(out_grads),
                 retain_graph=retain_graph)


def compute_gradient(outputs):
    """Deprecated name of :func:`backward` (with no head gradients)."""
    backward(outputs)


def grad_and_loss(func, argnum=None):
    """Wrap ``func`` so that a call returns the gradients of its arguments and its output.

    Parameters
    ----------
    func : callable
        The forward (loss) function, on NDArrays.
    argnum : int or list of int, optional
        The positions of the arguments to differentiate (all by default).

    Returns
    -------
    callable
        ``wrapped(*args) -> (list of gradients, outputs)``.
    """
    from ..ndarray.ndarray import NDArray
    from ..ndarray import zeros_like

    @functools.wraps(func)
    def wrapped(*args):
        variables = args
        if argnum is not None:
            nums = argnum if isinstance(argnum, list) else [argnum]
            variables = [args[i] for i in nums]
        for x in variables:
            if not isinstance(x, NDArray):
                raise TypeError(f"autograd inputs must be NDArrays, got {type(x).__name__}")
        grads = [zeros_like(x) for x in variables]
        mark_variables(variables, grads)
        with train_section():
            outputs = func(*args)
        compute_gradient([outputs] if isinstance(outputs, NDArray) else outputs)
        return grads, outputs
    return wrapped


def grad(func, argnum=None):
    """Wrap ``func`` so that a call returns the gradients of its arguments.

    Parameters
    ----------
    func : callable
        The forward (loss) function, on NDArrays.
    argnum : int or list of int, optional
        The positions of the arguments to differentiate (all by default).
    """
    with_loss = grad_and_loss(func, argnum)

    @functools.wraps(with_loss)
    def wrapped(*args):
        return with_loss(*args)[0]
    return wrapped


# Names MXNet 1.9.1's module of the same path exposes (programs import them from here).
from ..base import string_types  # noqa: E402,F401
from ..ndarray import NDArray  # noqa: E402,F401
