"""``mx.init``: weight initializers, with MXNet 1.x's names, defaults and dispatch rules.

Random initializers draw from neogluon's seeded generators (``mx.random.seed``), on the device of
the array they fill. The numbers therefore differ from MXNet's (a different random engine) while
the distributions, bounds and deterministic initializers are the same.
"""
from __future__ import annotations

import json
import logging
import math
import re
import warnings

import numpy as np
import torch

from .base import MXNetError, string_types
from . import random as _random

__all__ = ["InitDesc", "Initializer", "register", "alias", "create", "Load", "Mixed", "Zero",
           "One", "Constant", "Uniform", "Normal", "Orthogonal", "Xavier", "MSRAPrelu",
           "Bilinear", "LSTMBias", "FusedRNN"]

_REGISTRY: dict = {}


class InitDesc(str):
    """A parameter's name, carrying the attributes that steer its initialisation.

    Parameters
    ----------
    name : str
        Name of the parameter.
    attrs : dict, optional
        Attributes; ``attrs['__init__']`` names the initializer chosen for this parameter.
    global_init : Initializer, optional
        The initializer the whole model is initialised with.
    """

    def __new__(cls, name, attrs=None, global_init=None):
        obj = super().__new__(cls, name)
        obj.attrs = attrs or {}
        obj.global_init = global_init
        return obj


def _tensor(arr):
    from .ndarray.ndarray import NDArray
    if not isinstance(arr, NDArray):
        raise TypeError(f"an initializer fills an NDArray, got {type(arr).__name__}")
    return arr._t


def _fill_from(arr, values):
    """Write ``values`` (tensor or numpy) into ``arr`` in place, outside any graph."""
    t = _tensor(arr)
    with torch.no_grad():
        if isinstance(values, np.ndarray):
            values = torch.from_numpy(np.ascontiguousarray(values))
        if isinstance(values, torch.Tensor):
            t.copy_(values.reshape(t.shape).to(device=t.device, dtype=t.dtype))
        else:
            t.fill_(values)


def _uniform(arr, low, high):
    t = _tensor(arr)
    gen = _random.generator(t.device)
    with torch.no_grad():
        if t.is_floating_point():
            t.uniform_(low, high, generator=gen)
        else:
            tmp = torch.empty(t.shape, dtype=torch.float32, device=t.device)
            tmp.uniform_(low, high, generator=gen)
            t.copy_(tmp)


def _normal(arr, mean, std):
    t = _tensor(arr)
    gen = _random.generator(t.device)
    with torch.no_grad():
        if t.is_floating_point():
            t.normal_(mean, std, generator=gen)
        else:
            tmp = torch.empty(t.shape, dtype=torch.float32, device=t.device)
            tmp.normal_(mean, std, generator=gen)
            t.copy_(tmp)


