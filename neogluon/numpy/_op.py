"""The functions of ``mx.np``: NumPy's names over torch operators, on ``mx.np.ndarray``.

Every function takes arrays (``mx.np``/``mx.nd`` arrays; NumPy arrays and Python numbers are
converted) and returns ``mx.np.ndarray``; gradients flow through all of them under
``autograd.record()``. Dtype rules: see :mod:`neogluon.numpy.multiarray`.
"""
from __future__ import annotations

import builtins
import numbers

import numpy as _onp
import torch

from ..base import MXNetError, MXNetValueError
from ..ndarray.ndarray import NDArray, _run, mx_mod
from ..ndarray.ops import _mx_maximum, _mx_minimum
from .multiarray import (ndarray, _wrap, _wrap_all, _as_tensor, _ctx_of, _torch_dtype,
                         _shape_arg)
from ..context import current_context
from .. import autograd as _ag
from ..ndarray._intgrad import IntVarTensor as _IntVarTensor

_Tensor = torch.Tensor
_ag_state = _ag._state
_py_round = builtins.round
_py_max = builtins.max
_py_min = builtins.min
_py_abs = builtins.abs
_py_all = builtins.all
_py_any = builtins.any
_py_sum = builtins.sum

__all__ = []


def _export(fn):
    __all__.append(fn.__name__)
    return fn


def _scalar(x):
    return isinstance(x, (bool, int, float, _onp.generic)) and not isinstance(x, NDArray)


def _ctx(*xs):
    return _ctx_of(*xs) or current_context()


def _out(result, out):
    """Write ``result`` into ``out`` (an ndarray of the result's shape) when given."""
    if out is None:
        return result
    if not isinstance(out, NDArray):
        raise TypeError(f"out must be an mx.np.ndarray, got {type(out).__name__}")
    out[...] = result
    return out


# ---------------------------------------------------------------------------- dtype rules
def _promote(a, b):
    """MXNet 1.9.1's result dtype for two arrays of torch dtypes ``a`` and ``b``."""
    if a is b:
        return a
    fa, fb = a.is_floating_point, b.is_floating_point
    if fa and fb:
        return torch.promote_types(a, b)
    if fa:
        return a
    if fb:
        return b
    if a is torch.bool or b is torch.bool:
        return torch.float32
    r = torch.promote_types(a, b)
    return torch.int32 if r in (torch.int16, torch.int8, torch.uint8) else r


def _operands(x1, x2, fname):
    """(a, b, ctx, dtype): tensors (or a Python scalar for b) in the result dtype."""
    s1, s2 = _scalar(x1), _scalar(x2)
    if s1 and s2:
        raise TypeError(f"{fname}: at least one argument must be an array")
    if s2 or s1:
        arr, sc = (x1, x2) if s2 else (x2, x1)
        t = _as_tensor(arr, what=fname)
        ctx = _ctx(arr)
        if isinstance(sc, _onp.generic):
            sc = sc.item()
        dt = t.dtype
        if dt is torch.bool and not isinstance(sc, bool):
            dt = torch.float32
            t = t.to(dt)
        if not dt.is_floating_point and isinstance(sc, float):
            sc = int(sc)  # MXNet casts the scalar to the array's dtype first
        if s2:
            return t, sc, ctx, dt
        return torch.tensor(sc, dtype=dt, device=t.device), t, ctx, dt
    a = _as_tensor(x1, what=fname)
    b = _as_tensor(x2, what=fname)
    ctx = _ctx(x1, x2)
    if b.device != a.device:
        if b.dim() == 0 and b.device.type == "cpu":
            b = b.to(a.device)
        else:
            raise MXNetError(f"{fname}: operands are on different devices ({a.device} and "
                             f"{b.device})")
    dt = _promote(a.dtype, b.dtype)
    if a.dtype is not dt:
        a = a.to(dt)
    if b.dtype is not dt:
        b = b.to(dt)
    return a, b, ctx, dt


def _apply(fn, a, b, fname, shapes):
    try:
        return _run(fn, a, b)
    except RuntimeError as err:
        msg = str(err).splitlines()[0]
        raise MXNetError(f"{fname}: operands could not be broadcast together with shapes "
                         f"{shapes[0]} {shapes[1]} ({msg})") from None


def _to_dtype(r, dt):
    """``r`` cast to ``dt``; an integer result of a recorded computation stays in the graph
    (the integer tensor with its float64 twin, as MXNet differentiates integer arrays)."""
    if r.dtype is dt:
        return r
    live = r if r.requires_grad else (getattr(r, "_carrier", None)
                                      if isinstance(r, _IntVarTensor) else None)
    if dt.is_floating_point or live is None or dt is torch.bool:
        return r.to(dt)
    with torch._C.DisableTorchFunctionSubclass():
        data = r.detach().to(dt)
    out = data.as_subclass(_IntVarTensor)
    out._carrier = live.to(torch.float64)
    return out


def _with_carrier(data, live):
    """Integer ``data`` whose gradient is that of the recorded float ``live``."""
    out = data.as_subclass(_IntVarTensor)
    out._carrier = live.to(torch.float64)
    return out


def _zero_grad_node(r, *inputs):
    """A comparison's bool result. While recording with inputs that need gradients it stays in
    the graph with gradient 0 (as in MXNet, where ``backward`` through ``x > y`` gives zero
    gradients rather than an error): a bool tensor with a float64 twin of the same values
    (see ndarray._intgrad)."""
    if r.requires_grad:
        r = r.detach()
    if not _ag_state.recording:
        return r
    live = []
    for t in inputs:
        if isinstance(t, _Tensor):
            if t.requires_grad:
                live.append(t)
            elif isinstance(t, _IntVarTensor) and getattr(t, "_carrier", None) is not None:
                live.append(t._carrier)
    if not live:
        return r
    twin = r.to(torch.float64)
    for t in live:
        twin = twin + (t.sum() * 0).to(torch.float64)
    out = r.as_subclass(_IntVarTensor)
    out._carrier = twin
    return out


def _shape_of(x):
    return tuple(getattr(x, "shape", ()))


_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def _ufunc_kwargs(name, kwargs):
    """NumPy's ufunc keywords as MXNet treats them: accepted only at their defaults
    (NotImplementedError otherwise), malformed values refused with TypeError."""
    for k, v in kwargs.items():
        if k == "where":
            if v is not True:
                raise NotImplementedError(f"{name}: where={v!r} is not supported")
        elif k == "casting":
            if v not in _CASTINGS:
                raise TypeError(f"{name}: casting must be one of {_CASTINGS}, got {v!r}")
            if v != "same_kind":
                raise NotImplementedError(f"{name}: casting={v!r} is not supported")
        elif k == "order":
            if v != "K":
                raise NotImplementedError(f"{name}: order={v!r} is not supported")
        elif k == "dtype":
            if v is not None:
                _torch_dtype(v)   # TypeError for a malformed dtype
                raise NotImplementedError(f"{name}: dtype={v!r} is not supported")
        elif k == "subok":
            if v is not True:
                raise NotImplementedError(f"{name}: subok={v!r} is not supported")
        else:
            raise TypeError(f"{name}() got an unexpected keyword argument {k!r}")


def _check_out(name, out):
    if out is not None and not isinstance(out, NDArray):
        raise TypeError(f"{name}: out must be an mx.np.ndarray, got {type(out).__name__}")


