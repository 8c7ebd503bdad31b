"""Deformable convolution layers (v1 and the modulated v2)."""
from __future__ import annotations

from ....base import numeric_types
from ...block import HybridBlock
from ...nn.activations import Activation

__all__ = ["DeformableConvolution", "ModulatedDeformableConvolution"]


class _DeformableBase(HybridBlock):
    _offset_per_tap = 2     # offset channels per kernel tap and deformable group
    _default_op = ""

    def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, num_deformable_group=1, layout="NCHW",
                 use_bias=True, in_channels=0, activation=None, weight_initializer=None,
                 bias_initializer="zeros", offset_weight_initializer="zeros",
                 offset_bias_initializer="zeros", offset_use_bias=True, op_name=None, adj=None,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        if layout != "NCHW":
            # MXNet accepts 'NHWC' here but its operator only computes NCHW.
            raise ValueError(f"{type(self).__name__}: only the 'NCHW' layout is supported, got "
                             f"{layout!r}")
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            if isinstance(kernel_size, numeric_types):
                kernel_size = (kernel_size,) * 2
            kernel_size = tuple(kernel_size)
            if len(kernel_size) != 2:
                raise ValueError(f"{type(self).__name__}: kernel_size must be 2-D, got "
                                 f"{kernel_size}")
            strides = (strides,) * 2 if isinstance(strides, numeric_types) else tuple(strides)
            padding = (padding,) * 2 if isinstance(padding, numeric_types) else tuple(padding)
            dilation = (dilation,) * 2 if isinstance(dilation, numeric_types) \
                else tuple(dilation)
            self._op_name = op_name or self._default_op
            self._groups = groups
            taps = kernel_size[0] * kernel_size[1]
            self._offset_channels = self._offset_per_tap * taps * num_deformable_group
            self.offset_split_index = 2 * taps * num_deformable_group
            self._kwargs_offset = {"kernel": kernel_size, "stride": strides, "dilate": dilation,
                                   "pad": padding, "num_filter": self._offset_channels,
                                   "num_group": groups, "no_bias": not offset_use_bias,
                                   "layout": layout}
            self._kwargs_deformable_conv = {"kernel": kernel_size, "stride": strides,
                                            "dilate": dilation, "pad": padding,
                                            "num_filter": channels, "num_group": groups,
                                            "num_deformable_group": num_deformable_group,
                                            "no_bias": not use_bias, "layout": layout}
            if adj:
                self._kwargs_offset["adj"] = adj
                self._kwargs_deformable_conv["adj"] = adj
            cin = in_channels // groups if in_channels else 0
            if self._offset_per_tap == 3:
                self._register_deformable(channels, cin, kernel_size, weight_initializer,
                                          use_bias, bias_initializer)
                self._register_offset(cin, kernel_size, offset_weight_initializer,
                                      offset_use_bias, offset_bias_initializer)
            else:
                self._register_offset(cin, kernel_size, offset_weight_initializer,
                                      offset_use_bias, offset_bias_initializer)
                self._register_deformable(channels, cin, kernel_size, weight_initializer,
                                          use_bias, bias_initializer)
            self.act = Activation(activation, prefix=activation + "_") if activation else None

    def _register_offset(self, cin, kernel_size, offset_weight_initializer, offset_use_bias,
                         offset_bias_initializer):
        self.offset_weight = self.params.get(
            "offset_weight", shape=(self._offset_channels, cin) + kernel_size,
            init=offset_weight_initializer, allow_deferred_init=True)
        if offset_use_bias:
            self.offset_bias = self.params.get("offset_bias",
                                               shape=(self._offset_channels,),
                                               init=offset_bias_initializer,
                                               allow_deferred_init=True)
        else:
            self.offset_bias = None

    def _register_deformable(self, channels, cin, kernel_size, weight_initializer, use_bias,
                             bias_initializer):
        self.deformable_conv_weight = self.params.get(
            "deformable_conv_weight", shape=(channels, cin) + kernel_size,
            init=weight_initializer, allow_deferred_init=True)
        if use_bias:
            self.deformable_conv_bias = self.params.get("deformable_conv_bias",
                                                        shape=(channels,),
                                                        init=bias_initializer,
                                                        allow_deferred_init=True)
        else:
            self.deformable_conv_bias = None

    def infer_shape(self, x, *args):
        cin = x.shape[1] // self._groups
        k = self._kwargs_deformable_conv["kernel"]
        self.offset_weight.shape = (self._offset_channels, cin) + k
        self.deformable_conv_weight.shape = (self._channels, cin) + k

    def _offsets(self, F, x, offset_weight, offset_bias):
        if offset_bias is None:
            return F.Convolution(x, offset_weight, cudnn_off=True, **self._kwargs_offset)
        return F.Convolution(x, offset_weight, offset_bias, cudnn_off=True,
                             **self._kwargs_offset)


