"""nd operators MXNet 1.9.1 programs call directly: the optimizer update operators, the legacy
random spellings, the densities, nd._internal, and MXNet's copy-vs-view rules.

Numbers marked "MXNet" were printed by MXNet 1.9.1 for the same inputs."""
import numpy as np
import pytest

import neogluon as mx
from neogluon import nd


def _wgm():
    return nd.array([0.5, -1.0, 2.0]), nd.array([0.3, -0.2, 5.0]), nd.array([0.1, 0.2, -0.3])


def test_sgd_mom_update_matches_mxnet():
    w, g, m = _wgm()
    nd.sgd_mom_update(w, g, m, lr=0.1, momentum=0.9, wd=0.01, rescale_grad=0.5,
                      clip_gradient=1.0, out=w)
    np.testing.assert_allclose(w.asnumpy(), [0.5745, -0.809, 1.628], rtol=1e-6)  # MXNet
    np.testing.assert_allclose(m.asnumpy(), [0.0745, 0.191, -0.372], rtol=1e-6)


def test_adam_update_matches_mxnet():
    w, g, m = _wgm()
    v = nd.array([0.01, 0.02, 0.03])
    out = nd.adam_update(w, g, m, v, lr=0.1, wd=0.01, rescale_grad=0.5, clip_gradient=1.0)
    np.testing.assert_allclose(out.asnumpy(), [0.39457393, -1.1195246, 2.0966003], rtol=1e-6)
    np.testing.assert_allclose(m.asnumpy(), [0.1055, 0.169, -0.17], rtol=1e-6)
    np.testing.assert_allclose(v.asnumpy(), [0.010014025, 0.0199921, 0.03096999], rtol=1e-6)
    np.testing.assert_array_equal(w.asnumpy(), [0.5, -1.0, 2.0])  # out=None: weight kept


def test_nag_signum_ftrl_match_mxnet():
    w, g, m = _wgm()
    out = nd.nag_mom_update(w, g, m, lr=0.1, momentum=0.9, wd=0.01, rescale_grad=0.5,
                            clip_gradient=1.0)
    np.testing.assert_allclose(out.asnumpy(), [0.55155, -0.8171, 1.5632], rtol=1e-6)
    np.testing.assert_allclose(m.asnumpy(), [0.0745, 0.191, -0.372], rtol=1e-6)
    w, g, m = _wgm()
    out = nd.signum_update(w, g, m, lr=0.1, momentum=0.9, wd=0.01, wd_lh=0.05)
    np.testing.assert_allclose(out.asnumpy(), [0.5975, -0.895, 1.89], rtol=1e-6)
    np.testing.assert_allclose(m.asnumpy(), [0.0595, 0.201, -0.772], rtol=1e-5)
    w, g, z = _wgm()
    n = nd.array([0.01, 0.02, 0.03])
    out = nd.ftrl_update(w, g, z, n, lr=0.1, wd=0.01, lamda1=0.01)
    np.testing.assert_allclose(out.asnumpy(), [0.050950855, -0.08228879, 1.5304115], rtol=1e-4)
    np.testing.assert_allclose(n.asnumpy(), [0.1, 0.06, 25.03], rtol=1e-6)


def test_update_operator_checks_shapes():
    with pytest.raises(mx.base.MXNetError, match="same shape"):
        nd.sgd_update(nd.ones(3), nd.ones(4), lr=0.1)


def test_fill_element_and_onehot():
    a = nd.array(np.arange(6).reshape(2, 3))
    r = nd.fill_element_0index(a, nd.array([9, 8]), nd.array([2, 0]))
    np.testing.assert_array_equal(r.asnumpy(), [[0, 1, 9], [8, 4, 5]])
    out = nd.zeros((2, 3))
    nd.onehot_encode(nd.array([1, 2]), out=out)
    np.testing.assert_array_equal(out.asnumpy(), [[0, 1, 0], [0, 0, 1]])


def test_internal_slice_assign():
    x = nd.ones((2, 3))
    nd._internal._crop_assign(x, nd.zeros((2, 1)), begin=(0, 1), end=(2, 2), out=x)
    np.testing.assert_array_equal(x.asnumpy(), [[1, 0, 1], [1, 0, 1]])
    y = nd._internal._crop_assign_scalar(nd.ones((2, 2)), scalar=5, begin=(1,), end=(2,))
    np.testing.assert_array_equal(y.asnumpy(), [[1, 1], [5, 5]])


