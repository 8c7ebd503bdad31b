"""Contrib recurrent cells with MXNet 1.x's names: VariationalDropoutCell and LSTMPCell."""
from __future__ import annotations

from .... import ndarray as _nd
from ....ndarray.ndarray import NDArray
from ...rnn.rnn_cell import (BidirectionalCell, HybridRecurrentCell, _StatefulModifierCell,
                             _format_sequence, _mask_sequence_variable_length, _F_of,
                             _begin_state, _dropout_mask)

__all__ = ["VariationalDropoutCell", "LSTMPCell"]


def _shared_dropout(F, x, p, axis):
    """Dropout of ``x`` with one mask along ``axis``. Dropout itself gives NaN at ``p=1`` (as
    MXNet's); the cell's maths drops everything there (zero values and gradients)."""
    if p >= 1:
        mask = F.Dropout(F.ones_like(x), p=p, axes=(axis,))
        return x * F.where(mask == mask, mask, F.zeros_like(mask))
    return F.Dropout(x, p=p, axes=(axis,))


class VariationalDropoutCell(_StatefulModifierCell):
    """Variational dropout (Gal & Ghahramani, 2016) on a base cell: one dropout mask per
    sequence for the inputs, one for the first state (``h``) and one for the outputs, drawn at
    the first step and reused at every step until :meth:`reset` (which :meth:`unroll` calls).
    Only active in training mode.

    Parameters
    ----------
    base_cell : RecurrentCell
    drop_inputs : float, default 0.
        Dropout rate on the inputs (0: none).
    drop_states : float, default 0.
        Dropout rate on the first state.
    drop_outputs : float, default 0.
        Dropout rate on the outputs.

    Notes
    -----
    When stepping the cell by hand, call :meth:`reset` between sequences, or the masks of the
    previous sequence are reused.
    """

    def __init__(self, base_cell, drop_inputs=0., drop_states=0., drop_outputs=0.):
        if drop_states and isinstance(base_cell, BidirectionalCell):
            raise AssertionError("BidirectionalCell doesn't support variational state dropout. "
                                 "Please add VariationalDropoutCell to the cells underneath "
                                 "instead.")
        super().__init__(base_cell)
        self.drop_inputs = drop_inputs
        self.drop_states = drop_states
        self.drop_outputs = drop_outputs
        self.drop_inputs_mask = None
        self.drop_states_mask = None
        self.drop_outputs_mask = None

    def _alias(self):
        return "vardrop"

    def reset(self):
        super().reset()
        self.drop_inputs_mask = None
        self.drop_states_mask = None
        self.drop_outputs_mask = None

    def __repr__(self):
        return (f"{type(self).__name__}(p_out = {self.drop_outputs}, "
                f"p_state = {self.drop_states})")

    def hybrid_forward(self, F, inputs, states):
        if self.drop_states and self.drop_states_mask is None:
            self.drop_states_mask = _dropout_mask(F, states[0], self.drop_states)
        if self.drop_inputs and self.drop_inputs_mask is None:
            self.drop_inputs_mask = _dropout_mask(F, inputs, self.drop_inputs)
        if self.drop_states:
            states = list(states)
            # Only h (always the first state) is dropped, as in the paper.
            states[0] = states[0] * self.drop_states_mask
        if self.drop_inputs:
            inputs = inputs * self.drop_inputs_mask
        next_output, next_states = self.base_cell(inputs, states)
        if self.drop_outputs and self.drop_outputs_mask is None:
            self.drop_outputs_mask = _dropout_mask(F, next_output, self.drop_outputs)
        if self.drop_outputs:
            next_output = next_output * self.drop_outputs_mask
        return next_output, next_states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Run over ``length`` steps (see :meth:`RecurrentCell.unroll`).

        Without state dropout the input and output masks are applied to the whole sequence
        at once (dropout broadcast along the time axis), and the base cell is unrolled.
        """
        if self.drop_states:
            return super().unroll(length, inputs, begin_state, layout, merge_outputs,
                                  valid_length=valid_length)
        self.reset()
        inputs, axis, batch_size = _format_sequence(length, inputs, layout, True)
        F = _F_of(inputs)
        if begin_state is None:
            begin_state = _begin_state(self, F, inputs, batch_size)
        if self.drop_inputs:
            inputs = _shared_dropout(F, inputs, self.drop_inputs, axis)
        outputs, states = self.base_cell.unroll(length, inputs, begin_state, layout,
                                                merge_outputs=True, valid_length=valid_length)
        if self.drop_outputs:
            outputs = _shared_dropout(F, outputs, self.drop_outputs, axis)
        if merge_outputs is None:
            merge_outputs = not isinstance(outputs, (list, tuple))
        outputs, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(outputs, length, valid_length, axis,
                                                     merge_outputs)
        return outputs, states


class LSTMPCell(HybridRecurrentCell):
    r"""LSTM cell with a projected recurrent state (Sak et al., 2014).

    Each step computes, with gates in MXNet's order (input, forget, cell, output)::

        [i, f, g, o] = W_ih x + b_ih + W_hh r_{t-1} + b_hh
        c_t = sigmoid(f) * c_{t-1} + sigmoid(i) * tanh(g)
        h_t = sigmoid(o) * tanh(c_t)
        r_t = W_hr h_t

    The output and the first state are ``r_t`` (``projection_size`` wide), the second state
    is ``c_t`` (``hidden_size`` wide).

    Parameters
    ----------
    hidden_size : int
    projection_size : int
    i2h_weight_initializer, h2h_weight_initializer, h2r_weight_initializer : str or Initializer
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
    input_size : int, default 0
        0 infers it on the first forward.
    prefix : str, default 'lstmp_'
    params : ParameterDict, optional
    """

    def __init__(self, hidden_size, projection_size, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, h2r_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        self._projection_size = projection_size
        nh, npj = hidden_size, projection_size
        self.i2h_weight = self.params.get("i2h_weight", shape=(4 * nh, input_size),
                                          init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=(4 * nh, npj),
                                          init=h2h_weight_initializer, allow_deferred_init=True)
        self.h2r_weight = self.params.get("h2r_weight", shape=(npj, nh),
                                          init=h2r_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(4 * nh,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(4 * nh,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._projection_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self):
        return "lstmp"

    def __repr__(self):
        shape = self.i2h_weight.shape
        return (f"{type(self).__name__}({shape[1] if shape[1] else None} -> {shape[0]} -> "
                f"{self.h2r_weight.shape[0]})")

    def infer_shape(self, inputs, *args):
        self.i2h_weight.shape = (self.i2h_weight.shape[0], inputs.shape[1])

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, h2r_weight, i2h_bias,
                       h2h_bias):
        nh = self._hidden_size
        prefix = f"t{self._counter}_"  # MXNet's node names ('rnn_t0_out' is the output)
        i2h = F.FullyConnected(inputs, i2h_weight, i2h_bias, num_hidden=nh * 4,
                               name=prefix + "i2h")
        h2h = F.FullyConnected(states[0], h2h_weight, h2h_bias, num_hidden=nh * 4,
                               name=prefix + "h2h")
        gates = F.split(i2h + h2h, num_outputs=4, axis=1)
        in_gate = F.sigmoid(gates[0])
        forget_gate = F.sigmoid(gates[1])
        in_transform = F.tanh(gates[2])
        out_gate = F.sigmoid(gates[3])
        next_c = forget_gate * states[1] + in_gate * in_transform
        hidden = out_gate * F.tanh(next_c)
        next_r = F.FullyConnected(hidden, h2r_weight, num_hidden=self._projection_size,
                                  no_bias=True, name=prefix + "out")
        return next_r, [next_r, next_c]


def dynamic_unroll(cell, inputs, begin_state, drop_inputs=0, drop_outputs=0, layout="TNC",
                   valid_length=None):
    """Run ``cell`` over the time axis of ``inputs`` (MXNet runs it with ``contrib.foreach``).

    Parameters
    ----------
    cell : RecurrentCell
    inputs : NDArray
        ``(T, N, ...)`` for layout 'TNC', ``(N, T, ...)`` for 'NTC'.
    begin_state : list of NDArray
    drop_inputs, drop_outputs : float, default 0
        Dropout on the inputs / outputs, with one mask shared by all time steps.
    layout : {'TNC', 'NTC'}, default 'TNC'
    valid_length : NDArray, optional
        ``(N,)`` lengths: a sequence's states stop changing after its length and its outputs
        past it are 0.

    Returns
    -------
    outputs : NDArray
        In the layout of ``inputs``.
    states : list of NDArray
    """
    inputs, axis, _ = _format_sequence(0, inputs, layout, True)
    if axis != 0:
        inputs = _nd.swapaxes(inputs, 0, axis)
    if drop_inputs:
        # One mask for every step: broadcast along time (axis 0 here).
        inputs = _nd.Dropout(inputs, p=drop_inputs, axes=(0,))
    states = list(begin_state) if isinstance(begin_state, (list, tuple)) else [begin_state]
    outputs = []
    for t in range(inputs.shape[0]):
        out, new_states = cell(inputs[t], states)
        if valid_length is not None:
            alive = valid_length > t
            new_states = [_nd.where(_nd.broadcast_to(
                alive.reshape((-1,) + (1,) * (s.ndim - 1)), shape=s.shape), n, s)
                for n, s in zip(new_states, states)]
        outputs.append(out)
        states = list(new_states)
    outputs = _nd.stack(*outputs, axis=0)
    if drop_outputs:
        outputs = _nd.Dropout(outputs, p=drop_outputs, axes=(0,))
    if valid_length is not None:
        outputs = _nd.SequenceMask(outputs, sequence_length=valid_length,
                                   use_sequence_length=True, axis=0)
    if axis != 0:
        outputs = _nd.swapaxes(outputs, 0, axis)
    return outputs, states
