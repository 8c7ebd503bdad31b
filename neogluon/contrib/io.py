"""``mx.contrib.io``: a gluon ``DataLoader`` seen as an ``mx.io.DataIter``."""
from __future__ import annotations

from ..base import MXNetError
from ..io.io import DataDesc, DataIter
from .. import ndarray as nd

__all__ = ["DataLoaderIter"]


def _split(sample, position):
    if not isinstance(sample, (list, tuple)) or len(sample) != 2:
        raise MXNetError(f"DataLoaderIter: the loader's {position} batch must be a "
                         f"(data, label) pair, got {type(sample).__name__}"
                         + (f" of length {len(sample)}" if isinstance(sample, (list, tuple))
                            else ""))
    return sample[0], sample[1]


class DataLoaderIter(DataIter):
    """Iterate over a :class:`gluon.data.DataLoader` as an ``mx.io.DataIter`` (for the
    Module API and other ``DataBatch`` consumers).

    The first batch fixes ``batch_size``, ``provide_data`` and ``provide_label``. A shorter
    batch (the last one, when the loader keeps it) is padded up to ``batch_size``: the
    missing rows are zeros and ``DataBatch.pad`` says how many there are.

    Parameters
    ----------
    loader : gluon.data.DataLoader
        Yields ``(data, label)`` batches.
    data_name : str, default 'data'
    label_name : str, default 'softmax_label'
    dtype : str, default 'float32'
        Data and labels are cast to this type (e.g. 'float16').
    """

    def __init__(self, loader, data_name="data", label_name="softmax_label", dtype="float32"):
        super().__init__()
        self._loader = loader
        self._iter = iter(loader)
        try:
            first = next(self._iter)
        except StopIteration:
            raise MXNetError("DataLoaderIter: the loader yields no batch") from None
        data, label = _split(first, "first")
        self.batch_size = data.shape[0]
        self.dtype = dtype
        self.provide_data = [DataDesc(data_name, tuple(data.shape), dtype)]
        self.provide_label = [DataDesc(label_name, tuple(label.shape), dtype)]
        self._current_batch = None
        self.reset()

    def reset(self):
        self._iter = iter(self._loader)

    def iter_next(self):
        try:
            self._current_batch = _split(next(self._iter), "next")
        except StopIteration:
            self._current_batch = None
        return self._current_batch is not None

    def _padded(self, part):
        arr = part if isinstance(part, nd.NDArray) else nd.array(part)
        arr = arr.astype(self.dtype)
        pad = self.getpad()
        if not pad:
            return arr
        out = nd.zeros((self.batch_size,) + tuple(arr.shape[1:]), ctx=arr.context,
                       dtype=self.dtype)
        out[:arr.shape[0]] = arr
        return out

    def getdata(self):
        return [self._padded(self._current_batch[0])]

    def getlabel(self):
        return [self._padded(self._current_batch[1])]

    def getpad(self):
        return self.batch_size - self._current_batch[0].shape[0]

    def getindex(self):
        return None
