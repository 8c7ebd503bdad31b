"""Write tests/fixtures/rnn_extra/* from MXNet 1.9.1 (run with /tmp/mxref/bin/python).

Scenarios: ZoneoutCell, contrib VariationalDropoutCell and LSTMPCell (names, reprs, unroll
outputs, states and gradients for fixed weights, in predict mode and in the deterministic
training cases), the error messages MXNet raises, the fused LSTM's state clipping and the
fused layers' ``use_sequence_length`` (MXNet's CPU operator ignores both, so their reference
numbers are built here from MXNet operators: clipped LSTM steps, and each sequence run on its
own up to its length), Block.save files (plain and hybridized) and what Block.load makes of
them, and hybridize(static_shape=True, static_alloc=False).
"""
import json
import os
import shutil
import warnings

import numpy as np
import mxnet as mx
from mxnet import gluon, nd, autograd
from mxnet.gluon import nn, rnn
from mxnet.gluon.contrib import rnn as crnn

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures",
                   "rnn_extra")
os.makedirs(OUT, exist_ok=True)
warnings.simplefilter("ignore")

META = {}
ARR = {}


def reset_names():
    mx.name.NameManager._current.value = mx.name.NameManager()


def det(shape, k):
    """Deterministic values, computed the same way in the tests."""
    n = int(np.prod(shape)) if shape else 1
    return (np.sin(np.arange(n, dtype=np.float64) * 0.37 + k) * 0.5).astype(
        np.float32).reshape(shape)


def loss_of(out, states):
    loss = (out * nd.array(det(out.shape, 9))).sum()
    for k, st in enumerate(states):
        loss = loss + (st * (k + 2)).sum()
    return loss


def set_det(block, base):
    """Deterministic weights (index j of collect_params gets det(shape, base + j))."""
    for j, (name, p) in enumerate(block.collect_params().items()):
        v = det(p.shape, base + j)
        if name.endswith("running_var"):
            v = np.abs(v) + 0.5
        p.set_data(nd.array(v))


# ------------------------------------------------------------------ modifier / contrib cells
CELLS = {
    "zo_pred": ("rnn.ZoneoutCell(rnn.LSTMCell(5), 0.3, 0.4)", False),
    "zo_p0": ("rnn.ZoneoutCell(rnn.GRUCell(4), 0., 0.)", True),
    "zo_seq": ("zoneout_seq()", False),
    "vd_pred": ("crnn.VariationalDropoutCell(rnn.LSTMCell(5), 0.3, 0.4, 0.5)", False),
    "vd_p0": ("crnn.VariationalDropoutCell(rnn.GRUCell(4), 0., 0., 0.)", True),
    "vd_nostate": ("crnn.VariationalDropoutCell(rnn.RNNCell(4), 0.3, 0., 0.5)", False),
    "lstmp": ("crnn.LSTMPCell(6, 4)", True),
    "lstmp_in": ("crnn.LSTMPCell(5, 3, input_size=4, prefix='proj_')", True),
    "conv1d_rnn": ("crnn.Conv1DRNNCell((2, 7), 3, 3, 3, activation='relu')", True),
    "conv2d_lstm": ("crnn.Conv2DLSTMCell((2, 5, 4), 3, (3, 2), 3, i2h_pad=(1, 0))", True),
    "conv3d_gru": ("crnn.Conv3DGRUCell((2, 3, 4, 3), 2, 1, 3, h2h_dilate=(1, 2, 1))", True),
    "conv2d_gru_dil": ("crnn.Conv2DGRUCell((3, 6, 6), 2, 3, 5, i2h_dilate=2, "
                       "prefix='cg_')", True),
}
CELL_SHAPES = {
    "conv1d_rnn": (2, 3, 2, 7), "conv2d_lstm": (2, 3, 2, 5, 4),
    "conv3d_gru": (2, 2, 2, 3, 4, 3), "conv2d_gru_dil": (2, 3, 3, 6, 6),
}
SHAPE = (3, 4, 4)  # N, T, C (layout NTC)


def zoneout_seq():
    seq = rnn.HybridSequentialRNNCell()
    with seq.name_scope():
        seq.add(rnn.LSTMCell(5))
        seq.add(rnn.GRUCell(3))
    return rnn.ZoneoutCell(seq, 0.2, 0.2)


