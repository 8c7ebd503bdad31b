"""``mxnet.gluon.contrib.data._constants``: the end-of-sentence token of the text datasets."""
from .text import EOS_TOKEN  # noqa: F401
