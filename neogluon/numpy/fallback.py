"""``mx.np.fallback``: the NumPy functions MXNet 1.9.1 forwards to official NumPy.

As in MXNet, each name here *is* official NumPy's function (``mx.np.fallback.cov is
numpy.cov``); ``mx.np.cov`` and the other ``mx.np`` names built on this list wrap it so that
mx.np arrays go in and come out (see :mod:`neogluon.numpy._fallback`). Functions this NumPy no
longer provides (``msort``, ``in1d``, ``trapz``, the financial functions) are stand-ins with
the old behaviour, or raise NotImplementedError naming the function.
"""
import numpy as _onp

from ._fallback import _legacy

__all__ = ["allclose", "alltrue", "apply_along_axis", "apply_over_axes", "argpartition",
           "argwhere", "array_equal", "array_equiv", "choose", "compress", "corrcoef",
           "correlate", "count_nonzero", "cov", "digitize", "divmod", "extract",
           "flatnonzero", "float_power", "frexp", "heaviside", "histogram2d",
           "histogram_bin_edges", "histogramdd", "i0", "in1d", "interp", "intersect1d",
           "isclose", "isin", "ix_", "lexsort", "min_scalar_type", "mirr", "modf", "msort",
           "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmedian",
           "nanmin", "nanpercentile", "nanprod", "nanquantile", "ndim", "npv", "partition",
           "piecewise", "packbits", "poly", "polyadd", "polydiv", "polyfit", "polyint",
           "polymul", "polysub", "positive", "ppmt", "promote_types", "ptp", "pv", "rate",
           "real", "result_type", "rollaxis", "roots", "searchsorted", "select", "setdiff1d",
           "setxor1d", "signbit", "size", "spacing", "take_along_axis", "trapz",
           "tril_indices_from", "trim_zeros", "triu_indices_from", "union1d", "unpackbits",
           "unwrap", "vander"]

# MXNet's module also binds these (outside its __all__)
_EXTRA = ["nanstd", "nansum", "nanvar", "pmt"]


def _official(name):
    fn = getattr(_onp, name, None)
    return fn if fn is not None else _legacy(name)


globals().update({_n: _official(_n) for _n in __all__ + _EXTRA})
