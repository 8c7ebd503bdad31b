"""SqueezeNet 1.0 and 1.1 (Iandola et al., 2016) with MXNet 1.x's structure and names."""
from __future__ import annotations

from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ...contrib.nn import HybridConcurrent
from ..model_store import get_model_file

__all__ = ["SqueezeNet", "squeezenet1_0", "squeezenet1_1", "get_squeezenet"]


def _conv_relu(channels, kernel_size, padding=0):
    seq = nn.HybridSequential(prefix="")
    seq.add(nn.Conv2D(channels, kernel_size, padding=padding), nn.Activation("relu"))
    return seq


def _fire(squeeze, expand1x1, expand3x3):
    """A fire module: a 1x1 squeeze, then 1x1 and 3x3 expands side by side (concatenated)."""
    fire = nn.HybridSequential(prefix="")
    fire.add(_conv_relu(squeeze, 1))
    expand = HybridConcurrent(axis=1, prefix="")
    expand.add(_conv_relu(expand1x1, 1), _conv_relu(expand3x3, 3, 1))
    fire.add(expand)
    return fire


def _pool():
    return nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True)


# (first convolution: channels, kernel) and the body after it: 'P' a pool, else a fire's
# (squeeze, expand) widths
_LAYOUT = {
    "1.0": ((96, 7), ["P", (16, 64), (16, 64), (32, 128), "P", (32, 128), (48, 192),
                      (48, 192), (64, 256), "P", (64, 256)]),
    "1.1": ((64, 3), ["P", (16, 64), (16, 64), "P", (32, 128), (32, 128), "P", (48, 192),
                      (48, 192), (64, 256), (64, 256)]),
}


class SqueezeNet(HybridBlock):
    """SqueezeNet.

    Parameters
    ----------
    version : {'1.0', '1.1'}
        1.1 computes 2.4x less than 1.0 for about the same accuracy.
    classes : int, default 1000
    """

    def __init__(self, version, classes=1000, **kwargs):
        super().__init__(**kwargs)
        if version not in _LAYOUT:
            raise AssertionError(f"Unsupported SqueezeNet version {version}:1.0 or 1.1 "
                                 "expected")
        (c0, k0), body = _LAYOUT[version]
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.Conv2D(c0, kernel_size=k0, strides=2), nn.Activation("relu"))
            for item in body:
                self.features.add(_pool() if item == "P" else _fire(item[0], item[1], item[1]))
            self.features.add(nn.Dropout(0.5))
            self.output = nn.HybridSequential(prefix="")
            self.output.add(nn.Conv2D(classes, kernel_size=1), nn.Activation("relu"),
                            nn.AvgPool2D(13), nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def get_squeezenet(version, pretrained=False, ctx=None, root=None, **kwargs):
    """SqueezeNet ``version`` ('1.0' or '1.1'); ``pretrained`` loads
    ``~/.mxnet/models/squeezenet<version>-<hash>.params`` (never downloaded)."""
    net = SqueezeNet(version, **kwargs)
    if pretrained:
        net.load_parameters(get_model_file(f"squeezenet{version}", root=root),
                            ctx=ctx if ctx is not None else cpu())
    return net


def squeezenet1_0(**kwargs):
    """SqueezeNet 1.0."""
    return get_squeezenet("1.0", **kwargs)


def squeezenet1_1(**kwargs):
    """SqueezeNet 1.1."""
    return get_squeezenet("1.1", **kwargs)
