"""Fused recurrent layers: RNN, LSTM and GRU (parameters named as in MXNet 1.x)."""
from __future__ import annotations

import re

from ... import ndarray as _nd
from ... import symbol as _sym
from ...base import MXNetError
from ...ndarray.ndarray import NDArray
from ..block import HybridBlock
from . import _op  # noqa: F401  (registers nd._gluon_rnn)

__all__ = ["RNN", "LSTM", "GRU"]


class _RNNLayer(HybridBlock):
    def __init__(self, hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                 i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                 h2h_bias_initializer, mode, projection_size, h2r_weight_initializer,
                 lstm_state_clip_min, lstm_state_clip_max, lstm_state_clip_nan, dtype,
                 use_sequence_length=False, **kwargs):
        super().__init__(**kwargs)
        if layout not in ("TNC", "NTC"):
            raise AssertionError(f"Invalid layout {layout}; must be one of ['TNC' or 'NTC']")
        self._lstm_state_clip_min = lstm_state_clip_min
        self._lstm_state_clip_max = lstm_state_clip_max
        self._lstm_state_clip_nan = lstm_state_clip_nan
        self._hidden_size = hidden_size
        self._projection_size = projection_size if projection_size else None
        self._num_layers = num_layers
        self._mode = mode
        self._layout = layout
        self._dropout = dropout
        self._dir = 2 if bidirectional else 1
        self._input_size = input_size
        self._dtype = dtype
        self._use_sequence_length = use_sequence_length
        self._i2h_weight_initializer = i2h_weight_initializer
        self._h2h_weight_initializer = h2h_weight_initializer
        self._i2h_bias_initializer = i2h_bias_initializer
        self._h2h_bias_initializer = h2h_bias_initializer
        self.skip_states = None
        self._gates = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}[mode]
        ng, ni, nh = self._gates, input_size, hidden_size
        npj = self._projection_size
        for i in range(num_layers):
            for j in ["l", "r"][:self._dir]:
                self._register_param(f"{j}{i}_i2h_weight", (ng * nh, ni),
                                     i2h_weight_initializer, dtype)
                self._register_param(f"{j}{i}_h2h_weight", (ng * nh, npj or nh),
                                     h2h_weight_initializer, dtype)
                self._register_param(f"{j}{i}_i2h_bias", (ng * nh,), i2h_bias_initializer,
                                     dtype)
                self._register_param(f"{j}{i}_h2h_bias", (ng * nh,), h2h_bias_initializer,
                                     dtype)
                if npj:
                    self._register_param(f"{j}{i}_h2r_weight", (npj, nh),
                                         h2r_weight_initializer, dtype)
            ni = (npj or nh) * self._dir

    def _register_param(self, name, shape, init, dtype):
        p = self.params.get(name, shape=shape, init=init, allow_deferred_init=True,
                            dtype=dtype)
        setattr(self, name, p)
        return p

    def __repr__(self):
        s = f"{type(self).__name__}({{mapping}}, {self._layout}"
        if self._num_layers != 1:
            s += f", num_layers={self._num_layers}"
        if self._dropout != 0:
            s += f", dropout={self._dropout}"
        if self._dir == 2:
            s += ", bidirectional"
        s += ")"
        shape = self.l0_i2h_weight.shape
        return s.format(mapping=f"{shape[1] if shape[1] else None} -> {shape[0] // self._gates}")

    def _collect_params_with_prefix(self, prefix=""):
        if prefix:
            prefix += "."
        pattern = re.compile(r"(l|r)(\d)_(i2h|h2h|h2r)_(weight|bias)\Z")
        bidirectional = any(pattern.match(k).group(1) == "r" for k in self._reg_params)

        def convert(m):
            d, l, g, t = (m.group(i) for i in range(1, 5))
            if bidirectional:
                return f"_unfused.{l}.{d}_cell.{g}_{t}"
            return f"_unfused.{l}.{g}_{t}"
        ret = {prefix + convert(pattern.match(k)): v for k, v in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def state_info(self, batch_size=0):
        raise NotImplementedError

    def _unfuse(self):
        """The same network as a stack of recurrent cells that share this layer's Parameters
        (a :class:`HybridSequentialRNNCell`, with a :class:`BidirectionalCell` per layer when
        bidirectional and a :class:`DropoutCell` between layers when ``dropout > 0``)."""
        from . import rnn_cell
        if self._projection_size:
            raise AssertionError("_unfuse does not support projection layer yet!")
        if self._lstm_state_clip_min or self._lstm_state_clip_max:
            raise AssertionError("_unfuse does not support state clipping yet!")
        nh = self._hidden_size
        make = {"rnn_relu": lambda **kw: rnn_cell.RNNCell(nh, activation="relu", **kw),
                "rnn_tanh": lambda **kw: rnn_cell.RNNCell(nh, activation="tanh", **kw),
                "lstm": lambda **kw: rnn_cell.LSTMCell(nh, **kw),
                "gru": lambda **kw: rnn_cell.GRUCell(nh, **kw)}[self._mode]
        stack = rnn_cell.HybridSequentialRNNCell(prefix=self.prefix, params=self.params)
        with stack.name_scope():
            ni = self._input_size
            for i in range(self._num_layers):
                kw = {"input_size": ni,
                      "i2h_weight_initializer": self._i2h_weight_initializer,
                      "h2h_weight_initializer": self._h2h_weight_initializer,
                      "i2h_bias_initializer": self._i2h_bias_initializer,
                      "h2h_bias_initializer": self._h2h_bias_initializer}
                if self._dir == 2:
                    stack.add(rnn_cell.BidirectionalCell(make(prefix=f"l{i}_", **kw),
                                                         make(prefix=f"r{i}_", **kw)))
                else:
                    stack.add(make(prefix=f"l{i}_", **kw))
                if self._dropout > 0 and i != self._num_layers - 1:
                    stack.add(rnn_cell.DropoutCell(self._dropout))
                ni = nh * self._dir
        return stack

    def cast(self, dtype):
        super().cast(dtype)
        self._dtype = dtype

    def begin_state(self, batch_size=0, func=_nd.zeros, **kwargs):
        """Initial states: zeros of shape ``(num_layers * directions, batch_size, size)``."""
        states = []
        for info in self.state_info(batch_size):
            info = dict(info)
            info.pop("__layout__", None)
            info.update(kwargs)
            states.append(func(**info))
        return states

    def __call__(self, inputs, states=None, sequence_length=None, **kwargs):
        from .rnn_cell import _F_of, _TENSORS
        self.skip_states = states is None
        if states is None:
            # made with the inputs' F, so that a hybridize capture or a symbol includes them
            F = _F_of(inputs)
            if isinstance(inputs, NDArray):
                batch_size = inputs.shape[self._layout.find("N")]
                states = self.begin_state(batch_size, func=F.zeros, ctx=inputs.context,
                                          dtype=inputs.dtype)
            else:
                states = self.begin_state(0, func=F.zeros)
        if isinstance(states, _TENSORS):
            states = [states]
        if self._use_sequence_length:
            if sequence_length is None:
                raise MXNetError(f"{self.name}: the layer was made with use_sequence_length="
                                 "True; call it as layer(inputs, states, sequence_length)")
            return super().__call__(inputs, states, sequence_length, **kwargs)
        return super().__call__(inputs, states, **kwargs)

    def infer_shape(self, inputs, *args):
        ni = inputs.shape[2]
        for j in ["l", "r"][:self._dir]:
            p = getattr(self, f"{j}0_i2h_weight")
            p.shape = (p.shape[0], ni)

    def hybrid_forward(self, F, inputs, states, sequence_length=None, **kwargs):
        if isinstance(inputs, NDArray):
            batch_size = inputs.shape[self._layout.find("N")]
            infos = self.state_info(batch_size)
            if len(states) != len(infos):
                raise MXNetError(f"{self.name}: expected {len(infos)} begin state(s), got "
                                 f"{len(states)}")
            w = kwargs.get("l0_i2h_weight")
            if w is not None and inputs.ndim == 3 and inputs.shape[2] != w.shape[1]:
                # (torch's oneDNN LSTM kernel does not check it and reads past the input)
                raise MXNetError(f"{self.name}: input has {inputs.shape[2]} features, the "
                                 f"layer expects {w.shape[1]} (input shape {inputs.shape}, "
                                 f"layout {self._layout})")
            for state, info in zip(states, infos):
                if state.shape != info["shape"]:
                    raise ValueError(f"Invalid recurrent state shape. Expecting "
                                     f"{info['shape']}, got {state.shape}.")
        if self._layout == "NTC":
            inputs = F.swapaxes(inputs, 0, 1)
        if F is _sym:
            return self._symbolic_kernel(F, inputs, states, sequence_length, kwargs)
        names = ["i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias"]
        if self._projection_size:
            names.append("h2r_weight")
        weights = [kwargs[f"{d}{l}_{g}"] for l in range(self._num_layers)
                   for d in ["l", "r"][:self._dir] for g in names]
        extra = {}
        lo, hi = self._lstm_state_clip_min, self._lstm_state_clip_max
        if lo is not None or hi is not None:
            extra = dict(state_clip_min=None if lo is None else float(lo),
                         state_clip_max=None if hi is None else float(hi),
                         state_clip_nan=bool(self._lstm_state_clip_nan))
        if self._use_sequence_length:
            weights.append(sequence_length)
            extra["use_sequence_length"] = True
        res = F._gluon_rnn(inputs, *states, *weights, mode=self._mode,
                           num_layers=self._num_layers, bidirectional=self._dir == 2,
                           p=self._dropout, num_states=len(states), **extra)
        outputs, new_states = res[0], list(res[1:])
        if self._layout == "NTC":
            outputs = F.swapaxes(outputs, 0, 1)
        return outputs if self.skip_states else (outputs, new_states)


    def _symbolic_kernel(self, F, inputs, states, sequence_length, kwargs):
        # MXNet's graph: every parameter flattened into one vector (_rnn_param_concat, MXNet's
        # order) and the fused RNN operator, so exported files load in MXNet as well
        gs = ["i2h", "h2h", "h2r"] if self._projection_size else ["i2h", "h2h"]
        flat = [kwargs[f"{d}{l}_{g}_{t}"].reshape(-1) for t in ["weight", "bias"]
                for l in range(self._num_layers) for d in ["l", "r"][:self._dir]
                for g in gs if g != "h2r" or t != "bias"]
        params = F._rnn_param_concat(*flat, dim=0)
        args = list(states) + ([sequence_length] if self._use_sequence_length else [])
        extra = {}
        if self._projection_size:
            extra["projection_size"] = self._projection_size
        if self._lstm_state_clip_min is not None or self._lstm_state_clip_max is not None:
            extra.update(lstm_state_clip_min=self._lstm_state_clip_min,
                         lstm_state_clip_max=self._lstm_state_clip_max,
                         lstm_state_clip_nan=bool(self._lstm_state_clip_nan))
        res = F.RNN(inputs, params, *args, use_sequence_length=self._use_sequence_length,
                    state_size=self._hidden_size, num_layers=self._num_layers,
                    bidirectional=self._dir == 2, p=self._dropout, state_outputs=True,
                    mode=self._mode, **extra)
        n = 2 if self._mode == "lstm" else 1
        outputs, new_states = res[0], [res[i] for i in range(1, 1 + n)]
        if self._layout == "NTC":
            outputs = F.swapaxes(outputs, 0, 1)
        return outputs if self.skip_states else (outputs, new_states)


class RNN(_RNNLayer):
    """Multi-layer Elman RNN with tanh or ReLU: ``h_t = act(W_ih x_t + b_ih + W_hh h_{t-1} +
    b_hh)``.

    Parameters
    ----------
    hidden_size : int
    num_layers : int, default 1
    activation : {'relu', 'tanh'}, default 'relu'
    layout : {'TNC', 'NTC'}, default 'TNC'
    dropout : float, default 0
        Dropout between layers (training mode only).
    bidirectional : bool, default False
    input_size : int, default 0
        0 infers it on the first forward.
    use_sequence_length : bool, default False
        Call the layer as ``layer(inputs, states, sequence_length)`` with ``(N,)`` lengths:
        each sequence runs up to its length (the backward direction starts at its last valid
        step), outputs past it are 0 and the returned states are those of its last valid
        step. (MXNet 1.9.1 honours this only with cuDNN; its CPU operator ignores the lengths.)

    Calling it as ``layer(inputs)`` returns the output; ``layer(inputs, states)`` returns
    ``(output, new_states)``. (Also for :class:`LSTM` and :class:`GRU`.)
    """

    def __init__(self, hidden_size, num_layers=1, activation="relu", layout="TNC", dropout=0,
                 bidirectional=False, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "rnn_" + activation, None, None, None, None,
                         False, dtype, **kwargs)

    def state_info(self, batch_size=0):
        return [{"shape": (self._num_layers * self._dir, batch_size, self._hidden_size),
                 "__layout__": "LNC", "dtype": self._dtype}]


class LSTM(_RNNLayer):
    """Multi-layer long short-term memory layer (gates i, f, g, o), optionally projected.

    Parameters as :class:`RNN`, plus ``projection_size``, ``h2r_weight_initializer`` and:

    state_clip_min, state_clip_max : float, optional
        Clip the cell state ``c`` to this range at every step, before ``h`` is computed
        (cuDNN's LSTM clipping; one bound alone clips on that side). MXNet 1.9.1's CPU
        operator ignores them; neogluon clips on every device.
    state_clip_nan : bool, default False
        With clipping, a NaN cell state becomes ``state_clip_min`` (or ``state_clip_max``
        when only that is given) instead of spreading.

    The states are ``[h, c]``.
    """

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0,
                 bidirectional=False, input_size=0, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", projection_size=None,
                 h2r_weight_initializer=None, state_clip_min=None, state_clip_max=None,
                 state_clip_nan=False, dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "lstm", projection_size, h2r_weight_initializer,
                         state_clip_min, state_clip_max, state_clip_nan, dtype, **kwargs)

    def state_info(self, batch_size=0):
        h = self._projection_size or self._hidden_size
        return [{"shape": (self._num_layers * self._dir, batch_size, h), "__layout__": "LNC",
                 "dtype": self._dtype},
                {"shape": (self._num_layers * self._dir, batch_size, self._hidden_size),
                 "__layout__": "LNC", "dtype": self._dtype}]


class GRU(_RNNLayer):
    """Multi-layer gated recurrent unit layer (gates r, z, n as cuDNN/MXNet compute them).

    Parameters as :class:`RNN` (without ``activation``).
    """

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0,
                 bidirectional=False, input_size=0, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "gru", None, None, None, None, False, dtype,
                         **kwargs)

    def state_info(self, batch_size=0):
        return [{"shape": (self._num_layers * self._dir, batch_size, self._hidden_size),
                 "__layout__": "LNC", "dtype": self._dtype}]
