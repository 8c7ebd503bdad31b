"""Start the workers of a small distributed job for a test (no launcher, no agent).

Each worker is ``python -m neogluon.run <script> args...`` (so ``import mxnet`` works too)
with torchrun's variables set; every run has a hard timeout, after which all workers are
killed and the test fails with their output.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKERS = os.path.join(ROOT, "tests", "dist_workers")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_workers(script, n, *args, timeout=90, env=None, expect_ok=True):
    """Run ``n`` workers of ``tests/dist_workers/<script>``; return [(rc, stdout, stderr)]."""
    port = free_port()
    procs = []
    for rank in range(n):
        e = dict(os.environ)
        e.update({"RANK": str(rank), "WORLD_SIZE": str(n), "LOCAL_RANK": str(rank),
                  "LOCAL_WORLD_SIZE": str(n), "MASTER_ADDR": "127.0.0.1",
                  "MASTER_PORT": str(port), "OMP_NUM_THREADS": "1",
                  "NEOGLUON_KVSTORE_TIMEOUT": e.get("NEOGLUON_KVSTORE_TIMEOUT", "60"),
                  "PYTHONPATH": ROOT + os.pathsep + e.get("PYTHONPATH", "")})
        for k in ("TORCHELASTIC_USE_AGENT_STORE", "DMLC_ROLE"):
            e.pop(k, None)
        if env:
            e.update(env)
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "neogluon.run", os.path.join(WORKERS, script), *map(str, args)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e, cwd=ROOT))
    deadline = time.time() + timeout
    results = []
    try:
        for p in procs:
            left = max(0.1, deadline - time.time())
            out, err = p.communicate(timeout=left)
            results.append((p.returncode, out, err))
    except subprocess.TimeoutExpired:
        for p in procs:
            p.kill()
        outs = [p.communicate() for p in procs]
        raise AssertionError(f"{script}: workers did not finish within {timeout} s:\n" +
                             "\n".join(f"--- rank {r}\n{o}\n{e[-3000:]}"
                                       for r, (o, e) in enumerate(outs)))
    if expect_ok:
        bad = [(r, res) for r, res in enumerate(results) if res[0] != 0]
        assert not bad, "\n".join(f"--- rank {r} rc={rc}\n{o}\n{e[-4000:]}"
                                  for r, (rc, o, e) in bad)
    return results
