"""aten calls per training step: neogluon (imperative / plain hybridize) vs torch eager (issue 32).

Usage: python bench/aten_counts.py [--models resnet18,lstm,bnmlp] [--rounds 10] [--no-time]
           [--json out.json]

For each model, one training step (forward under ``autograd.record``, softmax cross-entropy,
``backward``, ``Trainer.step``; SGD lr 0.01 momentum 0.9) runs under ``torch.profiler`` (CPU
activities) after 2 warm-up steps, and the aten ops it issued are counted three ways:

* ``top``: aten ops not nested inside another aten op (what the Python side called);
* ``all``: every aten op at every nesting level;
* ``leaf``: aten ops that call no other aten op (the kernels-equivalent: on a GPU each
  computing leaf is a kernel launch, views and empty allocations aside).

The same network in torch eager (``torch.nn`` + ``torch.optim.SGD(momentum=0.9, foreach=True)``
+ ``F.cross_entropy``, ``zero_grad(set_to_none=True)``) is counted the same way, and the ops
neogluon issues more often than torch are listed by name. Then the host time of a step is
taken for each configuration, best of ``--rounds`` rounds, configurations alternating within
one process (CPU timing on a shared machine: informative only, never a pass/fail check).

``counts(model, config)`` is the importable measurement that tests/test_aten_counts.py uses.
Run it with ``NEOGLUON_CONV_WGRAD=onednn`` for counts that do not depend on a measurement: by
default neogluon times a matrix-product alternative for small-image convolutions on the CPU
(ndarray/_conv_gemm.py, several aten calls per convolution) and keeps the faster.

``--small``: programs of many small nd operators (an LSTM cell unrolled step by step, an
elementwise loss) against the same torch ops: aten calls and host microseconds per operator.
"""
import argparse
import collections
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402
import torch  # noqa: E402

MODELS = ("resnet18", "lstm", "bnmlp")
CONFIGS = ("neogluon/imperative", "neogluon/hybridize", "torch/eager")
BATCH = 4
VOCAB, SEQ, HIDDEN, EMBED = 100, 10, 64, 32
MLP_IN, MLP_HID = 64, 128


# ------------------------------------------------------------------ networks
def _gluon_net(mx, model):
    nn, rnn = mx.gluon.nn, mx.gluon.rnn
    if model == "resnet18":
        return mx.gluon.model_zoo.vision.resnet18_v1(classes=10)
    if model == "lstm":
        class LM(mx.gluon.HybridBlock):
            def __init__(self, **kw):
                super().__init__(**kw)
                with self.name_scope():
                    self.embed = nn.Embedding(VOCAB, EMBED)
                    self.lstm = rnn.LSTM(HIDDEN, num_layers=2, layout="TNC", input_size=EMBED)
                    self.out = nn.Dense(VOCAB, flatten=False, in_units=HIDDEN)

            def hybrid_forward(self, F, x):
                h = self.lstm(self.embed(x))                     # (T, N, H)
                return self.out(h)                               # (T, N, V)
        return LM()
    net = nn.HybridSequential()
    with net.name_scope():
        for _ in range(2):
            net.add(nn.Dense(MLP_HID), nn.BatchNorm(), nn.Activation("relu"), nn.Dropout(0.5))
        net.add(nn.Dense(10))
    return net


def _torch_net(model):
    from torch import nn
    if model == "resnet18":
        sys.path.insert(0, HERE)
        import hybridize_compile as hc
        return hc._torch_net("resnet18")
    if model == "lstm":
        class LM(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(VOCAB, EMBED)
                self.lstm = nn.LSTM(EMBED, HIDDEN, num_layers=2)
                self.out = nn.Linear(HIDDEN, VOCAB)

            def forward(self, x):
                return self.out(self.lstm(self.embed(x))[0])
        return LM()
    layers, cin = [], MLP_IN
    for _ in range(2):
        layers += [nn.Linear(cin, MLP_HID), nn.BatchNorm1d(MLP_HID), nn.ReLU(), nn.Dropout(0.5)]
        cin = MLP_HID
    return nn.Sequential(*layers, nn.Linear(cin, 10))


def _data(model):
    rng = np.random.RandomState(0)
    if model == "resnet18":
        x = rng.uniform(size=(BATCH, 3, 32, 32)).astype("float32")
        y = rng.randint(0, 10, size=(BATCH,))
    elif model == "lstm":
        x = rng.randint(0, VOCAB, size=(SEQ, BATCH))
        y = rng.randint(0, VOCAB, size=(SEQ, BATCH))
    else:
        x = rng.uniform(size=(BATCH, MLP_IN)).astype("float32")
        y = rng.randint(0, 10, size=(BATCH,))
    return x, y


def neogluon_step(model, hybridize=False, device="cpu"):
    import neogluon as mx
    mx.random.seed(0)
    ctx = mx.gpu(0) if device == "cuda" else mx.cpu()
    net = _gluon_net(mx, model)
    net.initialize(mx.init.Xavier(), ctx=ctx)
    if hybridize:
        net.hybridize()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                               {"learning_rate": 0.01, "momentum": 0.9})
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    xn, yn = _data(model)
    x = mx.nd.array(xn, dtype=xn.dtype if xn.dtype.kind == "f" else "float32", ctx=ctx)
    y = mx.nd.array(yn, ctx=ctx)
    n = yn.size if model == "lstm" else BATCH

    def step():
        with mx.autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(n)
    return step


