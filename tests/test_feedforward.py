"""mx.model.FeedForward, mx.model._train_multi_device and the legacy executor manager
against MXNet 1.9.1 (fixtures from tools/gen_feedforward_fixtures.py; the scenarios are
tests/feedforward_cases.py, run unchanged by both libraries)."""
import logging
import os
import pickle
import shutil

import numpy as np
import pytest

import neogluon as mx
from neogluon.base import MXNetError
from neogluon.executor_manager import (DataParallelExecutorManager, _bind_exec,
                                       _check_arguments, _load_general)

import feedforward_cases as cases

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _compare(res, ref, rtol=1e-4, atol=1e-5):
    assert set(res) == set(ref)
    for k in ref:
        if ref[k].dtype.kind == "U":
            assert list(res[k]) == list(ref[k]), k
        else:
            np.testing.assert_allclose(res[k], ref[k], rtol=rtol, atol=atol, err_msg=k)


@pytest.mark.parametrize("name", sorted(cases.FIT_CASES))
def test_fit_matches_mxnet(fixture_path, name):
    """Parameters, predictions (with return_data, num_batch, numpy input), scores, the
    arguments every callback got and the log lines equal MXNet's."""
    ref = dict(np.load(fixture_path("feedforward", f"fit_{name}.npz")))
    _compare(cases.run_fit(mx, name), ref)


def test_fit_log_and_callback_shape(fixture_path):
    """What old scripts see (from MXNet's own run): batch callbacks count from 1, an
    epoch_size shorter than the data reads on without resetting, no Train- line."""
    ref = dict(np.load(fixture_path("feedforward", "fit_mlp_iter_2ctx_short_epochs.npz")))
    assert [tuple(r[:2]) for r in ref["batch_log"]] == \
        [(e, b) for e in range(4) for b in range(1, 5)]
    lines = list(ref["log_lines"])
    assert "Epoch[0] Resetting Data Iterator" not in lines
    assert "Epoch[1] Resetting Data Iterator" in lines
    assert not any("Train-" in line for line in lines)


def _copy_ckpt(src, dst, epoch):
    for suffix in ("-symbol.json", "-%04d.params" % epoch):
        shutil.copy(src + suffix, dst + suffix)


def test_load_mxnet_checkpoint(fixture_path, tmp_path):
    """MXNet's FeedForward.save files: neogluon predicts what MXNet predicted and trains on
    to MXNet's parameters."""
    _copy_ckpt(fixture_path("feedforward", "mxnet_ff"), str(tmp_path / "ff"), 2)
    ref = dict(np.load(fixture_path("feedforward", "mxnet_ff_continued.npz")))
    saved = ref.pop("saved_predict")
    res = cases.continue_checkpoint(mx, str(tmp_path / "ff"), 2)
    _compare(res, ref)
    np.testing.assert_allclose(res["loaded_predict"], saved, rtol=1e-5, atol=1e-6)


def test_mxnet_loads_neogluon_checkpoint(fixture_path, tmp_path):
    """neogluon's FeedForward.save files, loaded by MXNet 1.9.1 (fixture): neogluon
    loading them gives the same predictions and training; saving again gives the same
    files' contents; and MXNet's own run of the same training ends where neogluon's did."""
    committed = fixture_path("feedforward", "neogluon_ff")
    _copy_ckpt(committed, str(tmp_path / "ff"), 2)
    ref = dict(np.load(fixture_path("feedforward", "neogluon_ff_mxnet_continued.npz")))
    _compare(cases.continue_checkpoint(mx, str(tmp_path / "ff"), 2), ref)
    np.testing.assert_allclose(
        ref["loaded_predict"], np.load(committed + "_predict.npz")["predict"],
        rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        ref["loaded_predict"],
        np.load(fixture_path("feedforward", "mxnet_ff_continued.npz"))["saved_predict"],
        rtol=1e-4, atol=1e-5)
    prefix = str(tmp_path / "again")
    cases.make_checkpoint(mx, prefix)
    assert open(prefix + "-symbol.json").read() == open(committed + "-symbol.json").read()
    old = mx.nd.load(committed + "-0002.params")
    for epoch in (2, 7):
        new = mx.nd.load(prefix + "-%04d.params" % epoch)
        assert set(new) == set(old)
        for k in old:
            np.testing.assert_allclose(new[k].asnumpy(), old[k].asnumpy(), rtol=1e-5,
                                       atol=1e-6)


# ------------------------------------------------------------------------- behaviour
def _mlp_model(**kw):
    sym = cases.network(mx, "mlp")
    args, aux = cases.initial_params(mx, sym, (8, 10))
    kw.setdefault("arg_params", args)
    kw.setdefault("aux_params", aux)
    return mx.model.FeedForward(sym, numpy_batch_size=8, learning_rate=0.1, **kw)


