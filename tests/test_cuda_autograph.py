"""Plain ``hybridize()`` on a GPU records CUDA graphs by itself (issue 32): real graphs.

Each test runs one network hybridized plainly (automatic CUDA graphs) and a copy with
``hybridize(cuda_graphs=False)`` from the same initial values, and asserts that graphs were
recorded and replayed and that the numbers agree. The policy itself and the replay logic are
tested on CPU (tests/test_autograph_policy.py, tests/test_autograph_replay.py); this file
skips without CUDA (tools/gpu_check.sh runs it on a lent GPU machine).
"""
import gc
import warnings

import numpy as np
import pytest
import torch

import neogluon as mx
from neogluon import autograd, gluon, nd
from neogluon.gluon import _cudagraph, nn

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

GPU = mx.gpu(0) if torch.cuda.is_available() else None
K = _cudagraph.AUTO_AFTER


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.delenv("NEOGLUON_CUDA_GRAPHS", raising=False)
    monkeypatch.delenv("NEOGLUON_AUTO_CUDA_GRAPHS", raising=False)
    # cuDNN may pick other algorithms while a graph records; with TF32 their roundings
    # differ by ~1e-3 (see tests/test_cuda.py's ResNet test)
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)


def _mlp():
    net = nn.HybridSequential()
    net.add(nn.Dense(32, activation="relu"), nn.Dense(32, activation="tanh"), nn.Dense(5))
    return net


def _conv_bn():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
            nn.MaxPool2D(2, 2), nn.Conv2D(8, 3, padding=1, use_bias=False), nn.BatchNorm(),
            nn.Activation("relu"), nn.GlobalAvgPool2D(), nn.Dense(5))
    return net


def _dropout():
    net = nn.HybridSequential()
    net.add(nn.Dense(64, activation="relu"), nn.Dropout(0.5), nn.Dense(5))
    return net


class _Reads(gluon.HybridBlock):
    """Reads a value into Python: hybridize cannot capture it (it runs imperatively)."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.dense = nn.Dense(5)

    def hybrid_forward(self, F, x):
        scale = 1.0 + float(np.abs(x.asnumpy()).mean() > 10)
        return self.dense(x) * scale


class _Masks(gluon.HybridBlock):
    """boolean_mask syncs with the host (nonzero): captured, but no CUDA graph holds it."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.dense = nn.Dense(5)

    def hybrid_forward(self, F, x):
        keep = F.ones_like(F.slice_axis(x, axis=1, begin=0, end=1)).reshape((-1,))
        return self.dense(F.contrib.boolean_mask(x, keep))


def _pair(make, tmp_path, shape):
    mx.random.seed(3)
    src = make()
    src.initialize(mx.init.Xavier(), ctx=mx.cpu())
    src(nd.zeros(shape))
    path = str(tmp_path / "init.params")
    src.save_parameters(path)
    nets = []
    for cg in (None, False):
        n = make()
        n.load_parameters(path, ctx=GPU)
        n.hybridize(cuda_graphs=cg)
        nets.append(n)
    return nets


def _graphs(net):
    pol = net._autograph
    return [v.graphed for v in pol.cache.values()] if pol is not None else []


def _train(net, xs, y, steps, seed=0):
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05, "momentum": 0.9})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    mx.random.seed(seed)
    losses = []
    for i in range(steps):
        x = xs[i % len(xs)]
        with autograd.record():
            loss = loss_fn(net(x), y[:x.shape[0]])
        loss.backward()
        tr.step(x.shape[0])
        losses.append(loss.asnumpy())
    return losses


def _data(shape, n=3, classes=5, seed=0):
    rs = np.random.RandomState(seed)
    xs = [nd.array(rs.uniform(-1, 1, shape).astype("float32"), ctx=GPU) for _ in range(n)]
    y = nd.array(rs.randint(0, classes, shape[0]).astype("float32"), ctx=GPU)
    return xs, y


def _same(a, b, rtol=1e-4, atol=1e-5):
    pa = {k: v.data().asnumpy() for k, v in a._collect_params_with_prefix().items()}
    pb = {k: v.data().asnumpy() for k, v in b._collect_params_with_prefix().items()}
    for k in pa:
        np.testing.assert_allclose(pa[k], pb[k], rtol=rtol, atol=atol, err_msg=k)


@pytest.mark.parametrize("make, shape", [(_mlp, (16, 20)), (_conv_bn, (8, 3, 8, 8)),
                                         (_dropout, (16, 20))])
