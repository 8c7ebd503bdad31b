"""``mxnet.kvstore.kvstore``: the module of MXNet's ``KVStore`` class
(``from mxnet.kvstore.kvstore import KVStore`` gives ``mx.kv.KVStore``)."""
from .local import KVStore

__all__ = ["KVStore"]
