"""Scenarios for MXNet 1.x's legacy ``mx.rnn`` package, written against the MXNet API:
tools/gen_legacy_rnn_fixtures.py runs them on MXNet 1.9.1 and tests/test_legacy_rnn.py runs
the same code on neogluon and compares.

Every scenario takes ``mx`` (the framework module) and returns plain data (lists, dicts,
numpy arrays). Names come from a fresh ``NameManager`` per scenario, so auto-named nodes
(``_plus0``, ``activation0``...) are comparable.
"""
import json
import random
import warnings

import numpy as np


def det(shape, k):
    """Deterministic values in [-0.5, 0.5], the same in both frameworks."""
    n = int(np.prod(shape)) if shape else 1
    return (np.sin(np.arange(n, dtype=np.float64) * 0.37 + k) * 0.5).astype(
        np.float32).reshape(shape)


def _graph(mx, sym, shapes):
    """Names, shapes and the JSON nodes of ``sym`` (``shapes``: input name -> shape)."""
    args, outs, auxs = sym.infer_shape(**shapes)
    nodes = json.loads(sym.tojson())["nodes"]
    return {
        "outputs": sym.list_outputs(),
        "internals": sym.get_internals().list_outputs(),
        "arguments": sym.list_arguments(),
        "aux": sym.list_auxiliary_states(),
        "arg_shapes": [list(s) for s in args],
        "out_shapes": [list(s) for s in outs],
        "aux_shapes": [list(s) for s in auxs],
        "nodes": [{"op": n["op"], "name": n["name"], "attrs": n.get("attrs", {}),
                   "inputs": [list(i[:2]) for i in n["inputs"]]} for n in nodes],
    }


def _values(mx, sym, shapes, seed):
    """``sym``'s outputs for deterministic values of its arguments."""
    args, _, _ = sym.infer_shape(**shapes)
    feed = {name: mx.nd.array(det(shape, seed + 3 * j))
            for j, (name, shape) in enumerate(zip(sym.list_arguments(), args))}
    return [o.asnumpy() for o in sym.eval(ctx=mx.cpu(), **feed)]


def _group(mx, outputs, states=()):
    outs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    flat = []
    for s in states:
        flat.extend(s if isinstance(s, (list, tuple)) else [s])
    return mx.sym.Group(outs + flat)


def _steps(mx, n, prefix="t"):
    return [mx.sym.Variable(f"{prefix}{i}_data") for i in range(n)]


def _cell_report(mx, cell, outputs, states, shapes, seed=None):
    sym = _group(mx, outputs, states)
    rep = _graph(mx, sym, shapes)
    rep["params"] = sorted(cell.params._params.keys())
    rep["state_info"] = [None if i is None else {k: list(v) if isinstance(v, tuple) else v
                                                 for k, v in i.items()}
                         for i in cell.state_info]
    rep["n_outputs"] = len(outputs) if isinstance(outputs, (list, tuple)) else -1
    rep["n_states"] = [len(s) if isinstance(s, (list, tuple)) else -1 for s in states]
    if seed is not None:
        rep["values"] = _values(mx, sym, shapes, seed)
    return rep


# ------------------------------------------------------------------------- graph scenarios
def rnn_list(mx):
    cell = mx.rnn.RNNCell(10, prefix="rnn_")
    outs, states = cell.unroll(3, _steps(mx, 3))
    return _cell_report(mx, cell, outs, states, {f"t{i}_data": (4, 6) for i in range(3)}, 1)


def rnn_relu_merged(mx):
    cell = mx.rnn.RNNCell(8, activation="relu", prefix="r_")
    outs, states = cell.unroll(3, mx.sym.Variable("data"), merge_outputs=True)
    return _cell_report(mx, cell, outs, states, {"data": (4, 3, 6)}, 2)


