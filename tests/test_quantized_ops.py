"""MXNet 1.9.1's unfused quantized operators (nd.contrib.quantize, quantized_conv,
quantized_fully_connected, quantized_act, quantized_batch_norm, quantized_elemwise_add/mul,
quantized_embedding, quantized_rnn, quantize_asym) against MXNet 1.9.1's CPU numbers
(tests/fixtures/quantized_ops, from tools/gen_quantized_ops_fixtures.py).

Codes, int32 sums and ranges must equal MXNet's exactly; errors must be MXNetErrors where
MXNet raises."""
import json
import os

import numpy as np
import pytest

import neogluon as mx
from neogluon.base import MXNetError

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "quantized_ops")
with open(os.path.join(HERE, "cases.json")) as _f:
    FIX = json.load(_f)
DATA = np.load(os.path.join(HERE, "cases.npz"))
CASES = {c["name"]: c for c in FIX["cases"]}


@pytest.fixture(autouse=True)
def _isa(monkeypatch):
    monkeypatch.setenv("NEOGLUON_INT8_ISA", FIX["isa"])


def _kwargs(kw):
    return {k: tuple(v) if isinstance(v, list) else v for k, v in kw.items()}


def _run(c, via=None):
    ins = [DATA[k] for k in c["inputs"]]
    nds = [mx.nd.array(a, dtype=a.dtype) for a in ins]
    if (via or c["via"]) == "nd":
        res = getattr(mx.nd.contrib, c["op"])(*nds, **_kwargs(c["kwargs"]))
    else:
        vs = [mx.sym.var(f"x{i}", dtype=str(a.dtype)) for i, a in enumerate(ins)]
        s = getattr(mx.sym.contrib, c["op"])(*vs, **_kwargs(c["kwargs"]))
        ex = s.bind(mx.cpu(), {f"x{i}": v for i, v in enumerate(nds)})
        res = ex.forward()
    return res if isinstance(res, (list, tuple)) else [res]


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_mxnet(name):
    c = CASES[name]
    if "error" in c:
        with pytest.raises(MXNetError):
            _run(c)[0].asnumpy()
        return
    res = _run(c)
    want = [DATA[k] for k in c["outputs"]]
    assert len(res) == len(want)
    for got, exp in zip(res, want):
        g = got.asnumpy()
        assert g.dtype == exp.dtype, (name, g.dtype, exp.dtype)
        assert g.shape == exp.shape
        if exp.dtype == np.float32 and exp.size > 1:
            np.testing.assert_allclose(g, exp, rtol=1e-6, atol=0)
        else:
            np.testing.assert_array_equal(g, exp, err_msg=name)


@pytest.mark.parametrize("name", ["mul", "mul_calib", "mul_float"])
def test_elemwise_mul_nd_works(name):
    """MXNet 1.9.1's nd form of quantized_elemwise_mul fails (its symbol form works); here
    the nd form gives the symbol's numbers."""
    c = CASES[name]
    got = [r.asnumpy() for r in _run(c, via="nd")]
    for g, k in zip(got, c["outputs"]):
        np.testing.assert_allclose(g, DATA[k], rtol=1e-6)


def test_symbol_forms():
    """Symbol outputs, arguments, auxiliary states and inferred types as MXNet 1.9.1 lists
    them."""
    v = mx.sym.var
    C = mx.sym.contrib
    assert C.quantize(v("a"), v("b"), v("c"), name="q").list_outputs() == \
        ["q_output0", "q_output1", "q_output2"]
    assert C.quantize_asym(v("a"), name="q").list_outputs() == \
        ["q_output", "q_scale", "q_shift"]
    conv = C.quantized_conv(kernel=(2, 2), num_filter=4, no_bias=True, name="c")
    assert conv.list_arguments() == ["c_data", "c_weight", "c_min_data", "c_max_data",
                                     "c_min_weight", "c_max_weight"]
    assert conv.list_outputs() == ["c_output", "c_min_output", "c_max_output"]
    fc = C.quantized_fully_connected(num_hidden=4, name="f")
    assert fc.list_arguments() == ["f_data", "f_weight", "f_bias", "f_min_data", "f_max_data",
                                   "f_min_weight", "f_max_weight", "f_min_bias", "f_max_bias"]
    bn = C.quantized_batch_norm(name="b")
    assert bn.list_arguments() == ["b_data", "b_gamma", "b_beta", "b_min_data", "b_max_data"]
    assert bn.list_auxiliary_states() == ["b_moving_mean", "b_moving_var"]
    mul = C.quantized_elemwise_mul(enable_float_output=True, name="m")
    assert mul.list_outputs() == ["m_output"]
    rnn = C.quantized_rnn(state_size=3, num_layers=1, mode="lstm", state_outputs=True,
                          name="r")
    assert rnn.list_arguments() == ["r_data", "r_parameters", "r_state", "r_state_cell",
                                    "r_min_data", "r_max_data"]
    # types: int8 weights, int32 sums, float ranges
    _, out_t, _ = conv.infer_type(c_data="uint8")
    assert out_t == [np.int32, np.float32, np.float32]
    arg_t, _, _ = fc.infer_type(f_data="int8")
    assert arg_t[1] == np.int8 and arg_t[2] == np.int8 and arg_t[3] == np.float32
    add = C.quantized_elemwise_add(v("a", dtype="uint8"), v("b", dtype="uint8"), v("c"),
                                   v("d"), v("e"), v("f"), min_calib_range=0.0,
                                   max_calib_range=1.0)
    assert add.infer_type()[1][0] == np.uint8
    _, out_s, _ = conv.infer_shape(c_data=(1, 3, 5, 5))
    assert out_s == [(1, 4, 4, 4), (1,), (1,)]


