"""Plain hybridize's automatic CUDA graphs keep plain hybridize's semantics: checked on CPU
with a stand-in for the CUDA recorder.

What is real here: the policy, ``_cudagraph.capture`` and ``Graphed`` in its plain mode
(input copy-in, output copies, the autograd Function, the fresh gradient copies, the
pending/generation bookkeeping, the eager recompute, the generators put back after
recording). What stands in (monkeypatched per test):

* ``_cudagraph._on_cuda`` says a CPU context is a CUDA one (the one device check);
* ``Graphed._record`` - instead of recording ``torch.cuda.CUDAGraph`` s, :func:`fake_record`
  makes the same static buffers (outputs, incoming and outgoing gradients) and two "graphs"
  whose ``replay()`` rerun the captured program eagerly on the static inputs and overwrite
  those buffers in place, as a replay overwrites graph memory. It draws random numbers
  during its warm-up as the real recording does; it does not model a memory pool or a
  stream, and a CUDA graph's own failure modes are not represented (tests/test_cuda_autograph.py
  runs the real thing on a GPU);
* ``_cudagraph._generators`` returns the CPU generators (torch's and neogluon's).
"""
import numpy as np
import pytest
import torch

import neogluon as mx
from neogluon import autograd, gluon, nd
from neogluon import random as _random
from neogluon.gluon import _cudagraph, nn

K = _cudagraph.AUTO_AFTER


class _Replayer:
    def __init__(self, run):
        self.run = run
        self.replays = 0

    def replay(self):
        self.replays += 1
        self.run()


def fake_record(self, fn, dev, recording):
    grad_ctx = torch.enable_grad if recording else torch.no_grad
    for _ in range(_cudagraph._WARMUP):
        with grad_ctx():
            outs, _meta = fn(*self.static_in)
            if recording:
                self._grads(outs, None)
    live = {}
    with grad_ctx():
        outs, self.meta = fn(*self.static_in)
    self.nout = self.meta[0]
    self.req = [i for i, o in enumerate(outs) if o.requires_grad] if recording else []
    self.static_out = [o.detach().clone() for o in outs]

    def fwd():
        with grad_ctx():
            o, _ = fn(*self.static_in)
        live["outs"] = o
        with torch.no_grad():
            for s, t in zip(self.static_out, o):
                s.copy_(t)
    self.fwd = _Replayer(fwd)
    self.bwd = None
    self.moving_in_graph = False
    if recording and self.req:
        self.static_gout = [torch.zeros_like(outs[i]) for i in self.req]
        self.gin_index = [i for i, s in enumerate(self.static_in) if s.requires_grad]
        plans = self._moving_plans()
        gin = self._grads(outs, self.static_gout)
        self.static_gin = [None if g is None else torch.empty_like(g) for g in gin]

        def bwd():
            o = live["outs"]
            heads = [o[i] for i in self.req]
            wrt = [self.static_in[j] for j in self.gin_index]
            gs = torch.autograd.grad(heads, wrt, self.static_gout, allow_unused=True,
                                     retain_graph=True)   # (a graph replays again)
            with torch.no_grad():
                for buf, g in zip(self.static_gin, gs):
                    if buf is not None:
                        buf.copy_(g)
                for mm, mv, m, v, mom in plans:
                    _cudagraph._fold_moving(self.static_in[mm], self.static_in[mv],
                                            o[m].detach(), o[v].detach(), mom)
        self.bwd = _Replayer(bwd)
        self.moving_in_graph = bool(plans)


def _cpu_generators(dev):
    gens = [torch.default_generator]
    g = _random._generators.get(("cpu", None))
    if g is not None:
        gens.append(g)
    return gens


@pytest.fixture
def standin(monkeypatch):
    monkeypatch.setattr(_cudagraph, "_on_cuda", lambda ctx: True)
    monkeypatch.setattr(_cudagraph.Graphed, "_record", fake_record)
    monkeypatch.setattr(_cudagraph, "_generators", _cpu_generators)
    monkeypatch.delenv("NEOGLUON_CUDA_GRAPHS", raising=False)
    monkeypatch.delenv("NEOGLUON_AUTO_CUDA_GRAPHS", raising=False)


def _graphs(net):
    return [v.graphed for v in (net._autograph.cache.values() if net._autograph else ())]


