"""RecordIO files (``mx.recordio``): MXNet's byte format for datasets of packed records.

A record is the magic number ``0xced7230a``, a little-endian uint32 ``cflag << 29 | length``,
the bytes, and zero padding to a multiple of 4. A payload that contains the magic number at a
4-byte aligned offset is written as several parts (cflag 1 first, 2 middle, 3 last) cut at
those places, and joined back with the magic number on reading, as dmlc-core's RecordIO does.
An index file (:class:`MXIndexedRecordIO`) has one ``key\\tbyte_offset`` line per record.
Files written here are read by MXNet and the other way round.
"""
from __future__ import annotations

import io
import numbers
import os
import struct
from collections import namedtuple

import numpy as np

from .base import MXNetError, MXNetValueError

__all__ = ["MXRecordIO", "MXIndexedRecordIO", "IRHeader", "pack", "unpack", "pack_img",
           "unpack_img"]

_MAGIC = 0xCED7230A
_MAGIC_BYTES = struct.pack("<I", _MAGIC)
_MAX_LEN = (1 << 29) - 1


class MXRecordIO:
    """Sequential reader or writer of a RecordIO file.

    Parameters
    ----------
    uri : str
        Path of the file.
    flag : {'r', 'w'}
        Read or write (writing truncates).

    Examples
    --------
    >>> record = mx.recordio.MXRecordIO('data.rec', 'w')
    >>> record.write(b'record_0')
    >>> record.close()
    >>> record = mx.recordio.MXRecordIO('data.rec', 'r')
    >>> record.read()
    b'record_0'
    """

    def __init__(self, uri, flag):
        self.uri = str(uri)
        self.flag = flag
        self.handle = None
        self.is_open = False
        self.pid = None
        self.open()

    def open(self):
        """Open the file (again, from its start)."""
        if self.flag == "w":
            mode, self.writable = "wb", True
        elif self.flag == "r":
            mode, self.writable = "rb", False
        else:
            raise ValueError(f"Invalid flag {self.flag}")
        try:
            self.handle = open(self.uri, mode)
        except OSError as err:
            raise MXNetError(f"RecordIO: cannot open {self.uri!r} for "
                             f"{'writing' if self.writable else 'reading'}: "
                             f"{err.strerror}") from None
        self.pid = os.getpid()
        self.is_open = True
        self._count = 0     # the next record's ordinal, while reading from the start

    def __del__(self):
        self.close()

    def __getstate__(self):
        # A pickled reader (a DataLoader worker's copy) reopens the file by path.
        is_open = self.is_open
        self.close()
        state = dict(self.__dict__)
        state["is_open"] = is_open
        state["handle"] = None
        if is_open:
            self.open()
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        is_open = state["is_open"]
        self.is_open = False
        self.handle = None
        if is_open:
            self.open()

    def _check_pid(self, allow_reset=False):
        # A file object shared across fork() shares its offset: a forked reader reopens.
        if self.pid != os.getpid():
            if not allow_reset:
                raise RuntimeError("Forbidden operation in multiple processes")
            self.reset()

    def close(self):
        """Close the file (a writer's data is flushed)."""
        if not getattr(self, "is_open", False):
            return
        try:
            self.handle.close()
        finally:
            self.is_open = False
            self.pid = None

    def reset(self):
        """Close and reopen: a reader starts at the first record again, a writer truncates."""
        self.close()
        self.open()

    def write(self, buf):
        """Append one record.

        Parameters
        ----------
        buf : bytes
            The record's payload (less than 2**29 bytes).
        """
        assert self.writable
        self._check_pid(allow_reset=False)
        data = bytes(buf)
        n = len(data)
        if n > _MAX_LEN:
            raise MXNetError(f"RecordIO only accepts records of less than 2^29 bytes, got {n}")
        out = io.BytesIO()
        start = 0
        pos = data.find(_MAGIC_BYTES)
        while pos != -1:
            if pos % 4 == 0:
                out.write(_MAGIC_BYTES)
                out.write(struct.pack("<I", ((1 if start == 0 else 2) << 29) | (pos - start)))
                out.write(data[start:pos])
                start = pos + 4
            pos = data.find(_MAGIC_BYTES, pos + 1)
        out.write(_MAGIC_BYTES)
        out.write(struct.pack("<I", ((3 if start else 0) << 29) | (n - start)))
        out.write(data[start:])
        out.write(b"\0" * ((4 - n % 4) % 4))
        self.handle.write(out.getvalue())

    def read(self):
        """The next record's payload, or None at the end of the file.

        A malformed record (a truncated header or payload, a bad magic number, a length
        running past the end of the file, a broken split record) raises MXNetError naming
        the file, the record and its byte offset; the reader then stays at that record.

        Returns
        -------
        bytes or None
        """
        assert not self.writable
        self._check_pid(allow_reset=True)
        what = "record" if self._count is None else f"record {self._count}"
        s = self._read_record(what)
        if s is not None and self._count is not None:
            self._count += 1
        return s

    def _fail(self, start, what, msg):
        """Go back to the record's start and raise the error naming file and record."""
        try:
            self.handle.seek(start)
        except (OSError, ValueError):
            pass
        raise MXNetError(f"RecordIO {self.uri}: {what} at byte {start}: {msg}")

    def _read_record(self, what):
        """One record (its parts joined) from the current position, validated against the
        file's size before anything is read; None at the end of the file."""
        handle = self.handle
        start = pos = handle.tell()
        size = os.fstat(handle.fileno()).st_size
        parts = []
        while True:
            head = handle.read(8)
            if not head:
                if parts:
                    self._fail(start, what, "the file ends inside a split record")
                return None
            if len(head) < 8:
                self._fail(start, what, f"truncated record header ({len(head)} of 8 bytes at "
                                        f"byte {pos}, the end of the file)")
            magic, lrec = struct.unpack("<II", head)
            if magic != _MAGIC:
                self._fail(start, what, f"bad magic number {magic:#010x} at byte {pos} (not "
                                        "a RecordIO file, or an offset that is not a record "
                                        "boundary)")
            cflag, length = lrec >> 29, lrec & _MAX_LEN
            if cflag > 3:
                self._fail(start, what, f"invalid continuation flag {cflag} at byte {pos}")
            if parts and cflag in (0, 1):
                self._fail(start, what, f"a split record is interrupted at byte {pos} (part "
                                        f"flag {cflag})")
            if not parts and cflag in (2, 3):
                self._fail(start, what, f"a continuation part (flag {cflag}) without the "
                                        "first part")
            padded = length + (4 - length % 4) % 4
            if pos + 8 + padded > size:
                self._fail(start, what, f"record length {length} at byte {pos} runs past the "
                                        f"end of the file ({size} bytes): truncated or "
                                        "corrupted file")
            data = handle.read(length)
            if len(data) != length:   # the file shrank under us
                self._fail(start, what, "truncated record")
            if padded != length:
                handle.seek(padded - length, 1)
            parts.append(data)
            pos += 8 + padded
            if cflag in (0, 3):
                return _MAGIC_BYTES.join(parts) if len(parts) > 1 else parts[0]

    def read_at(self, offset, what=None):
        """The record starting at byte ``offset``, never None: an offset at or past the end
        of the file, or one that is not a record's start, raises MXNetError naming the
        file, ``what`` (e.g. 'record 3') and the offset."""
        assert not self.writable
        self._check_pid(allow_reset=True)
        what = what or "record"
        size = os.fstat(self.handle.fileno()).st_size
        if not 0 <= offset < size:
            raise MXNetError(f"RecordIO {self.uri}: {what} at byte {offset}: the offset is "
                             f"outside the file ({size} bytes)")
        self.handle.seek(offset)
        self._count = None
        return self._read_record(what)

    def tell(self):
        """The current byte offset in the file."""
        return self.handle.tell()


