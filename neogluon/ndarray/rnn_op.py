"""MXNet's fused recurrent operator ``nd.RNN`` and the per-layer form the Gluon layers call.

``nd.RNN`` takes every weight and bias in one flat ``parameters`` vector (MXNet's layout);
MXNet's recurrent layers and their exported graphs (``_rnn_param_concat`` + ``RNN``) call it.
neogluon's layers pass the per-layer weights as separate arrays to ``nd._gluon_rnn``. Both run
torch's fused kernels, whose gate orders (LSTM: i, f, g, o; GRU: r, z, n) are MXNet's, or a
step loop for LSTM state clipping and per-sequence lengths. ``nd.RNN`` called directly, a
hybridized block's ``F.RNN`` and an imported graph's ``RNN`` node run this one function.
"""
from __future__ import annotations

import warnings

import torch

from ..autograd import _state
from ..base import MXNetError
from .ndarray import NDArray, _new, _run

# torch says once that its oneDNN path does not do projections and falls back; the
# fallback is the intended path, so the notice only confuses Gluon users. The global filter
# covers scripts; the call itself also silences it, for code that resets the filters after
# importing neogluon (pytest does, per test).
_ONEDNN_PROJ = "LSTM with projections is not supported with oneDNN"
warnings.filterwarnings("ignore", message=_ONEDNN_PROJ)


def _lstm(*args):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_ONEDNN_PROJ)
        return torch._VF.lstm(*args)


_FNS = {"lstm": _lstm, "gru": torch._VF.gru, "rnn_tanh": torch._VF.rnn_tanh,
        "rnn_relu": torch._VF.rnn_relu}


