"""``mx.np.fallback_linalg``: the ``numpy.linalg`` functions MXNet 1.9.1 forwards to official
NumPy. Each name is official NumPy's function, as in MXNet; ``mx.np.linalg.cond`` and the
others wrap them for mx.np arrays."""
import numpy as _onp

__all__ = ["cond", "lstsq", "matrix_power", "matrix_rank", "multi_dot", "qr"]

cond = _onp.linalg.cond
lstsq = _onp.linalg.lstsq
matrix_power = _onp.linalg.matrix_power
matrix_rank = _onp.linalg.matrix_rank
multi_dot = _onp.linalg.multi_dot
qr = _onp.linalg.qr