def cell_case(name, expr, train, idx):
    reset_names()
    cell = eval(expr)
    cell.initialize()
    shape = CELL_SHAPES.get(name, SHAPE)
    x = nd.array(det(shape, 100 + idx))
    with autograd.predict_mode():
        cell.unroll(shape[1], x, layout="NTC", merge_outputs=True)
    set_det(cell, 200 + 20 * idx)
    x.attach_grad()
    with autograd.record(train_mode=train):
        out, states = cell.unroll(shape[1], x, layout="NTC", merge_outputs=True)
        loss = loss_of(out, states)
    loss.backward()
    META[name] = {
        "expr": expr, "train": train, "repr": repr(cell), "name": cell.name,
        "prefix": cell.prefix,
        "params": [[k, list(p.shape)] for k, p in cell.collect_params().items()],
        "nstates": len(states),
    }
    ARR[f"{name}|y"] = out.asnumpy()
    for k, st in enumerate(states):
        ARR[f"{name}|state{k}"] = st.asnumpy()
    ARR[f"{name}|dx"] = x.grad.asnumpy()
    for k, p in cell.collect_params().items():
        ARR[f"{name}|grad|{k}"] = p.grad().asnumpy()
    return cell


def vardrop_one(name, flags, idx):
    """VariationalDropoutCell(LSTMCell(5)) with rates of 1 where ``flags`` says so.

    MXNet's Dropout with p=1 gives NaN (0 * inf), so the cell itself cannot be the reference;
    the documented maths (masks of zeros) is stepped by hand on MXNet's LSTMCell instead.
    """
    d_in, d_st, d_out = flags
    reset_names()
    base = rnn.LSTMCell(5)
    base.initialize()
    x = nd.array(det(SHAPE, 100 + idx))
    with autograd.predict_mode():
        base.unroll(SHAPE[1], x, layout="NTC", merge_outputs=True)
    set_det(base, 200 + 20 * idx)
    x.attach_grad()
    with autograd.record():
        states = base.begin_state(SHAPE[0])
        outs = []
        for t in range(SHAPE[1]):
            xt = x[:, t] * (1 - d_in)
            states = [states[0] * (1 - d_st)] + states[1:]
            o, states = base(xt, states)
            outs.append(o * (1 - d_out))
        out = nd.stack(*outs, axis=1)
        loss = loss_of(out, states)
    loss.backward()
    META[name] = {"flags": list(flags), "params": [[k, list(p.shape)] for k, p in
                                                   base.collect_params().items()]}
    ARR[f"{name}|y"] = out.asnumpy()
    for k, st in enumerate(states):
        ARR[f"{name}|state{k}"] = st.asnumpy()
    ARR[f"{name}|dx"] = x.grad.asnumpy()
    for k, p in base.collect_params().items():
        ARR[f"{name}|grad|{k}"] = p.grad().asnumpy()


def zoneout_p1_mxnet():
    """What MXNet 1.9.1 itself gives for zoneout probability 1 (recorded for the report):
    Dropout(ones, p=1) is NaN, where() takes NaN as true, so nothing is zoned out."""
    reset_names()
    cell = rnn.ZoneoutCell(rnn.LSTMCell(5), 1.0, 1.0)
    plain = rnn.LSTMCell(5)
    for c in (cell, plain):
        c.initialize()
        with autograd.predict_mode():
            c.unroll(SHAPE[1], nd.array(det(SHAPE, 1)), merge_outputs=True)
    set_det(cell, 5)
    set_det(plain, 5)
    with autograd.record():
        y1, _ = cell.unroll(SHAPE[1], nd.array(det(SHAPE, 1)), merge_outputs=True)
    with autograd.record():
        y0, _ = plain.unroll(SHAPE[1], nd.array(det(SHAPE, 1)), merge_outputs=True)
    META["zoneout_p1_mxnet_equals_no_zoneout"] = bool(
        np.allclose(y1.asnumpy(), y0.asnumpy()))


