"""mx.contrib.svrg_optimization: SVRGModule and _SVRGOptimizer against MXNet 1.9.1's numbers
(tests/fixtures/svrg, from tools/gen_svrg_fixtures.py; the scenarios are
tests/svrg_cases.py, run unchanged by both libraries), the MXNet bugs neogluon does not
keep, and the errors on bad input."""
from __future__ import annotations

import logging
import os

import numpy as np
import pytest

import neogluon as mx
from neogluon.base import MXNetError
from neogluon.contrib.svrg_optimization.svrg_module import SVRGModule
from neogluon.contrib.svrg_optimization.svrg_optimizer import (_AssignmentOptimizer,
                                                              _SVRGOptimizer)

import svrg_cases as cases

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "svrg", "svrg_mxnet.npz")


@pytest.fixture(scope="module")
def ref():
    with np.load(FIXTURE) as f:
        return {k: f[k] for k in f.files}


@pytest.fixture(autouse=True)
def _quiet_logs(caplog):
    caplog.set_level(logging.ERROR)


def _case_ref(ref, name):
    prefix = name + "/"
    return {k[len(prefix):]: v for k, v in ref.items() if k.startswith(prefix)}


def _assert_close_dicts(got, want, rtol=1e-5, atol=1e-6):
    assert sorted(got) == sorted(want)
    for key in want:
        np.testing.assert_allclose(np.asarray(got[key], dtype=np.float64), want[key],
                                   rtol=rtol, atol=atol, err_msg=key)


# ------------------------------------------------------------------ MXNet's numbers
@pytest.mark.parametrize("name", sorted(cases.CASES))
def test_matches_mxnet(ref, name):
    got = cases.run_case(mx, name, fix_mxnet=False)
    _assert_close_dicts(got, _case_ref(ref, name))


def test_fixed_parameter_has_no_svrg_gradient(ref):
    # MXNet 1.9.1 fails on a fixed parameter (its gradient is None); a fixed bias trains the
    # weight exactly as a bias with learning rate 0 does in MXNet
    got = cases.manual_case(mx, contexts=1, kvstore="local", optimizer="sgd",
                            optimizer_params={"learning_rate": 0.05}, num_epoch=2,
                            update_freq=2, fix_mxnet=False, fixed_param_names=["fc1_bias"])
    _assert_close_dicts(got, _case_ref(ref, "bias_frozen_sgd"))


def test_symbol_lr_mult_attribute_counts(ref):
    # the variable's lr_mult attribute reaches the wrapped optimizer, as with Module
    got = cases.manual_case(mx, contexts=1, kvstore="local", optimizer="sgd",
                            optimizer_params={"learning_rate": 0.05}, num_epoch=2,
                            update_freq=2, fix_mxnet=False, bias_lr_mult=0.0)
    _assert_close_dicts(got, _case_ref(ref, "bias_frozen_sgd"))


def test_automatically_named_fully_connected_is_trained(ref):
    # 'fullyconnected<k>_weight' contains "full": MXNet 1.9.1 assigned it its gradient
    got = cases.manual_case(mx, contexts=1, kvstore="local", optimizer="sgd",
                            optimizer_params={"learning_rate": 0.05}, num_epoch=2,
                            update_freq=2, fix_mxnet=False, layer_name=None)
    want = {k: v for k, v in _case_ref(ref, "fit_sgd_one_snapshot").items() if k != "mse"}
    _assert_close_dicts(got, want)


# ------------------------------------------------------------------ MXNet bugs not kept
def _bound_module(contexts=1):
    mod, di = cases.make_module(mx, contexts)
    mod.init_params(arg_params=cases.initial_params(mx))
    return mod, di


def test_full_gradient_starts_from_zero_each_time(ref):
    mod, di = _bound_module()
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    want = _case_ref(ref, "full_gradient_1ctx")
    for _ in range(2):   # MXNet 1.9.1's second call adds the first result in
        mod.update_full_grads(di)
        got = {f"ctx0/{k}": v.asnumpy() for k, v in mod._param_dict[0].items()}
        _assert_close_dicts(got, want)


def test_kvstore_keeps_device_weights():
    mod, _ = _bound_module()
    mod.init_optimizer(kvstore=mx.kv.create("local"), optimizer="sgd")
    assert mod._update_on_kvstore
    init = cases.initial_params(mx)
    for name, arrs in zip(mod._exec_group.param_names, mod._exec_group.param_arrays):
        np.testing.assert_array_equal(arrs[0].asnumpy(), init[name].asnumpy())
    # the store holds a zero full gradient per parameter
    out = mx.nd.ones((1, 3))
    mod._kvstore.pull("fc1_weight_full", out)
    np.testing.assert_array_equal(out.asnumpy(), np.zeros((1, 3)))