class MXIndexedRecordIO(MXRecordIO):
    """RecordIO file with an index file, for reading records by key.

    Parameters
    ----------
    idx_path : str
        Path of the index file (``key\\toffset`` lines).
    uri : str
        Path of the record file.
    flag : {'r', 'w'}
        Read or write.
    key_type : type, default int
        The keys' type (index-file keys are converted with it).

    Examples
    --------
    >>> record = mx.recordio.MXIndexedRecordIO('data.idx', 'data.rec', 'w')
    >>> for i in range(5):
    ...     record.write_idx(i, b'record_%d' % i)
    >>> record.close()
    >>> record = mx.recordio.MXIndexedRecordIO('data.idx', 'data.rec', 'r')
    >>> record.read_idx(3)
    b'record_3'
    """

    def __init__(self, idx_path, uri, flag, key_type=int):
        self.idx_path = str(idx_path)
        self.idx = {}
        self.keys = []
        self.key_type = key_type
        self.fidx = None
        super().__init__(uri, flag)

    def open(self):
        super().open()
        self.idx = {}
        self.keys = []
        try:
            self.fidx = open(self.idx_path, "w" if self.writable else "rb")
        except OSError as err:
            super().close()
            raise MXNetError(f"RecordIO: cannot open index {self.idx_path!r}: "
                             f"{err.strerror}") from None
        if not self.writable:
            try:
                self._parse_index()
            except BaseException:
                self.close()
                raise

    def _parse_index(self):
        """Read the ``key\\toffset`` lines; a malformed line raises MXNetValueError naming
        the index file and the line (blank lines are skipped)."""
        with self.fidx:
            raw = self.fidx.read()
        self.fidx = None
        for lineno, line in enumerate(raw.split(b"\n"), 1):
            line = line.strip()
            if not line:
                continue

            def bad(why):
                return MXNetValueError(f"RecordIO index {self.idx_path}: line {lineno}: {why} "
                                       f"(a line is 'key<TAB>byte offset'): "
                                       f"{line[:80].decode('utf-8', 'replace')!r}")
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError:
                raise bad("not UTF-8 text") from None
            fields = text.split("\t")
            if len(fields) < 2:
                raise bad("no offset")
            try:
                key = self.key_type(fields[0])
            except (TypeError, ValueError) as err:
                raise bad(f"bad key ({err})") from None
            try:
                pos = int(fields[1])
            except ValueError:
                raise bad("the offset is not an integer") from None
            if pos < 0:
                raise bad("negative offset")
            self.idx[key] = pos
            self.keys.append(key)

    def close(self):
        if not getattr(self, "is_open", False):
            return
        super().close()
        if self.fidx is not None:
            self.fidx.close()
            self.fidx = None

    def __getstate__(self):
        state = super().__getstate__()
        state["fidx"] = None
        return state

    def seek(self, idx):
        """Move to the record with key ``idx``."""
        assert not self.writable
        self._check_pid(allow_reset=True)
        try:
            pos = self.idx[idx]
        except KeyError:
            raise KeyError(f"{self.idx_path}: no record with key {idx!r}") from None
        size = os.fstat(self.handle.fileno()).st_size
        if not 0 <= pos < size:
            raise MXNetError(f"RecordIO index {self.idx_path}: key {idx!r} points at byte "
                             f"{pos}, outside {self.uri} ({size} bytes)")
        self.handle.seek(pos)
        self._count = None

    def read_idx(self, idx):
        """The payload of the record with key ``idx`` (never None: a key whose offset is
        past the end of the file raises MXNetError)."""
        self.seek(idx)
        return self._read_record(f"record of key {idx!r} (index {self.idx_path})")

    def write_idx(self, idx, buf):
        """Append a record under key ``idx`` (and its line in the index file)."""
        key = self.key_type(idx)
        pos = self.tell()
        self.write(buf)
        self.fidx.write(f"{key}\t{pos}\n")
        self.idx[key] = pos
        self.keys.append(key)