def test_deprecation_warning():
    sym = cases.network(mx, "mlp")
    with pytest.warns(DeprecationWarning, match="FeedForward has been deprecated. Please use "
                      "mxnet.mod.Module instead"):
        mx.model.FeedForward(sym)


def test_numpy_inputs_and_predict_return_data():
    x, y = cases.dataset("mlp", n=20)
    model = _mlp_model(num_epoch=1)
    model.fit(x, y.reshape(-1, 1))     # (n, 1) labels are taken as (n,)
    out, data, label = model.predict(x, return_data=True)
    assert out.shape == (20, 4) and isinstance(out, np.ndarray)
    np.testing.assert_array_equal(data, x)
    np.testing.assert_array_equal(label, np.zeros(20))     # no y: zeros
    out2, _, label2 = model.predict(mx.io.NDArrayIter(x, y, batch_size=6), return_data=True)
    np.testing.assert_allclose(out2, out, rtol=1e-6)
    np.testing.assert_array_equal(label2, y)
    # NDArray inputs, (n, 1) labels included
    model2 = _mlp_model(num_epoch=1)
    model2.fit(mx.nd.array(x), mx.nd.array(y.reshape(-1, 1)))
    assert model2.predict(mx.nd.array(x)).shape == (20, 4)


def test_predict_follows_later_training_and_param_changes():
    """The inference executor gets the current values each time (MXNet kept the first
    bind's values)."""
    x, y = cases.dataset("mlp", n=16)
    model = _mlp_model(num_epoch=1)
    model.fit(x, y)
    before = model.predict(x)
    model.num_epoch = 2
    model.begin_epoch = 1
    model.fit(x, y)
    after = model.predict(x)
    assert not np.allclose(before, after)
    model.arg_params["fc2_bias"][:] = 5.0
    assert not np.allclose(model.predict(x), after)


def test_pickle_round_trip():
    x, y = cases.dataset("mlp", n=16)
    model = _mlp_model(num_epoch=1)
    model.fit(x, y)
    prob = model.predict(x)
    assert model._pred_exec is not None
    clone = pickle.loads(pickle.dumps(model))
    assert clone._pred_exec is None
    np.testing.assert_array_equal(clone.predict(x), prob)
    assert clone.num_epoch == 1 and clone.numpy_batch_size == 8


def test_save_load_round_trip(tmp_path):
    x, y = cases.dataset("mlp", n=16)
    model = _mlp_model(num_epoch=2)
    model.fit(x, y)
    prefix = str(tmp_path / "m")
    model.save(prefix)               # epoch defaults to num_epoch
    model.save(prefix, 128)
    for epoch in (2, 128):
        loaded = mx.model.FeedForward.load(prefix, epoch)
        assert loaded.begin_epoch == epoch
        np.testing.assert_array_equal(loaded.predict(x), model.predict(x))
    sym, args, aux = mx.model.load_checkpoint(prefix, 2)
    assert sorted(args) == sorted(model.arg_params)


def test_internal_output_with_allow_extra_params():
    """Predicting an internal feature map with the full model's parameters (MXNet's
    train/test_mlp.py pattern)."""
    x, y = cases.dataset("mlp", n=16)
    model = _mlp_model(num_epoch=1)
    model.fit(x, y)
    feat_sym = model.symbol.get_internals()["relu1_output"]
    feat = mx.model.FeedForward(feat_sym, arg_params=model.arg_params,
                                aux_params=model.aux_params, allow_extra_params=True)
    assert sorted(feat.arg_params) == ["fc1_bias", "fc1_weight"]
    out = feat.predict(x)
    w, b = model.arg_params["fc1_weight"].asnumpy(), model.arg_params["fc1_bias"].asnumpy()
    np.testing.assert_allclose(out, np.maximum(x @ w.T + b, 0), rtol=1e-5, atol=1e-6)
    with pytest.raises(MXNetError, match="'fc2_bias', 'fc2_weight'.*allow_extra_params"):
        mx.model.FeedForward(feat_sym, arg_params=model.arg_params).predict(x)


def test_create_trains_and_scores():
    x, y = cases.dataset("mlp", n=48)
    it = mx.io.NDArrayIter(x, y, batch_size=8)
    model = mx.model.FeedForward.create(cases.network(mx, "mlp"), it, num_epoch=6,
                                        learning_rate=0.5, momentum=0.9,
                                        initializer=mx.init.Xavier())
    assert model.score(it) > 0.7
    assert model.score(it, ["acc", "ce"], num_batch=2)[0] > 0.5


