"""One worker of a dist_sync job: a Trainer on the distributed store against a one-process
Trainer that sees the whole global batch (computed in this same worker).

argv: state_dir case [case ...], each case ``optimizer:update_on_kvstore(T/F):contexts``
(optionally ``:2bit`` for gradient compression). Prints one JSON line per case: the max
difference from the one-process run, the difference of a run resumed from a checkpoint, the
optimizer-state elements this rank holds, and a checksum of the final weights.
"""
import json
import sys

import numpy as np

import mxnet as mx
from mxnet import autograd, gluon

OPTS = {"sgd": {"momentum": 0.9, "wd": 1e-4}, "nag": {"momentum": 0.9},
        "adam": {}, "adagrad": {}, "rmsprop": {}, "ftrl": {}, "signum": {"momentum": 0.9},
        "lamb": {}, "adadelta": {}}
kv = mx.kv.create("dist_sync")
r, n = kv.rank, kv.num_workers
BATCH = 12


def build(ctxs):
    net = gluon.nn.Sequential()
    net.add(gluon.nn.Dense(6, in_units=4, activation="tanh"), gluon.nn.Dense(3, in_units=6))
    net.initialize(mx.init.Zero(), ctx=ctxs)
    rng = np.random.RandomState(0)
    for p in net.collect_params().values():
        p.set_data(mx.nd.array(rng.uniform(-0.5, 0.5, p.shape).astype(np.float32)))
    return net


def batch(step):
    rng = np.random.RandomState(100 + step)
    return (rng.uniform(-1, 1, (BATCH, 4)).astype(np.float32),
            rng.uniform(-1, 1, (BATCH, 3)).astype(np.float32))


def train_step(net, tr, x, y, ctxs):
    loss_fn = gluon.loss.L2Loss()
    xs = np.array_split(x, len(ctxs))
    ys = np.array_split(y, len(ctxs))
    with autograd.record():
        losses = [loss_fn(net(mx.nd.array(a, ctx=c)), mx.nd.array(b, ctx=c))
                  for a, b, c in zip(xs, ys, ctxs)]
    autograd.backward(losses)
    tr.step(BATCH)


def params(opt):
    d = {"learning_rate": 0.1}
    d.update(OPTS[opt])
    return d


def numel(s):
    if s is None:
        return 0
    if isinstance(s, (list, tuple)):
        return sum(numel(x) for x in s)
    return int(np.prod(s.shape)) if hasattr(s, "shape") else 0


def run_case(opt_name, uok, nctx, comp, state_file, case):
    compression = {"type": "2bit", "threshold": 0.01} if comp else None
    ctxs = [mx.cpu(i) for i in range(nctx)]
    net = build(ctxs)
    store = mx.kv.create("dist_sync")
    tr = gluon.Trainer(net.collect_params(), opt_name, params(opt_name), kvstore=store,
                       update_on_kvstore=uok, compression_params=compression)
    ref = build([mx.cpu(0)])
    ref_tr = gluon.Trainer(ref.collect_params(), opt_name, params(opt_name), kvstore=None)
    mine = np.array_split(np.arange(BATCH), n)[r]
    for step in range(4):
        x, y = batch(step)
        if step == 2:
            calls_before = store.comm_stats["calls"]
        train_step(net, tr, x[mine], y[mine], ctxs)
        train_step(ref, ref_tr, x, y, [mx.cpu(0)])
        if step == 1:
            tr.save_states(state_file)  # collective: every worker writes the gathered states
            net.save_parameters(f"{state_file}.{r}.params")
    per_step = (store.comm_stats["calls"] - calls_before) / 2
    diff = max(float(np.abs(a.data(c).asnumpy() - b.data().asnumpy()).max())
               for a, b in zip(net.collect_params().values(), ref.collect_params().values())
               for c in ctxs)
    assert tr._update_on_kvstore is uok

    # resume from the checkpoint taken after step 2: the same numbers as the uninterrupted run
    net2 = build(ctxs)
    net2.load_parameters(f"{state_file}.{r}.params", ctx=ctxs)
    tr2 = gluon.Trainer(net2.collect_params(), opt_name, params(opt_name),
                        kvstore=mx.kv.create("dist_sync"), update_on_kvstore=uok,
                        compression_params=compression)
    tr2.load_states(state_file)
    for step in range(2, 4):
        x, y = batch(step)
        train_step(net2, tr2, x[mine], y[mine], ctxs)
    resume_diff = max(float(np.abs(a.data(c).asnumpy() - b.data(c).asnumpy()).max())
                      for a, b in zip(net.collect_params().values(), net2.collect_params().values())
                      for c in ctxs)

    if uok:
        states = tr._kvstore._updater.states
    else:
        states = tr._updaters[0].states

    held = sum(numel(s) for s in states.values())
    total = sum(int(np.prod(p.shape)) for p in net.collect_params().values())
    w = np.concatenate([p.data().asnumpy().ravel() for p in net.collect_params().values()])
    print(json.dumps({"case": case, "rank": r, "diff": diff, "resume_diff": resume_diff, "held": held,
                      "total": total, "checksum": float(np.float64(w).sum()),
                      "calls_per_step": per_step}), flush=True)


state_dir = sys.argv[1]
for case in sys.argv[2:]:
    parts = case.split(":")
    run_case(parts[0], parts[1] == "T", int(parts[2]), parts[3:] == ["2bit"],
             f"{state_dir}/{case.replace(':', '_')}.states", case)
