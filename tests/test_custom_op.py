"""``mx.operator`` custom operators (and ``mx.registry``) against MXNet 1.9.1
(tests/custom_op_cases.py run there by tools/gen_custom_op_fixtures.py): outputs, gradients, the req/is_train each call sees, kwargs
as strings, aux states, output dtypes, F.Custom in a hybridized block; and misuse errors."""
import json
import os

import numpy as np
import pytest

import neogluon as mx
from neogluon import nd, autograd
from neogluon.base import MXNetError

import custom_op_cases

FX = os.path.join(os.path.dirname(__file__), "fixtures", "custom_op", "custom_op.json")
with open(FX) as _f:
    FIX = json.load(_f)


@pytest.fixture(scope="module")
def got():
    return json.loads(json.dumps(custom_op_cases.run_cases(mx)))


def _same(a, b, tol=1e-5):
    assert a["shape"] == b["shape"] and a["dtype"] == b["dtype"]
    np.testing.assert_allclose(a["value"], b["value"], rtol=tol, atol=tol)


def _split_log(log):
    # MXNet's engine runs the calls asynchronously: how the entries of different kinds
    # interleave (prop/create/forward/backward of successive calls) is timing. Each kind's
    # own sequence is not.
    kinds = {}
    for e in log:
        kinds.setdefault(e[0], []).append(e)
    return kinds