def _binary(name, fn, kind="arith"):
    """A NumPy binary ufunc: ``kind`` says how the dtype comes out ('arith': the operands';
    'float': float32 for integer operands; 'cmp'/'logical': bool; 'int': integers only)."""
    def ufunc(x1, x2, out=None, **kwargs):
        if kwargs:
            _ufunc_kwargs(name, kwargs)
        _check_out(name, out)
        if kind == "logical":
            a = _as_tensor(x1, what=name) if not _scalar(x1) else x1
            b = _as_tensor(x2, what=name) if not _scalar(x2) else x2
            ctx = _ctx(x1, x2)
            a = a.bool() if isinstance(a, _Tensor) else bool(a)
            b = b.bool() if isinstance(b, _Tensor) else bool(b)
            if not isinstance(a, _Tensor):
                a = torch.tensor(a, device=b.device)
            r = _apply(fn, a, b, name, (_shape_of(x1), _shape_of(x2)))
            return _out(_wrap(r, ctx), out)
        a, b, ctx, dt = _operands(x1, x2, name)
        if kind == "float" and not dt.is_floating_point:
            a = a.to(torch.float32)
            if isinstance(b, _Tensor):
                b = b.to(torch.float32)
        elif kind == "int" and dt.is_floating_point:
            raise TypeError(f"ufunc '{name}' not supported for the input types ({dt})")
        if not isinstance(b, _Tensor) and fn not in _SCALAR_OK:
            b = torch.tensor(b, dtype=a.dtype, device=a.device)
        r = _apply(fn, a, b, name, (_shape_of(x1), _shape_of(x2)))
        if kind == "cmp":
            r = _zero_grad_node(r, a, b)
        elif kind == "arith" and r.dtype is not dt:
            r = _to_dtype(r, dt)
        return _out(_wrap(r, ctx), out)
    ufunc.__name__ = ufunc.__qualname__ = name
    ufunc.__doc__ = f"NumPy's ``{name}`` on mx.np arrays (element-wise, broadcasting)."
    globals()[name] = ufunc
    __all__.append(name)
    return ufunc


def _floor_div(a, b):
    return torch.div(a, b, rounding_mode="floor")


def _fmod(a, b):
    return torch.fmod(a, b)


def _power(a, b):
    if not (a.is_floating_point() if isinstance(a, _Tensor) else isinstance(a, float)) and \
            isinstance(b, _Tensor) and not b.is_floating_point() and bool((b < 0).any()):
        raise ValueError("Integers to negative integer powers are not allowed.")
    return torch.pow(a, b)


def _ldexp(a, b):
    return a * torch.pow(2.0, b)


# torch functions that take a Python number as their second operand
_SCALAR_OK = {torch.add, torch.sub, torch.mul, torch.div, torch.eq, torch.ne, torch.gt,
              torch.ge, torch.lt, torch.le, _floor_div, mx_mod, _fmod, _power}

for _n, _f, _k in [
        ("add", torch.add, "arith"), ("subtract", torch.sub, "arith"),
        ("multiply", torch.mul, "arith"), ("true_divide", torch.div, "float"),
        ("floor_divide", _floor_div, "arith"), ("mod", mx_mod, "arith"),
        ("fmod", _fmod, "arith"), ("power", _power, "arith"),
        ("maximum", _mx_maximum, "arith"), ("minimum", _mx_minimum, "arith"),
        ("fmax", torch.fmax, "arith"), ("fmin", torch.fmin, "arith"),
        ("hypot", torch.hypot, "float"), ("arctan2", torch.atan2, "float"),
        ("copysign", torch.copysign, "float"), ("logaddexp", torch.logaddexp, "float"),
        ("ldexp", _ldexp, "float"),
        ("equal", torch.eq, "cmp"), ("not_equal", torch.ne, "cmp"),
        ("greater", torch.gt, "cmp"), ("greater_equal", torch.ge, "cmp"),
        ("less", torch.lt, "cmp"), ("less_equal", torch.le, "cmp"),
        ("logical_and", torch.logical_and, "logical"),
        ("logical_or", torch.logical_or, "logical"),
        ("logical_xor", torch.logical_xor, "logical"),
        ("bitwise_and", torch.bitwise_and, "int"), ("bitwise_or", torch.bitwise_or, "int"),
        ("bitwise_xor", torch.bitwise_xor, "int"),
        ("left_shift", torch.bitwise_left_shift, "int"),
        ("right_shift", torch.bitwise_right_shift, "int"),
        ("gcd", torch.gcd, "int"), ("lcm", torch.lcm, "int")]:
    _binary(_n, _f, _k)

def _scalar_first_swapped(ufunc):
    """np.maximum/minimum(number, array) are MXNet's scalar operators on the array (which
    takes a tie's gradient, as in ``np.maximum(array, number)``)."""
    def op(x1, x2, out=None, **kwargs):
        if _scalar(x1) and not _scalar(x2):
            x1, x2 = x2, x1
        return ufunc(x1, x2, out=out, **kwargs)
    op.__name__ = op.__qualname__ = ufunc.__name__
    op.__doc__ = ufunc.__doc__
    globals()[ufunc.__name__] = op


_scalar_first_swapped(maximum)  # noqa: F821 - made above
_scalar_first_swapped(minimum)  # noqa: F821

divide = true_divide  # noqa: F821 - made above
remainder = mod  # noqa: F821
__all__ += ["divide", "remainder"]


# ---------------------------------------------------------------------------- unary
def _unary(name, fn, kind="math"):
    """A NumPy unary ufunc. 'math': bool gives float32, integers keep their dtype (MXNet
    computes in float and casts back); 'keep': the op runs on the dtype as is; 'pred': bool
    out; 'int': integers and bool only."""
    def ufunc(x, out=None, **kwargs):
        if kwargs:
            _ufunc_kwargs(name, kwargs)
        _check_out(name, out)
        t = _as_tensor(x, what=name)
        ctx = _ctx(x)
        dt = t.dtype
        if kind == "math":
            if dt is torch.bool:
                r = _run(fn, t.to(torch.float32))
            elif not dt.is_floating_point:
                r = _to_dtype(_run(fn, t.to(torch.float64)), dt)
            else:
                r = _run(fn, t)
        elif kind == "keep":
            src = t.to(torch.float32) if dt is torch.bool else t
            r = _run(fn, src)
        elif kind == "pred":
            if out is not None and out._t.dtype is not torch.bool:
                raise TypeError(f"{name}: out must be a bool array, got {out.dtype}")
            r = fn(t.detach())
        else:
            if dt.is_floating_point:
                raise TypeError(f"ufunc '{name}' not supported for the input types ({dt})")
            r = _run(fn, t)
        return _out(_wrap(r, ctx), out)
    ufunc.__name__ = ufunc.__qualname__ = name
    ufunc.__doc__ = f"NumPy's ``{name}`` on mx.np arrays (element-wise)."
    globals()[name] = ufunc
    __all__.append(name)
    return ufunc


def _rint(t):
    return torch.round(t)


def _fix(t):
    return torch.trunc(t)


def _cbrt(t):
    return torch.sign(t) * torch.abs(t).pow(1.0 / 3)


def _reciprocal(t):
    return torch.reciprocal(t)


def _sign(t):
    return torch.sign(t)


for _n, _f, _k in [
        ("negative", torch.neg, "keep"), ("absolute", torch.abs, "keep"),
        ("fabs", torch.abs, "math"), ("sign", _sign, "keep"), ("square", torch.square, "keep"),
        ("sqrt", torch.sqrt, "math"), ("cbrt", _cbrt, "math"), ("exp", torch.exp, "math"),
        ("expm1", torch.expm1, "math"), ("exp2", torch.exp2, "math"),
        ("log", torch.log, "math"), ("log2", torch.log2, "math"),
        ("log10", torch.log10, "math"), ("log1p", torch.log1p, "math"),
        ("sin", torch.sin, "math"), ("cos", torch.cos, "math"), ("tan", torch.tan, "math"),
        ("arcsin", torch.asin, "math"), ("arccos", torch.acos, "math"),
        ("arctan", torch.atan, "math"), ("sinh", torch.sinh, "math"),
        ("cosh", torch.cosh, "math"), ("tanh", torch.tanh, "math"),
        ("arcsinh", torch.asinh, "math"), ("arccosh", torch.acosh, "math"),
        ("arctanh", torch.atanh, "math"), ("degrees", torch.rad2deg, "math"),
        ("radians", torch.deg2rad, "math"), ("rad2deg", torch.rad2deg, "math"),
        ("deg2rad", torch.deg2rad, "math"), ("floor", torch.floor, "keep"),
        ("ceil", torch.ceil, "keep"), ("trunc", torch.trunc, "keep"),
        ("fix", _fix, "keep"), ("rint", _rint, "keep"),
        ("reciprocal", _reciprocal, "math"),
        ("isnan", torch.isnan, "pred"), ("isinf", torch.isinf, "pred"),
        ("isfinite", torch.isfinite, "pred"), ("isposinf", torch.isposinf, "pred"),
        ("isneginf", torch.isneginf, "pred"), ("signbit", torch.signbit, "pred"),
        ("logical_not", torch.logical_not, "pred"),
        ("invert", torch.bitwise_not, "int")]:
    _unary(_n, _f, _k)

