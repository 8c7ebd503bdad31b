"""The LSTM cell pointwise fusion of captured graphs (neogluon/gluon/_fuse.py): where it
applies, that values and gradients are bit-identical to the unfused replay, and where it must
not apply."""
import numpy as np
import pytest
import torch

import neogluon as mx
from neogluon import autograd, gluon
from neogluon.gluon import _fuse
from neogluon.gluon import block as blk


@pytest.fixture(autouse=True)
def _restore():
    prev = _fuse.set_enabled(True)
    yield
    _fuse.set_enabled(prev)


def _fused_entries(graph):
    return sum(1 for e in graph._prog if e[0] == 4 and isinstance(e[1], _fuse._FusedCell))


class _Unrolled(gluon.HybridBlock):
    def __init__(self, hidden, wrap="", layers=2, steps=5, activation="tanh",
                 recurrent_activation="sigmoid", extra=False):
        super().__init__()
        self._steps, self._extra = steps, extra
        with self.name_scope():
            self.cell = gluon.rnn.HybridSequentialRNNCell()
            for k in range(layers):
                c = gluon.rnn.LSTMCell(hidden, input_size=4 if k == 0 else hidden,
                                       activation=activation,
                                       recurrent_activation=recurrent_activation)
                if "res" in wrap and k > 0:
                    c = gluon.rnn.ResidualCell(c)
                if "zone" in wrap:
                    c = gluon.rnn.ZoneoutCell(c, zoneout_outputs=0.2, zoneout_states=0.3)
                self.cell.add(c)

    def hybrid_forward(self, F, x):
        out, st = self.cell.unroll(self._steps, x, layout="NTC", merge_outputs=True)
        return out, st[-1]


def _gluon_run(fuse, hidden, batch, wrap="", record=True, **kw):
    _fuse.set_enabled(fuse)
    mx.random.seed(3)
    np.random.seed(3)
    net = _Unrolled(hidden, wrap, **kw)
    net.initialize(mx.init.Xavier())
    net.hybridize(static_alloc=True)
    x = mx.nd.array(np.random.RandomState(0).uniform(-2, 2, (batch, 5, 4)).astype("float32"))
    x.attach_grad()
    res = []
    for it in range(2):
        mx.random.seed(10 + it)    # the same zoneout masks on both sides
        if record:
            with autograd.record():
                out, c = net(x)
                loss = (out * out).sum() + (c * 3).sum()
            loss.backward()
            res += [out.asnumpy(), c.asnumpy(), x.grad.asnumpy()]
            res += [p.grad().asnumpy() for p in net.collect_params().values()]
        else:
            out, c = net(x)
            res += [out.asnumpy(), c.asnumpy()]
    graph = list(net._graphs.values())[0]
    return res, _fused_entries(graph)


def _assert_same(a, b):
    assert len(a) == len(b)
    for u, v in zip(a, b):
        assert u.dtype == v.dtype and u.shape == v.shape
        assert np.array_equal(u, v), float(np.abs(u - v).max())


@pytest.mark.parametrize("hidden,batch", [(8, 3), (40, 32), (160, 32)])
def test_gluon_lstm_fused_bitwise(hidden, batch):
    # (160 x 32 values: the cell's tanh takes the compiled kernel, _act_kernel._MIN_NUMEL)
    ref, n0 = _gluon_run(False, hidden, batch)
    got, n1 = _gluon_run(True, hidden, batch)
    assert n0 == 0 and n1 == 10          # 2 layers x 5 steps
    _assert_same(ref, got)


@pytest.mark.parametrize("wrap", ["zone", "res", "zone+res"])
def test_gluon_lstm_wrapped_cells(wrap):
    # GluonTS DeepAR's ZoneoutCell / ResidualCell wrappers read h' and c', not the gates:
    # the cell still fuses, and the numbers stay those of the operators
    ref, _ = _gluon_run(False, 8, 3, wrap)
    got, n = _gluon_run(True, 8, 3, wrap)
    assert n == 10
    _assert_same(ref, got)


def test_gluon_lstm_inference_not_recording():
    ref, _ = _gluon_run(False, 8, 3, record=False)
    got, n = _gluon_run(True, 8, 3, record=False)
    assert n == 10
    _assert_same(ref, got)


