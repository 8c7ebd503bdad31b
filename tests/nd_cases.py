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


# ------------------------------------------------------------------ snippets
def load_snippets(group):
    with open(os.path.join(FIX, f"snippets_{group}.json")) as f:
        return json.load(f)


def run_snippet(code):
    mx.random.seed(0)
    env = {"mx": mx, "nd": nd, "autograd": autograd, "np": np}
    try:
        exec(code, env)  # noqa: S102 - fixture snippets written by us
        return env.get("result")
    except Exception as err:  # noqa: BLE001 - compared with MXNet's error
        return err


def _fail(path, msg):
    raise AssertionError(f"at {path or 'result'}: {msg}")


def compare(got, exp, tol=None, path=""):
    """Compare a neogluon result with the JSON form of MXNet's result."""
    rtol = tol or 1e-4
    atol = tol or 1e-5
    if isinstance(exp, dict) and "__error__" in exp:
        if not isinstance(got, BaseException):
            _fail(path, f"MXNet raised {exp['__error__']}: {exp['message']!r}, neogluon "
                        f"returned {got!r}")
        names = [c.__name__ for c in type(got).__mro__]
        if exp["__error__"] not in names:
            _fail(path, f"MXNet raised {exp['__error__']}, neogluon raised "
                        f"{type(got).__name__}: {got}")
        return
    if isinstance(got, BaseException):
        import traceback
        tb = "".join(traceback.format_exception(type(got), got, got.__traceback__))
        _fail(path, f"neogluon raised {type(got).__name__}: {got}; MXNet gave {str(exp)[:200]}"
                    f"\n{tb}")
    if isinstance(exp, dict) and "__nd__" in exp:
        if not isinstance(got, nd.NDArray):
            _fail(path, f"expected an NDArray, got {type(got).__name__}")
        if list(got.shape) != exp["shape"]:
            _fail(path, f"shape {got.shape} != MXNet's {tuple(exp['shape'])}")
        if np.dtype(got.dtype).name != exp["dtype"]:
            _fail(path, f"dtype {np.dtype(got.dtype).name} != MXNet's {exp['dtype']}")
        if str(got.context) != exp["ctx"]:
            _fail(path, f"context {got.context} != MXNet's {exp['ctx']}")
        np.testing.assert_allclose(got.asnumpy().astype(np.float64) if exp["dtype"] != "bool"
                                   else got.asnumpy(),
                                   np.array(exp["__nd__"], dtype=np.float64 if exp["dtype"] !=
                                            "bool" else bool).reshape(exp["shape"]),
                                   rtol=rtol, atol=atol, err_msg=path)
        return
    if isinstance(exp, dict) and "__np__" in exp:
        assert isinstance(got, np.ndarray), f"{path}: expected numpy, got {type(got)}"
        assert got.dtype.name == exp["dtype"] and list(got.shape) == exp["shape"], path
        np.testing.assert_allclose(got, np.array(exp["__np__"]), rtol=rtol, atol=atol,
                                   err_msg=path)
        return
    if isinstance(exp, dict) and "__npscalar__" in exp:
        assert isinstance(got, np.generic), f"{path}: expected numpy scalar, got {type(got)}"
        assert got.dtype.name == exp["dtype"], f"{path}: {got.dtype} != {exp['dtype']}"
        np.testing.assert_allclose(got, exp["__npscalar__"], rtol=rtol, atol=atol)
        return
    if isinstance(exp, dict) and "__type__" in exp:
        assert isinstance(got, type) and got.__name__ == exp["__type__"], \
            f"{path}: {got!r} != type {exp['__type__']}"
        return
    if isinstance(exp, dict) and "__ctx__" in exp:
        assert isinstance(got, mx.Context) and str(got) == exp["__ctx__"], \
            f"{path}: {got!r} != {exp['__ctx__']}"
        return
    if isinstance(exp, dict) and "__dict__" in exp:
        assert isinstance(got, dict), f"{path}: expected a dict, got {type(got)}"
        assert list(got) == [k for k, _ in exp["__dict__"]], path
        for k, v in exp["__dict__"]:
            compare(got[k], v, tol, f"{path}[{k!r}]")
        return
    if isinstance(exp, list):
        assert isinstance(got, (list, tuple)), f"{path}: expected a sequence, got {got!r}"
        assert len(got) == len(exp), f"{path}: length {len(got)} != {len(exp)}"
        for i, (g, e) in enumerate(zip(got, exp)):
            compare(g, e, tol, f"{path}[{i}]")
        return
    if isinstance(exp, float):
        assert isinstance(got, (float, int, np.floating)), f"{path}: {got!r} != {exp!r}"
        np.testing.assert_allclose(got, exp, rtol=rtol, atol=atol, err_msg=path)
        return
    assert type(got) is type(exp) and got == exp, f"{path}: {got!r} != MXNet's {exp!r}"
