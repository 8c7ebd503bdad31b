"""Recurrent cells (one time step) and their containers, as in MXNet 1.x's gluon.rnn."""
from __future__ import annotations

from ... import ndarray as _nd
from ... import symbol as _sym
from ...ndarray.ndarray import NDArray
from ...symbol.symbol import Symbol
from ..block import Block, HybridBlock, _indent, _TRACE, _TRACED

__all__ = ["RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell",
           "SequentialRNNCell", "HybridSequentialRNNCell", "DropoutCell", "ModifierCell",
           "ZoneoutCell", "ResidualCell", "BidirectionalCell"]


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


_TENSORS = (NDArray, Symbol)


def _F_of(x):
    """The operator namespace that matches ``x`` (an array, a Symbol, or a list of them):
    ``mx.sym`` for symbols, the capturing tracer's ``F`` while a hybridized forward pass is
    being captured (so that what unroll adds is part of the graph), ``nd`` otherwise."""
    while isinstance(x, (list, tuple)) and x:
        x = x[0]
    if isinstance(x, Symbol):
        return _sym
    if isinstance(x, _TRACED):
        tr = _TRACE.tracer
        if tr is not None:
            return tr.F
    if isinstance(x, NDArray):
        return _nd
    raise TypeError(f"unroll: inputs must be NDArrays or Symbols (or lists of them), got "
                    f"{type(x).__name__}")


def _named(F, name):
    """``name=`` for operators that build symbols (what MXNet's graphs call the nodes); some
    nd functions take no name."""
    return {"name": name} if F is _sym else {}


def _format_sequence(length, inputs, layout, merge, in_layout=None):
    """Bring ``inputs`` to one array (``merge=True``), a list of per-step arrays
    (``merge=False``) or leave the form as it is (``None``); returns
    ``(inputs, time_axis, batch_size)`` (batch size 0 for symbols: unknown)."""
    if inputs is None:
        raise AssertionError("unroll(inputs=None) has been deprecated. Please create input "
                             "variables outside unroll.")
    axis = layout.find("T")
    batch_axis = layout.find("N")
    in_axis = in_layout.find("T") if in_layout is not None else axis
    batch_size = 0
    F = _F_of(inputs)
    if isinstance(inputs, Symbol):
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise AssertionError("unroll doesn't allow grouped symbol as input. Please "
                                     "convert to list with list(inputs) first or let unroll "
                                     "handle splitting.")
            inputs = list(_sym.split(inputs, axis=in_axis, num_outputs=length, squeeze_axis=1))
    elif isinstance(inputs, NDArray):
        batch_size = inputs.shape[batch_axis]
        if merge is False:
            if length is not None and length != inputs.shape[in_axis]:
                raise AssertionError(f"unroll: length {length} does not match the input's "
                                     f"time axis of size {inputs.shape[in_axis]}")
            inputs = _as_list(F.split(inputs, axis=in_axis,
                                      num_outputs=inputs.shape[in_axis], squeeze_axis=1))
    else:
        if length is not None and len(inputs) != length:
            raise AssertionError(f"unroll: length {length} but {len(inputs)} inputs")
        if not isinstance(inputs[0], Symbol):
            batch_size = inputs[0].shape[0]
        if merge is True:
            inputs = F.stack(*inputs, axis=axis)
            in_axis = axis
    if isinstance(inputs, _TENSORS) and axis != in_axis:
        inputs = F.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis, batch_size


def _mask_sequence_variable_length(data, length, valid_length, time_axis, merge):
    F = _F_of(data)
    if not isinstance(data, _TENSORS):
        data = F.stack(*data, axis=time_axis)
    outputs = F.SequenceMask(data, sequence_length=valid_length, use_sequence_length=True,
                             axis=time_axis)
    if not merge:
        outputs = _as_list(F.split(outputs, num_outputs=length, axis=time_axis,
                                   squeeze_axis=True))
    return outputs


