"""``mx.rnn.rnn_cell``: MXNet 1.x's legacy symbolic RNN cells.

A cell builds ``mx.sym`` graphs one time step at a time (``cell(inputs, states)``) or for a
whole sequence (``cell.unroll(length, inputs)``). Node and parameter names are MXNet 1.9.1's
(``lstm_i2h_weight``, ``lstm_t0_out``, ``lstm_begin_state_0``...), so graphs, checkpoints and
``Module`` code written for MXNet's ``mx.rnn`` keep working. Weights live in an
:class:`RNNParams` container that cells can share.

Gated cells hold all gates in one matrix (``i2h_weight`` has ``num_gates * num_hidden``
rows); :meth:`BaseRNNCell.unpack_weights` splits such matrices into per-gate arrays
(``i2h_i_weight``, ``i2h_f_weight``...) and :meth:`BaseRNNCell.pack_weights` joins them again.
:class:`FusedRNNCell` runs the whole stack in one ``sym.RNN`` node over a flat parameter
vector, which it unpacks into the same per-gate names that its :meth:`FusedRNNCell.unfuse`
stack of cells uses.
"""
from __future__ import annotations

import functools
import math
import warnings

from .. import initializer as init
from .. import ndarray
from .. import symbol
from ..base import MXNetError, numeric_types, string_types

__all__ = ["RNNParams", "BaseRNNCell", "RNNCell", "LSTMCell", "GRUCell", "FusedRNNCell",
           "SequentialRNNCell", "DropoutCell", "ModifierCell", "ZoneoutCell", "ResidualCell",
           "BidirectionalCell", "BaseConvRNNCell", "ConvRNNCell", "ConvLSTMCell", "ConvGRUCell"]


class _CellUsageError(MXNetError, AssertionError):
    """A cell used in a way it does not support. MXNet 1.9.1 raised a bare AssertionError
    for these, so ``except AssertionError`` code keeps catching them."""


class _MissingWeightError(MXNetError, KeyError):
    """``pack_weights``/``unpack_weights`` did not find a weight it needs (MXNet 1.9.1 raised
    a KeyError from ``dict.pop``)."""

    def __str__(self):
        # KeyError's own __str__ would show the message quoted like a key
        return str(self.args[0]) if self.args else ""


def _check(condition, message):
    if not condition:
        raise _CellUsageError(message)


def _cells_state_shape(cells):
    return [shape for cell in cells for shape in cell.state_shape]


def _cells_state_info(cells):
    return [info for cell in cells for info in cell.state_info]


def _cells_begin_state(cells, **kwargs):
    return [state for cell in cells for state in cell.begin_state(**kwargs)]


def _cells_unpack_weights(cells, args):
    for cell in cells:
        args = cell.unpack_weights(args)
    return args


def _cells_pack_weights(cells, args):
    for cell in cells:
        args = cell.pack_weights(args)
    return args


def _pop_weight(args, name, who):
    try:
        return args.pop(name)
    except KeyError:
        names = sorted(args)
        shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
        raise _MissingWeightError(f"{who}: no array named {name!r} among the {len(names)} "
                                  f"given ({shown})") from None


def _time_axis(layout, who="unroll"):
    if not isinstance(layout, str) or "T" not in layout:
        raise MXNetError(f"{who}: layout {layout!r} has no time axis 'T' (use e.g. 'NTC' "
                         "or 'TNC')")
    return layout.find("T")


def _normalize_sequence(length, inputs, layout, merge, in_layout=None):
    """Bring a sequence to the form a cell wants: a list of per-step symbols
    (``merge=False``), one symbol with the steps along ``layout``'s ``T`` axis
    (``merge=True``), or whichever it already is (``merge=None``).

    Returns ``(inputs, time_axis)``.
    """
    _check(inputs is not None, "unroll(inputs=None) is no longer supported (MXNet deprecated "
                               "it): create the input variables and pass them to unroll")
    axis = _time_axis(layout)
    in_axis = _time_axis(in_layout) if in_layout is not None else axis
    if isinstance(inputs, symbol.Symbol):
        if merge is False:
            _check(len(inputs.list_outputs()) == 1,
                   "unroll takes a single-output symbol as the sequence; a grouped symbol "
                   f"({len(inputs.list_outputs())} outputs) must be passed as a list "
                   "(list(inputs)) instead")
            if length is None:
                raise MXNetError("unroll: length is needed to split a sequence symbol into "
                                 "time steps")
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length,
                                       squeeze_axis=1))
    else:
        inputs = list(inputs)
        _check(length is None or len(inputs) == length,
               f"unroll: length={length} but {len(inputs)} input steps were given")
        if merge is True:
            steps = [symbol.expand_dims(step, axis=axis) for step in inputs]
            inputs = symbol.Concat(*steps, dim=axis)
            in_axis = axis
    if isinstance(inputs, symbol.Symbol) and axis != in_axis:
        inputs = symbol.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis


class RNNParams:
    """The weight variables of one or more cells, by name; cells given the same container
    share its variables.

    Parameters
    ----------
    prefix : str, default ''
        Put in front of every name asked for.
    """

    def __init__(self, prefix=""):
        self._prefix = prefix
        self._params = {}

    def get(self, name, **kwargs):
        """The variable ``prefix + name``, made on first request.

        Parameters
        ----------
        name : str
            Name without the container's prefix.
        **kwargs
            Passed to ``mx.sym.Variable`` when the variable is made (``init=``, ``shape=``...);
            ignored when it already exists.

        Returns
        -------
        Symbol
        """
        full_name = self._prefix + name
        if full_name not in self._params:
            self._params[full_name] = symbol.Variable(full_name, **kwargs)
        return self._params[full_name]


