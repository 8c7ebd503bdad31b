"""Behaviours MXNet 1.9.1's tests/python/unittest/test_operator.py relies on (values checked
against MXNet 1.9.1: the expected numbers below are what it returns)."""
import numpy as np
import pytest

import neogluon as mx
from neogluon.test_utils import check_symbolic_backward


# ---------------------------------------------------------------- prelu's gamma layouts
@pytest.mark.parametrize("dshape, gshape, total", [
    ((3, 4), (4,), -72.0),
    ((3, 4, 4, 5), (4,), 21893.0),
    ((3, 4), (3, 4), -176.8),
    ((3, 4, 4, 5), (3, 4), 21893.0),
    ((3, 4, 5), (1,), 388.5),
    ((3, 4), (3, 1), -55.6),
])
def test_prelu_gamma_layouts(dshape, gshape, total):
    # gamma's axes fill the data's axes 1 and 0 from the last one (MXNet's expand_shape)
    x = mx.nd.array(np.arange(np.prod(dshape)).reshape(dshape) - 30)
    g = mx.nd.array(np.arange(np.prod(gshape)).reshape(gshape) * 0.1 + 0.1)
    y = mx.nd.LeakyReLU(x, gamma=g, act_type="prelu")
    assert y.shape == dshape
    assert float(y.sum().asscalar()) == pytest.approx(total, rel=1e-5)


@pytest.mark.parametrize("dshape, gshape", [((3, 4, 5), (5,)), ((3, 4), (2,))])
def test_prelu_gamma_mismatch(dshape, gshape):
    with pytest.raises(mx.base.MXNetError):
        mx.nd.LeakyReLU(mx.nd.ones(dshape), gamma=mx.nd.ones(gshape), act_type="prelu")


def test_prelu_full_gamma_gradient():
    x = mx.nd.array([[-1.0, 2.0], [3.0, -4.0]])
    g = mx.nd.array([[0.5, 0.25], [0.1, 0.2]])
    x.attach_grad()
    g.attach_grad()
    with mx.autograd.record():
        y = mx.nd.LeakyReLU(x, gamma=g, act_type="prelu")
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [[0.5, 1.0], [1.0, 0.2]], rtol=1e-6)
    np.testing.assert_allclose(g.grad.asnumpy(), [[-1.0, 0.0], [0.0, -4.0]], rtol=1e-6)


# ---------------------------------------------------------------- bind reads dicts by name
def test_bind_ignores_names_that_are_not_arguments():
    x = mx.sym.Variable("x")
    y = x * 2
    ex = y.bind(mx.cpu(), {"x": mx.nd.ones(2), "b": None},
                args_grad={"x": mx.nd.zeros(2), "b": mx.nd.ones(2)},
                grad_req={"x": "write", "b": "add"})
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones(2))
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), [2, 2])
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(), [2, 2])
    sb = y.simple_bind(mx.cpu(), grad_req={"x": "write", "b": "add"}, x=(2,))
    assert sorted(sb.grad_dict) == ["x"]


def test_check_symbolic_backward_ignores_extra_head_grads():
    # MXNet's executor reads one head gradient per output
    x = mx.sym.Variable("x")
    check_symbolic_backward(x * 3, [np.ones((2, 2))], [np.ones((2, 2)), np.ones((5,))],
                            [np.full((2, 2), 3.0)])


# ---------------------------------------------------------------- norm, reshape inference
def test_norm_keepdims_int():
    a = mx.nd.array(np.arange(12.0).reshape(3, 4))
    r = mx.nd.norm(a, axis=1, keepdims=1)
    assert r.shape == (3, 1)
    b = mx.sym.norm(mx.sym.Variable("a"), axis=(0,), keepdims=0)
    ex = b.bind(mx.cpu(), args={"a": a})
    assert ex.forward()[0].shape == (4,)


@pytest.mark.parametrize("src, args, reverse, dst", [
    ((2, 3, 5, 5), (0, -1), False, (2, 75)),
    ((64, 1, 2, 3), (-4, 16, -1, -2), False, (16, 4, 1, 2, 3)),
    ((2, 3, 5, 5), (5, 3, 0, -1), True, (5, 3, 5, 2)),
])
def test_reshape_infers_unknown_input_dim_from_output(src, args, reverse, dst):
    for i in range(len(src)):
        held = list(src)
        held[i] = 0
        net = mx.sym.Variable("data")
        net = mx.sym.elemwise_add(net.reshape(args, reverse=reverse), mx.sym.ones(shape=dst))
        ins, outs, _ = net.infer_shape(data=tuple(held))
        assert ins[0] == src and outs[0] == dst


# ---------------------------------------------------------------- PythonOp / NumpyOp
def test_numpy_op_default_identity():
    X = mx.sym.Variable("X")
    s = mx.operator.NumpyOp().get_symbol(X, name="numpy_op")
    x = mx.nd.ones((10,)) * 10
    dx = mx.nd.zeros((10,))
    ex = s.bind(mx.cpu(), args=[x], args_grad={"X": dx})
    ex.forward(is_train=True)
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), x.asnumpy())
    ex.backward(mx.nd.ones((10,)) * 3)
    np.testing.assert_allclose(dx.asnumpy(), np.full(10, 3.0))


