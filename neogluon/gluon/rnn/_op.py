"""The fused recurrent operator the RNN layers call through ``F``.

MXNet's layers call ``F.RNN`` on one flat parameter vector; neogluon passes the per-layer
weights as separate arrays to ``nd._gluon_rnn`` (registered here) and runs torch's fused
kernels, whose gate orders (LSTM: i, f, g, o; GRU: r, z, n) are MXNet's.
"""
from __future__ import annotations

import torch

from ... import ndarray as _nd
from ...autograd import _state
from ...base import MXNetError
from ...ndarray.ndarray import _new, _run

_FNS = {"lstm": torch._VF.lstm, "gru": torch._VF.gru, "rnn_tanh": torch._VF.rnn_tanh,
        "rnn_relu": torch._VF.rnn_relu}


def _gluon_rnn(data, *arrays, mode, num_layers, bidirectional, p=0.0, num_states=1):
    """Run a multi-layer (bi)directional RNN on ``data`` of layout TNC.

    ``arrays`` holds the ``num_states`` initial states (``(layers * dirs, N, H)``), then per
    layer and direction ``i2h_weight, h2h_weight, i2h_bias, h2h_bias`` (and ``h2r_weight`` with
    a projection). Returns ``[output, state...]``.
    """
    if mode not in _FNS:
        raise MXNetError(f"RNN: unknown mode {mode!r}; expected one of {sorted(_FNS)}")
    ts = [a._t for a in arrays]
    states, weights = ts[:num_states], ts[num_states:]
    x = data._t
    if x.dim() != 3:
        raise MXNetError(f"RNN: data must be 3-D (TNC), got shape {data.shape}")
    train = bool(_state.training)
    fn = _FNS[mode]
    try:
        if mode == "lstm":
            out, h, c = _run(fn, x, (states[0], states[1]), weights, True, num_layers,
                             float(p), train, bidirectional, False)
            res = [out, h, c]
        else:
            out, h = _run(fn, x, states[0], weights, True, num_layers, float(p), train,
                          bidirectional, False)
            res = [out, h]
    except RuntimeError as err:
        raise MXNetError(f"RNN ({mode}): data shape {data.shape}, state shapes "
                         f"{[tuple(s.shape) for s in states]}: {err}") from None
    return [_new(r, data._ctx) for r in res]


if not hasattr(_nd, "_gluon_rnn"):
    _nd._gluon_rnn = _gluon_rnn
