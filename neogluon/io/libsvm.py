"""``mx.io.LibSVMIter``: batches of CSR data read from LIBSVM text files."""
from __future__ import annotations

import os

import numpy as np

from ..base import MXNetError
from ..ndarray.ndarray import array
from ..ndarray import sparse as _sparse
from .io import DataDesc, _FileIter, _next_window

__all__ = ["LibSVMIter"]


def _files(path, what):
    """The files behind ``path``: itself, or a folder's files in directory order (as MXNet's
    reader lists them)."""
    if os.path.isdir(path):
        files = [os.path.join(path, f) for f in os.listdir(path)
                 if os.path.isfile(os.path.join(path, f))]
        if not files:
            raise MXNetError(f"LibSVMIter: {what} folder {path!r} holds no files")
        return files
    if not os.path.isfile(path):
        raise MXNetError(f"LibSVMIter: {what} {path!r} is not a file or folder")
    return [path]


def _part_lines(chunks, num_parts, part_index):
    """The lines of the byte strings ``chunks`` (one per file, read as one stream) that
    belong to part ``part_index`` of ``num_parts``.

    Like MXNet (dmlc's text splitter), the stream is cut into ``num_parts`` byte ranges of
    equal size; a range's boundary that falls on or inside a line moves to the start of the
    next line (or file), so every line belongs to exactly one part.
    """
    raw = b"".join(chunks)
    total = len(raw)
    ends = np.cumsum([len(c) for c in chunks]).tolist()

    def boundary(pos):
        if pos <= 0:
            return 0
        if pos >= total:
            return total
        stop = next(e for e in ends if e > pos)  # the end of the file holding ``pos``
        # Skip to the end of the line holding ``pos`` (``pos`` itself included), then past
        # the run of newline characters that follows, within that file.
        i = pos
        while i < stop and raw[i] not in b"\r\n":
            i += 1
        while i < stop and raw[i] in b"\r\n":
            i += 1
        return i

    step = (total + num_parts - 1) // num_parts
    begin = boundary(min(step * part_index, total))
    end = boundary(min(step * (part_index + 1), total))
    lines, start = [], 0
    for e in ends:
        lo, hi = max(begin, start), min(end, e)
        if lo < hi:
            lines += raw[lo:hi].splitlines()
        start = e
    return lines


def _parse(path, num_parts, part_index, what):
    """Parse a LIBSVM file (or folder) part into (labels, values, columns, indptr)."""
    chunks = []
    for fname in _files(path, what):
        try:
            with open(fname, "rb") as f:
                chunks.append(f.read())
        except OSError as err:
            raise MXNetError(f"LibSVMIter: cannot read {what} {fname!r}: {err}") from None
    labels, values, cols, indptr = [], [], [], [0]
    for lineno, line in enumerate(_part_lines(chunks, num_parts, part_index), 1):
        toks = line.split()
        if not toks:
            continue
        head = toks[0].split(b":")[0]  # 'label' or 'label:weight'
        try:
            labels.append(float(head))
        except ValueError:
            raise MXNetError(f"LibSVMIter: {what} {path!r}: bad label {toks[0].decode(errors='replace')!r} "
                             f"in line {lineno} of this part") from None
        for tok in toks[1:]:
            if tok.startswith(b"qid:"):
                continue
            col, sep, val = tok.partition(b":")
            try:
                if not sep:
                    raise ValueError
                cols.append(int(col))
                values.append(float(val))
            except ValueError:
                raise MXNetError(f"LibSVMIter: {what} {path!r}: bad feature "
                                 f"{tok.decode(errors='replace')!r} in line {lineno} of this "
                                 f"part (expected index:value)") from None
        indptr.append(len(cols))
    return (np.asarray(labels, np.float32), np.asarray(values, np.float32),
            np.asarray(cols, np.int64), np.asarray(indptr, np.int64))


