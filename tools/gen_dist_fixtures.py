"""Record tests/fixtures/dist/* from real MXNet 1.9.1's ps-lite dist_sync store.

Run with the reference interpreter (``/tmp/mxref/bin/python tools/gen_dist_fixtures.py``).
Each scenario of ``tools/dist_scenarios.py`` is started as MXNet's own launcher would start it on
one machine: one scheduler, one server and N workers of the same script, told their role through
DMLC_ROLE and where the scheduler listens through DMLC_PS_ROOT_URI / DMLC_PS_ROOT_PORT (loopback,
DMLC_INTERFACE=lo). The workers' per-rank results are merged into one
``<scenario>_n<N>.npz`` (arrays named ``r<rank>/<name>``) and one ``<scenario>_n<N>.json``
(per-rank notes: errors MXNet raised, what it accepted).

Also usable as a small launcher for any ``import mxnet`` script on MXNet's ps-lite:

    /tmp/mxref/bin/python tools/gen_dist_fixtures.py --launch 2 -- python script.py args...

Every process runs under a hard time limit; when the workers end, the scheduler and server get a
few seconds to follow and are then killed (ps-lite's scheduler waits forever for a dead worker).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "tests", "fixtures", "dist")
SCRIPT = os.path.join(HERE, "dist_scenarios.py")

# (scenario, number of workers)
RUNS = [("kv_basic", 2), ("kv_basic", 3), ("kv_strkeys", 2), ("kv_optimizer", 2), ("kv_optimizer", 3),
        ("kv_row_sparse", 2), ("kv_compression", 2), ("trainer", 2)]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _kill(proc):
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def launch_pslite(cmd, n, timeout=120.0, cwd=None, env=None, log_dir=None, verbose=False):
    """Run ``cmd`` as 1 scheduler + 1 server + ``n`` workers; returns the workers' exit codes.

    A worker still running after ``timeout`` seconds is killed (exit code None in the result).
    """
    base = dict(os.environ if env is None else env)
    base.update(DMLC_PS_ROOT_URI="127.0.0.1", DMLC_PS_ROOT_PORT=str(free_port()),
                DMLC_NUM_WORKER=str(n), DMLC_NUM_SERVER="1", DMLC_INTERFACE="lo",
                OMP_NUM_THREADS=base.get("OMP_NUM_THREADS", "1"))
    log_dir = log_dir or tempfile.mkdtemp(prefix="pslite_logs_")
    os.makedirs(log_dir, exist_ok=True)
    procs = []

    def start(role, name):
        e = dict(base, DMLC_ROLE=role)
        log = open(os.path.join(log_dir, name + ".log"), "wb")
        p = subprocess.Popen(cmd, cwd=cwd, env=e, stdout=log, stderr=subprocess.STDOUT,
                             start_new_session=True)
        log.close()
        procs.append((name, p))
        return p

    start("scheduler", "scheduler")
    start("server", "server")
    workers = [start("worker", f"worker{i}") for i in range(n)]
    deadline = time.monotonic() + timeout
    codes = [None] * n
    try:
        while time.monotonic() < deadline:
            for i, w in enumerate(workers):
                codes[i] = w.poll()
            if all(c is not None for c in codes) or any(c not in (None, 0) for c in codes):
                break
            time.sleep(0.05)
        if any(c not in (None, 0) for c in codes):
            time.sleep(1.0)  # let the other workers fail on their own if they will
            codes = [w.poll() for w in workers]
        # the scheduler and server end once every worker has finalised; give them a moment
        end = time.monotonic() + 5.0
        while time.monotonic() < end and any(p.poll() is None for _, p in procs[:2]):
            if any(c is None for c in codes):
                break
            time.sleep(0.05)
    finally:
        for _, p in procs:
            _kill(p)
    if verbose:
        for name, _ in procs:
            with open(os.path.join(log_dir, name + ".log"), "rb") as f:
                text = f.read().decode("utf-8", "replace")
            if text.strip():
                sys.stderr.write(f"---- {name} ----\n{text}\n")
    return codes


def run_scenario(name, n, out_dir, python=sys.executable, timeout=120.0, extra=()):
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    log_dir = os.path.join(out_dir, "logs")
    t0 = time.monotonic()
    codes = launch_pslite([python, SCRIPT, "--scenario", name, "--out", out_dir, *extra], n,
                          timeout=timeout, log_dir=log_dir)
    dt = time.monotonic() - t0
    if codes != [0] * n:
        for f in sorted(os.listdir(log_dir)):
            with open(os.path.join(log_dir, f), "rb") as fh:
                sys.stderr.write(f"---- {f} ----\n{fh.read().decode('utf-8', 'replace')[-4000:]}\n")
        raise SystemExit(f"{name} n={n}: worker exit codes {codes}")
    return dt


def merge(out_dir, n):
    """Per-rank files of a run -> (dict of arrays r<rank>/<name>, dict of per-rank json)."""
    arrays, notes = {}, {}
    for r in range(n):
        with np.load(os.path.join(out_dir, f"rank{r}.npz")) as z:
            for k in z.files:
                arrays[f"r{r}/{k}"] = z[k]
        with open(os.path.join(out_dir, f"rank{r}.json")) as f:
            notes[f"r{r}"] = json.load(f)
    return arrays, notes


def _atomic_write(path, writer):
    d = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp_", suffix=os.path.splitext(path)[1])
    os.close(fd)
    try:
        writer(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", help="scenario names to (re)record")
    ap.add_argument("--launch", type=int, metavar="N",
                    help="just run the command after -- on N ps-lite workers")
    ap.add_argument("--timeout", type=float, default=240.0)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    if args.launch:
        cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
        codes = launch_pslite(cmd, args.launch, timeout=args.timeout, verbose=True)
        print("worker exit codes:", codes)
        raise SystemExit(0 if codes == [0] * args.launch else 1)

    import mxnet  # noqa: F401 - the recording must come from the reference
    if mxnet.__version__ != "1.9.1" or "neogluon" in getattr(mxnet, "__file__", ""):
        raise SystemExit("run with MXNet 1.9.1 (/tmp/mxref/bin/python), not %s" % mxnet.__file__)
    os.makedirs(OUT, exist_ok=True)
    work = tempfile.mkdtemp(prefix="dist_fixtures_")
    try:
        for name, n in RUNS:
            if args.only and name not in args.only:
                continue
            if name == "trainer":
                # one ps-lite job per configuration (see tools/dist_scenarios.py)
                sys.path.insert(0, HERE)
                from dist_scenarios import TRAINER_CONFIGS
                arrays, notes, dt = {}, {f"r{r}": {} for r in range(n)}, 0.0
                for cfg in TRAINER_CONFIGS:
                    run_dir = os.path.join(work, f"{name}_{cfg}_n{n}")
                    dt += run_scenario(name, n, run_dir, timeout=args.timeout,
                                       extra=("--config", cfg))
                    a, nt = merge(run_dir, n)
                    # every rank must end each step with the same weights; MXNet races
                    # otherwise show up here instead of in the fixture
                    differ = [k for k in a if k.startswith("r1/")
                              and not np.array_equal(a[k], a["r0/" + k[3:]])]
                    if differ:
                        raise SystemExit(f"trainer {cfg}: ranks disagree on MXNet: {differ[:4]}")
                    arrays.update(a)
                    for r in range(n):
                        notes[f"r{r}"].update(nt[f"r{r}"])
            else:
                run_dir = os.path.join(work, f"{name}_n{n}")
                dt = run_scenario(name, n, run_dir, timeout=args.timeout)
                arrays, notes = merge(run_dir, n)
            stem = os.path.join(OUT, f"{name}_n{n}")
            _atomic_write(stem + ".npz", lambda p: np.savez_compressed(p, **arrays))
            meta = {"scenario": name, "num_workers": n, "mxnet": "1.9.1", "ranks": notes}

            def write_json(p, meta=meta):
                with open(p, "w") as f:
                    json.dump(meta, f, indent=1, sort_keys=True)
                    f.write("\n")
            _atomic_write(stem + ".json", write_json)
            print(f"{name}_n{n}: {len(arrays)} arrays, {dt:.1f} s, "
                  f"{os.path.getsize(stem + '.npz')} bytes")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
