"""The single-process store: 'local', 'device', 'nccl' and their variants.

Semantics follow MXNet 1.9.1's ``KVStoreLocal``:

- ``init`` copies a value into the store; a key can be initialised once.
- ``push`` sums the values given for a key (from any contexts). With an updater (set by
  ``set_optimizer``) the sum is applied to the stored value as a gradient; without one it
  replaces the stored value.
- ``pull`` copies the stored value into every output; ``pushpull`` is a push then a pull;
  ``broadcast`` is an init then a pull.

The sum runs in MXNet's order, so results match to the bit: the CPU stores ('local',
'local_allreduce_cpu', 'local_update_cpu') add ``v0 + (v1 + v2 + v3 + v4) + (v5 + ...)`` in
groups of four, the device stores ('device', 'local_allreduce_device', 'nccl') add left to right.
The CPU stores keep their values in CPU memory, the device stores on the device of the values.

Speed: a call with many keys (the Trainer sends all Parameters at once) is handled as one
batch. Sums go into persistent merge buffers, laid out as one flat buffer per batch; when the
values of each source are themselves views into one flat buffer (the Trainer arranges its
gradients that way), a whole batch is summed in a single kernel. The optimizer is called once
for the batch with lists (its multi-tensor path), and results are copied out with one
multi-tensor copy per output context.
"""
from __future__ import annotations


import operator

import torch

from .._fileio import write_bytes as _atomic_write  # the dist stores use it too
from ..base import MXNetError
from ..context import Context, cpu
from ..ndarray.ndarray import NDArray, _new
from .base import KVStoreBase
from .compression import GradientCompression
from . import _kernels, _sparse

__all__ = ["KVStore"]

_CPU = torch.device("cpu")


def _check_key(key):
    if not isinstance(key, (int, str)) or isinstance(key, bool):
        raise AssertionError(f"unexpected type for keys: {type(key)}")
    return isinstance(key, str)


def _as_values(vals, what):
    if isinstance(vals, NDArray):
        return [vals]
    if isinstance(vals, (list, tuple)):
        for v in vals:
            if not isinstance(v, NDArray):
                raise AssertionError(f"{what}: expected NDArray values, got {type(v).__name__}")
        return list(vals)
    raise AssertionError(f"{what}: expected an NDArray or a list of NDArrays, got "
                         f"{type(vals).__name__}")


def _key_value_pairs(keys, vals, what):
    """Flatten MXNet's (key, value) argument forms into ``[(key, [NDArray, ...]), ...]``.

    A single key takes one value or a list of values; a list of keys takes a parallel list
    whose items are values or lists of values. Keys of one call are all ints or all strings.
    """
    if isinstance(keys, (list, tuple)):
        if not isinstance(vals, (list, tuple)) or len(keys) != len(vals):
            raise AssertionError(f"{what}: {len(keys)} keys but "
                                 f"{len(vals) if isinstance(vals, (list, tuple)) else 1} "
                                 "values")
        pairs = []
        use_str = None
        for k, v in zip(keys, vals):
            is_str = _check_key(k)
            if use_str is None:
                use_str = is_str
            elif use_str != is_str:
                raise AssertionError("inconsistent types of keys detected.")
            pairs.append((k, _as_values(v, what)))
        return pairs, bool(use_str)
    is_str = _check_key(keys)
    return [(keys, _as_values(vals, what))], is_str


def _group(pairs):
    """Merge the values of repeated keys, keeping first-seen key order."""
    groups = {}
    for k, vs in pairs:
        groups.setdefault(k, []).extend(vs)
    return list(groups.items())


def _coalesced(ts):
    """A 1-D view covering ``ts`` when they lie back to back in one storage, else None."""
    t0 = ts[0]
    storage = t0.untyped_storage()
    sptr = storage.data_ptr()
    esize = t0.element_size()
    start = t0.data_ptr()
    ptr = start
    for t in ts:
        if (t.data_ptr() != ptr or not t.is_contiguous()
                or t.untyped_storage().data_ptr() != sptr):
            return None
        ptr += t.numel() * esize
    n = (ptr - start) // esize
    if n == t0.numel():
        return t0.reshape(-1)
    return t0.new_empty(0).set_(storage, t0.storage_offset(), (n,))