def test_numpy_op_subclass():
    class Square(mx.operator.NumpyOp):
        def forward(self, in_data, out_data):
            out_data[0][:] = in_data[0] ** 2

        def backward(self, out_grad, in_data, out_data, in_grad):
            in_grad[0][:] = 2 * in_data[0] * out_grad[0]

    op = Square()
    s = op(mx.sym.Variable("data"))
    assert s.list_arguments() == ["data"]
    x = mx.nd.array([1.0, 2.0, 3.0])
    dx = mx.nd.zeros((3,))
    ex = s.bind(mx.cpu(), args={"data": x}, args_grad={"data": dx})
    ex.forward(is_train=True)
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), [1, 4, 9])
    ex.backward(mx.nd.ones((3,)))
    np.testing.assert_allclose(dx.asnumpy(), [2, 4, 6])


def test_ndarray_op_gets_ndarrays():
    seen = []

    class Twice(mx.operator.NDArrayOp):
        def forward(self, in_data, out_data):
            seen.append(type(in_data[0]))
            out_data[0][:] = in_data[0] * 2

        def backward(self, out_grad, in_data, out_data, in_grad):
            in_grad[0][:] = out_grad[0] * 2

    s = Twice()(mx.sym.Variable("data"))
    ex = s.bind(mx.cpu(), args={"data": mx.nd.ones((2,))})
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), [2, 2])
    assert seen and issubclass(seen[0], mx.nd.NDArray)


def test_simple_bind_ignores_operator_keywords():
    data, idx = mx.sym.Variable("a"), mx.sym.Variable("indices")
    res = mx.sym.take(a=data, indices=idx, axis=0, mode="clip")
    ex = res.simple_bind(mx.cpu(), a=(3, 2), indices=(2,), axis=0, mode="clip")
    assert ex.outputs[0].shape == (2, 2)


def test_backward_before_forward():
    # MXNet computes the gradient from the bound arrays without a forward call first
    x = mx.sym.Variable("data")
    y = mx.sym.tile(x, reps=(2, 1))
    arr = mx.nd.ones((2, 3))
    grad = mx.nd.zeros((2, 3))
    ex = y.bind(mx.cpu(), args=[arr], args_grad=[grad])
    ex.backward(mx.nd.ones((4, 3)))
    np.testing.assert_allclose(grad.asnumpy(), np.full((2, 3), 2.0))


def test_symbolic_checks_with_nothing_to_differentiate():
    """MXNet's executor backward is a no-op when no argument takes a gradient (every grad_req
    'null'): check_symbolic_backward / check_numeric_gradient pass there instead of failing on
    an output that is in no graph (test_operator.py's softmin, order, sequence_mask)."""
    import numpy as np
    from neogluon.test_utils import check_numeric_gradient, check_symbolic_backward
    sym = mx.sym.softmin(mx.sym.var("data"), axis=-1)
    data = np.random.uniform(-2, 2, (3, 4)).astype(np.float32)
    grads = check_symbolic_backward(sym, [data], [np.ones((3, 4))], [np.zeros((3, 4))],
                                    grad_req="null")
    assert set(grads) == {"data"}
    check_numeric_gradient(sym, [data], grad_nodes={"data": "null"})
    # with a gradient requested, the check still compares (a wrong expectation fails)
    import pytest
    with pytest.raises(AssertionError):
        check_symbolic_backward(sym, [data], [np.ones((3, 4))], [np.ones((3, 4))],
                                grad_req="write")


@pytest.mark.parametrize("op", ["depth_to_space", "space_to_depth"])
def test_depth_space_refuse_bad_block_sizes_and_empty_dims(op):
    """MXNet refuses block_size 0 and zero-size dimensions with MXNetError (torch would divide
    by zero or reshape an empty array)."""
    fn = getattr(mx.nd, op)
    x = mx.nd.ones((1, 4, 2, 2))
    assert fn(x, 2).shape == ((1, 1, 4, 4) if op == "depth_to_space" else (1, 16, 1, 1))
    for bad, msg in [(0, "block_size must be positive"), ("x", "block_size must be an int")]:
        with pytest.raises(mx.base.MXNetError, match=msg):
            fn(x, bad)
    with pytest.raises(mx.base.MXNetError, match="zero-size"):
        fn(mx.nd.ones((1, 4, 0, 2)), 2)
    with pytest.raises(mx.base.MXNetError, match="4-D"):
        fn(mx.nd.ones((4, 2, 2)), 2)


def test_tile_counts_as_mxnet():
    """tile refuses negative counts, and zero counts outside np_shape mode (MXNet 1.9.1: its
    shape inference fails on a 0, which means 'unknown' there); under np_shape a 0 empties the
    axis."""
    x = mx.nd.ones((2, 2))
    assert mx.nd.tile(x, (2, 1)).shape == (4, 2) and mx.nd.tile(x, ()).shape == (2, 2)
    for reps in [(1, -1), (1, 0, 3), 0]:
        with pytest.raises(mx.base.MXNetError, match="tile: reps"):
            mx.nd.tile(x, reps)
    with mx.util.np_shape(True):
        assert mx.nd.tile(x, (1, 0, 3)).shape == (1, 0, 6)
        with pytest.raises(mx.base.MXNetError):
            mx.nd.tile(x, (1, -1))