IRHeader = namedtuple("HEADER", ["flag", "label", "id", "id2"])
"""Header of an image record: ``flag`` (the label count when the label is an array),
``label`` (a float or an array of floats), ``id`` and ``id2`` (high bits of the id)."""

_IR_FORMAT = "<IfQQ"
_IR_SIZE = struct.calcsize(_IR_FORMAT)


class _PackError(MXNetError, struct.error):
    """A header field out of its range, or a record shorter than its header; catchable as
    struct.error, which MXNet raises there."""


def pack(header, s):
    """Prefix ``s`` with an image-record header.

    Parameters
    ----------
    header : IRHeader
        A numeric ``label`` is stored in the header (``flag`` becomes 0); an array label is
        stored as float32 values after it (``flag`` becomes their count).
    s : bytes
        The payload (usually an encoded image).

    Returns
    -------
    bytes
    """
    header = IRHeader(*header)
    s = bytes(s)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
    else:
        label = np.asarray(header.label, dtype=np.float32)
        header = header._replace(flag=label.size, label=0)
        s = label.tobytes() + s
    try:
        return struct.pack(_IR_FORMAT, *header) + s
    except struct.error as err:
        raise _PackError(f"pack: header {tuple(header)} does not fit an image record's header "
                         f"(flag uint32, label float32, id and id2 uint64): {err}") from None


