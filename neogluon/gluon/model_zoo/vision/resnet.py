"""ResNet v1 and v2 (He et al., 2015 and 2016) with MXNet 1.x's block structure and names."""
from __future__ import annotations

from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ..model_store import get_model_file

__all__ = ["ResNetV1", "ResNetV2", "BasicBlockV1", "BasicBlockV2", "BottleneckV1",
           "BottleneckV2", "resnet18_v1", "resnet34_v1", "resnet50_v1", "resnet101_v1",
           "resnet152_v1", "resnet18_v2", "resnet34_v2", "resnet50_v2", "resnet101_v2",
           "resnet152_v2", "get_resnet"]


def _conv3x3(channels, stride, in_channels):
    return nn.Conv2D(channels, kernel_size=3, strides=stride, padding=1, use_bias=False,
                     in_channels=in_channels)


class _ResidualV1(HybridBlock):
    """A v1 residual block: ``relu(body(x) + shortcut(x))``, where the shortcut is the input or,
    with ``downsample``, a strided 1x1 convolution with batch norm. Subclasses build ``body``
    before calling :meth:`_add_downsample`, so children register in MXNet's order."""

    def _add_downsample(self, downsample, channels, stride, in_channels):
        if downsample:
            self.downsample = nn.HybridSequential(prefix="")
            self.downsample.add(nn.Conv2D(channels, kernel_size=1, strides=stride,
                                          use_bias=False, in_channels=in_channels),
                                nn.BatchNorm())
        else:
            self.downsample = None

    def hybrid_forward(self, F, x):
        residual = x
        x = self.body(x)
        if self.downsample:
            residual = self.downsample(residual)
        # operand order as in MXNet's blocks, so exported graphs list their nodes as MXNet's do
        if self._shortcut_first:
            return F.Activation(residual + x, act_type="relu")
        return F.Activation(x + residual, act_type="relu")


class BasicBlockV1(_ResidualV1):
    """Two 3x3 convolutions with batch norm, plus the (optionally projected) input."""
    _shortcut_first = True

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential(prefix="")
        self.body.add(_conv3x3(channels, stride, in_channels), nn.BatchNorm(),
                      nn.Activation("relu"), _conv3x3(channels, 1, channels), nn.BatchNorm())
        self._add_downsample(downsample, channels, stride, in_channels)