abs = absolute  # noqa: A001,F821 - NumPy's alias
bitwise_not = invert  # noqa: F821
__all__ += ["abs", "bitwise_not"]


@_export
def positive(x, out=None, **kwargs):
    return _out(_wrap(_run(torch.clone, _as_tensor(x)), _ctx(x)), out)


@_export
def round(x, decimals=0, out=None):  # noqa: A001 - NumPy's name
    t = _as_tensor(x)
    if not t.is_floating_point():
        r = t.clone() if decimals >= 0 else \
            torch.round(t.detach().to(torch.float64), decimals=decimals).to(t.dtype)
    else:
        r = _run(torch.round, t, decimals=decimals) if decimals else _run(torch.round, t)
    return _out(_wrap(r, _ctx(x)), out)


around = round_ = round
__all__ += ["around", "round_"]


@_export
def clip(a, a_min=None, a_max=None, out=None):
    if a_min is None and a_max is None:
        raise ValueError("clip: a_min and a_max cannot both be None")
    t = _as_tensor(a)
    lo = a_min if not isinstance(a_min, NDArray) else a_min._t
    hi = a_max if not isinstance(a_max, NDArray) else a_max._t
    if not t.is_floating_point() and t.dtype is not torch.bool:
        # bounds outside the integer type's range bound nothing (no wrap-around)
        info = torch.iinfo(t.dtype)
        if isinstance(lo, (int, float)):
            lo = _py_max(int(lo), info.min)
        if isinstance(hi, (int, float)):
            hi = _py_min(int(hi), info.max)
    return _out(_wrap(_run(torch.clamp, t, lo, hi), _ctx(a)), out)


@_export
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    t = _as_tensor(x)
    if not t.is_floating_point():
        return x.copy() if copy else x
    r = _run(torch.nan_to_num, t, nan=nan, posinf=posinf, neginf=neginf)
    if copy or r.requires_grad:
        # (recorded: a new array in the graph, as MXNet's hybridized nan_to_num)
        return _wrap(r, _ctx(x))
    x._t.data.copy_(r.detach())
    return x


# ---------------------------------------------------------------------------- reductions
class AxisError(MXNetValueError, IndexError):
    """An axis out of range: MXNetError as MXNet raises, and ValueError/IndexError as
    NumPy's AxisError is."""


