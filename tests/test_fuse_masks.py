"""The zoneout mask pass of captured graphs (neogluon/gluon/_fuse.py, fuse_dropout_masks):
``where(Dropout(ones_like(v), p), new, old)`` becomes one program entry that draws the same
masks as the operators (same generator, same draws), with bit-identical values and
gradients, and it leaves every other shape of the chain alone."""
import numpy as np
import pytest
import torch

import neogluon as mx
from neogluon import autograd, gluon
from neogluon.gluon import _fuse


@pytest.fixture(autouse=True)
def _restore():
    prev = _fuse.set_masks_enabled(True)
    yield
    _fuse.set_masks_enabled(prev)


def _mask_entries(graph):
    return sum(1 for e in graph._prog if e[0] == 4 and isinstance(e[1], _fuse._MaskedWhere))


class _Zoneout(gluon.HybridBlock):
    def __init__(self, hidden=8, p_out=0.2, p_state=0.3, steps=4):
        super().__init__()
        self._steps = steps
        with self.name_scope():
            self.cell = gluon.rnn.HybridSequentialRNNCell()
            for k in range(2):
                self.cell.add(gluon.rnn.ZoneoutCell(
                    gluon.rnn.LSTMCell(hidden, input_size=4 if k == 0 else hidden),
                    zoneout_outputs=p_out, zoneout_states=p_state))

    def hybrid_forward(self, F, x):
        out, st = self.cell.unroll(self._steps, x, layout="NTC", merge_outputs=True)
        return out, st[-1]


def _run(on, dtype="float32", record=True, **kw):
    _fuse.set_masks_enabled(on)
    mx.random.seed(3)
    net = _Zoneout(**kw)
    net.initialize(mx.init.Xavier())
    net.cast(dtype)
    net.hybridize(static_alloc=True)
    x = mx.nd.array(np.random.RandomState(0).uniform(-2, 2, (3, 4, 4)), dtype=dtype)
    x.attach_grad()
    res = []
    for it in range(3):
        mx.random.seed(10 + it)     # the same masks on both sides
        if record:
            with autograd.record():
                out, c = net(x)
                loss = (out * out).sum() + (c * 3).sum()
            loss.backward()
            res += [out.asnumpy(), c.asnumpy(), x.grad.asnumpy()]
            res += [p.grad().asnumpy() for p in net.collect_params().values()]
        else:
            with autograd.train_mode():
                out, c = net(x)
            res += [out.asnumpy(), c.asnumpy()]
    return res, _mask_entries(list(net._graphs.values())[0])


def _same(a, b):
    assert len(a) == len(b)
    for u, v in zip(a, b):
        assert u.dtype == v.dtype and u.shape == v.shape
        assert np.array_equal(u, v, equal_nan=True), float(np.abs(u - v).max())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_zoneout_masks_bitwise(dtype):
    ref, n0 = _run(False, dtype)
    got, n1 = _run(True, dtype)
    # 2 layers x 4 steps x (output, h, c)
    assert n0 == 0 and n1 == 24
    _same(ref, got)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
@pytest.mark.parametrize("shape", [(32, 40), (3, 7, 5), (1,)])
def test_bool_bernoulli_draws_as_dropout(dtype, shape):
    # the entry's premise: on the CPU, bernoulli_ into a bool tensor draws what aten's
    # dropout draws for its noise, and leaves the generator in the same state
    for seed in range(5):
        for p in (0.1, 0.5, 0.9):
            torch.manual_seed(seed)
            a = torch.dropout(torch.ones(shape, dtype=dtype), p, True) != 0
            after_a = torch.rand(3)
            torch.manual_seed(seed)
            b = torch.empty(shape, dtype=torch.bool).bernoulli_(1 - p)
            after_b = torch.rand(3)
            assert torch.equal(a, b) and torch.equal(after_a, after_b)


def test_masks_are_random_and_follow_the_seed():
    a, _ = _run(True)
    mx.random.seed(0)
    b, _ = _run(True)
    _same(a, b)
    # another seed: other masks, other numbers (the pass does not drop the masks)
    _fuse.set_masks_enabled(True)
    net = _Zoneout(p_out=0.5, p_state=0.5)
    net.initialize()
    net.hybridize()
    x = mx.nd.ones((3, 4, 4))
    outs = []
    for s in (1, 2):
        mx.random.seed(s)
        with autograd.record():
            outs.append(net(x)[0].asnumpy())
    assert not np.array_equal(outs[0], outs[1])


def test_training_mode_without_recording():
    ref, _ = _run(False, record=False)
    got, n = _run(True, record=False)
    assert n == 24
    _same(ref, got)


def test_predict_mode_passes_new_values():
    outs = []
    for on in (False, True):
        _fuse.set_masks_enabled(on)
        net = _Zoneout(p_out=0.5, p_state=0.5)
        net.initialize(mx.init.Constant(0.1))
        net.hybridize()
        x = mx.nd.array(np.random.RandomState(2).uniform(-1, 1, (3, 4, 4)))
        outs.append([net(x)[0].asnumpy() for _ in range(2)])
    # outside training every mask is ones: the same numbers, and the same every call
    _same(outs[0], outs[1])
    assert np.array_equal(outs[1][0], outs[1][1])