def test_training_equals_ungraphed(tmp_path, make, shape):
    g, e = _pair(make, tmp_path, (1,) + shape[1:])
    xs, y = _data(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        lg = _train(g, xs, y, 10)
    le = _train(e, xs, y, 10)
    grs = _graphs(g)
    assert grs and all(isinstance(x, _cudagraph.Graphed) for x in grs), grs
    assert not _graphs(e)
    for a, b in zip(lg, le):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    _same(g, e)
    # inference through its own graph: an earlier output is not overwritten
    outs = []
    for i in range(K + 3):
        outs.append((g(xs[i % 3]).asnumpy(), g(xs[i % 3])))
    for i, (first, arr) in enumerate(outs):
        np.testing.assert_allclose(arr.asnumpy(), first, rtol=1e-6)
        np.testing.assert_allclose(first, e(xs[i % 3]).asnumpy(), rtol=1e-5, atol=1e-6)


def test_grad_req_add(tmp_path):
    g, e = _pair(_mlp, tmp_path, (1, 20))
    xs, y = _data((16, 20))
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    for net in (g, e):
        net.collect_params().setattr("grad_req", "add")
        for i in range(K + 4):
            with autograd.record():
                loss = loss_fn(net(xs[i % 3]), y)
            loss.backward()
    assert _graphs(g)
    for (k, p), q in zip(g._collect_params_with_prefix().items(),
                         e._collect_params_with_prefix().values()):
        np.testing.assert_allclose(p.grad().asnumpy(), q.grad().asnumpy(), rtol=1e-5,
                                   atol=1e-6, err_msg=k)


def test_shape_change_mid_run(tmp_path):
    g, e = _pair(_conv_bn, tmp_path, (1, 3, 8, 8))
    big, y = _data((8, 3, 8, 8))
    small = [x[:5] for x in big]
    order = big * 2 + small * 2 + big * 2
    lg = _train(g, order, y, len(order))
    le = _train(e, order, y, len(order))
    assert len(_graphs(g)) == 2
    for a, b in zip(lg, le):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    _same(g, e)


@pytest.mark.parametrize("make", [_Reads, _Masks])
def test_blocks_that_cannot_be_graphed_fall_back(tmp_path, make):
    g, e = _pair(make, tmp_path, (1, 20))
    xs, y = _data((16, 20))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        lg = _train(g, xs, y, 3 * K)
    assert not any("CUDA graph" in str(w.message) for w in seen), [str(w.message) for w in seen]
    le = _train(e, xs, y, 3 * K)
    assert not _graphs(g)
    for a, b in zip(lg, le):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    _same(g, e)


def test_memory_stays_bounded_over_shape_changes(tmp_path):
    g, _ = _pair(_mlp, tmp_path, (1, 20))
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()

    def run(n):
        x = nd.ones((n, 20), ctx=GPU)
        y = nd.zeros((n,), ctx=GPU)
        for _ in range(K + 2):
            with autograd.record():
                loss = loss_fn(g(x), y)
            loss.backward()
        torch.cuda.synchronize()

    run(64)
    gc.collect()
    base = torch.cuda.memory_allocated()
    for n in range(65, 65 + _cudagraph.AUTO_CACHE - 1):
        run(n)
    gc.collect()
    full = torch.cuda.memory_allocated()
    for n in range(100, 110):
        run(n)
        assert len(_graphs(g)) <= _cudagraph.AUTO_CACHE
    gc.collect()
    after = torch.cuda.memory_allocated()
    # (4 graphs of batches 100-109 at most, against 3 of batches 65-67 in `full`; more than
    # that would be over the bound)
    assert after - base <= 3 * (full - base) + (1 << 20), (base, full, after)


def test_create_graph_through_a_graphed_block(tmp_path):
    g, e = _pair(_mlp, tmp_path, (1, 20))
    xs, _ = _data((4, 20))
    res = []
    for net in (g, e):
        x = xs[0].copy()
        x.attach_grad()
        for _ in range(K + 2):
            with autograd.record():
                y = net(x)
                gx = autograd.grad(y.sum(), [x], create_graph=True)[0]
                z = (gx * gx).sum()
            z.backward()
        res.append(x.grad.asnumpy())
    assert _graphs(g)
    np.testing.assert_allclose(res[0], res[1], rtol=1e-5, atol=1e-7)
