"""mx.mod.Module against MXNet 1.9.1 (fixtures from tools/gen_module_fixtures.py; the
scenarios are tests/module_cases.py, run unchanged by both libraries)."""
import logging
import os
import pickle
import shutil

import numpy as np
import pytest

import neogluon as mx
from neogluon.base import MXNetError

import module_cases as cases


def _compare(res, ref, rtol=1e-4, atol=1e-5):
    assert set(res) == set(ref)
    for k in ref:
        np.testing.assert_allclose(res[k], ref[k], rtol=rtol, atol=atol, err_msg=k)


@pytest.mark.parametrize("name", sorted(cases.FIT_CASES))
def test_fit_matches_mxnet(fixture_path, name):
    ref = dict(np.load(fixture_path("module", f"fit_{name}.npz")))
    _compare(cases.run_fit(mx, name), ref)


def _copy_ckpt(src, dst):
    for suffix in ("-symbol.json", "-0001.params", "-0001.states"):
        shutil.copy(src + suffix, dst + suffix)


def test_resume_from_mxnet_checkpoint_with_optimizer_states(fixture_path, tmp_path):
    """MXNet's Module.save_checkpoint files (symbol, params, pickled Adam states), resumed
    by neogluon: the parameters after one epoch equal MXNet's own resume."""
    _copy_ckpt(fixture_path("module", "mxnet_ckpt"), str(tmp_path / "ckpt"))
    res = cases.continue_checkpoint(mx, str(tmp_path / "ckpt"), 1)
    _compare(res, dict(np.load(fixture_path("module", "mxnet_ckpt_resumed.npz"))))


def test_mxnet_resumes_neogluon_checkpoint(fixture_path, tmp_path):
    """neogluon's checkpoint of the same run: MXNet 1.9.1 loaded it and resumed (fixture);
    neogluon resuming it gives MXNet's numbers, and writing it again gives the same files'
    contents (MXNet's formats: the .states file is the pickle MXNet writes, naming only
    mxnet.ndarray.ndarray.NDArray)."""
    committed = fixture_path("module", "neogluon_ckpt")
    _copy_ckpt(committed, str(tmp_path / "ckpt"))
    res = cases.continue_checkpoint(mx, str(tmp_path / "ckpt"), 1)
    _compare(res, dict(np.load(fixture_path("module", "neogluon_ckpt_mxnet_resumed.npz"))))
    prefix = str(tmp_path / "again")
    cases.make_checkpoint(mx, prefix)
    blob = open(prefix + "-0001.states", "rb").read()
    assert blob[:1] == b"\x80" and b"mxnet.ndarray.ndarray\nNDArray" in blob
    assert b"neogluon" not in blob
    assert open(prefix + "-symbol.json").read() == open(committed + "-symbol.json").read()
    new, old = mx.nd.load(prefix + "-0001.params"), mx.nd.load(committed + "-0001.params")
    assert set(new) == set(old)
    for k in old:
        np.testing.assert_allclose(new[k].asnumpy(), old[k].asnumpy(), rtol=1e-6, atol=1e-7)


def _mlp_module(**kw):
    sym = cases.network(mx, "mlp")
    mod = mx.mod.Module(sym, **kw)
    mod.bind(data_shapes=[("data", (8, 10))], label_shapes=[("softmax_label", (8,))])
    return mod


def test_forward_backward_update_and_outputs():
    mod = _mlp_module(context=[mx.cpu(0), mx.cpu(1)], work_load_list=[1, 3])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    x, y = cases.dataset("mlp", n=8)
    batch = mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)])
    assert [e.arg_dict["data"].shape[0] for e in mod._exec_group.execs] == [2, 6]
    before = mod.get_params()[0]["fc1_weight"].asnumpy().copy()
    mod.forward_backward(batch)
    out = mod.get_outputs()[0]
    assert out.shape == (8, 4)
    np.testing.assert_allclose(out.asnumpy().sum(axis=1), np.ones(8), rtol=1e-5)
    mod.update()
    after = mod.get_params()[0]["fc1_weight"].asnumpy()
    assert not np.allclose(before, after)
    # both contexts' copies agree after the update
    w = [a.asnumpy() for a in mod._exec_group.param_arrays[0]]
    np.testing.assert_allclose(w[0], w[1], rtol=1e-6)
    assert mod.output_shapes == [("softmax_output", (8, 4))]


