"""Block / HybridBlock / Sequential against MXNet 1.9.1: names, files, hybridize, export."""
import os
import warnings

import numpy as np
import pytest

import neogluon as mx
from neogluon import autograd, gluon, nd
from neogluon.gluon import nn

from gluon_fixture_utils import det, fixture_json, fixture_path, reset_names

FIX = fixture_json()
NAMING = FIX["naming"]
FILES = FIX["files"]


def _names_and_shapes(block):
    return [[k, list(v.shape), str(np.dtype(v.dtype)), v.grad_req]
            for k, v in block.collect_params().items()]


# ------------------------------------------------------------------ naming
def _naming_scenarios():
    """The same constructions, in the same order, as tools/gen_gluon_fixtures.py."""
    res = {}
    reset_names()
    net = nn.Sequential()
    with net.name_scope():
        net.add(nn.Dense(256, activation="relu"))
        net.add(nn.Dense(256, activation="relu"))
        net.add(nn.Dense(10))
    net.initialize()
    net(nd.ones((2, 7)))
    res["seq_mlp"] = {"prefix": net.prefix, "params": _names_and_shapes(net),
                      "children": [c.name for c in net._children.values()],
                      "act_names": [c.act.name if c.act else None
                                    for c in net._children.values()],
                      "repr": repr(net)}
    h = nn.HybridSequential()
    with h.name_scope():
        h.add(nn.Conv2D(6, kernel_size=3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
              nn.MaxPool2D(), nn.Conv2D(8, 3, in_channels=6, use_bias=False), nn.Flatten(),
              nn.Dense(4, in_units=8 * 2 * 2), nn.Dropout(0.5))
    h.initialize()
    h(nd.ones((2, 3, 8, 8)))
    res["hybrid_cnn"] = {"prefix": h.prefix, "params": _names_and_shapes(h),
                         "children": [c.name for c in h._children.values()], "repr": repr(h)}
    d1 = nn.Dense(3)
    d2 = nn.Dense(3)
    c1 = nn.Conv2D(2, 3)
    h2 = nn.HybridSequential()
    with h2.name_scope():
        h2.add(nn.Conv2D(2, 3))
    res["global_counters"] = [d1.name, d2.name, c1.name, h2.name,
                              list(h2.collect_params().keys())]

    class Model(gluon.Block):
        def __init__(self, **kwargs):
            super(Model, self).__init__(**kwargs)
            with self.name_scope():
                self.dense0 = nn.Dense(20)
                self.dense1 = nn.Dense(20)
                self.inner = nn.HybridSequential()
                with self.inner.name_scope():
                    self.inner.add(nn.Dense(5), nn.BatchNorm())

        def forward(self, x):
            return self.inner(nd.relu(self.dense1(nd.relu(self.dense0(x)))))

    m = Model()
    m2 = Model(prefix="custom_")
    res["custom_block"] = {
        "name": m.name, "params": list(m.collect_params().keys()),
        "name2": m2.name, "params2": list(m2.collect_params().keys()),
        "select": list(m.collect_params(".*weight|.*gamma").keys()),
        "select2": list(m.collect_params("model0_dense0_weight|.*bias").keys()),
        "structural": sorted(m._collect_params_with_prefix().keys())}
    dense0 = nn.Dense(20, in_units=10)
    dense1 = nn.Dense(20, in_units=10, params=dense0.collect_params())
    res["sharing"] = {"d0": dense0.name, "d1": dense1.name,
                      "d1_params": list(dense1.collect_params().keys()),
                      "same": dense0.weight is dense1.weight}
    pd = gluon.ParameterDict("pre_")
    w = pd.get("weight", shape=(2, 3))
    c = pd.get_constant("const", [[1, 2], [3, 4]])
    res["paramdict_repr"] = repr(pd)
    res["param_repr"] = [repr(w), repr(c), repr(gluon.Parameter("x", shape=4, dtype="float16"))]
    s = nn.HybridSequential(prefix="s_")
    with s.name_scope():
        s.add(nn.Dense(2), nn.Dense(3), nn.Dense(4))
    sl = s[1:]
    res["slice"] = {"type": type(sl).__name__, "len": len(sl), "prefix": sl.prefix,
                    "children": [b.name for b in sl._children.values()]}
    import contextlib
    import io
    reset_names()
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(4, in_units=3, activation="relu"), nn.Dense(2, in_units=4),
                nn.BatchNorm(in_channels=2))
    net.initialize()
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        net.summary(nd.ones((5, 3)))
    res["summary"] = buf.getvalue()
    return res