class LibSVMIter(_FileIter):
    """Batches of CSR data read from LIBSVM files (MXNet 1.9.1's ``mx.io.LibSVMIter``).

    Each line of a LIBSVM file is ``label index:value index:value ...`` with zero-based
    column indices. Data batches are ``CSRNDArray`` s of shape ``(batch_size,) + data_shape``.

    Parameters
    ----------
    data_libsvm : str
        The data file, or a folder whose files are read one after the other (in directory
        order, as MXNet lists them).
    data_shape : tuple of int
        ``(num_features,)``.
    label_libsvm : str, optional
        A second LIBSVM file holding the labels as sparse rows (its own leading labels are
        ignored); labels then come out as CSR batches of shape ``(batch_size,) + label_shape``.
        Without it the label is each data line's leading number, a dense 1-D batch.
    label_shape : tuple of int, default (1,)
    batch_size : int
    round_batch : bool, default True
        An incomplete last batch is filled with examples from the beginning (``pad`` counts
        them) and the next epoch starts after them, as in MXNet. MXNet does not support
        False; neither does neogluon.
    num_parts, part_index : int, default 1, 0
        Read only part ``part_index`` of the file(s) cut into ``num_parts`` byte ranges on line
        boundaries (the same lines as MXNet's split), for sharding across workers.
    dtype : None or 'float32', default None
        The values' dtype: float32 (MXNet 1.9.1 fails on any other).
    data_name, label_name : str
    """

    def __init__(self, data_libsvm, data_shape, label_libsvm=None, label_shape=(1,),
                 batch_size=1, round_batch=True, num_parts=1, part_index=0, dtype=None,
                 data_name="data", label_name="softmax_label", prefetch_buffer=4, **kwargs):
        super().__init__(batch_size)
        data_shape = tuple(int(x) for x in data_shape)
        label_shape = tuple(int(x) for x in label_shape)
        if len(data_shape) != 1 or data_shape[0] <= 0:
            raise MXNetError(f"LibSVMIter: data_shape must be (num_features,), got {data_shape}")
        if int(batch_size) <= 0:
            raise MXNetError(f"LibSVMIter: batch_size must be positive, got {batch_size}")
        if not round_batch:
            raise MXNetError("LibSVMIter: round_batch=False is not supported (nor is it in "
                             "MXNet's sparse batch loader)")
        if not (int(num_parts) >= 1 and 0 <= int(part_index) < int(num_parts)):
            raise MXNetError(f"LibSVMIter: need num_parts >= 1 and 0 <= part_index < num_parts, "
                             f"got num_parts={num_parts}, part_index={part_index}")
        if dtype is not None and str(dtype) not in ("float32", "<class 'numpy.float32'>"):
            raise MXNetError(f"LibSVMIter: dtype must be 'float32' (or None), got {dtype!r}")
        self.batch_size = int(batch_size)
        self.round_batch = True
        labels, vals, cols, indptr = _parse(data_libsvm, int(num_parts), int(part_index),
                                            "data_libsvm")
        self._check_cols(cols, data_shape[0], data_libsvm, "data_shape")
        self._data = (vals, cols, indptr)
        self._n = len(indptr) - 1
        if self._n == 0:
            raise MXNetError(f"LibSVMIter: {data_libsvm!r} has no examples in part "
                             f"{part_index} of {num_parts}")
        self._sparse_label = label_libsvm is not None
        if self._sparse_label:
            if len(label_shape) != 1:
                raise MXNetError(f"LibSVMIter: label_shape must be (num_labels,) with "
                                 f"label_libsvm, got {label_shape}")
            _, lvals, lcols, lindptr = _parse(label_libsvm, int(num_parts), int(part_index),
                                              "label_libsvm")
            self._check_cols(lcols, label_shape[0], label_libsvm, "label_shape")
            if len(lindptr) - 1 != self._n:
                raise MXNetError(f"LibSVMIter: {data_libsvm!r} has {self._n} examples but "
                                 f"{label_libsvm!r} has {len(lindptr) - 1} (in this part)")
            self._label = (lvals, lcols, lindptr)
        else:
            if label_shape != (1,):
                raise MXNetError(f"LibSVMIter: without label_libsvm the label is one number "
                                 f"a line; label_shape must be (1,), got {label_shape}")
            self._label = labels
        self._data_shape = data_shape
        self._label_shape = label_shape
        lshape = (self.batch_size,) + (label_shape if self._sparse_label else ())
        self.provide_data = [DataDesc(data_name, (self.batch_size,) + data_shape, np.float32)]
        self.provide_label = [DataDesc(label_name, lshape, np.float32)]
        self._start = 0
        self._cursor = 0
        self._batch = None
        self.reset()

    @staticmethod
    def _check_cols(cols, width, path, shape_name):
        if cols.size and (cols.min() < 0 or cols.max() >= width):
            bad = int(cols.max() if cols.max() >= width else cols.min())
            raise MXNetError(f"LibSVMIter: {path!r} has column index {bad}, outside "
                             f"{shape_name}=({width},) (indices are zero-based)")

    def reset(self):
        self._cursor = self._start

    def iter_next(self):
        n = self._n
        self._batch = _next_window(self, n, round_batch=True)
        return self._batch is not None

    @staticmethod
    def _rows(csr, idx, width):
        vals, cols, indptr = csr
        starts, ends = indptr[idx], indptr[idx + 1]
        counts = ends - starts
        new_ptr = np.zeros(len(idx) + 1, np.int64)
        np.cumsum(counts, out=new_ptr[1:])
        take = (np.concatenate([np.arange(s, e) for s, e in zip(starts, ends)])
                if counts.sum() else np.zeros(0, np.int64))
        return _sparse.csr_matrix((vals[take], cols[take], new_ptr),
                                  shape=(len(idx), width), dtype="float32")

    def getdata(self):
        return self._rows(self._data, self._batch[0], self._data_shape[0])

    def getlabel(self):
        idx = self._batch[0]
        if self._sparse_label:
            return self._rows(self._label, idx, self._label_shape[0])
        return array(self._label[idx], dtype="float32")

    def getpad(self):
        return self._batch[1]

    def getindex(self):
        return self._batch[0].astype(np.uint64)
