"""More behaviours of MXNet 1.9.1's operators that its test_operator.py relies on (the expected
values below are what MXNet 1.9.1 returns)."""
import numpy as np
import pytest

import neogluon as mx
from neogluon.base import MXNetError


# ---------------------------------------------------------------- norm's out_dtype
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("out_dtype", ["float16", "float32", "float64", "int32", "int64"])
def test_norm_out_dtype(dtype, out_dtype):
    x = mx.nd.array([[1, -2], [3, 4]], dtype=dtype)
    r = mx.nd.norm(x, ord=2, axis=1, out_dtype=out_dtype)
    assert r.dtype == np.dtype(out_dtype)
    want = [2, 5] if out_dtype.startswith("int") else [5 ** 0.5, 5.0]
    np.testing.assert_allclose(r.asnumpy().astype("float64"), want, rtol=1e-3)


def test_norm_out_dtype_accumulates_wide_and_grads_in_data_dtype():
    x = mx.nd.array([[1, -2], [3, 4]], dtype="float16")
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.norm(x, axis=1, out_dtype="float64", keepdims=True)
    y.backward()
    assert y.dtype == np.float64 and y.shape == (2, 1)
    np.testing.assert_allclose(y.asnumpy().ravel(), [5 ** 0.5, 5.0], rtol=1e-12)
    assert x.grad.dtype == np.float16
    np.testing.assert_allclose(x.grad.asnumpy(), [[0.4472, -0.8944], [0.6, 0.8]], rtol=1e-3)


def test_norm_out_dtype_symbol():
    s = mx.sym.norm(mx.sym.var("d"), ord=1, axis=0, out_dtype="float64")
    assert s.infer_type(d="float32")[1] == [np.float64]
    assert mx.sym.norm(mx.sym.var("d")).infer_type(d="float16")[1] == [np.float16]
    r = s.eval(d=mx.nd.array([[1, -2], [3, 4]]))[0]
    assert r.dtype == np.float64 and r.asnumpy().tolist() == [4.0, 6.0]
    with pytest.raises(MXNetError, match="out_dtype"):
        mx.nd.norm(mx.nd.ones((2,)), out_dtype="uint8")


# ---------------------------------------------------------------- scalar / zero-size creation
@pytest.mark.parametrize("maker", ["zeros", "ones"])
@pytest.mark.parametrize("shape", [(), (0,), 0, (5, 0), (0, 1, 3, 0)])
def test_zeros_ones_refuse_unknown_shapes_outside_np_shape(maker, shape):
    with pytest.raises(MXNetError, match="_" + maker):
        getattr(mx.nd, maker)(shape)
    with mx.np_shape():
        a = getattr(mx.nd, maker)(shape)
    want = (shape,) if isinstance(shape, int) else shape
    assert a.shape == want
    assert a.asnumpy().shape == want


def test_empty_full_and_array_still_make_zero_size_arrays():
    # MXNet 1.9.1 makes these outside np_shape mode too
    assert mx.nd.empty((0, 3)).shape == (0, 3)
    assert mx.nd.full((0, 3), 1.0).shape == (0, 3)
    assert mx.nd.array(np.zeros((0, 3))).shape == (0, 3)


def test_executor_buffers_allow_zero_size_shapes():
    # an executor's own buffers are not the _zeros operator: no shape check
    a = mx.nd.ndarray._zeros_buffer((0, 2))
    assert a.shape == (0, 2) and a.dtype == np.float32


# ---------------------------------------------------------------- max/min of an empty array
@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_max_min_refuse_zero_size_input(op, axis):
    a = mx.nd.array(np.zeros((5, 0)))
    with pytest.raises(MXNetError, match="size"):
        getattr(mx.nd, op)(a, axis=axis)
    with pytest.raises(MXNetError):
        getattr(a, op)()


def test_sum_prod_of_zero_size_input_are_identities():
    a = mx.nd.array(np.zeros((0, 3)))
    assert mx.nd.sum(a, axis=0).asnumpy().tolist() == [0.0, 0.0, 0.0]
    assert mx.nd.prod(a, axis=0).asnumpy().tolist() == [1.0, 1.0, 1.0]
    assert mx.nd.sum(a, axis=1).shape == (0,)


# ---------------------------------------------------------------- Pooling with an int kernel
def test_pooling_int_kernel_is_a_one_value_shape():
    x = mx.nd.array(np.arange(10, dtype="float32").reshape(1, 1, 10))
    r = mx.nd.Pooling(x, kernel=2, stride=2, pad=(0, 0, 0), pool_type="max",
                      pooling_convention="same")
    assert r.shape == (1, 1, 5)
    assert r.asnumpy().ravel().tolist() == [1.0, 3.0, 5.0, 7.0, 9.0]
    assert mx.nd.Pooling(x, kernel=3).shape == (1, 1, 8)
    with pytest.raises(MXNetError, match="pad"):
        mx.nd.Pooling(x, kernel=2, stride=2, pad=2, pooling_convention="same")
    with pytest.raises(MXNetError, match="kernel"):
        mx.nd.Pooling(mx.nd.ones((1, 1, 6, 6)), kernel=2)   # 4-D data wants two sizes


