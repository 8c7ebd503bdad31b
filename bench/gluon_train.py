"""Training steps per second: neogluon Gluon (imperative, hybridized) vs plain PyTorch eager,
and MXNet 1.9.1 Gluon when /tmp/mxref holds it, for an MLP (784-256-256-10) and LeNet, batch 64.

Usage: python bench/gluon_train.py [--threads N] [--seconds S]

Each configuration trains on fixed random data with softmax cross-entropy and SGD (lr 0.01):
``gluon.Trainer`` when neogluon has one, otherwise ``w -= lr * grad`` done by hand through nd
(the report says which). torch uses ``torch.optim.SGD``; MXNet uses its Gluon Trainer.
"""
import argparse
import json
import os
import subprocess
import sys
import time

MXREF = "/tmp/mxref/bin/python"

MX_SCRIPT = r'''
import json, sys, time
import numpy as np
import mxnet as mx
from mxnet import gluon, autograd, nd
from mxnet.gluon import nn
mx.random.seed(0)
budget = float(sys.argv[1])
def mlp():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(256, activation="relu"), nn.Dense(256, activation="relu"), nn.Dense(10))
    return net, (64, 784)
def lenet():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(6, 5, activation="relu"), nn.MaxPool2D(2, 2),
                nn.Conv2D(16, 5, activation="relu"), nn.MaxPool2D(2, 2),
                nn.Dense(120, activation="relu"), nn.Dense(84, activation="relu"), nn.Dense(10))
    return net, (64, 1, 28, 28)
steps = {}
for name, make in (("mlp", mlp), ("lenet", lenet)):
    for hyb in (False, True):
        net, shape = make()
        net.initialize(mx.init.Xavier())
        if hyb:
            net.hybridize(static_alloc=True, static_shape=True)
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        x = nd.random.uniform(shape=shape)
        y = nd.array(np.random.randint(0, 10, size=(64,)))
        def step(net=net, x=x, y=y, trainer=trainer, loss_fn=loss_fn):
            with autograd.record():
                l = loss_fn(net(x), y)
            l.backward()
            trainer.step(64)
        for _ in range(20):
            step()
        nd.waitall()
        steps[f"{name}/{'hybrid' if hyb else 'imperative'}"] = step
rounds = int(sys.argv[2])
best = {k: 0.0 for k in steps}
best_cpu = {k: 0.0 for k in steps}
for _ in range(rounds):
    for k, step in steps.items():
        n = 0
        t0 = time.perf_counter()
        c0 = time.process_time()
        while True:
            step()
            n += 1
            if n % 5 == 0:
                nd.waitall()
                if time.perf_counter() - t0 > budget / rounds:
                    break
        best[k] = max(best[k], n / (time.perf_counter() - t0))
        best_cpu[k] = max(best_cpu[k], n / max(time.process_time() - c0, 1e-9))
best = {"wall": best, "cpu": best_cpu}
print(json.dumps(best))
'''


def bench_torch(budget):
    import torch
    from torch import nn as tnn
    torch.manual_seed(0)

    def mlp():
        return tnn.Sequential(tnn.Linear(784, 256), tnn.ReLU(), tnn.Linear(256, 256), tnn.ReLU(),
                              tnn.Linear(256, 10)), (64, 784)

    def lenet():
        return tnn.Sequential(tnn.Conv2d(1, 6, 5), tnn.ReLU(), tnn.MaxPool2d(2, 2),
                              tnn.Conv2d(6, 16, 5), tnn.ReLU(), tnn.MaxPool2d(2, 2),
                              tnn.Flatten(), tnn.Linear(256, 120), tnn.ReLU(),
                              tnn.Linear(120, 84), tnn.ReLU(), tnn.Linear(84, 10)), (64, 1, 28, 28)

    res = {}
    for name, make in (("mlp", mlp), ("lenet", lenet)):
        net, shape = make()
        opt = torch.optim.SGD(net.parameters(), lr=0.01)
        x = torch.rand(shape)
        y = torch.randint(0, 10, (64,))
        lossf = tnn.CrossEntropyLoss()

        def step(net=net, opt=opt, x=x, y=y, lossf=lossf):
            opt.zero_grad()
            loss = lossf(net(x), y)
            loss.backward()
            opt.step()
        res[f"{name}/torch"] = step
    return res


def _interleaved(steps, budget, rounds):
    """Best steps/s of each configuration over ``rounds`` interleaved windows (the machine
    is shared, so the best window is the least disturbed one)."""
    for step in steps.values():
        for _ in range(20):
            step()
    best = {k: 0.0 for k in steps}
    best_cpu = {k: 0.0 for k in steps}
    for _ in range(rounds):
        for k, step in steps.items():
            n = 0
            t0 = time.perf_counter()
            c0 = time.process_time()
            while True:
                step()
                n += 1
                if n % 5 == 0 and time.perf_counter() - t0 > budget / rounds:
                    break
            best[k] = max(best[k], n / (time.perf_counter() - t0))
            best_cpu[k] = max(best_cpu[k], n / max(time.process_time() - c0, 1e-9))
    return {"wall": best, "cpu": best_cpu}


