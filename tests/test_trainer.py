"""gluon.Trainer against MXNet 1.9.1: the scenarios in trainer_scenarios.py run here with
neogluon and are compared with what MXNet produced (tools/gen_trainer_fixtures.py)."""
import json
import os
import warnings

import numpy as np
import pytest

import neogluon as mx
from neogluon import autograd, gluon, nd
from neogluon.base import MXNetError

import trainer_scenarios as S
from fixture_record import resolve

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "trainer")
ARR = np.load(os.path.join(FIX, "trainer.npz"))
with open(os.path.join(FIX, "trainer.json")) as _f:
    META = json.load(_f)

# Forward and backward run in torch, not MXNet's BLAS: weights agree to float32 rounding.
RTOL, ATOL = 2e-5, 2e-6


def fixture(x):
    """Resolve array references in a fixture entry."""
    return resolve(x, ARR)


def assert_weights(got, want, rtol=RTOL, atol=ATOL):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(g, (list, tuple)):
            assert_weights(g, w, rtol, atol)
        else:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


# MXNet messages neogluon replaces with a clearer one (same exception type).
CLEARER = {"'NoneType' object has no attribute 'is_capable'":
           "update_on_kvstore=True needs a kvstore"}


def assert_error(got, want):
    assert got["error"] == want["error"], (got, want)
    if want["error"] is not None and want["message"] in CLEARER:
        assert CLEARER[want["message"]] in got["message"], (got["message"], want["message"])
        return
    if want["error"] is not None:
        assert got["message"].replace("neogluon", "mxnet") == want["message"] or \
            want["message"] in got["message"], (got["message"], want["message"])


# ---------------------------------------------------------------------- training runs
@pytest.mark.parametrize("name,case", S.basic_cases(), ids=[n for n, _ in S.basic_cases()])
def test_basic_training_matches_mxnet(name, case):
    want = fixture(META[f"basic.{name}"])
    got = S.run_basic(mx, case)
    assert got["uok"] == want["uok"] and got["kvtype"] == want["kvtype"]
    assert_weights(got["weights"], want["weights"])


