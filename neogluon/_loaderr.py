"""The record and data-iterator loaders' error contract (docs/api_status.md, "Loader error
contract: records and iterators"): a malformed file gives an MXNetError whose message names
the file and the record, line or byte offset at fault."""
from __future__ import annotations

from .base import MXNetError, MXNetValueError

__all__ = ["named", "LoaderFileNotFoundError", "MXNetValueError"]


class LoaderFileNotFoundError(MXNetError, FileNotFoundError):
    """A file a loader needs (an image of a list, a data file) does not exist; catchable as
    FileNotFoundError, what MXNet's Python loaders raise there."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


def named(err, path, what=None, loader=None):
    """``err`` (raised while reading ``what`` of file ``path``) as an MXNetError whose
    message names the file and ``what``: an MXNetError that already names the file is
    returned as it is; another MXNetError keeps its type; any other exception becomes an
    MXNetError with its type and message (chained to it)."""
    path = str(path)
    msg = str(err)
    if isinstance(err, MXNetError):
        if path in msg:
            return err
        cls = type(err)
    else:
        cls = MXNetValueError if isinstance(err, ValueError) else MXNetError
        msg = f"{type(err).__name__}: {msg}"
    text = (f"{loader}: " if loader else "") + path + (f": {what}" if what else "") + f": {msg}"
    try:
        new = cls(text)
    except Exception:  # noqa: BLE001 - a subclass with another constructor
        new = MXNetError(text)
    new.__cause__ = err
    return new
