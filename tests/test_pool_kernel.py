"""The compiled CPU max-pooling kernel (neogluon/ndarray/_pool_kernel.py) gives torch's
max pooling bit for bit (values, the gradient's positions and its sums), and stays out of
tracing."""
import itertools

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import neogluon as mx
from neogluon.ndarray import _pool_kernel as pk

needs_kernel = pytest.mark.skipif(pk._LIB.get() is None, reason="no C compiler here")


@pytest.fixture
def kernel_on():
    old = pk.set_enabled(True)
    yield
    pk.set_enabled(old)


def _pool_both(x, grad, **kw):
    """nd.Pooling forward and backward with the kernel and with torch's pooling."""
    res = []
    for on in (True, False):
        old = pk.set_enabled(on)
        try:
            a = mx.nd.array(x, dtype=x.dtype)
            a.attach_grad()
            with mx.autograd.record():
                y = mx.nd.Pooling(a, pool_type="max", **kw)
            y.backward(mx.nd.array(grad(y.shape), dtype=x.dtype))
            res.append((y.asnumpy(), a.grad.asnumpy()))
        finally:
            pk.set_enabled(old)
    return res


def _hard_input(shape, dtype, rng):
    x = rng.standard_normal(shape).astype(dtype)
    x[..., 1, :] = 1.0                     # a row of ties
    x[0, 0, 0, :2] = np.nan                # NaNs win and propagate, as in torch
    x[-1, -1, -1, -3:] = -np.inf           # a window of -inf keeps a valid position
    return x