class BaseRNNCell:
    """Base class of the symbolic RNN cells.

    A subclass defines ``state_info`` and ``__call__`` (one time step); ``unroll`` repeats
    the step over a sequence.

    Parameters
    ----------
    prefix : str, default ''
        Start of the names of the cell's nodes, and of its weights when it makes its own
        :class:`RNNParams`.
    params : RNNParams or None
        Container to take the weights from (to share them with other cells); a new one
        with ``prefix`` when None.
    """

    def __init__(self, prefix="", params=None):
        if params is None:
            params = RNNParams(prefix)
            self._own_params = True
        else:
            self._own_params = False
        self._prefix = prefix
        self._params = params
        self._modified = False
        self.reset()

    def reset(self):
        """Restart the step and begin-state counters (node names start again at ``t0``),
        here and in the cells this one holds. ``unroll`` calls it first."""
        self._init_counter = -1
        self._counter = -1
        for cell in getattr(self, "_cells", ()):
            cell.reset()

    def __call__(self, inputs, states):
        """One time step.

        Parameters
        ----------
        inputs : Symbol
            This step's input, ``(batch, features)``.
        states : list of Symbol
            The states from the previous step (or :meth:`begin_state`).

        Returns
        -------
        output : Symbol
        states : list of Symbol
            The states for the next step, in the form :meth:`begin_state` gives.
        """
        raise NotImplementedError(f"{type(self).__name__} does not define a time step")

    @property
    def params(self):
        """The cell's :class:`RNNParams`. Asking for it marks the container as shared, so a
        ``SequentialRNNCell`` or ``BidirectionalCell`` given its own container refuses this
        cell afterwards."""
        self._own_params = False
        return self._params

    @property
    def state_info(self):
        """One dict per state: ``shape`` (0 for the batch size) and ``__layout__``."""
        raise NotImplementedError(f"{type(self).__name__} does not define state_info")

    @property
    def state_shape(self):
        """The shape of each state (``state_info``'s shapes)."""
        return [info["shape"] for info in self.state_info]

    @property
    def _gate_names(self):
        """Suffixes of the gates packed in the cell's matrices ('' for one gate); empty for
        cells without weights of their own."""
        return ()

    def begin_state(self, func=symbol.zeros, **kwargs):
        """Symbols for the states before the first step.

        Parameters
        ----------
        func : callable, default mx.sym.zeros
            Called as ``func(name=..., shape=..., __layout__=..., **kwargs)`` per state;
            ``mx.sym.Variable`` makes the states inputs to feed, ``mx.sym.uniform``...
            random ones. Names are ``<prefix>begin_state_<n>``.
        **kwargs
            More arguments for ``func`` (``dtype``...).

        Returns
        -------
        list of Symbol
        """
        _check(not self._modified,
               f"{type(self).__name__} {self._prefix!r} is wrapped by a modifier cell "
               "(DropoutCell, ZoneoutCell, ResidualCell...): use the modifier cell")
        states = []
        for info in self.state_info:
            self._init_counter += 1
            if info is not None:
                kwargs.update(info)
            states.append(func(name=f"{self._prefix}begin_state_{self._init_counter}",
                               **kwargs))
        return states

    def unpack_weights(self, args):
        """Split the cell's gate-packed weights into one array per gate.

        ``<prefix>i2h_weight`` of an LSTM cell becomes ``<prefix>i2h_i_weight``,
        ``<prefix>i2h_f_weight``, ``<prefix>i2h_c_weight`` and ``<prefix>i2h_o_weight``
        (likewise ``h2h`` and the biases), for example to read
        ``Module.get_params()[0]``.

        Parameters
        ----------
        args : dict of str to NDArray
            Holds the packed weights.

        Returns
        -------
        dict of str to NDArray
            A new dict: ``args`` with the packed weights replaced by copies of their slices.
        """
        args = dict(args)
        gates = self._gate_names
        if not gates:
            return args
        h = self._num_hidden
        who = f"{type(self).__name__}.unpack_weights"
        for group in ("i2h", "h2h"):
            weight = _pop_weight(args, f"{self._prefix}{group}_weight", who)
            bias = _pop_weight(args, f"{self._prefix}{group}_bias", who)
            if weight.shape[0] != h * len(gates) or bias.shape[0] != h * len(gates):
                raise MXNetError(
                    f"{who}: {self._prefix}{group}_weight/_bias have {weight.shape[0]} and "
                    f"{bias.shape[0]} rows; {len(gates)} gates of num_hidden={h} need "
                    f"{h * len(gates)}")
            for j, gate in enumerate(gates):
                rows = slice(j * h, (j + 1) * h)
                args[f"{self._prefix}{group}{gate}_weight"] = weight[rows].copy()
                args[f"{self._prefix}{group}{gate}_bias"] = bias[rows].copy()
        return args

    def pack_weights(self, args):
        """Join per-gate weights into the cell's packed matrices (the reverse of
        :meth:`unpack_weights`).

        Parameters
        ----------
        args : dict of str to NDArray
            Holds the per-gate weights.

        Returns
        -------
        dict of str to NDArray
            A new dict with the per-gate arrays replaced by the packed ones.
        """
        args = dict(args)
        gates = self._gate_names
        if not gates:
            return args
        who = f"{type(self).__name__}.pack_weights"
        for group in ("i2h", "h2h"):
            weights = [_pop_weight(args, f"{self._prefix}{group}{gate}_weight", who)
                       for gate in gates]
            biases = [_pop_weight(args, f"{self._prefix}{group}{gate}_bias", who)
                      for gate in gates]
            args[f"{self._prefix}{group}_weight"] = ndarray.concatenate(weights)
            args[f"{self._prefix}{group}_bias"] = ndarray.concatenate(biases)
        return args

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        """Repeat the cell over ``length`` time steps.

        Parameters
        ----------
        length : int
            Number of steps.
        inputs : Symbol or list of Symbol
            One symbol with the steps along ``layout``'s ``T`` axis (split here), or one
            ``(batch, ...)`` symbol per step.
        begin_state : list of Symbol, optional
            The first step's states; :meth:`begin_state` when None.
        layout : str, default 'NTC'
            Where the time axis is, for a single input symbol and a merged output.
        merge_outputs : bool or None
            True: one output symbol with the steps along ``T``; False: one symbol per
            step; None: whichever the cell makes (a list for step-by-step cells).

        Returns
        -------
        outputs : Symbol or list of Symbol
        states : list of Symbol
            The states after the last step.
        """
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, False)
        if begin_state is None:
            begin_state = self.begin_state()
        states = begin_state
        outputs = []
        for step in range(length):
            output, states = self(inputs[step], states)
            outputs.append(output)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, inputs, activation, **kwargs):
        """``activation`` applied to ``inputs``: an ``Activation`` node for a name
        ('tanh', 'relu'...), else ``activation(inputs, **kwargs)``."""
        if isinstance(activation, string_types):
            return symbol.Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)


