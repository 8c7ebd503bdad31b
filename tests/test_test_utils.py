"""mx.test_utils, mx.runtime, mx.util, mx.base helpers and the mx.contrib / mx.library / mx.np
namespaces. Seeded numbers marked "MXNet 1.9.1" were printed by real MXNet with the same seed
(the generators draw from NumPy's global generator in MXNet's order)."""
import http.server
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import neogluon as mx
from neogluon import test_utils as tu
from neogluon.test_utils import (almost_equal, assert_almost_equal, assert_allclose,
                                 assert_almost_equal_ignore_nan, assert_almost_equal_with_err,
                                 check_numeric_gradient, check_symbolic_backward,
                                 check_symbolic_forward, compare_optimizer, environment, get_tols)


# ---------------------------------------------------------------------------- tolerances
def test_default_tolerances_depend_on_dtype():
    f16, f32, f64 = (np.ones(2, dtype=t) for t in (np.float16, np.float32, np.float64))
    assert get_tols(f32, f32, None, None) == (1e-4, 1e-3)
    assert get_tols(f16, f16, None, None) == (1e-2, 1e-1)
    assert get_tols(f64, f64, None, None) == (1e-5, 1e-20)
    assert get_tols(np.ones(2, dtype=np.int32), np.ones(2, dtype=np.int64), None, None) == (0, 0)
    # the larger default of the two inputs wins; NDArrays and Python numbers count by dtype
    assert get_tols(mx.nd.ones((2,), dtype="float16"), 1.0, None, None) == (1e-2, 1e-1)
    assert get_tols(mx.nd.ones((2,)), f64, None, None) == (1e-4, 1e-3)
    # explicit numbers and per-dtype dicts
    assert get_tols(f32, f32, 0.5, 0.25) == (0.5, 0.25)
    assert get_tols(f32, f32, {np.dtype(np.float32): 0.3}, None) == (0.3, 1e-3)
    assert tu.get_rtol() == 1e-5 and tu.get_atol() == 1e-20 and tu.get_etol() == 0
    assert tu.get_rtol(dtype=np.dtype(np.float16)) == 1e-2
    assert tu.default_numeric_eps()[np.dtype(np.float32)] == 2.0 ** -9
    assert tu.effective_dtype(mx.nd.ones((1,))) == np.dtype(np.float32)


def test_assert_almost_equal_uses_the_dtype_default():
    a = mx.nd.array([1.0, 2.0])
    assert_almost_equal(a, mx.nd.array([1.0, 2.0005]))              # within float32's atol 1e-3
    with pytest.raises(AssertionError):
        assert_almost_equal(a.astype("float64"), np.array([1.0, 2.0005]))  # float64: 1e-5 / 1e-20
    assert_almost_equal(np.array([1, 2]), np.array([1, 2]))
    with pytest.raises(AssertionError):
        assert_almost_equal(np.array([1, 2]), np.array([1, 3]))   # integers compare exactly


def test_assert_almost_equal_message_names_the_worst_element(capsys):
    with pytest.raises(AssertionError) as err:
        assert_almost_equal(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.5, 3.0]),
                            names=("x", "y"))
    msg = str(err.value)
    assert "Location of maximum error: (1,), x=2.00000000, y=2.50000000" in msg
    assert "mismatch 33.333333%" in msg
    assert "1: Error 20000.000000" in capsys.readouterr().out  # the worst ones are printed


