"""Make ``import mxnet`` (and every ``mxnet.*`` module) resolve to neogluon.

    import neogluon.mxnet_alias      # in a notebook, before the first ``import mxnet``
    import mxnet as mx               # now neogluon's API: ``mx.nd is neogluon.nd``

The top-level ``mxnet`` is a thin module of its own that shares the ``neogluon`` package's
namespace: attribute reads, writes and deletes (and ``dir()``) through either name see the same
names and objects. Only its identity differs: its ``__name__`` is ``"mxnet"`` and its
``__version__`` is the MXNet API level neogluon implements (``"1.9.1"``, which MXNet programs
and GluonCV/GluonNLP compare against MXNet releases), while ``neogluon.__version__`` is
neogluon's own release. Each ``mxnet.X.Y`` below it is the *same module object* as
``neogluon.X.Y``: classes, registries and module-level state are shared, so ``isinstance``
checks and monkeypatches behave as expected.

A real MXNet installation is never shadowed unless asked: by default the alias finder steps
aside for the top-level ``mxnet`` when another finder knows a real one. Call
:func:`install` with ``shadow=True`` (or set ``NEOGLUON_SHADOW_MXNET=1`` before importing this
module) to put neogluon in front of an installed MXNet.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types

__all__ = ["install", "uninstall", "installed", "real_mxnet_present"]

# Compatibility steps for libraries written against MXNet 1.x (see _LibraryCheckFinder):
#
# GluonCV 0.10.x (``gluoncv/__init__.py``) calls ``gluoncv.check._require_pytorch_version('1.4.0',
# '2.0.0')`` at import time and raises RuntimeError when torch >= 2 is installed -- which it
# always is next to neogluon. That check guards GluonCV's own PyTorch half (``gluoncv.torch``,
# written for torch 1.x), not its MXNet half that runs on neogluon. While the alias is
# installed, and only for that one function, the check answers as it does when torch is absent
# (ImportError, which GluonCV catches: ``_found_pytorch = False``). Nothing else in GluonCV,
# torch or neogluon changes.

_ALIAS = "mxnet"
_TARGET = "neogluon"


def _keep_finder_first():
    # Finders installed after the alias (pytest's assertion rewriter is one) would otherwise
    # see ``mxnet.test_utils`` first, find neogluon/test_utils.py through the shared
    # ``__path__`` and execute a second copy of it. Staying first keeps one module object.
    if sys.meta_path and sys.meta_path[0] is not _finder and _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
        sys.meta_path.insert(0, _finder)


class _SameModuleLoader(importlib.abc.Loader):
    """Hands out the already-imported neogluon module for an ``mxnet.*`` name."""

    def __init__(self, target_name: str):
        self._target_name = target_name
        self._target_spec = None

    def create_module(self, spec):
        module = importlib.import_module(self._target_name)
        self._target_spec = module.__spec__
        self._alias_name = spec.name
        return module

    def exec_module(self, module):
        # The import system stamped the alias spec on the shared module; give the module its
        # own spec back so reload(), pickling by reference and ``python -m`` keep working.
        if self._target_spec is not None:
            module.__spec__ = self._target_spec
        _keep_parent_binding(getattr(self, "_alias_name", ""), module)
        _keep_finder_first()


def _keep_parent_binding(alias_name, module):
    """Keep what a package binds to a submodule's name.

    After loading a module the import system binds it on its parent package
    (``setattr(parent, child, module)``). For ``import mxnet.a.b`` that "new" module is
    neogluon's ``a.b``, imported long before, whose package may have bound the name to
    something else since: ``vision.alexnet`` is the function that ``from .alexnet import
    alexnet`` put over the submodule (in MXNet too). Without this the first ``import
    mxnet.gluon.model_zoo.vision.alexnet`` would turn ``vision.alexnet`` into the module. The
    parent's next write of exactly that module under that name is dropped (the parent's class
    is swapped for one write and restored by it)."""
    parent_name, _, child = alias_name.rpartition(".")
    parent = sys.modules.get(parent_name)
    if parent is None or not child:
        return
    current = parent.__dict__.get(child, _MISSING)
    if current is _MISSING or current is module:
        return
    cls = type(parent)

    def __setattr__(self, name, value):
        types.ModuleType.__setattr__(self, "__class__", cls)
        if name == child and value is module:
            return
        setattr(self, name, value)

    try:
        parent.__class__ = type(cls.__name__, (cls,), {"__setattr__": __setattr__,
                                                       "__module__": cls.__module__})
    except TypeError:       # a module class that does not allow the swap: leave it
        pass


# Attributes that belong to the ``mxnet`` module itself rather than to neogluon: its identity
# (what the import system sets on a module), its version and its attribute hook. Every other
# name is neogluon's.
_OWN = frozenset({"__name__", "__qualname__", "__doc__", "__spec__", "__loader__",
                  "__package__", "__path__", "__file__", "__cached__", "__builtins__",
                  "__version__", "__getattr__", "__class__", "__dict__"})

_target_module = None     # the neogluon package, once the ``mxnet`` module exists
_mxnet = None             # the one ``mxnet`` module of this process
_MISSING = object()

# How the ``mxnet`` module sees neogluon's names. The plain way, a class-level ``__getattr__``
# that looks each name up on neogluon, was measured at ~2.6 us for ``mx.nd`` against ~0.13 us
# for ``neogluon.nd`` (CPython 3.11 builds and discards an AttributeError on each read before
# the hook runs; an ``mx.nd.ones((2, 2))`` is ~17 us, so it was a 15% tax on small ops), and a
# class-level ``__getattribute__`` at ~0.5 us. So the ``mxnet`` module keeps a copy of
# neogluon's namespace in its own ``__dict__`` (reads cost what they cost on neogluon), kept
# equal to it: every write or delete through either name goes to neogluon and to the copy
# (neogluon's module class becomes ``_NeogluonPackage`` for that), and a name that is not in the
# copy yet (a lazily imported submodule) is looked up on neogluon by the module's
# ``__getattr__`` hook and added. Only a write straight into ``vars(neogluon)`` (not through
# ``setattr``) or a ``reload(neogluon)`` bypasses the copy; ``importlib.reload(mxnet)`` copies
# again.


def _mirror(name, value):
    if _mxnet is not None and name not in _OWN:
        _mxnet.__dict__[name] = value


class _NeogluonPackage(types.ModuleType):
    """neogluon's module class while the ``mxnet`` module exists: writes and deletes of its
    attributes are made on the ``mxnet`` module's copy of its namespace too."""

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        _mirror(name, value)

    def __delattr__(self, name):
        super().__delattr__(name)
        if _mxnet is not None and name not in _OWN:
            _mxnet.__dict__.pop(name, None)