# ---------------------------------------------------------------- fractional sequence lengths
def test_sequence_ops_truncate_fractional_lengths():
    x = mx.nd.arange(12).reshape((3, 4))
    lens = mx.nd.array([3.005, 2.9, 1.5, 0.5])
    r = mx.nd.SequenceReverse(x, lens, use_sequence_length=True)
    assert r.asnumpy().tolist() == [[8, 5, 2, 3], [4, 1, 6, 7], [0, 9, 10, 11]]
    m = mx.nd.SequenceMask(x, lens, use_sequence_length=True)
    assert m.asnumpy().tolist() == [[0, 1, 2, 0], [4, 5, 0, 0], [8, 0, 0, 0]]
    last = mx.nd.SequenceLast(x, mx.nd.array([3.005, 2.9, 1.5, 1.0]),
                              use_sequence_length=True)
    assert last.asnumpy().tolist() == [8, 5, 2, 3]
    with pytest.raises(MXNetError, match="sequence_length"):
        mx.nd.SequenceReverse(x, mx.nd.array([4.2, 1, 1, 1]), use_sequence_length=True)


# ---------------------------------------------------------------- unravel_index's leading axis
@pytest.mark.parametrize("shape", [(5, 3), (-1, 3)])
def test_unravel_index_leading_axis_is_not_wrapped(shape):
    r = mx.nd.unravel_index(mx.nd.array([10, 3, 14, 20, 44]), shape=shape)
    assert r.asnumpy().tolist() == [[3, 1, 4, 6, 14], [1, 0, 2, 2, 2]]
    back = mx.nd.ravel_multi_index(r, shape=shape)
    assert back.asnumpy().tolist() == [10, 3, 14, 20, 44]
    s = mx.sym.unravel_index(mx.sym.var("a"), shape=shape)
    assert s.eval(a=mx.nd.array([10, 3]))[0].asnumpy().tolist() == [[3, 1], [1, 0]]


def test_unravel_index_refuses_unknown_inner_axis():
    with pytest.raises(MXNetError, match="unravel_index"):
        mx.nd.unravel_index(mx.nd.array([1]), shape=(3, -1))


# ---------------------------------------------------------------- Cast's gradient
@pytest.mark.parametrize("src", ["int32", "float32", "float16"])
@pytest.mark.parametrize("dst", ["int32", "float32", "float16"])
def test_cast_gradient_in_executor(src, dst):
    y = mx.sym.Cast(mx.sym.Variable("x", dtype=src), dtype=dst)
    exe = y.simple_bind(ctx=mx.cpu(), x=(2, 3))
    X = np.array([[1.4, -2.6, 3], [4, 5.5, -6]])
    exe.arg_arrays[0][:] = X
    exe.forward(is_train=True)
    exe.backward(mx.nd.array(X, dtype=dst))
    assert exe.outputs[0].dtype == np.dtype(dst)
    assert exe.grad_arrays[0].dtype == np.dtype(src)
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), X.astype(src).astype(dst), rtol=1e-3)
    np.testing.assert_allclose(exe.grad_arrays[0].asnumpy(), X.astype(dst).astype(src),
                               rtol=1e-3)


def test_cast_to_int_keeps_the_graph():
    x = mx.nd.array([1.5, 2.5, -3.7])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.cast(x, dtype="int32")
        z = mx.nd.cast(y * y, dtype="float32")
    z.backward()
    assert y.asnumpy().tolist() == [1, 2, -3]
    assert x.grad.asnumpy().tolist() == [2.0, 4.0, -6.0]   # 2 * y, as MXNet


# ---------------------------------------------------------------- two-output linalg symbols
@pytest.mark.parametrize("op, shapes", [
    ("gelqf", [(2, 3, 3), (2, 3, 3)]),
    ("syevd", [(2, 3, 3), (2, 3)]),
    ("slogdet", [(2,), (2,)]),
])
def test_linalg_symbols_with_two_outputs(op, shapes):
    s = getattr(mx.sym.linalg, op)(mx.sym.var("a"))
    assert len(s) == 2
    assert [n.split("_", 1)[1] for n in s.list_outputs()] == ["output0", "output1"]
    assert s.infer_shape(a=(2, 3, 3))[1] == shapes
    first, second = s   # unpacks as in MXNet's tests
    A = np.array([[[4., 1, 0.5], [1, 3, 0.2], [0.5, 0.2, 2]]] * 2)
    outs = s.eval(a=mx.nd.array(A, dtype="float64"))
    want = getattr(mx.nd.linalg, op)(mx.nd.array(A, dtype="float64"))
    for o, w in zip(outs, want):
        np.testing.assert_allclose(o.asnumpy(), w.asnumpy())
    if op == "syevd":
        np.testing.assert_allclose(outs[1].asnumpy()[0], [1.8801, 2.3983, 4.7216], atol=1e-4)
    if op == "slogdet":
        np.testing.assert_allclose(outs[1].asnumpy(), [3.0582, 3.0582], atol=1e-4)


