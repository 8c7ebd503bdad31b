"""SoftmaxOutput with class-probability labels (a label of the data's own shape) and with
label smoothing, as MXNet 1.9.1 computes them (checked against MXNet 1.9.1)."""
import numpy as np
import pytest

import neogluon as mx


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _bind(dshape, label, **kw):
    X, L = mx.sym.var("X"), mx.sym.var("L")
    Y = mx.sym.SoftmaxOutput(data=X, label=L, **kw)
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, dshape).astype(np.float32)
    g = mx.nd.zeros(dshape)
    exe = Y.bind(mx.cpu(), args=[mx.nd.array(x), mx.nd.array(label)], args_grad={"X": g})
    exe.forward(is_train=True)
    exe.backward()
    return x, exe.outputs[0].asnumpy(), g.asnumpy()


@pytest.mark.parametrize("kw", [{}, {"preserve_shape": True}, {"grad_scale": 2.0},
                                {"normalization": "batch"}, {"use_ignore": True,
                                                             "ignore_label": 0}])
def test_probability_labels_2d(kw):
    lab = _softmax(np.random.RandomState(1).uniform(-1, 1, (3, 4))).astype(np.float32)
    x, out, grad = _bind((3, 4), lab, **kw)
    np.testing.assert_allclose(out, _softmax(x), rtol=1e-5, atol=1e-6)
    # (MXNet: no normalization or ignore_label applies to probability labels)
    np.testing.assert_allclose(grad, (_softmax(x) - lab) * kw.get("grad_scale", 1.0),
                               rtol=1e-5, atol=1e-6)


def test_probability_labels_preserve_shape_3d():
    lab = np.random.RandomState(1).uniform(0, 1, (3, 4, 2)).astype(np.float32)
    x, out, grad = _bind((3, 4, 2), lab, preserve_shape=True)
    np.testing.assert_allclose(grad, _softmax(x) - lab, rtol=1e-5, atol=1e-6)


def test_label_shape_inference_keeps_class_indices_by_default():
    X, L = mx.sym.var("X"), mx.sym.var("L")
    Y = mx.sym.SoftmaxOutput(data=X, label=L)
    assert Y.infer_shape(X=(3, 4)) == ([(3, 4), (3,)], [(3, 4)], [])
    assert Y.infer_shape(X=(3, 4), L=(3, 4))[0] == [(3, 4), (3, 4)]
    with pytest.raises(mx.base.MXNetError, match="L"):
        Y.infer_shape(X=(3, 4), L=(12,))


def test_label_smoothing():
    alpha = 0.1
    lab = np.array([1, 0, 3], dtype=np.float32)
    x, out, grad = _bind((3, 4), lab, smooth_alpha=alpha)
    target = np.full((3, 4), alpha / 3, dtype=np.float32)
    target[np.arange(3), lab.astype(int)] = 1 - alpha
    np.testing.assert_allclose(grad, _softmax(x) - target, rtol=1e-5, atol=1e-6)
