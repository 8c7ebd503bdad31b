"""relu's backward on CPU: one torch pass (threshold_backward) after a read-only NaN check,
with the same numbers as the exact rule (grad where x > 0, NaN where x is NaN, +0 elsewhere),
which still runs for NaN inputs, double backward and traced/GPU tensors."""
import numpy as np
import pytest
import torch
from torch.profiler import ProfilerActivity, profile

import neogluon as mx
from neogluon.ndarray.ops import _ReluKeepNaN, _relu_grad_keep_nan


def _grad(x, g, create_graph=False):
    x = x.detach().requires_grad_()
    y = _ReluKeepNaN.apply(x)
    (gx,) = torch.autograd.grad(y, x, g, create_graph=create_graph)
    return gx


def _bits(t):
    return t.detach().contiguous().view(torch.int32 if t.dtype == torch.float32
                                         else torch.int64)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("with_nan", [False, True])
def test_same_bits_as_the_exact_rule(dtype, with_nan):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(4, 8, 9, 9, generator=gen, dtype=dtype)
    g = torch.randn(4, 8, 9, 9, generator=gen, dtype=dtype)
    x.view(-1)[:6] = torch.tensor([0.0, -0.0, float("inf"), -float("inf"), 1e-30, -1e-30],
                                  dtype=dtype)
    g.view(-1)[6:10] = torch.tensor([-0.0, float("nan"), float("inf"), -0.0], dtype=dtype)
    x.view(-1)[6:8] = torch.tensor([2.0, 3.0], dtype=dtype)   # x > 0 passes g's -0, nan
    if with_nan:
        x.view(-1)[20] = float("nan")
    got, want = _grad(x, g), _relu_grad_keep_nan(x, g)
    assert torch.equal(_bits(got), _bits(want))
    assert bool(torch.isnan(got.view(-1)[20])) is with_nan
    assert _bits(got.view(-1)[1]).item() == 0          # +0 where x = -0


def test_channels_last_and_inf_minus_inf():
    x = torch.randn(2, 3, 5, 5).contiguous(memory_format=torch.channels_last)
    g = torch.randn(2, 3, 5, 5)
    assert torch.equal(_grad(x, g), _relu_grad_keep_nan(x, g))
    x = torch.tensor([float("inf"), -float("inf"), 2.0, -2.0])   # sum is NaN, no NaN in x
    g = torch.tensor([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(_grad(x, g).numpy(), [1.0, 0.0, 3.0, 0.0])


def test_one_pass_on_cpu():
    x = mx.nd.random.normal(shape=(8, 16, 12, 12))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.relu(x)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        y.backward()
    counts = {e.key: e.count for e in prof.key_averages()}
    assert counts.get("aten::threshold_backward") == 1
    assert "aten::where" not in counts and "aten::zeros_like" not in counts, counts
    np.testing.assert_array_equal(x.grad.asnumpy(), (x.asnumpy() > 0).astype(np.float32))


def test_double_backward_still_differentiable():
    x = torch.tensor([1.5, -2.0, 0.5])
    g = torch.tensor([2.0, 3.0, 4.0], requires_grad=True)
    gx = _grad(x, g, create_graph=True)
    (gg,) = torch.autograd.grad(gx.sum(), g)
    np.testing.assert_array_equal(gg.numpy(), [1.0, 0.0, 1.0])
