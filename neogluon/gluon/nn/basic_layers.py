"""Basic layers: containers, Dense, Dropout, normalisation, Embedding, Flatten, Lambda."""
from __future__ import annotations

import warnings

import numpy as np

from ... import ndarray as _nd
from ..block import Block, HybridBlock, _indent

__all__ = ["Sequential", "HybridSequential", "Dense", "Dropout", "Embedding", "BatchNorm",
           "BatchNormReLU",
           "InstanceNorm", "LayerNorm", "GroupNorm", "Flatten", "Lambda", "HybridLambda",
           "Identity", "Concatenate", "HybridConcatenate"]


def _seq_repr(self):
    modstr = "\n".join(f"  ({key}): {_indent(repr(block), 2)}"
                       for key, block in self._children.items())
    return f"{type(self).__name__}(\n{modstr}\n)"


def _seq_getitem(self, key):
    layers = list(self._children.values())[key]
    if isinstance(layers, list):
        net = type(self)(prefix=self._prefix)
        with net.name_scope():
            net.add(*layers)
        return net
    return layers


class Sequential(Block):
    """Runs its children one after the other.

    Examples
    --------
    >>> net = nn.Sequential()
    >>> with net.name_scope():
    ...     net.add(nn.Dense(10, activation='relu'))
    ...     net.add(nn.Dense(20))
    """
    _np_passthrough = True
    _np_container = True

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def add(self, *blocks):
        """Append blocks to the stack."""
        for block in blocks:
            self.register_child(block)

    def forward(self, x):
        for block in self._children.values():
            x = block(x)
        return x

    __repr__ = _seq_repr
    __getitem__ = _seq_getitem

    def __len__(self):
        return len(self._children)

    def hybridize(self, active=True, **kwargs):
        """Hybridize the HybridBlock children; warns when all of them are HybridBlocks."""
        if self._children and all(isinstance(c, HybridBlock) for c in self._children.values()):
            warnings.warn(f"All children of this Sequential layer '{self.prefix}' are "
                          "HybridBlocks. Consider using HybridSequential for the best "
                          "performance.", stacklevel=2)
        super().hybridize(active, **kwargs)


class HybridSequential(HybridBlock):
    """Runs its HybridBlock children one after the other; can be hybridized."""
    _np_passthrough = True
    _np_container = True

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def add(self, *blocks):
        """Append blocks to the stack."""
        for block in blocks:
            self.register_child(block)

    def hybrid_forward(self, F, x):
        for block in self._children.values():
            x = block(x)
        return x

    __repr__ = _seq_repr
    __getitem__ = _seq_getitem

    def __len__(self):
        return len(self._children)