class _MXNetModule(types.ModuleType):
    """The top-level ``mxnet``: neogluon's namespace under MXNet's name and version.

    Every name outside ``_OWN`` is neogluon's: ``mxnet.nd is neogluon.nd``; ``mxnet.gluon = m``
    (the import system does this for ``import mxnet.gluon``) sets ``neogluon.gluon``; a
    monkeypatch or ``del`` through either name is seen through both; ``dir(mxnet)`` lists
    neogluon's names and ``from mxnet import *`` imports neogluon's public names. Its own are
    ``__name__`` (``"mxnet"``), ``__spec__``/``__path__`` (neogluon's directory, so
    ``import mxnet.X`` works) and ``__version__``, the MXNet API level.
    """

    _neogluon_alias = True

    def __setattr__(self, name, value):
        if name in _OWN:
            super().__setattr__(name, value)
        else:
            setattr(_target_module, name, value)
            self.__dict__[name] = value

    def __delattr__(self, name):
        if name in _OWN:
            super().__delattr__(name)
        else:
            delattr(_target_module, name)
            self.__dict__.pop(name, None)

    def __dir__(self):
        return sorted(set(dir(_target_module)) | set(self.__dict__))


def _mxnet_getattr(name):
    """The ``mxnet`` module's ``__getattr__`` hook: a name its copy does not hold yet."""
    try:
        value = getattr(_target_module, name)
    except AttributeError as err:
        if str(err) != f"module {_TARGET!r} has no attribute {name!r}":
            raise       # raised while neogluon imported a lazy submodule: keep it as is
        raise AttributeError(f"module {_ALIAS!r} has no attribute {name!r}",
                             name=name, obj=_mxnet) from None
    if vars(_target_module).get(name, _MISSING) is value:
        _mirror(name, value)
    return value


