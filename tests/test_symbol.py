"""mx.sym: graphs, queries, inference, MXNet's JSON format and the Block<->Symbol glue.

Fixtures in tests/fixtures/symbol/ come from MXNet 1.9.1 (tools/gen_symbol_fixtures.py).
"""
import json
import os
import warnings

import numpy as np
import pytest

import neogluon as mx
from neogluon import gluon, nd
from neogluon.base import MXNetError
from neogluon.gluon import nn

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "symbol")


def _facts():
    with open(os.path.join(FIX, "facts.json")) as f:
        return json.load(f)["graph"]


def _graph():
    x = mx.sym.var("x")
    fc = mx.sym.FullyConnected(x, num_hidden=4, name="fc")
    bn = mx.sym.BatchNorm(fc, name="bn")
    act = mx.sym.Activation(bn, act_type="relu", name="act")
    sp = mx.sym.split(act, num_outputs=2, axis=1, name="sp")
    with mx.name.NameManager():
        return mx.sym.Group([sp[0] + 1, sp[1] * sp[0], mx.sym.sum(act, axis=1, name="s")])


def test_queries_match_mxnet():
    f = _facts()
    out = _graph()
    assert out.list_arguments() == f["list_arguments"]
    assert out.list_auxiliary_states() == f["list_auxiliary_states"]
    assert out.list_inputs() == f["list_inputs"]
    assert out.list_outputs() == f["list_outputs"]
    assert out.get_internals().list_outputs() == f["internals"]
    shapes = out.infer_shape(x=(5, 3))
    assert [list(map(list, s)) for s in shapes] == f["infer_shape"]
    types = out.infer_type(x="float64")
    assert [[np.dtype(t).name for t in ts] for ts in types] == f["infer_type"]


def test_mxnet_json_loads_and_evaluates_like_the_built_graph():
    f = _facts()
    loaded = mx.sym.load_json(f["json"])
    built = _graph()
    assert loaded.list_outputs() == f["list_outputs"]
    assert loaded.list_auxiliary_states() == f["list_auxiliary_states"]
    rng = np.random.RandomState(0)
    shapes = dict(zip(built.list_inputs(), [(5, 3), (4, 3), (4,), (4,), (4,), (4,), (4,)]))
    args = {k: nd.array(rng.rand(*s) + 0.5) for k, s in shapes.items()}
    for a, b in zip(loaded.eval(**args), built.eval(**args)):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-6)
    # and back to JSON: same structure
    again = mx.sym.load_json(loaded.tojson())
    assert again.list_outputs() == loaded.list_outputs()
    assert again.list_inputs() == loaded.list_inputs()


def test_arithmetic_matches_nd():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    exprs = [a + b, a - b, a * b, a / b, a + 2, 2 - a, a * 3, 3 / a, a ** 2, 2 ** a, -a,
             mx.sym.maximum(a, 0.5), abs(a - 1), (a > b), a.sum(axis=0), a.reshape((3, 2)),
             mx.sym.dot(a, mx.sym.transpose(b))]
    x = nd.array([[1.0, 2.0, 3.0], [0.5, 1.5, 2.5]])
    y = nd.array([[2.0, 1.0, 0.5], [1.0, 3.0, 2.0]])
    want = [x + y, x - y, x * y, x / y, x + 2, 2 - x, x * 3, 3 / x, x ** 2, 2 ** x, -x,
            nd.maximum(x, 0.5), nd.abs(x - 1), x > y, x.sum(axis=0), x.reshape((3, 2)),
            nd.dot(x, y.T)]
    for e, w in zip(exprs, want):
        got = e.eval(a=x, b=y)[0]
        np.testing.assert_allclose(got.asnumpy(), w.asnumpy(), rtol=1e-6)
        # the same through MXNet's JSON
        got2 = mx.sym.load_json(e.tojson()).eval(a=x, b=y)[0]
        np.testing.assert_allclose(got2.asnumpy(), w.asnumpy(), rtol=1e-6)


def test_scalar_op_names_follow_mxnet():
    a = mx.sym.var("a")
    with mx.name.NameManager():
        assert (a + 1).name == "_plusscalar0"
        assert (1 - a).name == "_rminusscalar0"
        assert (a * a).name == "_mul0"
    node = json.loads((1 - a).tojson())["nodes"][1]
    assert node["op"] == "_rminus_scalar" and node["attrs"] == {"scalar": "1"}


