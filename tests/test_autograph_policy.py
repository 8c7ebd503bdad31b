"""Plain ``hybridize()``'s automatic CUDA graphs, on CPU: the policy and the switches.

No CUDA here, so two narrow stand-ins (monkeypatched per test):

* ``_cudagraph._on_cuda`` says a CPU context is a CUDA one. It is the one device check of
  the CUDA-graph code; ``Context`` itself is not touched, and without this patch a CPU
  context never graphs (``test_cpu_contexts_never_graph``).
* ``_cudagraph.capture`` is replaced by :class:`FakeCapture`, which records each call and
  returns a "graph" that just runs the captured program eagerly. It stands for the decision
  to record and for the later replays, not for what a CUDA graph does with memory: the
  numbers a real graph gives are checked by tests/test_cuda_autograph.py on a GPU, and the
  plain-mode replay logic (fresh gradients, eager recompute) by the recorder stand-in of
  tests/test_autograph_replay.py.
"""
import logging
import warnings

import numpy as np
import pytest

import neogluon as mx
from neogluon import autograd, gluon, nd
from neogluon.base import MXNetError
from neogluon.gluon import _cudagraph, nn


_REAL_CAPTURE = _cudagraph.capture


class _FakeGraph:
    def __init__(self, owner, fn, key):
        self.owner, self.fn, self.key = owner, fn, key
        self.replays = 0
        self.moving_in_graph = False

    def busy(self):
        return False

    def __call__(self, ts):
        self.replays += 1
        return list(self.fn(*ts)[0])


class FakeCapture:
    """Stands in for ``_cudagraph.capture``: remembers every call (the input shapes, whether
    autograd recorded, the mode) and returns a :class:`_FakeGraph`, or None (a failed
    recording) for the shapes listed in ``fail``."""

    def __init__(self, fail=()):
        self.calls = []
        self.graphs = []
        self.fail = set(fail)

    def __call__(self, block, fn, ts, nparams, recording, auto=False):
        key = tuple(tuple(t.shape) for t in ts[:len(ts) - nparams])
        self.calls.append((key, recording, auto))
        if key in self.fail:
            return None
        g = _FakeGraph(self, fn, key)
        self.graphs.append(g)
        return g

    def shapes(self):
        return [c[0][0] for c in self.calls]


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setattr(_cudagraph, "_on_cuda", lambda ctx: True)
    monkeypatch.delenv("NEOGLUON_CUDA_GRAPHS", raising=False)
    monkeypatch.delenv("NEOGLUON_AUTO_CUDA_GRAPHS", raising=False)
    f = FakeCapture()
    monkeypatch.setattr(_cudagraph, "capture", f)
    return f


K = _cudagraph.AUTO_AFTER


def _mlp(**hyb):
    net = nn.HybridSequential()
    net.add(nn.Dense(8, activation="relu"), nn.Dense(3))
    net.initialize(mx.init.Xavier())
    net.hybridize(**hyb)
    return net


def _step(net, x, record=True):
    if record:
        with autograd.record():
            loss = net(x).sum()
        loss.backward()
        return loss
    return net(x)


def test_records_after_k_calls_in_a_row_then_replays(fake):
    net = _mlp()
    x = nd.ones((4, 5))
    _step(net, x)                       # the first call captures the op list (no graph)
    for i in range(K - 1):
        _step(net, x)
        assert fake.calls == [], i
    _step(net, x)                       # the K-th call that replays the op list records
    assert fake.calls == [(((4, 5),), True, True)]
    for _ in range(5):
        _step(net, x)
    assert len(fake.calls) == 1
    assert fake.graphs[0].replays == 6
    # the same numbers as a block that never graphs
    ref = _mlp(cuda_graphs=False)
    for p, q in zip(ref.collect_params().values(), net.collect_params().values()):
        p.set_data(q.data())
    np.testing.assert_allclose(net(x).asnumpy(), ref(x).asnumpy(), rtol=1e-6)


def test_a_new_signature_records_only_after_k_calls_of_its_own(fake):
    net = _mlp()
    a, b = nd.ones((4, 5)), nd.ones((2, 5))
    for _ in range(K + 1):
        _step(net, a)
    assert fake.shapes() == [(4, 5)]
    _step(net, b)                       # captures b's op list
    for _ in range(K - 1):
        _step(net, b)
    assert fake.shapes() == [(4, 5)]
    _step(net, b)
    assert fake.shapes() == [(4, 5), (2, 5)]
    # inference (not recording) is a signature of its own too
    for _ in range(K + 1):
        _step(net, a, record=False)
    assert fake.calls[-1] == (((4, 5),), False, True)
    _step(net, a)                       # a's recorded graph is still there
    assert len(fake.calls) == 3


