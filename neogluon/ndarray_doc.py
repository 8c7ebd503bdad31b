"""``mx.ndarray_doc``: MXNet's classes that carry extra documentation for nd operators.

In MXNet a class ``<op>Doc`` deriving from :class:`NDArrayDoc` adds its docstring to the
generated documentation of operator ``<op>``. neogluon's operators are documented where they
are written; the classes are kept for programs that import or subclass them.
"""

__all__ = ["NDArrayDoc", "ReshapeDoc", "elemwise_addDoc", "BroadcastToDoc", "StackDoc",
           "CustomDoc"]


class NDArrayDoc:
    """Base class of the extra operator documentation."""


class ReshapeDoc(NDArrayDoc):
    """Extra documentation of ``reshape``."""


class elemwise_addDoc(NDArrayDoc):  # noqa: N801  (MXNet's name)
    """Extra documentation of ``elemwise_add``."""


class BroadcastToDoc(NDArrayDoc):
    """Extra documentation of ``broadcast_to``."""


class StackDoc(NDArrayDoc):
    """Extra documentation of ``stack``."""


class CustomDoc(NDArrayDoc):
    """Extra documentation of ``Custom``."""
