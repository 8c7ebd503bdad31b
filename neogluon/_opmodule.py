"""MXNet's generated operator modules (``mxnet.ndarray.gen_op``, ``mxnet.symbol.gen_contrib``,
``mxnet.ndarray.op`` ...) as views of neogluon's operator namespaces.

In MXNet those modules are written at build time from libmxnet's operator registry and
``mx.nd``/``mx.sym`` re-export them. In neogluon the operators live in ``mx.nd``,
``mx.nd.contrib``, ``mx.sym`` ...; each of these modules looks every name up there, so
``from mxnet.ndarray.gen_op import Activation`` is ``mx.nd.Activation`` itself. Their
``__all__`` (what ``import *`` gives) lists MXNet's operator names, from the operator table
neogluon's symbols are built from, that the namespace provides.
"""
from __future__ import annotations

import json
import os

_TABLE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "symbol", "_op_table.json")
_names = None

# Operator-name prefixes of MXNet's registry and the generated module each one goes to.
_PREFIXES = (("_contrib_", "contrib"), ("_linalg_", "linalg"), ("_image_", "image"),
             ("_random_", "random"), ("_sparse_", "sparse"))


def registry_names():
    """MXNet 1.9.1's operator names (canonical names and aliases) as neogluon records them."""
    global _names
    if _names is None:
        with open(_TABLE_PATH) as f:
            table = json.load(f)
        _names = sorted(set(table["ops"]) | set(table["aliases"]))
    return _names


def names_for(kind):
    """Registry names of one generated module, as that module spells them: ``op`` (public
    names), ``_internal`` (underscore names outside the prefixed namespaces) or a namespace
    (``contrib``: ``_contrib_box_nms`` -> ``box_nms``)."""
    out = []
    for name in registry_names():
        if kind == "op":
            if not name.startswith("_"):
                out.append(name)
            continue
        prefixed = [ns for p, ns in _PREFIXES if name.startswith(p)]
        if kind == "_internal":
            if name.startswith("_") and not prefixed:
                out.append(name)
        elif prefixed == [kind]:
            out.append(name[len("_" + kind + "_"):])
    return out


def forward(module_name, source, kind=None, extra=(), fallback=None):
    """``(__getattr__, __dir__)`` for a module that looks names up on ``source()``.

    ``kind`` selects the registry names of ``__all__`` (see :func:`names_for`); without it,
    ``__all__`` is the source's public non-class, non-module callables. ``extra``: names added
    to ``__all__`` when the source has them. ``fallback(name)``: where a name the source lacks
    is looked up next (it raises AttributeError when it has none)."""
    state = {}

    def _all():
        if "all" not in state:
            src = source()
            if kind is not None:
                wanted = list(names_for(kind)) + list(extra)
            else:
                wanted = [n for n in dir(src) if not n.startswith("_")] + list(extra)
            found = []
            for n in dict.fromkeys(wanted):
                try:
                    value = __getattr__(n)
                except Exception:  # noqa: BLE001  (an operator the namespace lacks)
                    continue
                if kind is None and (isinstance(value, type) or not callable(value)
                                     or type(value).__name__ == "module"):
                    continue
                found.append(n)
            state["all"] = sorted(found)
        return state["all"]

    def __getattr__(name):
        if name == "__all__":
            return _all()
        if name.startswith("__"):
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        try:
            return getattr(source(), name)
        except AttributeError:
            if fallback is not None:
                try:
                    return fallback(name)
                except AttributeError:
                    pass
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}",
                                 name=name) from None

    def __dir__():
        return sorted(set(_all()))

    return __getattr__, __dir__


_aliases = None


def registry_aliases():
    """``{alias: canonical name}`` of MXNet 1.9.1's operator registry."""
    global _aliases
    if _aliases is None:
        with open(_TABLE_PATH) as f:
            _aliases = dict(json.load(f)["aliases"])
    return _aliases