def test_operators_return_new_arrays_fluent_inplace_views():
    x = nd.arange(6).reshape(2, 3)
    outs = [nd.transpose(x), nd.flatten(x), nd.reshape(x, shape=(3, 2)), x.flatten(),
            x.expand_dims(0), nd.slice_axis(x, axis=0, begin=0, end=1), x.squeeze()]
    views = [x.flatten(inplace=True), x.expand_dims(0, inplace=True), x.reshape(3, 2)]
    before = [o.asnumpy() for o in outs]
    x[:] = -1
    for o, b in zip(outs, before):
        np.testing.assert_array_equal(o.asnumpy(), b)
    for v in views:
        assert (v.asnumpy() == -1).all()


def test_moveaxis_and_errors():
    x = nd.zeros((4, 1, 2, 3))
    assert nd.moveaxis(x, [0, 1], [2, 3]).shape == (2, 3, 4, 1)
    assert nd.moveaxis(x, [3, 0], [1, 0]).shape == (4, 3, 1, 2)
    for src, dst in [(4, 0), ([0, 0], [0, 1]), (0, [0, 1])]:
        with pytest.raises(ValueError):
            nd.moveaxis(x, src, dst)


def test_topk_sort_flattened_and_broadcast_like_axes():
    a = nd.array([[3, 1], [4, 2]])
    np.testing.assert_array_equal(nd.topk(a, axis=None, k=2).asnumpy(), [2, 0])
    np.testing.assert_array_equal(nd.topk(a, axis=None, k=2, ret_typ="mask").asnumpy(),
                                  [[1, 0], [1, 0]])
    np.testing.assert_array_equal(nd.sort(a, axis=None).asnumpy(), [1, 2, 3, 4])
    with pytest.raises(mx.base.MXNetError):
        nd.broadcast_like(nd.ones((1, 2)), nd.ones((3, 2)), lhs_axes=(), rhs_axes=())
    assert nd.broadcast_like(nd.ones((1, 2)), nd.ones((2, 3, 2)), lhs_axes=(0,),
                             rhs_axes=(-2,)).shape == (3, 2)


def test_array_of_object_dtype():
    a = nd.array(np.array([1, 2.5], dtype=object))
    assert a.dtype == np.float32
    np.testing.assert_array_equal(a.asnumpy(), [1, 2.5])


def test_zeros_ones_out():
    out = nd.full((2, 2), 7)
    nd.ones((2, 2), out=out)
    assert (out.asnumpy() == 1).all()
    nd.zeros((2, 2), out=out)
    assert (out.asnumpy() == 0).all()


def test_legacy_random_spellings_and_shapes():
    mx.random.seed(3)
    a = nd.random_uniform(low=-1, high=1, shape=(2, 3))
    mx.random.seed(3)
    b = nd.uniform(-1, 1, shape=(2, 3))
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    lo, hi = nd.array([0, 10]), nd.array([1, 11])
    s = nd.sample_uniform(lo, hi, shape=(4,))
    assert s.shape == (2, 4)
    assert (s.asnumpy()[1] >= 10).all()
    assert nd.random.normal(lo, hi, shape=(3, 2)).shape == (2, 3, 2)
    assert nd.random.randn(2, loc=lo, scale=hi).shape == (2, 2)
    assert nd.random.gamma_like(nd.ones((2, 2), dtype="float64")).dtype == np.float64
    with pytest.raises(AssertionError):
        nd.random.uniform(lo, 2.0)
    with pytest.raises(mx.base.MXNetError):
        nd.random.multinomial(nd.zeros(2 ** 12), dtype="uint8")


def test_random_pdfs_match_mxnet():
    x = nd.array([[0.2, 1.5], [2.0, 3.0]])
    mu, s = nd.array([0., 1.]), nd.array([1., 2.])
    np.testing.assert_allclose(nd.random_pdf_normal(x, mu, s).asnumpy(),
                               [[0.39104268, 0.1295176], [0.17603266, 0.12098536]], rtol=1e-5)
    np.testing.assert_allclose(
        nd.random_pdf_gamma(x, nd.array([2., 3.]), s, is_log=True).asnumpy(),
        [[-1.8094379, -1.0945349], [-1.2274113, -2.416481]], rtol=1e-5)
    k = nd.array([[0., 1.], [2., 3.]])
    np.testing.assert_allclose(
        nd.random_pdf_negative_binomial(k, nd.array([2., 3.]), nd.array([.4, .7])).asnumpy(),
        [[0.16, 0.192], [0.18522, 0.09261]], rtol=1e-5)
    np.testing.assert_allclose(
        nd.random_pdf_generalized_negative_binomial(k, nd.array([2., 3.]),
                                                    nd.array([.4, .7])).asnumpy(),
        [[0.23004812, 0.25560904], [0.15812215, 0.12241717]], rtol=1e-5)
    np.testing.assert_allclose(nd.random_pdf_uniform(x, mu, nd.array([1., 4.])).asnumpy(),
                               [[1, 0], [1 / 3, 1 / 3]], rtol=1e-6)  # 1.5 is outside [0, 1]


