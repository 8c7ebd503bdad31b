"""``mx.error``: MXNet's structured error classes and their registry.

``register`` records an error class under a name (``mx.base.error_types``); MXNet's C++ side
used it to turn ``"ValueError: ..."`` messages into Python exceptions. The classes MXNet
registers by default are registered here too.
"""
from .base import MXNetError, register_error

__all__ = ["MXNetError", "register"]

register = register_error


@register_error
class InternalError(MXNetError):
    """An internal error of the framework (the message gets a hint to report it)."""

    def __init__(self, msg):
        if "MXNet hint:" not in msg:
            msg += ("\nMXNet hint: You hit an internal error. Please open an issue in "
                    "https://github.com/apache/incubator-mxnet/issues/new/choose to report it.")
        super().__init__(msg)


for _cls in (ValueError, TypeError, AttributeError, IndexError, NotImplementedError):
    register_error(_cls.__name__, _cls)
