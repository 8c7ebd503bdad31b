"""Symbol behaviours of MXNet 1.9.1's test_symbol.py / test_infer_shape.py /
test_infer_type.py: partial shape inference (0 or -1 for unknown dimensions, both ways),
type inference that leaves undetermined types unknown, composition, atomic symbols,
bool(), in-place operators, given shapes over declared ones, is_np_shape in the JSON.
MXNet's answers are in tests/fixtures/symbol_conformance/infer.json
(tools/gen_symbol_conformance_fixtures.py, graphs from tests/symbol_conformance_cases.py)."""
import json
import os
import pickle

import numpy as np
import pytest

import neogluon as mx
from neogluon import nd
from neogluon.base import MXNetError, NotImplementedForSymbol

import symbol_conformance_cases as C

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures",
                   "symbol_conformance", "infer.json")
with open(FIX) as _f:
    REF = json.load(_f)


def _given(rec):
    return {k: tuple(v) if isinstance(v, list) else v for k, v in rec["given"].items()}


def _shapes(build, rec, np_shape=False):
    with mx.name.NameManager():
        sym, _ = build(mx)
    with mx.util.np_shape(np_shape):
        args, outs, aux = sym.infer_shape_partial(**_given(rec))

    def ls(s):
        return None if s is None else list(s)
    return {"args": dict(zip(sym.list_arguments(), [ls(s) for s in args])),
            "outs": [ls(s) for s in outs],
            "aux": dict(zip(sym.list_auxiliary_states(), [ls(s) for s in aux]))}


@pytest.mark.parametrize("name", [n for n, _ in C.SHAPE_CASES])
def test_infer_shape_partial_is_mxnets(name):
    build = dict(C.SHAPE_CASES)[name]
    rec = REF["shape"][name]
    got = _shapes(build, rec)
    assert got == {k: rec[k] for k in ("args", "outs", "aux")}


def _refines(mine, theirs):
    if not theirs:
        return True
    return len(mine) == len(theirs) and all(t in (0, m) for m, t in zip(mine, theirs))


@pytest.mark.parametrize("name", [n for n, _ in C.REFINED_CASES])
def test_infer_shape_partial_refines_mxnets(name):
    build = dict(C.REFINED_CASES)[name]
    rec = REF["refined"][name]
    got = _shapes(build, rec)
    for part in ("args", "aux"):
        for k, v in rec[part].items():
            assert _refines(got[part][k], v), (part, k)
    for mine, theirs in zip(got["outs"], rec["outs"]):
        assert _refines(mine, theirs)
    assert any(got["outs"])   # (and neogluon does know something)


@pytest.mark.parametrize("name", [n for n, _ in C.NP_SHAPE_CASES])
def test_infer_shape_partial_under_numpy_shapes_is_mxnets(name):
    build = dict(C.NP_SHAPE_CASES)[name]
    rec = REF["np_shape"][name]
    assert _shapes(build, rec, np_shape=True) == {k: rec[k] for k in ("args", "outs", "aux")}


@pytest.mark.parametrize("name", [n for n, _ in C.TYPE_CASES])
def test_infer_type_is_mxnets(name):
    build = dict(C.TYPE_CASES)[name]
    rec = REF["type"][name]
    with mx.name.NameManager():
        sym, given = build(mx)

    def names(ts):
        return [None if t is None else np.dtype(t).name for t in ts]
    args, outs, aux = sym.infer_type_partial(**given)
    assert {"args": dict(zip(sym.list_arguments(), names(args))), "outs": names(outs),
            "aux": dict(zip(sym.list_auxiliary_states(), names(aux)))} == rec["partial"]
    complete = sym.infer_type(**given)
    assert (complete[0] is not None) == rec["complete"]


def test_completely_unknown_shapes():
    # (MXNet's test_shape_completely_unknown)
    ret = mx.sym.sin(mx.sym.var("data"))
    assert ret.infer_shape_partial() == ([()], [()], [])
    with mx.util.np_shape(True):
        assert ret.infer_shape_partial() == ([None], [None], [])
    assert ret.infer_shape() == (None, None, None)