@pytest.mark.parametrize("kw", [dict(activation="relu"), dict(recurrent_activation="tanh"),
                                dict(activation="softsign")])
def test_other_activations_do_not_fuse(kw):
    ref, _ = _gluon_run(False, 8, 3, **kw)
    got, n = _gluon_run(True, 8, 3, **kw)
    assert n == 0
    _assert_same(ref, got)


def _count_nodes(t):
    seen, todo = set(), [t.grad_fn]
    while todo:
        fn = todo.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        todo.extend(f for f, _ in fn.next_functions)
    return len(seen)


def test_fusion_cuts_autograd_nodes():
    x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, (3, 5, 4)))
    counts = []
    for fuse in (False, True):
        _fuse.set_enabled(fuse)
        net = _Unrolled(8)
        net.initialize()
        net.hybridize()
        for _ in range(2):         # the capture runs the operators; replays run the graph
            with autograd.record():
                out, _ = net(x)
        counts.append(_count_nodes(out._t))
    # per cell and step: split, 4 activations, 3 products, 2 sums and a tanh become one node
    assert counts[1] <= counts[0] - 10 * 10, counts


def test_double_backward_matches():
    def run(fuse):
        _fuse.set_enabled(fuse)
        mx.random.seed(1)
        net = _Unrolled(6, layers=1, steps=3)
        net.initialize(mx.init.Xavier())
        net.hybridize()
        x = mx.nd.array(np.random.RandomState(1).uniform(-1, 1, (2, 3, 4)))
        x.attach_grad()
        with autograd.record():
            out, c = net(x)
            y = (out * out).sum() + c.sum()
            (gx,) = autograd.grad(y, [x], create_graph=True, retain_graph=True)
            z = (gx * gx).sum()
        z.backward()
        return [gx.asnumpy(), x.grad.asnumpy()], _fused_entries(list(net._graphs.values())[0])
    (a, _), (b, n) = run(False), run(True)
    assert n == 3
    for u, v in zip(a, b):
        np.testing.assert_allclose(u, v, rtol=1e-5, atol=1e-6)
        assert np.abs(v).sum() > 0


# ------------------------------------------------------------ symbolic (executor) graphs
def _sym_run(fuse, hidden, batch, group_state=True):
    _fuse.set_enabled(fuse)
    cell = mx.rnn.SequentialRNNCell()
    for k in range(2):
        cell.add(mx.rnn.LSTMCell(num_hidden=hidden, prefix=f"lstm_l{k}_"))
    data = mx.sym.Variable("data")
    out, st = cell.unroll(4, inputs=data, merge_outputs=True, layout="NTC")
    outs = [mx.sym.sum(out * out)] + ([st[-1]] if group_state else [])
    ex = mx.sym.Group(outs).simple_bind(mx.cpu(), data=(batch, 4, 5))
    rs = np.random.RandomState(0)
    for v in ex.arg_dict.values():
        v[:] = rs.uniform(-1, 1, v.shape)
    res = []
    heads = [mx.nd.ones((1,))] + ([mx.nd.ones((batch, hidden)) * 0.5] if group_state else [])
    for _ in range(2):
        ex.forward(is_train=True)
        ex.backward(heads)
        res += [o.asnumpy() for o in ex.outputs]
        res += [g.asnumpy() for g in ex.grad_arrays if g is not None]
    ex.forward(is_train=False)
    res += [o.asnumpy() for o in ex.outputs]
    runner = ex._runner if hasattr(ex, "_runner") else None
    return res, runner


@pytest.mark.parametrize("hidden,batch", [(8, 3), (200, 32)])
@pytest.mark.parametrize("group_state", [True, False])
def test_symbolic_lstm_fused_bitwise(hidden, batch, group_state):
    ref, _ = _sym_run(False, hidden, batch, group_state)
    got, _ = _sym_run(True, hidden, batch, group_state)
    _assert_same(ref, got)


def test_symbolic_lstm_is_fused():
    import gc
    from neogluon.gluon._executor import _GraphRunner
    _sym_run(True, 8, 3)
    found = [_fused_entries(g) for o in gc.get_objects() if isinstance(o, _GraphRunner)
             for g in o._graphs.values() if isinstance(g, blk._Graph)]
    assert 8 in found, found


