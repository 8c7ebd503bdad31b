"""``mx.log``: loggers with MXNet's one-letter, coloured line prefix.

``get_logger(name)`` returns a :class:`logging.Logger` whose console lines read like
``W1114 22:13:20 4321 /src/train.py:step:42] message`` (level letter, month-day, time,
process id, file, function and line), coloured red for warnings and worse, green for
information and blue for debugging.
"""
from __future__ import annotations

import logging
import warnings

__all__ = ["CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "NOTSET", "get_logger",
           "getLogger"]

CRITICAL = logging.CRITICAL
ERROR = logging.ERROR
WARNING = logging.WARNING
INFO = logging.INFO
DEBUG = logging.DEBUG
NOTSET = logging.NOTSET

_RED, _GREEN, _BLUE, _PLAIN = "\x1b[31m", "\x1b[32m", "\x1b[34m", "\x1b[0m"
_LETTERS = {CRITICAL: "C", ERROR: "E", WARNING: "W", INFO: "I", DEBUG: "D"}
_DATE_FORMAT = "%m%d %H:%M:%S"


class _Formatter(logging.Formatter):
    """Console formatter of :func:`get_logger`: ``<colour><letter><date> <pid>
    <path>:<function>:<line>]<reset> <message>``.

    The letter is C, E, W, I or D for the standard levels and U for any other level; the
    colour goes by threshold (red from WARNING up, green from INFO, blue below).
    """

    def __init__(self):
        super().__init__(datefmt=_DATE_FORMAT)
        self._per_level = {}       # level -> logging.Formatter with that level's format

    @staticmethod
    def _color(level):
        if level >= WARNING:
            return _RED
        if level >= INFO:
            return _GREEN
        return _BLUE

    @staticmethod
    def _letter(level):
        return _LETTERS.get(level, "U")

    def _prefix_format(self, level):
        return (self._color(level) + self._letter(level)
                + "%(asctime)s %(process)d %(pathname)s:%(funcName)s:%(lineno)d]"
                + _PLAIN + " %(message)s")

    def format(self, record):
        # The format depends on the record's level. One formatter per level, whose format
        # never changes, keeps this thread-safe (a handler may format several threads'
        # records at once); only its clock follows this formatter's converter.
        per_level = self._per_level.get(record.levelno)
        if per_level is None:
            per_level = logging.Formatter(self._prefix_format(record.levelno), self.datefmt)
            self._per_level[record.levelno] = per_level
        per_level.converter = self.converter
        return per_level.format(record)


def get_logger(name=None, filename=None, filemode=None, level=WARNING):
    """A logger set up once with MXNet's handler and level.

    The first call for a given ``name`` gives the logger one handler and sets its level;
    later calls return the same logger unchanged (their ``filename`` and ``level`` are not
    applied). Without a name it returns the root logger and changes nothing.

    Parameters
    ----------
    name : str, optional
        Logger name (``logging.getLogger(name)``).
    filename : str, optional
        Write to this file (plain messages, no colour codes) instead of the console
        (standard error, with :class:`_Formatter`'s coloured prefix).
    filemode : str, optional
        Mode to open ``filename`` with; default ``'a'`` (append).
    level : int, default WARNING
        The logger's level.

    Returns
    -------
    logging.Logger
    """
    logger = logging.getLogger(name)
    if name is None or getattr(logger, "_init_done", False):
        return logger
    logger._init_done = True
    if filename:
        handler = logging.FileHandler(filename, filemode or "a")
    else:
        handler = logging.StreamHandler()
        handler.setFormatter(_Formatter())
    logger.addHandler(handler)
    logger.setLevel(level)
    return logger


def getLogger(name=None, filename=None, filemode=None, level=WARNING):  # noqa: N802
    """Deprecated name of :func:`get_logger` (warns with DeprecationWarning)."""
    warnings.warn("getLogger is deprecated, Use get_logger instead.", DeprecationWarning,
                  stacklevel=2)
    return get_logger(name, filename, filemode, level)
