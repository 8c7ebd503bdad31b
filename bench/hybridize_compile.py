"""hybridize() with torch.compile: training steps/s and start-up cost (issue 17).

Usage: python bench/hybridize_compile.py [--models lenet,resnet18,mlp] [--threads 1]
           [--seconds 2] [--rounds 3] [--steps 100] [--skip-cold] [--configs ...] [--repeat K]
           [--json out.json]
       python bench/hybridize_compile.py --inprocess --models lenet,mlp --steps 30 --rounds 5

Every configuration runs in its own process (fresh interpreter, so no in-process compile
cache is shared), one after the other:

  neogluon imperative   Gluon net, no hybridize
  neogluon replay       hybridize(static_alloc=True, static_shape=True, compile='off')
  neogluon sync         ... compile='sync' (compile on the 2nd call, blocking)
  neogluon auto         ... compile='auto' (replay; compile in a background thread after 3
                        replays; switch over when ready)
  torch eager           the same net written in torch.nn, torch.optim.SGD
  torch compile         torch.compile(model) (Inductor, default options)
  mxnet hybrid          MXNet 1.9.1 (/tmp/mxref/bin/python) hybridize(static_alloc=True,
                        static_shape=True), when present

Each process: build, initialize, time the first step and the time to the --steps-th step
(from the first step's start; this includes deferred initialization, capture and any
synchronous compile), then steady state: best steps/s over --rounds windows of
--seconds / --rounds each (auto mode first waits, up to 10 minutes, for its compile).
Compiling configurations run twice: 'cold' with an empty TORCHINDUCTOR_CACHE_DIR and 'warm'
with the directory the cold run filled (Inductor's FX-graph and AOTAutograd caches).
Training: softmax cross-entropy, SGD lr 0.01 momentum 0.9 (gluon.Trainer / torch.optim.SGD),
fixed random data. LeNet and MLP batch 64 (28x28 / 784 inputs); ResNet-18 v1 (the model
zoo's resnet18_v1, 10 classes) on 64x64 inputs, batch 16.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MXREF = "/tmp/mxref/bin/python"

SHAPES = {"lenet": (64, (1, 28, 28)), "mlp": (64, (784,)), "resnet18": (16, (3, 64, 64))}


# ------------------------------------------------------------------ workers
def _gluon_net(mx, name):
    from_nn = mx.gluon.nn
    if name == "resnet18":
        return mx.gluon.model_zoo.vision.resnet18_v1(classes=10)
    net = from_nn.HybridSequential()
    with net.name_scope():
        if name == "lenet":
            net.add(from_nn.Conv2D(6, 5, activation="relu"), from_nn.MaxPool2D(2, 2),
                    from_nn.Conv2D(16, 5, activation="relu"), from_nn.MaxPool2D(2, 2),
                    from_nn.Dense(120, activation="relu"), from_nn.Dense(84, activation="relu"),
                    from_nn.Dense(10))
        else:
            net.add(from_nn.Dense(256, activation="relu"), from_nn.Dense(256, activation="relu"),
                    from_nn.Dense(10))
    return net


def _torch_net(name):
    from torch import nn as tnn
    if name == "lenet":
        return tnn.Sequential(tnn.Conv2d(1, 6, 5), tnn.ReLU(), tnn.MaxPool2d(2, 2),
                              tnn.Conv2d(6, 16, 5), tnn.ReLU(), tnn.MaxPool2d(2, 2),
                              tnn.Flatten(), tnn.Linear(256, 120), tnn.ReLU(),
                              tnn.Linear(120, 84), tnn.ReLU(), tnn.Linear(84, 10))
    if name == "mlp":
        return tnn.Sequential(tnn.Linear(784, 256), tnn.ReLU(), tnn.Linear(256, 256),
                              tnn.ReLU(), tnn.Linear(256, 10))

    class Basic(tnn.Module):           # Gluon's BasicBlockV1
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.body = tnn.Sequential(
                tnn.Conv2d(cin, cout, 3, stride, 1, bias=False), tnn.BatchNorm2d(cout),
                tnn.ReLU(), tnn.Conv2d(cout, cout, 3, 1, 1, bias=False), tnn.BatchNorm2d(cout))
            self.down = None
            if stride != 1 or cin != cout:
                self.down = tnn.Sequential(tnn.Conv2d(cin, cout, 1, stride, bias=False),
                                           tnn.BatchNorm2d(cout))

        def forward(self, x):
            r = x if self.down is None else self.down(x)
            return (self.body(x) + r).relu()

    layers = [tnn.Conv2d(3, 64, 7, 2, 3, bias=False), tnn.BatchNorm2d(64), tnn.ReLU(),
              tnn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [Basic(cin, cout, stride), Basic(cout, cout, 1)]
        cin = cout
    layers += [tnn.AdaptiveAvgPool2d(1), tnn.Flatten(), tnn.Linear(512, 10)]
    return tnn.Sequential(*layers)


def _measure(step, nsteps, seconds, rounds, before_steady=None, sync=lambda: None):
    """Timings of ``step``; ``sync()`` waits for work still queued (MXNet's engine runs a
    step's backward and update after ``step`` returns) before each reading of the clock."""
    t0 = time.perf_counter()
    c0 = time.process_time()
    step()
    sync()
    first = time.perf_counter() - t0
    for _ in range(nsteps - 1):
        step()
    sync()
    t_n = time.perf_counter() - t0
    c_n = time.process_time() - c0
    if before_steady is not None:
        before_steady()
    best = best_cpu = 0.0
    for _ in range(rounds):
        n = 0
        w0 = time.perf_counter()
        c0 = time.process_time()
        while True:
            step()
            n += 1
            if n % 3 == 0 and time.perf_counter() - w0 > seconds / rounds:
                break
        sync()
        best = max(best, n / (time.perf_counter() - w0))
        best_cpu = max(best_cpu, n / max(time.process_time() - c0, 1e-9))
    return {"first_step_s": round(first, 3), "time_to_n_s": round(t_n, 3),
            "time_to_n_cpu_s": round(c_n, 3),
            "steady_steps_per_s": round(best, 2), "steady_steps_per_cpu_s": round(best_cpu, 2)}


def gluon_step(lib, mode, name):
    """A Gluon training step for ``name`` (MXNet or neogluon, imperative or hybridized in
    ``mode``); returns ``(step, wait_ready, net, sync)``. ``step`` waits for the loss only, so
    MXNet's engine may still run that step's backward and update when it returns (and overlap
    them with the next step): time windows of steps end with ``sync()`` (``nd.waitall``)."""
    import numpy as np
    if lib == "mxnet":
        import mxnet as mx
    else:
        import torch
        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
        import neogluon as mx
    from_ag, gluon, nd = mx.autograd, mx.gluon, mx.nd
    mx.random.seed(0)
    np.random.seed(0)
    batch, shape = SHAPES[name]
    net = _gluon_net(mx, name)
    net.initialize(mx.init.Xavier())
    if mode != "imperative":
        kw = {} if lib == "mxnet" else {"compile": {"replay": "off"}.get(mode, mode)}
        net.hybridize(static_alloc=True, static_shape=True, **kw)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01,
                                                          "momentum": 0.9})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    x = nd.random.uniform(shape=(batch,) + shape)
    y = nd.array(np.random.randint(0, 10, size=(batch,)))

    def step():
        with from_ag.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(batch)
        loss.wait_to_read()

    def wait_ready():
        if mode != "auto":
            return
        deadline = time.time() + 600
        while time.time() < deadline:
            states = [v.state for g in net._graphs.values() if "_ng_compile" in g.__dict__
                      for v in g._ng_compile.variants.values()]
            if "ready" in states or "failed" in states or net._compile_failed:
                return
            step()
    return step, wait_ready, net, nd.waitall


