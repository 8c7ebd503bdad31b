"""Per-op overhead of neogluon's NDArray layer against plain torch, on small tensors.

    OMP_NUM_THREADS=1 .venv/bin/python bench/nd_overhead.py [--rounds 7] [--json out.json]

Each case times the same work written with neogluon and with torch, interleaved in rounds in
one process, by the thread's CPU time (torch is single-threaded here). The reported ratio is best-of-rounds neogluon time over best-of-rounds torch time
(the least disturbed round of each, the usual estimate on a shared machine); the median of the
per-round ratios is printed too.

Cases (targets from issue 2):
- ``add10``: elementwise add of two 10-element float32 arrays (target <= 1.5x).
- ``fc_fwd_bwd``: a 64x256 -> 256 FullyConnected forward and backward under
  ``autograd.record`` with the gradient written into the weight's buffer, against
  ``F.linear`` forward and backward with ``requires_grad`` leaves (target <= 1.15x).
Informational cases: scalar multiply, a reduction, indexing, a 3-op chain under record.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.set_num_threads(1)

import neogluon as mx  # noqa: E402
from neogluon import autograd, nd  # noqa: E402


def _time(fn, n):
    # CPU time of this thread (torch runs single-threaded here): on a shared machine this
    # leaves out the time the process waits for a core, which wall time would count.
    t0 = time.thread_time()
    fn(n)
    return (time.thread_time() - t0) / n


def case_add10():
    a, b = nd.ones(10), nd.ones(10)
    ta, tb = torch.ones(10), torch.ones(10)

    def ng(n):
        for _ in range(n):
            a + b

    def th(n):
        for _ in range(n):
            ta + tb
    return ng, th, 20000


def case_scalar_mul():
    a = nd.ones(10)
    ta = torch.ones(10)

    def ng(n):
        for _ in range(n):
            a * 2.0

    def th(n):
        for _ in range(n):
            ta * 2.0
    return ng, th, 20000


def case_sum_axis():
    a = nd.ones((8, 10))
    ta = torch.ones((8, 10))

    def ng(n):
        for _ in range(n):
            nd.sum(a, axis=1)

    def th(n):
        for _ in range(n):
            torch.sum(ta, dim=1)
    return ng, th, 10000


def case_getitem():
    a = nd.ones((8, 10))
    ta = torch.ones((8, 10))

    def ng(n):
        for _ in range(n):
            a[1:3]

    def th(n):
        for _ in range(n):
            ta[1:3]
    return ng, th, 20000


def case_fc_fwd_bwd():
    rs = torch.Generator().manual_seed(0)
    x_t = torch.randn(64, 256, generator=rs)
    w_t = torch.randn(256, 256, generator=rs) * 0.05
    b_t = torch.zeros(256)
    x = nd.from_torch(x_t.clone())
    w = nd.from_torch(w_t.clone())
    b = nd.from_torch(b_t.clone())
    w.attach_grad()
    b.attach_grad()
    tw = w_t.clone().requires_grad_(True)
    tb = b_t.clone().requires_grad_(True)

    def ng(n):
        for _ in range(n):
            with autograd.record():
                y = nd.FullyConnected(x, w, b, num_hidden=256)
            y.backward()

    def th(n):
        for _ in range(n):
            y = F.linear(x_t, tw, tb)
            y.backward(torch.ones_like(y))
    return ng, th, 1000


def case_chain_record():
    x = nd.ones((16, 32))
    w = nd.ones((16, 32))
    w.attach_grad()
    tx = torch.ones((16, 32))
    tw = torch.ones((16, 32), requires_grad=True)

    def ng(n):
        for _ in range(n):
            with autograd.record():
                y = nd.relu(x * w + 1.0).sum()
            y.backward()

    def th(n):
        for _ in range(n):
            y = torch.relu(tx * tw + 1.0).sum()
            y.backward()
    return ng, th, 3000


CASES = {"add10": (case_add10, 1.5), "fc_fwd_bwd": (case_fc_fwd_bwd, 1.15),
         "scalar_mul10": (case_scalar_mul, None), "sum_axis": (case_sum_axis, None),
         "getitem": (case_getitem, None), "chain_record": (case_chain_record, None)}


def run(rounds, only=None):
    results = {}
    for name, (make, target) in CASES.items():
        if only and name not in only:
            continue
        ng, th, n = make()
        ng(n // 10)  # warm up
        th(n // 10)
        ratios, tng, tth = [], [], []
        for _ in range(rounds):
            a = _time(ng, n)
            b = _time(th, n)
            ratios.append(a / b)
            tng.append(a)
            tth.append(b)
        r = min(tng) / min(tth)
        results[name] = {"neogluon_us": min(tng) * 1e6, "torch_us": min(tth) * 1e6,
                         "ratio": r, "median_ratio": statistics.median(ratios),
                         "target": target, "ok": None if target is None else r <= target}
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=25)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--json")
    args = ap.parse_args()
    res = run(args.rounds, args.only)
    print(f"torch {torch.__version__}, neogluon {mx.__version__}, threads "
          f"{torch.get_num_threads()}, rounds {args.rounds}")
    print(f"{'case':14s} {'neogluon us':>12s} {'torch us':>10s} {'ratio':>7s} "
          f"{'median':>7s} {'target':>7s}")
    for k, v in res.items():
        tgt = "" if v["target"] is None else f"{v['target']:.2f}"
        flag = "" if v["ok"] is None else ("ok" if v["ok"] else "MISS")
        print(f"{k:14s} {v['neogluon_us']:12.2f} {v['torch_us']:10.2f} {v['ratio']:7.3f} "
              f"{v['median_ratio']:7.3f} {tgt:>7s} {flag}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
