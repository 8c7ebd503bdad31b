"""autograd details beyond the MXNet snippets: buffer adoption safety, the fresh flag,
the variable registry, Function, higher-order gradients."""
import gc

import numpy as np
import pytest
import torch

import neogluon as mx
from neogluon import autograd, gluon, nd
from neogluon.base import MXNetError


def test_shared_gradient_is_not_aliased_between_variables():
    # d(a + b)/da and d(a + b)/db are one tensor inside torch; the buffers must stay apart.
    a, b = nd.ones(3), nd.ones(3)
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        y = a + b
    y.backward()
    a.grad[:] = 7
    assert b.grad.asnumpy().tolist() == [1, 1, 1]


def test_head_grad_is_not_adopted_as_buffer():
    x = nd.ones(3)
    x.attach_grad()
    hg = nd.array([1.0, 2.0, 3.0])
    with autograd.record():
        y = x * 1.0 + 0.0
    y.backward(hg)
    hg[:] = 0
    assert x.grad.asnumpy().tolist() == [1, 2, 3]


def test_grad_buffer_identity_survives_adoption():
    w = nd.ones((4, 3))
    w.attach_grad()
    g_nd, g_t = w.grad, nd.to_torch(w.grad)
    x = nd.ones((2, 3))
    for k in (1.0, 3.0):
        with autograd.record():
            y = nd.FullyConnected(x * k, w, None, num_hidden=4, no_bias=True)
        y.backward()
        assert w.grad is g_nd and nd.to_torch(w.grad) is g_t
        np.testing.assert_allclose(g_t.numpy(), 2 * k)


def test_views_of_the_gradient_taken_before_backward_see_the_new_gradient():
    # MXNet writes every backward into the same buffer, so a slice or reshape of x.grad made
    # earlier reads the new values; adopting torch's result as the buffer's storage would
    # leave such views on the old one
    x = nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    tail, flat = x.grad[1:], x.grad.reshape((3, 1))
    net = gluon.nn.Dense(2, in_units=2)
    net.initialize()
    row = net.weight.grad()[0]
    for k in (1.0, 2.0):
        with autograd.record():
            y = (x * x * k).sum() + net(nd.ones((1, 2))).sum() * k
        y.backward()
        assert tail.asnumpy().tolist() == [4 * k, 6 * k]
        assert flat.asnumpy().ravel().tolist() == [2 * k, 4 * k, 6 * k]
        assert row.asnumpy().tolist() == [k, k]


def test_add_req_accumulates_across_backwards_and_zero_grad_pattern():
    w = nd.ones(2)
    w.attach_grad(grad_req="add")
    for _ in range(3):
        with autograd.record():
            y = (w * 2).sum()
        y.backward()
    assert w.grad.asnumpy().tolist() == [6, 6]
    w.grad[:] = 0
    with autograd.record():
        y = (w * 2).sum()
    y.backward()
    assert w.grad.asnumpy().tolist() == [2, 2]


def test_fresh_flag_marks_only_reached_variables():
    a, b = nd.ones(2), nd.ones(2)
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        y = a * 2
    y.backward()
    assert a._fresh_grad and not b._fresh_grad
    a._fresh_grad = False  # the Trainer resets it after an update
    with autograd.record():
        z = (a * b).sum()
    z.backward()
    assert a._fresh_grad and b._fresh_grad


def test_registry_releases_dropped_variables():
    from neogluon.autograd import _variables
    gc.collect()  # earlier tests may leave variables in unreachable cycles
    before = len(_variables)
    tmp = [nd.ones(2) for _ in range(5)]
    for t in tmp:
        t.attach_grad()
    assert len(_variables) == before + 5
    del tmp, t
    gc.collect()
    assert len(_variables) == before


def test_reattach_keeps_single_registration():
    from neogluon.autograd import _variables
    x = nd.ones(2)
    before = len(_variables)
    x.attach_grad()
    x.attach_grad(grad_req="add")
    assert len(_variables) == before + 1
    assert x in _variables


def test_backward_through_view_and_getitem():
    x = nd.array([[1.0, 2.0], [3.0, 4.0]])
    x.attach_grad()
    with autograd.record():
        y = x[1] * 3 + x.reshape((4,))[0]
    y.backward()
    assert x.grad.asnumpy().tolist() == [[2.0, 0.0], [3.0, 3.0]]


def test_function_called_twice_is_an_error():
    class Double(autograd.Function):
        def forward(self, x):
            return x * 2

        def backward(self, dy):
            return dy * 2
    f = Double()
    x = nd.ones(2)
    x.attach_grad()
    with autograd.record():
        f(x)
        with pytest.raises(mx.MXNetError):
            f(x)


def test_function_wrong_number_of_gradients():
    class Bad(autograd.Function):
        def forward(self, a, b):
            return a + b

        def backward(self, dy):
            return dy
    a, b = nd.ones(2), nd.ones(2)
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        y = Bad()(a, b)
    with pytest.raises(mx.MXNetError):
        y.backward()