def _axes(axis, ndim, fname):
    if axis is None:
        return None
    axes = (axis,) if isinstance(axis, (int, _onp.integer)) else tuple(axis)
    out = []
    for ax in axes:
        ax = int(ax)
        if not (-_py_max(ndim, 1) <= ax < _py_max(ndim, 1)):
            raise AxisError(f"{fname}: axis {ax} is out of bounds for array of dimension "
                            f"{ndim}")
        out.append(ax % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ValueError(f"{fname}: duplicate value in 'axis'")
    return tuple(out)


def _reduce_dtype(t, dtype, kind):
    if dtype is not None:
        return _torch_dtype(dtype)
    if kind == "mean":
        return t.dtype if t.dtype.is_floating_point else torch.float32
    if t.dtype is torch.bool:
        return torch.float32
    return t.dtype


def _reduction(name, fn, kind="keep"):
    def reduce(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
               **kwargs):
        t = _as_tensor(a, what=name)
        axes = _axes(axis, t.dim(), name)
        dt = _reduce_dtype(t, dtype, kind)
        src = t if t.dtype is dt or kind in ("keep_max",) else t.to(dt)
        if kind in ("keep", "mean") and dt.is_floating_point and t.is_floating_point() and \
                t.dtype.itemsize > dt.itemsize:
            src = t   # computed at the input's precision, the result cast (and its gradient)
        if kind == "mean" and not dt.is_floating_point:
            src = t.to(torch.float64)   # the mean of the values, then cast (wrapping)
        elif kind == "keep" and not dt.is_floating_point:
            src = t.to(torch.float64)
        elif kind in ("keep", "mean") and dt in (torch.float16, torch.bfloat16) and \
                t.dtype.itemsize <= 2:
            src = t.to(torch.float32)   # accumulate in float32, as MXNet does
        if kind == "mean" and not dt.is_floating_point and dt is not torch.bool:
            return _out(_wrap(_int_mean(t, axes, keepdims, dt), _ctx(a)), out)
        if axes == ():
            r = _run(torch.clone, src)   # NumPy: reducing over no axis changes nothing
        else:
            r = _run(fn, src, axes, keepdims)
        if initial is not None:
            r = _run(_combine_initial[name], r, initial)
        if r.dtype is not dt:
            if r.is_floating_point() and not dt.is_floating_point and dt is not torch.bool:
                # a C cast (truncates, wraps); the gradient passes through it unchanged
                data = torch.trunc(r.detach()).to(torch.int64).to(dt)
                r = _with_carrier(data, r) if r.requires_grad else data
            r = _to_dtype(r, dt)
        return _out(_wrap(r, _ctx(a)), out)
    reduce.__name__ = reduce.__qualname__ = name
    globals()[name] = reduce
    __all__.append(name)
    return reduce


def _int_mean(t, axes, keep, dt):
    """``mean(dtype=<integer>)`` as NumPy and MXNet compute it: the values cast to ``dt``,
    summed in ``dt`` (wrapping), divided with truncation; the gradient is the mean's."""
    with torch._C.DisableTorchFunctionSubclass():
        x = t.detach().to(dt)
        n = t.numel() if axes is None else int(_onp.prod([t.shape[ax] for ax in axes]))
        if axes == ():
            total = x
        elif axes is None:
            total = torch.sum(x).reshape((1,) * t.dim() if keep else ()).to(dt)
        else:
            total = torch.sum(x, dim=axes, keepdim=keep).to(dt)
        data = torch.div(total, _py_max(n, 1), rounding_mode="trunc").to(dt)
    live = t if t.requires_grad else (getattr(t, "_carrier", None)
                                      if isinstance(t, _IntVarTensor) else None)
    if live is None or not _ag_state.recording:
        return data
    m = _mean(live.to(torch.float64), axes, keep) if axes != () else live.to(torch.float64)
    return _with_carrier(data, m)


def _sum(t, axes, keep):
    return torch.sum(t, dim=axes, keepdim=keep) if axes is not None else (
        torch.sum(t).reshape((1,) * t.dim()) if keep else torch.sum(t))


def _prod(t, axes, keep):
    if axes is None:
        r = torch.prod(t)
        return r.reshape((1,) * t.dim()) if keep else r
    for ax in sorted(axes, reverse=True):
        t = torch.prod(t, dim=ax, keepdim=True)
    return t if keep else t.squeeze(axes) if axes else t


def _mean(t, axes, keep):
    if axes is None:
        r = torch.mean(t)
        return r.reshape((1,) * t.dim()) if keep else r
    return torch.mean(t, dim=axes, keepdim=keep)


def _extreme(op, name):
    def f(t, axes, keep):
        if t.numel() == 0 and (axes is None or _py_any(t.shape[ax] == 0 for ax in axes)):
            raise MXNetValueError(f"zero-size array to reduction operation {name} which has "
                                  "no identity")
        if axes is None:
            r = op(t)
            return r.reshape((1,) * t.dim()) if keep else r
        return (torch.amax if op is torch.max else torch.amin)(t, dim=axes, keepdim=keep)
    return f


_combine_initial = {"sum": torch.add, "prod": torch.mul, "max": torch.clamp_min,
                    "min": torch.clamp_max}
_reduction("sum", _sum)
_reduction("prod", _prod)
_reduction("mean", _mean, "mean")
_reduction("max", _extreme(torch.max, "maximum"), "keep_max")
_reduction("min", _extreme(torch.min, "minimum"), "keep_max")
_combine_initial.update(amax=torch.clamp_min, amin=torch.clamp_max)
amax = max  # noqa: F821
amin = min  # noqa: F821
__all__ += ["amax", "amin"]


@_export
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return _moment(a, axis, dtype, out, ddof, keepdims, True)


@_export
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return _moment(a, axis, dtype, out, ddof, keepdims, False)


def _moment(a, axis, dtype, out, ddof, keepdims, sqrt):
    t = _as_tensor(a)
    axes = _axes(axis, t.dim(), "std" if sqrt else "var")
    dt = _reduce_dtype(t, dtype, "keep")
    src = t if t.is_floating_point() else t.to(torch.float64)
    fn = torch.std if sqrt else torch.var
    if axes == ():
        r = _run(lambda v: (v - v) / (1 - ddof) if ddof != 1 else (v - v) / 0, src)
    else:
        r = _run(fn, src, dim=axes, correction=ddof, keepdim=keepdims)
    return _out(_wrap(_to_dtype(r, dt), _ctx(a)), out)


def _arg_extreme(name, fn):
    def f(a, axis=None, out=None, keepdims=False):
        t = _as_tensor(a)
        if t.numel() == 0 and (axis is None or
                               t.shape[_axes(axis, t.dim(), name)[0]] == 0):
            raise MXNetValueError(f"attempt to get {name} of an empty sequence")
        if axis is None:
            r = fn(t.detach().reshape(-1))
            if keepdims:
                r = r.reshape((1,) * t.dim())
        else:
            ax = _axes(axis, t.dim(), name)[0]
            r = fn(t.detach(), dim=ax, keepdim=keepdims)
        return _out(_wrap(r.to(torch.int64), _ctx(a)), out)
    f.__name__ = f.__qualname__ = name
    globals()[name] = f
    __all__.append(name)


_arg_extreme("argmax", torch.argmax)
_arg_extreme("argmin", torch.argmin)


def _bool_reduce(name, fn):
    def f(a, axis=None, out=None, keepdims=False, **kwargs):
        t = _as_tensor(a).detach()
        axes = _axes(axis, t.dim(), name)
        tb = t.bool()
        if axes is None:
            r = fn(tb)
            if keepdims:
                r = r.reshape((1,) * t.dim())
        else:
            r = tb
            for ax in sorted(axes, reverse=True):
                r = fn(r, dim=ax, keepdim=True)
            if not keepdims:
                r = r.squeeze(axes) if axes else r
        return _out(_wrap(r, _ctx(a)), out)
    f.__name__ = f.__qualname__ = name
    globals()[name] = f
    __all__.append(name)


_bool_reduce("all", torch.all)
_bool_reduce("any", torch.any)

# NumPy's old aliases, which MXNet's mx.np keeps
product = prod  # noqa: F821 - made by _reduction above
sometrue = any  # noqa: F821,A001 - made by _bool_reduce above
__all__ += ["product", "sometrue"]


@_export
def cumsum(a, axis=None, dtype=None, out=None):
    t = _as_tensor(a)
    dt = _reduce_dtype(t, dtype, "keep")
    if axis is None:
        t = t.reshape(-1)
        axis = 0
    if dt in (torch.float16, torch.bfloat16):
        # accumulated in the 16-bit type step by step, as NumPy and MXNet do
        src = t.to(dt)
        ax = int(axis) % _py_max(src.dim(), 1)
        parts, acc = [], None
        for piece in torch.unbind(src, dim=ax):
            acc = piece if acc is None else _run(torch.add, acc, piece)
            parts.append(acc)
        r = _run(torch.stack, parts, dim=ax) if parts else src.clone()
    else:
        r = _run(torch.cumsum, t, dim=int(axis), dtype=dt)
    return _out(_wrap(r, _ctx(a)), out)


@_export
def ptp(a, axis=None, out=None, keepdims=False):
    return _out(max(a, axis=axis, keepdims=keepdims) -  # noqa: F821
                min(a, axis=axis, keepdims=keepdims), out)  # noqa: F821


@_export
def average(a, axis=None, weights=None, returned=False, out=None):
    if weights is None:
        avg = mean(a, axis=axis)  # noqa: F821
        t = _as_tensor(a)
        n = t.numel() if axis is None else _onp.prod([t.shape[ax] for ax in
                                                      _axes(axis, t.dim(), "average")])
        wsum = full_like(avg, n)
    else:
        w = weights if isinstance(weights, ndarray) else asarray(weights)
        t = _as_tensor(a)
        if w.shape != tuple(t.shape):
            if axis is None or w.ndim != 1:
                raise TypeError("average: axis must be given when the shapes of a and "
                                "weights differ")
            ax = _axes(axis, t.dim(), "average")[0]
            shape = [1] * t.dim()
            shape[ax] = w.shape[0]
            w = w.reshape(shape)
        wsum = sum(broadcast_to(w, tuple(t.shape)), axis=axis)  # noqa: F821
        avg = true_divide(sum(multiply(a, w), axis=axis), wsum)  # noqa: F821
    avg = _out(avg, out)
    return (avg, wsum) if returned else avg


@_export
def count_nonzero(a, axis=None, keepdims=False):
    t = _as_tensor(a).detach()
    axes = _axes(axis, t.dim(), "count_nonzero")
    r = (t != 0).sum(dim=axes, keepdim=keepdims) if axes is not None else (t != 0).sum()
    return _wrap(r.to(torch.int64), _ctx(a))


# ---------------------------------------------------------------------------- shape
@_export
def reshape(a, newshape, order="C"):
    if order != "C":
        raise NotImplementedError("reshape: only order='C' is supported")
    t = _as_tensor(a)
    shape = _shape_arg(newshape)
    if _py_any(s < -1 for s in shape) or shape.count(-1) > 1:
        raise MXNetValueError(f"reshape: invalid shape {shape} (only one -1 is allowed, and no "
                         "other negative values)")
    try:
        r = _run(t.reshape, shape)
    except RuntimeError:
        raise MXNetValueError(f"cannot reshape array of size {t.numel()} into shape "
                         f"{tuple(shape)}") from None
    return _wrap(r, _ctx(a))


@_export
def ravel(x, order="C"):
    return reshape(x, (-1,), order=order)


@_export
def transpose(a, axes=None):
    t = _as_tensor(a)
    if axes is None:
        axes = tuple(range(t.dim() - 1, -1, -1))
    axes = tuple(int(x) for x in axes)
    n = t.dim()
    if len(axes) != n or _py_any(not -n <= x < n for x in axes):
        raise MXNetError(f"transpose: axes {axes} don't match an array of shape "
                         f"{tuple(t.shape)}")
    if len({x % n for x in axes}) != n:
        raise ValueError(f"transpose: repeated axis in {axes}")
    return _wrap(_run(t.permute, axes), _ctx(a))


@_export
def swapaxes(a, axis1, axis2):
    t = _as_tensor(a)
    return _wrap(_run(t.transpose, axis1, axis2), _ctx(a))


@_export
def moveaxis(a, source, destination):
    t = _as_tensor(a)
    return _wrap(_run(torch.movedim, t, source, destination), _ctx(a))


@_export
def rollaxis(a, axis, start=0):
    t = _as_tensor(a)
    n = t.dim()
    axis %= n
    start = start + n if start < 0 else start
    if start > axis:
        start -= 1
    if axis == start:
        return _wrap(t, _ctx(a))
    axes = list(range(n))
    axes.remove(axis)
    axes.insert(start, axis)
    return _wrap(_run(t.permute, axes), _ctx(a))


@_export
def expand_dims(a, axis):
    t = _as_tensor(a)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    n = t.dim() + len(axes)
    r = t
    for ax in sorted(x % n for x in axes):
        r = r.unsqueeze(ax)
    return _wrap(_run(lambda v: v, r) if not r.requires_grad else r, _ctx(a))


@_export
def squeeze(a, axis=None):
    t = _as_tensor(a)
    if axis is None:
        return _wrap(_run(t.reshape, [s for s in t.shape if s != 1]), _ctx(a))
    axes = _axes(axis, t.dim(), "squeeze")
    if t.dim() == 0:
        return _wrap(_run(torch.clone, t), _ctx(a))
    for ax in axes:
        if t.shape[ax] != 1:
            raise ValueError("cannot select an axis to squeeze out which has size not equal "
                             "to one")
    return _wrap(_run(t.reshape, [s for i, s in enumerate(t.shape) if i not in axes]),
                 _ctx(a))


@_export
def broadcast_to(array, shape):
    t = _as_tensor(array)
    shape = _shape_arg(shape)
    if -2 in shape:
        # npx's -2: this axis keeps the input's size (axes aligned from the right)
        src = (1,) * (len(shape) - t.dim()) + tuple(t.shape)
        if len(src) != len(shape):
            raise MXNetValueError(f"broadcast_to: -2 needs an input of at most {len(shape)} "
                                  f"axes, got shape {tuple(t.shape)}")
        shape = tuple(d if d != -2 else s_ for d, s_ in zip(shape, src))
    try:
        r = _run(t.expand, shape)
    except RuntimeError:
        raise ValueError(f"operands could not be broadcast together with remapped shapes "
                         f"[original->remapped]: {tuple(t.shape)} and requested shape "
                         f"{shape}") from None
    return _wrap(r.contiguous() if r.requires_grad else r.clone(), _ctx(array))


@_export
def broadcast_arrays(*args):
    shape = _onp.broadcast_shapes(*[tuple(_as_tensor(a).shape) for a in args])
    # a list as MXNet's (and NumPy 1.x's); a tuple where the installed NumPy gives one
    return _SEQ_TYPE(broadcast_to(a, shape) for a in args)


_SEQ_TYPE = type(_onp.broadcast_arrays(_onp.zeros(1)))


def _tensors(seq, fname):
    if isinstance(seq, NDArray):
        seq = list(seq)
    ts = [_as_tensor(s, what=fname) for s in seq]
    if not ts:
        raise ValueError(f"{fname}: need at least one array")
    dt = ts[0].dtype
    for t in ts[1:]:
        dt = _promote(dt, t.dtype)
    return [t if t.dtype is dt else t.to(dt) for t in ts]


@_export
def concatenate(seq, axis=0, out=None):
    ts = _tensors(seq, "concatenate")
    if axis is None:
        ts = [t.reshape(-1) for t in ts]
        axis = 0
    try:
        r = _run(torch.cat, ts, dim=axis)
    except (RuntimeError, IndexError) as err:
        raise ValueError(f"concatenate: {str(err).splitlines()[0]} (shapes "
                         f"{[tuple(t.shape) for t in ts]})") from None
    return _out(_wrap(r, _ctx(*seq)), out)


concat = concatenate
__all__.append("concat")


@_export
def append(arr, values, axis=None):
    return concatenate([arr, values], axis=axis)


@_export
def stack(arrays, axis=0, out=None):
    ts = _tensors(arrays, "stack")
    if len({tuple(t.shape) for t in ts}) != 1:
        raise ValueError("all input arrays must have the same shape")
    return _out(_wrap(_run(torch.stack, ts, dim=axis), _ctx(*arrays)), out)


@_export
def vstack(arrays, out=None):
    ts = [atleast_2d(a) for a in arrays]
    return concatenate(ts, axis=0, out=out)


row_stack = vstack
__all__.append("row_stack")


@_export
def hstack(arrays):
    ts = [atleast_1d(a) for a in arrays]
    return concatenate(ts, axis=0 if ts[0].ndim == 1 else 1)


@_export
def dstack(arrays):
    return concatenate([atleast_3d(a) for a in arrays], axis=2)


@_export
def column_stack(tup):
    cols = []
    for a in tup:
        a = asarray(a)
        cols.append(a.reshape(-1, 1) if a.ndim < 2 else a)
    return concatenate(cols, axis=1)


def _atleast(n):
    def f(*arys):
        res = []
        for a in arys:
            a = asarray(a)
            if a.ndim < n:
                if n == 3 and a.ndim == 2:
                    a = a.reshape(a.shape + (1,))
                elif n == 3 and a.ndim == 1:
                    a = a.reshape((1,) + a.shape + (1,))
                else:
                    a = a.reshape((1,) * (n - a.ndim) + a.shape)
            res.append(a)
        return res[0] if len(res) == 1 else _SEQ_TYPE(res)
    f.__name__ = f"atleast_{n}d"
    return f


atleast_1d, atleast_2d, atleast_3d = _atleast(1), _atleast(2), _atleast(3)
__all__ += ["atleast_1d", "atleast_2d", "atleast_3d"]


@_export
def split(ary, indices_or_sections, axis=0):
    t = _as_tensor(ary)
    n = t.shape[axis]
    if isinstance(indices_or_sections, (int, _onp.integer)):
        k = int(indices_or_sections)
        if k <= 0 or n % k:
            raise ValueError("array split does not result in an equal division")
        sizes = [n // k] * k
    else:
        bounds = [0] + [_py_min(_py_max(int(i), 0), n) for i in indices_or_sections] + [n]
        sizes = [_py_max(b - a, 0) for a, b in zip(bounds[:-1], bounds[1:])]
    parts = _run(torch.split, t, sizes, dim=axis)
    return [_wrap(p, _ctx(ary)) for p in parts]


@_export
def array_split(ary, indices_or_sections, axis=0):
    t = _as_tensor(ary)
    if isinstance(indices_or_sections, (int, _onp.integer)):
        n, k = t.shape[axis], int(indices_or_sections)
        each, extra = divmod(n, k)
        sizes = [each + 1] * extra + [each] * (k - extra)
        return [_wrap(p, _ctx(ary)) for p in _run(torch.split, t, sizes, dim=axis)]
    return split(ary, indices_or_sections, axis)


@_export
def hsplit(ary, indices_or_sections):
    if _as_tensor(ary).dim() == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(ary, indices_or_sections, axis=1 if ary.ndim > 1 else 0)


@_export
def vsplit(ary, indices_or_sections):
    if _as_tensor(ary).dim() < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(ary, indices_or_sections, axis=0)


@_export
def dsplit(ary, indices_or_sections):
    if _as_tensor(ary).dim() < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(ary, indices_or_sections, axis=2)


@_export
def tile(A, reps):
    t = _as_tensor(A)
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    return _wrap(_run(torch.tile, t, reps), _ctx(A))


@_export
def repeat(a, repeats, axis=None):
    t = _as_tensor(a)
    if axis is None:
        t = t.reshape(-1)
        axis = 0
    reps = repeats._t if isinstance(repeats, NDArray) else repeats
    return _wrap(_run(torch.repeat_interleave, t, reps, dim=axis), _ctx(a))


@_export
def flip(m, axis=None):
    t = _as_tensor(m)
    axes = tuple(range(t.dim())) if axis is None else _axes(axis, t.dim(), "flip")
    return _wrap(_run(torch.flip, t, axes), _ctx(m))


@_export
def fliplr(m):
    return flip(m, 1)


@_export
def flipud(m):
    return flip(m, 0)


@_export
def roll(a, shift, axis=None):
    t = _as_tensor(a)
    if axis is None:
        return _wrap(_run(lambda v: torch.roll(v.reshape(-1), shift).reshape(v.shape), t),
                     _ctx(a))
    if isinstance(axis, (tuple, list)) and not isinstance(shift, (tuple, list)):
        shift = (shift,) * len(axis)
    if isinstance(shift, (tuple, list)) and not isinstance(axis, (tuple, list)):
        axis = (axis,) * len(shift)
    if isinstance(shift, (tuple, list)):
        shift, axis = tuple(int(v) for v in shift), tuple(int(v) for v in axis)
    return _wrap(_run(torch.roll, t, shift, axis), _ctx(a))


@_export
def rot90(m, k=1, axes=(0, 1)):
    return _wrap(_run(torch.rot90, _as_tensor(m), k, axes), _ctx(m))


@_export
def where(condition, x=None, y=None):
    c = _as_tensor(condition).detach()
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    if _scalar(x) and _scalar(y):
        dt = torch.float32
        a = torch.tensor(x, dtype=dt, device=c.device)
        b = torch.tensor(y, dtype=dt, device=c.device)
    else:
        a, b, _, dt = _operands(x, y, "where")
        if not isinstance(a, _Tensor):
            a = torch.tensor(a, dtype=dt, device=c.device)
        if not isinstance(b, _Tensor):
            b = torch.tensor(b, dtype=dt, device=c.device)
    return _wrap(_run(torch.where, c.bool(), a, b), _ctx(condition, x, y))


@_export
def nonzero(a):
    t = _as_tensor(a).detach()
    if t.dim() == 0:
        t = t.reshape(1)
    return tuple(_wrap(i, _ctx(a)) for i in torch.nonzero(t, as_tuple=True))


@_export
def flatnonzero(a):
    return nonzero(ravel(a))[0]


@_export
def argwhere(a):
    return _wrap(torch.nonzero(_as_tensor(a).detach()), _ctx(a))


@_export
def sort(a, axis=-1, kind=None, order=None):
    t = _as_tensor(a)
    if axis is None:
        t, axis = t.reshape(-1), 0
    return _wrap(_run(torch.sort, t, dim=axis, stable=True)[0], _ctx(a))


@_export
def argsort(a, axis=-1, kind=None, order=None):
    t = _as_tensor(a).detach()
    if axis is None:
        t, axis = t.reshape(-1), 0
    return _wrap(torch.sort(t, dim=axis, stable=True)[1], _ctx(a))


@_export
def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None):
    a = _onp.asarray(asarray(ar).asnumpy())
    res = _onp.unique(a, return_index=return_index, return_inverse=return_inverse,
                      return_counts=return_counts, axis=axis)
    ctx = _ctx(ar)
    if isinstance(res, tuple):
        return tuple(array(r, dtype=r.dtype, ctx=ctx) for r in res)
    return array(res, dtype=res.dtype, ctx=ctx)


@_export
def take(a, indices, axis=None, mode="raise", out=None):
    t = _as_tensor(a)
    idx = _as_tensor(indices).detach().long() if not isinstance(indices, int) else \
        torch.tensor(indices, device=t.device)
    if axis is None:
        t, axis = t.reshape(-1), 0
    axis = _axes(axis, t.dim(), "take")[0]
    n = t.shape[axis]
    if mode == "clip":
        idx = idx.clamp(0, n - 1)
    elif mode == "wrap":
        idx = idx.remainder(n)
    elif bool(((idx < -n) | (idx >= n)).any()):
        raise IndexError(f"take: index out of bounds for axis {axis} with size {n}")
    else:
        idx = idx.remainder(n)
    r = _run(torch.index_select, t, axis, idx.reshape(-1))
    shape = tuple(t.shape[:axis]) + tuple(idx.shape) + tuple(t.shape[axis + 1:])
    return _out(_wrap(_run(r.reshape, shape) if r.requires_grad else r.reshape(shape),
                      _ctx(a)), out)


@_export
def take_along_axis(arr, indices, axis):
    t = _as_tensor(arr)
    idx = _as_tensor(indices).detach().long()
    if axis is None:
        t, axis = t.reshape(-1), 0
    return _wrap(_run(torch.take_along_dim, t, idx, axis), _ctx(arr))


@_export
def diagonal(a, offset=0, axis1=0, axis2=1):
    t = _as_tensor(a)
    if t.dim() < 2:
        raise MXNetValueError(f"diagonal: the array needs at least two axes, got shape "
                              f"{tuple(t.shape)}")
    ax1, ax2 = _axes((axis1, axis2), t.dim(), "diagonal") if axis1 % t.dim() != \
        axis2 % t.dim() or not (-t.dim() <= axis1 < t.dim()) else (None, None)
    if ax1 is None:
        raise MXNetValueError(f"diagonal: axis1 and axis2 cannot be the same ({axis1}, {axis2})")
    return _wrap(_run(torch.diagonal, t, offset, ax1, ax2).clone(), _ctx(a))


@_export
def diag(v, k=0):
    t = _as_tensor(v)
    if t.dim() not in (1, 2):
        raise ValueError("Input must be 1- or 2-d.")
    return _wrap(_run(torch.diag, t, k), _ctx(v))


@_export
def diagflat(v, k=0):
    return diag(ravel(v), k)


@_export
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype, out=out)  # noqa


