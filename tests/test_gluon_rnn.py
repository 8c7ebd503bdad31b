"""gluon.rnn layers and cells against MXNet 1.9.1 (outputs, states and gradients for fixed
weights, names, reprs, structural keys)."""
import numpy as np
import pytest

import neogluon as mx
from neogluon import autograd, nd
from neogluon.gluon import rnn

from gluon_fixture_utils import det, fixture_json, fixture_path, reset_names

META = fixture_json()["rnn"]
ARR = np.load(fixture_path("rnn.npz"))


def seq_cells():
    seq = rnn.SequentialRNNCell()
    with seq.name_scope():
        seq.add(rnn.LSTMCell(5))
        seq.add(rnn.GRUCell(4))
    return seq


CASES = [
    ("rnn_relu", lambda: rnn.RNN(6, num_layers=2), (5, 3, 4)),
    ("rnn_tanh_ntc", lambda: rnn.RNN(5, activation="tanh", layout="NTC", bidirectional=True),
     (3, 5, 4)),
    ("lstm", lambda: rnn.LSTM(6, num_layers=2, bidirectional=True), (5, 3, 4)),
    ("gru", lambda: rnn.GRU(5, num_layers=2, layout="NTC"), (3, 5, 4)),
    ("cell_rnn", lambda: rnn.RNNCell(5), (3, 4, 4)),
    ("cell_lstm", lambda: rnn.LSTMCell(5), (3, 4, 4)),
    ("cell_gru", lambda: rnn.GRUCell(5), (3, 4, 4)),
    ("seq_cells", seq_cells, (3, 4, 4)),
]


def _run_case(idx, hybridize):
    name, make, shape = CASES[idx]
    reset_names()
    blk = make()
    blk.initialize()
    x = nd.array(det(shape, 200 + idx))
    is_cell = name.startswith(("cell", "seq"))

    def run(block):
        if is_cell:
            return block.unroll(shape[1], x, layout="NTC", merge_outputs=True)
        states = block.begin_state(shape[block._layout.find("N")])
        return block(x, states)

    with autograd.predict_mode():
        run(blk)
    params = list(blk.collect_params().items())
    assert [[k, list(p.shape)] for k, p in params] == META[name]["params"]
    assert repr(blk) == META[name]["repr"]
    assert sorted(blk._collect_params_with_prefix().keys()) == META[name]["structural"]
    for j, (pn, p) in enumerate(params):
        p.set_data(nd.array(det(p.shape, 300 + idx * 20 + j)))
    if hybridize:
        blk.hybridize()
    x.attach_grad()
    with autograd.record():
        out, states = run(blk)
        loss = (out * nd.array(det(out.shape, 9))).sum()
        for k, st in enumerate(states):
            loss = loss + (st * (k + 2)).sum()
    loss.backward()
    tol = dict(rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out.asnumpy(), ARR[f"{name}|y"], **tol)
    for k, st in enumerate(states):
        np.testing.assert_allclose(st.asnumpy(), ARR[f"{name}|state{k}"], **tol)
    np.testing.assert_allclose(x.grad.asnumpy(), ARR[f"{name}|dx"], **tol)
    for pn, p in params:
        np.testing.assert_allclose(p.grad().asnumpy(), ARR[f"{name}|grad|{pn}"], **tol)


@pytest.mark.parametrize("idx", range(len(CASES)), ids=[c[0] for c in CASES])
def test_rnn_matches_mxnet(idx):
    _run_case(idx, hybridize=False)


@pytest.mark.parametrize("idx", [0, 2, 3], ids=lambda i: CASES[i][0])
def test_rnn_layer_hybridized_matches_mxnet(idx):
    _run_case(idx, hybridize=True)


def test_layer_without_states_returns_output_only():
    layer = rnn.GRU(4)
    layer.initialize()
    out = layer(nd.ones((3, 2, 5)))
    assert isinstance(out, nd.NDArray) and out.shape == (3, 2, 4)
    with pytest.raises(ValueError, match="Invalid recurrent state shape"):
        layer(nd.ones((3, 2, 5)), [nd.zeros((1, 3, 4))])