def _cell_step(mode, g, h, c, wh, bh, wr, clip):
    """One step of one direction given ``g = W_ih x + b_ih``; returns ``(h, c)``."""
    if mode == "gru":
        hh = torch.nn.functional.linear(h, wh, bh)
        xr, xz, xn = g.chunk(3, 1)
        hr, hz, hn = hh.chunk(3, 1)
        r = torch.sigmoid(xr + hr)
        z = torch.sigmoid(xz + hz)
        n = torch.tanh(xn + r * hn)
        return (1 - z) * n + z * h, None
    g = g + torch.nn.functional.linear(h, wh, bh)
    if mode == "rnn_tanh":
        return torch.tanh(g), None
    if mode == "rnn_relu":
        return torch.relu(g), None
    i, f, gg, o = g.chunk(4, 1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(gg)
    if clip is not None:
        lo, hi, nan = clip
        if nan:
            # Keep a NaN from spreading through the sequence: it becomes the lower bound.
            c = torch.where(torch.isnan(c), torch.full_like(c, lo if lo is not None else hi),
                            c)
        c = torch.clamp(c, lo, hi)
    h = torch.sigmoid(o) * torch.tanh(c)
    if wr is not None:
        h = torch.nn.functional.linear(h, wr)
    return h, c


def _reverse_index(lengths, T):
    """Per-sequence time reversal within each valid length (padding stays in place); the
    map is its own inverse."""
    t = torch.arange(T, device=lengths.device).unsqueeze(1)
    return torch.where(t < lengths, lengths - 1 - t, t)


def _loop_rnn(x, states, weights, mode, num_layers, bidirectional, p, train, clip, lengths):
    """Step-by-step RNN for what the fused kernels cannot do: LSTM state clipping and
    per-sequence lengths. Outputs past a sequence's length are 0 and its states stop at its
    last valid step (cuDNN's semantics)."""
    T = x.shape[0]
    ndir = 2 if bidirectional else 1
    per = len(weights) // (num_layers * ndir)
    h0 = states[0]
    c0 = states[1] if mode == "lstm" else None
    if lengths is not None:
        valid = (torch.arange(T, device=x.device).unsqueeze(1) < lengths).unsqueeze(2)
        rev = _reverse_index(lengths, T)
    hs, cs = [], []
    inp = x
    for layer in range(num_layers):
        outs_dir = []
        for d in range(ndir):
            k = layer * ndir + d
            wi, wh, bi, bh = weights[k * per:k * per + 4]
            wr = weights[k * per + 4] if per == 5 else None
            seq = inp
            if d == 1:
                seq = inp.flip(0) if lengths is None else torch.gather(
                    inp, 0, rev.unsqueeze(2).expand(inp.shape))
            xw = torch.nn.functional.linear(seq, wi, bi)
            h = h0[k]
            c = c0[k] if c0 is not None else None
            outs = []
            for t in range(T):
                hn, cn = _cell_step(mode, xw[t], h, c, wh, bh, wr, clip)
                if lengths is None:
                    h, c = hn, cn
                    outs.append(hn)
                else:
                    m = valid[t]
                    h = torch.where(m, hn, h)
                    if c is not None:
                        c = torch.where(m, cn, c)
                    outs.append(torch.where(m, hn, torch.zeros_like(hn)))
            o = torch.stack(outs, 0)
            if d == 1:
                o = o.flip(0) if lengths is None else torch.gather(
                    o, 0, rev.unsqueeze(2).expand(o.shape))
            outs_dir.append(o)
            hs.append(h)
            cs.append(c)
        inp = torch.cat(outs_dir, 2) if ndir == 2 else outs_dir[0]
        if p > 0 and train and layer < num_layers - 1:
            inp = torch.nn.functional.dropout(inp, p, True)
    res = [inp, torch.stack(hs, 0)]
    if mode == "lstm":
        res.append(torch.stack(cs, 0))
    return res


def _gluon_rnn(data, *arrays, mode, num_layers, bidirectional, p=0.0, num_states=1,
               state_clip_min=None, state_clip_max=None, state_clip_nan=False,
               use_sequence_length=False):
    """Run a multi-layer (bi)directional RNN on ``data`` of layout TNC.

    ``arrays`` holds the ``num_states`` initial states (``(layers * dirs, N, H)``), then per
    layer and direction ``i2h_weight, h2h_weight, i2h_bias, h2h_bias`` (and ``h2r_weight`` with
    a projection), then, with ``use_sequence_length``, the ``(N,)`` sequence lengths.
    Returns ``[output, state...]``.
    """
    if mode not in _FNS:
        raise MXNetError(f"RNN: unknown mode {mode!r}; expected one of {sorted(_FNS)}")
    ts = [a._t for a in arrays]
    lengths = None
    if use_sequence_length:
        seq_len = arrays[-1]
        ts = ts[:-1]
    states, weights = ts[:num_states], ts[num_states:]
    x = data._t
    if x.dim() != 3:
        raise MXNetError(f"RNN: data must be 3-D (TNC), got shape {data.shape}")
    if use_sequence_length:
        if seq_len.shape != (x.shape[1],):
            raise MXNetError(f"RNN: sequence_length must have shape ({x.shape[1]},) (one length "
                             f"per sequence), got {seq_len.shape}")
        lengths = seq_len._t.detach().to(device=x.device, dtype=torch.int64)
        if lengths.numel() and not lengths.is_meta and (  # (meta: shape inference)
                int(lengths.min()) < 1 or int(lengths.max()) > x.shape[0]):
            raise MXNetError(f"RNN: sequence_length values must be in [1, {x.shape[0]}] (the "
                             f"time axis), got {seq_len.asnumpy().tolist()}")
    clip = None
    if mode == "lstm" and (state_clip_min is not None or state_clip_max is not None):
        clip = (state_clip_min, state_clip_max, bool(state_clip_nan))
    train = bool(_state.training)
    try:
        if clip is not None or lengths is not None:
            res = _run(_loop_rnn, x, states, weights, mode, num_layers, bidirectional,
                       float(p), train, clip, lengths)
        elif mode == "lstm":
            out, h, c = _run(_FNS[mode], x, (states[0], states[1]), weights, True, num_layers,
                             float(p), train, bidirectional, False)
            res = [out, h, c]
        else:
            out, h = _run(_FNS[mode], x, states[0], weights, True, num_layers, float(p), train,
                          bidirectional, False)
            res = [out, h]
    except RuntimeError as err:
        raise MXNetError(f"RNN ({mode}): data shape {data.shape}, state shapes "
                         f"{[tuple(s.shape) for s in states]}: {err}") from None
    return [_new(r, data._ctx) for r in res]


_GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def RNN(data, parameters, state, state_cell=None, sequence_length=None, state_size=None,
        num_layers=None, bidirectional=False, mode=None, p=0.0, state_outputs=False,
        projection_size=None, lstm_state_clip_min=None, lstm_state_clip_max=None,
        lstm_state_clip_nan=False, use_sequence_length=False, out=None, name=None):
    """MXNet's fused recurrent operator: ``num_layers`` of RNN/LSTM/GRU over ``data`` (TNC)
    with every weight and bias in one flat ``parameters`` vector, in MXNet's order (all
    weights: per layer, per direction, ``i2h``, ``h2h`` (and ``h2r`` with a projection); then
    all biases: per layer, per direction, ``i2h``, ``h2h``). This is what MXNet's exported
    recurrent layers call (after ``_rnn_param_concat``).

    ``state`` (and for LSTM ``state_cell``) are ``(num_layers * directions, N, H)`` (``H`` is
    ``projection_size`` for an LSTM's ``state`` with a projection). With
    ``use_sequence_length``, ``sequence_length`` ``(N,)`` holds each sequence's length: outputs
    past it are 0 and the states are those at its last step; for the modes without a cell
    state the lengths may come fourth, as in MXNet's positional call. ``p`` is the dropout
    between layers in training mode. LSTM state clipping (``lstm_state_clip_*``) clips the cell
    state at each step as cuDNN does.

    Returns the output, or ``[output, h_n]`` (``[output, h_n, c_n]`` for LSTM) with
    ``state_outputs=True``.
    """
    if mode not in _GATES:
        raise MXNetError(f"RNN: mode must be one of {sorted(_GATES)}, got {mode!r}")
    if state_size is None or num_layers is None:
        raise MXNetError("RNN: state_size and num_layers are required")
    for arr, what in ((data, "data"), (parameters, "parameters"), (state, "state")):
        if not isinstance(arr, NDArray):
            raise TypeError(f"RNN: {what} must be an NDArray, got {type(arr).__name__}")
    if mode != "lstm" and state_cell is not None:
        if use_sequence_length and sequence_length is None:
            # MXNet passes the inputs in order: without a cell state the fourth input is
            # the sequence lengths (an imported graph's node binds it by position too)
            sequence_length, state_cell = state_cell, None
        else:
            raise MXNetError(f"RNN: mode {mode!r} has no cell state; state_cell must be left "
                             "out")
    if mode == "lstm" and state_cell is None:
        raise MXNetError("RNN: mode 'lstm' needs state_cell")
    if data.ndim != 3:
        raise MXNetError(f"RNN: data must be 3-D (TNC), got shape {data.shape}")
    g, h = _GATES[mode], int(state_size)
    layers = int(num_layers)
    if h < 1 or layers < 1:
        raise MXNetError(f"RNN: state_size and num_layers must be positive, got {state_size} "
                         f"and {num_layers}")
    proj = int(projection_size) if projection_size else None
    if proj is not None and (mode != "lstm" or not 0 < proj < h):
        raise MXNetError(f"RNN: projection_size={projection_size} needs mode 'lstm' and a "
                         f"value below state_size ({h})")
    dirs = 2 if bidirectional else 1
    want = (layers * dirs, data.shape[1], proj or h)
    if tuple(state.shape) != want:
        raise MXNetError(f"RNN: state must have shape {want} (layers * directions, batch, "
                         f"{'projection_size' if proj else 'state_size'}), got {state.shape}")
    if mode == "lstm" and tuple(state_cell.shape) != want[:2] + (h,):
        raise MXNetError(f"RNN: state_cell must have shape {want[:2] + (h,)}, got "
                         f"{state_cell.shape}")
    flat = parameters._t.reshape(-1)
    pos = 0

    def take(shape):
        nonlocal pos
        n = 1
        for d in shape:
            n *= d
        if pos + n > flat.numel():
            raise MXNetError(f"RNN: parameters has {flat.numel()} values, fewer than a "
                             f"{layers}-layer {mode} with state_size {h} and input size "
                             f"{data.shape[2]} needs")
        t = flat[pos:pos + n].reshape(shape)
        pos += n
        return _new(t, parameters._ctx)

    weights = {}
    width = data.shape[2]
    for layer in range(layers):
        for d in range(dirs):
            weights[layer, d] = [take((g * h, width)), take((g * h, proj or h))]
            if proj:
                weights[layer, d].append(take((proj, h)))
        width = (proj or h) * dirs
    for layer in range(layers):
        for d in range(dirs):
            w = weights[layer, d]
            weights[layer, d] = w[:2] + [take((g * h,)), take((g * h,))] + w[2:]
    if pos != flat.numel():
        raise MXNetError(f"RNN: parameters has {flat.numel()} values; a {layers}-layer "
                         f"{mode} with state_size {h} and input size {data.shape[2]} needs {pos}")
    states = [state] + ([state_cell] if mode == "lstm" else [])
    arrays = states + [a for key in sorted(weights) for a in weights[key]]
    if use_sequence_length:
        if sequence_length is None:
            raise MXNetError("RNN: use_sequence_length=True needs sequence_length")
        arrays.append(sequence_length)
    res = _gluon_rnn(data, *arrays, mode=mode, num_layers=layers,
                     bidirectional=bool(bidirectional), p=p, num_states=len(states),
                     state_clip_min=lstm_state_clip_min, state_clip_max=lstm_state_clip_max,
                     state_clip_nan=lstm_state_clip_nan,
                     use_sequence_length=use_sequence_length)
    res = res if state_outputs else res[0]
    if out is not None:
        if isinstance(res, list):
            for o, r in zip(out, res):
                o[:] = r
        else:
            out[:] = res
        return out
    return res


def _rnn_param_concat(*data, dim=0, num_args=None, name=None):
    """Join the recurrent layers' flattened parameters into ``RNN``'s one vector."""
    from .ndarray import concat
    return concat(*data, dim=dim)


def _guard_rnn():
    from .ops import _guard
    g = globals()
    for name in ("RNN", "_gluon_rnn"):
        g[name] = _guard(g[name])


_guard_rnn()