class RNNCell(BaseRNNCell):
    """Elman RNN cell: ``out = act(W_i x + b_i + W_h h + b_h)``.

    Parameters
    ----------
    num_hidden : int
        Size of the output and state.
    activation : str or callable, default 'tanh'
        An ``Activation`` act_type, or a function of ``(symbol, name=...)``.
    prefix : str, default 'rnn_'
    params : RNNParams or None
    """

    def __init__(self, num_hidden, activation="tanh", prefix="rnn_", params=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._activation = activation
        self._iW = self.params.get("i2h_weight")
        self._iB = self.params.get("i2h_bias")
        self._hW = self.params.get("h2h_weight")
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self):
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"}]

    @property
    def _gate_names(self):
        return ("",)

    def __call__(self, inputs, states):
        self._counter += 1
        step = f"{self._prefix}t{self._counter}_"
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=self._num_hidden, name=f"{step}i2h")
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB,
                                    num_hidden=self._num_hidden, name=f"{step}h2h")
        output = self._get_activation(i2h + h2h, self._activation, name=f"{step}out")
        return output, [output]


class LSTMCell(BaseRNNCell):
    """LSTM cell; gates in the order input, forget, cell, output.

    Parameters
    ----------
    num_hidden : int
    prefix : str, default 'lstm_'
    params : RNNParams or None
    forget_bias : float, default 1.0
        Initial value of the forget gate's part of ``i2h_bias``, given as the variable's
        initializer (``mx.init.LSTMBias``), so it applies wherever the graph's parameters are
        initialised (``Module.init_params``...).
    """

    def __init__(self, num_hidden, prefix="lstm_", params=None, forget_bias=1.0):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get("i2h_weight")
        self._hW = self.params.get("h2h_weight")
        self._iB = self.params.get("i2h_bias", init=init.LSTMBias(forget_bias=forget_bias))
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self):
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"},
                {"shape": (0, self._num_hidden), "__layout__": "NC"}]

    @property
    def _gate_names(self):
        return ["_i", "_f", "_c", "_o"]

    def __call__(self, inputs, states):
        self._counter += 1
        step = f"{self._prefix}t{self._counter}_"
        n = self._num_hidden * 4
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=n, name=f"{step}i2h")
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB,
                                    num_hidden=n, name=f"{step}h2h")
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4, name=f"{step}slice")
        in_gate = symbol.Activation(gates[0], act_type="sigmoid", name=f"{step}i")
        forget_gate = symbol.Activation(gates[1], act_type="sigmoid", name=f"{step}f")
        candidate = symbol.Activation(gates[2], act_type="tanh", name=f"{step}c")
        out_gate = symbol.Activation(gates[3], act_type="sigmoid", name=f"{step}o")
        next_c = symbol.elemwise_add(forget_gate * states[1], in_gate * candidate,
                                     name=f"{step}state")
        next_h = symbol.elemwise_mul(out_gate, symbol.Activation(next_c, act_type="tanh"),
                                     name=f"{step}out")
        return next_h, [next_h, next_c]


class GRUCell(BaseRNNCell):
    """GRU cell in cuDNN's form (the reset gate scales ``W_h h + b_h``); gates in the order
    reset, update, new.

    Parameters
    ----------
    num_hidden : int
    prefix : str, default 'gru_'
    params : RNNParams or None
    """

    def __init__(self, num_hidden, prefix="gru_", params=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get("i2h_weight")
        self._iB = self.params.get("i2h_bias")
        self._hW = self.params.get("h2h_weight")
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self):
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"}]

    @property
    def _gate_names(self):
        return ["_r", "_z", "_o"]

    def __call__(self, inputs, states):
        self._counter += 1
        # MXNet names this cell's nodes with an extra underscore (rnn_t0__i2h); kept so
        # that graphs and node lookups match
        step = f"{self._prefix}t{self._counter}_"
        prev_h = states[0]
        n = self._num_hidden * 3
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=n, name=f"{step}_i2h")
        h2h = symbol.FullyConnected(data=prev_h, weight=self._hW, bias=self._hB,
                                    num_hidden=n, name=f"{step}_h2h")
        i2h_r, i2h_z, i2h_n = symbol.SliceChannel(i2h, num_outputs=3, name=f"{step}_i2h_slice")
        h2h_r, h2h_z, h2h_n = symbol.SliceChannel(h2h, num_outputs=3, name=f"{step}_h2h_slice")
        reset_gate = symbol.Activation(i2h_r + h2h_r, act_type="sigmoid", name=f"{step}_r_act")
        update_gate = symbol.Activation(i2h_z + h2h_z, act_type="sigmoid",
                                        name=f"{step}_z_act")
        candidate = symbol.Activation(i2h_n + reset_gate * h2h_n, act_type="tanh",
                                      name=f"{step}_h_act")
        next_h = symbol.elemwise_add((1. - update_gate) * candidate, update_gate * prev_h,
                                     name=f"{step}out")
        return next_h, [next_h]


