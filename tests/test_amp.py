"""mx.amp against MXNet 1.9.1 with bfloat16 on CPU (tools/gen_amp_fixtures.py): which dtype
each operator and layer computes in, the loss-scale sequence through overflows, and a few
training steps. The scenarios are in tests/amp_cases.py.

``amp.init`` rewrites the nd operators for the whole process, as in MXNet; the ``amp_on``
fixture undoes it after each test so the rest of the suite runs without AMP.
"""
import json
import os

import numpy as np
import pytest
import torch

import neogluon as mx
from neogluon import amp, autograd, gluon, nd
from neogluon.base import MXNetError, dtype_name

import amp_cases as S
from fixture_record import resolve

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "amp")
with open(os.path.join(FIX, "amp.json")) as _f:
    META = json.load(_f)
ARRAYS = dict(np.load(os.path.join(FIX, "amp.npz")))


def fixture(x):
    return resolve(x, ARRAYS)


def dn(x):
    return dtype_name(x._t.dtype)


@pytest.fixture
def amp_on():
    amp._uninstall()
    amp.init(target_dtype="bfloat16")
    try:
        yield amp
    finally:
        amp._uninstall()


# ------------------------------------------------------------------ lists
def test_lists_are_mxnets():
    assert amp.list_lp16_ops("bfloat16") == ["Convolution", "FullyConnected"]
    assert amp.list_lp16_ops("float16") == ["Convolution", "Deconvolution", "FullyConnected",
                                            "RNN"]
    assert ("Activation", "act_type", ["softrelu"]) in amp.list_conditional_fp32_ops("float16")
    assert "RNN" in amp.list_fp32_ops("bfloat16") and "exp" in amp.list_fp32_ops("float16")
    assert "broadcast_add" in amp.list_widest_type_cast("bfloat16")
    assert "relu" in amp.list_lp16_fp32_ops("bfloat16")
    assert amp.list_lp16_use_fp32_params("float16") is None
    assert amp.list_lp16_use_fp32_params("bfloat16")["BatchNorm"][1] == "gamma"
    with pytest.raises(AssertionError, match="float16 or bfloat16"):
        amp.list_lp16_ops("float64")


# ------------------------------------------------------------------ casting decisions
def test_nothing_is_wrapped_without_init():
    amp._uninstall()
    assert not hasattr(nd.FullyConnected, "_amp_original")
    assert not hasattr(nd.NDArray.__add__, "_amp_original")
    got = S.op_dtypes(mx, amp, dn, "bfloat16")
    assert got["FullyConnected(f)"] == "float32" and got["exp(b)"] == "bfloat16"


def test_op_dtypes_match_mxnet(amp_on):
    want = META["ops"]
    got = S.op_dtypes(mx, amp, dn, "bfloat16")
    for k, v in want.items():
        if v.startswith("error"):
            continue  # MXNet 1.9.1 has no kernel for that dtype mix
        assert got[k] == v, k
    assert nd.FullyConnected._amp_original is not None


@pytest.mark.parametrize("hybridize", [False, True])
def test_cnn_layer_dtypes_match_mxnet(amp_on, hybridize):
    want = META[f"cnn_layers.{hybridize}"]
    got = S.cnn_layer_dtypes(mx, amp, dn, hybridize)
    assert got == want


@pytest.mark.parametrize("hybridize", [False, True])
def test_lstm_dtypes_match_mxnet(amp_on, hybridize):
    assert S.lstm_dtypes(mx, amp, dn, hybridize) == META[f"lstm.{hybridize}"]


def test_symbol_graph_runs_with_amp_decisions(amp_on):
    data = mx.sym.var("data")
    w = mx.sym.var("w")
    fc = mx.sym.FullyConnected(data, w, num_hidden=3, no_bias=True, name="fc")
    out = mx.sym.exp(fc, name="e")
    grp = mx.sym.Group([fc, out])
    x = nd.ones((2, 4))
    res = grp.eval(data=x, w=nd.ones((3, 4)))
    assert [dn(r) for r in res] == ["bfloat16", "float32"]


def test_user_lists_override(amp_on):
    amp._uninstall()
    amp.init("bfloat16", target_precision_ops=["FullyConnected", "exp"], fp32_ops=["relu"],
             conditional_fp32_ops=[("Activation", "act_type", ["tanh"])])
    b = nd.ones((2, 3)).astype("bfloat16")
    assert dn(nd.exp(nd.ones((2, 3)))) == "bfloat16"
    assert dn(nd.relu(b)) == "float32"
    assert dn(nd.Activation(b, act_type="tanh")) == "float32"
    assert dn(nd.Activation(b, act_type="softrelu")) == "bfloat16"
    assert dn(nd.Convolution(nd.ones((1, 1, 3, 3)), nd.ones((1, 1, 1, 1)), kernel=(1, 1),
                             num_filter=1, no_bias=True)) == "float32"
    amp._uninstall()
    with pytest.raises(MXNetError, match="not_an_op"):
        amp.init("bfloat16", fp32_ops=["not_an_op"])
    assert not amp._state.initialized


