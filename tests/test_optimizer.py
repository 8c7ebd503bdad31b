"""Every optimizer against MXNet 1.9.1 fixtures (tools/gen_optimizer_fixtures.py).

Each scenario runs several steps through the Updater's list path with rescale_grad,
clip_gradient, wd, per-Parameter lr_mult/wd_mult (changed mid-run through param_dict), a
learning-rate schedule and a change of rescale_grad mid-run. Weights are compared after every
step and states after the last, with the fused fast paths on and off.
"""
import json
import os

import numpy as np
import pytest
import torch

import neogluon as mx
from neogluon.optimizer import _ckernels, fused

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "optimizer")
with open(os.path.join(HERE, "updates.json")) as f:
    SCENARIOS = json.load(f)
_NPZ = {}


def arrays(dtype):
    if dtype not in _NPZ:
        _NPZ[dtype] = dict(np.load(os.path.join(HERE, f"updates_{dtype}.npz")))
    return _NPZ[dtype]


NAME_MAP = {"fixeddcasgd": "dcasgd", "refadamw": "adamw"}
TOL = {"float32": dict(rtol=2e-5, atol=2e-6), "float64": dict(rtol=2e-6, atol=2e-7),
       "float16": dict(rtol=2e-3, atol=2e-3)}
STATE_TOL = {"float32": dict(rtol=2e-5, atol=2e-6), "float64": dict(rtol=2e-6, atol=2e-7),
             "float16": dict(rtol=2e-4, atol=2e-5)}


class FakeParam:
    def __init__(self, lr_mult, wd_mult):
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult


def leaves(state):
    if state is None:
        return []
    if isinstance(state, mx.nd.NDArray):
        return [state]
    out = []
    for s in state:
        out.extend(leaves(s))
    return out


def structure(state):
    if state is None:
        return None
    if isinstance(state, mx.nd.NDArray):
        return "a"
    return [structure(s) for s in state]


def make_sched(spec):
    if spec is None:
        return None
    return getattr(mx.lr_scheduler, spec["kind"])(**spec["kwargs"])


def run_scenario(meta, mode="kernels", check=True, on_step=None):
    """mode: 'kernels' (compiled CPU kernels), 'torch' (torch fused kernels and _foreach),
    'foreach' (_foreach only)."""
    key, dtype = meta["key"], meta["dtype"]
    data = arrays(dtype)
    kw = dict(meta["kwargs"])
    if dtype == "float16":
        kw["multi_precision"] = True
    params = {i: FakeParam(lm, wm) for i, (lm, wm) in
              enumerate(zip(meta["lr_mult"], meta["wd_mult"]))}
    opt = mx.optimizer.create(NAME_MAP.get(meta["optimizer"], meta["optimizer"]),
                              lr_scheduler=make_sched(meta["sched"]), param_dict=params,
                              param_idx2name=dict(enumerate(meta["names"])), **kw)
    upd = mx.optimizer.get_updater(opt)
    n = len(meta["shapes"])
    ws = [mx.nd.array(data[f"{key}/w0_{i}"], dtype=dtype) for i in range(n)]
    old = fused.set_enabled(mode != "foreach")
    old_ck = _ckernels.set_enabled(mode == "kernels")
    try:
        for step in range(meta["steps"]):
            if step == 4:
                params[1].lr_mult = 1.5
                opt.rescale_grad = opt.rescale_grad * 0.5
            gs = [mx.nd.array(data[f"{key}/g{step}_{i}"], dtype=dtype) for i in range(n)]
            before = [g.asnumpy().copy() for g in gs]
            if meta["mode"] == "list":
                upd(list(range(n)), gs, ws)
            else:
                for i in range(n):
                    upd(i, gs[i], ws[i])
            for g, b in zip(gs, before):
                np.testing.assert_array_equal(g.asnumpy(), b, err_msg="gradient was modified")
            if check:
                for i in range(n):
                    np.testing.assert_allclose(
                        ws[i].asnumpy(), data[f"{key}/w{step + 1}_{i}"], **TOL[dtype],
                        err_msg=f"{key}: weight {i} after step {step + 1}")
            if on_step is not None:
                on_step(step, upd)
    finally:
        fused.set_enabled(old)
        _ckernels.set_enabled(old_ck)
    if check:
        assert opt.num_update == meta["num_update"]
        for i in range(n):
            assert structure(upd.states[i]) == meta["state_structure"][i], \
                f"{key}: state {i} layout differs from MXNet's"
            ls = leaves(upd.states[i])
            want = [data[f"{key}/s_{i}_{j}"] for j in range(len(ls))]
            assert f"{key}/s_{i}_{len(ls)}" not in data, f"{key}: state {i} has too few arrays"
            for j, (got, exp) in enumerate(zip(ls, want)):
                assert got.shape == exp.shape, f"{key}: state {i}.{j} shape"
                assert got.dtype == exp.dtype or meta["optimizer"] in (), \
                    f"{key}: state {i}.{j} dtype {got.dtype} != {exp.dtype}"
                np.testing.assert_allclose(got.asnumpy(), exp, **STATE_TOL[dtype],
                                           err_msg=f"{key}: state {i}.{j}")
        if "m_schedule" in meta:
            assert opt.m_schedule == pytest.approx(meta["m_schedule"], rel=1e-12)
    return opt, upd, ws