def _copy_namespace():
    own = _mxnet.__dict__
    for name in [n for n in own if n not in _OWN]:
        del own[name]
    for name, value in list(vars(_target_module).items()):
        _mirror(name, value)


class _MXNetModuleLoader(importlib.abc.Loader):
    """Hands out the process's one ``mxnet`` module (see :func:`_mxnet_module`)."""

    def create_module(self, spec):
        return _mxnet_module()

    def exec_module(self, module):
        # Everything was set when the module was made; the import system has only replaced
        # ``__spec__`` by an equal one. Keep the first, as for the submodules. (Under
        # ``importlib.reload(mxnet)`` the namespace is copied from neogluon again.)
        module.__spec__ = _mxnet_spec
        if module is _mxnet:
            _copy_namespace()
        _keep_finder_first()


_mxnet_loader = _MXNetModuleLoader()
_mxnet_spec = None


def _mxnet_module():
    """The ``mxnet`` module object of this process, made on first use."""
    global _mxnet, _target_module, _mxnet_spec
    if _mxnet is None:
        target = importlib.import_module(_TARGET)
        spec = importlib.machinery.ModuleSpec(_ALIAS, _mxnet_loader, origin=target.__file__,
                                              is_package=True)
        spec.submodule_search_locations = target.__path__
        spec.has_location = True
        module = _MXNetModule(_ALIAS, target.__doc__)
        for name, value in (("__spec__", spec), ("__loader__", _mxnet_loader),
                            ("__package__", _ALIAS), ("__path__", target.__path__),
                            ("__file__", target.__file__),
                            ("__cached__", getattr(target, "__cached__", None)),
                            ("__version__", target.__mxnet_version__),
                            ("__getattr__", _mxnet_getattr)):
            setattr(module, name, value)
        if type(target) is types.ModuleType:
            target.__class__ = _NeogluonPackage
        _target_module, _mxnet_spec, _mxnet = target, spec, module
        _copy_namespace()
    return _mxnet


class _AliasFinder(importlib.abc.MetaPathFinder):
    shadow = False

    def find_spec(self, fullname, path=None, target=None):
        if fullname != _ALIAS and not fullname.startswith(_ALIAS + "."):
            return None
        if fullname == _ALIAS:
            if not self.shadow and _other_finder_knows(_ALIAS):
                return None
            try:
                _mxnet_module()
            except ImportError:
                return None
            return _mxnet_spec
        if not _is_neogluon(sys.modules.get(_ALIAS)):
            return None
        if fullname in _REDIRECTS:
            return _redirect_spec(fullname)
        target_name = _TARGET + fullname[len(_ALIAS):]
        try:
            target_spec = importlib.util.find_spec(target_name)
        except (ImportError, AttributeError, ValueError):
            return None
        if target_spec is None:
            return _attribute_spec(fullname, target_name)
        is_package = target_spec.submodule_search_locations is not None
        return importlib.machinery.ModuleSpec(fullname, _SameModuleLoader(target_name),
                                              is_package=is_package)


_finder = _AliasFinder()


class _NamespaceModule(types.ModuleType):
    """``mxnet.symbol.contrib`` and the like: in MXNet a module, in neogluon an attribute
    (a namespace object) of its parent. ``from mxnet.symbol.contrib import X`` imports this
    stand-in, which looks every name up on the namespace."""

    def __init__(self, name, namespace):
        super().__init__(name, getattr(namespace, "__doc__", None))
        self.__dict__["_namespace"] = namespace

    def __getattr__(self, name):
        return getattr(self.__dict__["_namespace"], name)

    def __dir__(self):
        return sorted(set(dir(self.__dict__["_namespace"])))