def worker_gluon(lib, mode, name, nsteps, seconds, rounds):
    step, wait_ready, net, sync = gluon_step(lib, mode, name)
    res = _measure(step, nsteps, seconds, rounds, wait_ready, sync)
    if lib != "mxnet" and mode in ("sync", "auto"):
        res["compile_failed"] = net._compile_failed
    return res


def torch_step(mode, name):
    """The same training step in plain torch (``mode``: eager or compile)."""
    import torch
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    torch.manual_seed(0)
    batch, shape = SHAPES[name]
    model = _torch_net(name)
    fwd = torch.compile(model) if mode == "compile" else model
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    lossf = torch.nn.CrossEntropyLoss()
    x = torch.rand((batch,) + shape)
    y = torch.randint(0, 10, (batch,))

    def step():
        opt.zero_grad()
        loss = lossf(fwd(x), y)
        loss.backward()
        opt.step()
    return step


def worker_torch(mode, name, nsteps, seconds, rounds):
    return _measure(torch_step(mode, name), nsteps, seconds, rounds)


def inprocess(name, steps_per_round, rounds):
    """Steady-state CPU ms per step of the neogluon and torch configurations, interleaved in
    one process (compiled ones compiled first): ratios robust to a busy machine."""
    steps = {}
    for mode, label in (("imperative", "neogluon imperative"), ("replay", "neogluon replay"),
                        ("sync", "neogluon compiled")):
        steps[label] = gluon_step("neogluon", mode, name)[0]
    for mode in ("eager", "compile"):
        steps[f"torch {mode}"] = torch_step(mode, name)
    for step in steps.values():
        for _ in range(3):
            step()
    best = {k: float("inf") for k in steps}
    for _ in range(rounds):
        for k, step in steps.items():
            c0 = time.process_time()
            for _ in range(steps_per_round):
                step()
            best[k] = min(best[k], (time.process_time() - c0) * 1000 / steps_per_round)
    return {k: round(v, 2) for k, v in best.items()}