def torch_step(model, device="cpu"):
    import torch.nn.functional as F
    torch.manual_seed(0)
    net = _torch_net(model).to(device)
    net.train()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9, foreach=True)
    xn, yn = _data(model)
    x = torch.from_numpy(xn) if xn.dtype.kind == "f" else torch.from_numpy(xn).long()
    x, y = x.to(device), torch.from_numpy(yn).long().to(device)

    def step():
        opt.zero_grad(set_to_none=True)
        out = net(x)
        loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
        loss.backward()
        opt.step()
    return step


def make_step(model, config, device="cpu"):
    if config == "torch/eager":
        return torch_step(model, device)
    return neogluon_step(model, config == "neogluon/hybridize", device)


# ------------------------------------------------------------------ counting
def _profile_counts(step, cuda=False):
    """``{'top': Counter, 'all': Counter, 'leaf': Counter}`` of aten op names in one ``step()``,
    and with ``cuda`` also ``'kernels'``: the CUDA kernels it launched, by name."""
    from torch.profiler import ProfilerActivity, profile
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=acts) as prof:
        step()
        if cuda:
            torch.cuda.synchronize()
    top, every, leaf = collections.Counter(), collections.Counter(), collections.Counter()
    kernels = collections.Counter()
    for ev in prof.events():
        if cuda and ev.device_type == torch.autograd.DeviceType.CUDA:
            kernels[ev.name] += 1
            continue
        if not ev.name.startswith("aten::"):
            continue
        every[ev.name] += 1
        p = ev.cpu_parent
        while p is not None and not p.name.startswith("aten::"):
            p = p.cpu_parent
        if p is None:
            top[ev.name] += 1
        if not any(c.name.startswith("aten::") for c in _descendants(ev)):
            leaf[ev.name] += 1
    res = {"top": top, "all": every, "leaf": leaf}
    if cuda:
        res["kernels"] = kernels
    return res


def _descendants(ev):
    stack = list(ev.cpu_children)
    while stack:
        c = stack.pop()
        yield c
        stack.extend(c.cpu_children)


def counts(model, config, warmup=2, device="cpu"):
    """aten op counters of one training step of ``model`` in ``config`` after ``warmup`` steps
    (on ``device`` "cuda": also the CUDA kernels launched, ``'kernels'``)."""
    torch.set_num_threads(1)
    step = make_step(model, config, device)
    for _ in range(warmup):
        step()
    if device == "cuda":
        torch.cuda.synchronize()
    return _profile_counts(step, cuda=device == "cuda")


# ------------------------------------------------------------------ small-operator programs
SMALL_H, SMALL_N, SMALL_T = 32, 4, 10


