"""One worker: the Trainer with gradient buckets reduced during backward
(NEOGLUON_DIST_OVERLAP=1) against the same run without, in this same worker."""
import json
import os

import numpy as np

import mxnet as mx
from mxnet import autograd, gluon

kv0 = mx.kv.create("dist_sync")
r, n = kv0.rank, kv0.num_workers


def build():
    net = gluon.nn.Sequential()
    net.add(gluon.nn.Dense(16, in_units=8, activation="relu"), gluon.nn.Dense(8, in_units=16),
            gluon.nn.Dense(3, in_units=8))
    unused = gluon.nn.Dense(2, in_units=2)  # a Parameter set that backward never reaches
    net.initialize(mx.init.Zero())
    unused.initialize(mx.init.One())
    rng = np.random.RandomState(0)
    params = list(net.collect_params().values()) + list(unused.collect_params().values())
    for p in params:
        p.set_data(mx.nd.array(rng.uniform(-0.5, 0.5, p.shape).astype(np.float32)))
    return net, params


def run(overlap, uok, modify_at):
    os.environ["NEOGLUON_DIST_OVERLAP"] = "1" if overlap else "0"
    net, params = build()
    tr = gluon.Trainer(params, "adam", {"learning_rate": 0.05}, kvstore=mx.kv.create("dist_sync"),
                       update_on_kvstore=uok)
    loss_fn = gluon.loss.L2Loss()
    for step in range(6):
        rng = np.random.RandomState(10 * step + r)
        x = mx.nd.array(rng.randn(4, 8).astype(np.float32))
        y = mx.nd.array(rng.randn(4, 3).astype(np.float32))
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        if step == modify_at:
            for p in params[:2]:
                p.grad()[:] *= 0.5  # changed after backward: the overlapped sums must not be used
        tr.step(4, ignore_stale_grad=True)
    w = np.concatenate([p.data().asnumpy().ravel() for p in params])
    used = tr._overlap.used if tr._overlap is not None else 0
    return w, used


out = {"rank": r}
for uok in (True, False):
    base, _ = run(False, uok, modify_at=3)
    got, used = run(True, uok, modify_at=3)
    out[f"diff_{uok}"] = float(np.abs(base - got).max())
    out[f"used_{uok}"] = used
print(json.dumps(out), flush=True)