def test_variable_attributes():
    v = mx.sym.var("w", shape=(2, 3), dtype="float64", lr_mult=2.0, wd_mult=0.5,
                   init=mx.init.Normal(0.1), stype="row_sparse", attr={"foo": "bar"})
    a = v.list_attr()
    assert a["__shape__"] == "(2, 3)"
    assert a["__dtype__"] == "1"
    assert a["__lr_mult__"] == "2.0" and a["__wd_mult__"] == "0.5"
    assert json.loads(a["__init__"]) == ["normal", {"sigma": 0.1}]
    assert a["__storage_type__"] == "1" and a["foo"] == "bar"
    assert v.attr("__shape__") == "(2, 3)" and v.attr("missing") is None
    assert v.attr_dict() == {"w": a}
    with pytest.raises(ValueError):
        mx.sym.var("w", foo=1)
    assert mx.sym.Variable is mx.sym.var


def test_indexing_children_and_groups():
    x = mx.sym.var("x")
    sp = mx.sym.split(x, num_outputs=3, axis=1, name="sp")
    assert len(sp) == 3 and sp.name == "sp"
    assert sp[1].list_outputs() == ["sp_output1"]
    assert sp["sp_output2"].list_outputs() == ["sp_output2"]
    with pytest.raises(IndexError):
        sp[3]
    y = mx.sym.elemwise_add(x, mx.sym.var("z"), name="add")
    assert y.get_children().list_outputs() == ["x", "z"]
    assert x.get_children() is None
    g = mx.sym.Group([x, y])
    assert g.list_outputs() == ["x", "add_output"] and g.name is None
    assert len(list(sp)) == 3