def test_calls_that_alternate_between_signatures_never_record(fake):
    net = _mlp()
    a, b = nd.ones((4, 5)), nd.ones((2, 5))
    for _ in range(3 * K):
        _step(net, a)
        _step(net, b)
    assert fake.calls == []


def test_at_most_a_few_graphs_per_block_least_recently_used_go(fake):
    net = _mlp()
    sizes = list(range(1, _cudagraph.AUTO_CACHE + 2))
    for n in sizes:
        for _ in range(K + 2):
            _step(net, nd.ones((n, 5)))
    assert fake.shapes() == [(n, 5) for n in sizes]
    policy = net._autograph
    assert len(policy.cache) == _cudagraph.AUTO_CACHE
    held = sorted(v.graphed.key[0][0] for v in policy.cache.values())
    assert held == sizes[1:]            # the first one went
    # the dropped one records again after K calls in a row
    for _ in range(K):
        _step(net, nd.ones((sizes[0], 5)))
    assert fake.shapes()[-1] == (sizes[0], 5)
    assert len(policy.cache) == _cudagraph.AUTO_CACHE


def test_a_block_whose_shapes_keep_changing_gives_up(fake):
    net = _mlp()
    sizes = [1, 2, 3]
    while not (net._autograph is not None and net._autograph.gave_up):
        for n in sizes:
            for _ in range(K - 1):      # left before it was recorded: a miss each
                _step(net, nd.ones((n, 5)))
        assert net._autograph.misses <= _cudagraph.AUTO_MISSES + len(sizes)
    assert fake.calls == []
    for _ in range(3 * K):              # steady now: this block records no more graphs
        _step(net, nd.ones((2, 5)))
    assert fake.calls == []


def test_many_shapes_hold_no_graph(fake):
    net = _mlp()
    for n in range(1, 30):
        for _ in range(2):
            _step(net, nd.ones((n, 5)))
    assert fake.calls == []
    assert not net._autograph.cache


def test_a_failed_recording_stays_ungraphed_for_that_signature_without_a_warning(
        fake, monkeypatch, caplog):
    net = _mlp()
    a, b = nd.ones((4, 5)), nd.ones((2, 5))

    class Refuses:
        def __init__(self, *a, **k):
            raise RuntimeError("operation not permitted when stream is capturing")
    monkeypatch.setattr(_cudagraph, "Graphed", Refuses)
    real = FakeCapture.__call__

    def capture(block, fn, ts, nparams, recording, auto=False):
        # `a` goes through the real capture (whose Graphed refuses): its quiet failure path
        if ts[0].shape[0] == 4:
            fake.calls.append(((tuple(ts[0].shape),), recording, auto))
            return _REAL_CAPTURE(block, fn, ts, nparams, recording, auto)
        return real(fake, block, fn, ts, nparams, recording, auto)
    monkeypatch.setattr(_cudagraph, "capture", capture)
    with warnings.catch_warnings(), caplog.at_level(logging.DEBUG, "neogluon.gluon._cudagraph"):
        warnings.simplefilter("error")
        for _ in range(3 * K):
            _step(net, a)
        for _ in range(K + 1):
            _step(net, b)
        for _ in range(3 * K):
            _step(net, a)
    assert [c[0][0] for c in fake.calls] == [(4, 5), (2, 5)]   # `a` tried once only
    assert "no CUDA graph" in caplog.text and "stream is capturing" in caplog.text
    assert net._cudagraph_failed is None            # (the block itself is not marked)
    ref = _mlp(cuda_graphs=False)
    for p, q in zip(ref.collect_params().values(), net.collect_params().values()):
        p.set_data(q.data())
    np.testing.assert_allclose(net(a).asnumpy(), ref(a).asnumpy(), rtol=1e-6)