def test_forward_reshapes_for_other_batch_sizes_and_predict():
    mod = _mlp_module()
    mod.init_params()
    x, y = cases.dataset("mlp", n=20)
    it = mx.io.NDArrayIter(x, y, batch_size=8, last_batch_handle="pad")
    pred = mod.predict(it)
    assert pred.shape == (20, 4)
    # (without a label MXNet refuses this reshape: the label's inferred shape changes)
    mod.forward(mx.io.DataBatch([mx.nd.array(x[:3])], [mx.nd.array(y[:3])]), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), pred.asnumpy()[:3], rtol=1e-5)
    outs = list(mod.iter_predict(it))
    assert [o[0][0].shape[0] for o in outs] == [8, 8, 4]


def test_inputs_need_grad_and_fixed_params():
    sym = cases.network(mx, "mlp")
    mod = mx.mod.Module(sym, fixed_param_names=["fc1_weight"])
    mod.bind([("data", (4, 10))], [("softmax_label", (4,))], inputs_need_grad=True)
    mod.init_params()
    mod.init_optimizer(optimizer_params={"learning_rate": 1.0})
    x, y = cases.dataset("mlp", n=4)
    w0 = mod.get_params()[0]["fc1_weight"].asnumpy().copy()
    mod.forward_backward(mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)]))
    g = mod.get_input_grads()[0]
    assert g.shape == (4, 10) and np.abs(g.asnumpy()).sum() > 0
    mod.update()
    np.testing.assert_array_equal(mod.get_params()[0]["fc1_weight"].asnumpy(), w0)


def test_set_params_missing_and_extra():
    mod = _mlp_module()
    mod.init_params()
    args, _ = mod.get_params()
    good = {k: v.copy() for k, v in args.items()}
    missing = dict(good)
    missing.pop("fc2_bias")
    with pytest.raises(RuntimeError, match="fc2_bias is not presented"):
        mod.set_params(missing, {}, allow_missing=False)
    mod.set_params(missing, {}, allow_missing=True)
    extra = dict(good, nope=mx.nd.ones((1,)))
    with pytest.raises(ValueError, match="nope"):
        mod.set_params(extra, {}, allow_missing=True, allow_extra=False)
    mod.set_params(extra, {}, allow_missing=True, allow_extra=True)
    bad = dict(good, fc2_bias=mx.nd.ones((5,)))
    with pytest.raises(ValueError, match=r"fc2_bias.*\(5,\).*\(4,\)"):
        mod.set_params(bad, {})


def test_clear_errors():
    sym = cases.network(mx, "mlp")
    with pytest.raises(ValueError, match="input with name 'dat' is not found"):
        mx.mod.Module(sym, data_names=["dat"])
    mod = mx.mod.Module(sym)
    with pytest.raises(AssertionError, match="bind"):
        mod.init_params()
    with pytest.raises(MXNetError, match="bind the module"):
        mod.forward(mx.io.DataBatch([mx.nd.ones((2, 10))]))
    with pytest.raises(ValueError, match="data_shapes don't match names"):
        mod.bind(data_shapes=[("x", (2, 10))])
    with pytest.raises(TypeError, match="shape of 'data' must be a tuple"):
        mod.bind(data_shapes=[("data", mx.nd.ones((2, 10)))])
    assert not mod.binded
    with pytest.raises(MXNetError, match=r"fc1_weight.*\(16, 7\).*\(16, 10\)"):
        mx.mod.Module(sym).bind(data_shapes=[("data", (2, 10))],
                                label_shapes=[("softmax_label", (2,))]) or \
            sym.simple_bind(mx.cpu(), data=(2, 10), fc1_weight=(16, 7))
    it = mx.io.NDArrayIter(np.ones((4, 10), np.float32), np.zeros(4, np.float32),
                           batch_size=2, data_name="images")
    with pytest.raises(ValueError, match="images"):
        mx.mod.Module(sym).fit(it, num_epoch=1)
    with pytest.raises(ValueError, match="num_epoch"):
        mx.mod.Module(sym).fit(it)


