"""Sparse inputs through symbols and test_utils' checkers, as MXNet 1.9.1's executor runs them
(test_sparse_operator.py's scenarios). Expected values are MXNet's, checked on MXNet 1.9.1."""
import numpy as np
import pytest

import neogluon as mx
from neogluon import autograd, nd
from neogluon.base import MXNetError
from neogluon.test_utils import (check_numeric_gradient, check_symbolic_backward,
                                 check_symbolic_forward)


def _rsp(rows):
    return nd.array(rows).tostype("row_sparse")


def test_numeric_gradient_keeps_the_input_storage_type():
    # sparse.retain refuses a dense input: the finite differences must feed row_sparse data,
    # and the gradient reaches the requested rows the input does not store (row 1)
    data = _rsp([[1, 2], [0, 0], [3, 4]])
    sym = mx.sym.sparse.retain(data=mx.sym.var("data"), indices=mx.sym.var("indices"))
    check_numeric_gradient(sym, [data, nd.array([0, 1])], grad_nodes=["data"],
                           grad_stype_dict={"data": "row_sparse"})


def test_retain_gradient_covers_requested_rows_only():
    x = _rsp([[1, 2], [0, 0], [3, 4]])
    x.attach_grad(stype="row_sparse")
    with autograd.record():
        y = nd.sparse.retain(x, indices=nd.array([0, 1]))
        loss = y * nd.ones((3, 2)) * 2
    loss.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [[2, 2], [2, 2], [0, 0]])