_FUSED_GATES = {"rnn_relu": [""], "rnn_tanh": [""], "lstm": ["_i", "_f", "_c", "_o"],
                "gru": ["_r", "_z", "_o"]}


class FusedRNNCell(BaseRNNCell):
    """A whole (multi-layer, optionally bidirectional) RNN as one ``sym.RNN`` node over a
    flat parameter vector ``<prefix>parameters``.

    It cannot be stepped, only unrolled; :meth:`unfuse` gives the equivalent stack of
    step-by-step cells, and :meth:`unpack_weights` splits the vector into the per-gate
    weights of that stack.

    Parameters
    ----------
    num_hidden : int
    num_layers : int, default 1
    mode : {'lstm', 'gru', 'rnn_tanh', 'rnn_relu'}, default 'lstm'
    bidirectional : bool, default False
        Doubles the output's feature size.
    dropout : float, default 0
        Dropout between layers, in training.
    get_next_state : bool, default False
        Return the final states from ``unroll`` (else an empty list).
    forget_bias : float, default 1.0
        LSTM forget-gate bias set by the vector's initializer (``mx.init.FusedRNN``).
    prefix : str, optional
        ``'<mode>_'`` when None.
    params : RNNParams or None
    """

    def __init__(self, num_hidden, num_layers=1, mode="lstm", bidirectional=False,
                 dropout=0., get_next_state=False, forget_bias=1.0, prefix=None, params=None):
        if mode not in _FUSED_GATES:
            raise MXNetError(f"FusedRNNCell: mode must be one of {sorted(_FUSED_GATES)}, got "
                             f"{mode!r}")
        if prefix is None:
            prefix = f"{mode}_"
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._dropout = dropout
        self._get_next_state = get_next_state
        self._directions = ["l", "r"] if bidirectional else ["l"]
        initializer = init.FusedRNN(None, num_hidden, num_layers, mode, bidirectional,
                                    forget_bias)
        self._parameter = self.params.get("parameters", init=initializer)

    @property
    def state_info(self):
        layers = len(self._directions) * self._num_layers
        info = {"shape": (layers, 0, self._num_hidden), "__layout__": "LNC"}
        return [dict(info) for _ in range(2 if self._mode == "lstm" else 1)]

    @property
    def _gate_names(self):
        return _FUSED_GATES[self._mode]

    @property
    def _num_gates(self):
        return len(self._gate_names)

    def _layout(self, num_input):
        """``(name, shape)`` of each piece of the parameter vector in storage order: every
        layer's and direction's weights (i2h gates, then h2h gates), then all biases in the
        same order (cuDNN's layout)."""
        h, b = self._num_hidden, len(self._directions)
        weights, biases = [], []
        for layer in range(self._num_layers):
            width = num_input if layer == 0 else b * h
            for direction in self._directions:
                for group, cols in (("i2h", width), ("h2h", h)):
                    for gate in self._gate_names:
                        stem = f"{self._prefix}{direction}{layer}_{group}{gate}"
                        weights.append((f"{stem}_weight", (h, cols)))
                        biases.append((f"{stem}_bias", (h,)))
        return weights + biases

    def _num_input(self, size):
        """The first layer's input size that a vector of ``size`` values implies."""
        b, m, h = len(self._directions), self._num_gates, self._num_hidden
        upper = (self._num_layers - 1) * b * m * h * (h + b * h + 2)
        first, rest = divmod(size - upper, b * m * h)
        num_input = first - h - 2
        if rest or num_input <= 0:
            raise MXNetError(
                f"FusedRNNCell {self._prefix!r}: a parameter vector of {size} values does not "
                f"fit {self._num_layers} {'bidirectional ' if b == 2 else ''}{self._mode} "
                f"layer(s) of num_hidden={h}")
        return num_input

    def unpack_weights(self, args):
        """Split ``<prefix>parameters`` into ``<prefix><l|r><layer>_<i2h|h2h><gate>_weight``
        and ``..._bias`` arrays (copies), the names :meth:`unfuse`'s cells unpack to."""
        args = dict(args)
        flat = _pop_weight(args, self._parameter.name, "FusedRNNCell.unpack_weights")
        flat = flat.reshape((-1,))
        offset = 0
        for name, shape in self._layout(self._num_input(flat.size)):
            size = math.prod(shape)
            args[name] = flat[offset:offset + size].reshape(shape).copy()
            offset += size
        return args

    def pack_weights(self, args):
        """Join the per-gate arrays of :meth:`unpack_weights` into ``<prefix>parameters``
        (in the dtype and context of the first layer's first i2h weight)."""
        args = dict(args)
        who = "FusedRNNCell.pack_weights"
        first = f"{self._prefix}l0_i2h{self._gate_names[0]}_weight"
        if first not in args:
            _pop_weight(args, first, who)
        w0 = args[first]
        if len(w0.shape) != 2:
            raise MXNetError(f"{who}: {first} should be 2-D (num_hidden, input size), got "
                             f"shape {w0.shape}")
        pieces = []
        for name, shape in self._layout(w0.shape[1]):
            arr = _pop_weight(args, name, who)
            if tuple(arr.shape) != tuple(shape):
                raise MXNetError(f"{who}: {name} has shape {tuple(arr.shape)}, the cell "
                                 f"needs {shape}")
            pieces.append(arr.reshape((-1,)).astype(w0.dtype, copy=False)
                          .as_in_context(w0.context))
        args[self._parameter.name] = ndarray.concatenate(pieces)
        return args

    def __call__(self, inputs, states):
        raise NotImplementedError("FusedRNNCell runs a whole sequence at once: use unroll "
                                  "(or unfuse() for a cell that steps)")

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, True)
        if axis == 1:
            warnings.warn("NTC layout detected. Consider using TNC for FusedRNNCell for "
                          "faster speed")
            inputs = symbol.swapaxes(inputs, dim1=0, dim2=1)
        elif axis != 0:
            raise MXNetError(f"FusedRNNCell.unroll: layout {layout!r} is not supported (the "
                             "time axis must be first or second)")
        if begin_state is None:
            begin_state = self.begin_state()
        states = {"state": begin_state[0]}
        if self._mode == "lstm":
            states["state_cell"] = begin_state[1]
        rnn = symbol.RNN(data=inputs, parameters=self._parameter,
                         state_size=self._num_hidden, num_layers=self._num_layers,
                         bidirectional=self._bidirectional, p=self._dropout,
                         state_outputs=self._get_next_state, mode=self._mode,
                         name=f"{self._prefix}rnn", **states)
        if not self._get_next_state:
            outputs, states = rnn, []
        else:
            n_states = 2 if self._mode == "lstm" else 1
            states = [rnn[k + 1] for k in range(n_states)]
            for state in states:
                state._set_attr(__layout__="LNC")
            outputs = rnn[0]
        if axis == 1:
            outputs = symbol.swapaxes(outputs, dim1=0, dim2=1)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def unfuse(self):
        """The same network as a :class:`SequentialRNNCell` of step-by-step cells
        (``BidirectionalCell`` pairs when bidirectional, ``DropoutCell`` between layers),
        named so that :meth:`unpack_weights`'s arrays are their weights.

        Returns
        -------
        SequentialRNNCell
        """
        def make(cell_prefix):
            if self._mode == "lstm":
                return LSTMCell(self._num_hidden, prefix=cell_prefix)
            if self._mode == "gru":
                return GRUCell(self._num_hidden, prefix=cell_prefix)
            return RNNCell(self._num_hidden, activation=self._mode[len("rnn_"):],
                           prefix=cell_prefix)

        stack = SequentialRNNCell()
        for layer in range(self._num_layers):
            if self._bidirectional:
                stack.add(BidirectionalCell(make(f"{self._prefix}l{layer}_"),
                                            make(f"{self._prefix}r{layer}_"),
                                            output_prefix=f"{self._prefix}bi_l{layer}_"))
            else:
                stack.add(make(f"{self._prefix}l{layer}_"))
            if self._dropout > 0 and layer != self._num_layers - 1:
                stack.add(DropoutCell(self._dropout, prefix=f"{self._prefix}_dropout{layer}_"))
        return stack