def test_test_operator_quantization_op():
    """test_operator.py::test_quantization_op's numbers."""
    a = mx.nd.array([[0.1392, 0.5928], [0.6027, 0.8579]])
    qa, mn, mx_ = mx.nd.contrib.quantize(a, mx.nd.array([0.0]), mx.nd.array([1.0]),
                                         out_type="int8")
    assert qa.dtype == np.int8
    assert qa.asnumpy().tolist() == [[18, 75], [77, 109]]
    assert (mn.asscalar(), mx_.asscalar()) == (-1.0, 1.0)
    back = mx.nd.contrib.dequantize(qa, mn, mx_, out_type="float32").asnumpy()
    np.testing.assert_allclose(back, [[0.14173228, 0.5905512], [0.6062992, 0.8582677]],
                               rtol=1e-2)


def test_quantize_asym():
    x = mx.nd.array([[-1.0, 0.0, 0.5], [1.0, 2.0, 3.0]])
    q, scale, shift = mx.nd.contrib.quantize_asym(x)
    sc = np.float32(255) / np.float32(4.0)
    sh = np.float32(255) - np.float32(3.0) * sc
    assert q.dtype == np.uint8
    assert scale.asscalar() == sc and shift.asscalar() == sh
    want = np.trunc(x.asnumpy() * sc + sh + 0.5).astype(np.uint8)
    assert q.asnumpy().tolist() == want.tolist() == [[0, 64, 96], [128, 191, 255]]
    q, scale, shift = mx.nd.contrib.quantize_asym(x, min_calib_range=0.0, max_calib_range=1.0)
    assert q.asnumpy().tolist() == [[0, 0, 128], [255, 255, 255]]   # saturated
    q, scale, shift = mx.nd.contrib.quantize_asym(mx.nd.array([-128, 0, 127], dtype="int8"))
    assert q.asnumpy().tolist() == [0, 128, 255]
    assert (scale.asscalar(), shift.asscalar()) == (1.0, 128.0)


def test_errors_name_the_operator():
    r = mx.nd.array([1.0])
    with pytest.raises(MXNetError, match="quantized_conv"):
        mx.nd.contrib.quantized_conv(mx.nd.zeros((1, 2, 4, 4), dtype="uint8"),
                                     mx.nd.zeros((2, 3, 2, 2), dtype="int8"), r, r, r, r,
                                     kernel=(2, 2), num_filter=2, no_bias=True)
    with pytest.raises(MXNetError, match="quantized_fully_connected.*6 inputs"):
        mx.nd.contrib.quantized_fully_connected(mx.nd.zeros((1, 2), dtype="int8"),
                                                mx.nd.zeros((2, 2), dtype="int8"), r, r,
                                                num_hidden=2, no_bias=True)
    with pytest.raises(MXNetError, match="quantized_elemwise_add.*same shape"):
        mx.nd.contrib.quantized_elemwise_add(mx.nd.zeros((2,), dtype="int8"),
                                             mx.nd.zeros((3,), dtype="int8"), r, r, r, r)
    with pytest.raises(MXNetError, match="quantize: data must be float32"):
        mx.nd.contrib.quantize(mx.nd.zeros((2,), dtype="int8"), r, r)


def test_zero_gradients_while_recording():
    x = mx.nd.array([[0.2, -0.4]])
    x.attach_grad()
    with mx.autograd.record():
        q, mn, mx_ = mx.nd.contrib.quantize(x, mx.nd.array([-1.0]), mx.nd.array([1.0]),
                                            out_type="int8")
        y = mx.nd.contrib.dequantize(q, mn, mx_) * 3 + x
    y.backward()
    assert x.grad.asnumpy().tolist() == [[1.0, 1.0]]


def test_unfused_graph_as_mxnet():
    """MXNet's own unfused quantized graph (quantize_model of conv -> relu -> fc, uint8
    data) loaded and run here: every internal output equals MXNet's."""
    g = FIX["graph"]
    sym = mx.sym.load_json(g["json"])
    internals = sym.get_internals()
    args = {k: mx.nd.array(DATA[v], dtype=DATA[v].dtype) for k, v in g["inputs"].items()}
    outs = internals.bind(mx.cpu(), args).forward()
    names = internals.list_outputs()
    assert names == list(g["outputs"])
    for n, o in zip(names, outs):
        want = DATA[g["outputs"][n]]
        got = o.asnumpy()
        assert got.dtype == want.dtype, n
        if want.dtype == np.float32 and want.size > 1:
            np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=n)
        else:
            np.testing.assert_array_equal(got, want, err_msg=n)
