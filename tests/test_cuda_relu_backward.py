"""relu's backward on a GPU keeps the exact rule (no host-side NaN check there: it would
synchronise): grad where x > 0, NaN where x is NaN, +0 elsewhere."""
import numpy as np
import pytest
import torch

import neogluon as mx

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


def test_relu_gradient_on_gpu_keeps_nan():
    ctx = mx.gpu(0)
    x = mx.nd.array([np.nan, -1.0, 2.0, 0.0, -0.0, 3.0], ctx=ctx)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.relu(x)
    y.backward(mx.nd.array([5.0, 6.0, 7.0, 8.0, 9.0, -0.0], ctx=ctx))
    g = x.grad.asnumpy()
    np.testing.assert_equal(g, [np.nan, 0.0, 7.0, 0.0, 0.0, -0.0])
    assert not np.signbit(g[1]) and not np.signbit(g[3]) and np.signbit(g[5])


def test_relu_gradient_on_gpu_matches_cpu():
    rng = np.random.RandomState(0)
    xs = rng.randn(4, 8, 9, 9).astype(np.float32)
    gs = rng.randn(4, 8, 9, 9).astype(np.float32)
    out = []
    for ctx in (mx.cpu(), mx.gpu(0)):
        x = mx.nd.array(xs, ctx=ctx)
        x.attach_grad()
        with mx.autograd.record():
            y = mx.nd.relu(x)
        y.backward(mx.nd.array(gs, ctx=ctx))
        out.append(x.grad.asnumpy())
    np.testing.assert_array_equal(out[0], out[1])