class Initializer:
    """Base class of the initializers.

    Subclasses implement ``_init_weight(name, arr)``; calling an initializer with an
    :class:`InitDesc` and an NDArray fills the array in place.
    """

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._verbose = False
        self._print_func = None

    def set_verbosity(self, verbose=False, print_func=None):
        """Log (at INFO level) a statistic of each array this initializer fills.

        Parameters
        ----------
        verbose : bool
            Whether to log.
        print_func : callable, optional
            Maps an NDArray to the string logged; defaults to its mean absolute value.
        """
        self._verbose = verbose
        if print_func is None:
            def print_func(x):
                return str(float(x._t.detach().abs().float().mean()))
        self._print_func = print_func
        return self

    def _verbose_print(self, desc, init, arr):
        if self._verbose and self._print_func:
            logging.info("Initialized %s as %s: %s", desc, init, self._print_func(arr))

    def dumps(self):
        """A JSON string ``[name, kwargs]`` that :func:`create` turns back into this initializer.

        Examples
        --------
        >>> mx.init.Xavier().dumps()
        '["xavier", {"rnd_type": "uniform", "factor_type": "avg", "magnitude": 3}]'
        """
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __call__(self, desc, arr):
        """Fill ``arr`` according to ``desc``.

        When ``desc.attrs['__init__']`` names an initializer, that one's ``_init_weight`` fills
        the array; otherwise the name's suffix chooses (weight, bias, gamma, beta, min, max).
        A sparse array gets every row (MXNet fills it densely).
        """
        if getattr(arr, "stype", "default") != "default":
            from .ndarray.ndarray import zeros
            dense = zeros(arr.shape, ctx=arr.context, dtype=arr.dtype)
            self(desc, dense)
            arr[:] = dense
            return
        if not isinstance(desc, InitDesc):
            self._legacy_init(desc, arr)
            return
        if desc.global_init is None:
            desc.global_init = self
        init = desc.attrs.get("__init__", "")
        if init:
            chosen = create(init)
            if isinstance(chosen, Mixed):
                chosen(str(desc), arr)
            else:
                chosen._init_weight(desc, arr)
            self._verbose_print(desc, init, arr)
            return
        for suffix, method in (("weight", self._init_weight), ("bias", self._init_bias),
                               ("gamma", self._init_gamma), ("beta", self._init_beta),
                               ("min", self._init_zero), ("max", self._init_one)):
            if desc.endswith(suffix):
                method(desc, arr)
                self._verbose_print(desc, suffix, arr)
                return
        self._init_default(desc, arr)

    def _legacy_init(self, name, arr):
        warnings.warn("Calling initializer with init(str, NDArray) has been deprecated."
                      "please use init(mx.init.InitDesc(...), NDArray) instead.",
                      DeprecationWarning, stacklevel=3)
        if not isinstance(name, string_types):
            raise TypeError("name must be string")
        from .ndarray.ndarray import NDArray
        if not isinstance(arr, NDArray):
            raise TypeError("arr must be NDArray")
        table = (("bias", self._init_bias), ("gamma", self._init_gamma),
                 ("beta", self._init_beta), ("weight", self._init_weight),
                 ("moving_mean", self._init_zero), ("moving_var", self._init_one),
                 ("moving_inv_var", self._init_zero), ("moving_avg", self._init_zero),
                 ("min", self._init_zero), ("max", self._init_one))
        if name.startswith("upsampling"):
            self._init_bilinear(name, arr)
            return
        for suffix, method in table:
            if name.endswith(suffix):
                method(name, arr)
                return
        self._init_default(name, arr)

    def _init_bilinear(self, _, arr):
        _fill_from(arr, _bilinear_kernel(arr.shape))

    def _init_zero(self, _, arr):
        _fill_from(arr, 0.0)

    def _init_one(self, _, arr):
        _fill_from(arr, 1.0)

    def _init_bias(self, _, arr):
        _fill_from(arr, 0.0)

    def _init_gamma(self, _, arr):
        _fill_from(arr, 1.0)

    def _init_beta(self, _, arr):
        _fill_from(arr, 0.0)

    def _init_weight(self, name, arr):
        raise NotImplementedError("Must override it")

    def _init_default(self, name, _):
        raise ValueError(
            f"Unknown initialization pattern for {name}. Default initialization is now limited "
            'to "weight", "bias", "gamma" (1.0), and "beta" (0.0). Please give the Parameter '
            "an init=mx.init.* to set its initialization pattern")

    def __eq__(self, other):
        if not isinstance(other, Initializer):
            return NotImplemented
        return type(self) is type(other) and self._kwargs == other._kwargs

    def __hash__(self):
        return id(self)


def register(klass):
    """Register an Initializer subclass so that :func:`create` finds it by its lower-case name.

    Parameters
    ----------
    klass : type
        A subclass of :class:`Initializer`.
    """
    if not (isinstance(klass, type) and issubclass(klass, Initializer)):
        raise TypeError(f"can only register subclasses of Initializer, got {klass!r}")
    name = klass.__name__.lower()
    if name in _REGISTRY and _REGISTRY[name] is not klass:
        warnings.warn(f"New initializer {klass.__module__}.{klass.__name__} is overriding "
                      f"existing initializer {name}", UserWarning, stacklevel=2)
    _REGISTRY[name] = klass
    return klass


def alias(*aliases):
    """Decorator registering extra names for an initializer class."""
    def reg(klass):
        for a in aliases:
            _REGISTRY[a.lower()] = klass
        return klass
    return reg


def create(init, *args, **kwargs):
    """An initializer from an instance, a registered name, or a :meth:`Initializer.dumps` string.

    Parameters
    ----------
    init : Initializer, Mixed, str
        ``mx.init.Xavier()``, ``'xavier'``, ``'zeros'`` or ``'["xavier", {"magnitude": 2}]'``.
    """
    if isinstance(init, (Initializer, Mixed)):
        if args or kwargs:
            raise ValueError(f"{init!r} is already an initializer; extra arguments are not "
                             "accepted")
        return init
    if not isinstance(init, string_types):
        raise TypeError(f"initializer must be an Initializer or a string, got "
                        f"{type(init).__name__}")
    if init.startswith("["):
        if args or kwargs:
            raise ValueError("a JSON initializer string cannot take extra arguments")
        try:
            name, kwargs = json.loads(init)
        except (ValueError, TypeError) as err:
            raise ValueError(f"cannot parse initializer description {init!r}: {err}") from None
        init = name
    klass = _REGISTRY.get(init.lower())
    if klass is None:
        raise ValueError(f"Cannot find initializer {init!r}. Registered ones are: "
                         f"{', '.join(sorted(_REGISTRY))}")
    return klass(*args, **kwargs)


