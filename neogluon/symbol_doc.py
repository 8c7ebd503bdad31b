"""``mx.symbol_doc``: MXNet's classes that carry extra documentation for symbol operators.

In MXNet a class ``<op>Doc`` deriving from :class:`SymbolDoc` adds its docstring to the
generated documentation of ``mx.sym.<op>``. The classes are kept for programs that import
them; :meth:`SymbolDoc.get_output_shape` works on neogluon's symbols.
"""

__all__ = ["SymbolDoc", "ActivationDoc", "DropoutDoc", "EmbeddingDoc", "FlattenDoc",
           "FullyConnectedDoc", "ConcatDoc", "BroadcastPlusDoc"]


class SymbolDoc:
    """Base class of the extra operator documentation."""

    @staticmethod
    def get_output_shape(sym, **input_shapes):
        """``{output name: shape}`` of ``sym`` for the given input shapes."""
        _, out_shapes, _ = sym.infer_shape(**input_shapes)
        return dict(zip(sym.list_outputs(), out_shapes))


class ActivationDoc(SymbolDoc):
    """Extra documentation of ``Activation``."""


class DropoutDoc(SymbolDoc):
    """Extra documentation of ``Dropout``."""


class EmbeddingDoc(SymbolDoc):
    """Extra documentation of ``Embedding``."""


class FlattenDoc(SymbolDoc):
    """Extra documentation of ``Flatten``."""


class FullyConnectedDoc(SymbolDoc):
    """Extra documentation of ``FullyConnected``."""


class ConcatDoc(SymbolDoc):
    """Extra documentation of ``Concat``."""


class BroadcastPlusDoc(SymbolDoc):
    """Extra documentation of ``broadcast_plus``."""
