"""gluon.contrib.nn / cnn / data: layers checked against MXNet 1.9.1's numbers and semantics."""
import os

import numpy as np
import pytest

import neogluon as mx
from neogluon import gluon, nd, autograd
from neogluon.gluon import nn, contrib
from neogluon.gluon.contrib.nn import (Concurrent, HybridConcurrent, Identity, PixelShuffle1D,
                                       PixelShuffle2D, PixelShuffle3D, SyncBatchNorm)
from neogluon.gluon.contrib.cnn import DeformableConvolution, ModulatedDeformableConvolution

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "contrib")
CASES = [dict(kernel=(3, 3), stride=(1, 1), dilate=(1, 1), pad=(1, 1), G=1, Gd=1, F=3),
         dict(kernel=(3, 2), stride=(2, 1), dilate=(1, 2), pad=(0, 1), G=2, Gd=2, F=4)]


@pytest.mark.parametrize("ci", [0, 1])
def test_deformable_convolution_ops_match_mxnet(ci):
    r = np.load(os.path.join(FIX, "deformable.npz"))
    cs = CASES[ci]
    kw = dict(kernel=cs["kernel"], stride=cs["stride"], dilate=cs["dilate"], pad=cs["pad"],
              num_filter=cs["F"], num_group=cs["G"], num_deformable_group=cs["Gd"])
    x, off, mask, w, b = [nd.array(r[f"{ci}/{k}"]) for k in ("x", "off", "mask", "w", "b")]
    for a in (x, off, w):
        a.attach_grad()
    with autograd.record():
        y = nd.contrib.DeformableConvolution(data=x, offset=off, weight=w, bias=b, **kw)
    y.backward(nd.ones_like(y))
    np.testing.assert_allclose(y.asnumpy(), r[f"{ci}/y1"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), r[f"{ci}/gx1"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(off.grad.asnumpy(), r[f"{ci}/go1"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(w.grad.asnumpy(), r[f"{ci}/gw1"], rtol=1e-5, atol=1e-5)
    y2 = nd.contrib.ModulatedDeformableConvolution(data=x, offset=off, mask=mask, weight=w,
                                                   bias=b, **kw)
    np.testing.assert_allclose(y2.asnumpy(), r[f"{ci}/y2"], rtol=1e-5, atol=1e-5)


def test_deformable_layers_shapes_params_and_errors():
    net = ModulatedDeformableConvolution(4, kernel_size=3, padding=1, activation="relu")
    assert list(net.collect_params().keys()) == [
        net.prefix + n for n in ("deformable_conv_weight", "deformable_conv_bias",
                                 "offset_weight", "offset_bias")]
    net.initialize()
    net.hybridize()
    x = nd.random.uniform(shape=(2, 3, 8, 8))
    assert net(x).shape == (2, 4, 8, 8)
    d = DeformableConvolution(6, kernel_size=(3, 2), strides=1, num_deformable_group=2,
                              use_bias=False)
    d.initialize()
    assert d(nd.ones((1, 4, 7, 6))).shape == (1, 6, 5, 5)
    assert d.offset_weight.shape == (2 * 6 * 2, 4, 3, 2)
    # Zero offsets (the default initialisation): a plain convolution.
    conv = nn.Conv2D(6, kernel_size=(3, 2), use_bias=False, in_channels=4)
    conv.initialize()
    conv.weight.set_data(d.deformable_conv_weight.data())
    xx = nd.random.uniform(shape=(1, 4, 7, 6))
    np.testing.assert_allclose(d(xx).asnumpy(), conv(xx).asnumpy(), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="NCHW"):
        DeformableConvolution(2, layout="NHWC")
    with pytest.raises(mx.MXNetError, match="offset must have shape"):
        nd.contrib.DeformableConvolution(data=nd.ones((1, 1, 4, 4)), offset=nd.ones((1, 2, 2, 2)),
                                         weight=nd.ones((1, 1, 3, 3)), kernel=(3, 3),
                                         num_filter=1, no_bias=True)


def test_concurrent_and_identity():
    for cls in (Concurrent, HybridConcurrent):
        net = cls(axis=1)
        net.add(nn.Dense(4, in_units=3), nn.Dense(2, in_units=3), Identity())
        net.initialize()
        x = nd.random.uniform(shape=(5, 3))
        y = net(x)
        assert y.shape == (5, 9)
        np.testing.assert_array_equal(y[:, 6:].asnumpy(), x.asnumpy())


def test_pixel_shuffle_values():
    # Reference values from MXNet 1.9.1's own tests.
    y = PixelShuffle1D(2)(nd.arange(12).reshape((1, 4, 3)))
    np.testing.assert_array_equal(y.asnumpy(), [[[0, 3, 1, 4, 2, 5], [6, 9, 7, 10, 8, 11]]])
    y = PixelShuffle2D((2, 3))(nd.arange(72).reshape((1, 12, 2, 3)))
    assert y.shape == (1, 2, 4, 9)
    np.testing.assert_array_equal(y.asnumpy()[0, 0, :2], [[0, 6, 12, 1, 7, 13, 2, 8, 14],
                                                          [18, 24, 30, 19, 25, 31, 20, 26, 32]])
    y = PixelShuffle3D((2, 1, 2))(nd.arange(96).reshape((1, 4, 2, 3, 4)))
    assert y.shape == (1, 1, 4, 3, 8)
    np.testing.assert_array_equal(y.asnumpy()[0, 0, 1, 0], [48, 72, 49, 73, 50, 74, 51, 75])
    # Generic check: the inverse of the obvious space-to-depth.
    x = np.random.rand(2, 2 * 6, 3, 4).astype("f")
    y = PixelShuffle2D((2, 3))(nd.array(x)).asnumpy()
    ref = x.reshape(2, 2, 2, 3, 3, 4).transpose(0, 1, 4, 2, 5, 3).reshape(2, 2, 6, 12)
    np.testing.assert_array_equal(y, ref)
    with pytest.raises(ValueError):
        PixelShuffle2D((2, 3, 4))
    net = PixelShuffle2D(2)
    net.hybridize()
    assert net(nd.ones((1, 8, 2, 2))).shape == (1, 2, 4, 4)


def test_sync_batch_norm_is_batch_norm_on_one_device():
    s = SyncBatchNorm(num_devices=1)
    b = nn.BatchNorm()
    s.initialize()
    b.initialize()
    x = nd.random.uniform(shape=(4, 3, 2, 2))
    with autograd.record():
        ys, yb = s(x), b(x)
    np.testing.assert_allclose(ys.asnumpy(), yb.asnumpy())
    assert "ndev=1" in repr(s)


def test_interval_sampler():
    assert list(contrib.data.IntervalSampler(13, 3)) == [0, 3, 6, 9, 12, 1, 4, 7, 10, 2, 5, 8,
                                                         11]
    s = contrib.data.IntervalSampler(13, 3, rollover=False)
    assert list(s) == [0, 3, 6, 9, 12] and len(s) == 13
    with pytest.raises(AssertionError):
        contrib.data.IntervalSampler(2, 3)


@pytest.mark.parametrize("cell", ["Conv1DRNNCell", "Conv1DLSTMCell", "Conv1DGRUCell"])
def test_conv_cells_unrolled_on_symbols_name_outputs_as_mxnet(cell):
    c = getattr(contrib.rnn, cell)((10, 50), 100, 3, 3, prefix="rnn_")
    inputs = [mx.sym.Variable("rnn_t%d_data" % i) for i in range(3)]
    outputs, _ = c.unroll(3, inputs)
    outputs = mx.sym.Group(outputs)
    assert outputs.list_outputs() == ["rnn_t0_out_output", "rnn_t1_out_output",
                                      "rnn_t2_out_output"]
    _, outs, _ = outputs.infer_shape(rnn_t0_data=(1, 10, 50), rnn_t1_data=(1, 10, 50),
                                     rnn_t2_data=(1, 10, 50))
    assert outs == [(1, 100, 48)] * 3