def test_backward_shape_inference_through_identity_like_rhs():
    # (MXNet's test_backward_infer): the weight's shape comes back from the FC's
    w = mx.sym.Variable("weight")
    wshift = mx.sym.Variable("wshift", shape=(1,))
    wt = mx.sym._internal._identity_with_attr_like_rhs(mx.sym.broadcast_add(w, wshift), w)
    net = mx.sym.FullyConnected(data=mx.sym.Variable("data"), weight=wt, num_hidden=11,
                                no_bias=True)
    args, _, _ = net.infer_shape(data=(7, 100))
    assert dict(zip(net.list_arguments(), args))["weight"] == (11, 100)
    out = net.eval(data=nd.ones((7, 100)), weight=nd.ones((11, 100)),
                   wshift=nd.ones((1,)))[0]
    assert out.shape == (7, 11) and float(out[0, 0].asscalar()) == 200.0
    with pytest.raises(MXNetError, match="rhs"):
        nd._internal._identity_with_attr_like_rhs(nd.ones((2, 3)), nd.ones((3, 2)))
    # loaded from JSON, the internal operator is found again
    again = mx.sym.load_json(net.tojson())
    assert again.infer_shape(data=(7, 100))[0] == args


def test_given_shape_wins_over_declared():
    a = mx.sym.var("a", shape=(2, 3))
    c = a + mx.sym.var("b")
    assert c.infer_shape(a=(5, 6)) == ([(5, 6), (5, 6)], [(5, 6)], [])
    assert c.infer_shape()[0] == [(2, 3), (2, 3)]
    # a given shape with unknown dimensions gives way to the declared one
    assert c.infer_shape(a=(2, 0))[0] == [(2, 3), (2, 3)]


def test_symbol_bool_and_in_place_operators_raise():
    x = mx.sym.var("x")
    with pytest.raises(NotImplementedForSymbol, match=r'__bool__ \(namely operator "bool"\)'):
        bool(x)
    with pytest.raises(NotImplementedForSymbol):
        if x:
            pass
    y = x
    with pytest.raises(NotImplementedForSymbol, match=r'"\+="'):
        y += 1
    for op in ("__isub__", "__imul__", "__itruediv__"):
        with pytest.raises(NotImplementedForSymbol):
            getattr(x, op)(1)
    assert x is not None and len(x) == 1


def test_compose_replaces_variables_by_name():
    # (MXNet's test_symbol_compose)
    data = mx.sym.Variable("data")
    net1 = mx.sym.FullyConnected(data=data, name="fc1", num_hidden=10)
    net2 = mx.sym.FullyConnected(name="fc3", num_hidden=10)
    net2 = mx.sym.Activation(data=net2, act_type="relu", name="act")
    net2 = mx.sym.FullyConnected(data=net2, name="fc4", num_hidden=20)
    composed = net2(fc3_data=net1, name="composed")
    assert repr(composed) == "<Symbol composed>"
    assert composed.list_arguments() == ["data", "fc1_weight", "fc1_bias", "fc3_weight",
                                         "fc3_bias", "fc4_weight", "fc4_bias"]
    assert composed.list_outputs() == ["composed_output"]
    assert composed.get_internals().list_outputs() == [
        "data", "fc1_weight", "fc1_bias", "fc1_output", "fc3_weight", "fc3_bias",
        "fc3_output", "act_output", "fc4_weight", "fc4_bias", "composed_output"]
    # the original is unchanged
    assert net2.list_arguments()[0] == "fc3_data" and net2.name == "fc4"
    multi = mx.sym.Group([composed, net1])
    assert len(multi.list_outputs()) == 2 and len(multi) == 2
    assert composed.infer_shape(data=(4, 7))[1] == [(4, 20)]
    # the composed graph computes the substituted one
    x = nd.ones((2, 3))
    params = {k: nd.ones(s) * 0.1 for k, s in zip(
        composed.list_arguments(), composed.infer_shape(data=(2, 3))[0]) if k != "data"}
    direct = mx.sym.FullyConnected(mx.sym.Activation(mx.sym.FullyConnected(
        net1, name="fc3", num_hidden=10), act_type="relu"), name="fc4", num_hidden=20)
    assert np.allclose(composed.eval(data=x, **params)[0].asnumpy(),
                       direct.eval(data=x, **params)[0].asnumpy())
    # _compose changes the symbol itself
    net2._compose(fc3_weight=mx.sym.var("w"))
    assert "w" in net2.list_arguments()


