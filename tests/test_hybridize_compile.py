"""hybridize(compile=...): the captured graph run through torch.compile (Inductor).

Compiling is slow on a small CPU machine (seconds per graph with a warm Inductor cache,
tens of seconds cold), so the default suite compiles one tiny model; the rest run with
NEOGLUON_COMPILE_TESTS=1.
"""
import os
import warnings

import numpy as np
import pytest

import neogluon as mx
from neogluon import autograd, gluon, nd
from neogluon.base import MXNetError
from neogluon.gluon import _compile, nn

slow = pytest.mark.skipif(not os.environ.get("NEOGLUON_COMPILE_TESTS"),
                          reason="compiles several graphs; set NEOGLUON_COMPILE_TESTS=1")


def _variants(net):
    out = []
    for g in net._graphs.values():
        gc = g.__dict__.get("_ng_compile")
        if gc is not None:
            out += [v.state for v in gc.variants.values()]
    return out


def _mlp_bn():
    net = nn.HybridSequential()
    net.add(nn.Dense(8, activation="relu"), nn.BatchNorm(), nn.Dense(3))
    return net


def _conv_net():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3, activation="relu"), nn.BatchNorm(), nn.MaxPool2D(2, 2),
            nn.Dropout(0.5), nn.Flatten(), nn.Dense(5))
    return net


def _train(make, x, y, compile_mode, steps=3, seed=1, each=None, **hyb):
    mx.random.seed(seed)
    net = make()
    net.initialize(mx.init.Xavier())
    if compile_mode is not None:
        net.hybridize(compile=compile_mode, **hyb)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1,
                                                          "momentum": 0.9})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    losses = []
    for step in range(steps):
        if each is not None:
            each(net, step)
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(x.shape[0])
        losses.append(loss.asnumpy())
    params = [p.data().asnumpy() for p in net.collect_params().values()]
    return net, losses, params


def test_mode_argument_checked():
    net = _mlp_bn()
    with pytest.raises(MXNetError, match="compile='fast'"):
        net.hybridize(compile="fast")
    assert _compile.check_mode("eager") == "off"
    prev = _compile.set_compile_mode("sync")
    try:
        assert _compile.get_compile_mode() == "sync"
    finally:
        _compile.set_compile_mode(prev)
    assert _compile.get_compile_mode() == prev


def test_off_mode_replays_without_compiling():
    x = nd.random.uniform(shape=(4, 5))
    net = _mlp_bn()
    net.initialize()
    net.hybridize(compile="off")
    for _ in range(3):
        net(x)
    assert _variants(net) == []


def test_untraceable_forward_falls_back_with_one_warning():
    # boolean_mask has a data-dependent output shape: the capture works, make_fx cannot
    # trace it. The block keeps replaying its graph, with the same numbers, and warns once.
    class Masked(nn.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.dense = nn.Dense(4)

        def hybrid_forward(self, F, x, m):
            return F.contrib.boolean_mask(self.dense(x), m)

    net = Masked()
    net.initialize()
    x = nd.random.uniform(shape=(5, 3))
    m = nd.array([1, 0, 1, 1, 0])
    ref = net(x, m).asnumpy()
    net.hybridize(compile="sync")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        outs = [net(x, m).asnumpy() for _ in range(4)]
    msgs = [str(w.message) for w in rec if "could not compile" in str(w.message)]
    assert len(msgs) == 1 and "'masked" in msgs[0], msgs
    for o in outs:
        np.testing.assert_allclose(o, ref, rtol=1e-6, atol=1e-6)
    assert net._compile_failed is not None
    net.hybridize(compile="sync")        # re-hybridize clears the failure
    assert net._compile_failed is None


def test_compiled_training_matches_imperative():
    x = nd.random.uniform(shape=(6, 5))
    y = nd.array([0, 1, 2, 0, 1, 2])
    _, ref_l, ref_p = _train(_mlp_bn, x, y, None, steps=3)
    net, l, p = _train(_mlp_bn, x, y, "sync", steps=3)
    assert "ready" in _variants(net)
    for a, b in zip(ref_l, l):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    # includes BatchNorm's moving mean/var, updated from the compiled graph's outputs
    for a, b in zip(ref_p, p):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


@slow
def test_conv_forward_and_gradients_eval_mode():
    mx.random.seed(3)
    net = _conv_net()
    net.initialize(mx.init.Xavier())
    x = nd.random.uniform(shape=(2, 3, 8, 8))
    net(x)
    params = list(net.collect_params().values())

    def run():
        x.attach_grad()
        with autograd.record(train_mode=False):
            out = net(x)
            s = (out * out).sum()
        s.backward()
        return ([out.asnumpy(), x.grad.asnumpy()]
                + [p.grad().asnumpy() for p in params if p.grad_req != "null"])

    ref = run()
    net.hybridize(compile="sync")
    run()                       # capture
    got = run()                 # compiled
    assert _variants(net) == ["ready"]
    for a, b in zip(ref, got):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


@slow
def test_new_shape_recompiles_and_static_shape():
    mx.random.seed(0)
    net = _mlp_bn()
    net.initialize()
    x1, x2 = nd.random.uniform(shape=(4, 5)), nd.random.uniform(shape=(7, 5))
    ref1, ref2 = net(x1).asnumpy(), net(x2).asnumpy()
    net.hybridize(compile="sync", static_alloc=True, static_shape=True)
    for x, ref in ((x1, ref1), (x2, ref2), (x1, ref1), (x2, ref2)):
        np.testing.assert_allclose(net(x).asnumpy(), ref, rtol=1e-5, atol=1e-6)
    assert _variants(net) == ["ready", "ready"]
    # cast: the graphs (and their compiled variants) are dropped and made again
    net.cast("float64")
    out = net(x1.astype("float64"))
    assert out.dtype == np.float64 and _variants(net) == []
    net(x1.astype("float64"))
    assert _variants(net) == ["ready"]


@slow
def test_auto_mode_switches_after_background_compile():
    import time
    x = nd.random.uniform(shape=(6, 5))
    y = nd.array([0, 1, 2, 0, 1, 2])
    _, ref_l, ref_p = _train(_mlp_bn, x, y, None, steps=12)
    seen = []

    def wait_for_compile(net, step):
        # replayed steps first; then wait for the background compile and go on compiled
        seen.append(tuple(_variants(net)))
        if step == 6:
            deadline = time.time() + 300
            while "ready" not in _variants(net) and time.time() < deadline:
                time.sleep(0.2)

    net, l, p = _train(_mlp_bn, x, y, "auto", steps=12, each=wait_for_compile)
    assert seen[0] == () and "ready" in _variants(net)
    for a, b in zip(ref_l, l):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    for a, b in zip(ref_p, p):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


@slow
def test_dropout_training_same_masks_as_imperative():
    def make():
        net = nn.HybridSequential()
        net.add(nn.Dense(8), nn.Dropout(0.5), nn.Dense(3))
        return net
    x = nd.random.uniform(shape=(6, 5))
    y = nd.array([0, 1, 2, 0, 1, 2])
    _, ref_l, ref_p = _train(make, x, y, None, steps=4)
    net, l, p = _train(make, x, y, "sync", steps=4)
    assert "ready" in _variants(net)
    for a, b in zip(ref_l + ref_p, l + p):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