def _tri_part(m, k, fn):
    t = _as_tensor(m)
    if t.dim() == 0:
        raise MXNetValueError("tril/triu: input must have at least 1 axis")
    if t.dim() == 1:
        t = t.expand(t.shape[0], t.shape[0])   # NumPy: a vector is taken as its rows' tile
    return _wrap(_run(fn, t, k), _ctx(m))


@_export
def tril(m, k=0):
    return _tri_part(m, k, torch.tril)


@_export
def triu(m, k=0):
    return _tri_part(m, k, torch.triu)


@_export
def pad(x, pad_width, mode="constant", **kwargs):
    """NumPy's ``pad``, differentiable: the index-moving modes (edge, reflect, symmetric,
    wrap) gather through index arrays that NumPy pads; maximum/minimum/mean pad with the
    statistic of each axis; constant with ``constant_values``."""
    t = _as_tensor(x)
    ctx = _ctx(x)
    pw = _onp.broadcast_to(_onp.asarray(pad_width, dtype=_onp.int64), (t.dim(), 2)).tolist()
    if _py_any(v < 0 for pair in pw for v in pair):
        raise ValueError("pad: index can't contain negative values")
    if mode == "constant":
        cv = _onp.broadcast_to(_onp.asarray(kwargs.get("constant_values", 0)), (t.dim(), 2))
        r = t
        for ax, ((b, a), (vb, va)) in enumerate(zip(pw, cv.tolist())):
            parts = []
            if b:
                shape = list(r.shape)
                shape[ax] = b
                parts.append(torch.full(shape, vb, dtype=t.dtype, device=t.device))
            parts.append(r)
            if a:
                shape = list(r.shape)
                shape[ax] = a
                parts.append(torch.full(shape, va, dtype=t.dtype, device=t.device))
            if len(parts) > 1:
                r = _run(torch.cat, parts, dim=ax)
        return _wrap(r, ctx)
    if mode in ("edge", "reflect", "symmetric", "wrap"):
        extra = {k: v for k, v in kwargs.items() if k == "reflect_type"}
        r = t
        for ax, (b, a) in enumerate(pw):
            if b or a:
                if r.shape[ax] == 0:
                    raise ValueError(f"pad: can't extend empty axis {ax} using modes other "
                                     "than 'constant' or 'empty'")
                idx = _onp.pad(_onp.arange(r.shape[ax]), (b, a), mode=mode, **extra)
                r = _run(torch.index_select, r, ax, torch.as_tensor(idx, device=t.device))
        return _wrap(r, ctx)
    if mode in ("maximum", "minimum", "mean"):
        stat = {"maximum": torch.amax, "minimum": torch.amin,
                "mean": lambda v, dim, keepdim: torch.mean(v, dim=dim, keepdim=keepdim)}[mode]
        r = t
        for ax, (b, a) in enumerate(pw):
            if not (b or a):
                continue
            src = r if mode != "mean" or r.is_floating_point() else r.to(torch.float64)
            v = _run(stat, src, dim=ax, keepdim=True)
            if mode == "mean" and not r.is_floating_point():
                v = torch.round(v).to(r.dtype)
            shape_b, shape_a = list(r.shape), list(r.shape)
            shape_b[ax], shape_a[ax] = b, a
            r = _run(torch.cat, [v.expand(shape_b), r, v.expand(shape_a)], dim=ax)
        return _wrap(r, ctx)
    raise NotImplementedError(f"pad: mode {mode!r} is not supported")