def _begin_state(cell, F, inputs, batch_size):
    """The cell's default begin states for ``inputs``: zeros of the inputs' batch size,
    context and dtype (made by ``F`` so that a captured graph or a symbol includes them)."""
    if F is _sym:
        return cell.begin_state(batch_size=0, func=F.zeros)
    first = inputs
    while isinstance(first, (list, tuple)):
        first = first[0]
    return cell.begin_state(batch_size=batch_size, func=F.zeros, ctx=first.context,
                            dtype=first.dtype)


class RecurrentCell(Block):
    """Base class of recurrent cells: ``cell(inputs, states) -> (output, new_states)``.

    Parameters
    ----------
    prefix : str, optional
    params : ParameterDict, optional
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._modified = False
        self.reset()

    def reset(self):
        """Reset the step counters before a new sequence."""
        self._init_counter = -1
        self._counter = -1
        for cell in self._children.values():
            cell.reset()

    def state_info(self, batch_size=0):
        """Shapes (and layouts) of the states."""
        raise NotImplementedError()

    def begin_state(self, batch_size=0, func=_nd.zeros, **kwargs):
        """Initial states made by ``func`` (``nd.zeros`` by default).

        Parameters
        ----------
        batch_size : int
        func : callable
        **kwargs
            Passed to ``func`` (``ctx``, ``dtype``...).
        """
        if self._modified:
            raise AssertionError("After applying modifier cells (e.g. ZoneoutCell) the base "
                                 "cell cannot be called directly. Call the modifier cell "
                                 "instead.")
        states = []
        for info in self.state_info(batch_size):
            self._init_counter += 1
            info = dict(info) if info is not None else {}
            info.pop("__layout__", None)
            info.update(kwargs)
            states.append(func(name=f"{self._prefix}begin_state_{self._init_counter}", **info))
        return states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Run the cell over ``length`` time steps.

        Parameters
        ----------
        length : int
        inputs : NDArray or list of NDArray
            ``(N, T, ...)`` for layout 'NTC', ``(T, N, ...)`` for 'TNC', or one array per step.
        begin_state : list of NDArray, optional
        layout : {'NTC', 'TNC'}
        merge_outputs : bool, optional
            Stack the outputs into one array (True) or return a list (False).
        valid_length : NDArray, optional
            ``(N,)`` lengths; outputs past them are zeroed and the last valid states returned.

        Returns
        -------
        outputs, states
        """
        self.reset()
        inputs, axis, batch_size = _format_sequence(length, inputs, layout, False)
        F = _F_of(inputs)
        if begin_state is None:
            begin_state = _begin_state(self, F, inputs, batch_size)
        states = begin_state
        outputs = []
        all_states = []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
            if valid_length is not None:
                all_states.append(states)
        if valid_length is not None:
            states = [F.SequenceLast(F.stack(*ele, axis=0), sequence_length=valid_length,
                                     use_sequence_length=True, axis=0)
                      for ele in zip(*all_states)]
            outputs = _mask_sequence_variable_length(outputs, length, valid_length, axis, True)
        outputs, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, F, inputs, activation, **kwargs):
        func = {"tanh": F.tanh, "relu": F.relu, "sigmoid": F.sigmoid,
                "softsign": F.softsign}.get(activation)
        if func:
            return func(inputs, **kwargs)
        if isinstance(activation, str):
            return F.Activation(inputs, act_type=activation, **kwargs)
        from ..nn.activations import LeakyReLU
        if isinstance(activation, LeakyReLU):
            return F.LeakyReLU(inputs, act_type="leaky", slope=activation._alpha, **kwargs)
        return activation(inputs, **kwargs)

    def forward(self, inputs, states):
        """One step: returns ``(output, new_states)``."""
        raise NotImplementedError

    def __call__(self, inputs, states):
        self._counter += 1
        return super().__call__(inputs, states)


