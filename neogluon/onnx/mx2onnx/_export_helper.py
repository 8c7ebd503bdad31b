"""``mx.onnx.mx2onnx._export_helper``: ``load_module``."""
import os

from ... import ndarray as _nd
from ... import symbol as _sym
from ...base import MXNetValueError
import neogluon as mx  # noqa: F401  (MXNet's module exposes ``mx``)


def load_module(sym_filepath, params_filepath):
    """``(sym, params)`` from a ``-symbol.json`` file and a ``.params`` file, with the
    ``arg:``/``aux:`` parameters in one dict, as MXNet 1.9.1's exporter loads a model."""
    for what, path in (("symbol", sym_filepath), ("params", params_filepath)):
        if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
            raise MXNetValueError(f"load_module: the {what} file {path!r} does not exist "
                                  f"(symbol and params files provided are invalid)")
    sym = _sym.load(os.fspath(sym_filepath))
    params = {}
    for key, value in _nd.load(os.fspath(params_filepath)).items():
        params[key[4:] if key.startswith(("arg:", "aux:")) else key] = value
    return sym, params
