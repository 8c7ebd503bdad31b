"""Small ``nd`` gaps checked against MXNet 1.9.1 (fixtures from tools/gen_nd_polish_fixtures.py):
pick's index shapes, zero-size reshape/flatten, the nd namespace, a few operators, read-only
numpy sources and the context of arrays computed from cpu_shared/cpu_pinned inputs."""
import json
import os
import re
import warnings

import numpy as np
import pytest

import neogluon as mx
from neogluon import autograd, nd
from neogluon.base import MXNetError

FX = os.path.join(os.path.dirname(__file__), "fixtures", "nd_polish", "nd_polish.json")
with open(FX) as _f:
    FIX = json.load(_f)


def _arr(values, dtype):
    return nd.array(np.array(values, dtype=dtype), dtype=dtype)


def _check_out(r, exp, rtol=1e-6, atol=1e-6):
    assert list(r.shape) == exp["shape"]
    assert r.stype == exp.get("stype", "default")
    assert np.dtype(r.dtype).name == exp["dtype"]
    np.testing.assert_allclose(r.asnumpy().astype(np.float64),
                               np.array(exp["value"], dtype=np.float64).reshape(exp["shape"]),
                               rtol=rtol, atol=atol)


# ------------------------------------------------------------------------------------- pick
@pytest.mark.parametrize("case", FIX["pick"]["cases"], ids=lambda c: c["name"])
def test_pick_matches_mxnet(case):
    data = _arr(case["data"], case["data_dtype"])
    index = _arr(case["index"], case["index_dtype"])
    res = case["result"]
    if "error" in res:
        with pytest.raises(MXNetError) as ei:
            nd.pick(data, index, **case["kwargs"])
        msg = str(ei.value)
        assert "pick" in msg
        if "Shape inconsistent" in res["message"]:
            # the message names both shapes
            assert str(data.shape) in msg and str(index.shape) in msg
        return
    _check_out(nd.pick(data, index, **case["kwargs"]), res)
    # the fluent method is the same operator
    _check_out(data.pick(index, **case["kwargs"]), res)


def test_pick_gradient_with_kept_axis_index():
    g = FIX["pick"]["grad"]
    a = nd.array(np.arange(12, dtype="float32").reshape(3, 4))
    a.attach_grad()
    with autograd.record():
        r = nd.pick(a, nd.array([[1], [2], [7]]), axis=1, mode="wrap")
    r.backward(nd.array([1.0, 2.0, 3.0]))
    _check_out(r, g["out"])
    np.testing.assert_array_equal(a.grad.asnumpy(), np.array(g["grad"], dtype="float32"))


def test_pick_never_returns_a_short_result():
    x = nd.ones((3, 4))
    with pytest.raises(MXNetError, match=r"\(2,\).*\(3, 4\)"):
        nd.pick(x, nd.array([0, 1]), axis=1)


# ------------------------------------------------------------------------------- zero-size
@pytest.mark.parametrize("case", FIX["zero_size"]["reshape"],
                         ids=lambda c: f"{c['shape']}->{c['code']}{'r' if c['reverse'] else ''}")
def test_zero_size_reshape_matches_mxnet(case):
    a = nd.array(np.zeros(case["shape"], dtype="float32"))
    res = case["result"]
    if isinstance(res, list):
        r = a.reshape(tuple(case["code"]), reverse=case["reverse"])
        assert list(r.shape) == res
        assert list(nd.reshape(a, shape=tuple(case["code"]), reverse=case["reverse"]).shape) \
            == res
        return
    # MXNet raises here, or dies with SIGFPE (a -1 next to a zero-size dimension is
    # ambiguous); neogluon raises an error naming the shapes.
    with pytest.raises(MXNetError) as ei:
        a.reshape(tuple(case["code"]), reverse=case["reverse"])
    assert str(tuple(case["shape"])) in str(ei.value)


@pytest.mark.parametrize("case", [c for c in FIX["zero_size"]["flatten"] if c["np_shape"]],
                         ids=lambda c: str(c["shape"]))
def test_flatten_of_zero_size_arrays(case):
    # MXNet 1.9.1 gives these shapes with np_shape semantics; in its legacy shape mode a
    # zero-size dimension means "unknown" and Flatten fails shape inference instead.
    a = nd.array(np.zeros(case["shape"], dtype="float32"))
    exp = case["result"]
    assert list(a.flatten().shape) == exp["method"]
    assert list(nd.Flatten(a).shape) == exp["Flatten"]
    assert list(nd.flatten(a).shape) == exp["flatten"]


