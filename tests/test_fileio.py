"""neogluon._fileio: the atomic writer every file goes through."""
import os
import subprocess
import sys

import pytest

import neogluon as mx
from neogluon import _fileio


def test_permissions_follow_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        _fileio.write_bytes(tmp_path / "a.bin", b"xyz")
        mx.nd.save(str(tmp_path / "b.params"), {"w": mx.nd.ones((2,))})
    finally:
        os.umask(old)
    for name in ("a.bin", "b.params"):
        assert os.stat(tmp_path / name).st_mode & 0o777 == 0o640, name
    assert (tmp_path / "a.bin").read_bytes() == b"xyz"


def test_failed_write_leaves_the_target_and_no_temporary(tmp_path):
    target = tmp_path / "t.txt"
    _fileio.write_text(target, "old")

    def boom(tmp):
        with open(tmp, "w") as f:
            f.write("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        _fileio.atomic_write(target, boom)
    assert target.read_text() == "old"
    assert sorted(os.listdir(tmp_path)) == ["t.txt"]


def test_stale_temporaries_of_dead_writers_are_removed(tmp_path):
    # a temporary file named after a process that no longer exists
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    stale = tmp_path / f".tmp-t.txt.{proc.pid}.abc"
    stale.write_text("left by a killed write")
    live = tmp_path / f".tmp-t.txt.{os.getppid()}.def"   # a running process's: kept
    live.write_text("in progress")
    own = tmp_path / f".tmp-t.txt.{os.getpid()}.ghi"   # another thread of this process: kept
    own.write_text("in progress")
    _fileio.write_text(tmp_path / "t.txt", "new", fsync=True)
    assert not stale.exists()
    assert live.exists()
    assert own.exists()
    assert (tmp_path / "t.txt").read_text() == "new"