def _sum_into(out, srcs, grouped):
    """``out = sum(srcs)`` in MXNet's order (CPU stores ``grouped``, device stores left to right)."""
    n = len(srcs)
    if n == 1:
        out.copy_(srcs[0])
        return out
    if not grouped or n == 2:
        torch.add(srcs[0], srcs[1], out=out)
        for s in srcs[2:]:
            out.add_(s)
        return out
    out.copy_(srcs[0])
    for i in range(1, n, 4):
        part = srcs[i]
        for s in srcs[i + 1:i + 4]:
            part = part + s
        out.add_(part)
    return out




class KVStore(KVStoreBase):
    """MXNet's single-process key-value store (create it with ``mx.kv.create(name)``).

    Parameters
    ----------
    name : str
        The store type: 'local', 'device', 'nccl', 'local_allreduce_cpu',
        'local_allreduce_device', 'local_update_cpu' (or any other non-distributed name,
        which behaves as 'local' does, as in MXNet).
    """

    def __init__(self, name="local"):
        self._type = name.lower()
        self._device_comm = "device" in self._type or "nccl" in self._type
        self._store = {}           # key -> NDArray (the stored value)
        self._key_type = None      # 'int' or 'str' once the first key is seen
        self._updater = None
        self._compression = None
        self._residuals = {}       # (key, source index) -> tensor
        self._merge = {}           # key -> persistent merge buffer (tensor)
        self._batches = {}         # tuple of keys -> flat merge buffer for that batch
        self._aliased = set()      # keys whose stored value is their merge buffer
        self._pp_plan = None       # the checked form of the last plain pushpull (see below)

    # ------------------------------------------------------------------ properties
    @property
    def type(self):
        """The store type given to ``create``."""
        return self._type

    @property
    def rank(self):
        """Always 0: one process."""
        return 0

    @property
    def num_workers(self):
        """Always 1: one process."""
        return 1

    def is_capable(self, capability):
        """Whether the store supports ``capability``; it can run the optimizer."""
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return True
        raise ValueError(f"Unknown capability: {capability}")

    def __repr__(self):
        return f"<KVStore type={self._type!r} keys={len(self._store)}>"

    # ------------------------------------------------------------------ keys
    def _use_key_type(self, use_str):
        kind = "str" if use_str else "int"
        if self._key_type is None:
            self._key_type = kind
        elif self._key_type != kind:
            raise MXNetError(f"Mixed key types are not allowed: this store uses {self._key_type} "
                             f"keys, got a {kind} key")

    def _stored(self, key):
        try:
            return self._store[key]
        except KeyError:
            raise MXNetError(f"key {key!r} has not been inited: call kv.init (or "
                             "kv.broadcast) with this key first") from None

    def _store_device(self, t):
        # CPU stores keep values in (pinned) CPU memory; device stores on the value's device.
        return t.device if self._device_comm else _CPU

    # ------------------------------------------------------------------ init
    def _init_items(self, key, value, reinit=False):
        """The (key, value) pairs of an ``init`` call, checked: a key given twice in the call
        is an error, and so (unless ``reinit``) is a key that is already initialised."""
        pairs, use_str = _key_value_pairs(key, value, "init")
        self._use_key_type(use_str)
        flat = [(k, v) for k, vs in pairs for v in vs]
        seen = set()
        for k, _ in flat:
            if k in seen and reinit:
                raise MXNetError(f"duplicate init of key {k!r} in one call")
            if k in seen or (k in self._store and not reinit):
                raise MXNetError(f"duplicate init of key {k}. Please double check if you called "
                                 "kv.init or kv.broadcast with this key multiple times")
            seen.add(k)
        return flat

    def init(self, key, value):
        """Initialise one or several keys with values.

        Parameters
        ----------
        key : str, int, or list of str or int
            The keys.
        value : NDArray or list of NDArray
            The values (one per key).
        """
        flat = self._init_items(key, value)
        with torch.no_grad():
            for k, v in flat:
                if v.stype != "default":
                    self._store[k] = _sparse.init_value(self, v)
                    continue
                t = v._t.detach()
                dev = self._store_device(t)
                ctx = v._ctx if t.device == dev else cpu(0)
                self._store[k] = _new(t.to(dev, copy=True), ctx)

    def broadcast(self, key, value, out, priority=0):
        """Initialise ``key`` with ``value`` and copy it into ``out``.

        Parameters
        ----------
        key : str, int, or list of str or int
            The keys.
        value : NDArray or list of NDArray
            One value per key.
        out : NDArray, list of NDArray, or list of lists
            The outputs of each key.
        priority : int, optional
            Scheduling hint (calls run in order in one process).
        """
        out_pairs, _ = _key_value_pairs(key, out, "broadcast")
        self._check_outputs_before_init(key, value, out_pairs)
        self.init(key, value)
        self._pull_groups(_group(out_pairs), ignore_sparse=True)

    def _check_outputs_before_init(self, key, value, out_pairs):
        # A failed broadcast must not leave a half-initialised key behind.
        pairs, _ = _key_value_pairs(key, value, "broadcast")
        shapes = {k: vs[0].shape for k, vs in pairs}
        for k, outs in out_pairs:
            for o in outs:
                if k in shapes and o.stype == "default" and o.shape != shapes[k]:
                    raise MXNetError(f"broadcast: key {k!r} has shape {shapes[k]} but an output "
                                     f"has shape {o.shape}")

    # ------------------------------------------------------------------ push / pull
    def push(self, key, value, priority=0):
        """Push values into the store; the values given for one key are summed.

        With an optimizer set (``set_optimizer``) the sum updates the stored value as a
        gradient; otherwise it replaces it.

        Parameters
        ----------
        key : str, int, or list of str or int
            The keys.
        value : NDArray, list of NDArray, or list of lists
            The values: for each key one array or one array per source (context).
        priority : int, optional
            Scheduling hint (calls run in order in one process).
        """
        pairs, use_str = _key_value_pairs(key, value, "push")
        self._use_key_type(use_str)
        self._push_groups(_group(pairs))

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copy the stored values into ``out``.

        Parameters
        ----------
        key : str, int, or list of str or int
            The keys.
        out : NDArray, list of NDArray, or list of lists
            The outputs: for each key one array or several (one per context).
        priority : int, optional
            Scheduling hint.
        ignore_sparse : bool, default True
            Skip outputs with sparse storage.
        """
        if out is None:
            raise AssertionError("pull needs `out`")
        pairs, use_str = _key_value_pairs(key, out, "pull")
        self._use_key_type(use_str)
        self._pull_groups(_group(pairs), ignore_sparse)

    def pushpull(self, key, value, out=None, priority=0):
        """Push ``value`` and pull the result into ``out`` (``value`` when omitted).

        Parameters
        ----------
        key : str, int, or list of str or int
            The keys.
        value : NDArray, list of NDArray, or list of lists
            The values to sum.
        out : NDArray, list of NDArray, or list of lists, optional
            The outputs.
        priority : int, optional
            Scheduling hint.
        """
        plan = self._pp_plan
        if plan is not None and out is not None and plan.matches(self, key, value, out):
            plan.run(self)
            return
        pairs, use_str = _key_value_pairs(key, value, "pushpull")
        self._use_key_type(use_str)
        out_pairs = pairs if out is None else _key_value_pairs(key, out, "pushpull")[0]
        groups = _group(pairs)
        targets = self._pull_targets(_group(out_pairs), ignore_sparse=True)
        # in place (out is value): the outputs are the sources, so the sum may be written
        # back to them in the pass that reads them
        if self._push_groups(groups, write_back=out is None):
            targets = [(o, k) for o, k in targets if o.stype != "default"]
        self._copy_out(targets)
        if out is not None:
            self._pp_plan = _PushPullPlan.build(self, key, value, out, pairs, targets)

    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """Pull the rows ``row_ids`` of row_sparse values into row_sparse outputs.

        Parameters
        ----------
        key : str, int, or list of str or int
            The keys.
        out : RowSparseNDArray, or list of them (or list of lists)
            The outputs.
        priority : int, optional
            Scheduling hint.
        row_ids : NDArray or list of NDArray
            The rows to pull, one array per output (or one for all outputs).
        """
        if out is None:
            raise AssertionError("row_sparse_pull needs `out`")
        if row_ids is None:
            raise AssertionError("row_sparse_pull needs `row_ids`")
        if isinstance(row_ids, NDArray):
            row_ids = [row_ids]
        if not isinstance(row_ids, list):
            raise AssertionError("row_ids should be NDArray or list of NDArray")
        single_rowid = len(row_ids) == 1 and isinstance(out, list)
        first_out = [out[0]] if single_rowid else out
        pairs, use_str = _key_value_pairs(key, first_out, "row_sparse_pull")
        self._use_key_type(use_str)
        flat = [(k, o) for k, os_ in pairs for o in os_]
        rid_pairs, _ = _key_value_pairs(key, row_ids, "row_sparse_pull")
        rids = [r for _, rs in rid_pairs for r in rs]
        if len(rids) != len(flat):
            raise AssertionError("the number of row_ids doesn't match the number of values")
        for (k, o), r in zip(flat, rids):
            stored = self._stored(k)
            if o.stype != "row_sparse":
                raise MXNetError(f"row_sparse_pull: key {k!r}: expected row_sparse outputs, got "
                                 f"storage type '{o.stype}'")
            if stored.stype != "row_sparse":
                raise MXNetError(f"row_sparse_pull: key {k!r} holds a dense value; "
                                 "row_sparse_pull needs a row_sparse value (use pull)")
            self._row_sparse_pull_one(k, stored, o, r)
        if single_rowid:
            for o in out[1:]:
                out[0].copyto(o)

    # ------------------------------------------------------------------ sparse dispatch
    def _sparse_unsupported(self, op, key):
        raise MXNetError(f"kvstore {op}: key {key!r}: row_sparse values are not supported by "
                         "this store yet")

    def _row_sparse_pull_one(self, key, stored, out, row_id):
        _sparse.row_sparse_pull_one(self, key, stored, out, row_id)

    # ------------------------------------------------------------------ core
    def _validate_push(self, groups):
        for k, vals in groups:
            stored = self._stored(k)
            for v in vals:
                if v.stype != "default":
                    self._sparse_unsupported("push", k)
                if v.shape != stored.shape:
                    raise MXNetError(f"push: key {k!r} holds shape {stored.shape} but a value of "
                                     f"shape {v.shape} was pushed")
                if v._t.dtype is not stored._t.dtype:
                    raise MXNetError(f"push: key {k!r} holds dtype {stored.dtype.__name__} but a "
                                     f"value of dtype {v.dtype.__name__} was pushed")

    def _push_groups(self, groups, write_back=False):
        """Push the (key, values) groups. ``write_back``: the dense values may also receive
        the sum; returns True when they did (a plain two-source sum, batched)."""
        if groups and any(_sparse.is_sparse_push(self, k, vals) for k, vals in groups):
            dense = []
            for k, vals in groups:
                if _sparse.is_sparse_push(self, k, vals):
                    _sparse.push(self, k, vals)
                else:
                    dense.append((k, vals))
            groups = dense
        if not groups:
            return False
        self._validate_push(groups)
        write_back = write_back and self._updater is None
        with torch.no_grad():
            merged, written = self._reduce(groups, write_back)
            keys = [k for k, _ in groups]
            if self._updater is not None:
                self._apply_updater(keys, merged)
            else:
                for k, m, (_, vals) in zip(keys, merged, groups):
                    stored = self._store[k]
                    if m is self._merge.get(k):
                        # The merge buffer becomes the stored value, as in MXNet; no copy.
                        if stored._t is not m:
                            self._store[k] = _new(m, stored._ctx if m.device == stored._t.device
                                                  else vals[0]._ctx)
                        self._aliased.add(k)
                    else:
                        self._own(k)
                        self._store[k]._t.copy_(m)
        return written

    def _own(self, k):
        """Give key ``k`` a stored buffer of its own (not shared with its merge buffer)."""
        if k in self._aliased:
            st = self._store[k]
            self._store[k] = _new(st._t.clone(), st._ctx)
            self._aliased.discard(k)

    def _apply_updater(self, keys, merged):
        for k in keys:
            self._own(k)
        weights = [self._store[k] for k in keys]
        grads = []
        for k, m, w in zip(keys, merged, weights):
            if m.device != w._t.device:
                # As MXNet: the stored weight follows the merged gradient to its device.
                w = self._store[k] = _new(w._t.to(m.device), _ctx_of(m, w._ctx))
            grads.append(_new(m, w._ctx))
        weights = [self._store[k] for k in keys]
        upd = self._updater
        if _is_list_updater(upd):
            upd(list(keys), grads, weights)
        else:
            for k, g, w in zip(keys, grads, weights):
                upd(k, g, w)

    def _reduce(self, groups, write_back=False):
        """The merged (summed) tensor of each group, in MXNet's summation order, and whether
        the sum was also written back over the values (only asked with ``write_back``)."""
        comp = self._compression
        if comp is not None:
            return [self._reduce_compressed(k, vals) for k, vals in groups], False
        n = len(groups[0][1])
        if n >= 2 and len(groups) > 1 and all(len(v) == n for _, v in groups):
            done = self._reduce_batch(groups, n, write_back)
            if done is not None:
                return done
        return [self._reduce_one(k, vals) for k, vals in groups], False

    def _merge_buffer(self, k, like, dev):
        m = self._merge.get(k)
        if m is None or m.shape != like.shape or m.dtype != like.dtype or m.device != dev:
            if k in self._aliased:
                self._own(k)
            m = torch.empty(like.shape, dtype=like.dtype, device=dev)
            self._merge[k] = m
        return m

    def _reduce_one(self, k, vals):
        ts = [v._t.detach() for v in vals]
        dev = self._store_device(ts[0])
        if len(ts) == 1:
            t = ts[0]
            return t if t.device == dev else t.to(dev)
        ts = [t if t.device == dev else t.to(dev) for t in ts]
        m = self._merge_buffer(k, ts[0], dev)
        return _sum_into(m, ts, grouped=not self._device_comm)

    def _reduce_batch(self, groups, n, write_back=False):
        """Sum a batch of keys with one flat merge buffer: (merged, written back), or None
        when the batch does not fit."""
        first = [vals[0]._t for _, vals in groups]
        dtype = first[0].dtype
        dev = self._store_device(first[0])
        for t in first:
            if t.dtype is not dtype or self._store_device(t) != dev:
                return None
        keys = tuple(k for k, _ in groups)
        flat = self._batches.get(keys)
        if flat is None or flat.dtype is not dtype or flat.device != dev or \
                any(self._merge.get(k) is None or self._merge[k]._base is not flat for k in keys):
            total = sum(t.numel() for t in first)
            flat = torch.empty(total, dtype=dtype, device=dev)
            off = 0
            for k, t in zip(keys, first):
                if k in self._aliased:
                    self._own(k)
                self._merge[k] = flat[off:off + t.numel()].view(t.shape)
                off += t.numel()
            self._batches = {kk: f for kk, f in self._batches.items()
                             if not set(kk) & set(keys)}
            self._batches[keys] = flat
        grouped = not self._device_comm
        per_source = [[vals[j]._t.detach() for _, vals in groups] for j in range(n)]
        sources = [_coalesced(ts) for ts in per_source]
        if all(s is not None for s in sources):
            if (write_back and n == 2 and all(s.device == dev for s in sources)
                    and _kernels.sum2_bcast(flat, sources[0], sources[1])):
                return [self._merge[k] for k in keys], True
            sources = [s if s.device == dev else s.to(dev) for s in sources]
            _sum_into(flat, sources, grouped)
        else:
            for i, k in enumerate(keys):
                ts = [per_source[j][i] for j in range(n)]
                ts = [t if t.device == dev else t.to(dev) for t in ts]
                _sum_into(self._merge[k], ts, grouped)
        return [self._merge[k] for k in keys], False

    def _reduce_compressed(self, k, vals):
        # Every source is quantised, even a single one, as MXNet's device store does, so
        # the residuals (error feedback) evolve exactly as there.
        comp = self._compression
        ts = [v._t.detach() for v in vals]
        dev = self._store_device(ts[0])
        parts = []
        for i, t in enumerate(ts):
            r = self._residuals.get((k, i))
            if r is None or r.shape != t.shape or r.device != t.device or r.dtype != t.dtype:
                r = self._residuals[(k, i)] = torch.zeros_like(t)
            q = comp.quantize_(t, r)
            parts.append(q if q.device == dev else q.to(dev))
        m = self._merge_buffer(k, parts[0], dev)
        return _sum_into(m, parts, grouped=False)

    def _pull_groups(self, groups, ignore_sparse=True):
        self._copy_out(self._pull_targets(groups, ignore_sparse))

    def _pull_targets(self, groups, ignore_sparse):
        """Check a pull and list its (destination, key) pairs, before anything is written."""
        targets = []
        for k, outs in groups:
            stored = self._stored(k)
            for o in outs:
                if o.stype != "default" and ignore_sparse:
                    continue
                if o.shape != stored.shape:
                    raise MXNetError(f"pull: key {k!r} holds shape {stored.shape} but the output "
                                     f"has shape {o.shape}")
                targets.append((o, k))
        return targets

    def _copy_out(self, targets):
        if not targets:
            return
        with torch.no_grad():
            dense = []
            for o, k in targets:
                if o.stype != "default":
                    _sparse.copy_into(o, self._store[k])
                else:
                    dense.append((o._t, self._store[k]._t))
            if len(dense) > 1:
                dense = self._copy_streaming(dense)
            by_dev = {}
            for dst, src in dense:
                if dst.dtype is src.dtype and dst.device == src.device:
                    pair = by_dev.setdefault(dst.device, ([], []))
                    pair[0].append(dst)
                    pair[1].append(src)
                else:
                    dst.copy_(src)
            for dsts, srcs in by_dev.values():
                torch._foreach_copy_(dsts, srcs)

    @staticmethod
    def _copy_streaming(dense):
        """Copy sources with several outputs through the compiled kernel (one read of the
        source, streaming writes); returns the (dst, src) pairs left for torch."""
        per_src = {}
        for dst, src in dense:
            entry = per_src.get(id(src))
            if entry is None:
                per_src[id(src)] = (src, [dst])
            else:
                entry[1].append(dst)
        groups = {}
        for src, dsts in per_src.values():
            groups.setdefault(len(dsts), []).append((src, dsts))
        left = []
        for n_out, pairs in groups.items():
            rest = _kernels.copy_multi(pairs) if n_out > 1 else pairs
            left.extend((d, s) for s, ds in rest for d in ds)
        return left

    # ------------------------------------------------------------------ optimizer
    def set_optimizer(self, optimizer):
        """Run ``optimizer`` on every push (the stored values become the weights).

        Parameters
        ----------
        optimizer : Optimizer
            The optimizer.
        """
        from .. import optimizer as opt
        self._set_updater(opt.get_updater(optimizer))

    def _set_updater(self, updater):
        """Set the function applied on push: ``updater(key, merged_value, stored_value)``.

        Parameters
        ----------
        updater : callable
            Called with the key, the summed pushed value and the stored value (updated in
            place). An ``optimizer.Updater`` is called once per batch with lists.
        """
        self._updater = updater

    def set_gradient_compression(self, compression_params):
        """Quantise pushed gradients with error feedback (device stores only).

        Parameters
        ----------
        compression_params : dict
            ``{'type': '2bit', 'threshold': 0.5}`` (MXNet 1.9.1) or ``{'type': '1bit',
            'threshold': t}`` (MXNet 2.x). '2bit' sends each value as ``+-threshold`` or 0
            and keeps the remainder for the next step; '1bit' sends +1 or -1.
        """
        if "device" in self._type or "dist" in self._type:
            self._compression = GradientCompression.from_params(compression_params)
            self._residuals = {}
        else:
            raise Exception("Gradient compression is not supported for this type of kvstore")

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Write the updater's states to ``fname`` (atomically; no pickle).

        Parameters
        ----------
        fname : str
            Path of the states file.
        dump_optimizer : bool, default False
            Include the optimizer's configuration, update counts and schedule.
        """
        if self._updater is None:
            raise AssertionError("Cannot save states for distributed training")
        if not hasattr(self._updater, "get_states"):
            raise MXNetError("the updater set with _set_updater has no states to save")
        _atomic_write(fname, self._updater.get_states(dump_optimizer))

    def load_optimizer_states(self, fname):
        """Read the updater's states from ``fname`` (neogluon's file, or MXNet's pickle; see
        :meth:`neogluon.optimizer.Updater.set_states`).

        Parameters
        ----------
        fname : str
            Path of the states file.
        """
        if self._updater is None:
            raise AssertionError("Cannot load states for distributed training")
        if not hasattr(self._updater, "set_states"):
            raise MXNetError("the updater set with _set_updater cannot load states")
        with open(fname, "rb") as f:
            data = f.read()
        self._updater.set_states(data)

    def _barrier(self):
        """Wait for all workers (nothing to wait for in one process)."""

    barrier = _barrier

    def _send_command_to_servers(self, head, body):
        """There are no servers in one process."""