class Load:
    """Initialise from a dict of arrays or a parameter file (``arg:``/``aux:`` prefixes dropped).

    Parameters
    ----------
    param : str or dict of str to NDArray
        File written by ``nd.save`` or a dict.
    default_init : Initializer, optional
        Used for names that ``param`` lacks.
    verbose : bool
        Log where each array came from.
    """

    def __init__(self, param, default_init=None, verbose=False):
        if isinstance(param, str):
            from .ndarray import load as _load
            param = _load(param)
        if not isinstance(param, dict):
            raise TypeError("Load expects a dict of arrays or a file holding one")
        self.param = {(k[4:] if k.startswith(("arg:", "aux:")) else k): v
                      for k, v in param.items()}
        self.default_init = default_init
        self.verbose = verbose

    def __call__(self, name, arr):
        if name in self.param:
            src = self.param[name]
            if tuple(arr.shape) != tuple(src.shape):
                raise AssertionError(
                    f"Parameter {name} cannot be initialized from loading. Shape mismatch, "
                    f"target {arr.shape} vs loaded {src.shape}")
            _fill_from(arr, src._t)
            if self.verbose:
                logging.info("Initialized %s by loading", name)
            return
        if self.default_init is None:
            raise AssertionError(f"Cannot Initialize {name}. Not found in loaded param and no "
                                 "default Initializer is provided.")
        self.default_init(name, arr)
        if self.verbose:
            logging.info("Initialized %s by default", name)


class Mixed:
    """Initialise each parameter with the first initializer whose pattern matches its name.

    Parameters
    ----------
    patterns : list of str
        Regular expressions, tried in order with ``re.match``.
    initializers : list of Initializer
        One initializer per pattern.

    Notes
    -----
    neogluon also accepts a Mixed in ``Block.initialize``; MXNet 1.9.1 rejects it there.
    """

    def __init__(self, patterns, initializers):
        if len(patterns) != len(initializers):
            raise ValueError(f"Mixed needs one initializer per pattern, got {len(patterns)} "
                             f"patterns and {len(initializers)} initializers")
        self.map = list(zip([re.compile(p) for p in patterns],
                            [create(i) for i in initializers]))

    def __call__(self, name, arr):
        for prog, init in self.map:
            if prog.match(name):
                if isinstance(name, InitDesc):
                    init(InitDesc(str(name), global_init=name.global_init), arr)
                else:
                    init(InitDesc(name), arr)
                return
        raise ValueError(f"Parameter name {name} did not match any pattern. Consider add a "
                         '".*" pattern at the and with default Initializer.')

    def _init_weight(self, name, arr):
        self(name, arr)


@register
@alias("zeros")
class Zero(Initializer):
    """Fills with zeros."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        _fill_from(arr, 0.0)


@register
@alias("ones")
class One(Initializer):
    """Fills with ones."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        _fill_from(arr, 1.0)


@register
class Constant(Initializer):
    """Fills with a value: a scalar, or an array broadcastable to the parameter's shape.

    Parameters
    ----------
    value : float or array-like or NDArray
    """

    def __init__(self, value):
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, _, arr):
        v = self.value
        t = _tensor(arr)
        if np.isscalar(v):
            _fill_from(arr, float(v) if t.is_floating_point() else v)
            return
        src = v._t if hasattr(v, "_t") else torch.as_tensor(np.asarray(v))
        try:
            src = torch.broadcast_to(src.detach().to(t.device, t.dtype), t.shape)
        except RuntimeError:
            raise MXNetError(f"Constant initializer: value of shape {tuple(src.shape)} cannot "
                             f"fill a parameter of shape {tuple(t.shape)}") from None
        _fill_from(arr, src)

    def dumps(self):
        """``'["constant", {"value": ...}]'``; an array value is written as nested lists.

        As in MXNet, the array value in ``_kwargs`` is replaced by its list form (the
        initializer itself keeps filling with ``self.value``).
        """
        val = self._kwargs["value"]
        if not np.isscalar(val):
            if isinstance(val, np.ndarray):
                val = val.tolist()
            elif hasattr(val, "asnumpy"):
                val = val.asnumpy().tolist()
            elif isinstance(val, tuple):
                val = list(val)
            self._kwargs["value"] = val
        return json.dumps([type(self).__name__.lower(), self._kwargs])


