"""Smoke test of the foundation's core contract; detailed tests live beside each area."""
import numpy as np

import neogluon as mx
from neogluon import autograd, nd


def test_record_backward_writes_fresh_grad():
    x = nd.array([[1, 2], [3, 4]])
    w = nd.array([[1.0, 2.0], [3.0, 4.0]])
    w.attach_grad()
    assert not w._fresh_grad
    with autograd.record():
        y = (w * x).sum()
    y.backward()
    np.testing.assert_array_equal(w.grad.asnumpy(), x.asnumpy())
    assert w._fresh_grad


def test_no_graph_outside_record():
    w = nd.ones((2,))
    w.attach_grad()
    z = w * 2
    assert not mx.nd.to_torch(z).requires_grad
