"""``mx.registry``: name -> class factories, as MXNet 1.x offers to libraries (GluonNLP builds
its registries of models, datasets and embeddings on it).

    register = mx.registry.get_register_func(Base, "thing")
    alias = mx.registry.get_alias_func(Base, "thing")
    create = mx.registry.get_create_func(Base, "thing")

    @alias("sq")
    @register
    class Square(Base): ...

    create("square", 3)   create("SQ")   create(thing="sq")   create('["sq", {"k": 1}]')

Names are case-insensitive (stored lower case). Misuse raises AssertionError, the error MXNet
1.9.1 raises here, with a message naming the class or name at fault.
"""
from __future__ import annotations

import json
import warnings

__all__ = ["get_registry", "get_register_func", "get_alias_func", "get_create_func"]

_REGISTRY: dict = {}


def _table(base_class):
    return _REGISTRY.setdefault(base_class, {})


def get_registry(base_class):
    """A copy of the ``name -> class`` table registered for ``base_class``."""
    return dict(_table(base_class))


def get_register_func(base_class, nickname):
    """A function ``register(klass, name=None)`` that files subclasses of ``base_class``
    under ``name`` (default: the class name), lower-cased; a second class under the same
    name replaces the first with a warning."""
    table = _table(base_class)

    def register(klass, name=None):
        if not (isinstance(klass, type) and issubclass(klass, base_class)):
            raise AssertionError(f"Can only register subclass of {base_class.__name__} "
                                 f"(got {klass!r})")
        key = (klass.__name__ if name is None else name).lower()
        old = table.get(key)
        if old is not None:
            warnings.warn(f"New {nickname} {klass.__module__}.{klass.__name__} registered with "
                          f"name {key} is overriding existing {nickname} "
                          f"{old.__module__}.{old.__name__}", UserWarning, stacklevel=2)
        table[key] = klass
        return klass

    register.__doc__ = f"Register {nickname} to the {nickname} factory"
    return register


def get_alias_func(base_class, nickname):
    """A decorator factory ``alias(*names)`` registering a class under each of ``names``."""
    register = get_register_func(base_class, nickname)

    def alias(*aliases):
        def reg(klass):
            for a in aliases:
                register(klass, a)
            return klass
        return reg
    return alias


def get_create_func(base_class, nickname):
    """A function ``create(name_or_instance, *args, **kwargs)`` that builds the registered
    class ``name`` with the remaining arguments. ``name`` may also be an instance (returned
    as is), a dict of keyword arguments holding ``nickname``, or JSON text: ``'["name",
    {kwargs}]'`` or ``'{"nickname": "name", ...}'``. Without positional arguments the name is
    the ``nickname`` keyword."""
    table = _table(base_class)

    def create(*args, **kwargs):
        if args:
            name, args = args[0], args[1:]
        else:
            if nickname not in kwargs:
                raise KeyError(nickname)
            name = kwargs.pop(nickname)
        if isinstance(name, base_class):
            if args or kwargs:
                raise AssertionError(f"{nickname} is already an instance. Additional "
                                     "arguments are invalid")
            return name
        if isinstance(name, dict):
            return create(**name)
        if not isinstance(name, str):
            raise AssertionError(f"{nickname} must be of string type (got "
                                 f"{type(name).__name__})")
        if name.startswith("[") or name.startswith("{"):
            if args or kwargs:
                raise AssertionError(f"{nickname}: a JSON description takes no further "
                                     "arguments")
            spec = json.loads(name)
            if isinstance(spec, dict):
                return create(**spec)
            name, kwargs = spec
            return create(name, **kwargs)
        key = name.lower()
        if key not in table:
            raise AssertionError(f"{key} is not registered. Please register with "
                                 f"{nickname}.register first")
        return table[key](*args, **kwargs)

    create.__doc__ = (f"Create a {nickname} instance from config.\n\nParameters\n----------\n"
                      f"{nickname} : str or {base_class.__name__} instance\n"
                      "    class name of desired instance. If is a instance,\n"
                      "    it will be returned directly.\n"
                      "**kwargs : dict\n    arguments to be passed to constructor")
    return create


# Names MXNet 1.9.1's module of the same path exposes (programs import them from here).
from .base import string_types  # noqa: E402,F401