def test_assert_almost_equal_options():
    nan = np.array([np.nan, 1.0])
    with pytest.raises(AssertionError):
        assert_almost_equal(nan, nan)
    assert_almost_equal(nan, nan, equal_nan=True)
    assert_almost_equal(np.ones((2, 3)), np.ones(3))                # broadcasts by default
    with pytest.raises(AssertionError, match="not equal"):
        assert_almost_equal(np.ones((2, 3)), np.ones(3), use_broadcast=False)
    with pytest.raises(AssertionError):
        assert_almost_equal(np.array([True, False]), np.array([True, True]))
    assert_allclose(np.array([1.0, np.nan]), np.array([1.0, np.nan]))  # equal_nan=True there
    with pytest.raises(AssertionError):
        assert_allclose(np.array([1.0]), np.array([1.0 + 1e-6]))       # rtol 1e-7
    assert_almost_equal_ignore_nan(np.array([np.nan, 1.0]), np.array([5.0, 1.0]))
    with pytest.raises(AssertionError):
        assert_almost_equal_ignore_nan(np.array([np.nan, 1.0]), np.array([5.0, 2.0]))
    # etol: up to that fraction of the elements may differ
    a, b = np.array([1.0, 2, 3, 4]), np.array([1.0, 2, 3, 5])
    assert_almost_equal_with_err(a, b, etol=0.3)
    with pytest.raises(AssertionError):
        assert_almost_equal_with_err(a, b, etol=0.2)
    with pytest.raises(AssertionError):
        assert_almost_equal_with_err(a, b)                            # no etol: no mismatch allowed


def test_almost_equal_and_same():
    assert almost_equal(np.array([1.0]), np.array([1.00001]))       # rtol 1e-5
    assert not almost_equal(np.array([1.0]), np.array([1.0001]))
    assert almost_equal(mx.nd.array([1.0]), np.array([1.0]))
    assert tu.same(np.arange(3), mx.nd.arange(3).asnumpy())
    assert not tu.same(np.arange(3), np.arange(1, 4))
    x = mx.nd.ones((2,))
    assert tu.same_array(x, x) and not tu.same_array(x, x.copy())
    assert tu.locationError(np.array([1.0]), np.array([2.0]), (0,), ("a", "b")) == \
        "Location of error: (0,), a=1.00000000, b=2.00000000"


# ---------------------------------------------------------------------------- generators
def test_rand_ndarray_matches_mxnet_seeded_draws():
    np.random.seed(1)
    a = tu.rand_ndarray((3, 4))
    assert a.dtype == np.float32 and a.stype == "default"
    np.testing.assert_allclose(a.asnumpy()[0], [1.6243454, -0.6117564, -0.5281718, -1.0729686],
                               rtol=1e-6)
    np.random.seed(7)
    b = tu.rand_ndarray((2, 3), dtype="float64")       # MXNet 1.9.1
    assert b.dtype == np.float64
    np.testing.assert_allclose(b.asnumpy()[0], [1.6905256509780884, -0.46593737602233887,
                                                0.032820165157318115])


def test_rand_sparse_ndarray_row_sparse():
    np.random.seed(2)
    arr, (values, indices) = tu.rand_sparse_ndarray((6, 3), "row_sparse", density=0.5)
    assert arr.stype == "row_sparse" and arr.shape == (6, 3)
    assert indices.tolist() == [0, 1, 3, 4, 5]                      # MXNet 1.9.1
    np.testing.assert_allclose(arr.asnumpy()[indices], values)
    assert not arr.asnumpy()[2].any()
    # density 0: an empty row_sparse array and empty numpy data
    empty, (v0, i0) = tu.rand_sparse_ndarray((4, 2), "row_sparse", density=0.0)
    assert empty.stype == "row_sparse" and not empty.asnumpy().any() and v0.size == 0 == i0.size
    # rsp_indices, data_init and modifier_func
    arr, (values, _) = tu.rand_sparse_ndarray((5, 2), "row_sparse", rsp_indices=np.array([1, 3]),
                                              data_init=2.0, modifier_func=lambda v: v * 3)
    assert arr.indices.asnumpy().tolist() == [1, 3] and (values == 6).all()
    with pytest.raises(AssertionError):
        tu.rand_sparse_ndarray((5, 2), "row_sparse", distribution="powerlaw")


