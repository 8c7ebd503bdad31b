"""Datasets: indexable collections of samples."""
from __future__ import annotations

import os

from ...ndarray.ndarray import NDArray

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset"]


class Dataset:
    """Base class of datasets: subclasses define ``__getitem__`` and ``__len__``.

    A numpy array or an NDArray can also be used directly wherever a dataset is expected.
    """

    def __getitem__(self, idx):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def filter(self, fn):
        """A dataset of the samples for which ``fn(sample)`` is true.

        The predicate runs once over every sample now. On a lazily transformed dataset it sees
        transformed samples, and the transform runs again whenever a sample is read later.

        Parameters
        ----------
        fn : callable
            Takes a sample, returns a bool.

        Returns
        -------
        Dataset
        """
        from .sampler import FilterSampler
        return _SampledDataset(self, FilterSampler(fn, self))

    def shard(self, num_shards, index):
        """Shard ``index`` of ``num_shards`` contiguous, near-equal parts of this dataset.

        The first ``len(self) % num_shards`` shards hold one sample more than the others.
        Shard before shuffling so that every worker gets a distinct subset.

        Parameters
        ----------
        num_shards : int
            Number of shards.
        index : int
            Which shard, in ``[0, num_shards)``.

        Returns
        -------
        Dataset
        """
        assert index < num_shards, f"Shard index of out bound: {index} out of {num_shards}"
        assert num_shards > 0, "Number of shards must be greater than 0"
        assert index >= 0, "Index must be non-negative"
        each, rest = divmod(len(self), num_shards)
        start = each * index + min(index, rest)
        stop = start + each + (index < rest)
        from .sampler import SequentialSampler
        return _SampledDataset(self, SequentialSampler(stop - start, start))

    def take(self, count):
        """A dataset of the first ``count`` samples (all of them if ``count`` is None or
        larger than the dataset).

        Parameters
        ----------
        count : int or None

        Returns
        -------
        Dataset
        """
        if count is None or count > len(self):
            count = len(self)
        from .sampler import SequentialSampler
        return _SampledDataset(self, SequentialSampler(count))

    def sample(self, sampler):
        """A dataset of the samples whose indices ``sampler`` yields.

        Parameters
        ----------
        sampler : Sampler

        Returns
        -------
        Dataset
        """
        from .sampler import Sampler
        if not isinstance(sampler, Sampler):
            raise TypeError(f"Invalid sampler type: {type(sampler)}. Expected "
                            "gluon.data.Sampler instead.")
        return _SampledDataset(self, sampler)

    def transform(self, fn, lazy=True):
        """A dataset whose samples are ``fn(sample)`` (``fn(*sample)`` for tuple samples).

        Parameters
        ----------
        fn : callable
            The transform.
        lazy : bool, default True
            Transform each sample when it is read. With False, every sample is transformed
            once now (so a random transform gives the same result every epoch).

        Returns
        -------
        Dataset
        """
        trans = _LazyTransformDataset(self, fn)
        if lazy:
            return trans
        return SimpleDataset([s for s in trans])

    def transform_first(self, fn, lazy=True):
        """Like :meth:`transform`, but ``fn`` is applied to the first element of each sample
        only (the data, leaving the label alone).

        Parameters
        ----------
        fn : callable
        lazy : bool, default True

        Returns
        -------
        Dataset
        """
        return self.transform(_TransformFirstClosure(fn), lazy)


class SimpleDataset(Dataset):
    """A dataset over any object with ``len()`` and ``[]`` (a list, an array, ...).

    Parameters
    ----------
    data : sequence
    """

    def __init__(self, data):
        self._data = data

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        return self._data[idx]


class _LazyTransformDataset(Dataset):
    def __init__(self, data, fn):
        self._data = data
        self._fn = fn

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        item = self._data[idx]
        if isinstance(item, tuple):
            return self._fn(*item)
        return self._fn(item)


class _TransformFirstClosure:
    """A picklable closure (worker processes may need to pickle it)."""

    def __init__(self, fn):
        self._fn = fn

    def __call__(self, x, *args):
        if args:
            return (self._fn(x),) + args
        return self._fn(x)


class _SampledDataset(Dataset):
    def __init__(self, dataset, sampler):
        self._dataset = dataset
        self._sampler = sampler
        self._indices = list(iter(sampler))

    def __len__(self):
        return len(self._sampler)

    def __getitem__(self, idx):
        return self._dataset[self._indices[idx]]


class ArrayDataset(Dataset):
    """Zip several dataset-like objects (datasets, lists, arrays) of equal length.

    Sample ``i`` is ``(x1[i], x2[i], ...)``, or ``x1[i]`` when there is only one. A 1-D
    NDArray is kept as a numpy array, so that its items are scalars rather than arrays of
    shape (1,).

    Parameters
    ----------
    *args : dataset-like objects
    """

    def __init__(self, *args):
        assert len(args) > 0, "Needs at least 1 arrays"
        self._length = len(args[0])
        self._data = []
        for i, data in enumerate(args):
            assert len(data) == self._length, (
                f"All arrays must have the same length; array[0] has length {self._length} "
                f"while array[{i + 1}] has {len(data)}.")
            if isinstance(data, NDArray) and len(data.shape) == 1:
                data = data.asnumpy()
            self._data.append(data)

    def __getitem__(self, idx):
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(data[idx] for data in self._data)

    def __len__(self):
        return self._length


class _IndexedRecordReader:
    """Reads records of an MXNet RecordIO file (``.rec``) by key, through its ``.idx`` file,
    with ``mx.recordio``'s validating reader (a malformed record or index raises MXNetError
    naming the file, the key and the byte offset). A copy in a forked or unpickled worker
    process reopens the file."""

    def __init__(self, idx_path, uri):
        from ... import recordio
        self.uri = uri
        self._rec = recordio.MXIndexedRecordIO(idx_path, uri, "r")
        self.idx = self._rec.idx
        self.keys = self._rec.keys

    def read_idx(self, key):
        return self._rec.read_idx(key)


class RecordFileDataset(Dataset):
    """The records of a RecordIO (``.rec``) file, with the index file beside it.

    Each sample is the raw bytes of one record.

    Parameters
    ----------
    filename : str
        Path to the ``.rec`` file; the index is the same path with extension ``.idx``.
    """

    def __init__(self, filename):
        self.idx_file = os.path.splitext(filename)[0] + ".idx"
        self.filename = filename
        self._record = _IndexedRecordReader(self.idx_file, self.filename)

    def __getitem__(self, idx):
        return self._record.read_idx(self._record.keys[idx])

    def __len__(self):
        return len(self._record.keys)


class _DownloadedDataset(Dataset):
    """Samples ``(data[i], label[i])`` of a dataset read once into memory."""

    def __init__(self, root, transform):
        super().__init__()
        self._transform = transform
        self._data = None
        self._label = None
        self._root = os.path.expanduser(root)
        os.makedirs(self._root, exist_ok=True)
        self._get_data()

    def __getitem__(self, idx):
        if self._transform is not None:
            return self._transform(self._data[idx], self._label[idx])
        return self._data[idx], self._label[idx]

    def __len__(self):
        return len(self._label)

    def _get_data(self):
        raise NotImplementedError
