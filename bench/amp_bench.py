"""amp_bench: bfloat16 AMP against float32 training steps on the CPU (issue 18).

For LeNet (batch 64, 1x28x28) and ResNet-18 v1 (model zoo, 10 classes, batch 8, 3x112x112),
one training step = forward, softmax cross-entropy, backward (through ``amp.scale_loss`` under
AMP) and ``Trainer.step`` (SGD, momentum 0.9), hybridized. Each (framework, mode, model) runs
in its own process, because ``amp.init`` rewrites the operators for the whole process (as in
MXNet); the processes alternate round by round and each reports the median step time after
warm-up and its fastest step (the machine is shared: the fastest step is the one least
disturbed by other processes; the table gives the median over rounds of both). With
/tmp/mxref present, MXNet 1.9.1 runs the same program (it is written against the MXNet API)
for comparison.

Usage:
    python bench/amp_bench.py [--rounds 3] [--steps 10] [--threads 1]
                              [--models lenet resnet18]
                              [--no-mxnet] [--no-write]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "RESULTS.md")
MXREF = "/tmp/mxref/bin/python"
SHAPES = {"lenet": (64, (1, 28, 28)), "resnet18": (8, (3, 112, 112))}


def _lenet(mx):
    nn = mx.gluon.nn
    net = nn.HybridSequential()
    net.add(nn.Conv2D(20, 5, activation="relu"), nn.MaxPool2D(2, 2),
            nn.Conv2D(50, 5, activation="relu"), nn.MaxPool2D(2, 2),
            nn.Flatten(), nn.Dense(500, activation="relu"), nn.Dense(10))
    return net


def worker(framework, mode, model, steps, warmup):
    if framework == "mxnet":
        import mxnet as mx
        from mxnet.contrib import amp
    else:
        sys.path.insert(0, ROOT)
        import neogluon as mx
        from neogluon import amp
    import numpy as np
    if mode == "bf16":
        amp.init(target_dtype="bfloat16")
    if model == "lenet":
        net = _lenet(mx)
    else:
        net = mx.gluon.model_zoo.vision.resnet18_v1(classes=10)
    net.initialize(mx.init.Xavier())
    net.hybridize(static_alloc=True, static_shape=True)
    batch, shape = SHAPES[model]
    rng = np.random.RandomState(0)
    x = mx.nd.array(rng.uniform(-1, 1, size=(batch,) + shape).astype(np.float32))
    y = mx.nd.array(rng.randint(0, 10, size=(batch,)).astype(np.float32))
    lossfn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    tr = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01,
                                                        "momentum": 0.9})
    if mode == "bf16":
        amp.init_trainer(tr)
    times = []
    for i in range(warmup + steps):
        t0 = time.perf_counter()
        with mx.autograd.record():
            loss = lossfn(net(x), y)
            if mode == "bf16":
                with amp.scale_loss(loss, tr) as scaled:
                    mx.autograd.backward(scaled)
            else:
                loss.backward()
        tr.step(batch)
        loss.wait_to_read()
        mx.nd.waitall()
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    print(json.dumps({"median_ms": statistics.median(times) * 1e3,
                      "best_ms": min(times) * 1e3,
                      "loss": float(loss.mean().asscalar())}))


def run_one(framework, mode, model, steps, warmup, threads):
    exe = MXREF if framework == "mxnet" else sys.executable
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    out = subprocess.run([exe, os.path.abspath(__file__), "--worker", framework, mode, model,
                          "--steps", str(steps), "--warmup", str(warmup)],
                         capture_output=True, text=True, check=False, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"{framework} {mode} {model} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def cpu_flags():
    flags = set()
    model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                flags.update(line.split(":", 1)[1].split())
            elif line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
    keep = [f for f in ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile") if f in flags]
    return model, keep


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", nargs=3)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1,
                    help="OMP_NUM_THREADS of every worker (the CPUs are shared)")
    ap.add_argument("--models", nargs="+", default=["lenet", "resnet18"])
    ap.add_argument("--no-mxnet", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    if args.worker:
        worker(*args.worker, args.steps, args.warmup)
        return
    frameworks = ["neogluon"] + ([] if args.no_mxnet or not os.path.exists(MXREF)
                                 else ["mxnet"])
    res = {}
    for r in range(args.rounds):
        for model in args.models:
            for fw in frameworks:
                for mode in ("fp32", "bf16"):
                    out = run_one(fw, mode, model, args.steps, args.warmup, args.threads)
                    res.setdefault((model, fw, mode), []).append(out["median_ms"])
                    res.setdefault((model, fw, mode, "best"), []).append(out["best_ms"])
                    print(f"round {r} {model:9s} {fw:9s} {mode}: {out['median_ms']:8.1f} ms "
                          f"(best {out['best_ms']:.1f}, loss {out['loss']:.3f})", flush=True)
    model_name, flags = cpu_flags()
    lines = []
    for model in args.models:
        for fw in frameworks:
            f32 = statistics.median(res[(model, fw, "fp32")])
            b16 = statistics.median(res[(model, fw, "bf16")])
            f32b = statistics.median(res[(model, fw, "fp32", "best")])
            b16b = statistics.median(res[(model, fw, "bf16", "best")])
            lines.append(f"| {model} | {fw} | {f32:.1f} ({f32b:.1f}) | {b16:.1f} ({b16b:.1f}) "
                         f"| {f32 / b16:.2f}x ({f32b / b16b:.2f}x) |")
    table = "\n".join(["| model | framework | float32 ms/step (fastest) | bf16 AMP ms/step "
                       "(fastest) | speed-up (fastest) |",
                       "| --- | --- | ---: | ---: | ---: |"] + lines)
    print(table)
    try:
        load = os.getloadavg()
    except OSError:
        load = (float("nan"),) * 3
    print(f"CPU: {model_name}, {os.cpu_count()} cores, flags {flags}, load {load}")
    if not args.no_write:
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        cmd = "python bench/amp_bench.py " + " ".join(sys.argv[1:])
        with open(RESULTS, "a") as f:
            f.write(f"\n## bfloat16 AMP training on the CPU (issue 18)\n\nCommand: "
                    f"`{cmd.strip()}` -- {stamp}, {model_name}, {os.cpu_count()} cores, "
                    f"flags {' '.join(flags)}; load average {load[0]:.1f}; "
                    f"OMP_NUM_THREADS={args.threads}. Medians of "
                    f"{args.rounds} rounds of per-process medians over {args.steps} steps.\n\n"
                    f"{table}\n")


if __name__ == "__main__":
    main()