class Dense(HybridBlock):
    """Fully connected layer: ``activation(dot(x, weight.T) + bias)``.

    Parameters
    ----------
    units : int
        Output size.
    activation : str, optional
        Activation applied to the output (an :class:`Activation` child named
        ``<prefix><activation>_``).
    use_bias : bool, default True
    flatten : bool, default True
        Flatten all input axes but the first; otherwise apply to the last axis only.
    dtype : str, default 'float32'
    weight_initializer, bias_initializer : Initializer or str
        ``bias_initializer`` defaults to 'zeros'.
    in_units : int, default 0
        Input size; 0 infers it on the first forward.
    """

    def __init__(self, units, activation=None, use_bias=True, flatten=True, dtype="float32",
                 weight_initializer=None, bias_initializer="zeros", in_units=0, **kwargs):
        super().__init__(**kwargs)
        self._flatten = flatten
        with self.name_scope():
            self._units = units
            self._in_units = in_units
            self.weight = self.params.get("weight", shape=(units, in_units),
                                          init=weight_initializer, dtype=dtype,
                                          allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get("bias", shape=(units,), init=bias_initializer,
                                            dtype=dtype, allow_deferred_init=True)
            else:
                self.bias = None
            if activation is not None:
                from .activations import Activation
                self.act = Activation(activation, prefix=activation + "_")
            else:
                self.act = None

    def infer_shape(self, x, *args):
        if self._flatten:
            n = int(np.prod(x.shape[1:])) if len(x.shape) > 1 else 1
        else:
            n = x.shape[-1]
        self.weight.shape = (self._units, n)

    def hybrid_forward(self, F, x, weight, bias=None):
        out = F.FullyConnected(x, weight, bias, no_bias=bias is None, num_hidden=self._units,
                               name="fwd",
                               flatten=self._flatten)
        if self.act is not None:
            out = self.act(out)
        return out

    def __repr__(self):
        shape = self.weight.shape
        act = self.act if self.act else "linear"
        return f"{type(self).__name__}({shape[1] if shape[1] else None} -> {shape[0]}, {act})"


class Dropout(HybridBlock):
    """Randomly zeroes a fraction ``rate`` of the inputs in training mode (scaling the rest).

    Parameters
    ----------
    rate : float
    axes : tuple of int, default ()
        Axes along which the same mask is shared.
    """

    def __init__(self, rate, axes=(), **kwargs):
        super().__init__(**kwargs)
        self._rate = rate
        self._axes = axes

    def hybrid_forward(self, F, x):
        if self._rate > 0:
            return F.Dropout(x, p=self._rate, axes=self._axes, name="fwd", cudnn_off=False)
        return F.identity(x)

    def __repr__(self):
        return f"{type(self).__name__}(p = {self._rate}, axes={self._axes})"


class _BatchNorm(HybridBlock):
    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False, beta_initializer="zeros", gamma_initializer="ones",
                 running_mean_initializer="zeros", running_variance_initializer="ones",
                 in_channels=0, fuse_relu=False, **kwargs):
        # fuse_relu comes last so that BatchNorm keeps MXNet's positional signature.
        super().__init__(**kwargs)
        self._kwargs = {"axis": axis, "eps": epsilon, "momentum": momentum,
                        "fix_gamma": not scale, "use_global_stats": use_global_stats}
        self.fuse_relu = fuse_relu
        if in_channels != 0:
            self.in_channels = in_channels
        self.gamma = self.params.get("gamma", grad_req="write" if scale else "null",
                                     shape=(in_channels,), init=gamma_initializer,
                                     allow_deferred_init=True, differentiable=scale)
        self.beta = self.params.get("beta", grad_req="write" if center else "null",
                                    shape=(in_channels,), init=beta_initializer,
                                    allow_deferred_init=True, differentiable=center)
        self.running_mean = self.params.get("running_mean", grad_req="null",
                                            shape=(in_channels,),
                                            init=running_mean_initializer,
                                            allow_deferred_init=True, differentiable=False)
        self.running_var = self.params.get("running_var", grad_req="null",
                                           shape=(in_channels,),
                                           init=running_variance_initializer,
                                           allow_deferred_init=True, differentiable=False)

    def infer_shape(self, x, *args):
        c = x.shape[self._kwargs["axis"]]
        for p in (self.gamma, self.beta, self.running_mean, self.running_var):
            p.shape = (c,)

    def cast(self, dtype):
        if np.dtype(dtype).name == "float16":
            dtype = "float32"
        super().cast(dtype)

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        out = F.BatchNorm(x, gamma, beta, running_mean, running_var, name="fwd", **self._kwargs)
        if self.fuse_relu:
            # MXNet fuses these in an MKL-DNN-only operator; the result is the same.
            out = F.relu(out)
        return out

    def __repr__(self):
        c = self.gamma.shape[0]
        content = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({content}, in_channels={c if c else None})"


class BatchNorm(_BatchNorm):
    """Batch normalisation (Ioffe and Szegedy, 2014).

    In training mode the batch statistics normalise the input and the running statistics
    (``running_mean``, ``running_var``) are updated with ``momentum``; in inference mode the
    running statistics are used.

    Parameters
    ----------
    axis : int, default 1
        The channel axis.
    momentum : float, default 0.9
    epsilon : float, default 1e-5
    center, scale : bool, default True
        Use ``beta`` / ``gamma`` (when False they stay fixed at 0 / 1).
    use_global_stats : bool, default False
        Always normalise with the running statistics.
    in_channels : int, default 0
        0 infers it on the first forward.
    """