class _Chain(gluon.HybridBlock):
    def __init__(self, variant):
        super().__init__()
        self.variant = variant

    def hybrid_forward(self, F, a, b):
        if self.variant == "late":
            # y made after the Dropout: the pass would move the draw; it must not match
            return F.where(F.Dropout(F.ones_like(a), p=0.4), a, b * 3)
        a2 = a * 2
        if self.variant == "axes":
            m = F.Dropout(F.ones_like(a), p=0.4, axes=(1,))
        elif self.variant == "always":
            m = F.Dropout(F.ones_like(a), p=0.4, mode="always")
        elif self.variant == "p1":
            m = F.Dropout(F.ones_like(a), p=1.0)
        else:
            m = F.Dropout(F.ones_like(a), p=0.4)
        out = F.where(m, a2, b)
        if self.variant == "mask_out":
            return out, m          # the mask has another reader: no fusion
        return out


@pytest.mark.parametrize("variant,fused", [("plain", 1), ("always", 1), ("axes", 0),
                                           ("p1", 0), ("mask_out", 0), ("late", 0)])
def test_chain_variants(variant, fused):
    rs = np.random.RandomState(1)
    a0 = rs.uniform(-1, 1, (6, 7)).astype("float32")
    b0 = rs.uniform(-1, 1, (6, 7)).astype("float32")
    res = []
    for on in (False, True):
        _fuse.set_masks_enabled(on)
        net = _Chain(variant)
        net.hybridize()
        a, b = mx.nd.array(a0), mx.nd.array(b0)
        a.attach_grad()
        b.attach_grad()
        got = []
        for it in range(3):
            mx.random.seed(5 + it)
            with autograd.record():
                out = net(a, b)
                outs = out if isinstance(out, (list, tuple)) else [out]
                loss = sum((o * o).sum() for o in outs)
            loss.backward()
            got += [o.asnumpy() for o in outs] + [a.grad.asnumpy(), b.grad.asnumpy()]
        # outside training: 'always' still draws, 'training' passes the new values
        mx.random.seed(9)
        out = net(a, b)
        got += [o.asnumpy() for o in (out if isinstance(out, (list, tuple)) else [out])]
        res.append(got)
        n = _mask_entries(list(net._graphs.values())[0]) if on else 0
    assert n == fused
    _same(res[0], res[1])


def test_fallback_under_dispatch_mode_and_for_int_data():
    # under a TorchDispatchMode (make_fx, tracing) the entry hands over to the operators
    from torch.utils._python_dispatch import TorchDispatchMode

    seen = []

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    net = _Chain("plain")
    net.hybridize()
    a, b = mx.nd.ones((2, 3)), mx.nd.zeros((2, 3))
    with autograd.record():
        net(a, b)
    with Log():
        with autograd.record():
            net(a, b)
    assert any("dropout" in s or "bernoulli" in s for s in seen)
    assert any("ones_like" in s for s in seen), seen
    # x and y of different dtypes: where's error, from the operator
    with pytest.raises(mx.base.MXNetError, match="where"):
        with autograd.record():
            net(a, mx.nd.zeros((2, 3), dtype="float64"))


# ---------------------------------------------------------------- shared FC transposes
def _fc_entries(graph):
    return sum(1 for e in graph._prog if e[0] == 4 and isinstance(e[1], _fuse._SharedFC))


def _count_nodes(t):
    seen, todo = set(), [t.grad_fn]
    while todo:
        fn = todo.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        todo.extend(f for f, _ in fn.next_functions)
    return len(seen)


def _run_fc(on, net_fn, shape, record=True, dtype="float32"):
    prev = _fuse.set_fc_share_enabled(on)
    try:
        mx.random.seed(3)
        net = net_fn()
        net.initialize(mx.init.Xavier())
        net.cast(dtype)
        net.hybridize(static_alloc=True)
        x = mx.nd.array(np.random.RandomState(0).uniform(-2, 2, shape), dtype=dtype)
        x.attach_grad()
        res, nodes = [], None
        for it in range(3):
            mx.random.seed(10 + it)
            if record:
                with autograd.record():
                    out = net(x)
                    out = out[0] if isinstance(out, (list, tuple)) else out
                    loss = (out * out).sum()
                nodes = _count_nodes(loss._t)
                loss.backward()
                res += [out.asnumpy(), x.grad.asnumpy()]
                res += [p.grad().asnumpy() for p in net.collect_params().values()]
            else:
                out = net(x)
                res.append((out[0] if isinstance(out, (list, tuple)) else out).asnumpy())
        return res, _fc_entries(list(net._graphs.values())[0]), nodes
    finally:
        _fuse.set_fc_share_enabled(prev)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_shared_fc_transposes_bitwise(dtype):
    ref, n0, nodes0 = _run_fc(False, _Zoneout, (3, 4, 4), dtype=dtype)
    got, n1, nodes1 = _run_fc(True, _Zoneout, (3, 4, 4), dtype=dtype)
    # 2 layers x 4 steps x (i2h, h2h)
    assert n0 == 0 and n1 == 16
    _same(ref, got)
    # one transpose node per weight (4) instead of one per FullyConnected (16)
    assert nodes1 == nodes0 - 12, (nodes0, nodes1)