@pytest.mark.parametrize("env, kw, static, expect", [
    ({"NEOGLUON_AUTO_CUDA_GRAPHS": "0"}, {}, False, False),
    ({"NEOGLUON_CUDA_GRAPHS": "0"}, {}, False, False),
    ({}, {"cuda_graphs": False}, False, False),
    ({"NEOGLUON_AUTO_CUDA_GRAPHS": "0"}, {"cuda_graphs": True}, False, True),
    ({"NEOGLUON_CUDA_GRAPHS": "0"}, {"cuda_graphs": True}, False, False),
    ({"NEOGLUON_AUTO_CUDA_GRAPHS": "0"}, {}, True, True),   # static mode: its own switch
    ({}, {"cuda_graphs": False}, True, False),
])
def test_switches(fake, monkeypatch, env, kw, static, expect):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    if static:
        kw = dict(kw, static_alloc=True, static_shape=True)
    net = _mlp(**kw)
    assert net._cuda_graphs == (("static" if static else "auto") if expect else False)
    assert net[0]._cuda_graphs == net._cuda_graphs   # children follow
    for _ in range(K + 2):
        _step(net, nd.ones((4, 5)))
    assert bool(fake.calls) == expect
    if expect:
        assert fake.calls[0][2] == (not static)


def test_bad_cuda_graphs_keyword():
    net = nn.Dense(3)
    with pytest.raises(MXNetError, match="cuda_graphs"):
        net.hybridize(cuda_graphs="yes")


def test_cpu_contexts_never_graph(monkeypatch):
    f = FakeCapture()
    monkeypatch.setattr(_cudagraph, "capture", f)
    net = _mlp()
    assert net._cuda_graphs == "auto"
    for _ in range(3 * K):
        _step(net, nd.ones((4, 5)))
    assert f.calls == [] and net._autograph is None


def test_create_graph_through_an_auto_graphed_block(fake):
    """Higher-order gradients through a block whose signature is graphed (here by the fake,
    which runs eagerly: the real graph's recompute is tests/test_autograph_replay.py's)."""
    net = nn.HybridSequential()
    net.add(nn.Dense(4, activation="tanh"), nn.Dense(1))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = nd.array(np.random.RandomState(0).rand(3, 2))
    x.attach_grad()
    for _ in range(K + 2):
        with autograd.record():
            y = net(x)
            gx = autograd.grad(y.sum(), [x], create_graph=True)[0]
            z = (gx * gx).sum()
        z.backward()
    assert fake.graphs and fake.graphs[0].replays >= 2
    g2 = x.grad.asnumpy()
    net.hybridize(cuda_graphs=False)
    with autograd.record():
        y = net(x)
        gx = autograd.grad(y.sum(), [x], create_graph=True)[0]
        z = (gx * gx).sum()
    z.backward()
    np.testing.assert_allclose(g2, x.grad.asnumpy(), rtol=1e-5, atol=1e-7)


def test_structure_change_clears_the_policy(fake):
    net = _mlp()
    for _ in range(K + 2):
        _step(net, nd.ones((4, 5)))
    assert net._autograph is not None and len(net._autograph.cache) == 1
    net.add(nn.Dense(2))
    net[-1].initialize(mx.init.Xavier())
    assert net._autograph is None
    for _ in range(K + 2):
        out = _step(net, nd.ones((4, 5)), record=False)
    assert out.shape == (4, 2)
    assert fake.calls[-1][0] == ((4, 5),) and len(fake.calls) == 2


def test_failed_recordings_make_the_block_give_up(fake):
    fake.fail = {((n, 5),) for n in range(1, 10)}
    net = _mlp()
    for n in range(1, 4):
        for _ in range(K + 2):
            _step(net, nd.ones((n, 5)))
    assert fake.shapes() == [(n, 5) for n in range(1, _cudagraph.AUTO_FAILURES + 1)]
    assert net._autograph.gave_up


def test_no_recording_while_device_memory_is_short(fake, monkeypatch):
    roomy = [False]
    monkeypatch.setattr(_cudagraph, "room", lambda dev: roomy[0])
    net = _mlp()
    for _ in range(3 * K):
        _step(net, nd.ones((4, 5)))
    assert fake.calls == []
    roomy[0] = True
    _step(net, nd.ones((4, 5)))
    assert len(fake.calls) == 1


def test_room_reads_the_device_memory(monkeypatch):
    import torch
    assert _cudagraph.room(torch.device("cpu"))
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda idx=None: 60)
    monkeypatch.setattr(_cudagraph, "_TOTAL", {0: 100})
    assert not _cudagraph.room(torch.device("cuda", 0))
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda idx=None: 40)
    assert _cudagraph.room(torch.device("cuda", 0))