# ---------------------------------------------------------------- CTCLoss past data lengths
@pytest.mark.parametrize("blank_label", ["first", "last"])
def test_ctc_loss_ignores_steps_past_data_length(blank_label):
    rng = np.random.RandomState(0)
    valid = rng.randn(4, 2, 5).astype("float32")
    padded = np.concatenate([valid, np.full((3, 2, 5), np.nan, "float32")])
    label = np.array([[1, 2, 0], [3, 0, 0]], "float32") if blank_label == "first" else \
        np.array([[0, 1, -1], [2, -1, -1]], "float32")
    losses, grads = [], []
    for data in (valid, padded):
        x = mx.nd.array(data)
        x.attach_grad()
        with mx.autograd.record():
            loss = mx.nd.CTCLoss(x, mx.nd.array(label), use_data_lengths=True,
                                 data_lengths=mx.nd.array([4, 3]), blank_label=blank_label)
        loss.backward()
        losses.append(loss.asnumpy())
        grads.append(x.grad.asnumpy())
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-5)
    assert np.isfinite(grads[1]).all()
    np.testing.assert_allclose(grads[1][:4], grads[0], rtol=1e-5, atol=1e-6)
    assert (grads[1][4:] == 0).all()
    assert (grads[0][3:, 1] == 0).all()   # the second sequence has 3 steps


# ---------------------------------------------------------------- Dropout
def test_dropout_p1_is_nan_as_mxnet():
    x = mx.nd.ones((2, 3))
    x.attach_grad()
    for kw in ({}, {"axes": (1,)}):
        with mx.autograd.record():
            y = mx.nd.Dropout(x, p=1.0, **kw)
        y.backward()
        assert np.isnan(y.asnumpy()).all() and np.isnan(x.grad.asnumpy()).all()
    assert np.isnan(mx.nd.Dropout(x, p=1.0, mode="always").asnumpy()).all()
    # outside training (mode='training') it is the identity
    assert mx.nd.Dropout(x, p=1.0).asnumpy().tolist() == [[1.0] * 3] * 2


def test_executor_backward_after_unrecorded_forward_replays_the_same_mask():
    y = mx.sym.Dropout(mx.sym.var("data"), p=0.5, mode="always")
    exe = y.simple_bind(ctx=mx.cpu(), data=(50, 50))
    exe.arg_arrays[0][:] = 1
    for _ in range(3):
        exe.forward(is_train=False)
        out = exe.outputs[0].asnumpy().copy()
        exe.backward([mx.nd.ones((50, 50))], is_train=False)
        assert (exe.grad_arrays[0].asnumpy() == out).all()
        assert (exe.outputs[0].asnumpy() == out).all()
    # the replay leaves the random sequence where one forward pass leaves it
    mx.random.seed(7)
    exe.forward(is_train=False)
    exe.backward([mx.nd.ones((50, 50))])
    after_replay = mx.nd.random.uniform(shape=(4,)).asnumpy()
    mx.random.seed(7)
    exe.forward(is_train=False)
    plain = mx.nd.random.uniform(shape=(4,)).asnumpy()
    assert (after_replay == plain).all()


# ---------------------------------------------------------------- integer mod's gradient
def test_integer_mod_has_a_zero_gradient():
    a = mx.nd.array([5.3, 7.9, 9.1])
    b = mx.nd.array([2.2, 3.5, 4.0])
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        c = mx.nd.cast(a, dtype="int32") % mx.nd.cast(b, dtype="int32")
    c.backward(mx.nd.array([1, 1, 1], dtype="int32"))
    assert c.asnumpy().tolist() == [1, 1, 1]
    assert a.grad.asnumpy().tolist() == [0.0] * 3 and b.grad.asnumpy().tolist() == [0.0] * 3
    x = mx.nd.array([5, 7, 9], dtype="int32")
    x.attach_grad()
    with mx.autograd.record():
        y = x % 4
    y.backward()
    assert y.asnumpy().tolist() == [1, 3, 1] and x.grad.asnumpy().tolist() == [0, 0, 0]
