"""sparse_embedding: one training step of a 1,000,000 x 64 Embedding when a batch touches
1,000 rows.

Configurations, each timed in a fresh interpreter (one thread):

* neogluon, ``nn.Embedding(sparse_grad=True)`` + Trainer: the row_sparse gradient regime
  (lazy SGD with momentum, lazy Adam);
* neogluon, the same model with dense gradients (``sparse_grad=False``): the baseline the sparse
  step must beat by at least 50x;
* MXNet 1.9.1 with ``sparse_grad=True`` (and dense, for reference), when
  ``/tmp/mxref/bin/python`` has it;
* both with sparse weights (``gluon.contrib.nn.SparseEmbedding``: the table lives in the
  KVStore, each step pulls the batch's rows and updates them there).

A step is forward (lookup of a batch of 2,048 ids drawn from 1,000 distinct rows), loss
``sum(y * y)``, backward and ``trainer.step(batch)``. Reported: the median wall time per step
over the repeats, and memory: the process's resident memory after the first step (model, states
and buffers) next to the table + optimizer state bytes, and the peak growth of resident memory
during the timed steps, at two table sizes, to show that a sparse step allocates nothing that
grows with the table.

Usage:
    python bench/sparse_embedding.py [--rows 1000000] [--repeat 30] [--no-mxnet] [--no-write]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "RESULTS.md")
SECTION = "sparse_embedding"
MXREF = "/tmp/mxref/bin/python"
DIM = 64
TOUCHED = 1000
BATCH = 2048

OPTS = {
    "sgd_momentum": ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-4}, 1),
    "adam_lazy": ("adam", {"learning_rate": 1e-3, "wd": 1e-4}, 2),
}


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _peak_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def worker(framework, opt_key, sparse, rows, repeat):
    """Run one configuration in this process; returns a dict of measurements."""
    import numpy as np
    if framework == "mxnet":
        import mxnet as mx
        sync = mx.nd.waitall
    else:
        import torch
        torch.set_num_threads(1)
        import neogluon as mx
        sync = mx.nd.waitall
    from_nd = mx.nd
    gluon, autograd = mx.gluon, mx.autograd
    opt, params, n_states = OPTS[opt_key]
    rng = np.random.RandomState(0)
    batches = []
    for _ in range(repeat + 3):
        ids = rng.choice(rows, TOUCHED, replace=False)
        batches.append(ids[rng.randint(0, TOUCHED, BATCH)].astype("float32"))
    rss0 = _rss_bytes()
    if sparse == "weight":
        emb = gluon.contrib.nn.SparseEmbedding(rows, DIM)
    else:
        emb = gluon.nn.Embedding(rows, DIM, sparse_grad=bool(sparse))
    emb.initialize(mx.init.Uniform(0.1), ctx=mx.cpu())
    trainer = gluon.Trainer(emb.collect_params(), opt, dict(params), kvstore="device")

    def step(ids):
        x = from_nd.array(ids)
        with autograd.record():
            y = emb(x)
            loss = (y * y).sum()
        loss.backward()
        trainer.step(BATCH)

    for ids in batches[:3]:
        step(ids)
    sync()
    rss_ready = _rss_bytes()
    peak_before = _peak_rss_bytes()
    times = []
    for ids in batches[3:]:
        t0 = time.perf_counter()
        step(ids)
        sync()
        times.append(time.perf_counter() - t0)
    peak_after = _peak_rss_bytes()
    table = rows * DIM * 4
    return {"framework": framework, "opt": opt_key, "sparse": sparse, "rows": rows,
            "median_ms": statistics.median(times) * 1e3, "min_ms": min(times) * 1e3,
            "resident_mb": (rss_ready - rss0) / 2 ** 20,
            "table_and_states_mb": table * (1 + n_states) / 2 ** 20,
            "peak_growth_mb": max(0, peak_after - max(peak_before, rss_ready)) / 2 ** 20}


def run_config(python, framework, opt_key, sparse, rows, repeat, timeout=900):
    mode = sparse if isinstance(sparse, str) else ("1" if sparse else "0")
    cmd = [python, os.path.abspath(__file__), "--worker", framework, opt_key, mode, str(rows),
           str(repeat)]
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               MXNET_CPU_WORKER_NTHREADS="1", MXNET_STORAGE_FALLBACK_LOG_VERBOSE="0",
               MXNET_ENGINE_TYPE=os.environ.get("MXNET_ENGINE_TYPE", "ThreadedEnginePerDevice"))
    env.pop("PYTHONPATH", None)
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": "timed out"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return {"error": (proc.stderr.strip().splitlines() or ["no output"])[-1][:200]}


def _fmt(r, key, fmt="{:.2f}"):
    return fmt.format(r[key]) if r and key in r else (r or {}).get("error", "-")


def section(results, mem, command, rows):
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"## {SECTION}", "",
             f"Command: `{command}` -- {now}; Python {platform.python_version()} on "
             f"{platform.machine()}, {os.cpu_count()} CPU(s) (shared), one thread per run. "
             f"Embedding {rows:,} x {DIM}, batch of {BATCH:,} ids over {TOUCHED:,} distinct "
             "rows; step = forward + sum(y*y) + backward + trainer.step; median of the timed "
             "steps.", "",
             "| optimizer | neogluon sparse (ms) | neogluon dense (ms) | dense / sparse | "
             "MXNet 1.9.1 sparse (ms) | MXNet sparse / neogluon sparse | MXNet dense (ms) |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    best = ["", "Fastest step of each run (ms), the least disturbed by other processes on "
            "the shared machine:", "",
            "| optimizer | neogluon sparse | neogluon dense | dense / sparse | MXNet sparse | "
            "MXNet sparse / neogluon sparse |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for opt_key in OPTS:
        s = results.get(("neogluon", opt_key, True))
        d = results.get(("neogluon", opt_key, False))
        ms = results.get(("mxnet", opt_key, True))
        md = results.get(("mxnet", opt_key, False))
        ratio = (f"{d['median_ms'] / s['median_ms']:.0f}x" if s and d and "median_ms" in s
                 and "median_ms" in d else "-")
        mratio = (f"{ms['median_ms'] / s['median_ms']:.2f}x" if s and ms and "median_ms" in s
                  and "median_ms" in ms else "-")
        lines.append(f"| {opt_key} | {_fmt(s, 'median_ms', '{:.3f}')} | "
                     f"{_fmt(d, 'median_ms', '{:.1f}')} | {ratio} | "
                     f"{_fmt(ms, 'median_ms', '{:.3f}')} | {mratio} | "
                     f"{_fmt(md, 'median_ms', '{:.1f}')} |")
        okm = all(r and "min_ms" in r for r in (s, d))
        okx = all(r and "min_ms" in r for r in (s, ms))
        r_dense = f"{d['min_ms'] / s['min_ms']:.0f}x" if okm else "-"
        r_mx = f"{ms['min_ms'] / s['min_ms']:.2f}x" if okx else "-"
        best.append(f"| {opt_key} | {_fmt(s, 'min_ms', '{:.3f}')} | "
                    f"{_fmt(d, 'min_ms', '{:.1f}')} | {r_dense} | "
                    f"{_fmt(ms, 'min_ms', '{:.3f}')} | {r_mx} |")
    lines += best
    lines += ["", "Sparse weights (`gluon.contrib.nn.SparseEmbedding`: row_sparse weight and "
              "gradient, rows pulled from the KVStore each step, lazy update on the store), "
              "median / fastest step (ms):", "",
              "| optimizer | neogluon | MXNet 1.9.1 | MXNet / neogluon (median) |",
              "| --- | ---: | ---: | ---: |"]
    for opt_key in OPTS:
        s = results.get(("neogluon", opt_key, "weight"))
        ms = results.get(("mxnet", opt_key, "weight"))
        ok = all(r and "median_ms" in r for r in (s, ms))
        ratio = f"{ms['median_ms'] / s['median_ms']:.2f}x" if ok else "-"
        lines.append(f"| {opt_key} | {_fmt(s, 'median_ms', '{:.3f}')} / "
                     f"{_fmt(s, 'min_ms', '{:.3f}')} | {_fmt(ms, 'median_ms', '{:.3f}')} / "
                     f"{_fmt(ms, 'min_ms', '{:.3f}')} | {ratio} |")
    lines += ["", "Memory of the neogluon sparse step (MiB): resident memory the model, "
              "trainer and first steps added; the table + optimizer states it must hold; the "
              "peak growth of resident memory during the timed steps.", "",
              "| optimizer | rows | resident | table + states | resident - (table + states) | "
              "peak growth in steps |",
              "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for (opt_key, n), r in sorted(mem.items()):
        other = (f"{r['resident_mb'] - r['table_and_states_mb']:.0f}"
                 if r and "resident_mb" in r else "-")
        lines.append(f"| {opt_key} | {n:,} | {_fmt(r, 'resident_mb', '{:.0f}')} | "
                     f"{_fmt(r, 'table_and_states_mb', '{:.0f}')} | {other} | "
                     f"{_fmt(r, 'peak_growth_mb', '{:.1f}')} |")
    return "\n".join(lines) + "\n"


def write_section(text):
    """Replace (or append) this benchmark's section of RESULTS.md, re-reading the file first."""
    old = open(RESULTS).read() if os.path.exists(RESULTS) else "# Benchmark results\n\n"
    lines = old.splitlines(keepends=True)
    start = next((i for i, l in enumerate(lines) if l.strip() == f"## {SECTION}"), None)
    if start is None:
        out = old.rstrip("\n") + "\n\n" + text
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")),
                   len(lines))
        out = "".join(lines[:start]) + text + ("\n" if end < len(lines) else "") \
            + "".join(lines[end:])
    tmp = RESULTS + f".tmp{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(out)
    os.replace(tmp, RESULTS)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--dense-repeat", type=int, default=5)
    p.add_argument("--no-mxnet", action="store_true")
    p.add_argument("--no-write", action="store_true")
    p.add_argument("--worker", nargs=5, metavar=("FRAMEWORK", "OPT", "SPARSE", "ROWS", "REPEAT"),
                   help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        fw, opt_key, sparse, rows, repeat = args.worker
        mode = {"1": True, "0": False}.get(sparse, sparse)
        print(json.dumps(worker(fw, opt_key, mode, int(rows), int(repeat))))
        return 0
    use_mx = not args.no_mxnet and os.path.exists(MXREF)
    results = {}
    for opt_key in OPTS:
        for sparse in (True, False, "weight"):
            rep = args.repeat if sparse else args.dense_repeat
            r = run_config(sys.executable, "neogluon", opt_key, sparse, args.rows, rep)
            results[("neogluon", opt_key, sparse)] = r
            print("neogluon", opt_key, sparse, r, flush=True)
            if use_mx:
                r = run_config(MXREF, "mxnet", opt_key, sparse, args.rows, rep)
                results[("mxnet", opt_key, sparse)] = r
                print("mxnet   ", opt_key, sparse, r, flush=True)
    mem = {}
    for opt_key in OPTS:
        for n in (args.rows // 4, args.rows):
            r = results.get(("neogluon", opt_key, True)) if n == args.rows else \
                run_config(sys.executable, "neogluon", opt_key, True, n, args.repeat)
            mem[(opt_key, n)] = r
    command = "python bench/sparse_embedding.py" + "".join(
        f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
    text = section(results, mem, command, args.rows)
    print(text)
    if not args.no_write:
        write_section(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
