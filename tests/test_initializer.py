"""mx.init against MXNet 1.9.1: statistics of the random ones, exact values of the others."""
import json

import numpy as np
import pytest

import neogluon as mx
from neogluon import gluon, nd
from neogluon.gluon import nn

from gluon_fixture_utils import fixture_json, fixture_path, reset_names

INIT = fixture_json()["init"]

CASES = {
    "uniform_default": lambda: mx.init.Uniform(),
    "uniform_0.5": lambda: mx.init.Uniform(0.5),
    "normal_default": lambda: mx.init.Normal(),
    "normal_2": lambda: mx.init.Normal(2.0),
    "xavier_default": lambda: mx.init.Xavier(),
    "xavier_gauss_in": lambda: mx.init.Xavier(rnd_type="gaussian", factor_type="in",
                                              magnitude=2),
    "xavier_out": lambda: mx.init.Xavier(factor_type="out", magnitude=1.5),
    "msra": lambda: mx.init.MSRAPrelu(),
    "msra_in": lambda: mx.init.MSRAPrelu(factor_type="in", slope=0.1),
    "orthogonal": lambda: mx.init.Orthogonal(),
    "orthogonal_normal": lambda: mx.init.Orthogonal(scale=2.0, rand_type="normal"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_random_initializer_statistics(name):
    ref = INIT[name]
    a = nd.zeros(tuple(ref["shape"]))
    CASES[name]()(mx.init.InitDesc("w_weight"), a)
    v = a.asnumpy().astype(np.float64)
    # both means are estimates with standard error std / sqrt(n)
    assert abs(v.mean() - ref["mean"]) < 6 * ref["std"] / np.sqrt(v.size)
    assert abs(v.std() - ref["std"]) < 0.03 * ref["std"]
    if name.startswith(("uniform", "xavier_default", "xavier_out")):
        # uniform draws: the same bounds (the extremes of ~60000 draws sit at the bound)
        assert abs(v.max() - ref["max"]) < 0.01 * ref["max"]
        assert abs(v.min() - ref["min"]) < 0.01 * abs(ref["min"])
        assert v.max() <= ref["max"] * 1.001 + 1e-7
    if name.startswith("orthogonal"):
        m = v.reshape(ref["shape"][0], -1)
        gram = (m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m)
        np.testing.assert_allclose(gram.diagonal().mean(), ref["gram"], rtol=1e-5)
        np.testing.assert_allclose(gram, np.eye(len(gram)) * ref["gram"], atol=1e-4)


def test_deterministic_initializers_exact():
    ref = np.load(fixture_path("init_det.npz"))
    for name, init, shape in [("bilinear", mx.init.Bilinear(), (2, 1, 4, 4)),
                              ("bilinear_odd", mx.init.Bilinear(), (1, 2, 3, 5)),
                              ("lstmbias", mx.init.LSTMBias(2.5), (16,)),
                              ("constant", mx.init.Constant(0.3), (3, 4)),
                              ("one", mx.init.One(), (3,)),
                              ("zero", mx.init.Zero(), (3,))]:
        a = nd.ones(shape) * 7
        init(mx.init.InitDesc("w_weight"), a)
        np.testing.assert_array_equal(a.asnumpy(), ref[name], err_msg=name)


def test_dumps_and_create_roundtrip():
    objs = {"xavier": mx.init.Xavier(), "msra": mx.init.MSRAPrelu(),
            "uniform": mx.init.Uniform(0.1), "constant": mx.init.Constant(2),
            "normal": mx.init.Normal(), "orthogonal": mx.init.Orthogonal(),
            "lstmbias": mx.init.LSTMBias(), "bilinear": mx.init.Bilinear(),
            "one": mx.init.One(), "zero": mx.init.Zero()}
    for name, obj in objs.items():
        assert obj.dumps() == INIT["dumps"][name]
        again = mx.init.create(obj.dumps())
        assert type(again) is type(obj) and again.dumps() == obj.dumps()
    assert isinstance(mx.init.create("xavier"), mx.init.Xavier)
    assert isinstance(mx.init.create("zeros"), mx.init.Zero)
    assert isinstance(mx.init.create("ones"), mx.init.One)
    assert mx.init.create('["xavier", {"magnitude": 2}]').magnitude == 2.0
    with pytest.raises(ValueError, match="Cannot find initializer"):
        mx.init.create("nope")
    assert json.loads(mx.init.Constant(nd.array([1, 2])).dumps()) == [
        "constant", {"value": [1.0, 2.0]}]
    # MXNet keeps the list form in _kwargs, so dumps() equals json.dumps of [name, _kwargs]
    # and the initializer made back from it fills the same values.
    for value in (nd.ones((2, 3)), np.ones((2, 3)) * 2):
        init = mx.init.Constant(value)
        text = init.dumps()
        assert text == json.dumps(["constant", init._kwargs])
        again = mx.init.create(text)
        a = nd.zeros((2, 3))
        again(mx.init.InitDesc("c_weight"), a)
        np.testing.assert_array_equal(a.asnumpy(), np.asarray(value.asnumpy() if hasattr(
            value, "asnumpy") else value))


def test_default_initialisation_matches_mxnet():
    ref = INIT["defaults"]
    reset_names()
    bn = nn.BatchNorm(in_channels=3)
    d = nn.Dense(4, in_units=3)
    bn.initialize()
    d.initialize()
    got = {k: v.data().asnumpy().tolist() for k, v in bn.collect_params().items()}
    assert got == ref["bn"]
    assert d.bias.data().asnumpy().tolist() == ref["dense_bias"]
    w = np.abs(d.weight.data().asnumpy())
    assert w.max() <= 0.07 and ref["dense_weight_absmax"] <= 0.07


def test_parameter_init_takes_precedence():
    ref = INIT["precedence"]
    reset_names()
    d = nn.Dense(4, in_units=3, weight_initializer="ones")
    d.initialize(mx.init.Constant(5))
    d2 = nn.Dense(4, in_units=3)
    d2.initialize(mx.init.Constant(5))
    assert d.weight.data().asnumpy().tolist() == ref["weight"]
    assert d.bias.data().asnumpy().tolist() == ref["bias"]
    assert d2.weight.data().asnumpy().tolist() == ref["d2_weight"]
    assert d2.bias.data().asnumpy().tolist() == ref["d2_bias"]


def test_initializers_use_seeded_generator():
    outs = []
    for _ in range(2):
        mx.random.seed(42)
        a = nd.zeros((5, 5))
        mx.init.Xavier()(mx.init.InitDesc("w_weight"), a)
        outs.append(a.asnumpy())
    np.testing.assert_array_equal(outs[0], outs[1])


def test_xavier_on_vector_errors_and_suffix_dispatch():
    with pytest.raises(ValueError, match="cannot be applied to vector"):
        mx.init.Xavier()(mx.init.InitDesc("fc_weight"), nd.zeros((3,)))
    init = mx.init.Uniform()
    b = nd.ones((3,))
    init(mx.init.InitDesc("fc_bias"), b)
    g = nd.zeros((3,))
    init(mx.init.InitDesc("bn_gamma"), g)
    assert not b.asnumpy().any() and (g.asnumpy() == 1).all()
    with pytest.raises(ValueError, match="Unknown initialization pattern"):
        init(mx.init.InitDesc("something"), nd.zeros((2,)))


def test_mixed_and_custom_registration():
    mixed = mx.init.Mixed(["bias", ".*"], [mx.init.Zero(), mx.init.One()])
    a = nd.ones((2,)) * 3
    mixed("bias", a)
    assert not a.asnumpy().any()
    w = nd.zeros((2,))
    mixed("fc_weight", w)
    assert (w.asnumpy() == 1).all()
    with pytest.raises(ValueError, match="did not match any pattern"):
        mx.init.Mixed(["bias"], [mx.init.Zero()])("w", w)

    @mx.init.register
    @mx.init.alias("myinit_alias")
    class MyInit(mx.init.Initializer):
        def _init_weight(self, _, arr):
            arr[:] = 0.25

    p = gluon.Parameter("w", shape=(2,), init="myinit_alias")
    p.initialize()
    np.testing.assert_array_equal(p.data().asnumpy(), [0.25, 0.25])
    assert isinstance(mx.init.create("myinit"), MyInit)


class _NameTag(mx.init.Initializer):
    """As tools/gen_gluon_extra_fixtures.py: each piece gets a number made from its name."""

    def _init_weight(self, name, arr):
        arr[:] = sum(map(ord, str(name))) % 97

    def _init_bias(self, name, arr):
        arr[:] = -(sum(map(ord, str(name))) % 89)


def _extra():
    with open(fixture_path("extra.json")) as f:
        return json.load(f)


def test_fused_rnn_initializer_lays_pieces_out_as_mxnet():
    for case in _extra()["fused_rnn"]:
        init = mx.init.FusedRNN(_NameTag(), case["num_hidden"], case["num_layers"],
                                case["mode"], case["bidirectional"], forget_bias=2.5)
        arr = nd.zeros((case["size"],))
        init._init_weight(mx.init.InitDesc("parameters"), arr)
        np.testing.assert_array_equal(arr.asnumpy(), np.array(case["values"], np.float32),
                                      err_msg=case["mode"])
        kw = json.loads(init.dumps())[1]
        assert {k: v for k, v in kw.items() if k != "init"} == {
            k: v for k, v in case["dumps_kwargs"].items() if k != "init"}
    # with init=None the model's initializer fills the pieces; a size that fits no layout
    # of these hyper-parameters is refused
    arr = nd.zeros((84,))
    mx.init.FusedRNN(None, 3, 1, "lstm")._init_weight(
        mx.init.InitDesc("p", global_init=mx.init.One()), arr)
    assert set(np.unique(arr.asnumpy())) == {0.0, 1.0}
    with pytest.raises(mx.base.MXNetError, match="does not fit"):
        mx.init.FusedRNN(None, 3, 1, "lstm")._init_weight(
            mx.init.InitDesc("p", global_init=mx.init.One()), nd.zeros((10,)))
    with pytest.raises(ValueError, match="mode"):
        mx.init.FusedRNN(None, 3, 1, "nope")


def test_init_load_is_nd_load(tmp_path):
    path = str(tmp_path / "a.nd")
    nd.save(path, {"a": nd.ones((2,))})
    assert mx.init.load(path)["a"].asnumpy().tolist() == [1.0, 1.0]
