"""The compiled CPU tanh (neogluon/ndarray/_act_kernel.py): within 2 ulp of the true tanh over
the whole float32 range, torch's special values, torch's gradients (also a second order), and
torch's own tanh wherever the kernel does not apply."""
import numpy as np
import pytest
import torch

import neogluon as mx
from neogluon.ndarray import _act_kernel as ak

needs_kernel = pytest.mark.skipif(ak._LIB.get() is None, reason="no C compiler here")


def _ulps(a, ref64):
    """|a - ref| in units of the float32 spacing at ref."""
    r32 = ref64.float().abs()
    spacing = (torch.nextafter(r32, torch.tensor(float("inf"))) - r32).double()
    return (a.double() - ref64).abs() / spacing


@needs_kernel
def test_tanh_within_two_ulp_over_the_float32_range():
    bits = np.arange(0, 0x7F800000, 211, dtype=np.int64).astype(np.int32)
    pos = torch.from_numpy(bits.view(np.float32).copy())
    x = torch.cat([pos, -pos])
    assert ak.usable(x)
    y = ak.tanh(x)
    assert _ulps(y, torch.tanh(x.double())).max().item() <= 2.0
    # near zero tanh(x) rounds to x itself, as torch's does
    tiny = torch.tensor([1e-30, -1e-20, 3e-8, -1e-5] * 2048, dtype=torch.float32)
    assert torch.equal(ak.tanh(tiny), torch.tanh(tiny))


@needs_kernel
def test_tanh_special_values():
    x = torch.zeros(8192)
    x[:6] = torch.tensor([0.0, -0.0, float("inf"), -float("inf"), float("nan"), 50.0])
    y = ak.tanh(x)
    assert y[0].item() == 0.0 and not torch.signbit(y[0])
    assert y[1].item() == 0.0 and torch.signbit(y[1])
    assert y[2].item() == 1.0 and y[3].item() == -1.0 and y[5].item() == 1.0
    assert torch.isnan(y[4])


@needs_kernel
def test_tanh_gradients_first_and_second_order_through_ndarray():
    rng = np.random.default_rng(0)
    xv = rng.standard_normal((64, 100)).astype(np.float32) * 2
    x = mx.nd.array(xv)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.tanh(x) + mx.nd.Activation(x, act_type="tanh")
    y.backward()
    t = np.tanh(xv.astype(np.float64))
    np.testing.assert_allclose(y.asnumpy(), 2 * t, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * (1 - t ** 2), rtol=1e-5, atol=1e-6)
    with mx.autograd.record():
        y = mx.nd.tanh(x)
        g = mx.autograd.grad(y, [x], create_graph=True, retain_graph=True)[0]
    g.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), -2 * t * (1 - t ** 2), rtol=1e-5, atol=1e-6)


@needs_kernel
def test_tanh_keeps_channels_last_and_falls_back_where_it_cannot_run():
    x = torch.randn(4, 8, 16, 16).contiguous(memory_format=torch.channels_last)
    y = ak.tanh(x)
    assert y.is_contiguous(memory_format=torch.channels_last)
    assert _ulps(y, torch.tanh(x.double())).max().item() <= 2.0
    # strided, float64, small: torch's tanh itself
    for z in (torch.randn(64, 200)[:, ::2], torch.randn(8192, dtype=torch.float64),
              torch.randn(10)):
        assert not ak.usable(z)
        assert torch.equal(ak.tanh(z), torch.tanh(z))
    old = ak.set_enabled(False)
    try:
        big = torch.randn(8192)
        assert not ak.usable(big)
        np.testing.assert_array_equal(mx.nd.tanh(mx.nd.array(big.numpy())).asnumpy(),
                                      torch.tanh(big).numpy())
    finally:
        ak.set_enabled(old)
