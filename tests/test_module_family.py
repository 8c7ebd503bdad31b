"""mx.mod.BucketingModule, SequentialModule, PythonModule/PythonLossModule and
amp.convert_bucketing_module against MXNet 1.9.1 (fixtures from
tools/gen_module_family_fixtures.py; the scenarios are tests/module_family_cases.py, run
unchanged by both libraries), checkpoints in MXNet's format both ways, and the errors."""
import json
import os
import shutil

import numpy as np
import pytest

import neogluon as mx
from neogluon import amp
from neogluon.base import MXNetError, dtype_name

import module_family_cases as cases


def _compare(res, ref, prefix="", rtol=1e-4, atol=1e-5):
    keys = sorted(k[len(prefix):] for k in ref if k.startswith(prefix))
    assert keys and sorted(res) == keys
    for k in keys:
        np.testing.assert_allclose(res[k], ref[prefix + k], rtol=rtol, atol=atol, err_msg=k)


def _lm_batch_shapes(key):
    return ([mx.io.DataDesc("data", (cases.BATCH, key))],
            [mx.io.DataDesc("softmax_label", (cases.BATCH, key))])


# --------------------------------------------------------------------------- BucketingModule
def test_bucketing_training_matches_mxnet(fixture_path):
    ref = dict(np.load(fixture_path("module_family", "bucketing.npz")))
    _compare(cases.run_bucketing(mx), ref)


def test_buckets_share_parameters_gradients_and_names():
    mod = cases.lm_module(mx)
    # sym_gen runs under a fresh NameManager: automatic names repeat in every bucket
    names6 = mod.symbol.list_arguments()
    mod.switch_bucket(4, *_lm_batch_shapes(4))
    assert mod._curr_bucket_key == 4 and sorted(mod._buckets) == [4, 6]
    assert mod.symbol.list_arguments() == names6
    assert mod.data_shapes[0].shape == (cases.BATCH, 4)
    ex4 = mod._buckets[4]._exec_group.execs[0]
    ex6 = mod._buckets[6]._exec_group.execs[0]
    for name in ("pred_weight", "lstm_l0_i2h_weight", "embed_weight"):
        assert ex4.arg_dict[name] is ex6.arg_dict[name]
        assert ex4.grad_dict[name] is ex6.grad_dict[name]
    # one set of master copies
    assert mod._buckets[4]._arg_params is mod._buckets[6]._arg_params
    # switching back binds nothing new
    mod.switch_bucket(6, None)
    assert mod._curr_module is mod._buckets[6]


def test_grad_req_add_accumulates_across_buckets():
    def sym_gen(key):
        data = mx.sym.var("data")
        weight = mx.sym.var("a", shape=(1,), init=mx.init.One())
        return mx.sym.make_loss(mx.sym.broadcast_mul(data, weight) * key), ("data",), None

    for req, want in (("write", [2.0, 10.0]), ("add", [2.0, 12.0])):
        mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=1)
        mod.bind(data_shapes=[("data", (2,))], grad_req=req)
        mod.init_params()
        got = []
        for key in (1, 5):
            mod.forward_backward(mx.io.DataBatch(
                [mx.nd.ones((2,))], provide_data=[mx.io.DataDesc("data", (2,))],
                bucket_key=key))
            got.append(mod._curr_module._exec_group.execs[0].grad_dict["a"].asscalar())
        assert got == want, req
        assert mod._curr_module._grad_req == req


def test_load_mxnet_checkpoint(fixture_path, tmp_path):
    """The files of MXNet's BucketingModule.save_checkpoint, loaded and run by neogluon."""
    ref = dict(np.load(fixture_path("module_family", "bucketing.npz")))
    src = fixture_path("module_family", "mxnet_lm")
    prefix = str(tmp_path / "lm")
    for suffix in ("-0003.params", "-4-symbol.json", "-6-symbol.json", ".buckets"):
        shutil.copy(src + suffix, prefix + suffix)
    mod = mx.mod.BucketingModule.load(prefix, 3, sym_gen=cases.lm_sym_gen(mx),
                                      default_bucket_key=cases.DEFAULT_KEY)
    assert sorted(mod._buckets) == [4, 6]
    assert not mod.binded and mod.params_initialized
    mod.bind(*_lm_batch_shapes(cases.DEFAULT_KEY), for_training=False)
    args, _ = mod.get_params()
    _compare({f"arg:{k}": v.asnumpy() for k, v in args.items()},
             {k: v for k, v in ref.items() if k.startswith("arg:")})
    # bucket 4 was loaded unbound; the evaluation batch binds it
    np.testing.assert_allclose(cases.lm_eval(mx, mod), ref["eval"], rtol=1e-4, atol=1e-5)
    assert mod._buckets[4].binded


