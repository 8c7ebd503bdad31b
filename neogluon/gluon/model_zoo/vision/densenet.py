"""DenseNet-BC (Huang et al., 2016) with MXNet 1.x's structure and names."""
from __future__ import annotations

from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ...contrib.nn import HybridConcurrent, Identity
from ..model_store import get_model_file

__all__ = ["DenseNet", "densenet121", "densenet161", "densenet169", "densenet201",
           "get_densenet"]

# depth -> (features of the first convolution, growth rate, layers in each dense block)
densenet_spec = {121: (64, 32, [6, 12, 24, 16]),
                 161: (96, 48, [6, 12, 36, 24]),
                 169: (64, 32, [6, 12, 32, 32]),
                 201: (64, 32, [6, 12, 48, 32])}


def _bn_relu_conv(seq, channels, kernel_size, padding=0):
    seq.add(nn.BatchNorm(), nn.Activation("relu"),
            nn.Conv2D(channels, kernel_size=kernel_size, padding=padding, use_bias=False))


def _dense_layer(growth_rate, bn_size, dropout):
    """The input, concatenated with ``growth_rate`` new feature maps computed from it."""
    new = nn.HybridSequential(prefix="")
    _bn_relu_conv(new, bn_size * growth_rate, 1)
    _bn_relu_conv(new, growth_rate, 3, 1)
    if dropout:
        new.add(nn.Dropout(dropout))
    layer = HybridConcurrent(axis=1, prefix="")
    layer.add(Identity(), new)
    return layer


def _dense_block(num_layers, bn_size, growth_rate, dropout, index):
    block = nn.HybridSequential(prefix=f"stage{index}_")
    with block.name_scope():
        for _ in range(num_layers):
            block.add(_dense_layer(growth_rate, bn_size, dropout))
    return block


def _transition(channels):
    seq = nn.HybridSequential(prefix="")
    _bn_relu_conv(seq, channels, 1)
    seq.add(nn.AvgPool2D(pool_size=2, strides=2))
    return seq


class DenseNet(HybridBlock):
    """DenseNet-BC.

    Parameters
    ----------
    num_init_features : int
        Filters of the first convolution.
    growth_rate : int
        Feature maps each dense layer adds (``k`` in the paper).
    block_config : list of int
        Layers in each dense block.
    bn_size : int, default 4
        The bottleneck 1x1 convolution has ``bn_size * growth_rate`` filters.
    dropout : float, default 0
        Dropout after each dense layer.
    classes : int, default 1000
    """

    def __init__(self, num_init_features, growth_rate, block_config, bn_size=4, dropout=0,
                 classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.Conv2D(num_init_features, kernel_size=7, strides=2, padding=3,
                                        use_bias=False),
                              nn.BatchNorm(), nn.Activation("relu"),
                              nn.MaxPool2D(pool_size=3, strides=2, padding=1))
            width = num_init_features
            for i, n in enumerate(block_config):
                self.features.add(_dense_block(n, bn_size, growth_rate, dropout, i + 1))
                width += n * growth_rate
                if i + 1 < len(block_config):
                    width //= 2
                    self.features.add(_transition(width))
            self.features.add(nn.BatchNorm(), nn.Activation("relu"), nn.AvgPool2D(pool_size=7),
                              nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def get_densenet(num_layers, pretrained=False, ctx=None, root=None, **kwargs):
    """DenseNet of depth ``num_layers`` (121, 161, 169 or 201); ``pretrained`` loads
    ``~/.mxnet/models/densenet<depth>-<hash>.params`` (never downloaded)."""
    if num_layers not in densenet_spec:
        raise ValueError(f"Invalid number of layers: {num_layers}. Options are "
                         f"{sorted(densenet_spec)}")
    init, growth, config = densenet_spec[num_layers]
    net = DenseNet(init, growth, config, **kwargs)
    if pretrained:
        net.load_parameters(get_model_file(f"densenet{num_layers}", root=root),
                            ctx=ctx if ctx is not None else cpu())
    return net


def densenet121(**kwargs):
    """DenseNet-121."""
    return get_densenet(121, **kwargs)


def densenet161(**kwargs):
    """DenseNet-161."""
    return get_densenet(161, **kwargs)


def densenet169(**kwargs):
    """DenseNet-169."""
    return get_densenet(169, **kwargs)


def densenet201(**kwargs):
    """DenseNet-201."""
    return get_densenet(201, **kwargs)
