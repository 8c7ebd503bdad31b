"""Winograd F(2x2, 3x3) convolutions (neogluon/ndarray/_conv_winograd.py): the forward and both
gradients equal float64 direct convolution to float32 accuracy, the input gradient reuses the
forward's transformed weight, the way is taken only where it applies, and chosen per shape
among oneDNN's and the matrix products by timing (neogluon/ndarray/_conv_gemm.py)."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import neogluon as mx
from neogluon.ndarray import _conv_gemm as G
from neogluon.ndarray import _conv_winograd as W

pytestmark = pytest.mark.skipif(W._LIB.get() is None, reason="no C compiler")

# (batch, in channels, out channels, height, width)
SHAPES = [(2, 3, 5, 5, 7), (16, 64, 64, 16, 16), (3, 8, 4, 1, 1), (2, 16, 32, 2, 3),
          (1, 1, 1, 3, 3), (4, 128, 16, 9, 4), (2, 96, 80, 2, 2)]


def _rel_err(got, want):
    return float((got.double() - want).abs().max() / want.abs().max().clamp_min(1e-30))


@pytest.mark.parametrize("n, c, o, h, w", SHAPES)
def test_forward_and_gradients_equal_float64(n, c, o, h, w):
    g = torch.Generator().manual_seed(n * 1000 + c)
    x = torch.randn(n, c, h, w, generator=g, dtype=torch.float64, requires_grad=True)
    k = torch.randn(o, c, 3, 3, generator=g, dtype=torch.float64, requires_grad=True)
    b = torch.randn(o, generator=g, dtype=torch.float64, requires_grad=True)
    y = F.conv2d(x, k, b, 1, 1)
    gy = torch.randn(y.shape, generator=g, dtype=torch.float64)
    gx, gk = torch.autograd.grad(y, (x, k), gy)
    xf, kf, bf, gyf = x.detach().float(), k.detach().float(), b.detach().float(), gy.float()
    y32, v, u = W.forward(xf, kf, bf)
    direct = F.conv2d(xf, kf, bf, 1, 1)
    assert y32.shape == y.shape and y32.dtype == torch.float32
    # as accurate as float32 direct convolution (within a small factor)
    bound = max(4 * _rel_err(direct, y.detach()), 2e-6)
    assert _rel_err(y32, y.detach()) <= bound
    gx32 = W.dgrad(gyf.contiguous(), xf.shape, kf, u)
    assert torch.equal(gx32, W.dgrad(gyf.contiguous(), xf.shape, kf))   # U reused or not
    assert _rel_err(gx32, gx) <= 2e-6
    gk32 = W.wgrad(gyf.contiguous(), xf, kf.shape, v)
    assert torch.equal(gk32, W.wgrad(gyf.contiguous(), xf, kf.shape))   # V kept or not
    assert _rel_err(gk32, gk) <= 2e-6


def test_eligible_only_where_it_applies(monkeypatch):
    x, w = torch.zeros(2, 8, 6, 6), torch.zeros(4, 8, 3, 3)
    assert W.eligible(x, w, (1, 1), (1, 1))
    assert not W.eligible(x, w, (2, 2), (1, 1))                          # stride
    assert not W.eligible(x, w, (1, 1), (0, 0))                          # padding
    assert not W.eligible(x, torch.zeros(4, 8, 5, 5), (1, 1), (1, 1))    # kernel
    assert not W.eligible(x.double(), w.double(), (1, 1), (1, 1))        # float64
    assert not W.eligible(torch.zeros(2, 8, 6, 5000), w, (1, 1), (1, 1))  # wider than a row
    monkeypatch.setattr(W, "_MAX_TILES", 16 * 8 * 18 - 1)                # V too large
    assert not W.eligible(x, w, (1, 1), (1, 1))
    monkeypatch.setattr(W, "_MAX_TILES", 16 * 8 * 18)
    assert W.eligible(x, w, (1, 1), (1, 1))
    monkeypatch.setattr(W._LIB, "enabled", False)                        # switched off
    assert not W.eligible(x, w, (1, 1), (1, 1))
    assert not G.usable(torch.zeros(2, 8, 16, 16), torch.zeros(8, 8, 3, 3), (1, 1), (1, 1),
                        (1, 1), 1)


def _counting(monkeypatch):
    calls = {"forward": 0, "wgrad": 0, "dgrad": 0}
    for kind in calls:
        real = getattr(W, kind)

        def counted(*a, _real=real, _kind=kind, **k):
            calls[_kind] += 1
            return _real(*a, **k)
        monkeypatch.setattr(W, kind, counted)
    return calls


def _data():
    g = torch.Generator().manual_seed(5)
    return (torch.randn(4, 32, 6, 6, generator=g), torch.randn(24, 32, 3, 3, generator=g),
            torch.randn(24, generator=g), torch.randn(4, 24, 6, 6, generator=g))


def _check(x, w, b, gy):
    X, Wt, B = (mx.nd.array(a.numpy()) for a in (x, w, b))
    for a in (X, Wt, B):
        a.attach_grad()
    with mx.autograd.record():
        Y = mx.nd.Convolution(X, Wt, B, kernel=(3, 3), pad=(1, 1), num_filter=w.shape[0])
    Y.backward(mx.nd.array(gy.numpy()))
    xd, wd, bd = (a.double().requires_grad_() for a in (x, w, b))
    yd = F.conv2d(xd, wd, bd, 1, 1)
    yd.backward(gy.double())
    for got, want in ((Y, yd.detach()), (X.grad, xd.grad), (Wt.grad, wd.grad),
                      (B.grad, bd.grad)):
        np.testing.assert_allclose(got.asnumpy(), want.numpy(), rtol=1e-4, atol=1e-4)


def test_fixed_winograd_mode_keeps_v_for_the_weight_gradient(monkeypatch):
    monkeypatch.setenv("NEOGLUON_CONV_WGRAD", "winograd")
    monkeypatch.setattr(G, "_choice", {})
    calls = _counting(monkeypatch)
    seen = []
    real_wgrad = W.wgrad
    monkeypatch.setattr(W, "wgrad", lambda g, x, s, v=None: seen.append(v is not None)
                        or real_wgrad(g, x, s, v))
    _check(*_data())
    assert calls["forward"] == 1 and calls["dgrad"] == 1 and calls["wgrad"] == 1
    assert seen == [True]           # the forward's V, not a second transform
    assert not G._choice


@pytest.mark.parametrize("winner", ["winograd", "onednn"])
def test_auto_measures_winograd_against_onednn(winner, monkeypatch):
    monkeypatch.setenv("NEOGLUON_CONV_WGRAD", "auto")
    monkeypatch.setattr(G, "_choice", {})
    monkeypatch.setattr(G, "_timed", lambda fn, which: (0.1 if which == winner else 1.0, fn()))
    calls = _counting(monkeypatch)
    data = _data()
    _check(*data)
    key = ((4, 32, 6, 6), (24, 32, 3, 3), (1, 1), (1, 1), torch.get_num_threads())
    if winner == "winograd":
        # the weight gradient takes the forward's kept V, unmeasured
        assert G._choice == {("forward",) + key: "winograd", ("dgrad",) + key: "winograd"}
        assert calls == {"forward": 4, "dgrad": 4, "wgrad": 1}
    else:
        assert G._choice == {(k,) + key: "onednn" for k in ("forward", "dgrad", "wgrad")}
        assert calls == {"forward": 4, "dgrad": 4, "wgrad": 4}
    calls.update(forward=0, wgrad=0, dgrad=0)
    _check(*data)                   # nothing measured again
    assert calls == ({"forward": 1, "dgrad": 1, "wgrad": 1} if winner == "winograd" else
                     {"forward": 0, "dgrad": 0, "wgrad": 0})


def test_twice_differentiable_in_winograd_mode(monkeypatch):
    monkeypatch.setenv("NEOGLUON_CONV_WGRAD", "winograd")
    g = torch.Generator().manual_seed(2)
    x = torch.randn(3, 16, 5, 5, generator=g)
    w = torch.randn(5, 16, 3, 3, generator=g)
    X, Wt = mx.nd.array(x.numpy()), mx.nd.array(w.numpy())
    X.attach_grad()
    Wt.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Convolution(X, Wt, kernel=(3, 3), pad=(1, 1), num_filter=5, no_bias=True)
        gx = mx.autograd.grad((y * y).sum(), [X], create_graph=True, retain_graph=True)[0]
        z = (gx * gx).sum()
    z.backward()
    xd, wd = x.double().requires_grad_(), w.double().requires_grad_()
    yd = F.conv2d(xd, wd, None, 1, 1)
    gxd, = torch.autograd.grad((yd * yd).sum(), [xd], create_graph=True)
    (gxd * gxd).sum().backward()
    np.testing.assert_allclose(Wt.grad.asnumpy(), wd.grad.numpy(), rtol=1e-4, atol=1e-2)


def test_hybridized_net_trains_the_same_as_onednn(monkeypatch):
    def run(mode):
        monkeypatch.setenv("NEOGLUON_CONV_WGRAD", mode)
        mx.random.seed(4)
        net = mx.gluon.nn.HybridSequential()
        net.add(mx.gluon.nn.Conv2D(16, 3, padding=1, in_channels=32),
                mx.gluon.nn.BatchNorm(), mx.gluon.nn.Activation("relu"),
                mx.gluon.nn.Conv2D(8, 3, padding=1, in_channels=16, use_bias=False),
                mx.gluon.nn.Dense(3))
        net.initialize(mx.init.Xavier())
        net.hybridize(static_alloc=True, static_shape=True)
        tr = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1,
                                                            "momentum": 0.9})
        x = mx.nd.array(np.random.RandomState(0).normal(size=(4, 32, 7, 6)))
        y = mx.nd.array([0, 1, 2, 1])
        lf = mx.gluon.loss.SoftmaxCrossEntropyLoss()
        for _ in range(3):
            with mx.autograd.record():
                loss = lf(net(x), y)
            loss.backward()
            tr.step(4)
        return [p.data().asnumpy() for p in net.collect_params().values()]

    calls = _counting(monkeypatch)
    got = run("winograd")
    assert calls == {"forward": 6, "dgrad": 3, "wgrad": 6}   # 2 convolutions, 3 steps
    for a, b in zip(got, run("onednn")):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