def test_rand_sparse_ndarray_csr():
    np.random.seed(3)
    arr, (indptr, indices, data) = tu.rand_sparse_ndarray((4, 5), "csr", density=0.5)
    assert arr.stype == "csr"
    assert indptr.asnumpy().tolist() == [0, 3, 5, 8, 10]            # MXNet 1.9.1
    assert indices.asnumpy().tolist() == [1, 3, 4, 0, 4, 0, 1, 3, 1, 3]
    assert np.count_nonzero(arr.asnumpy()) == 10 == int(4 * 5 * 0.5)
    np.random.seed(9)
    arr, (indptr, indices, data) = tu.rand_sparse_ndarray((3, 8), "csr", density=0.25,
                                                          data_init=3.0)
    assert indptr.asnumpy().tolist() == [0, 3, 5, 6] and (data.asnumpy() == 3).all()
    # powerlaw: row i holds twice as many entries as row i - 1
    np.random.seed(3)
    arr, (indptr, _, _) = tu.rand_sparse_ndarray((5, 16), "csr", density=0.5,
                                                 distribution="powerlaw")
    assert indptr.asnumpy().tolist() == [0, 2, 6, 14, 30, 40]
    with pytest.raises(ValueError, match="density"):
        tu.rand_sparse_ndarray((5, 16), "csr", density=0.05, distribution="powerlaw")
    # shuffling the column indices (not the values) keeps each row's positions and values
    np.random.seed(4)
    a, _ = tu.rand_sparse_ndarray((6, 30), "csr", density=0.5)
    np.random.seed(4)
    b, _ = tu.rand_sparse_ndarray((6, 30), "csr", density=0.5, shuffle_csr_indices=True)
    assert (b.indices.asnumpy() != a.indices.asnumpy()).any()
    np.testing.assert_array_equal(a.asnumpy() != 0, b.asnumpy() != 0)
    np.testing.assert_allclose(np.sort(a.asnumpy(), axis=1), np.sort(b.asnumpy(), axis=1))
    with pytest.raises(AssertionError):
        tu.rand_sparse_ndarray((2, 2, 2), "csr")
    with pytest.raises(AssertionError):
        tu.rand_sparse_ndarray((2, 2), "coo")


def test_rand_ndarray_sparse_and_create_sparse_array():
    for stype in ("row_sparse", "csr"):
        arr = tu.rand_ndarray((10, 10), stype, density=0.3)
        assert arr.stype == stype and arr.dtype == np.float32
    np.random.seed(8)
    r = tu.create_sparse_array((6, 2), "row_sparse", data_init=2.0, rsp_indices=[4, 1])
    assert r.indices.asnumpy().tolist() == [1, 4]                   # sorted, as in MXNet
    zd = tu.create_sparse_array_zd((6, 2), "row_sparse", 0.9)       # rows only from rsp_indices
    assert zd.indices.asnumpy().size == 0
    assert tu.create_sparse_array((3, 3), "csr", density=1.0).stype == "csr"
    with pytest.raises(AssertionError, match="Unknown storage type"):
        tu.create_sparse_array((3, 3), "default")


def test_shapes_and_samples():
    np.random.seed(10)
    assert tu.rand_shape_nd(3, dim=2, allow_zero_size=True) == (1, 1, 0)   # MXNet 1.9.1
    for _ in range(20):
        assert all(1 <= d <= 3 for d in tu.rand_shape_2d(3, 3))
        assert all(1 <= d <= 2 for d in tu.rand_shape_3d(2, 2, 2))
        assert all(0 <= d <= 4 for d in tu.rand_shape_nd(5, 4, allow_zero_size=True))
        x, y = tu.rand_coord_2d(0, 5, 10, 20)
        assert 0 <= x < 5 and 10 <= y < 20
    population = list(range(10))
    sample = tu.random_sample(population, 4)
    assert len(set(sample)) == 4 and set(sample) <= set(population)
    assert population == list(range(10))                            # not shuffled in place
    a, b = tu.random_arrays((2, 3), ())
    assert a.shape == (2, 3) and a.dtype == np.float32 and b.shape == () and b.dtype == np.float32
    assert tu.random_arrays((4,)).shape == (4,)
    (u,) = tu.random_uniform_arrays((100,), low=2, high=3, dtype=np.float64)
    assert u.dtype == np.float64 and (u >= 2).all() and (u < 3).all()
    with pytest.raises(TypeError):
        tu.random_uniform_arrays((2,), bad=1)


