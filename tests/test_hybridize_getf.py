"""hybridize() with hybrid_forward code that picks its operator module from its input's type.

GluonTS (and other MXNet 1.x code) does ``F = mx.nd if isinstance(x, mx.nd.NDArray) else
mx.sym`` inside ``hybrid_forward`` (``gluonts.mx.distribution.getF``). Under MXNet the inputs
are Symbols while the block is hybridized, so those calls go to ``mx.sym`` and are part of
the graph. In neogluon the captured inputs are NDArrays; operators the captured code takes
from ``mx.nd`` must be recorded as if they came from ``F`` (issue 31).
"""
import types
import warnings

import numpy as np
import pytest

import neogluon as mx
from neogluon import autograd, gluon


def getF(x):
    if isinstance(x, mx.nd.NDArray):
        return mx.nd
    if isinstance(x, mx.sym.Symbol):
        return mx.sym
    raise RuntimeError("neither NDArray nor Symbol")


class Scaled(gluon.HybridBlock):
    """hybrid_forward where half of the work goes through getF(x), as GluonTS's
    distributions do, including an array made from nothing (``zeros``), a method chain on
    the result and a submodule (``linalg``)."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.dense = gluon.nn.Dense(4, flatten=False)

    def hybrid_forward(self, F, x, scale):
        h = self.dense(x)
        G = getF(h)
        z = G.zeros_like(h)
        y = G.broadcast_add(G.broadcast_mul(h, scale), z)
        ladj = scale.broadcast_like(y).abs().log()
        g = G.linalg.gemm2(y, y, transpose_b=True)
        return G.sum(y * y, axis=-1) + G.sum(ladj, axis=-1) + G.sum(g, axis=-1) * 0.01


class WithState(gluon.HybridBlock):
    """An RNN unrolled from a begin state made by getF(x).zeros (GluonTS's DeepAR)."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.rnn = gluon.rnn.HybridSequentialRNNCell()
            self.rnn.add(gluon.rnn.LSTMCell(5))
            self.rnn.add(gluon.rnn.ZoneoutCell(gluon.rnn.LSTMCell(5), zoneout_states=0.0))

    def hybrid_forward(self, F, x, pad):
        G = getF(x)
        begin = self.rnn.begin_state(func=G.zeros, batch_size=x.shape[0])
        begin = [G.where(pad.repeat(repeats=5, axis=1), b, b) for b in begin]
        out, _ = self.rnn.unroll(length=x.shape[1], inputs=x, layout="NTC",
                                 merge_outputs=True, begin_state=begin)
        return out.sum(axis=-1)


def _run(net, args):
    for a in args:
        a.attach_grad()
    with autograd.record():
        out = net(*args)
    out.backward()
    grads = [p.grad().asnumpy().copy() for p in net.collect_params().values()]
    return out.asnumpy(), grads, [a.grad.asnumpy().copy() for a in args]


def _check(make, args_fn):
    mx.random.seed(3)
    ref_net = make()
    ref_net.initialize(mx.init.Xavier())
    ref = _run(ref_net, args_fn())        # imperative: the reference
    net = make()
    net.initialize(mx.init.Xavier())
    for (k1, p1), (k2, p2) in zip(ref_net.collect_params().items(),
                                  net.collect_params().items()):
        p2.set_data(p1.data())
    net.hybridize()
    with warnings.catch_warnings():
        warnings.simplefilter("error")     # no "could not capture" fallback
        first = _run(net, args_fn())      # the capture
        second = _run(net, args_fn())     # a replay of the captured graph
    graph = net._cached_graph[1]
    assert len(graph.nodes) > 5, "the forward pass was not captured"
    for got in (first, second):
        np.testing.assert_allclose(got[0], ref[0], rtol=1e-5, atol=1e-6)
        assert len(got[1]) == len(ref[1])
        for g, r in zip(got[1], ref[1]):
            np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-6)
        for g, r in zip(got[2], ref[2]):
            np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-6)
    # the replay computes from its inputs (nothing was frozen into a constant)
    a2 = [a * 2 for a in args_fn()]
    np.testing.assert_allclose(net(*a2).asnumpy(), ref_net(*a2).asnumpy(), rtol=1e-5,
                               atol=1e-6)
    return net


def test_getF_ops_are_captured():
    rs = np.random.RandomState(0)
    x = rs.rand(3, 6, 2).astype("float32")
    s = rs.rand(3, 6, 1).astype("float32") + 0.5

    _check(Scaled, lambda: [mx.nd.array(x), mx.nd.array(s)])


def test_getF_begin_state_in_rnn_is_captured():
    rs = np.random.RandomState(1)
    x = rs.rand(4, 7, 3).astype("float32")
    pad = (rs.rand(4, 1) > 0.5).astype("float32")
    _check(WithState, lambda: [mx.nd.array(x), mx.nd.array(pad)])


def test_nd_module_is_plain_outside_capture_and_params_are_untraced():
    net = Scaled()
    net.initialize()                      # deferred: initialised inside the first capture
    net.hybridize()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        net(mx.nd.ones((2, 3, 2)), mx.nd.ones((2, 3, 1)))
    for m in (mx.nd, mx.nd.random, mx.nd.linalg, mx.nd.contrib):
        assert type(m) is types.ModuleType
    from neogluon.gluon.block import _TracedNDArray
    for p in net.collect_params().values():
        assert type(p.data()) is not _TracedNDArray
    # an operator looked up from nd outside a capture is the operator itself
    assert mx.nd.broadcast_add is vars(mx.nd)["broadcast_add"]
    assert mx.nd.random.normal is vars(mx.nd.random)["normal"]


def test_nd_calls_without_captured_arrays_inside_neogluon_stay_eager():
    """Operators neogluon itself looks up during a capture (initialisers, ...) with no captured
    array among their arguments are not graph nodes: the graph has the same nodes whether or
    not the parameters were initialised during the capture."""
    def count(deferred):
        net = gluon.nn.HybridSequential()
        with net.name_scope():
            net.add(gluon.nn.Dense(3, in_units=0 if deferred else 2))
        net.initialize(mx.init.Uniform())
        net.hybridize()
        net(mx.nd.ones((2, 2)))
        return len(net._cached_graph[1].nodes)
    assert count(True) == count(False)