def errors():
    res = {}

    def catch(key, fn):
        try:
            fn()
            res[key] = None
        except Exception as err:  # noqa: BLE001
            res[key] = [type(err).__name__, str(err).split("\n")[-1] if
                        isinstance(err, mx.base.MXNetError) else str(err)]

    reset_names()
    catch("zoneout_bidirectional", lambda: rnn.ZoneoutCell(
        rnn.BidirectionalCell(rnn.LSTMCell(3), rnn.LSTMCell(3)), 0.5, 0.5))
    catch("zoneout_sequential", lambda: rnn.ZoneoutCell(rnn.SequentialRNNCell(), 0.5, 0.5))
    catch("vardrop_bidirectional_states", lambda: crnn.VariationalDropoutCell(
        rnn.BidirectionalCell(rnn.LSTMCell(3), rnn.LSTMCell(3)), drop_states=0.5))
    catch("vardrop_bidirectional_inputs_ok", lambda: crnn.VariationalDropoutCell(
        rnn.BidirectionalCell(rnn.LSTMCell(3), rnn.LSTMCell(3)), drop_inputs=0.5))
    reset_names()
    base = rnn.LSTMCell(3)
    rnn.ZoneoutCell(base, 0.5)
    catch("modified_twice", lambda: rnn.ZoneoutCell(base, 0.5))
    catch("base_begin_state", lambda: base.begin_state(2))
    net = nn.Dense(3)
    net.initialize()
    net.hybridize(static_shape=True, static_alloc=False)
    catch("static_shape_without_alloc", lambda: net(nd.ones((2, 4))))
    net.hybridize(static_shape=True, static_alloc=True)
    catch("static_both", lambda: net(nd.ones((2, 4))))
    net.hybridize(static_alloc=True)
    catch("static_alloc_only", lambda: net(nd.ones((2, 4))))
    lay = rnn.LSTM(4, input_size=3, use_sequence_length=True)
    lay.initialize()
    catch("seqlen_missing", lambda: lay(nd.ones((5, 2, 3)), lay.begin_state(2)))
    META["errors"] = res
    reset_names()
    META["residual_repr"] = repr(rnn.ResidualCell(rnn.LSTMCell(3)))


def dynamic_case(name, layout, valid, idx):
    reset_names()
    cell = rnn.GRUCell(4) if valid else rnn.LSTMCell(4)
    cell.initialize()
    shape = (5, 3, 2) if layout == "TNC" else (3, 5, 2)
    x = nd.array(det(shape, 100 + idx))
    begin = [nd.array(det(i["shape"], 40 + k)) for k, i in enumerate(cell.state_info(3))]
    vl = nd.array([2, 5, 3]) if valid else None
    crnn.rnn_cell.dynamic_unroll(cell, x, begin, layout=layout, valid_length=vl)
    set_det(cell, 200 + 20 * idx)
    x.attach_grad()
    with autograd.record():
        out, states = crnn.rnn_cell.dynamic_unroll(cell, x, begin, layout=layout,
                                                   valid_length=vl)
        loss = loss_of(out, states)
    loss.backward()
    META[name] = {"layout": layout, "valid": valid, "shape": list(shape)}
    ARR[f"{name}|y"] = out.asnumpy()
    for k, st in enumerate(states):
        ARR[f"{name}|state{k}"] = st.asnumpy()
    ARR[f"{name}|dx"] = x.grad.asnumpy()
    for k, p in cell.collect_params().items():
        ARR[f"{name}|grad|{k}"] = p.grad().asnumpy()


# ------------------------------------------------------------------ fused layers
def lstm_step_clipped(x, h, c, w, lo, hi):
    i2h_w, h2h_w, i2h_b, h2h_b = w
    nh = h2h_w.shape[1]
    g = nd.FullyConnected(x, i2h_w, i2h_b, num_hidden=4 * nh) + \
        nd.FullyConnected(h, h2h_w, h2h_b, num_hidden=4 * nh)
    gi, gf, gg, go = nd.split(g, num_outputs=4, axis=1)
    c = nd.sigmoid(gf) * c + nd.sigmoid(gi) * nd.tanh(gg)
    # cuDNN (the only MXNet backend that clips) clips the cell state before h is computed.
    c = nd.clip(c, lo, hi)
    h = nd.sigmoid(go) * nd.tanh(c)
    return h, c


