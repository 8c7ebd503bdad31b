"""Where pretrained parameter files live (no downloading: the file must already be there)."""
from __future__ import annotations

import glob
import os

from ...base import MXNetError

# MXNet 1.9.1's published short hashes, which make up the file names it stores.
_SHORT_HASH = {
    "alexnet": "44335d1f",
    "resnet18_v1": "a0666292", "resnet34_v1": "48216ba9", "resnet50_v1": "0aee57f9",
    "resnet101_v1": "d988c13d", "resnet152_v1": "671c637a", "resnet18_v2": "a81db45f",
    "resnet34_v2": "9d6b80bb", "resnet50_v2": "ecdde353", "resnet101_v2": "18e93e4f",
    "resnet152_v2": "f2695542", "mobilenet1.0": "6b8c5106", "mobilenet0.75": "529b2c7f",
    "mobilenet0.5": "8e9d539c", "mobilenet0.25": "9f83e440", "vgg11": "dd221b16",
    "vgg13": "6bc5de58", "vgg16": "e660d456", "vgg19": "ad2f660d", "vgg11_bn": "ee79a809",
    "vgg13_bn": "7d97a06c", "vgg16_bn": "7f01cf05", "vgg19_bn": "f360b758",
    "densenet121": "f27dbf2d", "densenet161": "b6c8a957", "densenet169": "2603f878",
    "densenet201": "1cdbc116", "inceptionv3": "ed47ec45", "mobilenetv2_1.0": "36da4ff1",
    "mobilenetv2_0.75": "e2be7b72", "mobilenetv2_0.5": "aabd26cd",
    "mobilenetv2_0.25": "ae8f9392", "squeezenet1.0": "264ba497", "squeezenet1.1": "33ba0f93",
}

# name -> full SHA-1 of the file. MXNet keeps its own models' hashes here and libraries add
# theirs (GluonNLP's BERT, Transformer and language models); file names use the first 8 digits.
_model_sha1 = {}


def short_hash(name):
    """The 8-digit hash in the file name of the pretrained model ``name``."""
    if name in _SHORT_HASH:
        return _SHORT_HASH[name]
    if name not in _model_sha1:
        raise ValueError(f"Pretrained model for {name} is not available.")
    return _model_sha1[name][:8]


def data_dir():
    """``$MXNET_HOME``, or ``~/.mxnet``."""
    return os.environ.get("MXNET_HOME", os.path.join(os.path.expanduser("~"), ".mxnet"))


def get_model_file(name, root=None):
    """Path of the pretrained parameter file for ``name`` under ``root`` (default
    ``~/.mxnet/models``).

    neogluon does not download: when the file is not there, a clear error names it.
    """
    root = os.path.expanduser(root if root is not None else os.path.join(data_dir(), "models"))
    short = _SHORT_HASH.get(name) or (_model_sha1.get(name) or "")[:8] or None
    expected = os.path.join(root, f"{name}-{short}.params" if short else f"{name}-*.params")
    if short and os.path.exists(expected):
        return expected
    found = sorted(glob.glob(os.path.join(root, f"{name}-*.params")))
    if found:
        return found[0]
    raise MXNetError(
        f"Pretrained weights for {name!r} are not available: neogluon does not download them. "
        f"Put MXNet's parameter file at {expected} (for example, copy it from a machine where "
        f"MXNet's model zoo downloaded it) and call again.")


def purge(root=None):
    """Delete every ``.params`` file in ``root`` (default ``$MXNET_HOME/models``), as MXNet's
    ``model_store.purge`` clears its download cache."""
    root = os.path.expanduser(root if root is not None else os.path.join(data_dir(), "models"))
    for fname in os.listdir(root):
        if fname.endswith(".params"):
            os.remove(os.path.join(root, fname))
