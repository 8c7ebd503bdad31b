"""Convolution, transposed convolution, pooling and padding layers (NC... layouts)."""
from __future__ import annotations

from ...base import numeric_types
from ..block import HybridBlock

__all__ = ["Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose",
           "Conv3DTranspose", "MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D", "AvgPool2D",
           "AvgPool3D", "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D",
           "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalAvgPool3D", "ReflectionPad2D"]


def _weight_shape(op_name, in_channels, channels, kernel, groups, layout):
    """MXNet's weight shape for Convolution/Deconvolution given the channel counts."""
    cin = in_channels // groups if in_channels else 0
    if op_name == "Convolution":
        if layout.find("C") == 1:
            return (channels, cin) + tuple(kernel)
        return (channels,) + tuple(kernel) + (cin,)
    # Deconvolution: (in_channels, channels // groups, *kernel)
    if layout.find("C") == 1:
        return (in_channels, channels // groups) + tuple(kernel)
    return (in_channels,) + tuple(kernel) + (channels // groups,)


class _Conv(HybridBlock):
    def __init__(self, channels, kernel_size, strides, padding, dilation, groups, layout,
                 in_channels=0, activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", op_name="Convolution", adj=None, prefix=None,
                 params=None):
        super().__init__(prefix=prefix, params=params)
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            n = len(kernel_size)
            if isinstance(strides, numeric_types):
                strides = (strides,) * n
            if isinstance(padding, numeric_types):
                padding = (padding,) * n
            if isinstance(dilation, numeric_types):
                dilation = (dilation,) * n
            self._op_name = op_name
            self._layout = layout
            self._groups = groups
            self._kwargs = {"kernel": tuple(kernel_size), "stride": tuple(strides),
                            "dilate": tuple(dilation), "pad": tuple(padding),
                            "num_filter": channels, "num_group": groups,
                            "no_bias": not use_bias, "layout": layout}
            if adj is not None:
                self._kwargs["adj"] = tuple(adj)
            self.weight = self.params.get(
                "weight", shape=_weight_shape(op_name, in_channels, channels, kernel_size,
                                              groups, layout),
                init=weight_initializer, allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get("bias", shape=(channels,), init=bias_initializer,
                                            allow_deferred_init=True)
            else:
                self.bias = None
            if activation is not None:
                from .activations import Activation
                self.act = Activation(activation, prefix=activation + "_")
            else:
                self.act = None

    def infer_shape(self, x, *args):
        c = x.shape[self._layout.find("C")]
        self.weight.shape = _weight_shape(self._op_name, c, self._channels,
                                          self._kwargs["kernel"], self._groups, self._layout)

    def hybrid_forward(self, F, x, weight, bias=None):
        op = getattr(F, self._op_name)
        if bias is None:
            out = op(x, weight, name="fwd", **self._kwargs)
        else:
            out = op(x, weight, bias, name="fwd", **self._kwargs)
        if self.act is not None:
            out = self.act(out)
        return out

    def _alias(self):
        return "conv"

    def __repr__(self):
        k = self._kwargs
        n = len(k["kernel"])
        s = f"{type(self).__name__}({{mapping}}, kernel_size={k['kernel']}, stride={k['stride']}"
        if k["pad"] != (0,) * n:
            s += f", padding={k['pad']}"
        if k["dilate"] != (1,) * n:
            s += f", dilation={k['dilate']}"
        if hasattr(self, "out_pad") and self.out_pad != (0,) * n:
            s += f", output_padding={self.out_pad}"
        if k["num_group"] != 1:
            s += f", groups={k['num_group']}"
        if self.bias is None:
            s += ", bias=False"
        if self.act:
            s += f", {self.act}"
        s += ")"
        shape = self.weight.shape
        return s.format(mapping=f"{shape[1] if shape[1] else None} -> {shape[0]}")


def _ktuple(kernel_size, n, what="kernel_size"):
    if isinstance(kernel_size, numeric_types):
        kernel_size = (kernel_size,) * n
    kernel_size = tuple(kernel_size)
    if len(kernel_size) != n:
        raise AssertionError(f"{what} must be a number or a list of {n} ints")
    return kernel_size


def _conv_doc(n, transpose):
    kind = "transposed convolution" if transpose else "convolution"
    return f"""{n}-D {kind} layer.

    Parameters
    ----------
    channels : int
        Number of output channels.
    kernel_size : int or tuple of {n} int
    strides, padding, dilation : int or tuple of {n} int
    {"output_padding : int or tuple, default 0" if transpose else ""}
    groups : int, default 1
    layout : str
        Channels-first ({'NCW' if n == 1 else 'NCHW' if n == 2 else 'NCDHW'}) by default.
    activation : str, optional
    use_bias : bool, default True
    weight_initializer, bias_initializer : Initializer or str
    in_channels : int, default 0
        0 infers it on the first forward.
    """


def _make_conv(n, transpose, default_layout):
    name = f"Conv{n}D" + ("Transpose" if transpose else "")

    def __init__(self, channels, kernel_size, strides=1, padding=0, *rest, **kwargs):
        names = (["output_padding"] if transpose else []) + [
            "dilation", "groups", "layout", "activation", "use_bias", "weight_initializer",
            "bias_initializer", "in_channels"]
        defaults = {"output_padding": 0, "dilation": 1, "groups": 1, "layout": default_layout,
                    "activation": None, "use_bias": True, "weight_initializer": None,
                    "bias_initializer": "zeros", "in_channels": 0}
        if len(rest) > len(names):
            raise TypeError(f"{name}() takes at most {4 + len(names)} positional arguments")
        opts = dict(defaults)
        for k, v in zip(names, rest):
            opts[k] = v
        for k in list(kwargs):
            if k in defaults:
                opts[k] = kwargs.pop(k)
        kernel_size = _ktuple(kernel_size, n)
        op_name = kwargs.pop("op_name", "Deconvolution" if transpose else "Convolution")
        adj = None
        if transpose:
            adj = _ktuple(opts["output_padding"], n, "output_padding")
        _Conv.__init__(self, channels, kernel_size, strides, padding, opts["dilation"],
                       opts["groups"], opts["layout"], opts["in_channels"], opts["activation"],
                       opts["use_bias"], opts["weight_initializer"], opts["bias_initializer"],
                       op_name, adj, **kwargs)
        if transpose:
            self.outpad = adj

    cls = type(name, (_Conv,), {"__init__": __init__, "__doc__": _conv_doc(n, transpose),
                                "__module__": __name__})
    return cls


Conv1D = _make_conv(1, False, "NCW")
Conv2D = _make_conv(2, False, "NCHW")
Conv3D = _make_conv(3, False, "NCDHW")
Conv1DTranspose = _make_conv(1, True, "NCW")
Conv2DTranspose = _make_conv(2, True, "NCHW")
Conv3DTranspose = _make_conv(3, True, "NCDHW")


class _Pooling(HybridBlock):
    def __init__(self, pool_size, strides, padding, ceil_mode, global_pool, pool_type, layout,
                 count_include_pad=None, **kwargs):
        super().__init__(**kwargs)
        if strides is None:
            strides = pool_size
        if isinstance(strides, numeric_types):
            strides = (strides,) * len(pool_size)
        if isinstance(padding, numeric_types):
            padding = (padding,) * len(pool_size)
        self._kwargs = {"kernel": tuple(pool_size), "stride": tuple(strides),
                        "pad": tuple(padding), "global_pool": global_pool,
                        "pool_type": pool_type, "layout": layout,
                        "pooling_convention": "full" if ceil_mode else "valid"}
        if count_include_pad is not None:
            self._kwargs["count_include_pad"] = count_include_pad

    def _alias(self):
        return "pool"

    def hybrid_forward(self, F, x):
        return F.Pooling(x, name="fwd", **self._kwargs)

    def __repr__(self):
        k = self._kwargs
        return (f"{type(self).__name__}(size={k['kernel']}, stride={k['stride']}, "
                f"padding={k['pad']}, ceil_mode={k['pooling_convention'] == 'full'}, "
                f"global_pool={k['global_pool']}, pool_type={k['pool_type']}, "
                f"layout={k['layout']})")


_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def _make_pool(n, pool_type):
    name = f"{pool_type.capitalize()}Pool{n}D"
    default_layout = _LAYOUTS[n][0]

    def __init__(self, pool_size=2, strides=None, padding=0, layout=default_layout,
                 ceil_mode=False, *rest, **kwargs):
        if layout not in _LAYOUTS[n]:
            raise AssertionError(f"Only {' and '.join(_LAYOUTS[n])} layouts are valid for {n}D "
                                 "Pooling")
        pool_size = _ktuple(pool_size, n, "pool_size")
        cip = None
        if pool_type == "avg":
            cip = rest[0] if rest else kwargs.pop("count_include_pad", True)
        _Pooling.__init__(self, pool_size, strides, padding, ceil_mode, False, pool_type,
                          layout, cip, **kwargs)

    return type(name, (_Pooling,), {
        "__init__": __init__, "__module__": __name__,
        "__doc__": f"""{n}-D {pool_type} pooling.

    Parameters
    ----------
    pool_size : int or tuple of {n} int, default 2
    strides : int or tuple, default pool_size
    padding : int or tuple, default 0
    layout : str, default '{default_layout}'
    ceil_mode : bool, default False
        Round the output size up instead of down.
    {"count_include_pad : bool, default True" if pool_type == "avg" else ""}
    """})


def _make_global_pool(n, pool_type):
    name = f"Global{pool_type.capitalize()}Pool{n}D"
    default_layout = _LAYOUTS[n][0]

    def __init__(self, layout=default_layout, **kwargs):
        if layout not in _LAYOUTS[n]:
            raise AssertionError(f"Only {' and '.join(_LAYOUTS[n])} layouts are valid for {n}D "
                                 "Pooling")
        _Pooling.__init__(self, (1,) * n, None, 0, True, True, pool_type, layout, **kwargs)

    return type(name, (_Pooling,), {
        "__init__": __init__, "__module__": __name__,
        "__doc__": f"Global {n}-D {pool_type} pooling: output size 1 on each spatial axis."})


MaxPool1D = _make_pool(1, "max")
MaxPool2D = _make_pool(2, "max")
MaxPool3D = _make_pool(3, "max")
AvgPool1D = _make_pool(1, "avg")
AvgPool2D = _make_pool(2, "avg")
AvgPool3D = _make_pool(3, "avg")
GlobalMaxPool1D = _make_global_pool(1, "max")
GlobalMaxPool2D = _make_global_pool(2, "max")
GlobalMaxPool3D = _make_global_pool(3, "max")
GlobalAvgPool1D = _make_global_pool(1, "avg")
GlobalAvgPool2D = _make_global_pool(2, "avg")
GlobalAvgPool3D = _make_global_pool(3, "avg")


class ReflectionPad2D(HybridBlock):
    """Pads the two spatial axes of an NCHW input by reflection.

    Parameters
    ----------
    padding : int or tuple of 8 int
        An int pads each side of H and W by that much.
    """

    def __init__(self, padding=0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(padding, numeric_types):
            padding = (0, 0, 0, 0, padding, padding, padding, padding)
        if len(padding) != 8:
            raise AssertionError("padding must be an int or a tuple of 8 ints")
        self._padding = tuple(padding)

    def hybrid_forward(self, F, x):
        return F.pad(x, mode="reflect", pad_width=self._padding)
