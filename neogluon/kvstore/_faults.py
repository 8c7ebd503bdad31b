"""Fault reporting for the distributed stores: a collective timeout the user can set, heartbeats
in the rendezvous store, and clear errors that name the rank that went missing.

The distributed store (``kvstore/dist.py``) uses it like this::

    timeout = _faults.timeout_seconds()                    # NEOGLUON_KVSTORE_TIMEOUT, default 300
    dist.init_process_group("gloo", timeout=timedelta(seconds=timeout), ...)
    hb = _faults.start_heartbeat(store, rank, world_size)  # store: the job's TCPStore
    ...
    try:
        dist.all_reduce(bucket)
    except Exception as exc:
        raise _faults.describe_failure(exc, "push", keys, store, rank, world_size, timeout) from exc

or, shorter, with a :class:`FaultMonitor` and its ``guard`` context manager.

Heartbeats live under ``neogluon/hb/<rank>``: the rank's wall time (``time.time()``, as text),
rewritten every interval. ``neogluon/hb/<rank>/who`` says ``"<pid> <host>"`` and
``neogluon/hb/<rank>/exited`` (the wall time) appears once the rank's program has ended.
Whether a rank has stopped answering is decided by watching its heartbeat change (it must move
within a few intervals), not by comparing clocks, so clock skew between machines cannot make a
live rank look dead; the "last heartbeat ... ago" figure in messages does use the wall time and
is exact only when the clocks agree.

Every read of the store here goes through a fresh client connection with a short timeout, so
describing a failure never hangs, even when the rendezvous host itself is gone or stopped.
"""
from __future__ import annotations

import atexit
import math
import os
import socket
import threading
import time
import weakref
from contextlib import contextmanager
from datetime import timedelta

from ..base import MXNetError

__all__ = ["ENV_TIMEOUT", "DEFAULT_TIMEOUT", "timeout_seconds", "start_heartbeat", "Heartbeat",
           "read_heartbeats", "heartbeat_ages", "describe_failure", "FaultMonitor", "HB_PREFIX",
           "bounded_call"]

ENV_TIMEOUT = "NEOGLUON_KVSTORE_TIMEOUT"
DEFAULT_TIMEOUT = 300.0


def attempt_prefix(environ=None) -> str:
    """The prefix of every key neogluon writes into the job's rendezvous store:
    ``neogluon/``, or ``neogluon/attempt_<n>/`` in a group restarted for the n-th time
    (``TORCHELASTIC_RESTART_COUNT``, set by torchrun and by ``neogluon.launch
    --max-restarts``). torchrun's agent keeps one store across restarts, so a restarted group
    must not see the keys (heartbeats, rank counters, the process group's own) of the one
    before it."""
    env = os.environ if environ is None else environ
    raw = str(env.get("TORCHELASTIC_RESTART_COUNT", "") or "0").strip()
    return "neogluon/" if raw in ("0", "") else f"neogluon/attempt_{raw}/"


HB_PREFIX = attempt_prefix() + "hb/"

# How long one store operation made for fault reporting may take, at most.
_STORE_OP_TIMEOUT = 3.0


def timeout_seconds(environ=None) -> float:
    """The collective timeout in seconds: ``NEOGLUON_KVSTORE_TIMEOUT`` (a positive number,
    fractions allowed), 300 when unset or empty."""
    env = os.environ if environ is None else environ
    raw = env.get(ENV_TIMEOUT)
    if raw is None or not str(raw).strip():
        return DEFAULT_TIMEOUT
    try:
        value = float(str(raw).strip())
    except ValueError:
        value = float("nan")
    if not math.isfinite(value) or value <= 0:
        raise MXNetError(f"{ENV_TIMEOUT} must be a positive number of seconds (the timeout of "
                         f"each kvstore collective), got {raw!r}")
    return value


# ------------------------------------------------------------------------------------- stores
def _innermost(store):
    """The store under any PrefixStore wrappers."""
    seen = 0
    while hasattr(store, "underlying_store") and seen < 16:
        inner = store.underlying_store
        if inner is None or inner is store:
            break
        store, seen = inner, seen + 1
    return store