@register
class Uniform(Initializer):
    """Uniform random values in ``[-scale, scale]``.

    Parameters
    ----------
    scale : float, default 0.07
    """

    def __init__(self, scale=0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _, arr):
        _uniform(arr, -self.scale, self.scale)


@register
class Normal(Initializer):
    """Normal random values with mean 0 and standard deviation ``sigma``.

    Parameters
    ----------
    sigma : float, default 0.01
    """

    def __init__(self, sigma=0.01):
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _, arr):
        _normal(arr, 0.0, self.sigma)


@register
class Orthogonal(Initializer):
    """An orthogonal matrix (rows or columns), times ``scale`` (Saxe et al., 2013).

    Parameters
    ----------
    scale : float, default 1.414
    rand_type : {'uniform', 'normal'}
        Distribution of the random matrix that is orthogonalised.
    """

    def __init__(self, scale=1.414, rand_type="uniform"):
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale = scale
        self.rand_type = rand_type

    def _init_weight(self, _, arr):
        nout = arr.shape[0]
        nin = int(np.prod(arr.shape[1:]))
        gen = _random.generator(torch.device("cpu"))
        if self.rand_type == "uniform":
            tmp = torch.empty((nout, nin), dtype=torch.float64).uniform_(-1.0, 1.0, generator=gen)
        elif self.rand_type == "normal":
            tmp = torch.empty((nout, nin), dtype=torch.float64).normal_(0.0, 1.0, generator=gen)
        else:
            raise ValueError(f"Orthogonal: unknown rand_type {self.rand_type!r}; expected "
                             "'uniform' or 'normal'")
        u, _, v = np.linalg.svd(tmp.numpy(), full_matrices=False)
        res = u if u.shape == tmp.shape else v
        _fill_from(arr, self.scale * res.reshape(arr.shape))


@register
class Xavier(Initializer):
    """Xavier/Glorot initialisation.

    The scale is ``sqrt(magnitude / factor)`` where ``factor`` is the fan-in, the fan-out or
    their average (``factor_type``); values are uniform in ``[-scale, scale]`` or normal with
    standard deviation ``scale`` (``rnd_type``).

    Parameters
    ----------
    rnd_type : {'uniform', 'gaussian'}
    factor_type : {'avg', 'in', 'out'}
    magnitude : float, default 3
    """

    def __init__(self, rnd_type="uniform", factor_type="avg", magnitude=3):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _init_weight(self, name, arr):
        shape = arr.shape
        if len(shape) < 2:
            raise ValueError(f"Xavier initializer cannot be applied to vector {name}. It "
                             "requires at least 2D.")
        hw_scale = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * hw_scale, shape[0] * hw_scale
        if self.factor_type == "avg":
            factor = (fan_in + fan_out) / 2.0
        elif self.factor_type == "in":
            factor = fan_in
        elif self.factor_type == "out":
            factor = fan_out
        else:
            raise ValueError("Incorrect factor type")
        scale = math.sqrt(self.magnitude / factor)
        if self.rnd_type == "uniform":
            _uniform(arr, -scale, scale)
        elif self.rnd_type == "gaussian":
            _normal(arr, 0.0, scale)
        else:
            raise ValueError("Unknown random type")


@register
class MSRAPrelu(Xavier):
    """He/MSRA initialisation: Gaussian Xavier with magnitude ``2 / (1 + slope**2)``.

    Parameters
    ----------
    factor_type : {'avg', 'in', 'out'}
    slope : float, default 0.25
        Initial slope of the PReLU that follows.
    """

    def __init__(self, factor_type="avg", slope=0.25):
        super().__init__("gaussian", factor_type, 2.0 / (1 + slope ** 2))
        self._kwargs = {"factor_type": factor_type, "slope": slope}


def _bilinear_kernel(shape):
    if len(shape) != 4:
        raise ValueError(f"Bilinear initializer needs a 4-D weight, got shape {tuple(shape)}")
    f = math.ceil(shape[3] / 2.0)
    c = (2 * f - 1 - f % 2) / (2.0 * f)
    x = np.arange(shape[3], dtype=np.float64)
    y = np.arange(shape[2], dtype=np.float64)
    k = np.outer(1 - np.abs(y / f - c), 1 - np.abs(x / f - c)).astype(np.float32)
    return np.broadcast_to(k, shape).copy()