# ------------------------------------------------------------------ behaviour
def test_first_batch_after_snapshot_gets_the_full_gradient():
    # at the snapshot, grad(current) == grad(snapshot): the SVRG gradient is the full one
    mod, di = _bound_module()
    mod.init_optimizer(optimizer="sgd")
    mod.update_full_grads(di)
    di.reset()
    mod.forward_backward(next(iter(di)))
    mod._update_svrg_gradients()
    for index, name in enumerate(mod._exec_group.param_names):
        np.testing.assert_allclose(mod._exec_group.grad_arrays[index][0].asnumpy(),
                                   mod._param_dict[0][name].asnumpy(), rtol=1e-6, atol=1e-6)


def test_svrg_gradient_rule():
    mod, di = _bound_module()
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    mod.update_full_grads(di)
    di.reset()
    batches = list(di)
    mod.forward_backward(batches[0])
    mod.update()                       # now current weights != snapshot
    mod.forward_backward(batches[1])
    cur = [g[0].asnumpy().copy() for g in mod._exec_group.grad_arrays]
    snap = [g[0].asnumpy().copy() for g in mod._mod_aux._exec_group.grad_arrays]
    assert not np.allclose(cur[0], snap[0])
    mod._update_svrg_gradients()
    for index, name in enumerate(mod._exec_group.param_names):
        want = cur[index] - snap[index] + mod._param_dict[0][name].asnumpy()
        np.testing.assert_allclose(mod._exec_group.grad_arrays[index][0].asnumpy(), want,
                                   rtol=1e-6, atol=1e-6)


def test_inference_bind_score_predict():
    mod, di = _bound_module()
    pred = SVRGModule(cases.network(mx), data_names=["data"], label_names=["lin_reg_label"],
                      update_freq=1)
    pred.bind(di.provide_data, di.provide_label, for_training=False)
    assert not pred._mod_aux.binded
    pred.set_params(*mod.get_params())
    out = pred.predict(di)
    assert out.shape == (cases.N_SAMPLES, 1)
    x, _ = cases.dataset()
    init = cases.initial_params(mx)
    want = x @ init["fc1_weight"].asnumpy().T + init["fc1_bias"].asnumpy()
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-6, atol=1e-6)
    (name, mse), = mod.score(di, "mse")
    assert name == "mse" and mse > 0
    with pytest.raises(MXNetError, match="for_training=True"):
        pred.update_full_grads(di)


def test_fit_logs_and_callbacks(caplog):
    mod, di = cases.make_module(mx, update_freq=3)
    calls = []
    full_calls = []
    orig = mod.update_full_grads
    mod.update_full_grads = lambda data: (full_calls.append(1), orig(data))
    with caplog.at_level(logging.INFO):
        mod.fit(di, eval_data=di, eval_metric="mse", num_epoch=4,
                arg_params=cases.initial_params(mx),
                epoch_end_callback=lambda e, *a: calls.append(e),
                batch_end_callback=lambda p: calls.append((p.epoch, p.nbatch)))
    assert len(full_calls) == 2          # epochs 0 and 3
    assert calls.count(3) == 1 and (3, 3) in calls and (0, 0) in calls
    text = caplog.text
    assert "Epoch[3] Train-mse=" in text and "Epoch[3] Validation-mse=" in text


def test_save_checkpoint_and_load(tmp_path):
    mod, di = _bound_module()
    mod.init_optimizer(optimizer="sgd", optimizer_params={"momentum": 0.9})
    mod.update_full_grads(di)
    di.reset()
    mod.forward_backward(next(iter(di)))
    mod.update()
    prefix = str(tmp_path / "svrg")
    mod.save_checkpoint(prefix, 0, save_optimizer_states=True)
    loaded = SVRGModule.load(prefix, 0, load_optimizer_states=True, data_names=("data",),
                             label_names=("lin_reg_label",))
    loaded.bind(di.provide_data, di.provide_label)
    loaded.init_optimizer(optimizer="sgd", optimizer_params={"momentum": 0.9})
    for name, arr in mod.get_params()[0].items():
        np.testing.assert_array_equal(loaded.get_params()[0][name].asnumpy(), arr.asnumpy())


def test_two_contexts_reshape():
    sym = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=4, name="fc")
    mod = SVRGModule(sym, data_names=["data"], label_names=None,
                     context=[mx.cpu(0), mx.cpu(1)], update_freq=2)
    mod.bind(data_shapes=[("data", (3, 4))])
    mod.init_params()
    mod._mod_aux.init_params()
    mod.init_optimizer(optimizer_params={"learning_rate": 1.0})
    for shape in ((3, 4), (2, 4)):
        if shape != (3, 4):
            mod.reshape(data_shapes=[("data", shape)])
        mod.forward(mx.io.DataBatch(data=[mx.nd.ones(shape)], label=None))
        mod.backward([mx.nd.ones(shape)])
        mod.update()
        assert mod.get_outputs()[0].shape == shape