def _pair(make, seed=0, **kw):
    """Two copies of one net: hybridized plainly (auto graphs) and with graphs off."""
    nets = []
    for cg in (None, False):
        mx.random.seed(seed)
        net = make()
        net.initialize(mx.init.Xavier())
        net.hybridize(cuda_graphs=cg, **kw)
        nets.append(net)
    a, b = nets
    a(nd.ones((1,) + _IN[0]))
    b(nd.ones((1,) + _IN[0]))
    for p, q in zip(a.collect_params().values(), b.collect_params().values()):
        q.set_data(p.data())
    return a, b


_IN = [(6,)]


def _mlp():
    net = nn.HybridSequential()
    net.add(nn.Dense(16, activation="relu"), nn.Dense(4))
    return net


def _drop_bn():
    net = nn.HybridSequential()
    net.add(nn.Dense(16), nn.BatchNorm(), nn.Activation("relu"), nn.Dropout(0.5),
            nn.Dense(4))
    return net


def _params(net):
    return [p.data().asnumpy() for p in net.collect_params().values()]


def _train(net, xs, y, steps, seed=0, grad_req=None):
    if grad_req:
        net.collect_params().setattr("grad_req", grad_req)
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    mx.random.seed(seed)
    losses = []
    for i in range(steps):
        with autograd.record():
            loss = loss_fn(net(xs[i % len(xs)]), y)
        loss.backward()
        tr.step(y.shape[0])
        losses.append(loss.asnumpy())
    return np.array(losses)


def _data(n=8, seed=0):
    rs = np.random.RandomState(seed)
    return [nd.array(rs.rand(n, 6).astype("float32")) for _ in range(3)], \
        nd.array(rs.randint(0, 4, n).astype("float32"))


@pytest.mark.parametrize("make", [_mlp, _drop_bn])
def test_training_matches_ungraphed(standin, make):
    g, e = _pair(make)
    xs, y = _data()
    lg = _train(g, xs, y, 8)
    le = _train(e, xs, y, 8)
    assert any(gr and gr.fwd.replays for gr in _graphs(g)), _graphs(g)
    assert not _graphs(e)
    np.testing.assert_allclose(lg, le, rtol=1e-5, atol=1e-6)
    for a, b in zip(_params(g), _params(e)):      # (BatchNorm's moving stats too)
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_grad_req_add_accumulates_into_the_same_buffers(standin):
    g, e = _pair(_mlp)
    xs, y = _data()
    for net in (g, e):
        net.collect_params().setattr("grad_req", "add")
        net[1].bias.grad_req = "null"
    bufs = {}
    for net in (g, e):
        loss_fn = gluon.loss.L2Loss()
        for i in range(K + 4):
            with autograd.record():
                loss = loss_fn(net(xs[0]), nd.ones((8, 4)))
            loss.backward()
            if i == 0:
                bufs[net] = [p.grad()._t for p in net.collect_params().values()
                             if p.grad_req != "null"]
    assert any(gr and gr.bwd.replays >= 3 for gr in _graphs(g))
    for p, q in zip(g.collect_params().values(), e.collect_params().values()):
        if p.grad_req == "null":
            assert q.grad_req == "null"
            continue
        np.testing.assert_allclose(p.grad().asnumpy(), q.grad().asnumpy(), rtol=1e-5)
    # the buffers are the Parameters' own, the same tensors as after the first backward
    assert all(a is b for a, b in zip(bufs[g], [p.grad()._t for p in g.collect_params()
                                                  .values() if p.grad_req != "null"]))


def test_outputs_and_gradients_are_fresh_arrays(standin):
    g, _ = _pair(_mlp)
    xs, y = _data()
    a = xs[0]
    a.attach_grad()
    for _ in range(K + 2):
        with autograd.record():
            out = g(a)
        out.backward()
    assert _graphs(g)
    o1 = out.asnumpy()
    ga = a.grad.asnumpy()
    w = g[0].weight
    gw_arr = w.grad()
    gw = gw_arr.asnumpy()
    for _ in range(K + 1):                                # record the variant without a.grad
        with autograd.record():
            out2 = g(xs[1])
        out2.backward()
    gw_arr = w.grad()
    gw = gw_arr.asnumpy()
    with autograd.record():
        out2 = g(xs[1] * 3)
    res = autograd.grad(out2, [w.data()], retain_graph=True)[0]
    r1 = res.asnumpy()
    out2.backward()
    assert not np.allclose(w.grad().asnumpy(), gw)        # write: the new gradient
    assert w.grad() is gw_arr                             # in the same array
    for _ in range(2):                                    # more graphed steps
        with autograd.record():
            out3 = g(xs[2])
        out3.backward()
    assert len(_graphs(g)) == 2 and _graphs(g)[1].bwd.replays >= 4
    np.testing.assert_array_equal(out.asnumpy(), o1)      # an earlier output: unchanged
    np.testing.assert_array_equal(a.grad.asnumpy(), ga)   # (a took no part since)
    np.testing.assert_array_equal(res.asnumpy(), r1)      # autograd.grad's result: its own