@pytest.mark.parametrize("kv", ["local", "device"])
@pytest.mark.parametrize("uok", [True, False])
def test_two_contexts_equal_one_context(kv, uok):
    one = S.train(mx, nctx=1, optimizer="sgd", optimizer_params={"learning_rate": 0.2},
                  steps=3)
    two = S.train(mx, nctx=2, kvstore=kv, update_on_kvstore=uok, optimizer="sgd",
                  optimizer_params={"learning_rate": 0.2}, steps=3)
    assert two["uok"] is uok and two["kvtype"] == kv
    assert_weights(two["weights"], one["weights"], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("uok", [None, False])
def test_lr_mult(uok):
    assert_weights(S.lr_mult(mx, uok)["weights"], fixture(META[f"lr_mult.{uok}"])["weights"])


@pytest.mark.parametrize("key,uok,nctx", [("None", None, 2), ("False", False, 2),
                                          ("1ctx", None, 1)])
def test_lr_scheduler(key, uok, nctx):
    want = fixture(META[f"lr_scheduler.{key}"])
    got = S.lr_scheduler(mx, uok, nctx=nctx)
    np.testing.assert_allclose(got["lrs"], want["lrs"], rtol=1e-12)
    assert_weights(got["weights"], want["weights"])


@pytest.mark.parametrize("uok", [None, False])
def test_compression_in_trainer(uok):
    want = fixture(META[f"compression.{uok}"])
    got = S.compression(mx, uok)
    assert got["uok"] == want["uok"]
    assert_weights(got["weights"], want["weights"])


def test_compression_1bit_in_trainer():
    # MXNet 1.9.1 has no 1bit; check the Trainer path against the store's rule (covered
    # bit for bit in test_kvstore) by comparing with a run without compression.
    got = S.compression(mx, False, ctype="1bit", threshold=0.0)
    plain = S.train(mx, nctx=2, kvstore="device", update_on_kvstore=False, optimizer="sgd",
                    optimizer_params={"learning_rate": 0.5, "momentum": 0.9}, steps=4)
    assert got["uok"] is False and len(got["weights"]) == 4
    assert all(np.isfinite(w).all() for w in got["weights"][-1])
    assert any(not np.allclose(a, b) for a, b in zip(got["weights"][-1], plain["weights"][-1]))


def test_compression_single_context_is_ignored():
    # MXNet uses no store with one context, so compression never applies.
    got = S.train(mx, nctx=1, optimizer="sgd", compression_params={"type": "2bit"})
    plain = S.train(mx, nctx=1, optimizer="sgd")
    assert got["kvtype"] is None
    assert_weights(got["weights"], plain["weights"], rtol=0, atol=0)


def test_compression_on_local_store_raises():
    with pytest.raises(Exception, match="Gradient compression is not supported"):
        S.train(mx, nctx=2, kvstore="local", compression_params={"type": "2bit"}, steps=1)


@pytest.mark.parametrize("key,nctx,uok", [("1.None", 1, None), ("2.None", 2, None),
                                          ("2.False", 2, False)])
def test_stale_gradients(key, nctx, uok):
    want = fixture(META[f"stale.{key}"])
    got = S.stale(mx, nctx, uok)
    for g, w in zip(got["errors"], want["errors"]):
        assert_error(g, w)
    assert_weights(got["weights"], want["weights"])


@pytest.mark.parametrize("nctx", [1, 2])
def test_grad_req_add_and_null(nctx):
    assert_weights(S.grad_req(mx, nctx)["weights"], fixture(META[f"grad_req.{nctx}"])["weights"])


@pytest.mark.parametrize("key,nctx,uok", [("1.None", 1, None), ("2.None", 2, None),
                                          ("2.False", 2, False)])
def test_deferred_init(key, nctx, uok):
    want = fixture(META[f"deferred.{key}"])
    got = S.deferred(mx, nctx, uok)
    assert got["uok"] == want["uok"]
    assert_weights(got["weights"], want["weights"])


def test_custom_store_and_instances():
    want = fixture(META["custom_store"])
    got = S.custom_store(mx)
    for k in ("teststore", "instance", "instance_single_ctx"):
        assert got[k]["uok"] == want[k]["uok"] and got[k]["kvtype"] == want[k]["kvtype"], k
        assert_weights(got[k]["weights"], want[k]["weights"])
    assert_error(got["teststore_uok_true"], want["teststore_uok_true"])


def test_clip_between_allreduce_and_update():
    want = fixture(META["clip"])
    got = S.clip_between(mx)
    np.testing.assert_allclose(got["norms"], want["norms"], rtol=1e-5)
    assert_weights(got["weights"], want["weights"])
    assert_error(got["allreduce_uok"], want["allreduce_uok"])
    assert_error(got["update_uok"], want["update_uok"])


def test_batch_size_rescale():
    want = fixture(META["rescale"])
    got = S.rescale(mx)
    np.testing.assert_allclose(got["scales"], want["scales"], rtol=1e-12)
    assert_weights(got["weights"], want["weights"])


def test_tutorial_maths():
    want = fixture(META["tutorial"])
    got = S.tutorial(mx)
    np.testing.assert_allclose(got["sgd"], want["sgd"], rtol=1e-6)
    np.testing.assert_allclose(got["sgd"], got["sgd_rule"], rtol=1e-6)
    np.testing.assert_allclose(got["adam"], want["adam"], rtol=1e-5)
    assert got["lr"] == want["lr"] == 1 and got["lr_set"] == want["lr_set"] == 0.1


@pytest.mark.parametrize("case", META["rules"],
                         ids=lambda r: f"{r['nctx']}-{r['kvstore']}-{r['uok_arg']}-{r['env']}")
def test_update_on_kvstore_rules(case):
    got = S.rules(mx, case["nctx"], case["kvstore"], case["uok_arg"], case["env"])
    assert_error(got, case)
    if case["error"] is None:
        assert got["uok"] == case["uok"] and got["kvtype"] == case["kvtype"]


def test_constructor_errors():
    want = META["constructor_errors"]
    got = S.constructor_errors(mx)
    for k, w in want.items():
        assert_error(got[k], w)


# ---------------------------------------------------------------------- save / load
@pytest.mark.parametrize("opt", ["sgd", "adam"])
@pytest.mark.parametrize("key,uok,nctx", [("None", None, 2), ("False", False, 2),
                                          ("1ctx", None, 1)])
def test_save_load_resume_is_exact(tmp_path, opt, key, uok, nctx):
    want = fixture(META[f"save_load.{opt}.{key}"])
    got = S.save_load(mx, str(tmp_path / "states"), opt, uok, nctx=nctx)
    assert_weights(got["straight"], want["straight"])
    # Resumed training equals uninterrupted training to the bit.
    assert_weights(got["resumed"], got["straight"], rtol=0, atol=0)
    for k in ("lr_loaded", "lr_resumed", "lr_straight"):
        assert got[k] == pytest.approx(want[k], rel=1e-12)
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".tmp")]


