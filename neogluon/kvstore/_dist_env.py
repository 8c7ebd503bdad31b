"""Where a distributed store's process group comes from.

neogluon writes no network code: the workers of a job find each other through a
``torch.distributed`` TCPStore and talk through a ``torch.distributed`` process group (gloo for
CPU tensors, NCCL for CUDA tensors). The group is created by the first distributed store of the
process (``mx.kv.create('dist_sync')``) from the environment, in this order:

1. torchrun's variables (also set by ``python -m neogluon.launch``): ``RANK``, ``WORLD_SIZE``,
   ``MASTER_ADDR``, ``MASTER_PORT``. Rank 0 hosts the TCPStore.
2. MPI's variables (``mpirun``; ``OMPI_COMM_WORLD_RANK``/``OMPI_COMM_WORLD_SIZE`` or
   ``PMI_RANK``/``PMI_SIZE``) with ``MASTER_ADDR``/``MASTER_PORT`` (or MXNet's
   ``DMLC_PS_ROOT_URI``/``DMLC_PS_ROOT_PORT``) naming the host of the TCPStore (rank 0).
3. MXNet's ps-lite variables alone (``DMLC_ROLE=worker``, ``DMLC_NUM_WORKER``,
   ``DMLC_PS_ROOT_URI``, ``DMLC_PS_ROOT_PORT``): the *scheduler* process of the job (the same
   script started with ``DMLC_ROLE=scheduler``) hosts the TCPStore, and workers take ranks in
   the order they arrive, as ps-lite gives them.
4. Nothing: a job of one worker (rank 0 of 1), so a script runs unchanged on one machine.

MXNet's job layouts start *server* processes too. neogluon needs none (the optimizer runs
sharded on the workers): a process started with ``DMLC_ROLE=server`` prints one line and exits 0
when it imports neogluon. A ``DMLC_ROLE=scheduler`` process hosts the rendezvous, waits until
every worker has finished (or stopped answering), and exits 0 without training.
"""
from __future__ import annotations

import atexit
import datetime
import os
import sys
import threading
import time

from ..base import MXNetError

__all__ = ["DistInfo", "ensure_process_group", "handle_role", "collective_timeout",
           "check_remote_async"]


def _prefix():
    from ._faults import attempt_prefix
    return attempt_prefix()


_PREFIX = _prefix()
_DEFAULT_TIMEOUT = 300.0
_INFO = None
_LOCK = threading.Lock()


class DistInfo:
    """The job this process belongs to: ``rank``, ``world_size``, the TCPStore and the timeout."""

    def __init__(self, rank, world_size, store, timeout, backend, source):
        self.rank = rank
        self.world_size = world_size
        self.store = store
        self.timeout = timeout
        self.backend = backend
        self.source = source

    def __repr__(self):
        return (f"DistInfo(rank={self.rank}, world_size={self.world_size}, "
                f"backend={self.backend!r}, from={self.source!r})")


def collective_timeout():
    """Seconds a collective may wait for the other workers (``NEOGLUON_KVSTORE_TIMEOUT``)."""
    try:
        from ._faults import timeout_seconds
    except ImportError:  # pragma: no cover - the faults module ships with the package
        timeout_seconds = None
    if timeout_seconds is not None:
        return timeout_seconds()
    raw = os.environ.get("NEOGLUON_KVSTORE_TIMEOUT")
    return float(raw) if raw else _DEFAULT_TIMEOUT


def _int_env(name, env):
    raw = env.get(name)
    try:
        return int(raw)
    except (TypeError, ValueError):
        raise MXNetError(f"distributed kvstore: environment variable {name}={raw!r} is not an "
                         "integer") from None


def _root(env):
    addr = env.get("MASTER_ADDR") or env.get("DMLC_PS_ROOT_URI")
    port = env.get("MASTER_PORT") or env.get("DMLC_PS_ROOT_PORT")
    if not addr or not port:
        raise MXNetError("distributed kvstore: the rendezvous address is missing; set "
                         "MASTER_ADDR and MASTER_PORT (torchrun and python -m neogluon.launch "
                         "set them) or DMLC_PS_ROOT_URI and DMLC_PS_ROOT_PORT")
    try:
        return addr, int(port)
    except ValueError:
        raise MXNetError(f"distributed kvstore: the rendezvous port {port!r} is not an "
                         "integer") from None


ALLOW_REMOTE_ASYNC = "NEOGLUON_ALLOW_REMOTE_ASYNC"


def _is_loopback(host) -> bool:
    """Whether ``host`` (an address or a name) is this machine's loopback interface only."""
    import ipaddress
    import socket
    host = str(host).strip().strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(i[4][0].split("%")[0]).is_loopback
                               for i in infos)


