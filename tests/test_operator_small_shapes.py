"""Operators on shapes torch's kernels refuse or on scalar operands (checked against MXNet
1.9.1): InstanceNorm over a single spatial element, hypot with a scalar."""
import numpy as np

import neogluon as mx


def test_instance_norm_single_spatial_element():
    x = mx.nd.array([[[2.0]], [[5.0]]])
    g, b = mx.nd.array([1.5]), mx.nd.array([0.25])
    for a in (x, g, b):
        a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.InstanceNorm(x, g, b)
    y.backward(mx.nd.ones_like(y) * 2)
    # the mean is the element itself, the variance 0: the output is beta
    assert y.asnumpy().ravel().tolist() == [0.25, 0.25]
    assert x.grad.asnumpy().ravel().tolist() == [0.0, 0.0]
    assert g.grad.asnumpy().tolist() == [0.0] and b.grad.asnumpy().tolist() == [4.0]


def test_instance_norm_symbol_binds_single_element():
    X, G, B = mx.sym.var("X"), mx.sym.var("G"), mx.sym.var("B")
    y = mx.sym.InstanceNorm(data=X, gamma=G, beta=B, eps=1e-3)
    exe = y.simple_bind(mx.cpu(), X=(1, 1, 1), G=(1,), B=(1,))
    exe.arg_dict["B"][:] = 0.5
    assert exe.forward(is_train=True)[0].asnumpy().ravel().tolist() == [0.5]


def test_instance_norm_many_elements_unchanged():
    rng = np.random.RandomState(0)
    x = rng.randn(2, 3, 4, 5).astype(np.float32)
    y = mx.nd.InstanceNorm(mx.nd.array(x), mx.nd.ones((3,)), mx.nd.zeros((3,)), eps=1e-3)
    mean = x.mean(axis=(2, 3), keepdims=True)
    var = x.var(axis=(2, 3), keepdims=True)
    np.testing.assert_allclose(y.asnumpy(), (x - mean) / np.sqrt(var + 1e-3), rtol=1e-4,
                               atol=1e-5)


def test_hypot_with_a_scalar():
    x = mx.nd.full((2, 3), 4.0)
    assert mx.nd.hypot(x, 3).asnumpy().tolist() == [[5.0] * 3] * 2
    assert mx.nd.hypot(3, x).asnumpy().tolist() == [[5.0] * 3] * 2
    d = mx.sym.var("data")
    y = mx.sym.hypot(d, 3)
    assert y.infer_shape(data=(3, 4))[1] == [(3, 4)]
    g = mx.nd.zeros((2, 3))
    exe = y.bind(mx.cpu(), args=[x], args_grad=[g])
    assert exe.forward(is_train=True)[0].asnumpy().tolist() == [[5.0] * 3] * 2
    exe.backward(mx.nd.ones((2, 3)))
    np.testing.assert_allclose(g.asnumpy(), np.full((2, 3), 0.8), rtol=1e-6)


def test_legacy_reshape_target_shape():
    # MXNet 1.9.1's deprecated Reshape(target_shape=...): one 0 takes the remaining size;
    # keep_highest keeps the data's first axis
    data = mx.sym.var("data")
    for target, kw, expected in [((2, 0), {}, (2, 75)), ((0, 25), {}, (6, 25)),
                                 ((5, 0), {"keep_highest": True}, (2, 75)),
                                 ((6, 25), {}, (6, 25))]:
        net = mx.sym.load_json(mx.sym.Reshape(data, target_shape=target, **kw).tojson())
        assert net.infer_shape(data=(2, 3, 5, 5))[1] == [expected]
        x = mx.nd.arange(150).reshape((2, 3, 5, 5))
        y = mx.nd.Reshape(x, target_shape=target, **kw)
        assert y.shape == expected and y.asnumpy().ravel().tolist() == list(range(150))
    # shape wins over target_shape
    assert mx.nd.Reshape(mx.nd.ones((2, 3, 5, 5)), shape=(0, -1), target_shape=(4, 0)).shape \
        == (2, 75)


def test_legacy_reshape_target_shape_that_does_not_fit():
    import pytest
    with pytest.raises(mx.base.MXNetError, match="target_shape"):
        mx.nd.Reshape(mx.nd.ones((2, 3, 5, 5)), target_shape=(4, 0))
    with pytest.raises(mx.base.MXNetError, match="target_shape"):
        mx.nd.Reshape(mx.nd.ones((2, 3, 5, 5)), target_shape=(0, 0))