# ---------------------------------------------------------------------------- linear algebra
def _matmul_operands(a, b, fname):
    ta, tb, ctx, dt = _operands(a, b, fname)
    if not isinstance(tb, _Tensor):
        tb = torch.tensor(tb, dtype=dt, device=ta.device)
    return ta, tb, ctx


@_export
def dot(a, b, out=None):
    ta, tb, ctx = _matmul_operands(a, b, "dot")
    if ta.dim() == 0 or tb.dim() == 0:
        r = _run(torch.mul, ta, tb)
    elif tb.dim() == 1 or ta.dim() == 1 and tb.dim() == 1:
        r = _run(torch.matmul, ta, tb)
    elif ta.dim() <= 2 and tb.dim() == 2:
        r = _run(torch.matmul, ta, tb)
    else:
        r = _run(torch.tensordot, ta, tb, dims=([ta.dim() - 1], [tb.dim() - 2]))
    return _out(_wrap(r, ctx), out)


@_export
def matmul(a, b, out=None):
    ta, tb, ctx = _matmul_operands(a, b, "matmul")
    if ta.dim() == 0 or tb.dim() == 0:
        raise MXNetValueError("matmul: Input operand does not have enough dimensions")
    try:
        r = _run(torch.matmul, ta, tb)
    except RuntimeError as err:
        raise MXNetValueError(f"matmul: shapes {tuple(ta.shape)} and {tuple(tb.shape)} do "
                              f"not match ({str(err).splitlines()[0]})") from None
    return _out(_wrap(r, ctx), out)


