"""``gluon.contrib.nn``: contributed layers (so far :class:`SparseEmbedding`)."""
from .basic_layers import SparseEmbedding

__all__ = ["SparseEmbedding"]