def test_array_helpers():
    dat = np.arange(24).reshape(2, 3, 4)
    assert tu.np_reduce(dat, (0, 2), True, np.sum).tolist() == [[[60], [92], [124]]]
    assert tu.np_reduce(dat, 1, False, np.max).tolist() == dat.max(axis=1).tolist()
    assert tu.np_reduce(dat, None, False, np.sum) == dat.sum()
    assert tu.collapse_sum_like(np.ones((2, 3, 4)), (3, 1)).tolist() == [[8.0], [8.0], [8.0]]
    assert tu.collapse_sum_like(np.ones((2, 0)), (1, 0)).shape == (1, 0)
    assert tu.assign_each(np.array([1.0, 2.0]), lambda v: v * 2).tolist() == [2.0, 4.0]
    assert tu.assign_each2(np.array([1.0, 2.0]), np.array([3.0, 4.0]),
                           lambda a, b: a + b).tolist() == [4.0, 6.0]
    assert tu.create_vector(4).asnumpy().tolist() == [0, 1, 2, 3]
    assert tu.create_2d_tensor(2, 3).asnumpy().tolist() == [[0, 0, 0], [1, 1, 1]]
    assert tu.get_identity_mat(3).asnumpy().tolist() == np.eye(3).tolist()
    m = tu.new_matrix_with_real_eigvals_nd((2, 3, 3))
    assert m.shape == (2, 3, 3) and np.allclose(np.linalg.eigvals(m).imag, 0)
    s = tu.new_sym_matrix_with_real_eigvals_2d(4)
    np.testing.assert_allclose(s, s.T, atol=1e-10)


# ---------------------------------------------------------------------------- environment
def test_environment_sets_and_restores():
    os.environ.pop("H1_TU_A", None)
    os.environ["H1_TU_B"] = "keep"
    with environment("H1_TU_A", "1"):
        assert os.environ["H1_TU_A"] == "1"
    assert "H1_TU_A" not in os.environ
    with pytest.raises(RuntimeError):
        with environment({"H1_TU_A": "2", "H1_TU_B": None}):
            assert os.environ["H1_TU_A"] == "2" and "H1_TU_B" not in os.environ
            raise RuntimeError("inside")
    assert "H1_TU_A" not in os.environ and os.environ["H1_TU_B"] == "keep"
    with pytest.raises(AssertionError):
        with environment("A", "1", "extra"):
            pass
    tu.setenv("H1_TU_A", "x")
    assert tu.getenv("H1_TU_A") == "x"
    tu.setenv("H1_TU_A", None)
    assert tu.getenv("H1_TU_A") is None
    with pytest.raises(TypeError):
        tu.setenv("H1_TU_A", 3)
    del os.environ["H1_TU_B"]


