"""The one-input-channel convolution weight-gradient kernel (neogluon/ndarray/_conv_kernel.py)
against float64 torch, and the cases that must stay on torch's path."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from neogluon import autograd, nd
from neogluon.ndarray import _conv_kernel as K

pytestmark = pytest.mark.skipif(K._LIB.get() is None, reason="no C compiler")


def _f64_grads(x, w, b, pad, head):
    xd = x.detach().double().requires_grad_(x.requires_grad)
    wd = w.detach().double().requires_grad_()
    bd = None if b is None else b.detach().double().requires_grad_()
    F.conv2d(xd, wd, bd, 1, pad).backward(head.double())
    return wd.grad, None if bd is None else bd.grad, xd.grad if x.requires_grad else None


@pytest.mark.parametrize("n,h,wd,o,k,pad,bias,need_x", [
    (64, 28, 28, 6, (5, 5), (0, 0), True, False),      # LeNet's first layer
    (3, 9, 12, 4, (3, 3), (1, 1), False, True),
    (2, 13, 13, 5, (7, 7), (3, 3), True, False),
    (5, 10, 11, 3, (2, 2), (0, 0), True, True),
    (4, 30, 21, 8, (1, 1), (0, 0), True, False),
    (2, 8, 19, 3, (3, 5), (1, 2), True, False),
    (1, 5, 5, 2, (5, 4), (0, 0), True, False),          # one output position per row
    (7, 16, 40, 9, (4, 6), (2, 0), True, True),         # odd padding, tails of every width
])
def test_gradients_match_float64(n, h, wd, o, k, pad, bias, need_x):
    g = torch.Generator().manual_seed(n * 100 + o)
    x = torch.randn(n, 1, h, wd, generator=g).requires_grad_(need_x)
    w = torch.randn(o, 1, *k, generator=g).requires_grad_()
    b = torch.randn(o, generator=g).requires_grad_() if bias else None
    assert K.usable(x, w, (1, 1), (1, 1), 1)
    y = K.conv2d(x, w, b, pad)
    np.testing.assert_array_equal(y.detach().numpy(), F.conv2d(x, w, b, 1, pad).detach().numpy())
    head = torch.randn(y.shape, generator=g)
    y.backward(head)
    gw, gb, gx = _f64_grads(x.detach().requires_grad_(need_x), w, b, pad, head)
    scale = head.abs().sum().item() / head.numel() * n * y.shape[2] * y.shape[3]
    assert (w.grad.double() - gw).abs().max().item() <= 1e-6 * scale
    if bias:
        assert (b.grad.double() - gb).abs().max().item() <= 1e-6 * scale
    if need_x:
        np.testing.assert_allclose(x.grad.numpy(), gx.numpy(), rtol=1e-4, atol=1e-5)


def test_two_threads_give_the_same_bits():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 1, 28, 28, generator=g)
    head = torch.randn(64, 16, 24, 24, generator=g)
    grads = []
    old = torch.get_num_threads()
    try:
        for t in (1, 2):
            torch.set_num_threads(t)
            w = torch.randn(16, 1, 5, 5, generator=torch.Generator().manual_seed(2))
            w.requires_grad_()
            K.conv2d(x, w, None, (0, 0)).backward(head)
            grads.append(w.grad.clone())
    finally:
        torch.set_num_threads(old)
    assert torch.equal(grads[0], grads[1])


def test_double_backward_goes_through_torch():
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 1, 7, 7, generator=g, dtype=torch.float32).requires_grad_()
    w = torch.randn(3, 1, 3, 3, generator=g).requires_grad_()
    gw, = torch.autograd.grad(K.conv2d(x, w, None, (1, 1)).square().sum(), w,
                              create_graph=True)
    gx, = torch.autograd.grad(gw.sum(), x)
    x2, w2 = x.detach().requires_grad_(), w.detach().requires_grad_()
    gw2, = torch.autograd.grad(F.conv2d(x2, w2, None, 1, 1).square().sum(), w2,
                               create_graph=True)
    gx2, = torch.autograd.grad(gw2.sum(), x2)
    np.testing.assert_allclose(gw.detach().numpy(), gw2.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gx.numpy(), gx2.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["two_channels", "stride", "dilate", "float64", "wide_kernel"])
def test_other_convolutions_stay_on_torch(case):
    x = torch.randn(2, 2 if case == "two_channels" else 1, 9, 9,
                    dtype=torch.float64 if case == "float64" else torch.float32)
    w = torch.randn(3, x.shape[1], 3, 8 if case == "wide_kernel" else 3, dtype=x.dtype)
    stride = (2, 2) if case == "stride" else (1, 1)
    dilate = (2, 2) if case == "dilate" else (1, 1)
    assert not K.usable(x, w, stride, dilate, 1)


def test_nd_convolution_uses_it_and_the_switch_turns_it_off():
    rs = np.random.RandomState(0)
    x = nd.array(rs.randn(8, 1, 12, 12).astype("float32"))
    w = nd.array(rs.randn(4, 1, 5, 5).astype("float32"))
    b = nd.array(rs.randn(4).astype("float32"))
    head = nd.array(rs.randn(8, 4, 8, 8).astype("float32"))
    out = {}
    for on in (True, False):
        old = K.set_enabled(on)
        try:
            w.attach_grad()
            b.attach_grad()
            with autograd.record():
                y = nd.Convolution(x, w, b, kernel=(5, 5), num_filter=4)
            # read before backward: afterwards y is a constant, as in MXNet
            kind = type(y._t.grad_fn).__name__
            y.backward(head)
            out[on] = (y.asnumpy(), w.grad.asnumpy(), b.grad.asnumpy(), kind)
        finally:
            K.set_enabled(old)
    assert "Conv1ch" in out[True][3] and "Conv1ch" not in out[False][3]
    np.testing.assert_array_equal(out[True][0], out[False][0])
    np.testing.assert_allclose(out[True][1], out[False][1], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(out[True][2], out[False][2], rtol=1e-5, atol=1e-4)
