"""Contributed layers of ``gluon.contrib.nn``."""
from __future__ import annotations

import warnings

from ... import nn  # noqa: F401 - the Block machinery lives with gluon.nn
from ...block import Block, HybridBlock
from ...nn import Sequential, HybridSequential, BatchNorm
from .... import ndarray as nd
from .... import context as _context

__all__ = ["Concurrent", "HybridConcurrent", "Identity", "SparseEmbedding", "SyncBatchNorm",
           "PixelShuffle1D", "PixelShuffle2D", "PixelShuffle3D"]


class Concurrent(Sequential):
    """Feeds its input to every child and concatenates their outputs.

    Parameters
    ----------
    axis : int, default -1
        The axis the outputs are concatenated on.
    prefix, params
        As for every Block.

    Examples
    --------
    >>> net = Concurrent(axis=1)
    >>> net.add(nn.Dense(10, activation='relu'), nn.Dense(20), Identity())
    """

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def forward(self, x):
        return nd.concat(*[child(x) for child in self._children.values()], dim=self.axis)


class HybridConcurrent(HybridSequential):
    """Feeds its input to every (hybrid) child and concatenates their outputs; hybridizable.

    Parameters
    ----------
    axis : int, default -1
        The axis the outputs are concatenated on.
    prefix, params
        As for every Block.
    """

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F, x):
        return F.concat(*[child(x) for child in self._children.values()], dim=self.axis)


class Identity(HybridBlock):
    """Returns its input unchanged (a residual branch of a :class:`HybridConcurrent`)."""
    _np_passthrough = True

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F, x):
        return x


class SparseEmbedding(Block):
    """An embedding whose weight *and* gradient are row_sparse.

    Each forward pulls only the rows the batch uses (``weight.row_sparse_data(x)``), so a
    Trainer (which must hold this Parameter: it keeps the full table in its KVStore and updates
    it there, lazily) never moves the whole table.

    Parameters
    ----------
    input_dim : int
        Size of the vocabulary (rows of the table).
    output_dim : int
        Size of each embedding vector.
    dtype : str, default 'float32'
    weight_initializer : Initializer, optional

    Inputs: ``data`` of shape ``(x1, ..., xN-1)`` (ids). Output: ``(x1, ..., xN-1, output_dim)``.
    """

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None,
                 **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": True}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      grad_stype="row_sparse", stype="row_sparse")

    def forward(self, x):
        weight = self.weight.row_sparse_data(x)
        return nd.Embedding(x, weight, **self._kwargs)

    def __repr__(self):
        k = self._kwargs
        return f"{type(self).__name__}({k['input_dim']} -> {k['output_dim']}, {k['dtype']})"