def test_discard_stderr_silences_fd2():
    code = ("import os, sys\nfrom neogluon.test_utils import discard_stderr\n"
            "with discard_stderr():\n    os.write(2, b'hidden')\n    print('x', file=sys.stderr)\n"
            "os.write(2, b'shown')\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True)
    assert res.stderr == b"shown"


# ---------------------------------------------------------------------------- test control
def test_assert_exception_and_retry():
    tu.assert_exception(int, ValueError, "x")
    with pytest.raises(AssertionError):
        tu.assert_exception(int, ValueError, "3")
    calls = []

    @tu.retry(3)
    def flaky():
        calls.append(1)
        assert len(calls) == 3

    flaky()
    assert len(calls) == 3

    @tu.retry(2)
    def failing():
        raise AssertionError("always")

    with pytest.raises(AssertionError, match="always"):
        failing()


def test_compare_optimizer_detects_a_difference():
    sgd = mx.optimizer.SGD
    compare_optimizer(sgd(learning_rate=0.1), sgd(learning_rate=0.1), (3, 4), np.float32)
    compare_optimizer(sgd(learning_rate=0.1, momentum=0.9), sgd(learning_rate=0.1, momentum=0.9),
                      (5, 2), np.float32, w_stype="row_sparse", g_stype="row_sparse")
    with pytest.raises(AssertionError):
        compare_optimizer(sgd(learning_rate=0.1), sgd(learning_rate=0.2), (3, 4), np.float32)
    with pytest.raises(AssertionError):  # the momentum states differ
        compare_optimizer(sgd(learning_rate=0.1, momentum=0.9), sgd(learning_rate=0.1, momentum=0.9,
                                                                    wd=0.5), (3, 4), np.float32)
    tu.compare_ndarray_tuple((mx.nd.ones((2,)), None), (mx.nd.ones((2,)), mx.nd.zeros((2,))))


def test_random_generator_checks():
    buckets, probs = tu.gen_buckets_probs_with_ppf(lambda p: p, 5)
    assert buckets[0] == (0.0, 0.2) and probs == [0.2] * 5
    uniform = lambda n: np.random.uniform(size=n)  # noqa: E731
    p_values = tu.verify_generator(uniform, buckets, probs, nsamples=20000, nrepeat=3)
    assert len(p_values) == 3
    with pytest.raises(AssertionError, match="Generator test fails"):
        tu.verify_generator(lambda n: np.random.uniform(size=n) ** 2, buckets, probs,
                            nsamples=20000, nrepeat=3)
    p, obs, exp = tu.chi_square_check(lambda n: np.random.randint(0, 2, size=n), [0, 1],
                                      [0.5, 0.5], nsamples=10000)
    assert obs.sum() == 10000 and exp.tolist() == [5000, 5000] and 0 <= p <= 1
    # expected counts are rounded down (3000 + 7000 for 10001 samples): still a p value
    p, obs, exp = tu.chi_square_check(uniform, [(0.0, 0.3), (0.3, 1.0)], [0.3, 0.7],
                                      nsamples=10001)
    assert exp.tolist() == [3000, 7000] and obs.sum() == 10001 and p > 1e-4
    import scipy.stats
    stat = ((obs - exp) ** 2 / exp).sum()
    assert p == pytest.approx(scipy.stats.chi2.sf(stat, 1))
    normal = lambda n: np.random.normal(1.0, 2.0, size=n)  # noqa: E731
    assert tu.mean_check(normal, 1.0, 2.0, nsamples=100000)
    assert not tu.mean_check(normal, 1.5, 2.0, nsamples=100000)
    assert tu.var_check(normal, 2.0, nsamples=100000)
    assert not tu.var_check(normal, 3.0, nsamples=100000)


# ---------------------------------------------------------------------------- gradient checks
def _f(x, y):
    return x * y + mx.nd.sin(x)


def test_symbolic_checks_on_a_callable():
    x, y = np.random.rand(3, 4), np.random.rand(3, 4)
    out = check_symbolic_forward(_f, [x, y], [x * y + np.sin(x)])
    assert out[0].dtype == np.float32
    with pytest.raises(AssertionError):
        check_symbolic_forward(_f, [x, y], [x * y])
    ones = [np.ones((3, 4))]
    grads = check_symbolic_backward(_f, [x, y], ones, [y + np.cos(x), x])
    assert set(grads) == {"x", "y"}
    check_symbolic_backward(_f, {"x": x, "y": y}, ones, {"x": y + np.cos(x), "y": x},
                            grad_req="add")
    check_symbolic_backward(_f, [x, y], ones, [y + np.cos(x), x], grad_req={"x": "write", "y": "null"})
    with pytest.raises(AssertionError):
        check_symbolic_backward(_f, [x, y], ones, [y, x])
    with pytest.raises(ValueError, match="do not match"):
        check_symbolic_forward(_f, {"x": x}, [x])
    assert tu.simple_forward(_f, x=x, y=y).shape == (3, 4)


def test_numeric_gradient_check():
    x, y = np.random.rand(3, 4), np.random.rand(3, 4)
    check_numeric_gradient(_f, [x, y])
    check_numeric_gradient(_f, [x, y], dtype=np.float64, grad_nodes=["x"])
    # a wrong backward (the gradient is blocked) is caught
    with pytest.raises(AssertionError):
        check_numeric_gradient(lambda x: mx.nd.BlockGrad(x * x), [x])
    net = mx.gluon.nn.Dense(2, in_units=4)
    net.initialize()
    check_numeric_gradient(net, [x.astype(np.float32)])
    grads = tu.numeric_grad(_f, {"x": x, "y": y}, eps=1e-3, dtype=np.float64)
    np.testing.assert_allclose(grads["x"], y + np.cos(x), rtol=1e-4)


def test_symbolic_checks_on_a_symbol():
    if not hasattr(mx, "sym") and not os.path.exists(os.path.join(os.path.dirname(mx.__file__),
                                                                  "symbol", "__init__.py")):
        pytest.skip("mx.sym is not in this tree")
    a, b = mx.sym.var("a"), mx.sym.var("b")
    s = mx.sym.sin(a) * b
    x, y = np.random.rand(2, 3), np.random.rand(2, 3)
    check_symbolic_forward(s, [x, y], [np.sin(x) * y])
    check_symbolic_forward(s, {"a": x, "b": y}, {s.list_outputs()[0]: np.sin(x) * y})
    check_symbolic_backward(s, [x, y], [np.ones((2, 3))], [np.cos(x) * y, np.sin(x)])
    check_numeric_gradient(s, [x, y])


def test_check_consistency_and_check_speed():
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=4, name="fc")
    ctx_list = [{"ctx": mx.cpu(0), "data": (2, 5), "type_dict": {"data": t}}
                for t in (np.float64, np.float32, np.float16)]
    gt = tu.check_consistency(fc, ctx_list)          # weights' shapes and dtypes are inferred
    assert sorted(gt) == ["data", "fc_bias", "fc_output", "fc_weight"]
    assert gt["fc_weight"].dtype == np.float64 and gt["fc_weight"].shape == (4, 5)
    bn = mx.sym.BatchNorm(data, name="bn")           # aux states get their inferred shapes
    assert "bn_output" in tu.check_consistency(bn, ctx_list[:2])
    a = mx.sym.var("a")
    s = a * 2
    wrong = {s.list_outputs()[0]: np.zeros(2), "a": np.zeros(2)}
    with pytest.raises(AssertionError):
        tu.check_consistency(s, [{"ctx": mx.cpu(0), "a": (2,)}, {"ctx": mx.cpu(0), "a": (2,)}],
                             ground_truth=wrong)
    assert tu.check_speed(s, location={"a": np.ones(3)}, N=2) > 0
    assert tu.check_speed(fc, data=(2, 5), N=2, typ="forward") > 0
    with pytest.raises(ValueError):
        tu.check_speed(s, location={"a": np.ones(3)}, typ="backward")


