"""Replays the op cases recorded from MXNet 1.9.1 by tools/gen_nd_fixtures.py."""
import json
import os

import numpy as np

import neogluon as mx
from neogluon import autograd, nd

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "nd")


def load_group(group):
    with open(os.path.join(FIX, f"{group}.json")) as f:
        meta = json.load(f)
    arrays = dict(np.load(os.path.join(FIX, f"{group}.npz")))
    return meta, arrays


def _kw(v):
    return tuple(_kw(a) for a in v) if isinstance(v, list) else v


def replay(case, arrays):
    key = case["name"]
    inputs = []
    for i in range(case["n_inputs"]):
        a = arrays.get(f"{key}/in/{i}")
        inputs.append(None if a is None else nd.array(a, dtype=a.dtype))
    for i in case["grad"]:
        inputs[i].attach_grad()
    fn = getattr(nd, case["op"])
    kwargs = {k: _kw(v) for k, v in case["kwargs"].items()}
    args = [a for a in inputs if a is not None]
    if "error" in case:
        try:
            if case["record"]:
                with autograd.record(train_mode=case["train"]):
                    fn(*args, **kwargs)
            else:
                fn(*args, **kwargs)
        except mx.MXNetError:
            return
        raise AssertionError(f"{key}: MXNet raised {case['message']!r}; neogluon did not")
    if case["record"]:
        with autograd.record(train_mode=case["train"]):
            out = fn(*args, **kwargs)
    else:
        with autograd.train_mode() if case["train"] else autograd.predict_mode():
            out = fn(*args, **kwargs)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    tol = case.get("tol") or 1e-4
    assert len(outs) == case["n_outputs"], f"{key}: {len(outs)} outputs"
    for i, o in enumerate(outs[:case.get("compare") or len(outs)]):
        exp = arrays[f"{key}/out/{i}"]
        assert o.shape == exp.shape, f"{key} out {i}: shape {o.shape} != {exp.shape}"
        assert o.dtype == exp.dtype, f"{key} out {i}: dtype {o.dtype} != {exp.dtype}"
        np.testing.assert_allclose(o.asnumpy(), exp, rtol=tol, atol=tol, err_msg=f"{key} out {i}")
    if case["grad"]:
        heads = outs if case["head_all"] else outs[:1]
        hg = [nd.array(arrays[f"{key}/hg/{i}"]) for i in range(len(heads))]
        autograd.backward(heads, hg, train_mode=case.get("backward_train", True))
        for i in case["grad"]:
            exp = arrays[f"{key}/grad/{i}"]
            np.testing.assert_allclose(inputs[i].grad.asnumpy(), exp, rtol=tol, atol=tol,
                                       err_msg=f"{key} grad of input {i}")
    for i, a in enumerate(inputs):
        exp = arrays.get(f"{key}/after/{i}")
        if a is not None and exp is not None:
            np.testing.assert_allclose(a.asnumpy(), exp, rtol=tol, atol=tol,
                                       err_msg=f"{key} input {i} after the call")
