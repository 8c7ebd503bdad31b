"""Optimizer API behaviour: registry, user optimizers, multipliers, counts, Updater states.

Expected values come from MXNet 1.9.1 (the fixtures of test_optimizer.py, or values printed by
MXNet and noted beside the assertion).
"""
import io
import os
import json
import pickle
import warnings

import numpy as np
import torch
import pytest

import neogluon as mx
from neogluon.base import MXNetError
from neogluon.optimizer import _ckernels, fused

from test_optimizer import SCENARIOS, FakeParam, NAME_MAP, TOL, arrays, leaves, make_sched


def scenario(key):
    return next(m for m in SCENARIOS if m["key"] == key)


# ----------------------------------------------------------------------------- registry
def test_create_is_case_insensitive():
    assert type(mx.optimizer.create("SGD")) is mx.optimizer.SGD
    assert type(mx.optimizer.create("AdaM", learning_rate=0.1)) is mx.optimizer.Adam
    assert type(mx.optimizer.Optimizer.create_optimizer("nag")) is mx.optimizer.NAG
    assert type(mx.optimizer.create("ccsgd")) is mx.optimizer.ccSGD
    assert mx.optimizer.create("adamw").__class__.__name__ == "AdamW"
    assert mx.optimizer.contrib.GroupAdaGrad is mx.optimizer.GroupAdaGrad
    assert type(mx.optimizer.create("groupadagrad")) is mx.optimizer.contrib.GroupAdaGrad


def test_create_unknown_name():
    # MXNet 1.9.1: ValueError('Cannot find optimizer nope')
    with pytest.raises(ValueError, match="Cannot find optimizer nope"):
        mx.optimizer.create("nope")


def test_register_override_warns():
    @mx.optimizer.register
    class WarnOpt(mx.optimizer.Optimizer):
        pass

    with pytest.warns(UserWarning, match="overriding"):
        mx.optimizer.register(type("WarnOpt", (mx.optimizer.Optimizer,), {}))
    del mx.optimizer.Optimizer.opt_registry["warnopt"]


