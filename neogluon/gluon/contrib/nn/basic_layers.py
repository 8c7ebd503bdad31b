"""Contributed layers of ``gluon.contrib.nn``."""
from __future__ import annotations

from ... import nn  # noqa: F401 - the Block machinery lives with gluon.nn
from ...block import Block
from .... import ndarray as nd

__all__ = ["SparseEmbedding"]


class SparseEmbedding(Block):
    """An embedding whose weight *and* gradient are row_sparse.

    Each forward pulls only the rows the batch uses (``weight.row_sparse_data(x)``), so a
    Trainer (which must hold this Parameter: it keeps the full table in its KVStore and updates
    it there, lazily) never moves the whole table.

    Parameters
    ----------
    input_dim : int
        Size of the vocabulary (rows of the table).
    output_dim : int
        Size of each embedding vector.
    dtype : str, default 'float32'
    weight_initializer : Initializer, optional

    Inputs: ``data`` of shape ``(x1, ..., xN-1)`` (ids). Output: ``(x1, ..., xN-1, output_dim)``.
    """

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None,
                 **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": True}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      grad_stype="row_sparse", stype="row_sparse")

    def forward(self, x):
        weight = self.weight.row_sparse_data(x)
        return nd.Embedding(x, weight, **self._kwargs)

    def __repr__(self):
        k = self._kwargs
        return f"{type(self).__name__}({k['input_dim']} -> {k['output_dim']}, {k['dtype']})"
