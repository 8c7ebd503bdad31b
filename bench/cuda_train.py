"""Training steps on a CUDA GPU: neogluon (imperative, hybridized, CUDA graphs, compiled,
mixed precision) against plain torch eager, torch.compile and torch.autocast, in one process
(issue 17's CUDA figures; issue 32's AMP table).

Usage: python bench/cuda_train.py [--models lenet,resnet18,resnet18_224] [--steps 20]
           [--rounds 5] [--configs ...] [--json out.json] [--device cuda]
       python bench/cuda_train.py --preset issue32      (issue 32's table: ResNet-50 at batch
           32 and 128 and the LSTM language model, float32 and AMP float16 rows)
       python bench/cuda_train.py --device cpu --steps 1 --rounds 1 --models lenet \
           --configs "neogluon amp fp16,torch autocast fp16"      (a CPU smoke run)

Every configuration of a model is built and warmed up first (its compile time and first
steps are recorded), then the configurations are timed in interleaved rounds of --steps
steps each (wall clock, the device synchronized at the start and end of a round); the best
round counts. Models: LeNet (batch 64, 28x28), ResNet-18 v1 (model zoo, 10 classes) on
64x64 inputs at batch 16 (the CPU benchmark's shapes) and on 224x224 at batch 64, ResNet-50
v1 (model zoo, 1000 classes) on 224x224 at batch 32 (resnet50_224) and 128
(resnet50_224_b128), and lstm_lm: Embedding 10k -> 2-layer LSTM 650 -> Dense 10k over
sequences of 35 at batch 32 (torch: nn.Embedding, nn.LSTM, nn.Linear). SGD lr 0.01 momentum
0.9, softmax cross-entropy, fixed random data.

Configurations:
  neogluon imperative     no hybridize
  neogluon hybridize      net.hybridize() with no flags (automatic CUDA graphs on a GPU)
  neogluon hybridize nograph  net.hybridize(cuda_graphs=False): the same without graphs
  neogluon replay         hybridize(static_alloc, static_shape, cuda_graphs=False)
  neogluon cudagraph      hybridize(static_alloc, static_shape): CUDA graphs of the replay
  neogluon compiled       ... compile='sync', NEOGLUON_CUDA_GRAPHS=0
  neogluon compiled+graph ... compile='sync' with CUDA graphs
  neogluon amp fp16       amp.init('float16') (--amp-dtype), amp.init_trainer, amp.scale_loss;
                          imperative
  neogluon amp fp16 hybridize   ... with net.hybridize()
  neogluon amp fp16 static      ... with hybridize(static_alloc, static_shape),
                          NEOGLUON_CUDA_GRAPHS=0
  torch eager             the same network in torch.nn, torch.optim.SGD
  torch compile           torch.compile(model)
  torch reduce-overhead   torch.compile(model, mode='reduce-overhead') (CUDA graphs)
  torch autocast fp16     torch.autocast(dtype=float16) with a torch.amp.GradScaler

amp.init rewrites neogluon's operators for the whole process (as in MXNet), so this script
turns AMP on before an AMP configuration's steps and off before the others' (outside the
timed region). Each row gets ``vs_torch_eager`` (torch eager's time / this one's: above 1 is
faster) and each AMP row ``vs_torch_autocast`` (the same against torch autocast fp16).
Without --configs the original eight configurations run (tools/gpu_check.sh's default).
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
          "resnet18_224": (64, (3, 224, 224)), "resnet50_224": (32, (3, 224, 224)),
          "resnet50_224_b128": (128, (3, 224, 224)),
          "lstm_lm": (32, (35,))}  # lstm_lm: batch 32 of 35 tokens (fed time-major)
CLASSES = {"resnet50": 1000, "lstm": 10000}
VOCAB, HIDDEN = 10000, 650
CONFIGS = ["neogluon imperative", "neogluon replay", "neogluon cudagraph", "neogluon compiled",
           "neogluon compiled+graph", "torch eager", "torch compile", "torch reduce-overhead"]
AMP_CONFIGS = ["neogluon amp fp16", "neogluon amp fp16 hybridize", "neogluon amp fp16 static"]
ALL_CONFIGS = CONFIGS[:1] + ["neogluon hybridize", "neogluon hybridize nograph"] + \
    CONFIGS[1:] + AMP_CONFIGS + ["torch autocast fp16"]
PRESETS = {"issue32": ("resnet18,resnet50_224,resnet50_224_b128,lstm_lm",
                       ["torch eager", "neogluon imperative", "neogluon hybridize",
                        "neogluon hybridize nograph", "neogluon cudagraph",
                        "torch autocast fp16"] + AMP_CONFIGS)}
AMP_DTYPE = {"value": "float16"}  # --amp-dtype
WARMUP = {"steps": 9}  # --warmup: steps after the first before timing (time_to_10_s with 9)


def _base(name):
    return name.split("_")[0]


def _classes(name):
    return CLASSES.get(_base(name), 10)


def _set_amp(dtype):
    """AMP on with ``dtype`` (None: off) for the neogluon steps that follow."""
    from neogluon import amp
    st = amp._state
    want = None if dtype is None else amp._LOW[amp._norm_target(dtype)]
    if st.initialized and st.target is want:
        return
    if st.initialized:
        amp._uninstall()
    if want is not None:
        amp.init(dtype)


def _gluon_model(mx, name):
    base = _base(name)
    if base == "resnet50":
        return mx.gluon.model_zoo.vision.resnet50_v1(classes=CLASSES["resnet50"])
    if base != "lstm":
        return _gluon_net(mx, base)
    nn, rnn = mx.gluon.nn, mx.gluon.rnn

    class LM(mx.gluon.HybridBlock):
        def __init__(self, **kw):
            super().__init__(**kw)
            with self.name_scope():
                self.embed = nn.Embedding(VOCAB, HIDDEN)
                self.rnn = rnn.LSTM(HIDDEN, num_layers=2, input_size=HIDDEN)
                self.out = nn.Dense(VOCAB, flatten=False, in_units=HIDDEN)

        def hybrid_forward(self, F, x):  # x: (T, N) token ids
            return self.out(self.rnn(self.embed(x)))
    return LM()


def _torch_model(name):
    base = _base(name)
    if base == "resnet50":
        return _torch_resnet50(CLASSES["resnet50"])
    if base != "lstm":
        return _torch_net(base)
    import torch
    from torch import nn as tnn

    class LM(tnn.Module):
        def __init__(self):
            super().__init__()
            self.embed = tnn.Embedding(VOCAB, HIDDEN)
            self.rnn = tnn.LSTM(HIDDEN, HIDDEN, num_layers=2)
            self.out = tnn.Linear(HIDDEN, VOCAB)

        def forward(self, x):  # (T, N) -> (T, N, VOCAB)
            return self.out(self.rnn(self.embed(x))[0])
    del torch
    return LM()


def _torch_resnet50(classes):
    """Gluon's resnet50_v1 in torch.nn: BottleneckV1 (stride on the first 1x1 convolution,
    the 1x1 convolutions with a bias as Gluon's), layers 3-4-6-3."""
    from torch import nn as tnn

    class Bottleneck(tnn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            mid = cout // 4
            self.body = tnn.Sequential(
                tnn.Conv2d(cin, mid, 1, stride), tnn.BatchNorm2d(mid), tnn.ReLU(),
                tnn.Conv2d(mid, mid, 3, 1, 1, bias=False), tnn.BatchNorm2d(mid), tnn.ReLU(),
                tnn.Conv2d(mid, cout, 1), tnn.BatchNorm2d(cout))
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
    for n, cout, stride in ((3, 256, 1), (4, 512, 2), (6, 1024, 2), (3, 2048, 2)):
        for i in range(n):
            layers.append(Bottleneck(cin, cout, stride if i == 0 else 1))
            cin = cout
    layers += [tnn.AdaptiveAvgPool2d(1), tnn.Flatten(), tnn.Linear(2048, classes)]
    return tnn.Sequential(*layers)


def _sync(dev):
    import torch
    if dev.startswith("cuda"):
        torch.cuda.synchronize()


def gluon_step(name, config, dev):
    import numpy as np
    import neogluon as mx
    ctx = mx.gpu(0) if dev.startswith("cuda") else mx.cpu()
    batch, shape = SHAPES[name]
    amp_dtype = AMP_DTYPE["value"] if config.startswith("neogluon amp") else None
    _set_amp(amp_dtype)  # before the network is built, as amp.init asks
    mx.random.seed(0)
    net = _gluon_model(mx, name)
    net.initialize(mx.init.Xavier(), ctx=ctx)
    # CUDA graphs are chosen per block with hybridize's cuda_graphs keyword (not the
    # environment, which every config built later would also see)
    if config in ("neogluon hybridize", "neogluon amp fp16 hybridize"):
        net.hybridize()          # plain: automatic CUDA graphs on a GPU
    elif config == "neogluon hybridize nograph":
        net.hybridize(cuda_graphs=False)
    elif config not in ("neogluon imperative", "neogluon amp fp16"):
        graphs = config in ("neogluon cudagraph", "neogluon compiled+graph")
        net.hybridize(static_alloc=True, static_shape=True, cuda_graphs=graphs,
                      compile="sync" if "compiled" in config else "off")
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01,
                                                             "momentum": 0.9})
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    classes = _classes(name)
    if _base(name) == "lstm":
        x = mx.nd.array(np.random.randint(0, VOCAB, size=shape + (batch,)), ctx=ctx)
        y = mx.nd.array(np.random.randint(0, VOCAB, size=shape + (batch,)), ctx=ctx)
    else:
        x = mx.nd.random.uniform(shape=(batch,) + shape, ctx=ctx)
        y = mx.nd.array(np.random.randint(0, classes, size=(batch,)), ctx=ctx)
    if amp_dtype is not None:
        mx.amp.init_trainer(trainer)

        def step():
            with mx.autograd.record():
                loss = loss_fn(net(x), y)
                with mx.amp.scale_loss(loss, trainer) as scaled:
                    mx.autograd.backward(scaled)
            trainer.step(batch)

        box = {}

        def forward():  # the scaled loss is recorded too: backward starts from it
            with mx.autograd.record():
                loss = loss_fn(net(x), y)
                with mx.amp.scale_loss(loss, trainer) as scaled:
                    box["scaled"] = scaled

        def backward():
            mx.autograd.backward(box["scaled"])
        step.phases = (forward, backward, lambda: trainer.step(batch))
        step.amp = amp_dtype
        return step, _gluon_info(net)

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
    step.amp = None
    return step, _gluon_info(net)


