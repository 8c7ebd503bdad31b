"""data_loss: DataLoader batches and loss forward+backward, neogluon vs torch vs MXNet 1.9.1.

Measures, in one run, at one thread:
* DataLoader: microseconds per batch of 64 (784 float32 features + a label) over a shuffled
  ArrayDataset of 6400 samples held as numpy arrays or as NDArrays, main process;
  the torch baseline is ``torch.utils.data.DataLoader`` over a ``TensorDataset``.
* Losses: microseconds for ``SoftmaxCrossEntropyLoss`` and ``L2Loss`` forward and backward
  on (64, 10) predictions inside ``autograd.record()``; the torch baseline is
  ``F.cross_entropy`` / ``F.mse_loss`` with ``reduction='none'`` and ``backward``.
* The same in MXNet 1.9.1, when ``/tmp/mxref/bin/python`` has it (run in a subprocess).

Each figure is the best of several interleaved rounds, which filters out the noise of a shared
machine better than a mean.

Usage:
    python bench/data_loss.py [--rounds 7] [--no-mxnet] [--no-write]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "RESULTS.md")
SECTION = "data_loss"
MXREF = "/tmp/mxref/bin/python"

# Runs inside either neogluon's interpreter or MXNet's.
WORKER = r'''
import json, sys, time, os
import numpy as np
lib, rounds = sys.argv[1], int(sys.argv[2])
if lib == "mxnet":
    from mxnet import gluon, nd, autograd
else:
    import torch
    torch.set_num_threads(1)
    from neogluon import gluon, nd, autograd
rng = np.random.RandomState(0)
X = rng.rand(6400, 784).astype(np.float32)
Y = rng.randint(0, 10, 6400).astype(np.float32)
loaders = {
    "loader_numpy": gluon.data.DataLoader(gluon.data.ArrayDataset(X, Y), batch_size=64,
                                          shuffle=True),
    "loader_nd": gluon.data.DataLoader(gluon.data.ArrayDataset(nd.array(X), nd.array(Y)),
                                       batch_size=64, shuffle=True),
}
pred = nd.array(rng.randn(64, 10).astype(np.float32))
pred.attach_grad()
label = nd.array(rng.randint(0, 10, 64).astype(np.float32))
target = nd.array(rng.randn(64, 10).astype(np.float32))
sce = gluon.loss.SoftmaxCrossEntropyLoss()
l2 = gluon.loss.L2Loss()


def loss_step(fn, y):
    def run():
        for _ in range(200):
            with autograd.record():
                out = fn(pred, y)
            out.backward()
        nd.waitall()
    return run, 200


def epoch(dl):
    def run():
        n = 0
        for d, l in dl:
            n += 1
        nd.waitall()
    return run, len(dl)


cases = {k: epoch(v) for k, v in loaders.items()}
cases["sce"] = loss_step(sce, label)
cases["l2"] = loss_step(l2, target)
best = {k: float("inf") for k in cases}
for k, (fn, _) in cases.items():
    fn()  # warm up
for _ in range(rounds):
    for k, (fn, n) in cases.items():
        t = time.perf_counter()
        fn()
        best[k] = min(best[k], (time.perf_counter() - t) / n * 1e6)
print(json.dumps(best))
'''


def run_lib(lib, python, rounds):
    out = subprocess.run([python, "-c", WORKER, lib, str(rounds)], capture_output=True,
                         text=True, timeout=900, env=dict(os.environ, OMP_NUM_THREADS="1"))
    if out.returncode != 0:
        raise RuntimeError(f"{lib} benchmark failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_torch(rounds):
    import numpy as np
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(1)
    rng = np.random.RandomState(0)
    X = torch.from_numpy(rng.rand(6400, 784).astype(np.float32))
    Y = torch.from_numpy(rng.randint(0, 10, 6400).astype(np.float32))
    dl = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, Y), batch_size=64,
                                     shuffle=True)
    pred = torch.randn(64, 10, requires_grad=True)
    label = torch.randint(0, 10, (64,))
    target = torch.randn(64, 10)

    def epoch():
        for _ in dl:
            pass
        return len(dl)

    def sce():
        for _ in range(200):
            out = F.cross_entropy(pred, label, reduction="none")
            out.backward(torch.ones_like(out))
        return 200

    def l2():
        for _ in range(200):
            out = (F.mse_loss(pred, target, reduction="none") * 0.5).mean(1)
            out.backward(torch.ones_like(out))
        return 200

    cases = {"loader": epoch, "sce": sce, "l2": l2}
    best = {k: float("inf") for k in cases}
    for fn in cases.values():
        fn()
    for _ in range(rounds):
        for k, fn in cases.items():
            t = time.perf_counter()
            n = fn()
            best[k] = min(best[k], (time.perf_counter() - t) / n * 1e6)
    return best


def table(ng, th, mxr):
    def f(x):
        return "-" if x is None else f"{x:.1f}"

    def ratio(a, b):
        return "-" if a is None or b is None else f"{a / b:.2f}x"

    m = mxr or {}
    rows = ["| case | neogluon us | torch us | MXNet 1.9.1 us | neogluon / torch | "
            "MXNet / neogluon |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for key, tkey, label in (("loader_numpy", "loader", "DataLoader, numpy ArrayDataset"),
                             ("loader_nd", "loader", "DataLoader, NDArray ArrayDataset"),
                             ("sce", "sce", "SoftmaxCrossEntropyLoss fwd+bwd"),
                             ("l2", "l2", "L2Loss fwd+bwd")):
        rows.append(f"| {label} | {f(ng[key])} | {f(th[tkey])} | {f(m.get(key))} | "
                    f"{ratio(ng[key], th[tkey])} | {ratio(m.get(key), ng[key])} |")
    return rows


def write_section(body):
    text = open(RESULTS).read() if os.path.exists(RESULTS) else "# Benchmark results\n\n"
    lines = text.splitlines(keepends=True)
    start = next((i for i, l in enumerate(lines) if l.strip() == f"## {SECTION}"), None)
    if start is None:
        out = text.rstrip("\n") + "\n\n" + body
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")),
                   len(lines))
        out = "".join(lines[:start]) + body + ("\n" if end < len(lines) else "") \
            + "".join(lines[end:])
    tmp = RESULTS + f".tmp{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(out)
    os.replace(tmp, RESULTS)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--no-mxnet", action="store_true")
    p.add_argument("--no-write", action="store_true")
    args = p.parse_args(argv)
    ng = run_lib("neogluon", sys.executable, args.rounds)
    th = run_torch(args.rounds)
    mxr = None
    if not args.no_mxnet and os.path.exists(MXREF):
        mxr = run_lib("mxnet", MXREF, args.rounds)
    rows = table(ng, th, mxr)
    print(json.dumps({"neogluon": ng, "torch": th, "mxnet": mxr}, indent=1))
    print("\n".join(rows))
    command = "python bench/data_loss.py " + " ".join(argv if argv is not None else sys.argv[1:])
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    body = "\n".join([
        f"## {SECTION}", "",
        f"Command: `{command.strip()}` -- {now}; 1 thread, best of {args.rounds} interleaved "
        f"rounds, microseconds per batch (DataLoader) or per forward+backward (losses); "
        f"Python {platform.python_version()}, {os.cpu_count()} CPU(s). Batch 64; the "
        "DataLoader reads 784 float32 features and a label per sample, shuffled.", ""]
        + rows) + "\n"
    if not args.no_write:
        write_section(body)


if __name__ == "__main__":
    main()