def test_init_twice_keeps_the_first(amp_on):
    amp.init("float16")
    assert amp._state.target is torch.bfloat16
    assert not hasattr(nd.FullyConnected._amp_original, "_amp_original")


def test_gradients_flow_to_float32_parameters(amp_on):
    net = gluon.nn.Dense(3, in_units=4)
    net.initialize()
    x = nd.ones((2, 4))
    with autograd.record():
        y = net(x)
        loss = (y.astype("float32") ** 2).sum()
    loss.backward()
    assert dn(y) == "bfloat16"
    assert dn(net.weight.grad()) == "float32" and float(net.weight.grad().abs().sum()) > 0


# ------------------------------------------------------------------ loss scaling
def _steps(res):
    return [(s["used"], s["after"], s["moved"], s["finite"]) for s in res["steps"]]


@pytest.mark.parametrize("name,nctx,uok,hybridize", [
    ("one_ctx", 1, None, False), ("one_ctx_hyb", 1, None, True),
    ("two_ctx_uok_false", 2, False, False)])
def test_loss_scale_sequence_matches_mxnet(amp_on, name, nctx, uok, hybridize):
    ctxs = [mx.cpu(i) for i in range(nctx)]
    got = S.loss_scale_sequence(mx, amp, ctxs, uok, hybridize, {1, 2, 7})
    want = fixture(META[f"scale.{name}"])
    assert _steps(got) == _steps(want)
    for k, v in want["weights"].items():
        # bfloat16 Dense layers: the same kernels' rounding, a few bf16 ulps at most
        np.testing.assert_allclose(got["weights"][k], v, rtol=1e-2, atol=1e-3, err_msg=k)


def test_loss_scale_skips_update_on_kvstore(amp_on):
    # MXNet 1.9.1 updates on the store before it looks for an overflow, so its weights go
    # inf/nan (recorded in the fixture); neogluon looks first and skips, as without the store.
    bad = fixture(META["scale.two_ctx_uok_true"])
    assert not all(s["finite"] for s in bad["steps"])
    ctxs = [mx.cpu(0), mx.cpu(1)]
    got = S.loss_scale_sequence(mx, amp, ctxs, True, True, {1, 2, 7})
    want = fixture(META["scale.two_ctx_uok_false"])
    assert _steps(got) == _steps(want)
    for k, v in want["weights"].items():
        np.testing.assert_allclose(got["weights"][k], v, rtol=1e-2, atol=1e-3, err_msg=k)


def test_scaler_schedule_caps_and_grows():
    s = amp.LossScaler()
    s._scale_seq_len = 2
    s._loss_scale = s._next_loss_scale = 2.0 ** 23
    seen = []
    for _ in range(6):
        s.has_overflow([])
        seen.append(s.loss_scale)
    assert seen == [2.0 ** 23, 2.0 ** 23, 2.0 ** 24, 2.0 ** 24, 2.0 ** 24, 2.0 ** 24]


@pytest.mark.parametrize("hybridize", [False, True])
def test_training_steps_match_mxnet(amp_on, hybridize):
    got = S.train_steps(mx, amp, dn, hybridize)
    want = fixture(META[f"train.{hybridize}"])
    assert got["dtypes"] == want["dtypes"]  # parameters stay float32 under AMP
    # The first loss is computed before any update: bf16 convolution and dense kernels
    # round the same way. Later ones follow weights that differ by bf16 gradient rounding.
    np.testing.assert_allclose(got["losses"][0], want["losses"][0], rtol=1e-5)
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=5e-3)
    # Tolerance: MXNet's own imperative and hybridized runs differ by up to 5.3e-3 here
    # (bfloat16 keeps 8 significant bits: 2**-8 = 0.4% per rounding).
    for k, v in want["weights"].items():
        np.testing.assert_allclose(got["weights"][k], v, rtol=0, atol=2e-2, err_msg=k)


