"""Crash-safe checkpoints for training jobs, distributed or not.

A checkpoint *set* is a model's parameters and its Trainer's optimizer states for one step,
plus a small JSON manifest that names them. ::

    from neogluon.contrib import checkpoint

    net = build(); net.initialize()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {...}, kvstore='dist_sync')
    start = checkpoint.load_checkpoint(CKPT_DIR, net, trainer)   # None: no complete set yet
    for step in range(0 if start is None else start + 1, STEPS):
        train_one_step(step)
        if step % 100 == 0:
            checkpoint.save_checkpoint(CKPT_DIR, step, net, trainer)   # on every worker

What a crash (``kill -9``, power loss) can leave behind is always loadable:

- rank 0 writes every file of the set, each under a name of its own (``step-<N>-<tag>.params``,
  ``.states``) through :func:`neogluon._fileio.atomic_write` with ``fsync``; the other workers
  write nothing here (they take part in the Trainer's ``save_states``, a collective that
  gathers the sharded optimizer states into one complete file);
- after a barrier (every worker has reached step N and the states are complete), rank 0
  writes ``step-<N>.json`` (the manifest: step, file names, sizes, SHA-256 sums, the world
  size), fsyncs it and its folder, and renames it into place: that rename publishes the set;
- a second barrier makes ``save_checkpoint`` return on any worker only once the set is
  published, so a worker that dies right after it cannot take the set with it;
- rank 0 then deletes sets older than the ``keep`` newest, and files that no manifest names.

:func:`latest_checkpoint` returns the newest set whose manifest is readable and whose files
exist with the recorded sizes (and sums, with ``verify=True``); a set interrupted at any point
has no valid manifest and is skipped, so the previous one is used.

The states file holds the whole job's optimizer states (the sharded states of
``update_on_kvstore=True`` are gathered into it); on load each worker keeps the shard it owns,
so a set saved by N workers loads on any number of workers. The folder must be shared by the
workers (one machine, or a shared file system).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import tempfile
import time

from .._fileio import _alive, write_text
from ..base import MXNetError

__all__ = ["save_checkpoint", "latest_checkpoint", "load_checkpoint", "Checkpoint"]

_FORMAT = "neogluon-checkpoint"
_VERSION = 1
_MANIFEST = re.compile(r"^step-(\d+)\.json$")
_DATA = re.compile(r"^step-(\d+)-[0-9a-f]+\.(params|states)$")
_TMP = re.compile(r"^\.tmp-step-.*\.(\d+)\.[^.]+$")


class Checkpoint:
    """One complete set: ``step``, the paths ``params`` and ``states`` (None when the set
    has no such file), ``world_size`` (the workers that saved it), ``extra`` (what was passed
    to :func:`save_checkpoint`) and ``manifest`` (the manifest's path)."""

    def __init__(self, step, params, states, world_size, extra, manifest):
        self.step = step
        self.params = params
        self.states = states
        self.world_size = world_size
        self.extra = extra
        self.manifest = manifest

    def __repr__(self):
        return f"Checkpoint(step={self.step}, manifest={self.manifest!r})"


# ---------------------------------------------------------------------------------- the job
def _job(trainer):
    """(rank, world_size, barrier, store) of the job this process belongs to."""
    kv = None
    if trainer is not None:
        kv = trainer._kvstore or trainer._kvstore_params.get("kvstore")
    try:
        from ..kvstore.dist import DistKVStore
    except ImportError:  # pragma: no cover - torch without distributed
        DistKVStore = ()
    if isinstance(kv, DistKVStore) and kv.num_workers > 1:
        return kv.rank, kv.num_workers, kv.barrier, kv
    from ..kvstore import _dist_env
    info = _dist_env._INFO
    if info is not None and info.world_size > 1:
        import torch.distributed as dist
        return info.rank, info.world_size, dist.barrier, None
    return 0, 1, (lambda: None), None


def _states_are_collective(trainer, kv):
    """Whether ``trainer.save_states`` is a collective here (the sharded states of a
    synchronous store are gathered from every worker)."""
    if kv is None or kv.num_workers == 1:
        return False
    trainer._ensure_kvstore()
    return bool(trainer._update_on_kvstore) and not getattr(kv, "_async", False)


# ---------------------------------------------------------------------------------- files
def _fsync_file(path):
    with open(path, "rb+") as f:
        os.fsync(f.fileno())


def _fsync_dir(folder):
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _describe(path):
    return {"name": os.path.basename(path), "size": os.path.getsize(path),
            "sha256": _sha256(path)}


# ---------------------------------------------------------------------------------- save
def save_checkpoint(directory, step, net=None, trainer=None, keep=2, extra=None):
    """Save ``net``'s parameters and ``trainer``'s states as the set of ``step``.

    In a distributed job call it on every worker at the same step (it makes collective calls).
    Returns the manifest's path.

    Parameters
    ----------
    directory : str
        The folder of the sets (created if missing; shared by the workers).
    step : int
        The step (or epoch) the set belongs to, >= 0. Saving a step again replaces its set.
    net : Block, optional
        Its ``save_parameters`` file goes into the set.
    trainer : gluon.Trainer, optional
        Its ``save_states`` file goes into the set.
    keep : int, default 2
        How many of the newest complete sets to keep (at least 1); older ones are deleted.
    extra : dict, optional
        JSON-serialisable values saved in the manifest and returned by
        :func:`latest_checkpoint` (an epoch, a data position, a seed).
    """
    try:
        step = int(step)
    except (TypeError, ValueError):
        raise MXNetError(f"save_checkpoint: step must be an integer, got {step!r}") from None
    if step < 0:
        raise MXNetError(f"save_checkpoint: step must be >= 0, got {step}")
    if int(keep) < 1:
        raise MXNetError(f"save_checkpoint: keep must be at least 1, got {keep!r}")
    if net is None and trainer is None:
        raise MXNetError("save_checkpoint: give a net, a trainer or both")
    extra_text = json.dumps(extra if extra is not None else {})  # fails early, on every rank
    directory = os.path.abspath(os.fspath(directory))
    rank, world, barrier, kv = _job(trainer)
    collective = trainer is not None and _states_are_collective(trainer, kv)
    manifest = os.path.join(directory, f"step-{step:08d}.json")
    files = {}
    if rank == 0:
        os.makedirs(directory, exist_ok=True)
        tag = secrets.token_hex(4)
        if net is not None:
            path = os.path.join(directory, f"step-{step:08d}-{tag}.params")
            net.save_parameters(path)
            _fsync_file(path)
            files["params"] = path
        if trainer is not None:
            path = os.path.join(directory, f"step-{step:08d}-{tag}.states")
            trainer.save_states(path)
            _fsync_file(path)
            files["states"] = path
    elif collective:
        scratch = tempfile.mkdtemp(prefix="neogluon-ckpt-")
        try:
            trainer.save_states(os.path.join(scratch, "states"))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    barrier()                # every worker reached step N; the states are complete
    if rank == 0:
        _fsync_dir(directory)
        body = {"format": _FORMAT, "version": _VERSION, "step": step, "world_size": world,
                "time": time.time(), "files": {k: _describe(p) for k, p in files.items()},
                "extra": json.loads(extra_text)}
        write_text(manifest, json.dumps(body, indent=1, sort_keys=True) + "\n", fsync=True)
        _fsync_dir(directory)
    barrier()                # the set is published before any worker goes on
    if rank == 0:
        _prune(directory, int(keep))
    return manifest


# ---------------------------------------------------------------------------------- find
def _read_manifest(path, verify):
    """A :class:`Checkpoint` for a valid manifest, else None."""
    try:
        with open(path) as f:
            body = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(body, dict) or body.get("format") != _FORMAT:
        return None
    folder = os.path.dirname(path)
    paths = {}
    try:
        for key, desc in body["files"].items():
            p = os.path.join(folder, os.path.basename(desc["name"]))
            if os.path.getsize(p) != desc["size"]:
                return None
            if verify and _sha256(p) != desc["sha256"]:
                return None
            paths[key] = p
        return Checkpoint(int(body["step"]), paths.get("params"), paths.get("states"),
                          int(body.get("world_size", 1)), body.get("extra") or {}, path)
    except (OSError, KeyError, TypeError, ValueError, AttributeError):
        return None


def _manifests(directory):
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    found = []
    for name in names:
        m = _MANIFEST.match(name)
        if m:
            found.append((int(m.group(1)), os.path.join(directory, name)))
    return sorted(found, reverse=True)


def latest_checkpoint(directory, verify=True):
    """The newest complete :class:`Checkpoint` in ``directory``, or None.

    ``verify=True`` also checks each file's SHA-256 sum against the manifest (it reads the
    files); sizes are always checked."""
    for _, path in _manifests(os.fspath(directory)):
        ck = _read_manifest(path, verify)
        if ck is not None:
            return ck
    return None


def load_checkpoint(directory, net=None, trainer=None, ctx=None, verify=True):
    """Load the newest complete set of ``directory`` into ``net`` and ``trainer``.

    Returns its step, or None (nothing loaded) when there is none. In a distributed job call
    it on every worker, before the first ``trainer.step`` (``load_states`` is a collective
    there): every worker loads the same set, and each keeps the optimizer states it owns.
    Call it after creating the Trainer or before: the Trainer starts from the loaded weights
    either way."""
    ck = latest_checkpoint(directory, verify=verify)
    if ck is None:
        return None
    if net is not None:
        if ck.params is None:
            raise MXNetError(f"load_checkpoint: the set {ck.manifest} has no parameters file")
        net.load_parameters(ck.params, ctx=ctx)
    if trainer is not None:
        if ck.states is None:
            raise MXNetError(f"load_checkpoint: the set {ck.manifest} has no states file")
        trainer.load_states(ck.states)
    return ck.step


# ---------------------------------------------------------------------------------- prune
def _prune(directory, keep):
    valid = 0
    referenced = set()
    for _, path in _manifests(directory):
        ck = _read_manifest(path, verify=False)
        if ck is not None and valid < keep:
            valid += 1
            referenced.add(os.path.basename(path))
            referenced.update(os.path.basename(p) for p in (ck.params, ck.states) if p)
            continue
        try:
            os.remove(path)          # manifests first: a set is never half-named
        except OSError:
            pass
    for name in os.listdir(directory):
        m = _DATA.match(name)
        t = _TMP.match(name)
        if (m and name not in referenced) or (t and not _alive(int(t.group(1)))):
            try:
                os.remove(os.path.join(directory, name))
            except OSError:
                pass