@pytest.fixture(scope="module")
def naming():
    return _naming_scenarios()


@pytest.mark.parametrize("key", sorted(NAMING))
def test_naming_matches_mxnet(naming, key):
    assert naming[key] == NAMING[key]


def test_sequential_indexing_and_len():
    net = nn.Sequential()
    a, b, c = nn.Dense(1), nn.Dense(2), nn.Dense(3)
    net.add(a, b, c)
    assert len(net) == 3 and net[1] is b and net[-1] is c
    sub = net[:2]
    assert type(sub) is nn.Sequential and len(sub) == 2 and sub[0] is a


# ------------------------------------------------------------------ registration rules
def test_child_registration_rules():
    class B(gluon.Block):
        def __init__(self):
            super().__init__()
            self.d = nn.Dense(2)
            self.w = self.params.get("w", shape=(2,))
            self.blocks = [nn.Dense(3)]

    b = B()
    assert list(b._children) == ["d"] and list(b._reg_params) == ["w"]
    with pytest.raises(TypeError, match="Changing attribute type for d"):
        b.d = 3
    with pytest.raises(AssertionError, match="Overriding Parameter attribute w"):
        b.w = gluon.Parameter("other", shape=(1,))
    with pytest.warns(UserWarning, match="unregistered container with Blocks"):
        b.collect_params()
    with pytest.raises(ValueError, match="Children of HybridBlock must also be HybridBlock"):
        nn.HybridSequential().add(nn.Sequential())
    hb = nn.HybridSequential()
    with pytest.raises(ValueError, match="must also be HybridBlock"):
        hb.blk = nn.Lambda("tanh")


def test_register_child_and_apply_and_params():
    net = nn.HybridSequential(prefix="n_")
    d = nn.Dense(2, prefix="x_")
    net.register_child(d)
    assert net._children["0"] is d
    seen = []
    net.apply(lambda blk: seen.append(blk.name))
    assert seen == ["x", "n"]
    assert list(net.params.keys()) == []
    assert list(net.collect_params().keys()) == ["x_weight", "x_bias"]


def test_hooks_and_detach():
    d = nn.Dense(2, in_units=3)
    d.initialize()
    calls = []
    h1 = d.register_forward_pre_hook(lambda blk, inp: calls.append(("pre", inp[0].shape)))
    h2 = d.register_forward_hook(lambda blk, inp, out: calls.append(("post", out.shape)))
    d(nd.ones((4, 3)))
    assert calls == [("pre", (4, 3)), ("post", (4, 2))]
    h1.detach()
    with h2:
        pass
    d(nd.ones((1, 3)))
    assert len(calls) == 2


def test_summary_refuses_hybridized():
    net = nn.HybridSequential()
    net.add(nn.Dense(4, in_units=3))
    net.initialize()
    net.hybridize()
    with pytest.raises(AssertionError, match="must not be hybridized"):
        net.summary(nd.ones((5, 3)))


def test_sequential_hybridize_warns():
    net = nn.Sequential()
    net.add(nn.Dense(2), nn.Dense(3))
    with pytest.warns(UserWarning, match="Consider using HybridSequential"):
        net.hybridize()


def test_cast_block():
    net = nn.HybridSequential()
    net.add(nn.Dense(2, in_units=3), nn.BatchNorm(in_channels=2))
    net.initialize()
    net.cast("float64")
    assert net[0].weight.data().dtype == np.float64
    assert net[1].gamma.dtype == "float64"
    y = net(nd.ones((2, 3), dtype="float64"))
    assert y.dtype == np.float64
    net.cast("float16")
    assert net[0].weight.dtype == "float16" and net[1].gamma.dtype == "float32"