def _gluon_info(net):
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
    return info


def torch_step(name, config, dev):
    import torch
    torch.manual_seed(0)
    batch, shape = SHAPES[name]
    model = _torch_model(name).to(dev)
    if config == "torch compile":
        fwd = torch.compile(model)
    elif config == "torch reduce-overhead":
        fwd = torch.compile(model, mode="reduce-overhead")
    else:
        fwd = model
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    lossf = torch.nn.CrossEntropyLoss()
    if _base(name) == "lstm":
        x = torch.randint(0, VOCAB, shape + (batch,), device=dev)
        y = torch.randint(0, VOCAB, shape + (batch,), device=dev).reshape(-1)
    else:
        x = torch.rand((batch,) + shape, device=dev)
        y = torch.randint(0, _classes(name), (batch,), device=dev)
    box = {}
    if config == "torch autocast fp16":
        kind = "cuda" if dev.startswith("cuda") else "cpu"
        low = getattr(torch, AMP_DTYPE["value"])
        scaler = torch.amp.GradScaler(kind)

        def forward():
            opt.zero_grad()
            with torch.autocast(kind, dtype=low):
                out = fwd(x)
                box["loss"] = lossf(out.reshape(-1, out.shape[-1]), y)

        def backward():
            scaler.scale(box["loss"]).backward()

        def update():
            scaler.step(opt)
            scaler.update()

        def step():
            forward()
            backward()
            update()
        step.phases = (forward, backward, update)
        step.amp = None
        return step, dict

    def step():
        opt.zero_grad()
        out = fwd(x)
        loss = lossf(out.reshape(-1, out.shape[-1]), y)
        loss.backward()
        opt.step()

    def forward():
        opt.zero_grad()
        out = fwd(x)
        box["loss"] = lossf(out.reshape(-1, out.shape[-1]), y)
    step.phases = (forward, lambda: box["loss"].backward(), opt.step)
    step.amp = None
    return step, dict