def _trainer(nctx=1, uok=None, opt="sgd", **op):
    ctxs = [mx.cpu(i) for i in range(nctx)]
    net, params = S.build(mx, ctxs)
    op = op or {"learning_rate": 0.1, "momentum": 0.9}
    tr = gluon.Trainer(net.collect_params(), opt, op, update_on_kvstore=uok)
    S.forward_backward(mx, net, ctxs, 0)
    tr.step(S.BATCH)
    return net, params, tr, ctxs


@pytest.mark.parametrize("nctx,uok", [(1, None), (2, None), (2, False)])
def test_load_states_bad_files_leave_trainer_unchanged(tmp_path, nctx, uok):
    net, params, tr, ctxs = _trainer(nctx, uok)
    good = str(tmp_path / "good")
    tr.save_states(good)
    blob = open(good, "rb").read()
    opt_before = tr.optimizer
    lr_before = tr.learning_rate

    def expect(fname, pattern):
        with pytest.raises(MXNetError, match=pattern):
            tr.load_states(fname)
        assert tr.optimizer is opt_before and tr.learning_rate == lr_before

    trunc = tmp_path / "trunc"
    trunc.write_bytes(blob[: len(blob) // 2])
    expect(str(trunc), "trunc")
    foreign = tmp_path / "foreign"
    foreign.write_bytes(b"\x80\x04this is a pickle")
    expect(str(foreign), "pickle")
    junk = tmp_path / "junk"
    junk.write_bytes(b"hello world")
    expect(str(junk), "junk")
    # another optimizer
    _, _, tr_adam, _ = _trainer(nctx, uok, opt="adam", learning_rate=0.01)
    adam_file = str(tmp_path / "adam")
    tr_adam.save_states(adam_file)
    expect(adam_file, "Adam.*SGD")
    # another model: same optimizer, other shapes
    other = gluon.nn.Dense(7, in_units=2)
    other.initialize(ctx=ctxs)
    tr_other = gluon.Trainer(other.collect_params(), "sgd",
                             {"learning_rate": 0.1, "momentum": 0.9}, update_on_kvstore=uok)
    with autograd.record():
        ls = [other(nd.ones((2, 2), ctx=c)).sum() for c in ctxs]
    autograd.backward(ls)
    tr_other.step(1)
    other_file = str(tmp_path / "other")
    tr_other.save_states(other_file)
    expect(other_file, r"shape")
    # The good file still loads, and training continues.
    tr.load_states(good)
    S.forward_backward(mx, net, ctxs, 1)
    tr.step(S.BATCH)


@pytest.mark.parametrize("uok", [True, False])
def test_load_states_relinks_param_dict(tmp_path, uok):
    net, params, tr, ctxs = _trainer(2, uok, learning_rate=0.1)
    f = str(tmp_path / "s")
    tr.save_states(f)
    tr.load_states(f)
    assert all(tr.optimizer.param_dict[i] is p for i, p in enumerate(tr._params))
    # lr_mult changed after the load reaches the loaded optimizer: plain SGD without weight
    # decay then leaves that Parameter exactly as it was, and moves the others.
    frozen = tr._params[0]
    frozen.lr_mult = 0.0
    before = [p.data(ctxs[1]).asnumpy().copy() for p in tr._params]
    S.forward_backward(mx, net, ctxs, 2)
    tr.step(S.BATCH)
    after = [p.data(ctxs[1]).asnumpy() for p in tr._params]
    np.testing.assert_array_equal(after[0], before[0])
    assert all((a != b).any() for a, b in zip(after[1:], before[1:]))


def test_save_states_atomic_and_no_pickle(tmp_path):
    _, _, tr, _ = _trainer(1)
    f = tmp_path / "s"
    tr.save_states(str(f))
    data = f.read_bytes()
    assert not data.startswith(b"\x80")
    assert sorted(os.listdir(tmp_path)) == ["s"]


# ---------------------------------------------------------------------- API details
def test_params_ordering_and_forms():
    net, params = S.build(mx, [mx.cpu(0)])
    pd = net.collect_params()
    tr = gluon.Trainer(pd, "sgd")
    names = sorted(pd.keys())
    assert [p.name for p in tr._params] == [pd[n].name for n in names]
    assert tr._param2idx == {pd[n].name: i for i, n in enumerate(names)}
    tr2 = gluon.Trainer({k: pd[k] for k in reversed(list(pd.keys()))}, "sgd")
    assert [p.name for p in tr2._params] == [p.name for p in tr._params]
    tr3 = gluon.Trainer(params[::-1], "sgd")
    assert tr3._params == params[::-1]
    assert tr3.optimizer.param_dict[0] is params[-1]


def test_learning_rate_and_optimizer_property():
    net, params = S.build(mx, [mx.cpu(0)])
    optim = mx.optimizer.Adam(learning_rate=0.5)
    tr = gluon.Trainer(params, optim)
    assert tr.optimizer is optim and tr.learning_rate == 0.5
    tr.set_learning_rate(0.25)
    assert optim.learning_rate == 0.25 and tr.learning_rate == 0.25
    tr._optimizer = None
    with pytest.raises(UserWarning, match="Optimizer has to be defined"):
        tr.learning_rate
    with pytest.raises(UserWarning, match="Optimizer has not been initialized"):
        tr.optimizer
    with pytest.raises(UserWarning, match="before its learning rate is mutated"):
        tr.set_learning_rate(1.0)


def test_lazy_kvstore_and_reset_on_load(tmp_path):
    ctxs = [mx.cpu(0), mx.cpu(1)]
    net, params = S.build(mx, ctxs)
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    assert not tr._kv_initialized and tr._kvstore is None
    S.forward_backward(mx, net, ctxs, 0)
    tr.step(S.BATCH)
    assert tr._kv_initialized and tr._update_on_kvstore is True
    f = str(tmp_path / "p.params")
    net.save_parameters(f)
    net.load_parameters(f, ctx=ctxs)
    assert not tr._kv_initialized
    params[0].set_data(nd.ones((5, 4)))
    S.forward_backward(mx, net, ctxs, 1)
    tr.step(S.BATCH)
    assert tr._kv_initialized
    # the store was re-seeded with the loaded weights (ones), not the old ones
    w = params[0].data(ctxs[1]).asnumpy()
    assert np.abs(w - 1).max() < 0.2


def test_amp_loss_scaler_skips_step_on_overflow():
    net, params = S.build(mx, [mx.cpu(0)])
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})

    class Scaler:
        overflow = True
        seen = None

        def has_overflow(self, ps):
            Scaler.seen = ps
            return Scaler.overflow

    tr._amp_loss_scaler = Scaler()
    before = S.snapshot(params)
    S.forward_backward(mx, net, [mx.cpu(0)], 0)
    tr.step(S.BATCH)
    assert Scaler.seen is tr._params
    assert_weights(S.snapshot(params), before, rtol=0, atol=0)
    Scaler.overflow = False
    tr.step(S.BATCH)
    assert any((a != b).any() for a, b in zip(S.snapshot(params), before))


