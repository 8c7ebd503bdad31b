"""Judge a device's training step against the CPU's, with float64 as the yardstick.

One training step (forward, backward, SGD momentum + weight decay) runs from the same initial
values and data three times: on the CPU in float64 (the reference), on the CPU in float32, and
on the candidate (normally a GPU in float32 with TF32 off). For every parameter and auxiliary
state (BatchNorm's moving mean and variance included), an element of the candidate counts as
an offence only where its distance to float64 exceeds twice the CPU float32's own distance
to float64 plus a small absolute floor (``FLOOR_EPS`` float32 epsilons of the tensor's largest
magnitude). The report names the worst offender.

Used by tests/test_cuda_vs_cpu.py (GPU) and tests/test_device_compare.py (the harness itself
on CPU: CPU float32 against itself, the optimizers' CUDA path on CPU tensors, and a perturbed
copy that must be flagged).
"""
from __future__ import annotations

import contextlib

import numpy as np

import neogluon as mx
from neogluon import autograd, gluon, nd
from neogluon.gluon import nn, rnn

FLOOR_EPS = 4.0
EPS32 = float(np.finfo(np.float32).eps)


# ------------------------------------------------------------------------------ the models
class MaskedDropout(nn.HybridBlock):
    """Dropout with its mask given as an input (already scaled by 1/(1-p)), so that every
    device and precision drops the same units: a drawn mask would differ between them."""

    def hybrid_forward(self, F, x, mask):
        return x * mask


class DropoutMLP(nn.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.fc1 = nn.Dense(32)
            self.bn1 = nn.BatchNorm()
            self.drop = MaskedDropout()
            self.fc2 = nn.Dense(16)
            self.bn2 = nn.BatchNorm()
            self.out = nn.Dense(5)

    def hybrid_forward(self, F, x, mask):
        h = F.relu(self.bn1(self.fc1(x)))
        h = self.drop(h, mask)
        h = F.relu(self.bn2(self.fc2(h)))
        return self.out(h)


class LSTMNet(nn.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.lstm = rnn.LSTM(24, num_layers=2, layout="NTC")
            self.out = nn.Dense(5)

    def hybrid_forward(self, F, x):
        return self.out(self.lstm(x))


def _resnet18():
    from neogluon.gluon.model_zoo import vision
    return vision.resnet18_v1(classes=10)


def case(name):
    """(make_net, inputs, labels, classes) for one of 'resnet18', 'lstm', 'mlp'."""
    rs = np.random.RandomState(7)
    if name == "resnet18":
        x = rs.uniform(-1, 1, (4, 3, 32, 32))
        return _resnet18, [x], rs.randint(0, 10, 4), 10
    if name == "lstm":
        x = rs.uniform(-1, 1, (4, 6, 8))
        return LSTMNet, [x], rs.randint(0, 5, 4), 5
    if name == "mlp":
        x = rs.uniform(-1, 1, (8, 12))
        p = 0.3
        mask = (rs.uniform(0, 1, (8, 32)) >= p) / (1 - p)
        return DropoutMLP, [x, mask], rs.randint(0, 5, 8), 5
    raise ValueError(name)


# ------------------------------------------------------------------------------ one step
def initial_values(make, inputs):
    """The network's initial values (float32 initialisation, deterministic)."""
    mx.random.seed(11)
    net = make()
    net.initialize(mx.init.Xavier(magnitude=2.0), ctx=mx.cpu())
    net(*[nd.array(a, dtype="float32") for a in inputs])
    return {k: p.data().asnumpy().astype(np.float64)
            for k, p in _params(net).items()}


def _params(net):
    ps = net.collect_params()
    # structural names (prefixes differ between instances)
    return dict(zip(_strip(list(ps.keys())), ps.values()))


def _strip(names):
    import os
    pre = os.path.commonprefix(names)
    cut = pre.rfind("_") + 1 if "_" in pre else 0
    return [n[cut:] for n in names]


def train_step(make, inputs, labels, init, ctx, dtype, hybridize=False, lr=0.05,
               momentum=0.9, wd=1e-3, context_manager=None):
    """One forward/backward/SGD-momentum step from ``init``; returns every parameter and
    auxiliary state (name -> float64 array)."""
    mx.random.seed(11)
    net = make()
    net.initialize(mx.init.Xavier(), ctx=ctx)
    net.cast(dtype)
    xs = [nd.array(a, dtype=dtype, ctx=ctx) for a in inputs]
    net(*xs)   # materialise deferred shapes
    for k, p in _params(net).items():
        p.set_data(nd.array(init[k], dtype=dtype, ctx=ctx))
    if hybridize:
        net.hybridize()
    y = nd.array(labels, dtype=dtype, ctx=ctx)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": lr, "momentum": momentum, "wd": wd})
    with context_manager() if context_manager else contextlib.nullcontext():
        with autograd.record():
            loss = loss_fn(net(*xs), y)
        loss.backward()
        trainer.step(labels.shape[0])
    nd.waitall()
    return {k: p.data().asnumpy().astype(np.float64) for k, p in _params(net).items()}


# ------------------------------------------------------------------------------ the judge
def judge(ref64, cpu32, cand, floor_eps=FLOOR_EPS):
    """Compare ``cand`` with ``cpu32``, both against ``ref64`` (dicts name -> array).

    Returns a dict: ``offenders`` (name -> number of offending elements), ``worst`` (name of
    the tensor with the largest ratio, or None), ``worst_ratio`` (its largest
    ``|cand - ref| / (2*|cpu32 - ref| + floor)``; above 1 is an offence) and ``ratios``
    (name -> that tensor's largest ratio)."""
    if set(ref64) != set(cpu32) or set(ref64) != set(cand):
        raise ValueError(f"the runs hold different tensors: {sorted(set(ref64) ^ set(cand))}")
    offenders, ratios = {}, {}
    for k, r in ref64.items():
        c, g = cpu32[k], cand[k]
        if r.shape != g.shape or r.shape != c.shape:
            raise ValueError(f"{k}: shapes {r.shape}, {c.shape}, {g.shape}")
        floor = floor_eps * EPS32 * max(float(np.abs(r).max()) if r.size else 0.0, 1e-30)
        bound = 2.0 * np.abs(c - r) + floor
        err = np.abs(g - r)
        err = np.where(np.isfinite(err), err, np.inf)
        ratio = err / bound
        ratios[k] = float(ratio.max()) if ratio.size else 0.0
        n = int((ratio > 1.0).sum())
        if n:
            offenders[k] = n
    worst = max(ratios, key=ratios.get) if ratios else None
    return {"offenders": offenders, "worst": worst,
            "worst_ratio": ratios[worst] if worst else 0.0, "ratios": ratios}


def describe(report):
    w = report["worst"]
    return (f"{len(report['offenders'])} tensor(s) with offending elements "
            f"{report['offenders']}; worst: {w} (ratio {report['worst_ratio']:.3g})")


def run_case(name, cand_ctx, cand_kw=None):
    """(ref64, cpu32, candidate) for case ``name``: the candidate in float32 on ``cand_ctx``
    (``cand_kw`` passed on to :func:`train_step`)."""
    make, inputs, labels, _ = case(name)
    init = initial_values(make, inputs)
    ref = train_step(make, inputs, labels, init, mx.cpu(), "float64")
    cpu = train_step(make, inputs, labels, init, mx.cpu(), "float32")
    cand = train_step(make, inputs, labels, init, cand_ctx, "float32", **(cand_kw or {}))
    return ref, cpu, cand