def unpack(s):
    """Split an image record into its header and payload.

    Parameters
    ----------
    s : bytes
        A record from :meth:`MXRecordIO.read`.

    Returns
    -------
    header : IRHeader
        With ``label`` a float32 array when the record holds several labels.
    payload : bytes
    """
    s = _record_bytes(s, "unpack")
    if len(s) < _IR_SIZE:
        raise _PackError(f"unpack: a record of {len(s)} bytes is shorter than the "
                         f"{_IR_SIZE}-byte header")
    header = IRHeader(*struct.unpack(_IR_FORMAT, s[:_IR_SIZE]))
    s = s[_IR_SIZE:]
    if header.flag > 0:
        if header.flag * 4 > len(s):
            raise MXNetValueError(f"unpack: the record header says {header.flag} float32 "
                                  f"labels ({header.flag * 4} bytes) but only {len(s)} bytes "
                                  "follow it")
        header = header._replace(label=np.frombuffer(s, np.float32, header.flag))
        s = s[header.flag * 4:]
    return header, s


class _RecordTypeError(MXNetError, TypeError):
    """unpack given something that is not a record's bytes (None: a reader at the end of its
    file); catchable as TypeError, which MXNet raises there."""


def _record_bytes(s, what):
    if s is None:
        raise _RecordTypeError(f"{what}: got None instead of a record (a reader returns None "
                               "at the end of its file)")
    if isinstance(s, bytes):
        return s
    if isinstance(s, (str, numbers.Number)):
        raise _RecordTypeError(f"{what}: a record is bytes, got {type(s).__name__}")
    try:
        return bytes(memoryview(s))
    except TypeError:
        raise _RecordTypeError(f"{what}: a record is bytes, got {type(s).__name__}") from None


def unpack_img(s, iscolor=-1):
    """Split an image record and decode the image, as OpenCV's ``imdecode`` would.

    Parameters
    ----------
    s : bytes
        A record from :meth:`MXRecordIO.read`.
    iscolor : int, default -1
        1: three channels (BGR order, OpenCV's); 0: one grayscale channel (H, W); -1: as
        stored (grayscale images give (H, W)).

    Returns
    -------
    header : IRHeader
    img : numpy.ndarray
        uint8, (H, W, 3) in BGR order or (H, W).
    """
    from .image.image import _decode
    header, payload = unpack(s)
    if iscolor == 0:
        img = _decode(payload, 0, "unpack_img")[:, :, 0]
    elif iscolor == -1:
        from PIL import Image
        try:
            with Image.open(io.BytesIO(payload)) as im:
                gray = im.mode in ("L", "1", "I;16", "I", "F")
        except Exception as err:  # noqa: BLE001 - Pillow raises many types for bad data
            raise MXNetError(f"unpack_img: decoding failed, invalid image data ({len(payload)} "
                             f"bytes: {type(err).__name__}: {err})") from None
        if gray:
            img = _decode(payload, 0, "unpack_img")[:, :, 0]
        else:
            img = _decode(payload, 1, "unpack_img")[:, :, ::-1]
    else:
        img = _decode(payload, 1, "unpack_img")[:, :, ::-1]
    return header, np.ascontiguousarray(img)


def pack_img(header, img, quality=95, img_fmt=".jpg"):
    """Encode an image and prefix it with a header.

    Parameters
    ----------
    header : IRHeader
        See :func:`pack`.
    img : numpy.ndarray
        uint8, (H, W, 3) in BGR order (OpenCV's) or (H, W).
    quality : int, default 95
        JPEG quality (1-100), or PNG compression level (0-9).
    img_fmt : {'.jpg', '.jpeg', '.png'}
        Encoding.

    Returns
    -------
    bytes
    """
    from .image.image import _pil
    Image = _pil()
    arr = np.asarray(img)
    if arr.dtype != np.uint8:
        arr = arr.astype(np.uint8)
    if arr.ndim == 3 and arr.shape[2] == 3:
        pil = Image.fromarray(np.ascontiguousarray(arr[:, :, ::-1]), "RGB")
    elif arr.ndim == 2 or (arr.ndim == 3 and arr.shape[2] == 1):
        pil = Image.fromarray(np.ascontiguousarray(arr.reshape(arr.shape[:2])), "L")
    else:
        raise MXNetError(f"pack_img: img must be (H, W), (H, W, 1) or (H, W, 3), got shape "
                         f"{arr.shape}")
    buf = io.BytesIO()
    fmt = img_fmt.upper()
    if fmt in (".JPG", ".JPEG"):
        pil.save(buf, format="JPEG", quality=int(quality))
    elif fmt == ".PNG":
        # OpenCV clamps the PNG compression level to 0..9 (the default quality is 95).
        pil.save(buf, format="PNG", compress_level=min(max(int(quality), 0), 9))
    else:
        raise MXNetError(f"pack_img: img_fmt must be '.jpg', '.jpeg' or '.png', got {img_fmt!r}")
    return pack(header, buf.getvalue())