def test_second_trainer_on_sparse_parameter():
    p = gluon.Parameter("emb_weight", shape=(4, 2), stype="row_sparse")
    p.initialize(ctx=mx.cpu(0))
    first = gluon.Trainer([p], "sgd")  # noqa: F841 - the Parameter holds it weakly
    with pytest.raises(RuntimeError, match="More than one trainers for a row_sparse"):
        gluon.Trainer([p], "sgd")


def test_distributed_batch_size_warning():
    # The check itself, as the seed defines it, with the state a dist store leaves behind.
    net, params = S.build(mx, [mx.cpu(0)])
    tr = gluon.Trainer(params, "sgd")
    tr._kv_initialized, tr._distributed, tr._update_on_kvstore = True, True, True
    tr._optimizer.rescale_grad = 1 / 8
    tr._check_and_rescale_grad(1 / 8)
    with pytest.raises(UserWarning, match="Possible change in the `batch_size`"):
        tr._check_and_rescale_grad(1 / 4)


def test_dist_kvstore_one_worker_updates_on_the_store():
    # Without a launcher, 'dist_sync' is a job of one worker: the store runs the optimizer
    # (MXNet's default update_on_kvstore) and a step gives the local store's numbers.
    net, params = S.build(mx, [mx.cpu(0)])
    ref_net, ref_params = S.build(mx, [mx.cpu(0)])
    tr = gluon.Trainer(params, "sgd", {"learning_rate": 0.5, "momentum": 0.9},
                       kvstore="dist_sync")
    ref = gluon.Trainer(ref_params, "sgd", {"learning_rate": 0.5, "momentum": 0.9},
                        kvstore=mx.kv.create("local"), update_on_kvstore=True)
    for t, n in ((tr, net), (ref, ref_net)):
        for step in range(2):
            S.forward_backward(mx, n, [mx.cpu(0)], step)
            t.step(S.BATCH)
    assert tr._kvstore.type == "dist_sync" and tr._update_on_kvstore is True
    for a, b in zip(params, ref_params):
        np.testing.assert_array_equal(a.data().asnumpy(), b.data().asnumpy())


