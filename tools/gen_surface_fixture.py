"""Record MXNet 1.9.1's module/name surface for tools/surface.py and tests/test_surface.py.

Run with the reference MXNet's interpreter:

    /tmp/mxref/bin/python tools/gen_surface_fixture.py [--out tests/fixtures/surface/mxnet_1_9_1.json]

Every module of the installed ``mxnet`` package is found with ``pkgutil.walk_packages`` and
imported; a module that does not import on MXNet itself is recorded under ``"import_failures"``
with the error (nothing is expected of neogluon for it). For each module that imports, the
names it exposes are recorded with their kind (``module``, ``class``, ``function``, ``other``):

* its ``__all__`` when the module defines one, else ``dir()`` without leading underscores;
  from ``dir()``, names bound to objects that are not MXNet's (``np``, ``math``,
  ``OrderedDict``: what the module imported from the standard library or NumPy) are left out;
  constants (``string_types``, ``numeric_types``) stay;
* plus ``EXTRA``: names outside that rule that real packages are known to import
  (``from mxnet.gluon.block import _flatten``, ``from mxnet.gluon.utils import
  _get_repo_file_url`` in GluonCV, ...).

The NumPy-interface modules (``mxnet.numpy``, ``mxnet.numpy_extension``,
``mxnet.ndarray.numpy*``, ``mxnet.symbol.numpy*`` and their helpers) are recorded apart, with
``--numpy`` (into tests/fixtures/surface/mxnet_1_9_1_numpy.json; tools/surface.py counts both).
Two of them, ``mxnet.numpy`` and ``mxnet.numpy_extension``, declare an empty ``__all__`` and
fill themselves with ``from .x import *``: their surface is their public ``dir()`` (NumPy's
dtypes and helpers such as ``float32``, ``finfo``, ``promote_types`` included, as MXNet
re-exports them).

    /tmp/mxref/bin/python tools/gen_surface_fixture.py --numpy
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import pkgutil
import sys
import types
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(os.path.dirname(HERE), "tests", "fixtures", "surface",
                           "mxnet_1_9_1.json")
NUMPY_OUT = os.path.join(os.path.dirname(HERE), "tests", "fixtures", "surface",
                         "mxnet_1_9_1_numpy.json")

# Module-name prefixes that belong to the NumPy interface (another issue covers mx.np).
EXCLUDED_PREFIXES = ("mxnet.numpy", "mxnet.numpy_extension", "mxnet.ndarray.numpy",
                     "mxnet.ndarray.numpy_extension", "mxnet.symbol.numpy",
                     "mxnet.symbol.numpy_extension", "mxnet._numpy_op_doc",
                     "mxnet.numpy_dispatch_protocol", "mxnet.numpy_op_fallback",
                     "mxnet.numpy_op_signature")

# Names real packages import that the public-name rule above does not record: private helpers
# (GluonCV, GluonNLP, MXNet's own tests and examples) and module attributes that fall outside
# a module's ``__all__``.
EXTRA = {
    "mxnet.base": ["_as_list", "MXNetError", "string_types", "numeric_types", "integer_types",
                   "py_str"],
    "mxnet.gluon.block": ["_flatten", "_regroup", "symbol", "ndarray"],
    "mxnet.gluon.utils": ["_get_repo_file_url", "_get_repo_url", "_brief_print_list"],
    "mxnet.gluon.loss": ["_apply_weighting", "_reshape_like"],
    "mxnet.gluon.data.dataloader": ["_as_in_context", "_MultiWorkerIter", "ForkingPickler",
                                    "default_batchify_fn", "default_mp_batchify_fn"],
    "mxnet.gluon.rnn.rnn_cell": ["_format_sequence", "_get_begin_state", "_cells_state_info",
                                 "_cells_begin_state"],
    "mxnet.image.image": ["_get_interp_method"],
    "mxnet.metric": ["ndarray"],
    "mxnet.ndarray": ["_internal", "op"],
    "mxnet.symbol": ["_internal", "op"],
    "mxnet.ndarray.ndarray": ["_STORAGE_TYPE_DEFAULT", "_STORAGE_TYPE_ROW_SPARSE",
                              "_STORAGE_TYPE_CSR", "_GRAD_REQ_MAP", "_DTYPE_NP_TO_MX",
                              "_DTYPE_MX_TO_NP"],
    "mxnet.context": ["_current"],
    # NumPy interface: private helpers that programs and MXNet's own tests import
    "mxnet.numpy.multiarray": ["_np_ndarray_cls"],
    "mxnet.ndarray.numpy": ["_internal"],
    "mxnet.symbol.numpy": ["_internal", "_Symbol"],
    "mxnet.numpy_dispatch_protocol": ["_NUMPY_ARRAY_FUNCTION_LIST", "_NUMPY_ARRAY_UFUNC_LIST",
                                      "_NUMPY_ARRAY_FUNCTION_DICT", "_NUMPY_ARRAY_UFUNC_DICT"],
}


NUMPY_HUBS = ("mxnet.numpy", "mxnet.numpy_extension")


def excluded(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") or name.startswith(p + "_")
               for p in EXCLUDED_PREFIXES)


def kind_of(value) -> str:
    if isinstance(value, types.ModuleType):
        return "module"
    if inspect.isclass(value):
        return "class"
    if callable(value):
        return "function"
    return "other"


def is_mxnet_object(value) -> bool:
    """Whether ``value`` is MXNet's own (a module, class or function of the mxnet package), or
    a plain value (kept: constants are part of a module's surface)."""
    if isinstance(value, types.ModuleType):
        return value.__name__.split(".")[0] == "mxnet"
    if inspect.isclass(value) or inspect.isroutine(value):
        mod = getattr(value, "__module__", None) or ""
        return mod.split(".")[0] == "mxnet"
    if callable(value):
        mod = getattr(type(value), "__module__", None) or ""
        return mod.split(".")[0] == "mxnet"
    mod = getattr(type(value), "__module__", None) or ""
    if mod in ("builtins", "numpy") or mod.split(".")[0] == "mxnet":
        return True
    return False


def module_surface(module, numpy_hub=False, numpy=False):
    names = {}
    declared = getattr(module, "__all__", None)
    if numpy_hub:
        # mxnet.numpy / mxnet.numpy_extension: everything public, NumPy's dtypes included
        for n in dir(module):
            if n.startswith("_"):
                continue
            value = getattr(module, n)
            if isinstance(value, types.ModuleType) and not is_mxnet_object(value):
                continue
            names[n] = kind_of(value)
    elif declared is not None:
        for n in declared:
            if hasattr(module, n):
                names[n] = kind_of(getattr(module, n))
    else:
        for n in dir(module):
            if n.startswith("_"):
                continue
            value = getattr(module, n)
            if is_mxnet_object(value):
                names[n] = kind_of(value)
    for n in EXTRA.get(module.__name__, ()):
        if hasattr(module, n):
            names[n] = kind_of(getattr(module, n))
    # A name the module exposes that is one of the excluded NumPy-interface modules.
    if not numpy:
        for n in [n for n, k in names.items() if k == "module"]:
            value = getattr(module, n)
            if excluded(value.__name__):
                del names[n]
    return dict(sorted(names.items()))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    parser.add_argument("--numpy", action="store_true",
                        help="record the NumPy-interface modules (left out otherwise)")
    args = parser.parse_args(argv)
    if args.out is None:
        args.out = NUMPY_OUT if args.numpy else DEFAULT_OUT
    warnings.simplefilter("ignore")
    import mxnet
    found = set()
    failures = {}

    def onerror(name):
        failures[name] = repr(sys.exc_info()[1])

    for info in pkgutil.walk_packages(mxnet.__path__, "mxnet.", onerror=onerror):
        found.add(info.name)
    modules = {} if args.numpy else {"mxnet": module_surface(mxnet)}
    for name in sorted(found):
        if excluded(name) != args.numpy:
            continue
        try:
            module = importlib.import_module(name)
        except BaseException as err:  # noqa: BLE001  (a module exiting on import counts too)
            failures[name] = f"{type(err).__name__}: {err}"[:300]
            continue
        modules[name] = module_surface(module, numpy_hub=name in NUMPY_HUBS,
                                       numpy=args.numpy)
    failures = {k: v for k, v in sorted(failures.items()) if excluded(k) == args.numpy}
    out = {
        "mxnet_version": mxnet.__version__,
        "excluded_prefixes": list(EXCLUDED_PREFIXES),
        "import_failures": failures,
        "modules": modules,
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
        f.write("\n")
    total = sum(len(v) for v in modules.values())
    print(f"{len(modules)} modules, {total} names, {len(failures)} import failures "
          f"-> {args.out}")


if __name__ == "__main__":
    main()
