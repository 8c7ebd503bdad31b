"""``mx.np._internal``: the internal operators MXNet's NumPy front-end is built on, where
programs and tests call them directly (boolean-mask assignment)."""
from ..ndarray.ndarray import NDArray

__all__ = ["boolean_mask_assign_scalar", "boolean_mask_assign_tensor"]


def _assign(data, mask, value, start_axis, out, fname):
    if not isinstance(mask, NDArray):
        raise TypeError(f"{fname}: mask must be an mx.np.ndarray, got {type(mask).__name__}")
    if mask._t.dtype.is_floating_point:
        raise TypeError(f"{fname}: mask must be a bool array, got {mask.dtype}")
    span = tuple(data.shape[start_axis:start_axis + mask.ndim])
    if span != tuple(mask.shape):
        raise ValueError(f"{fname}: mask of shape {mask.shape} does not match the data's axes "
                         f"{start_axis}..{start_axis + mask.ndim - 1} of shape {data.shape}")
    target = data.copy() if out is None else out
    if out is not None and out is not data:
        out[...] = data
    key = (slice(None),) * start_axis + (mask.astype(bool),)
    target[key] = value
    return target


def boolean_mask_assign_scalar(data, mask, value, start_axis=0, out=None):
    """``data`` with ``value`` written where ``mask`` (over the axes from ``start_axis``)
    is true; into ``out`` when given (``out=data`` writes in place)."""
    return _assign(data, mask, value, start_axis, out, "boolean_mask_assign_scalar")


def boolean_mask_assign_tensor(data, mask, value, start_axis=0, out=None):
    """As :func:`boolean_mask_assign_scalar` with an array of values (one per selected
    position, or broadcast over them)."""
    return _assign(data, mask, value, start_axis, out, "boolean_mask_assign_tensor")