def small_programs():
    """``{name: (neogluon_fn, torch_fn)}``: programs of many small operators, the same ops in
    the same order on both sides (forward only, outside autograd)."""
    import neogluon as mx
    nd = mx.nd
    rng = np.random.RandomState(0)
    H, N, T = SMALL_H, SMALL_N, SMALL_T
    arrs = {k: rng.randn(*s).astype("float32") * 0.1 for k, s in
            (("wx", (4 * H, H)), ("wh", (4 * H, H)), ("bx", (4 * H,)), ("bh", (4 * H,)),
             ("x", (T, N, H)), ("p", (64, 10)), ("l", (64, 10)))}
    a = {k: nd.array(v) for k, v in arrs.items()}
    t = {k: torch.from_numpy(v) for k, v in arrs.items()}
    sig = nd.sigmoid
    F = torch.nn.functional

    def lstm_nd():
        h = c = nd.zeros((N, H))
        for s in range(T):
            g = (nd.FullyConnected(a["x"][s], a["wx"], a["bx"], num_hidden=4 * H)
                 + nd.FullyConnected(h, a["wh"], a["bh"], num_hidden=4 * H))
            i, f, gg, o = nd.split(g, num_outputs=4, axis=1)
            c = sig(f) * c + sig(i) * nd.tanh(gg)
            h = sig(o) * nd.tanh(c)
        return h

    def lstm_torch():
        h = c = torch.zeros((N, H))
        for s in range(T):
            g = F.linear(t["x"][s], t["wx"], t["bx"]) + F.linear(h, t["wh"], t["bh"])
            i, f, gg, o = torch.split(g, H, 1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(gg)
            h = torch.sigmoid(o) * torch.tanh(c)
        return h

    def loss_nd():
        d = a["p"] - a["l"]
        return nd.mean(nd.square(d), axis=1) * 0.5

    def loss_torch():
        d = t["p"] - t["l"]
        return torch.mean(torch.square(d), dim=1) * 0.5

    # nd operator calls per program: LSTM step: slice, 2 FC, add, split, 3 sigmoid, 2 tanh,
    # 3 mul, add, mul (the zeros once); loss: sub, square, mean, mul
    return {"lstm_cell_unrolled": (lstm_nd, lstm_torch, 1 + T * 15),
            "elementwise_loss": (loss_nd, loss_torch, 4)}


def small_report(rounds, reps=20):
    torch.set_num_threads(1)
    out = {}
    for name, (fn_nd, fn_t, nops) in small_programs().items():
        c_nd = sum(_profile_counts(fn_nd)["top"].values())
        c_t = sum(_profile_counts(fn_t)["top"].values())
        us = _timings({"neogluon": lambda: [fn_nd() for _ in range(reps)],
                       "torch": lambda: [fn_t() for _ in range(reps)]}, rounds, per_round=1)
        per = {k: v / reps / nops for k, v in us.items()}
        out[name] = {"nd_ops": nops, "aten_top_neogluon": c_nd, "aten_top_torch": c_t,
                     "us_per_op_neogluon": round(per["neogluon"], 2),
                     "us_per_op_torch": round(per["torch"], 2),
                     "ratio": round(per["neogluon"] / per["torch"], 2)}
        print(f"  {name:20s} {nops:4d} nd ops  aten top {c_nd}/{c_t}  us/op neogluon "
              f"{per['neogluon']:.2f} torch {per['torch']:.2f}  ratio "
              f"{per['neogluon'] / per['torch']:.2f}")
    return out


# ------------------------------------------------------------------ report
def _short(name):
    return name[6:] if name.startswith("aten::") else name[:60]


def _diff(a, b):
    """Ops ``a`` issues more often than ``b``: ``[(name, a_n, b_n)]``, most extra first."""
    rows = [(k, a[k], b.get(k, 0)) for k in a if a[k] > b.get(k, 0)]
    return sorted(rows, key=lambda r: (r[2] - r[1], r[0]))


def _timings(steps, rounds, per_round=5):
    best = {k: float("inf") for k in steps}
    for r in range(rounds):
        order = list(steps)
        order = order[r % len(order):] + order[:r % len(order)]
        for k in order:
            t0 = time.perf_counter()
            for _ in range(per_round):
                steps[k]()
            best[k] = min(best[k], (time.perf_counter() - t0) / per_round)
    return {k: round(v * 1e6, 1) for k, v in best.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--no-time", action="store_true")
    ap.add_argument("--both", action="store_true",
                    help="also list the ops torch issues more often than neogluon")
    ap.add_argument("--json")
    ap.add_argument("--device", default="cpu", help="cpu, or cuda (also counts CUDA kernels)")
    ap.add_argument("--small", action="store_true",
                    help="only the small-operator programs: host us per nd operator vs torch")
    args = ap.parse_args()
    if args.small:
        print("== small-operator programs (forward, no autograd; best of %d rounds, "
              "alternating; loaded machine)" % args.rounds)
        rep = small_report(args.rounds)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(rep, f, indent=1)
        return
    torch.set_num_threads(1)
    configs = args.configs.split(",")
    report = {}
    for model in args.models.split(","):
        res = {c: counts(model, c, device=args.device) for c in configs}
        report[model] = {c: {k: sum(v.values()) for k, v in res[c].items()} for c in configs}
        print(f"\n== {model}: aten calls per training step (top-level / all levels / leaf)")
        for c in configs:
            r = report[model][c]
            print(f"  {c:22s} top {r['top']:5d}  all {r['all']:5d}  leaf {r['leaf']:5d}"
                  + (f"  cuda kernels {r['kernels']:5d}" if "kernels" in r else ""))
        if "torch/eager" in res:
            for c in configs:
                if c == "torch/eager":
                    continue
                for level in ("top", "leaf") + (("kernels",) if args.device == "cuda" else ()):
                    d = _diff(res[c][level], res["torch/eager"][level])
                    if d:
                        print(f"  {c} extra vs torch ({level}): " + ", ".join(
                            f"{_short(n)} {a}/{b}" for n, a, b in d))
                    report[model][c]["extra_" + level] = {n: [a, b] for n, a, b in d}
                    if args.both:
                        d = _diff(res["torch/eager"][level], res[c][level])
                        print(f"  torch extra vs {c} ({level}): " + ", ".join(
                            f"{_short(n)} {a}/{b}" for n, a, b in d))
        if not args.no_time:
            steps = {c: make_step(model, c, args.device) for c in configs}
            if args.device == "cuda":
                steps = {c: (lambda f: lambda: (f(), torch.cuda.synchronize()))(f)
                         for c, f in steps.items()}
            for s in steps.values():
                s()
                s()
            us = _timings(steps, args.rounds)
            print("  host us/step (best of %d rounds, alternating; loaded machine): " % args.rounds
                  + ", ".join(f"{c} {v:.0f}" for c, v in us.items()))
            for c, v in us.items():
                report[model][c]["us_per_step"] = v
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