def test_zipfian_samplers():
    classes, trials = nd._internal._sample_unique_zipfian(100, shape=(2, 5))
    assert classes.dtype == np.int64 and classes.shape == (2, 5)
    for row in classes.asnumpy():
        assert len(set(row)) == 5 and row.max() < 100
    assert (trials.asnumpy() >= 5).all()
    sampled, cnt_true, cnt_sampled = nd.contrib.rand_zipfian(nd.array([1, 2]), 4, 10)
    assert sampled.shape == (4,) and cnt_true.dtype == np.float64
    np.testing.assert_allclose(cnt_true.asnumpy(), np.log([3 / 2, 4 / 3]) / np.log(11) * 4)


def test_getstate_setstate_mxnet_bytes():
    # MXNet 1.9.1's mx.nd.arange(1, ctx=mx.gpu()).__getstate__(): loads on the CPU here.
    state = {"handle": bytearray(
        b"\xc9\xfa\x93\xf9\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00"
        b"\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")}
    a = nd.ones((3,))
    a.__setstate__(state)
    assert a.shape == (1,) and a.context == mx.cpu() and a.asscalar() == 0
    b = nd.zeros(1)
    b.__setstate__(nd.array([[1, 2]], dtype="int64").__getstate__())
    assert b.dtype == np.int64 and b.asnumpy().tolist() == [[1, 2]]


def test_from_numpy_zero_copy_shares_and_locks():
    a = np.array([[1, 2], [3, 4]], dtype="float32")
    m = nd.from_numpy(a)
    with pytest.raises(ValueError):
        a[0, 0] = 5
    m[1, 1] = 9
    assert a[1, 1] == 9
    with pytest.raises(ValueError):
        nd.from_numpy(np.ones((2, 3)).T)
    assert nd.from_numpy(np.ones((2, 3)).T, zero_copy=False).shape == (3, 2)


def test_save_load_np_shape_semantics(tmp_path):
    f = str(tmp_path / "a")
    nd.save(f, [nd.array([1, 2])])
    with mx.np_shape(True):
        with pytest.raises(mx.base.MXNetError):
            nd.load(f)
        nd.save(f, [nd.array(np.array(3.0)), nd.zeros((0, 2))])
        s, z = nd.load(f)
        assert s.shape == () and s.asnumpy() == 3 and z.shape == (0, 2)
    with pytest.raises(mx.base.MXNetError):
        nd.load(f)


def test_negative_step_with_advanced_index_get_and_set():
    x = np.arange(2 * 3 * 4 * 5, dtype="float32").reshape(2, 3, 4, 5)
    key = (1, [2], np.array([[3]]), slice(None, None, -2))
    a = nd.array(x)
    np.testing.assert_array_equal(a[key].asnumpy(), x[key])
    x[key] = -1
    a[key] = -1
    np.testing.assert_array_equal(a.asnumpy(), x)


def test_strided_basic_index_is_a_copy_contiguous_a_view():
    a = nd.arange(12).reshape(3, 4)
    assert nd.NDArray._basic_indexing_slice_is_contiguous((slice(1, 3),), (3, 4))
    assert not nd.NDArray._basic_indexing_slice_is_contiguous((slice(None), slice(0, 2)),
                                                             (3, 4))
    a[1:3][:] = 0
    a[:, 0:2][:] = 5
    np.testing.assert_array_equal(a.asnumpy(), [[0, 1, 2, 3], [0] * 4, [0] * 4])


def test_inplace_write_of_a_recorded_value_raises():
    x = nd.zeros((3, 2))
    y = nd.ones((2,))
    y.attach_grad()
    with pytest.raises(mx.base.MXNetError, match="Inplace operations"):
        with mx.autograd.record():
            x[0] = y
    with pytest.raises(mx.base.MXNetError, match="Inplace operations"):
        with mx.autograd.record():
            x += nd.ones((3, 2)) * y
    with mx.autograd.record():
        x[:] = y  # a whole-array write is a copy, which records
        z = (x * 2).sum()
    z.backward()
    np.testing.assert_array_equal(y.grad.asnumpy(), [6, 6])


