"""The optimizers' CUDA path, exercised on CPU tensors.

On a CUDA tensor the compiled CPU kernels (``_ckernels``) do not apply, and every built-in
optimizer runs torch's fused kernels (SGD, Adam, AdamW) or ``_foreach`` sequences of the same
rule. ``fused.device_path()`` sends CPU tensors down exactly that path, so a CPU-only machine
tests what a GPU runs:

* numbers: step by step from the same weights and states, the device path's update equals
  the compiled kernels' (the reference CPU path, bit-equal to MXNet 1.9.1 in the scenarios of
  test_optimizer.py) within 1 float32 ulp of the tensor's largest magnitude, for every main
  optimizer and several option sets (wd, clip_gradient, rescale_grad, momentum 0/0.9,
  multi_precision float16 with float32 master weights). MXNet's own fixtures run on this
  path too: test_optimizer.py's ``test_matches_mxnet_torch_paths``;
* multi-tensor: the number of torch ops one update issues (counted with torch.profiler) does
  not grow with the number of tensors.
"""
import contextlib

import numpy as np
import pytest
import torch
from torch.profiler import ProfilerActivity, profile

import neogluon as mx
from neogluon.optimizer import _ckernels, fused

SHAPES = [(8, 3, 3, 3), (8,), (16, 8, 3, 3), (16,), (16,), (32, 16), (32,), (5, 7, 2), (64,),
          (10, 32)]

CONFIGS = [
    ("sgd", dict(momentum=0.9, wd=1e-3, rescale_grad=0.5)),
    ("sgd", dict(momentum=0.9, wd=1e-3, clip_gradient=0.3, lazy_update=True)),
    ("sgd", dict(momentum=0.0, wd=1e-3, rescale_grad=0.25)),
    ("sgd", dict(momentum=0.0, wd=1e-3, clip_gradient=0.3)),
    ("nag", dict(momentum=0.9, wd=1e-3, rescale_grad=0.5)),
    ("nag", dict(momentum=0.9, wd=1e-3, clip_gradient=0.3)),
    ("nag", dict(momentum=0.0, wd=1e-3)),
    ("adam", dict(wd=1e-3, rescale_grad=0.5)),
    ("adam", dict(wd=1e-3, clip_gradient=0.3, lazy_update=True)),
    ("adamw", dict(wd=1e-2, rescale_grad=0.5)),
    ("adamw", dict(wd=1e-2, clip_gradient=0.3)),
    ("rmsprop", dict(wd=1e-3, rescale_grad=0.5)),
    ("rmsprop", dict(wd=1e-3, clip_gradient=0.3, clip_weights=2.0)),
    ("rmsprop", dict(wd=1e-3, centered=True, rescale_grad=0.5)),
    ("rmsprop", dict(wd=1e-3, centered=True, clip_gradient=0.3)),
    ("adagrad", dict(wd=1e-3, rescale_grad=0.5)),
    ("adagrad", dict(wd=1e-3, clip_gradient=0.3)),
    ("lamb", dict(wd=1e-3, rescale_grad=0.5)),
    ("lamb", dict(wd=1e-3, clip_gradient=0.3, bias_correction=False)),
    ("lars", dict(momentum=0.9, wd=1e-3, rescale_grad=0.5)),
    ("lars", dict(momentum=0.0, wd=1e-3, clip_gradient=0.3)),
    ("ftml", dict(wd=1e-3, rescale_grad=0.5)),
    ("ftml", dict(wd=1e-3, clip_gradient=0.3)),
]
# States may differ by 2 ulps: SGD's and Adam's fused kernels keep them scaled by a known factor
# (fused.py) and reading them back divides by it; LARS's layer-wise rate comes from a sum of
# squares whose order of additions differs between the two paths (up to 4).
STATE_ULPS = {"lars": 4.0}
IDS = [f"{n}-" + "-".join(f"{k}={v}" for k, v in kw.items()) for n, kw in CONFIGS]


@contextlib.contextmanager
def kernels_path():
    old = (fused.set_enabled(True), _ckernels.set_enabled(True))
    try:
        yield
    finally:
        fused.set_enabled(old[0])
        _ckernels.set_enabled(old[1])


def make_run(name, kw, dtype, n=len(SHAPES), seed=0):
    kw = dict(kw)
    if dtype == "float16":
        kw["multi_precision"] = True
    opt = mx.optimizer.create(name, learning_rate=0.05,
                              param_idx2name={i: f"p{i}_weight" for i in range(n)}, **kw)
    rs = np.random.RandomState(seed)
    shapes = [SHAPES[i % len(SHAPES)] for i in range(n)]
    ws = [mx.nd.array(rs.randn(*s), dtype=dtype) for s in shapes]
    # one gradient array per weight, refilled every step (as Gluon's Parameters do)
    gs = [mx.nd.zeros(s, dtype=dtype) for s in shapes]
    return mx.optimizer.get_updater(opt), ws, gs, rs