def test_save_states_with_update_on_kvstore_uses_store(tmp_path):
    net, params, tr, ctxs = _trainer(2, True)
    assert tr._update_on_kvstore is True
    f = str(tmp_path / "s")
    tr.save_states(f)
    tr.load_states(f)
    assert tr.optimizer is tr._kvstore._updater.optimizer


def test_gradients_stay_valid_after_bucketing():
    ctxs = [mx.cpu(0), mx.cpu(1)]
    net, params = S.build(mx, ctxs)
    held = params[0].grad(ctxs[1])
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1},
                       update_on_kvstore=False)
    S.forward_backward(mx, net, ctxs, 0)
    raw = held.asnumpy().copy()
    tr.allreduce_grads()
    summed = held.asnumpy().copy()
    assert not np.array_equal(raw, summed)
    assert held is params[0].grad(ctxs[1])
    np.testing.assert_array_equal(summed, params[0].grad(ctxs[0]).asnumpy())
    tr.update(S.BATCH)
    S.forward_backward(mx, net, ctxs, 1)
    # backward wrote into the same (re-homed) buffer
    assert not np.array_equal(held.asnumpy(), summed)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tr.step(S.BATCH)


def test_user_stores_registered_by_name():
    want = fixture(META["user_stores"])
    try:
        got = S.user_stores(mx)
    finally:
        for name in ("sumstore", "plainstore"):
            mx.kv.KVStoreBase.kv_registry.pop(name, None)
    for k in ("sum_None", "sum_False", "plain"):
        assert got[k]["uok"] == want[k]["uok"] and got[k]["kvtype"] == want[k]["kvtype"], k
        assert_weights(got[k]["weights"], want[k]["weights"])
    assert got["plain_uok_true"]["error"] == "ValueError"
    assert "Please set update_on_kvstore=False when training with" in \
        got["plain_uok_true"]["message"]