def check_remote_async(environ=None):
    """Refuse ``dist_async`` whose rendezvous is not on the loopback interface, unless
    ``NEOGLUON_ALLOW_REMOTE_ASYNC=1``: its ``torch.distributed.rpc`` transport runs pickled
    functions sent by anyone who reaches its ports, without authentication."""
    env = os.environ if environ is None else environ
    addr = env.get("MASTER_ADDR") or env.get("DMLC_PS_ROOT_URI")
    if not addr or _is_loopback(addr):
        return
    if str(env.get(ALLOW_REMOTE_ASYNC, "")).strip() == "1":
        return
    raise MXNetError(
        f"dist_async: the job's rendezvous address MASTER_ADDR={addr!r} is not a loopback "
        f"address. dist_async sends pickled Python calls over torch.distributed.rpc, which has "
        f"no authentication: anyone who can reach the workers' ports can run code in them. "
        f"Set {ALLOW_REMOTE_ASYNC}=1 to acknowledge this and run it across hosts on a trusted "
        f"network (see docs/distributed.md, 'Trust model'), or use dist_sync")


def _mpi_env(env):
    from ..launch import mpi_rank_env
    try:
        return mpi_rank_env(env)
    except ValueError as err:
        raise MXNetError(f"distributed kvstore: unreadable MPI rank variables ({err})") from None


def _loopback_listener(addr, port):
    """A listening socket's fd bound to the loopback ``addr`` (so the store is not reachable
    from other machines), or None when ``addr`` is not a loopback address or binding fails
    (then the store binds as torch does: every interface)."""
    import ipaddress
    import socket
    host = "127.0.0.1" if str(addr).lower() == "localhost" else str(addr).strip("[]")
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return None
    if not ip.is_loopback:
        return None
    family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, int(port)))
        sock.listen(1024)
    except OSError:
        sock.close()
        return None
    return sock.detach()


def _pin_interfaces(env=None):
    """Which network interface gloo (and dist_async's TensorPipe) listen on: MXNet's
    DMLC_INTERFACE names it for both when GLOO_SOCKET_IFNAME / TP_SOCKET_IFNAME are unset; a
    job whose rendezvous is on loopback uses the loopback interface, so a local job listens on
    no external interface."""
    import socket
    env = os.environ if env is None else env
    name = env.get("DMLC_INTERFACE")
    if not name:
        addr = env.get("MASTER_ADDR") or env.get("DMLC_PS_ROOT_URI")
        if not addr or not _is_loopback(addr):
            return
        try:
            names = [n for _, n in socket.if_nameindex()]
        except OSError:  # pragma: no cover
            return
        name = next((n for n in ("lo", "lo0") if n in names), None)
        if name is None:
            return
    for var in ("GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME"):
        if not env.get(var):
            env[var] = name


def _tcp_store(addr, port, world_size, is_master, timeout):
    import torch.distributed as dist
    fd = _loopback_listener(addr, port) if is_master else None
    try:
        return dist.TCPStore(addr, port, world_size if is_master else None, is_master,
                             timeout=datetime.timedelta(seconds=timeout),
                             wait_for_workers=False, master_listen_fd=fd)
    except Exception as err:  # torch raises RuntimeError / DistNetworkError
        role = "host" if is_master else "reach"
        raise MXNetError(f"distributed kvstore: cannot {role} the rendezvous at {addr}:{port} "
                         f"within {timeout:g} s ({err})") from err


def _from_env(timeout):
    """(rank, world_size, store, source) from the environment (see the module's docstring)."""
    import torch.distributed as dist
    env = os.environ
    if "RANK" in env and "WORLD_SIZE" in env:
        rank, world = _int_env("RANK", env), _int_env("WORLD_SIZE", env)
        source = "torchrun"
    elif int((_mpi_env(env) or {}).get("WORLD_SIZE", "1")) > 1:
        # mpirun / srun (Open MPI, MPICH, MVAPICH, PMIx, SLURM variables)
        mpi = _mpi_env(env)
        rank, world = int(mpi["RANK"]), int(mpi["WORLD_SIZE"])
        source = "mpi"
    elif env.get("DMLC_ROLE") == "worker" and env.get("DMLC_PS_ROOT_URI"):
        world = _int_env("DMLC_NUM_WORKER", env)
        addr, port = _root(env)
        store = _tcp_store(addr, port, world, False, timeout)
        rank = store.add(_PREFIX + "next_rank", 1) - 1
        if rank >= world:
            raise MXNetError(f"distributed kvstore: more workers than DMLC_NUM_WORKER={world} "
                             f"joined the job at {addr}:{port}")
        return rank, world, store, "dmlc"
    else:
        return 0, 1, dist.HashStore(), "single"
    if world < 1 or not 0 <= rank < world:
        raise MXNetError(f"distributed kvstore: rank {rank} is not in [0, {world})")
    addr, port = _root(env)
    # Under torchrun the agent already hosts the store on MASTER_PORT.
    host = rank == 0 and env.get("TORCHELASTIC_USE_AGENT_STORE", "").lower() != "true"
    store = _tcp_store(addr, port, world, host, timeout)
    return rank, world, store, source