def fill(gs, rs):
    for g in gs:
        g[:] = rs.randn(*g.shape) * 2.0


def leaves(state):
    if state is None:
        return []
    if isinstance(state, mx.nd.NDArray):
        return [state]
    out = []
    for s in state:
        out.extend(leaves(s))
    return out


def ulp_err(got, ref):
    """max |got - ref| in float32 ulps of the tensor's largest magnitude (float64 weights
    too: MXNet's operators take float32 hyper-parameters, which the compiled kernels round
    where MXNet does and the device path where torch does)."""
    got = got.astype(np.float64)
    ref = ref.astype(np.float64)
    scale = np.spacing(np.float32(max(np.abs(ref).max(), np.abs(got).max(), 1e-30)))
    return float(np.abs(got - ref).max() / scale)


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("name,kw", CONFIGS, ids=IDS)
def test_device_path_equals_kernels(name, kw, dtype):
    ua, wa, ga, rs = make_run(name, kw, dtype)
    ub, wb, gb, _ = make_run(name, kw, dtype)
    idx = list(range(len(wa)))
    for step in range(4):
        fill(ga, rs)
        for x, y in zip(gb, ga):
            x[:] = y
        with kernels_path():
            ua(idx, ga, wa)
        with fused.device_path():
            ub(idx, gb, wb)
        # each state leaf (the float32 master weight under multi-precision included)
        for i in idx:
            la, lb = leaves(ua.states[i]), leaves(ub.states[i])
            assert len(la) == len(lb)
            for j, (x, y) in enumerate(zip(la, lb)):
                err = ulp_err(y.asnumpy(), x.asnumpy())
                assert err <= STATE_ULPS.get(name, 2.0), \
                    f"step {step}: state {i}.{j} is {err:.2f} ulps off"
                y[:] = x   # continue from the same states: compare one step at a time
        for i, (x, y) in enumerate(zip(wa, wb)):
            if dtype == "float16":   # the float16 copy of identical-to-1-ulp masters
                np.testing.assert_allclose(y.asnumpy(), x.asnumpy(), rtol=1e-3, atol=1e-3)
            else:
                err = ulp_err(y.asnumpy(), x.asnumpy())
                assert err <= 1.0, f"step {step}: weight {i} is {err:.2f} ulps off"
            y[:] = x