def test_train_multi_device_direct_call():
    """Old scripts call mx.model._train_multi_device themselves."""
    sym = cases.network(mx, "mlp")
    x, y = cases.dataset("mlp", n=32)
    it = mx.io.NDArrayIter(x, y, batch_size=8)
    args, aux = cases.initial_params(mx, sym, (8, 10))
    start = {k: v.copy() for k, v in args.items()}
    param_names = [n for n in sym.list_arguments() if n not in ("data", "softmax_label")]
    seen = []
    mx.model._train_multi_device(
        sym, [mx.cpu(0), mx.cpu(1)], sym.list_arguments(), param_names, [], args, aux,
        begin_epoch=0, end_epoch=2, epoch_size=None,
        optimizer=mx.optimizer.SGD(learning_rate=0.1, rescale_grad=1 / 8), kvstore=None,
        update_on_kvstore=False, train_data=it, eval_metric=mx.metric.Accuracy(),
        batch_end_callback=lambda p: seen.append((p.epoch, p.nbatch)))
    assert seen == [(e, b) for e in range(2) for b in range(1, 5)]
    # the trained values were written into arg_params after the last epoch
    assert not np.allclose(args["fc1_weight"].asnumpy(), start["fc1_weight"].asnumpy())


def test_monitor_and_epoch_checkpoint(tmp_path):
    x, y = cases.dataset("mlp", n=16)
    model = _mlp_model(num_epoch=2)
    mon = mx.mon.Monitor(1, pattern="fc1_output")
    prefix = str(tmp_path / "ck")
    model.fit(x, y, monitor=mon, epoch_end_callback=mx.callback.do_checkpoint(prefix))
    for epoch in (1, 2):
        assert os.path.exists(prefix + "-%04d.params" % epoch)
    np.testing.assert_array_equal(mx.model.FeedForward.load(prefix, 2).predict(x),
                                  model.predict(x))


def test_sym_gen_bucketing():
    """A sym_gen model: one executor group per bucket, all sharing the parameters."""
    def sym_gen(key):
        data = mx.sym.var("data")
        net = mx.sym.FullyConnected(mx.sym.sum(data, axis=1), num_hidden=3, name="fc")
        return mx.sym.SoftmaxOutput(net, name="softmax")

    class Buckets(mx.io.DataIter):
        def __init__(self):
            super().__init__(4)
            rng = np.random.RandomState(0)
            self.batches = [(k, rng.uniform(-1, 1, (4, k, 5)).astype(np.float32),
                             rng.randint(0, 3, 4).astype(np.float32)) for k in (3, 2, 3, 1)]
            self.default_bucket_key = 3
            self.provide_data = [mx.io.DataDesc("data", (4, 3, 5))]
            self.provide_label = [mx.io.DataDesc("softmax_label", (4,))]
            self.i = 0

        def reset(self):
            self.i = 0

        def next(self):
            if self.i == len(self.batches):
                raise StopIteration
            k, d, l = self.batches[self.i]
            self.i += 1
            return mx.io.DataBatch([mx.nd.array(d)], [mx.nd.array(l)], bucket_key=k,
                                   provide_data=[mx.io.DataDesc("data", d.shape)],
                                   provide_label=[mx.io.DataDesc("softmax_label", (4,))])

    model = mx.model.FeedForward(sym_gen, num_epoch=2, learning_rate=0.1)
    model.fit(Buckets())
    assert model.symbol is not None and sorted(model.arg_params) == ["fc_bias", "fc_weight"]


# ------------------------------------------------------------------------- bad input
def test_errors_name_the_culprit():
    x, y = cases.dataset("mlp", n=20)
    with pytest.raises(ValueError, match="X has 20 examples, y has 5"):
        _mlp_model(num_epoch=1).fit(x, y[:5])
    with pytest.raises(ValueError, match="num_epoch is not set"):
        _mlp_model().fit(x, y)
    with pytest.raises(ValueError, match="y must be specified"):
        _mlp_model(num_epoch=1).fit(x)
    with pytest.raises(TypeError, match="y must be ndarray.*got list"):
        _mlp_model(num_epoch=1).fit(x, list(y))
    with pytest.raises(TypeError, match="X must be DataIter.*got str"):
        _mlp_model(num_epoch=1).fit("data.csv", y)
    with pytest.raises(ValueError, match=r"Label must be 1D.*\(20, 2\)"):
        _mlp_model(num_epoch=1).fit(x, np.zeros((20, 2)))
    args, _ = cases.initial_params(mx, cases.network(mx, "mlp"), (8, 10))
    bad = dict(args, fc1_weights=args["fc1_weight"])
    for call in (lambda m: m.fit(x, y), lambda m: m.predict(x)):
        with pytest.raises(MXNetError, match="arg_params has 'fc1_weights'.*allow_extra_params"):
            call(_mlp_model(num_epoch=1, arg_params=bad))
    with pytest.raises(MXNetError, match=r"'fc1_weight' has shape \(3, 10\).*\(16, 10\)"):
        _mlp_model(num_epoch=1, arg_params=dict(args, fc1_weight=mx.nd.zeros((3, 10)))).fit(x, y)
    with pytest.raises(ValueError, match="no epoch given"):
        _mlp_model().save("never")
    with pytest.raises(MXNetError, match="no parameters"):
        mx.model.FeedForward(cases.network(mx, "mlp")).predict(x)
    with pytest.raises(TypeError, match="Symbol or a callable"):
        mx.model.FeedForward("net.json")
    with pytest.raises(ValueError, match="Eval data is NONE"):
        _mlp_model(num_epoch=1).fit(x, y, eval_data=(None, y))
    # validation batches must have the training batch size (one set of executors)
    with pytest.raises(ValueError, match="Expected 8, got 5"):
        _mlp_model(num_epoch=1).fit(x, y, eval_data=mx.io.NDArrayIter(x, y, batch_size=5))


