"""MXNet's Python data iterators: DataDesc, DataBatch, DataIter, NDArrayIter, ResizeIter,
PrefetchingIter and CSVIter."""
from __future__ import annotations

import io as _io
import threading
import warnings
from collections import namedtuple

import numpy as np

from ..base import MXNetError
from ..ndarray.ndarray import NDArray, array
from ..ndarray import sparse as _sparse
from .. import ndarray as _nd
from .utils import _init_data, _has_instance, _getdata_by_idx, _slice_along_batch_axis

__all__ = ["DataDesc", "DataBatch", "DataIter", "ResizeIter", "PrefetchingIter", "NDArrayIter",
           "CSVIter"]


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """Name, shape, dtype and layout of one input (data or label) of a data iterator.

    A ``DataDesc`` is a ``(name, shape)`` named tuple with ``dtype`` and ``layout``
    attributes.

    Parameters
    ----------
    name : str
        Data name.
    shape : tuple of int
        Data shape.
    dtype : numpy dtype, default numpy.float32
        Data type.
    layout : str, default 'NCHW'
        What each axis of ``shape`` means; ``N`` marks the batch axis.
    """

    def __new__(cls, name, shape, dtype=np.float32, layout="NCHW"):
        ret = super().__new__(cls, name, shape)
        ret.dtype = dtype
        ret.layout = layout
        return ret

    def __repr__(self):
        return f"DataDesc[{self.name},{self.shape},{self.dtype},{self.layout}]"

    @staticmethod
    def get_batch_axis(layout):
        """The axis of ``layout`` that holds the batch (``'N'``).

        Parameters
        ----------
        layout : str or None
            For example ``'NCHW'``. None means axis 0.

        Returns
        -------
        int
            The batch axis, or -1 when the layout has no ``N``.
        """
        if layout is None:
            return 0
        return layout.find("N")

    @staticmethod
    def get_list(shapes, types):
        """DataDesc objects from ``(name, shape)`` pairs and optional ``(name, dtype)`` pairs.

        Parameters
        ----------
        shapes : sequence of (str, tuple)
            Names and shapes.
        types : sequence of (str, dtype) or None
            Names and dtypes; every name of ``shapes`` must be there.

        Returns
        -------
        list of DataDesc
        """
        if types is not None:
            type_dict = dict(types)
            return [DataDesc(x[0], x[1], type_dict[x[0]]) for x in shapes]
        return [DataDesc(x[0], x[1]) for x in shapes]


class DataBatch:
    """One batch from a data iterator.

    Parameters
    ----------
    data : list of NDArray
        The inputs, each with ``batch_size`` examples.
    label : list of NDArray, optional
        The labels.
    pad : int, optional
        How many examples at the end of the batch are padding (repeated from the start).
    index : numpy.ndarray, optional
        The examples' indices.
    bucket_key : int, optional
        The bucket key (bucketing).
    provide_data, provide_label : list of DataDesc, optional
        Descriptions of ``data`` and ``label``.
    """

    def __init__(self, data, label=None, pad=None, index=None, bucket_key=None,
                 provide_data=None, provide_label=None):
        if data is not None:
            assert isinstance(data, (list, tuple)), "Data must be list of NDArrays"
        if label is not None:
            assert isinstance(label, (list, tuple)), "Label must be list of NDArrays"
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self):
        data_shapes = [d.shape for d in self.data]
        label_shapes = [lbl.shape for lbl in self.label] if self.label else None
        return f"{type(self).__name__}: data shapes: {data_shapes} label shapes: {label_shapes}"


