"""``mxnet.kvstore.kvstore_server``: MXNet's parameter-server process.

In MXNet a ``dist_*`` job started server processes (``DMLC_ROLE=server``) that ran
``KVStoreServer(kv).run()``. neogluon's distributed stores have no server processes: the
workers reduce among themselves (see :mod:`neogluon.kvstore.dist`). ``KVStoreServer`` is the
class programs refer to; ``run()`` raises MXNetError saying so.
"""
from ..base import MXNetError

__all__ = ["KVStoreServer"]


class KVStoreServer:
    """The server loop of a parameter-server job (neogluon has no server role)."""

    def __init__(self, kvstore):
        self.kvstore = kvstore
        self.init_logginig = False

    def run(self):
        raise MXNetError("KVStoreServer.run: neogluon's distributed kvstores have no server "
                         "processes (the workers reduce among themselves); start only workers "
                         "(DMLC_ROLE=worker, or neogluon's launcher)")
