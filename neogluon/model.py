"""Helpers that pick a KVStore for training (MXNet's ``mx.model._create_kvstore``)."""
from __future__ import annotations

import os

import numpy as np

from . import kvstore as kvs

__all__ = []

# Above this many elements in one parameter, the 'local' store updates on the devices.
_BIG_PARAM = 1024 * 1024 * 16


def _update_on_kvstore_env() -> bool:
    raw = os.getenv("MXNET_UPDATE_ON_KVSTORE", "1")
    try:
        return bool(int(raw))
    except ValueError:
        raise ValueError(f"MXNET_UPDATE_ON_KVSTORE must be an integer (0 or 1), got "
                         f"{raw!r}") from None


def _create_sparse_kvstore(kvstore):
    """Store for row_sparse weights: always one that runs the optimizer.

    Returns
    -------
    (KVStore, True)
    """
    if isinstance(kvstore, kvs.KVStore):
        kv = kvstore
    elif isinstance(kvstore, str):
        kv = kvs.create(kvstore)
    else:
        raise TypeError(f"Cannot create '{kvstore}' KVStore with row_sparse parameters. "
                        "The type must be KVStore or str.")
    if not kv.is_capable(kvs.KVStoreBase.OPTIMIZER):
        raise AssertionError(
            "KVStore with sparse weight requires optimizer support. However, "
            f"{type(kv).__name__} does not support optimizer. Please consider other kvstore "
            "backends (e.g. dist_device) instead.")
    return kv, True


def _create_kvstore(kvstore, num_device, arg_params):
    """Pick the store and whether the optimizer runs in it.

    Parameters
    ----------
    kvstore : KVStoreBase, str or None
        A store, a store type, or None for none.
    num_device : int
        Number of contexts. One context on one machine needs no store.
    arg_params : dict of str to NDArray
        The weights (their sizes decide 'local''s default).

    Returns
    -------
    (KVStoreBase or None, bool)
    """
    update_on_kvstore = _update_on_kvstore_env()
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, kvs.KVStoreBase):
        kv = kvstore
    elif isinstance(kvstore, str):
        if num_device == 1 and "dist" not in kvstore:
            kv = None
        else:
            kv = kvs.create(kvstore)
            if kvstore == "local":
                sizes = [int(np.prod(p.shape)) for p in arg_params.values()]
                if sizes and max(sizes) > _BIG_PARAM:
                    update_on_kvstore = False
    else:
        raise TypeError("kvstore must be KVStore, str or None")
    if kv is None:
        update_on_kvstore = False
    else:
        update_on_kvstore &= bool(kv.is_capable(kvs.KVStoreBase.OPTIMIZER))
    return kv, update_on_kvstore
