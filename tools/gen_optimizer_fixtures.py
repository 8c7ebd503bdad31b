"""Write tests/fixtures/optimizer/ from MXNet 1.9.1 (run with /tmp/mxref/bin/python).

Every optimizer in MXNet's registry runs several steps through ``mx.optimizer.Updater`` (the
list form the Gluon Trainer uses), with ``rescale_grad``, ``clip_gradient``, ``wd``, per-Parameter
``lr_mult``/``wd_mult`` (through ``param_dict``, changed mid-run), a learning-rate schedule and a
change of ``rescale_grad`` mid-run all in play. The fixture keeps the inputs (initial weights,
the gradient of every step) and MXNet's weights after every step and states after the last.

Two optimizers are produced by a corrected or added update written here on MXNet's operators:
DCASGD with momentum (MXNet 1.9.1 fails on it: it takes an NDArray's truth value) and AdamW
(1.9.1 has only the ``adamw_update`` operator; the optimizer uses it with the bias-corrected
learning rate as ``eta``).

Also written: lr_scheduler.json (every schedule's value at each num_update) and
updater_order.json, the Updater's order of work (mixed dtypes, unsorted indices, uneven update
counts under a schedule).

Usage: /tmp/mxref/bin/python tools/gen_optimizer_fixtures.py [--only updates schedules order]
"""
import json
import math
import os
import sys
import warnings

import mxnet as mx
import numpy as np

warnings.simplefilter("ignore")
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures",
                   "optimizer")
SHAPES = [(4, 5), (7,), (3, 2, 2)]
NAMES = ["fc_weight", "fc_bias", "conv_weight"]
STEPS = 8


@mx.optimizer.register
class FixedDCASGD(mx.optimizer.DCASGD):
    """DCASGD with the momentum branch repaired (``mom is not None``)."""

    def update(self, index, weight, grad, state):
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        grad = grad * self.rescale_grad
        if self.clip_gradient is not None:
            grad = mx.nd.clip(grad, -self.clip_gradient, self.clip_gradient)
        mom, previous_weight = state
        delta = -lr * (grad + wd * weight + self.lamda * grad * grad * (weight - previous_weight))
        if mom is not None:
            mom[:] *= self.momentum
            mom[:] += delta
        else:
            mom = delta
        previous_weight[:] = weight
        weight[:] += mom