class SequentialRNNCell(BaseRNNCell):
    """Cells stacked: each one's output is the next one's input.

    Parameters
    ----------
    params : RNNParams or None
        A container for all the cells' weights; then the cells added must not have been
        given (or asked for) a container of their own.
    """

    def __init__(self, params=None):
        super().__init__(prefix="", params=params)
        self._override_cell_params = params is not None
        self._cells = []

    def add(self, cell):
        """Put ``cell`` on top of the stack.

        Parameters
        ----------
        cell : BaseRNNCell
        """
        if self._override_cell_params:
            _check(cell._own_params,
                   "SequentialRNNCell was given params: the cells added to it must not have "
                   "params of their own (give params to the stack or to the cells, not both)")
            cell.params._params.update(self.params._params)
        self._cells.append(cell)
        self.params._params.update(cell.params._params)

    @property
    def state_info(self):
        return _cells_state_info(self._cells)

    def begin_state(self, **kwargs):
        """The states of every cell, in stack order (see :meth:`BaseRNNCell.begin_state`)."""
        _check(not self._modified,
               "this SequentialRNNCell is wrapped by a modifier cell (ZoneoutCell...): use "
               "the modifier cell")
        return _cells_begin_state(self._cells, **kwargs)

    def unpack_weights(self, args):
        return _cells_unpack_weights(self._cells, args)

    def pack_weights(self, args):
        return _cells_pack_weights(self._cells, args)

    def __call__(self, inputs, states):
        self._counter += 1
        next_states = []
        offset = 0
        for cell in self._cells:
            _check(not isinstance(cell, BidirectionalCell),
                   "a SequentialRNNCell holding a BidirectionalCell cannot be stepped; "
                   "use unroll")
            n = len(cell.state_info)
            inputs, cell_states = cell(inputs, states[offset:offset + n])
            offset += n
            next_states.extend(cell_states)
        return inputs, next_states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        if begin_state is None:
            begin_state = self.begin_state()
        offset = 0
        next_states = []
        last = len(self._cells) - 1
        for i, cell in enumerate(self._cells):
            n = len(cell.state_info)
            inputs, states = cell.unroll(length, inputs=inputs,
                                         begin_state=begin_state[offset:offset + n],
                                         layout=layout,
                                         merge_outputs=merge_outputs if i == last else None)
            offset += n
            next_states.extend(states)
        return inputs, next_states