def test_higher_order_through_polynomial():
    # MXNet 1.9.1 lacks second derivatives of power/mul; neogluon differentiates them.
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = x ** 3
        dy = autograd.grad(y, [x], create_graph=True)[0]
    dy.backward()
    assert dy.asnumpy().tolist() == [3.0, 12.0]
    assert x.grad.asnumpy().tolist() == [6.0, 12.0]


def test_grad_does_not_touch_buffers_and_keeps_graph_when_asked():
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = (x * x).sum()
    g1 = autograd.grad(y, [x], retain_graph=True)[0]
    y.backward()
    assert g1.asnumpy().tolist() == x.grad.asnumpy().tolist() == [2.0, 4.0]


def test_head_grads_checked():
    # MXNet 1.9.1 does not check a head gradient's shape: it reads the head's number of
    # elements from the gradient's memory (here the first 2 of 3; zeros past a shorter one)
    x = nd.ones(2)
    x.attach_grad()
    with autograd.record():
        y = x * 2
    y.backward(nd.array([1.0, 3.0, 5.0]))
    assert x.grad.asnumpy().tolist() == [2.0, 6.0]
    with autograd.record():
        y = x * 2
    y.backward(nd.array([[4.0]]))
    assert x.grad.asnumpy().tolist() == [8.0, 0.0]
    with autograd.record():
        y = x * 2
    with pytest.raises(ValueError):
        autograd.backward([y], [nd.ones(2), nd.ones(2)])


def test_no_graph_is_kept_outside_record_for_variables():
    w = nd.ones(3)
    w.attach_grad()
    y = w * w
    assert nd.to_torch(y).grad_fn is None
    with pytest.raises(mx.MXNetError, match="computational graph"):
        y.backward()


def test_function_outside_record_builds_no_graph():
    class Sq(autograd.Function):
        def forward(self, x):
            return x * x

        def backward(self, dy):
            return dy
    x = nd.array([2.0, 3.0])
    x.attach_grad()
    y = Sq()(x)
    assert y.asnumpy().tolist() == [4.0, 9.0]
    assert not nd.to_torch(y).requires_grad


def test_second_backward_without_retain_graph_fails_even_when_torch_could():
    # x + 1 saves no tensors, so torch alone would run it twice; MXNet frees every graph.
    x = nd.ones((2, 2))
    x.attach_grad(grad_req="add")
    with autograd.record():
        y = x + 1
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.asnumpy().tolist() == [[2, 2], [2, 2]]
    with pytest.raises(mx.base.MXNetError, match="retain_graph"):
        y.backward()
    with autograd.record():
        z = x * 3
    autograd.grad(z, [x])
    with pytest.raises(mx.base.MXNetError, match="retain_graph"):
        autograd.grad(z, [x])


def test_set_recording_records_even_inside_pause():
    x = nd.ones(2)
    x.attach_grad()
    with autograd.pause():
        prev = autograd.set_recording(True)
        try:
            y = x * 2
        finally:
            autograd.set_recording(prev)
    y.backward()
    assert x.grad.asnumpy().tolist() == [2, 2]


def test_contrib_autograd_sections_and_grad_and_loss():
    from neogluon.contrib import autograd as cag
    x = nd.ones((3, 5))
    with cag.train_section():
        assert autograd.is_recording() and autograd.is_training()
        assert not (nd.Dropout(x, p=0.5).asnumpy() == 1).all()
        with cag.test_section():
            assert not autograd.is_recording() and not autograd.is_training()
            assert (nd.Dropout(x, p=0.5).asnumpy() == 1).all()
        assert autograd.is_recording() and autograd.is_training()
    assert not autograd.is_recording() and not autograd.is_training()

    a, b = nd.array([[1.0, 2.0]]), nd.array([[3.0, 4.0]])
    grads, out = cag.grad_and_loss(lambda a, b: a * b)(a, b)
    assert out.asnumpy().tolist() == [[3, 8]]
    assert [g.asnumpy().tolist() for g in grads] == [[[3, 4]], [[1, 2]]]
    (ga,) = cag.grad(lambda a, b: a * b + b, argnum=0)(a, b)
    assert ga.asnumpy().tolist() == [[3, 4]]
    with pytest.raises(TypeError):
        cag.grad(lambda a: a)(1.0)

    dx = nd.zeros_like(x)
    cag.mark_variables([x], [dx])
    with cag.train_section():
        parts = nd.split(x, axis=0, num_outputs=3, squeeze_axis=True)
        cag.backward(list(parts), [None, nd.array([1, 2, 3, 4, 5]), nd.array([5, 4, 3, 2, 1])])
    assert dx.asnumpy().tolist() == [[1] * 5, [1, 2, 3, 4, 5], [5, 4, 3, 2, 1]]
    with pytest.raises(TypeError):
        cag.backward(parts[0])