def test_save_checkpoint_round_trip_in_mxnet_format(fixture_path, tmp_path):
    mod = cases.lm_module(mx)
    res = cases.run_bucketing(mx, mod)
    prefix = str(tmp_path / "lm")
    mod.save_checkpoint(prefix, 3)
    for suffix in ("-0003.params", "-4-symbol.json", "-6-symbol.json", ".buckets"):
        assert os.path.exists(prefix + suffix), suffix
    # the bucket list: one int32 array, byte for byte what MXNet writes for the same keys
    with open(prefix + ".buckets", "rb") as mine, \
            open(fixture_path("module_family", "mxnet_lm.buckets"), "rb") as theirs:
        mine_keys = mx.nd.load(prefix + ".buckets")[0]
        assert mine_keys.dtype == np.int32
        assert sorted(mine_keys.asnumpy().tolist()) == [4, 6]
        if mine_keys.asnumpy().tolist() == [6, 4]:
            assert mine.read() == theirs.read()
    loaded = mx.mod.BucketingModule.load(prefix, 3, sym_gen=cases.lm_sym_gen(mx),
                                         default_bucket_key=cases.DEFAULT_KEY)
    loaded.bind(*_lm_batch_shapes(cases.DEFAULT_KEY), for_training=False)
    np.testing.assert_allclose(cases.lm_eval(mx, loaded), res["eval"], rtol=1e-5, atol=1e-6)


def test_load_dict_and_rebind_keep_parameters():
    mod = cases.lm_module(mx)
    args, auxs = mod.get_params()
    syms = {k: cases.lm_sym_gen(mx)(k)[0] for k in (4, 6)}
    other = mx.mod.BucketingModule.load_dict(syms, sym_gen=cases.lm_sym_gen(mx),
                                             default_bucket_key=6, arg_params=args,
                                             aux_params=auxs)
    other.bind(*_lm_batch_shapes(6), for_training=False)
    np.testing.assert_allclose(cases.lm_eval(mx, other), cases.lm_eval(mx, mod), rtol=1e-6)
    # force_rebind (training -> inference) keeps the parameters
    before = cases.lm_eval(mx, mod)
    mod.bind(*_lm_batch_shapes(6), for_training=False, force_rebind=True)
    assert not mod.for_training and sorted(mod._buckets) == [6]
    np.testing.assert_allclose(cases.lm_eval(mx, mod), before, rtol=1e-6)


def test_fit_score_predict_on_bucket_sentence_iter():
    rng = np.random.RandomState(0)
    sentences = [list(rng.randint(1, cases.VOCAB, rng.randint(2, 7))) for _ in range(24)]
    it = mx.rnn.BucketSentenceIter(sentences, cases.BATCH, buckets=[4, 6], invalid_label=0)
    mod = mx.mod.BucketingModule(cases.lm_sym_gen(mx), default_bucket_key=it.default_bucket_key)
    mod.fit(it, num_epoch=2, eval_metric=mx.metric.Perplexity(0),
            optimizer_params={"learning_rate": 0.1}, initializer=mx.init.Xavier())
    assert sorted(mod._buckets) == [4, 6]
    (name, ppl), = mod.score(it, mx.metric.Perplexity(0))
    assert name == "perplexity" and np.isfinite(ppl) and 1 < ppl < cases.VOCAB * 2
    # a batch without a bucket key runs in the default bucket
    mod.switch_bucket(4, None)
    out = mod.predict(mx.nd.ones((cases.BATCH, 6)))
    assert mod._curr_bucket_key == 6 and out.shape == (cases.BATCH * 6, cases.VOCAB)


def test_monitor_installed_on_buckets_bound_later():
    mod = cases.lm_module(mx)
    mon = mx.mon.Monitor(1)
    mod.install_monitor(mon)
    assert len(mon.exes) == 1
    mod.switch_bucket(4, *_lm_batch_shapes(4))
    assert len(mon.exes) == 2 and mon.exes[1] is mod._buckets[4]._exec_group.execs[0]


