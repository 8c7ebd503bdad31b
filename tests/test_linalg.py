"""``nd.linalg`` against MXNet 1.9.1 (fixtures from tools/gen_linalg_fixtures.py): outputs and
the gradient of every input for a fixed head gradient, batched, with each operator's options;
the ``sym.linalg`` spelling; MXNet's error for a matrix that is not positive definite.
example/restricted-boltzmann-machine builds its RBM on linalg.gemm/gemm2."""
import json
import os

import numpy as np
import pytest

import neogluon as mx
from neogluon import autograd, nd
from neogluon.base import MXNetError
from fixture_record import resolve

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "linalg")
with open(os.path.join(FIX, "linalg.json")) as f:
    _META = json.load(f)
_ARR = np.load(os.path.join(FIX, "linalg.npz"))
CASES = {k: resolve(v, _ARR) for k, v in _META.items()}


@pytest.mark.parametrize("name", sorted(k for k, v in CASES.items() if "error" not in v))
def test_linalg_matches_mxnet(name):
    case = CASES[name]
    arrs = {k: nd.array(v) for k, v in case["inputs"].items()}
    for a in arrs.values():
        a.attach_grad()
    with autograd.record():
        res = getattr(nd.linalg, case["op"])(**arrs, **case["kwargs"])
    outs = res if isinstance(res, (list, tuple)) else [res]
    assert len(outs) == len(case["outputs"])
    for got, want in zip(outs, case["outputs"]):
        assert got.shape == want.shape
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-4, atol=1e-5)
    autograd.backward(list(outs), [nd.array(h) for h in case["heads"]])
    for k, want in case["grads"].items():
        np.testing.assert_allclose(arrs[k].grad.asnumpy(), want, rtol=1e-3, atol=1e-4,
                                   err_msg=f"{name}: gradient of {k}")


@pytest.mark.parametrize("name", sorted(k for k, v in CASES.items() if "error" in v))
def test_linalg_errors_where_mxnet_errors(name):
    case = CASES[name]
    with pytest.raises(MXNetError, match="linalg"):
        getattr(nd.linalg, case["op"])(**{k: nd.array(v) for k, v in case["inputs"].items()},
                                       **case["kwargs"])


def test_flat_names_upper_cholesky_and_symbol():
    a = nd.array([[4., 1.], [1., 3.]])
    # MXNet 1.9.1: potrf(lower=False) -> [[2, 0.5], [0, 1.6583124]]
    np.testing.assert_allclose(nd.linalg_potrf(a, lower=False).asnumpy(),
                               [[2., 0.5], [0., 1.6583124]], rtol=1e-6)
    np.testing.assert_allclose(nd.linalg.potri(nd.linalg.potrf(a)).asnumpy(),
                               np.linalg.inv(a.asnumpy()), rtol=1e-5)
    x, y = mx.sym.var("x"), mx.sym.var("y")
    s = mx.sym.linalg.gemm2(x, y, transpose_b=True, alpha=2.0)
    got = s.eval(x=nd.ones((2, 3)), y=nd.ones((4, 3)))[0]
    np.testing.assert_allclose(got.asnumpy(), np.full((2, 4), 6.0))