# ---------------------------------------------------------------------------- misc
def test_download_local_file_and_errors(tmp_path):
    src = tmp_path / "served"
    src.mkdir()
    (src / "payload.txt").write_bytes(b"neogluon" * 100)

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(src), **kwargs)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/payload.txt"
        out = tu.download(url, fname="got.txt", dirname=str(tmp_path / "new"))
        assert out == str(tmp_path / "new" / "got.txt")
        assert open(out, "rb").read() == b"neogluon" * 100
        open(out, "wb").write(b"old")
        assert tu.download(url, fname=out) == out and open(out, "rb").read() == b"old"  # kept
        tu.download(url, fname=out, overwrite=True)
        assert open(out, "rb").read() == b"neogluon" * 100
        with pytest.raises(Exception, match="404"):
            tu.download(url + ".missing", fname=str(tmp_path / "x"), retries=1)
        port = server.server_port
    finally:
        server.shutdown()
        server.server_close()
    with pytest.raises(Exception) as err:  # nobody listens any more
        tu.download(f"http://127.0.0.1:{port}/payload.txt", fname=str(tmp_path / "y"), retries=0)
    assert "without network access" in "".join(getattr(err.value, "__notes__", []))


def test_dummy_iter_and_small_helpers():
    class Batches:
        provide_data = [("data", (2, 3))]
        provide_label = [("label", (2,))]
        batch_size = 2

        def __init__(self):
            self.i = 0

        def __next__(self):
            self.i += 1
            return self.i

    it = tu.DummyIter(Batches())
    assert next(it) == 1 and next(it) == 1 and it.next() == 1 and it.batch_size == 2
    assert list(tu.list_gpus()) == list(range(mx.util.get_gpu_count()))
    assert tu.default_context() == mx.current_context() and tu.default_dtype() is np.float32
    old = tu.default_context()
    try:
        tu.set_default_context(mx.cpu(1))
        assert mx.current_context() == mx.cpu(1) and tu.default_context() == mx.cpu(1)
    finally:
        tu.set_default_context(old)
    with environment("CD_JOB", "1"):
        assert tu.is_cd_run()
    with environment("CD_JOB", None):
        assert not tu.is_cd_run()
    assert tu.has_tvm_ops() is False and tu.is_op_runnable()


