"""MobileNet v1 (Howard et al., 2017) and v2 (Sandler et al., 2018) with MXNet 1.x's
structure and names."""
from __future__ import annotations

from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ..model_store import get_model_file

__all__ = ["MobileNet", "MobileNetV2", "mobilenet1_0", "mobilenet_v2_1_0", "mobilenet0_75",
           "mobilenet_v2_0_75", "mobilenet0_5", "mobilenet_v2_0_5", "mobilenet0_25",
           "mobilenet_v2_0_25", "get_mobilenet", "get_mobilenet_v2"]


class RELU6(HybridBlock):
    """``min(max(x, 0), 6)``, MobileNetV2's activation."""

    def hybrid_forward(self, F, x):
        return F.clip(x, 0, 6, name="relu6")


def _add_conv(out, channels=1, kernel=1, stride=1, pad=0, num_group=1, active=True,
              relu6=False):
    out.add(nn.Conv2D(channels, kernel, stride, pad, groups=num_group, use_bias=False))
    out.add(nn.BatchNorm(scale=True))
    if active:
        out.add(RELU6() if relu6 else nn.Activation("relu"))


def _add_conv_dw(out, dw_channels, channels, stride):
    _add_conv(out, channels=dw_channels, kernel=3, stride=stride, pad=1, num_group=dw_channels)
    _add_conv(out, channels=channels)


class MobileNet(HybridBlock):
    """MobileNet v1.

    Parameters
    ----------
    multiplier : float, default 1.0
        Width multiplier of every layer's channels.
    classes : int, default 1000
    """

    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                _add_conv(self.features, channels=int(32 * multiplier), kernel=3, pad=1,
                          stride=2)
                dw_channels = [int(x * multiplier) for x in
                               [32, 64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024]]
                channels = [int(x * multiplier) for x in
                            [64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024] * 2]
                strides = [1, 2] * 3 + [1] * 5 + [2, 1]
                for dwc, c, s in zip(dw_channels, channels, strides):
                    _add_conv_dw(self.features, dw_channels=dwc, channels=c, stride=s)
                self.features.add(nn.GlobalAvgPool2D())
                self.features.add(nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        x = self.features(x)
        return self.output(x)


class LinearBottleneck(HybridBlock):
    """MobileNetV2's inverted residual: 1x1 expansion by ``t``, 3x3 depthwise convolution
    (with ``stride``), linear 1x1 projection to ``channels``; the input is added back when the
    shapes allow (stride 1, same width).

    Parameters
    ----------
    in_channels, channels : int
    t : int
        Expansion ratio.
    stride : int
    """

    def __init__(self, in_channels, channels, t, stride, **kwargs):
        super().__init__(**kwargs)
        self.use_shortcut = stride == 1 and in_channels == channels
        wide = in_channels * t
        with self.name_scope():
            self.out = nn.HybridSequential()
            _add_conv(self.out, wide, relu6=True)
            _add_conv(self.out, wide, kernel=3, stride=stride, pad=1, num_group=wide,
                      relu6=True)
            _add_conv(self.out, channels, active=False, relu6=True)

    def hybrid_forward(self, F, x):
        out = self.out(x)
        return F.elemwise_add(out, x) if self.use_shortcut else out


class MobileNetV2(HybridBlock):
    """MobileNet v2.

    Parameters
    ----------
    multiplier : float, default 1.0
        Width multiplier of every layer's channels (the last convolution keeps 1280 channels
        unless the multiplier is above 1).
    classes : int, default 1000
    """

    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="features_")
            with self.features.name_scope():
                _add_conv(self.features, int(32 * multiplier), kernel=3, stride=2, pad=1,
                          relu6=True)
                widths = [32, 16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3 + [160] * 3 + \
                    [320]
                widths = [int(w * multiplier) for w in widths]
                ts = [1] + [6] * 16
                strides = [1, 2, 1, 2, 1, 1, 2] + [1] * 6 + [2] + [1] * 3
                for in_c, c, t, s in zip(widths[:-1], widths[1:], ts, strides):
                    self.features.add(LinearBottleneck(in_channels=in_c, channels=c, t=t,
                                                       stride=s))
                _add_conv(self.features, int(1280 * multiplier) if multiplier > 1.0 else 1280,
                          relu6=True)
                self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.HybridSequential(prefix="output_")
            with self.output.name_scope():
                self.output.add(nn.Conv2D(classes, 1, use_bias=False, prefix="pred_"),
                                nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def get_mobilenet(multiplier, pretrained=False, ctx=None, root=None, **kwargs):
    """MobileNet with width ``multiplier``; ``pretrained`` loads
    ``~/.mxnet/models/mobilenet<multiplier>-<hash>.params`` (never downloaded)."""
    net = MobileNet(multiplier, **kwargs)
    if pretrained:
        version = "1.0" if multiplier == 1.0 else str(multiplier)
        if multiplier in (0.5, 0.25, 0.75):
            version = {0.5: "0.5", 0.25: "0.25", 0.75: "0.75"}[multiplier]
        net.load_parameters(get_model_file(f"mobilenet{version}", root=root),
                            ctx=ctx if ctx is not None else cpu())
    return net


def mobilenet1_0(**kwargs):
    """MobileNet, multiplier 1.0."""
    return get_mobilenet(1.0, **kwargs)


def mobilenet0_75(**kwargs):
    """MobileNet, multiplier 0.75."""
    return get_mobilenet(0.75, **kwargs)


def mobilenet0_5(**kwargs):
    """MobileNet, multiplier 0.5."""
    return get_mobilenet(0.5, **kwargs)


def mobilenet0_25(**kwargs):
    """MobileNet, multiplier 0.25."""
    return get_mobilenet(0.25, **kwargs)


def _version_suffix(multiplier):
    # MXNet's file names: 1.0, 0.75, 0.5, 0.25
    suffix = f"{multiplier:.2f}"
    return suffix[:-1] if suffix in ("1.00", "0.50") else suffix


def get_mobilenet_v2(multiplier, pretrained=False, ctx=None, root=None, **kwargs):
    """MobileNetV2 with width ``multiplier``; ``pretrained`` loads
    ``~/.mxnet/models/mobilenetv2_<multiplier>-<hash>.params`` (never downloaded)."""
    net = MobileNetV2(multiplier, **kwargs)
    if pretrained:
        net.load_parameters(get_model_file(f"mobilenetv2_{_version_suffix(multiplier)}",
                                           root=root),
                            ctx=ctx if ctx is not None else cpu())
    return net


def mobilenet_v2_1_0(**kwargs):
    """MobileNetV2, multiplier 1.0."""
    return get_mobilenet_v2(1.0, **kwargs)


def mobilenet_v2_0_75(**kwargs):
    """MobileNetV2, multiplier 0.75."""
    return get_mobilenet_v2(0.75, **kwargs)


def mobilenet_v2_0_5(**kwargs):
    """MobileNetV2, multiplier 0.5."""
    return get_mobilenet_v2(0.5, **kwargs)


def mobilenet_v2_0_25(**kwargs):
    """MobileNetV2, multiplier 0.25."""
    return get_mobilenet_v2(0.25, **kwargs)