# ------------------------------------------------------------------ save / load
def _mlp():
    reset_names()
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(4, in_units=3, activation="relu"), nn.BatchNorm(in_channels=4),
                nn.Dense(2, in_units=4))
    return net


def _expected_mlp_values(net):
    out = {}
    for j, p in enumerate(net.collect_params().values()):
        v = det(p.shape, 50 + j)
        if "running_var" in p.name:
            v = np.abs(v) + 0.5
        out[p.name] = v
    return out


def test_load_mxnet_save_parameters_file():
    net = _mlp()
    exp = _expected_mlp_values(net)
    net.load_parameters(fixture_path("mlp.params"))
    for p in net.collect_params().values():
        np.testing.assert_array_equal(p.data().asnumpy(), exp[p.name])
    io = np.load(fixture_path("mlp_io.npz"))
    with autograd.predict_mode():
        np.testing.assert_allclose(net(nd.array(io["x"])).asnumpy(), io["y"], rtol=1e-5,
                                   atol=1e-6)


def test_load_mxnet_full_name_files():
    net = _mlp()
    exp = _expected_mlp_values(net)
    net.collect_params().load(fixture_path("mlp_full.params"))
    for p in net.collect_params().values():
        np.testing.assert_array_equal(p.data().asnumpy(), exp[p.name])
    net2 = _mlp()
    with pytest.warns(UserWarning, match="load_params is deprecated"):
        net2.load_params(fixture_path("mlp_strip.params"))
    for p in net2.collect_params().values():
        np.testing.assert_array_equal(p.data().asnumpy(), exp[p.name])
    # the export file has arg:/aux: prefixes
    net3 = _mlp()
    net3.collect_params().load(fixture_path("mlp_export-0003.params"))
    for p in net3.collect_params().values():
        np.testing.assert_array_equal(p.data().asnumpy(), exp[p.name])


def test_saved_keys_match_mxnet(tmp_path):
    net = _mlp()
    net.initialize()
    net.save_parameters(str(tmp_path / "a.params"))
    assert sorted(nd.load(str(tmp_path / "a.params"))) == FILES["mlp_keys"]
    net.collect_params().save(str(tmp_path / "b.params"))
    assert sorted(nd.load(str(tmp_path / "b.params"))) == FILES["mlp_full_keys"]
    with pytest.warns(UserWarning, match="save_params is deprecated"):
        net.save_params(str(tmp_path / "c.params"))
    assert sorted(nd.load(str(tmp_path / "c.params"))) == FILES["mlp_strip_keys"]
    net.hybridize()
    with autograd.predict_mode():
        net(nd.ones((2, 3)))
    net.export(str(tmp_path / "m"), epoch=3)
    assert sorted(nd.load(str(tmp_path / "m-0003.params"))) == FILES["export_keys"]
    assert os.path.exists(str(tmp_path / "m-symbol.json"))


def test_deduplicate_keys_match_mxnet(tmp_path):
    reset_names()

    class Shared(gluon.HybridBlock):
        def __init__(self, **kw):
            super().__init__(**kw)
            with self.name_scope():
                self.a = nn.Dense(3, in_units=3)
                self.b = nn.Dense(3, in_units=3, params=self.a.params)

        def hybrid_forward(self, F, x):
            return self.b(self.a(x))

    s = Shared()
    s.initialize()
    s.save_parameters(str(tmp_path / "d.params"), deduplicate=True)
    s.save_parameters(str(tmp_path / "f.params"))
    assert sorted(nd.load(str(tmp_path / "d.params"))) == FILES["shared_dedup_keys"]
    assert sorted(nd.load(str(tmp_path / "f.params"))) == FILES["shared_full_keys"]
    # a deduplicated file loads back (shared parameters found under one of their names)
    s2 = Shared()
    s2.load_parameters(str(tmp_path / "d.params"))
    np.testing.assert_array_equal(s2.a.weight.data().asnumpy(), s.a.weight.data().asnumpy())
    s3 = Shared()
    s3.load_parameters(fixture_path("shared_dedup.params"))