def _ctx_of(t, fallback):
    if t.device.type == "cuda":
        return Context("gpu", t.device.index or 0)
    return fallback if fallback.device_type != "gpu" else cpu(0)


def _is_list_updater(upd):
    try:
        from ..optimizer import Updater
    except ImportError:  # the optimizer layer is optional for plain stores
        return False
    return isinstance(upd, Updater)


# what a plan's run stands for: a store that changes any of these (the distributed store's
# reduction over workers) never gets a plan
_PLAN_BYPASSES = ("_push_groups", "_reduce", "_reduce_one", "_apply_updater", "_copy_out",
                  "_validate_push", "_pull_targets")


class _PushPullPlan:
    """The checked form of a ``pushpull`` that a training loop repeats every step.

    ``Module.update`` pushes every gradient and pulls every weight with one call per step,
    on the same arrays each time. Parsing the key/value forms, checking shapes, dtypes and
    storage types, grouping and reducing cost more Python than the optimizer's update of a
    small network. After a call that took the general path, a call of the simplest kind
    (one source per key, dense arrays on the store's device, an updater, no compression,
    one output per key of the stored dtype) is remembered with the objects it touched; a
    later call on the same objects, whose tensors are still the same tensors (so the
    shapes, dtypes and devices are too) and whose store entries are unchanged, runs the
    updater and the copies directly: the same work, in the same order, without re-checking.
    """

    __slots__ = ("keys", "vals", "outs", "vts", "ots", "stored", "sts", "grads", "updater")

    @classmethod
    def build(cls, store, key, value, out, pairs, targets):
        kind = type(store)
        if (any(getattr(kind, m) is not getattr(KVStore, m) for m in _PLAN_BYPASSES)
                or store._updater is None or store._compression is not None
                or not isinstance(key, list) or not isinstance(value, list)
                or not isinstance(out, list) or len(key) != len(set(key))
                or len(out) != len(key) or len(targets) != len(key)):
            return None
        vals, outs = [], []
        for (k, vs), o in zip(pairs, out):
            if len(vs) != 1 or not isinstance(vs[0], NDArray) or type(vs[0]) is not NDArray:
                return None
            if isinstance(o, (list, tuple)):
                if len(o) != 1:
                    return None
                o = o[0]
            if type(o) is not NDArray:
                return None
            vals.append(vs[0])
            outs.append(o)
        stored = [store._store.get(k) for k in key]
        for k, v, o, st in zip(key, vals, outs, stored):
            if (st is None or type(st) is not NDArray or k in store._aliased
                    or v.stype != "default" or o.stype != "default" or st.stype != "default"):
                return None
            vt, ot, stt = v._t, o._t, st._t
            if (vt.requires_grad or vt.device != store._store_device(vt)
                    or vt.device != stt.device or vt.dtype is not stt.dtype
                    or ot.dtype is not stt.dtype or ot.device != stt.device
                    or ot.shape != stt.shape or vt.shape != stt.shape
                    or ot.data_ptr() == stt.data_ptr()):
                return None
        plan = cls()
        plan.keys = tuple(key)
        plan.vals, plan.outs, plan.stored = vals, outs, stored
        plan.vts = [v._t for v in vals]
        plan.ots = [o._t for o in outs]
        plan.sts = [st._t for st in stored]
        plan.grads = [_new(t, st._ctx) for t, st in zip(plan.vts, stored)]
        plan.updater = store._updater
        return plan

    def matches(self, store, key, value, out):
        if (type(key) is not list or store._updater is not self.updater
                or store._compression is not None or tuple(key) != self.keys
                or len(value) != len(self.vals) or len(out) != len(self.outs)):
            return False
        for v, pv, o, po in zip(value, self.vals, out, self.outs):
            if type(v) is list:
                if len(v) != 1:
                    return False
                v = v[0]
            if type(o) is list:
                if len(o) != 1:
                    return False
                o = o[0]
            if v is not pv or o is not po:
                return False
        st = store._store
        return (all(map(operator.is_, [v._t for v in self.vals], self.vts))
                and all(map(operator.is_, [o._t for o in self.outs], self.ots))
                and all(map(operator.is_, [st.get(k) for k in self.keys], self.stored))
                and all(map(operator.is_, [s._t for s in self.stored], self.sts))
                and store._aliased.isdisjoint(self.keys))

    def run(self, store):
        with torch.no_grad():
            upd = self.updater
            if _is_list_updater(upd):
                upd(list(self.keys), list(self.grads), list(self.stored))
            else:
                for k, g, w in zip(self.keys, self.grads, self.stored):
                    upd(k, g, w)
            torch._foreach_copy_(self.ots, [s._t for s in self.stored])