def test_registered_and_exposed():
    assert mx.contrib.svrg_optimization.svrg_module.SVRGModule is SVRGModule
    opt = mx.optimizer.create("_SVRGOptimizer", default_optimizer="adam", learning_rate=0.5,
                              param_idx2name={0: "w", 1: "w_full"}, beta1=0.8)
    assert isinstance(opt, _SVRGOptimizer)
    assert type(opt.default_opt).__name__ == "Adam" and opt.default_opt.beta1 == 0.8
    assert opt.lr == 0.5 and not hasattr(opt, "beta1")
    assert isinstance(opt.aux_opt, _AssignmentOptimizer)
    assert isinstance(mx.optimizer.create("_AssignmentOptimizer"), _AssignmentOptimizer)
    # an Optimizer object is used as it is
    sgd = mx.optimizer.SGD(learning_rate=0.3)
    assert _SVRGOptimizer(default_optimizer=sgd).default_opt is sgd


def test_assignment_optimizer_ignores_scaling():
    opt = _AssignmentOptimizer(rescale_grad=0.1, clip_gradient=0.5, wd=1.0)
    w = mx.nd.array([1.0, 2.0])
    opt.update(0, w, mx.nd.array([3.0, -4.0]), None)
    np.testing.assert_array_equal(w.asnumpy(), [3.0, -4.0])


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("freq", [0, -1])
def test_update_freq_not_positive(freq):
    with pytest.raises(ValueError, match="update_freq") as err:
        SVRGModule(cases.network(mx), data_names=["data"], label_names=["lin_reg_label"],
                   update_freq=freq)
    assert isinstance(err.value, MXNetError)


@pytest.mark.parametrize("freq", [None, 1.5, "2"])
def test_update_freq_not_int(freq):
    with pytest.raises(TypeError, match="update_freq") as err:
        SVRGModule(cases.network(mx), data_names=["data"], label_names=["lin_reg_label"],
                   update_freq=freq)
    assert isinstance(err.value, MXNetError)


def test_unknown_optimizer():
    mod, _ = _bound_module()
    with pytest.raises(ValueError, match="nosuchopt") as err:
        mod.init_optimizer(optimizer="nosuchopt")
    assert isinstance(err.value, MXNetError)
    with pytest.raises(TypeError, match="default_optimizer"):
        _SVRGOptimizer(default_optimizer=3)
    with pytest.raises(TypeError, match="optimizer must be"):
        mod.init_optimizer(optimizer=3)


def test_calls_out_of_order():
    mod, di = cases.make_module(mx)
    with pytest.raises(MXNetError, match="init_optimizer"):
        mod.init_optimizer()
    mod.init_params(arg_params=cases.initial_params(mx))
    with pytest.raises(MXNetError, match="update_full_grads"):
        mod.update_full_grads(di)
    with pytest.raises(MXNetError, match="update"):
        mod.update()
    mod.init_optimizer()
    # a training forward needs a snapshot of the parameters
    with pytest.raises(MXNetError, match="update_full_grads"):
        mod.forward(next(iter(di)), is_train=True)
    with pytest.raises(MXNetError, match="num_epoch"):
        mod.fit(di)


def test_empty_data():
    mod, di = _bound_module()
    mod.init_optimizer()
    empty = mx.io.NDArrayIter(np.zeros((0, 3), np.float32), np.zeros((0,), np.float32),
                              batch_size=8, label_name="lin_reg_label")
    with pytest.raises(MXNetError, match="no batch"):
        mod.update_full_grads(empty)


def test_full_key_name_collision():
    data = mx.sym.Variable("data")
    net = mx.sym.broadcast_add(mx.sym.broadcast_mul(data, mx.sym.Variable("w")),
                               mx.sym.Variable("w_full"))
    with pytest.raises(ValueError, match="w_full") as err:
        SVRGModule(net, data_names=["data"], label_names=None, update_freq=1)
    assert isinstance(err.value, MXNetError)


def test_svrg_optimizer_unknown_key():
    opt = _SVRGOptimizer(default_optimizer="sgd", param_idx2name={0: "w"})
    with pytest.raises(KeyError, match="key 5") as err:
        opt.update(5, mx.nd.ones(2), mx.nd.ones(2), None)
    assert isinstance(err.value, MXNetError)
    # a name is its own key; 'x_full' is a full-gradient key only when 'x' is a parameter
    opt = _SVRGOptimizer(default_optimizer="sgd", learning_rate=1.0,
                         param_idx2name={0: "w", 1: "w_full", 2: "fullyconnected0_weight",
                                         3: "v_full"})
    for key, assigned in (("w_full", True), (1, True), ("w", False), (2, False),
                          (3, False)):
        w = mx.nd.array([1.0, 1.0])
        opt.update(key, w, mx.nd.array([0.25, 0.5]), None)
        want = [0.25, 0.5] if assigned else [0.75, 0.5]
        np.testing.assert_allclose(w.asnumpy(), want, err_msg=str(key))