def test_scale_loss_and_unscale(amp_on):
    net = gluon.nn.Dense(2, in_units=3)
    net.initialize()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    with pytest.raises(MXNetError, match="init_trainer"):
        with amp.scale_loss(nd.ones((1,)), tr):
            pass
    amp.init_trainer(tr)
    x = nd.ones((2, 3))
    with autograd.record():
        loss = net(x).astype("float32").sum()
        with amp.scale_loss(loss, tr) as scaled:
            assert float(scaled.asscalar()) == pytest.approx(float(loss.asscalar()) * 2 ** 16,
                                                             rel=1e-6)
            scaled.backward()
    assert tr._scale == 1.0 / 2 ** 16
    g = net.bias.grad().asnumpy().copy()
    amp.unscale(tr)
    np.testing.assert_allclose(net.bias.grad().asnumpy(), g / 2 ** 16)
    assert tr._scale == 1.0
    with pytest.raises(TypeError, match="only compatible with Gluon Trainer"):
        amp.init_trainer(mx.optimizer.SGD())
    with pytest.raises(TypeError, match="Gluon Trainer"):
        amp.unscale(3)


# ------------------------------------------------------------------ conversion
def _norm_internal(name):
    # MXNet 1.9.1 names the cast of a Flatten output '<node>_0_amp_cast_...' and of others
    # '<node>_output_amp_cast_...'; neogluon always uses the latter.
    return name.replace("_0_amp_cast_", "_output_amp_cast_")


@pytest.mark.parametrize("name,cop,excluded", [
    ("plain", False, None), ("optional", True, None), ("excluded", True, ["cnn_dense1_fwd"])])
def test_convert_hybrid_block_matches_mxnet(name, cop, excluded):
    amp._uninstall()
    with open(os.path.join(FIX, "convert.json")) as f:
        meta = json.load(f)
    arrays = dict(np.load(os.path.join(FIX, "convert.npz")))
    want = meta[f"convert.{name}"]
    got = S.convert_block(mx, amp, dn, cop, excluded)
    assert got["out_dtype"] == want["out_dtype"]
    assert got["params"] == want["params"]
    assert [_norm_internal(n) for n in got["internals"]] == \
        [_norm_internal(n) for n in want["internals"]]
    np.testing.assert_allclose(got["ref"], arrays[want["ref"]["__array__"]], rtol=1e-5,
                               atol=1e-6)
    # bfloat16 convolution/dense: 8 significant bits, |out| <= 1.5 here
    np.testing.assert_allclose(got["out"], arrays[want["out"]["__array__"]], rtol=0,
                               atol=2e-2)
    assert np.abs(got["out"] - got["ref"]).max() > 0  # it really ran in bfloat16


def test_convert_errors_and_model():
    amp._uninstall()
    net = S.cnn(mx)
    net.initialize()
    with pytest.raises(RuntimeError, match="hybridize"):
        amp.convert_hybrid_block(net, "bfloat16")
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    sym = mx.sym.exp(fc, name="e")
    args = {"fc_weight": nd.ones((3, 4)), "fc_bias": nd.zeros((3,))}
    with pytest.raises(AssertionError, match="Common ops"):
        amp.convert_model(sym, args, {}, "bfloat16", target_dtype_ops=["exp"],
                          fp32_ops=["exp"])
    with pytest.raises(AssertionError, match="not_an_op"):
        amp.convert_model(sym, args, {}, "bfloat16", fp32_ops=["not_an_op"])
    csym, cargs, _ = amp.convert_model(sym, dict(args), {}, "bfloat16",
                                       cast_optional_params=True)
    internals = csym.get_internals().list_outputs()
    assert "data_amp_cast_bfloat16_output" in internals
    assert "fc_weight_amp_cast_bfloat16_output" not in internals  # stored in bfloat16
    assert dn(cargs["fc_weight"]) == "bfloat16" and dn(cargs["fc_bias"]) == "bfloat16"
    out = csym.eval(data=nd.ones((2, 4)), **cargs)[0]
    assert dn(out) == "float32"
    np.testing.assert_allclose(out.asnumpy(), np.exp(4.0) * np.ones((2, 3)), rtol=1e-2)


def test_overflow_check_sees_nan_and_both_infinities():
    p = gluon.Parameter("w", shape=(3, 4))
    p.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    for bad in (float("nan"), float("inf"), -float("inf")):
        s = amp.LossScaler()
        for g in p.list_grad():
            g[:] = 0
        p.list_grad()[1][2, 3] = bad  # on the second context only
        assert s.has_overflow([p]) is True
        assert s._next_loss_scale == 2.0 ** 15
    for g in p.list_grad():
        g[:] = 1e30  # large but finite: no overflow (a sum would overflow here)
    assert amp.LossScaler().has_overflow([p]) is False