@pytest.mark.parametrize("stype", ["csr", "row_sparse"])
def test_cast_storage_to_own_type_is_differentiable(stype):
    x = nd.array([[1, 0, 2], [0, 0, 0], [0, 3, 0]]).tostype(stype)
    x.attach_grad(stype="default")
    with autograd.record():
        y = nd.cast_storage(x, stype=stype)
        loss = y * nd.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    assert y.stype == stype
    loss.backward()
    # the identity's gradient reaches every position, stored or not
    np.testing.assert_array_equal(x.grad.asnumpy(), [[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    sym = mx.sym.cast_storage(mx.sym.var("x", stype=stype), stype=stype)
    check_numeric_gradient(sym, {"x": x})


def test_symbolic_backward_gradients_are_dense_by_default():
    x = _rsp([[1, 0], [0, 0]])
    sym = mx.sym.cast_storage(mx.sym.var("x"), stype="default")
    res = check_symbolic_backward(sym, {"x": x}, [np.ones((2, 2))], [np.ones((2, 2))])
    assert res["x"].stype == "default"
    res = check_symbolic_backward(sym, {"x": x}, [np.ones((2, 2))], [np.ones((2, 2))],
                                  grad_stypes={"x": "row_sparse"})
    assert res["x"].stype == "row_sparse"


def test_slice_takes_an_int_for_one_axis():
    a = nd.arange(12).reshape((4, 3))
    np.testing.assert_array_equal(nd.slice(a, begin=1, end=3).asnumpy(), a.asnumpy()[1:3])
    c = nd.crop(a.tostype("csr"), begin=1, end=3)
    assert c.stype == "csr"
    np.testing.assert_array_equal(c.asnumpy(), a.asnumpy()[1:3])
    y = mx.sym.slice(mx.sym.var("x"), begin=1, end=3)
    assert y.infer_shape(x=(4, 3))[1] == [(2, 3)]


@pytest.mark.parametrize("kwargs", [{}, {"preserve_shape": True}, {"multi_output": True},
                                    {"normalization": "batch", "grad_scale": 2.0}])
def test_softmax_output_takes_a_probability_label(kwargs):
    y = mx.sym.SoftmaxOutput(mx.sym.var("X"), mx.sym.var("L"), **kwargs)
    assert y.infer_shape(X=(3, 4), L=(3, 4))[0] == [(3, 4), (3, 4)]
    with pytest.raises(MXNetError):
        y.infer_shape(X=(3, 4), L=(3, 5))
    rng = np.random.RandomState(0)
    x = nd.array(rng.rand(3, 4))
    lab = nd.array(rng.rand(3, 4)).tostype("csr")
    grad = nd.zeros((3, 4))
    ex = y.bind(mx.cpu(), args=[x, lab], args_grad={"X": grad})
    ex.forward(is_train=True)
    ex.backward()
    p = np.exp(x.asnumpy()) / np.exp(x.asnumpy()).sum(1, keepdims=True)
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), p, rtol=1e-5)
    # (softmax - label) * grad_scale: no normalization with a probability label
    np.testing.assert_allclose(grad.asnumpy(), (p - lab.asnumpy()) * kwargs.get("grad_scale", 1),
                               rtol=1e-5, atol=1e-6)


def _bind_grads(sym, **shapes):
    ex = sym.simple_bind(mx.cpu(), **shapes)
    return {k: v.stype for k, v in ex.grad_dict.items()}


def test_simple_bind_gives_the_gradient_storage_mxnet_infers():
    d = mx.sym.var("data")
    wd, wr = mx.sym.var("w"), mx.sym.var("w", stype="row_sparse")
    c = mx.sym.var("c", stype="csr")
    emb = mx.sym.sparse.Embedding
    assert _bind_grads(emb(d, wd, input_dim=5, output_dim=3, sparse_grad=True),
                       data=(4,))["w"] == "row_sparse"
    assert _bind_grads(emb(d, wr, input_dim=5, output_dim=3, sparse_grad=False),
                       data=(4,))["w"] == "default"
    assert _bind_grads(mx.sym.contrib.SparseEmbedding(d, wd, input_dim=5, output_dim=3),
                       data=(4,))["w"] == "row_sparse"
    assert _bind_grads(mx.sym.dot(c, mx.sym.var("v")), c=(4, 3), v=(3, 2)) == \
        {"c": "default", "v": "row_sparse"}
    assert _bind_grads(mx.sym.dot(c, mx.sym.var("v"), transpose_a=True), c=(4, 3),
                       v=(4, 2))["v"] == "default"
    assert _bind_grads(mx.sym.elemwise_add(wr, mx.sym.var("v")), w=(4, 3), v=(4, 3)) == \
        {"w": "default", "v": "default"}
    assert _bind_grads(mx.sym.elemwise_sub(c, mx.sym.var("v", stype="csr")), c=(4, 3),
                       v=(4, 3)) == {"c": "csr", "v": "csr"}
    assert _bind_grads(mx.sym.cast_storage(mx.sym.var("v"), stype="row_sparse"),
                       v=(4, 3)) == {"v": "row_sparse"}


@pytest.mark.parametrize("weight_stype", ["default", "row_sparse"])
def test_embedding_gradient_names_every_used_row(weight_stype):
    # a row_sparse weight storing no rows still gets the gradient of the rows the batch used
    sym = mx.sym.sparse.Embedding(mx.sym.var("data"), mx.sym.var("w", stype=weight_stype),
                                  input_dim=6, output_dim=2, sparse_grad=True)
    ex = sym.simple_bind(mx.cpu(), grad_req={"data": "null", "w": "write"}, data=(3,))
    ex.arg_dict["data"][:] = nd.array([4, 1, 4])
    ex.arg_dict["w"][:] = nd.array([[0, 0], [1, 2], [0, 0], [0, 0], [0, 0], [0, 0]]).tostype(
        weight_stype)
    ex.forward(is_train=True)
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), [[0, 0], [1, 2], [0, 0]])
    ex.backward([nd.array([[1, 1], [2, 3], [5, 7]])])
    g = ex.grad_dict["w"]
    assert g.stype == "row_sparse"
    expect = np.zeros((6, 2))
    expect[4] = [6, 8]
    expect[1] = [2, 3]
    np.testing.assert_array_equal(g.asnumpy(), expect)


def test_sparse_inputs_keep_their_storage_in_an_executor():
    lhs = nd.array([[1, 2], [0, 0], [3, 4], [0, 0]]).tostype("row_sparse")
    rhs = nd.array([[2, 2], [4, 4], [0, 0], [0, 0]])
    sym = mx.sym._internal._scatter_elemwise_div(mx.sym.var("lhs"), mx.sym.var("rhs"))
    out = sym.bind(mx.cpu(), args={"lhs": lhs, "rhs": rhs}).forward()[0]
    assert out.stype == "row_sparse"
    np.testing.assert_array_equal(out.indices.asnumpy(), [0, 2])
    sym = mx.sym._internal._scatter_plus_scalar(mx.sym.var("lhs"), 9)
    out = sym.bind(mx.cpu(), args={"lhs": nd.array(lhs.asnumpy()).tostype("csr")}).forward()[0]
    assert out.stype == "csr"
    np.testing.assert_array_equal(out.asnumpy(), [[10, 11], [0, 0], [12, 13], [0, 0]])


def test_quadratic_keeps_csr_when_c_is_zero():
    x = nd.array([[1, 0], [0, 2]]).tostype("csr")
    out = nd.contrib.quadratic(x, a=1.0, b=2.0, c=0.0)
    assert out.stype == "csr"
    np.testing.assert_array_equal(out.asnumpy(), [[3, 0], [0, 8]])
    assert nd.contrib.quadratic(x, a=1.0, b=2.0, c=1.0).stype == "default"
    assert nd.contrib.quadratic(nd.array(x.asnumpy()).tostype("row_sparse"), a=1.0,
                                b=2.0).stype == "default"