@_export
def vdot(a, b):
    return dot(ravel(a), ravel(b))


@_export
def inner(a, b):
    ta, tb, ctx = _matmul_operands(a, b, "inner")
    if ta.dim() == 0 or tb.dim() == 0:
        return _wrap(_run(torch.mul, ta, tb), ctx)
    return _wrap(_run(torch.tensordot, ta, tb, dims=([ta.dim() - 1], [tb.dim() - 1])), ctx)


@_export
def outer(a, b):
    ta, tb, ctx = _matmul_operands(a, b, "outer")
    return _wrap(_run(torch.outer, ta.reshape(-1), tb.reshape(-1)), ctx)


@_export
def tensordot(a, b, axes=2):
    ta, tb, ctx = _matmul_operands(a, b, "tensordot")
    if not isinstance(axes, int):
        xa, xb = axes
        xa = (xa,) if isinstance(xa, int) else tuple(xa)
        xb = (xb,) if isinstance(xb, int) else tuple(xb)
        if len(xa) != len(xb):
            raise ValueError("tensordot: shape-mismatch for sum")
        axes = (list(xa), list(xb))
    return _wrap(_run(torch.tensordot, ta, tb, dims=axes), ctx)


@_export
def kron(a, b):
    ta, tb, ctx = _matmul_operands(a, b, "kron")
    return _wrap(_run(torch.kron, ta, tb), ctx)


@_export
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    ta, tb, ctx = _matmul_operands(a, b, "cross")
    if axis is not None:
        axisa = axisb = axisc = axis
    ta, tb = torch.movedim(ta, axisa, -1), torch.movedim(tb, axisb, -1)
    r = _run(torch.linalg.cross, ta, tb)
    return _wrap(torch.movedim(r, -1, axisc) if r.dim() > 1 else r, ctx)


@_export
def einsum(subscripts, *operands, out=None, optimize=False):
    ts = [_as_tensor(o) for o in operands]
    dt = ts[0].dtype
    for t in ts[1:]:
        dt = _promote(dt, t.dtype)
    ts = [t.to(dt) for t in ts]
    return _out(_wrap(_run(torch.einsum, subscripts, *ts), _ctx(*operands)), out)


# ---------------------------------------------------------------------------- misc
@_export
def copy(a):
    return _wrap(_run(torch.clone, _as_tensor(a)), _ctx(a))


@_export
def shape(a):
    return tuple(_as_tensor(a).shape)


@_export
def size(a, axis=None):
    t = _as_tensor(a)
    return t.numel() if axis is None else t.shape[axis]


@_export
def ndim(a):
    return _as_tensor(a).dim()


@_export
def meshgrid(*xi, indexing="xy", sparse=False, copy=True):
    ts = [_as_tensor(x).reshape(-1) for x in xi]
    grids = torch.meshgrid(*ts, indexing=indexing) if ts else ()
    return _SEQ_TYPE(_wrap(g.clone(), _ctx(*xi)) for g in grids)


@_export
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    ta, tb, ctx, _ = _operands(a, b, "isclose")
    if not isinstance(tb, _Tensor):
        tb = torch.tensor(tb, dtype=ta.dtype, device=ta.device)
    return _wrap(torch.isclose(ta.detach(), tb.detach(), rtol=rtol, atol=atol,
                               equal_nan=equal_nan), ctx)


@_export
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(all(isclose(a, b, rtol, atol, equal_nan)))  # noqa: F821


@_export
def array_equal(a1, a2, equal_nan=False):
    t1, t2 = _as_tensor(a1), _as_tensor(a2)
    if tuple(t1.shape) != tuple(t2.shape):
        return False
    return _wrap(torch.tensor(bool(torch.equal(t1.detach(), t2.detach().to(t1.dtype)))),
                 _ctx(a1))


@_export
def diff(a, n=1, axis=-1, prepend=None, append=None):
    t = _as_tensor(a)
    pre = None if prepend is None else _as_tensor(prepend).to(t.dtype)
    app = None if append is None else _as_tensor(append).to(t.dtype)
    return _wrap(_run(torch.diff, t, n=n, dim=axis, prepend=pre, append=app), _ctx(a))


@_export
def ediff1d(ary, to_end=None, to_begin=None):
    r = diff(ravel(ary))
    parts = ([asarray(to_begin).reshape(-1)] if to_begin is not None else []) + [r] + \
        ([asarray(to_end).reshape(-1)] if to_end is not None else [])
    return concatenate(parts) if len(parts) > 1 else r


@_export
def bincount(x, weights=None, minlength=0):
    t = _as_tensor(x).detach()
    w = None if weights is None else _as_tensor(weights).detach()
    if t.is_floating_point():
        raise TypeError("bincount: input must be an integer array")
    return _wrap(torch.bincount(t.long(), weights=w, minlength=minlength), _ctx(x))


@_export
def histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002
    res = _onp.histogram(asarray(a).asnumpy(), bins=bins.asnumpy() if isinstance(bins, NDArray)
                         else bins, range=range, density=density)
    return array(res[0], dtype=res[0].dtype if res[0].dtype != _onp.float64 else None), \
        array(res[1])


@_export
def interp(x, xp, fp, left=None, right=None, period=None):
    res = _onp.interp(asarray(x).asnumpy() if isinstance(x, NDArray) else x,
                      asarray(xp).asnumpy(), asarray(fp).asnumpy(), left, right, period)
    return array(res)


@_export
def tril_indices(n, k=0, m=None):
    return tuple(array(i, dtype="int64") for i in _onp.tril_indices(n, k, m))


@_export
def triu_indices(n, k=0, m=None):
    return tuple(array(i, dtype="int64") for i in _onp.triu_indices(n, k, m))


@_export
def indices(dimensions, dtype=None, ctx=None):
    return array(_onp.indices(dimensions), dtype=dtype or "int64", ctx=ctx)


@_export
def unravel_index(indices, shape, order="C"):
    idx = _onp.asarray(indices.asnumpy() if isinstance(indices, NDArray) else indices)
    return tuple(array(r, dtype="int64") for r in _onp.unravel_index(idx.astype(_onp.int64),
                                                                     shape, order))


@_export
def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    mi = tuple(_onp.asarray(m.asnumpy() if isinstance(m, NDArray) else m).astype(_onp.int64)
               for m in multi_index)
    return array(_onp.ravel_multi_index(mi, dims, mode=mode, order=order), dtype="int64")


@_export
def polyval(p, x):
    tp, tx = _as_tensor(p), _as_tensor(x)
    r = torch.zeros_like(tx, dtype=_promote(tp.dtype, tx.dtype))
    for c in tp:
        r = r * tx + c
    return _wrap(r, _ctx(p, x))


@_export
def insert(arr, obj, values, axis=None):
    a = asarray(arr).asnumpy()
    o = obj.asnumpy() if isinstance(obj, NDArray) else obj
    v = values.asnumpy() if isinstance(values, NDArray) else values
    r = _onp.insert(a, o, v, axis=axis)
    return array(r, dtype=r.dtype, ctx=_ctx(arr))


@_export
def delete(arr, obj, axis=None):
    """The array without the entries ``obj`` selects along ``axis`` (differentiable). As in
    MXNet, indices of an index array outside ``[0, n)`` are ignored; an int out of range is
    an IndexError."""
    t = _as_tensor(arr)
    if axis is None:
        t, axis = t.reshape(-1), 0
    axis = _axes(axis, t.dim(), "delete")[0]
    n = t.shape[axis]
    if isinstance(obj, slice):
        drop = set(range(*obj.indices(n)))
    elif isinstance(obj, (int, _onp.integer)) and not isinstance(obj, bool):
        i = int(obj)
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
        drop = {i % n}
    else:
        idx = _onp.asarray(obj.asnumpy() if isinstance(obj, NDArray) else obj).reshape(-1)
        if idx.dtype == _onp.bool_:
            drop = set(_onp.nonzero(idx)[0].tolist())
        else:
            drop = {int(i) for i in idx.astype(_onp.int64) if 0 <= i < n}
    keep = torch.as_tensor([i for i in range(n) if i not in drop], dtype=torch.int64,
                           device=t.device)
    return _wrap(_run(torch.index_select, t, axis, keep), _ctx(arr))