def test_cell_valid_length_and_lists():
    cell = rnn.LSTMCell(3, input_size=2)
    cell.initialize()
    x = nd.array(det((2, 4, 2), 1))
    outs, states = cell.unroll(4, x, valid_length=nd.array([2, 4]), merge_outputs=False)
    assert len(outs) == 4 and not outs[2].asnumpy()[0].any()
    full, fstates = cell.unroll(2, x[:, :2], merge_outputs=True)
    np.testing.assert_allclose(states[0].asnumpy()[0], fstates[0].asnumpy()[0], rtol=1e-6)


def test_lstm_export_imports(tmp_path):
    from neogluon import gluon
    layer = rnn.LSTM(4, num_layers=1)
    layer.initialize()
    layer.hybridize()
    x = nd.array(det((3, 2, 5), 2))
    y = layer(x)
    layer.export(str(tmp_path / "lstm"))
    blk = gluon.SymbolBlock.imports(str(tmp_path / "lstm-symbol.json"), ["data0", "data1",
                                                                        "data2"],
                                    str(tmp_path / "lstm-0000.params"))
    states = layer.begin_state(2)
    np.testing.assert_array_equal(blk(x, *states).asnumpy(), y.asnumpy())


@pytest.mark.parametrize("make", [lambda: rnn.RNNCell(3), lambda: rnn.LSTMCell(3),
                                  lambda: rnn.GRUCell(3)])
def test_unroll_inside_hybridized_block_is_captured(make):
    import warnings

    class Layer(mx.gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.cell = make()

        def hybrid_forward(self, F, seq):
            return self.cell.unroll(inputs=seq, length=4, merge_outputs=True)[0]

    net = Layer()
    net.initialize()
    x = nd.random.uniform(shape=(2, 4, 5))
    ref = net(x).asnumpy()
    net.hybridize()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = net(x).asnumpy()
    assert net._cached_graph, "the unroll (begin states, split, stack) must be in the graph"
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)


def test_unroll_on_symbols_names_outputs_as_mxnet():
    cell = rnn.LSTMCell(4, prefix="rnn_")
    outs, states = cell.unroll(2, [mx.sym.var("rnn_t0_data"), mx.sym.var("rnn_t1_data")])
    assert mx.sym.Group(outs).list_outputs() == ["rnn_t0_out_output", "rnn_t1_out_output"]
    assert sorted(cell.collect_params().keys()) == ["rnn_h2h_bias", "rnn_h2h_weight",
                                                    "rnn_i2h_bias", "rnn_i2h_weight"]
    bi = rnn.BidirectionalCell(rnn.GRUCell(3, prefix="l_"), rnn.GRUCell(3, prefix="r_"),
                               output_prefix="bi_")
    outs, _ = bi.unroll(2, [mx.sym.var("a"), mx.sym.var("b")])
    assert mx.sym.Group(outs).list_outputs() == ["bi_t0_output", "bi_t1_output"]
    with pytest.raises(TypeError, match="NDArrays or Symbols"):
        rnn.RNNCell(3).unroll(2, [1.0, 2.0])


def test_residual_cell_unrolls_a_bidirectional_cell():
    # ResidualCell over a cell that cannot be stepped: the base cell unrolls, the inputs are
    # added to its outputs (zero weights: GRU outputs 0, so the result is the input).
    cell = rnn.ResidualCell(rnn.BidirectionalCell(rnn.GRUCell(3), rnn.GRUCell(3)))
    cell.initialize(mx.init.Zero())
    x = nd.random.uniform(shape=(2, 5, 6))
    for merge in (True, False):
        outs, states = cell.unroll(5, x, merge_outputs=merge)
        got = outs if merge else nd.stack(*outs, axis=1)
        np.testing.assert_allclose(got.asnumpy(), x.asnumpy(), rtol=1e-6)
        assert len(states) == 2


def test_context_default_ctx_class_property():
    assert mx.Context.default_ctx == mx.current_context()
    with mx.cpu(3):
        assert mx.Context.default_ctx == mx.cpu(3)
    prev = mx.Context.default_ctx
    try:
        mx.Context.default_ctx = mx.cpu(2)
        assert nd.zeros(1).context == mx.cpu(2)
    finally:
        mx.Context.default_ctx = prev
    with pytest.raises(TypeError):
        mx.Context.default_ctx = "cpu"


@pytest.mark.parametrize("make", [lambda: rnn.GRU(4, num_layers=2, bidirectional=True),
                                  lambda: rnn.LSTM(3, num_layers=2),
                                  lambda: rnn.RNN(5, activation="tanh", bidirectional=True)])
