"""``mx.io.MNISTIter``: batches from MNIST's idx files (``train-images-idx3-ubyte``, ...)."""
from __future__ import annotations

import math
import random
import struct
import warnings
import zlib

import numpy as np

from ..base import MXNetError
from .io import DataIter, DataBatch, DataDesc

__all__ = ["MNISTIter"]

# Accepted without effect, as MXNet's MNISTIter does (prefetching and shapes are fixed here).
_IGNORED = {"prefetch_buffer", "ctx", "dtype", "data_shape", "input_shape", "label_shape",
            "label_width", "round_batch", "preprocess_threads", "verbose", "shuffle_chunk_seed"}


def _read_idx(path, magic, what):
    """The array of an MNIST idx file (gzip-compressed or not). The header's dimensions are
    checked against the file's size before anything is allocated; a malformed file raises
    MXNetError naming the file."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as err:
        raise MXNetError(f"MNISTIter: cannot open {what} file {path!r}: {err.strerror}") from None
    ndim = magic & 0xFF
    head_size = 4 + 4 * ndim
    gz = None
    if raw[:2] == b"\x1f\x8b":
        gz = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            head = gz.decompress(raw, head_size)
        except zlib.error as err:
            raise MXNetError(f"MNISTIter: {path!r}: corrupted gzip data ({err})") from None
    else:
        head = raw[:head_size]
    if len(head) < head_size or struct.unpack(">I", head[:4])[0] != magic:
        raise MXNetError(f"MNISTIter: {path!r} is not an MNIST {what} file (idx magic "
                         f"{magic:#x})")
    dims = struct.unpack(">" + "I" * ndim, head[4:head_size])
    need = math.prod(dims)
    if gz is None:
        body = np.frombuffer(raw, np.uint8, offset=head_size)
    else:
        # deflate expands at most 1032:1: a header asking for more cannot be true
        if need > 1032 * len(raw):
            raise MXNetError(f"MNISTIter: {path!r}: the header's dimensions {dims} need "
                             f"{need} bytes, more than the {len(raw)}-byte gzip file can hold")
        try:
            body = gz.decompress(gz.unconsumed_tail, need + 1)
        except zlib.error as err:
            raise MXNetError(f"MNISTIter: {path!r}: corrupted gzip data ({err})") from None
        body = np.frombuffer(body, np.uint8)
    if body.size != need:
        raise MXNetError(f"MNISTIter: {path!r}: the header's dimensions {dims} need {need} "
                         f"bytes of data, the file has {body.size} (truncated or corrupted)")
    return body.reshape(dims)


class MNISTIter(DataIter):
    """Batches of MNIST images (float32, pixel / 256) and labels, as MXNet's MNISTIter.

    Parameters
    ----------
    image : str
        The images' idx3 file (gzip-compressed files are read too).
    label : str
        The labels' idx1 file.
    batch_size : int, default 128
    shuffle : bool, default True
        Shuffle once, at creation, with ``seed``.
    flat : bool, default False
        Give (batch, 784) instead of (batch, 1, 28, 28).
    seed : int, default 0
    silent : bool, default False
    num_parts, part_index : int
        Read only part ``part_index`` of ``num_parts`` parts.
    data_name, label_name : str

    Notes
    -----
    An incomplete last batch is dropped, as in MXNet. The shuffle uses Python's generator, so
    its order is not the one MXNet's C++ generator gives.
    """

    def __init__(self, image="./train-images-idx3-ubyte", label="./train-labels-idx1-ubyte",
                 batch_size=128, shuffle=True, flat=False, seed=0, silent=False, num_parts=1,
                 part_index=0, data_name="data", label_name="softmax_label", **kwargs):
        super().__init__(batch_size)
        # MXNet's C++ iterator accepts and ignores arguments it does not know (scripts pass
        # data_shape=/input_shape=, as its own test_utils.get_mnist_iterator does): so here,
        # with a warning for names that no MXNet iterator takes.
        unknown = sorted(set(kwargs) - _IGNORED)
        if unknown:
            warnings.warn(f"MNISTIter: ignoring argument(s) {unknown} (as MXNet does)",
                          stacklevel=2)
        images = _read_idx(image, 0x803, "image")
        labels = _read_idx(label, 0x801, "label")
        if images.shape[0] != labels.shape[0]:
            raise MXNetError(f"MNISTIter: {image} has {images.shape[0]} images but {label} "
                             f"has {labels.shape[0]} labels")
        order = list(range(images.shape[0]))
        if shuffle:
            random.Random(seed).shuffle(order)
        n = len(order)
        if not 0 <= part_index < num_parts:
            raise MXNetError(f"MNISTIter: part_index {part_index} is not in [0, {num_parts})")
        order = order[part_index * n // num_parts:(part_index + 1) * n // num_parts]
        # MXNet scales by 1/256 (a float32 product), not 1/255.
        self._images = images[order].astype(np.float32) * np.float32(1.0 / 256)
        self._labels = labels[order].astype(np.float32)
        h, w = images.shape[1:]
        self._shape = (h * w,) if flat else (1, h, w)
        self.provide_data = [DataDesc(data_name, (batch_size,) + self._shape)]
        self.provide_label = [DataDesc(label_name, (batch_size,))]
        self._cursor = 0

    def reset(self):
        self._cursor = 0

    def next(self):
        from .. import ndarray as nd
        start = self._cursor
        if start + self.batch_size > len(self._labels):
            raise StopIteration
        self._cursor += self.batch_size
        data = self._images[start:start + self.batch_size].reshape((-1,) + self._shape)
        return DataBatch([nd.array(data)], [nd.array(self._labels[start:self._cursor])], pad=0,
                         provide_data=self.provide_data, provide_label=self.provide_label)