def top_level_ops(fn):
    """The aten ops ``fn`` issues itself (a ``_foreach`` op counts once, whatever it runs
    underneath on CPU)."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    return sorted(e.name for e in prof.events()
                  if e.cpu_parent is None and e.name.startswith("aten::"))


def ops_per_step(name, kw, dtype, n):
    upd, ws, gs, rs = make_run(name, kw, dtype, n=n)
    idx = list(range(n))
    with fused.device_path():
        for _ in range(2):   # states created, fused factors settled
            fill(gs, rs)
            upd(idx, gs, ws)
        fill(gs, rs)
        return top_level_ops(lambda: upd(idx, gs, ws))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("name,kw", CONFIGS, ids=IDS)
def test_device_path_is_multi_tensor(name, kw, dtype):
    small = ops_per_step(name, kw, dtype, 10)
    large = ops_per_step(name, kw, dtype, 40)
    assert small, "the profiler saw no op"
    assert len(small) < 45, small
    assert large == small, (f"{name}: {len(small)} ops for 10 tensors, {len(large)} for 40 "
                            f"(the update loops over tensors)")


def test_op_counter_sees_a_per_tensor_loop():
    """The counter above must be able to fail: a per-tensor update grows with the list."""
    ws = [torch.zeros(3) for _ in range(10)]
    assert len(top_level_ops(lambda: [w.add_(1.0) for w in ws])) == 10
    assert len(top_level_ops(lambda: torch._foreach_add_(ws, 1.0))) == 1


def test_float16_grads_converted_in_one_op_and_reused():
    """Multi-precision: the float16 gradients become float32 in one ``_foreach_copy_`` into
    buffers kept while the gradient arrays live (no per-tensor ``.float()``)."""
    upd, ws, gs, rs = make_run("sgd", dict(momentum=0.9), "float16", n=12)
    idx = list(range(12))
    with fused.device_path():
        fill(gs, rs)
        upd(idx, gs, ws)
        fill(gs, rs)
        ops = top_level_ops(lambda: upd(idx, gs, ws))
    assert ops.count("aten::_foreach_copy_") == 2, ops   # grads in, weights back out
    assert "aten::to" not in ops and "aten::empty" not in ops, ops
    # the buffers follow the gradients' values: an update from fresh gradient arrays (new
    # tensors) gives the same numbers as one from reused arrays
    u1, w1, g1, r1 = make_run("adam", {}, "float16", n=4, seed=3)
    u2, w2, g2, r2 = make_run("adam", {}, "float16", n=4, seed=3)
    for _ in range(3):
        fill(g1, r1)
        fill(g2, r2)
        u1(list(range(4)), g1, w1)
        u2(list(range(4)), [g.copy() for g in g2], w2)
    for a, b in zip(w1, w2):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


def test_scaled_states_normalised_in_few_ops():
    """The fused paths keep states scaled (fused.py); reading them back to MXNet's layout
    takes one op per distinct factor, not one per tensor."""
    upd, ws, gs, rs = make_run("adam", dict(rescale_grad=0.5), "float32", n=30)
    idx = list(range(30))
    with fused.device_path():
        for _ in range(2):
            fill(gs, rs)
            upd(idx, gs, ws)
    assert upd._scales
    ops = top_level_ops(lambda: upd.states)
    assert ops == ["aten::_foreach_div_"] * 2, ops   # means (1/r) and variances (1/r^2)
    assert not upd._scales


def _bench():
    import importlib
    import os
    import sys
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench")
    if here not in sys.path:
        sys.path.insert(0, here)
    return importlib.import_module("optimizer_step")


@pytest.mark.parametrize("rule", ["lamb", "lars"])
def test_bench_foreach_baselines_compute_the_rule(rule):
    """bench/optimizer_step.py --device compares LAMB and LARS with _foreach implementations
    written in the bench (torch.optim has neither): they must compute neogluon's numbers, or
    the comparison is not of the same work."""
    b = _bench()
    rs = np.random.RandomState(1)
    shapes = [(6, 4), (6,), (3, 2, 2)]
    w0 = [rs.randn(*s).astype(np.float32) for s in shapes]
    g0 = [rs.randn(*s).astype(np.float32) for s in shapes]
    ps = [torch.nn.Parameter(torch.tensor(w)) for w in w0]
    for p, g in zip(ps, g0):
        p.grad = torch.tensor(g)
    step = b._foreach_lamb(ps, torch) if rule == "lamb" else b._foreach_lars(ps, torch)
    _, kw, _ = b.DEVICE_RULES[rule]
    upd = mx.optimizer.get_updater(mx.optimizer.create(rule, **kw))
    ws = [mx.nd.array(w) for w in w0]
    gs = [mx.nd.array(g) for g in g0]
    for _ in range(3):
        with torch.no_grad():
            step()
        upd(list(range(len(ws))), gs, ws)
    for p, w in zip(ps, ws):
        np.testing.assert_allclose(p.detach().numpy(), w.asnumpy(), rtol=1e-5, atol=1e-6)


def test_bench_device_mode_runs_on_cpu():
    b = _bench()
    res = b.run_device("cpu", 1, 1, ["sgd", "lamb"], small=True, device_path=True)
    labels = {(r[0], r[1]) for r in res["rows"]}
    assert ("sgd", "neogluon Updater (device path)") in labels
    assert ("sgd", "torch SGD fused") in labels and ("sgd", "torch SGD foreach") in labels
    assert ("lamb", "foreach LAMB (bench)") in labels
    assert res["n_tensors"] == 161
    for _, _, ms, gbs in res["rows"]:
        assert ms > 0 and gbs > 0
    assert "| sgd | torch SGD fused |" in b.device_table(res, True)


class _Mult:
    def __init__(self, lr_mult, wd_mult):
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult


@pytest.mark.parametrize("name,kw", [c for c in CONFIGS if c[0] in
                                     ("sgd", "nag", "adam", "rmsprop", "ftml")][::2])
def test_device_path_multi_tensor_with_per_parameter_mults(name, kw):
    """Biases without weight decay and a few layers at another learning rate (a fixed
    number of (lr, wd) groups) still cost a fixed number of ops, whatever the tensor count."""
    def count(n):
        upd, ws, gs, rs = make_run(name, kw, "float32", n=n)
        upd.optimizer.param_dict = {i: _Mult(2.0 if i % 5 == 0 else 1.0,
                                             0.0 if i % 2 else 1.0) for i in range(n)}
        idx = list(range(n))
        with fused.device_path():
            for _ in range(2):
                fill(gs, rs)
                upd(idx, gs, ws)
            fill(gs, rs)
            return top_level_ops(lambda: upd(idx, gs, ws))
    assert count(10) == count(40)