def ensure_process_group():
    """Create (once) and return this process's :class:`DistInfo`."""
    global _INFO
    with _LOCK:
        if _INFO is not None:
            return _INFO
        import torch
        import torch.distributed as dist
        if not dist.is_available():
            raise MXNetError("distributed kvstore: this PyTorch build has no torch.distributed")
        timeout = collective_timeout()
        if dist.is_initialized():
            # The user (or a library such as torchrun-aware code) already made the group.
            rank, world = dist.get_rank(), dist.get_world_size()
            store = None
            try:
                from torch.distributed.distributed_c10d import _get_default_store
                store = _get_default_store()
            except Exception:  # noqa: BLE001 - private API; the store is only for diagnostics
                store = None
            _INFO = DistInfo(rank, world, store, timeout, dist.get_backend(), "existing")
            return _INFO
        rank, world, store, source = _from_env(timeout)
        if world > 1:
            _pin_interfaces()
        backend = "cpu:gloo,cuda:nccl" if torch.cuda.is_available() else "gloo"
        try:
            dist.init_process_group(backend, store=dist.PrefixStore(_PREFIX + "pg", store),
                                    rank=rank, world_size=world,
                                    timeout=datetime.timedelta(seconds=timeout))
        except Exception as err:
            raise MXNetError(f"distributed kvstore: rank {rank} of {world} could not join the "
                             f"process group within {timeout:g} s ({err})") from err
        _INFO = DistInfo(rank, world, store, timeout, backend, source)
        if world > 1:
            try:
                from ._faults import start_heartbeat
            except ImportError:  # pragma: no cover
                start_heartbeat = None
            if start_heartbeat is not None:
                start_heartbeat(store, rank, world)
        atexit.register(_finish, _INFO)
        return _INFO


def _finish(info):
    """At exit: tell the job this worker is done; rank 0 (the store's host) waits for the
    others (bounded), then the process group is destroyed."""
    import torch.distributed as dist
    store = info.store
    if store is not None and info.world_size > 1:
        try:
            # bounded: a TCPStore call to a stopped (SIGSTOP) host blocks forever
            from ._faults import bounded_call
            bounded_call(lambda: store.add(_PREFIX + "finished", 1), 5.0)
            if info.rank == 0 and info.source in ("torchrun", "mpi"):
                budget = min(info.timeout, 120.0)
                bounded_call(lambda: _wait_finished(store, info.world_size, budget), budget + 10.0)
        except Exception:  # noqa: BLE001 - the job is ending; never hang or fail here
            pass
    try:
        if dist.is_initialized():
            dist.destroy_process_group()
    except Exception:  # noqa: BLE001
        pass


def _stale_ranks(store, world, limit):
    """Ranks still running whose heartbeat is older than ``limit`` seconds (bounded reads)."""
    try:
        from ._faults import heartbeat_ages
        ages = heartbeat_ages(store, world)
    except Exception:  # noqa: BLE001 - an unanswered store: nothing known
        return []
    return [r for r, age in ages.items() if age is not None and age > limit]


def _wait_finished(store, world, budget, stale_after=6.0):
    """Wait until every worker has finished ('done'), the missing ones stopped answering
    ('stale'), or ``budget`` seconds passed ('waiting')."""
    deadline = time.time() + budget
    next_check = time.time() + 1.0
    while time.time() < deadline:
        done = store.add(_PREFIX + "finished", 0)
        if done >= world:
            return "done"
        if time.time() >= next_check:  # (each check opens a store connection: once a second)
            next_check = time.time() + 1.0
            stale = _stale_ranks(store, world, stale_after)
            if stale and done + len(stale) >= world:
                return "stale"
        time.sleep(0.05)
    return "waiting"


def handle_role():
    """Act on ``DMLC_ROLE`` at import: a server exits, a scheduler hosts the rendezvous."""
    role = os.environ.get("DMLC_ROLE")
    if role == "server":
        sys.stderr.write("neogluon: DMLC_ROLE=server: neogluon needs no server processes (the "
                         "optimizer runs sharded on the workers); this process exits.\n")
        sys.stderr.flush()
        raise SystemExit(0)
    if role == "scheduler":
        _run_scheduler()
        raise SystemExit(0)


def _run_scheduler():
    env = os.environ
    world = _int_env("DMLC_NUM_WORKER", env)
    addr, port = _root(env)
    host = "0.0.0.0" if addr not in ("127.0.0.1", "localhost") else addr
    timeout = collective_timeout()
    store = _tcp_store(host, port, world, True, timeout)
    sys.stderr.write(f"neogluon: DMLC_ROLE=scheduler: hosting the rendezvous of "
                     f"{world} worker(s) at {addr}:{port}; this process does not train.\n")
    sys.stderr.flush()
    # Wait for the workers to join, then to finish (or to stop answering).
    deadline = time.time() + timeout
    while store.add(_PREFIX + "next_rank", 0) < world:
        if time.time() > deadline:
            sys.stderr.write(f"neogluon scheduler: only {store.add(_PREFIX + 'next_rank', 0)} "
                             f"of {world} workers joined within {timeout:g} s; giving up.\n")
            raise SystemExit(1)
        time.sleep(0.05)
    while True:
        state = _wait_finished(store, world, 60.0, stale_after=max(10.0, timeout))
        if state == "done":
            return
        if state == "stale":
            sys.stderr.write("neogluon scheduler: some workers stopped answering; exiting.\n")
            raise SystemExit(1)