def run_model(name, configs, steps, rounds, dev):
    rows = {}
    steps_of = {}
    for config in configs:
        make = torch_step if config.startswith("torch") else gluon_step
        t0 = time.perf_counter()
        try:
            step, info = make(name, config, dev)
            if not config.startswith("torch"):
                _set_amp(step.amp)
            step()
            _sync(dev)
            first = time.perf_counter() - t0
            for _ in range(WARMUP["steps"]):
                step()
            _sync(dev)
            ten = time.perf_counter() - t0
        except Exception as err:  # noqa: BLE001 - report and go on with the others
            rows[config] = {"error": f"{type(err).__name__}: {str(err)[:400]}"}
            print(name, config, rows[config], file=sys.stderr, flush=True)
            continue
        rows[config] = {"first_step_s": round(first, 3),
                        f"time_to_{1 + WARMUP['steps']}_s": round(ten, 3),
                        **info()}
        steps_of[config] = step
        print(name, config, rows[config], file=sys.stderr, flush=True)
    best = {c: float("inf") for c in steps_of}
    for _ in range(rounds):
        for config, step in steps_of.items():
            if not config.startswith("torch"):
                _set_amp(step.amp)  # outside the timed region
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
    """Each timed configuration's speed as a multiple of torch eager's (same run), and each
    AMP configuration's as a multiple of torch autocast's."""
    base = rows.get("torch eager", {}).get("ms_per_step")
    auto = rows.get("torch autocast fp16", {}).get("ms_per_step")
    for config, row in rows.items():
        if base and row.get("ms_per_step"):
            row["vs_torch_eager"] = round(base / row["ms_per_step"], 2)
        if auto and row.get("ms_per_step") and config.startswith("neogluon amp"):
            row["vs_torch_autocast"] = round(auto / row["ms_per_step"], 2)