class BatchNormReLU(_BatchNorm):
    """Batch normalisation followed by ReLU (MXNet's fused ``BatchNormWithReLU``).

    Takes the same arguments as :class:`BatchNorm`; parameters and running statistics are
    those of a BatchNorm, the output is ``relu(batch_norm(x))``.
    """

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False, beta_initializer="zeros", gamma_initializer="ones",
                 running_mean_initializer="zeros", running_variance_initializer="ones",
                 in_channels=0, **kwargs):
        super().__init__(axis=axis, momentum=momentum, epsilon=epsilon, center=center,
                         scale=scale, use_global_stats=use_global_stats, fuse_relu=True,
                         beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
                         running_mean_initializer=running_mean_initializer,
                         running_variance_initializer=running_variance_initializer,
                         in_channels=in_channels, **kwargs)


class Embedding(HybridBlock):
    """Maps integer indices to rows of a ``(input_dim, output_dim)`` weight.

    Parameters
    ----------
    input_dim, output_dim : int
    dtype : str, default 'float32'
    weight_initializer : Initializer, optional
    sparse_grad : bool, default False
        Give the weight a 'row_sparse' gradient.
    """

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None,
                 sparse_grad=False, **kwargs):
        super().__init__(**kwargs)
        grad_stype = "row_sparse" if sparse_grad else "default"
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": sparse_grad}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      allow_deferred_init=True, grad_stype=grad_stype)

    def hybrid_forward(self, F, x, weight):
        return F.Embedding(x, weight, name="fwd", **self._kwargs)

    def __repr__(self):
        k = self._kwargs
        return f"{type(self).__name__}({k['input_dim']} -> {k['output_dim']}, {k['dtype']})"


class Flatten(HybridBlock):
    """Reshapes ``(N, x1, ..., xn)`` to ``(N, x1 * ... * xn)``."""

    def hybrid_forward(self, F, x):
        return F.flatten(x)

    def __repr__(self):
        return type(self).__name__


class InstanceNorm(HybridBlock):
    """Instance normalisation: normalise each sample and channel over the spatial axes.

    Parameters
    ----------
    axis : int, default 1
    epsilon : float, default 1e-5
    center : bool, default True
    scale : bool, default False
    in_channels : int, default 0
    """

    def __init__(self, axis=1, epsilon=1e-5, center=True, scale=False,
                 beta_initializer="zeros", gamma_initializer="ones", in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}
        self._axis = axis
        self._epsilon = epsilon
        self.gamma = self.params.get("gamma", grad_req="write" if scale else "null",
                                     shape=(in_channels,), init=gamma_initializer,
                                     allow_deferred_init=True)
        self.beta = self.params.get("beta", grad_req="write" if center else "null",
                                    shape=(in_channels,), init=beta_initializer,
                                    allow_deferred_init=True)

    def infer_shape(self, x, *args):
        c = x.shape[self._axis]
        self.gamma.shape = (c,)
        self.beta.shape = (c,)

    def hybrid_forward(self, F, x, gamma, beta):
        if self._axis == 1:
            return F.InstanceNorm(x, gamma, beta, name="fwd", eps=self._epsilon)
        x = x.swapaxes(1, self._axis)
        return F.InstanceNorm(x, gamma, beta, name="fwd",
                              eps=self._epsilon).swapaxes(1, self._axis)

    def __repr__(self):
        content = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({content}, in_channels={self.gamma.shape[0]})"


