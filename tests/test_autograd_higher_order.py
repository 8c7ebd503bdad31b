"""Second-order gradients through autograd.grad(create_graph=True), as MXNet 1.9.1 gives them
(values checked against MXNet 1.9.1)."""
import numpy as np
import pytest

import neogluon as mx
from neogluon import autograd, nd


def _second(fn, x):
    x = nd.array(x)
    x.attach_grad()
    with autograd.record():
        y = fn(x)
        g = autograd.grad(y, x, head_grads=nd.ones_like(x), create_graph=True,
                          retain_graph=True)[0]
        g2 = autograd.grad(g, x, head_grads=nd.ones_like(x), create_graph=True,
                           retain_graph=True)[0]
    return g.asnumpy(), g2.asnumpy()


@pytest.mark.parametrize("fn, first", [
    (lambda x: nd.radians(x), [np.pi / 180] * 3),
    (lambda x: nd.abs(x), [-1.0, 1.0, 1.0]),
    (lambda x: nd.clip(x, -1, 0.7), [0.0, 1.0, 0.0]),
    (lambda x: nd.relu(x), [0.0, 1.0, 1.0]),
])
def test_second_order_of_piecewise_linear_ops_is_zero(fn, first):
    g, g2 = _second(fn, [-2.0, 0.5, 1.0])
    np.testing.assert_allclose(g, first, rtol=1e-6)
    assert g2.tolist() == [0.0, 0.0, 0.0]


def test_second_order_of_dropout_is_zero():
    g, g2 = _second(lambda x: nd.Dropout(x, p=0.5), [-2.0, 0.5, 1.0, 3.0])
    assert set(g.tolist()) <= {0.0, 2.0}
    assert g2.tolist() == [0.0] * 4


def test_second_order_arcsinh_and_arccosh_have_mxnet_sign():
    # MXNet 1.9.1: x / (x*x + 1) ** 1.5 and x / (x*x - 1) ** 1.5
    g, g2 = _second(nd.arcsinh, [-2.0, 0.5, 1.0])
    np.testing.assert_allclose(g, [0.4472, 0.8944, 0.7071], atol=1e-4)
    np.testing.assert_allclose(g2, [-0.1789, 0.3578, 0.3536], atol=1e-4)
    g, g2 = _second(nd.arccosh, [3.0, 1.5])
    np.testing.assert_allclose(g, [0.3536, 0.8944], atol=1e-4)
    np.testing.assert_allclose(g2, [0.1326, 1.0733], atol=1e-4)


def test_second_order_of_smooth_op_unchanged():
    g, g2 = _second(nd.sin, [-2.0, 0.5, 1.0])
    np.testing.assert_allclose(g2, -np.sin([-2.0, 0.5, 1.0]), rtol=1e-5)


def test_first_order_backward_of_arcsinh():
    x = nd.array([-2.0, 0.5])
    x.attach_grad()
    with autograd.record():
        y = nd.arcsinh(x)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 1 / np.sqrt(np.array([4.0, 0.25]) + 1),
                               rtol=1e-6)