def test_fit_logs_and_callbacks(caplog):
    sym = cases.network(mx, "mlp")
    x, y = cases.dataset("mlp", n=32)
    it = mx.io.NDArrayIter(x, y, batch_size=8)
    seen = {"batch": 0, "epoch": []}

    def on_batch(p):
        seen["batch"] += 1
        assert p.eval_metric.get()[0] == "accuracy"

    def on_epoch(epoch, symbol, arg, aux):
        seen["epoch"].append(epoch)
        assert symbol is sym and "fc1_weight" in arg

    mod = mx.mod.Module(sym, logger=logging.getLogger("modtest"))
    with caplog.at_level(logging.INFO, logger="modtest"):
        mod.fit(it, eval_data=it, num_epoch=2, batch_end_callback=on_batch,
                epoch_end_callback=on_epoch, optimizer_params={"learning_rate": 0.5})
    assert seen == {"batch": 8, "epoch": [0, 1]}
    text = caplog.text
    assert "Epoch[0] Train-accuracy=" in text and "Epoch[1] Time cost=" in text
    assert "Epoch[1] Validation-accuracy=" in text


def test_monitor_reports_forward_and_backward():
    x = mx.sym.FullyConnected(mx.sym.var("data"), name="fc_0", num_hidden=2)
    x = mx.sym.Activation(x, name="act_0", act_type="sigmoid")
    x = mx.sym.LinearRegressionOutput(x, name="softmax")
    mod = mx.mod.Module(x)
    mod.bind([("data", (1, 2))], [("softmax_label", (1, 2))])
    mon = mx.mon.Monitor(1, pattern=".*")
    mod.install_monitor(mon)
    mod.init_params()
    mon.tic()
    mod.forward_backward(mx.io.DataBatch([mx.nd.ones((1, 2))], [mx.nd.ones((1, 2))]))
    names = [k for _, k, _ in mon.toc()]
    assert "fc_0_output" in names and "act_0_backward_output" in names
    assert {"fc_0_backward_output0", "fc_0_backward_output1", "fc_0_backward_output2",
            "softmax_backward_output0", "softmax_backward_output1"} <= set(names)


def test_states_pickle_written_for_mxnet_is_loaded_by_restricted_reader(tmp_path):
    mod = _mlp_module()
    mod.init_params()
    mod.init_optimizer(optimizer="adam")
    x, y = cases.dataset("mlp", n=8)
    mod.forward_backward(mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)]))
    mod.update()
    f = str(tmp_path / "a.states")
    mod.save_optimizer_states(f)
    before = {k: tuple(s.asnumpy() for s in v) for k, v in mod._updater.states.items()}
    mod2 = _mlp_module()
    mod2.init_params()
    mod2.init_optimizer(optimizer="adam")
    mod2.load_optimizer_states(f)
    for k, v in mod2._updater.states.items():
        for a, b in zip(v, before[k]):
            np.testing.assert_array_equal(a.asnumpy(), b)
    # a states file naming any other global is refused, nothing runs
    evil = pickle.dumps({0: os.getcwd})
    open(f, "wb").write(evil)
    with pytest.raises(MXNetError, match="refusing"):
        mod2.load_optimizer_states(f)
