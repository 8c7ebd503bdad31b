"""Vision datasets: MNIST, FashionMNIST, CIFAR10/100, image folders and image RecordIO files.

The downloadable datasets read MXNet's files from ``root`` (``$MXNET_HOME/datasets/<name>``
by default) and download them from the Gluon repository (``MXNET_GLUON_REPO``) only when they
are missing or their SHA-1 does not match.
"""
from __future__ import annotations

import gzip
import os
import struct
import tarfile
import warnings

import numpy as np

from ....base import MXNetError
from ....ndarray.ndarray import array as _nd_array
from .. import dataset
from ...utils import _copy_to_file, _get_repo_file_url, check_sha1, download

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "CIFAR100", "ImageRecordDataset",
           "ImageFolderDataset"]


def _data_dir():
    return os.path.expanduser(os.environ.get("MXNET_HOME", os.path.join("~", ".mxnet")))


_DownloadedDataset = dataset._DownloadedDataset


def _read_idx(path, magic, header_ints):
    """Payload of an IDX file (MNIST's format), gzip-compressed or not."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        head = f.read(4 * header_ints)
        if len(head) < 4 * header_ints:
            raise MXNetError(f"{path}: truncated IDX header")
        values = struct.unpack(">" + "I" * header_ints, head)
        if values[0] != magic:
            raise MXNetError(f"{path}: not an IDX file with magic number {magic} "
                             f"(found {values[0]})")
        return values, np.frombuffer(f.read(), dtype=np.uint8).copy()


class MNIST(_DownloadedDataset):
    """MNIST handwritten digits: samples are ``(image, label)`` with uint8 images of shape
    (28, 28, 1) and int32 labels.

    Parameters
    ----------
    root : str, default ``$MXNET_HOME/datasets/mnist``
        Folder holding (or receiving) the IDX files.
    train : bool, default True
        Load the training set (60000 samples) or the test set (10000).
    transform : callable, optional
        ``transform(data, label) -> sample``, applied on every access.
    """

    def __init__(self, root=os.path.join(_data_dir(), "datasets", "mnist"), train=True,
                 transform=None):
        self._train = train
        self._train_data = ("train-images-idx3-ubyte.gz",
                            "6c95f4b05d2bf285e1bfb0e7960c31bd3b3f8a7d")
        self._train_label = ("train-labels-idx1-ubyte.gz",
                             "2a80914081dc54586dbdf242f9805a6b8d2a15fc")
        self._test_data = ("t10k-images-idx3-ubyte.gz",
                           "c3a25af1f52dad7f726cce8cacb138654b760d48")
        self._test_label = ("t10k-labels-idx1-ubyte.gz",
                            "763e7fa3757d93b0cdec073cef058b2004252c17")
        self._namespace = "mnist"
        super().__init__(root, transform)

    def _get_data(self):
        data, label = ((self._train_data, self._train_label) if self._train
                       else (self._test_data, self._test_label))
        namespace = "gluon/dataset/" + self._namespace
        data_file = download(_get_repo_file_url(namespace, data[0]), path=self._root,
                             sha1_hash=data[1])
        label_file = download(_get_repo_file_url(namespace, label[0]), path=self._root,
                              sha1_hash=label[1])
        _, lab = _read_idx(label_file, 2049, 2)
        lab = lab.astype(np.int32)
        (_, n, rows, cols), img = _read_idx(data_file, 2051, 4)
        if n != len(lab) or img.size != n * rows * cols:
            raise MXNetError(f"{data_file}: {n} images of {rows}x{cols} do not match "
                             f"{img.size} bytes and {len(lab)} labels in {label_file}")
        self._data = _nd_array(img.reshape(n, rows, cols, 1), dtype=np.uint8)
        self._label = lab


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST, a drop-in replacement for MNIST (same format and shapes).

    Parameters
    ----------
    root : str, default ``$MXNET_HOME/datasets/fashion-mnist``
    train : bool, default True
    transform : callable, optional
    """

    def __init__(self, root=os.path.join(_data_dir(), "datasets", "fashion-mnist"),
                 train=True, transform=None):
        self._train = train
        self._train_data = ("train-images-idx3-ubyte.gz",
                            "0cf37b0d40ed5169c6b3aba31069a9770ac9043d")
        self._train_label = ("train-labels-idx1-ubyte.gz",
                             "236021d52f1e40852b06a4c3008d8de8aef1e40b")
        self._test_data = ("t10k-images-idx3-ubyte.gz",
                           "626ed6a7c06dd17c0eec72fa3be1740f146a2863")
        self._test_label = ("t10k-labels-idx1-ubyte.gz",
                            "17f9ab60e7257a1620f4ad76bbbaf857c3920701")
        self._namespace = "fashion-mnist"
        _DownloadedDataset.__init__(self, root, transform)