@pytest.mark.parametrize("meta", SCENARIOS, ids=[m["key"] for m in SCENARIOS])
def test_matches_mxnet(meta):
    assert _ckernels.library() is not None, "the compiled optimizer kernels did not build"
    run_scenario(meta, mode="kernels")


@pytest.mark.parametrize("meta", SCENARIOS, ids=[m["key"] for m in SCENARIOS])
def test_matches_mxnet_torch_paths(meta, monkeypatch):
    # torch's CUDA SGD kernel refuses a momentum argument <= 0 (its CPU kernel takes one);
    # hold the CPU path to the CUDA kernel's rule so that a GPU run takes the same calls.
    real = torch._fused_sgd_

    def checked(ws, gs, moms, **kw):
        if moms:
            assert kw["momentum"] > 0, kw
        return real(ws, gs, moms, **kw)
    monkeypatch.setattr(torch, "_fused_sgd_", checked)
    run_scenario(meta, mode="torch")


FOREACH_SCN = [m for m in SCENARIOS if m["scenario"].endswith("noclip") or
               m["scenario"] in ("sgd", "nag", "adam", "adamw")]


F32_SCN = [m for m in SCENARIOS if m["dtype"] == "float32"]


@pytest.mark.parametrize("mode", ["kernels", "torch"])
@pytest.mark.parametrize("meta", F32_SCN, ids=[m["key"] for m in F32_SCN])
def test_float32_within_a_few_roundings_of_mxnet(meta, mode):
    """After the whole scenario each float32 weight is within 4 float32 epsilons (of the
    weight's largest magnitude) of MXNet's: the per-element rtol above allows ~170, which let a
    Nadam kernel computing 1 - float32(beta2) where MXNet rounds the double 1 - beta2 (11
    epsilons off) pass unnoticed."""
    _, _, ws = run_scenario(meta, mode=mode, check=False)
    data = arrays("float32")
    eps = np.finfo(np.float32).eps
    for i, w in enumerate(ws):
        want = data[f"{meta['key']}/w{meta['steps']}_{i}"]
        err = np.abs(w.asnumpy().astype(np.float64) - want).max() / (eps * np.abs(want).max())
        assert err <= 4, f"{meta['key']} ({mode}): weight {i} is {err:.1f} epsilons from MXNet"


# scenario -> the dtypes in which the kernel path gives MXNet 1.9.1's exact bits
ALL3 = ("float16", "float32", "float64")
BITWISE = {"sgd": ALL3, "sgd_nomom": ALL3, "sgd_noclip": ALL3, "ccsgd": ("float32",),
           "signum": ALL3, "signsgd": ALL3, "dcasgd": ALL3, "dcasgd_mom": ALL3,
           "lbsgd": ("float32", "float64"), "lars": ("float32", "float16"),
           "lars_nomom": ("float32", "float16"), "adam": ALL3, "adam_noclip": ALL3,
           "adamax": ALL3, "nadam": ("float32", "float16"), "adagrad": ("float32", "float16"),
           "adagrad_noclip": ("float32", "float16"), "adadelta": ("float32", "float16"),
           "rmsprop": ("float32", "float16")}
BITWISE_SCN = [m for m in SCENARIOS if m["dtype"] in BITWISE.get(m["scenario"], ())
               and m["key"] != "lars-float32-single"]  # 0.1 epsilons: LARS index by index


@pytest.mark.parametrize("meta", BITWISE_SCN, ids=[m["key"] for m in BITWISE_SCN])
def test_kernels_are_bit_equal_to_mxnet(meta):
    """Each kernel computes in the order of the MXNet code it stands for (SGD: MXNet's
    multi_sgd(_mom)_update, step = (lr*rescale)*g or lr*clip(rescale*g), then w + (momentum*mom
    - lr*wd*w - step); Nadam, Adamax, AdaDelta: MXNet's Python scalars rounded once, 1 - beta
    included), so these scenarios give MXNet's exact bits through the Updater."""
    _, _, ws = run_scenario(meta, mode="kernels", check=False)
    data = arrays(meta["dtype"])
    for i, w in enumerate(ws):
        np.testing.assert_array_equal(w.asnumpy(), data[f"{meta['key']}/w{meta['steps']}_{i}"],
                                      err_msg=f"{meta['key']}: weight {i}")


@pytest.mark.parametrize("meta", FOREACH_SCN, ids=[m["key"] for m in FOREACH_SCN])
def test_matches_mxnet_foreach_only(meta):
    run_scenario(meta, mode="foreach")
