"""Trainer.step's C-level fast path must give exactly what the per-Parameter loop gives."""
import numpy as np
import pytest

import neogluon as mx
from neogluon import autograd, gluon, nd
from neogluon.gluon import nn


def _net(seed, ctxs):
    mx.random.seed(seed)
    net = nn.HybridSequential(prefix="fp_")
    with net.name_scope():
        net.add(nn.Dense(8, activation="relu", in_units=5), nn.Dense(3, in_units=8))
    net.initialize(mx.init.Xavier(), ctx=ctxs)
    return net


def _train(force_slow, ctxs, optimizer, monkeypatch, steps=3, null_param=False):
    net = _net(7, ctxs)
    if null_param:
        net[0].bias.grad_req = "null"
    trainer = gluon.Trainer(net.collect_params(), optimizer,
                            {"learning_rate": 0.1, "wd": 1e-3, "momentum": 0.9}
                            if optimizer == "sgd" else {"learning_rate": 0.01, "wd": 1e-3},
                            update_on_kvstore=False)
    taken = []
    orig = gluon.Trainer._fast_update

    def spy(self):
        if force_slow:
            taken.append(False)
            return False
        ok = orig(self)
        taken.append(ok)
        return ok

    monkeypatch.setattr(gluon.Trainer, "_fast_update", spy)
    rng = np.random.RandomState(0)
    loss_fn = gluon.loss.L2Loss()
    for _ in range(steps):
        x = nd.array(rng.randn(8, 5).astype(np.float32))
        y = nd.array(rng.randn(8, 3).astype(np.float32))
        xs = gluon.utils.split_and_load(x, ctxs)
        ys = gluon.utils.split_and_load(y, ctxs)
        with autograd.record():
            losses = [loss_fn(net(a), b) for a, b in zip(xs, ys)]
        for ls in losses:
            ls.backward()
        trainer.step(8)
    monkeypatch.undo()
    weights = {k: [d.asnumpy() for d in p.list_data()]
               for k, p in net.collect_params().items()}
    return weights, taken


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
@pytest.mark.parametrize("nctx", [1, 2])
def test_fast_path_matches_loop_bitwise(optimizer, nctx, monkeypatch):
    ctxs = [mx.cpu(i) for i in range(nctx)]
    fast, taken_fast = _train(False, ctxs, optimizer, monkeypatch)
    slow, _ = _train(True, ctxs, optimizer, monkeypatch)
    assert taken_fast == [True] * 3  # the fast path really ran
    assert fast.keys() == slow.keys()
    for k in fast:
        for a, b in zip(fast[k], slow[k]):
            np.testing.assert_array_equal(a, b, err_msg=k)


def test_fast_path_declines_null_grad_req(monkeypatch):
    ctxs = [mx.cpu(0)]
    fast, taken = _train(False, ctxs, "sgd", monkeypatch, null_param=True)
    slow, _ = _train(True, ctxs, "sgd", monkeypatch, null_param=True)
    assert taken == [False] * 3  # a Parameter with grad_req='null' takes the loop
    for k in fast:
        np.testing.assert_array_equal(fast[k][0], slow[k][0], err_msg=k)


def test_stale_gradient_still_raises_and_names_parameter():
    net = _net(3, [mx.cpu(0)])
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    x = nd.ones((2, 5))
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    trainer.step(2)
    # no new backward: every gradient is stale, the fast path declines, and the loop raises
    # for the first Parameter in MXNet's (sorted-name) order
    with pytest.raises(UserWarning, match="fp_dense0_bias"):
        trainer.step(2)
    trainer.step(2, ignore_stale_grad=True)  # skipped quietly