class DataIter:
    """Base class of the data iterators.

    ``next()`` returns a :class:`DataBatch` and raises ``StopIteration`` at the end of the
    data; ``reset()`` starts again. Subclasses implement ``iter_next``, ``getdata``,
    ``getlabel``, ``getpad`` (and ``getindex``), or override ``next``.

    Parameters
    ----------
    batch_size : int, default 0
        Examples per batch.
    """

    def __init__(self, batch_size=0):
        self.batch_size = batch_size

    def __iter__(self):
        return self

    def reset(self):
        """Go back to the beginning of the data."""

    def next(self):
        """The next batch.

        Returns
        -------
        DataBatch

        Raises
        ------
        StopIteration
            At the end of the data.
        """
        if self.iter_next():
            return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(),
                             index=self.getindex())
        raise StopIteration

    def __next__(self):
        return self.next()

    def iter_next(self):
        """Move to the next batch; False at the end of the data."""

    def getdata(self):
        """The current batch's data (list of NDArray)."""

    def getlabel(self):
        """The current batch's labels (list of NDArray)."""

    def getindex(self):
        """The current batch's example indices, or None."""
        return None

    def getpad(self):
        """How many padding examples the current batch has."""


class _CurrentBatchIter(DataIter):
    """An iterator that holds whole batches (``self.current_batch``) from other iterators and
    answers the per-part getters from it."""

    def getdata(self):
        return self.current_batch.data

    def getlabel(self):
        return self.current_batch.label

    def getindex(self):
        return self.current_batch.index

    def getpad(self):
        return self.current_batch.pad


class ResizeIter(_CurrentBatchIter):
    """Give an iterator a fixed number of batches per epoch.

    The wrapped iterator is reset and read again when it runs out before ``size`` batches.

    Parameters
    ----------
    data_iter : DataIter
        The iterator to resize.
    size : int
        Batches per epoch.
    reset_internal : bool, default True
        Whether ``reset()`` also resets ``data_iter``.
    """

    def __init__(self, data_iter, size, reset_internal=True):
        super().__init__()
        self.data_iter = data_iter
        self.size = size
        self.reset_internal = reset_internal
        self.cur = 0
        self.current_batch = None
        self.provide_data = data_iter.provide_data
        self.provide_label = data_iter.provide_label
        self.batch_size = data_iter.batch_size
        if hasattr(data_iter, "default_bucket_key"):
            self.default_bucket_key = data_iter.default_bucket_key

    def reset(self):
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self):
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            self.current_batch = self.data_iter.next()
        self.cur += 1
        return True



class PrefetchingIter(_CurrentBatchIter):
    """Read the next batch of one or several iterators in background threads.

    The batches of the iterators are joined: data lists and label lists are concatenated.

    Parameters
    ----------
    iters : DataIter or list of DataIter
        The iterators; they must give the same number of batches with the same padding.
    rename_data : list of dict, optional
        For the i-th iterator, ``{old_name: new_name}`` for each of its ``provide_data``.
    rename_label : list of dict, optional
        The same for labels.
    """

    def __init__(self, iters, rename_data=None, rename_label=None):
        super().__init__()
        if not isinstance(iters, list):
            iters = [iters]
        self.n_iter = len(iters)
        assert self.n_iter > 0
        self.iters = iters
        self.rename_data = rename_data
        self.rename_label = rename_label
        self.batch_size = self.provide_data[0][1][0]
        self.data_ready = [threading.Event() for _ in range(self.n_iter)]
        self.data_taken = [threading.Event() for _ in range(self.n_iter)]
        for ev in self.data_taken:
            ev.set()
        self.started = True
        self.current_batch = None
        self.next_batch = [None] * self.n_iter
        self._errors = [None] * self.n_iter
        self.prefetch_threads = [threading.Thread(target=self._prefetch, args=(i,), daemon=True)
                                 for i in range(self.n_iter)]
        for thread in self.prefetch_threads:
            thread.start()

    def _prefetch(self, i):
        while True:
            self.data_taken[i].wait()
            if not self.started:
                break
            try:
                self.next_batch[i] = self.iters[i].next()
            except StopIteration:
                self.next_batch[i] = None
            except Exception as err:  # noqa: BLE001 - re-raised in the consumer's thread
                self.next_batch[i] = None
                self._errors[i] = err
            self.data_taken[i].clear()
            self.data_ready[i].set()

    def __del__(self):
        self.started = False
        for ev in getattr(self, "data_taken", []):
            ev.set()
        for thread in getattr(self, "prefetch_threads", []):
            thread.join()

    def _renamed(self, descs_per_iter, renames):
        if renames is None:
            return sum(descs_per_iter, [])
        return sum([[DataDesc(r[x.name], x.shape, x.dtype) if isinstance(x, DataDesc)
                     else DataDesc(*x) for x in descs]
                    for r, descs in zip(renames, descs_per_iter)], [])

    @property
    def provide_data(self):
        return self._renamed([i.provide_data for i in self.iters], self.rename_data)

    @property
    def provide_label(self):
        return self._renamed([i.provide_label for i in self.iters], self.rename_label)

    def reset(self):
        for ev in self.data_ready:
            ev.wait()
        for it in self.iters:
            it.reset()
        for ev in self.data_ready:
            ev.clear()
        for ev in self.data_taken:
            ev.set()

    def iter_next(self):
        for ev in self.data_ready:
            ev.wait()
        for err in self._errors:
            if err is not None:
                self._errors = [None] * self.n_iter
                raise err
        if self.next_batch[0] is None:
            for batch in self.next_batch:
                assert batch is None, "Number of entry mismatches between iterators"
            return False
        for batch in self.next_batch:
            assert batch.pad == self.next_batch[0].pad, \
                "Number of entry mismatches between iterators"
        self.current_batch = DataBatch(sum([b.data for b in self.next_batch], []),
                                       sum([b.label for b in self.next_batch], []),
                                       self.next_batch[0].pad, self.next_batch[0].index,
                                       provide_data=self.provide_data,
                                       provide_label=self.provide_label)
        for ev in self.data_ready:
            ev.clear()
        for ev in self.data_taken:
            ev.set()
        return True

    def next(self):
        if self.iter_next():
            return self.current_batch
        raise StopIteration