class HybridRecurrentCell(RecurrentCell, HybridBlock):
    """A recurrent cell written with ``hybrid_forward(F, inputs, states, **params)``."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def forward(self, x, *args):
        return HybridBlock.forward(self, x, *args)

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError


def _cell_params(cell, hidden, ng, input_size, i2h_w, h2h_w, i2h_b, h2h_b):
    cell.i2h_weight = cell.params.get("i2h_weight", shape=(ng * hidden, input_size),
                                      init=i2h_w, allow_deferred_init=True)
    cell.h2h_weight = cell.params.get("h2h_weight", shape=(ng * hidden, hidden), init=h2h_w,
                                      allow_deferred_init=True)
    cell.i2h_bias = cell.params.get("i2h_bias", shape=(ng * hidden,), init=i2h_b,
                                    allow_deferred_init=True)
    cell.h2h_bias = cell.params.get("h2h_bias", shape=(ng * hidden,), init=h2h_b,
                                    allow_deferred_init=True)


def _cell_repr(self, with_activation=False):
    shape = self.i2h_weight.shape
    act = f", {self._activation}" if with_activation else ""
    return f"{type(self).__name__}({shape[1] if shape[1] else None} -> {shape[0]}{act})"


class RNNCell(HybridRecurrentCell):
    """Elman RNN cell: ``h' = activation(W_ih x + b_ih + W_hh h + b_hh)``.

    Parameters
    ----------
    hidden_size : int
    activation : str or callable, default 'tanh'
    input_size : int, default 0
    """

    def __init__(self, hidden_size, activation="tanh", i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", input_size=0, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._activation = activation
        self._input_size = input_size
        _cell_params(self, hidden_size, 1, input_size, i2h_weight_initializer,
                     h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer)

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self):
        return "rnn"

    def __repr__(self):
        return _cell_repr(self, True)

    def infer_shape(self, inputs, *args):
        self.i2h_weight.shape = (self.i2h_weight.shape[0], inputs.shape[1])

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        t = f"t{self._counter}_"
        i2h = F.FullyConnected(inputs, i2h_weight, i2h_bias, num_hidden=self._hidden_size,
                               name=t + "i2h")
        h2h = F.FullyConnected(states[0], h2h_weight, h2h_bias, num_hidden=self._hidden_size,
                               name=t + "h2h")
        pre = F.elemwise_add(i2h, h2h, name=t + "plus0")
        output = self._get_activation(F, pre, self._activation, name=t + "out")
        return output, [output]


class LSTMCell(HybridRecurrentCell):
    """LSTM cell (gates in MXNet's order: input, forget, cell, output); states ``[h, c]``.

    Parameters
    ----------
    hidden_size : int
    input_size : int, default 0
    activation, recurrent_activation : str, default 'tanh' / 'sigmoid'
    """

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None, activation="tanh", recurrent_activation="sigmoid"):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        self._activation = activation
        self._recurrent_activation = recurrent_activation
        _cell_params(self, hidden_size, 4, input_size, i2h_weight_initializer,
                     h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer)

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self):
        return "lstm"

    def __repr__(self):
        return _cell_repr(self)

    infer_shape = RNNCell.infer_shape

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        nh = self._hidden_size
        t = f"t{self._counter}_"
        i2h = F.FullyConnected(inputs, i2h_weight, i2h_bias, num_hidden=nh * 4, name=t + "i2h")
        h2h = F.FullyConnected(states[0], h2h_weight, h2h_bias, num_hidden=nh * 4,
                               name=t + "h2h")
        gates = F.SliceChannel(F.elemwise_add(i2h, h2h, name=t + "plus0"), num_outputs=4,
                               axis=1, name=t + "slice")
        rec, act = self._recurrent_activation, self._activation
        in_gate = self._get_activation(F, gates[0], rec, name=t + "i")
        forget_gate = self._get_activation(F, gates[1], rec, name=t + "f")
        in_transform = self._get_activation(F, gates[2], act, name=t + "c")
        out_gate = self._get_activation(F, gates[3], rec, name=t + "o")
        next_c = F.elemwise_add(F.elemwise_mul(forget_gate, states[1], name=t + "mul0"),
                                F.elemwise_mul(in_gate, in_transform, name=t + "mul1"),
                                name=t + "state")
        next_h = F.elemwise_mul(out_gate,
                                self._get_activation(F, next_c, act, name=t + "activation0"),
                                name=t + "out")
        return next_h, [next_h, next_c]


class GRUCell(HybridRecurrentCell):
    """GRU cell (gates r, z, n; the reset gate scales ``W_hh h + b_hh``, as MXNet/cuDNN).

    Parameters
    ----------
    hidden_size : int
    input_size : int, default 0
    """

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None, activation="tanh", recurrent_activation="sigmoid"):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        self._activation = activation
        self._recurrent_activation = recurrent_activation
        _cell_params(self, hidden_size, 3, input_size, i2h_weight_initializer,
                     h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer)

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self):
        return "gru"

    def __repr__(self):
        return _cell_repr(self)

    infer_shape = RNNCell.infer_shape

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        nh = self._hidden_size
        t = f"t{self._counter}_"
        prev = states[0]
        i2h = F.FullyConnected(inputs, i2h_weight, i2h_bias, num_hidden=nh * 3, name=t + "i2h")
        h2h = F.FullyConnected(prev, h2h_weight, h2h_bias, num_hidden=nh * 3, name=t + "h2h")
        i2h_r, i2h_z, i2h = F.SliceChannel(i2h, num_outputs=3, axis=1, name=t + "i2h_slice")
        h2h_r, h2h_z, h2h = F.SliceChannel(h2h, num_outputs=3, axis=1, name=t + "h2h_slice")
        rec = self._recurrent_activation
        reset = self._get_activation(F, F.elemwise_add(i2h_r, h2h_r, name=t + "plus0"), rec,
                                     name=t + "r_act")
        update = self._get_activation(F, F.elemwise_add(i2h_z, h2h_z, name=t + "plus1"), rec,
                                      name=t + "z_act")
        cand = self._get_activation(
            F, F.elemwise_add(i2h, F.elemwise_mul(reset, h2h, name=t + "mul0"),
                              name=t + "plus2"), self._activation, name=t + "h_act")
        ones = F.ones_like(update, name=t + "ones_like0")
        next_h = F.elemwise_add(
            F.elemwise_mul(F.elemwise_sub(ones, update, name=t + "minus0"), cand,
                           name=t + "mul1"),
            F.elemwise_mul(update, prev, name=t + "mul20"), name=t + "out")
        return next_h, [next_h]


def _seq_cell_repr(self):
    modstr = "\n".join(f"({i}): {_indent(repr(m), 2)}" for i, m in self._children.items())
    return f"{type(self).__name__}(\n{modstr}\n)"


class SequentialRNNCell(RecurrentCell):
    """Stacks recurrent cells: each step runs them in order on the previous one's output."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    __repr__ = _seq_cell_repr

    def add(self, cell):
        """Append a cell."""
        self.register_child(cell)

    def state_info(self, batch_size=0):
        return [s for c in self._children.values() for s in c.state_info(batch_size)]

    def begin_state(self, **kwargs):
        if self._modified:
            raise AssertionError("After applying modifier cells (e.g. ZoneoutCell) the base "
                                 "cell cannot be called directly. Call the modifier cell "
                                 "instead.")
        return [s for c in self._children.values() for s in c.begin_state(**kwargs)]

    def __call__(self, inputs, states):
        self._counter += 1
        next_states = []
        p = 0
        for cell in self._children.values():
            n = len(cell.state_info())
            state = states[p:p + n]
            p += n
            inputs, state = cell(inputs, state)
            next_states.append(state)
        return inputs, sum(next_states, [])

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, _, batch_size = _format_sequence(length, inputs, layout, None)
        num_cells = len(self._children)
        if begin_state is None:
            begin_state = _begin_state(self, _F_of(inputs), inputs, batch_size)
        p = 0
        next_states = []
        for i, cell in enumerate(self._children.values()):
            n = len(cell.state_info())
            states = begin_state[p:p + n]
            p += n
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=states,
                                         layout=layout,
                                         merge_outputs=None if i < num_cells - 1
                                         else merge_outputs, valid_length=valid_length)
            next_states.extend(states)
        return inputs, next_states

    def __getitem__(self, i):
        return list(self._children.values())[i]

    def __len__(self):
        return len(self._children)

    def hybrid_forward(self, *args, **kwargs):
        raise NotImplementedError


