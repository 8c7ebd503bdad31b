"""Sparse values in the single-process KVStore, as MXNet 1.9.1's ``KVStoreLocal`` does.

* ``init`` stores a copy of a row_sparse (or csr) value.
* ``push`` of row_sparse values sums them (the union of their rows); with an updater the sum is
  the gradient of a lazy update of the stored weight, else it replaces the stored value.
* ``pull(..., ignore_sparse=False)`` copies the stored value into row_sparse outputs (a dense
  stored value is converted, keeping its non-zero rows).
* ``row_sparse_pull(key, out, row_ids)`` gives each output the rows ``row_ids`` (sorted, without
  repeats) of a row_sparse stored value.
"""
from __future__ import annotations

import torch

from ..base import MXNetError
from ..context import Context, cpu
from ..ndarray import sparse as _sp
from ..ndarray.ndarray import NDArray, _new


def _store_ctx(store, value):
    """Where the store keeps a value that arrived on ``value``'s context."""
    if store._device_comm:
        return value.context
    return value.context if value.context.device_type != "gpu" else cpu(0)


def init_value(store, value):
    """The stored copy of a sparse ``value``."""
    return value.copyto(_store_ctx(store, value))


def is_sparse_push(store, key, vals):
    """Whether a push of ``vals`` to ``key`` takes the sparse path."""
    st = store._store.get(key)
    return (st is not None and st.stype != "default") or \
        any(v.stype != "default" for v in vals)


def push(store, key, vals):
    """Sum ``vals`` and apply them to ``key`` (update, or replace the stored value)."""
    stored = store._stored(key)
    for v in vals:
        if v.shape != stored.shape:
            raise MXNetError(f"push: key {key!r} holds shape {stored.shape} but a value of "
                             f"shape {v.shape} was pushed")
        if v.dtype != stored.dtype:
            raise MXNetError(f"push: key {key!r} holds dtype {stored.dtype.__name__} but a "
                             f"value of dtype {v.dtype.__name__} was pushed")
        if v.stype == "csr":
            raise MXNetError(f"push: key {key!r}: csr values cannot be pushed")
    ctx = _store_ctx(store, vals[0]) if store._device_comm else stored.context
    local = [v.as_in_context(ctx) for v in vals]
    with torch.no_grad():
        if all(v.stype == "row_sparse" for v in local):
            merged = local[0].copy() if len(local) == 1 else _sp.add_n(*local)
        else:
            t = local[0]._t.detach().clone()
            for v in local[1:]:
                t.add_(v._t.detach())
            merged = _new(t, ctx)
    store._aliased.discard(key)
    store._merge.pop(key, None)
    upd = store._updater
    if upd is None:
        store._store[key] = merged
        return
    if stored.context != merged.context:
        stored = store._store[key] = stored.copyto(merged.context)
    from .local import _is_list_updater
    if _is_list_updater(upd):
        upd([key], [merged], [stored])
    else:
        upd(key, merged, stored)


def copy_into(out, stored):
    """``pull`` into a sparse output ``out``."""
    if out.stype != "row_sparse":
        raise MXNetError(f"pull: a {out.stype} output cannot receive a pulled value")
    src = stored if stored.stype == "row_sparse" else \
        _sp.cast_storage(_new(stored._t.detach(), stored.context), "row_sparse")
    out._assign(src.as_in_context(out.context) if src.context != out.context else src)


def row_sparse_pull_one(store, key, stored, out, row_id):
    """Give ``out`` the rows ``row_id`` of the row_sparse value stored under ``key``."""
    if not isinstance(row_id, NDArray):
        raise AssertionError(f"row_sparse_pull: key {key!r}: row_ids must be NDArrays, got "
                             f"{type(row_id).__name__}")
    if out.shape != stored.shape:
        raise MXNetError(f"row_sparse_pull: key {key!r} holds shape {stored.shape} but the "
                         f"output has shape {out.shape}")
    ids = row_id._t.detach()
    if ids.is_floating_point():
        ids = ids.to(torch.int64)
    ids = ids.reshape(-1).to(stored._sdata.device)
    rows = _sp.retain(stored, _new(ids, stored.context))
    if rows.context != out.context:
        rows = rows.copyto(out.context)
    out._assign(rows)