_LAST_BATCH_HANDLES = ("pad", "discard", "roll_over")


class NDArrayIter(DataIter):
    """Iterate over NDArrays, numpy arrays, h5py datasets, CSR arrays or scipy CSR matrices.

    Parameters
    ----------
    data : array, list of arrays or dict of str to array
        The inputs. One array is named ``data_name``; the i-th of a list of several
        ``'_%d_%s' % (i, data_name)``; dict keys are the names. Inputs are ordered by name.
    label : array, list of arrays or dict of str to array, optional
        The labels, named as ``data`` with ``label_name``.
    batch_size : int, default 1
        Examples per batch.
    shuffle : bool, default False
        Shuffle the examples (with ``numpy.random``) at creation and at every ``reset``.
    last_batch_handle : {'pad', 'discard', 'roll_over'}, default 'pad'
        What to do with an incomplete last batch: fill it with examples from the beginning
        (``pad`` says how many), drop it, or carry its examples over to the first batch of
        the next epoch (after ``reset``).
    data_name, label_name : str
        Default names, ``'data'`` and ``'softmax_label'``.
    layout : str, default 'NCHW'
        Where ``N`` is, the batch axis.

    Notes
    -----
    CSR inputs need ``last_batch_handle='discard'`` and come out as CSR batches.
    """

    def __init__(self, data, label=None, batch_size=1, shuffle=False,
                 last_batch_handle="pad", data_name="data", label_name="softmax_label",
                 layout="NCHW"):
        super().__init__(batch_size)
        if last_batch_handle not in _LAST_BATCH_HANDLES:
            raise ValueError(f"last_batch_handle must be one of {_LAST_BATCH_HANDLES}, got "
                             f"{last_batch_handle!r}")
        self.data = _init_data(data, allow_empty=False, default_name=data_name)
        self.label = _init_data(label, allow_empty=True, default_name=label_name)
        if ((_has_instance(self.data, _sparse.CSRNDArray)
             or _has_instance(self.label, _sparse.CSRNDArray))
                and last_batch_handle != "discard"):
            raise NotImplementedError("`NDArrayIter` only supports ``CSRNDArray`` with "
                                      "`last_batch_handle` set to `discard`.")
        self.idx = np.arange(self.data[0][1].shape[0])
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        self.batch_size = batch_size
        self.cursor = -self.batch_size
        self.num_data = self.idx.shape[0]
        self.layout = layout
        self.reset()
        self.data_list = [x[1] for x in self.data] + [x[1] for x in self.label]
        self.num_source = len(self.data_list)
        # The incomplete last batch of an epoch, kept for 'roll_over'.
        self._cache_data = None
        self._cache_label = None

    def _descs(self, source):
        axis = self.layout.find("N")
        return [DataDesc(k, tuple(list(v.shape[:axis]) + [self.batch_size]
                                  + list(v.shape[axis + 1:])), v.dtype, layout=self.layout)
                for k, v in source]

    @property
    def provide_data(self):
        """Name, shape (with the batch size), dtype and layout of each input."""
        return self._descs(self.data)

    @property
    def provide_label(self):
        """Name, shape (with the batch size), dtype and layout of each label."""
        return self._descs(self.label)

    def hard_reset(self):
        """Go back to the start, dropping examples held over by 'roll_over'."""
        if self.shuffle:
            self._shuffle_data()
        self.cursor = -self.batch_size
        self._cache_data = None
        self._cache_label = None

    def reset(self):
        """Go back to the start (with 'roll_over', after the held-over examples)."""
        if self.shuffle:
            self._shuffle_data()
        if (self.last_batch_handle == "roll_over"
                and self.num_data - self.batch_size < self.cursor < self.num_data):
            # cursor - num_data examples of the last batch are held over.
            self.cursor = self.cursor - self.num_data - self.batch_size
        else:
            self.cursor = -self.batch_size

    def iter_next(self):
        self.cursor += self.batch_size
        return self.cursor < self.num_data

    def next(self):
        if not self.iter_next():
            raise StopIteration
        data = self.getdata()
        label = self.getlabel()
        if data[0].shape[self.layout.find("N")] != self.batch_size:
            # An incomplete last batch ('discard' or 'roll_over'): kept for the next epoch.
            self._cache_data = data
            self._cache_label = label
            raise StopIteration
        return DataBatch(data=data, label=label, pad=self.getpad(), index=None)

    def _getdata(self, data_source, start=None, end=None):
        assert start is not None or end is not None, "should at least specify start or end"
        start = start if start is not None else 0
        if end is None:
            end = data_source[0][1].shape[0] if data_source else 0
        s = slice(start, end)
        out = []
        for _, src in data_source:
            if isinstance(src, (np.ndarray, NDArray)):
                out.append(_slice_along_batch_axis(src, s, self.layout.find("N")))
            else:
                # h5py reads indices in increasing order only.
                rows = self.idx[s]
                order = sorted(rows)
                out.append(array(src[order][[list(rows).index(i) for i in order]]))
        return out

    def _concat(self, first, second):
        if not first or not second:
            return first if first else second
        assert len(first) == len(second), "data source should contain the same size"
        return [_nd.concat(a, b, dim=self.layout.find("N")) for a, b in zip(first, second)]

    @staticmethod
    def _tile(data, repeats):
        out = []
        for datum in data:
            reps = [1] * len(datum.shape)
            reps[0] = repeats
            out.append(_nd.tile(datum, reps=tuple(reps)))
        return out

    def _batchify(self, data_source):
        assert self.cursor < self.num_data, "DataIter needs reset."
        if self.last_batch_handle == "roll_over" and -self.batch_size < self.cursor < 0:
            # First batch of an epoch after an incomplete one: held-over examples first.
            assert self._cache_data is not None or self._cache_label is not None, \
                "next epoch should have cached data"
            cache = self._cache_data if self._cache_data is not None else self._cache_label
            second = self._getdata(data_source, end=self.cursor + self.batch_size)
            if self._cache_data is not None:
                self._cache_data = None
            else:
                self._cache_label = None
            return self._concat(cache, second)
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > self.num_data:
            pad = self.batch_size - self.num_data + self.cursor
            first = self._getdata(data_source, start=self.cursor)
            if pad > self.num_data:
                second = self._tile(self._getdata(data_source, end=self.num_data),
                                    pad // self.num_data)
                if pad % self.num_data != 0:
                    second = self._concat(second, self._getdata(data_source,
                                                                end=pad % self.num_data))
            else:
                second = self._getdata(data_source, end=pad)
            return self._concat(first, second)
        end = min(self.cursor + self.batch_size, self.num_data)
        return self._getdata(data_source, self.cursor, end)

    def getdata(self):
        return self._batchify(self.data)

    def getlabel(self):
        return self._batchify(self.label)

    def getpad(self):
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > self.num_data:
            return self.cursor + self.batch_size - self.num_data
        if self.last_batch_handle == "roll_over" and -self.batch_size < self.cursor < 0:
            return -self.cursor
        return 0

    def _shuffle_data(self):
        np.random.shuffle(self.idx)
        self.data = _getdata_by_idx(self.data, self.idx)
        self.label = _getdata_by_idx(self.label, self.idx)


def _csv_check_lines(path, text, shape, size):
    """Raise the MXNetError for the first malformed line of a CSV file (the slow path,
    taken once a fast parse failed)."""
    seen = False
    for lineno, line in enumerate(text.split("\n"), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        seen = True
        fields = line.split(",")
        if len(fields) != size:
            raise MXNetError(f"CSVIter: {path}: line {lineno}: the data size in CSV do not "
                             f"match size of shape: specified shape={list(shape)}, the csv "
                             f"row-length={len(fields)}")
        for col, field in enumerate(fields, 1):
            try:
                float(field)
            except ValueError:
                raise MXNetError(f"CSVIter: {path}: line {lineno}, column {col}: "
                                 f"{field.strip()[:40]!r} is not a number") from None
    if not seen:
        raise MXNetError(f"CSVIter: {path} holds no rows")
    raise MXNetError(f"CSVIter: {path}: not a CSV file of numbers")


class _FileIter(DataIter):
    """An iterator over one data and one label array read from files (CSVIter, LibSVMIter).
    As MXNet's C++ iterators do, ``getdata()`` and ``getlabel()`` answer the current batch's one
    array (not a list); ``next()`` puts each in a list of the DataBatch."""

    def next(self):
        if self.iter_next():
            return DataBatch(data=[self.getdata()], label=[self.getlabel()],
                             pad=self.getpad(), index=self.getindex())
        raise StopIteration


class CSVIter(_FileIter):
    """Read batches from CSV files of numbers (one example a row).

    Parameters
    ----------
    data_csv : str
        The data file.
    data_shape : tuple of int
        The shape of one example; each row is reshaped to it.
    label_csv : str, optional
        The label file; without one every label is 0.
    label_shape : tuple of int, default (1,)
        The shape of one label; labels of shape (1,) come out as a 1-D batch.
    batch_size : int
        Examples per batch.
    round_batch : bool, default True
        Fill an incomplete last batch with examples from the beginning, and start the next
        epoch after them (MXNet's behaviour). With False the last batch is filled from the
        beginning too, and the next epoch starts at the first example. ``pad`` counts the
        filled examples either way.
    dtype : str, default 'float32'
        The arrays' dtype ('float32', 'int32' or 'int64').
    """

    def __init__(self, data_csv, data_shape, label_csv=None, label_shape=(1,), batch_size=1,
                 round_batch=True, dtype="float32", data_name="data",
                 label_name="softmax_label", **kwargs):
        super().__init__(batch_size)
        if dtype not in ("float32", "int32", "int64"):
            raise MXNetError(f"CSVIter: dtype must be float32, int32 or int64, got {dtype!r}")
        data_shape = tuple(data_shape)
        label_shape = tuple(label_shape)
        self._data = self._read(data_csv, data_shape, dtype)
        if label_csv is None:
            self._label = np.zeros((self._data.shape[0],) + label_shape, dtype=dtype)
        else:
            self._label = self._read(label_csv, label_shape, dtype)
        if self._label.shape[0] != self._data.shape[0]:
            raise MXNetError(f"CSVIter: {data_csv} has {self._data.shape[0]} rows but "
                             f"{label_csv} has {self._label.shape[0]}")
        if label_shape == (1,):
            self._label = self._label.reshape(-1)
        self._dtype = dtype
        self.round_batch = round_batch
        self.provide_data = [DataDesc(data_name, (batch_size,) + data_shape, np.dtype(dtype).type)]
        self.provide_label = [DataDesc(label_name, (batch_size,) + self._label.shape[1:],
                                       np.dtype(dtype).type)]
        self._start = 0
        self._cursor = None
        self._batch = None
        self.reset()

    @staticmethod
    def _read(path, shape, dtype):
        """The rows of CSV file ``path`` as an array of (rows,) + shape. A malformed file
        raises MXNetError naming the file and the line (a row of another length gives
        MXNet's message)."""
        size = int(np.prod(shape))
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except OSError as err:
            raise MXNetError(f"CSVIter: cannot read {path!r}: {err.strerror or err}") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            line = raw[:err.start].count(b"\n") + 1
            raise MXNetError(f"CSVIter: {path}: line {line} is not UTF-8 text") from None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rows = np.loadtxt(_io.StringIO(text), delimiter=",", dtype=np.float64,
                                  ndmin=2)
        except ValueError:
            rows = None
        if rows is None or rows.shape[1] != size:
            _csv_check_lines(path, text, shape, size)
        if rows is None or rows.shape[0] == 0:
            raise MXNetError(f"CSVIter: {path} holds no rows")
        return rows.reshape((rows.shape[0],) + shape).astype(dtype)

    def reset(self):
        self._cursor = self._start

    def iter_next(self):
        n = self._data.shape[0]
        self._batch = _next_window(self, n, self.round_batch)
        return self._batch is not None

    def getdata(self):
        return array(self._data[self._batch[0]], dtype=self._dtype)

    def getlabel(self):
        return array(self._label[self._batch[0]], dtype=self._dtype)

    def getpad(self):
        return self._batch[1]


def _next_window(it, n, round_batch):
    """The next batch of a file iterator over ``n`` examples whose last batch wraps around:
    ``(example indices, pad)``, or None at the end of the epoch. Moves ``it._cursor``; the
    wrapped batch sets ``it._start``, where the next epoch begins (with ``round_batch``; else
    at 0), as MXNet's C++ iterators do."""
    if it._cursor is None or it._cursor >= n:
        return None
    idx = np.arange(it._cursor, it._cursor + it.batch_size)
    pad = max(0, int(idx[-1]) + 1 - n)
    idx = idx % n
    if pad:
        it._start = int(idx[-1] + 1) % n if round_batch else 0
        it._cursor = n
    else:
        it._cursor += it.batch_size
        if it._cursor >= n:
            it._start = 0
    return idx, pad


# MXNet 1.9.1's io/io.py also holds the iterators libmxnet implements (ImageRecordIter,
# MNISTIter, LibSVMIter...); neogluon writes each in its own module of this package.
_ELSEWHERE = {"ImageRecordIter": "image_record", "ImageRecordUInt8Iter": "image_record",
              "ImageRecordIter_v1": "image_record", "ImageRecordUInt8Iter_v1": "image_record",
              "ImageRecordInt8Iter": "image_record", "ImageDetRecordIter": "image_det_record",
              "MNISTIter": "mnist", "LibSVMIter": "libsvm"}


def __getattr__(name):
    import importlib
    if name in _ELSEWHERE:
        value = getattr(importlib.import_module(f".{_ELSEWHERE[name]}", __package__), name)
    elif name == "CSRNDArray":
        value = _sparse.CSRNDArray
    elif name == "py_str":
        from ..base import py_str as value
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}", name=name)
    globals()[name] = value
    return value