# ------------------------------------------------------------ patterns that must not match
class _Cell(gluon.HybridBlock):
    """An LSTM cell written out, with one change per variant."""

    def __init__(self, variant):
        super().__init__()
        self.variant = variant

    def hybrid_forward(self, F, i2h, h2h, c):
        v = self.variant
        x = F.elemwise_add(i2h, h2h)
        g = F.SliceChannel(x, num_outputs=4, axis=1)
        i = F.sigmoid(g[0])
        f = F.sigmoid(g[1])
        t = F.tanh(g[2]) if v != "gate_order" else F.sigmoid(g[2])
        o = F.sigmoid(g[3]) if v != "gate_order" else F.tanh(g[3])
        m0 = F.broadcast_mul(f, c) if v == "broadcast" else F.elemwise_mul(c, f)
        c2 = F.elemwise_add(m0, F.elemwise_mul(t, i))
        h2 = F.elemwise_mul(F.tanh(c2), o)
        if v == "gate_out":
            return h2, c2, f
        if v == "x_out":
            return h2, c2, x
        return h2, c2


def _cell_run(variant, fuse, shapes=((3, 16), (3, 16), (3, 4))):
    _fuse.set_enabled(fuse)
    net = _Cell(variant)
    net.hybridize()
    rs = np.random.RandomState(2)
    ins = [mx.nd.array(rs.uniform(-2, 2, s)) for s in shapes]
    for a in ins:
        a.attach_grad()
    res = []
    for _ in range(2):      # the capture, then a replay of the graph
        with autograd.record():
            outs = net(*ins)
            loss = sum((o * o).sum() for o in outs)
        loss.backward()
        res += [o.asnumpy() for o in outs] + [a.grad.asnumpy() for a in ins]
    return res, _fused_entries(list(net._graphs.values())[0])


@pytest.mark.parametrize("variant,fused", [("plain", 1), ("x_out", 1), ("gate_out", 0),
                                           ("gate_order", 0), ("broadcast", 0)])
def test_pattern_variants(variant, fused):
    # operand order of the products/sums may differ (fuses); a gate read outside the cell,
    # swapped activations or a broadcast operator do not fuse; a sum that is also an output
    # stays an operator and the cell fuses from the split on
    ref, _ = _cell_run(variant, False)
    got, n = _cell_run(variant, True)
    assert n == fused
    _assert_same(ref, got)


def test_runtime_fallback_keeps_operator_errors():
    # a state of the wrong width: the fused entry hands over to the operators, which raise
    # their own MXNetError
    _fuse.set_enabled(True)
    net = _Cell("plain")
    net.hybridize()
    rs = np.random.RandomState(2)
    ins = [mx.nd.array(rs.uniform(-2, 2, s)) for s in ((3, 16), (3, 16), (3, 4))]
    net(*ins)
    graph = list(net._graphs.values())[0]
    assert _fused_entries(graph) == 1
    # the graph run directly (a new shape would otherwise be captured anew)
    h, c = graph.run(ins, mx.cpu())
    ref, _ = _cell_run("plain", False)
    assert np.array_equal(h.asnumpy(), ref[0]) and np.array_equal(c.asnumpy(), ref[1])
    with pytest.raises(mx.base.MXNetError, match="elemwise_mul"):
        graph.run([ins[0], ins[1], mx.nd.ones((3, 5))], mx.cpu())
    with pytest.raises(mx.base.MXNetError, match="elemwise_add"):
        graph.run([ins[0], mx.nd.ones((3, 12)), ins[2]], mx.cpu())


def test_runtime_fallback_under_dispatch_mode():
    # nothing traced (make_fx, FakeTensor, ...) sees the custom Function
    from torch.utils._python_dispatch import TorchDispatchMode

    class Passthrough(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    ref, _ = _cell_run("plain", True)
    calls = []
    orig = _fuse._apply
    _fuse._apply = lambda *a: calls.append(1) or orig(*a)
    try:
        _cell_run("plain", True)
        assert calls          # (the counter counts)
        calls.clear()
        with Passthrough():
            got, n = _cell_run("plain", True)
    finally:
        _fuse._apply = orig
    assert n == 1 and not calls
    _assert_same(ref, got)


def test_switch_off():
    _fuse.set_enabled(False)
    _, n = _cell_run("plain", False)
    assert n == 0
