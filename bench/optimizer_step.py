"""optimizer_step: one optimizer step over ResNet-50 v1's 161 float32 tensors.

Measures, in one run and per thread count:
* the machine's streaming bandwidth: an in-place ``a.add_(b)`` over 256 MiB buffers
  (3 x 4 bytes per element move), sampled right before each round of each optimizer; an
  optimizer's percentage is the median over its rounds of (its rate / the streaming rate
  measured just before), and "stream GB/s" is the median streaming sample of its rounds;
* neogluon's ``Updater`` list call (the Trainer's path) for every optimizer;
* ``torch.optim`` SGD (momentum) and Adam with ``fused=True``;
* MXNet 1.9.1's ``gluon.Trainer.step`` (no kvstore, update_on_kvstore=False: its list path)
  for the same optimizers, when ``/tmp/mxref/bin/python`` has MXNet. MXNet runs in a worker
  process driven step by step, so its rounds interleave with neogluon's.

The machine is shared, so each figure is the best step time over interleaved rounds. For each
optimizer: ms per step, the bytes that must move (weights read and written, gradients read,
each full-size state read and written) and that as a percentage of the streaming bandwidth.
rescale_grad is 1/batch_size as the Trainer sets it; no clipping.

Usage:
    python bench/optimizer_step.py [--threads 1 2] [--rounds 5] [--steps 3]
                                   [--only sgd adam] [--no-mxnet] [--markdown]
    python bench/optimizer_step.py --device cuda [--only sgd adam] [--rounds 5] [--steps 3]
    python bench/optimizer_step.py --device cpu     # smoke run at a reduced size

``--device`` compares, per rule (SGD momentum, NAG, Adam, AdamW, RMSProp, AdaGrad, LAMB,
LARS), neogluon's Updater list call (the Trainer's path) with torch.optim's fused and foreach
variants of the rule (for LAMB and LARS, which torch lacks, a ``_foreach`` implementation of
the same maths written here): ms per step (CUDA events on a GPU) and the bandwidth achieved,
bytes that must move / time. It writes its own section (optimizer_step_cuda or
optimizer_step_cpu) of RESULTS.md.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import best_ms  # noqa: E402

MXREF = "/tmp/mxref/bin/python"
BATCH = 64
HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "RESULTS.md")
SECTION = "optimizer_step"


def resnet50_v1_shapes():
    """The trainable parameter shapes of gluon's resnet50_v1 (161 tensors, 25.56 M values)."""
    shapes = [(64, 3, 7, 7), (64,), (64,)]
    cin = 64
    for channels, blocks in ((256, 3), (512, 4), (1024, 6), (2048, 3)):
        mid = channels // 4
        for b in range(blocks):
            shapes += [(mid, cin, 1, 1), (mid,), (mid,), (mid, mid, 3, 3), (mid,), (mid,),
                       (channels, mid, 1, 1), (channels,), (channels,)]
            if b == 0:
                shapes += [(channels, cin, 1, 1), (channels,), (channels,)]
            cin = channels
    shapes += [(1000, 2048), (1000,)]
    return shapes


# name -> (constructor kwargs, number of full-size state tensors read and written)
OPTIMIZERS = {
    "sgd": (dict(momentum=0.9, learning_rate=0.1, wd=1e-4), 1),
    "nag": (dict(momentum=0.9, learning_rate=0.1, wd=1e-4), 1),
    "adam": (dict(learning_rate=1e-3, wd=1e-4), 2),
    "adamw": (dict(learning_rate=1e-3, wd=1e-4), 2),
    "adagrad": (dict(learning_rate=0.01, wd=1e-4), 1),
    "sgd_nomom": (dict(learning_rate=0.1, wd=1e-4), 0),
    "signum": (dict(momentum=0.9, learning_rate=0.01, wd=1e-4), 1),
    "ftml": (dict(learning_rate=0.01, wd=1e-4), 3),
    "lars": (dict(momentum=0.9, learning_rate=0.1, wd=1e-4), 1),
    "lbsgd": (dict(momentum=0.9, learning_rate=0.1, wd=1e-4), 1),
    "dcasgd": (dict(momentum=0.9, learning_rate=0.1, wd=1e-4), 2),
    "sgld": (dict(learning_rate=1e-4, wd=1e-4), 0),
    "sgld_fast": (dict(learning_rate=1e-4, wd=1e-4), 0),
    "adamax": (dict(learning_rate=1e-3, wd=1e-4), 2),
    "nadam": (dict(learning_rate=1e-3, wd=1e-4), 2),
    "adadelta": (dict(wd=1e-4), 2),
    "rmsprop": (dict(learning_rate=1e-3, wd=1e-4), 1),
    "rmsprop_centered": (dict(learning_rate=1e-3, wd=1e-4, centered=True), 3),
    "ftrl": (dict(learning_rate=0.1, wd=1e-4), 2),
    "lamb": (dict(learning_rate=1e-3, wd=1e-4), 2),
}
# neogluon-only (MXNet 1.9.1 has no such optimizer, or fails on it)
NO_MXNET = {"adamw", "dcasgd"}
# neogluon-only arguments (MXNet's side of the row runs without them): SGLD's in-kernel noise
NEO_KW = {"sgld_fast": {"fast_noise": True}}


