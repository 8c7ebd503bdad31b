"""Symbolic control flow (``mx.sym.contrib.foreach`` / ``while_loop`` / ``cond``) and
``mx.sym._internal._CachedOp`` against MXNet 1.9.1 (tests/fixtures/symbol_control_flow.json,
from tools/gen_symbol_control_flow_fixtures.py): the graph JSON byte for byte, names,
inferred shapes and types, executor outputs and gradients, and the errors."""
import json
import os
from collections import defaultdict

import numpy as np
import pytest

import neogluon as mx
from neogluon.base import MXNetError

import symbol_control_flow_cases as cases

with open(os.path.join(os.path.dirname(__file__), "fixtures", "symbol_control_flow.json")) as _f:
    WANT = json.load(_f)


@pytest.fixture(scope="module")
def got():
    return cases.run(mx)


def _close(a, b, tol=1e-4):
    np.testing.assert_allclose(np.array(a, dtype=np.float64), np.array(b, dtype=np.float64),
                               rtol=tol, atol=tol)


def _check_run(got_case, want_case):
    assert len(got_case["outs"]) == len(want_case["outs"])
    for g, w in zip(got_case["outs"], want_case["outs"]):
        _close(g, w)
    assert sorted(got_case["grads"]) == sorted(want_case["grads"])
    for k, w in want_case["grads"].items():
        _close(got_case["grads"][k], w)


@pytest.mark.parametrize("name", ["foreach", "foreach_nested", "while_loop", "cached_op"])
def test_graph_json_and_names_as_mxnet(got, name):
    for key in ("json", "inputs", "arguments", "outputs"):
        assert got[name][key] == WANT[name][key], key


@pytest.mark.parametrize("branch", ["then", "else"])
def test_cond_graph_and_values(got, branch):
    g, w = got["cond"][branch], WANT["cond"][branch]
    for key in ("json", "inputs", "arguments", "outputs"):
        assert g[key] == w[key], key
    _check_run(g, w)


@pytest.mark.parametrize("name", ["foreach", "foreach_nested", "while_loop"])
def test_executor_outputs_and_gradients(got, name):
    _check_run(got[name], WANT[name])


def test_foreach_json_round_trips_and_infers(got):
    assert got["foreach"]["round_trip"] is True
    assert got["foreach"]["shapes"] == WANT["foreach"]["shapes"]
    assert got["foreach"]["types"] == WANT["foreach"]["types"]
    assert got["foreach_nested"]["shapes"] == WANT["foreach_nested"]["shapes"]
    assert got["foreach_unknown_dim"] == WANT["foreach_unknown_dim"]


def test_nested_subgraph_names(got):
    assert got["foreach_nested"]["subgraph_names"] == WANT["foreach_nested"]["subgraph_names"]


def test_while_loop_and_cond_shapes_are_inferred():
    """MXNet 1.9.1 leaves these undecided (infer_shape returns None); neogluon infers them
    through the subgraphs (docs/migration.md)."""
    assert WANT["while_loop"]["shapes"] == [None, None, None]
    i, s, w = (mx.sym.var(n) for n in ("i", "s", "w"))
    outs, final = mx.sym.contrib.while_loop(lambda i, s: i < 2.5,
                                            lambda i, s: ([s * w, i + s], [i + 1, s * w + i]),
                                            (i, s), max_iterations=5)
    args, out, aux = mx.sym.Group(outs + final).infer_shape(i=(1,), s=(1,), w=(1,))
    assert args == [(1,), (1,), (1,)] and out == [(5, 1), (5, 1), (1,), (1,)] and aux == []
    a, b = mx.sym.var("a"), mx.sym.var("b")
    res = mx.sym.contrib.cond(a.sum() < 0, lambda: [a, b], lambda: [b * 2, a])
    args, out, _ = mx.sym.Group(res).infer_shape(a=(2, 3))
    assert args == [(2, 3), (2, 3)] and out == [(2, 3), (2, 3)]
    _, types, _ = mx.sym.Group(res).infer_type(a="float16")
    assert types == [np.float16, np.float16]


def test_cached_op(got):
    g, w = got["cached_op"], WANT["cached_op"]
    assert g["aux"] == w["aux"] and g["shapes"] == w["shapes"]
    for a, b in zip(g["outs"], w["outs"]):
        _close(a, b)
    for k in w["grads"]:
        _close(g["grads"][k], w["grads"][k], 1e-3)
    for k in w["aux_after"]:
        _close(g["aux_after"][k], w["aux_after"][k])


def test_cached_op_refuses_a_wrong_input_count():
    sub = mx.sym.var("a") * mx.sym.var("b")
    with pytest.raises(MXNetError, match="2 inputs"):
        mx.sym._internal._CachedOp(mx.sym.var("a"), subgraph=sub.tojson())


def test_errors_have_mxnet_types(got):
    assert got["errors"] == WANT["errors"]
    for name, kinds in got["errors"].items():
        assert kinds, name


def test_control_flow_errors_are_mxnet_errors():
    d, s = mx.sym.var("d"), mx.sym.var("s")
    with pytest.raises(MXNetError, match="state arrays have to be used"):
        mx.sym.contrib.foreach(lambda x, st: (x, [x]), d, [s])
    with pytest.raises(MXNetError, match="max_iterations"):
        mx.sym.contrib.while_loop(lambda i: i < 3, lambda i: ([i], [i + 1]), [d])


def test_head_gradient_of_another_shape(got):
    assert got["head_grad_shape"] == WANT["head_grad_shape"]


def test_executors_sharing_sparse_arguments_keep_their_gradients(got):
    for g, w in zip(got["sparse_shared_args"], WANT["sparse_shared_args"]):
        for k in w:
            _close(g[k], w[k])


def test_hybridized_cond_names_its_subgraphs():
    class Net(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.contrib.cond(x.sum() > 0, lambda: x * 2, lambda: x * 3, name="pick")
    mx.attribute.AttrScope._subgraph_names = defaultdict(int)
    net = Net()
    net.hybridize()
    x = mx.nd.array([1.0, -3.0])
    with pytest.warns(UserWarning):
        out = net(x)
    np.testing.assert_allclose(out.asnumpy(), [3.0, -9.0])   # (sum < 0: the else branch)
    assert dict(mx.attribute.AttrScope._subgraph_names) == {"pick_pred": 1, "pick_then": 1,
                                                           "pick_else": 1}
    net(x)   # (captured once: not named again)
    assert mx.attribute.AttrScope._subgraph_names["pick_then"] == 1


def test_executor_runs_while_loop_each_forward_anew():
    i, s = mx.sym.var("i"), mx.sym.var("s")
    outs, final = mx.sym.contrib.while_loop(lambda i, s: i < 3, lambda i, s: ([s], [i + 1, s * 2]),
                                            (i, s), max_iterations=4)
    ex = mx.sym.Group(outs + final).bind(mx.cpu(), {"i": mx.nd.zeros(1), "s": mx.nd.ones(1)})
    assert ex.forward()[2].asnumpy().tolist() == [8.0]
    ex.forward(i=mx.nd.array([2.0]))   # one step only now
    assert ex.outputs[2].asnumpy().tolist() == [2.0]
    assert ex.outputs[0].asnumpy()[:, 0].tolist() == [1.0, 0.0, 0.0, 0.0]
