"""``mx.operator.get_operator_arguments``: an operator's arguments as MXNet lists them.

MXNet reads them from libmxnet's registry. neogluon builds them from its operator table
(``symbol/_op_table.json``: MXNet 1.9.1's operator names, aliases and array inputs) and the
signature of the function implementing the operator: the array inputs first (typed
``NDArray-or-Symbol``, ``NDArray-or-Symbol[]`` for a variable number), then the parameters
in the function's order. A parameter's type is written in MXNet's style from its default
(``boolean, optional, default=0``, ``int, optional, default='1'``,
``Shape(tuple), optional, default=[]`` ...); a parameter without a default is ``required``,
with the type its docstring gives when it gives one.
"""
from __future__ import annotations

import inspect
import re
from collections import namedtuple

from .base import MXNetError

OperatorArguments = namedtuple("OperatorArguments", ["narg", "names", "types"])

_NAMESPACES = (("_contrib_", "contrib"), ("_linalg_", "linalg"), ("_image_", "image"),
               ("_random_", "random"), ("_sparse_", "sparse"))
_SKIP = {"out", "name", "ctx"}
_DOC_TYPES = {"int": "int", "float": "float", "bool": "boolean", "boolean": "boolean",
              "str": "string", "string": "string", "tuple": "Shape(tuple)",
              "tuple of int": "Shape(tuple)", "shape": "Shape(tuple)"}


def _table():
    from .symbol.symbol import _TABLE
    return _TABLE


def _implementation(name):
    from . import ndarray as nd
    for prefix, ns in _NAMESPACES:
        if name.startswith(prefix):
            return getattr(getattr(nd, ns), name[len(prefix):], None)
    if name.startswith("_"):
        return getattr(nd._internal, name, None)
    return getattr(nd, name, None)


def _fmt_default(value):
    if isinstance(value, bool):
        return "boolean", str(int(value))
    if isinstance(value, int):
        return "int", f"'{value}'"
    if isinstance(value, float):
        return "float", repr(value)
    if isinstance(value, (tuple, list)):
        return "Shape(tuple)", "[" + ",".join(str(v) for v in value) + "]"
    if isinstance(value, str):
        return "string", f"'{value}'"
    return None, str(value)


def _doc_type(fn, pname):
    doc = fn.__doc__ or ""
    m = re.search(rf"^\s*{re.escape(pname)}\s*:\s*(\{{[^}}\n]*\}})", doc, re.M)
    if m:  # a set of choices, written as MXNet writes it: {'a', 'b'}
        return m.group(1).strip()
    m = re.search(rf"^\s*{re.escape(pname)}\s*:\s*([^\n,]+)", doc, re.M)
    if m:
        kind = m.group(1).strip().lower()
        return _DOC_TYPES.get(kind, m.group(1).strip())
    return None


def get_operator_arguments(op_name):
    """The arguments of the operator registered as ``op_name`` (MXNet's names: ``Convolution``,
    ``_contrib_box_nms``, aliases such as ``Concat``).

    Returns
    -------
    OperatorArguments
        ``(narg, names, types)``.
    """
    table = _table()
    name = table["aliases"].get(op_name, op_name)
    entry = table["ops"].get(name)
    if entry is None:
        raise MXNetError(f"Operator {op_name} is not registered")
    fn = _implementation(name)
    if fn is None and name != op_name:
        fn = _implementation(op_name)
    inputs = list(entry.get("inputs", []))
    variadic = bool(entry.get("variadic"))
    names = list(inputs)
    types = ["NDArray-or-Symbol[]" if variadic else "NDArray-or-Symbol"] * len(inputs)
    params = []
    if fn is not None:
        try:
            params = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):
            params = []
    required = set(getattr(fn, "_mx_required", ()))
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name in _SKIP or p.name in inputs:
            continue
        if p.default is p.empty or p.name in required:
            kind = _doc_type(fn, p.name)
            if not kind and p.default is not p.empty and p.default is not None:
                kind = _fmt_default(p.default)[0]   # (required in MXNet, defaulted here)
            types.append(f"{kind}, required" if kind else "required")
        elif p.default is None:
            kind = _doc_type(fn, p.name)
            if p.name == entry.get("num_args"):
                types.append(f"{kind or 'int'}, required")
            else:
                types.append(f"{kind + ' or None, ' if kind else ''}optional, default=None")
        else:
            kind, shown = _fmt_default(p.default)
            kind = kind or _doc_type(fn, p.name)
            types.append(f"{kind + ', ' if kind else ''}optional, default={shown}")
        names.append(p.name)
    return OperatorArguments(len(names), names, types)