def _walk(a, b, key=None):
    if key == "log":
        assert _split_log(a) == _split_log(b)
    elif isinstance(b, dict) and "value" in b:
        _same(a, b)
    elif isinstance(b, dict):
        assert sorted(a) == sorted(b)
        for k in b:
            _walk(a[k], b[k], k)
    elif isinstance(b, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _walk(x, y)
    else:
        assert a == b


_NOT_CASES = ("unregistered", "registry", "symbol", "symbol_multi")


@pytest.mark.parametrize("case", sorted(k for k in FIX if k not in _NOT_CASES))
def test_matches_mxnet(got, case):
    _walk(got[case], FIX[case])


def test_unregistered_op_type():
    assert FIX["unregistered"] == "MXNetError"
    with pytest.raises(MXNetError, match="t_not_registered"):
        nd.Custom(nd.ones((2,)), op_type="t_not_registered")


def test_misuse_errors(got):
    with pytest.raises(MXNetError, match="op_type"):
        nd.Custom(nd.ones((2,)))
    with pytest.raises(MXNetError, match="expects 2 inputs"):
        nd.Custom(nd.ones((2, 2)), op_type="t_two")
    with pytest.raises(MXNetError, match="counter"):
        nd.Custom(nd.ones((2, 2)), nd.zeros((3,)), op_type="t_count")
    with pytest.raises(MXNetError, match="not a subclass of CustomOpProp"):
        mx.operator.register("t_bad")(object)


def test_named_inputs_and_out(got):
    a = nd.array([[1.0, 2.0]])
    b = nd.array([[3.0, 4.0]])
    p, s = nd.Custom(a, b=b, op_type="t_two")
    np.testing.assert_allclose(p.asnumpy(), [[3.0, 8.0]])
    np.testing.assert_allclose(s.asnumpy(), [3.0])
    out = nd.zeros((1, 2))
    r = nd.Custom(a, op_type="t_sqr", out=out)
    assert r is out
    np.testing.assert_allclose(out.asnumpy(), [[1.0, 4.0]])


def test_prop_defaults():
    p = mx.operator.CustomOpProp()
    assert p.need_top_grad_ is True
    assert p.list_arguments() == ["data"] and p.list_outputs() == ["output"]
    assert p.list_auxiliary_states() == []
    assert p.infer_shape([[2, 3]]) == ([[2, 3]], ([2, 3],), ())
    assert p.declare_backward_dependency([1], [2], [3]) == [1, 2, 3]
    assert mx.operator.CustomOpProp(need_top_grad=False).declare_backward_dependency(
        [1], [2], [3]) == [2, 3]
    op = mx.operator.CustomOp()
    dst = nd.ones((2,))
    op.assign(dst, "add", nd.ones((2,)))
    op.assign(dst, "null", nd.zeros((2,)))
    np.testing.assert_allclose(dst.asnumpy(), [2.0, 2.0])
    op.assign(dst, "write", nd.zeros((2,)))
    np.testing.assert_allclose(dst.asnumpy(), [0.0, 0.0])


def test_registry_matches_mxnet():
    assert custom_op_cases.run_registry_cases(mx) == FIX["registry"]


def test_registry_error_messages():
    class B:
        pass
    create = mx.registry.get_create_func(B, "widget")
    with pytest.raises(AssertionError, match="nope is not registered.*widget.register"):
        create("nope")
    with pytest.raises(AssertionError, match="subclass of B"):
        mx.registry.get_register_func(B, "widget")(int)


def test_symbol_custom_single_output_matches_mxnet():
    assert custom_op_cases.run_symbol_cases(mx) == FIX["symbol"]


def test_errors_in_user_code_name_the_operator():
    class Bad(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            raise ValueError("boom in forward")

    @mx.operator.register("t_bad_fwd")
    class BadProp(mx.operator.CustomOpProp):
        def create_operator(self, ctx, shapes, dtypes):
            return Bad()

    @mx.operator.register("t_bad_shape")
    class BadShape(mx.operator.CustomOpProp):
        def infer_shape(self, in_shape):
            raise KeyError("nope")

    with pytest.raises(MXNetError, match="CustomOp.forward.*t_bad_fwd.*boom in forward"):
        nd.Custom(nd.ones((2,)), op_type="t_bad_fwd")
    with pytest.raises(MXNetError, match="infer_shape.*t_bad_shape"):
        nd.Custom(nd.ones((2,)), op_type="t_bad_shape")


def test_symbol_custom_multi_output_matches_mxnet():
    got = custom_op_cases.run_symbol_multi_cases(mx)
    want = FIX["symbol_multi"]
    assert sorted(got) == sorted(want)
    for k in want:
        if k == "values":  # the two outputs have different shapes
            assert len(got[k]) == len(want[k])
            for g, w in zip(got[k], want[k]):
                np.testing.assert_allclose(np.array(g), np.array(w), rtol=1e-6)
        elif "value" in k:
            np.testing.assert_allclose(np.array(got[k]), np.array(want[k]), rtol=1e-6)
        else:
            assert got[k] == want[k], k


class _AffineWithStats(mx.operator.CustomOp):
    """out = data @ weight + bias; the auxiliary state keeps the last batch's output mean."""

    def forward(self, is_train, req, in_data, out_data, aux):
        y = nd.dot(in_data[0], in_data[1]) + in_data[2]
        if is_train:
            aux[0][:] = y.mean(axis=0)
        self.assign(out_data[0], req[0], y)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        g = out_grad[0]
        self.assign(in_grad[0], req[0], nd.dot(g, in_data[1], transpose_b=True))
        self.assign(in_grad[1], req[1], nd.dot(in_data[0], g, transpose_a=True))
        self.assign(in_grad[2], req[2], g.sum(axis=0))


@mx.operator.register("affine_with_stats_t")
class _AffineWithStatsProp(mx.operator.CustomOpProp):
    def __init__(self, num_hidden):
        super().__init__(need_top_grad=True)
        self.num_hidden = int(num_hidden)

    def list_arguments(self):
        return ["data", "weight", "bias"]

    def list_auxiliary_states(self):
        return ["running"]

    def infer_shape(self, in_shape):
        n, d = in_shape[0]
        return ([in_shape[0], (d, self.num_hidden), (self.num_hidden,)], [(n, self.num_hidden)],
                [(self.num_hidden,)])

    def create_operator(self, ctx, shapes, dtypes):
        return _AffineWithStats()


@pytest.mark.parametrize("hybridize", [False, True])
def test_gluon_block_passes_deferred_parameters_and_aux_states_to_custom(hybridize):
    """example/restricted-boltzmann-machine's BinaryRBMBlock: parameters declared with shape 0
    get their shapes from the CustomOpProp's infer_shape (symbolic shape inference, as in
    MXNet), the trailing inputs are auxiliary states the operator updates."""
    class Block(mx.gluon.HybridBlock):
        def __init__(self, **kw):
            super().__init__(**kw)
            with self.name_scope():
                self.weight = self.params.get("weight", shape=(0, 0), allow_deferred_init=True)
                self.bias = self.params.get("bias", shape=(0,), allow_deferred_init=True)
                self.aux_running = self.params.get("aux_running", shape=(0,),
                                                   allow_deferred_init=True)

        def hybrid_forward(self, F, x, weight, bias, aux_running):
            return F.Custom(x, weight, bias, aux_running, num_hidden=3,
                            op_type="affine_with_stats_t")

    blk = Block(prefix="ws_")
    blk.initialize(mx.init.One())
    if hybridize:
        blk.hybridize()
    x = nd.array(np.arange(8, dtype=np.float32).reshape(2, 4))
    with autograd.record():
        y = blk(x)
    y.backward()
    assert blk.weight.shape == (4, 3) and blk.bias.shape == (3,)
    assert blk.aux_running.shape == (3,)
    want = x.asnumpy() @ np.ones((4, 3)) + 1
    np.testing.assert_allclose(y.asnumpy(), want)
    np.testing.assert_allclose(blk.aux_running.data().asnumpy(), want.mean(axis=0))
    np.testing.assert_allclose(blk.weight.grad().asnumpy(), x.asnumpy().T @ np.ones((2, 3)))
    trainable = blk.collect_params("^(?!.*_aux_.*).*$")
    assert sorted(trainable.keys()) == ["ws_bias", "ws_weight"]

    s = mx.sym.Custom(mx.sym.var("d"), mx.sym.var("w"), mx.sym.var("b"), mx.sym.var("r"),
                      num_hidden=3, op_type="affine_with_stats_t")
    # MXNet 1.9.1: the last input is an auxiliary state and infer_shape fills them all
    assert s.list_arguments() == ["d", "w", "b"] and s.list_auxiliary_states() == ["r"]
    assert s.infer_shape(d=(2, 4)) == ([(2, 4), (4, 3), (3,)], [(2, 3)], [(3,)])