def test_unfuse_shares_parameters_and_computes_the_same(make):
    layer = make()
    layer.initialize(mx.init.Uniform(0.5))
    x = nd.random.uniform(shape=(6, 2, 3))
    y = layer(x)
    stack = layer._unfuse()
    own = {id(p) for p in layer.collect_params().values()}
    assert {id(p) for p in stack.collect_params().values()} == own
    y_cells = stack.unroll(6, x, layout="TNC", merge_outputs=True)[0]
    np.testing.assert_allclose(y_cells.asnumpy(), y.asnumpy(), rtol=1e-5, atol=1e-6)


def test_unfuse_refuses_projection_and_clipping():
    with pytest.raises(AssertionError, match="projection"):
        rnn.LSTM(4, projection_size=2)._unfuse()
    with pytest.raises(AssertionError, match="clipping"):
        rnn.LSTM(4, state_clip_min=-1, state_clip_max=1)._unfuse()


@pytest.mark.parametrize("make", [
    lambda: rnn.LSTMCell(5),
    lambda: rnn.BidirectionalCell(rnn.GRUCell(5), rnn.GRUCell(5)),
    lambda: rnn.ResidualCell(rnn.RNNCell(4)),
])
@pytest.mark.parametrize("layout", ["NTC", "TNC"])
def test_unroll_valid_length_equals_unrolling_each_sequence(make, layout):
    cell = make()
    cell.initialize()
    cell.hybridize()
    lengths = [3, 6, 1]
    shape = (3, 6, 4) if layout == "NTC" else (6, 3, 4)
    x = nd.random.normal(shape=shape)
    outs, states = cell.unroll(6, x, valid_length=nd.array(lengths), merge_outputs=True,
                               layout=layout)
    t_ax = layout.find("T")
    for i, n in enumerate(lengths):
        one = x[i:i + 1, :n] if layout == "NTC" else x[:n, i:i + 1]
        o1, s1 = cell.unroll(n, one, merge_outputs=True, layout=layout)
        got = outs[i:i + 1] if layout == "NTC" else outs[:, i:i + 1]
        got = got.asnumpy()
        np.testing.assert_allclose(np.take(got, range(n), axis=t_ax), o1.asnumpy(),
                                   rtol=1e-4, atol=1e-5)
        assert not np.take(got, range(n, 6), axis=t_ax).any()
        for s, g in zip(states, s1):
            np.testing.assert_allclose(s[i:i + 1].asnumpy(), g.asnumpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("make", [lambda: rnn.LSTM(4, num_layers=2, layout="NTC",
                                                   bidirectional=True),
                                  lambda: rnn.GRU(3), lambda: rnn.RNN(5, activation="tanh")])
def test_rnn_layer_inside_hybridized_block_is_captured(make):
    import warnings
    net = mx.gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(make(), mx.gluon.nn.Dense(3, flatten=False))
    net.initialize()
    x = nd.random.uniform(shape=(2, 5, 3))
    ref = net(x).asnumpy()
    net.hybridize()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = net(x).asnumpy()
    assert net._cached_graph, "begin states must be made with the capture's F"
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)


def test_rnn_layer_on_symbols():
    layer = rnn.LSTM(4, num_layers=2, prefix="lstm_")
    out = layer(mx.sym.var("data"))
    assert isinstance(out, mx.sym.Symbol)
    assert "lstm_l0_i2h_weight" in out.list_arguments()


def test_hybridized_net_with_rnn_layer_exports_and_imports(tmp_path):
    net = mx.gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(rnn.LSTM(4, num_layers=2, layout="NTC", bidirectional=True),
                mx.gluon.nn.Dense(3))
    net.initialize()
    net.hybridize()
    x = nd.random.uniform(shape=(2, 5, 3))
    y = net(x)
    net.export(str(tmp_path / "m"))
    blk = mx.gluon.SymbolBlock.imports(str(tmp_path / "m-symbol.json"), ["data"],
                                       str(tmp_path / "m-0000.params"))
    np.testing.assert_array_equal(blk(x).asnumpy(), y.asnumpy())
    # another batch size: the begin states' batch dimension is inferred from the data
    x2 = nd.random.uniform(shape=(3, 5, 3))
    np.testing.assert_allclose(blk(x2).asnumpy(), net(x2).asnumpy(), rtol=1e-6, atol=1e-6)