def test_star_export_includes_modules_and_names():
    ns = {}
    exec("from neogluon.test_utils import *", ns)
    import json
    import numpy.random
    import os as _os
    for name, obj in [("mx", mx), ("np", np), ("os", _os), ("sys", sys), ("json", json),
                      ("rnd", numpy.random), ("Context", mx.Context),
                      ("current_context", mx.current_context), ("array", mx.nd.array)]:
        assert ns[name] is obj, name
    for name in ("time", "logging", "numbers", "platform", "traceback", "contextmanager",
                 "Features", "OrderedDict", "requests", "ss", "assert_almost_equal",
                 "compare_optimizer", "use_np", "getenv", "setenv", "environment", "DummyIter",
                 "check_consistency", "verify_generator", "rand_ndarray"):
        assert name in ns, name
    assert ns["ss"].norm.ppf(0.5) == 0.0 and bool(ns["ss"])       # scipy.stats, loaded on use
    assert not any(name.startswith("_") for name in ns if name != "__builtins__")


# ---------------------------------------------------------------------------- runtime, util, base
def test_runtime_features():
    import torch
    features = mx.runtime.Features()
    assert features is mx.runtime.Features()
    assert list(features)[:3] == ["CUDA", "CUDNN", "NCCL"] and len(features) == 32
    assert features.is_enabled("CUDA") == torch.cuda.is_available()
    assert features.is_enabled("cuda") == features.is_enabled("CUDA")
    assert not features.is_enabled("MKLDNN") and not features.is_enabled("TVM_OP")
    assert features.is_enabled("OPENMP") == torch.backends.openmp.is_available()
    with pytest.raises(RuntimeError, match="Feature 'NOPE' is unknown"):
        features.is_enabled("nope")
    feats = mx.runtime.feature_list()
    assert all(isinstance(f, mx.runtime.Feature) for f in feats)
    assert repr(features["MKLDNN"]) == "✖ MKLDNN"
    assert repr(features).startswith("[")


