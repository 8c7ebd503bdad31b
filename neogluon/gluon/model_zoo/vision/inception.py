"""Inception v3 (Szegedy et al., 2015) with MXNet 1.x's structure and names."""
from __future__ import annotations

from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ...contrib.nn import HybridConcurrent
from ..model_store import get_model_file

__all__ = ["Inception3", "inception_v3"]


def _conv_bn(channels, kernel_size, strides=None, padding=None):
    """Convolution (no bias), batch norm (epsilon 1e-3), ReLU."""
    kw = {"channels": channels, "kernel_size": kernel_size}
    if strides is not None:
        kw["strides"] = strides
    if padding is not None:
        kw["padding"] = padding
    seq = nn.HybridSequential(prefix="")
    seq.add(nn.Conv2D(use_bias=False, **kw), nn.BatchNorm(epsilon=0.001), nn.Activation("relu"))
    return seq


def _branch(pool, *convs):
    """An optional pool ('avg': 3x3 stride 1 pad 1, 'max': 3x3 stride 2) then convolutions,
    each given as (channels, kernel, strides, padding) with None for the default."""
    seq = nn.HybridSequential(prefix="")
    if pool == "avg":
        seq.add(nn.AvgPool2D(pool_size=3, strides=1, padding=1))
    elif pool == "max":
        seq.add(nn.MaxPool2D(pool_size=3, strides=2))
    for c in convs:
        seq.add(_conv_bn(*c))
    return seq


def _mixed(prefix, *branches):
    block = HybridConcurrent(axis=1, prefix=prefix)
    with block.name_scope():
        for make in branches:
            block.add(make())
    return block


def _block_a(pool_features, prefix):
    return _mixed(prefix,
                  lambda: _branch(None, (64, 1)),
                  lambda: _branch(None, (48, 1), (64, 5, None, 2)),
                  lambda: _branch(None, (64, 1), (96, 3, None, 1), (96, 3, None, 1)),
                  lambda: _branch("avg", (pool_features, 1)))


def _block_b(prefix):
    return _mixed(prefix,
                  lambda: _branch(None, (384, 3, 2)),
                  lambda: _branch(None, (64, 1), (96, 3, None, 1), (96, 3, 2)),
                  lambda: _branch("max"))


def _block_c(c7, prefix):
    return _mixed(prefix,
                  lambda: _branch(None, (192, 1)),
                  lambda: _branch(None, (c7, 1), (c7, (1, 7), None, (0, 3)),
                                  (192, (7, 1), None, (3, 0))),
                  lambda: _branch(None, (c7, 1), (c7, (7, 1), None, (3, 0)),
                                  (c7, (1, 7), None, (0, 3)), (c7, (7, 1), None, (3, 0)),
                                  (192, (1, 7), None, (0, 3))),
                  lambda: _branch("avg", (192, 1)))


def _block_d(prefix):
    return _mixed(prefix,
                  lambda: _branch(None, (192, 1), (320, 3, 2)),
                  lambda: _branch(None, (192, 1), (192, (1, 7), None, (0, 3)),
                                  (192, (7, 1), None, (3, 0)), (192, 3, 2)),
                  lambda: _branch("max"))


def _split_1x3_3x1():
    split = HybridConcurrent(axis=1, prefix="")
    split.add(_branch(None, (384, (1, 3), None, (0, 1))),
              _branch(None, (384, (3, 1), None, (1, 0))))
    return split


def _block_e(prefix):
    def b3x3():
        seq = nn.HybridSequential(prefix="")
        seq.add(_branch(None, (384, 1)), _split_1x3_3x1())
        return seq

    def b3x3dbl():
        seq = nn.HybridSequential(prefix="")
        seq.add(_branch(None, (448, 1), (384, 3, None, 1)), _split_1x3_3x1())
        return seq

    return _mixed(prefix,
                  lambda: _branch(None, (320, 1)),
                  b3x3, b3x3dbl,
                  lambda: _branch("avg", (192, 1)))


class Inception3(HybridBlock):
    """Inception v3 (inputs 299x299).

    Parameters
    ----------
    classes : int, default 1000
    """

    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(_conv_bn(32, 3, 2), _conv_bn(32, 3), _conv_bn(64, 3, None, 1),
                              nn.MaxPool2D(pool_size=3, strides=2), _conv_bn(80, 1),
                              _conv_bn(192, 3), nn.MaxPool2D(pool_size=3, strides=2))
            self.features.add(_block_a(32, "A1_"), _block_a(64, "A2_"), _block_a(64, "A3_"),
                              _block_b("B_"))
            for c7, name in ((128, "C1_"), (160, "C2_"), (160, "C3_"), (192, "C4_")):
                self.features.add(_block_c(c7, name))
            self.features.add(_block_d("D_"), _block_e("E1_"), _block_e("E2_"),
                              nn.AvgPool2D(pool_size=8), nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def inception_v3(pretrained=False, ctx=None, root=None, **kwargs):
    """Inception v3; ``pretrained`` loads ``~/.mxnet/models/inceptionv3-<hash>.params``
    (never downloaded)."""
    net = Inception3(**kwargs)
    if pretrained:
        net.load_parameters(get_model_file("inceptionv3", root=root),
                            ctx=ctx if ctx is not None else cpu())
    return net
