"""Fixture trees: JSON for the structure, an ``.npz`` for the arrays in it.

The generators in tools/ (run under MXNet 1.9.1) build them with :class:`Recorder`; the tests
read them back with :func:`resolve`. An array in the tree is ``{"__array__": key}``.
"""
import numpy as np


class Recorder:
    """Collects named results; numpy arrays go to ``arrays``, everything else to ``meta``."""

    def __init__(self):
        self.arrays = {}
        self.meta = {}

    def put(self, name, result):
        self.meta[name] = self._walk(name, result)

    def _walk(self, prefix, x):
        if isinstance(x, np.ndarray):
            self.arrays[prefix] = x
            return {"__array__": prefix}
        if isinstance(x, dict):
            return {str(k): self._walk(f"{prefix}.{k}", v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [self._walk(f"{prefix}.{i}", v) for i, v in enumerate(x)]
        if isinstance(x, (np.floating, np.integer, np.bool_)):
            return x.item()
        return x


def resolve(x, arrays):
    """``x`` with each ``{"__array__": key}`` replaced by ``arrays[key]``."""
    if isinstance(x, dict):
        if set(x) == {"__array__"}:
            return arrays[x["__array__"]]
        return {k: resolve(v, arrays) for k, v in x.items()}
    if isinstance(x, list):
        return [resolve(v, arrays) for v in x]
    return x