class BottleneckV1(_ResidualV1):
    """1x1 - 3x3 - 1x1 convolutions with batch norm, plus the (optionally projected) input."""
    _shortcut_first = False

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential(prefix="")
        self.body.add(nn.Conv2D(channels // 4, kernel_size=1, strides=stride), nn.BatchNorm(),
                      nn.Activation("relu"), _conv3x3(channels // 4, 1, channels // 4),
                      nn.BatchNorm(), nn.Activation("relu"),
                      nn.Conv2D(channels, kernel_size=1, strides=1), nn.BatchNorm())
        self._add_downsample(downsample, channels, stride, in_channels)


class BasicBlockV2(HybridBlock):
    """Pre-activation basic block: BN-ReLU-conv3x3 twice, plus the input."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = _conv3x3(channels, stride, in_channels)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels, 1, channels)
        if downsample:
            self.downsample = nn.Conv2D(channels, 1, stride, use_bias=False,
                                        in_channels=in_channels)
        else:
            self.downsample = None

    def hybrid_forward(self, F, x):
        residual = x
        x = self.bn1(x)
        x = F.Activation(x, act_type="relu")
        if self.downsample:
            residual = self.downsample(x)
        x = self.conv1(x)
        x = self.bn2(x)
        x = F.Activation(x, act_type="relu")
        x = self.conv2(x)
        return x + residual


class BottleneckV2(HybridBlock):
    """Pre-activation bottleneck block."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = nn.Conv2D(channels // 4, kernel_size=1, strides=1, use_bias=False)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels // 4, stride, channels // 4)
        self.bn3 = nn.BatchNorm()
        self.conv3 = nn.Conv2D(channels, kernel_size=1, strides=1, use_bias=False)
        if downsample:
            self.downsample = nn.Conv2D(channels, 1, stride, use_bias=False,
                                        in_channels=in_channels)
        else:
            self.downsample = None

    def hybrid_forward(self, F, x):
        residual = x
        x = self.bn1(x)
        x = F.Activation(x, act_type="relu")
        if self.downsample:
            residual = self.downsample(x)
        x = self.conv1(x)
        x = self.bn2(x)
        x = F.Activation(x, act_type="relu")
        x = self.conv2(x)
        x = self.bn3(x)
        x = F.Activation(x, act_type="relu")
        x = self.conv3(x)
        return x + residual


class ResNetV1(HybridBlock):
    """ResNet v1.

    Parameters
    ----------
    block : HybridBlock class
        BasicBlockV1 or BottleneckV1.
    layers : list of int
        Number of blocks per stage.
    channels : list of int
        Channels of the stem and of each stage.
    classes : int, default 1000
    thumbnail : bool, default False
        A 3x3 stem for small (32x32) images instead of 7x7 + max pooling.
    """

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        assert len(layers) == len(channels) - 1
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            if thumbnail:
                self.features.add(_conv3x3(channels[0], 1, 0))
            else:
                self.features.add(nn.Conv2D(channels[0], 7, 2, 3, use_bias=False))
                self.features.add(nn.BatchNorm())
                self.features.add(nn.Activation("relu"))
                self.features.add(nn.MaxPool2D(3, 2, 1))
            for i, num_layer in enumerate(layers):
                stride = 1 if i == 0 else 2
                self.features.add(self._make_layer(block, num_layer, channels[i + 1], stride,
                                                   i + 1, in_channels=channels[i]))
            self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.Dense(classes, in_units=channels[-1])

    def _make_layer(self, block, layers, channels, stride, stage_index, in_channels=0):
        layer = nn.HybridSequential(prefix=f"stage{stage_index}_")
        with layer.name_scope():
            layer.add(block(channels, stride, channels != in_channels, in_channels=in_channels,
                            prefix=""))
            for _ in range(layers - 1):
                layer.add(block(channels, 1, False, in_channels=channels, prefix=""))
        return layer

    def hybrid_forward(self, F, x):
        x = self.features(x)
        return self.output(x)


class ResNetV2(HybridBlock):
    """ResNet v2 (pre-activation); parameters as :class:`ResNetV1`."""

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        assert len(layers) == len(channels) - 1
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.BatchNorm(scale=False, center=False))
            if thumbnail:
                self.features.add(_conv3x3(channels[0], 1, 0))
            else:
                self.features.add(nn.Conv2D(channels[0], 7, 2, 3, use_bias=False))
                self.features.add(nn.BatchNorm())
                self.features.add(nn.Activation("relu"))
                self.features.add(nn.MaxPool2D(3, 2, 1))
            in_channels = channels[0]
            for i, num_layer in enumerate(layers):
                stride = 1 if i == 0 else 2
                self.features.add(self._make_layer(block, num_layer, channels[i + 1], stride,
                                                   i + 1, in_channels=in_channels))
                in_channels = channels[i + 1]
            self.features.add(nn.BatchNorm())
            self.features.add(nn.Activation("relu"))
            self.features.add(nn.GlobalAvgPool2D())
            self.features.add(nn.Flatten())
            self.output = nn.Dense(classes, in_units=in_channels)

    _make_layer = ResNetV1._make_layer

    def hybrid_forward(self, F, x):
        x = self.features(x)
        return self.output(x)


_SPEC = {18: ("basic_block", [2, 2, 2, 2], [64, 64, 128, 256, 512]),
         34: ("basic_block", [3, 4, 6, 3], [64, 64, 128, 256, 512]),
         50: ("bottle_neck", [3, 4, 6, 3], [64, 256, 512, 1024, 2048]),
         101: ("bottle_neck", [3, 4, 23, 3], [64, 256, 512, 1024, 2048]),
         152: ("bottle_neck", [3, 8, 36, 3], [64, 256, 512, 1024, 2048])}
_NETS = [ResNetV1, ResNetV2]
_BLOCKS = [{"basic_block": BasicBlockV1, "bottle_neck": BottleneckV1},
           {"basic_block": BasicBlockV2, "bottle_neck": BottleneckV2}]


def get_resnet(version, num_layers, pretrained=False, ctx=None, root=None, **kwargs):
    """ResNet ``version`` (1 or 2) with ``num_layers`` (18, 34, 50, 101, 152) layers.

    Parameters
    ----------
    pretrained : bool, default False
        Load ``~/.mxnet/models/resnet<n>_v<version>-<hash>.params`` (not downloaded: a clear
        error names the file when it is missing).
    ctx : Context, default cpu()
    root : str, optional
        Folder of the parameter files.
    """
    if num_layers not in _SPEC:
        raise AssertionError(f"Invalid number of layers: {num_layers}. Options are "
                             f"{str(list(_SPEC.keys()))}")
    if version not in (1, 2):
        raise AssertionError(f"Invalid resnet version: {version}. Options are 1 and 2.")
    block_type, layers, channels = _SPEC[num_layers]
    net = _NETS[version - 1](_BLOCKS[version - 1][block_type], layers, channels, **kwargs)
    if pretrained:
        path = get_model_file(f"resnet{num_layers}_v{version}", root=root)
        net.load_parameters(path, ctx=ctx if ctx is not None else cpu())
    return net


def _maker(version, n):
    def make(**kwargs):
        return get_resnet(version, n, **kwargs)
    make.__name__ = f"resnet{n}_v{version}"
    make.__doc__ = (f"ResNet-{n} v{version}. Keyword arguments as :func:`get_resnet` "
                    "(pretrained, ctx, root, classes, thumbnail, prefix).")
    return make


resnet18_v1 = _maker(1, 18)
resnet34_v1 = _maker(1, 34)
resnet50_v1 = _maker(1, 50)
resnet101_v1 = _maker(1, 101)
resnet152_v1 = _maker(1, 152)
resnet18_v2 = _maker(2, 18)
resnet34_v2 = _maker(2, 34)
resnet50_v2 = _maker(2, 50)
resnet101_v2 = _maker(2, 101)
resnet152_v2 = _maker(2, 152)