def bench_neogluon(budget):
    import numpy as np
    import neogluon as mx
    from neogluon import autograd, gluon, nd
    from neogluon.gluon import nn
    mx.random.seed(0)
    try:
        trainer_cls = gluon.Trainer
    except (AttributeError, ImportError):
        trainer_cls = None

    def mlp():
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Dense(256, activation="relu"), nn.Dense(256, activation="relu"),
                    nn.Dense(10))
        return net, (64, 784)

    def lenet():
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Conv2D(6, 5, activation="relu"), nn.MaxPool2D(2, 2),
                    nn.Conv2D(16, 5, activation="relu"), nn.MaxPool2D(2, 2),
                    nn.Dense(120, activation="relu"), nn.Dense(84, activation="relu"),
                    nn.Dense(10))
        return net, (64, 1, 28, 28)

    res = {}
    for name, make in (("mlp", mlp), ("lenet", lenet)):
        for hyb in (False, True):
            net, shape = make()
            net.initialize(mx.init.Xavier())
            if hyb:
                net.hybridize(static_alloc=True, static_shape=True)
            loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
            x = nd.random.uniform(shape=shape)
            y = nd.array(np.random.randint(0, 10, size=(64,)))
            net(x)
            if trainer_cls is not None:
                trainer = trainer_cls(net.collect_params(), "sgd", {"learning_rate": 0.01})

                def update(trainer=trainer):
                    trainer.step(64)
            else:
                params = [p for p in net.collect_params().values() if p.grad_req != "null"]
                scale = 0.01 / 64

                def update(params=params, scale=scale):
                    for p in params:
                        w = p.data()
                        w -= scale * p.grad()

            def step(net=net, x=x, y=y, loss_fn=loss_fn, update=update):
                with autograd.record():
                    loss = loss_fn(net(x), y)
                loss.backward()
                update()
            res[f"{name}/{'hybrid' if hyb else 'imperative'}"] = step
    res["update"] = "gluon.Trainer sgd" if trainer_cls is not None else "hand-written SGD (no Trainer yet)"
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=3.0,
                    help="measuring time per configuration, split into --rounds windows")
    ap.add_argument("--rounds", type=int, default=6)
    args = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    os.environ["MKL_NUM_THREADS"] = str(args.threads)
    import torch
    torch.set_num_threads(args.threads)
    steps = bench_torch(args.seconds)
    neo = bench_neogluon(args.seconds)
    update = neo.pop("update")
    steps.update(neo)
    meas = _interleaved(steps, args.seconds, args.rounds)
    mx_meas = None
    if os.path.exists(MXREF):
        env = dict(os.environ, OMP_NUM_THREADS=str(args.threads),
                   MXNET_CPU_WORKER_NTHREADS=str(args.threads), MXNET_ENGINE_TYPE="ThreadedEngine")
        r = subprocess.run([MXREF, "-c", MX_SCRIPT, str(args.seconds), str(args.rounds)],
                           capture_output=True, text=True, env=env, check=False)
        if r.returncode == 0:
            mx_meas = json.loads(r.stdout.strip().splitlines()[-1])
        else:
            print("MXNet run failed:", r.stderr[-500:], file=sys.stderr)
    report = {"threads": args.threads, "update": update, "command": " ".join(sys.argv),
              "note": "steps/s, best window of each configuration; 'cpu' divides by the "
                      "process's CPU time (robust on a shared machine), 'wall' by wall time"}
    for clock in ("cpu", "wall"):
        rows = []
        for net in ("mlp", "lenet"):
            t = meas[clock][f"{net}/torch"]
            imp = meas[clock][f"{net}/imperative"]
            hyb = meas[clock][f"{net}/hybrid"]
            row = {"net": net, "torch": round(t, 1), "neogluon_imperative": round(imp, 1),
                   "neogluon_hybrid": round(hyb, 1),
                   "imperative_vs_torch": round(imp / t, 3), "hybrid_vs_torch": round(hyb / t, 3)}
            if mx_meas is not None:
                mi = mx_meas[clock][f"{net}/imperative"]
                mh = mx_meas[clock][f"{net}/hybrid"]
                row.update(mxnet_imperative=round(mi, 1), mxnet_hybrid=round(mh, 1),
                           hybrid_vs_mxnet_hybrid=round(hyb / mh, 3),
                           imperative_vs_mxnet_imperative=round(imp / mi, 3))
            rows.append(row)
        report[clock] = rows
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