# ------------------------------------------------------------------ driver
def run_worker(python, lib, mode, name, args, cache_dir):
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads),
               MXNET_CPU_WORKER_NTHREADS=str(args.threads), PYTHONPATH=ROOT)
    if cache_dir is not None:
        env["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
    cmd = [python, os.path.abspath(__file__), "--worker", lib, mode, name, str(args.steps),
           str(args.seconds), str(args.rounds)]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, check=False,
                       timeout=1800)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        return {"error": (r.stderr or r.stdout)[-600:]}
    out = json.loads(r.stdout.strip().splitlines()[-1])
    out["process_wall_s"] = round(wall, 2)
    return out


def _keep_best(rows, key, res):
    """Record ``res`` under ``key``; with --repeat, keep the run with the best steady
    steps/s and list every run's steady figure under ``steady_runs``."""
    old = rows.get(key)
    runs = (old or {}).get("steady_runs", []) + [res.get("steady_steps_per_s")]
    if old is None or (res.get("steady_steps_per_s") or 0) > (old.get("steady_steps_per_s")
                                                              or 0):
        rows[key] = dict(res)
    rows[key]["steady_runs"] = runs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="lenet,resnet18,mlp")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--skip-cold", action="store_true")
    ap.add_argument("--configs", default="", help="comma list to restrict, e.g. "
                    "neogluon/sync,torch/compile")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run the configurations this many times, alternating (A B A B ...), "
                    "and keep each one's best steady reading (this host's speed drifts "
                    "between processes by more than the differences measured)")
    ap.add_argument("--json", default="")
    ap.add_argument("--inprocess", action="store_true",
                    help="instead: CPU ms/step of the neogluon and torch configurations "
                    "interleaved in one process (best of --rounds rounds of --steps steps)")
    ap.add_argument("--worker", nargs=6, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.inprocess:
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        out = {name: inprocess(name, args.steps, args.rounds)
               for name in args.models.split(",")}
        print(json.dumps({"command": " ".join(["python"] + sys.argv),
                          "cpu_ms_per_step": out}, indent=1))
        return
    if args.worker:
        lib, mode, name, n, s, r = args.worker
        if lib == "torch":
            res = worker_torch(mode, name, int(n), float(s), int(r))
        else:
            res = worker_gluon(lib, mode, name, int(n), float(s), int(r))
        print(json.dumps(res))
        return
    configs = [("neogluon", "imperative", False), ("neogluon", "replay", False),
               ("neogluon", "sync", True), ("neogluon", "auto", True),
               ("torch", "eager", False), ("torch", "compile", True)]
    if os.path.exists(MXREF):
        configs.append(("mxnet", "hybrid", False))
    if args.configs:
        keep = set(args.configs.split(","))
        configs = [c for c in configs if f"{c[0]}/{c[1]}" in keep]
    report = {"command": " ".join(["python"] + sys.argv), "threads": args.threads,
              "steps": args.steps, "results": {}}
    for name in args.models.split(","):
        rows = report["results"][name] = {}
        for _ in range(max(1, args.repeat)):
            for lib, mode, compiles in configs:
                python = MXREF if lib == "mxnet" else sys.executable
                cache = tempfile.mkdtemp(prefix="ng-inductor-")
                try:
                    runs = ["warm"] if not compiles else (
                        ["warm"] if args.skip_cold else ["cold", "warm"])
                    for which in runs:
                        key = f"{lib}/{mode}" + (f" ({which} cache)" if compiles else "")
                        res = run_worker(python, lib, mode, name, args,
                                         None if args.skip_cold else cache)
                        if compiles and args.skip_cold:
                            key = f"{lib}/{mode} (cache as found)"
                        _keep_best(rows, key, res)
                        print(name, key, json.dumps(res), file=sys.stderr, flush=True)
                finally:
                    shutil.rmtree(cache, ignore_errors=True)
    emit(report, args.json)


def emit(report, path):
    """Print the report as JSON, and write it to ``path`` when one is given."""
    print(json.dumps(report, indent=1))
    if path:
        with open(path, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