class HybridSequentialRNNCell(HybridRecurrentCell):
    """Stacks hybrid recurrent cells (see :class:`SequentialRNNCell`)."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    __repr__ = _seq_cell_repr
    add = SequentialRNNCell.add
    state_info = SequentialRNNCell.state_info
    begin_state = SequentialRNNCell.begin_state
    __call__ = SequentialRNNCell.__call__
    unroll = SequentialRNNCell.unroll
    __getitem__ = SequentialRNNCell.__getitem__
    __len__ = SequentialRNNCell.__len__

    def hybrid_forward(self, F, inputs, states):
        return self.__call__(inputs, states)


def _dropout_mask(F, like, p):
    """``F.Dropout(F.ones_like(like), p=p)``: a dropout mask shaped like ``like``. At ``p=1``
    Dropout gives NaN in training, as MXNet's does; the recurrent cells' documented maths
    wants a zero mask there, so NaN entries become 0 (ones in predict mode stay ones)."""
    mask = F.Dropout(F.ones_like(like), p=p)
    if p >= 1:
        mask = F.where(mask == mask, mask, F.zeros_like(mask))
    return mask


class DropoutCell(HybridRecurrentCell):
    """Applies dropout to the input of each step (no state).

    Parameters
    ----------
    rate : float
    axes : tuple of int, default ()
    """

    def __init__(self, rate, axes=(), prefix=None, params=None):
        super().__init__(prefix, params)
        if not isinstance(rate, (int, float)):
            raise AssertionError("rate must be a number")
        self._rate = rate
        self._axes = axes

    def __repr__(self):
        return f"{type(self).__name__}(rate={self._rate}, axes={self._axes})"

    def state_info(self, batch_size=0):
        return []

    def _alias(self):
        return "dropout"

    def hybrid_forward(self, F, inputs, states):
        if self._rate > 0:
            inputs = F.Dropout(data=inputs, p=self._rate, axes=self._axes,
                               name=f"t{self._counter}_fwd")
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, _, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, _TENSORS):
            return self.hybrid_forward(_F_of(inputs), inputs, begin_state if begin_state else [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs, valid_length=valid_length)


class ModifierCell(HybridRecurrentCell):
    """Base class of cells that wrap a base cell and change what it computes (zoneout,
    residual connection, dropout). The wrapper shares the base cell's parameters; once
    wrapped, the base cell's ``begin_state`` must be reached through the wrapper.

    Parameters
    ----------
    base_cell : RecurrentCell
    """

    def __init__(self, base_cell):
        if base_cell._modified:
            raise AssertionError(f"Cell {base_cell.name} is already modified. One cell cannot "
                                 "be modified twice")
        base_cell._modified = True
        super().__init__(prefix=base_cell.prefix + self._alias(), params=None)
        self.base_cell = base_cell

    @property
    def params(self):
        return self.base_cell.params

    def state_info(self, batch_size=0):
        return self.base_cell.state_info(batch_size)

    def begin_state(self, func=_nd.zeros, **kwargs):
        if self._modified:
            raise AssertionError("After applying modifier cells (e.g. DropoutCell) the base "
                                 "cell cannot be called directly. Call the modifier cell "
                                 "instead.")
        self.base_cell._modified = False
        begin = self.base_cell.begin_state(func=func, **kwargs)
        self.base_cell._modified = True
        return begin

    def hybrid_forward(self, F, inputs, states):
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}({self.base_cell})"


_ModifierCell = ModifierCell


class _StatefulModifierCell(ModifierCell):
    """A modifier whose step depends on Python-side state kept between steps (the previous
    output, masks drawn at the first step): a captured graph would freeze that state, so these
    cells always run imperatively and only their base cell is hybridized."""

    def hybridize(self, active=True, **kwargs):
        self.base_cell.hybridize(active, **kwargs)


class ZoneoutCell(_StatefulModifierCell):
    """Zoneout (Krueger et al., 2016) on a base cell: in training, each element of the output
    and of the states keeps its previous value with probability ``zoneout_outputs`` /
    ``zoneout_states`` instead of taking the new one. In predict mode the base cell's values
    pass through unchanged.

    Parameters
    ----------
    base_cell : RecurrentCell
        A cell that can be stepped (not a :class:`BidirectionalCell`).
    zoneout_outputs : float, default 0.
        Probability of keeping the previous output (the first step's "previous" is zeros).
    zoneout_states : float, default 0.
        Probability of keeping each element of the previous states.
    """

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        if isinstance(base_cell, BidirectionalCell):
            raise AssertionError("BidirectionalCell doesn't support zoneout since it doesn't "
                                 "support step. Please add ZoneoutCell to the cells underneath "
                                 "instead.")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self._prev_output = None

    def __repr__(self):
        return (f"{type(self).__name__}(p_out={self.zoneout_outputs}, "
                f"p_state={self.zoneout_states}, {self.base_cell})")

    def _alias(self):
        return "zoneout"

    def reset(self):
        super().reset()
        self._prev_output = None

    def hybrid_forward(self, F, inputs, states):
        p_out, p_state = self.zoneout_outputs, self.zoneout_states
        next_output, next_states = self.base_cell(inputs, states)

        def keep_new(p, like):
            # Dropout of ones: nonzero (take the new value) with probability 1 - p in
            # training, all ones (always the new value) in predict mode.
            return _dropout_mask(F, like, p)

        prev_output = self._prev_output
        if prev_output is None:
            prev_output = F.zeros_like(next_output)
        output = (F.where(keep_new(p_out, next_output), next_output, prev_output)
                  if p_out != 0. else next_output)
        new_states = ([F.where(keep_new(p_state, new), new, old)
                       for new, old in zip(next_states, states)]
                      if p_state != 0. else next_states)
        self._prev_output = output
        return output, new_states


class ResidualCell(ModifierCell):
    """Adds each step's input to the base cell's output."""

    def _alias(self):
        return "residual"

    def hybrid_forward(self, F, inputs, states):
        output, states = self.base_cell(inputs, states)
        return F.elemwise_add(output, inputs, name=f"t{self._counter}_fwd"), states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        # The base cell runs its own unroll (a BidirectionalCell cannot be stepped), then the
        # inputs are added to its outputs in whichever form they came back.
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs,
                                                    begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs,
                                                    valid_length=valid_length)
        finally:
            self.base_cell._modified = True
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, _TENSORS)
        inputs, axis, _ = _format_sequence(length, inputs, layout, merge_outputs)
        F = _F_of(inputs)
        if valid_length is not None:
            inputs = _mask_sequence_variable_length(inputs, length, valid_length, axis,
                                                    merge_outputs)
        if merge_outputs:
            return F.elemwise_add(outputs, inputs), states
        return [F.elemwise_add(o, i) for o, i in zip(outputs, inputs)], states


def _reverse_valid(F, steps, valid_length, length):
    """The ``length`` steps with each sequence's first ``valid_length`` reversed in time."""
    parts = F.split(F.SequenceReverse(F.stack(*steps, axis=0), sequence_length=valid_length,
                                      use_sequence_length=True),
                    axis=0, num_outputs=length, squeeze_axis=True)
    # (a Symbol with several outputs is one object: take the outputs one by one)
    return [parts[i] for i in range(length)] if isinstance(parts, Symbol) else _as_list(parts)


class BidirectionalCell(HybridRecurrentCell):
    """Runs one cell forward and another backward in time; outputs are concatenated.

    Only :meth:`unroll` is supported.
    """

    def __init__(self, l_cell, r_cell, output_prefix="bi_"):
        super().__init__(prefix="", params=None)
        self.register_child(l_cell, "l_cell")
        self.register_child(r_cell, "r_cell")
        self._output_prefix = output_prefix

    def __repr__(self):
        l_cell, r_cell = self._children.values()
        return f"{type(self).__name__}(forward={l_cell}, backward={r_cell})"

    def __call__(self, inputs, states):
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")

    def state_info(self, batch_size=0):
        return [s for c in self._children.values() for s in c.state_info(batch_size)]

    def begin_state(self, **kwargs):
        return [s for c in self._children.values() for s in c.begin_state(**kwargs)]

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, axis, batch_size = _format_sequence(length, inputs, layout, False)
        F = _F_of(inputs)
        reversed_inputs = list(reversed(inputs)) if valid_length is None else \
            _reverse_valid(F, inputs, valid_length, length)
        if begin_state is None:
            begin_state = _begin_state(self, F, inputs, batch_size)
        states = begin_state
        l_cell, r_cell = self._children.values()
        nl = len(l_cell.state_info(batch_size))
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:nl],
                                            layout=layout, merge_outputs=merge_outputs,
                                            valid_length=valid_length)
        r_outputs, r_states = r_cell.unroll(length, inputs=reversed_inputs,
                                            begin_state=states[nl:], layout=layout,
                                            merge_outputs=False, valid_length=valid_length)
        reversed_r = list(reversed(r_outputs)) if valid_length is None else \
            _reverse_valid(F, r_outputs, valid_length, length)
        if merge_outputs is None:
            merge_outputs = isinstance(l_outputs, _TENSORS)
            l_outputs, _, _ = _format_sequence(None, l_outputs, layout, merge_outputs)
        reversed_r, _, _ = _format_sequence(None, reversed_r, layout, merge_outputs)
        out = self._output_prefix
        if merge_outputs:
            outputs = F.concat(l_outputs, reversed_r, dim=2, **_named(F, f"{out}out"))
        else:
            outputs = [F.concat(l_o, r_o, dim=1, **_named(F, f"{out}t{i}"))
                       for i, (l_o, r_o) in enumerate(zip(l_outputs, reversed_r))]
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(outputs, length, valid_length, axis,
                                                     merge_outputs)
        return outputs, l_states + r_states

    def hybrid_forward(self, *args, **kwargs):
        raise NotImplementedError


# MXNet 1.9.1's private helpers of this module that recurrent cells of MXNet-era packages
# import (``from mxnet.gluon.rnn.rnn_cell import _cells_state_info, _get_begin_state``).
def _cells_state_info(cells, batch_size):
    """The ``state_info`` lists of ``cells`` concatenated."""
    return sum([c.state_info(batch_size) for c in cells], [])


def _cells_begin_state(cells, **kwargs):
    """The ``begin_state(**kwargs)`` lists of ``cells`` concatenated."""
    return sum([c.begin_state(**kwargs) for c in cells], [])


def _get_begin_state(cell, F, begin_state, inputs, batch_size):
    """``begin_state`` when given, else ``cell``'s zero states for ``batch_size`` (made with
    ``F.zeros``; for arrays on the context of ``inputs``, the first of them for a list)."""
    if begin_state is not None:
        return begin_state
    if F is _nd:
        ctx = inputs.context if isinstance(inputs, NDArray) else inputs[0].context
        with ctx:
            return cell.begin_state(func=F.zeros, batch_size=batch_size)
    return cell.begin_state(func=F.zeros, batch_size=batch_size)
