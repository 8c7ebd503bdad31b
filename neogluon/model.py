"""``mx.model``: Module-era checkpoints (``save_checkpoint``, ``load_checkpoint``,
``load_params``) and the helpers that pick a KVStore for training
(``mx.model._create_kvstore``)."""
from __future__ import annotations

import logging
import os
from collections import namedtuple

import numpy as np

from . import kvstore as kvs
from .base import MXNetError

__all__ = ["BatchEndParam", "save_checkpoint", "load_checkpoint", "load_params"]

# What a batch-end callback (mx.callback.Speedometer, ...) receives: the epoch, the batch index
# within it, the training metric (or None) and the caller's locals(). The type is named
# 'BatchEndParams' as in MXNet, so reprs read the same.
BatchEndParam = namedtuple("BatchEndParams", ["epoch", "nbatch", "eval_metric", "locals"])


def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """Write ``prefix-symbol.json`` and ``prefix-%04d.params`` as MXNet does: the same bytes
    as MXNet 1.9.1's files for the same graph and arrays. Each file is written atomically
    (a temporary file renamed into place) with the permissions the umask gives.

    Parameters
    ----------
    prefix : str
    epoch : int
    symbol : Symbol or None
        The graph (not written when None).
    arg_params, aux_params : dict of str to NDArray
        Saved as ``arg:<name>`` and ``aux:<name>``.
    remove_amp_cast : bool, default True
        Leave AMP cast nodes out of the symbol file.
    """
    from . import ndarray as nd
    from .context import cpu
    if symbol is not None:
        symbol.save(f"{prefix}-symbol.json", remove_amp_cast=remove_amp_cast)
    save_dict = {f"arg:{k}": v.as_in_context(cpu()) for k, v in arg_params.items()}
    save_dict.update({f"aux:{k}": v.as_in_context(cpu()) for k, v in aux_params.items()})
    param_name = "%s-%04d.params" % (prefix, epoch)
    nd.save(param_name, save_dict)   # atomic
    logging.info('Saved checkpoint to "%s"', param_name)


def load_params(prefix, epoch):
    """``(arg_params, aux_params)`` from ``prefix-%04d.params`` (keys ``arg:``/``aux:``)."""
    from . import ndarray as nd
    fname = "%s-%04d.params" % (prefix, epoch)
    if not os.path.isfile(fname):
        raise MXNetError(f"load_params: no parameter file {fname}")
    save_dict = nd.load(fname)
    arg_params, aux_params = {}, {}
    if not save_dict:
        logging.warning("Params file '%s' is empty", fname)
        return arg_params, aux_params
    if not isinstance(save_dict, dict):
        raise ValueError(f"Invalid param file {fname}: it holds a list of arrays, not "
                         "arg:/aux: names")
    for k, value in save_dict.items():
        kind, _, name = k.partition(":")
        if kind == "arg" and name:
            arg_params[name] = value
        elif kind == "aux" and name:
            aux_params[name] = value
        else:
            raise ValueError(f"Invalid param file {fname}: key {k!r} is neither arg:<name> "
                             "nor aux:<name>")
    return arg_params, aux_params


def load_checkpoint(prefix, epoch):
    """``(symbol, arg_params, aux_params)`` from ``prefix-symbol.json`` and
    ``prefix-%04d.params`` (MXNet's or neogluon's). ``gluon.SymbolBlock.imports`` gives the
    same model as a Gluon block."""
    from . import symbol as sym
    fname = f"{prefix}-symbol.json"
    if not os.path.isfile(fname):
        raise MXNetError(f"load_checkpoint: no symbol file {fname}")
    symbol = sym.load(fname)
    arg_params, aux_params = load_params(prefix, epoch)
    return symbol, arg_params, aux_params

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


def _initialize_kvstore(kvstore, param_arrays, arg_params, param_names, update_on_kvstore):
    """Put each parameter into the store: ``init`` (the store keeps the value), or, when the
    store runs the optimizer on dense weights, ``broadcast`` (init, then every device's copy
    pulls it)."""
    for idx, param_on_devs in enumerate(param_arrays):
        name = param_names[idx]
        if not update_on_kvstore or arg_params[name].stype != "default":
            kvstore.init(name, arg_params[name])
        else:
            kvstore.broadcast(name, arg_params[name], out=param_on_devs)


def _update_params_on_kvstore_nccl(param_arrays, grad_arrays, kvstore, param_names):
    """Push gradients and pull weights in groups of ``MXNET_UPDATE_AGGREGATION_SIZE``
    (default 16) parameters per call."""
    valid = [i for i, g in enumerate(grad_arrays) if g[0] is not None]
    batch = int(os.getenv("MXNET_UPDATE_AGGREGATION_SIZE", "16"))
    for start in range(0, len(valid), batch):
        part = valid[start:start + batch]
        kvstore.pushpull([param_names[i] for i in part], [grad_arrays[i] for i in part],
                         out=[param_arrays[i] for i in part], priority=-start)


def _update_params_on_kvstore(param_arrays, grad_arrays, kvstore, param_names):
    """The store runs the optimizer: push each gradient, pull the updated weight."""
    for index, (arg_list, grad_list) in enumerate(zip(param_arrays, grad_arrays)):
        if grad_list[0] is None:
            continue
        name = param_names[index]
        if grad_list[0].stype == "default" and arg_list[0].stype == "default":
            kvstore.pushpull(name, grad_list, out=arg_list, priority=-index)
        else:
            kvstore.push(name, grad_list, priority=-index)
            kvstore.pull(name, out=arg_list, priority=-index)


def _update_params(param_arrays, grad_arrays, updater, num_device, kvstore=None,
                   param_names=None):
    """Update every device's copy with ``updater`` (after summing the gradients over the
    devices through ``kvstore`` when there is one). Index ``i * num_device + k`` is
    parameter ``i`` on device ``k``, so each copy keeps its own optimizer state, as in
    MXNet; each device's parameters go to the updater as one list (a multi-tensor update)."""
    updates = [[] for _ in range(num_device)]
    for i, (arg_list, grad_list) in enumerate(zip(param_arrays, grad_arrays)):
        if grad_list[0] is None:
            continue
        if kvstore:
            name = param_names[i]
            if grad_list[0].stype == "default" and arg_list[0].stype == "default":
                kvstore.pushpull(name, grad_list, priority=-i)
            else:
                kvstore.push(name, grad_list, priority=-i)
                kvstore.pull(name, out=grad_list, priority=-i)
        for k, (w, g) in enumerate(zip(arg_list, grad_list)):
            updates[k].append((i * num_device + k, g, w))
    for dev_updates in updates:
        if dev_updates:
            idx, grads, weights = zip(*dev_updates)
            updater(list(idx), list(grads), list(weights))


def _multiple_callbacks(callbacks, *args, **kwargs):
    """Call ``callbacks`` (None, one callable or a list of them) with the arguments."""
    if isinstance(callbacks, list):
        for cb in callbacks:
            cb(*args, **kwargs)
        return
    if callbacks:
        callbacks(*args, **kwargs)