class LayerNorm(HybridBlock):
    """Layer normalisation over ``axis`` (default the last).

    Parameters
    ----------
    axis : int, default -1
    epsilon : float, default 1e-5
    center, scale : bool, default True
    in_channels : int, default 0
    """

    def __init__(self, axis=-1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", in_channels=0,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}
        self._axis = axis
        self._epsilon = epsilon
        self._center = center
        self._scale = scale
        self.gamma = self.params.get("gamma", grad_req="write" if scale else "null",
                                     shape=(in_channels,), init=gamma_initializer,
                                     allow_deferred_init=True)
        self.beta = self.params.get("beta", grad_req="write" if center else "null",
                                    shape=(in_channels,), init=beta_initializer,
                                    allow_deferred_init=True)

    def infer_shape(self, x, *args):
        c = x.shape[self._axis]
        self.gamma.shape = (c,)
        self.beta.shape = (c,)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.LayerNorm(data, gamma=gamma, beta=beta, axis=self._axis, eps=self._epsilon)

    def __repr__(self):
        content = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({content}, in_channels={self.gamma.shape[0]})"


class GroupNorm(HybridBlock):
    """Group normalisation: channels (axis 1) split into ``num_groups`` groups.

    ``gamma`` and ``beta`` have shape ``(num_groups,)``, as in MXNet 1.9.1.

    Parameters
    ----------
    num_groups : int, default 1
    epsilon : float, default 1e-5
    center, scale : bool, default True
    """

    def __init__(self, num_groups=1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._kwargs = {"eps": epsilon, "num_groups": num_groups, "center": center,
                        "scale": scale}
        self._num_groups = num_groups
        self._epsilon = epsilon
        self._center = center
        self._scale = scale
        self.gamma = self.params.get("gamma", grad_req="write" if scale else "null",
                                     shape=(num_groups,), init=gamma_initializer,
                                     allow_deferred_init=True)
        self.beta = self.params.get("beta", grad_req="write" if center else "null",
                                    shape=(num_groups,), init=beta_initializer,
                                    allow_deferred_init=True)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.GroupNorm(data, gamma=gamma, beta=beta, num_groups=self._num_groups,
                           eps=self._epsilon)

    def __repr__(self):
        content = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({content})"


class Lambda(Block):
    """Wraps a function, or the name of an ``nd`` operator, as a Block.

    Parameters
    ----------
    function : str or callable
        ``'tanh'``, or ``lambda x: nd.LeakyReLU(x, slope=0.1)``.
    """
    _np_passthrough = True

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            if not hasattr(_nd, function):
                raise AssertionError(f"Function name {function} is not found in ndarray.")
            self._func_impl = getattr(_nd, function)
        elif callable(function):
            self._func_impl = function
        else:
            raise ValueError(f"Unrecognized function in lambda: {function} of type "
                             f"{type(function)}")

    def forward(self, *args):
        return self._func_impl(*args)

    def __repr__(self):
        return f"{type(self).__name__}({self._func_impl.__name__})"


class HybridLambda(HybridBlock):
    """Wraps ``function(F, x, *args)``, or the name of an operator, as a HybridBlock.

    Parameters
    ----------
    function : str or callable
        ``'tanh'``, or ``lambda F, x: F.LeakyReLU(x, slope=0.1)``.
    """
    _np_passthrough = True

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            if not hasattr(_nd, function):
                raise AssertionError(f"Function name {function} is not found in "
                                     "symbol/ndarray.")
            name = function
            self._func = lambda F, *args: getattr(F, name)(*args)
            self._func_name = function
        elif callable(function):
            self._func = function
            self._func_name = function.__name__
        else:
            raise ValueError(f"Unrecognized function in lambda: {function} of type "
                             f"{type(function)}")

    def hybrid_forward(self, F, x, *args):
        return self._func(F, x, *args)

    def __repr__(self):
        return f"{type(self).__name__}({self._func_name})"


class Identity(HybridBlock):
    """Returns its input."""
    _np_passthrough = True

    def hybrid_forward(self, F, x):
        return x


class Concatenate(Sequential):
    """Runs every child on the same input and concatenates the outputs along ``axis``."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def forward(self, x):
        return _nd.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class HybridConcatenate(HybridSequential):
    """Runs every child on the same input and concatenates the outputs along ``axis``."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F, x):
        return F.concat(*[block(x) for block in self._children.values()], dim=self.axis)