def _table(report):
    """The rows as text: model, configuration, ms/step, vs torch eager, vs torch autocast."""
    lines = [f"{'model':<18} {'configuration':<28} {'ms/step':>9} {'vs eager':>9} "
             f"{'vs autocast':>11}"]
    for model, rows in report["results"].items():
        for config, row in rows.items():
            ms = row.get("ms_per_step")
            lines.append(f"{model:<18} {config:<28} "
                         f"{(f'{ms:.2f}' if ms else row.get('error', '-')[:40]):>9} "
                         f"{row.get('vs_torch_eager', ''):>9} "
                         f"{row.get('vs_torch_autocast', ''):>11}")
    return "\n".join(lines)


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
                       str(args.rounds), "--device", args.device, "--amp-dtype",
                       args.amp_dtype, "--warmup", str(args.warmup), "--json", tmp.name]
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
    ap.add_argument("--preset", default="", choices=["", *PRESETS],
                    help="issue32: ResNet-50 (batch 32, 128) and lstm_lm, float32 and AMP rows "
                    "(--models/--configs given as well override its lists)")
    ap.add_argument("--amp-dtype", default="float16", choices=["float16", "bfloat16"],
                    help="the low type of the AMP configurations (their names say fp16)")
    ap.add_argument("--warmup", type=int, default=9,
                    help="untimed steps after the first (time_to_10_s counts 1 + 9)")
    args = ap.parse_args()
    AMP_DTYPE["value"] = args.amp_dtype
    WARMUP["steps"] = max(0, args.warmup)
    if args.preset:
        models, pconfigs = PRESETS[args.preset]
        if "--models" not in sys.argv:
            args.models = models
        if not args.configs:
            args.configs = ",".join(pconfigs)
    wanted = args.configs.split(",") if args.configs else []
    unknown = [c for c in wanted if c not in ALL_CONFIGS]
    if unknown:
        ap.error(f"unknown configurations {unknown}; known: {ALL_CONFIGS}")
    bad = [m for m in args.models.split(",") if m not in SHAPES]
    if bad:
        ap.error(f"unknown models {bad}; known: {sorted(SHAPES)}")
    configs = [c for c in (ALL_CONFIGS if wanted else CONFIGS) if not wanted or c in wanted]
    import torch
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
    print(_table(report), flush=True)


if __name__ == "__main__":
    main()