def test_a_stale_backward_recomputes_like_eager(standin):
    """backward(retain_graph=True), a newer call, then the old graph's backward again:
    the static mode raises there; plain hybridize gives the old graph's gradients."""
    res = []
    for net in _pair(_drop_bn):
        xs, y = _data()
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        mx.random.seed(3)
        for _ in range(K + 2):
            with autograd.record():
                loss = loss_fn(net(xs[0]), y)
            loss.backward()
        with autograd.record():
            old = loss_fn(net(xs[1]), y)
        old.backward(retain_graph=True)
        first = [p.grad().asnumpy() for p in net.collect_params().values()
                 if p.grad_req != "null"]
        with autograd.record():
            new = loss_fn(net(xs[2]), y)
        new.backward()
        old.backward()
        again = [p.grad().asnumpy() for p in net.collect_params().values()
                 if p.grad_req != "null"]
        for a, b in zip(first, again):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
        res.append((again, _params(net)))
    for a, b in zip(res[0][0] + res[0][1], res[1][0] + res[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_create_graph_recomputes_instead_of_raising(standin):
    res = []
    for net in _pair(_mlp):
        x = nd.array(np.random.RandomState(1).rand(5, 6))
        x.attach_grad()
        for _ in range(K + 3):
            with autograd.record():
                y = net(x)
                gx = autograd.grad(y.sum(), [x], create_graph=True)[0]
                z = (gx * gx).sum()
            z.backward()
        res.append((x.grad.asnumpy(), net[0].weight.grad().asnumpy()))
    g, e = _pair(_mlp)
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-5, atol=1e-7)


def test_create_graph_uses_the_graph(standin):
    net, _ = _pair(_mlp)
    x = nd.ones((5, 6))
    x.attach_grad()
    for _ in range(K + 2):
        with autograd.record():
            y = net(x)
            gx = autograd.grad(y.sum(), [x], create_graph=True)[0]
            z = (gx * gx).sum()
        z.backward()
    grs = [gr for gr in _graphs(net) if gr]
    assert grs and grs[0].fwd.replays >= 2 and grs[0].bwd.replays == 0


def test_two_calls_before_one_backward(standin):
    res = []
    for net in _pair(_mlp):
        xs, y = _data()
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        for _ in range(K + 2):
            with autograd.record():
                loss = loss_fn(net(xs[0]), y) + 0.5 * loss_fn(net(xs[1]), y)
            loss.backward()
        res.append([p.grad().asnumpy() for p in net.collect_params().values()])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_set_data_between_calls_is_seen(standin):
    g, e = _pair(_mlp)
    x = _data()[0][0]
    for _ in range(K + 2):
        g(x)
    assert _graphs(g)
    new = nd.array(np.random.RandomState(5).rand(*g[0].weight.shape))
    for net in (g, e):
        net[0].weight.set_data(new)
    np.testing.assert_allclose(g(x).asnumpy(), e(x).asnumpy(), rtol=1e-6)


def test_dropout_draws_as_ungraphed(standin):
    """The recording's warm-up draws are given back, so each graphed step draws the masks
    the ungraphed step draws."""
    def make():
        net = nn.HybridSequential()
        net.add(nn.Dense(32), nn.Dropout(0.5), nn.Dense(4))
        return net
    g, e = _pair(make)
    x = nd.ones((4, 6))
    outs = []
    for net in (g, e):
        mx.random.seed(11)
        o = []
        for _ in range(K + 4):
            with autograd.record():
                o.append(net(x).asnumpy())
        outs.append(o)
    assert any(gr and gr.fwd.replays >= 3 for gr in _graphs(g))
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_stale_gradient_check_of_the_trainer(standin):
    g, e = _pair(_mlp)
    xs, y = _data()
    msgs = []
    for net in (g, e):
        _train(net, xs, y, K + 2)
        tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
        with autograd.record():
            loss = gluon.loss.L2Loss()(net(xs[0]), nd.ones((8, 4)))
        loss.backward()
        tr.step(8)
        with pytest.raises(UserWarning, match="has not been updated"):
            tr.step(8)
        tr.step(8, ignore_stale_grad=True)
        msgs.append(_params(net))
    for a, b in zip(*msgs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_gradients_leave_the_graph_in_one_multi_tensor_copy(standin):
    """The plain mode's price for fresh gradients: one ``_foreach_copy_`` per backward for
    all of them (on CUDA, one kernel per dtype and ~110 tensors), not a copy per tensor."""
    from torch.profiler import ProfilerActivity, profile
    net, _ = _pair(_mlp)
    xs, y = _data()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    for _ in range(K + 1):
        with autograd.record():
            loss = loss_fn(net(xs[0]), y)
        loss.backward()
    gr = _graphs(net)[0]
    ctx = type("Ctx", (), {"gen": gr.gen})()
    gouts = [torch.ones(8, 4)] + [None] * (len(gr.static_out) - 1)
    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU]) as prof:
        res = gr._backward(ctx, gouts)      # (as the engine calls it: grad mode off)
    names = [e.name for e in prof.events()]
    assert names.count("aten::_foreach_copy_") == 1, names
    assert names.count("aten::clone") == 0, names
    got = [g for g in res if g is not None]
    assert len(got) == 4                                  # (2 weights, 2 biases)
    assert not any(g.data_ptr() == b.data_ptr() for g, b in
                   zip(got, [b for b in gr.static_gin if b is not None]))