def test_roundtrip_and_failed_load_leaves_model_unchanged(tmp_path):
    net = _mlp()
    net.initialize()
    f = str(tmp_path / "x.params")
    net.save_parameters(f)
    other = _mlp()
    other.initialize()
    other.load_parameters(f)
    for p, q in zip(net.collect_params().values(), other.collect_params().values()):
        np.testing.assert_array_equal(p.data().asnumpy(), q.data().asnumpy())
    # a file with one wrong shape: error, and nothing changes
    bad = {k: v for k, v in nd.load(f).items()}
    bad["2.weight"] = nd.zeros((2, 5))
    bad["0.weight"] = nd.ones((4, 3)) * 9
    nd.save(str(tmp_path / "bad.params"), bad)
    before = {k: v.data().asnumpy().copy() for k, v in other.collect_params().items()}
    with pytest.raises(AssertionError, match="shape incompatible"):
        other.load_parameters(str(tmp_path / "bad.params"))
    for k, v in other.collect_params().items():
        np.testing.assert_array_equal(v.data().asnumpy(), before[k])
    # missing and extra parameters
    part = {k: v for k, v in nd.load(f).items() if not k.startswith("2.")}
    nd.save(str(tmp_path / "part.params"), part)
    with pytest.raises(AssertionError, match="is missing in file"):
        other.load_parameters(str(tmp_path / "part.params"))
    other.load_parameters(str(tmp_path / "part.params"), allow_missing=True)
    extra = dict(nd.load(f))
    extra["9.weight"] = nd.ones((1,))
    nd.save(str(tmp_path / "extra.params"), extra)
    with pytest.raises(ValueError, match="is not present in ParameterDict"):
        other.load_parameters(str(tmp_path / "extra.params"))
    other.load_parameters(str(tmp_path / "extra.params"), ignore_extra=True)


def test_load_dtype_casting(tmp_path):
    net = _mlp()
    net.initialize()
    f = str(tmp_path / "x.params")
    net.save_parameters(f)
    n2 = _mlp()
    n2.cast("float64")
    n2.initialize()
    with pytest.raises(AssertionError, match="dtype incompatible"):
        n2.load_parameters(f)
    n2.load_parameters(f, cast_dtype=True)
    assert n2[0].weight.data().dtype == np.float64
    n3 = _mlp()
    n3.cast("float64")
    n3.load_parameters(f, cast_dtype=True, dtype_source="saved")
    assert n3[0].weight.data().dtype == np.float32


def test_load_into_deferred_and_uninitialised(tmp_path):
    net = _mlp()
    net.initialize()
    f = str(tmp_path / "x.params")
    net.save_parameters(f)
    reset_names()
    lazy = nn.HybridSequential()
    with lazy.name_scope():
        lazy.add(nn.Dense(4, activation="relu"), nn.BatchNorm(), nn.Dense(2))
    lazy.load_parameters(f, ctx=mx.cpu())
    assert lazy[0].weight.shape == (4, 3)
    np.testing.assert_array_equal(lazy[0].weight.data().asnumpy(),
                                  net[0].weight.data().asnumpy())