def test_deferred_parameters_join_the_store_later():
    ctxs = [mx.cpu(0), mx.cpu(1)]
    a = gluon.nn.Dense(3, in_units=2)
    b = gluon.nn.Dense(3)
    a.initialize(mx.init.One(), ctx=ctxs)
    b.initialize(mx.init.One(), ctx=ctxs)
    params = [a.weight, a.bias, b.weight, b.bias]
    tr = gluon.Trainer(params, "sgd", {"learning_rate": 0.1})
    # A store set up while b is still deferred (MXNet reaches this through sparse weights):
    tr._kvstore = mx.kv.create("device")
    tr._kv_initialized = True
    tr._update_on_kvstore = False
    tr._init_params()
    # only b's weight waits for its shape; b's bias has one and joins at once
    assert tr._params_to_init == [b.weight]
    assert set(tr._kvstore._store) == {0, 1, 3}
    with autograd.record():
        ls = [b(a(nd.ones((1, 2), ctx=c))).sum() for c in ctxs]
    autograd.backward(ls)
    tr.step(2)
    assert tr._params_to_init == [] and set(tr._kvstore._store) == {0, 1, 2, 3}


def test_local_store_with_big_parameters_updates_on_devices():
    from neogluon.model import _create_kvstore

    class Shape:
        def __init__(self, shape):
            self.shape = shape

    kv, uok = _create_kvstore("local", 2, {"a": Shape((4096, 4097)), "b": Shape((3,))})
    assert kv.type == "local" and uok is False
    kv, uok = _create_kvstore("local", 2, {"a": Shape((4096, 4096))})
    assert uok is True
    kv, uok = _create_kvstore("device", 2, {"a": Shape((4096, 4097))})
    assert uok is True
    assert _create_kvstore(None, 2, {}) == (None, False)
    assert _create_kvstore("device", 1, {}) == (None, False)
    with pytest.raises(TypeError, match="kvstore must be KVStore, str or None"):
        _create_kvstore(3, 2, {})


def test_amp_init_trainer_skips_overflowing_step():
    from neogluon import amp
    net, params = S.build(mx, [mx.cpu(0)])
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    amp.init_trainer(tr)
    scale = tr._amp_loss_scaler.loss_scale
    S.forward_backward(mx, net, [mx.cpu(0)], 0)
    params[0].grad()[0, 0] = float("inf")
    before = S.snapshot(params)
    tr.step(S.BATCH)
    assert_weights(S.snapshot(params), before, rtol=0, atol=0)
    # MXNet 1.9.1's schedule: the halved scale is used from the next step on
    assert tr._amp_loss_scaler.loss_scale == scale
    assert tr._amp_loss_scaler._next_loss_scale == scale / 2


def test_sparse_gradient_and_weight_rules():
    want = fixture(META["sparse_rules"])
    got = S.sparse_rules(mx)
    for k in ("grad_device_None", "grad_local_None", "grad_device_True"):
        assert got[k]["uok"] == want[k]["uok"] and got[k]["kvtype"] == want[k]["kvtype"], k
        assert_weights(got[k]["weights"], want[k]["weights"])
    for k in ("grad_custom_store", "weight_uok_false", "weight_custom_store"):
        assert_error(got[k], want[k])
    assert got["weight_store"] == want["weight_store"]
