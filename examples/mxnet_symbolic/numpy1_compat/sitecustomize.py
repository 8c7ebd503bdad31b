"""Give NumPy >= 2.3 back the one NumPy 1 behaviour MXNet 1.9.1's example scripts rely on.

``train_mnist.py`` reads the idx files with ``np.fromstring(raw_bytes, dtype=...)``: NumPy 1
read bytes that way (with a DeprecationWarning since 1.14); NumPy 2.3 removed it ("The binary
mode of fromstring is removed"). The scripts are kept unmodified, so the runs that need it put
this folder on PYTHONPATH and Python imports this file at start-up (``sitecustomize``). It only
adds the bytes case, as ``np.frombuffer(...).copy()`` (fromstring returned a new array); text
with ``sep`` and older NumPy versions are left as they are. It changes nothing in neogluon.
"""
import numpy as _np


def _install():
    original = _np.fromstring
    try:
        original(b"\0", dtype=_np.uint8)
        return  # this NumPy still reads bytes
    except ValueError:
        pass

    def fromstring(string, dtype=float, count=-1, *, sep="", like=None):
        if sep == "" and isinstance(string, (bytes, bytearray, memoryview)):
            return _np.frombuffer(string, dtype=dtype, count=count).copy()
        if like is None:
            return original(string, dtype=dtype, count=count, sep=sep)
        return original(string, dtype=dtype, count=count, sep=sep, like=like)

    fromstring.__doc__ = original.__doc__
    _np.fromstring = fromstring


_install()