def test_mxnet_exported_recurrent_net_imports_and_matches():
    # tools/gen_rnn_export_fixtures.py: MXNet 1.9.1's export of LSTM(bidirectional, 2 layers)
    # + GRU + Dense (its _rnn_param_concat + RNN graph with zeros((L*D, 0, H)) begin states)
    import os
    here = os.path.join(os.path.dirname(__file__), "fixtures", "rnn_export")
    io = np.load(os.path.join(here, "io.npz"))
    blk = mx.gluon.SymbolBlock.imports(os.path.join(here, "net-symbol.json"), ["data"],
                                       os.path.join(here, "net-0000.params"))
    np.testing.assert_allclose(blk(nd.array(io["x"])).asnumpy(), io["y"], rtol=1e-5,
                               atol=1e-6)


def test_nd_rnn_flat_parameters_equal_the_layer():
    layer = rnn.LSTM(4, num_layers=2, bidirectional=True)
    layer.initialize(mx.init.Uniform(0.5))
    x = nd.random.uniform(shape=(6, 2, 3))
    out, states = layer(x, layer.begin_state(2))
    p = {k[len(layer.prefix):]: v.data() for k, v in layer.collect_params().items()}
    flat = nd.concat(*[p[f"{d}{l}_{g}_{t}"].reshape(-1) for t in ["weight", "bias"]
                       for l in range(2) for d in "lr" for g in ["i2h", "h2h"]], dim=0)
    res = nd.RNN(x, flat, *layer.begin_state(2), state_size=4, num_layers=2, mode="lstm",
                 bidirectional=True, state_outputs=True)
    np.testing.assert_array_equal(res[0].asnumpy(), out.asnumpy())
    for a, b in zip(res[1:], states):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    assert nd.RNN(x, flat, *layer.begin_state(2), state_size=4, num_layers=2, mode="lstm",
                  bidirectional=True).shape == (6, 2, 8)
    with pytest.raises(mx.MXNetError, match="parameters has"):
        nd.RNN(x, flat[:10], *layer.begin_state(2), state_size=4, num_layers=2, mode="lstm",
               bidirectional=True)


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("layer", ["LSTM", "GRU", "RNN"])
def test_rnn_layer_refuses_a_wrong_feature_size_and_extra_states(layer, hybridize):
    # MXNet 1.9.1 raises for both; torch's oneDNN LSTM kernel would read past the input
    net = getattr(rnn, layer)(4, input_size=5)
    net.initialize()
    if hybridize:
        net.hybridize()
    with pytest.raises(mx.base.MXNetError, match="6 features, the layer expects 5"):
        net(mx.nd.ones((3, 2, 6)))
    st = net.begin_state(2)
    out, states = net(mx.nd.ones((3, 2, 5)), st)
    assert out.shape == (3, 2, 4) and len(states) == len(st)
    if not hybridize:
        with pytest.raises(mx.base.MXNetError, match="begin state"):
            net(mx.nd.ones((3, 2, 5)), st + st)


def test_rnn_layer_checks_the_feature_size_after_deferred_init():
    net = rnn.LSTM(4, layout="NTC")
    net.initialize()
    assert net(mx.nd.ones((2, 3, 7))).shape == (2, 3, 4)
    with pytest.raises(mx.base.MXNetError, match="8 features, the layer expects 7"):
        net(mx.nd.ones((2, 3, 8)))


def test_bidirectional_cell_repr_and_symbolic_unroll_with_valid_length():
    bi = rnn.BidirectionalCell(rnn.LSTMCell(4, input_size=3), rnn.GRUCell(2, input_size=3))
    assert repr(bi) == "BidirectionalCell(forward=LSTMCell(3 -> 16), backward=GRUCell(3 -> 6))"
    bi = rnn.BidirectionalCell(rnn.LSTMCell(3), rnn.LSTMCell(3))
    out, _ = bi.unroll(3, mx.sym.var("data"), layout="NTC", merge_outputs=True,
                       valid_length=mx.sym.var("vl"))
    assert out.infer_shape(data=(2, 3, 3), vl=(2,))[1] == [(2, 3, 6)]    # MXNet 1.9.1's