class DropoutCell(BaseRNNCell):
    """Dropout on the input (no state, no weights).

    Parameters
    ----------
    dropout : float
        Fraction of the values zeroed in training.
    prefix : str, default 'dropout_'
    params : RNNParams or None
    """

    def __init__(self, dropout, prefix="dropout_", params=None):
        super().__init__(prefix, params)
        if not isinstance(dropout, numeric_types):
            raise _CellUsageError(f"DropoutCell: dropout must be a number, got {dropout!r}")
        self.dropout = dropout

    @property
    def state_info(self):
        return []

    def __call__(self, inputs, states):
        if self.dropout > 0:
            inputs = symbol.Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, symbol.Symbol):
            # one node over the whole sequence instead of one per step
            return self(inputs, [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs)


class ModifierCell(BaseRNNCell):
    """Base class of the cells that wrap another cell and change what it computes
    (zoneout, residual connections).

    The wrapped cell is marked as modified: from then on it is used through the modifier
    only (its ``begin_state`` refuses to be called directly).

    Parameters
    ----------
    base_cell : BaseRNNCell
    """

    def __init__(self, base_cell):
        super().__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    def reset(self):
        super().reset()
        # MXNet 1.9.1 left the wrapped cell's counters running, so a second unroll of a
        # ZoneoutCell named its nodes t3, t4... and begin_state_1; restart them too
        base_cell = getattr(self, "base_cell", None)
        if base_cell is not None:
            base_cell.reset()

    @property
    def params(self):
        self._own_params = False
        return self.base_cell.params

    @property
    def state_info(self):
        return self.base_cell.state_info

    def begin_state(self, init_sym=symbol.zeros, **kwargs):
        """The wrapped cell's begin states (see :meth:`BaseRNNCell.begin_state`).

        The state maker may be given as ``init_sym`` or, like the other cells, ``func``
        (what ``SequentialRNNCell.begin_state(func=...)`` passes on; MXNet 1.9.1 raised
        TypeError there).
        """
        _check(not self._modified,
               f"this {type(self).__name__} is itself wrapped by a modifier cell: use that one")
        func = kwargs.pop("func", init_sym)
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(func=func, **kwargs)
        finally:
            self.base_cell._modified = True

    def unpack_weights(self, args):
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args):
        return self.base_cell.pack_weights(args)

    def __call__(self, inputs, states):
        raise NotImplementedError(f"{type(self).__name__} does not define a time step")


class ZoneoutCell(ModifierCell):
    """Zoneout: in training, each output and state value keeps its previous step's value
    with the given probability instead of taking the new one.

    Parameters
    ----------
    base_cell : BaseRNNCell
        A cell that steps (not fused, not bidirectional).
    zoneout_outputs : float, default 0
    zoneout_states : float, default 0
    """

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        _check(not isinstance(base_cell, FusedRNNCell),
               "ZoneoutCell cannot wrap a FusedRNNCell: unfuse() it first")
        _check(not isinstance(base_cell, BidirectionalCell),
               "ZoneoutCell cannot wrap a BidirectionalCell (it cannot be stepped): wrap the "
               "cells inside it instead")
        _check(not (isinstance(base_cell, SequentialRNNCell)
                    and any(isinstance(c, BidirectionalCell) for c in base_cell._cells)),
               "ZoneoutCell cannot wrap a SequentialRNNCell holding a BidirectionalCell: wrap "
               "the cells inside it instead")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self.prev_output = None

    def reset(self):
        super().reset()
        self.prev_output = None

    def __call__(self, inputs, states):
        next_output, next_states = self.base_cell(inputs, states)

        def keep_new(p, like):
            # Dropout of ones: 0 where the old value is kept (scaled ones elsewhere)
            return symbol.Dropout(symbol.ones_like(like), p=p)

        prev_output = self.prev_output if self.prev_output is not None \
            else symbol.zeros((0, 0))
        if self.zoneout_outputs != 0.:
            output = symbol.where(keep_new(self.zoneout_outputs, next_output), next_output,
                                  prev_output)
        else:
            output = next_output
        if self.zoneout_states != 0.:
            new_states = [symbol.where(keep_new(self.zoneout_states, new), new, old)
                          for new, old in zip(next_states, states)]
        else:
            new_states = next_states
        self.prev_output = output
        return output, new_states


class ResidualCell(ModifierCell):
    """Adds the input to the wrapped cell's output (Wu et al. 2016); the output node of
    each step is named ``<base output name>_plus_residual``.

    Parameters
    ----------
    base_cell : BaseRNNCell
        Its output must have the input's shape.
    """

    def __call__(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        output = symbol.elemwise_add(output, inputs, name=f"{output.name}_plus_residual")
        return output, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs,
                                                    begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs)
        finally:
            self.base_cell._modified = True
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, symbol.Symbol)
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if merge_outputs:
            outputs = symbol.elemwise_add(outputs, inputs,
                                          name=f"{outputs.name}_plus_residual")
        else:
            outputs = [symbol.elemwise_add(out, inp, name=f"{out.name}_plus_residual")
                       for out, inp in zip(outputs, inputs)]
        return outputs, states