@mx.optimizer.register
class RefAdamW(mx.optimizer.Optimizer):
    """AdamW: Adam's moments on the rescaled, clipped gradient; decoupled weight decay."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon

    def create_state(self, index, weight):
        return (mx.nd.zeros(weight.shape, weight.context, dtype=weight.dtype),
                mx.nd.zeros(weight.shape, weight.context, dtype=weight.dtype))

    def update(self, index, weight, grad, state):
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        t = self._index_update_count[index]
        lr *= math.sqrt(1. - self.beta2 ** t) / (1. - self.beta1 ** t)
        kw = {}
        if self.clip_gradient:
            kw["clip_gradient"] = self.clip_gradient
        mean, var = state
        rg = mx.nd.array([self.rescale_grad], ctx=weight.context, dtype="float32")
        mx.nd.contrib.adamw_update(weight, grad, mean, var, rg, out=weight, lr=1.0, eta=lr,
                                   wd=wd, beta1=self.beta1, beta2=self.beta2,
                                   epsilon=self.epsilon, **kw)


class FakeParam:
    def __init__(self, lr_mult, wd_mult):
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult


def make_sched(spec):
    if spec is None:
        return None
    kind = spec["kind"]
    kw = dict(spec["kwargs"])
    return getattr(mx.lr_scheduler, kind)(**kw)


COMMON = dict(rescale_grad=0.7, clip_gradient=0.5, wd=0.01)
FACTOR = {"kind": "FactorScheduler", "kwargs": {"step": 2, "factor": 0.8, "base_lr": 0.05}}
COSINE = {"kind": "CosineScheduler", "kwargs": {"max_update": 6, "base_lr": 0.05,
                                                "final_lr": 0.001, "warmup_steps": 2,
                                                "warmup_begin_lr": 0.01}}

# (scenario name, optimizer name, kwargs, scheduler spec, dtypes)
ALL = ("float32", "float64", "float16")
F32_MP = ("float32", "float16")  # MXNet 1.9.1 keeps these states in float32 only
SCENARIOS = [
    ("sgd", "sgd", dict(momentum=0.9, learning_rate=0.05, **COMMON), FACTOR, ALL),
    ("sgd_nomom", "sgd", dict(learning_rate=0.05, **COMMON), COSINE, ALL),
    ("sgd_noclip", "sgd", dict(momentum=0.9, learning_rate=0.05, rescale_grad=0.7, wd=0.01),
     COSINE, ALL),
    ("ccsgd", "ccsgd", dict(momentum=0.5, learning_rate=0.05, **COMMON), None, ("float32",)),
    ("nag", "nag", dict(momentum=0.9, learning_rate=0.05, **COMMON), FACTOR, ALL),
    ("nag_noclip", "nag", dict(momentum=0.9, learning_rate=0.05, rescale_grad=0.7, wd=0.01),
     COSINE, ALL),
    ("nag_nomom", "nag", dict(learning_rate=0.05, **COMMON), None, ALL),
    ("signum", "signum", dict(momentum=0.9, wd_lh=0.01, learning_rate=0.05, **COMMON), FACTOR,
     ALL),
    ("signsgd", "signum", dict(momentum=0.0, learning_rate=0.05, **COMMON), None, ALL),
    ("ftml", "ftml", dict(learning_rate=0.05, **COMMON), FACTOR, ALL),
    ("lars", "lars", dict(momentum=0.9, eta=0.01, eps=1e-6, learning_rate=0.05, **COMMON),
     COSINE, ALL),
    ("lars_nomom", "lars", dict(eta=0.01, learning_rate=0.05, **COMMON), FACTOR, ALL),
    ("lbsgd", "lbsgd", dict(momentum=0.9, batch_scale=2, warmup_epochs=1, updates_per_epoch=3,
                            learning_rate=0.05, **COMMON), FACTOR, ("float32", "float64")),
    ("lbsgd_lars", "lbsgd", dict(momentum=0.9, warmup_strategy="lars", learning_rate=0.05,
                                 **COMMON), None, ("float32", "float64")),
    ("dcasgd", "dcasgd", dict(learning_rate=0.05, lamda=0.1, **COMMON), FACTOR, ALL),
    ("dcasgd_mom", "fixeddcasgd", dict(momentum=0.9, learning_rate=0.05, lamda=0.1, **COMMON),
     FACTOR, ALL),
    ("adam", "adam", dict(learning_rate=0.05, **COMMON), FACTOR, ALL),
    ("adam_noclip", "adam", dict(learning_rate=0.05, rescale_grad=0.7, wd=0.01), COSINE, ALL),
    ("adamw", "refadamw", dict(learning_rate=0.05, **COMMON), FACTOR, ALL),
    ("adamw_noclip", "refadamw", dict(learning_rate=0.05, rescale_grad=0.7, wd=0.01), COSINE,
     ALL),
    ("adamax", "adamax", dict(learning_rate=0.05, **COMMON), FACTOR, ALL),
    ("nadam", "nadam", dict(learning_rate=0.05, **COMMON), FACTOR, ALL),
    ("adagrad", "adagrad", dict(learning_rate=0.05, **COMMON), FACTOR, F32_MP),
    ("adagrad_noclip", "adagrad", dict(learning_rate=0.05, rescale_grad=0.7, wd=0.01), COSINE,
     F32_MP),
    ("adadelta", "adadelta", dict(rho=0.9, epsilon=1e-5, **COMMON), None, F32_MP),
    ("rmsprop", "rmsprop", dict(learning_rate=0.05, **COMMON), FACTOR, F32_MP),
    ("rmsprop_centered", "rmsprop", dict(learning_rate=0.05, centered=True, clip_weights=0.9,
                                         **COMMON), FACTOR, F32_MP),
    ("ftrl", "ftrl", dict(learning_rate=0.05, lamda1=0.01, beta=1, **COMMON), FACTOR, F32_MP),
    ("lamb", "lamb", dict(learning_rate=0.05, **COMMON), FACTOR, ALL),
    ("lamb_bounds", "lamb", dict(learning_rate=0.05, lower_bound=0.5, upper_bound=1.5,
                                 bias_correction=False, **COMMON), COSINE, ALL),
    ("groupadagrad", "groupadagrad", dict(learning_rate=0.05, rescale_grad=0.7,
                                          clip_gradient=0.5), FACTOR, F32_MP),
    ("test", "test", dict(rescale_grad=0.7), None, ALL),
]


def leaves(state):
    if state is None:
        return []
    if isinstance(state, mx.nd.NDArray):
        return [state]
    out = []
    for s in state:
        out.extend(leaves(s))
    return out


def structure(state):
    if state is None:
        return None
    if isinstance(state, mx.nd.NDArray):
        return "a"
    return [structure(s) for s in state]


def run(scn, opt_name, kwargs, sched, dtype, mode, rng):
    shapes = [(4, 5), (6, 1), (3, 4)] if opt_name == "groupadagrad" else SHAPES
    mp = dtype == "float16"
    kw = dict(kwargs)
    if mp:
        kw["multi_precision"] = True
    params = {0: FakeParam(1.0, 1.0), 1: FakeParam(0.5, 0.0), 2: FakeParam(2.0, 2.0)}
    if opt_name == "groupadagrad":
        params = {0: FakeParam(1.0, 1.0), 1: FakeParam(0.5, 1.0), 2: FakeParam(2.0, 1.0)}
    opt = mx.optimizer.create(opt_name, lr_scheduler=make_sched(sched), param_dict=params,
                              param_idx2name=dict(enumerate(NAMES)), **kw)
    upd = mx.optimizer.get_updater(opt)
    w0 = [rng.standard_normal(s).astype(dtype) for s in shapes]
    ws = [mx.nd.array(w, dtype=dtype) for w in w0]
    rec = {}
    for i, w in enumerate(w0):
        rec[f"w0_{i}"] = w
    for step in range(STEPS):
        if step == 4:
            params[1].lr_mult = 1.5          # read live from param_dict
            opt.rescale_grad = opt.rescale_grad * 0.5   # e.g. a smaller last batch
        gs = [(rng.standard_normal(s) * 1.5).astype(dtype) for s in shapes]
        for i, g in enumerate(gs):
            rec[f"g{step}_{i}"] = g
        grads = [mx.nd.array(g, dtype=dtype) for g in gs]
        if mode == "list":
            upd(list(range(len(ws))), grads, ws)
        else:
            for i in range(len(ws)):
                upd(i, grads[i], ws[i])
        for i, w in enumerate(ws):
            rec[f"w{step + 1}_{i}"] = w.asnumpy()
    struct = []
    for i in range(len(ws)):
        st = upd.states[i]
        struct.append(structure(st))
        for j, leaf in enumerate(leaves(st)):
            rec[f"s_{i}_{j}"] = leaf.asnumpy()
    meta = {"scenario": scn, "optimizer": opt_name, "kwargs": kwargs, "sched": sched,
            "dtype": dtype, "mode": mode, "shapes": shapes, "steps": STEPS,
            "state_structure": struct, "num_update": opt.num_update,
            "names": NAMES, "lr_mult": [1.0, 0.5, 2.0], "wd_mult": [
                p.wd_mult for p in [FakeParam(1.0, 1.0), FakeParam(0.5, 0.0),
                                    FakeParam(2.0, 2.0)]]}
    if opt_name == "groupadagrad":
        meta["wd_mult"] = [1.0, 1.0, 1.0]
    if opt_name == "nadam":
        meta["m_schedule"] = opt.m_schedule
    return meta, rec


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(1234)
    metas = []
    arrays = {}
    for scn, name, kwargs, sched, dtypes in SCENARIOS:
        for dtype in dtypes:
            modes = ["list", "single"] if (scn in ("sgd", "adam", "lars") and
                                           dtype == "float32") else ["list"]
            for mode in modes:
                key = f"{scn}-{dtype}-{mode}"
                meta, rec = run(scn, name, kwargs, sched, dtype, mode, rng)
                meta["key"] = key
                metas.append(meta)
                for k, v in rec.items():
                    arrays[f"{key}/{k}"] = v
    for dtype in ALL:   # one file per dtype keeps each well under 1 MB
        part = {k: v for k, v in arrays.items() if k.split("/")[0].split("-")[1] == dtype}
        np.savez_compressed(os.path.join(OUT, f"updates_{dtype}.npz"), **part)
    with open(os.path.join(OUT, "updates.json"), "w") as f:
        json.dump(metas, f, indent=1)
    print("wrote", len(metas), "update scenarios")


def schedule_fixtures():
    """Learning-rate schedules: the value at every num_update, and out of order."""
    scheds = [
        ("FactorScheduler", dict(step=3, factor=0.5, stop_factor_lr=1e-3, base_lr=0.1)),
        ("FactorScheduler", dict(step=2, factor=0.9, base_lr=0.1, warmup_steps=5,
                                 warmup_begin_lr=0.01)),
        ("FactorScheduler", dict(step=2, factor=0.9, base_lr=0.1, warmup_steps=4,
                                 warmup_begin_lr=0.02, warmup_mode="constant")),
        ("MultiFactorScheduler", dict(step=[3, 7, 12], factor=0.5, base_lr=0.2)),
        ("MultiFactorScheduler", dict(step=[5, 9], factor=0.3, base_lr=0.2, warmup_steps=3,
                                      warmup_begin_lr=0.05)),
        ("PolyScheduler", dict(max_update=15, base_lr=0.1, pwr=2, final_lr=0.001)),
        ("PolyScheduler", dict(max_update=15, base_lr=0.1, pwr=1.5, warmup_steps=4,
                               warmup_begin_lr=0.01)),
        ("CosineScheduler", dict(max_update=15, base_lr=0.1, final_lr=0.002)),
        ("CosineScheduler", dict(max_update=15, base_lr=0.1, warmup_steps=5,
                                 warmup_begin_lr=0.001, warmup_mode="linear")),
        # long schedules: the order of each floating-point operation shows in the last bit
        ("CosineScheduler", dict(max_update=300, base_lr=0.1, final_lr=1e-4, warmup_steps=7,
                                 warmup_begin_lr=0.003)),
        ("PolyScheduler", dict(max_update=300, base_lr=0.1, pwr=0.7, final_lr=1e-4,
                               warmup_steps=7, warmup_begin_lr=0.003)),
    ]
    out = []
    for kind, kw in scheds:
        s = getattr(mx.lr_scheduler, kind)(**kw)
        vals = [s(n) for n in range(0, 22 if kw["max_update"] < 100 else 310)] \
            if "max_update" in kw else [s(n) for n in range(0, 22)]
        # a second scheduler queried out of order (the classes keep state)
        s2 = getattr(mx.lr_scheduler, kind)(**kw)
        order = [0, 10, 4, 18, 2, 20, 7]
        vals2 = [s2(n) for n in order]
        out.append({"kind": kind, "kwargs": kw, "values": vals, "order": order,
                    "values_order": vals2})
    with open(os.path.join(OUT, "lr_scheduler.json"), "w") as f:
        json.dump(out, f, indent=1)
    print("wrote", len(out), "schedules")


# The Updater's order of work: MXNet groups an aggregating optimizer's indices by dtype (in
# chunks of aggregate_num, each chunk counted and given its learning rates before the next),
# and updates the others one index at a time in call order. Nadam's schedule product and a
# learning-rate schedule under uneven update counts both show that order.
ORDER_SCENARIOS = [
    # name, optimizer, kwargs, scheduler, dtypes, calls (lists of indices, one per step)
    ("nadam_mixed", "nadam", dict(learning_rate=0.1), None,
     ["float64", "float32", "float64"], [[0, 1, 2], [2, 0, 1], [0, 1, 2]]),
    ("nadam_mp", "nadam", dict(learning_rate=0.1, multi_precision=True), None,
     ["float16", "float32", "float16", "float32"], [[0, 1, 2, 3]] * 3),
    ("adam_mp", "adam", dict(learning_rate=0.1, multi_precision=True), None,
     ["float16", "float32", "float16", "float32"], [[0, 1, 2, 3]] * 3),
    ("sgd_mp", "sgd", dict(learning_rate=0.1, momentum=0.9, multi_precision=True), None,
     ["float16", "float32", "float16", "float32"], [[0, 1, 2, 3]] * 3),
    ("lamb_mixed", "lamb", dict(learning_rate=0.1), None,
     ["float32", "float64", "float32"], [[0, 1, 2], [1, 2, 0]]),
    ("sgd_uneven_counts", "sgd", dict(learning_rate=0.1, momentum=0.9),
     ("FactorScheduler", dict(step=1, factor=0.5)), ["float32"] * 6,
     [[4, 5], [4, 5], [0, 1, 2, 3, 4, 5], [5, 0, 1, 2, 3, 4]]),
    ("adam_uneven_counts", "adam", dict(learning_rate=0.1),
     ("FactorScheduler", dict(step=1, factor=0.5)), ["float32"] * 6,
     [[4, 5], [4, 5], [0, 1, 2, 3, 4, 5], [5, 0, 1, 2, 3, 4]]),
]


def order_fixtures():
    out = []
    for name, opt_name, kw, sched, dtypes, calls in ORDER_SCENARIOS:
        kwargs = dict(kw)
        if sched is not None:
            kwargs["lr_scheduler"] = getattr(mx.lr_scheduler, sched[0])(**sched[1])
        opt = mx.optimizer.create(opt_name, **kwargs)
        upd = mx.optimizer.get_updater(opt)
        ws = [mx.nd.ones((2,), dtype=d) * (k + 1) for k, d in enumerate(dtypes)]
        steps = []
        for s, idx in enumerate(calls):
            gs = [mx.nd.ones((2,), dtype=dtypes[i]) * (0.5 + s + 0.25 * i) for i in idx]
            upd(list(idx), gs, [ws[i] for i in idx])
            steps.append([w.asnumpy().astype(np.float64).tolist() for w in ws])
        out.append({"name": name, "optimizer": opt_name, "kwargs": kw,
                    "sched": list(sched) if sched else None, "dtypes": dtypes,
                    "calls": calls, "weights": steps, "num_update": opt.num_update})
    with open(os.path.join(OUT, "updater_order.json"), "w") as f:
        json.dump(out, f, indent=1)
    print("wrote", len(out), "Updater order scenarios")


PARTS = {"updates": main, "schedules": schedule_fixtures, "order": order_fixtures}

if __name__ == "__main__":
    # --only updates|schedules|order (any of them): regenerate just those files
    only = sys.argv[sys.argv.index("--only") + 1:] if "--only" in sys.argv else list(PARTS)
    for part in only:
        PARTS[part]()