def test_infer_shape_incomplete_and_partial():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    y = mx.sym.broadcast_add(a, b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert y.infer_shape(a=(2, 3)) == (None, None, None)
    assert y.infer_shape_partial(a=(2, 3)) == ([(2, 3), ()], [()], [])
    assert mx.sym.elemwise_add(a, b).infer_shape(a=(2, 3)) == ([(2, 3), (2, 3)], [(2, 3)], [])
    fc = mx.sym.FullyConnected(a, num_hidden=5, flatten=False, name="fc")
    assert fc.infer_shape(a=(2, 4, 3))[0] == [(2, 4, 3), (5, 3), (5,)]
    conv = mx.sym.Convolution(a, kernel=(3, 3), num_filter=6, num_group=2, name="c")
    assert conv.infer_shape(a=(1, 4, 8, 8)) == ([(1, 4, 8, 8), (6, 2, 3, 3), (6,)],
                                               [(1, 6, 6, 6)], [])
    with pytest.raises(MXNetError):
        mx.sym.var("w", shape=(5, 7)).__add__(fc).infer_shape(a=(2, 4, 3))


def test_bind_a_variable():
    # (executors are tested in tests/test_executor.py)
    exe = mx.sym.var("x").simple_bind(mx.cpu(), x=(2,))
    np.testing.assert_array_equal(exe.forward(x=mx.nd.array([1, 2]))[0].asnumpy(), [1, 2])
    with pytest.raises(ValueError, match="key `x` is missing"):
        mx.sym.var("x").bind(mx.cpu(), {})


def test_save_load_file(tmp_path):
    s = _graph()
    fname = str(tmp_path / "g-symbol.json")
    s.save(fname)
    t = mx.sym.load(fname)
    assert t.list_outputs() == s.list_outputs()
    assert t.tojson() == s.tojson()


# ---------------------------------------------------------------- Block <-> Symbol
def test_block_on_symbols_names_like_mxnet():
    model = nn.Dense(128, activation="tanh", in_units=10, flatten=False, prefix="test_")
    out = model(mx.sym.var("data"))
    assert out.list_outputs() == ["test_tanh_fwd_output"]
    assert out.list_arguments() == ["data", "test_weight", "test_bias"]
    args, outs, _ = out.infer_shape(data=(2, 3, 10))
    assert outs == [(2, 3, 128)]
    net = nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(nn.Conv2D(4, 3), nn.BatchNorm(), nn.Dense(2))
    y = net(mx.sym.var("data"))
    assert y.list_auxiliary_states() == ["net_batchnorm0_running_mean",
                                         "net_batchnorm0_running_var"]
    assert "net_conv0_fwd_output" in y.get_internals().list_outputs()
    args, outs, aux = y.infer_shape(data=(1, 3, 6, 6))
    assert outs == [(1, 2)] and aux == [(4,), (4,)]


def test_mixing_symbols_and_ndarrays_raises():
    class Add(gluon.HybridBlock):
        def hybrid_forward(self, F, a, b):
            return a + b
    with pytest.raises(ValueError):
        Add()(nd.ones((2,)), mx.sym.var("a"))
    with pytest.raises(ValueError):
        Add()(mx.sym.var("a"), nd.ones((2,)))
    assert isinstance(Add()(mx.sym.var("a"), mx.sym.var("b")), mx.sym.Symbol)


def test_mxnet_exported_model_imports_and_runs():
    net = gluon.SymbolBlock.imports(os.path.join(FIX, "small_cnn-symbol.json"), ["data"],
                                    os.path.join(FIX, "small_cnn-0002.params"))
    x = nd.array(np.load(os.path.join(FIX, "small_cnn-input.npy")))
    want = np.load(os.path.join(FIX, "small_cnn-output.npy"))
    np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-5, atol=1e-6)
    lines = str(net).splitlines()
    assert lines[0] == "SymbolBlock(" and lines[2] == ")"
    # hybridized inside another block it still runs (captured through F)

    class Wrap(gluon.HybridBlock):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def hybrid_forward(self, F, x):
            return self.inner(x) * 2
    w = Wrap(net)
    w.hybridize()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(w(x).asnumpy(), want * 2, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(w(x).asnumpy(), want * 2, rtol=1e-5, atol=1e-6)


def test_export_writes_mxnet_format_and_roundtrips(tmp_path):
    net = nn.HybridSequential(prefix="m_")
    with net.name_scope():
        net.add(nn.Conv2D(3, 3, padding=1, activation="relu"), nn.BatchNorm(),
                nn.GlobalAvgPool2D(), nn.Flatten(), nn.Dense(5))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = nd.array(np.random.RandomState(1).randn(2, 3, 5, 5))
    y = net(x)
    prefix = str(tmp_path / "m")
    net.export(prefix, epoch=3)
    with open(prefix + "-symbol.json") as f:
        desc = json.load(f)
    ops = [n["op"] for n in desc["nodes"] if n["op"] != "null"]
    assert ops == ["Convolution", "Activation", "BatchNorm", "Pooling", "Flatten",
                   "FullyConnected"]
    assert desc["attrs"]["mxnet_version"] == ["int", 10901]
    keys = set(nd.load(prefix + "-0003.params"))
    assert "aux:m_batchnorm0_running_mean" in keys and "arg:m_dense0_weight" in keys
    back = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0003.params")
    np.testing.assert_allclose(back(x).asnumpy(), y.asnumpy(), rtol=1e-6)


def test_symbolblock_from_internals_with_deferred_shapes():
    backbone = nn.HybridSequential(prefix="bb_")
    with backbone.name_scope():
        backbone.add(nn.Dense(6, activation="relu"), nn.Dense(3))
    data = mx.sym.var("data")
    internals = backbone(data).get_internals()
    outs = [internals["bb_dense0_relu_fwd_output"], internals["bb_dense1_fwd_output"]]
    sb = gluon.SymbolBlock(outs, data, params=backbone.collect_params())
    assert set(sb.collect_params().keys()) == set(backbone.collect_params().keys())
    sb.initialize()
    r = sb(nd.ones((2, 4)))
    assert [a.shape for a in r] == [(2, 6), (2, 3)]
    assert backbone.collect_params()["bb_dense0_weight"].shape == (6, 4)
    np.testing.assert_allclose(backbone(nd.ones((2, 4))).asnumpy(), r[1].asnumpy(), rtol=1e-6)
    # on symbols, a SymbolBlock composes its graph onto the inputs
    composed = sb(mx.sym.var("in"))
    assert len(composed) == 2 and composed[0].list_arguments()[0] == "in"
    with pytest.raises(AssertionError):
        gluon.SymbolBlock(mx.sym.dot(data, mx.sym.var("w", stype="row_sparse")), data)


def test_custom_block_infers_parameter_shapes_symbolically():
    class Scale(gluon.HybridBlock):
        def __init__(self, **kw):
            super().__init__(**kw)
            with self.name_scope():
                self.w = self.params.get("w", shape=(0, 0), allow_deferred_init=True)

        def hybrid_forward(self, F, x, w):
            return F.elemwise_mul(x, w)
    b = Scale()
    b.initialize(mx.init.One())
    assert b(nd.ones((2, 3))).shape == (2, 3)
    assert b.w.shape == (2, 3)


def test_operator_keywords_lr_mult_become_hidden_attributes():
    data = mx.sym.var("data")
    fc1 = mx.sym.FullyConnected(data=data, bias=mx.sym.var("fc1_bias", lr_mult=1.0),
                                name="fc1", num_hidden=10, lr_mult=0)
    d = fc1.attr_dict()
    # (MXNet also lists each hidden key under its plain name; the implicit fc1_weight gets
    # all of the operator's attributes, num_hidden included, as MXNet 1.9.1's does)
    assert d["fc1_weight"] == {"num_hidden": "10", "__lr_mult__": "0", "lr_mult": "0"}
    assert d["fc1_bias"] == {"__lr_mult__": "1.0", "lr_mult": "1.0"}
    assert d["fc1"] == {"num_hidden": "10", "__lr_mult__": "0", "lr_mult": "0"}


def test_missing_inputs_become_variables_and_cached_op_runs():
    with mx.name.NameManager():
        sym = mx.sym.Convolution(kernel=(3, 3), num_filter=10) + 2
    assert sym.list_inputs() == ["convolution0_data", "convolution0_weight",
                                 "convolution0_bias"]
    op = nd.CachedOp(sym)
    data, weight, bias = nd.ones((3, 4, 10, 10)), nd.ones((10, 4, 3, 3)), nd.ones((10,))
    o1 = op(data, weight, bias)
    np.testing.assert_allclose(o1.asnumpy(), np.full((3, 10, 8, 8), 36 + 1 + 2.0))
    o2 = nd.zeros(o1.shape)
    op(data, weight, bias * 2, out=o2)
    np.testing.assert_allclose(o2.asnumpy(), o1.asnumpy() + 1)
    weight.attach_grad()
    with mx.autograd.record():
        (op(data, weight, bias) * 2).backward()
    assert weight.grad.abs().sum().asscalar() > 0


def test_unknown_batch_dimension_flows_back_into_zeros():
    # A recurrent cell's begin state is zeros((0, hidden)): the batch size comes back from
    # the element-wise sum with the input's projection and through FullyConnected's data.
    x = mx.sym.var("x")
    h = mx.sym.zeros((0, 4))
    i2h = mx.sym.FullyConnected(x, num_hidden=4, name="i2h")
    h2h = mx.sym.FullyConnected(h, num_hidden=4, name="h2h")
    out = mx.sym.tanh(i2h + h2h)
    args, outs, _ = out.infer_shape(x=(3, 5))
    assert outs == [(3, 4)]
    assert dict(zip(out.list_arguments(), args))["h2h_weight"] == (4, 4)
    vals = {"x": nd.ones((3, 5)), "i2h_weight": nd.ones((4, 5)), "i2h_bias": nd.zeros((4,)),
            "h2h_weight": nd.ones((4, 4)), "h2h_bias": nd.zeros((4,))}
    np.testing.assert_allclose(out.eval(**vals)[0].asnumpy(), np.tanh(np.full((3, 4), 5.0)),
                               rtol=1e-6)


@pytest.mark.parametrize("name", ["L2Loss", "L1Loss", "SoftmaxCrossEntropyLoss",
                                  "SigmoidBinaryCrossEntropyLoss", "HuberLoss", "HingeLoss"])
def test_losses_on_symbols_evaluate_like_ndarrays(name):
    loss = getattr(gluon.loss, name)()
    rng = np.random.RandomState(2)
    x = nd.array(rng.rand(4, 3))
    y = nd.array(rng.randint(0, 3, (4,)) if name.startswith("Softmax") else rng.rand(4, 3))
    out = loss(mx.sym.var("pred"), mx.sym.var("label"))
    assert out.infer_shape(pred=(4, 3), label=y.shape)[1] == [(4,)]
    np.testing.assert_allclose(out.eval(pred=x, label=y)[0].asnumpy(), loss(x, y).asnumpy(),
                               rtol=1e-6)


@pytest.mark.parametrize("name", ["conv", "norms", "acts", "emb", "conv1d"])
def test_mxnet_layer_zoo_exports_import_and_match(name, tmp_path):
    prefix = os.path.join(FIX, f"zoo_{name}")
    net = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    x = nd.array(np.load(prefix + "-input.npy"))
    want = np.load(prefix + "-output.npy")
    with mx.autograd.predict_mode():
        np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-5, atol=1e-6)
    # the graph survives neogluon's JSON writer and the block exports again
    sym = mx.sym.load(prefix + "-symbol.json")
    assert mx.sym.load_json(sym.tojson()).list_inputs() == sym.list_inputs()
    net.hybridize()
    with mx.autograd.predict_mode():
        net(x)
    net.export(str(tmp_path / "again"))
    back = gluon.SymbolBlock.imports(str(tmp_path / "again-symbol.json"), ["data"],
                                     str(tmp_path / "again-0000.params"))
    with mx.autograd.predict_mode():
        np.testing.assert_allclose(back(x).asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_hidden_attribute_keys_are_also_listed_plain():
    v = mx.sym.var("x", lr_mult=2.0, wd_mult=0.5, attr={"__ctx_group__": "dev1", "foo": "bar"})
    assert sorted(v.list_attr().items()) == [
        ("__ctx_group__", "dev1"), ("__lr_mult__", "2.0"), ("__wd_mult__", "0.5"),
        ("ctx_group", "dev1"), ("foo", "bar"), ("lr_mult", "2.0"), ("wd_mult", "0.5")]
    assert v.attr("lr_mult") == "2.0" and v.attr("ctx_group") == "dev1"
    assert v.attr_dict()["x"]["wd_mult"] == "0.5"
    node = json.loads(v.tojson())["nodes"][0]
    assert "lr_mult" not in node["attrs"] and node["attrs"]["__lr_mult__"] == "2.0"
