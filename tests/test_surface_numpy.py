"""MXNet 1.9.1's NumPy-interface surface (mx.np, mx.npx, mx.nd.np, mx.sym.np and their
helper modules) under ``import mxnet``: tools/surface.py --numpy against
tests/fixtures/surface/mxnet_1_9_1_numpy.json. Coverage may only go up (floor_numpy.json)."""
import json
import os
import sys

import numpy as onp
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import surface  # noqa: E402

with open(os.path.join(ROOT, "tests", "fixtures", "surface", "floor_numpy.json")) as _f:
    FLOOR = json.load(_f)


@pytest.fixture(scope="module")
def results():
    return surface.measure(surface.load_fixture(surface.NUMPY_FIXTURE))


def test_numpy_coverage_does_not_drop(results):
    t = surface.totals(results)
    broken = {m: r["error"] for m, r in results.items() if not r["imports"]}
    assert t["modules_importing"] >= FLOOR["modules_importing"], broken
    assert t["names_present"] >= FLOOR["names_present"], t
    assert t["modules"] == FLOOR["modules"] and t["names"] == FLOOR["names"], t


def test_numpy_front_modules_complete(results):
    for mod in ("mxnet.numpy", "mxnet.numpy.multiarray", "mxnet.numpy_extension",
                "mxnet.ndarray.numpy", "mxnet.ndarray.numpy_extension", "mxnet.numpy.fallback",
                "mxnet.numpy.utils", "mxnet.numpy_op_fallback", "mxnet.symbol.numpy.linalg"):
        assert results[mod]["imports"] and not results[mod]["missing"], (mod, results[mod])
        assert not results[mod]["kind_differs"], (mod, results[mod]["kind_differs"])


def test_fallback_modules_are_official_numpy():
    import neogluon.mxnet_alias  # noqa: F401
    import mxnet as mx
    # as in MXNet: the fallback modules hold NumPy's own functions; mx.np wraps them
    assert mx.np.fallback.cov is onp.cov and mx.np.fallback_linalg.qr is onp.linalg.qr
    assert mx.np.cov is not onp.cov
    r = mx.np.cov(mx.np.array([[0., 1., 2.], [2., 1., 0.]]))
    assert isinstance(r, mx.np.ndarray)
    assert onp.allclose(r.asnumpy(), onp.cov([[0., 1., 2.], [2., 1., 0.]]))
    assert mx.np.bool is bool and mx.np.utils._STR_2_DTYPE_["int"] is onp.int64
    with pytest.raises(NotImplementedError):
        mx.np.set_printoptions(linewidth=10)


def test_submodules_share_the_functions():
    import neogluon.mxnet_alias  # noqa: F401
    import mxnet as mx
    import mxnet.ndarray.numpy._op as nd_op
    import mxnet.ndarray.numpy_extension.random as ndx_random
    import mxnet.symbol.numpy.linalg as sym_linalg
    from mxnet.numpy_extension import _op as npx_op
    from mxnet.ndarray.numpy import _internal as npi  # noqa: F401
    from mxnet.symbol.numpy import _Symbol  # noqa: F401
    assert npx_op.relu is mx.npx.relu and "relu" in npx_op.__all__
    assert mx.np.multiarray.add is mx.np.add and nd_op.linspace is mx.np.linspace
    assert mx.np.function_base.meshgrid is not None and mx.np.stride_tricks.broadcast_arrays
    assert ndx_random.bernoulli is mx.npx.random.bernoulli
    assert mx.np.product(mx.np.array([2., 3.])).item() == 6.0
    assert mx.np.sometrue(mx.np.array([0, 1])).item() is True
    # the builtins stay builtins inside the modules that gained mx.np's names
    assert mx.np.multiarray.any is mx.np.any
    a = mx.np.array([[1., 2.], [3., 4.]])
    assert isinstance(sym_linalg.norm(mx.sym.var("x")), mx.sym.Symbol)
    v = mx.np.multiarray._np_ndarray_cls(mx.nd.array([1., 2.]))
    assert isinstance(v, mx.np.ndarray) and v.tolist() == [1., 2.]
    assert a.sum().item() == 10.0


def test_npx_utils_save_load(tmp_path):
    import neogluon.mxnet_alias  # noqa: F401
    import mxnet as mx
    f = str(tmp_path / "x.params")
    mx.npx.utils.save(f, {"w": mx.np.array([1., 2.])})
    r = mx.npx.load(f)
    assert isinstance(r["w"], mx.np.ndarray) and r["w"].tolist() == [1., 2.]
    assert mx.npx.save is mx.npx.utils.save


def test_numpy_op_fallback_custom_ops():
    import neogluon.mxnet_alias  # noqa: F401
    import mxnet as mx
    import mxnet.numpy_op_fallback  # noqa: F401  (registers the op types)
    np = mx.np
    a = np.arange(6).reshape(2, 3)
    r = mx.nd.np._internal.resize_fallback(a, new_shape=(4, 2))
    assert r.asnumpy().tolist() == onp.resize(onp.arange(6).reshape(2, 3), (4, 2)).tolist()
    u = mx.nd.np._internal.unravel_index_fallback(np.array([1, 5], dtype="int64"),
                                                 shape=(2, 3))
    assert u.asnumpy().tolist() == [[0, 1], [1, 2]]
    e = mx.nd.np._internal.empty_like_fallback(a, dtype="float32", order="C", subok=False,
                                              shape=(2, 3))
    assert e.shape == (2, 3) and e.dtype == onp.float32
    m = mx.nd.np._internal.mvn_fallback(np.zeros((3,)), np.eye(3), size="(2,)")
    assert m.shape == (2, 3)


def test_util_ufunc_wrappers():
    from neogluon import util
    assert util.np_ufunc_legal_option("casting", "safe")
    assert not util.np_ufunc_legal_option("casting", "bogus")
    assert util.np_ufunc_legal_option("dtype", onp.float32)
    assert not util.np_ufunc_legal_option("dtype", "complex64")
    assert not util.np_ufunc_legal_option("axis", 0)

    @util.wrap_np_binary_func
    def add(x1, x2, out=None):
        return x1 + x2

    @util.wrap_np_unary_func
    def neg(x, out=None):
        return -x

    assert add(1, 2, casting="same_kind", where=True) == 3 and neg(2, dtype=None) == -2
    with pytest.raises(NotImplementedError):
        add(1, 2, casting="unsafe")
    with pytest.raises(TypeError, match="invalid keyword"):
        neg(1, axis=0)
    with pytest.raises(TypeError, match="not understood"):
        neg(1, casting="bogus")
    assert add.__name__ == "add"