# ------------------------------------------------------------------ hybridize
class _Custom(gluon.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.conv = nn.Conv2D(4, 3, padding=1)
            self.bn = nn.BatchNorm()
            self.dense = nn.Dense(3)
            self.scale = self.params.get("scale", shape=(1,), init=mx.init.Constant(0.5))

    def hybrid_forward(self, F, x, scale):
        y = F.relu(self.bn(self.conv(x)))
        y = F.Pooling(y, kernel=(2, 2), pool_type="avg", global_pool=True)
        y = self.dense(y.reshape((0, -1)))
        return F.broadcast_mul(y, scale) + 1.0, y.T


def _train_steps(net, xs, lr=0.1):
    outs = []
    params = list(net.collect_params().values())
    for x in xs:
        with autograd.record():
            a, b = net(x)
            loss = (a * a).sum() + b.sum()
        loss.backward()
        outs.append(a.asnumpy())
        for p in params:
            if p.grad_req != "null":
                p.data()[:] = p.data() - lr * p.grad()
    return outs, [p.data().asnumpy() for p in params]


def test_hybridize_same_numbers_and_gradients():
    xs = [nd.array(det((2, 3, 6, 6), i)) for i in range(3)]
    results = []
    for hyb in (False, True):
        mx.random.seed(1)
        reset_names()
        net = _Custom()
        net.initialize(mx.init.Xavier())
        if hyb:
            net.hybridize(static_alloc=True, static_shape=True)
        results.append(_train_steps(net, xs))
    (o1, p1), (o2, p2) = results
    for a, b in zip(o1 + p1, o2 + p2):
        np.testing.assert_array_equal(a, b)


def test_hybridize_replays_captured_graph_and_drops_it_on_change():
    net = nn.HybridSequential()
    net.add(nn.Dense(3, in_units=2))
    net.initialize()
    net.hybridize()
    x = nd.ones((4, 2))
    y1 = net(x)
    assert net._cached_graph
    calls = []
    net[0].register_forward_hook(lambda *a: calls.append(1))
    net(x)
    assert calls == []  # the replayed graph does not go through the child's __call__
    d2 = nn.Dense(5, in_units=3)
    d2.initialize()
    net.add(d2)
    assert not net._cached_graph
    y2 = net(x)
    assert y2.shape == (4, 5) and y1.shape == (4, 3)
    net.hybridize(False)
    assert net(x).shape == (4, 5)


def test_hybridize_falls_back_with_one_warning():
    class ReadsValues(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            if float(x.sum().asscalar()) > 0:
                return x * 2
            return x

    b = ReadsValues()
    b.hybridize()
    x = nd.ones((2, 2))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r1 = b(x)
        r2 = b(x)
        r3 = b(-x)
    msgs = [str(i.message) for i in w if "could not capture" in str(i.message)]
    assert len(msgs) == 1
    np.testing.assert_array_equal(r1.asnumpy(), 2 * x.asnumpy())
    np.testing.assert_array_equal(r2.asnumpy(), 2 * x.asnumpy())
    np.testing.assert_array_equal(r3.asnumpy(), -x.asnumpy())


def test_hybridize_new_shape_recaptures():
    net = nn.HybridSequential()
    net.add(nn.Dense(3), nn.Activation("relu"))
    net.initialize()
    net.hybridize()
    a = net(nd.ones((2, 5)))
    b = net(nd.ones((7, 5)))
    assert a.shape == (2, 3) and b.shape == (7, 3)
    np.testing.assert_allclose(a.asnumpy()[0], b.asnumpy()[0])


def test_export_and_imports_roundtrip(tmp_path):
    reset_names()
    net = _Custom()
    net.initialize(mx.init.Xavier())
    x = nd.array(det((2, 3, 6, 6), 0))
    with pytest.raises(RuntimeError, match="Please first call block.hybridize"):
        net.export(str(tmp_path / "m"))
    net.hybridize()
    with autograd.predict_mode():
        ya, yb = net(x)
    net.export(str(tmp_path / "m"), epoch=7)
    keys = sorted(nd.load(str(tmp_path / "m-0007.params")))
    assert "aux:_custom0_batchnorm0_running_mean" in keys
    assert "arg:_custom0_scale" in keys
    blk = gluon.SymbolBlock.imports(str(tmp_path / "m-symbol.json"), ["data"],
                                    str(tmp_path / "m-0007.params"))
    with autograd.predict_mode():
        za, zb = blk(x)
    np.testing.assert_array_equal(ya.asnumpy(), za.asnumpy())
    np.testing.assert_array_equal(yb.asnumpy(), zb.asnumpy())
    assert sorted(blk.collect_params().keys()) == sorted(k[4:] for k in keys)
    # an imported block trains: gradients reach its parameters
    with autograd.record():
        out = blk(x)[0].sum()
    out.backward()
    assert any(np.abs(p.grad().asnumpy()).sum() > 0 for p in blk.collect_params().values()
               if p.grad_req != "null")
    # MXNet 1.9.1's own export imports too, and gives MXNet's output
    mxblk = gluon.SymbolBlock.imports(fixture_path("mlp_export-symbol.json"), ["data"],
                                      fixture_path("mlp_export-0003.params"))
    io = np.load(fixture_path("mlp_io.npz"))
    with autograd.predict_mode():
        np.testing.assert_allclose(mxblk(nd.array(io["x"])).asnumpy(), io["y"], rtol=1e-5,
                                   atol=1e-6)


def test_hybridize_hook_warning():
    d = nn.Dense(2)
    d.register_forward_hook(lambda *a: None)
    with pytest.warns(UserWarning, match="while still having forward hook"):
        d.hybridize()


def test_block_on_two_contexts():
    d = nn.Dense(2, in_units=3)
    d.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    x0 = nd.ones((1, 3), ctx=mx.cpu(0))
    x1 = nd.ones((1, 3), ctx=mx.cpu(1))
    with autograd.record():
        y0 = d(x0)
        y1 = d(x1)
        (y0.sum() + 2 * y1.sum()).backward()
    g0, g1 = d.weight.list_grad()
    np.testing.assert_allclose(g0.asnumpy(), np.ones((2, 3)))
    np.testing.assert_allclose(g1.asnumpy(), 2 * np.ones((2, 3)))
    assert y1.context == mx.cpu(1)


def test_graph_survives_unrelated_changes_but_not_nested_ones():
    net = nn.HybridSequential()
    inner = nn.HybridSequential()
    inner.add(nn.Dense(3, in_units=2))
    net.add(inner)
    net.initialize()
    net.hybridize()
    x = nd.ones((4, 2))
    net(x)
    graph = net._cached_graph[1]
    other = nn.HybridSequential()
    other.add(nn.Dense(2))  # an unrelated block changes
    net(x)
    assert net._cached_graph[1] is graph
    extra = nn.Dense(5, in_units=3)
    extra.initialize()
    inner.add(extra)  # a grandchild list changes: the parent's graph must go
    assert net(x).shape == (4, 5)
    assert net._cached_graph[1] is not graph


def test_optimize_for_captures_now():
    net = nn.HybridSequential()
    net.add(nn.Dense(3, in_units=2))
    net.initialize()
    net.optimize_for(nd.ones((1, 2)))
    assert net._active and net._cached_graph
    with pytest.raises(mx.MXNetError, match="no subgraph backend"):
        net.optimize_for(nd.ones((1, 2)), backend="MKLDNN")


def test_hybridized_dropout_draws_like_imperative():
    outs = []
    for hyb in (False, True):
        net = nn.HybridSequential()
        net.add(nn.Dense(6, in_units=4), nn.Dropout(0.5))
        net.initialize(mx.init.One())
        if hyb:
            net.hybridize()
        mx.random.seed(7)
        with autograd.record():
            outs.append([net(nd.ones((3, 4))).asnumpy() for _ in range(3)])
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)


def test_custom_block_with_unknown_shape_names_the_parameter():
    class Scale(gluon.HybridBlock):
        def __init__(self):
            super().__init__(prefix="scale_")
            self.w = self.params.get("w", shape=(0,), allow_deferred_init=True)

        def hybrid_forward(self, F, x, w):
            return F.broadcast_mul(x, w)

    b = Scale()
    b.initialize()
    with pytest.raises(ValueError, match=r"scale_w \(0,\).*infer_shape"):
        b(nd.ones((2, 3)))

    class Scale2(Scale):
        def infer_shape(self, x):
            self.w.shape = (x.shape[1],)

    b2 = Scale2()
    b2.initialize(mx.init.One())
    np.testing.assert_array_equal(b2(nd.ones((2, 3))).asnumpy(), np.ones((2, 3)))


def test_load_parameters_on_two_contexts(tmp_path):
    net = _mlp()
    net.initialize()
    f = str(tmp_path / "x.params")
    net.save_parameters(f)
    other = _mlp()
    other.load_parameters(f, ctx=[mx.cpu(0), mx.cpu(1)])
    w = other[0].weight
    assert w.list_ctx() == [mx.cpu(0), mx.cpu(1)]
    np.testing.assert_array_equal(w.data(mx.cpu(1)).asnumpy(), net[0].weight.data().asnumpy())


def test_hybridized_block_keeps_the_argument_structure_of_its_first_call():
    class Add(gluon.HybridBlock):
        def hybrid_forward(self, F, a, b=None):
            return a if b is None else a + b

    blk = Add()
    blk.hybridize()
    one = nd.ones((3,))
    assert blk(one).asnumpy().tolist() == [1, 1, 1]
    # a trailing None stands for the default: passing or omitting it is the same structure
    assert blk(one, None).asnumpy().tolist() == [1, 1, 1]
    with pytest.raises(ValueError, match="argument structure"):
        blk(one, one)
    # hybridize() again starts a new cache, which takes the new structure
    blk.hybridize()
    assert blk(one, one).asnumpy().tolist() == [2, 2, 2]
    with pytest.raises(ValueError, match="argument structure"):
        blk(None, one)
    # not hybridized: any structure
    blk.hybridize(False)
    assert blk(one, one).asnumpy().tolist() == [2, 2, 2]
    assert blk(one).asnumpy().tolist() == [1, 1, 1]


def test_hybridized_block_refuses_inputs_on_several_contexts():
    class Add(gluon.HybridBlock):
        def hybrid_forward(self, F, a, b):
            return a + b.as_in_context(a.context)

    blk = Add()
    a, b = nd.ones((2,), ctx=mx.cpu(1)), nd.ones((2,), ctx=mx.cpu(2))
    assert blk(a, b).context == mx.cpu(1)  # imperative: allowed, as in MXNet
    blk.hybridize()
    with pytest.raises(ValueError, match="multiple contexts"):
        blk(a, b)
    assert blk(a, nd.ones((2,), ctx=mx.cpu(1))).asnumpy().tolist() == [2, 2]


def test_block_names_come_from_the_current_name_manager():
    # MXNet 1.9.1: 'mypre_dense0' inside Prefix, and a fresh NameManager counts from 0
    with mx.name.Prefix("mypre_"):
        assert nn.Dense(2).name == "mypre_dense0"
        assert nn.Dense(2).name == "mypre_dense1"
    with mx.name.NameManager():
        assert nn.Dense(2).name == "dense0"
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Dense(2))
        assert net.name == "hybridsequential0" and net[0].name == "hybridsequential0_dense0"