@register
class Bilinear(Initializer):
    """Bilinear-upsampling kernels, for the weight of a transposed convolution."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        _fill_from(arr, _bilinear_kernel(arr.shape))


@register
class LSTMBias(Initializer):
    """Zeros, except the forget gate's quarter (the second of four), set to ``forget_bias``.

    Parameters
    ----------
    forget_bias : float, default 1.0
    """

    def __init__(self, forget_bias=1.0):
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, name, arr):
        t = _tensor(arr)
        n = int(arr.shape[0] / 4)
        with torch.no_grad():
            t.zero_()
            t[n:2 * n] = self.forget_bias


@register
class FusedRNN(Initializer):
    """Initialises the flat parameter vector of a fused RNN layer piece by piece.

    The vector holds, as cuDNN lays it out (MXNet's ``FusedRNNCell``), every layer's and
    direction's input-to-hidden and hidden-to-hidden weights gate by gate, then all the
    biases in the same order. Each weight is filled by ``init`` (the model's initializer when
    None) as a parameter named like ``l0_i2h_i_weight``; biases are filled the same way
    (zeros for the stock initializers), except an LSTM's forget-gate biases, which are set to
    ``forget_bias``.

    Parameters
    ----------
    init : Initializer or str or None
        Initializer of the unpacked weights (a JSON string from ``dumps`` is accepted).
    num_hidden : int
    num_layers : int
    mode : {'rnn_relu', 'rnn_tanh', 'lstm', 'gru'}
    bidirectional : bool, default False
    forget_bias : float, default 1.0
    """

    _GATES = {"rnn_relu": [""], "rnn_tanh": [""], "lstm": ["_i", "_f", "_c", "_o"],
              "gru": ["_r", "_z", "_o"]}

    def __init__(self, init, num_hidden, num_layers, mode, bidirectional=False,
                 forget_bias=1.0):
        if isinstance(init, string_types):
            init = create(init)
        if mode not in self._GATES:
            raise ValueError(f"FusedRNN: mode must be one of {sorted(self._GATES)}, got "
                             f"{mode!r}")
        super().__init__(init=init.dumps() if init is not None else None,
                         num_hidden=num_hidden, num_layers=num_layers, mode=mode,
                         bidirectional=bidirectional, forget_bias=forget_bias)
        self._init = init
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._forget_bias = forget_bias

    def _pieces(self, size):
        """(name, offset, shape) of every piece of a flat vector of ``size`` values."""
        gates = self._GATES[self._mode]
        dirs = ["l", "r"] if self._bidirectional else ["l"]
        b, m, h, layers = len(dirs), len(gates), self._num_hidden, self._num_layers
        per_first = size - (layers - 1) * b * m * h * (b * h + h + 2)
        num_input, rem = divmod(per_first, b * m * h)
        num_input -= h + 2
        if rem or num_input <= 0:
            raise MXNetError(
                f"FusedRNN initializer: a parameter of {size} values does not fit a "
                f"{layers}-layer {'bidirectional ' if b == 2 else ''}{self._mode} with "
                f"num_hidden={h}")
        pieces, p = [], 0
        for layer in range(layers):
            width = num_input if layer == 0 else b * h
            for d in dirs:
                for kind, cols in (("i2h", width), ("h2h", h)):
                    for g in gates:
                        pieces.append((f"{d}{layer}_{kind}{g}_weight", p, (h, cols)))
                        p += h * cols
        for layer in range(layers):
            for d in dirs:
                for kind in ("i2h", "h2h"):
                    for g in gates:
                        pieces.append((f"{d}{layer}_{kind}{g}_bias", p, (h,)))
                        p += h
        return pieces

    def _init_weight(self, desc, arr):
        from .ndarray.ndarray import _new
        t = _tensor(arr)
        flat = t.reshape(-1)
        global_init = getattr(desc, "global_init", None)
        with torch.no_grad():
            for name, offset, shape in self._pieces(flat.numel()):
                n = int(np.prod(shape))
                piece = _new(torch.zeros(shape, dtype=t.dtype, device=t.device), arr.context)
                sub = InitDesc(name, global_init=global_init)
                if self._mode == "lstm" and name.endswith("_f_bias"):
                    piece._t.fill_(self._forget_bias)
                elif self._init is not None:
                    self._init(sub, piece)
                elif global_init is not None:
                    global_init(sub, piece)
                else:
                    raise MXNetError("FusedRNN initializer: init is None and no global "
                                     "initializer was given to fall back on")
                flat[offset:offset + n] = piece._t.reshape(-1)


def load(fname):
    """``nd.load`` (MXNet's initializer module re-exports it as ``mx.init.load``)."""
    from .ndarray import load as _nd_load
    return _nd_load(fname)


# Names MXNet 1.9.1's module of the same path exposes (programs import them from here).
from . import ndarray, random, registry  # noqa: E402,F401
from .ndarray import NDArray  # noqa: E402,F401
from .util import is_np_array  # noqa: E402,F401
