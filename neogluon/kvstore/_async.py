"""dist_async: rank 0 holds the values and the optimizer; the workers reach it by RPC.

Rank 0 keeps a single-process store (``KVStore('local')``, or 'device' for a device store) as
the "server". Every worker, rank 0 included, sends its pushes there: a push is summed over the
worker's own contexts, sent with ``torch.distributed.rpc.rpc_sync`` and applied under a lock the
moment it arrives (the optimizer's update, or replacing the value when no optimizer is set).
A pull asks rank 0 for the values it holds at that moment. There are no rounds and no
barriers between pushes; ``init`` and ``set_optimizer`` end with a barrier, as in MXNet.

What is deterministic: each single push is applied atomically and in the order rank 0
receives it; a worker's own pushes arrive in the order it made them. What is not: how the
pushes of different workers interleave (and so which weights a pull sees) depends on timing,
exactly as with MXNet's servers.
"""
from __future__ import annotations

import threading

import torch

from ..base import MXNetError
from ..ndarray.ndarray import _new

_SERVERS = {}           # rank 0: store number -> the server-side state of that store
_COUNT = [0]            # stores created in this process (every worker creates them in order)
_SERVER_LOCK = threading.Lock()
_RPC_READY = False
_NAME = "neogluon{}"


class _ServerState:
    def __init__(self, store_type):
        from .local import KVStore
        self.store = KVStore(store_type)
        self.lock = threading.Lock()


def _server(sid):
    srv = _SERVERS.get(sid)
    if srv is None:
        raise MXNetError(f"dist_async: rank 0 holds no store number {sid}: every worker must "
                         "create its dist_async stores in the same order")
    return srv


def _to_wire(v):
    """A value as plain CPU tensors (what RPC carries)."""
    if v.stype == "row_sparse":
        return ("row_sparse", v._sdata.detach().cpu(), v._aux[0].detach().cpu(), tuple(v.shape))
    if v.stype != "default":
        raise MXNetError(f"dist_async: {v.stype} values cannot be pushed")
    return ("default", v._t.detach().cpu())


def _from_wire(w):
    from ..context import cpu
    from ..ndarray import sparse as _sp
    if w[0] == "row_sparse":
        return _sp._make_rsp(w[1], w[2], w[3], cpu(0))
    return _new(w[1], cpu(0))


# ---------------------------------------------------------------------- functions run on rank 0
def _remote_init(sid, items):
    srv = _server(sid)
    with srv.lock:
        for k, w in items:
            srv.store._store.pop(k, None)
            srv.store._merge.pop(k, None)
            srv.store._aliased.discard(k)
            srv.store.init(k, _from_wire(w))


def _remote_push(sid, items):
    srv = _server(sid)
    with srv.lock:
        keys = [k for k, _ in items]
        vals = [_from_wire(w) for _, w in items]
        srv.store.push(keys, vals)


def _remote_pull(sid, keys):
    srv = _server(sid)
    with srv.lock:
        return [_to_wire(srv.store._stored(k).copy()) for k in keys]


def _remote_states(sid, dump_optimizer):
    srv = _server(sid)
    with srv.lock:
        upd = srv.store._updater
        if upd is None:
            raise MXNetError("dist_async: no optimizer is set on the kvstore")
        return upd.get_states(dump_optimizer)


def _remote_load_states(sid, blob):
    srv = _server(sid)
    with srv.lock:
        upd = srv.store._updater
        if upd is None:
            raise MXNetError("dist_async: no optimizer is set on the kvstore")
        upd.set_states(blob)