@pytest.mark.parametrize("case", [c for c in FIX["zero_size"]["dense"] if c["np_shape"]],
                         ids=lambda c: f"{c['shape']}-flatten{c['flatten']}")
def test_fully_connected_on_an_empty_batch(case):
    shape = case["shape"]
    k = int(np.prod(shape[1:])) if case["flatten"] else shape[-1]
    # (nd.array, as the fixture's generator: nd.zeros refuses a zero-size shape outside
    # np_shape mode, as in MXNet)
    r = nd.FullyConnected(nd.array(np.zeros(tuple(shape))), nd.ones((5, k)), nd.ones((5,)),
                          num_hidden=5, flatten=case["flatten"])
    assert list(r.shape) == case["result"]


def test_dense_layer_on_an_empty_batch():
    net = mx.gluon.nn.Dense(5, in_units=12)
    net.initialize()
    assert net(nd.array(np.zeros((0, 3, 4)))).shape == (0, 5)


# ------------------------------------------------------------------------------- namespace
def test_namespace_aliases_match_mxnet():
    # batch_flatten and softrelu are not in MXNet 1.9.1's mx.nd (batch_flatten is mx.npx's).
    for name, present in FIX["namespace"]["hasattr"].items():
        assert hasattr(nd, name) == present, name
    for name in ("flatten", "pick", "softmin", "log_softmax"):
        assert hasattr(nd.NDArray, name) == FIX["namespace"]["fluent"][name], name
    assert nd.Flatten is nd.flatten


def test_names_added_here_are_mxnet_names():
    names = set(FIX["namespace"]["names"])
    for name in ("cumsum", "crop", "amp_cast", "amp_multicast", "khatri_rao", "histogram",
                 "cast_storage", "choose_element_0index"):
        assert name in names and hasattr(nd, name)


# ------------------------------------------------------------------------------- operators
_OPS = [c for c in FIX["ops"] if c["name"] != "cumsum_axis_neg1"]


@pytest.mark.parametrize("case", _OPS, ids=lambda c: c["name"])
def test_operator_matches_mxnet(case):
    ins = [_arr(a, d) for a, d in zip(case["inputs"], case["dtypes"])]
    kw = dict(case["kwargs"])
    if "range" in kw:
        kw["range"] = tuple(kw["range"])
    for k in ("begin", "end", "step"):
        if k in kw:
            kw[k] = tuple(kw[k])
    fn = getattr(nd, case["op"])
    res = case["result"]
    if "error" in res:
        with pytest.raises(MXNetError):
            fn(*ins, **kw)
        return
    if case["op"] == "histogram" and "bins" in kw and "range" not in kw:
        with pytest.warns(UserWarning, match="range"):
            r = fn(*ins, **kw)
    else:
        r = fn(*ins, **kw)
    if "outputs" in res:
        assert len(r) == len(res["outputs"])
        for o, e in zip(r, res["outputs"]):
            _check_out(o, e, rtol=1e-5)
    else:
        _check_out(r, res, rtol=1e-5, atol=1e-6)


def test_cumsum_negative_axis_counts_from_the_end():
    # MXNet 1.9.1 rejects axis=-1 (its own bounds check is off); neogluon accepts it and
    # gives MXNet's axis=1 result for a matrix.
    c = next(c for c in FIX["ops"] if c["name"] == "cumsum_axis_neg1")
    assert "error" in c["result"]
    x = _arr(c["inputs"][0], c["dtypes"][0])
    np.testing.assert_array_equal(nd.cumsum(x, axis=-1).asnumpy(),
                                  nd.cumsum(x, axis=1).asnumpy())
    np.testing.assert_allclose(nd.cumsum(x, axis=1).asnumpy(),
                               np.cumsum(x.asnumpy(), axis=1), rtol=1e-6)