@needs_kernel
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("convention", ["valid", "full"])
@pytest.mark.parametrize("layout", ["rows", "interleaved"])
def test_kernel_equals_torch_pooling_bit_for_bit(dtype, convention, layout, monkeypatch):
    # rows: the loop over each plane's output rows; interleaved: several planes scanned at
    # once (the small-plane forward); the shapes have 6 planes, so the interleaved kernel
    # also runs a partly filled group of planes
    monkeypatch.setattr(pk, "_blocked", lambda *a: layout == "interleaved")
    rng = np.random.default_rng(3)
    cases = 0
    for shape in [(2, 3, 7, 9), (3, 2, 12, 13), (1, 11, 5, 6)]:
        for k, s in itertools.product([(1, 1), (2, 2), (3, 3), (2, 3), (3, 1)],
                                      [(1, 1), (2, 2), (3, 2), (1, 2)]):
            for p in itertools.product(range(k[0] // 2 + 1), range(k[1] // 2 + 1)):
                x = _hard_input(shape, dtype, rng)
                g = rng.standard_normal(shape[:2] + (shape[2] + 3, shape[3] + 3)).astype(dtype)
                (y1, g1), (y0, g0) = _pool_both(
                    x, lambda shp: g[tuple(slice(0, n) for n in shp)], kernel=k, stride=s,
                    pad=p, pooling_convention=convention)
                assert y1.dtype == dtype and y1.shape == y0.shape
                assert np.array_equal(y1, y0, equal_nan=True), (shape, k, s, p)
                assert np.array_equal(g1, g0, equal_nan=True), (shape, k, s, p)
                cases += 1
    assert cases == 180


@needs_kernel
def test_small_planes_take_the_interleaved_forward_and_large_ones_the_rows(monkeypatch):
    calls = []
    lib = pk._LIB.get()

    class Spy:
        def __getattr__(self, name):
            fn = getattr(lib, name)
            return lambda *a: calls.append(name) or fn(*a)
    monkeypatch.setattr(pk._LIB, "get", lambda: Spy())
    rng = np.random.default_rng(0)
    for shape, k, s, want in [((4, 16, 22, 22), 3, 2, "ng_maxpool2d_fwd_blocked"),
                              ((2, 8, 48, 48), 3, 2, "ng_maxpool2d_fwd_blocked"),
                              ((2, 8, 40, 40), 2, 2, "ng_maxpool2d_fwd"),
                              ((1, 8, 112, 112), 3, 2, "ng_maxpool2d_fwd"),
                              ((1, 2, 10, 10), 3, 2, "ng_maxpool2d_fwd")]:
        x = torch.from_numpy(rng.standard_normal(shape).astype(np.float32))
        outs = ((shape[2] - k) // s + 1,) * 2
        del calls[:]
        y = pk.max_pool2d(x, (k, k), (s, s), (0, 0), outs)
        assert calls == [want], (shape, calls)
        assert torch.equal(y, F.max_pool2d(x, k, s))


@needs_kernel
def test_one_dimensional_pooling_uses_the_kernel_and_equals_torch(kernel_on, monkeypatch):
    calls = []
    real = pk.max_pool2d
    monkeypatch.setattr(pk, "max_pool2d", lambda *a, **k: calls.append(1) or real(*a, **k))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3, 29)).astype(np.float32)
    (y1, g1), (y0, g0) = _pool_both(x, lambda shp: np.ones(shp, np.float32), kernel=(3,),
                                    stride=(2,), pad=(1,))
    assert calls, "1-D max pooling did not go through the kernel"
    assert np.array_equal(y1, y0) and np.array_equal(g1, g0)


@needs_kernel
@pytest.mark.parametrize("layout", ["rows", "interleaved"])
def test_threads_split_planes_with_the_same_bits(kernel_on, layout, monkeypatch):
    # 320 planes over 3 threads: 107 a thread, so each thread ends on a partial group of
    # interleaved planes
    monkeypatch.setattr(pk, "_blocked", lambda *a: layout == "interleaved")
    x = torch.randn(8, 40, 40, 40, requires_grad=True)
    outs = []
    old = torch.get_num_threads()
    try:
        for n in (1, 3):
            torch.set_num_threads(n)
            assert pk._threads(8 * 40 * 20 * 20) == n
            y = pk.max_pool2d(x, (3, 3), (2, 2), (1, 1), (20, 20))
            g, = torch.autograd.grad(y, x, torch.ones_like(y))
            outs.append((y, g))
    finally:
        torch.set_num_threads(old)
    ref = F.max_pool2d(x, 3, 2, 1)
    assert torch.equal(outs[0][0], ref) and torch.equal(outs[1][0], ref)
    assert torch.equal(outs[0][1], outs[1][1])


@needs_kernel
def test_double_backward_goes_through_torch(kernel_on):
    x = torch.randn(2, 3, 8, 8, dtype=torch.float64, requires_grad=True)
    w = torch.randn(2, 3, 4, 4, dtype=torch.float64, requires_grad=True)

    def second(pool):
        y = pool(x)
        g, = torch.autograd.grad((y * w).sum(), x, create_graph=True)
        return torch.autograd.grad((g * g).sum(), w)[0]

    ours = second(lambda t: pk.max_pool2d(t, (2, 2), (2, 2), (0, 0), (4, 4)))
    ref = second(lambda t: F.max_pool2d(t, 2, 2))
    assert torch.equal(ours, ref)


@needs_kernel
def test_tracing_sees_torch_pooling_not_the_kernel(kernel_on):
    x = torch.randn(1, 2, 6, 6)
    assert pk.usable(x)

    def f(t):
        return mx.nd.to_torch(mx.nd.Pooling(mx.nd.from_torch(t), kernel=(2, 2), stride=(2, 2),
                                            pool_type="max"))

    traced = torch.jit.trace(f, (x,))
    assert "max_pool2d" in str(traced.graph)
    assert torch.equal(traced(x * 2), F.max_pool2d(x * 2, 2, 2))

    from torch.fx.experimental.proxy_tensor import make_fx
    gm = make_fx(f, tracing_mode="fake")(x)
    assert "max_pool2d" in gm.code
    gm_real = make_fx(f)(x)
    assert "max_pool2d" in gm_real.code


def test_other_inputs_fall_back_to_torch(kernel_on):
    assert not pk.usable(torch.randn(1, 1, 4, 4, dtype=torch.float16))
    assert not pk.usable(torch.randint(0, 5, (1, 1, 4, 4)))
    x = np.random.default_rng(1).standard_normal((2, 3, 6, 6)).astype(np.float16)
    y = mx.nd.Pooling(mx.nd.array(x, dtype="float16"), kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                      pool_type="max")
    assert y.dtype == np.float16
    ref = F.max_pool2d(torch.from_numpy(x).float(), 3, 2, 1).half().numpy()
    assert np.array_equal(y.asnumpy(), ref)


@needs_kernel
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_channels_last_input_pools_channels_last_with_the_same_numbers(dtype):
    """A channels-last input (a few-channel convolution's output) is pooled by torch's NHWC
    kernel without a copy to NCHW: same values, same gradient (ties, NaN, -inf), and the
    output stays channels-last."""
    rng = np.random.default_rng(7)
    for shape, kw in [((3, 5, 8, 8), dict(kernel=(2, 2), stride=(2, 2))),
                      ((2, 6, 9, 11), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1))),
                      ((2, 4, 7, 7), dict(kernel=(3, 2), stride=(1, 2),
                                          pooling_convention="full"))]:
        x = _hard_input(shape, dtype, rng)
        res = []
        for cl in (False, True):
            a = mx.nd.array(x, dtype=x.dtype)
            if cl:
                a._t = a._t.contiguous(memory_format=torch.channels_last)
            a.attach_grad()
            with mx.autograd.record():
                y = mx.nd.Pooling(a, pool_type="max", **kw)
            assert y._t.is_contiguous(memory_format=torch.channels_last) == (
                cl or y._t.shape[1] == 1)
            g = np.random.default_rng(1).standard_normal(y.shape).astype(dtype)
            y.backward(mx.nd.array(g, dtype=x.dtype))
            res.append((y.asnumpy(), a.grad.asnumpy()))
        np.testing.assert_array_equal(res[0][0], res[1][0])
        np.testing.assert_array_equal(res[0][1], res[1][1])