def test_duplicate_argument_names():
    data = mx.sym.var("data")
    net = mx.sym.FullyConnected(data, num_hidden=4, name="fc")
    net = mx.sym.FullyConnected(net, num_hidden=4, name="fc")
    with pytest.raises(ValueError, match='duplicated argument name "fc_weight"'):
        _check_arguments(net)
    with pytest.raises(ValueError, match='duplicated argument name "fc_weight"'):
        mx.model.FeedForward(net)


# ------------------------------------------------------------------------- executor manager
def test_executor_manager_slices_and_shares():
    sym = cases.network(mx, "mlp")
    x, y = cases.dataset("mlp", n=8)
    it = mx.io.NDArrayIter(x, y, batch_size=8)
    args, aux = cases.initial_params(mx, sym, (8, 10))
    names = sym.list_arguments()
    params = [n for n in names if n not in ("data", "softmax_label")]
    assert mx.executor_manager.DataParallelExecutorManager is DataParallelExecutorManager
    mgr = DataParallelExecutorManager(sym, [mx.cpu(0), mx.cpu(1)], it, names, params, [],
                                      work_load_list=[1, 3], logger=logging)
    assert [e.arg_dict["data"].shape[0] for e in mgr.execgrp.train_execs] == [2, 6]
    mgr.set_params(args, aux)
    with pytest.raises(MXNetError, match="load a batch first"):
        mgr.forward()
    batch = next(iter(it))
    mgr.load_data_batch(batch)
    mgr.forward(is_train=True)
    mgr.backward()
    assert all(g[0] is not None for g in mgr.grad_arrays)
    metric = mx.metric.Accuracy()
    mgr.update_metric(metric, batch.label)
    assert metric.num_inst == 8
    out = {k: mx.nd.zeros(v.shape) for k, v in args.items()}
    mgr.copy_to(out, {})
    np.testing.assert_allclose(out["fc1_weight"].asnumpy(), args["fc1_weight"].asnumpy())
    with pytest.raises(ValueError, match="one entry per context"):
        DataParallelExecutorManager(sym, [mx.cpu(0)], it, names, params, [],
                                    work_load_list=[1, 1])


def test_bind_exec_shares_with_base_exec():
    sym = cases.network(mx, "mlp")
    params = ["fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"]
    shared = {}
    base = _bind_exec(sym, mx.cpu(), {"data": (8, 10), "softmax_label": (8,)}, params,
                      need_grad=True, shared_data_arrays=shared)
    small = _bind_exec(sym, mx.cpu(), {"data": (4, 10), "softmax_label": (4,)}, params,
                       need_grad=True, base_exec=base, shared_data_arrays=shared)
    assert small.arg_dict["fc1_weight"] is base.arg_dict["fc1_weight"]
    assert small.grad_dict["fc1_weight"] is base.grad_dict["fc1_weight"]
    assert small.arg_dict["data"].shape == (4, 10)
    assert small.grad_dict.get("data") is None
    with pytest.raises(ValueError, match="need_grad"):
        _bind_exec(sym, mx.cpu(), {"data": (8, 10)}, params, need_grad="yes")


def test_load_general_whole_and_sliced():
    src = mx.nd.arange(12).reshape((6, 2))
    whole = mx.nd.zeros((6, 2))
    parts = [(slice(0, 2), mx.nd.zeros((2, 2))), (slice(2, 6), mx.nd.zeros((4, 2)))]
    _load_general([src, src], [whole, parts])
    np.testing.assert_array_equal(whole.asnumpy(), src.asnumpy())
    np.testing.assert_array_equal(parts[1][1].asnumpy(), src.asnumpy()[2:])
    with pytest.raises(ValueError, match="Expected 6, got 3"):
        _load_general([src[:3]], [parts])