def _extract_files(archive, root):
    """Extract the regular files of a tar archive below ``root``, each atomically; members
    that are links, devices or would land outside ``root`` are skipped."""
    base = os.path.realpath(root)
    with tarfile.open(archive) as tar:
        for m in tar.getmembers():
            if not m.isfile():
                continue
            dest = os.path.realpath(os.path.join(base, m.name))
            if os.path.commonpath([base, dest]) != base:
                warnings.warn(f"{archive}: skipping member {m.name!r} outside {root}")
                continue
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with tar.extractfile(m) as src:
                _copy_to_file(src, dest)


class CIFAR10(_DownloadedDataset):
    """CIFAR-10: samples are ``(image, label)`` with uint8 images of shape (32, 32, 3) and
    int32 labels.

    Parameters
    ----------
    root : str, default ``$MXNET_HOME/datasets/cifar10``
        Folder holding the binary batch files (or receiving the archive).
    train : bool, default True
    transform : callable, optional
    """

    def __init__(self, root=os.path.join(_data_dir(), "datasets", "cifar10"), train=True,
                 transform=None):
        self._train = train
        self._archive_file = ("cifar-10-binary.tar.gz",
                              "fab780a1e191a7eda0f345501ccd62d20f7ed891")
        self._train_data = [("data_batch_1.bin", "aadd24acce27caa71bf4b10992e9e7b2d74c2540"),
                            ("data_batch_2.bin", "c0ba65cce70568cd57b4e03e9ac8d2a5367c1795"),
                            ("data_batch_3.bin", "1dd00a74ab1d17a6e7d73e185b69dbf31242f295"),
                            ("data_batch_4.bin", "aab85764eb3584312d3c7f65fd2fd016e36a258e"),
                            ("data_batch_5.bin", "26e2849e66a845b7f1e4614ae70f4889ae604628")]
        self._test_data = [("test_batch.bin", "67eb016db431130d61cd03c7ad570b013799c88c")]
        self._namespace = "cifar10"
        super().__init__(root, transform)

    _label_bytes = 1

    def _read_batch(self, filename):
        with open(filename, "rb") as fin:
            raw = np.frombuffer(fin.read(), dtype=np.uint8)
        width = 3072 + self._label_bytes
        if raw.size % width:
            raise MXNetError(f"{filename}: size {raw.size} is not a multiple of the record "
                             f"size {width}")
        raw = raw.reshape(-1, width)
        images = raw[:, self._label_bytes:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        return images, raw[:, self._label_column()].astype(np.int32)

    def _label_column(self):
        return 0

    def _get_data(self):
        files = self._train_data + self._test_data
        if any(not os.path.exists(p) or not check_sha1(p, h)
               for p, h in ((os.path.join(self._root, n), h) for n, h in files)):
            namespace = "gluon/dataset/" + self._namespace
            archive = download(_get_repo_file_url(namespace, self._archive_file[0]),
                               path=self._root, sha1_hash=self._archive_file[1])
            _extract_files(archive, self._root)
        names = self._train_data if self._train else self._test_data
        parts = [self._read_batch(os.path.join(self._root, n)) for n, _ in names]
        data = np.concatenate([p[0] for p in parts])
        label = np.concatenate([p[1] for p in parts])
        self._data = _nd_array(data, dtype=np.uint8)
        self._label = label


class CIFAR100(CIFAR10):
    """CIFAR-100 with coarse (20 super-classes) or fine (100 classes) labels.

    Parameters
    ----------
    root : str, default ``$MXNET_HOME/datasets/cifar100``
    fine_label : bool, default False
        Use the 100 fine labels instead of the 20 coarse ones.
    train : bool, default True
    transform : callable, optional
    """

    _label_bytes = 2

    def __init__(self, root=os.path.join(_data_dir(), "datasets", "cifar100"),
                 fine_label=False, train=True, transform=None):
        self._train = train
        self._archive_file = ("cifar-100-binary.tar.gz",
                              "a0bb982c76b83111308126cc779a992fa506b90b")
        self._train_data = [("train.bin", "e207cd2e05b73b1393c74c7f5e7bea451d63e08e")]
        self._test_data = [("test.bin", "8fb6623e830365ff53cf14adec797474f5478006")]
        self._fine_label = fine_label
        self._namespace = "cifar100"
        _DownloadedDataset.__init__(self, root, transform)

    def _label_column(self):
        return int(bool(self._fine_label))


def _decode_image(buf, flag, what):
    """Decode JPEG/PNG bytes into an HWC uint8 NDArray (RGB when ``flag`` is 1, one gray
    channel when 0) with ``mx.image``'s decoder (OpenCV's pixels). Needs Pillow."""
    from ....image.image import _decode
    return _nd_array(_decode(buf, flag, what), dtype=np.uint8)


def _unpack_record(s):
    """MXNet's ``recordio.unpack``: (header (flag, label, id, id2), payload)."""
    from .... import recordio
    header, payload = recordio.unpack(s)
    return tuple(header), payload


class ImageRecordDataset(dataset.RecordFileDataset):
    """Images and labels packed in a RecordIO file (MXNet's ``im2rec`` format).

    Parameters
    ----------
    filename : str
        Path to the ``.rec`` file (with its ``.idx`` beside it).
    flag : {0, 1}, default 1
        0 decodes to one gray channel, 1 to RGB.
    transform : callable, optional
        ``transform(data, label) -> sample``.
    """

    def __init__(self, filename, flag=1, transform=None):
        super().__init__(filename)
        self._flag = flag
        self._transform = transform

    def __getitem__(self, idx):
        try:
            header, img = _unpack_record(super().__getitem__(idx))
            data = _decode_image(img, self._flag, f"record {idx} of {self.filename}")
        except Exception as err:  # noqa: BLE001 - the loaders' contract: name file, record
            from ...._loaderr import named
            raise named(err, self.filename, f"record {idx}", "ImageRecordDataset") from err
        if self._transform is not None:
            return self._transform(data, header[1])
        return data, header[1]


class ImageFolderDataset(dataset.Dataset):
    """Images stored one folder per class (``root/<class>/<image>``).

    Parameters
    ----------
    root : str
        The folder of class folders.
    flag : {0, 1}, default 1
        0 decodes to one gray channel, 1 to RGB.
    transform : callable, optional
        ``transform(data, label) -> sample``.

    Attributes
    ----------
    synsets : list of str
        Class names; ``synsets[i]`` is the name of label ``i``.
    items : list of (str, int)
        Every image as ``(filename, label)``.
    """

    def __init__(self, root, flag=1, transform=None):
        self._root = os.path.expanduser(root)
        self._flag = flag
        self._transform = transform
        self._exts = [".jpg", ".jpeg", ".png"]
        self._list_images(self._root)

    def _list_images(self, root):
        self.synsets = []
        self.items = []
        for folder in sorted(os.listdir(root)):
            path = os.path.join(root, folder)
            if not os.path.isdir(path):
                warnings.warn(f"Ignoring {path}, which is not a directory.", stacklevel=3)
                continue
            label = len(self.synsets)
            self.synsets.append(folder)
            for filename in sorted(os.listdir(path)):
                filename = os.path.join(path, filename)
                ext = os.path.splitext(filename)[1]
                if ext.lower() not in self._exts:
                    warnings.warn(f"Ignoring {filename} of type {ext}. Only support "
                                  f"{', '.join(self._exts)}")
                    continue
                self.items.append((filename, label))

    def __getitem__(self, idx):
        filename, label = self.items[idx]
        with open(filename, "rb") as f:
            img = _decode_image(f.read(), self._flag, filename)
        if self._transform is not None:
            return self._transform(img, label)
        return img, label

    def __len__(self):
        return len(self.items)
