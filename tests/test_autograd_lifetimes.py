"""Autograd lifetimes (issue 31): after a backward without retain_graph, the arrays that
backward differentiated are constants, as in MXNet 1.9.1.

The cases live in autograd_lifetime_cases.py; MXNet's results and errors come from
tests/fixtures/autograd/lifetimes.json (tools/gen_autograd_lifetime_fixtures.py).
"""
import gc
import json
import os
import threading
import weakref

import numpy as np
import pytest

import neogluon as mx
from neogluon import autograd, gluon, nd
from neogluon.base import MXNetError
from neogluon.ndarray import ndarray as nd_mod

import autograd_lifetime_cases as cases

with open(os.path.join(os.path.dirname(__file__), "fixtures", "autograd", "lifetimes.json")) as f:
    FIX = json.load(f)


@pytest.mark.parametrize("name", sorted(set(cases.CASES) - cases.MXNET_BUGS))
def test_case_as_mxnet(name):
    want = FIX["cases"][name]
    fn = cases.CASES[name]
    if "error" in want:
        with pytest.raises(MXNetError):
            fn(mx)
    else:
        np.testing.assert_allclose(_flat(fn(mx)), _flat(want["result"]), rtol=1e-5)


def _flat(v):
    if isinstance(v, (list, tuple)):
        return [y for x in v for y in _flat(x)]
    return [float(v)]


def test_same_error_message_as_mxnet_for_a_freed_head():
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = (x * x).sum()
    y.backward()
    with pytest.raises(MXNetError, match="not in a computational graph"):
        y.backward()


def test_view_of_consumed_is_a_constant():
    # MXNet 1.9.1 fails here with an internal error (an empty AGInfo container); neogluon
    # treats v, computed only from the freed h, as a constant.
    assert "any container is empty" in FIX["cases"]["view_of_consumed"]["message"]
    got = cases.view_of_consumed(mx)
    assert got == [[[2.0, 4.0], [6.0, 8.0]], [1.0, 4.0]]


def test_partly_consumed_raises():
    # MXNet 1.9.1: internal error; neogluon: an error too (the freed part of b's history
    # cannot be cut out of a graph that also reaches u).
    assert "any container is empty" in FIX["cases"]["partly_consumed"]["message"]
    with pytest.raises(MXNetError):
        cases.partly_consumed(mx)