class _AttributeLoader(importlib.abc.Loader):
    def __init__(self, obj):
        self._obj = obj
        self._own_spec = None

    def create_module(self, spec):
        if isinstance(self._obj, types.ModuleType):
            self._own_spec = getattr(self._obj, "__spec__", None)
            return self._obj
        return _NamespaceModule(spec.name, self._obj)

    def exec_module(self, module):
        # ``import mxnet.nd`` stamped the alias spec on neogluon.ndarray; give its own back.
        if module is self._obj and self._own_spec is not None:
            module.__spec__ = self._own_spec


def _attribute_spec(fullname, target_name):
    parent_name, _, child = target_name.rpartition(".")
    parent = sys.modules.get(parent_name)
    if parent is None or child.startswith("_"):
        return None
    try:
        obj = getattr(parent, child)
    except AttributeError:
        return None
    if isinstance(obj, type) or callable(obj) and not hasattr(obj, "__getattr__"):
        return None
    if not isinstance(obj, types.ModuleType) and type(obj).__module__.split(".")[0] != _TARGET:
        return None
    return importlib.machinery.ModuleSpec(fullname, _AttributeLoader(obj), is_package=False)


# MXNet modules whose neogluon counterpart lives under another name: alias module ->
# (neogluon module, attribute path on it or ""). MXNet's NumPy interface has three trees
# (mxnet.numpy, mxnet.ndarray.numpy, mxnet.symbol.numpy, and the same for numpy_extension);
# neogluon has one set of mx.np / mx.npx functions (which take nd and np arrays alike) and
# the symbolic namespaces mx.sym.np / mx.sym.npx.
_REDIRECTS = {
    "mxnet.ndarray.numpy": ("neogluon.numpy", ""),
    "mxnet.ndarray.numpy._op": ("neogluon.numpy._op", ""),
    "mxnet.ndarray.numpy._internal": ("neogluon.numpy._internal", ""),
    "mxnet.ndarray.numpy.linalg": ("neogluon.numpy.linalg", ""),
    "mxnet.ndarray.numpy.random": ("neogluon.numpy.random", ""),
    "mxnet.ndarray.numpy_extension": ("neogluon.numpy_extension", ""),
    "mxnet.ndarray.numpy_extension._op": ("neogluon.numpy_extension._op", ""),
    "mxnet.ndarray.numpy_extension.image": ("neogluon.numpy_extension.image", ""),
    "mxnet.ndarray.numpy_extension.random": ("neogluon.numpy_extension.random", ""),
    "mxnet.symbol.numpy": ("neogluon.symbol", "np"),
    "mxnet.symbol.numpy._op": ("neogluon.symbol", "np"),
    "mxnet.symbol.numpy._symbol": ("neogluon.symbol", "np"),
    "mxnet.symbol.numpy._internal": ("neogluon.symbol", "np._internal"),
    "mxnet.symbol.numpy.linalg": ("neogluon.symbol", "np.linalg"),
    "mxnet.symbol.numpy.random": ("neogluon.symbol", "np.random"),
    "mxnet.symbol.numpy_extension": ("neogluon.symbol", "npx"),
    "mxnet.symbol.numpy_extension._op": ("neogluon.symbol", "npx"),
    "mxnet.symbol.numpy_extension.image": ("neogluon.symbol", "npx.image"),
    "mxnet.symbol.numpy_extension.random": ("neogluon.symbol", "npx.random"),
}


def _redirect_spec(fullname):
    module_name, path = _REDIRECTS[fullname]
    try:
        obj = importlib.import_module(module_name)
        for part in filter(None, path.split(".")):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        return None
    # a package when other redirected modules live under it
    is_package = any(k.startswith(fullname + ".") for k in _REDIRECTS)
    return importlib.machinery.ModuleSpec(fullname, _AttributeLoader(obj), is_package=is_package)


def _gluoncv_torch_check(torch_version, max_torch_version="2.0.0"):
    raise ImportError("neogluon.mxnet_alias: GluonCV's MXNet half runs on neogluon; its PyTorch "
                      "half (gluoncv.torch, for torch<2) is reported as not installed")


# module name -> {attribute: replacement}, applied right after the module executes.
_LIBRARY_STEPS = {"gluoncv.check": {"_require_pytorch_version": _gluoncv_torch_check}}