def clip_case(name, hidden, layers, bidir, shape, lo, hi, idx):
    reset_names()
    lay = rnn.LSTM(hidden, num_layers=layers, bidirectional=bidir, state_clip_min=lo,
                   state_clip_max=hi)
    lay.initialize()
    x = nd.array(det(shape, 100 + idx) * 6)
    lay(x)
    set_det(lay, 200 + 20 * idx)
    params = {k: p for k, p in lay.collect_params().items()}
    plist = list(lay._reg_params.items())
    ndir = 2 if bidir else 1
    fused_cpu = lay(x).asnumpy()  # what MXNet's CPU operator gives (clipping ignored)
    x.attach_grad()
    with autograd.record():
        h0 = nd.array(det((layers * ndir, shape[1], hidden), 7))
        c0 = nd.array(det((layers * ndir, shape[1], hidden), 8))
        inp = x
        hs, cs = [], []
        for l in range(layers):
            outs_dir = []
            for d, dn in enumerate("lr"[:ndir]):
                w = [lay._reg_params[f"{dn}{l}_{g}"].data() for g in
                     ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias")]
                h, c = h0[l * ndir + d], c0[l * ndir + d]
                steps = range(shape[0]) if d == 0 else reversed(range(shape[0]))
                outs = [None] * shape[0]
                for t in steps:
                    h, c = lstm_step_clipped(inp[t], h, c, w, lo, hi)
                    outs[t] = h
                hs.append(h)
                cs.append(c)
                outs_dir.append(nd.stack(*outs, axis=0))
            inp = nd.concat(*outs_dir, dim=2) if ndir == 2 else outs_dir[0]
        out = inp
        states = [nd.stack(*hs, axis=0), nd.stack(*cs, axis=0)]
        loss = loss_of(out, states)
    loss.backward()
    META[name] = {"hidden": hidden, "layers": layers, "bidir": bidir, "shape": list(shape),
                  "lo": lo, "hi": hi, "params": [[k, list(p.shape)] for k, p in params.items()],
                  "cpu_operator_ignores_clip": bool(np.allclose(
                      fused_cpu, nd.array(out.asnumpy()).asnumpy())) is False}
    ARR[f"{name}|x"] = x.asnumpy()
    ARR[f"{name}|h0"] = h0.asnumpy()
    ARR[f"{name}|c0"] = c0.asnumpy()
    ARR[f"{name}|y"] = out.asnumpy()
    for k, st in enumerate(states):
        ARR[f"{name}|state{k}"] = st.asnumpy()
    ARR[f"{name}|dx"] = x.grad.asnumpy()
    for k, p in plist:
        ARR[f"{name}|grad|{k}"] = p.grad().asnumpy()


# GRU and RNN get their input_size: MXNet 1.9.1 cannot infer it with use_sequence_length
# ("Symbol.ComposeKeyword argument name state_cell not found" for one-state layers).
SEQ = {
    "seq_lstm": ("rnn.LSTM(4, num_layers=2, bidirectional=True, {kw})", (5, 3, 3), [3, 5, 1],
                 "TNC"),
    "seq_gru_ntc": ("rnn.GRU(4, layout='NTC', input_size=3, {kw})", (2, 4, 3), [2, 4], "NTC"),
    "seq_rnn": ("rnn.RNN(3, activation='tanh', bidirectional=True, input_size=2, {kw})",
                (4, 2, 2), [4, 2], "TNC"),
}


def seq_case(name, idx):
    """The documented (cuDNN) semantics of use_sequence_length: each sequence runs up to its
    own length (the backward direction starts at its last valid step), outputs past it are 0
    and the states are those at the last valid step. MXNet's CPU operator ignores
    sequence_length, so the reference runs each sequence alone, trimmed to its length."""
    expr, shape, lengths, layout = SEQ[name]
    reset_names()
    lay = eval(expr.format(kw="use_sequence_length=True"))
    lay.initialize()
    x = nd.array(det(shape, 100 + idx))
    nax = layout.find("N")
    tax = layout.find("T")
    batch = shape[nax]
    states0 = lay.begin_state(batch)
    states0 = [nd.array(det(s.shape, 30 + k)) for k, s in enumerate(states0)]
    lay(x, states0, nd.array(lengths))
    set_det(lay, 200 + 20 * idx)
    cpu_out = lay(x, states0, nd.array(lengths))[0].asnumpy()
    plain = eval(expr.format(kw="prefix='ref_'"))
    plain.initialize()
    plain(x, states0)
    for (_, p), (_, q) in zip(lay.collect_params().items(), plain.collect_params().items()):
        q.set_data(p.data())
    x.attach_grad()
    with autograd.record():
        outs, fin = [], [[] for _ in states0]
        for b in range(batch):
            n = lengths[b]
            xb = nd.slice_axis(nd.slice_axis(x, axis=nax, begin=b, end=b + 1), axis=tax,
                               begin=0, end=n)
            sb = [nd.slice_axis(s, axis=1, begin=b, end=b + 1) for s in states0]
            ob, stb = plain(xb, sb)
            if n < shape[tax]:
                pad_shape = list(ob.shape)
                pad_shape[tax] = shape[tax] - n
                ob = nd.concat(ob, nd.zeros(tuple(pad_shape)), dim=tax)
            outs.append(ob)
            for k, s in enumerate(stb):
                fin[k].append(s)
        out = nd.concat(*outs, dim=nax)
        states = [nd.concat(*f, dim=1) for f in fin]
        loss = loss_of(out, states)
    loss.backward()
    META[name] = {"expr": expr.format(kw="use_sequence_length=True"), "shape": list(shape),
                  "lengths": lengths, "layout": layout,
                  "params": [[k, list(p.shape)] for k, p in lay.collect_params().items()],
                  "cpu_operator_ignores_lengths": not np.allclose(cpu_out, out.asnumpy())}
    ARR[f"{name}|x"] = x.asnumpy()
    for k, s in enumerate(states0):
        ARR[f"{name}|s0_{k}"] = s.asnumpy()
    ARR[f"{name}|y"] = out.asnumpy()
    for k, st in enumerate(states):
        ARR[f"{name}|state{k}"] = st.asnumpy()
    ARR[f"{name}|dx"] = x.grad.asnumpy()
    for (k, _), (_, q) in zip(lay.collect_params().items(), plain.collect_params().items()):
        ARR[f"{name}|grad|{k}"] = q.grad().asnumpy()


# ------------------------------------------------------------------ Block.save / load
def save_net():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(4, in_units=3, activation="relu"))
        inner = nn.HybridSequential()
        with inner.name_scope():
            inner.add(nn.Dense(5, in_units=4))
            inner.add(nn.BatchNorm(in_channels=5))
        net.add(inner)
        net.add(nn.Dense(2, in_units=5))
    return net