# ------------------------------------------------------------------ truncated BPTT
@pytest.mark.parametrize("cell,hybrid,detach", cases.BPTT_CASES)
def test_bptt_as_mxnet(cell, hybrid, detach):
    got = cases.bptt(mx, cell, hybrid, detach)
    want = FIX["bptt"][f"{cell}/{'hybrid' if hybrid else 'imperative'}/{detach}"]
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-4)
    np.testing.assert_allclose(got["param_sums"], want["param_sums"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("cell", ["lstm", "gru"])
@pytest.mark.parametrize("hybrid", [False, True])
def test_bptt_idiom_equals_explicit_detach(cell, hybrid):
    dropped = cases.bptt(mx, cell, hybrid, "dropped")
    assert dropped == cases.bptt(mx, cell, hybrid, "explicit")
    assert dropped == cases.bptt(mx, cell, hybrid, "none")


@pytest.mark.parametrize("cell", ["lstm", "rnn"])
def test_bptt_idiom_static_alloc(cell):
    dropped = cases.bptt(mx, cell, "static", "dropped")
    assert dropped == cases.bptt(mx, cell, "static", "explicit")
    want = FIX["bptt"][f"{cell}/hybrid/dropped"]
    np.testing.assert_allclose(dropped["losses"], want["losses"], rtol=1e-4)


def _unrolled_lm(explicit, layers=2):
    """A 2-layer LSTM layer and an LSTMCell unrolled by hand, state carried over."""
    mx.random.seed(3)
    layer = gluon.rnn.LSTM(5, num_layers=layers, input_size=4)
    cell = gluon.rnn.LSTMCell(5, input_size=5)
    for b in (layer, cell):
        b.initialize(mx.init.Xavier())
    params = gluon.ParameterDict()
    params.update(layer.collect_params())
    params.update(cell.collect_params())
    trainer = gluon.Trainer(params, "sgd", {"learning_rate": 0.5})
    rng = np.random.RandomState(1)
    s1 = layer.begin_state(batch_size=3)
    s2 = cell.begin_state(batch_size=3)
    losses = []
    for _ in range(4):
        x = nd.array(rng.uniform(-1, 1, (6, 3, 4)))
        if explicit:
            s1 = [s.detach() for s in s1]
            s2 = [s.detach() for s in s2]
        with autograd.record():
            y, s1 = layer(x, s1)
            outs, s2 = cell.unroll(6, y, s2, layout="TNC", merge_outputs=True)
            loss = (outs * outs).mean()
        loss.backward()
        trainer.step(1)
        losses.append(float(loss.asscalar()))
    return losses


def test_bptt_multilayer_and_unrolled_cell():
    assert _unrolled_lm(False) == _unrolled_lm(True)


def test_state_after_backward_is_a_constant_and_retain_keeps_it():
    layer = gluon.rnn.LSTM(4, input_size=3)
    layer.initialize()
    x = nd.ones((2, 2, 3))
    for retain in (False, True):
        state = layer.begin_state(batch_size=2)
        with autograd.record():
            y, state = layer(x, state)
            loss = y.sum()
        loss.backward(retain_graph=retain)
        assert all((nd.to_torch(s).grad_fn is None) is (not retain) for s in state)


# ------------------------------------------------------------------ mechanism
def test_nothing_tracked_outside_record():
    x = nd.ones(3)
    x.attach_grad()
    autograd._tracked.clear()
    assert nd_mod._TRACK is False
    y = x * 2 + 1
    _ = nd.relu(y)
    assert not autograd._tracked
    with autograd.record():
        assert nd_mod._TRACK is True
        z = nd.relu(x * 2)
        with autograd.pause():
            assert nd_mod._TRACK is False   # no thread records
            w = z * 3                        # nothing recorded, nothing tracked
    assert nd_mod._TRACK is False
    assert any(r() is z for r in autograd._tracked)
    assert not any(r() is w for r in autograd._tracked)
    autograd._tracked.clear()


def test_tracking_holds_arrays_weakly_and_stays_bounded():
    x = nd.ones(3)
    x.attach_grad()
    with autograd.record():
        y = x * 2
    ref = weakref.ref(y)
    del y
    gc.collect()
    assert ref() is None
    # Recording without any backward (inference under record, say) must not grow the list
    # without bound: the references to dead arrays are dropped as scopes come and go.
    for _ in range(3000):
        with autograd.record():
            (x * 2).sum()
    assert len(autograd._tracked) <= 2 * autograd._tracked_limit[0]
    autograd._tracked.clear()


def test_unreached_alive_array_keeps_its_history_across_backwards():
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        keep = x * x
    for k in (2.0, 3.0):
        with autograd.record():
            y = (x * k).sum()
        y.backward()
        np.testing.assert_allclose(x.grad.asnumpy(), [k, k])
    with autograd.record():
        z = keep.sum()
    z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2.0, 4.0])


def test_whole_assignment_while_recording_is_tracked():
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    a = nd.zeros(2)
    with autograd.record():
        a[:] = x * 3
        y = a.sum()
    y.backward()
    w = nd.array([1.0, 1.0])
    w.attach_grad()
    with autograd.record():
        z = (a * w).sum()
    z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [3.0, 3.0])
    np.testing.assert_allclose(w.grad.asnumpy(), [3.0, 6.0])