def test_bucketing_errors():
    gen = cases.lm_sym_gen(mx)
    with pytest.raises(MXNetError, match="default_bucket_key"):
        mx.mod.BucketingModule(gen)
    with pytest.raises(AssertionError):  # MXNet asserts; the error is both
        mx.mod.BucketingModule(gen)
    with pytest.raises(MXNetError, match=r"\(symbol, data_names, label_names\)"):
        mx.mod.BucketingModule(lambda k: gen(k)[:2], default_bucket_key=6)
    with pytest.raises(MXNetError, match="data_names a list or tuple of str"):
        mx.mod.BucketingModule(lambda k: (gen(k)[0], "data", None), default_bucket_key=6)
    with pytest.raises(MXNetError, match="must return a Symbol"):
        mx.mod.BucketingModule(lambda k: (None, ("data",), None), default_bucket_key=6)
    with pytest.raises(ValueError, match="'date' is not found"):
        mx.mod.BucketingModule(lambda k: (gen(k)[0], ("date",), None), default_bucket_key=6)

    mod = mx.mod.BucketingModule(gen, default_bucket_key=6)
    with pytest.raises(MXNetError, match="call bind before switching bucket"):
        mod.switch_bucket(4, *_lm_batch_shapes(4))
    with pytest.raises(MXNetError, match="bind the module"):
        mod.forward(cases.lm_batch(mx, 4, 0))
    with pytest.raises(MXNetError, match="Empty BucketingModule"):
        mod.save_checkpoint("never", 0)
    with pytest.raises(MXNetError, match="shared_module is not supported"):
        mod.bind(*_lm_batch_shapes(6), shared_module=cases.lm_module(mx))
    mod.bind(*_lm_batch_shapes(6))
    with pytest.raises(MXNetError, match="init_params"):
        mod.switch_bucket(4, *_lm_batch_shapes(4))
    mod.init_params()
    with pytest.raises(MXNetError, match="data_shapes are needed"):
        mod.switch_bucket(4, None)

    # a bucket whose sym_gen result does not fit: named in the error
    def bad_gen(key):
        sym, data, label = gen(key)
        return (sym, ("tokens",) if key == 3 else data, label)
    mod = mx.mod.BucketingModule(bad_gen, default_bucket_key=6)
    mod.bind(*_lm_batch_shapes(6))
    mod.init_params()
    with pytest.raises(MXNetError, match="bucket 3: .*'tokens' is not found"):
        mod.forward(cases.lm_batch(mx, 3, 0))
    assert mod._curr_bucket_key == 6


def test_checkpoint_errors(tmp_path):
    def gen(key):
        data = mx.sym.var("data")
        return mx.sym.FullyConnected(data, num_hidden=2, name="fc"), ("data",), None
    mod = mx.mod.BucketingModule(gen, default_bucket_key="long")
    mod.bind([("data", (2, 3))])
    mod.init_params()
    with pytest.raises(MXNetError, match="bucket key 'long' is not an integer"):
        mod.save_checkpoint(str(tmp_path / "m"), 0)
    mod = mx.mod.BucketingModule(gen, default_bucket_key=8)
    mod.bind([("data", (2, 3))])
    mod.init_params()
    mod.save_checkpoint(str(tmp_path / "m"), 0)
    with pytest.raises(MXNetError, match="default_bucket_key 9 is not among the saved"):
        mx.mod.BucketingModule.load(str(tmp_path / "m"), 0, sym_gen=gen, default_bucket_key=9)
    with pytest.raises(MXNetError, match="sym_gen is required"):
        mx.mod.BucketingModule.load(str(tmp_path / "m"), 0, default_bucket_key=8)
    with pytest.raises(MXNetError, match="arg_params needs to be provided"):
        mx.mod.BucketingModule.load_dict({8: gen(8)[0]}, sym_gen=gen, default_bucket_key=8)