@_export
def resize(a, new_shape):
    r = _onp.resize(asarray(a).asnumpy(), new_shape)
    return array(r, dtype=r.dtype, ctx=_ctx(a))


def _byte_span(t):
    """[first, last] byte addresses an array's elements occupy (None when empty)."""
    if t.numel() == 0:
        return None
    size = t.element_size()
    lo = hi = t.data_ptr()
    for n, st in zip(t.shape, t.stride()):
        if st >= 0:
            hi += (n - 1) * st * size
        else:
            lo += (n - 1) * st * size
    return lo, hi + size - 1


@_export
def shares_memory(a, b, max_work=None):
    """Whether ``a`` and ``b`` overlap in memory (by the ranges of addresses they span)."""
    ta, tb = _as_tensor(a), _as_tensor(b)
    sa, sb = _byte_span(ta), _byte_span(tb)
    if sa is None or sb is None:
        return False
    return sa[0] <= sb[1] and sb[0] <= sa[1]


may_share_memory = shares_memory
__all__.append("may_share_memory")


def _window(fn):
    def w(M, dtype=None, ctx=None, device=None):
        return array(fn(M), dtype=dtype, ctx=ctx, device=device)
    w.__name__ = fn.__name__
    return w


hanning, hamming, blackman = (_window(_onp.hanning), _window(_onp.hamming),
                              _window(_onp.blackman))
__all__ += ["hanning", "hamming", "blackman"]


_PERCENTILE_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _percentile_kernel(t, pct, method):
    """MXNet's percentile kernel on ``t`` (sorted along its last axis, any dtype) at the
    percentages ``pct`` (a 0-d or 1-d float tensor): one row of results per percentage, in
    the output dtype MXNet gives (float64 for float64 data, float32 otherwise).

    As in MXNet: the position ``pct * (n - 1) / 100`` is a float32; ``lower``/``higher``/
    ``nearest`` take floor/ceil/round (half away from zero) of it; ``midpoint`` moves it to
    the middle of its two neighbours and interpolates; the two interpolation terms
    ``value * weight`` are computed in the data's precision (a float16 term is rounded to
    float16, an integer or float32 one is float32) and added in the output dtype."""
    n = t.shape[-1]
    out_dt = torch.float64 if t.dtype == torch.float64 else torch.float32
    pos = (pct.reshape(-1, *([1] * t.dim())) * (n - 1) / 100.0).to(torch.float32)
    flat = t.unsqueeze(0).expand(pos.shape[0], *t.shape)
    if method in ("lower", "higher", "nearest"):
        k = (torch.floor(pos) if method == "lower" else torch.ceil(pos) if method == "higher"
             else torch.sign(pos) * torch.floor(pos.abs() + 0.5))
        k = k.to(torch.int64).expand(*flat.shape[:-1], 1)
        return torch.gather(flat, -1, k).squeeze(-1).to(out_dt)
    if method == "midpoint":
        pos = (torch.floor(pos) + torch.ceil(pos)) / 2
    below = torch.floor(pos)
    w_above = pos - below
    w_below = 1 - w_above
    i_below = below.to(torch.int64).expand(*flat.shape[:-1], 1)
    i_above = torch.clamp(i_below + 1, max=n - 1)
    x1 = torch.gather(flat, -1, i_below).squeeze(-1)
    x2 = torch.gather(flat, -1, i_above).squeeze(-1)
    w_below, w_above = w_below.squeeze(-1), w_above.squeeze(-1)
    term_dt = (torch.float16 if t.dtype == torch.float16 else
               torch.float64 if t.dtype == torch.float64 else torch.float32)
    if term_dt is torch.float16:   # half * float: computed in float, rounded to half
        x1 = (x1.to(torch.float32) * w_below).to(torch.float16)
        x2 = (x2.to(torch.float32) * w_above).to(torch.float16)
    else:
        x1 = x1.to(term_dt) * w_below.to(term_dt)
        x2 = x2.to(term_dt) * w_above.to(term_dt)
    return x1.to(out_dt) + x2.to(out_dt)


def _percentile(name, a, pct, axis, out, overwrite_input, interpolation, keepdims):
    if overwrite_input is not None:
        raise NotImplementedError("overwrite_input is not supported yet")
    if interpolation not in _PERCENTILE_METHODS:
        raise MXNetValueError(f"{name}: interpolation must be one of {_PERCENTILE_METHODS}, "
                              f"got {interpolation!r}")
    t = _as_tensor(a)
    scalar = not isinstance(pct, NDArray)
    p = (torch.tensor(float(pct), dtype=torch.float64, device=t.device) if scalar
         else pct._t.detach())
    if not p.is_floating_point():
        p = p.to(torch.float64)
    if p.dim() > 1:
        raise MXNetValueError(f"{name}: q must be a scalar or a 1-d array, got shape "
                              f"{tuple(p.shape)}")
    if bool(((p < 0) | (p > 100) | torch.isnan(p)).any()):
        raise MXNetValueError(f"{name}: percentile exceeds the valid range")
    nd = t.dim()
    axes = (list(range(nd)) if axis is None else
            [x % nd for x in ((axis,) if isinstance(axis, numbers.Integral) else axis)])
    rest = [d for d in range(nd) if d not in axes]
    moved = t.permute(rest + axes).reshape([t.shape[d] for d in rest] + [-1])
    r = _run(lambda x: _percentile_kernel(torch.sort(x, dim=-1).values, p, interpolation),
             moved)
    if keepdims:
        r = r.reshape([r.shape[0]] + [1 if d in axes else t.shape[d] for d in range(nd)])
    if p.dim() == 0:
        r = r[0]
    return _out(_wrap(r, _ctx(a)), out)


@_export
def percentile(a, q, axis=None, out=None, overwrite_input=None, interpolation="linear",
               keepdims=False, method=None):
    """NumPy's percentile with MXNet's arithmetic (see :func:`_percentile_kernel`): the
    result is float64 for float64 data and float32 for any other dtype, as in MXNet."""
    return _percentile("percentile", a, q, axis, out, overwrite_input,
                       method or interpolation, keepdims)


@_export
def quantile(a, q, axis=None, out=None, overwrite_input=None, interpolation="linear",
             keepdims=False, method=None):
    """NumPy's quantile (``method``, or MXNet's older name ``interpolation``: linear, lower,
    higher, midpoint, nearest): MXNet's percentile at ``100 * q`` (computed in q's own
    precision); float64 for float64 data, float32 otherwise, as in MXNet."""
    pct = q * 100 if isinstance(q, NDArray) else (
        float(q) * 100 if isinstance(q, numbers.Number) else _onp.asarray(q) * 100)
    if isinstance(pct, _onp.ndarray):
        pct = array(pct, dtype=pct.dtype if pct.dtype.kind == "f" else _onp.float64,
                    ctx=_ctx(a))
    return _percentile("quantile", a, pct, axis, out, overwrite_input,
                       method or interpolation, keepdims)


@_export
def median(a, axis=None, out=None, overwrite_input=None, keepdims=False):
    return quantile(a, 0.5, axis=axis, out=out, keepdims=keepdims)


@_export
def nansum(a, axis=None, dtype=None, out=None, keepdims=False):
    t = _as_tensor(a)
    return sum(_wrap(torch.nan_to_num(t, nan=0.0, posinf=float("inf"),  # noqa: F821
                                      neginf=float("-inf")) if t.is_floating_point() else t,
                     _ctx(a)), axis=axis, dtype=dtype, out=out, keepdims=keepdims)


# the creation functions, re-exported here for the functions above
from .multiarray import (array, asarray, full_like, zeros_like, ones_like)  # noqa: E402