def test_hybridize_takes_mxnet_arguments():
    class Add(gluon.HybridBlock):
        def hybrid_forward(self, F, a, b=None):
            return a if b is None else a + b

    blk = Add()
    blk.hybridize(True, None, True, static_alloc=True, static_shape=True, inline_limit=5,
                  forward_bulk_size=3)
    assert dict(blk._flags)["inline_limit"] == 5 and dict(blk._flags)["forward_bulk_size"] == 3
    one = nd.ones((2,))
    blk(one)
    # clear=False keeps the cache and the argument structure it was made for
    blk.hybridize(clear=False)
    with pytest.raises(ValueError, match="argument structure"):
        blk(one, one)
    blk.hybridize()
    assert blk(one, one).asnumpy().tolist() == [2, 2]
    with pytest.raises(mx.base.MXNetError, match="subgraph backend"):
        blk.hybridize(backend="MKLDNN")
    assert gluon.tensor_types == (nd.NDArray,)


def test_symbol_block_reset_ctx():
    data = mx.sym.var("data")
    sb = gluon.SymbolBlock(mx.sym.FullyConnected(data, num_hidden=2, name="fc"), data)
    sb.initialize()
    before = sb(nd.ones((1, 3))).asnumpy()
    sb.reset_ctx([mx.cpu(1), mx.cpu(2)])
    assert all(p.list_ctx() == [mx.cpu(1), mx.cpu(2)] for p in sb.collect_params().values())
    out = sb(nd.ones((1, 3), ctx=mx.cpu(2)))
    assert out.context == mx.cpu(2)
    np.testing.assert_array_equal(out.asnumpy(), before)