@mx.optimizer.register
class UserMomentumSGD(mx.optimizer.Optimizer):
    """Written the way MXNet's docs show: NDArray ops, slices and out-of-place temporaries."""

    def __init__(self, momentum=0.0, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum

    def create_state(self, index, weight):
        return mx.nd.zeros(weight.shape, weight.context, dtype=weight.dtype)

    def update(self, index, weight, grad, state):
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        grad = grad * self.rescale_grad
        if self.clip_gradient is not None:
            grad = mx.nd.clip(grad, -self.clip_gradient, self.clip_gradient)
        state[:] = self.momentum * state - lr * wd * weight - lr * grad
        weight[:] += state


@pytest.mark.parametrize("key", ["sgd-float32-list", "sgd-float16-list"])
def test_user_optimizer_through_updater(key):
    """A user's SGD written with NDArray ops reproduces MXNet's SGD numbers via the Updater."""
    meta = scenario(key)
    data = arrays(meta["dtype"])
    params = {i: FakeParam(lm, wm) for i, (lm, wm) in
              enumerate(zip(meta["lr_mult"], meta["wd_mult"]))}
    kw = dict(meta["kwargs"])
    if meta["dtype"] == "float16":
        kw["multi_precision"] = True
    opt = mx.optimizer.create("usermomentumsgd", lr_scheduler=make_sched(meta["sched"]),
                              param_dict=params, **kw)
    upd = mx.optimizer.get_updater(opt)
    n = len(meta["shapes"])
    ws = [mx.nd.array(data[f"{key}/w0_{i}"], dtype=meta["dtype"]) for i in range(n)]
    for step in range(meta["steps"]):
        if step == 4:
            params[1].lr_mult = 1.5
            opt.rescale_grad *= 0.5
        gs = [mx.nd.array(data[f"{key}/g{step}_{i}"], dtype=meta["dtype"]) for i in range(n)]
        upd(list(range(n)), gs, ws)
        for i in range(n):
            np.testing.assert_allclose(ws[i].asnumpy(), data[f"{key}/w{step + 1}_{i}"],
                                       **TOL[meta["dtype"]])
    if meta["dtype"] == "float16":
        # the base class's multi-precision layout: (float32 master, state)
        st = upd.states[0]
        assert st[0].dtype == np.float32 and st[1].dtype == np.float32
    # the user's state is saved and restored like any other
    blob = upd.get_states(dump_optimizer=True)
    upd2 = mx.optimizer.get_updater(mx.optimizer.create("sgd"))
    upd2.set_states(blob)
    assert type(upd2.optimizer) is UserMomentumSGD
    assert upd2.optimizer.momentum == opt.momentum
    assert upd2.optimizer.num_update == opt.num_update


# ----------------------------------------------------------------------------- hyper-parameters
def test_set_learning_rate():
    opt = mx.optimizer.SGD(learning_rate=0.1)
    opt.set_learning_rate(0.3)
    assert opt.learning_rate == 0.3
    sched = mx.lr_scheduler.FactorScheduler(2, 0.5, base_lr=0.1)
    opt = mx.optimizer.SGD(lr_scheduler=sched)
    with pytest.raises(UserWarning, match="LRScheduler of the optimizer has already"):
        opt.set_learning_rate(0.3)
    opt.num_update = 5
    assert opt.learning_rate == pytest.approx(0.1 * 0.5 * 0.5)


def test_learning_rate_overrides_scheduler_base_lr():
    sched = mx.lr_scheduler.FactorScheduler(2, 0.5, base_lr=0.1)
    with pytest.warns(UserWarning):
        opt = mx.optimizer.SGD(learning_rate=0.4, lr_scheduler=sched)
    assert sched.base_lr == 0.4 and opt.learning_rate == 0.4
    assert mx.optimizer.SGD().learning_rate == 0.01


def test_multipliers_by_name_and_index():
    names = {0: "fc_weight", 1: "fc_bias", 2: "bn_gamma", 3: "bn_beta"}
    opt = mx.optimizer.SGD(param_idx2name=names, wd=0.1, learning_rate=0.2)
    opt.set_lr_mult({"fc_bias": 2.0, 3: 0.25})
    # MXNet 1.9.1: [0.1, 0.0, 0.1, 0.0] [0.2, 0.4, 0.2, 0.05]
    assert opt._get_wds([0, 1, 2, 3]) == pytest.approx([0.1, 0.0, 0.1, 0.0])
    assert opt._get_lrs([0, 1, 2, 3]) == pytest.approx([0.2, 0.4, 0.2, 0.05])
    # LARS decays only *_weight: MXNet 1.9.1 gives [0.1, 0.0, 0.0, 0.0]
    lars = mx.optimizer.LARS(param_idx2name=names, wd=0.1)
    assert lars._get_wds([0, 1, 2, 3]) == pytest.approx([0.1, 0.0, 0.0, 0.0])
    # param_dict wins and is read live
    p = FakeParam(3.0, 0.5)
    opt.param_dict = {1: p}
    assert opt._get_lrs([1]) == pytest.approx([0.6])
    p.lr_mult = 1.0
    assert opt._get_lrs([1]) == pytest.approx([0.2])
    assert opt._get_wds([1]) == pytest.approx([0.05])


def test_update_counts_and_begin_num_update():
    calls = []

    class Rec(mx.lr_scheduler.LRScheduler):
        def __call__(self, num_update):
            calls.append(num_update)
            return self.base_lr

    opt = mx.optimizer.SGD(begin_num_update=10, lr_scheduler=Rec(base_lr=0.1))
    upd = mx.optimizer.get_updater(opt)
    w, g = mx.nd.ones((2,)), mx.nd.ones((2,))
    upd(0, g, w)
    # MXNet 1.9.1: 11 {0: 11}, then 12 {0: 11, 1: 12}
    assert opt.num_update == 11 and opt._index_update_count == {0: 11}
    upd(1, g, w)
    upd(1, g, w)
    assert opt.num_update == 12 and opt._index_update_count == {0: 11, 1: 12}
    assert calls == [11, 11, 12]
    # per-device counts
    opt._set_current_context(3)
    assert opt._index_update_count == {}
    opt._set_current_context(0)
    assert opt._index_update_count == {0: 11, 1: 12}


def test_constructor_arguments():
    opt = mx.optimizer.Adam(aggregate_num=7, multi_precision=True, clip_gradient=2.0)
    assert opt.aggregate_num == 7 and opt.multi_precision and opt.clip_gradient == 2.0
    with pytest.raises(MXNetError, match="sym must be a Symbol"):
        mx.optimizer.SGD(sym=object())
    # a Symbol's lr_mult/wd_mult attributes are the default multipliers, as in MXNet
    w = mx.sym.var("fc_weight", lr_mult=0.5, wd_mult=2.0)
    b = mx.sym.var("fc_bias")
    net = mx.sym.FullyConnected(mx.sym.var("data"), weight=w, bias=b, num_hidden=2, name="fc")
    opt = mx.optimizer.SGD(sym=net, param_idx2name={0: "fc_weight", 1: "fc_bias"})
    assert opt.lr_mult == {"fc_weight": 0.5}
    assert opt.wd_mult == {"fc_weight": 2.0, "fc_bias": 0.0}
    opt.set_lr_mult({"fc_bias": 3.0})
    assert opt.lr_mult == {"fc_weight": 0.5, "fc_bias": 3.0}
    with pytest.raises(AssertionError):
        mx.optimizer.SGD(param_idx2name=[1, 2])


# ----------------------------------------------------------------------------- Updater
def test_updater_rejects_bad_calls():
    upd = mx.optimizer.get_updater(mx.optimizer.SGD())
    with pytest.raises(MXNetError, match="parallel"):
        upd([0, 1], [mx.nd.ones((2,))], [mx.nd.ones((2,)), mx.nd.ones((2,))])
    with pytest.raises(MXNetError, match=r"index 5.*\(3,\).*\(2,\)"):
        upd(5, mx.nd.ones((2,)), mx.nd.ones((3,)))
    with pytest.raises(MXNetError, match="NDArray"):
        upd(0, np.ones(2), mx.nd.ones((2,)))


def test_updater_rejects_a_gradient_of_another_dtype():
    # MXNet 1.9.1: MXNetError from the update operator's type check
    for name in ("sgd", "adam", "nadam", "sgld"):
        upd = mx.optimizer.get_updater(mx.optimizer.create(name, learning_rate=0.1))
        w = mx.nd.ones((4,))
        for gdt in ("float16", "float64", "int32"):
            with pytest.raises(MXNetError, match=rf"index 3: weight dtype float32 and gradient "
                                                 rf"dtype {gdt} differ"):
                upd(3, mx.nd.ones((4,), dtype=gdt), w)
        np.testing.assert_array_equal(w.asnumpy(), np.ones(4, np.float32))


DIRECT = ["sgd", "nag", "signum", "adam", "adamw", "nadam", "adamax", "adagrad", "adadelta",
          "rmsprop", "ftrl", "ftml", "lamb", "lars", "lbsgd", "dcasgd", "sgld", "test"]


@pytest.mark.parametrize("name", DIRECT)
def test_direct_update_checks_weight_gradient_and_state(name):
    """``opt.update(i, w, g, state)`` called by hand: a gradient or state that does not fit
    the weight is an MXNetError naming the index and the shapes or dtypes (MXNet's operators
    check the same), and the weight is left as it was. The compiled kernels index every
    array by the weight's size, so an unchecked call would read past the gradient's end."""
    opt = mx.optimizer.create(name, momentum=0.9) if name in ("sgd", "nag", "signum", "lars",
                                                               "lbsgd", "dcasgd") else \
        mx.optimizer.create(name)
    w = mx.nd.ones((3, 4))
    state = opt.create_state(7, w)
    bad = [(mx.nd.ones((4, 3)), r"index 7: weight shape \(3, 4\) and gradient shape \(4, 3\)"),
           (mx.nd.ones((11,)), r"index 7: weight shape \(3, 4\) and gradient shape \(11,\)"),
           (mx.nd.ones((3, 4), dtype="float64"), r"index 7: weight dtype float32 and gradient "
                                                 r"dtype float64")]
    for g, msg in bad:
        with pytest.raises(MXNetError, match=msg):
            opt.update(7, w, g, state)
        np.testing.assert_array_equal(w.asnumpy(), np.ones((3, 4), np.float32))
    arrays_in_state = leaves(state)
    if arrays_in_state:
        small = tuple(mx.nd.zeros((2, 4)) if isinstance(x, mx.nd.NDArray) else x
                      for x in (state if isinstance(state, (tuple, list)) else (state,)))
        small = small if isinstance(state, (tuple, list)) else small[0]
        with pytest.raises(MXNetError, match=r"index 7: a state array has shape \(2, 4\), "
                                             r"expected \(3, 4\)"):
            opt.update(7, w, mx.nd.ones((3, 4)), small)
        wide = tuple(x.astype("float64") if isinstance(x, mx.nd.NDArray) else x
                     for x in (state if isinstance(state, (tuple, list)) else (state,)))
        wide = wide if isinstance(state, (tuple, list)) else wide[0]
        with pytest.raises(MXNetError, match=r"index 7: a state array has dtype float64, "
                                             r"expected float32 for the float32 weight"):
            opt.update(7, w, mx.nd.ones((3, 4)), wide)
        np.testing.assert_array_equal(w.asnumpy(), np.ones((3, 4), np.float32))
    opt.update(7, w, mx.nd.ones((3, 4)), state)  # a fitting call still works
    assert not np.array_equal(w.asnumpy(), np.ones((3, 4), np.float32))


def test_direct_list_update_needs_parallel_lists():
    opt = mx.optimizer.create("sgd")
    w = mx.nd.ones((2,))
    with pytest.raises(MXNetError, match="2 indices, 2 weights, 1 gradients and 2 states"):
        opt.update([0, 1], [w, w], [mx.nd.ones((2,))], [None, None])


def test_states_of_another_model_are_refused_at_first_use():
    """States restored with set_states are matched against the weights when first used: a
    state of another shape is an MXNetError naming the index, not a read out of bounds."""
    src = mx.optimizer.get_updater(mx.optimizer.create("adam"))
    src([0, 1], [mx.nd.ones((5,)), mx.nd.ones((2, 2))], [mx.nd.ones((5,)), mx.nd.ones((2, 2))])
    upd = mx.optimizer.get_updater(mx.optimizer.create("adam"))
    upd.set_states(src.get_states())
    w = [mx.nd.ones((5,)), mx.nd.ones((3, 2))]
    with pytest.raises(MXNetError, match=r"index 1: a state array has shape \(2, 2\), "
                                         r"expected \(3, 2\)"):
        upd([0, 1], [mx.nd.ones((5,)), mx.nd.ones((3, 2))], w)
    np.testing.assert_array_equal(w[1].asnumpy(), np.ones((3, 2), np.float32))


def test_garbage_state_bytes_are_named_as_such():
    upd = _updater_with_state()
    with pytest.raises(MXNetError, match=r"not an \.npz archive; its first bytes are "
                                         r"b'hello wo'"):
        upd.set_states(b"hello world, not a state blob")


def test_mixed_dtypes_in_one_call():
    """float32 and float64 weights in one list update as they would separately."""
    rng = np.random.default_rng(0)
    w32, g32 = rng.standard_normal((3, 4)).astype("float32"), rng.standard_normal((3, 4))
    w64, g64 = rng.standard_normal(5), rng.standard_normal(5)
    outs = []
    for together in (True, False):
        opt = mx.optimizer.create("adam", learning_rate=0.1, wd=0.01)
        upd = mx.optimizer.get_updater(opt)
        ws = [mx.nd.array(w32), mx.nd.array(w64, dtype="float64")]
        gs = [mx.nd.array(g32.astype("float32")), mx.nd.array(g64, dtype="float64")]
        for _ in range(3):
            if together:
                upd([0, 1], gs, ws)
            else:
                upd(0, gs[0], ws[0])
                upd(1, gs[1], ws[1])
        outs.append([w.asnumpy() for w in ws])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_group_adagrad_errors():
    # MXNet 1.9.1: AssertionError('Weight decay is not supported for GroupAdaGrad')
    upd = mx.optimizer.get_updater(mx.optimizer.create("groupadagrad", wd=0.1))
    with pytest.raises(AssertionError, match="Weight decay is not supported"):
        upd(0, mx.nd.ones((2, 3)), mx.nd.ones((2, 3)))
    upd = mx.optimizer.get_updater(mx.optimizer.create("groupadagrad"))
    with pytest.raises(AssertionError, match="2-D"):
        upd(0, mx.nd.ones((2,)), mx.nd.ones((2,)))


def test_sgld_noise_statistics_and_seed():
    def run(seed):
        mx.random.seed(seed)
        opt = mx.optimizer.create("sgld", learning_rate=0.01, wd=0.1, rescale_grad=0.5)
        upd = mx.optimizer.get_updater(opt)
        w = mx.nd.ones((200, 500))
        upd(0, mx.nd.ones((200, 500)) * 2, w)
        return w.asnumpy()

    a = run(3)
    # w = 1 - lr/2 * (rescale*g + wd*w) + N(0, sqrt(lr)) = 1 - 0.005*1.1 + noise
    assert a.mean() == pytest.approx(1 - 0.005 * 1.1, abs=3e-3)
    assert a.std() == pytest.approx(0.1, rel=0.02)
    np.testing.assert_array_equal(a, run(3))
    assert not np.array_equal(a, run(4))


def test_dcasgd_with_momentum_runs():
    """MXNet 1.9.1 raises here (truth value of an NDArray); neogluon updates."""
    opt = mx.optimizer.create("dcasgd", momentum=0.9, learning_rate=0.1, lamda=0.04)
    upd = mx.optimizer.get_updater(opt)
    w = mx.nd.ones((3, 3))
    upd(0, mx.nd.ones((3, 3)), w)
    upd(0, mx.nd.ones((3, 3)), w)
    # step 1: mom = -0.1; w = 0.9. step 2: mom = 0.9*-0.1 - 0.1*(1 + 0.04*(0.9 - 1)) = -0.1896
    np.testing.assert_allclose(w.asnumpy(), 0.9 - 0.1896, rtol=1e-6)


# ----------------------------------------------------------------------------- states I/O
RESUME_KEYS = ["sgd-float32-list", "sgd_noclip-float32-list", "nag_noclip-float32-list",
               "adam_noclip-float32-list", "adamw-float32-list", "nadam-float32-list",
               "lars-float32-list", "lbsgd-float32-list", "lamb-float32-list",
               "rmsprop_centered-float32-list", "dcasgd_mom-float32-list",
               "ftml-float32-list", "sgd-float16-list", "adam-float16-list",
               "adam_noclip-float64-list"]


@pytest.mark.parametrize("mode", ["kernels", "torch"])
@pytest.mark.parametrize("key", RESUME_KEYS)
def test_save_and_resume_matches_uninterrupted_mxnet(key, mode):
    """Stop after 4 steps, save with dump_optimizer, load into a fresh Updater whose optimizer
    was built with other settings, finish: MXNet's uninterrupted numbers."""
    meta = scenario(key)
    dtype = meta["dtype"]
    data = arrays(dtype)
    kw = dict(meta["kwargs"])
    if dtype == "float16":
        kw["multi_precision"] = True
    params = {i: FakeParam(lm, wm) for i, (lm, wm) in
              enumerate(zip(meta["lr_mult"], meta["wd_mult"]))}
    name = NAME_MAP.get(meta["optimizer"], meta["optimizer"])
    opt = mx.optimizer.create(name, lr_scheduler=make_sched(meta["sched"]), param_dict=params,
                              param_idx2name=dict(enumerate(meta["names"])), **kw)
    upd = mx.optimizer.get_updater(opt)
    n = len(meta["shapes"])
    ws = [mx.nd.array(data[f"{key}/w0_{i}"], dtype=dtype) for i in range(n)]
    old = (fused.set_enabled(True), _ckernels.set_enabled(mode == "kernels"))
    try:
        for step in range(meta["steps"]):
            if step == 4:
                blob = upd.get_states(dump_optimizer=True)
                assert isinstance(blob, bytes)
                upd = mx.optimizer.get_updater(mx.optimizer.create(name, learning_rate=123.0))
                upd.set_states(blob)
                opt = upd.optimizer
                assert type(opt).__name__.lower() == name
                assert opt.param_dict == {}          # the Trainer re-links its Parameters
                opt.param_dict = params
                params[1].lr_mult = 1.5
                opt.rescale_grad = opt.rescale_grad * 0.5
            gs = [mx.nd.array(data[f"{key}/g{step}_{i}"], dtype=dtype) for i in range(n)]
            upd(list(range(n)), gs, ws)
            for i in range(n):
                np.testing.assert_allclose(ws[i].asnumpy(), data[f"{key}/w{step + 1}_{i}"],
                                           **TOL[dtype], err_msg=f"{key} step {step + 1}")
    finally:
        fused.set_enabled(old[0])
        _ckernels.set_enabled(old[1])
    assert opt.num_update == meta["num_update"]


def _updater_with_state():
    opt = mx.optimizer.create("adam", learning_rate=0.1)
    upd = mx.optimizer.get_updater(opt)
    w = mx.nd.ones((4,))
    upd([0, 1], [mx.nd.ones((4,)), mx.nd.ones((4,))], [w, mx.nd.ones((4,))])
    return upd


def _bad_blobs(good):
    yield "truncated", good[: len(good) // 2]
    yield "empty", b""
    yield "random", bytes(range(256)) * 4
    yield "pickle", pickle.dumps({0: np.ones(3)})
    buf = io.BytesIO()
    np.savez(buf, x=np.ones(3))
    yield "npz without header", buf.getvalue()
    for header in ({"format": "something-else", "version": 1},
                   {"format": "neogluon-updater-states", "version": 99, "states": []},
                   {"format": "neogluon-updater-states", "version": 1,
                    "states": [[0, {"a": "missing"}]], "optimizer": None}):
        buf = io.BytesIO()
        np.savez(buf, __header__=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8))
        yield f"header {header.get('format')} v{header.get('version')}", buf.getvalue()
    yield "not bytes", "a string"


@pytest.mark.parametrize("what", [w for w, _ in _bad_blobs(b"0123456789")])
def test_bad_state_blob_leaves_updater_unchanged(what):
    upd = _updater_with_state()
    good = upd.get_states(dump_optimizer=True)
    blob = dict(_bad_blobs(good))[what]
    before_states = upd.states
    before = {k: [x.asnumpy().copy() for x in leaves(v)] for k, v in before_states.items()}
    opt = upd.optimizer
    with pytest.raises(MXNetError):
        upd.set_states(blob)
    assert upd.optimizer is opt
    assert upd.states is before_states
    for k, v in upd.states.items():
        for a, b in zip(leaves(v), before[k]):
            np.testing.assert_array_equal(a.asnumpy(), b)


def test_states_without_optimizer_keep_the_optimizer():
    upd = _updater_with_state()
    blob = upd.get_states()
    fresh_opt = mx.optimizer.create("adam", learning_rate=0.5)
    upd2 = mx.optimizer.get_updater(fresh_opt)
    upd2.set_states(blob)
    assert upd2.optimizer is fresh_opt
    assert sorted(upd2.states) == [0, 1]
    for a, b in zip(leaves(upd.states[0]), leaves(upd2.states[0])):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    # the blob is plain npz + JSON; loading it never needs pickle
    with np.load(io.BytesIO(blob), allow_pickle=False) as z:
        header = json.loads(z["__header__"].tobytes())
    assert header["format"] == "neogluon-updater-states" and header["optimizer"] is None


def test_scheduler_state_travels_with_optimizer():
    sched = mx.lr_scheduler.MultiFactorScheduler(step=[2, 4], factor=0.1, base_lr=1.0)
    opt = mx.optimizer.create("sgd", lr_scheduler=sched)
    upd = mx.optimizer.get_updater(opt)
    w = mx.nd.ones((2,))
    for _ in range(3):
        upd(0, mx.nd.ones((2,)), w)
    blob = upd.get_states(dump_optimizer=True)
    upd2 = mx.optimizer.get_updater(mx.optimizer.create("sgd"))
    upd2.set_states(blob)
    s2 = upd2.optimizer.lr_scheduler
    assert type(s2) is mx.lr_scheduler.MultiFactorScheduler and s2 is not sched
    assert s2.cur_step_ind == sched.cur_step_ind and s2.base_lr == sched.base_lr
    assert upd2.optimizer.learning_rate == pytest.approx(opt.learning_rate)
    assert upd2.optimizer._index_update_count == {0: 3}


def test_warns_on_float16_without_multi_precision():
    upd = mx.optimizer.get_updater(mx.optimizer.create("sgd", momentum=0.9))
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        upd(0, mx.nd.ones((2,), dtype="float16"), mx.nd.ones((2,), dtype="float16"))
    assert any("multi_precision" in str(r.message) for r in rec)


def test_subclass_overriding_update_gets_master_weights():
    """As MXNet's base class: a subclass of Adam that replaces `update` receives the float32
    master copy under multi_precision, and the float16 weight is cast from it."""
    seen = []

    class MyAdam(mx.optimizer.Adam):
        def update(self, index, weight, grad, state):
            seen.append((weight.dtype, grad.dtype))
            weight[:] -= grad

    opt = MyAdam(multi_precision=True)
    upd = mx.optimizer.get_updater(opt)
    w = mx.nd.ones((3,), dtype="float16")
    upd([0], [mx.nd.ones((3,), dtype="float16") * 0.25], [w])
    assert seen == [(np.float32, np.float32)]
    np.testing.assert_array_equal(w.asnumpy(), np.full(3, 0.75, dtype="float16"))


@pytest.mark.parametrize("name, kw", [
    ("sgd", {"momentum": 0.9}), ("sgd", {}), ("nag", {"momentum": 0.9}), ("signum", {}),
    ("adam", {}), ("adamw", {}), ("adagrad", {}), ("adadelta", {}), ("rmsprop", {}),
    ("rmsprop", {"centered": True}), ("ftrl", {}), ("ftml", {}), ("adamax", {}),
    ("nadam", {}), ("lamb", {}), ("dcasgd", {"momentum": 0.9}), ("lars", {"momentum": 0.9})])
# (SGLD has its own fused kernel; its one-call check is in test_sgld_kernel.py)
def test_list_updates_use_one_multi_tensor_kernel_call(name, kw, monkeypatch):
    """The hot path: the whole list in one compiled-kernel call (two for LAMB and LARS: norms
    first), no per-tensor loop. (LARS works per group of aggregate_num tensors, as MXNet.)"""
    assert _ckernels.library() is not None
    calls = []
    real = _ckernels.run
    monkeypatch.setattr(_ckernels, "run", lambda kind, ws, *a, **k: (
        calls.append(len(ws)), real(kind, ws, *a, **k))[1])
    opt = mx.optimizer.create(name, aggregate_num=64, **kw)
    upd = mx.optimizer.get_updater(opt)
    ws = [mx.nd.ones((5, 3)) for _ in range(40)]
    gs = [mx.nd.ones((5, 3)) * 0.1 for _ in range(40)]
    upd(list(range(40)), gs, ws)
    assert calls == ([40, 40] if name in ("lamb", "lars") else [40])


@pytest.mark.parametrize("name, calls_want", [
    ("adam", [20, 20]), ("rmsprop", [20, 20]), ("sgd", [20, 20]),
    # Nadam's schedule product follows the call order: one call per run of one dtype
    ("nadam", [1] * 40)])
def test_interleaved_dtypes_are_grouped_unless_order_matters(name, calls_want, monkeypatch):
    """float32 and float64 weights alternating in one list (as float16 weights beside
    float32 norm parameters do): one kernel call per dtype, except where the order of the
    updates changes the numbers."""
    calls = []
    real = _ckernels.run
    monkeypatch.setattr(_ckernels, "run", lambda kind, ws, *a, **k: (
        calls.append(len(ws)), real(kind, ws, *a, **k))[1])
    upd = mx.optimizer.get_updater(mx.optimizer.create(name, learning_rate=0.01))
    dts = ["float32", "float64"] * 20
    ws = [mx.nd.ones((5, 3), dtype=d) for d in dts]
    gs = [mx.nd.ones((5, 3), dtype=d) * 0.1 for d in dts]
    upd(list(range(40)), gs, ws)
    assert calls == calls_want


@pytest.mark.parametrize("name, kw", [("sgd", {"momentum": 0.9}), ("sgd", {}),
                                      ("adam", {}), ("adamw", {})])
def test_torch_fused_path_is_taken_without_kernels(name, kw, monkeypatch):
    """Without the compiled kernels (e.g. on CUDA) SGD and Adam(W) run torch's fused kernels,
    with states kept scaled and brought back to MXNet's values when read."""
    monkeypatch.setattr(_ckernels._LIB, "enabled", False)
    used = []
    for fn in ("_fused_sgd_", "_fused_adam_", "_fused_adamw_"):
        real = getattr(__import__("torch"), fn)
        monkeypatch.setattr(fused.torch, fn, lambda *a, _r=real, _n=fn, **k: (
            used.append(_n), _r(*a, **k))[1])
    upd = mx.optimizer.get_updater(mx.optimizer.create(name, rescale_grad=0.25, **kw))
    ws = [mx.nd.ones((5, 3)) for _ in range(4)]
    gs = [mx.nd.ones((5, 3)) * 0.1 for _ in range(4)]
    upd(list(range(4)), gs, ws)
    upd(list(range(4)), gs, ws)
    assert len(used) == 2
    if kw.get("momentum") or name != "sgd":
        assert upd._scales           # scaled while the fused path runs...
        states = upd.states
        assert not upd._scales       # ...and MXNet's values once read
        assert states[0] is not None


def test_lbsgd_updates_a_list_in_one_kernel_call(monkeypatch):
    """LBSGD reads each index's learning rate in turn (as MXNet) but updates the whole list
    at once: one multi-tensor call, not one per Parameter."""
    from neogluon.optimizer import _ckernels as ck
    if not ck.usable([torch.zeros(2)], [torch.zeros(2)]):
        pytest.skip("optimizer kernels unavailable")
    calls = []
    real = ck.run
    monkeypatch.setattr(ck, "run", lambda kind, ws, *a, **k: (calls.append(len(ws)),
                                                              real(kind, ws, *a, **k))[1])
    opt = mx.optimizer.create("lbsgd", momentum=0.9, learning_rate=0.1)
    upd = mx.optimizer.get_updater(opt)
    ws = [mx.nd.ones((4, 3)) for _ in range(30)]
    upd(list(range(30)), [mx.nd.ones((4, 3)) for _ in range(30)], ws)
    assert calls == [30]
    ref = mx.nd.ones((4, 3))
    mx.optimizer.get_updater(mx.optimizer.create("lbsgd", momentum=0.9, learning_rate=0.1))(
        0, mx.nd.ones((4, 3)), ref)
    np.testing.assert_array_equal(ws[7].asnumpy(), ref.asnumpy())


# ----------------------------------------------------------------------------- order of work
with open(os.path.join(os.path.dirname(__file__), "fixtures", "optimizer",
                       "updater_order.json")) as _f:
    ORDER = json.load(_f)


@pytest.mark.parametrize("scn", ORDER, ids=[s["name"] for s in ORDER])
def test_updater_order_of_work_matches_mxnet(scn):
    """Mixed dtypes, unsorted indices and uneven update counts under a schedule: MXNet groups
    an aggregating optimizer's indices by dtype and updates the others index by index in
    call order (Nadam's schedule product depends on it); the weights match MXNet 1.9.1's."""
    kw = dict(scn["kwargs"])
    if scn["sched"]:
        kind, skw = scn["sched"]
        kw["lr_scheduler"] = getattr(mx.lr_scheduler, kind)(**skw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = mx.optimizer.create(scn["optimizer"], **kw)
    upd = mx.optimizer.get_updater(opt)
    dts = scn["dtypes"]
    ws = [mx.nd.ones((2,), dtype=d) * (k + 1) for k, d in enumerate(dts)]
    for s, (idx, want) in enumerate(zip(scn["calls"], scn["weights"])):
        gs = [mx.nd.ones((2,), dtype=dts[i]) * (0.5 + s + 0.25 * i) for i in idx]
        upd(list(idx), gs, [ws[i] for i in idx])
        for k, (w, exp) in enumerate(zip(ws, want)):
            # float64 to float32's precision: MXNet passes its scalars as float32
            eps = float(np.finfo(dts[k] if dts[k] != "float64" else "float32").eps)
            np.testing.assert_allclose(w.asnumpy().astype(np.float64), exp, rtol=4 * eps, atol=0,
                                       err_msg=f"{scn['name']}: weight {k} after step {s + 1}")
    assert opt.num_update == scn["num_update"]


@pytest.mark.parametrize("kernels", [True, False])
def test_signsgd_applies_wd_lh(kernels):
    """Signum with momentum 0 (signSGD) and wd_lh: the weight is scaled by 1 - lr*wd_lh before
    the sign step, as with momentum. MXNet 1.9.1 fails ('Cannot find argument wd_lh'); without
    wd_lh the update is MXNet's signsgd_update (the fixtures' signsgd scenario)."""
    old = _ckernels.set_enabled(kernels)
    try:
        opt = mx.optimizer.create("signum", momentum=0, wd_lh=0.1, learning_rate=0.1, wd=0.2)
        upd = mx.optimizer.get_updater(opt)
        w = mx.nd.array([1.0, -2.0, 3.0])
        upd(0, mx.nd.array([0.5, 0.5, -0.5]), w)
    finally:
        _ckernels.set_enabled(old)
    w0 = np.array([1.0, -2.0, 3.0], np.float32)
    want = np.float32(1 - 0.1 * 0.1) * (np.float32(1 - 0.1 * 0.2) * w0) - \
        np.float32(0.1) * np.sign([0.5, 0.5, -0.5]).astype(np.float32)
    np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-6)


@pytest.mark.parametrize("name", ["groupadagrad", "adam", "sgd", "nag", "lamb", "rmsprop",
                                  "ftml", "signum"])
def test_state_checks_accept_multi_precision_states(name):
    """Under multi-precision a float16 weight's state holds a float32 master copy shaped like
    the weight beside the inner states (GroupAdaGrad's are (rows, 1)): restored and hand-made
    states of that layout pass the checks, a master copy of the wrong dtype does not."""
    kw = dict(learning_rate=0.1, multi_precision=True)
    if name in ("sgd", "nag", "signum"):
        kw["momentum"] = 0.9
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = mx.optimizer.create(name, **kw)
        upd = mx.optimizer.get_updater(opt)
        w = mx.nd.ones((3, 2), dtype="float16")
        upd(0, mx.nd.ones((3, 2), dtype="float16"), w)
        resumed = mx.optimizer.get_updater(mx.optimizer.create(name, **kw))
        resumed.set_states(upd.get_states(dump_optimizer=True))
        w2 = w.copy()
        resumed(0, mx.nd.ones((3, 2), dtype="float16"), w2)
        upd(0, mx.nd.ones((3, 2), dtype="float16"), w)
        np.testing.assert_array_equal(w2.asnumpy(), w.asnumpy())
        state = opt.create_state_multi_precision(1, w)
        opt.update_multi_precision(1, w, mx.nd.ones((3, 2), dtype="float16"), state)
        master_last = getattr(opt, "_mp_master_last", False)
        bad = list(state)
        bad[1 if master_last else 0] = bad[1 if master_last else 0].astype("float16")
        with pytest.raises(MXNetError, match="index 1: a state array has dtype float16, "
                                             "expected float32"):
            opt.update_multi_precision(1, w, mx.nd.ones((3, 2), dtype="float16"), tuple(bad))


def test_test_optimizer_in_trainer_without_kvstore():
    """The Test optimizer updates autograd-leaf weights (was: in-place op on a leaf)."""
    import neogluon as mx
    from neogluon import autograd, gluon, nd
    net = gluon.nn.Dense(2, in_units=3)
    net.initialize(mx.init.Uniform(0.5))
    before = net.weight.data().asnumpy().copy()
    tr = gluon.Trainer(net.collect_params(), "test", update_on_kvstore=False)
    x = nd.array(np.arange(12, dtype=np.float32).reshape(4, 3))
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    grad = net.weight.grad().asnumpy().copy()
    tr.step(4)
    np.testing.assert_allclose(net.weight.data().asnumpy(), before + grad / 4, rtol=1e-6)
