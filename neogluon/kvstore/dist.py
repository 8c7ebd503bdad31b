"""The distributed stores: 'dist_sync', 'dist_device_sync' ('dist_sync_device') and 'dist_async'.

They keep MXNet 1.9.1's store semantics on a ``torch.distributed`` process group (see
``_dist_env`` for where the group comes from). There are no server processes: what MXNet's
servers did, the workers do among themselves.

dist_sync / dist_device_sync
----------------------------
Every worker makes the same sequence of ``init`` / ``push`` / ``pushpull`` calls (as with
MXNet, where a sync round only completes once every worker has pushed); each such call is a
handful of collectives, one per (dtype, device) bucket of its keys.

- ``init``: rank 0's value wins (a broadcast); afterwards every worker holds it.
- ``push``: the values of a key are summed over this worker's contexts, then over the workers.
  Without an optimizer, the stored value becomes that sum. With one (``set_optimizer``, the
  Trainer's ``update_on_kvstore=True``), the sum is the gradient of exactly one update of the
  stored weight per key and round. That update is *sharded* as ZeRO stage 1 does it: each key
  has one owner rank (the keys of an ``init`` call are dealt out largest first, each to the
  rank holding the fewest elements so far), gradients are reduce-scattered so that each rank receives the sums of the keys
  it owns, the owner runs the optimizer (so each rank holds the optimizer state of about 1/N of
  the weights), and the new weights are all-gathered to every rank.
- ``pull`` / ``row_sparse_pull``: every worker holds identical values after each round, so a
  pull is a local copy.
- Gradient compression ('2bit', '1bit'): each worker quantises its (context-summed) gradient
  with its own residual, packs it in MXNet's layout (16 or 32 values per 4-byte word), and the
  packed words are all-gathered; every rank unpacks and sums them in rank order. The update then
  runs on every rank (identical inputs, identical results), so the wire carries only the packed
  gradients, about 1/16 of the dense bytes for '2bit'.
- row_sparse values: each worker's rows are all-gathered and summed; the update runs on every
  rank (lazy updates touch only the pushed rows).

dist_async
----------
Rank 0 holds the values and the optimizer; the other workers reach it through
``torch.distributed.rpc``. A push is applied as soon as it arrives (no round, no barrier), a
pull returns what rank 0 holds at that moment. See docs/distributed.md for what staleness means
there and what is deterministic.
"""
from __future__ import annotations

import os
import weakref
import zlib

import torch

from .. import autograd as _autograd
from ..base import MXNetError
from ..ndarray.ndarray import NDArray, _new
from ..ndarray import sparse as _sp
from . import _dist_env
from .local import KVStore, _key_value_pairs, _group, _atomic_write

__all__ = ["DistKVStore", "DIST_TYPES"]

_VERBS = {"init": "initialises", "push": "pushes"}
DIST_TYPES = ("dist_sync", "dist_device_sync", "dist_sync_device", "dist_async")


def _dist():
    import torch.distributed as dist
    return dist


def _reduce_scatter(out, inp):
    dist = _dist()
    fn = getattr(dist, "reduce_scatter_single", None)
    if fn is None:
        return dist.reduce_scatter_tensor(out, inp)
    return fn(out, inp)


def _all_gather(out, inp):
    dist = _dist()
    fn = getattr(dist, "all_gather_single", None)
    if fn is None:
        return dist.all_gather_into_tensor(out, inp)
    return fn(out, inp)


class _Layout:
    """Where each key of a sharded bucket lives in the flat, rank-segmented buffer."""

    __slots__ = ("keys", "seg", "flat", "out", "views", "own", "own_out", "others")

    def __init__(self, keys, tensors, owners, world, rank, dtype, device):
        sizes = [0] * world
        offsets = []
        for k, t in zip(keys, tensors):
            r = owners[k]
            offsets.append((r, sizes[r], t.numel()))
            sizes[r] += t.numel()
        self.keys = keys
        self.seg = max(max(sizes), 1)
        self.flat = torch.zeros(self.seg * world, dtype=dtype, device=device)
        self.out = torch.zeros(self.seg, dtype=dtype, device=device)
        self.views = []
        self.own = []         # indices (into keys) of the keys this rank owns
        self.own_out = []     # their views into ``out``
        self.others = []      # indices of the keys other ranks own
        for i, ((r, off, n), t) in enumerate(zip(offsets, tensors)):
            start = r * self.seg + off
            self.views.append(self.flat[start:start + n].view(t.shape))
            if r == rank:
                self.own.append(i)
                self.own_out.append(self.out[off:off + n].view(t.shape))
            else:
                self.others.append(i)


class _OwnerLayout:
    """A flat buffer of keys grouped by owner rank: each owner's keys form one segment."""

    __slots__ = ("flat", "views", "segs", "own", "others")

    def __init__(self, keys, tensors, owners, world, rank, dtype, device):
        order = sorted(range(len(keys)), key=lambda i: owners[keys[i]])
        self.flat = torch.empty(sum(t.numel() for t in tensors), dtype=dtype, device=device)
        self.views = [None] * len(keys)
        bounds = {}
        off = 0
        for i in order:
            t = tensors[i]
            r = owners[keys[i]]
            self.views[i] = self.flat[off:off + t.numel()].view(t.shape)
            lo, _ = bounds.get(r, (off, off))
            bounds[r] = (lo, off + t.numel())
            off += t.numel()
        self.segs = [(r, lo, hi) for r, (lo, hi) in sorted(bounds.items())]
        self.own = [i for i, k in enumerate(keys) if owners[k] == rank]
        self.others = [i for i, k in enumerate(keys) if owners[k] != rank]