def test_shared_fc_not_recording():
    ref, _, _ = _run_fc(False, _Zoneout, (3, 4, 4), record=False)
    got, n, _ = _run_fc(True, _Zoneout, (3, 4, 4), record=False)
    assert n == 16
    _same(ref, got)


class _TwiceDense(gluon.HybridBlock):
    def __init__(self, flatten=True, use_bias=True):
        super().__init__()
        with self.name_scope():
            self.d = gluon.nn.Dense(5, flatten=flatten, use_bias=use_bias)

    def hybrid_forward(self, F, x):
        return self.d(F.tanh(self.d(x)) + x.sum())


@pytest.mark.parametrize("kw,shape,entries", [
    (dict(), (4, 5), 2),                         # 2-D data: shared
    (dict(flatten=False), (4, 3, 5), 2),         # 3-D data: the entries run the operator
    (dict(use_bias=False), (4, 5), 0),           # no bias: linear is mm, not matched
])
def test_shared_fc_variants(kw, shape, entries):
    def make():
        return _TwiceDense(**kw)
    ref, _, _ = _run_fc(False, make, shape)
    got, n, _ = _run_fc(True, make, shape)
    assert n == entries
    _same(ref, got)


def test_shared_fc_bad_shape_keeps_operator_error():
    class Bad(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.w = self.params.get("w", shape=(3, 4))
                self.b = self.params.get("b", shape=(3,))

        def hybrid_forward(self, F, x, y, w, b):
            return F.FullyConnected(x, w, b, num_hidden=3) + \
                F.FullyConnected(y, w, b, num_hidden=3).sum()

    net = Bad()
    net.initialize()
    net.hybridize()
    with autograd.record():
        net(mx.nd.ones((2, 4)), mx.nd.ones((2, 4)))
    with pytest.raises(mx.base.MXNetError, match="FullyConnected"):
        with autograd.record():
            net(mx.nd.ones((2, 4)), mx.nd.ones((2, 6)))


def _sym_lstm(on, hidden, batch):
    import gc
    gc.collect()     # (earlier executors' graphs out of the count below)
    prev = _fuse.set_fc_share_enabled(on)
    try:
        cell = mx.rnn.SequentialRNNCell()
        for k in range(2):
            cell.add(mx.rnn.LSTMCell(num_hidden=hidden, prefix=f"lstm_l{k}_"))
        data = mx.sym.Variable("data")
        out, st = cell.unroll(4, inputs=data, merge_outputs=True, layout="NTC")
        ex = mx.sym.Group([mx.sym.sum(out * out), st[-1]]).simple_bind(
            mx.cpu(), data=(batch, 4, 5))
        rs = np.random.RandomState(0)
        for v in ex.arg_dict.values():
            v[:] = rs.uniform(-1, 1, v.shape)
        res = []
        heads = [mx.nd.ones((1,)), mx.nd.ones((batch, hidden)) * 0.5]
        for _ in range(2):
            ex.forward(is_train=True)
            ex.backward(heads)
            res += [o.asnumpy() for o in ex.outputs]
            res += [g.asnumpy() for g in ex.grad_arrays if g is not None]
        from neogluon.gluon import block as blk
        shared = max(_fc_entries(g) for g in gc.get_objects() if isinstance(g, blk._Graph))
        return res, shared
    finally:
        _fuse.set_fc_share_enabled(prev)


@pytest.mark.parametrize("hidden,batch", [(8, 3), (200, 32)])
def test_shared_fc_symbolic_executor_bitwise(hidden, batch):
    # mx.rnn.LSTMCell through an executor (lstm_bucketing.py's network), larger GEMMs too
    (ref, _), (got, n) = _sym_lstm(False, hidden, batch), _sym_lstm(True, hidden, batch)
    assert n == 16           # 2 layers x 4 steps x (i2h, h2h)
    _same(ref, got)


def test_shared_fc_higher_order_gradients():
    def run(on):
        prev = _fuse.set_fc_share_enabled(on)
        try:
            mx.random.seed(1)
            net = _Zoneout(p_out=0.0, p_state=0.0)
            net.initialize(mx.init.Xavier())
            net.hybridize()
            x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, (3, 4, 4)))
            x.attach_grad()
            with autograd.record():
                out, c = net(x)
                y = (out * out).sum() + c.sum()
                (gx,) = autograd.grad(y, [x], create_graph=True, retain_graph=True)
                z = (gx * gx).sum()
            z.backward()
            return [gx.asnumpy(), x.grad.asnumpy()] + \
                [p.grad().asnumpy() for p in net.collect_params().values()], \
                _fc_entries(list(net._graphs.values())[0])
        finally:
            _fuse.set_fc_share_enabled(prev)
    (a, n0), (b, n1) = run(False), run(True)
    assert n0 == 0 and n1 == 16
    _same(a, b)
    assert np.abs(b[1]).sum() > 0