class BidirectionalCell(BaseRNNCell):
    """Runs one cell forward and another backward over the sequence and concatenates their
    outputs step by step (``<output_prefix>t<i>``, or ``<output_prefix>out`` merged).

    Parameters
    ----------
    l_cell : BaseRNNCell
        The forward cell.
    r_cell : BaseRNNCell
        The backward cell.
    params : RNNParams or None
        A container for both cells' weights (then they must not have their own).
    output_prefix : str, default 'bi_'
    """

    def __init__(self, l_cell, r_cell, params=None, output_prefix="bi_"):
        super().__init__("", params=params)
        self._output_prefix = output_prefix
        self._override_cell_params = params is not None
        if self._override_cell_params:
            _check(l_cell._own_params and r_cell._own_params,
                   "BidirectionalCell was given params: its cells must not have params of "
                   "their own (give params to the BidirectionalCell or to the cells, not both)")
            l_cell.params._params.update(self.params._params)
            r_cell.params._params.update(self.params._params)
        self.params._params.update(l_cell.params._params)
        self.params._params.update(r_cell.params._params)
        self._cells = [l_cell, r_cell]

    def unpack_weights(self, args):
        return _cells_unpack_weights(self._cells, args)

    def pack_weights(self, args):
        return _cells_pack_weights(self._cells, args)

    def __call__(self, inputs, states):
        raise NotImplementedError("BidirectionalCell needs the whole sequence: use unroll")

    @property
    def state_info(self):
        return _cells_state_info(self._cells)

    def begin_state(self, **kwargs):
        """Both cells' states, forward cell first (see :meth:`BaseRNNCell.begin_state`)."""
        _check(not self._modified,
               "this BidirectionalCell is wrapped by a modifier cell: use the modifier cell")
        return _cells_begin_state(self._cells, **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        """As :meth:`BaseRNNCell.unroll`; the states returned are
        ``[forward cell's states, backward cell's states]`` (two lists)."""
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, False)
        if begin_state is None:
            begin_state = self.begin_state()
        l_cell, r_cell = self._cells
        n_left = len(l_cell.state_info)
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs,
                                            begin_state=begin_state[:n_left],
                                            layout=layout, merge_outputs=merge_outputs)
        r_outputs, r_states = r_cell.unroll(length, inputs=list(reversed(inputs)),
                                            begin_state=begin_state[n_left:],
                                            layout=layout, merge_outputs=merge_outputs)
        if merge_outputs is None:
            merge_outputs = (isinstance(l_outputs, symbol.Symbol)
                             and isinstance(r_outputs, symbol.Symbol))
            if not merge_outputs:
                if isinstance(l_outputs, symbol.Symbol):
                    l_outputs = list(symbol.SliceChannel(l_outputs, axis=axis,
                                                         num_outputs=length, squeeze_axis=1))
                if isinstance(r_outputs, symbol.Symbol):
                    r_outputs = list(symbol.SliceChannel(r_outputs, axis=axis,
                                                         num_outputs=length, squeeze_axis=1))
        if merge_outputs:
            # features are axis 2 in both NTC and TNC
            outputs = symbol.Concat(l_outputs, symbol.reverse(r_outputs, axis=axis), dim=2,
                                    name=f"{self._output_prefix}out")
        else:
            outputs = [symbol.Concat(l_out, r_out, dim=1, name=f"{self._output_prefix}t{i}")
                       for i, (l_out, r_out) in enumerate(zip(l_outputs,
                                                              reversed(r_outputs)))]
        return outputs, [l_states, r_states]


def _leaky_relu_activation():
    return functools.partial(symbol.LeakyReLU, act_type="leaky", slope=0.2)


class BaseConvRNNCell(BaseRNNCell):
    """Base class of the convolutional RNN cells: ``i2h`` and ``h2h`` are convolutions
    (``num_hidden * num_gates`` filters), the state has the shape of ``i2h``'s output.

    Parameters
    ----------
    input_shape : tuple of int
        One step's input shape, batch included (e.g. ``(1, 3, 16, 10)`` in NCHW).
    num_hidden : int
        Channels of the state.
    h2h_kernel : tuple of int
        Odd sizes (the state keeps its size: padding is derived from kernel and dilation).
    h2h_dilate, i2h_kernel, i2h_stride, i2h_pad, i2h_dilate : tuple of int
    i2h_weight_initializer, h2h_weight_initializer : Initializer or str or None
    i2h_bias_initializer, h2h_bias_initializer : Initializer or str or None
    activation : str or callable
    prefix : str, default ''
    params : RNNParams or None
    conv_layout : str, default 'NCHW'
    """

    def __init__(self, input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel,
                 i2h_stride, i2h_pad, i2h_dilate, i2h_weight_initializer,
                 h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                 activation, prefix="", params=None, conv_layout="NCHW"):
        super().__init__(prefix=prefix, params=params)
        _check(all(k % 2 == 1 for k in h2h_kernel[:2]),
               f"{type(self).__name__}: h2h_kernel must have odd sizes, got {h2h_kernel}")
        self._h2h_kernel = h2h_kernel
        self._h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(h2h_dilate[:2], h2h_kernel[:2]))
        self._h2h_dilate = h2h_dilate
        self._i2h_kernel = i2h_kernel
        self._i2h_stride = i2h_stride
        self._i2h_pad = i2h_pad
        self._i2h_dilate = i2h_dilate
        self._num_hidden = num_hidden
        self._input_shape = input_shape
        self._conv_layout = conv_layout
        self._activation = activation

        # the state has i2h's output shape (one gate's channels), with the batch left open
        probe = symbol.Convolution(data=symbol.Variable("data"), num_filter=num_hidden,
                                   kernel=i2h_kernel, stride=i2h_stride, pad=i2h_pad,
                                   dilate=i2h_dilate, layout=conv_layout)
        out_shape = probe.infer_shape(data=input_shape)[1][0]
        self._state_shape = (0,) + tuple(out_shape[1:])

        self._iW = self.params.get("i2h_weight", init=i2h_weight_initializer)
        self._hW = self.params.get("h2h_weight", init=h2h_weight_initializer)
        self._iB = self.params.get("i2h_bias", init=i2h_bias_initializer)
        self._hB = self.params.get("h2h_bias", init=h2h_bias_initializer)

    @property
    def _num_gates(self):
        return len(self._gate_names)

    @property
    def state_info(self):
        return [{"shape": self._state_shape, "__layout__": self._conv_layout},
                {"shape": self._state_shape, "__layout__": self._conv_layout}]

    def _conv_forward(self, inputs, states, name):
        filters = self._num_hidden * self._num_gates
        i2h = symbol.Convolution(name=f"{name}i2h", data=inputs, num_filter=filters,
                                 kernel=self._i2h_kernel, stride=self._i2h_stride,
                                 pad=self._i2h_pad, dilate=self._i2h_dilate,
                                 weight=self._iW, bias=self._iB, layout=self._conv_layout)
        h2h = symbol.Convolution(name=f"{name}h2h", data=states[0], num_filter=filters,
                                 kernel=self._h2h_kernel, dilate=self._h2h_dilate,
                                 pad=self._h2h_pad, stride=(1, 1), weight=self._hW,
                                 bias=self._hB, layout=self._conv_layout)
        return i2h, h2h

    def __call__(self, inputs, states):
        raise NotImplementedError("BaseConvRNNCell is abstract: use ConvRNNCell, "
                                  "ConvLSTMCell or ConvGRUCell")


