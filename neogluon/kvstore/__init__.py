"""``mx.kv``: key-value stores that synchronise weights and gradients across contexts.

``mx.kv.create('device')`` gives the single-process store; ``KVStoreBase.register`` adds a
user's own store under its class name, usable by ``gluon.Trainer(..., kvstore=name)``.
"""
from .base import KVStoreBase, TestStore, create
from .local import KVStore
from .compression import GradientCompression
from . import kvstore, kvstore_server  # noqa: F401  (MXNet's module paths of the classes)
from .kvstore_server import KVStoreServer

__all__ = ["KVStoreBase", "KVStore", "TestStore", "create", "GradientCompression"]
