"""NumPy-mode training speed: the same MLP (784-256-256-10) and LeNet, batch 64, trained with
``npx.set_np()`` (mx.np arrays, as d2l writes them) and in nd mode, in one process,
alternating; issue 33's target is NumPy mode within 5% of nd mode.

Usage: python bench/numpy_mode.py [--rounds N] [--steps S] [--threads T]
       python bench/numpy_mode.py --calls
       python bench/numpy_mode.py --cpu [...]   (CPU time of the process instead of wall time)

``--calls`` counts instead of timing: the calls cProfile sees per training step (Python
functions and builtins) for each network and mode, each measured in a fresh process (autograd
walks the live variables, so two networks in one process would inflate the second count).
Unlike times, the counts do not depend on the machine's load.

Each round times S training steps (forward, loss, backward, Trainer.step) per mode and
network, imperative and hybridized; the report gives each mode's best round and the ratio
np/nd of step times (1.00 = same speed; above 1 = NumPy mode slower).
"""
import argparse
import json
import time

import numpy as onp

import neogluon as mx
from neogluon import autograd, gluon, npx
from neogluon.gluon import nn


def _net(kind):
    net = nn.HybridSequential()
    if kind == "mlp":
        net.add(nn.Dense(256, activation="relu"), nn.Dense(256, activation="relu"),
                nn.Dense(10))
    else:
        net.add(nn.Conv2D(6, 5, activation="tanh"), nn.MaxPool2D(2),
                nn.Conv2D(16, 5, activation="tanh"), nn.MaxPool2D(2),
                nn.Dense(120, activation="tanh"), nn.Dense(84, activation="tanh"),
                nn.Dense(10))
    return net


def _setup(kind, np_mode, hybridize):
    if np_mode:
        npx.set_np()
    else:
        npx.reset_np()
    mx.random.seed(0)
    rng = onp.random.RandomState(0)
    shape = (64, 784) if kind == "mlp" else (64, 1, 28, 28)
    x = rng.uniform(size=shape).astype("float32")
    y = rng.randint(0, 10, size=(64,)).astype("float32")
    mod = mx.np if np_mode else mx.nd
    x, y = mod.array(x), mod.array(y)
    net = _net(kind)
    net.initialize(mx.init.Xavier())
    if hybridize:
        net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(64)
        return loss
    step().wait_to_read()   # deferred init, capture
    return step


def _time(step, steps, np_mode):
    if np_mode:
        npx.set_np()
    else:
        npx.reset_np()
    t0 = _CLOCK[0]()
    for _ in range(steps):
        loss = step()
    loss.wait_to_read()
    return (_CLOCK[0]() - t0) / steps * 1e3


# wall time by default; --cpu: this process's CPU time (with one torch thread, the work the
# step does, much less disturbed by other processes on a loaded machine than wall time)
_CLOCK = [time.perf_counter]


def _count_one(kind, hyb, mode, steps=20):
    import cProfile
    import pstats
    step = _setup(kind, mode == "np", hyb)
    for _ in range(3):
        step()
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(steps):
        step()
    pr.disable()
    npx.reset_np()
    return pstats.Stats(pr).total_calls / steps


def _count_all():
    import subprocess
    import sys
    results = {}
    for kind in ("mlp", "lenet"):
        for hyb in (False, True):
            calls = {}
            for m in ("nd", "np"):
                out = subprocess.run([sys.executable, __file__, "--count-one", kind,
                                      str(int(hyb)), m], capture_output=True, text=True,
                                     check=True).stdout
                calls[m] = float(out.strip().splitlines()[-1])
            key = f"{kind}-{'hybridized' if hyb else 'imperative'}"
            results[key] = {"nd_calls": calls["nd"], "np_calls": calls["np"],
                            "np/nd": round(calls["np"] / calls["nd"], 3)}
            print(f"{key:22s} nd {calls['nd']:7.1f} calls/step  np {calls['np']:7.1f} "
                  f"calls/step  np/nd {calls['np'] / calls['nd']:.3f}", flush=True)
    print(json.dumps(results))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--calls", action="store_true", help="count calls per step, not time")
    ap.add_argument("--cpu", action="store_true", help="time with the process's CPU clock")
    ap.add_argument("--count-one", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.count_one:
        kind, hyb, mode = args.count_one
        print(_count_one(kind, hyb == "1", mode))
        return
    if args.calls:
        _count_all()
        return
    if args.cpu:
        _CLOCK[0] = time.process_time
    import torch
    torch.set_num_threads(args.threads)
    results = {}
    for kind in ("mlp", "lenet"):
        for hyb in (False, True):
            steps = {m: _setup(kind, m == "np", hyb) for m in ("nd", "np")}
            best = {"nd": float("inf"), "np": float("inf")}
            for _ in range(args.rounds):
                for m in ("nd", "np"):
                    best[m] = min(best[m], _time(steps[m], args.steps, m == "np"))
            key = f"{kind}-{'hybridized' if hyb else 'imperative'}"
            results[key] = {"nd_ms": round(best["nd"], 3), "np_ms": round(best["np"], 3),
                            "np/nd": round(best["np"] / best["nd"], 3)}
            print(f"{key:22s} nd {best['nd']:7.3f} ms/step  np {best['np']:7.3f} ms/step  "
                  f"np/nd {best['np'] / best['nd']:.3f}", flush=True)
    npx.reset_np()
    print(json.dumps(results))


if __name__ == "__main__":
    main()