class DeformableConvolution(_DeformableBase):
    """2-D deformable convolution (Dai et al., 2017, "Deformable Convolutional Networks").

    A regular convolution of the input predicts, for every output position and kernel tap, a
    (y, x) offset; the deformable convolution then samples the input at the shifted taps
    (bilinear interpolation) and applies ``deformable_conv_weight``.

    Parameters
    ----------
    channels : int
        Output channels.
    kernel_size, strides, padding, dilation : int or 2-tuple of int
    groups : int, default 1
        Convolution groups (of both the offset and the deformable convolution).
    num_deformable_group : int, default 1
        Channel groups that get their own offsets.
    layout : str, default 'NCHW'
        Only 'NCHW'.
    use_bias : bool, default True
    in_channels : int, default 0
        0 infers it from the first input.
    activation : str, optional
        Activation applied to the output.
    weight_initializer, bias_initializer : Initializer
        For the deformable convolution.
    offset_weight_initializer, offset_bias_initializer : Initializer, default 'zeros'
        For the offset convolution (zero offsets: starts as a regular convolution).
    offset_use_bias : bool, default True

    Inputs: ``(N, C, H, W)``. Output: ``(N, channels, Ho, Wo)``.
    """
    _default_op = "DeformableConvolution"

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight, offset_bias=None,
                       deformable_conv_bias=None):
        offset = self._offsets(F, x, offset_weight, offset_bias)
        if deformable_conv_bias is None:
            out = F.contrib.DeformableConvolution(data=x, offset=offset,
                                                  weight=deformable_conv_weight, name="fwd",
                                                  **self._kwargs_deformable_conv)
        else:
            out = F.contrib.DeformableConvolution(data=x, offset=offset,
                                                  weight=deformable_conv_weight,
                                                  bias=deformable_conv_bias, name="fwd",
                                                  **self._kwargs_deformable_conv)
        return self.act(out) if self.act else out

    def _alias(self):
        return "deformable_conv"

    def __repr__(self):
        kw = self._kwargs_deformable_conv
        s = f"{type(self).__name__}({{mapping}}, kernel_size={kw['kernel']}, stride={kw['stride']}"
        if kw["pad"] != (0, 0):
            s += f", padding={kw['pad']}"
        if kw["dilate"] != (1, 1):
            s += f", dilation={kw['dilate']}"
        if kw["num_group"] != 1:
            s += f", groups={kw['num_group']}"
        if self.deformable_conv_bias is None:
            s += ", bias=False"
        if self.act:
            s += f", {self.act}"
        shape = self.deformable_conv_weight.shape
        return (s + ")").format(mapping=f"{shape[1] if shape[1] else None} -> {shape[0]}")


class ModulatedDeformableConvolution(_DeformableBase):
    """2-D modulated deformable convolution (DCNv2, Zhu et al., 2019).

    As :class:`DeformableConvolution`, and the offset convolution also predicts a modulation
    ``2 * sigmoid(m)`` per tap that scales each sample.

    Parameters
    ----------
    Those of :class:`DeformableConvolution`.
    """
    _offset_per_tap = 3
    _default_op = "ModulatedDeformableConvolution"

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight, offset_bias=None,
                       deformable_conv_bias=None):
        offset = self._offsets(F, x, offset_weight, offset_bias)
        offset_t = F.slice_axis(offset, axis=1, begin=0, end=self.offset_split_index)
        mask = F.slice_axis(offset, axis=1, begin=self.offset_split_index, end=None)
        mask = F.sigmoid(mask) * 2
        kwargs = dict(data=x, offset=offset_t, mask=mask, weight=deformable_conv_weight,
                      name="fwd", **self._kwargs_deformable_conv)
        if deformable_conv_bias is not None:
            kwargs["bias"] = deformable_conv_bias
        out = F.contrib.ModulatedDeformableConvolution(**kwargs)
        return self.act(out) if self.act else out

    def _alias(self):
        return "modulated_deformable_conv"