_CONV_CELL_PARAMS_DOC = """
    Parameters
    ----------
    input_shape : tuple of int
        One step's input shape, batch included (e.g. ``(1, 3, 16, 10)`` in NCHW).
    num_hidden : int
        Channels of the state.
    h2h_kernel : tuple of int, default (3, 3)
        State-to-state kernel (odd sizes; padded to keep the state's size).
    h2h_dilate : tuple of int, default (1, 1)
    i2h_kernel : tuple of int, default (3, 3)
    i2h_stride : tuple of int, default (1, 1)
    i2h_pad : tuple of int, default (1, 1)
    i2h_dilate : tuple of int, default (1, 1)
    i2h_weight_initializer, h2h_weight_initializer : Initializer or str, optional
        Set as the weight variables' initializers (the global one when None).
    i2h_bias_initializer, h2h_bias_initializer : Initializer or str, default 'zeros'
    activation : str or callable, default LeakyReLU(act_type='leaky', slope=0.2)
    prefix : str, default '{prefix}'
    params : RNNParams or None
    conv_layout : str, default 'NCHW'
"""


class ConvRNNCell(BaseConvRNNCell):
    __doc__ = ("Convolutional Elman RNN cell: ``out = act(conv_i(x) + conv_h(h))``.\n"
               + _CONV_CELL_PARAMS_DOC.format(prefix="ConvRNN_"))

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 activation=_leaky_relu_activation(), prefix="ConvRNN_", params=None,
                 conv_layout="NCHW"):
        super().__init__(input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel,
                         i2h_stride, i2h_pad, i2h_dilate, i2h_weight_initializer,
                         h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                         activation, prefix=prefix, params=params, conv_layout=conv_layout)

    @property
    def _gate_names(self):
        return ("",)

    @property
    def state_info(self):
        return [{"shape": self._state_shape, "__layout__": self._conv_layout}]

    def __call__(self, inputs, states):
        self._counter += 1
        step = f"{self._prefix}t{self._counter}_"
        i2h, h2h = self._conv_forward(inputs, states, step)
        output = self._get_activation(i2h + h2h, self._activation, name=f"{step}out")
        return output, [output]


class ConvLSTMCell(BaseConvRNNCell):
    __doc__ = ("Convolutional LSTM cell (Shi et al., NIPS 2015); gates in the order input, "
               "forget, cell, output along the channel axis.\n"
               + _CONV_CELL_PARAMS_DOC.format(prefix="ConvLSTM_"))

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 activation=_leaky_relu_activation(), prefix="ConvLSTM_", params=None,
                 conv_layout="NCHW"):
        super().__init__(input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel,
                         i2h_stride, i2h_pad, i2h_dilate, i2h_weight_initializer,
                         h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                         activation, prefix=prefix, params=params, conv_layout=conv_layout)

    @property
    def _gate_names(self):
        return ["_i", "_f", "_c", "_o"]

    def __call__(self, inputs, states):
        self._counter += 1
        step = f"{self._prefix}t{self._counter}_"
        i2h, h2h = self._conv_forward(inputs, states, step)
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4,
                                    axis=self._conv_layout.find("C"), name=f"{step}slice")
        in_gate = symbol.Activation(gates[0], act_type="sigmoid", name=f"{step}i")
        forget_gate = symbol.Activation(gates[1], act_type="sigmoid", name=f"{step}f")
        candidate = self._get_activation(gates[2], self._activation, name=f"{step}c")
        out_gate = symbol.Activation(gates[3], act_type="sigmoid", name=f"{step}o")
        next_c = symbol.elemwise_add(forget_gate * states[1], in_gate * candidate,
                                     name=f"{step}state")
        next_h = symbol.elemwise_mul(out_gate, self._get_activation(next_c, self._activation),
                                     name=f"{step}out")
        return next_h, [next_h, next_c]


class ConvGRUCell(BaseConvRNNCell):
    __doc__ = ("Convolutional GRU cell; gates in the order reset, update, new along the "
               "channel axis.\n" + _CONV_CELL_PARAMS_DOC.format(prefix="ConvGRU_"))

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 activation=_leaky_relu_activation(), prefix="ConvGRU_", params=None,
                 conv_layout="NCHW"):
        super().__init__(input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel,
                         i2h_stride, i2h_pad, i2h_dilate, i2h_weight_initializer,
                         h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                         activation, prefix=prefix, params=params, conv_layout=conv_layout)

    @property
    def _gate_names(self):
        return ["_r", "_z", "_o"]

    @property
    def state_info(self):
        return [{"shape": self._state_shape, "__layout__": self._conv_layout}]

    def __call__(self, inputs, states):
        self._counter += 1
        step = f"{self._prefix}t{self._counter}_"
        i2h, h2h = self._conv_forward(inputs, states, step)
        # split along axis 1 as MXNet does (the channel axis of NCHW)
        i2h_r, i2h_z, i2h_n = symbol.SliceChannel(i2h, num_outputs=3, name=f"{step}_i2h_slice")
        h2h_r, h2h_z, h2h_n = symbol.SliceChannel(h2h, num_outputs=3, name=f"{step}_h2h_slice")
        reset_gate = symbol.Activation(i2h_r + h2h_r, act_type="sigmoid", name=f"{step}_r_act")
        update_gate = symbol.Activation(i2h_z + h2h_z, act_type="sigmoid",
                                        name=f"{step}_z_act")
        candidate = self._get_activation(i2h_n + reset_gate * h2h_n, self._activation,
                                         name=f"{step}_h_act")
        next_h = symbol.elemwise_add((1. - update_gate) * candidate, update_gate * states[0],
                                     name=f"{step}out")
        return next_h, [next_h]