# ------------------------------------------------------------------------- read-only numpy
def _readonly_sources(tmp_path):
    ro = np.arange(6, dtype=np.float32).reshape(2, 3)
    ro.flags.writeable = False
    path = str(tmp_path / "m.dat")
    m = np.memmap(path, dtype=np.float32, mode="w+", shape=(2, 3))
    m[:] = np.arange(6).reshape(2, 3)
    m.flush()
    del m
    mr = np.memmap(path, dtype=np.float32, mode="r", shape=(2, 3))
    bc = np.broadcast_to(np.arange(3, dtype=np.float32), (2, 3))
    return {"readonly": ro, "memmap_r": mr, "broadcast_to": bc}


def test_readonly_numpy_sources_match_mxnet():
    f = FIX["readonly"]
    b = np.broadcast_to(np.arange(3.0), (2, 3))
    ro = np.arange(4, dtype="int32")
    ro.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _check_out(nd.array(b), f["broadcast_to"])
        _check_out(nd.array(b, dtype="float64"), f["broadcast_to_f64"])
        _check_out(nd.array(ro), f["readonly_int32"])
        _check_out(nd.array(ro, dtype="int32"), f["readonly_int32_keep"])


def test_readonly_sources_copy_without_warning_and_are_never_written(tmp_path):
    srcs = _readonly_sources(tmp_path)
    for name, src in srcs.items():
        before = np.array(src, copy=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # torch's "non-writable" UserWarning would raise
            made = [nd.array(src), nd.array(src, dtype="float64"), nd.NDArray(src),
                    nd.from_numpy(src, zero_copy=src.flags.c_contiguous),
                    nd.array(src, ctx=mx.cpu(1))]
            a = nd.ones((2, 3))
            a += src
            a[:] = src
            a[0] = src[0]
            _ = [a // src, a == src, src - a, a + src]
        for x in made:
            x[:] = 99
            x += 1
        np.testing.assert_array_equal(np.asarray(src), before, err_msg=name)


def test_writable_numpy_sources_are_copied_by_array():
    n = np.arange(6, dtype=np.float32).reshape(2, 3)
    for x in (nd.array(n), nd.array(n, dtype="float32"), nd.NDArray(n)):
        x[:] = -1
    assert n.ravel().tolist() == list(range(6))


# ------------------------------------------------------------------------------- contexts
def _eval_ctx_expr(expr, s):
    a = nd.ones((2, 3), ctx=s)
    b = nd.ones((2, 3))
    if expr == "Dense(4)(a)":
        net = mx.gluon.nn.Dense(4)
        net.initialize()
        return net(a)
    return eval(expr, {"nd": nd, "np": np, "a": a, "b": b, "s": s})  # noqa: S307 - fixed


_CTX_CASES = [(cname, expr, want) for cname, table in FIX["contexts"].items()
              for expr, want in table.items() if isinstance(want, str)]


@pytest.mark.parametrize("cname,expr,want", _CTX_CASES,
                         ids=[f"{c}:{e}" for c, e, _ in _CTX_CASES])
def test_context_reported_like_mxnet(cname, expr, want):
    dev, i = cname[:-1].split("(")
    s = mx.Context(dev, int(i))
    assert str(_eval_ctx_expr(expr, s).context) == want


@pytest.mark.parametrize("cname", sorted(FIX["contexts"]))
def test_gradient_context_like_mxnet(cname):
    dev, i = cname[:-1].split("(")
    a = nd.ones((2, 3), ctx=mx.Context(dev, int(i)))
    a.attach_grad()
    with autograd.record():
        y = a * 2
    want = FIX["contexts"][cname]["grad"]
    assert str(y.context) == want["recorded"]
    y.backward()
    assert str(a.grad.context) == want["grad"]


def test_op_outputs_on_shared_memory_move_like_cpu_arrays():
    s = mx.Context("cpu_shared", 0)
    a = nd.ones((2, 3), ctx=s)
    r = nd.relu(a)
    assert r.as_in_context(mx.cpu(0)) is r  # already on cpu(0)
    back = r.as_in_context(s)
    assert back is not r and back.context == s
    assert "@cpu(0)" in repr(r) and "@cpu_shared(0)" in repr(a)


# ------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize("expr", sorted(FIX["bad_input"]))
def test_bad_input_gives_mxnet_error_not_torch_error(expr):
    x = nd.array(np.arange(6).reshape(2, 3))
    want = FIX["bad_input"][expr]
    if expr == "nd.norm(x.astype('int32'))":
        # MXNet 1.9.1's integer L2 norm divides integers inside its scaled sum of squares
        # and returns 5 for sqrt(55); neogluon truncates the true norm.
        assert want["value"] == [5]
        r = nd.norm(x.astype("int32"))
        assert r.dtype == np.int32 and r.asnumpy().tolist() == [int(np.sqrt(55))]
        return
    if "error" not in want:
        r = eval(expr, {"nd": nd, "np": np, "x": x})  # noqa: S307 - fixed expressions
        _check_out(r[0] if isinstance(r, (list, tuple)) else r, want)
        return
    if want["error"] == "AssertionError":  # not an NDArray: MXNet asserts
        with pytest.raises(AssertionError, match="NDArray"):
            eval(expr, {"nd": nd, "np": np, "x": x})  # noqa: S307
        return
    assert want["error"] == "MXNetError"
    with pytest.raises(MXNetError) as ei:
        eval(expr, {"nd": nd, "np": np, "x": x})  # noqa: S307
    # the message names the offending argument or the shapes/dtypes involved
    assert re.search(r"axis|shape|dtype|depth|step|repeat|num|diagonal|\(", str(ei.value))


def test_amp_multicast_widest_and_narrowest():
    # MXNet 1.9.1's MKLDNN CPU build refuses float16 here, so this follows its documentation:
    # floats go to the widest float type among the inputs (the narrowest with cast_narrow).
    a = nd.array([1.5, 2.25], dtype="float32")
    h = nd.array([0.5, 3.0], dtype="float16")
    i = nd.array([1, 2], dtype="int32")
    wide = nd.amp_multicast(a, h, i, num_outputs=3)
    assert [np.dtype(o.dtype).name for o in wide] == ["float32", "float32", "int32"]
    narrow = nd.amp_multicast(a, h, i, num_outputs=3, cast_narrow=True)
    assert [np.dtype(o.dtype).name for o in narrow] == ["float16", "float16", "int32"]
    np.testing.assert_array_equal(wide[1].asnumpy(), [0.5, 3.0])
    with pytest.raises(MXNetError):
        nd.amp_multicast(a, h, num_outputs=3)


def test_sequence_ops_refuse_lengths_beyond_the_time_axis():
    # MXNet 1.9.1 reads past the array here (garbage values, heap corruption); neogluon
    # names the length and the number of steps.
    d = nd.ones((3, 2, 4))
    for op in (nd.SequenceLast, nd.SequenceReverse):
        with pytest.raises(MXNetError, match="5.*3 time steps"):
            op(d, nd.array([1, 5]), use_sequence_length=True)
    ok = nd.SequenceLast(d, nd.array([1, 3]), use_sequence_length=True)
    assert ok.shape == (2, 4)


@pytest.mark.parametrize("axis", [1.5, "1", (0, 1.5), True, [0, None]])
def test_reduction_axis_must_be_ints(axis):
    # MXNet 1.9.1: "Invalid Parameter format for axis expect Shape or None"
    with pytest.raises(MXNetError, match="axis"):
        nd.sum(nd.ones((2, 3)), axis=axis)
    np.testing.assert_array_equal(nd.sum(nd.ones((2, 3)), axis=np.int64(1)).asnumpy(), [3, 3])
    np.testing.assert_array_equal(nd.sum(nd.ones((2, 3)), axis=[0, 1]).asnumpy(), [6])


def test_clip_needs_both_bounds():
    # MXNet 1.9.1: "Invalid Parameter format for a_min expect float but value='None'"
    x = nd.arange(4)
    with pytest.raises(MXNetError, match="a_min"):
        nd.clip(x, None, 2)
    with pytest.raises(MXNetError, match="a_max"):
        x.clip(0, None)
    np.testing.assert_array_equal(nd.clip(x, np.float32(0.5), 2).asnumpy(), [0.5, 1, 2, 2])


@pytest.mark.parametrize("call", [
    lambda x: nd.Activation(x, act_type="relu"),
    lambda x: nd.Pooling(x.reshape((1, 1, 2, 2)), kernel=(2, 2)),
    lambda x: nd.Dropout(x, p=0.5)])
def test_float_only_operators_refuse_integers(call):
    # MXNet 1.9.1: "This operation only support floating point types, not int32"
    with pytest.raises(MXNetError, match="floating point.*int32"):
        call(nd.array([1, 2, 3, 4], dtype="int32"))
    assert call(nd.array([1, 2, 3, 4], dtype="float16")).dtype == np.float16


def test_out_of_bounds_array_index_message_is_one_line():
    x = nd.arange(4)
    with pytest.raises(IndexError) as ei:
        x[nd.array([0, 5])]
    msg = str(ei.value)
    assert "\n" not in msg and "NDArray(2,) [0., 5.]" in msg and "shape (4,)" in msg
    with pytest.raises(IndexError, match=r"too many indices.*shape \(4,\)"):
        x[0, nd.array([1])]
    with pytest.raises(IndexError, match=r"NDArray\(2,\) \[0\., 9\.\]"):
        x[nd.array([0, 9])] = 1


def test_relu_gradient_is_nan_where_the_input_is_nan():
    # MXNet's relu operator passes NaN on in both directions (MXNet 1.9.1:
    # relu([nan, -1, 2, 0]) -> [nan, 0, 2, 0], gradient [nan, 0, 1, 0]).
    import neogluon as mx
    x = mx.nd.array([np.nan, -1, 2, 0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.relu(x)
    y.backward()
    np.testing.assert_equal(y.asnumpy(), [np.nan, 0, 2, 0])
    np.testing.assert_equal(x.grad.asnumpy(), [np.nan, 0, 1, 0])


def test_concat_and_stack_accept_name_as_every_mxnet_op():
    """tree_lstm passes name= to F.concat in an imperative Block (every MXNet nd operator takes
    and ignores name=)."""
    a, b = nd.ones((1, 2)), nd.zeros((1, 2))
    np.testing.assert_array_equal(nd.concat(a, b, dim=1, name="hc").asnumpy(), [[1, 1, 0, 0]])
    np.testing.assert_array_equal(nd.Concat(a, b, dim=0, name="hc").shape, (2, 2))
    assert nd.stack(a, b, axis=0, name="s").shape == (2, 1, 2)


# ---------------------------------------------------------------- checked against MXNet 1.9.1
def test_comparisons_with_a_number_first():
    x = nd.array([1, 2, 3])
    assert nd.equal(2, x).asnumpy().tolist() == [0, 1, 0]
    assert nd.greater(2, x).asnumpy().tolist() == [1, 0, 0]          # 2 > x
    assert nd.lesser_equal(2, x).asnumpy().tolist() == [0, 1, 1]     # 2 <= x
    assert nd.greater(2, x).dtype == np.float32
    assert nd.greater(2, 3) == 0 and nd.equal(2, 2) == 1             # two numbers: a number


def test_mod_by_zero_is_zero_and_keeps_the_divisor_sign_elsewhere():
    assert (nd.array([5, -5]) % 0).asnumpy().tolist() == [0, 0]
    assert (nd.array([5, -5], dtype="int32") % 0).asnumpy().tolist() == [0, 0]
    assert (nd.array([5, -5]) % 3).asnumpy().tolist() == [2, 1]
    assert (7 % nd.array([0, 3, -3])).asnumpy().tolist() == [0, 1, -2]
    assert nd.modulo(nd.array([5, -5]), nd.array([0, 3])).asnumpy().tolist() == [0, 1]
    assert nd.broadcast_mod(nd.array([[5], [-5]]), nd.array([0, 3])).asnumpy().tolist() == \
        [[0, 2], [0, 1]]
    y = nd.array([5, -5], dtype="int32")
    y %= 0
    assert y.asnumpy().tolist() == [0, 0] and y.dtype == np.int32


def test_in_place_division_of_an_integer_array_truncates():
    w = nd.array([4, 6, 8], dtype="int32")
    w /= 3
    assert w.asnumpy().tolist() == [1, 2, 2] and w.dtype == np.int32
    w = nd.array([-4, 6, 8], dtype="int32")
    w /= nd.array([3, 3, 3], dtype="int32")
    assert w.asnumpy().tolist() == [-1, 2, 2]


def test_take_raise_mode_and_unknown_modes():
    a = nd.arange(12).reshape((3, 4))
    # (MXNet checks the indices in the kernel: the error comes at the next synchronisation
    # on the result, or on what is computed from it)
    bad = nd.take(a, nd.array([5]), mode="raise")
    assert bad.shape == (1, 4)
    with pytest.raises(MXNetError, match="out of bounds"):
        (bad + 1).asnumpy()
    with pytest.raises(MXNetError, match="out of bound"):
        nd.take(a, nd.array([[-7, 1]]), axis=1, mode="raise").wait_to_read()
    assert nd.take(a, nd.array([1]), mode="raise").asnumpy().tolist() == [[4, 5, 6, 7]]
    with pytest.raises(MXNetError, match="mode"):
        nd.take(a, nd.array([1]), mode="nope")


def test_clip_keeps_an_integer_dtype():
    c = nd.clip(nd.array([-3, 0, 4], dtype="int32"), -1.5, 2.5)
    assert c.dtype == np.int32 and c.asnumpy().tolist() == [-1, 0, 2]


def test_batch_dot_with_several_batch_axes():
    assert nd.batch_dot(nd.ones((2, 2, 2, 3)), nd.ones((2, 2, 3, 1))).shape == (2, 2, 2, 1)
    r = nd.batch_dot(nd.ones((2, 2, 2, 3)), nd.ones((2, 2, 1, 3)), transpose_b=True)
    assert r.shape == (2, 2, 2, 1) and r.asnumpy().ravel().tolist() == [3.0] * 8
    with pytest.raises(MXNetError, match="not aligned"):
        nd.batch_dot(nd.ones((2, 2, 2, 3)), nd.ones((3, 2, 3, 1)))


def test_multinomial_with_a_float_dtype():
    r = nd.random.multinomial(nd.array([0.1, 0.9]), dtype="float32")
    assert r.shape == (1,) and r.dtype == np.float32
    r = nd.random.multinomial(nd.array([[0.5, 0.5]] * 3), shape=2, dtype="float16")
    assert r.shape == (3, 2) and r.dtype == np.float16


def test_single_matrix_determinants_have_shape_1():
    m = nd.array([[1, 2], [3, 4]])
    assert nd.linalg.det(m).shape == (1,)
    assert [a.shape for a in nd.linalg.slogdet(m)] == [(1,), (1,)]
    assert nd.linalg.sumlogdiag(m).shape == (1,)
    assert nd.linalg.det(nd.array([[[1, 2], [3, 4]]])).shape == (1,)
    np.testing.assert_allclose(nd.linalg.det(m).asnumpy(), [-2.0], rtol=1e-6)


def test_while_loop_keeps_a_bare_step_output_bare():
    out, st = nd.contrib.while_loop(lambda i: i < 3, lambda i: (i * 2, i + 1),
                                    [nd.array([0])], max_iterations=4)
    assert isinstance(out, nd.NDArray) and out.shape == (4, 1)
    assert out.asnumpy()[:3].ravel().tolist() == [0, 2, 4] and isinstance(st, list)
    out, st = nd.contrib.while_loop(lambda i: i < 3, lambda i: ([i * 2], [i + 1]),
                                    [nd.array([0])], max_iterations=4)
    assert isinstance(out, list) and isinstance(st, list)


def test_slice_assignment_from_an_overlapping_view_reads_first():
    z = nd.arange(4)
    z[1:3] = z[0:2]           # numpy's answer (MXNet 1.9.1's element-wise copy gives 0 0 0 3)
    assert z.asnumpy().tolist() == [0, 0, 1, 3]


def test_logical_ops_take_a_number_on_either_side():
    x = nd.array([1, 2, 0])
    assert nd.logical_and(x, 0).asnumpy().tolist() == [0, 0, 0]
    assert nd.logical_and(2, x).asnumpy().tolist() == [1, 1, 0]
    assert nd.logical_or(x, 1.5).asnumpy().tolist() == [1, 1, 1]
    assert nd.logical_xor(2, x).asnumpy().tolist() == [0, 0, 1]
    assert nd.logical_and(2, 3) == 1 and nd.logical_or(0, 3) == 1 and nd.logical_xor(2, 3) == 0
    assert nd.logical_and(nd.array([1, 0], dtype="int32"), 1).dtype == np.int32
    with pytest.raises(AssertionError):
        nd.logical_and(x, "a")


def test_empty_arange_raises_mxnet_error():
    for args in [(5, 1), (0, 3, -1), (2, 2)]:      # MXNet 1.9.1 raises MXNetError for each
        with pytest.raises(MXNetError, match="empty"):
            nd.arange(*args)
    assert nd.arange(3, 0, -1).asnumpy().tolist() == [3, 2, 1]