def test_dot_gradients_reach_positions_the_sparse_operand_does_not_store():
    a = np.array([[1., 0, 2], [0, 3, 0]])
    w = np.array([[1., 2], [0, 0], [0, 0]])
    # dot(dense, csr): d/d(csr) = lhs.T @ g, dense
    sym = mx.sym.sparse.dot(mx.sym.var("lhs"), mx.sym.var("rhs", stype="csr"))
    g = np.ones((2, 2))
    check_symbolic_backward(sym, {"lhs": nd.array(a), "rhs": nd.array(w).tostype("csr")}, [g],
                            {"rhs": a.T @ g}, grad_req={"lhs": "null", "rhs": "write"})
    # dot(csr.T, row_sparse): d/d(rsp) = csr @ g, also for rows the weight does not store
    c = np.array([[1., 0], [0, 2], [3, 0]])
    sym = mx.sym.sparse.dot(mx.sym.var("lhs", stype="csr"),
                            mx.sym.var("rhs", stype="row_sparse"), transpose_a=True)
    g = np.ones((2, 2))
    check_symbolic_backward(sym, {"lhs": nd.array(c).tostype("csr"),
                                  "rhs": nd.array(w).tostype("row_sparse")}, [g],
                            {"rhs": c @ g}, grad_req={"lhs": "null", "rhs": "write"})


def test_batchnorm_refuses_fix_gamma_with_sparse_inputs():
    data = nd.array(np.random.RandomState(0).rand(2, 3)).tostype("row_sparse")
    gamma, beta, mean, var = (nd.ones((3,)) for _ in range(4))
    with pytest.raises(MXNetError, match="fix_gamma"):
        nd.BatchNorm(data, gamma, beta, mean, var, fix_gamma=True)
    out = nd.BatchNorm(data, gamma, beta, mean, var, fix_gamma=False)
    assert out.shape == (2, 3)


def test_cbrt_and_gamma_gradients_as_mxnet():
    x = nd.array([0., 8., -8.])
    x.attach_grad()
    with autograd.record():
        y = nd.cbrt(x)
    y.backward(nd.ones((3,)))
    np.testing.assert_allclose(x.grad.asnumpy(), [np.inf, 1 / 12, 1 / 12], rtol=1e-5)
    with autograd.record():
        y = nd.rcbrt(x)
    y.backward(nd.ones((3,)))
    np.testing.assert_allclose(x.grad.asnumpy(), [-np.inf, -1 / 48, -1 / 48], rtol=1e-5)
    x = nd.array([0., 1., 2.5, -0.5])
    x.attach_grad()
    with autograd.record():
        y = nd.gamma(x)
    y.backward(nd.ones((4,)))
    np.testing.assert_allclose(y.asnumpy(), [np.inf, 1., 1.3293404, -3.5449077], rtol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), [np.inf, -0.5772157, 0.9347348, -0.1293534],
                               rtol=1e-4)
    with autograd.record():
        y = nd.gammaln(x)
    y.backward(nd.ones((4,)))
    np.testing.assert_allclose(x.grad.asnumpy(), [np.inf, -0.5772157, 0.7031568, 0.0364899],
                               rtol=1e-4)
    assert np.isnan(nd.gamma(nd.array([-1., -2.])).asnumpy()).all()


# MXNet 1.9.1's output storage of the same-shape elementwise operators, by (lhs, rhs) stype
_STYPE_TABLE = {
    "elemwise_add": {("row_sparse", "row_sparse"): "row_sparse", ("csr", "csr"): "csr"},
    "elemwise_sub": {("row_sparse", "row_sparse"): "row_sparse", ("csr", "csr"): "csr"},
    "elemwise_mul": {("row_sparse", "row_sparse"): "row_sparse", ("csr", "csr"): "csr",
                     ("default", "row_sparse"): "row_sparse",
                     ("row_sparse", "default"): "row_sparse",
                     ("default", "csr"): "csr", ("csr", "default"): "csr"},
    "elemwise_div": {},
    "_maximum": {("row_sparse", "row_sparse"): "row_sparse", ("csr", "csr"): "csr"},
    "_minimum": {("row_sparse", "row_sparse"): "row_sparse", ("csr", "csr"): "csr"},
    "_hypot": {("row_sparse", "row_sparse"): "row_sparse", ("csr", "csr"): "csr"},
}