def save_load():
    reset_names()
    net = save_net()
    net.initialize()
    set_det(net, 400)
    x = nd.array(det((2, 3), 50))
    y = net(x)
    net.save(os.path.join(OUT, "mx_plain"))
    net.hybridize()
    net(x)
    net.save(os.path.join(OUT, "mx_hyb"))
    with open(os.path.join(OUT, "mx_hyb-model.json")) as f:
        hyb = json.load(f)
    # The parameters of both saves are the same; keep one copy.
    os.remove(os.path.join(OUT, "mx_hyb-model.params"))
    ARR["save|x"] = x.asnumpy()
    ARR["save|y"] = y.asnumpy()
    # Load into a copy built after other blocks took the first names.
    nn.Dense(1)
    save_net()
    net2 = save_net()
    net2.initialize()
    before = [net2.name, list(net2.collect_params().keys())]
    net2.load(os.path.join(OUT, "mx_plain"))
    after_children = list(net2._children.keys())
    y2 = net2(x)
    META["save_load"] = {
        "before": before, "after_name": net2.name,
        "after_params": list(net2.collect_params().keys()),
        "after_param_names": [p.name for p in net2.collect_params().values()],
        "after_children": after_children,
        "after_child_names": [c.name for c in net2._children.values()],
        "after_prefix": net2.prefix,
        "hyb_top_hybridized": hyb["hybridsequential0"]["hybridized"],
        "hyb_has_symbol": "symbol" in hyb["hybridsequential0"],
        "loaded_output_equal": bool(np.array_equal(y2.asnumpy(), y.asnumpy())),
    }
    # Loading the hybridized save: MXNet restores the graph and marks the block active.
    reset_names()
    net3 = save_net()
    net3.initialize()
    shutil.copy(os.path.join(OUT, "mx_plain-model.params"),
                os.path.join("/tmp", "mx_hyb_tmp-model.params"))
    shutil.copy(os.path.join(OUT, "mx_hyb-model.json"),
                os.path.join("/tmp", "mx_hyb_tmp-model.json"))
    net3.load("/tmp/mx_hyb_tmp")
    META["save_load"]["hyb_loaded_active"] = net3._active
    META["save_load"]["hyb_loaded_output_equal"] = bool(
        np.allclose(net3(x).asnumpy(), y.asnumpy()))


def main():
    for idx, (name, (expr, train)) in enumerate(CELLS.items()):
        cell_case(name, expr, train, idx)
    for idx, (name, flags) in enumerate([("vd_in1", (1, 0, 0)), ("vd_st1", (0, 1, 0)),
                                         ("vd_out1", (0, 0, 1))]):
        vardrop_one(name, flags, 50 + idx)
    zoneout_p1_mxnet()
    dynamic_case("dyn_tnc_valid", "TNC", True, 80)
    dynamic_case("dyn_ntc", "NTC", False, 81)
    errors()
    clip_case("clip_lstm", 4, 2, True, (4, 2, 3), -0.2, 0.3, 60)
    clip_case("clip_lstm1", 3, 1, False, (5, 2, 2), -0.5, 0.1, 61)
    for idx, name in enumerate(SEQ):
        seq_case(name, 70 + idx)
    save_load()
    np.savez_compressed(os.path.join(OUT, "rnn_extra.npz"), **ARR)
    with open(os.path.join(OUT, "rnn_extra.json"), "w") as f:
        json.dump(META, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
