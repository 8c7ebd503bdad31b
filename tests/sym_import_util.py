"""Deterministic parameter values shared by tools/gen_symbol_import_fixtures.py (run under
MXNet 1.9.1), tools/check_exports_in_mxnet.py and tests/test_symbol_import.py, so the big model
zoo graphs are compared without committing their weights: every parameter's values follow
from its name and shape alone (plain numpy, the same numbers in both interpreters)."""
import zlib

import numpy as np

def det_param(name, shape):
    """float32 values for the parameter ``name`` of ``shape``: a hash of the element index
    seeded by the name (uint32 arithmetic, which wraps the same way in every numpy), uniform
    with variance 1/fan_in; positive (0.5..1) for batch-norm scales and variances, small for
    biases and means."""
    shape = tuple(int(d) for d in shape)
    n = int(np.prod(shape)) if shape else 1
    h = np.arange(n, dtype=np.uint32)
    h *= np.uint32(2654435761)
    h += np.uint32(zlib.crc32(name.encode()) & 0xFFFFFFFF)
    h ^= h >> np.uint32(15)
    h *= np.uint32(2246822519)
    h ^= h >> np.uint32(13)
    u = h.astype(np.float32)
    u *= np.float32(2.0 ** -32)
    u -= np.float32(0.5)                                    # uniform in [-0.5, 0.5]
    if name.endswith(("running_var", "moving_var", "gamma")):
        np.abs(u, out=u)
        u += np.float32(0.5)
    elif name.endswith(("running_mean", "moving_mean", "beta", "bias")):
        u *= np.float32(0.2)
    else:
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        u *= np.float32(np.sqrt(12.0 / max(1, fan_in)))
    return u.reshape(shape)


def det_input(shape, k=1):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n, dtype=np.float64) * 0.37 + k) * 0.5).astype(
        np.float32).reshape(shape)