def _is_tcp(store) -> bool:
    try:
        from torch.distributed import TCPStore
    except Exception:  # pragma: no cover - torch without distributed
        return False
    return isinstance(store, TCPStore)


def _private_client(store, op_timeout: float):
    """A store object of our own for heartbeats and fault reads: a new connection to the same
    TCPStore (so a blocked or broken connection of the process group's cannot stall us), or the
    given store itself when it is not a TCPStore (HashStore, FileStore: local, cannot hang)."""
    base = _innermost(store)
    if _is_tcp(base):
        from torch.distributed import TCPStore
        return TCPStore(base.host, base.port, None, False,
                        timeout=timedelta(seconds=op_timeout), wait_for_workers=False)
    try:
        base.set_timeout(timedelta(seconds=op_timeout))
    except Exception:
        pass
    return base


def _where(store) -> str:
    base = _innermost(store)
    if _is_tcp(base):
        return f"{base.host}:{base.port}"
    return type(base).__name__


def bounded_call(fn, seconds):
    """``fn()``, or TimeoutError after ``seconds``: the call runs in a daemon thread that is
    abandoned if it does not return. Use it for any store operation that must not hang: a
    TCPStore client's connection handshake, and some operations, block forever when the
    store's host process is stopped, whatever the store's timeout says."""
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc
    t = threading.Thread(target=run, name="neogluon-store-call", daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        raise TimeoutError(f"the store did not answer within {seconds:g} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


# ------------------------------------------------------------------------------------ heartbeat
class Heartbeat:
    """A daemon thread that writes ``neogluon/hb/<rank>`` every ``interval`` seconds.

    It stops quietly on the first store error (the rendezvous host went away: the collectives
    will report that) and, at interpreter exit, marks the rank as exited."""

    def __init__(self, store, rank: int, world_size: int, interval: float = 1.0):
        if not (interval > 0 and math.isfinite(interval)):
            raise MXNetError(f"heartbeat interval must be a positive number of seconds, "
                             f"got {interval!r}")
        self.rank = int(rank)
        self.world_size = int(world_size)
        self.interval = float(interval)
        self.key = f"{HB_PREFIX}{self.rank}"
        self.error = None
        self._store = store
        self._client = None
        self._stop = threading.Event()
        self._host = socket.gethostname()
        self._pid = os.getpid()
        self._thread = threading.Thread(target=self._run, name=f"neogluon-heartbeat-{rank}",
                                        daemon=True)

    def start(self):
        # Connect and write the first beat before returning, so a rank that got as far as its
        # first collective is always visible to the others.
        def connect():
            client = _private_client(self._store, _STORE_OP_TIMEOUT)
            client.set(self.key + "/who", f"{self._pid} {self._host}")
            client.set(self.key, f"{time.time():.6f}")
            return client
        try:
            self._client = bounded_call(connect, 2 * _STORE_OP_TIMEOUT + 1)
        except Exception as exc:
            self.error = exc
            self._stop.set()
            return self
        self._thread.start()
        ref = weakref.ref(self)
        atexit.register(_stop_at_exit, ref)
        return self

    def _beat(self):
        self._client.set(self.key, f"{time.time():.6f}")

    def _run(self):
        # A beat that never returns (a stopped store host) just parks this daemon thread.
        while not self._stop.wait(self.interval):
            try:
                self._beat()
            except Exception as exc:
                self.error = exc
                self._stop.set()
                break

    @property
    def running(self) -> bool:
        return self._thread.is_alive() and not self._stop.is_set()

    def stop(self, mark_exit: bool = True):
        """Stop beating; with ``mark_exit`` record that this rank's program has ended."""
        was_running = not self._stop.is_set()
        self._stop.set()
        client = self._client
        if mark_exit and was_running and client is not None:
            try:
                bounded_call(lambda: client.set(self.key + "/exited", f"{time.time():.6f}"),
                         _STORE_OP_TIMEOUT + 1)
            except Exception:
                pass
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=min(self.interval, 1.0) + 0.5)


def _stop_at_exit(ref):
    hb = ref()
    if hb is not None:
        hb.stop(mark_exit=True)


def start_heartbeat(store, rank, world_size, interval=1.0) -> Heartbeat:
    """Start a daemon thread that writes ``neogluon/hb/<rank>`` = wall time into ``store`` (the
    job's torch.distributed TCPStore, or a PrefixStore over it) every ``interval`` seconds, over
    a connection of its own. Returns the :class:`Heartbeat`; ``.stop()`` ends it. Never raises
    for store trouble: a heartbeat that cannot write just stops (``.error`` says why)."""
    return Heartbeat(store, rank, world_size, interval).start()


# ---------------------------------------------------------------------------- reading the beats
def _text(value):
    return value.decode("utf-8", "replace") if isinstance(value, (bytes, bytearray)) else str(value)


def read_heartbeats(client, world_size):
    """``{rank: {"time", "exited", "pid", "host"} or None}`` for every rank, read without
    blocking on missing keys (``time``: the last beat's wall time, as written)."""
    out = {}
    for r in range(int(world_size)):
        key = f"{HB_PREFIX}{r}"
        if not client.check([key]):
            out[r] = None
            continue
        raw = _text(client.get(key)).strip()
        try:
            beat = float(raw)
        except ValueError:
            beat = float("nan")
        info = {"time": beat, "raw": raw, "exited": None, "failed": None, "pid": "?",
                "host": "?"}
        if client.check([key + "/failed"]):
            info["failed"] = _text(client.get(key + "/failed"))
        if client.check([key + "/exited"]):
            try:
                info["exited"] = float(_text(client.get(key + "/exited")))
            except ValueError:
                info["exited"] = float("nan")
        if client.check([key + "/who"]):
            who = _text(client.get(key + "/who")).split(None, 1)
            if len(who) == 2:
                info["pid"], info["host"] = who
        out[r] = info
    return out


def heartbeat_ages(store, world_size, op_timeout=_STORE_OP_TIMEOUT):
    """``{rank: seconds since its last heartbeat (by this machine's clock), or None when it never
    beat}``; ranks whose program ended are left out. Takes at most about ``2 * op_timeout``
    seconds; raises (TimeoutError or the store's error) when the store does not answer."""
    def read():
        return read_heartbeats(_private_client(store, op_timeout), world_size)
    beats = bounded_call(read, 2 * op_timeout + 1)
    now = time.time()
    return {r: (None if b is None else max(0.0, now - b["time"]))
            for r, b in beats.items() if b is None or b["exited"] is None}


class _StoreUnreachable(Exception):
    pass


def _observe(store, world_size, window, op_timeout=_STORE_OP_TIMEOUT):
    """Read the heartbeats twice, ``window`` seconds apart; return ``(first, second, now)``.
    Raises _StoreUnreachable when the store does not answer (each read is bounded in time)."""
    def first_read():
        client = _private_client(store, op_timeout)
        return client, read_heartbeats(client, world_size)
    try:
        client, first = bounded_call(first_read, 2 * op_timeout + 1)
    except Exception as exc:
        raise _StoreUnreachable(exc) from exc
    time.sleep(window)
    try:
        second = bounded_call(lambda: read_heartbeats(client, world_size), op_timeout + 1)
    except Exception:  # the store went away meanwhile: judge by the first read alone
        return first, None, time.time(), None
    return first, second, time.time(), client


# ------------------------------------------------------------------------------ the description
_TIMEOUT_WORDS = ("timed out", "timeout", "time out", "deadline exceeded")
_CONNECTION_WORDS = ("connection closed", "connection reset", "broken pipe", "connection refused",
                     "closed by peer", "econnreset", "epipe", "end of file", "socket closed",
                     "no route to host", "connection aborted", "read error", "write error",
                     "network is unreachable", "peer closed")


def _classify(exc) -> str:
    if isinstance(exc, TimeoutError):
        return "timeout"
    msg = str(exc).lower()
    if any(w in msg for w in _TIMEOUT_WORDS):
        return "timeout"
    if isinstance(exc, ConnectionError) or any(w in msg for w in _CONNECTION_WORDS):
        return "connection"
    return "other"


def _fmt_keys(keys) -> str:
    if keys is None:
        return ""
    if isinstance(keys, (str, int)):
        keys = [keys]
    try:
        keys = list(keys)
    except TypeError:
        return f" (key {keys!r})"
    if not keys:
        return ""
    shown = ", ".join(repr(k) if isinstance(k, str) else str(k) for k in keys[:6])
    if len(keys) > 6:
        shown += f", ... ({len(keys)} keys)"
    return f" (key {shown})" if len(keys) == 1 else f" (keys {shown})"


def _fmt_ranks(ranks) -> str:
    ranks = sorted(ranks)
    return (f"rank {ranks[0]}" if len(ranks) == 1
            else "ranks [" + ", ".join(str(r) for r in ranks) + "]")


def _short(exc) -> str:
    msg = " ".join(str(exc).split())
    if len(msg) > 300:
        msg = msg[:297] + "..."
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def describe_failure(exc, what, keys, store, rank, world_size, timeout, *, interval=1.0,
                     observe=None) -> MXNetError:
    """Turn the exception of a failed collective into a clear :class:`MXNetError`.

    Parameters
    ----------
    exc : BaseException
        What the collective raised (gloo's "Connection closed by peer", "Timed out ...", ...).
    what : str
        The kvstore operation, e.g. ``"push"``, ``"pushpull"``, ``"init"``, ``"barrier"``.
    keys : key, list of keys or None
        The keys involved (shown, at most six).
    store : torch.distributed Store
        The job's rendezvous store (where the heartbeats are), or None.
    rank, world_size : int
    timeout : float
        The collective timeout in seconds (:func:`timeout_seconds`).
    interval : float
        The heartbeat interval the ranks use.
    observe : float, optional
        Seconds to watch the heartbeats for (default: ``2.5 * interval``).

    The returned error names the ranks that stopped answering (with the age of their last
    heartbeat), those whose program already ended, or, when the store itself does not answer,
    says that the rendezvous host (rank 0) is unreachable. The original message is kept at the
    end of the text; raise the result ``from exc`` to keep it as the cause, too. The heartbeat
    reads take at most a few seconds and never hang.
    """
    rank, world_size = int(rank), int(world_size)
    kind = _classify(exc)
    head = f"kvstore {what}{_fmt_keys(keys)} failed on rank {rank} of {world_size}"
    tail = f" [original error: {_short(exc)}]"
    tmo = f"{float(timeout):g}"

    if store is None:
        if kind == "timeout":
            body = f"timed out after {tmo} s waiting for the other ranks"
        else:
            body = "lost the connection to another rank"
        err = MXNetError(f"{head}: {body} (no heartbeat store to tell which rank)" + tail)
        err.__cause__ = exc
        return err

    window = 2.5 * float(interval) if observe is None else float(observe)
    try:
        first, second, now, client = _observe(store, world_size, window)
    except _StoreUnreachable as bad:
        body = (f"the rendezvous host (rank 0, store at {_where(store)}) is unreachable: rank 0 "
                f"has probably died or stopped answering ({_short(bad.__cause__ or bad)})")
        if kind == "timeout":
            body = f"timed out after {tmo} s; " + body
        err = MXNetError(f"{head}: {body}" + tail)
        err.__cause__ = exc
        return err

    lost = second is None
    if lost:
        # Only one reading: a rank is taken as stopped when its last beat is clearly too old
        # by the wall clock (several intervals and at least 3 s).
        second = first
        limit = max(3.0, 4 * float(interval))
    stopped, exited, never, failed = [], [], [], []
    for r in range(world_size):
        if r == rank:
            continue
        a, b = first.get(r), second.get(r)
        if b is None:
            never.append(r)
        elif b["failed"] is not None:
            failed.append(r)
        elif b["exited"] is not None:
            exited.append(r)
        elif lost:
            if not now - b["time"] <= limit:
                stopped.append(r)
        elif a is not None and a["raw"] == b["raw"]:
            stopped.append(r)

    parts = []
    if stopped:
        ages = [max(0.0, now - second[r]["time"]) for r in sorted(stopped)]
        age_txt = ", ".join(f"{a:.1f} s" for a in ages)
        if len(stopped) == 1:
            r = stopped[0]
            parts.append(f"rank {r} stopped answering (last heartbeat {age_txt} ago; pid "
                         f"{second[r]['pid']} on {second[r]['host']})")
        else:
            where = ", ".join(f"rank {r}: pid {second[r]['pid']} on {second[r]['host']}"
                              for r in sorted(stopped))
            parts.append(f"{_fmt_ranks(stopped)} stopped answering (last heartbeats {age_txt} "
                         f"ago; {where})")
    if exited:
        parts.append(f"{_fmt_ranks(exited)} already ended {'its' if len(exited) == 1 else 'their'} "
                     f"program (every rank must make the same sequence of kvstore calls)")
    if never:
        parts.append(f"{_fmt_ranks(never)} never sent a heartbeat (not started, or died before "
                     f"the store was created)")

    if failed and parts:
        parts.append(f"{_fmt_ranks(failed)} failed in the same way")
    elif failed:
        r = min(failed)
        parts.append(f"{_fmt_ranks(failed)} failed before this rank (rank {r}: "
                     f"{second[r]['failed']})")
    if lost:
        parts.append("the rendezvous host (rank 0) went away while this error was being "
                     "diagnosed")
    if parts:
        body = "; ".join(parts)
        missing = sorted(stopped + exited + never)
        if kind == "timeout" and missing:
            body = f"timed out after {tmo} s waiting for {_fmt_ranks(missing)}: " + body
        elif kind == "timeout":
            body = f"timed out after {tmo} s: " + body
    elif kind == "timeout":
        body = (f"timed out after {tmo} s waiting for the other ranks; all {world_size} ranks "
                f"are still alive, so one of them is busy elsewhere or made a different sequence "
                f"of kvstore calls (raise {ENV_TIMEOUT} if a step legitimately takes longer)")
    else:
        body = ("lost the connection to another rank, but every rank's heartbeat is still "
                "moving (a network problem, or a rank that is shutting down)")
    if client is not None:
        # Tell the others that this rank is failing too (best effort, bounded).
        note = f"{what} {body}"
        note = note if len(note) <= 200 else note[:197] + "..."
        try:
            bounded_call(lambda: client.set(f"{HB_PREFIX}{rank}/failed", note), 1.5)
        except Exception:
            pass
    err = MXNetError(f"{head}: {body}" + tail)
    err.__cause__ = exc
    return err


class FaultMonitor:
    """The fault handling of one distributed store: starts the heartbeat and wraps collectives.

    ``with monitor.guard("push", keys): dist.all_reduce(...)`` re-raises any failure as
    :func:`describe_failure`'s MXNetError (chained to the original)."""

    def __init__(self, store, rank, world_size, timeout=None, interval=1.0, heartbeat=True):
        self.store = store
        self.rank = int(rank)
        self.world_size = int(world_size)
        self.timeout = timeout_seconds() if timeout is None else float(timeout)
        self.interval = float(interval)
        self.heartbeat = (start_heartbeat(store, rank, world_size, interval)
                          if heartbeat and store is not None else None)

    def describe(self, exc, what, keys=None) -> MXNetError:
        return describe_failure(exc, what, keys, self.store, self.rank, self.world_size,
                                self.timeout, interval=self.interval)

    @contextmanager
    def guard(self, what, keys=None):
        try:
            yield
        except MXNetError:
            raise
        except Exception as exc:
            raise self.describe(exc, what, keys) from exc

    def stop(self):
        if self.heartbeat is not None:
            self.heartbeat.stop(mark_exit=True)
