"""``mx.io.ImageRecordIter`` (and its uint8 variant): MXNet's RecordIO image iterator, in
Python on top of ``mx.recordio`` and ``mx.image``."""
from __future__ import annotations

import os
import random
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..base import MXNetError
from .io import DataIter, DataBatch, DataDesc

__all__ = ["ImageRecordIter", "ImageRecordUInt8Iter"]

# Parameters of MXNet's C++ iterator that only tune its threads and buffers.
_IGNORED = {"prefetch_buffer", "verbose", "ctx", "device_id",
            "shuffle_chunk_size", "shuffle_chunk_seed"}


class ImageRecordIter(DataIter):
    """Batches of images from a RecordIO file of packed images, as MXNet's ImageRecordIter.

    Each image is decoded (RGB), its shorter side resized to ``resize`` when that is > 0,
    cropped to ``data_shape`` (at the center, or at a random place with ``rand_crop``; a
    smaller image is resized to fit), mirrored with probability 0.5 with ``rand_mirror``,
    and normalised as ``(pixel - mean) * (scale / std)`` per channel.

    Parameters
    ----------
    path_imgrec : str
        The ``.rec`` file (``mx.recordio`` / im2rec).
    data_shape : (3, int, int)
        Output (C, H, W).
    batch_size : int
    path_imgidx : str, optional
        Its index (needed for ``num_parts > 1``).
    path_imglist : str, optional
        A ``.lst`` file whose labels replace the records' (matched by record id).
    label_width : int, default 1
    shuffle : bool, default False
        Shuffle the records at every reset (with ``seed``).
    seed : int, default 0
    round_batch : bool, default True
        Fill the last batch with images from the start (``pad`` counts them) and begin the
        next epoch after them, as MXNet does. With False the next epoch starts at the first
        image.
    rand_crop, rand_mirror : bool, default False
    resize : int, default -1
    mean_r, mean_g, mean_b, std_r, std_g, std_b, scale : float
        Normalisation (mean 0, std 1, scale 1 by default).
    inter_method : int, default 1
        Interpolation for resizing (see ``mx.image.resize_short``).
    num_parts, part_index : int
        Read only part ``part_index`` of ``num_parts`` equal parts.
    data_name, label_name : str
    dtype : str, default 'float32'
        The data's dtype ('float32', or 'uint8' without normalisation).
    preprocess_threads : int, default 4
        Threads that decode and augment the images of a batch (at most the machine's CPU
        count); Pillow and torch release the GIL while they work.

    Notes
    -----
    Random crops and mirrors draw from a generator per image seeded from Python's ``random``
    (so ``random.seed`` makes them repeatable, whatever the thread count); shuffles from
    ``seed``. They are not the C++ iterator's draws, so not MXNet's.
    """

    def __init__(self, path_imgrec, data_shape, batch_size, path_imgidx=None, path_imglist=None,
                 label_width=1, shuffle=False, seed=0, round_batch=True, rand_crop=False,
                 rand_mirror=False, resize=-1, mean_r=0.0, mean_g=0.0, mean_b=0.0, std_r=1.0,
                 std_g=1.0, std_b=1.0, scale=1.0, inter_method=1, num_parts=1, part_index=0,
                 data_name="data", label_name="softmax_label", dtype="float32",
                 preprocess_threads=4, **kwargs):
        super().__init__(batch_size)
        unknown = sorted(set(kwargs) - _IGNORED)
        if unknown:
            raise MXNetError(f"ImageRecordIter: unsupported argument(s) {unknown} (neogluon "
                             "implements the crop, mirror, resize and normalisation ones)")
        from .. import recordio
        data_shape = tuple(int(d) for d in data_shape)
        if len(data_shape) != 3 or data_shape[0] not in (1, 3):
            raise MXNetError(f"ImageRecordIter: data_shape must be (3, H, W) or (1, H, W), got "
                             f"{data_shape}")
        if dtype not in ("float32", "uint8"):
            raise MXNetError(f"ImageRecordIter: dtype must be float32 or uint8, got {dtype!r}")
        self.data_shape = data_shape
        self.label_width = label_width
        self.shuffle = shuffle
        self.round_batch = round_batch
        self.rand_crop = rand_crop
        self.rand_mirror = rand_mirror
        self.resize = resize
        self.inter_method = inter_method
        self._dtype = dtype
        self._mean = np.array([mean_r, mean_g, mean_b][:data_shape[0]], np.float32)
        self._std = np.array([std_r, std_g, std_b][:data_shape[0]], np.float32)
        self._scale = np.float32(scale)
        self._rng = random.Random(seed)
        threads = max(1, min(int(preprocess_threads), os.cpu_count() or 1))
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="neogluon-imgrec") \
            if threads > 1 else None
        if path_imgidx:
            self._rec = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, "r")
            self._offsets = [self._rec.idx[k] for k in self._rec.keys]
        else:
            self._rec = recordio.MXRecordIO(path_imgrec, "r")
            self._offsets = []
            while True:
                pos = self._rec.tell()
                if self._rec.read() is None:
                    break
                self._offsets.append(pos)
        if num_parts > 1:
            if not 0 <= part_index < num_parts:
                raise MXNetError(f"ImageRecordIter: part_index {part_index} is not in "
                                 f"[0, {num_parts})")
            per = len(self._offsets) // num_parts
            self._offsets = self._offsets[part_index * per:(part_index + 1) * per]
        self._labels = None
        if path_imglist:
            self._labels = {}
            with open(path_imglist) as f:
                for line in f:
                    fields = line.strip().split("\t")
                    if len(fields) >= 3:
                        self._labels[int(fields[0])] = [float(v) for v in fields[1:-1]]
        if not self._offsets:
            raise MXNetError(f"ImageRecordIter: {path_imgrec} holds no records")
        label_shape = (batch_size, label_width) if label_width > 1 else (batch_size,)
        self.provide_data = [DataDesc(data_name, (batch_size,) + data_shape,
                                      np.dtype(dtype).type)]
        self.provide_label = [DataDesc(label_name, label_shape, np.float32)]
        self._order = list(range(len(self._offsets)))
        self._start = 0
        self._cursor = 0
        self.reset()

    def reset(self):
        if self.shuffle:
            self._rng.shuffle(self._order)
        self._cursor = self._start

    def _read(self, i):
        """The i-th record of this epoch's order, read here (the file is not shared with
        the decoding threads)."""
        from .. import recordio
        self._rec.handle.seek(self._offsets[self._order[i]])
        return recordio.unpack(self._rec.read())

    def _sample(self, record, seed):
        from .. import image
        header, payload = record
        rng = random.Random(seed)
        img = image.imdecode(payload, flag=1 if self.data_shape[0] == 3 else 0)
        if self.resize > 0:
            img = image.resize_short(img, self.resize, self.inter_method)
        c, h, w = self.data_shape
        if self.rand_crop:
            ih, iw = img.shape[0], img.shape[1]
            cw, ch = image.scale_down((iw, ih), (w, h))
            x0, y0 = rng.randint(0, iw - cw), rng.randint(0, ih - ch)
            img = image.fixed_crop(img, x0, y0, cw, ch, (w, h), self.inter_method)
        else:
            img = image.center_crop(img, (w, h), self.inter_method)[0]
        arr = img.asnumpy()
        if self.rand_mirror and rng.random() < 0.5:
            arr = arr[:, ::-1]
        arr = arr.transpose(2, 0, 1)
        if self._dtype == "float32":
            # One float32 factor scale / std per channel, MXNet's rounding.
            mult = (self._scale / self._std).astype(np.float32)
            arr = (arr.astype(np.float32) - self._mean[:, None, None]) * mult[:, None, None]
        label = header.label
        if self._labels is not None and header.id in self._labels:
            label = self._labels[header.id]
        label = np.asarray(label, np.float32).reshape(-1)
        if label.size < self.label_width:
            raise MXNetError(f"ImageRecordIter: record {header.id} has {label.size} label(s), "
                             f"label_width is {self.label_width}")
        return arr, label[:self.label_width]

    def next(self):
        from .. import ndarray as nd
        n = len(self._offsets)
        if self._cursor >= n:
            raise StopIteration
        idx = [(self._cursor + k) for k in range(self.batch_size)]
        pad = max(0, idx[-1] + 1 - n)
        records = [self._read(i % n) for i in idx]
        seeds = [random.getrandbits(64) for _ in idx]
        if self._pool is not None:
            samples = list(self._pool.map(self._sample, records, seeds))
        else:
            samples = [self._sample(r, sd) for r, sd in zip(records, seeds)]
        if pad:
            self._start = (idx[-1] + 1) % n if self.round_batch else 0
            self._cursor = n
        else:
            self._cursor += self.batch_size
            if self._cursor >= n:
                self._start = 0
        data = np.stack([s[0] for s in samples])
        label = np.stack([s[1] for s in samples])
        if self.label_width == 1:
            label = label.reshape(-1)
        return DataBatch([nd.array(data, dtype=self._dtype)], [nd.array(label)], pad=pad,
                         provide_data=self.provide_data, provide_label=self.provide_label)


def ImageRecordUInt8Iter(*args, **kwargs):
    """:class:`ImageRecordIter` giving uint8 images without normalisation."""
    kwargs["dtype"] = "uint8"
    return ImageRecordIter(*args, **kwargs)