def test_failed_capture_does_not_look_like_an_unregistered_container():
    # A block whose forward pass cannot be captured runs imperatively; the record of that
    # failure holds Blocks, and must not trip MXNet's "unregistered container" warning.
    import warnings

    class ReadsValues(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.dense = gluon.nn.Dense(3)

        def hybrid_forward(self, F, x):
            return self.dense(x) * float(x.asnumpy().sum())

    net = ReadsValues()
    net.initialize()
    net.hybridize()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net(mx.nd.ones((2, 4)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = net(mx.nd.ones((2, 4)))
        net.collect_params()
    assert out.shape == (2, 3)
    assert not [w for w in caught if "unregistered container" in str(w.message)]


def test_print_in_hybrid_forward_shows_symbols_and_keeps_the_capture(capsys):
    """docs/tutorials/gluon/hybrid.md prints x in hybrid_forward: once hybridized, the first
    call prints symbols (``<Symbol data0>``, the parameter's name, as MXNet 1.9.1) and the
    capture goes on; later calls replay without running hybrid_forward, so print nothing."""
    class Net(gluon.HybridBlock):
        def __init__(self, **kw):
            super().__init__(**kw)
            with self.name_scope():
                self.w = self.params.get("w", shape=(3, 4))

        def hybrid_forward(self, F, x, y, w):
            print(x, y, w)
            z = F.dot(x, w, transpose_b=True)
            print("z=%s" % z)
            return z + y

    net = Net(prefix="pp_")
    net.initialize(mx.init.One())
    net(mx.nd.ones((2, 4)), mx.nd.ones((2, 3)))
    assert "<NDArray 2x4" in capsys.readouterr().out
    net.hybridize()
    with warnings.catch_warnings():
        warnings.simplefilter("error")       # no "could not capture" fallback
        for _ in range(3):
            out = net(mx.nd.ones((2, 4)), mx.nd.ones((2, 3)))
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "<Symbol data0> <Symbol data1> <Symbol pp_w>"
    assert printed[1].startswith("z=<Symbol ") and len(printed) == 2
    np.testing.assert_allclose(out.asnumpy(), np.full((2, 3), 5.0))


def test_hybridized_outputs_are_lists_as_in_mxnet():
    class Two(nn.HybridBlock):
        def hybrid_forward(self, F, x):
            return x + 1, (x * 2, x * 3)
    plain = Two()(nd.ones(2))
    assert type(plain) is tuple and type(plain[1]) is tuple       # not hybridized: as written
    for static in (False, True):
        b = Two()
        b.hybridize(static_alloc=static)
        for _ in range(3):       # the capturing call and the replays
            r = b(nd.ones(2))
            assert type(r) is list and type(r[1]) is list
            assert r[1][1].asnumpy().tolist() == [3.0, 3.0]


def test_replay_splits_intermediates_as_views_and_inputs_as_copies():
    """A hybridized graph's SliceChannel of an intermediate value gives views (no copy per
    part, one autograd node); of an input it still copies, so a later write into the input
    does not show through in an output, as in MXNet."""
    import torch
    from neogluon.gluon import block as blk

    class Net(mx.gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.d = mx.gluon.nn.Dense(8, flatten=False)

        def hybrid_forward(self, F, x):
            a, b = F.SliceChannel(self.d(x), num_outputs=2, axis=-1)
            c, d = F.split(x, num_outputs=2, axis=-1)
            return F.sigmoid(a) * F.tanh(b) + c.sum(), d

    net = Net()
    net.initialize()
    x = mx.nd.array(np.arange(12, dtype=np.float32).reshape(3, 4) / 10)
    x.attach_grad()
    with mx.autograd.record():
        o, d = net(x)
        (o.sum() + d.sum()).backward()
    ref_o, ref_d, ref_g = o.asnumpy(), d.asnumpy(), x.grad.asnumpy().copy()
    net.hybridize()
    for _ in range(2):
        with mx.autograd.record():
            o, d = net(x)
            (o.sum() + d.sum()).backward()
    np.testing.assert_allclose(o.asnumpy(), ref_o, rtol=1e-6)
    np.testing.assert_allclose(d.asnumpy(), ref_d)
    graphs = [g for g in net._graphs.values() if hasattr(g, "_prog")]
    assert graphs
    fns = [p[1] for p in graphs[0]._prog]
    assert blk._split_views_fn in fns and blk._split_fn in fns
    # gradient through the views equals the imperative one
    np.testing.assert_allclose(x.grad.asnumpy(), ref_g, rtol=1e-5, atol=1e-7)
    # the input's split copies
    before = d.asnumpy().copy()
    x[:] = 5
    np.testing.assert_array_equal(d.asnumpy(), before)
    assert torch.is_tensor(mx.nd.to_torch(d))
