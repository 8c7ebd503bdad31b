"""maximum/minimum gradients on ties follow MXNet 1.9.1 (fixture from
tools/gen_minmax_tie_fixtures.py): the left operand, or the array facing a number, takes a
tie's whole gradient, where torch's own functions split it in halves."""
import json
import os

import numpy as np
import pytest

import neogluon as mx

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "minmax", "ties.json")
with open(FIX) as _f:
    CASES = json.load(_f)["cases"]


def _run(case):
    front, fn = case["front"], case["fn"]
    if front == "sym":
        x, y = mx.sym.var("x"), mx.sym.var("y")
        s = getattr(mx.sym, fn)(x, y)
        args = {"x": mx.nd.array(case["lhs"]), "y": mx.nd.array(case["rhs"])}
        grads = {k: mx.nd.zeros(v.shape) for k, v in args.items()}
        ex = s.bind(mx.cpu(), args, args_grad=grads)
        out = ex.forward(is_train=True)[0]
        ex.backward(mx.nd.ones(out.shape))
        return out.asnumpy(), [grads["x"].asnumpy(), grads["y"].asnumpy()]
    lib = mx.nd if front == "nd" else mx.np
    arrs = [lib.array(v) if isinstance(v, list) else v for v in (case["lhs"], case["rhs"])]
    for a in arrs:
        if not isinstance(a, float):
            a.attach_grad()
    with mx.autograd.record():
        out = getattr(lib, fn)(*arrs)
    if front == "nd":
        out.backward(mx.nd.ones(out.shape) * 3)
    else:
        out.backward()
    return out.asnumpy(), [None if isinstance(a, float) else a.grad.asnumpy() for a in arrs]


@pytest.mark.parametrize("case", CASES, ids=[f"{c['front']}-{c['fn']}-{i}"
                                             for i, c in enumerate(CASES)])
def test_tie_gradients_match_mxnet(case):
    out, grads = _run(case)
    np.testing.assert_array_equal(out, np.array(case["out"], dtype=np.float32))
    for got, want in zip(grads, case["grads"]):
        if want is None:
            assert got is None
        else:
            np.testing.assert_array_equal(got, np.array(want, dtype=np.float32))


def test_values_and_nan_unchanged_without_recording():
    a = mx.nd.array([1.0, float("nan"), 3.0])
    b = mx.nd.array([float("nan"), 2.0, 1.0])
    for fn in (mx.nd.maximum, mx.nd.minimum):
        out = fn(a, b).asnumpy()
        assert np.isnan(out[0]) and np.isnan(out[1])
        a.attach_grad()
        with mx.autograd.record():
            rec = fn(a, b)
        np.testing.assert_array_equal(np.isnan(rec.asnumpy()), np.isnan(out))