def test_convert_symbol_widest_and_conditional():
    amp._uninstall()
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=4, name="fc")
    other = mx.sym.exp(data, name="e")  # float32 (fp32 list)
    added = mx.sym.broadcast_add(fc, other, name="add")
    soft = mx.sym.Activation(added, act_type="softrelu", name="act")
    relu = mx.sym.Activation(fc, act_type="relu", name="act2")
    grp = mx.sym.Group([soft, relu])
    conv = amp.convert_symbol(grp, "bfloat16")
    names = conv.get_internals().list_outputs()
    # bf16 + float32 on a widest-type op: the bf16 input goes up to float32 first
    assert "fc_output_amp_cast_float32_output" in names
    args = {"data": nd.ones((2, 4)), "fc_weight": nd.ones((4, 4)) * 0.1,
            "fc_bias": nd.zeros((4,))}
    outs = conv.eval(**args)
    assert [dn(o) for o in outs] == ["float32", "float32"]  # relu's bf16 output cast back
    ref = grp.eval(**args)
    for o, r in zip(outs, ref):
        np.testing.assert_allclose(o.asnumpy(), r.asnumpy(), rtol=1e-2)


def test_float16_target_on_cpu():
    # MXNet's rule on the CPU: only float32 and bfloat16 inputs are cast, so a float16
    # result feeds float32-list operators unchanged (on a GPU they would go to float32).
    amp._uninstall()
    amp.init("float16")
    try:
        net = gluon.nn.Dense(3, in_units=4)
        net.initialize()
        x = nd.ones((2, 4))
        with autograd.record():
            y = net(x)
            z = nd.exp(y)
        z.backward()
        assert dn(y) == "float16" and dn(z) == "float16"
        with open(os.path.join(FIX, "fp16_cpu.json")) as f:
            want = json.load(f)
        assert S.fp16_cpu_dtypes(mx, amp, dn) == want
        assert want["f32+dense"] == "float32"  # widest: float16 goes up
    finally:
        amp._uninstall()


def test_float16_model_with_multi_precision_keeps_float32_master():
    amp._uninstall()
    net = gluon.nn.Dense(2, in_units=3)
    net.initialize(mx.init.Constant(1.0))
    net.cast("float16")
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 1e-4,
                                                     "multi_precision": True})
    amp.init_trainer(tr)
    x = nd.ones((1, 3), dtype="float16")
    used = []
    for _ in range(5):
        used.append(tr._amp_loss_scaler.loss_scale)
        with autograd.record():
            loss = net(x).sum()
            with amp.scale_loss(loss, tr) as scaled:
                scaled.backward()
        tr.step(1)
    # A float16 gradient of 2**16 is inf: the first two steps overflow and are skipped (the
    # halved scale only applies from the step after the one that found the overflow).
    assert used == [2.0 ** 16, 2.0 ** 16, 2.0 ** 15, 2.0 ** 14, 2.0 ** 14]
    w = net.weight.data()
    assert dn(w) == "float16"
    # SGD's multi-precision state is (momentum, float32 master copy), as in MXNet
    masters = [s[1] for s in tr._updaters[0].states.values() if s[1].shape == w.shape]
    assert len(masters) == 1
    master = masters[0]
    assert dn(master) == "float32"
    # three steps of 1e-4: float16 cannot hold 1 - 3e-4 (its spacing near 1 is 9.8e-4)...
    np.testing.assert_allclose(master.asnumpy(), 1 - 3e-4, rtol=1e-6)
    # ... and the float16 weight is the master rounded
    np.testing.assert_array_equal(w.asnumpy(), master.asnumpy().astype(np.float16))


def test_symbol_made_under_amp_has_mxnets_casts(amp_on):
    net, internals, x = S.cnn_symbol_internals(mx)
    want = META["symbol_internals"]
    assert internals.list_outputs() == [n for n, _ in want]
    args = {"data": x}
    args.update({k: p.data() for k, p in net.collect_params().items()})
    outs = internals.eval(**args)
    assert [[n, dn(o)] for n, o in zip(internals.list_outputs(), outs)] == want
    amp._uninstall()
    _, internals, _ = S.cnn_symbol_internals(mx)
    assert not any("amp_cast" in n for n in internals.list_outputs())


def test_lists_modules_as_mxnet_names_them():
    from neogluon.amp.lists import symbol_bf16, symbol_fp16
    assert symbol_fp16.FP16_FUNCS == amp.list_lp16_ops("float16")
    assert symbol_bf16.BF16_FP32_FUNCS == amp.list_lp16_fp32_ops("bfloat16")
    assert symbol_bf16.WIDEST_TYPE_CASTS == amp.list_widest_type_cast("bfloat16")
    assert symbol_fp16.CONDITIONAL_FP32_FUNCS == amp.list_conditional_fp32_ops("float16")
    assert not hasattr(symbol_fp16, "FP16_USE_FP32_PARAMS")
    assert symbol_bf16.BF16_USE_FP32_PARAMS == amp.list_lp16_use_fp32_params("bfloat16")