def _sparse_grad_records():
    import json
    import os
    path = os.path.join(os.path.dirname(__file__), "fixtures", "autograd", "sparse_grads.json")
    with open(path) as f:
        return json.load(f)["records"]


@pytest.mark.parametrize("rec", _sparse_grad_records(), ids=lambda r: "-".join(map(str, r["case"])))
def test_sparse_variable_gradient_matches_mxnet(rec):
    # MXNet differentiates the dense array: the gradient also reaches positions that neither
    # the sparse variable nor the sparse result store (tools/gen_autograd_fixtures.py).
    from autograd_cases import SPARSE_GRAD_OPS, SPARSE_INPUTS
    stype, xname, og, gst, opname = rec["case"]
    x = nd.array(SPARSE_INPUTS[xname]).tostype(stype)
    x.attach_grad(stype=gst)
    with autograd.record():
        y = SPARSE_GRAD_OPS[opname](mx, x)
    assert y.stype == rec["y_stype"]
    y.backward(out_grad=None if og is None else nd.ones_like(y).tostype(og))
    assert x.grad.stype == rec["grad_stype"]
    np.testing.assert_allclose(x.grad.asnumpy(), np.array(rec["grad"]), rtol=1e-5, atol=1e-6)


def test_sparse_head_autograd_grad_reaches_unstored_rows():
    x = nd.zeros((3, 2)).tostype("row_sparse")
    x.attach_grad()
    with autograd.record():
        y = x * 3
    (g,) = autograd.grad([y], [x], head_grads=[nd.ones((3, 2)).tostype("row_sparse")])
    np.testing.assert_allclose(g.asnumpy(), np.full((3, 2), 3.0))


def test_get_symbol_lists_the_variables_in_mxnet_order():
    # MXNet 1.9.1: x*x + 2*z - 1 gives arguments [var0, var1] and nodes node_0..node_3
    x, z = nd.ones((1,)), nd.ones((1,))
    x.attach_grad()
    z.attach_grad()
    with autograd.record():
        y = x * x + 2 * z - 1
    sym = autograd.get_symbol(y)
    assert sym.list_arguments() == ["var0", "var1"]
    assert sym.list_outputs() == ["node_3_output"]
    with autograd.record():
        y1 = x * x + 2 * x - 1
    assert autograd.get_symbol(y1).list_arguments() == ["var0"]
    assert autograd.get_symbol(x).list_arguments() == ["var0"]
    with pytest.raises(mx.base.MXNetError, match="not supported"):
        sym.eval(var0=x, var1=z)
    with pytest.raises(mx.base.MXNetError, match="record"):
        autograd.get_symbol(nd.ones(2))
    with pytest.raises(TypeError):
        autograd.get_symbol(np.ones(2))


def test_writes_outside_record_reach_a_recorded_graph_as_in_mxnet():
    """An array a recorded graph saved, written outside record() (x[:] =, +=, *=, copyto, out=,
    Parameter.set_data under pause()), is read with its new value by backward(), as MXNet 1.9.1
    does (the numbers below are MXNet's); it used to fail in torch's version check.
    example/gluon/sn_gan's spectral norm sets its power-iteration vector this way."""
    def square_then(write):
        x = nd.array([1., 2.])
        x.attach_grad()
        with autograd.record():
            y = x * x
        write(x)
        y.backward()
        return x.grad.asnumpy().tolist()

    assert square_then(lambda x: x.__setitem__(slice(None), 5)) == [10.0, 10.0]
    assert square_then(lambda x: x.__iadd__(1)) == [4.0, 6.0]
    assert square_then(lambda x: x.__imul__(3)) == [6.0, 12.0]

    x = nd.array([1., 2.])
    x.attach_grad()
    w = nd.array([3., 4.])
    with autograd.record():
        y = x * w
    nd.elemwise_add(w, w, out=w)
    y.backward()
    assert x.grad.asnumpy().tolist() == [6.0, 8.0]

    x = nd.array([1., 2.])
    x.attach_grad()
    with autograd.record():
        y = nd.exp(x)           # exp's backward reads its output
    nd.array([0., 0.]).copyto(y)
    y.backward()
    assert x.grad.asnumpy().tolist() == [0.0, 0.0]

    u = gluon.Parameter('u', shape=(1, 2))
    u.initialize(mx.init.One())
    v = gluon.Parameter('v', shape=(2, 2))
    v.initialize(mx.init.One())
    with autograd.record():
        z = nd.dot(u.data(), v.data())
        with autograd.pause():
            u.set_data(nd.array([[3., 4.]]))
        loss = z.sum()
    loss.backward()
    assert v.grad().asnumpy().tolist() == [[3.0, 3.0], [4.0, 4.0]]
    assert u.grad().asnumpy().tolist() == [[2.0, 2.0]]

    # inside record() an in-place write to a variable stays an error, as in MXNet
    with autograd.record():
        with pytest.raises(MXNetError):
            x += 1
