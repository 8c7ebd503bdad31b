"""Convolutional recurrent cells (Shi et al., 2015), with MXNet 1.x's names: the
input-to-state and state-to-state transforms are convolutions instead of dense layers."""
from __future__ import annotations

from ...rnn.rnn_cell import HybridRecurrentCell

__all__ = ["Conv1DRNNCell", "Conv2DRNNCell", "Conv3DRNNCell",
           "Conv1DLSTMCell", "Conv2DLSTMCell", "Conv3DLSTMCell",
           "Conv1DGRUCell", "Conv2DGRUCell", "Conv3DGRUCell"]

_LAYOUTS = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


def _conv_out_size(dims, kernels, pads, dilates):
    return tuple(int(x + 2 * p - d * (k - 1) - 1) + 1 if x else 0
                 for x, k, p, d in zip(dims, kernels, pads, dilates))


class _BaseConvRNNCell(HybridRecurrentCell):
    """Shared set-up: parameter shapes from ``input_shape`` (without the batch axis), the
    convolution settings and the layout; ``h2h`` is padded to keep the state's size."""

    _gates = 1

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                 i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, dims, conv_layout, activation,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._hidden_channels = hidden_channels
        self._input_shape = input_shape
        self._conv_layout = conv_layout
        self._activation = activation
        specs = [i2h_kernel, i2h_pad, i2h_dilate, h2h_kernel, h2h_dilate]
        if not all(isinstance(s, int) or len(s) == dims for s in specs):
            raise AssertionError(f"For {dims}D convolution, the convolution settings can only "
                                 f"be either int or list/tuple of length {dims}")

        def tup(v):
            return (v,) * dims if isinstance(v, int) else tuple(v)
        self._i2h_kernel, self._i2h_pad, self._i2h_dilate = (tup(i2h_kernel), tup(i2h_pad),
                                                             tup(i2h_dilate))
        self._h2h_kernel, self._h2h_dilate = tup(h2h_kernel), tup(h2h_dilate)
        self._stride = (1,) * dims
        if not all(k % 2 == 1 for k in self._h2h_kernel):
            raise AssertionError(f"Only support odd number, get h2h_kernel= {h2h_kernel}")
        cax = conv_layout.find("C")
        self._channel_axis = cax
        in_channels = input_shape[cax - 1]
        spatial = tuple(input_shape[1:]) if cax == 1 else tuple(input_shape[:-1])
        out_size = _conv_out_size(spatial, self._i2h_kernel, self._i2h_pad, self._i2h_dilate)
        self._h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(self._h2h_dilate,
                                                               self._h2h_kernel))
        total = hidden_channels * self._gates
        if cax == 1:
            i2h_shape = (total, in_channels) + self._i2h_kernel
            h2h_shape = (total, hidden_channels) + self._h2h_kernel
            self._state_shape = (hidden_channels,) + out_size
        else:
            i2h_shape = (total,) + self._i2h_kernel + (in_channels,)
            h2h_shape = (total,) + self._h2h_kernel + (hidden_channels,)
            self._state_shape = out_size + (hidden_channels,)
        self._in_channels = in_channels
        self.i2h_weight = self.params.get("i2h_weight", shape=i2h_shape,
                                          init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=h2h_shape,
                                          init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(total,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(total,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def __repr__(self):
        shape = self.i2h_weight.shape
        in_channels = shape[1 if self._channel_axis == 1 else -1]
        return (f"{type(self).__name__}({in_channels if in_channels else None} -> {shape[0]}, "
                f"{self._activation}, {self._conv_layout})")

    def state_info(self, batch_size=0):
        info = {"shape": (batch_size,) + self._state_shape, "__layout__": self._conv_layout}
        return [dict(info) for _ in range(self._num_states)]

    _num_states = 1

    def infer_shape(self, inputs, *args):
        shape = list(self.i2h_weight.shape)
        shape[1 if self._channel_axis == 1 else -1] = inputs.shape[self._channel_axis]
        self.i2h_weight.shape = tuple(shape)

    def _convs(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        n = self._hidden_channels * self._gates
        i2h = F.Convolution(inputs, i2h_weight, i2h_bias, num_filter=n,
                            kernel=self._i2h_kernel, stride=self._stride, pad=self._i2h_pad,
                            dilate=self._i2h_dilate, layout=self._conv_layout,
                            name=f"t{self._counter}_i2h")
        h2h = F.Convolution(states[0], h2h_weight, h2h_bias, num_filter=n,
                            kernel=self._h2h_kernel, stride=self._stride, pad=self._h2h_pad,
                            dilate=self._h2h_dilate, layout=self._conv_layout,
                            name=f"t{self._counter}_h2h")
        return i2h, h2h


class _ConvRNNCell(_BaseConvRNNCell):
    def _alias(self):
        return "conv_rnn"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        i2h, h2h = self._convs(F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias)
        # Node names as in MXNet's graphs (t<step>_out ...) for symbolic unrolls.
        output = self._get_activation(F, i2h + h2h, self._activation,
                                      name=f"t{self._counter}_out")
        return output, [output]


class _ConvLSTMCell(_BaseConvRNNCell):
    _gates = 4
    _num_states = 2

    def _alias(self):
        return "conv_lstm"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        i2h, h2h = self._convs(F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias)
        t = f"t{self._counter}_"
        g = F.SliceChannel(i2h + h2h, num_outputs=4, axis=self._channel_axis, name=t + "slice")
        in_gate = F.Activation(g[0], act_type="sigmoid", name=t + "i")
        forget_gate = F.Activation(g[1], act_type="sigmoid", name=t + "f")
        in_transform = self._get_activation(F, g[2], self._activation, name=t + "c")
        out_gate = F.Activation(g[3], act_type="sigmoid", name=t + "o")
        next_c = F.elemwise_add(forget_gate * states[1], in_gate * in_transform,
                                name=t + "state")
        next_h = F.elemwise_mul(out_gate, self._get_activation(F, next_c, self._activation),
                                name=t + "out")
        return next_h, [next_h, next_c]


class _ConvGRUCell(_BaseConvRNNCell):
    _gates = 3

    def _alias(self):
        return "conv_gru"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        i2h, h2h = self._convs(F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias)
        t = f"t{self._counter}_"
        i2h_r, i2h_z, i2h = F.SliceChannel(i2h, num_outputs=3, axis=self._channel_axis,
                                           name=t + "i2h_slice")
        h2h_r, h2h_z, h2h = F.SliceChannel(h2h, num_outputs=3, axis=self._channel_axis,
                                           name=t + "h2h_slice")
        reset = F.Activation(i2h_r + h2h_r, act_type="sigmoid", name=t + "r_act")
        update = F.Activation(i2h_z + h2h_z, act_type="sigmoid", name=t + "z_act")
        cand = self._get_activation(F, i2h + reset * h2h, self._activation, name=t + "h_act")
        next_h = F.elemwise_add((1. - update) * cand, update * states[0], name=t + "out")
        return next_h, [next_h]


def _make(base, dims, kind):
    default_layout = _LAYOUTS[dims]

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel,
                 i2h_pad=(0,) * dims, i2h_dilate=(1,) * dims, h2h_dilate=(1,) * dims,
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 conv_layout=default_layout, activation="tanh", prefix=None, params=None):
        base.__init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                      i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                      i2h_bias_initializer, h2h_bias_initializer, dims, conv_layout,
                      activation, prefix=prefix, params=params)

    name = f"Conv{dims}D{kind}Cell"
    __init__.__doc__ = None
    doc = f"""{dims}-D convolutional {kind} cell.

    Parameters
    ----------
    input_shape : tuple of int
        Shape of one input without the batch axis, e.g. ``(C, {', '.join('XYZ'[:dims])})`` for
        layout '{default_layout}'.
    hidden_channels : int
    i2h_kernel, h2h_kernel : int or tuple of int
        Kernel sizes; ``h2h_kernel`` must be odd (the state keeps its size).
    i2h_pad, i2h_dilate, h2h_dilate : int or tuple of int
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
    conv_layout : str, default '{default_layout}'
    activation : str or Block, default 'tanh'
    prefix : str, optional
    params : ParameterDict, optional
    """
    return type(name, (base,), {"__init__": __init__, "__doc__": doc,
                                "__module__": __name__})


Conv1DRNNCell = _make(_ConvRNNCell, 1, "RNN")
Conv2DRNNCell = _make(_ConvRNNCell, 2, "RNN")
Conv3DRNNCell = _make(_ConvRNNCell, 3, "RNN")
Conv1DLSTMCell = _make(_ConvLSTMCell, 1, "LSTM")
Conv2DLSTMCell = _make(_ConvLSTMCell, 2, "LSTM")
Conv3DLSTMCell = _make(_ConvLSTMCell, 3, "LSTM")
Conv1DGRUCell = _make(_ConvGRUCell, 1, "GRU")
Conv2DGRUCell = _make(_ConvGRUCell, 2, "GRU")
Conv3DGRUCell = _make(_ConvGRUCell, 3, "GRU")