def test_sparse_scalar_comparisons_keep_stype_where_zero_maps_to_zero():
    for stype in ("row_sparse", "csr"):
        y = nd.ones((2, 3)).tostype(stype)
        assert (y == 1).stype == stype and (y == 0).stype == "default"
        assert (y > 0).stype == stype and (y >= 0).stype == "default"
        assert (0 < y).stype == stype and (1 <= y).stype == stype
        np.testing.assert_array_equal((y >= 1).asnumpy(), np.ones((2, 3)))


def test_csr_slice_take_and_broadcast_fallback():
    d = np.array([[0, 1, 0, 2], [3, 0, 0, 0], [0, 0, 4, 5]], dtype="float32")
    c = nd.array(d).tostype("csr")
    s = nd.slice(c, begin=(1, 1), end=(3, 4))
    assert s.stype == "csr"
    np.testing.assert_array_equal(s.asnumpy(), d[1:3, 1:4])
    s.check_format()
    t = nd.take(c, nd.array([2, -1, 7]), mode="wrap")
    assert t.stype == "csr"
    np.testing.assert_array_equal(t.asnumpy(), np.take(d, [2, -1, 7], axis=0, mode="wrap"))
    r1, r2 = nd.ones((3, 4)).tostype("row_sparse"), nd.ones((1, 4)).tostype("row_sparse")
    np.testing.assert_array_equal((r1 + r2).asnumpy(), np.full((3, 4), 2))
    assert nd.empty((2, 2), stype="csr").stype == "csr"
    with pytest.raises(mx.base.MXNetError):
        nd.sparse.retain(nd.ones((2, 2)).tostype("row_sparse"), invalid_arg=1)


def test_fully_connected_takes_column_bias():
    out = nd.FullyConnected(nd.ones((2, 3)), nd.ones((4, 3)), nd.ones((4, 1)), num_hidden=4)
    np.testing.assert_array_equal(out.asnumpy(), np.full((2, 4), 4))
    with pytest.raises(mx.base.MXNetError):
        nd.FullyConnected(nd.ones((2, 3)), nd.ones((4, 3)), nd.ones((2, 2)), num_hidden=4)


def test_invalid_sampler_parameters_fail_at_synchronisation():
    # As MXNet's engine: no error until something waits on the result, then once.
    a = nd.random.normal(0, 1, (2, 2))
    b = nd.random.normal(0, -1, (2, 2))
    c = nd.dot(a, b)
    with pytest.raises(mx.base.MXNetError, match="scale"):
        c.asnumpy()
    c.asnumpy()  # reported once
    x, y = nd.random_normal(0, -1, (2, 2)).copyto(mx.cpu())
    with pytest.raises(mx.base.MXNetError):
        x.wait_to_read()
    y.asnumpy()  # the same failure, already reported
    u = nd.random.uniform(1, 0, (2,))  # noqa: F841 - alive: its error is still observable
    with pytest.raises(mx.base.MXNetError, match="low"):
        nd.waitall()
    nd.waitall()
    ok = nd.random.normal(nd.zeros(2), -nd.ones(2))  # parameter arrays are not checked
    ok.asnumpy()


def test_more_operators_return_new_arrays():
    x = nd.arange(4).reshape(2, 2)
    outs = [x.T, nd.reshape_like(x, nd.ones(4)), nd.broadcast_to(x, (2, 2)),
            nd.stop_gradient(x), nd.split_v2(x, 2, axis=0)[0], nd.sum(x, axis=())]
    before = [o.asnumpy() for o in outs]
    x[:] = 9
    for o, b in zip(outs, before):
        np.testing.assert_array_equal(o.asnumpy(), b)


def test_integer_variables_get_gradients():
    # MXNet differentiates integer arrays: the gradient scatters into an integer buffer.
    x = nd.arange(0, 12, dtype="int32").reshape(3, 4)
    x.attach_grad()
    with mx.autograd.record():
        y = x[1:, [0, 2]]
    y.backward()
    expect = np.zeros((3, 4), dtype="int32")
    expect[1:, [0, 2]] = 1
    assert x.grad.dtype == np.int32
    np.testing.assert_array_equal(x.grad.asnumpy(), expect)
    a = nd.arange(0, 20, dtype="int64")
    a.attach_grad()
    with mx.autograd.record():
        b = nd.topk(a, k=3, ret_typ="value")
    b.backward(nd.array([1, 2, 3], dtype="int64"))
    np.testing.assert_array_equal(a.grad.asnumpy()[-3:], [3, 2, 1])
    assert a.grad.asnumpy()[:-3].sum() == 0