class DistKVStore(KVStore):
    """MXNet's distributed key-value store on ``torch.distributed``.

    Create it with ``mx.kv.create('dist_sync')`` (or 'dist_device_sync', 'dist_sync_device',
    'dist_async') in every worker of a job started by ``python -m neogluon.launch``, torchrun,
    mpirun or MXNet's DMLC_* environment.
    """

    def __init__(self, name="dist_sync"):
        name = name.lower()
        if "dist" not in name:
            raise MXNetError(f"'{name}' is not a distributed kvstore type; the distributed "
                             f"types are {', '.join(DIST_TYPES)}")
        super().__init__(name)
        if "async" in name:
            _dist_env.check_remote_async()
        self._info = _dist_env.ensure_process_group()
        self._async = "async" in name
        self._owner = {}
        self._load = [0] * self._info.world_size
        self._layouts = {}
        self._flat_cache = {}
        self._comp_residual = {}
        self._replicated_update = False
        self._checked = set()
        #: Collective calls and bytes this worker sent (estimates for ring algorithms).
        self.comm_stats = {"calls": 0, "bytes_sent": 0, "by_op": {}}
        if self._async:
            from . import _async
            self._server = _async.connect(self)

    # ------------------------------------------------------------------ properties
    @property
    def rank(self):
        """This worker's rank, in ``[0, num_workers)``."""
        return self._info.rank

    @property
    def num_workers(self):
        """The number of workers in the job."""
        return self._info.world_size

    def __repr__(self):
        return (f"<DistKVStore type={self._type!r} rank={self.rank}/{self.num_workers} "
                f"keys={len(self._store)}>")

    # ------------------------------------------------------------------ collectives
    def _collective(self, what, keys, fn, *args, nbytes=0, sent=None):
        """Run one collective; turn a failure into a clear MXNetError."""
        stats = self.comm_stats
        stats["calls"] += 1
        stats["by_op"][what] = stats["by_op"].get(what, 0) + 1
        stats["bytes_sent"] += int(sent if sent is not None else nbytes)
        try:
            return fn(*args)
        except Exception as err:  # noqa: BLE001 - gloo/NCCL raise RuntimeError subclasses
            raise self._failure(err, what, keys) from err

    def _failure(self, err, what, keys):
        info = self._info
        try:
            from ._faults import describe_failure
        except ImportError:  # pragma: no cover
            describe_failure = None
        if describe_failure is not None:
            try:
                return describe_failure(err, what, keys, info.store, info.rank,
                                        info.world_size, info.timeout)
            except Exception:  # noqa: BLE001 - diagnostics must not hide the failure
                pass
        shown = list(keys)[:8] if keys is not None else []
        return MXNetError(f"kvstore {what} (keys {shown}) failed on rank {info.rank} of "
                          f"{info.world_size}: {err}")

    def _ring_bytes(self, nbytes):
        n = self.num_workers
        return 2 * nbytes * (n - 1) // n if n > 1 else 0

    def _allreduce(self, what, keys, t):
        if self.num_workers == 1:
            return
        dist = _dist()
        nb = t.numel() * t.element_size()
        self._collective(what, keys, dist.all_reduce, t, nbytes=nb, sent=self._ring_bytes(nb))

    def _broadcast(self, what, keys, t):
        if self.num_workers == 1:
            return
        dist = _dist()
        nb = t.numel() * t.element_size()
        self._collective(what, keys, dist.broadcast, t, 0,
                         nbytes=nb, sent=nb if self.rank == 0 else 0)

    def _gather(self, what, keys, out, inp):
        """All-gather ``inp`` (same size on every rank) into ``out`` (world x size)."""
        if self.num_workers == 1:
            out.copy_(inp.reshape(-1))
            return
        nb = inp.numel() * inp.element_size()
        self._collective(what, keys, _all_gather, out, inp,
                         sent=nb * (self.num_workers - 1))

    def _scatter_sum(self, what, keys, out, inp):
        if self.num_workers == 1:
            out.copy_(inp)
            return
        n = self.num_workers
        nb = inp.numel() * inp.element_size()
        self._collective(what, keys, _reduce_scatter, out, inp, sent=nb * (n - 1) // n)

    def _gather_variable(self, what, keys, t):
        """All-gather 1-D tensors of different lengths: the list of every rank's tensor."""
        n = self.num_workers
        if n == 1:
            return [t]
        count = torch.tensor([t.shape[0]], dtype=torch.int64, device=t.device)
        counts = torch.empty(n, dtype=torch.int64, device=t.device)
        self._gather(what, keys, counts, count)
        counts = counts.tolist()
        top = max(counts)
        if top == 0:
            return [t[:0] for _ in range(n)]
        padded = torch.zeros((top,) + tuple(t.shape[1:]), dtype=t.dtype, device=t.device)
        padded[:t.shape[0]] = t
        out = torch.empty((n * top,) + tuple(t.shape[1:]), dtype=t.dtype, device=t.device)
        self._gather(what, keys, out, padded)
        return [out[r * top:r * top + c] for r, c in enumerate(counts)]

    def _same_call(self, what, items, always=False):
        """Check (once per distinct call) that every worker makes the same call.

        ``items`` are (key, shape, dtype, stype) tuples. gloo aborts the process when workers
        exchange buffers of different sizes, so a call whose keys or shapes differ between
        workers is caught here, before its first collective, with a message naming the ranks.
        """
        if self.num_workers == 1:
            return
        sig = (what, tuple(items))
        if not always and sig in self._checked:
            return
        code = zlib.crc32(repr(sig).encode("utf-8"))
        mine = torch.tensor([code], dtype=torch.int64)
        every = torch.empty(self.num_workers, dtype=torch.int64)
        self._gather(what, [k for k, *_ in items], every, mine)
        codes = every.tolist()
        if len(set(codes)) != 1:
            odd = [r for r, c in enumerate(codes) if c != codes[0]]
            shown = ", ".join(f"{k!r}{tuple(shape)}" for k, shape, *_ in items[:6])
            more = f" and {len(items) - 6} more" if len(items) > 6 else ""
            raise MXNetError(
                f"kvstore {what}: the workers made different calls: rank {self.rank} "
                f"{_VERBS.get(what, what)} keys [{shown}{more}], but rank(s) {odd} differ from rank 0 in their "
                "keys, shapes or dtypes. Every worker must make the same sequence of "
                "init/push/pushpull calls with the same keys")
        self._checked.add(sig)

    def barrier(self):
        """Wait until every worker reaches this point."""
        if self.num_workers == 1:
            return
        t = torch.zeros(1)
        self._collective("barrier", None, _dist().all_reduce, t)

    _barrier = barrier

    # ------------------------------------------------------------------ init
    def _assign_owner(self, k, numel):
        if k in self._owner:
            return
        load = self._load
        r = min(range(len(load)), key=lambda i: (load[i], i))
        self._owner[k] = r
        load[r] += numel

    def init(self, key, value):
        """Initialise keys; rank 0's values win and every worker holds them afterwards.

        Parameters
        ----------
        key : str, int, or list of str or int
            The keys.
        value : NDArray or list of NDArray
            The values (one per key).
        """
        # (a key initialised again takes rank 0's new value)
        flat = self._init_items(key, value, reinit=True)
        if self._async:
            self._server.init(flat)
            return
        self._same_call("init", [(k, tuple(v.shape), str(v.dtype), v.stype) for k, v in flat],
                        always=True)
        with torch.no_grad():
            dense = []
            for k, v in flat:
                self._drop_key_buffers(k)
                if v.stype != "default":
                    self._init_sparse(k, v)
                    continue
                t = v._t.detach()
                dev = self._store_device(t)
                stored = _new(t.to(dev, copy=True), v._ctx if t.device == dev else _cpu_ctx())
                self._store[k] = stored
                dense.append((k, stored._t))
            # Owners: the keys of one call, largest first (ties in call order), each to the
            # least-loaded rank; every worker computes the same assignment.
            for k, t in sorted(dense, key=lambda kt: -kt[1].numel()):
                self._assign_owner(k, t.numel())
            for (dtype, dev), items in _buckets(dense).items():
                keys = [k for k, _ in items]
                ts = [t for _, t in items]
                buf = torch.cat([t.reshape(-1) for t in ts]) if len(ts) > 1 else ts[0].reshape(-1)
                self._broadcast("init", keys, buf)
                if len(ts) > 1:
                    torch._foreach_copy_([t.reshape(-1) for t in ts], _split(buf, ts))
                elif buf.data_ptr() != ts[0].data_ptr():
                    ts[0].copy_(buf.view(ts[0].shape))

    def broadcast_values(self, arrays):
        """Overwrite every array with rank 0's value (one broadcast per dtype and device).

        ``arrays`` is a list of lists: the copies of one value on this worker's contexts; the
        first copy is broadcast and then copied into the others. The Trainer calls it when it
        is created, so that every worker's first forward pass already uses rank 0's weights.
        """
        if self.num_workers == 1:
            return
        firsts = [(i, copies[0]._t) for i, copies in enumerate(arrays)]
        with torch.no_grad():
            for (dtype, dev), items in _buckets(firsts).items():
                ts = [t for _, t in items]
                buf = torch.cat([t.reshape(-1) for t in ts])
                self._broadcast("broadcast", None, buf)
                torch._foreach_copy_([t.reshape(-1) for t in ts], _split(buf, ts))
            for copies in arrays:
                for c in copies[1:]:
                    c._t.copy_(copies[0]._t)

    def _init_sparse(self, k, v):
        stored = v.copyto(v.context if self._device_comm or v.context.device_type != "gpu"
                          else _cpu_ctx())
        dense = stored._t.detach().clone()
        self._broadcast("init", [k], dense)
        self._store[k] = _sp.cast_storage(_new(dense, stored.context), v.stype)
        self._assign_owner(k, dense.numel())

    def _drop_key_buffers(self, k):
        self._merge.pop(k, None)
        self._aliased.discard(k)
        if self._layouts:
            self._layouts = {kk: lay for kk, lay in self._layouts.items() if k not in kk[0]}
        if self._flat_cache:
            self._flat_cache = {kk: f for kk, f in self._flat_cache.items() if k not in kk[0]}
        self._comp_residual.pop(k, None)

    # ------------------------------------------------------------------ push
    def _push_groups(self, groups, write_back=False):
        if self._async:
            self._server.push(groups)
            return False
        self._same_call("push", [(k, tuple(vals[0].shape), str(vals[0].dtype),
                                  "sparse" if _is_sparse(self, k, vals) else "default")
                                 for k, vals in groups])
        sparse = [(k, vals) for k, vals in groups if _is_sparse(self, k, vals)]
        if sparse:
            for k, vals in sparse:
                self._push_sparse(k, vals)
            groups = [(k, vals) for k, vals in groups if not _is_sparse(self, k, vals)]
        if not groups:
            return False
        self._validate_push(groups)
        with torch.no_grad():
            merged = self._local_merge(groups)
            keys = [k for k, _ in groups]
            for (dtype, dev), items in _buckets(list(zip(keys, merged))).items():
                bkeys = [k for k, _ in items]
                bvals = [t for _, t in items]
                if self._compression is not None:
                    self._push_compressed(bkeys, bvals)
                elif self._updater is not None:
                    self._push_sharded(bkeys, bvals, dtype, dev)
                else:
                    self._push_sum(bkeys, bvals, dtype, dev)
        return False

    def _local_merge(self, groups):
        n = len(groups[0][1])
        if n >= 2 and len(groups) > 1 and all(len(v) == n for _, v in groups):
            done = self._reduce_batch(groups, n, False)
            if done is not None:
                return done[0]
        return [self._reduce_one(k, vals) for k, vals in groups]

    def _flat(self, keys, ts, dtype, dev):
        ck = (tuple(keys), dtype, dev)
        flat = self._flat_cache.get(ck)
        total = sum(t.numel() for t in ts)
        if flat is None or flat.numel() != total:
            flat = self._flat_cache[ck] = torch.empty(total, dtype=dtype, device=dev)
        return flat

    def _push_sum(self, keys, vals, dtype, dev):
        """No optimizer: the stored values become the sums over all workers."""
        flat = self._flat(keys, vals, dtype, dev)
        views = _split(flat, vals)
        torch._foreach_copy_(views, [v.reshape(-1) for v in vals])
        self._allreduce("push", keys, flat)
        stored = [self._stored_tensor(k, v) for k, v in zip(keys, vals)]
        torch._foreach_copy_([s.reshape(-1) for s in stored], views)

    def _stored_tensor(self, k, like):
        st = self._store[k]
        if st._t.device != like.device:
            self._store[k] = st = _new(st._t.to(like.device), st._ctx)
        return st._t

    def _push_sharded(self, keys, vals, dtype, dev):
        """With an optimizer: sum the gradients onto their owners, each owner updates its
        keys, and the owners' new weights reach every rank.

        On CUDA (NCCL) that is one reduce-scatter and one all-gather. On CPU (gloo), whose
        reduce-scatter and all-gather are each slower than an all-reduce of the whole buffer,
        the keys are laid out in one segment per owner; each segment is reduced to its owner
        and, after the update, broadcast from it (2 x N calls, issued together; measured
        faster than all-reducing the gradients and the weights, bench/RESULTS.md).
        """
        if _use_scatter(dev):
            self._push_scattered(keys, vals, dtype, dev)
            return
        lay = self._owner_layout(keys, vals, dtype, dev)
        torch._foreach_copy_(lay.views, vals)
        self._segments("push", keys, lay, reduce=True)
        if lay.own:
            own_keys = [keys[i] for i in lay.own]
            self._apply_updater(own_keys, [lay.views[i] for i in lay.own])
        self._broadcast_owned(keys, lay)

    def _owner_layout(self, keys, like, dtype, dev):
        lk = (("owners",) + tuple(keys), dtype, dev)
        lay = self._layouts.get(lk)
        if lay is None:
            lay = self._layouts[lk] = _OwnerLayout(keys, like, self._owner, self.num_workers,
                                                   self.rank, dtype, dev)
        return lay

    def _segments(self, what, keys, lay, reduce):
        """Reduce each owner segment to its owner (``reduce``), or broadcast it from there."""
        if self.num_workers == 1:
            return
        dist = _dist()
        works = []
        stats = self.comm_stats
        for r, lo, hi in lay.segs:
            seg = lay.flat[lo:hi]
            nb = seg.numel() * seg.element_size()
            stats["calls"] += 1
            stats["by_op"][what] = stats["by_op"].get(what, 0) + 1
            if reduce:
                stats["bytes_sent"] += nb if r != self.rank else 0
                fn = lambda: dist.reduce(seg, dst=r, async_op=True)  # noqa: E731
            else:
                stats["bytes_sent"] += nb * (self.num_workers - 1) if r == self.rank else 0
                fn = lambda: dist.broadcast(seg, src=r, async_op=True)  # noqa: E731
            try:
                works.append(fn())
            except Exception as err:  # noqa: BLE001
                raise self._failure(err, what, keys) from err
        return self._wait_all(works, what, keys)

    def _wait_all(self, works, what, keys):
        failure = None
        for w in works:
            try:
                w.wait()
            except Exception as err:  # noqa: BLE001
                failure = failure or err
        if failure is not None:
            raise self._failure(failure, what, keys) from failure

    def _broadcast_owned(self, keys, lay):
        """Every rank gets the owners' stored values of ``keys`` (through ``lay``'s buffer)."""
        stored = [self._store[k]._t for k in keys]
        if lay.own:
            torch._foreach_copy_([lay.views[i] for i in lay.own], [stored[i] for i in lay.own])
        self._segments("pull", keys, lay, reduce=False)
        if lay.others:
            torch._foreach_copy_([stored[i] for i in lay.others],
                                 [lay.views[i] for i in lay.others])

    def _push_scattered(self, keys, vals, dtype, dev):
        """reduce-scatter, update the owned keys, all-gather the weights (NCCL)."""
        lk = (tuple(keys), dtype, dev)
        lay = self._layouts.get(lk)
        if lay is None or lay.flat.device != dev:
            lay = self._layouts[lk] = _Layout(keys, vals, self._owner, self.num_workers,
                                              self.rank, dtype, dev)
        torch._foreach_copy_(lay.views, vals)
        self._scatter_sum("push", keys, lay.out, lay.flat)
        if lay.own:
            own_keys = [keys[i] for i in lay.own]
            self._apply_updater(own_keys, list(lay.own_out))
            weights = [self._store[k]._t for k in own_keys]
            torch._foreach_copy_(lay.own_out, weights)
        self._gather("pull", keys, lay.flat, lay.out)
        if lay.others:
            dsts = [self._stored_tensor(keys[i], vals[i]) for i in lay.others]
            torch._foreach_copy_(dsts, [lay.views[i] for i in lay.others])

    def _push_compressed(self, keys, vals):
        """Quantise with this worker's residuals, all-gather the packed words, unpack, sum.

        Each key starts on a word boundary (MXNet packs every key on its own), so the whole
        bucket packs and unpacks in one pass.
        """
        comp = self._compression
        per_word = comp.values_per_word
        starts, off = [], 0
        for v in vals:
            starts.append(off)
            off += -(-v.numel() // per_word) * per_word
        dtype, dev = vals[0].dtype, vals[0].device
        qbuf = torch.zeros(off, dtype=dtype, device=dev)
        for k, v, st in zip(keys, vals, starts):
            r = self._comp_residual.get(k)
            if r is None or r.shape != v.shape or r.dtype != v.dtype or r.device != v.device:
                r = self._comp_residual[k] = torch.zeros_like(v)
            qbuf[st:st + v.numel()].copy_(comp.quantize_(v, r).reshape(-1))
        mine = comp.pack(qbuf)
        n = self.num_workers
        width = mine.numel()
        everyone = torch.empty(n * width, dtype=mine.dtype, device=mine.device)
        self._gather("push", keys, everyone, mine)
        total = comp.unpack(everyone[:width], off, dtype)
        for r in range(1, n):
            total.add_(comp.unpack(everyone[r * width:(r + 1) * width], off, dtype))
        sums = [total[st:st + v.numel()].view(v.shape) for v, st in zip(vals, starts)]
        if self._updater is not None:
            # Every rank updates every key (identical inputs give identical weights), so only
            # the packed gradients cross the wire.
            self._replicated_update = True
            self._apply_updater(keys, sums)
        else:
            for k, sm in zip(keys, sums):
                self._stored_tensor(k, sm).copy_(sm)

    def _push_sparse(self, k, vals):
        """row_sparse push: sum over contexts, all-gather every worker's rows, sum in rank
        order; the update (or replacement) then runs on every rank."""
        stored = self._stored(k)
        for v in vals:
            if v.shape != stored.shape:
                raise MXNetError(f"push: key {k!r} holds shape {stored.shape} but a value of "
                                 f"shape {v.shape} was pushed")
            if v.stype == "csr":
                raise MXNetError(f"push: key {k!r}: csr values cannot be pushed")
        ctx = stored.context
        with torch.no_grad():
            local = []
            for v in vals:
                v = v.as_in_context(ctx) if v.context != ctx else v
                local.append(v if v.stype == "row_sparse" else _sp.cast_storage(v, "row_sparse"))
            merged = local[0] if len(local) == 1 else _sp.add_n(*local)
            data = merged._sdata.detach()
            if data.dtype is not stored._t.dtype:
                raise MXNetError(f"push: key {k!r} holds dtype {stored.dtype.__name__} but a "
                                 f"value of dtype {merged.dtype.__name__} was pushed")
            idx = merged._aux[0].detach()
            all_idx = self._gather_variable("push", [k], idx)
            all_data = self._gather_variable("push", [k], data.contiguous())
            parts = [_sp._make_rsp(d.clone(), i.clone(), stored.shape, ctx)
                     for i, d in zip(all_idx, all_data) if i.numel()]
            if not parts:
                total = _sp.zeros("row_sparse", stored.shape, ctx=ctx, dtype=stored.dtype)
            elif len(parts) == 1:
                total = parts[0]
            else:
                total = _sp.add_n(*parts)
        upd = self._updater
        if upd is None:
            self._store[k] = total if stored.stype == "row_sparse" else \
                _new(total._t.detach().clone(), ctx)
            return
        from .local import _is_list_updater
        if _is_list_updater(upd):
            upd([k], [total], [stored])
        else:
            upd(k, total, stored)

    # ------------------------------------------------------------------ pull
    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copy the stored values (identical on every worker) into ``out``.

        Parameters
        ----------
        key : str, int, or list of str or int
            The keys.
        out : NDArray, list of NDArray, or list of lists
            The outputs.
        priority : int, optional
            Scheduling hint.
        ignore_sparse : bool, default True
            Skip sparse outputs. With False, a row_sparse key is an error: use
            ``row_sparse_pull``.
        """
        if out is None:
            raise AssertionError("pull needs `out`")
        pairs, use_str = _key_value_pairs(key, out, "pull")
        self._use_key_type(use_str)
        if self._async:
            self._server.pull(_group(pairs), ignore_sparse)
            return
        if not ignore_sparse:
            for k, outs in pairs:
                st = self._stored(k)
                if st.stype != "default" or any(o.stype != "default" for o in outs):
                    raise MXNetError(f"pull: key {k!r} is row_sparse (or has a sparse output): "
                                     "the distributed kvstore pulls sparse values with "
                                     "row_sparse_pull(key, out, row_ids)")
        self._pull_groups(_group(pairs), ignore_sparse)

    def pushpull(self, key, value, out=None, priority=0):
        """Push ``value`` and pull the result into ``out`` (``value`` when omitted)."""
        if self._async:
            self.push(key, value, priority)
            self.pull(key, value if out is None else out, priority)
            return
        super().pushpull(key, value, out, priority)

    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """Pull the rows ``row_ids`` of row_sparse values (each worker its own rows)."""
        if self._async:
            keys = key if isinstance(key, (list, tuple)) else [key]
            self._server.refresh(list(dict.fromkeys(keys)))
        super().row_sparse_pull(key, out, priority, row_ids)

    # ------------------------------------------------------------------ optimizer
    def set_optimizer(self, optimizer):
        """Run ``optimizer`` on every push: once per key and round, on the owning rank."""
        if self._async:
            self._server.set_optimizer(optimizer)
            return
        super().set_optimizer(optimizer)

    def set_gradient_compression(self, compression_params):
        """Quantise pushed gradients ('2bit' or '1bit') before they cross the wire."""
        from .compression import GradientCompression
        if self._async:
            raise MXNetError("gradient compression is not supported with dist_async (as in "
                             "MXNet): use dist_sync or dist_device_sync")
        self._compression = GradientCompression.from_params(compression_params)
        self._comp_residual = {}

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Gather every rank's optimizer states and write them to ``fname`` as one file.

        A collective call: every worker must make it. Each worker writes ``fname``
        (atomically; the same content on every worker).
        """
        if self._async:
            self._server.save_states(fname, dump_optimizer)
            return
        if self._updater is None:
            raise AssertionError("Cannot save states: no optimizer is set on this kvstore")
        if not hasattr(self._updater, "get_states"):
            raise MXNetError("the updater set with _set_updater has no states to save")
        blob = self._updater.get_states(dump_optimizer=True)
        blobs = self._gather_bytes("save_optimizer_states", blob)
        _atomic_write(fname, _merge_state_blobs(blobs, self._updater, dump_optimizer))

    def _gather_bytes(self, what, blob):
        t = torch.frombuffer(bytearray(blob), dtype=torch.uint8) if blob else \
            torch.zeros(0, dtype=torch.uint8)
        try:
            parts = self._gather_variable(what, None, t)
        except MXNetError as err:
            raise MXNetError(f"{err} ({what} is collective in a distributed job: call it on "
                             "every worker)") from err
        return [bytes(p.numpy().tobytes()) for p in parts]

    def load_optimizer_states(self, fname):
        """Read states written by :meth:`save_optimizer_states` (any number of workers).

        Each rank keeps the states of the keys it owns.
        """
        if self._async:
            self._server.load_states(fname)
            return
        super().load_optimizer_states(fname)
        self._drop_foreign_states()

    def _drop_foreign_states(self):
        if self._replicated_update or self._compression is not None:
            return
        upd = self._updater
        states = getattr(upd, "_states", None)
        if not isinstance(states, dict):
            return
        for k in list(states):
            owner = self._owner.get(k)
            stored = self._store.get(k)
            if owner is not None and owner != self.rank and \
                    (stored is None or stored.stype == "default"):
                del states[k]
                upd.states_synced.pop(k, None)

    def _send_command_to_servers(self, head, body):
        """There are no server processes (accepted for compatibility)."""


def _use_scatter(dev):
    """Reduce-scatter + all-gather for the sharded update: on CUDA (NCCL). On CPU (gloo) the
    per-owner reduce/broadcast is faster; ``NEOGLUON_DIST_SCATTER=1`` forces the NCCL-style
    path there too (the tests run it on gloo, so its logic is checked without a GPU)."""
    return dev.type == "cuda" or os.environ.get("NEOGLUON_DIST_SCATTER", "0") == "1"


def _cpu_ctx():
    from ..context import cpu
    return cpu(0)


def _is_sparse(store, k, vals):
    st = store._store.get(k)
    return (st is not None and st.stype != "default") or any(v.stype != "default" for v in vals)


def _buckets(items):
    """Group (key, tensor) pairs by (dtype, device), keeping call order inside each group."""
    out = {}
    for k, t in items:
        out.setdefault((t.dtype, t.device), []).append((k, t))
    return out


def _split(flat, like):
    views, off = [], 0
    for t in like:
        n = t.numel()
        views.append(flat[off:off + n])
        off += n
    return views


def _merge_state_blobs(blobs, updater, dump_optimizer):
    """One Updater states blob from every rank's: the union of the per-key states, and of the
    optimizer's per-key update counts (the largest count wins)."""
    from .. import optimizer as opt
    merged = None
    for blob in blobs:
        probe = opt.get_updater(updater.optimizer)
        probe.set_states(blob)
        if merged is None:
            merged = probe
            continue
        for k, s in probe._states.items():
            merged._states.setdefault(k, s)
        mo, po = merged.optimizer, probe.optimizer
        for dev, counts in po._all_index_update_counts.items():
            tgt = mo._all_index_update_counts.setdefault(dev, {})
            for k, c in counts.items():
                tgt[k] = max(tgt.get(k, 0), c)
        mo.num_update = max(mo.num_update, po.num_update)
    return merged.get_states(dump_optimizer)


class _Bucket:
    __slots__ = ("idxs", "keys", "layout", "flat", "views", "seen", "count", "handle")

    def __init__(self, idxs, keys, layout, flat, views):
        self.idxs, self.keys, self.layout, self.flat, self.views = idxs, keys, layout, flat, views
        self.seen = [False] * len(idxs)
        self.count = 0
        self.handle = None


class GradOverlap:
    """Reduce gradient buckets while ``backward`` still runs, as DDP does (opt-in).

    The Trainer creates it for a distributed store (more than one worker, not async, no
    compression) when it has one context and only dense ``grad_req='write'`` Parameters of one
    dtype, after its first step. Gradients are grouped into buckets of about ``bucket_bytes``
    in reverse Parameter order (the order backward tends to produce them). A hook on each
    weight copies its gradient into its bucket the moment autograd computes it; a full bucket
    starts its collective (reduce-scatter when the store runs the optimizer, all-reduce
    otherwise) asynchronously, buckets always in the same order on every worker. At ``step``
    the workers agree (one small all-reduce) that every worker's buckets hold exactly the
    gradients ``step`` would push (no gradient was changed after backward, one backward since
    the last step); then the reductions already done are used. Otherwise every worker drops them
    and takes the normal path, so the numbers never depend on the overlap.
    """

    def __init__(self, kv, keys, weights, grads, uok, bucket_bytes):
        from .. import autograd
        self.kv, self.uok = kv, uok
        self.keys = list(keys)
        self.scatter = False
        self.grads = grads            # the gradient NDArrays (their buffers after backward)
        like = [g._t for g in grads]
        dtype, dev = like[0].dtype, like[0].device
        self.scatter = uok and _use_scatter(dev)  # as DistKVStore._push_sharded chooses
        order = list(range(len(keys)))[::-1]
        groups, cur, size = [], [], 0
        for i in order:
            cur.append(i)
            size += like[i].numel() * like[i].element_size()
            if size >= bucket_bytes:
                groups.append(cur)
                cur, size = [], 0
        if cur:
            groups.append(cur)
        self.buckets = []
        for idxs in groups:
            bkeys = [self.keys[i] for i in idxs]
            blike = [like[i] for i in idxs]
            if self.scatter:
                lay = _Layout(bkeys, blike, kv._owner, kv.num_workers, kv.rank, dtype, dev)
                self.buckets.append(_Bucket(idxs, bkeys, lay, lay.flat, lay.views))
            elif uok:
                lay = _OwnerLayout(bkeys, blike, kv._owner, kv.num_workers, kv.rank, dtype, dev)
                self.buckets.append(_Bucket(idxs, bkeys, lay, lay.flat, lay.views))
            else:
                flat = torch.empty(sum(t.numel() for t in blike), dtype=dtype, device=dev)
                views = [v.view(t.shape) for v, t in zip(_split(flat, blike), blike)]
                self.buckets.append(_Bucket(idxs, bkeys, None, flat, views))
        self.where = {}
        for b in self.buckets:
            for j, i in enumerate(b.idxs):
                self.where[i] = (b, j)
        self.next_launch = 0
        self.used = 0           # steps completed from the overlapped reductions
        self.state = "idle"     # idle | running | done | bad
        self.versions = None
        self.writes = None
        me = weakref.ref(self)
        self.hooks = [w._t.register_hook(_hook(me, i)) for i, w in enumerate(weights)]
        kv._same_call("overlap", [(tuple(b.keys), len(b.keys)) for b in self.buckets],
                      always=True)
        self.listener = _Listener(me)
        autograd._BACKWARD_LISTENERS.append(self.listener)

    def close(self):
        """Stop listening (the Trainer drops the overlap)."""
        from .. import autograd
        for h in self.hooks:
            h.remove()
        self.hooks = []
        if self.listener in autograd._BACKWARD_LISTENERS:
            autograd._BACKWARD_LISTENERS.remove(self.listener)
        self._drain()

    # -------------------------------------------------------------- during backward
    def begin(self):
        self._drain()
        for b in self.buckets:
            b.seen = [False] * len(b.idxs)
            b.count = 0
        self.next_launch = 0
        self.state = "running"

    def ready(self, i, g):
        if self.state != "running":
            return
        b, j = self.where[i]
        if b.seen[j]:
            return
        with torch.no_grad():
            b.views[j].copy_(g.reshape(b.views[j].shape))
        b.seen[j] = True
        b.count += 1
        self._launch_ready()

    def _launch_ready(self):
        while self.next_launch < len(self.buckets):
            b = self.buckets[self.next_launch]
            if b.count < len(b.idxs):
                return
            self._launch(b)
            self.next_launch += 1

    def _launch(self, b):
        kv, dist = self.kv, _dist()
        nb = b.flat.numel() * b.flat.element_size()
        n = kv.num_workers
        stats = kv.comm_stats
        stats["calls"] += 1
        if self.scatter:
            stats["by_op"]["push"] = stats["by_op"].get("push", 0) + 1
            stats["bytes_sent"] += nb * (n - 1) // n
            fn = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
            b.handle = self._guard(b, fn, b.layout.out, b.flat, async_op=True)
        elif self.uok:
            stats["calls"] -= 1
            works = []
            for r, lo, hi in b.layout.segs:
                stats["calls"] += 1
                stats["by_op"]["push"] = stats["by_op"].get("push", 0) + 1
                stats["bytes_sent"] += (hi - lo) * b.flat.element_size() if r != kv.rank else 0
                works.append(self._guard(b, dist.reduce, b.flat[lo:hi], r, async_op=True))
            b.handle = works
        else:
            stats["by_op"]["push"] = stats["by_op"].get("push", 0) + 1
            stats["bytes_sent"] += kv._ring_bytes(nb)
            b.handle = self._guard(b, dist.all_reduce, b.flat, async_op=True)

    def _guard(self, b, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as err:  # noqa: BLE001
            self.state = "bad"
            raise self.kv._failure(err, "push", b.keys) from err

    def end(self, ok):
        if self.state != "running":
            return
        if not any(b.count for b in self.buckets):
            # A backward of another model (none of these weights reached): nothing to send.
            # Every worker runs the same backward passes, so every worker skips it.
            self.state = "idle"
            self.versions = None
            return
        if not ok:
            self.state = "bad"
        with torch.no_grad():
            # Gradients backward did not produce (unused Parameters) go as their buffers hold
            # them, as the normal step would push them; every worker launches every bucket.
            for b in self.buckets[self.next_launch:]:
                for j, i in enumerate(b.idxs):
                    if not b.seen[j]:
                        b.views[j].copy_(self.grads[i]._t)
                        b.seen[j] = True
                        b.count += 1
        self._launch_ready()
        if self.state == "running":
            self.state = "done"
        self.versions = [g._t._version for g in self.grads]
        self.writes = _autograd._UNVERSIONED_WRITES[0]

    # -------------------------------------------------------------- at step
    def _drain(self):
        for b in self.buckets:
            if b.handle is not None:
                h, b.handle = b.handle, None
                try:
                    for w in (h if isinstance(h, list) else [h]):
                        w.wait()
                except Exception as err:  # noqa: BLE001
                    self.state = "bad"
                    raise self.kv._failure(err, "push", b.keys) from err

    def take(self):
        """At ``step``: whether every worker's reductions are usable (a collective)."""
        # a gradient changed since backward: by a torch op (its version counter) or by an
        # NDArray write outside record(), which leaves versions alone (any such write counts)
        good = (self.state == "done" and self.versions is not None
                and self.writes == _autograd._UNVERSIONED_WRITES[0]
                and all(g._t._version == v for g, v in zip(self.grads, self.versions)))
        flag = torch.tensor([1 if good else 0], dtype=torch.int32)
        self.kv._collective("overlap", None, _dist().all_reduce, flag,
                            _dist().ReduceOp.MIN)
        self._drain()
        self.state = "idle"
        return bool(flag.item())

    def finish(self, outs):
        """Complete the step from the reduced buckets: update (or store the sums) and write
        the results into ``outs`` (the weights, or the gradients without an optimizer)."""
        kv = self.kv
        self.used += 1
        with torch.no_grad():
            for b in self.buckets:
                if self.uok and not self.scatter:
                    lay = b.layout
                    if lay.own:
                        kv._apply_updater([b.keys[j] for j in lay.own],
                                          [lay.views[j] for j in lay.own])
                    kv._broadcast_owned(b.keys, lay)
                elif self.uok:
                    lay = b.layout
                    if lay.own:
                        own_keys = [b.keys[i] for i in lay.own]
                        kv._apply_updater(own_keys, list(lay.own_out))
                        torch._foreach_copy_(lay.own_out, [kv._store[k]._t for k in own_keys])
                    kv._gather("pull", b.keys, lay.flat, lay.out)
                    if lay.others:
                        dsts = [kv._stored_tensor(b.keys[i], lay.views[i]) for i in lay.others]
                        torch._foreach_copy_(dsts, [lay.views[i] for i in lay.others])
                else:
                    dsts = [kv._stored_tensor(k, v) for k, v in zip(b.keys, b.views)]
                    torch._foreach_copy_(dsts, b.views)
            dsts, srcs = [], []
            for i, k in enumerate(self.keys):
                for o in outs[i]:
                    dsts.append(o._t)
                    srcs.append(kv._store[k]._t)
            torch._foreach_copy_(dsts, srcs)


def _hook(ref, i):
    def hook(g):
        overlap = ref()
        if overlap is not None:
            overlap.ready(i, g)
    return hook


class _Listener:
    """What autograd's backward calls; holds the overlap weakly (the Trainer owns it)."""

    __slots__ = ("ref",)

    def __init__(self, ref):
        self.ref = ref

    def begin(self):
        ov = self.ref()
        if ov is None:
            from .. import autograd
            if self in autograd._BACKWARD_LISTENERS:
                autograd._BACKWARD_LISTENERS.remove(self)
            return
        ov.begin()

    def end(self, ok):
        ov = self.ref()
        if ov is not None:
            ov.end(ok)