def opt_name(key):
    return {"sgd_nomom": "sgd", "rmsprop_centered": "rmsprop",
            "sgld_fast": "sgld"}.get(key, key)


def bytes_moved(n_values, n_states, itemsize=4):
    return itemsize * n_values * (3 + 2 * n_states)


def _best_ms(fn, steps):
    """Best (least disturbed) time of `steps` calls, in ms: the machine is shared."""
    return best_ms(fn, steps)


def stream_meter(n_values=64 * 2 ** 20):
    """A function that returns the streaming rate in GB/s of an in-place ``a.add_(b)``.

    The two buffers live in this closure and nowhere else: the run before session 4 kept
    them as locals of ``run_side`` and rebound ``b`` to a float in its round loop, so from the
    second round on the "stream" added a scalar (two streams) while counting three, which
    overstated the machine's bandwidth by 1.5x."""
    import torch
    a = torch.randn(n_values)
    b = torch.randn(n_values)
    nbytes = 3 * 4 * n_values  # read a, read b, write a

    def measure():
        ms = _best_ms(lambda: a.add_(b), 5)
        return nbytes / (ms / 1e3) / 1e9
    return measure


def _paired(samples, nbytes):
    """Fraction of bandwidth from (streaming GB/s, step ms) pairs measured back to back.

    This host's bandwidth moves between phases lasting seconds (two threads: ~50 or ~75
    GB/s), so each step time is compared with the streaming rate measured just before it,
    and the median of those ratios is reported."""
    ratios = sorted(nbytes / (t / 1e3) / 1e9 / b for b, t in samples)
    bws = sorted(b for b, _ in samples)
    return {"bytes": nbytes, "frac": ratios[len(ratios) // 2], "bw": bws[len(bws) // 2]}


# ----------------------------------------------------------------------------- MXNet worker
MX_WORKER = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
import numpy as np
import mxnet as mx
shapes = None
tr = plist = None
for line in sys.stdin:
    cmd = json.loads(line)
    if cmd["cmd"] == "shapes":
        shapes = [tuple(s) for s in cmd["shapes"]]
        out = {}
    elif cmd["cmd"] == "setup":
        tr = plist = None
        rng = np.random.default_rng(0)
        params = mx.gluon.ParameterDict()
        for i, s in enumerate(shapes):
            params.get(f"p{i}", shape=s)
        params.initialize(mx.init.Normal(0.05), ctx=mx.cpu())
        for p in params.values():
            p.grad()[:] = rng.standard_normal(p.shape).astype("float32") * 0.01
        tr = mx.gluon.Trainer(params, cmd["name"], cmd["kw"], kvstore=None,
                              update_on_kvstore=False)
        plist = list(params.values())
        out = {}
    elif cmd["cmd"] == "time":
        best = float("inf")
        for _ in range(cmd["steps"]):
            for p in plist:
                p.data()._fresh_grad = True
            t0 = time.perf_counter()
            tr.step(cmd["batch"])
            mx.nd.waitall()
            best = min(best, time.perf_counter() - t0)
        out = {"ms": best * 1e3}
    print(json.dumps(out), flush=True)
"""


class MXNetWorker:
    """MXNet 1.9.1 in a subprocess, driven step by step so its timings interleave with ours."""

    def __init__(self, threads, shapes):
        # PASSIVE: MXNet's idle OpenMP threads must not spin on the cores while neogluon's
        # step is being timed right after MXNet's.
        env = dict(os.environ, OMP_NUM_THREADS=str(threads),
                   MXNET_CPU_WORKER_NTHREADS=str(threads), MXNET_ENGINE_TYPE="NaiveEngine",
                   OMP_WAIT_POLICY="PASSIVE", GOMP_SPINCOUNT="0")
        self.p = subprocess.Popen([MXREF, "-c", MX_WORKER], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  text=True, env=env)
        self.ask({"cmd": "shapes", "shapes": shapes})

    def ask(self, cmd):
        self.p.stdin.write(json.dumps(cmd) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError("the MXNet worker exited")
        return json.loads(line)

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)


# ----------------------------------------------------------------------------- one thread count
def run_side(threads, rounds, steps, only, with_mxnet):
    import torch
    torch.set_num_threads(threads)
    import neogluon as mx

    shapes = resnet50_v1_shapes()
    n_values = sum(math.prod(s) for s in shapes)
    out = {"n_tensors": len(shapes), "n_values": n_values}
    bandwidth = stream_meter()
    bw = bandwidth()
    worker = None
    if with_mxnet and os.path.exists(MXREF):
        worker = MXNetWorker(threads, shapes)
    gen = torch.Generator().manual_seed(0)
    ws0 = [torch.randn(s, generator=gen) * 0.05 for s in shapes]
    gs0 = [torch.randn(s, generator=gen) * 0.01 for s in shapes]
    res = {}
    for key, (kw, nst) in OPTIMIZERS.items():
        if only and key not in only:
            continue
        ws = [mx.nd.from_torch(w.clone()) for w in ws0]
        gs = [mx.nd.from_torch(g.clone()) for g in gs0]
        opt = mx.optimizer.create(opt_name(key), rescale_grad=1.0 / BATCH, **kw,
                                  **NEO_KW.get(key, {}))
        upd = mx.optimizer.get_updater(opt)
        idx = list(range(len(ws)))
        upd(idx, gs, ws)
        use_mx = worker is not None and key not in NO_MXNET
        if use_mx:
            worker.ask({"cmd": "setup", "name": opt_name(key), "kw": kw})
            worker.ask({"cmd": "time", "steps": 1, "batch": BATCH})
        ours, theirs, samples = float("inf"), float("inf"), []
        for _ in range(rounds):  # interleaved, so both sides see the same machine load
            stream = bandwidth()
            t = _best_ms(lambda: upd(idx, gs, ws), steps)
            samples.append((stream, t))
            ours = min(ours, t)
            if use_mx:
                theirs = min(theirs, worker.ask({"cmd": "time", "steps": steps,
                                                 "batch": BATCH})["ms"])
                time.sleep(0.2)  # let the other process's threads go idle
        res[key] = _paired(samples, bytes_moved(n_values, nst))
        res[key].update(ms=ours, mxnet_ms=theirs if use_mx else None)
        bw = max(bw, res[key]["bw"])
        del ws, gs, upd, opt
    # torch.optim fused baselines
    for key, ctor, nst in (("torch_sgd_fused", "SGD", 1), ("torch_adam_fused", "Adam", 2)):
        if only and key.split("_")[1] not in only:
            continue
        ps = [torch.nn.Parameter(w.clone()) for w in ws0]
        for p, g in zip(ps, gs0):
            p.grad = g.clone()
        if ctor == "SGD":
            o = torch.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=1e-4, fused=True)
        else:
            o = torch.optim.Adam(ps, lr=1e-3, weight_decay=1e-4, fused=True)
        o.step()
        samples = []
        for _ in range(rounds):
            samples.append((bandwidth(), _best_ms(o.step, steps)))
        res[key] = _paired(samples, bytes_moved(n_values, nst))
        res[key].update(ms=min(t for _, t in samples), mxnet_ms=None)
        bw = max(bw, res[key]["bw"])
    if worker is not None:
        worker.close()
    out["bandwidth_GBps"] = bw
    out["results"] = res
    return out


# the targets: (minimum % of bandwidth, minimum speed-up over MXNet or None)
FAST = {"sgd": (80, 5), "nag": (80, None), "adam": (80, 4), "adamw": (80, None),
        "adagrad": (80, None),
        # SGLD's default draws its noise as nd.random.normal does (MXNet's semantics), bound by
        # torch's generator, not memory; the bandwidth target is sgld_fast's (in-kernel noise)
        "sgld": (0, 3)}


def target(key):
    if key.startswith("torch_"):
        return None
    return FAST.get(key, (40, 3))


def table(threads, tside, markdown):
    bw = tside["bandwidth_GBps"]
    rows = []
    head = ["optimizer", "neogluon ms", "stream GB/s", "% bandwidth", "MXNet ms", "MXNet % bw",
            "speed-up vs MXNet", "MB moved", "target (bw, speed-up)", "met"]
    for key, r in tside["results"].items():
        ms = r["ms"]
        rbw = r.get("bw") or bw
        pct = r["frac"] * 100 if "frac" in r else r["bytes"] / (ms / 1e3) / 1e9 / rbw * 100
        mx_ms = r.get("mxnet_ms")
        mx_pct = r["bytes"] / (mx_ms / 1e3) / 1e9 / rbw * 100 if mx_ms else None
        tg = target(key)
        met, tg_s = "", "-"
        if tg is not None:
            tg_s = f">={tg[0]}%" + (f", >={tg[1]}x" if tg[1] else "")
            ok = pct >= tg[0] and (not tg[1] or not mx_ms or mx_ms / ms >= tg[1])
            met = "yes" if ok else "no"
        rows.append([key, f"{ms:.1f}", f"{rbw:.1f}", f"{pct:.0f}%",
                     f"{mx_ms:.1f}" if mx_ms else "-",
                     f"{mx_pct:.0f}%" if mx_pct else "-",
                     f"{mx_ms / ms:.1f}x" if mx_ms else "-",
                     f"{r['bytes'] / 1e6:.0f}", tg_s, met])
    lines = [f"threads={threads}: streaming bandwidth up to {bw:.1f} GB/s; "
             f"{tside['n_tensors']} tensors, {tside['n_values'] / 1e6:.2f} M values"]
    if markdown:
        lines.append("")
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        for r in rows:
            lines.append("| " + " | ".join(r) + " |")
    else:
        w = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
        lines.append("  ".join(h.ljust(w[i]) for i, h in enumerate(head)))
        for r in rows:
            lines.append("  ".join(c.ljust(w[i]) for i, c in enumerate(r)))
    return "\n".join(lines)


NOTE = ("% bandwidth is the median over rounds of (step rate / streaming rate measured just "
        "before it). This 2-vCPU host's two-thread streaming rate moves between phases "
        "lasting seconds (about 55 or about 90 GB/s), which the pairing follows; torch's fused "
        "kernels, timed the same way in the same run, are the reference rows. LARS and LAMB "
        "read the weights and gradients once more for their norms than the bytes counted. "
        "SGLD computes a Gaussian number per weight in its update kernel (ARS-7 AES rounds + "
        "Box-Muller, about 9.5 ms of arithmetic for 25.6 M values on one Zen 4 core), so it "
        "is bound by arithmetic more than by memory.")


def write_section(body, head=None):
    """Replace this benchmark's section of bench/RESULTS.md (re-read just before, atomic)."""
    text = open(RESULTS).read() if os.path.exists(RESULTS) else "# Benchmark results\n\n"
    head = head or f"## {SECTION}\n"
    start = text.find(head)
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + body.rstrip("\n") + "\n"
    else:
        nxt = text.find("\n## ", start + len(head))
        end = len(text) if nxt < 0 else nxt + 1
        text = text[:start] + body.rstrip("\n") + "\n" + ("\n" if nxt >= 0 else "") + \
            text[end:]
    tmp = RESULTS + f".tmp{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, RESULTS)


# ----------------------------------------------------------------------------- --device mode
# rule -> (neogluon optimizer, its kwargs, full-size states, torch.optim baselines)
# Each baseline: (label, builder of a step function over (params-with-grads)). The same
# hyper-parameters on both sides; torch's maths differ in details (eps placement, decoupled
# decay scaling) but move the same bytes, which is what the comparison is about.
DEVICE_RULES = {
    "sgd": ("sgd", dict(momentum=0.9, learning_rate=0.1, wd=1e-4), 1),
    "nag": ("nag", dict(momentum=0.9, learning_rate=0.1, wd=1e-4), 1),
    "adam": ("adam", dict(learning_rate=1e-3, wd=1e-4), 2),
    "adamw": ("adamw", dict(learning_rate=1e-3, wd=1e-4), 2),
    "rmsprop": ("rmsprop", dict(learning_rate=1e-3, wd=1e-4), 1),
    "adagrad": ("adagrad", dict(learning_rate=0.01, wd=1e-4), 1),
    "lamb": ("lamb", dict(learning_rate=1e-3, wd=1e-4), 2),
    "lars": ("lars", dict(momentum=0.9, learning_rate=0.1, wd=1e-4), 1),
}


def _torch_baselines(rule, params, torch):
    """(label, step function) pairs of torch.optim (or, for LAMB/LARS, which torch lacks, a
    ``_foreach`` implementation of the same maths written here) for ``rule``."""
    o = torch.optim
    out = []

    def opt_pair(cls, **kw):
        for label, extra in (("fused", dict(fused=True)), ("foreach", dict(foreach=True))):
            try:
                inst = cls(params, **kw, **extra)
                inst.step()   # some variants refuse a device only when they first step
            except (RuntimeError, TypeError, ValueError, NotImplementedError):
                continue   # this torch has no such variant for this rule or device
            out.append((f"torch {cls.__name__} {label}", inst.step))

    if rule == "sgd":
        opt_pair(o.SGD, lr=0.1, momentum=0.9, weight_decay=1e-4)
    elif rule == "nag":
        opt_pair(o.SGD, lr=0.1, momentum=0.9, weight_decay=1e-4, nesterov=True)
    elif rule == "adam":
        opt_pair(o.Adam, lr=1e-3, weight_decay=1e-4)
    elif rule == "adamw":
        opt_pair(o.AdamW, lr=1e-3, weight_decay=1e-4)
    elif rule == "rmsprop":
        opt_pair(o.RMSprop, lr=1e-3, alpha=0.9, eps=1e-8, weight_decay=1e-4)
    elif rule == "adagrad":
        opt_pair(o.Adagrad, lr=0.01, weight_decay=1e-4, eps=1e-7)
    elif rule == "lamb":
        out.append(("foreach LAMB (bench)", _foreach_lamb(params, torch)))
    elif rule == "lars":
        out.append(("foreach LARS (bench)", _foreach_lars(params, torch)))
    return out


def _foreach_lamb(params, torch, lr=1e-3, b1=0.9, b2=0.999, eps=1e-6, wd=1e-4):
    """LAMB (MXNet's maths, bias-corrected) on torch ``_foreach`` ops: the baseline for a
    rule torch.optim lacks."""
    ws = [p.data for p in params]
    gs = [p.grad for p in params]
    m = [torch.zeros_like(w) for w in ws]
    v = [torch.zeros_like(w) for w in ws]
    t = [0]
    f = torch

    def step():
        t[0] += 1
        f._foreach_mul_(m, b1)
        f._foreach_add_(m, gs, alpha=1 - b1)
        f._foreach_mul_(v, b2)
        f._foreach_addcmul_(v, gs, gs, value=1 - b2)
        den = f._foreach_mul(v, 1 / (1 - b2 ** t[0]))
        f._foreach_sqrt_(den)
        f._foreach_add_(den, eps)
        u = f._foreach_div(m, den)
        f._foreach_mul_(u, 1 / (1 - b1 ** t[0]))
        f._foreach_add_(u, ws, alpha=wd)
        r1 = f.stack(f._foreach_norm(ws))
        r2 = f.stack(f._foreach_norm(u))
        ratio = f.where((r1 > 0) & (r2 > 0), r1 / r2, f.ones_like(r1)) * -lr
        # per-tensor factors as a scalar list (one host sync): torch's multi-tensor fast path
        # takes scalar lists, not lists of 0-dim tensors
        f._foreach_mul_(u, ratio.tolist())
        f._foreach_add_(ws, u)
    return step


def _foreach_lars(params, torch, lr=0.1, mom=0.9, eta=0.001, wd=1e-4, eps=0.0):
    """LARS (MXNet's maths, momentum) on torch ``_foreach`` ops."""
    ws = [p.data for p in params]
    gs = [p.grad for p in params]
    m = [torch.zeros_like(w) for w in ws]
    f = torch

    def step():
        wn = f.stack(f._foreach_norm(ws))
        gn = f.stack(f._foreach_norm(gs))
        rate = lr * eta * wn / (gn + wd * wn + eps)
        rate = f.where((wn > 0) & (gn > 0), rate, f.full_like(rate, lr))
        neg = (-rate).tolist()   # a scalar list (one host sync), as in the LAMB baseline
        f._foreach_mul_(m, mom)
        f._foreach_add_(m, f._foreach_mul(f._foreach_add(gs, ws, alpha=wd), neg))
        f._foreach_add_(ws, m)
    return step


def small_shapes():
    """ResNet-50's 161 tensors shrunk (first dimension / 16): the CPU smoke size."""
    return [(max(1, s[0] // 16),) + tuple(s[1:]) for s in resnet50_v1_shapes()]


def run_device(device, rounds, steps, only, small, device_path=False):
    """One update of each rule over ResNet-50's tensors on ``device``: neogluon's Updater list
    call (the Trainer's path) against torch.optim's fused and foreach variants. CUDA times
    come from CUDA events (best step over rounds), CPU times from the wall clock."""
    import torch
    import neogluon as mx
    dev = torch.device(device)
    if dev.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
    shapes = small_shapes() if small else resnet50_v1_shapes()
    n_values = sum(math.prod(s) for s in shapes)
    gen = torch.Generator().manual_seed(0)
    ws0 = [(torch.randn(s, generator=gen) * 0.05).to(dev) for s in shapes]
    gs0 = [(torch.randn(s, generator=gen) * 0.01).to(dev) for s in shapes]
    ctx = mx.gpu(dev.index or 0) if dev.type == "cuda" else mx.cpu()

    def timed(fn):
        fn()   # warm-up (states created, kernels compiled)
        best = float("inf")
        for _ in range(steps):
            if dev.type == "cuda":
                a = torch.cuda.Event(enable_timing=True)
                b = torch.cuda.Event(enable_timing=True)
                a.record()
                fn()
                b.record()
                b.synchronize()
                best = min(best, a.elapsed_time(b))
            else:
                t0 = time.perf_counter()
                fn()
                best = min(best, (time.perf_counter() - t0) * 1e3)
        return best

    rows = []
    for rule, (name, kw, nst) in DEVICE_RULES.items():
        if only and rule not in only:
            continue
        nbytes = bytes_moved(n_values, nst)
        ws = [mx.nd.from_torch(w.clone()).as_in_context(ctx) for w in ws0]
        gs = [mx.nd.from_torch(g.clone()).as_in_context(ctx) for g in gs0]
        upd = mx.optimizer.get_updater(mx.optimizer.create(name, rescale_grad=1.0 / BATCH,
                                                           **kw))
        idx = list(range(len(ws)))
        if device_path:   # CPU tensors down the CUDA dispatch (fused/_foreach, no C kernels)
            from neogluon.optimizer import fused

            def neo():
                with fused.device_path():
                    upd(idx, gs, ws)
        else:
            def neo():
                upd(idx, gs, ws)
        cands = [("neogluon Updater" + (" (device path)" if device_path else ""), neo)]
        ps = [torch.nn.Parameter(w.clone()) for w in ws0]
        for p_, g in zip(ps, gs0):
            p_.grad = g.clone()
        cands += _torch_baselines(rule, ps, torch)
        best = {label: float("inf") for label, _ in cands}
        for _ in range(rounds):   # interleaved rounds: each side sees the same conditions
            for label, fn in cands:
                best[label] = min(best[label], timed(fn))
        for label, _ in cands:
            ms = best[label]
            rows.append((rule, label, ms, nbytes / (ms / 1e3) / 1e9))
        del ws, gs, upd, ps, cands
    return {"device": str(dev), "n_tensors": len(shapes), "n_values": n_values,
            "name": torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu",
            "rows": rows}


def device_table(res, markdown):
    head = ["rule", "implementation", "ms/step", "GB/s (bytes that must move / time)"]
    lines = []
    if markdown:
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
    else:
        lines.append(f"{head[0]:<8} {head[1]:<32} {head[2]:>9} {head[3]}")
    for rule, label, ms, gbs in res["rows"]:
        if markdown:
            lines.append(f"| {rule} | {label} | {ms:.3f} | {gbs:.1f} |")
        else:
            lines.append(f"{rule:<8} {label:<32} {ms:9.3f} {gbs:8.1f}")
    return "\n".join(lines)


def main_device(args, argv):
    small = args.small if args.small is not None else args.device == "cpu"
    res = run_device(args.device, args.rounds, args.steps, args.only, small,
                     device_path=args.device_path and args.device == "cpu")
    title = (f"{res['device']} ({res['name']}), {res['n_tensors']} float32 tensors, "
             f"{res['n_values'] / 1e6:.2f} M values")
    print(title)
    print(device_table(res, args.markdown))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    if not args.no_write:
        cmd = "python bench/optimizer_step.py " + " ".join(argv if argv is not None
                                                          else sys.argv[1:])
        now = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        smoke = (" CPU SMOKE RUN at a reduced size: it checks that the --device path runs; "
                 "these are not performance figures (shared, loaded 2-core machine)."
                 if res["device"] == "cpu" else "")
        body = (f"## {SECTION}_{res['device'].split(':')[0]}\n\nCommand: `{cmd.strip()}` -- "
                f"{now}; {title}; best step over {args.rounds} interleaved rounds of "
                f"{args.steps} steps ({'CUDA events' if res['device'] != 'cpu' else 'wall clock'}"
                f"). GB/s counts the bytes that must move (weights read and written, "
                f"gradients read, each full-size state read and written).{smoke}\n\n"
                + device_table(res, True) + "\n")
        write_section(body, f"## {SECTION}_{res['device'].split(':')[0]}\n")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds per optimizer")
    ap.add_argument("--steps", type=int, default=3, help="steps timed per round")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--no-mxnet", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--json", default=None, help="also write raw results here")
    ap.add_argument("--no-write", action="store_true",
                    help="do not rewrite the optimizer_step section of bench/RESULTS.md")
    ap.add_argument("--device", default=None,
                    help="cuda or cpu: neogluon vs torch.optim (fused, foreach) on that "
                         "device instead of the CPU comparison with MXNet")
    ap.add_argument("--small", action="store_true", default=None,
                    help="--device: ResNet-50's tensors shrunk 16x (default on cpu)")
    ap.add_argument("--full", dest="small", action="store_false",
                    help="--device cpu: the full 25.6 M values")
    ap.add_argument("--device-path", action="store_true",
                    help="--device cpu: run neogluon's CUDA dispatch (torch fused/_foreach "
                         "ops) on the CPU tensors instead of the compiled CPU kernels")
    args = ap.parse_args(argv)
    if args.device:
        return main_device(args, argv)
    raw = {}
    tables = []
    for th in args.threads:
        # each thread count in a fresh process so torch's thread pool is sized cleanly
        code = ("import json,sys; sys.path.insert(0, %r); import optimizer_step as b; "
                "print('RESULT' + json.dumps(b.run_side(%d, %d, %d, %r, %r)))"
                % (os.path.dirname(os.path.abspath(__file__)), th, args.rounds, args.steps,
                   args.only, not args.no_mxnet))
        env = dict(os.environ, OMP_NUM_THREADS=str(th))
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=env)
        side = None
        for line in p.stdout.splitlines():
            if line.startswith("RESULT"):
                side = json.loads(line[6:])
        if side is None:
            sys.stderr.write(p.stderr[-3000:])
            return 1
        raw[th] = side
        print(table(th, side, args.markdown))
        print()
        sys.stdout.flush()
        tables.append(table(th, side, True))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(raw, f, indent=1)
    if not args.no_write:
        cmd = "python bench/optimizer_step.py " + " ".join(argv if argv is not None
                                                          else sys.argv[1:])
        now = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        body = (f"## {SECTION}\n\nCommand: `{cmd.strip()}` -- {now}; best step time over "
                f"{args.rounds} interleaved rounds of {args.steps} steps (neogluon Updater list "
                f"call vs MXNet 1.9.1 Trainer.step, update_on_kvstore=False); % bandwidth = "
                f"bytes that must move / streaming bandwidth of an in-place add_. "
                f"{os.cpu_count()} CPU(s), shared with other work while measured. "
                f"{NOTE}\n\n"
                + "\n\n".join(tables) + "\n")
        write_section(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