# --------------------------------------------------------------------------- SequentialModule
@pytest.mark.parametrize("name, wired", [("wired", True), ("named", False)])
def test_sequential_matches_mxnet(fixture_path, name, wired):
    ref = dict(np.load(fixture_path("module_family", "sequential.npz")))
    res = cases.run_sequential(mx, wired)
    _compare(res, ref, f"{name}/")
    # the same numbers as the one-Module network (MXNet's, and neogluon's)
    _compare(res, ref, "fused/")
    _compare(cases.run_fused(mx), ref, "fused/")


def test_sequential_input_grads_and_smaller_batch():
    act, out, hidden = cases.seq_parts(mx, True)
    first = mx.mod.Module(act, label_names=None)
    seq = mx.mod.SequentialModule()
    seq.add(first).add(mx.mod.Module(out, data_names=[hidden]), take_labels=True,
                       auto_wiring=True)
    seq.bind([("data", (4, 6))], [("softmax_label", (4,))], inputs_need_grad=True)
    seq.init_params()
    assert seq.label_shapes == [("softmax_label", (4,))]
    assert seq.output_shapes == [("softmax_output", (4, 3))]
    assert seq.data_names == ["data"] and seq.output_names == ["softmax_output"]
    batch = mx.io.DataBatch([mx.nd.array(cases.SEQ_X)], [mx.nd.array(cases.SEQ_Y)])
    seq.forward_backward(batch)
    # MXNet 1.9.1 asserts here (bind does not record inputs_need_grad)
    np.testing.assert_array_equal(seq.get_input_grads()[0].asnumpy(),
                                  first.get_input_grads()[0].asnumpy())
    # a smaller last batch (with its descriptions) re-shapes every module of the chain
    small = mx.io.DataBatch([mx.nd.array(cases.SEQ_X[:2])], [mx.nd.array(cases.SEQ_Y[:2])],
                            provide_data=[mx.io.DataDesc("data", (2, 6))],
                            provide_label=[mx.io.DataDesc("softmax_label", (2,))])
    seq.forward(small, is_train=False)
    assert seq.get_outputs()[0].shape == (2, 3)
    metric = mx.metric.Accuracy()
    seq.update_metric(metric, small.label)
    assert metric.num_inst == 2


def test_python_loss_module_matches_mxnet_and_softmax_output(fixture_path):
    ref = dict(np.load(fixture_path("module_family", "sequential.npz")))
    res = cases.run_python_loss(mx)
    _compare(res, ref, "pyloss/")
    # its gradient is SoftmaxOutput's: the same weight gradient as the symbolic loss
    data = mx.sym.var("data")
    sym = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=3, name="fc2"),
                               name="softmax")
    mod = mx.mod.Module(sym)
    x = cases.SEQ_X[:, :5]
    mod.bind([("data", x.shape)], [("softmax_label", (4,))])
    params = cases.seq_params(mx)
    mod.init_params(arg_params={k: params[k] for k in ("fc2_weight", "fc2_bias")})
    mod.forward_backward(mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(cases.SEQ_Y)]))
    np.testing.assert_allclose(mod._exec_group.execs[0].grad_dict["fc2_weight"].asnumpy(),
                               res["wgrad0"], rtol=1e-5, atol=1e-6)


def test_python_module_interface():
    class Double(mx.mod.PythonModule):
        def _compute_output_shapes(self):
            return [("double_output", self._data_shapes[0][1])]

        def forward(self, data_batch, is_train=None):
            self._out = data_batch.data[0] * 2

        def get_outputs(self, merge_multi_context=True):
            return [self._out]

    mod = Double(["data"], None, ["double_output"])
    mod.bind([("data", (2, 3))], for_training=False)
    mod.init_params()
    assert mod.binded and mod.params_initialized
    assert mod.get_params() == ({}, {})
    assert mod.output_shapes == [("double_output", (2, 3))]
    out = mod.predict(mx.nd.ones((2, 3)))
    np.testing.assert_array_equal(out.asnumpy(), 2 * np.ones((2, 3)))
    mod.update_metric(mx.metric.MSE(), None)  # no labels: nothing to evaluate


