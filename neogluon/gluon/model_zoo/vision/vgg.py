"""VGG (Simonyan and Zisserman, 2014) with MXNet 1.x's structure, initialisers and names."""
from __future__ import annotations

from ....context import cpu
from .... import initializer
from ...block import HybridBlock
from ... import nn
from ..model_store import get_model_file

__all__ = ["VGG", "vgg11", "vgg13", "vgg16", "vgg19", "vgg11_bn", "vgg13_bn", "vgg16_bn",
           "vgg19_bn", "get_vgg"]


class VGG(HybridBlock):
    """VGG.

    Parameters
    ----------
    layers : list of int
        Convolutions per stage.
    filters : list of int
        Channels per stage.
    classes : int, default 1000
    batch_norm : bool, default False
    """

    def __init__(self, layers, filters, classes=1000, batch_norm=False, **kwargs):
        super().__init__(**kwargs)
        assert len(layers) == len(filters)
        with self.name_scope():
            self.features = self._make_features(layers, filters, batch_norm)
            self.features.add(nn.Dense(4096, activation="relu", weight_initializer="normal",
                                       bias_initializer="zeros"))
            self.features.add(nn.Dropout(rate=0.5))
            self.features.add(nn.Dense(4096, activation="relu", weight_initializer="normal",
                                       bias_initializer="zeros"))
            self.features.add(nn.Dropout(rate=0.5))
            self.output = nn.Dense(classes, weight_initializer="normal",
                                   bias_initializer="zeros")

    def _make_features(self, layers, filters, batch_norm):
        featurizer = nn.HybridSequential(prefix="")
        for i, num in enumerate(layers):
            for _ in range(num):
                featurizer.add(nn.Conv2D(filters[i], kernel_size=3, padding=1,
                                         weight_initializer=initializer.Xavier(
                                             rnd_type="gaussian", factor_type="out",
                                             magnitude=2),
                                         bias_initializer="zeros"))
                if batch_norm:
                    featurizer.add(nn.BatchNorm())
                featurizer.add(nn.Activation("relu"))
            featurizer.add(nn.MaxPool2D(strides=2))
        return featurizer

    def hybrid_forward(self, F, x):
        x = self.features(x)
        return self.output(x)


_SPEC = {11: ([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]),
         13: ([2, 2, 2, 2, 2], [64, 128, 256, 512, 512]),
         16: ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512]),
         19: ([2, 2, 4, 4, 4], [64, 128, 256, 512, 512])}


def get_vgg(num_layers, pretrained=False, ctx=None, root=None, **kwargs):
    """VGG with ``num_layers`` (11, 13, 16, 19) layers; ``batch_norm=True`` for the _bn
    variants. ``pretrained`` loads the file from ``~/.mxnet/models`` (never downloaded)."""
    if num_layers not in _SPEC:
        raise AssertionError(f"Invalid number of layers: {num_layers}. Options are "
                             f"{list(_SPEC)}")
    layers, filters = _SPEC[num_layers]
    net = VGG(layers, filters, **kwargs)
    if pretrained:
        name = f"vgg{num_layers}" + ("_bn" if kwargs.get("batch_norm") else "")
        net.load_parameters(get_model_file(name, root=root),
                            ctx=ctx if ctx is not None else cpu())
    return net


def _maker(n, bn):
    def make(**kwargs):
        if bn:
            kwargs["batch_norm"] = True
        return get_vgg(n, **kwargs)
    make.__name__ = f"vgg{n}" + ("_bn" if bn else "")
    make.__doc__ = f"VGG-{n}{' with batch norm' if bn else ''}; see :func:`get_vgg`."
    return make


vgg11 = _maker(11, False)
vgg13 = _maker(13, False)
vgg16 = _maker(16, False)
vgg19 = _maker(19, False)
vgg11_bn = _maker(11, True)
vgg13_bn = _maker(13, True)
vgg16_bn = _maker(16, True)
vgg19_bn = _maker(19, True)
