"""Atomic file writes, the one way every neogluon file is written.

A file is written under a temporary name in its own folder, given the permissions a plain
``open`` would give it (0666 less the umask: ``tempfile.mkstemp`` alone would leave 0600),
and renamed over the target. A write that fails or is killed midway leaves the target as it
was. Temporary files that earlier killed writes of the same target left behind are removed
first, unless the process that made them is still running (or is this one: another
thread's write in progress).
"""
from __future__ import annotations

import glob
import os
import tempfile

__all__ = ["atomic_write", "write_bytes", "write_text"]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:       # exists, owned by someone else
        return True
    return True


def _remove_stale(folder: str, prefix: str) -> None:
    start = os.path.join(folder, prefix)
    for stale in glob.glob(glob.escape(start) + "*"):
        pid = stale[len(start):].split(".")[0]
        if pid.isdigit() and (int(pid) == os.getpid() or _alive(int(pid))):
            continue   # a write in progress (this process's other threads included)
        try:
            os.remove(stale)
        except OSError:
            pass


def atomic_write(path, write, fsync: bool = False) -> None:
    """Call ``write(tmp)`` with the path of a fresh temporary file next to ``path``, then move
    it into place. ``fsync=True`` flushes the data to disk before the rename."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    prefix = ".tmp-" + os.path.basename(path) + "."
    _remove_stale(folder, prefix)
    fd, tmp = tempfile.mkstemp(prefix=f"{prefix}{os.getpid()}.", dir=folder)
    os.close(fd)
    try:
        write(tmp)
        if fsync:
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise


def write_bytes(path, data: bytes, fsync: bool = False) -> None:
    """Write ``data`` to ``path`` atomically."""
    def write(tmp):
        with open(tmp, "wb") as f:
            f.write(data)
    atomic_write(path, write, fsync)


def write_text(path, text: str, fsync: bool = False) -> None:
    """Write ``text`` to ``path`` atomically."""
    def write(tmp):
        with open(tmp, "w") as f:
            f.write(text)
    atomic_write(path, write, fsync)