def lstm_tnc(mx):
    cell = mx.rnn.LSTMCell(8, forget_bias=2.0)
    outs, states = cell.unroll(3, mx.sym.Variable("data"), layout="TNC", merge_outputs=True)
    rep = _cell_report(mx, cell, outs, states, {"data": (3, 4, 6)}, 3)
    rep["var_attrs"] = {k: v for k, v in _group(mx, outs, states).attr_dict().items()
                        if k.endswith(("weight", "bias"))}
    return rep


def gru_list(mx):
    cell = mx.rnn.GRUCell(7, prefix="g_")
    outs, states = cell.unroll(2, _steps(mx, 2))
    return _cell_report(mx, cell, outs, states, {f"t{i}_data": (3, 5) for i in range(2)}, 4)


def fused_lstm_bi(mx):
    cell = mx.rnn.FusedRNNCell(5, num_layers=2, mode="lstm", bidirectional=True,
                               get_next_state=True, prefix="f_")
    outs, states = cell.unroll(3, mx.sym.Variable("data"), layout="TNC",
                               merge_outputs=True)
    rep = _cell_report(mx, cell, outs, states, {"data": (3, 4, 7)}, 5)
    rep["state_layouts"] = [s.attr("__layout__") for s in states]
    return rep


def fused_gru_ntc(mx):
    cell = mx.rnn.FusedRNNCell(5, mode="gru")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outs, states = cell.unroll(3, mx.sym.Variable("data"), merge_outputs=False)
    rep = _cell_report(mx, cell, outs, states, {"data": (4, 3, 7)}, 6)
    rep["warnings"] = [str(w.message) for w in caught
                       if not issubclass(w.category, DeprecationWarning)]
    return rep


def fused_rnn_relu_unfused(mx):
    cell = mx.rnn.FusedRNNCell(6, num_layers=2, mode="rnn_relu", dropout=0.3,
                               prefix="u_").unfuse()
    outs, states = cell.unroll(3, _steps(mx, 3))
    return _cell_report(mx, cell, outs, states, {f"t{i}_data": (2, 4) for i in range(3)}, 7)


def fused_lstm_unfused_bi(mx):
    cell = mx.rnn.FusedRNNCell(4, num_layers=2, mode="lstm", bidirectional=True,
                               dropout=0.5, prefix="test_").unfuse()
    outs, states = cell.unroll(3, mx.sym.Variable("data"), merge_outputs=True)
    return _cell_report(mx, cell, outs, states, {"data": (2, 3, 5)}, 8)


def stack(mx):
    cell = mx.rnn.SequentialRNNCell()
    cell.add(mx.rnn.LSTMCell(6, prefix="s0_"))
    cell.add(mx.rnn.ResidualCell(mx.rnn.LSTMCell(6, prefix="s1_")))
    cell.add(mx.rnn.DropoutCell(0.2, prefix="sd_"))
    cell.add(mx.rnn.GRUCell(5, prefix="s2_"))
    outs, states = cell.unroll(3, mx.sym.Variable("data"), merge_outputs=True)
    return _cell_report(mx, cell, outs, states, {"data": (2, 3, 6)}, 9)


def stack_stepped(mx):
    cell = mx.rnn.SequentialRNNCell()
    cell.add(mx.rnn.RNNCell(5, prefix="a_"))
    cell.add(mx.rnn.LSTMCell(4, prefix="b_"))
    states = cell.begin_state()
    out = None
    for x in _steps(mx, 2):
        out, states = cell(x, states)
    return _cell_report(mx, cell, [out], states, {f"t{i}_data": (3, 2) for i in range(2)},
                        10)


def bidirectional_merged(mx):
    cell = mx.rnn.BidirectionalCell(mx.rnn.GRUCell(4, prefix="l_"),
                                    mx.rnn.LSTMCell(3, prefix="r_"), output_prefix="bi_")
    outs, states = cell.unroll(3, mx.sym.Variable("data"), layout="TNC", merge_outputs=True)
    return _cell_report(mx, cell, outs, states, {"data": (3, 2, 5)}, 11)