def test_sequential_and_python_module_errors():
    seq = mx.mod.SequentialModule()
    with pytest.raises(MXNetError, match="Attempting to bind an empty SequentialModule"):
        seq.bind([("data", (2, 3))])
    with pytest.raises(MXNetError, match='Unknown meta "take_label", a typo'):
        seq.add(mx.mod.PythonLossModule(), take_label=True)
    with pytest.raises(TypeError, match="BaseModule"):
        seq.add(mx.sym.var("x"))
    # two modules with a parameter of the same name
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    seq.add(mx.mod.Module(fc, label_names=None))
    seq.add(mx.mod.Module(fc, label_names=None), auto_wiring=True)
    seq.bind([("data", (2, 3))])
    with pytest.raises(MXNetError, match='Duplicated parameter names: name "fc_weight" in '
                                         'layer 1'):
        seq.init_params()
    # auto_wiring with the wrong number of inputs
    two = mx.sym.var("a") + mx.sym.var("b")
    seq = mx.mod.SequentialModule()
    seq.add(mx.mod.Module(fc, label_names=None))
    seq.add(mx.mod.Module(two, data_names=["a", "b"], label_names=None), auto_wiring=True)
    with pytest.raises(MXNetError, match=r"auto_wiring layer 1 .* has 2 data inputs"):
        seq.bind([("data", (2, 3))])

    loss = mx.mod.PythonLossModule()
    with pytest.raises(MXNetError, match="data names are \\['data'\\]"):
        loss.bind([("scores", (2, 3))], [("softmax_label", (2,))])
    with pytest.raises(MXNetError, match="only support write gradient"):
        loss.bind([("data", (2, 3))], [("softmax_label", (2,))], grad_req="add")
    loss.bind([("data", (2, 3))], [("softmax_label", (2,))])
    loss.forward(mx.io.DataBatch([mx.nd.ones((2, 3))], [mx.nd.zeros((2,))]))
    with pytest.raises(NotImplementedError, match="grad_func"):
        loss.backward()
    with pytest.raises(MXNetError, match="out_grads should be None"):
        loss.backward(mx.nd.ones((2, 3)))
    with pytest.raises(MXNetError, match="training needs the batch's labels"):
        loss.forward(mx.io.DataBatch([mx.nd.ones((2, 3))]), is_train=True)
    with pytest.raises(MXNetError, match="one data and one label name"):
        mx.mod.PythonLossModule(data_names=("a", "b"))


# --------------------------------------------------------------------------- AMP
def _trained_lm():
    mod = cases.lm_module(mx)
    cases.run_bucketing(mx, mod)
    return mod


def test_convert_bucketing_module_matches_mxnet(fixture_path):
    ref = dict(np.load(fixture_path("module_family", "amp.npz")))
    with open(fixture_path("module_family", "amp.json")) as f:
        meta = json.load(f)
    amp._uninstall()
    mod = _trained_lm()
    conv = amp.convert_bucketing_module(mod, target_dtype="bfloat16")
    assert isinstance(conv, mx.mod.BucketingModule) and conv is not mod
    assert sorted(conv._buckets) == meta["buckets"]
    conv.bind(*_lm_batch_shapes(cases.DEFAULT_KEY), for_training=False)
    got = cases.lm_eval(mx, conv)
    # bfloat16 products (8 significant bits) on probabilities below 1
    np.testing.assert_allclose(got, ref["eval"], rtol=0, atol=2e-3)
    assert np.abs(got - cases.lm_eval(mx, mod)).max() > 0  # it really ran in bfloat16
    # a bucket first seen after the conversion gets a converted symbol too
    conv.switch_bucket(5, *_lm_batch_shapes(5))
    assert any("amp_cast_bfloat16" in n
               for n in conv.symbol.get_internals().list_outputs())

    opt = amp.convert_bucketing_module(mod, target_dtype="bfloat16", cast_optional_params=True)
    got_dtypes = {k: dtype_name(v._t.dtype) for k, v in opt._curr_module._arg_params.items()}
    assert got_dtypes == meta["optional_param_dtypes"]


def test_convert_bucketing_module_errors():
    with pytest.raises(AssertionError, match="bucketing module"):
        amp.convert_bucketing_module(mx.mod.Module(mx.sym.var("data"), label_names=None))
    mod = mx.mod.BucketingModule(cases.lm_sym_gen(mx), default_bucket_key=6)
    with pytest.raises(AssertionError, match="should not be empty"):
        amp.convert_bucketing_module(mod)
    mod.bind(*_lm_batch_shapes(6))
    with pytest.raises(AssertionError, match="params should be initialized"):
        amp.convert_bucketing_module(mod)
