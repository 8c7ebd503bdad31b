"""The key-value store interface, its registry, and ``create``.

A store synchronises values (weights, gradients) between the contexts of one process and,
for the distributed kinds, between processes. Every store, neogluon's own and a user's, is a
:class:`KVStoreBase`: the Trainer talks to it only through this interface (``broadcast``,
``pushpull``, ``is_capable``, ``set_optimizer``, ...), so a distributed backend plugs in by
registering a subclass, without touching the Trainer.
"""
from __future__ import annotations

import warnings

__all__ = ["KVStoreBase", "TestStore", "create"]


class KVStoreBase:
    """An abstract key-value store for data-parallel training.

    Subclass it and decorate the subclass with :meth:`KVStoreBase.register` to make it
    available to :func:`create` and to ``gluon.Trainer(..., kvstore='<lowercased class name>')``.
    A store that cannot run the optimizer itself answers ``False`` to
    ``is_capable(KVStoreBase.OPTIMIZER)``; the Trainer then updates the weights locally.
    """

    #: The capability of running the optimizer inside the store (``update_on_kvstore``).
    OPTIMIZER = "optimizer"

    #: Registered store classes by lowercased class name.
    kv_registry: dict = {}

    def broadcast(self, key, value, out, priority=0):
        """Broadcast ``value`` (the value at rank 0) into ``out``.

        Parameters
        ----------
        key : str or int
            The key.
        value : NDArray
            The value to broadcast.
        out : NDArray or list of NDArray
            Where the result goes.
        priority : int, optional
            Scheduling hint: higher runs earlier. Single-process stores run in call order.
        """
        raise NotImplementedError()

    def pushpull(self, key, value, out=None, priority=0):
        """Sum ``value`` over all sources (and workers) and write the result to ``out``.

        Parameters
        ----------
        key : str or int
            The key.
        value : NDArray or list of NDArray
            The values to sum.
        out : NDArray or list of NDArray, optional
            Where the result goes; ``value`` itself when omitted.
        priority : int, optional
            Scheduling hint.
        """
        raise NotImplementedError()

    def set_optimizer(self, optimizer):
        """Make the store apply ``optimizer`` to the values pushed into it.

        Parameters
        ----------
        optimizer : Optimizer
            The optimizer.
        """
        raise NotImplementedError()

    def is_capable(self, capability):
        """Whether the store supports ``capability`` (such as :attr:`OPTIMIZER`).

        Parameters
        ----------
        capability : str
            The capability to query.

        Returns
        -------
        bool
        """
        raise NotImplementedError()

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Save the optimizer (updater) states to a file.

        Parameters
        ----------
        fname : str
            Path of the states file.
        dump_optimizer : bool, default False
            Whether to save the optimizer's configuration too (learning rate, schedule,
            update counts), so that loading restores it.
        """
        raise NotImplementedError()

    def load_optimizer_states(self, fname):
        """Load the optimizer (updater) states from a file.

        Parameters
        ----------
        fname : str
            Path of the states file.
        """
        raise NotImplementedError()

    @property
    def type(self):
        """The type of the store (a string such as ``'device'``)."""
        raise NotImplementedError()

    @property
    def rank(self):
        """The rank of this worker, in ``[0, num_workers)``."""
        raise NotImplementedError()

    @property
    def num_workers(self):
        """The number of workers."""
        raise NotImplementedError()

    @staticmethod
    def register(klass):
        """Register a store class under its lowercased class name.

        Examples
        --------
        >>> @mx.kv.KVStoreBase.register
        ... class MyKVStore(mx.kv.KVStoreBase):
        ...     pass
        >>> kv = mx.kv.create('MyKVStore')
        >>> type(kv).__name__
        'MyKVStore'
        """
        if not isinstance(klass, type):
            raise AssertionError(f"KVStoreBase.register expects a class, got "
                                 f"{type(klass).__name__}")
        name = klass.__name__.lower()
        previous = KVStoreBase.kv_registry.get(name)
        if previous is not None and previous is not klass:
            warnings.warn(f"WARNING: New kvstore {klass.__module__}.{klass.__name__} is "
                          f"overriding existing kvstore {previous.__module__}."
                          f"{previous.__name__}")
        KVStoreBase.kv_registry[name] = klass
        return klass


@KVStoreBase.register
class TestStore(KVStoreBase):
    """A minimal pure-Python store (MXNet ships it for testing custom stores).

    It sums with Python arithmetic and cannot run an optimizer, so a Trainer using it updates
    the weights itself.
    """

    def broadcast(self, key, value, out, priority=0):
        outs = out if isinstance(out, list) else [out]
        for o in outs:
            o[:] = value

    def pushpull(self, key, value, out=None, priority=0):
        from ..ndarray.ndarray import NDArray
        if isinstance(value, NDArray):
            if out is not None:
                for o in (out if isinstance(out, list) else [out]):
                    o[:] = value
            return
        ctx = value[0].context
        total = value[0].as_in_context(ctx)
        for v in value[1:]:
            total = total + v.as_in_context(ctx)
        targets = value if out is None else (out if isinstance(out, list) else [out])
        for o in targets:
            o[:] = total

    @staticmethod
    def is_capable(capability):
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return False
        raise ValueError(f"Unknown capability: {capability}")

    @property
    def type(self):
        return "teststore"

    @property
    def rank(self):
        return 0

    @property
    def num_workers(self):
        return 1

    def set_optimizer(self, optimizer):
        raise NotImplementedError("TestStore cannot run an optimizer")

    def save_optimizer_states(self, fname, dump_optimizer=False):
        raise NotImplementedError("TestStore has no optimizer states")

    def load_optimizer_states(self, fname):
        raise NotImplementedError("TestStore has no optimizer states")


_DIST_KINDS = ("dist",)


def create(name="local"):
    """Create a key-value store.

    Parameters
    ----------
    name : str
        A registered store's (lowercased) class name, or one of the built-in kinds:

        - ``'local'`` (also ``'local_allreduce_cpu'``, ``'local_update_cpu'``): values are
          summed, and the optimizer runs, in CPU memory.
        - ``'device'`` (also ``'local_allreduce_device'``, ``'nccl'``): values are summed on
          the devices that hold them; gradient compression is available.
        - ``'dist_sync'``, ``'dist_device_sync'`` (also ``'dist_sync_device'``),
          ``'dist_async'``: several processes (workers) on ``torch.distributed``; start the
          workers with ``python -m neogluon.launch`` or torchrun (see ``kvstore.dist``).

        As in MXNet, any other name gives a local store of that type.

    Returns
    -------
    KVStoreBase
    """
    if not isinstance(name, str):
        raise TypeError("name must be a string")
    name = name.lower()
    klass = KVStoreBase.kv_registry.get(name)
    if klass is not None:
        return klass()
    if any(kind in name for kind in _DIST_KINDS):
        from .dist import DistKVStore
        return DistKVStore(name)
    from .local import KVStore
    return KVStore(name)
