"""MXNet 1.9.1's older and contrib operators of neogluon/ndarray/nn_legacy.py, contrib_more.py
and rnn_op.py (loss heads, Crop, im2col/col2im, GridGenerator, BilinearSampler,
SpatialTransformer, Correlation, *_v1, nd.RNN, PSROIPooling & co) against MXNet 1.9.1
(tools/gen_extra_ops_fixtures.py, cases in tests/extra_ops_cases.py): imperative outputs and
input gradients, the case's MXNet symbol JSON loaded and run (``eval`` and a ``SymbolBlock``
under autograd, auxiliary states included), and bad calls refused with an MXNetError."""
import json
import os
import warnings

import numpy as np
import pytest

import neogluon as mx
from neogluon import nd
from neogluon.base import MXNetError

import extra_ops_cases as C
from fixture_record import resolve

FX = os.path.join(os.path.dirname(__file__), "fixtures", "extra_ops")
with open(os.path.join(FX, "extra_ops.json")) as _f:
    INDEX = json.load(_f)
ARR = np.load(os.path.join(FX, "extra_ops.npz"))


def _fixture(name):
    return resolve(INDEX["cases"][name], ARR)


def _close(a, b, rtol, what):
    """Relative to the reference's scale (atol = rtol * max|ref|, at least rtol)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    assert a.shape == b.shape, (what, a.shape, b.shape)
    scale = max(1.0, float(np.nanmax(np.abs(b)))) if b.size else 1.0
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale, err_msg=what,
                               equal_nan=True)


def _nd(a):
    return nd.array(a, dtype=a.dtype)


ND_CASES = [c for c in C.CASES if c["nd"]]
SYM_CASES = [c for c in C.CASES if c["sym"]]


def test_every_case_has_a_reference():
    assert set(INDEX["cases"]) == {c["name"] for c in C.CASES}
    for c in C.CASES:
        fx = _fixture(c["name"])
        assert "out" in fx, (c["name"], fx.get("mxnet"))
        if c["sym"]:
            assert "json" in fx, c["name"]


@pytest.mark.parametrize("case", ND_CASES, ids=lambda c: c["name"])
def test_imperative_matches_mxnet(case):
    fx = _fixture(case["name"])
    outs, _, grads = C.run_nd(mx, case, heads=fx["heads"])
    assert len(outs) == len(fx["out"])
    for i, (o, e) in enumerate(zip(outs, fx["out"])):
        assert o.dtype == e.dtype, (i, o.dtype, e.dtype)
        _close(o, e, case["rtol"], f"output {i}")
    assert set(grads) == set(fx["grad"])
    for n, g in fx["grad"].items():
        _close(grads[n], g, case["rtol"], f"gradient of {n}")


def _run_symbol_block(case, fx):
    """The MXNet JSON as a SymbolBlock: arguments as inputs, auxiliary states as its
    parameters (set from the case), forward under autograd and backward with the heads."""
    sym = mx.sym.load_json(fx["json"])
    args, aux = sym.list_arguments(), sym.list_auxiliary_states()
    ins = fx["inputs"]
    assert set(args) == set(ins) - {a[len("op_"):] for a in aux}, (args, aux)
    blk = mx.gluon.SymbolBlock(sym, [mx.sym.var(n) for n in args])
    params = blk.collect_params()
    assert sorted(params.keys()) == sorted(aux)
    blk.initialize()
    for a in aux:
        params[a].set_data(_nd(ins[a[len("op_"):]]))
    xs = [_nd(ins[n]) for n in args]
    for n, x in zip(args, xs):
        if n in case["grad"]:
            x.attach_grad()
    with mx.autograd.record(train_mode=case["train"]):
        res = blk(*xs)
    res = list(res) if isinstance(res, (list, tuple)) else [res]
    if case["grad"]:
        fl = [(o, h) for o, h in zip(res, fx["heads"]) if np.dtype(o.dtype).kind == "f"]
        mx.autograd.backward([o for o, _ in fl], [nd.array(h) for _, h in fl])
    grads = {n: x.grad.asnumpy() for n, x in zip(args, xs) if n in case["grad"]}
    aux_after = {a[len("op_"):]: params[a].data().asnumpy() for a in aux}
    return sym, [o.asnumpy() for o in res], grads, aux_after


@pytest.mark.parametrize("case", SYM_CASES, ids=lambda c: c["name"])
def test_mxnet_symbol_json_runs_the_same(case):
    fx = _fixture(case["name"])
    sym, outs, grads, aux_after = _run_symbol_block(case, fx)
    rtol = case["rtol"]
    for i, (o, e) in enumerate(zip(outs, fx["out"])):
        _close(o, e, rtol, f"SymbolBlock output {i}")
    assert set(grads) == set(fx["grad"])
    for n, g in fx["grad"].items():
        _close(grads[n], g, rtol, f"SymbolBlock gradient of {n}")
    assert set(aux_after) == set(fx["aux_after"])
    for n, v in fx["aux_after"].items():       # IdentityAttachKLSparseReg's moving_avg
        _close(aux_after[n], v, rtol, f"auxiliary state {n} after backward")
    # eval (predict mode, no autograd) gives the same forward outputs
    ins = fx["inputs"]
    ev = sym.eval(**{n: _nd(ins[n]) for n in sym.list_arguments()},
                  **{a: _nd(ins[a[len("op_"):]]) for a in sym.list_auxiliary_states()})
    assert len(ev) == len(fx["out"])
    for i, (o, e) in enumerate(zip(ev, fx["out"])):
        _close(o.asnumpy(), e, rtol, f"eval output {i}")


def test_kl_sparse_reg_moving_avg_is_an_auxiliary_state():
    s = mx.sym.IdentityAttachKLSparseReg(data=mx.sym.var("data"), name="kl")
    assert s.list_arguments() == ["data"]
    assert s.list_auxiliary_states() == ["kl_moving_avg"]
    assert s.infer_shape(data=(5, 3)) == ([(5, 3)], [(5, 3)], [(3,)])
    fx = _fixture("kl_sparse_reg")
    before = fx["inputs"]["moving_avg"]
    assert not np.allclose(fx["aux_after"]["moving_avg"], before)   # MXNet updated it


@pytest.mark.parametrize("mode,use_len,args", [
    ("lstm", False, ["data", "rnn_parameters", "rnn_state", "rnn_state_cell"]),
    ("gru", True, ["data", "rnn_parameters", "rnn_state", "rnn_sequence_length"]),
    ("lstm", True, ["data", "rnn_parameters", "rnn_state", "rnn_state_cell",
                    "rnn_sequence_length"]),
])
def test_symbolic_rnn_creates_mxnets_variables(mode, use_len, args):
    s = mx.sym.RNN(data=mx.sym.var("data"), state_size=5, num_layers=1, mode=mode,
                   use_sequence_length=use_len, name="rnn")
    assert s.list_arguments() == args
    arg_shapes, out_shapes, _ = s.infer_shape(data=(3, 2, 4))
    size = C.rnn_param_size(mode, 1, 1, 4, 5)
    want = [(3, 2, 4), (size,), (1, 2, 5)] + ([(1, 2, 5)] if mode == "lstm" else []) + \
        ([(2,)] if use_len else [])
    assert arg_shapes == want and out_shapes == [(3, 2, 5)]


@pytest.mark.parametrize("op,shape,label", [
    ("LinearRegressionOutput", (4, 6), (4, 6)), ("LogisticRegressionOutput", (4, 6), (4, 6)),
    ("MAERegressionOutput", (4, 6), (4, 6)), ("SVMOutput", (4, 6), (4,)),
    ("SVMOutput", (2, 3, 4), (2, 3)),
])
def test_loss_heads_infer_their_label(op, shape, label):
    s = getattr(mx.sym, op)(data=mx.sym.var("data"), name="out")
    assert s.list_arguments() == ["data", "out_label"]
    assert s.infer_shape(data=shape)[0] == [shape, label]


def test_convolution_v1_infers_its_weight():
    s = mx.sym.Convolution_v1(data=mx.sym.var("data"), num_filter=4, kernel=(3, 3), name="c")
    assert s.list_arguments() == ["data", "c_weight", "c_bias"]
    assert s.infer_shape(data=(2, 3, 8, 8)) == (
        [(2, 3, 8, 8), (4, 3, 3, 3), (4,)], [(2, 4, 6, 6)], [])


# ---------------------------------------------------------------- sequence lengths
def test_rnn_sequence_length_reference_is_per_sequence():
    # MXNet 1.9.1's CPU RNN ignores sequence_length (its oneDNN path runs the padded
    # sequence); the fixture is MXNet run once per sequence on its valid steps, the cuDNN
    # semantics neogluon implements: zero outputs past the end, states at the last step
    for name in ("rnn_lstm_seqlen", "rnn_gru_seqlen_bidir", "rnn_tanh_seqlen_2layer"):
        fx = _fixture(name)
        assert "sequence_length" in fx["mxnet"]
        lens = fx["inputs"]["sequence_length"].astype(int)
        for i, n in enumerate(lens):
            assert not fx["out"][0][n:, i].any()
            assert not fx["grad"]["data"][n:, i].any()


# ---------------------------------------------------------------- im2col / col2im, 1-D and 3-D
@pytest.mark.parametrize("spatial,kernel,stride,dilate,pad", [
    ((9,), (3,), (2,), (1,), (1,)),
    ((7,), (2,), (1,), (3,), (0,)),
    ((4, 5, 6), (2, 3, 2), (1, 2, 2), (1, 1, 2), (1, 0, 1)),
    ((3, 4, 4), (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1)),
])
def test_im2col_is_the_convolution_lowering(spatial, kernel, stride, dilate, pad):
    # (MXNet 1.9.1's own 1-D and 3-D im2col fail; this holds neogluon's against
    # Convolution: weight (F, C*prod(k)) @ im2col(x) is the convolution, and col2im is
    # im2col's adjoint)
    rs = np.random.RandomState(5)
    N, Cin, Fo = 2, 3, 4
    x = nd.array(rs.standard_normal((N, Cin) + spatial).astype("float32"))
    w = nd.array(rs.standard_normal((Fo, Cin) + kernel).astype("float32"))
    kw = dict(kernel=kernel, stride=stride, dilate=dilate, pad=pad)
    cols = nd.im2col(x, **kw)
    conv = nd.Convolution(x, w, num_filter=Fo, no_bias=True, **kw)
    assert cols.shape == (N, Cin * int(np.prod(kernel)), int(np.prod(conv.shape[2:])))
    lowered = np.einsum("fk,nkl->nfl", w.asnumpy().reshape(Fo, -1), cols.asnumpy())
    np.testing.assert_allclose(lowered.reshape(conv.shape), conv.asnumpy(), rtol=1e-4,
                               atol=1e-4)
    y = rs.standard_normal(cols.shape).astype("float32")
    back = nd.col2im(nd.array(y), output_size=spatial, **kw).asnumpy()
    np.testing.assert_allclose((cols.asnumpy() * y).sum(), (x.asnumpy() * back).sum(),
                               rtol=1e-4)


def test_convolution_v1_3d_is_convolution():
    # (MXNet 1.9.1's CPU Convolution_v1 has no 3-D kernel)
    rs = np.random.RandomState(6)
    x = nd.array(rs.standard_normal((1, 2, 4, 5, 5)).astype("float32"))
    w = nd.array(rs.standard_normal((3, 2, 2, 2, 2)).astype("float32"))
    b = nd.array(rs.standard_normal((3,)).astype("float32"))
    kw = dict(kernel=(2, 2, 2), num_filter=3, stride=(1, 2, 1), pad=(1, 0, 1))
    np.testing.assert_allclose(nd.Convolution_v1(x, w, b, **kw).asnumpy(),
                               nd.Convolution(x, w, b, **kw).asnumpy(), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- errors
# Bad calls MXNet 1.9.1 does not refuse: it reads (and, in backward, writes) outside its
# buffers, giving garbage or killing the process; neogluon refuses them.
MXNET_UNCHECKED = {"correlation_shapes", "psroi_channels", "psroi_batch_index",
                   "dpsroi_batch_index"}


@pytest.mark.parametrize("err", C.ERRORS, ids=lambda e: e[0])
def test_bad_calls_refused(err):
    name, op, shapes, kwargs = err
    mxnet_did = INDEX["errors"][name]
    if name in MXNET_UNCHECKED:
        assert mxnet_did is None or mxnet_did.startswith("crash"), mxnet_did
    else:
        assert mxnet_did == "MXNetError"
    fn = nd
    for part in op.split("."):
        fn = getattr(fn, part)
    with pytest.raises(MXNetError) as info:
        r = fn(*[nd.ones(s) for s in shapes], **kwargs)
        for o in (r if isinstance(r, (list, tuple)) else [r]):
            o.wait_to_read()
    assert op.rsplit(".", 1)[-1] in str(info.value), str(info.value)


def test_psroi_batch_index_error_names_the_roi_batch():
    with pytest.raises(MXNetError, match="batch index"):
        nd.contrib.PSROIPooling(nd.ones((1, 8, 5, 5)), nd.array([[0, 0, 0, 2, 2],
                                                                 [3, 0, 0, 2, 2]]),
                                spatial_scale=1.0, output_dim=2, pooled_size=2)


def test_correlation_channel_mismatch_names_both_shapes():
    with pytest.raises(MXNetError, match=r"Correlation.*\(1, 2, 5, 5\).*\(1, 3, 5, 5\)"):
        nd.Correlation(nd.ones((1, 2, 5, 5)), nd.ones((1, 3, 5, 5)))


# ---------------------------------------------------------------- hawkesll's state output
def test_hawkesll_state_output_passes_no_gradient():
    # MXNet drops the head gradient of the returned state; so does neogluon
    c = C.BY_NAME["hawkesll"]
    fx = _fixture("hawkesll")
    _, _, g_both = C.run_nd(mx, c, heads=fx["heads"])
    zero_state_head = [fx["heads"][0], np.zeros_like(fx["heads"][1])]
    _, _, g_ll = C.run_nd(mx, c, heads=zero_state_head)
    for n in ("lda", "alpha", "beta"):
        np.testing.assert_array_equal(g_both[n], g_ll[n])


# ---------------------------------------------------------------- no warnings
def test_lstm_projection_runs_without_warnings():
    c = C.BY_NAME["rnn_lstm_proj_bidir_2layer"]
    with warnings.catch_warnings(record=True) as seen:
        # neogluon's own filters (torch's oneDNN notice about projections) stay in front
        warnings.filterwarnings("always", append=True)
        C.run_nd(mx, c)
        trained = dict(c, train=True, grad=["data", "parameters"])
        _, _, grads = C.run_nd(mx, trained)     # training too (MXNet's CPU cannot)
    assert [str(w.message) for w in seen] == []
    assert np.abs(grads["parameters"]).sum() > 0


# ---------------------------------------------------------------- fft / ifft (MXNet: GPU only)
def test_fft_ifft_interleaved_and_unnormalised():
    # MXNet 1.9.1 has fft/ifft on GPU only (CPU: 'fft is only available for GPU'), so no
    # fixture: numpy's FFT with MXNet's layout (real and imaginary parts interleaved along
    # the last axis) and MXNet's unnormalised inverse (ifft(fft(x)) = d * x)
    x = np.random.RandomState(7).standard_normal((3, 8)).astype("float32")
    y = nd.contrib.fft(nd.array(x)).asnumpy()
    z = np.fft.fft(x, axis=-1)
    assert y.shape == (3, 16)
    np.testing.assert_allclose(y[:, 0::2], z.real, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y[:, 1::2], z.imag, rtol=1e-5, atol=1e-5)
    back = nd.contrib.ifft(nd.array(y)).asnumpy()
    np.testing.assert_allclose(back, 8 * x, rtol=1e-4, atol=1e-4)
    with pytest.raises(MXNetError, match="ifft"):
        nd.contrib.ifft(nd.ones((2, 5)))