def test_np_switches():
    from neogluon import util
    assert not mx.is_np_shape() and not mx.is_np_array()
    with mx.np_shape(True):
        assert util.is_np_shape()
        with mx.np_shape(False):
            assert not util.is_np_shape()
        assert util.is_np_shape()
    assert not util.is_np_shape()
    assert util.set_np_shape(True) is False and util.set_np_shape(False) is True

    @mx.use_np
    def inside():
        return mx.is_np_shape(), mx.is_np_array()

    assert inside() == (True, True) and not mx.is_np_array()

    @util.use_np_shape
    class Holder:
        def method(self):
            return util.is_np_shape()

        @property
        def prop(self):
            return util.is_np_shape()

    assert Holder().method() and Holder().prop

    @util.use_np_array
    class Settable:
        def __init__(self):
            self._v = None

        @property
        def v(self):
            return self._v, util.is_np_array()

        @v.setter
        def v(self, value):
            self._v = value

        @v.deleter
        def v(self):
            self._v = "deleted"

    obj = Settable()
    obj.v = 3
    assert obj.v == (3, True)
    del obj.v
    assert obj.v == ("deleted", True)
    util.set_np()
    try:
        with pytest.raises(ValueError):
            util.set_np_shape(False)
    finally:
        util.reset_np()
    assert not mx.is_np_array() and not mx.is_np_shape()
    with pytest.raises(ValueError):
        util.set_np(shape=False, array=True)
    with pytest.raises(TypeError):
        util.use_np(3)
    assert util.get_gpu_count() == mx.num_gpus()
    with pytest.raises(ValueError):
        util.get_cuda_compute_capability(mx.cpu())
    seen = []
    t = threading.Thread(target=lambda: seen.append(util.is_np_shape()))
    with mx.np_shape(True):
        t.start()
        t.join()
    assert seen == [False]                                          # per thread, as in MXNet


def test_base_helpers():
    from neogluon import base
    assert base.py_str(b"abc") == "abc"
    assert base._as_list(1) == [1] and base._as_list((1,)) == (1,)
    assert base.mx_real_t is np.float32
    with tu.environment("MXNET_HOME", "/some/where"):
        assert base.data_dir() == "/some/where"
    with tu.environment("MXNET_HOME", None):
        assert base.data_dir() == os.path.join(os.path.expanduser("~"), ".mxnet")
    err = base.NotImplementedForSymbol(len, "op", 1)
    assert isinstance(err, base.MXNetError)
    assert str(err) == ('Function len (namely operator "op") with arguments (<class \'int\'>) '
                        "is not implemented for Symbol and only available in NDArray.")
    assert isinstance(np.int32(1), base.integer_types) and isinstance(1.0, base.numeric_types)


def test_contrib_library_and_np_namespaces(tmp_path):
    import importlib
    assert mx.contrib.amp is mx.amp
    assert mx.contrib.nd is mx.nd.contrib and mx.contrib.ndarray is mx.nd.contrib
    assert importlib.import_module("neogluon.contrib.amp") is mx.amp
    with pytest.raises(mx.MXNetError, match="does NOT exist"):
        mx.library.load(str(tmp_path / "nothing.so"))
    lib = tmp_path / "lib.so"
    lib.write_bytes(b"")
    with pytest.raises(mx.MXNetError, match="not an absolute path"):
        mx.library.load(os.path.relpath(str(lib)))
    with pytest.raises(mx.MXNetError, match="C\\+\\+ operator API"):
        mx.library.load(str(lib))
    import neogluon.numpy  # noqa: F401
    assert isinstance(mx.np.ones((2,)), mx.nd.NDArray)   # mx.np.ndarray subclasses NDArray
    assert mx.npx.set_np is mx.util.set_np


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_almost_equal_on_large_arrays_agrees_with_numpy(dtype):
    # Arrays above 65536 elements are compared by torch; the verdict must be numpy's.
    rng = np.random.RandomState(3)
    b = rng.uniform(-2, 2, size=(300, 300)).astype(dtype)
    tol = {np.float16: 1e-2, np.float32: 1e-5, np.float64: 1e-9}[dtype]
    for scale in (0.5, 0.999, 1.001, 2.0):
        a = (b + scale * tol * np.abs(b)).astype(dtype)
        expected = bool(np.allclose(a, b, rtol=tol, atol=0))
        assert tu.almost_equal(a, b, rtol=tol, atol=0) is expected
    a = b.copy()
    a[5, 7] = b[5, 7] = np.inf
    assert tu.almost_equal(a, b, rtol=tol, atol=0)
    a[5, 7] = np.nan
    assert not tu.almost_equal(a, b, rtol=tol, atol=0)
    b[5, 7] = np.nan
    assert tu.almost_equal(a, b, rtol=tol, atol=0, equal_nan=True)
    assert not tu.almost_equal(a, b, rtol=tol, atol=0, equal_nan=False)
