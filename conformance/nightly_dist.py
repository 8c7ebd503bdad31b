"""Run MXNet 1.9.1's nightly distributed tests, unmodified, on neogluon.

    python conformance/nightly_dist.py DIR [-n 2] [--timeout 300]

DIR holds MXNet's ``tests/nightly`` files: ``dist_sync_kvstore.py`` (run once per CPU
``--type``), ``dist_async_kvstore.py``, and ``test_kvstore.py`` (which the first imports). Each
run is ``python -m neogluon.launch -n N --launcher local python -m neogluon.run FILE ...`` from
inside DIR, so ``import mxnet`` is neogluon. Prints a table; exits 1 if a run fails that passes
on MXNet 1.9.1 here.

``default_cpu`` fails on MXNet 1.9.1 itself under Python 3 (it reshapes to
``(num_rows/2, 2)``, a float, and both MXNet and neogluon raise TypeError), so its failure is
reported but not counted.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

SYNC_TYPES = ["gluon_type_cpu", "gluon_step_cpu", "gluon_sparse_step_cpu", "invalid_cpu",
              "default_cpu", "compressed_cpu"]
FAIL_ON_MXNET = {"default_cpu"}


def runs(folder):
    out = []
    if os.path.exists(os.path.join(folder, "dist_sync_kvstore.py")):
        out += [("dist_sync_kvstore.py", ["--type", t, "--no-gpu"], t) for t in SYNC_TYPES]
    if os.path.exists(os.path.join(folder, "dist_async_kvstore.py")):
        out.append(("dist_async_kvstore.py", [], "async"))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder")
    ap.add_argument("-n", "--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=300)
    args = ap.parse_args(argv)
    folder = os.path.abspath(args.folder)
    todo = runs(folder)
    if not todo:
        print(f"no MXNet nightly distributed tests in {folder}")
        return 0
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([root, folder, os.environ.get("PYTHONPATH", "")]))
    bad = 0
    print(f"| file | type | workers | result | seconds |\n|---|---|---|---|---|")
    for fname, extra, label in todo:
        cmd = [sys.executable, "-m", "neogluon.launch", "-n", str(args.workers),
               "--launcher", "local", sys.executable, "-m", "neogluon.run", fname, *extra]
        t0 = time.time()
        try:
            proc = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True,
                                  timeout=args.timeout)
            ok = proc.returncode == 0
            tail = (proc.stdout + proc.stderr)[-2000:]
        except subprocess.TimeoutExpired:
            ok, tail = False, f"timed out after {args.timeout:g} s"
        dt = time.time() - t0
        if ok:
            result = "pass"
        elif label in FAIL_ON_MXNET:
            result = "fail (fails on MXNet 1.9.1 too)"
        else:
            result = "FAIL"
            bad += 1
            sys.stderr.write(f"--- {fname} {label}\n{tail}\n")
        print(f"| {fname} | {label} | {args.workers} | {result} | {dt:.1f} |", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