class SyncBatchNorm(BatchNorm):
    """Batch normalisation over the channel axis (1) meant to share statistics across devices.

    Parameters
    ----------
    in_channels : int, default 0
        0 infers it on the first forward.
    num_devices : int, optional
        The number of devices of one batch (default: the number of GPUs, at least 1).
    momentum, epsilon, center, scale, use_global_stats, *_initializer
        As for :class:`~neogluon.gluon.nn.BatchNorm`.

    Notes
    -----
    In training mode the mean and variance are those of the whole batch of a step:

    * across the workers of a distributed job (the ``torch.distributed`` process group a dist
      kvstore creates): per-channel sums are combined with a differentiable all_reduce, so the
      gradients are those of BatchNorm over the concatenated batch. Every worker must run the
      same number of training-mode forwards (and backwards) of the layer: it is a collective.
    * across the ``num_devices`` replicas of one process when each context's forward runs in its
      own thread (as GluonCV's ``DataParallelModel`` does): the replicas meet in a rendezvous
      keyed by the layer's prefix. Forwards run one after another from the main thread cannot
      wait for each other: then each replica uses its own slice's statistics (warned once).
      Backpropagate the replicas' losses in one call (``autograd.backward([l0, l1, ...])``):
      their graphs share the combined statistics.
    """

    def __init__(self, in_channels=0, num_devices=None, momentum=0.9, epsilon=1e-5,
                 center=True, scale=True, use_global_stats=False, beta_initializer="zeros",
                 gamma_initializer="ones", running_mean_initializer="zeros",
                 running_variance_initializer="ones", **kwargs):
        super().__init__(axis=1, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
                         use_global_stats=use_global_stats, beta_initializer=beta_initializer,
                         gamma_initializer=gamma_initializer,
                         running_mean_initializer=running_mean_initializer,
                         running_variance_initializer=running_variance_initializer,
                         in_channels=in_channels, **kwargs)
        if num_devices is None:
            warnings.warn("Caution using SyncBatchNorm: if not using all the GPUs, please "
                          "mannually set num_devices", UserWarning)
            num_devices = max(_context.num_gpus(), 1)
        self.num_devices = num_devices
        self._kwargs = dict(self._kwargs, ndev=num_devices, key=self.prefix)
        del self._kwargs["axis"]

    def infer_shape(self, x, *args):
        for p in (self.gamma, self.beta, self.running_mean, self.running_var):
            p.shape = (x.shape[1],)

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.contrib.SyncBatchNorm(x, gamma, beta, running_mean, running_var, name="fwd",
                                       **self._kwargs)


def _factors(factor, n, name):
    if isinstance(factor, (list, tuple)):
        factors = tuple(int(f) for f in factor)
        if len(factors) != n:
            raise ValueError(f"{name}: factor needs {n} values, got {len(factors)}: {factor!r}")
    else:
        factors = (int(factor),) * n
    if any(f < 1 for f in factors):
        raise ValueError(f"{name}: factors must be positive, got {factor!r}")
    return factors


class _PixelShuffle(HybridBlock):
    _ndim = 0

    def __init__(self, factor):
        super().__init__()
        self._factors = _factors(factor, self._ndim, type(self).__name__)

    def hybrid_forward(self, F, x):
        n = self._ndim
        f = self._factors
        # (N, C*f1*..*fn, S1..Sn) -> (N, C, f1*..*fn, S..) -> (N, C, f1, .., fn, S1, .., Sn)
        total = 1
        for g in f:
            total *= g
        x = F.reshape(x, (0, -4, -1, total) + (0,) * n)
        for i in range(n - 1):
            x = F.reshape(x, (0,) * (2 + i) + (-4, f[i], -1) + (0,) * n)
        # Interleave: (N, C, S1, f1, S2, f2, ...), then merge each (Si, fi) pair.
        perm = [0, 1]
        for i in range(n):
            perm += [2 + n + i, 2 + i]
        x = F.transpose(x, axes=tuple(perm))
        return F.reshape(x, (0, 0) + (-3,) * n)

    def __repr__(self):
        f = self._factors[0] if self._ndim == 1 else self._factors
        return f"{type(self).__name__}({f})"


class PixelShuffle1D(_PixelShuffle):
    """Upsample ``(N, f*C, W)`` to ``(N, C, W*f)`` by moving channel groups into width.

    Parameters
    ----------
    factor : int or 1-tuple of int
        The upsampling factor.
    """
    _ndim = 1


class PixelShuffle2D(_PixelShuffle):
    """Upsample ``(N, f1*f2*C, H, W)`` to ``(N, C, H*f1, W*f2)`` (sub-pixel convolution's
    shuffle, Shi et al. 2016).

    Parameters
    ----------
    factor : int or 2-tuple of int
        The factors for H and W.
    """
    _ndim = 2


class PixelShuffle3D(_PixelShuffle):
    """Upsample ``(N, f1*f2*f3*C, D, H, W)`` to ``(N, C, D*f1, H*f2, W*f3)``.

    Parameters
    ----------
    factor : int or 3-tuple of int
        The factors for D, H and W.
    """
    _ndim = 3