def test_an_evicted_graph_lets_go_of_its_buffers(standin):
    net, ref = _pair(_mlp)
    xs, y = _data()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    firsts = []
    for n in range(2, 3 + _cudagraph.AUTO_CACHE):
        for _ in range(K + 1):
            with autograd.record():
                loss = loss_fn(net(xs[0][:n]), y[:n])
            loss.backward()
        if not firsts:
            firsts.append(_graphs(net)[0])
    first = firsts[0]
    assert first not in _graphs(net) and first.fwd is None and first.static_out is None
    # a retained backward of an evicted graph's forward recomputes
    for _ in range(K + 1):                      # recorded again; the last one retained
        with autograd.record():
            loss = loss_fn(net(xs[1][:2]), y[:2])
        loss.backward(retain_graph=True)
    w = net[0].weight.grad().asnumpy()
    g2 = _graphs(net)[-1]                       # (the most recently used)
    assert g2.fwd is not None and g2.static_in[0].shape[0] == 2
    for n in range(3, 3 + _cudagraph.AUTO_CACHE):   # evict it again (other variants of
        for _ in range(K + 2):                          # graphs it has: training mode, not
            with autograd.train_mode():                 # recording)
                net(xs[0][:n])
    assert g2.fwd is None and g2 not in _graphs(net)
    loss.backward()
    np.testing.assert_allclose(net[0].weight.grad().asnumpy(), w, rtol=1e-6)


def test_a_failed_recording_gives_the_random_draws_back(standin, monkeypatch):
    """A recording that fails after its warm-up drew numbers (as a capture that meets a host
    sync does) leaves the generators as they were: the ungraphed call then draws the masks
    an ungraphed run draws."""
    def failing_record(self, fn, dev, recording):
        for _ in range(_cudagraph._WARMUP):
            fn(*self.static_in)
        raise RuntimeError("operation not permitted when stream is capturing")
    monkeypatch.setattr(_cudagraph.Graphed, "_record", failing_record)

    def make():
        net = nn.HybridSequential()
        net.add(nn.Dense(32), nn.Dropout(0.5), nn.Dense(4))
        return net
    g, e = _pair(make)
    x = nd.ones((4, 6))
    outs = []
    for net in (g, e):
        mx.random.seed(11)
        o = []
        for _ in range(K + 4):
            with autograd.record():
                o.append(net(x).asnumpy())
        outs.append(o)
    assert g._autograph.failures == 1 and not _graphs(g)
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)