class _PatchingLoader(importlib.abc.Loader):
    def __init__(self, loader, steps):
        self._loader = loader
        self._steps = steps

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        for attr, value in self._steps.items():
            if hasattr(module, attr):
                setattr(module, attr, value)


class _LibraryCheckFinder(importlib.abc.MetaPathFinder):
    """Finds the listed library modules as usual and applies their compatibility step."""

    def find_spec(self, fullname, path=None, target=None):
        steps = _LIBRARY_STEPS.get(fullname)
        if steps is None:
            return None
        for finder in sys.meta_path:
            if finder is self or finder is _finder:
                continue
            try:
                spec = finder.find_spec(fullname, path, target)
            except (ImportError, AttributeError, ValueError):
                continue
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _PatchingLoader(spec.loader, steps)
                return spec
        return None


_library_finder = _LibraryCheckFinder()


# neogluon.run's shim package for child interpreters (neogluon/_alias_path/mxnet) is this
# alias, not a real MXNet.
_SHIM_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_alias_path")


def _other_finder_knows(name) -> bool:
    for finder in sys.meta_path:
        if finder is _finder:
            continue
        try:
            spec = finder.find_spec(name, None)
        except (ImportError, AttributeError, ValueError):
            continue
        if spec is not None and not (spec.origin or "").startswith(_SHIM_DIR + os.sep):
            return True
    return False


def real_mxnet_present() -> bool:
    """True when an MXNet other than this alias (and neogluon.run's shim) can be imported."""
    return _other_finder_knows(_ALIAS)


def installed() -> bool:
    """Whether the alias finder is on ``sys.meta_path``."""
    return _finder in sys.meta_path


def install(shadow: bool = False) -> bool:
    """Put the ``mxnet`` -> ``neogluon`` alias on the import path.

    Parameters
    ----------
    shadow : bool
        Take precedence over a real MXNet installation. Without it the alias only answers when
        no real ``mxnet`` can be found.

    Returns
    -------
    bool
        True when ``import mxnet`` now gives neogluon (the ``mxnet`` module that forwards
        to it).
    """
    uninstall()
    loaded = sys.modules.get(_ALIAS)
    # The finder always goes first: once ``mxnet`` is imported, the path finder would otherwise
    # find ``mxnet.X`` through its ``__path__`` (neogluon's own directory) and execute a second
    # copy of the module (a second MXNetError class, registry, ...). Without ``shadow`` the
    # finder itself steps aside for the top-level name when another finder knows a real MXNet.
    _finder.shadow = shadow
    sys.meta_path.insert(0, _finder)
    sys.meta_path.insert(1, _library_finder)
    if shadow:
        if loaded is not None and not _is_neogluon(loaded):
            # A real mxnet was imported already: drop it so that new imports see neogluon.
            for name in [n for n in sys.modules if n == _ALIAS or n.startswith(_ALIAS + ".")]:
                del sys.modules[name]
        return True
    if loaded is not None:
        return _is_neogluon(loaded)
    return not real_mxnet_present()


def uninstall() -> None:
    """Remove the alias finder (modules already imported under ``mxnet`` stay imported)."""
    while _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    while _library_finder in sys.meta_path:
        sys.meta_path.remove(_library_finder)


def _is_neogluon(module) -> bool:
    """Whether ``module`` (what ``sys.modules['mxnet']`` holds) is this alias and not a real
    MXNet: the ``mxnet`` module this alias makes, neogluon itself (put there by hand), or
    neogluon.run's shim while it is being imported (it then replaces itself by the former)."""
    if getattr(type(module), "_neogluon_alias", False):
        return True
    if (getattr(module, "__name__", None) or "").split(".")[0] == _TARGET:
        return True
    return (getattr(module, "__file__", None) or "").startswith(_SHIM_DIR + os.sep)


_active = install(shadow=os.environ.get("NEOGLUON_SHADOW_MXNET", "") not in ("", "0"))
if not _active:
    import warnings
    warnings.warn("a real MXNet installation is present, so `import mxnet` still gives MXNet; "
                  "set NEOGLUON_SHADOW_MXNET=1 or call neogluon.mxnet_alias.install(shadow=True) "
                  "to use neogluon instead", stacklevel=2)