def test_recording_in_another_thread():
    out = {}

    def work():
        x = nd.array([1.0, 2.0])
        x.attach_grad()
        with autograd.record():
            h = x * x
            y = h.sum()
        y.backward()
        w = nd.array([1.0, 1.0])
        w.attach_grad()
        with autograd.record():
            z = (h * w).sum()
        z.backward()
        out["x"], out["w"] = x.grad.asnumpy().tolist(), w.grad.asnumpy().tolist()

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert out == {"x": [2.0, 4.0], "w": [1.0, 4.0]}
    assert nd_mod._TRACK is False


def test_module_backward_twice_keeps_working():
    # Module/executor backward retains its graph (MXNet's executors can run backward again
    # after one forward); the lifetimes rule does not apply there.
    data = mx.sym.Variable("data")
    net = mx.sym.LinearRegressionOutput(mx.sym.FullyConnected(data, num_hidden=2, name="fc"),
                                        name="lro")
    mod = mx.mod.Module(net, data_names=["data"], label_names=["lro_label"])
    mod.bind(data_shapes=[("data", (3, 4))], label_shapes=[("lro_label", (3, 2))])
    mod.init_params()
    batch = mx.io.DataBatch([nd.ones((3, 4))], [nd.zeros((3, 2))])
    mod.forward(batch, is_train=True)
    mod.backward()
    g1 = mod._exec_group.grad_arrays[0][0].asnumpy().copy()
    mod.backward()
    np.testing.assert_allclose(mod._exec_group.grad_arrays[0][0].asnumpy(), g1)


def test_reached_arrays_found_without_walking_the_graph(monkeypatch):
    """The live arrays whose nodes the backward ran become constants from the backward's own
    pre-hooks: no walk of the differentiated graph (a deep RNN state is found at once), and
    so does an unused output computed from nodes the backward ran."""
    from neogluon import autograd as ag
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        h = x
        for _ in range(50):
            h = h * 1.01 + 0.1
        state = h
        side = h * 2                   # an output the loss does not use (DeepAR has one)
        loss = (h * h).sum()
    early = None
    with autograd.record():
        early = x * 3
        loss2 = (early * state.detach()).sum() + loss

    def no_walk(*a, **k):
        raise AssertionError("walked")
    monkeypatch.setattr(ag, "_derived_from", no_walk)
    calls = []
    real = ag._consume

    def spy(heads_t, armed=None):
        calls.append(None if armed is None else set(armed.fired))
        return real(heads_t, armed)
    monkeypatch.setattr(ag, "_consume", spy)
    loss2.backward()
    assert calls and calls[0]          # the pre-hooks saw the tracked nodes run
    for a in (state, loss, early, loss2, side):
        assert a._t.grad_fn is None    # constants now, as in MXNet
    with autograd.record():
        z = (state * x).sum()          # no error: state is a constant
    z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), state.asnumpy(), rtol=1e-6)


def test_failed_backward_keeps_arrays_tracked():
    """A backward that fails (the graph freed by an earlier one) leaves the tracking as it
    was: a later backward still makes its arrays constants."""
    from neogluon import autograd as ag
    x, u = nd.array([1.0, 2.0]), nd.array([3.0, 4.0])
    x.attach_grad()
    u.attach_grad()
    with autograd.record():
        h = x * x
        a = h.sum()
        b = (h * 2 + u * u).sum()
        keep = x * 2
    a.backward()
    restored = []
    real = ag._Armed.restore

    def spy(self):
        restored.append(len(self.want))
        return real(self)
    ag._Armed.restore = spy
    try:
        with pytest.raises(MXNetError):
            b.backward()   # part of b's history was freed (test_partly_consumed_raises)
    finally:
        ag._Armed.restore = real
    assert restored and restored[0] >= 1
    with autograd.record():
        z = (keep * 1).sum()
    z.backward()
    assert keep._t.grad_fn is None
    np.testing.assert_allclose(x.grad.asnumpy(), [2.0, 2.0])