# ---------------------------------------------------------------------- the worker side
class _Client:
    def __init__(self, kv, sid):
        self.kv = kv
        self.sid = sid
        self.rank = kv.rank
        self.world = kv.num_workers

    def _call(self, what, fn, *args):
        if self.rank == 0 or self.world == 1:
            return fn(self.sid, *args)
        import torch.distributed.rpc as rpc
        try:
            return rpc.rpc_sync(_NAME.format(0), fn, args=(self.sid,) + args,
                                timeout=self.kv._info.timeout)
        except MXNetError:
            raise
        except Exception as err:  # noqa: BLE001 - RPC transport failures
            raise MXNetError(f"dist_async {what} from rank {self.rank}: the parameter holder "
                             f"(rank 0) did not answer: {err}") from err

    def init(self, flat):
        if self.rank == 0:
            self._call("init", _remote_init, [(k, _to_wire(v)) for k, v in flat])
        for k, v in flat:
            # The local record of the key (shape, dtype, storage) for checks and outputs.
            self.kv._store[k] = v.copy() if v.stype == "default" else v.copyto(v.context)
        self.kv.barrier()
        self.refresh([k for k, _ in flat])

    def push(self, groups):
        for k, vals in groups:
            self.kv._stored(k)
        items = []
        with torch.no_grad():
            for k, vals in groups:
                if any(v.stype != "default" for v in vals):
                    merged = vals[0] if len(vals) == 1 else _sparse_sum(vals)
                else:
                    merged = _new(self.kv._reduce_one(k, vals), vals[0]._ctx)
                items.append((k, _to_wire(merged)))
        self._call("push", _remote_push, items)

    def refresh(self, keys):
        wires = self._call("pull", _remote_pull, list(keys))
        for k, w in zip(keys, wires):
            self.kv._store[k] = _from_wire(w)

    def pull(self, groups, ignore_sparse):
        keys = [k for k, _ in groups]
        for k in keys:
            self.kv._stored(k)
        self.refresh(keys)
        self.kv._pull_groups(groups, ignore_sparse)

    def set_optimizer(self, optimizer):
        if self.rank == 0:
            from .. import optimizer as opt
            srv = _server(self.sid)
            with srv.lock:
                srv.store._set_updater(opt.get_updater(optimizer))
        self.kv._updater = None
        self.kv.barrier()

    def save_states(self, fname, dump_optimizer):
        from .local import _atomic_write
        _atomic_write(fname, self._call("save_optimizer_states", _remote_states, True))

    def load_states(self, fname):
        with open(fname, "rb") as f:
            blob = f.read()
        self._call("load_optimizer_states", _remote_load_states, blob)

    @property
    def updater(self):
        srv = _SERVERS.get(self.sid)
        return srv.store._updater if srv is not None else None


def _sparse_sum(vals):
    from ..ndarray import sparse as _sp
    parts = [v if v.stype == "row_sparse" else _sp.cast_storage(v, "row_sparse") for v in vals]
    return _sp.add_n(*parts)


def _rendezvous_handler(store, rank, world):
    def handler(url, **kwargs):
        import torch.distributed as dist
        from ._dist_env import _PREFIX
        yield (dist.PrefixStore(_PREFIX + "rpc", store), rank, world)
    return handler


def connect(kv):
    """Start (once per process) the RPC agent; rank 0 also becomes the parameter holder."""
    global _RPC_READY
    info = kv._info
    with _SERVER_LOCK:
        sid = _COUNT[0]
        _COUNT[0] += 1
        if info.rank == 0:
            _SERVERS[sid] = _ServerState("device" if kv._device_comm else "local")
        if info.world_size > 1 and not _RPC_READY:
            if info.store is None:
                raise MXNetError("dist_async needs the job's TCPStore; create the kvstore "
                                 "before initialising torch.distributed yourself")
            import atexit
            import torch.distributed.rpc as rpc
            from torch.distributed.rendezvous import register_rendezvous_handler
            try:
                register_rendezvous_handler("neogluonrpc",
                                            _rendezvous_handler(info.store, info.rank,
                                                                info.world_size))
            except Exception:  # noqa: BLE001 - already registered by an earlier store
                pass
            opts = rpc.TensorPipeRpcBackendOptions(init_method="neogluonrpc://",
                                                   rpc_timeout=info.timeout)
            import warnings
            try:
                with warnings.catch_warnings():
                    # (torch warns about its own internal use of the gloo group here)
                    warnings.simplefilter("ignore", UserWarning)
                    rpc.init_rpc(_NAME.format(info.rank), rank=info.rank,
                                 world_size=info.world_size, rpc_backend_options=opts)
            except Exception as err:
                raise MXNetError(f"dist_async: rank {info.rank} could not start RPC: "
                                 f"{err}") from err
            _RPC_READY = True
            atexit.register(_shutdown, info.timeout)
    return _Client(kv, sid)


def _shutdown(timeout):
    """At exit: rank 0 keeps serving until every worker is done (graceful RPC shutdown)."""
    import torch.distributed.rpc as rpc
    try:
        rpc.shutdown(graceful=True, timeout=timeout)
    except TypeError:  # older torch: no timeout argument
        try:
            rpc.shutdown(graceful=True)
        except Exception:  # noqa: BLE001
            pass
    except Exception:  # noqa: BLE001 - a peer already gone; never hang at exit
        pass
