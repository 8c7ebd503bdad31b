"""``mx.npx.utils``: saving and loading mx.np arrays (``mx.nd.save``'s file format)."""
from .. import ndarray as _nd
from ..numpy.multiarray import _np_tree, _nd_tree

__all__ = ["save", "load"]


def save(file, arr):
    """Save an mx.np array, a list or a dict (str -> array) of them to ``file``."""
    _nd.save(file, _nd_tree(arr) if not isinstance(arr, dict) else
             {k: _nd_tree(v) for k, v in arr.items()})


def load(file):
    """Load what :func:`save` (or ``mx.nd.save``) wrote, as mx.np arrays (a list, or a dict
    when the file has names)."""
    r = _nd.load(file)
    if isinstance(r, dict):
        return {k: _np_tree(v) for k, v in r.items()}
    return _np_tree(r)
