"""Training steps on a CUDA GPU: neogluon (imperative, hybridized, CUDA graphs, compiled)
against plain torch eager and torch.compile, in one process (issue 17's CUDA figures).

Usage: python bench/cuda_train.py [--models lenet,resnet18,resnet18_224] [--steps 20]
           [--rounds 5] [--configs ...] [--json out.json] [--device cuda]

Every configuration of a model is built and warmed up first (its compile time and first
steps are recorded), then the configurations are timed in interleaved rounds of --steps
steps each (wall clock, the device synchronized at the start and end of a round); the best
round counts. Models: LeNet (batch 64, 28x28), ResNet-18 v1 (model zoo, 10 classes) on
64x64 inputs at batch 16 (the CPU benchmark's shapes) and on 224x224 at batch 64. SGD lr
0.01 momentum 0.9, softmax cross-entropy, fixed random data.

Configurations:
  neogluon imperative     no hybridize
  neogluon replay         hybridize(static_alloc, static_shape), NEOGLUON_CUDA_GRAPHS=0
  neogluon cudagraph      hybridize(static_alloc, static_shape): CUDA graphs of the replay
  neogluon compiled       ... compile='sync', NEOGLUON_CUDA_GRAPHS=0
  neogluon compiled+graph ... compile='sync' with CUDA graphs
  torch eager             the same network in torch.nn, torch.optim.SGD
  torch compile           torch.compile(model)
  torch reduce-overhead   torch.compile(model, mode='reduce-overhead') (CUDA graphs)
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

from hybridize_compile import _gluon_net, _torch_net  # noqa: E402

SHAPES = {"lenet": (64, (1, 28, 28)), "resnet18": (16, (3, 64, 64)),
          "resnet18_224": (64, (3, 224, 224))}
CONFIGS = ["neogluon imperative", "neogluon replay", "neogluon cudagraph", "neogluon compiled",
           "neogluon compiled+graph", "torch eager", "torch compile", "torch reduce-overhead"]


def _sync(dev):
    import torch
    if dev.startswith("cuda"):
        torch.cuda.synchronize()


def gluon_step(name, config, dev):
    import numpy as np
    import neogluon as mx
    ctx = mx.gpu(0) if dev.startswith("cuda") else mx.cpu()
    batch, shape = SHAPES[name]
    mx.random.seed(0)
    net = _gluon_net(mx, name.split("_")[0])
    net.initialize(mx.init.Xavier(), ctx=ctx)
    if config != "neogluon imperative":
        graphs = config in ("neogluon cudagraph", "neogluon compiled+graph")
        os.environ["NEOGLUON_CUDA_GRAPHS"] = "1" if graphs else "0"
        net.hybridize(static_alloc=True, static_shape=True,
                      compile="sync" if "compiled" in config else "off")
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01,
                                                             "momentum": 0.9})
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    x = mx.nd.random.uniform(shape=(batch,) + shape, ctx=ctx)
    y = mx.nd.array(np.random.randint(0, 10, size=(batch,)), ctx=ctx)

    def step():
        with mx.autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(batch)

    box = {}

    def forward():
        with mx.autograd.record():
            box["loss"] = loss_fn(net(x), y)
    # the same step in three parts, for bench/cuda_profile.py
    step.phases = (forward, lambda: box["loss"].backward(), lambda: trainer.step(batch))

    def info():
        out = {}
        if getattr(net, "_compile_failed", None):
            out["compile_failed"] = net._compile_failed
        if getattr(net, "_cudagraph_failed", None):
            out["cudagraph_failed"] = net._cudagraph_failed
        kinds = []
        for g in getattr(net, "_graphs", {}).values():
            gc = g.__dict__.get("_ng_compile")
            if gc is not None:
                kinds += [type(v.graphed).__name__ for v in gc.variants.values()]
        if kinds:
            out["graphed"] = kinds
        return out
    return step, info


def torch_step(name, config, dev):
    import torch
    torch.manual_seed(0)
    batch, shape = SHAPES[name]
    model = _torch_net(name.split("_")[0]).to(dev)
    if config == "torch compile":
        fwd = torch.compile(model)
    elif config == "torch reduce-overhead":
        fwd = torch.compile(model, mode="reduce-overhead")
    else:
        fwd = model
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    lossf = torch.nn.CrossEntropyLoss()
    x = torch.rand((batch,) + shape, device=dev)
    y = torch.randint(0, 10, (batch,), device=dev)

    def step():
        opt.zero_grad()
        loss = lossf(fwd(x), y)
        loss.backward()
        opt.step()

    box = {}

    def forward():
        opt.zero_grad()
        box["loss"] = lossf(fwd(x), y)
    step.phases = (forward, lambda: box["loss"].backward(), opt.step)
    return step, dict


def run_model(name, configs, steps, rounds, dev):
    rows = {}
    steps_of = {}
    for config in configs:
        make = torch_step if config.startswith("torch") else gluon_step
        t0 = time.perf_counter()
        try:
            step, info = make(name, config, dev)
            step()
            _sync(dev)
            first = time.perf_counter() - t0
            for _ in range(9):
                step()
            _sync(dev)
            ten = time.perf_counter() - t0
        except Exception as err:  # noqa: BLE001 - report and go on with the others
            rows[config] = {"error": f"{type(err).__name__}: {str(err)[:400]}"}
            print(name, config, rows[config], file=sys.stderr, flush=True)
            continue
        rows[config] = {"first_step_s": round(first, 3), "time_to_10_s": round(ten, 3),
                        **info()}
        steps_of[config] = step
        print(name, config, rows[config], file=sys.stderr, flush=True)
    best = {c: float("inf") for c in steps_of}
    for _ in range(rounds):
        for config, step in steps_of.items():
            _sync(dev)
            t0 = time.perf_counter()
            for _ in range(steps):
                step()
            _sync(dev)
            best[config] = min(best[config], (time.perf_counter() - t0) * 1000 / steps)
    for config, ms in best.items():
        rows[config]["ms_per_step"] = round(ms, 3)
    _add_ratios(rows)
    return rows


def _add_ratios(rows):
    """Each timed configuration's speed as a multiple of torch eager's (same run)."""
    base = rows.get("torch eager", {}).get("ms_per_step")
    for row in rows.values():
        if base and row.get("ms_per_step"):
            row["vs_torch_eager"] = round(base / row["ms_per_step"], 2)


def isolated(args, configs):
    """Each configuration in its own process (a crash costs only its own figures; a crashed
    one is rerun with CUDA_LAUNCH_BLOCKING=1 for a traceback that names the failing call)."""
    import subprocess
    import tempfile
    out = {}
    for name in args.models.split(","):
        rows = out[name] = {}
        for config in configs:
            with tempfile.NamedTemporaryFile(suffix=".json") as tmp:
                cmd = [sys.executable, os.path.abspath(__file__), "--models", name,
                       "--configs", config, "--steps", str(args.steps), "--rounds",
                       str(args.rounds), "--device", args.device, "--json", tmp.name]
                r = subprocess.run(cmd, capture_output=True, text=True, check=False)
                try:
                    with open(tmp.name) as f:
                        rows[config] = json.load(f)["results"][name][config]
                except (OSError, ValueError, KeyError):
                    rows[config] = {"error": (r.stderr or r.stdout)[-1500:]}
                if r.returncode != 0:
                    env = dict(os.environ, CUDA_LAUNCH_BLOCKING="1")
                    r2 = subprocess.run(cmd[:-2] + ["--steps", "3", "--rounds", "1"],
                                        capture_output=True, text=True, check=False, env=env)
                    rows[config]["crash"] = (r.stderr or "")[-1200:]
                    rows[config]["crash_blocking"] = (r2.stderr or "")[-2500:]
            print(name, config, json.dumps(rows[config])[:300], file=sys.stderr, flush=True)
        _add_ratios(rows)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="lenet,resnet18,resnet18_224")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--configs", default="", help="comma list, e.g. 'torch eager,neogluon "
                    "cudagraph' (default: all)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--json", default="")
    ap.add_argument("--isolate", action="store_true",
                    help="each configuration in a process of its own, timed alone")
    args = ap.parse_args()
    import torch
    configs = [c for c in CONFIGS if not args.configs or c in args.configs.split(",")]
    report = {"command": " ".join(["python"] + sys.argv), "torch": torch.__version__,
              "device": (torch.cuda.get_device_name(0) if args.device.startswith("cuda")
                         else "cpu"), "results": {}}
    if args.isolate:
        report["results"] = isolated(args, configs)
        print(json.dumps(report, indent=1))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(report, f, indent=1)
        return
    for name in args.models.split(","):
        report["results"][name] = run_model(name, configs, args.steps, args.rounds,
                                            args.device)
        print(json.dumps({name: report["results"][name]}), flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(report, f, indent=1)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