def test_compose_errors_are_mxnets():
    net = mx.sym.FullyConnected(mx.sym.var("x"), name="fc", num_hidden=3)
    with pytest.raises(MXNetError, match=r"'nothere'.*\['x', 'fc_weight', 'fc_bias'\]"):
        net(nothere=mx.sym.var("y"))
    with pytest.raises(MXNetError, match="keyword arguments only"):
        net(mx.sym.var("y"))
    with pytest.raises(TypeError, match="not both"):
        net(mx.sym.var("y"), x=mx.sym.var("z"))
    with pytest.raises(TypeError, match="Compose expect `Symbol`"):
        net(x=1)
    with pytest.raises(MXNetError, match="outputs"):
        net(x=mx.sym.split(mx.sym.var("q"), num_outputs=2))


def test_atomic_symbol_of_a_multi_output_operator():
    # (MXNet's test_gen_atomic_symbol_multiple_outputs)
    data, p = mx.sym.Variable("data"), mx.sym.Variable("param")
    h0, h1 = mx.sym.Variable("h0"), mx.sym.Variable("h1")
    s = mx.sym.RNN(data, p, h0, h1, state_size=10, num_layers=2, bidirectional=True,
                   state_outputs=True, mode="lstm", name="rnn")
    atomic = s._gen_atomic_symbol()
    assert repr(atomic) == "<Symbol >" and len(atomic) == 3
    assert atomic.list_outputs() == ["output", "state_output", "statecell_output"]
    assert atomic.list_arguments() == []
    assert atomic.attr_dict()[""]["state_size"] == "10"
    again = atomic(data, p, h0, h1, name="rnn2")
    assert again.list_arguments() == ["data", "param", "h0", "h1"]
    assert again.list_outputs() == ["rnn2_output", "rnn2_state_output",
                                    "rnn2_statecell_output"]
    fc = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=3, name="fc",
                               attr={"__mood__": "calm"})
    made = fc._gen_atomic_symbol()(data=mx.sym.var("q"), name="zz")
    assert made.list_arguments() == ["q", "zz_weight", "zz_bias"]
    assert made.attr("__mood__") == "calm"
    with pytest.raises(MXNetError, match="variable"):
        mx.sym.var("x")._gen_atomic_symbol()


def test_json_marks_numpy_shape_graphs():
    # (MXNet's test_load_save_symbol)
    def net():
        return mx.sym.FullyConnected(mx.sym.var("data"), mx.sym.var("weight",
                                                                    shape=(128, 0)),
                                     num_hidden=128)
    with mx.util.np_shape(True):
        attrs = json.loads(net().tojson())["attrs"]
    assert attrs == {"is_np_shape": ["int", 1], "mxnet_version": ["int", 10901]}
    text = net().tojson()
    assert "is_np_shape" not in json.loads(text)["attrs"]
    args, outs, _ = mx.sym.load_json(text).infer_shape(data=(10, 784))
    assert args == [(10, 784), (128, 784), (128,)] and outs == [(10, 128)]


def test_split_v2_has_its_sections_as_outputs():
    s = mx.sym.split_v2(mx.sym.var("x"), indices_or_sections=3, axis=1)
    assert len(s) == 3
    outs = s.eval(x=nd.arange(12).reshape((2, 6)))
    assert [o.shape for o in outs] == [(2, 2)] * 3
    assert len(mx.sym.split_v2(mx.sym.var("x"), indices_or_sections=(1, 4), axis=1)) == 3


def test_partial_inference_keeps_pickled_symbols_working():
    sym = C.SHAPE_CASES[0][1](mx)[0]
    again = pickle.loads(pickle.dumps(sym))
    assert again.infer_shape_partial(x=(0, 3, 4), y=(4, 5))[1] == [(0, 3, 5)]
