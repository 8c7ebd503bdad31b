"""mx.AttrScope and symbol attributes, against MXNet 1.9.1 (tests/fixtures/attribute/
attrs.json, written by tools/gen_attribute_fixtures.py from tests/attribute_cases.py)."""
import json
import os
import pickle
import threading
import warnings

import pytest

import neogluon as mx
from neogluon.attribute import AttrScope
from neogluon.base import MXNetError

import attribute_cases as C

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "attribute",
                   "attrs.json")
with open(FIX) as _f:
    REF = json.load(_f)["cases"]


@pytest.mark.parametrize("case", sorted(C.BUILDERS))
def test_attributes_and_json_are_mxnets(case):
    sym = C.BUILDERS[case](mx)
    ref = REF[case]
    assert sym.attr_dict() == ref["attr_dict"]
    if "list_attr" in ref:
        assert sym.list_attr() == ref["list_attr"]
    assert sym.tojson() == ref["json"]


def test_top_level_name_and_module():
    assert mx.AttrScope is AttrScope
    assert mx.attribute.AttrScope is AttrScope


def test_get_merges_the_callers_attributes_over_the_scopes():
    scope = AttrScope(x="1")
    assert scope.get(None) == {"x": "1"}
    assert scope.get({"y": "2"}) == {"x": "1", "y": "2"}
    assert scope.get({"x": "3"}) == {"x": "3"}
    assert AttrScope().get(None) == {}
    assert AttrScope().get({"a": "b"}) == {"a": "b"}
    given = {"y": "2"}
    scope.get(given)
    assert given == {"y": "2"}   # not changed in place


def test_values_must_be_strings():
    with pytest.raises(ValueError, match=r"Attributes need to be string.*lr_mult=0\.1"):
        AttrScope(lr_mult=0.1)


def test_nested_scopes_and_current():
    with pytest.warns(DeprecationWarning, match="AttrScope.current has been deprecated"):
        outside = AttrScope.current
    with AttrScope(x="1", y="1") as outer:
        with AttrScope(y="2") as inner:
            with pytest.warns(DeprecationWarning):
                assert AttrScope.current is inner
            assert inner._attr == {"x": "1", "y": "2"}
            assert mx.sym.var("v").list_attr() == {"x": "1", "y": "2"}
        with pytest.warns(DeprecationWarning):
            assert AttrScope.current is outer
        assert mx.sym.var("v").list_attr() == {"x": "1", "y": "1"}
    with pytest.warns(DeprecationWarning):
        assert AttrScope.current is outside
    assert mx.sym.var("v").list_attr() == {}


def test_current_can_be_replaced_per_thread():
    # (MXNet's unittest/test_thread_local.py::test_attrscope)
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        saved = AttrScope.current
        try:
            AttrScope.current = AttrScope(y="hi", z="hey")
            seen.append(AttrScope.current)

            def other():
                AttrScope.current = AttrScope(x="hello")
                seen.append(AttrScope.current)
            t = threading.Thread(target=other)
            t.start()
            t.join()
            assert seen[0]._attr == {"y": "hi", "z": "hey"}
            assert seen[1]._attr == {"x": "hello"}
            assert AttrScope.current is seen[0]
            assert mx.sym.var("w").list_attr() == {"y": "hi", "z": "hey"}
            with pytest.raises(TypeError, match="AttrScope"):
                AttrScope.current = {"x": "1"}
        finally:
            AttrScope.current = saved


def test_plain_scope_keys_on_an_operator_are_its_arguments():
    data = mx.sym.var("data")
    with AttrScope(group="4"):
        with pytest.raises(MXNetError, match=r"Activation.*'group'.*__group__"):
            mx.sym.Activation(data, act_type="relu")
        with pytest.raises(MXNetError, match=r"'group'"):
            data + 1
    # an attribute that names an argument sets it, as in MXNet (the string is parsed)
    fc = mx.sym.FullyConnected(data, attr={"num_hidden": "7"}, name="fc")
    assert fc.infer_shape(data=(2, 3))[1] == [(2, 7)]


def test_attributes_survive_pickle_and_json():
    with AttrScope(__group__="4", __data__="great"):
        fc1 = mx.sym.Activation(mx.sym.var("data"), act_type="relu")
        with AttrScope(__init_bias__="0.0"):
            fc2 = mx.sym.FullyConnected(fc1, num_hidden=10, name="fc2")
    again = pickle.loads(pickle.dumps(fc2))
    assert again.tojson() == fc2.tojson()
    assert again.get_internals()["fc2_weight"].attr("__init_bias__") == "0.0"
    loaded = mx.sym.load_json(fc2.tojson())
    assert loaded.attr_dict() == fc2.attr_dict()


def test_ctx_group_reaches_every_node_of_a_stage():
    # (what MXNet's model-parallel tests build: group2ctx places nodes by __ctx_group__)
    with AttrScope(ctx_group="stage1"):
        data = mx.sym.Variable("data")
        fc1 = mx.sym.FullyConnected(data=data, name="fc1", num_hidden=8)
        act1 = mx.sym.Activation(data=fc1, name="relu1", act_type="relu")
    with AttrScope(ctx_group="stage2"):
        fc2 = mx.sym.FullyConnected(data=act1, name="fc2", num_hidden=4)
        out = mx.sym.SoftmaxOutput(data=fc2, name="softmax")
    groups = {name: d.get("__ctx_group__") for name, d in out.attr_dict().items()}
    assert groups == {"data": "stage1", "fc1_weight": "stage1", "fc1_bias": "stage1",
                      "fc1": "stage1", "relu1": "stage1", "fc2_weight": "stage2",
                      "fc2_bias": "stage2", "fc2": "stage2", "softmax_label": "stage2",
                      "softmax": "stage2"}


def test_dunder_keywords_of_an_operator_call_are_attributes():
    # (MXNet's test_module.py builds Activation(..., __layout__='TNC'))
    act = mx.sym.Activation(data=mx.sym.var("data"), act_type="relu", __layout__="TNC")
    assert act.list_attr() == {"act_type": "relu", "__layout__": "TNC"}
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, __layout__="NC", name="fc",
                               attr={"__layout__": "CN"})
    assert fc.attr_dict()["fc_weight"] == {"num_hidden": "2", "__layout__": "CN"}
    assert mx.sym.zeros((2, 3), __x__="1").list_attr()["__x__"] == "1"
    assert act.eval(data=mx.nd.ones((2, 2)))[0].shape == (2, 2)