def bidirectional_list(mx):
    cell = mx.rnn.BidirectionalCell(mx.rnn.RNNCell(4, prefix="l_"),
                                    mx.rnn.RNNCell(4, prefix="r_"))
    outs, states = cell.unroll(2, _steps(mx, 2))
    return _cell_report(mx, cell, outs, states, {f"t{i}_data": (3, 5) for i in range(2)}, 12)


def bidirectional_fused_inside(mx):
    # merge_outputs=None with a fused cell inside: its merged output is sliced per step
    cell = mx.rnn.BidirectionalCell(
        mx.rnn.FusedRNNCell(3, mode="gru", prefix="fl_"), mx.rnn.GRUCell(3, prefix="gr_"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outs, states = cell.unroll(2, _steps(mx, 2))
    return _cell_report(mx, cell, outs, states, {f"t{i}_data": (2, 4) for i in range(2)})


def zoneout(mx):
    cell = mx.rnn.ZoneoutCell(mx.rnn.RNNCell(6, prefix="z_"), zoneout_outputs=0.5,
                              zoneout_states=0.4)
    outs, states = cell.unroll(3, _steps(mx, 3))
    return _cell_report(mx, cell, outs, states, {f"t{i}_data": (2, 4) for i in range(3)}, 13)


def residual_merged(mx):
    cell = mx.rnn.ResidualCell(mx.rnn.GRUCell(5, prefix="res_"))
    outs, states = cell.unroll(2, mx.sym.Variable("data"), merge_outputs=True)
    return _cell_report(mx, cell, outs, states, {"data": (3, 2, 5)}, 14)


def residual_list(mx):
    cell = mx.rnn.ResidualCell(mx.rnn.LSTMCell(5, prefix="res_"))
    outs, states = cell.unroll(2, _steps(mx, 2))
    return _cell_report(mx, cell, outs, states, {f"t{i}_data": (3, 5) for i in range(2)}, 15)


def _conv(mx, cls, **kw):
    cell = getattr(mx.rnn, cls)(input_shape=(2, 3, 8, 6), num_hidden=4, prefix="c_", **kw)
    outs, states = cell.unroll(2, _steps(mx, 2))
    rep = _cell_report(mx, cell, outs, states,
                       {f"t{i}_data": (2, 3, 8, 6) for i in range(2)}, 16)
    rep["var_attrs"] = {k: v for k, v in _group(mx, outs, states).attr_dict().items()
                        if k.endswith(("weight", "bias"))}
    return rep


def conv_rnn(mx):
    return _conv(mx, "ConvRNNCell")


def conv_lstm(mx):
    return _conv(mx, "ConvLSTMCell", h2h_kernel=(3, 5), h2h_dilate=(2, 1),
                 i2h_weight_initializer="uniform")


def conv_gru(mx):
    return _conv(mx, "ConvGRUCell", activation="tanh", i2h_kernel=(3, 3), i2h_stride=(2, 1),
                 i2h_pad=(1, 1))


def begin_state_variables(mx):
    cell = mx.rnn.SequentialRNNCell()
    cell.add(mx.rnn.LSTMCell(4, prefix="v0_"))
    cell.add(mx.rnn.GRUCell(3, prefix="v1_"))
    cell.add(mx.rnn.FusedRNNCell(3, mode="lstm", prefix="v2_"))
    states = cell.begin_state(func=mx.sym.Variable)
    zeros = cell.begin_state(dtype="float16")
    return {"names": [s.name for s in states],
            "attrs": [s.list_attr() for s in states],
            "zero_names": [s.name for s in zeros],
            "zero_json": [s.tojson() for s in zeros],
            "state_shape": [list(s) for s in cell.state_shape]}


def modifier_begin_state(mx):
    cell = mx.rnn.ZoneoutCell(mx.rnn.GRUCell(3, prefix="m_"), zoneout_states=0.2)
    states = cell.begin_state(mx.sym.Variable)
    return {"names": [s.name for s in states], "attrs": [s.list_attr() for s in states]}


def shared_params(mx):
    params = mx.rnn.RNNParams("shared_")
    a = mx.rnn.RNNCell(4, prefix="a_", params=params)
    b = mx.rnn.RNNCell(4, prefix="b_", params=params)
    seq = mx.rnn.SequentialRNNCell()
    seq.add(a)
    seq.add(b)
    outs, states = seq.unroll(2, _steps(mx, 2))
    return _cell_report(mx, seq, outs, states, {f"t{i}_data": (2, 4) for i in range(2)}, 17)


def unroll_twice(mx):
    """A second unroll of the same cell starts its names again."""
    cell = mx.rnn.LSTMCell(3, prefix="tw_")
    cell.unroll(2, _steps(mx, 2, "a"))
    outs, states = cell.unroll(2, _steps(mx, 2, "b"))
    return _cell_report(mx, cell, outs, states, {f"b{i}_data": (2, 4) for i in range(2)})


GRAPH_SCENARIOS = [rnn_list, rnn_relu_merged, lstm_tnc, gru_list, fused_lstm_bi,
                   fused_gru_ntc, fused_rnn_relu_unfused, fused_lstm_unfused_bi, stack,
                   stack_stepped, bidirectional_merged, bidirectional_list,
                   bidirectional_fused_inside, zoneout, residual_merged, residual_list,
                   conv_rnn, conv_lstm, conv_gru, begin_state_variables, modifier_begin_state,
                   shared_params, unroll_twice]


# --------------------------------------------------------------------- weights and numbers
def _np_dict(d):
    return {k: v.asnumpy() for k, v in d.items()}


FUSED_CONFIGS = {
    "lstm_bi2": dict(num_hidden=5, num_layers=2, mode="lstm", bidirectional=True),
    "gru_1": dict(num_hidden=4, num_layers=1, mode="gru"),
    "relu_3": dict(num_hidden=3, num_layers=3, mode="rnn_relu"),
    "tanh_bi1": dict(num_hidden=3, num_layers=1, mode="rnn_tanh", bidirectional=True),
}
FUSED_INPUT = 6


def fused_weights(mx, name):
    """unpack/pack of a fused vector, the unfused stack's packed weights, and fused vs
    unfused outputs for the same weights."""
    cfg = FUSED_CONFIGS[name]
    fused = mx.rnn.FusedRNNCell(prefix="p_", **cfg)
    data = mx.sym.Variable("data")
    out, _ = fused.unroll(3, data, layout="TNC", merge_outputs=True)
    args, _, _ = out.infer_shape(data=(3, 2, FUSED_INPUT))
    size = dict(zip(out.list_arguments(), args))["p_parameters"][0]
    vec = mx.nd.array(det((size,), 21))
    unpacked = fused.unpack_weights({"p_parameters": vec, "other": mx.nd.ones((2,))})
    stack = fused.unfuse()
    packed = stack.pack_weights(unpacked)
    re_unpacked = stack.unpack_weights(packed)
    re_packed = fused.pack_weights(re_unpacked)
    x = mx.nd.array(det((3, 2, FUSED_INPUT), 22))
    fused_out = out.eval(ctx=mx.cpu(), data=x, p_parameters=vec)[0]
    u_out, _ = stack.unroll(3, data, layout="TNC", merge_outputs=True)
    feed = {k: v for k, v in packed.items() if k in u_out.list_arguments()}
    unfused_out = u_out.eval(ctx=mx.cpu(), data=x, **feed)[0]
    return {"size": size, "unpacked_keys": list(unpacked.keys()),
            "unpacked": _np_dict(unpacked), "packed_keys": list(packed.keys()),
            "packed": _np_dict(packed), "re_unpacked_keys": list(re_unpacked.keys()),
            "re_packed": re_packed["p_parameters"].asnumpy(),
            "unfused_arguments": u_out.list_arguments(),
            "fused_out": fused_out.asnumpy(), "unfused_out": unfused_out.asnumpy()}


def cell_weights(mx):
    """Gate unpack/pack of plain cells (and through modifier / bidirectional cells)."""
    res = {}
    for cls, gates in (("RNNCell", 1), ("LSTMCell", 4), ("GRUCell", 3)):
        cell = getattr(mx.rnn, cls)(3, prefix="w_")
        args = {"w_i2h_weight": mx.nd.array(det((3 * gates, 2), 1)),
                "w_i2h_bias": mx.nd.array(det((3 * gates,), 2)),
                "w_h2h_weight": mx.nd.array(det((3 * gates, 3), 3)),
                "w_h2h_bias": mx.nd.array(det((3 * gates,), 4)),
                "keep": mx.nd.array(det((2,), 5))}
        wrapped = mx.rnn.ResidualCell(cell)
        unpacked = wrapped.unpack_weights(args)
        packed = wrapped.pack_weights(unpacked)
        res[cls] = {"unpacked_keys": list(unpacked.keys()), "unpacked": _np_dict(unpacked),
                    "packed_keys": list(packed.keys()), "packed": _np_dict(packed)}
    bi = mx.rnn.BidirectionalCell(mx.rnn.LSTMCell(2, prefix="L_"),
                                  mx.rnn.GRUCell(2, prefix="R_"))
    args = {"L_i2h_weight": mx.nd.array(det((8, 3), 6)), "L_i2h_bias": mx.nd.array(det((8,), 7)),
            "L_h2h_weight": mx.nd.array(det((8, 2), 8)), "L_h2h_bias": mx.nd.array(det((8,), 9)),
            "R_i2h_weight": mx.nd.array(det((6, 3), 10)), "R_i2h_bias": mx.nd.array(det((6,), 11)),
            "R_h2h_weight": mx.nd.array(det((6, 2), 12)), "R_h2h_bias": mx.nd.array(det((6,), 13))}
    unpacked = bi.unpack_weights(args)
    res["bidirectional"] = {"unpacked_keys": list(unpacked.keys()),
                            "unpacked": _np_dict(unpacked)}
    return res


def initializers(mx):
    """What the cells' weight variables' initializers write (Module.init_params uses them)."""
    res = {}
    cell = mx.rnn.LSTMCell(3, forget_bias=2.5, prefix="i_")
    attrs = cell.params.get("i2h_bias").list_attr()
    arr = mx.nd.ones((12,))
    mx.init.Constant(0.7)(mx.init.InitDesc("i_i2h_bias", attrs=attrs), arr)
    res["lstm_i2h_bias"] = arr.asnumpy()
    arr = mx.nd.ones((12,))
    mx.init.Constant(0.7)(mx.init.InitDesc("i_h2h_bias", attrs={}), arr)
    res["lstm_h2h_bias"] = arr.asnumpy()
    fused = mx.rnn.FusedRNNCell(2, num_layers=1, mode="lstm", forget_bias=3.0, prefix="fi_")
    attrs = fused.params.get("parameters").list_attr()
    arr = mx.nd.zeros((4 * 2 * (3 + 2 + 2),))
    mx.init.Constant(0.25)(mx.init.InitDesc("fi_parameters", attrs=attrs), arr)
    res["fused_parameters"] = arr.asnumpy()
    return res


def sentences_data():
    rng = np.random.RandomState(0)
    return [list(rng.randint(1, 20, size=rng.choice([2, 3, 3, 5, 5, 5, 7, 9])))
            for _ in range(60)]


def bucket_iter(mx, layout, buckets, batch_size, seed, dtype="float32"):
    sentences = sentences_data()
    random.seed(seed)
    np.random.seed(seed)
    it = mx.rnn.BucketSentenceIter(sentences, batch_size, buckets=buckets,
                                   invalid_label=0, layout=layout, dtype=dtype,
                                   data_name="words", label_name="next")
    desc = lambda d: [d.name, list(d.shape), d.layout]  # noqa: E731
    res = {"buckets": list(it.buckets), "default_bucket_key": it.default_bucket_key,
           "provide_data": [desc(d) for d in it.provide_data],
           "provide_label": [desc(d) for d in it.provide_label], "epochs": []}
    for _ in range(2):
        batches = []
        for batch in it:
            batches.append({"key": batch.bucket_key, "pad": batch.pad,
                            "data": batch.data[0].asnumpy(), "label": batch.label[0].asnumpy(),
                            "dtype": np.dtype(batch.data[0].dtype).name,
                            "provide_data": [desc(d) for d in batch.provide_data],
                            "provide_label": [desc(d) for d in batch.provide_label]})
        res["epochs"].append(batches)
        it.reset()
    return res


BUCKET_CASES = {
    "nt_default": ("NT", None, 4, 1, "float32"),
    "tn_given": ("TN", [4, 6, 10], 3, 2, "float32"),
    "nt_small_buckets": ("NT", [3, 5], 5, 3, "int32"),
}


def encode(mx):
    sents = [["a", "b", "c"], ["b", "c", "d"], ["e", "a"]]
    res = {}
    enc, vocab = mx.rnn.encode_sentences(sents)
    res["new_vocab"] = [enc, vocab]
    enc, vocab = mx.rnn.encode_sentences(sents, invalid_label=1, invalid_key="<eos>",
                                         start_label=0)
    res["invalid_in_range"] = [enc, vocab]
    enc, vocab = mx.rnn.io.encode_sentences(sents[:2], vocab={"a": 1, "b": 2, "c": 3},
                                            invalid_label=-1, start_label=0,
                                            unknown_token="UNK")
    res["unknown_once"] = [enc, vocab]
    return res


# ---------------------------------------------------------------- bound (executor) graphs
BOUND_CASES = {
    "lstm": (lambda mx: mx.rnn.LSTMCell(8, forget_bias=2.0).unroll(
        3, mx.sym.Variable("data"), layout="TNC", merge_outputs=True), {"data": (3, 4, 6)}),
    "fused_lstm_bi": (lambda mx: mx.rnn.FusedRNNCell(
        5, num_layers=2, mode="lstm", bidirectional=True, get_next_state=True,
        prefix="f_").unroll(3, mx.sym.Variable("data"), layout="TNC", merge_outputs=True),
        {"data": (3, 4, 7)}),
    "fused_gru_ntc": (lambda mx: mx.rnn.FusedRNNCell(4, mode="gru", get_next_state=True).unroll(
        3, mx.sym.Variable("data"), merge_outputs=True), {"data": (2, 3, 5)}),
    "conv_lstm": (lambda mx: mx.rnn.ConvLSTMCell((2, 3, 8, 6), 4, prefix="c_").unroll(
        2, mx.sym.Variable("data"), merge_outputs=True), {"data": (2, 2, 3, 8, 6)}),
    "bi_residual": (lambda mx: mx.rnn.ResidualCell(mx.rnn.BidirectionalCell(
        mx.rnn.GRUCell(3, prefix="l_"), mx.rnn.LSTMCell(3, prefix="r_"))).unroll(
        3, mx.sym.Variable("data"), merge_outputs=True), {"data": (2, 3, 6)}),
}


def bound(mx, name):
    """Outputs and gradients (all-ones head gradients) of a cell's graph run by
    ``simple_bind`` in training mode, for deterministic argument values."""
    build, shapes = BOUND_CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, states = build(mx)
    sym = _group(mx, out, states)
    ex = sym.simple_bind(mx.cpu(), **shapes)
    for j, arg in enumerate(sym.list_arguments()):
        ex.arg_dict[arg][:] = mx.nd.array(det(ex.arg_dict[arg].shape, 30 + j))
    outs = ex.forward(is_train=True)
    ex.backward([mx.nd.ones(o.shape) for o in outs])
    return {"outputs": [o.asnumpy() for o in outs],
            "grads": {k: v.asnumpy() for k, v in ex.grad_dict.items()}}