@pytest.mark.parametrize("op", sorted(_STYPE_TABLE))
def test_elemwise_output_storage_types(op):
    a = np.array([[1., 2], [0, 0], [3, -4]])
    b = np.array([[2., 0], [0, 0], [1, 1]])
    ref = {"elemwise_add": np.add, "elemwise_sub": np.subtract, "elemwise_mul": np.multiply,
           "elemwise_div": np.divide, "_maximum": np.maximum, "_minimum": np.minimum,
           "_hypot": np.hypot}[op]
    f = getattr(mx.sym, op, None) or getattr(mx.sym._internal, op)
    for ls in ("default", "row_sparse", "csr"):
        for rs in ("default", "row_sparse", "csr"):
            y = f(mx.sym.var("l", stype=ls), mx.sym.var("r", stype=rs))
            out = y.bind(mx.cpu(), args={"l": nd.array(a).tostype(ls),
                                         "r": nd.array(b).tostype(rs)}).forward()[0]
            assert out.stype == _STYPE_TABLE[op].get((ls, rs), "default"), (ls, rs)
            with np.errstate(divide="ignore", invalid="ignore"):
                np.testing.assert_allclose(out.asnumpy(), ref(a, b), rtol=1e-6)


def test_sparse_multiply_of_dense_and_sparse_is_sparse_but_the_operator_is_not():
    s = nd.array([[1., 2], [0, 0]]).tostype("row_sparse")
    d = nd.ones((2, 2))
    assert nd.sparse.multiply(d, s).stype == "row_sparse"
    assert nd.elemwise_mul(d, s).stype == "row_sparse"
    assert (d * s).stype == "default"
    assert (s * d).stype == "row_sparse"


def test_maximum_of_sparse_arrays_gives_ties_to_lhs():
    l = nd.sparse.zeros("row_sparse", (3, 2))
    r = nd.sparse.zeros("row_sparse", (3, 2))
    sym = mx.sym._internal._maximum(mx.sym.var("l", stype="row_sparse"),
                                    mx.sym.var("r", stype="row_sparse"))
    g = np.ones((3, 2))
    check_symbolic_backward(sym, {"l": l, "r": r}, [nd.array(g).tostype("row_sparse")],
                            {"l": g, "r": np.zeros((3, 2))})
    sym = mx.sym._internal._minimum(mx.sym.var("l", stype="row_sparse"),
                                    mx.sym.var("r", stype="row_sparse"))
    check_symbolic_backward(sym, {"l": l, "r": r}, [nd.array(g).tostype("row_sparse")],
                            {"l": g, "r": np.zeros((3, 2))})


def test_softmax_output_label_smoothing():
    x = nd.array([[1., 6, 4, 2]])
    grad = nd.zeros((1, 4))
    sym = mx.sym.SoftmaxOutput(mx.sym.var("x"), mx.sym.var("label"), smooth_alpha=0.2)
    ex = sym.bind(mx.cpu(), args={"x": x, "label": nd.array([1])}, args_grad={"x": grad})
    ex.forward(is_train=True)
    ex.backward()
    p = ex.outputs[0].asnumpy()
    # 1 - alpha on the label's class, alpha / (k - 1) on the others
    np.testing.assert_allclose(grad.asnumpy() - p, [[-0.2 / 3, -0.8, -0.2 / 3, -0.2 / 3]],
                               rtol=1e-5, atol=1e-6)


def test_hypot_with_a_scalar():
    x = nd.array([3., 0.])
    np.testing.assert_allclose(nd.hypot(x, 4).asnumpy(), [5., 4.])
    y = mx.sym.hypot(mx.sym.var("x"), 4)
    assert y.infer_shape(x=(2,))[1] == [(2,)]
    np.testing.assert_allclose(y.eval(x=x)[0].asnumpy(), [5., 4.])


def test_add_n_of_row_sparse_inputs_passes_the_whole_gradient_to_each():
    a = nd.array([[1., 2], [0, 0], [0, 0]]).tostype("row_sparse")
    b = nd.sparse.zeros("row_sparse", (3, 2))
    grads = [nd.sparse.zeros("row_sparse", (3, 2)) for _ in range(2)]
    sym = mx.sym.sparse.add_n(mx.sym.var("a"), mx.sym.var("b"))
    ex = sym.bind(mx.cpu(), args=[a, b], args_grad=grads)
    ex.forward(is_train=True)
    assert ex.outputs[0].stype == "row_sparse"
    g = np.arange(6.).reshape(3, 2)
    ex.backward([nd.array(g)])
    for buf in grads:
        np.testing.assert_array_equal(buf.asnumpy(), g)
