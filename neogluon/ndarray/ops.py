"""``nd.*`` operators as functions; most are also fluent methods of NDArray.

Each op unwraps its NDArray inputs, calls torch under neogluon's grad-mode rule, and wraps the
result on the first input's context. ``out=`` writes the result into an existing array.
"""
from __future__ import annotations

import functools
import math
import numbers

import torch
import torch.nn.functional as F

from ..base import MXNetError, to_torch_dtype
from .. import autograd as _ag_mod
from .ndarray import NDArray, _new, _run, _assign_out, _fresh, concat, stack, mx_mod  # noqa: F401
from .. import _cbuild
from . import _act_kernel
from . import _failure

_state = _ag_mod._state

__all__ = []  # filled by _export


def _guard(fn):
    """Report a torch failure inside an operator as MXNetError naming the op and its inputs
    (MXNet raises MXNetError there), never as a raw torch traceback."""
    name = fn.__name__

    @functools.wraps(fn)
    def op(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (RuntimeError, IndexError, ValueError) as err:
            if isinstance(err, MXNetError):
                raise
            msg = str(err).splitlines()[0] if str(err) else type(err).__name__
            # Only torch's and Python's complaints about axes and ranks become MXNetError;
            # IndexError for an out-of-range index value (as MXNet's) and the ValueErrors
            # this module raises on purpose pass through.
            if not isinstance(err, RuntimeError) and not msg.startswith(_INTERNAL_MSGS):
                raise
            shapes = [a.shape for a in list(args) + list(kwargs.values())
                      if isinstance(a, NDArray)]
            raise MXNetError(f"{name}: {msg} (input shapes {shapes})") from None
    return op


_INTERNAL_MSGS = ("Dimension out of range", "tuple index out of range",
                  "not enough values to unpack", "too many values to unpack",
                  "too many indices", "index (", "invalid index")


def _export(fluent=True):
    def deco(fn):
        g = _guard(fn)
        __all__.append(fn.__name__)
        globals()[fn.__name__] = g
        if fluent and not hasattr(NDArray, fn.__name__):
            setattr(NDArray, fn.__name__, g)
        return g
    return deco


class _NotAnArray(TypeError, AssertionError):
    """An operator got something other than an NDArray (MXNet asserts: AssertionError)."""


def _t(x, what="data"):
    if isinstance(x, NDArray):
        return x._t
    raise _NotAnArray(f"{what} must be an NDArray, got {type(x).__name__}")


def _is_int(a):
    return isinstance(a, numbers.Integral) and not isinstance(a, bool)


def _norm_axis(axis, ndim, exclude=False):
    # the common cases first (a plain int in range, or None), without the numbers.Integral
    # checks below (abstract-class isinstance costs about a microsecond per reduction)
    if axis is None:
        return () if exclude else tuple(range(ndim))
    if type(axis) is int and (not ndim or -ndim <= axis < ndim):
        a = axis % ndim if ndim else 0
        return tuple(i for i in range(ndim) if i != a) if exclude else (a,)
    if not (axis is None or _is_int(axis) or
            (isinstance(axis, (tuple, list)) and all(_is_int(a) for a in axis))):
        raise MXNetError(f"invalid axis {axis!r}: expected an int, a tuple of ints or None")
    if _is_int(axis):
        axis = int(axis)
    elif axis is not None:
        axis = tuple(int(a) for a in axis)
    if axis is None or axis == ():
        axes = tuple(range(ndim))
    elif isinstance(axis, int):
        axes = (axis % ndim if ndim else 0,)
    else:
        axes = tuple(a % ndim for a in axis)
    # (an out-of-range axis would otherwise wrap around silently)
    for a in ((axis,) if isinstance(axis, int) else (axis or ())):
        if ndim and not -ndim <= a < ndim:
            raise MXNetError(f"axis {a} is out of range for an array with {ndim} dimensions "
                             f"(axis={axis})")
    if exclude:
        axes = tuple(i for i in range(ndim) if i not in axes)
    return axes


# ---------------------------------------------------------------- elementwise unary
def _round_half_away(x):
    # MXNet rounds halves away from zero (torch.round rounds them to even).
    if not x.is_floating_point():
        return x
    return torch.sign(x) * torch.floor(torch.abs(x) + 0.5)


def _rint(x):
    # MXNet's rint: floor unless the fraction is above one half.
    if not x.is_floating_point():
        return x
    f = torch.floor(x)
    return torch.where(x - f <= 0.5, f, torch.ceil(x))


def _unary(name, fn):
    def op(data, out=None, name=None):
        if type(data) is not NDArray and getattr(data, "stype", "default") != "default":
            from .sparse import _nd_unary  # keeps the storage type where MXNet does
            return _nd_unary(op.__name__, fn, data, out)
        t = _t(data)
        r = fn(t) if (not t.requires_grad or _state.recording) else _run(fn, t)
        if r.dtype is not t.dtype:
            r = r.to(t.dtype)  # MXNet keeps the input's dtype: sqrt of int32 is int32
        if out is None:
            return _new(r, data._ctx)
        return _assign_out(_new(r, data._ctx), out)
    op.__name__ = name
    op.__doc__ = f"Elementwise ``{name}``."
    return op


def _relu_grad_keep_nan(x, grad):
    """``grad`` where ``x > 0``, ``x`` (NaN) where ``x`` is NaN, +0 elsewhere."""
    return torch.where(x > 0, grad, torch.where(torch.isnan(x), x, torch.zeros_like(grad)))


class _ReluKeepNaN(torch.autograd.Function):
    """relu whose gradient is NaN where the input is NaN, as MXNet's ``relu`` operator computes
    it (torch's threshold backward gives 0 there and would hide a diverged input)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.relu(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if torch.is_grad_enabled() or not _cbuild.untraced_cpu(x, grad):
            return _relu_grad_keep_nan(x, grad)
        # One pass (torch's threshold_backward: grad where x > 0, else +0) after a read-only
        # NaN check, instead of five passes and three full-size temporaries: a ResNet's relu
        # backward ran 2.5x MXNet's. A NaN in x makes the sum NaN (so does inf - inf: then the
        # exact formula runs too, with the same result); the check reads x without allocating.
        if torch.isnan(x.sum()):
            return _relu_grad_keep_nan(x, grad)
        return torch.ops.aten.threshold_backward(grad, x, 0)


def _relu(x):
    if x.requires_grad and x.is_floating_point():
        return _ReluKeepNaN.apply(x)
    return torch.relu(x)


class _Cbrt(torch.autograd.Function):
    """Cube root whose gradient is MXNet's ``g / (3 * cbrt(x)**2)`` (inf at 0, not nan)."""

    @staticmethod
    def forward(ctx, x):
        y = torch.sign(x) * torch.abs(x).pow(1.0 / 3)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g / (3.0 * y * y)


class _Rcbrt(torch.autograd.Function):
    """``1 / cbrt(x)`` whose gradient is MXNet's ``-g / (3 * cbrt(x) * x)``."""

    @staticmethod
    def forward(ctx, x):
        c = torch.sign(x) * torch.abs(x).pow(1.0 / 3)
        ctx.save_for_backward(x, c)
        return 1.0 / c

    @staticmethod
    def backward(ctx, g):
        x, c = ctx.saved_tensors
        return -g / (3.0 * c * x)


def _psi(x):
    """Digamma as MXNet's gradients use it: +inf at 0 and the negative integers (its poles)."""
    d = torch.digamma(x)
    pole = (x <= 0) & (x == torch.floor(x))
    return torch.where(pole, torch.full_like(d, float("inf")), d)


def _gamma_value(x):
    """Gamma function, with its sign for negative arguments (exp(lgamma) alone loses it)."""
    mag = torch.lgamma(x).exp()
    neg = (x < 0) & (torch.remainder(torch.floor(x), 2) == 1)
    y = torch.where(neg, -mag, mag)
    # the negative integers are poles where C's tgamma (MXNet's) gives nan
    return torch.where((x < 0) & (x == torch.floor(x)), torch.full_like(y, float("nan")), y)


class _Gamma(torch.autograd.Function):
    """gamma(x) with MXNet's gradient ``g * gamma(x) * psi(x)``."""

    @staticmethod
    def forward(ctx, x):
        y = _gamma_value(x)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * y * _psi(x)


class _Gammaln(torch.autograd.Function):
    """lgamma(x) with MXNet's gradient ``g * psi(x)``."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.lgamma(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * _psi(x)


def _gamma(x):
    if x.requires_grad and x.is_floating_point():
        return _Gamma.apply(x)
    return _gamma_value(x)


def _gammaln(x):
    if x.requires_grad and x.is_floating_point():
        return _Gammaln.apply(x)
    return torch.lgamma(x)


def _cbrt(x):
    if x.requires_grad and x.is_floating_point():
        return _Cbrt.apply(x)
    return torch.sign(x) * torch.abs(x).pow(1.0 / 3)


def _rcbrt(x):
    if x.requires_grad and x.is_floating_point():
        return _Rcbrt.apply(x)
    return 1.0 / (torch.sign(x) * torch.abs(x).pow(1.0 / 3))


def _with_mx_second_order(fwd, d1, d2, what):
    """``fwd`` with first derivative ``d1`` and, for the derivative of its backward, ``d2``:
    MXNet 1.9.1's second-order gradient, which for arcsinh and arccosh has the opposite sign
    of the calculus one (``x / (x*x + 1) ** 1.5`` and ``x / (x*x - 1) ** 1.5``); its
    test_higher_order_grad.py expects MXNet's."""

    class Grad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, og):
            ctx.save_for_backward(x, og)
            return og * d1(x)

        @staticmethod
        def backward(ctx, gg):
            x, og = ctx.saved_tensors
            return gg * og * d2(x), gg * d1(x)

    class Op(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return fwd(x)

        @staticmethod
        def backward(ctx, og):
            (x,) = ctx.saved_tensors
            return Grad.apply(x, og)

    def run(x):
        if x.requires_grad and x.is_floating_point():
            return Op.apply(x)
        return fwd(x)
    run.__name__ = what
    return run


_arcsinh = _with_mx_second_order(
    torch.asinh, lambda x: torch.rsqrt(x * x + 1), lambda x: x * torch.rsqrt(x * x + 1) ** 3,
    "arcsinh")
_arccosh = _with_mx_second_order(
    torch.acosh, lambda x: torch.rsqrt(x * x - 1), lambda x: x * torch.rsqrt(x * x - 1) ** 3,
    "arccosh")


for _name, _fn in {
    "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "square": torch.square, "exp": torch.exp,
    "expm1": torch.expm1, "log": torch.log, "log2": torch.log2, "log10": torch.log10,
    "log1p": torch.log1p, "sign": torch.sign, "relu": _relu, "sigmoid": torch.sigmoid,
    "tanh": _act_kernel.tanh, "sin": torch.sin, "cos": torch.cos, "tan": torch.tan,
    "arcsin": torch.asin, "arccos": torch.acos, "arctan": torch.atan, "sinh": torch.sinh,
    "cosh": torch.cosh, "arcsinh": _arcsinh, "arccosh": _arccosh, "arctanh": torch.atanh,
    "floor": torch.floor, "ceil": torch.ceil, "round": _round_half_away, "rint": _rint,
    "trunc": torch.trunc, "fix": torch.trunc, "abs": torch.abs, "negative": torch.neg,
    "reciprocal": torch.reciprocal, "erf": torch.erf, "erfinv": torch.erfinv,
    "gamma": _gamma, "gammaln": _gammaln,
    "softsign": F.softsign, "cbrt": _cbrt, "rcbrt": _rcbrt,
    "degrees": torch.rad2deg, "radians": torch.deg2rad, "logical_not": lambda x: (x == 0).to(x.dtype),
}.items():
    _export()(_unary(_name, _fn))


@_export()
def clip(data, a_min, a_max, out=None, name=None):
    """Clip values into [a_min, a_max]."""
    if type(data) is not NDArray and data.stype != "default":
        from .sparse import clip as sparse_clip
        return sparse_clip(data, a_min, a_max, out=out)
    for nm, v in (("a_min", a_min), ("a_max", a_max)):
        if not isinstance(v, numbers.Real) or isinstance(v, bool):
            raise MXNetError(f"clip: {nm} must be a number, got {v!r}")
    t = _t(data)
    r = _run(torch.clamp, t, a_min, a_max)
    if r.dtype is not t.dtype:   # an integer array keeps its dtype (float bounds truncated)
        r = r.to(t.dtype)
    return _assign_out(_new(r, data._ctx), out)


@_export(fluent=False)
def isnan(data):
    return _new(torch.isnan(_t(data)).to(data._t.dtype), data._ctx)


@_export(fluent=False)
def isinf(data):
    return _new(torch.isinf(_t(data)).to(data._t.dtype), data._ctx)


@_export(fluent=False)
def isfinite(data):
    return _new(torch.isfinite(_t(data)).to(data._t.dtype), data._ctx)


# ---------------------------------------------------------------- binary
_SPARSE_ELEMWISE = {"elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "maximum",
                    "minimum", "hypot"}


def _has_sparse(lhs, rhs):
    """Both operands arrays and at least one of them sparse."""
    return isinstance(lhs, NDArray) and isinstance(rhs, NDArray) and (
        type(lhs) is not NDArray and lhs.stype != "default" or
        type(rhs) is not NDArray and rhs.stype != "default")


def _binary_fn(name, fn):
    # MXNet's parameterless operators accept and ignore any other keyword argument (programs
    # pass e.g. axis= to broadcast_maximum), so these do too.
    def op(lhs, rhs, out=None, name=None, **_ignored):
        if op.__name__ in _SPARSE_ELEMWISE and _has_sparse(lhs, rhs) and \
                tuple(lhs.shape) == tuple(rhs.shape):
            from .sparse import _elemwise  # MXNet's storage types for sparse operands
            return _assign_out(_elemwise(op.__name__, lhs, rhs), out)
        if isinstance(lhs, NDArray):
            return _assign_out(lhs._binary(rhs, fn), out)
        if isinstance(rhs, NDArray):
            return _assign_out(rhs._rbinary(lhs, fn), out)
        return fn(torch.as_tensor(lhs), torch.as_tensor(rhs)).item()
    op.__name__ = name
    op.__doc__ = (f"Elementwise ``{name}`` of ``lhs`` and ``rhs`` (arrays of one dtype, or an "
                  "array and a scalar), with numpy broadcasting.")
    return op


def _same_shape_fn(name, fn):
    base = _binary_fn(name, fn)

    def op(lhs, rhs, out=None, name=None, **_ignored):
        if isinstance(lhs, NDArray) and isinstance(rhs, NDArray) and lhs.shape != rhs.shape:
            raise MXNetError(f"{op.__name__}: the inputs must have the same shape (no "
                             f"broadcasting), got {lhs.shape} and {rhs.shape}")
        return base(lhs, rhs, out=out)
    op.__name__ = name
    op.__doc__ = (f"Elementwise ``{name}`` of two arrays of one shape and dtype (use "
                  "``broadcast_*`` to broadcast).")
    return op


def _tie_to_left(base, keep):
    """``base`` (torch.maximum / torch.minimum) with MXNet's gradient: on a tie the whole
    gradient goes to the left operand (its backward masks the left side with ``a >= b``,
    resp. ``a <= b``, and the right with the complement), where torch splits it in halves.
    Values are torch's (NaN propagates from either side); only a recorded call takes the
    selecting form."""
    def fn(a, b):
        if not isinstance(a, torch.Tensor):
            # a number on the left is MXNet's scalar operator on the array (the array
            # takes a tie's gradient): the operation is symmetric, so swap
            a, b = b, a
        if not isinstance(b, torch.Tensor):
            b = torch.tensor(b, dtype=a.dtype, device=a.device)
        if torch.is_grad_enabled() and (a.requires_grad or b.requires_grad):
            return torch.where(keep(a, b) | torch.isnan(a), a, b)
        return base(a, b)
    fn.__name__ = base.__name__
    return fn


_mx_maximum = _tie_to_left(torch.maximum, torch.ge)
_mx_minimum = _tie_to_left(torch.minimum, torch.le)

for _name, _fn in {
    "add": torch.add, "subtract": torch.sub, "multiply": torch.mul, "divide": torch.div,
    "power": torch.pow, "maximum": _mx_maximum, "minimum": _mx_minimum,
    "modulo": mx_mod, "hypot": torch.hypot, "arctan2": torch.atan2,
    "broadcast_add": torch.add, "broadcast_sub": torch.sub, "broadcast_minus": torch.sub,
    "broadcast_mul": torch.mul, "broadcast_div": torch.div, "broadcast_power": torch.pow,
    "broadcast_maximum": _mx_maximum, "broadcast_minimum": _mx_minimum,
    "broadcast_mod": mx_mod, "broadcast_hypot": torch.hypot,
}.items():
    _export(fluent=False)(_binary_fn(_name, _fn))
for _name, _fn in {"elemwise_add": torch.add, "elemwise_sub": torch.sub,
                   "elemwise_mul": torch.mul, "elemwise_div": torch.div}.items():
    _export(fluent=False)(_same_shape_fn(_name, _fn))


def _scalar_max(fn):
    def wrapped(a, b):
        if not isinstance(b, torch.Tensor):
            b = torch.tensor(b, dtype=a.dtype, device=a.device)
        return fn(a, b)
    return wrapped


def _scalar_first_swapped(name, fn):
    """maximum/minimum with a number on the left are MXNet's scalar operators on the array
    on the right (``_maximum_scalar(rhs, scalar=lhs)``): the array takes a tie's gradient."""
    base = _binary_fn(name, fn)

    def op(lhs, rhs, out=None, name=None, **kwargs):
        if isinstance(lhs, numbers.Number) and isinstance(rhs, NDArray):
            lhs, rhs = rhs, lhs
        return base(lhs, rhs, out=out, **kwargs)
    op.__name__ = base.__name__
    op.__doc__ = base.__doc__
    return op


globals()["maximum"] = _scalar_first_swapped("maximum", _mx_maximum)
globals()["minimum"] = _scalar_first_swapped("minimum", _mx_minimum)
globals()["hypot"] = _binary_fn("hypot", _scalar_max(torch.hypot))   # (_hypot_scalar)


_SWAPPED = {torch.eq: torch.eq, torch.ne: torch.ne, torch.gt: torch.lt, torch.ge: torch.le,
            torch.lt: torch.gt, torch.le: torch.ge}


def _cmp(name, fn):
    def op(lhs, rhs, out=None, name=None):
        if not isinstance(lhs, NDArray):
            if not isinstance(rhs, NDArray):   # two numbers: a number, as MXNet returns
                return int(bool(fn(torch.tensor(lhs), torch.tensor(rhs))))
            # a number first: the array's comparison the other way round, in its dtype
            return _assign_out(rhs._compare(lhs, _SWAPPED[fn]), out)
        return _assign_out(lhs._compare(rhs, fn), out)
    op.__name__ = name
    op.__doc__ = (f"Elementwise ``{name}`` comparison with broadcasting: 1 where true, 0 "
                  "elsewhere, in ``lhs``'s dtype (as MXNet returns it).")
    return op


for _name, _fn in {"equal": torch.eq, "not_equal": torch.ne, "greater": torch.gt,
                   "greater_equal": torch.ge, "lesser": torch.lt, "lesser_equal": torch.le,
                   "broadcast_equal": torch.eq, "broadcast_not_equal": torch.ne,
                   "broadcast_greater": torch.gt, "broadcast_greater_equal": torch.ge,
                   "broadcast_lesser": torch.lt, "broadcast_lesser_equal": torch.le}.items():
    _export(fluent=False)(_cmp(_name, _fn))


# ---------------------------------------------------------------- reductions
def _reduce(name, fn, nonempty=False):
    opname = name

    def op(data, axis=None, keepdims=False, exclude=False, out=None, name=None):
        t = _t(data)
        if nonempty and t.numel() == 0:
            # MXNet's max/min refuse an empty input whatever the axes (no identity value)
            raise MXNetError(f"{opname}: reduction input's size should be > 0, got shape "
                             f"{tuple(t.shape)}")
        keepdims = bool(keepdims)  # MXNet takes 0/1 too
        axes = _norm_axis(axis, t.dim(), exclude)
        if t.dim() == 0 or not axes:
            r = _run(torch.clone, t)
        elif not t.requires_grad or _state.recording:
            r = fn(t, axes, keepdims)
        else:
            r = _run(fn, t, axes, keepdims)
        if r.dim() == 0:
            r = r.reshape(1)
        if r.dtype is not t.dtype:
            r = r.to(t.dtype)  # MXNet reduces an int32 array to int32
        if out is None:
            return _new(r, data._ctx)
        return _assign_out(_new(r, data._ctx), out)
    op.__name__ = name
    op.__doc__ = f"``{name}`` over ``axis`` (all axes by default), with keepdims and exclude."
    return op


def _mean(t, axes, keep):
    if not t.is_floating_point():
        return torch.mean(t.double(), dim=axes, keepdim=keep).trunc()
    return torch.mean(t, dim=axes, keepdim=keep)


def _amax(t, axes, keep):
    return torch.amax(t, dim=axes, keepdim=keep)


def _amin(t, axes, keep):
    return torch.amin(t, dim=axes, keepdim=keep)


def _prod(t, axes, keep):
    for a in sorted(axes, reverse=True):
        t = torch.prod(t, dim=a, keepdim=keep)
    return t


for _name, _fn in {"sum": lambda t, a, k: torch.sum(t, dim=a, keepdim=k),
                   "mean": _mean,
                   "max": _amax, "min": _amin, "prod": _prod,
                   "nansum": lambda t, a, k: torch.nansum(t, dim=a, keepdim=k),
                   "nanprod": lambda t, a, k: _prod(torch.nan_to_num(t, nan=1.0), a, k)}.items():
    _export()(_reduce(_name, _fn, nonempty=_name in ("max", "min")))

globals()["sum_axis"] = globals()["sum"]


@_export()
def norm(data, ord=2, axis=None, out_dtype=None, keepdims=False, out=None, name=None):
    """L1 or L2 norm over ``axis`` (all elements by default).

    ``out_dtype`` (float16, float32, float64, int32, int64 or int8) is the result's dtype; by default
    the data's. A floating result is computed in the wider of the data's and ``out_dtype``'s
    precision (so a float16 array's norm into float32 accumulates in float32, as MXNet with
    ``MXNET_SAFE_ACCUMULATION=1``); the gradient flows back to the data in its own dtype.
    """
    t = _t(data)
    if ord not in (1, 2):
        raise MXNetError(f"norm: ord must be 1 or 2, got {ord}")
    target = None
    if out_dtype is not None:
        target = to_torch_dtype(out_dtype)
        if target not in (torch.float16, torch.float32, torch.float64, torch.int32,
                          torch.int64, torch.int8):
            raise MXNetError(f"norm: out_dtype must be one of float16, float32, float64, "
                             f"int32, int64, int8, got {out_dtype!r}")
    dims = None if axis is None else _norm_axis(axis, t.dim())
    keepdims = bool(keepdims)
    if not t.is_floating_point():
        # MXNet computes an integer array's norm in its own dtype (truncating the result)
        r = torch.linalg.vector_norm(t.detach().double(), ord, dims, keepdims).to(t.dtype)
        if target is not None:
            r = r.to(target)
    else:
        acc = t.dtype
        if target is not None and target.is_floating_point and \
                torch.finfo(target).bits > torch.finfo(acc).bits:
            acc = target

        def fn(x):
            r = torch.linalg.vector_norm(x.to(acc), ord, dims, keepdims)
            return r if target is None else r.to(target)
        r = _run(fn, t)
    if r.dim() == 0:
        r = r.reshape(1)
    return _assign_out(_new(r, data._ctx), out)


def _arg(name, fn):
    def op(data, axis=None, keepdims=False, out=None, name=None):
        """Index of the extreme value along ``axis`` (of the flattened array when None),
        returned in the data's dtype as MXNet does."""
        t = _t(data)
        if axis is None:
            r = fn(t.reshape(-1), 0, False)
        else:
            r = fn(t, _norm_axis(axis, t.dim())[0], bool(keepdims))
        if r.dim() == 0:
            r = r.reshape(1)
        return _assign_out(_new(r.to(t.dtype), data._ctx), out)
    op.__name__ = name
    return op


_export()(_arg("argmax", lambda t, a, k: torch.argmax(t, dim=a, keepdim=k)))
_export()(_arg("argmin", lambda t, a, k: torch.argmin(t, dim=a, keepdim=k)))


@_export(fluent=False)
def argmax_channel(data, out=None, name=None):
    """Argmax over axis 1."""
    return argmax(data, axis=1, out=out)


# ---------------------------------------------------------------- shape manipulation
@_export(fluent=False)
def reshape(data, shape=None, reverse=False, out=None, name=None, **kwargs):
    target = kwargs.pop("target_shape", None)
    keep_highest = kwargs.pop("keep_highest", False)
    if isinstance(keep_highest, str):
        keep_highest = keep_highest.strip().lower() in ("true", "1")
    no_shape = shape is None or (isinstance(shape, (tuple, list)) and not len(shape))
    if no_shape and target is not None and not isinstance(target, int) and len(target):
        shape = _legacy_reshape_target(data.shape, target, keep_highest)
    elif shape is None:
        raise MXNetError(f"Reshape: give the new shape (shape=...) for data of shape "
                         f"{data.shape}")
    r = data.reshape(shape, reverse=reverse)
    return _assign_out(_new(_fresh(r._t, data._t), data._ctx), out)


def _legacy_reshape_target(dshape, target, keep_highest):
    """The output shape of the deprecated ``Reshape(target_shape=...)``: its one 0 (past the
    first axis with ``keep_highest``, which keeps the data's first axis) takes the rest."""
    oshape = [int(d) for d in target]
    start = 1 if keep_highest else 0
    if keep_highest:
        oshape[0] = dshape[0]
    zeros = [i for i in range(start, len(oshape)) if oshape[i] == 0]
    size = math.prod(dshape)
    if len(zeros) == 1:
        oshape[zeros[0]] = 1
        known = math.prod(oshape)
        oshape[zeros[0]] = size // known if known else 0
    if math.prod(oshape) != size or any(d < 0 for d in oshape):
        raise MXNetError(f"Reshape: target_shape {tuple(int(d) for d in target)} "
                         f"(keep_highest={bool(keep_highest)}) does not fit data of shape "
                         f"{tuple(dshape)} (at most one 0 is inferred; the sizes must agree)")
    return tuple(oshape)


@_export(fluent=False)
def reshape_like(lhs, rhs, lhs_begin=None, lhs_end=None, rhs_begin=None, rhs_end=None,
                 out=None, name=None):
    """``lhs`` reshaped to ``rhs``'s shape (or a range of its axes)."""
    if lhs_begin is None and lhs_end is None and rhs_begin is None and rhs_end is None:
        return _assign_out(_new(_fresh(lhs.reshape(rhs.shape)._t, lhs._t), lhs._ctx), out)
    ls, rs = lhs.shape, rhs.shape
    def axis(i, default, n):
        # MXNet counts a negative begin/end from the end (-1 is the last axis).
        i = default if i is None else int(i)
        return i + n if i < 0 else i
    lb, le = axis(lhs_begin, 0, len(ls)), axis(lhs_end, len(ls), len(ls))
    rb, re_ = axis(rhs_begin, 0, len(rs)), axis(rhs_end, len(rs), len(rs))
    shape = ls[:lb] + rs[rb:re_] + ls[le:]
    return _assign_out(_new(_fresh(lhs.reshape(shape)._t, lhs._t), lhs._ctx), out)


@_export()
def transpose(data, axes=None, out=None, name=None):
    t = _t(data)
    axes = tuple(range(t.dim() - 1, -1, -1)) if not axes else tuple(axes)
    return _assign_out(_new(_fresh(_run(t.permute, axes), t), data._ctx), out)


@_export()
def swapaxes(data, dim1=0, dim2=0, out=None, name=None):
    t = _t(data)
    return _assign_out(_new(_fresh(_run(torch.transpose, t, dim1, dim2), t), data._ctx), out)


globals()["SwapAxis"] = swapaxes


@_export(fluent=False)
def expand_dims(data, axis, out=None, name=None):
    return _assign_out(data.expand_dims(axis, inplace=False), out)


@_export()
def squeeze(data, axis=None, out=None, name=None):
    t = _t(data)
    if axis is None:
        r = _run(torch.squeeze, t)
    else:
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        for a in axes:
            if t.shape[a] != 1:
                raise MXNetError(f"squeeze: axis {a} of shape {tuple(t.shape)} has size "
                                 f"{t.shape[a]}, not 1")
        r = _run(torch.squeeze, t, axes)
    if r.dim() == 0:
        r = r.reshape(1)
    return _assign_out(_new(_fresh(r, t), data._ctx), out)


@_export(fluent=False)
def flatten(data, out=None, name=None):
    return _assign_out(data.flatten(inplace=False), out)


globals()["Flatten"] = flatten
globals()["Concat"] = concat


def _split_parts(data, num_outputs, axis, squeeze_axis, views):
    """The parts of ``split``: fresh arrays, or views of ``data`` when ``views``."""
    t = _t(data)
    n = t.shape[axis]
    if n % num_outputs:
        raise MXNetError(f"split: axis {axis} of size {n} (shape {tuple(t.shape)}) cannot be "
                         f"split into {num_outputs} equal parts")

    def fn():
        if not views and n:
            # fresh parts in one aten call (torch's copying split: one autograd node)
            if squeeze_axis and n == num_outputs:
                return list(torch.unbind_copy(t, axis))
            if not squeeze_axis:
                return list(torch.split_copy(t, n // num_outputs, axis))
        parts = torch.chunk(t, num_outputs, axis)
        parts = [p.squeeze(axis) for p in parts] if squeeze_axis else list(parts)
        return parts if views else [_fresh(p, t) for p in parts]
    if _state.recording or not t.requires_grad:
        parts = fn()
    else:
        parts = [p.detach() for p in _run(fn)]
    res = [_new(p, data._ctx) for p in parts]
    return res[0] if len(res) == 1 else res


@_export()
def split(data, num_outputs, axis=1, squeeze_axis=False, out=None, name=None):
    """Split into ``num_outputs`` equal parts along ``axis``."""
    return _split_parts(data, num_outputs, axis, squeeze_axis, views=False)


globals()["SliceChannel"] = split


def _split_views(data, num_outputs, axis=1, squeeze_axis=False, out=None, name=None):
    """:func:`split` whose parts are views of ``data`` (no copies). Only for a captured
    graph's replay, where ``data`` is an intermediate value nothing writes into afterwards
    (gluon.block._Graph chooses it): the values are split's, with one autograd node instead
    of a copy per part."""
    if out is not None:
        return split(data, num_outputs, axis, squeeze_axis, out, name)
    return _split_parts(data, num_outputs, axis, squeeze_axis, views=True)


def _axis_tuple(value):
    """A per-axis parameter given as one int (or None) as a 1-tuple; sequences unchanged."""
    if value is None or isinstance(value, (list, tuple)):
        return value
    if isinstance(value, numbers.Integral):
        return (int(value),)
    return value


@_export()
def slice(data, begin, end, step=None, out=None, name=None):  # noqa: A001 - MXNet's name
    """Slice with per-axis ``begin``/``end``/``step`` (None keeps the whole axis); a single
    int stands for a one-axis tuple, as MXNet parses its shape parameters."""
    begin, end, step = (_axis_tuple(v) for v in (begin, end, step))
    if getattr(data, "stype", "default") == "csr":
        from .sparse import slice as _csr_slice  # MXNet keeps a CSR matrix sparse here
        return _csr_slice(data, begin, end, step=step, out=out)
    import builtins
    step = step or [None] * len(begin)
    key = tuple(builtins.slice(b, e, s) for b, e, s in zip(begin, end, step))
    return _assign_out(_new(_fresh(data[key]._t, data._t), data._ctx), out)


@_export()
def slice_axis(data, axis, begin, end, out=None, name=None):
    t = _t(data)
    n = t.shape[axis]
    end = n if end is None else end
    r = _run(torch.narrow, t, axis, begin % n if begin < 0 else begin,
             (end % n if end < 0 else end) - (begin % n if begin < 0 else begin))
    return _assign_out(_new(_fresh(r, t), data._ctx), out)


@_export()
def slice_like(data, shape_like, axes=(), out=None, name=None):
    t = _t(data)
    axes = axes or range(t.dim())
    import builtins
    idx = [builtins.slice(None)] * t.dim()
    for a in axes:
        idx[a] = builtins.slice(0, shape_like.shape[a])
    return _assign_out(_new(_fresh(_run(t.__getitem__, tuple(idx)), t), data._ctx), out)


@_export()
def take(a, indices, axis=0, mode="clip", out=None, name=None):
    """Pick slices along ``axis`` at integer ``indices``: clipped into range, wrapped, or
    (``mode='raise'``) an error for any index out of range."""
    if mode not in ("clip", "wrap", "raise"):
        raise MXNetError(f"take: mode must be 'clip', 'wrap' or 'raise', got {mode!r}")
    if getattr(a, "stype", "default") == "csr" and axis == 0 and \
            getattr(indices, "ndim", 0) == 1:
        from .sparse import _csr_take  # MXNet keeps a CSR matrix sparse here
        return _assign_out(_csr_take(a, _t(indices, "indices"), mode), out)
    t = _t(a)
    idx = _t(indices, "indices").long()
    n = t.shape[axis]
    if mode == "raise":
        if idx.numel() and bool(((idx < 0) | (idx >= n)).any()):
            # MXNet checks the indices in the kernel: the error comes at the next
            # synchronisation on the result (asnumpy, wait_to_read...), see _failure
            bad = idx[(idx < 0) | (idx >= n)].reshape(-1)[0].item()
            ax = axis % t.dim()
            res = _failure.failed(
                MXNetError(f"take: index {bad} out of bounds for axis {axis} of size {n} "
                           f"(mode='raise'): take operator contains indices out of bound"),
                t.shape[:ax] + idx.shape + t.shape[ax + 1:], t.dtype, t.device)
            if out is not None:
                out._t = res
                return out
            return _new(res, a._ctx)
    else:
        idx = idx % n if mode == "wrap" else idx.clamp(0, n - 1)
    r = _run(torch.index_select, t, axis, idx.reshape(-1))
    axis = axis % t.dim()
    r = r.reshape(t.shape[:axis] + idx.shape + t.shape[axis + 1:])
    return _assign_out(_new(r, a._ctx), out)


@_export()
def pick(data, index, axis=-1, keepdims=False, mode="clip", out=None, name=None):
    """Pick one element per position along ``axis`` at ``index``.

    Parameters
    ----------
    data : NDArray
    index : NDArray
        Shape ``data.shape`` without ``axis``, or with ``axis`` kept as size 1. Values are
        truncated to integers.
    axis : int
        The axis to pick along (negative counts from the end; None is not supported).
    keepdims : bool
        Keep ``axis`` as size 1 in the output.
    mode : {'clip', 'wrap'}
        Out-of-range indices are clipped into ``[0, n - 1]`` or wrapped modulo ``n``.
    """
    t = _t(data)
    nd_ = t.dim()
    if axis is None:
        raise MXNetError("pick: axis=None is not supported; give the axis to pick along "
                         f"(data shape {data.shape})")
    if not -nd_ <= axis < nd_:
        raise MXNetError(f"pick: axis {axis} is out of range for data of shape {data.shape}")
    if mode not in ("clip", "wrap"):
        raise MXNetError(f"pick: mode must be 'clip' or 'wrap', got {mode!r}")
    axis = axis % nd_
    idx = _t(index, "index").detach()
    kept = tuple(t.shape[:axis]) + (1,) + tuple(t.shape[axis + 1:])
    dropped = kept[:axis] + kept[axis + 1:]
    # MXNet takes the index with the picked axis dropped or kept as size 1, nothing else
    # (a vector's index is (1,)): anything else would pick from the wrong rows.
    if tuple(idx.shape) not in (kept, dropped or kept):
        raise MXNetError(f"pick: index of shape {index.shape} does not fit data of shape "
                         f"{data.shape} with axis={axis}; expected {dropped or kept} or {kept}")
    idx = idx.long().reshape(kept)
    n = t.shape[axis]
    idx = idx % n if mode == "wrap" else idx.clamp(0, n - 1)
    r = _run(torch.gather, t, axis, idx)
    if not keepdims:
        r = r.squeeze(axis)
        if r.dim() == 0:
            r = r.reshape(1)
    return _assign_out(_new(r, data._ctx), out)


@_export()
def one_hot(indices, depth, on_value=1.0, off_value=0.0, dtype="float32", out=None, name=None):
    idx = _t(indices).long()
    depth = int(depth)
    if depth < 0:
        raise MXNetError(f"one_hot: depth must not be negative, got {depth} (indices shape "
                         f"{indices.shape})")
    if depth == 0:  # MXNet gives an empty last axis
        r = torch.zeros(tuple(idx.shape) + (0,), dtype=to_torch_dtype(dtype), device=idx.device)
        return _assign_out(_new(r, indices._ctx), out)
    valid = (idx >= 0) & (idx < depth)
    oh = F.one_hot(idx.clamp(0, depth - 1), depth) * valid.unsqueeze(-1)
    r = oh.to(to_torch_dtype(dtype)) * (on_value - off_value) + off_value
    return _assign_out(_new(r, indices._ctx), out)


@_export(fluent=False)
def where(condition, x, y, out=None, name=None):
    c = _t(condition)
    xt, yt = _t(x), _t(y)
    if xt.dtype is not yt.dtype:
        raise MXNetError(f"where: x and y must have one dtype, got {x.dtype.__name__} and "
                         f"{y.dtype.__name__}")
    if c.shape != xt.shape:
        if c.dim() == 1 and c.shape[0] == xt.shape[0]:
            c = c.reshape((-1,) + (1,) * (xt.dim() - 1))
        else:
            raise MXNetError(f"where: condition shape {tuple(c.shape)} must equal x's shape "
                             f"{tuple(xt.shape)} or be its first dimension")
    return _assign_out(_new(_run(torch.where, c != 0, xt, yt), x._ctx), out)


@_export()
def broadcast_to(data, shape, out=None, name=None):
    t = _t(data)
    if len(shape) != t.dim():
        raise MXNetError(f"broadcast_to: cannot broadcast shape {tuple(t.shape)} to {tuple(shape)}"
                         " (MXNet needs the same number of dimensions)")
    shape = tuple(s if s != 0 else t.shape[i] for i, s in enumerate(shape))
    try:
        r = _fresh(_run(t.expand, shape).contiguous(), t)
    except RuntimeError as err:
        raise MXNetError(f"broadcast_to: cannot broadcast shape {tuple(t.shape)} to "
                         f"{shape}: {err}") from None
    return _assign_out(_new(r, data._ctx), out)


@_export()
def broadcast_like(lhs, rhs, lhs_axes=None, rhs_axes=None, out=None, name=None):
    if lhs_axes is None or rhs_axes is None:
        # (MXNet broadcasts to the whole shape unless both axis lists are given)
        return broadcast_to(lhs, rhs.shape, out=out)
    la = (lhs_axes,) if isinstance(lhs_axes, int) else tuple(lhs_axes)
    ra = (rhs_axes,) if isinstance(rhs_axes, int) else tuple(rhs_axes)
    if not la or not ra:
        raise MXNetError(f"broadcast_like: empty axes (lhs_axes={lhs_axes}, "
                         f"rhs_axes={rhs_axes}) are not allowed")
    if len(la) != len(ra):
        raise MXNetError(f"broadcast_like: lhs_axes {lhs_axes} and rhs_axes {rhs_axes} must "
                         "have the same length")
    la = _norm_axis(la, lhs.ndim)
    ra = _norm_axis(ra, rhs.ndim)
    shape = list(lhs.shape)
    for a, b in zip(la, ra):
        shape[a] = rhs.shape[b]
    return broadcast_to(lhs, tuple(shape), out=out)


@_export(fluent=False)
def broadcast_axis(data, axis=(), size=(), out=None, name=None):
    axis = (axis,) if isinstance(axis, int) else axis
    size = (size,) if isinstance(size, int) else size
    shape = list(data.shape)
    for a, s in zip(axis, size):
        if shape[a] != 1:
            raise MXNetError(f"broadcast_axis: axis {a} of shape {data.shape} has size "
                             f"{shape[a]}; a broadcast axis must have size 1")
        shape[a] = s
    return broadcast_to(data, tuple(shape), out=out)


globals()["broadcast_axes"] = broadcast_axis


@_export()
def tile(data, reps, out=None, name=None):
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    # MXNet: a negative count is an error; a zero count too outside np_shape mode, where a
    # 0 in a shape means "unknown" and tile's shape inference fails on it
    from ..util import is_np_shape
    if any(int(r) < 0 for r in reps) or (not is_np_shape() and any(int(r) == 0 for r in reps)):
        raise MXNetError(f"tile: reps {reps} must be positive"
                         + ("" if is_np_shape() else " (0 only in np_shape mode)")
                         + f" for data of shape {data.shape}")
    return _assign_out(_new(_run(torch.tile, _t(data), reps), data._ctx), out)


@_export()
def repeat(data, repeats, axis=None, out=None, name=None):
    t = _t(data)
    if axis is None:
        r = _run(torch.repeat_interleave, t.reshape(-1), repeats)
    else:
        r = _run(torch.repeat_interleave, t, repeats, axis)
    return _assign_out(_new(r, data._ctx), out)


@_export()
def flip(data, axis, out=None, name=None):
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return _assign_out(_new(_run(torch.flip, _t(data), axes), data._ctx), out)


globals()["reverse"] = flip


def _mxnet_sort_indices(src, ax, k, is_ascend):
    """Indices along ``ax`` of the first ``k`` values of ``src`` in MXNet 1.9.1's CPU order.

    MXNet sorts with std::sort / std::partial_sort, which leave equal values in an order of
    their own (not by position, above 16 elements): rows where equal values reach the first
    ``k`` (or the boundary after them) are replayed with libstdc++'s algorithms
    (``_cpp_sort``); the other rows sort the same with any algorithm. Rows with NaN keep
    torch's order (NaN breaks the comparisons std::sort relies on).
    """
    n = src.shape[ax]
    order = torch.sort(src, dim=ax, descending=not is_ascend, stable=True)[1]
    idx = order.narrow(ax, 0, k)
    if n <= 1:
        return idx
    head = torch.gather(src, ax, order.narrow(ax, 0, k + 1 if k < n else n)).movedim(ax, -1)
    head = head.reshape(-1, head.shape[-1])
    ties = (head[:, 1:] == head[:, :-1]).any(1)
    if not bool(ties.any()):
        return idx
    if src.is_floating_point():
        ties &= ~torch.isnan(src.movedim(ax, -1).reshape(-1, n)).any(1)
    rows = torch.nonzero(ties).reshape(-1).tolist()
    if not rows:
        return idx
    from ._cpp_sort import mxnet_order
    vals = src.movedim(ax, -1).reshape(-1, n)
    out = idx.movedim(ax, -1).contiguous()
    flat = out.view(-1, k)
    for r in rows:
        flat[r] = torch.tensor(mxnet_order(vals[r].tolist(), k, is_ascend), dtype=flat.dtype)
    return out.movedim(-1, ax)


@_export()
def topk(data, axis=-1, k=1, ret_typ="indices", is_ascend=False, dtype="float32", out=None,
         name=None):
    """Top ``k`` along ``axis`` (of the flattened array when None): indices (default),
    values, both, or a 0/1 mask of ``data``'s shape."""
    t = _t(data)
    src = t.reshape(-1) if axis is None else t
    ax = 0 if axis is None else _norm_axis(axis, t.dim())[0]
    k = int(k)
    if k <= 0 or k > src.shape[ax]:
        k = src.shape[ax] if k <= 0 else k
        if k > src.shape[ax]:
            raise MXNetError(f"topk: k={k} is larger than the size {src.shape[ax]} of axis "
                             f"{axis} (shape {tuple(t.shape)})")
    if ret_typ not in ("indices", "value", "both", "mask"):
        raise MXNetError(f"topk: ret_typ must be 'indices', 'value', 'both' or 'mask', got "
                         f"{ret_typ!r}")
    idx = _mxnet_sort_indices(src.detach(), ax, k, is_ascend)
    idx_out = _new(idx.to(to_torch_dtype(dtype)), data._ctx)
    if ret_typ == "indices":
        return _assign_out(idx_out, out)
    if ret_typ == "mask":
        mask = torch.zeros_like(src.detach()).scatter_(ax, idx, 1).reshape(t.shape)
        return _assign_out(_new(mask, data._ctx), out)
    vals = _new(_run(torch.gather, src, ax, idx), data._ctx)
    if ret_typ == "value":
        return _assign_out(vals, out)
    return [vals, idx_out]


@_export()
def sort(data, axis=-1, is_ascend=True, out=None, name=None):
    t = _t(data)
    src = t.reshape(-1) if axis is None else t
    ax = 0 if axis is None else axis
    r = _run(torch.sort, src, dim=ax, descending=not is_ascend, stable=True)[0]
    return _assign_out(_new(r, data._ctx), out)


@_export()
def argsort(data, axis=-1, is_ascend=True, dtype="float32", out=None, name=None):
    t = _t(data).detach()
    src = t.reshape(-1) if axis is None else t
    ax = 0 if axis is None else _norm_axis(axis, t.dim())[0]
    r = _mxnet_sort_indices(src, ax, src.shape[ax], is_ascend)
    return _assign_out(_new(r.to(to_torch_dtype(dtype)), data._ctx), out)


# ---------------------------------------------------------------- linear algebra
@_export()
def dot(lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None, out=None,
        name=None):
    """Matrix product; N-d inputs are flattened around the contracted axis as in MXNet."""
    if getattr(lhs, "stype", "default") != "default" or getattr(rhs, "stype", "default") != "default":
        from . import sparse
        return sparse.dot(lhs, rhs, transpose_a=transpose_a, transpose_b=transpose_b)
    a, b = _t(lhs, "lhs"), _t(rhs, "rhs")
    # MXNet flattens an N-d lhs to 2-D around its last axis (its first with transpose_a) and
    # an N-d rhs around its first axis (its last with transpose_b).
    if a.dim() == 1:
        a2, out_a = a.reshape(1, -1), ()
    elif transpose_a:
        a2, out_a = a.reshape(a.shape[0], -1).t(), tuple(a.shape[1:])
    else:
        a2, out_a = a.reshape(-1, a.shape[-1]), tuple(a.shape[:-1])
    if b.dim() == 1:
        b2, out_b = b.reshape(-1, 1), ()
    elif transpose_b:
        b2, out_b = b.reshape(-1, b.shape[-1]).t(), tuple(b.shape[:-1])
    else:
        b2, out_b = b.reshape(b.shape[0], -1), tuple(b.shape[1:])
    if a2.shape[1] != b2.shape[0]:
        raise MXNetError(f"dot: shapes {lhs.shape} and {rhs.shape} (transpose_a="
                         f"{transpose_a}, transpose_b={transpose_b}) are not aligned")
    r = _run(torch.matmul, a2, b2).reshape(out_a + out_b or (1,))
    return _assign_out(_new(r, lhs._ctx), out)


@_export()
def batch_dot(lhs, rhs, transpose_a=False, transpose_b=False, out=None, name=None):
    a, b = _t(lhs), _t(rhs)
    if transpose_a:
        a = a.transpose(-1, -2)
    if transpose_b:
        b = b.transpose(-1, -2)
    # (3-D or more: the leading axes are batch axes and must match, as in MXNet)
    if a.dim() < 3 or a.dim() != b.dim() or a.shape[:-2] != b.shape[:-2] or \
            a.shape[-1] != b.shape[-2]:
        raise MXNetError(f"batch_dot: shapes {lhs.shape} and {rhs.shape} (transpose_a="
                         f"{transpose_a}, transpose_b={transpose_b}) are not aligned")
    return _assign_out(_new(_run(torch.matmul, a, b), lhs._ctx), out)


@_export(fluent=False)
def add_n(*args, out=None, name=None):
    """Sum of all arguments."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    if any(type(a) is not NDArray and getattr(a, "stype", "default") != "default"
           for a in args):
        from .sparse import add_n as sparse_add_n
        return sparse_add_n(*args, out=out)
    ts = [_t(a) for a in args]
    for a, t in zip(args, ts):
        if t.dtype is not ts[0].dtype:
            raise MXNetError(f"add_n: all inputs must have one dtype, got "
                             f"{args[0].dtype.__name__} and {a.dtype.__name__}")
    r = ts[0]
    for t in ts[1:]:
        r = r + t
    if len(ts) == 1:
        r = r.clone()
    return _assign_out(_new(r, args[0]._ctx), out)


globals()["ElementWiseSum"] = add_n


# ---------------------------------------------------------------- activations
def _float_only(t, op):
    if not t.is_floating_point():
        raise MXNetError(f"{op}: this operation only supports floating point types, not "
                         f"{str(t.dtype).split('.')[-1]}")


@_export()
def softmax(data, length=None, axis=-1, temperature=None, dtype=None, use_length=False,
            out=None, name=None):
    """Softmax along ``axis`` (optionally over the first ``length`` entries only)."""
    t = _t(data)
    _float_only(t, "softmax")
    if temperature:
        t = t / temperature
    if use_length and length is not None:
        n = t.shape[axis]
        ax = axis % t.dim()
        lens = _t(length).detach().long()
        shape = [1] * t.dim()
        shape[ax] = n
        ar = torch.arange(n, device=t.device).reshape(shape)
        if lens.dim() == t.dim() - 1:
            # MXNet: one length per position of the other axes (data's shape without axis).
            want = tuple(s for i, s in enumerate(t.shape) if i != ax)
            if tuple(lens.shape) != want:
                raise MXNetError(f"softmax: length has shape {tuple(lens.shape)}, expected "
                                 f"{want} (data shape {tuple(t.shape)} without axis {axis})")
            mask = ar < lens.unsqueeze(ax)
        else:
            mask = ar < lens.reshape(-1, *([1] * (t.dim() - 1)))
        t = t.masked_fill(~mask, float("-inf"))
        r = _run(torch.softmax, t, axis).masked_fill(~mask, 0.0)
    else:
        r = _run(torch.softmax, t, axis)
    if dtype is not None:
        r = r.to(to_torch_dtype(dtype))
    return _assign_out(_new(r, data._ctx), out)


@_export()
def log_softmax(data, axis=-1, temperature=None, dtype=None, out=None, name=None):
    """Log of the softmax along ``axis``."""
    t = _t(data)
    _float_only(t, "log_softmax")
    if temperature:
        t = t / temperature
    r = _run(torch.log_softmax, t, axis)
    if dtype is not None:
        r = r.to(to_torch_dtype(dtype))
    return _assign_out(_new(r, data._ctx), out)


@_export(fluent=False)
def softmin(data, axis=-1, temperature=None, dtype=None, use_length=False, out=None, name=None):
    """Softmax of ``-data / temperature`` along ``axis``, in ``dtype`` (the data's by
    default)."""
    t = _t(data)
    _float_only(t, "softmin")
    if temperature:
        t = t / temperature
    r = _run(torch.softmax, -t, axis)
    if dtype is not None:
        r = r.to(to_torch_dtype(dtype))
    return _assign_out(_new(r, data._ctx), out)


@_export(fluent=False)
def zeros_like(data, out=None, name=None, **attrs):
    # MXNet 1.9.1's zeros_like/ones_like have no parameters and ignore any attribute given
    # (GluonCV's CenterNet decoder passes dtype='int64' and gets data's dtype back).
    return _assign_out(data.zeros_like(), out)


@_export(fluent=False)
def ones_like(data, out=None, name=None, **attrs):
    return _assign_out(data.ones_like(), out)


@_export(fluent=False)
def full_like(data, fill_value, out=None, name=None):
    return _assign_out(_new(torch.full_like(data._t.detach(), fill_value), data._ctx), out)


@_export()
def shape_array(data, out=None, name=None):
    return _new(torch.tensor(data.shape, dtype=torch.int64, device=data._t.device), data._ctx)


@_export()
def size_array(data, out=None, name=None):
    return _new(torch.tensor([data.size], dtype=torch.int64, device=data._t.device), data._ctx)


@_export()
def cast(data, dtype, out=None, name=None):
    """``data`` converted to ``dtype``. The gradient is the head gradient cast back to the
    data's dtype, also through an integer result (MXNet differentiates it)."""
    r = data.astype(dtype)
    if _state.recording and r.stype == "default" and not r._t.is_floating_point():
        from ._intgrad import cast_with_grad
        r._t = cast_with_grad(_t(data), r._t)
    return _assign_out(r, out)


globals()["Cast"] = cast


@_export()
def stop_gradient(data, out=None, name=None):
    """The same values; no gradient flows back through it (a zero gradient is recorded)."""
    t = _t(data)
    if _state.recording and t.requires_grad:
        # Keep the output in the graph, as MXNet does, so that backward from it gives the
        # inputs a zero gradient instead of failing.
        d = t.detach()
        r = d + (t - d) * 0
    else:
        r = t.detach().clone()  # (an operator's result is a new array in MXNet)
    return _assign_out(_new(r, data._ctx), out)


globals()["BlockGrad"] = stop_gradient


@_export(fluent=False)
def identity(data, out=None, name=None):
    return _assign_out(_new(_run(torch.clone, _t(data)), data._ctx), out)


globals()["_copy"] = identity

for _alias in ("maximum", "minimum", "sum_axis", "SwapAxis", "Flatten", "Concat", "SliceChannel",
               "reverse", "broadcast_axes", "ElementWiseSum", "Cast", "BlockGrad"):
    if _alias not in __all__:
        __all__.append(_alias)
__all__ += ["concat", "stack"]


# ---------------------------------------------------------------- gather / scatter and friends
@_export(fluent=False)
def gather_nd(data, indices, out=None, name=None):
    """Gather elements or slices: ``indices`` has shape ``(M, ...)`` and indexes the first
    ``M`` axes of ``data``; the output shape is ``indices.shape[1:] + data.shape[M:]``."""
    t = _t(data)
    idx = _t(indices, "indices").detach().long()
    if idx.dim() < 2:
        raise MXNetError(f"gather_nd: indices need at least 2 dimensions (M, ...), got shape "
                         f"{indices.shape} for data of shape {data.shape}")
    m = idx.shape[0]
    if m > t.dim():
        raise MXNetError(f"gather_nd: indices of shape {indices.shape} index {m} axes of data "
                         f"with shape {data.shape}")
    key = tuple(idx[i] for i in range(m))
    return _assign_out(_new(_run(t.__getitem__, key), data._ctx), out)


@_export(fluent=False)
def scatter_nd(data, indices, shape, out=None, name=None):
    """The inverse of ``gather_nd``: a zero array of ``shape`` with ``data`` written at
    ``indices`` (later duplicates win)."""
    v = _t(data)
    idx = _t(indices, "indices").detach().long()
    shape = tuple(shape)

    def fn():
        r = torch.zeros(shape, dtype=v.dtype, device=v.device)
        return r.index_put(tuple(idx[i] for i in range(idx.shape[0])), v)
    return _assign_out(_new(_run(fn), data._ctx), out)


@_export()
def diag(data, k=0, axis1=0, axis2=1, out=None, name=None):
    """A diagonal of a matrix (or of the ``axis1``/``axis2`` planes), or a diagonal matrix
    made from a vector."""
    t = _t(data)
    if t.dim() == 1:
        r = _run(torch.diag, t, k)
    else:
        r = _run(torch.diagonal, t, k, axis1, axis2)
        if k > t.shape[axis2] or -k > t.shape[axis1]:
            raise MXNetError(f"diag: diagonal k={k} does not exist in data of shape "
                             f"{data.shape} (axis1={axis1}, axis2={axis2})")
    return _assign_out(_new(r, data._ctx), out)


@_export(fluent=False)
def moments(data, axes=None, keepdims=False, name=None):
    """``[mean, variance]`` over ``axes`` (the biased variance)."""
    t = _t(data)
    dims = _norm_axis(axes, t.dim())

    def fn():
        var, mean = torch.var_mean(t, dim=dims, unbiased=False, keepdim=keepdims)
        return mean, var
    mean, var = _run(fn)
    if not _state.recording:
        mean, var = mean.detach(), var.detach()
    return [_new(mean, data._ctx), _new(var, data._ctx)]


# ---------------------------------------------------------------- more MXNet operators
_logical = {"logical_and": torch.logical_and, "logical_or": torch.logical_or,
            "logical_xor": torch.logical_xor}
for _name, _fn in list(_logical.items()):
    def _mk(name, fn):
        def op(lhs, rhs, out=None, name=None):
            if not isinstance(lhs, NDArray) or not isinstance(rhs, NDArray):
                # a number on either side (MXNet's scalar forms); two numbers: 0 or 1
                if not isinstance(lhs, NDArray) and not isinstance(rhs, NDArray):
                    return int(bool(fn(torch.tensor(lhs != 0), torch.tensor(rhs != 0))))
                arr, num = (lhs, rhs) if isinstance(lhs, NDArray) else (rhs, lhs)
                if not isinstance(num, numbers.Number):
                    _t(num, "lhs" if arr is rhs else "rhs")     # raises: not an array
                a = arr._t.detach() != 0
                r = fn(a, torch.full_like(a, bool(num != 0)))
                return _assign_out(_new(r.to(arr._t.dtype), arr._ctx), out)
            a, b = _t(lhs, "lhs"), _t(rhs, "rhs")
            if a.dtype is not b.dtype:
                raise MXNetError(f"{name}: dtype mismatch, {lhs.dtype.__name__} and "
                                 f"{rhs.dtype.__name__}")
            r = fn(a.detach() != 0, b.detach() != 0).to(a.dtype)
            return _assign_out(_new(r, lhs._ctx), out)
        op.__name__ = name
        op.__doc__ = f"Elementwise ``{name}`` (0/1 in the inputs' dtype), with broadcasting."
        return op
    _export(fluent=False)(_mk(_name, _fn))
    _export(fluent=False)(_mk("broadcast_" + _name, _fn))


@_export(fluent=False)
def moveaxis(data, source, destination, out=None, name=None):
    """Move axes ``source`` (an int or a list) to positions ``destination``; the other axes
    keep their order. Bad or repeated axes raise ValueError, as in MXNet."""
    t = _t(data)
    nd_ = t.dim()

    def norm(ax, what):
        ax = [ax] if _is_int(ax) else list(ax)
        res = []
        for a in ax:
            if not _is_int(a) or not -nd_ <= a < nd_:
                raise ValueError(f"moveaxis: {what} axis {a} is out of range for an array "
                                 f"with {nd_} dimensions")
            res.append(int(a) % nd_)
        if len(set(res)) != len(res):
            raise ValueError(f"moveaxis: repeated axis in {what} {ax}")
        return res
    src, dst = norm(source, "source"), norm(destination, "destination")
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source {source} and destination {destination} must "
                         "have the same number of elements")
    order = [a for a in range(nd_) if a not in src]
    for d, s_ in sorted(zip(dst, src)):
        order.insert(d, s_)
    return _assign_out(_new(_fresh(_run(t.permute, order), t), data._ctx), out)


@_export(fluent=False)
def concatenate(arrays, axis=0, always_copy=True):
    """Join a list of arrays along ``axis`` (``nd.concat`` with the axis first)."""
    return concat(*arrays, dim=axis)


@_export(fluent=False)
def hard_sigmoid(data, alpha=0.2, beta=0.5, out=None, name=None):
    """``clip(alpha * x + beta, 0, 1)``."""
    t = _t(data)
    return _assign_out(_new(_run(lambda: torch.clamp(t * alpha + beta, 0.0, 1.0)),
                            data._ctx), out)


@_export(fluent=False)
def batch_take(a, indices, out=None, name=None):
    """``a[i, indices[i]]`` for each row ``i`` of a 2-D ``a``."""
    t = _t(a)
    idx = _t(indices, "indices").detach().long().clamp(0, t.shape[1] - 1)
    return _assign_out(_new(_run(lambda: t[torch.arange(t.shape[0], device=t.device), idx]),
                            a._ctx), out)


def _block_size(op, data, block_size):
    """The checks MXNet's depth_to_space/space_to_depth make: 4-D data with no zero-size
    dimension, a positive block size."""
    if len(data.shape) != 4:
        raise MXNetError(f"{op}: data must be 4-D (N, C, H, W), got shape {data.shape}")
    if 0 in tuple(data.shape):
        raise MXNetError(f"{op}: data of shape {data.shape} has a zero-size dimension")
    try:
        b = int(block_size)
    except (TypeError, ValueError):
        raise MXNetError(f"{op}: block_size must be an int, got {block_size!r}") from None
    if b < 1:
        raise MXNetError(f"{op}: block_size must be positive, got {block_size!r}")
    return b


@_export()
def depth_to_space(data, block_size, out=None, name=None):
    """(N, C*b*b, H, W) -> (N, C, H*b, W*b), taking the depth blocks in MXNet's order."""
    t = _t(data)
    b = _block_size("depth_to_space", data, block_size)
    n, c, h, w = t.shape
    if c % (b * b):
        raise MXNetError(f"depth_to_space: channels {c} of shape {data.shape} are not a "
                         f"multiple of block_size**2 = {b * b}")

    def fn():
        return (t.reshape(n, b, b, c // (b * b), h, w).permute(0, 3, 4, 1, 5, 2)
                .reshape(n, c // (b * b), h * b, w * b))
    return _assign_out(_new(_run(fn), data._ctx), out)


@_export()
def space_to_depth(data, block_size, out=None, name=None):
    """The inverse of ``depth_to_space``: (N, C, H*b, W*b) -> (N, C*b*b, H, W)."""
    t = _t(data)
    b = _block_size("space_to_depth", data, block_size)
    n, c, hb, wb = t.shape
    if hb % b or wb % b:
        raise MXNetError(f"space_to_depth: spatial shape {data.shape[2:]} is not a multiple "
                         f"of block_size {b}")

    def fn():
        return (t.reshape(n, c, hb // b, b, wb // b, b).permute(0, 3, 5, 1, 2, 4)
                .reshape(n, c * b * b, hb // b, wb // b))
    return _assign_out(_new(_run(fn), data._ctx), out)


@_export()
def split_v2(data, indices_or_sections, axis=0, squeeze_axis=False, out=None, name=None):
    """Split into equal sections (an int) or at the given indices (a tuple)."""
    t = _t(data)
    n = t.shape[axis]
    if isinstance(indices_or_sections, int):
        if n % indices_or_sections:
            raise MXNetError(f"split_v2: axis {axis} of size {n} cannot be split into "
                             f"{indices_or_sections} equal sections")
        bounds = list(range(0, n, n // indices_or_sections)) + [n]
    else:
        bounds = [0] + [int(i) for i in indices_or_sections] + [n]
        if bounds[1] == 0:
            bounds = bounds[1:]

    def fn():
        parts = [t.narrow(axis, s, e - s) for s, e in zip(bounds[:-1], bounds[1:])]
        parts = [p.squeeze(axis) for p in parts] if squeeze_axis else parts
        return [_fresh(p, t) for p in parts]
    parts = _run(fn)
    if not _state.recording and t.requires_grad:
        parts = [p.detach() for p in parts]
    res = [_new(p, data._ctx) for p in parts]
    return res[0] if len(res) == 1 else res


@_export(fluent=False)
def reset_arrays(*data, num_arrays=None, name=None):
    """Set every given array to zero, in place."""
    with torch.no_grad():
        for a in data:
            _t(a).zero_()


@_export(fluent=False)
def all_finite(data, init_output=True, out=None, name=None):
    """``[1.]`` when every value of ``data`` is finite, else ``[0.]``."""
    t = _t(data).detach()
    return _assign_out(_new(torch.isfinite(t).all().reshape(1).to(torch.float32), data._ctx),
                       out)


@_export(fluent=False)
def multi_all_finite(*data, num_arrays=1, init_output=True, out=None, name=None):
    """``[1.]`` when every value of every array is finite, else ``[0.]``."""
    ok = torch.stack([torch.isfinite(_t(a).detach()).all() for a in data]).all()
    return _assign_out(_new(ok.reshape(1).to(torch.float32), data[0]._ctx), out)


@_export(fluent=False)
def multi_sum_sq(*data, num_arrays=1, out=None, name=None):
    """The sum of squares of each array (one float32 value per array)."""
    ts = [_t(a).detach().float() for a in data]
    r = torch.stack([(t * t).sum() for t in ts])
    return _assign_out(_new(r, data[0]._ctx), out)


@_export(fluent=False)
def ravel_multi_index(data, shape, out=None, name=None):
    """Flat indices of the columns of ``data`` (one row per axis) in an array of ``shape``."""
    t = _t(data).detach()
    if t.dim() == 0 or t.shape[0] != len(tuple(shape)):
        raise MXNetError(f"ravel_multi_index: data of shape {data.shape} needs one row per "
                         f"axis of shape={tuple(shape)}")
    strides = []
    acc = 1
    for s in reversed(tuple(shape)):
        strides.append(acc)
        acc *= s
    st = torch.tensor(strides[::-1], dtype=torch.float64, device=t.device).reshape(-1, 1)
    return _assign_out(_new((t.double() * st).sum(0).to(t.dtype), data._ctx), out)


@_export(fluent=False)
def unravel_index(data, shape, out=None, name=None):
    """Per-axis indices (one row per axis) of the flat indices ``data`` in ``shape``.

    As in MXNet, the leading axis takes what is left after the others (it is not wrapped
    around its size), so ``shape`` may give it as -1 (unknown)."""
    t = _t(data).detach().long()
    shape = tuple(int(s) for s in shape)
    if not shape:
        raise MXNetError("unravel_index: shape must have at least one axis")
    rows = []
    for s in reversed(shape[1:]):
        if s <= 0:
            raise MXNetError(f"unravel_index: only the leading axis of shape={shape} may be "
                             "unknown (-1)")
        rows.append(t % s)
        t = torch.div(t, s, rounding_mode="floor")
    rows.append(t)
    return _assign_out(_new(torch.stack(rows[::-1]).to(data._t.dtype), data._ctx), out)


# ---------------------------------------------------------------- small MXNet operators
@_export(fluent=False)
def cumsum(a, axis=None, dtype=None, out=None, name=None):
    """Cumulative sum along ``axis`` (of the flattened array when None).

    The result keeps ``a``'s dtype unless ``dtype`` is given (an int32 array sums in int32,
    as in MXNet). A negative ``axis`` counts from the end (MXNet 1.9.1 rejects it).
    """
    t = _t(a)
    if axis is None:
        t, axis = t.reshape(-1), 0
    elif not -t.dim() <= axis < t.dim():
        raise MXNetError(f"cumsum: axis {axis} is out of range for an array of shape "
                         f"{a.shape}")
    td = t.dtype if dtype is None else to_torch_dtype(dtype)
    r = _run(torch.cumsum, t, axis, dtype=td)
    return _assign_out(_new(r, a._ctx), out)


@_export(fluent=False)
def crop(data, begin, end, step=None, out=None, name=None):
    """MXNet's alias of ``slice``: per-axis ``begin``/``end``/``step`` (None keeps the
    axis)."""
    return globals()["slice"](data, begin, end, step=step, out=out)


@_export(fluent=False)
def amp_cast(data, dtype, out=None, name=None):
    """Cast floating-point ``data`` to ``dtype`` (AMP's cast); other dtypes pass unchanged,
    as in MXNet."""
    t = _t(data)
    if not t.is_floating_point():
        return _assign_out(_new(_run(torch.clone, t), data._ctx), out)
    td = to_torch_dtype(dtype)
    if td is torch.bfloat16 and t.dtype is not torch.bfloat16:
        return _assign_out(_new(_run(_amp_cast_bf16, t), data._ctx), out)
    return _assign_out(_new(_run(t.to, td, copy=True), data._ctx), out)


class _AmpCastBF16(torch.autograd.Function):
    """float -> bfloat16 as MXNet 1.9.1's amp_cast (oneDNN): rounded to nearest even,
    float32 denormals flushed to (signed) zero, NaNs the canonical quiet NaN; the gradient
    is cast back as a plain cast's (MXNet's amp_cast backward). The fix-ups work in place on
    the fresh result, all on the device: no host read and no recorded intermediate ops, so
    a cast costs a handful of kernels (torch's vectorized conversion writes NaN as 0xFFFF;
    the masked fill writes the canonical 0x7FC0)."""

    @staticmethod
    def forward(ctx, t):
        ctx.src = t.dtype
        f = t.detach()
        if f.dtype is not torch.float32:
            f = f.to(torch.float32)
        r = f.to(torch.bfloat16)
        # x * 0 keeps the sign of a flushed denormal (all operands already bfloat16 or
        # bool: no conversion kernels)
        r = torch.where(f.abs() < _F32_TINY, r * _BF16_ZERO, r)
        return r.masked_fill_(torch.isnan(r), float("nan"))

    @staticmethod
    def backward(ctx, g):
        return g.to(ctx.src)


_amp_cast_bf16 = _AmpCastBF16.apply
# the smallest normal float32, as a 0-d tensor (a Python float would be wrapped per call)
_F32_TINY = torch.tensor(1.1754943508222875e-38, dtype=torch.float32)
_BF16_ZERO = torch.tensor(0.0, dtype=torch.bfloat16)


@_export(fluent=False)
def cast_storage(data, stype, out=None, name=None):
    """``data`` in storage type ``stype`` ('default', 'row_sparse' or 'csr')."""
    from .sparse import cast_storage as _cast_storage  # the sparse layer imports this module
    return _assign_out(_cast_storage(data, stype), out)


@_export(fluent=False)
def amp_multicast(*data, num_outputs=None, cast_narrow=False, out=None, name=None):
    """Cast every floating-point input to the widest floating type among them (the
    narrowest with ``cast_narrow``), as AMP does before a multi-input operator; other dtypes
    pass unchanged. Returns a list."""
    if len(data) == 1 and isinstance(data[0], (list, tuple)):
        data = tuple(data[0])
    ts = [_t(a) for a in data]
    if num_outputs is not None and num_outputs != len(ts):
        raise MXNetError(f"amp_multicast: num_outputs={num_outputs} but {len(ts)} inputs")
    floats = [t.dtype for t in ts if t.is_floating_point()]
    res = []
    if floats:
        import builtins  # this module's min/max are the reductions
        pick_fn = builtins.min if cast_narrow else builtins.max
        target = pick_fn(floats, key=lambda d: torch.finfo(d).bits)
    for a, t in zip(data, ts):
        if t.is_floating_point() and t.dtype is not target:
            t = _run(t.to, target)
        else:
            t = _run(torch.clone, t)
        res.append(_new(t, a._ctx))
    return res


@_export(fluent=False)
def khatri_rao(*args, out=None, name=None):
    """Column-wise Kronecker product of matrices with equal column counts: inputs of shapes
    ``(m_i, n)`` give ``(prod(m_i), n)``."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    ts = [_t(a, "khatri_rao input") for a in args]
    if not ts:
        raise MXNetError("khatri_rao needs at least one matrix")
    n = ts[0].shape[-1] if ts[0].dim() == 2 else None
    for a, t in zip(args, ts):
        if t.dim() != 2 or t.shape[1] != n:
            raise MXNetError(f"khatri_rao: every input must be a matrix with the same number "
                             f"of columns, got shapes {[x.shape for x in args]}")

    def fn():
        r = ts[0]
        for t in ts[1:]:
            r = (r.unsqueeze(1) * t.unsqueeze(0)).reshape(-1, n)
        return r
    return _assign_out(_new(_run(fn), args[0]._ctx), out)


@_export(fluent=False)
def histogram(a, bins=10, range=None):  # noqa: A002 - MXNet's name
    """Histogram of the flattened ``a``: ``(counts, bin_edges)``.

    Parameters
    ----------
    a : NDArray
    bins : int or NDArray
        The number of equal bins over ``range``, or an array of bin edges (the last bin
        includes its right edge; values outside the edges are not counted).
    range : (float, float), optional
        The span of the equal bins. Without it MXNet hands the work to numpy (min to max of
        the data) and returns float32 counts and edges; with it, int64 counts and edges in
        ``a``'s dtype.
    """
    t = _t(a).detach().reshape(-1)
    if isinstance(bins, NDArray):
        edges = bins._t.detach().reshape(-1)
        e = edges.to(torch.float64)
        x = t.to(torch.float64)
        idx = torch.searchsorted(e, x, right=True) - 1
        idx = torch.where(x == e[-1], torch.full_like(idx, e.numel() - 2), idx)
        ok = (idx >= 0) & (idx < e.numel() - 1)
        counts = torch.bincount(idx[ok], minlength=e.numel() - 1)
        return _new(counts.to(torch.int64), a._ctx), _new(edges.clone(), bins._ctx)
    if not isinstance(bins, int):
        raise ValueError("bins argument should be either an integer or an NDArray")
    if range is None:
        import warnings
        import numpy as _np
        warnings.warn("histogram: no range given, so numpy computes it (as MXNet does): "
                      "float32 counts and edges from the data's min to max", stacklevel=2)
        counts, edges = _np.histogram(a.asnumpy(), bins=bins)
        dev = t.device
        return (_new(torch.as_tensor(counts, dtype=torch.float32, device=dev), a._ctx),
                _new(torch.as_tensor(edges, dtype=torch.float32, device=dev), a._ctx))
    lo, hi = float(range[0]), float(range[1])
    if not lo <= hi:
        raise MXNetError(f"histogram: range {tuple(range)} must be increasing")
    x = t.to(torch.float64)
    width = (hi - lo) / bins if hi > lo else 1.0
    idx = torch.floor((x - lo) / width).to(torch.int64)
    idx = torch.where(x == hi, torch.full_like(idx, bins - 1), idx)
    ok = (x >= lo) & (x <= hi)
    counts = torch.bincount(idx[ok].clamp(0, bins - 1), minlength=bins)
    edges = lo + width * torch.arange(bins + 1, dtype=torch.float64, device=t.device)
    return _new(counts.to(torch.int64), a._ctx), _new(edges.to(t.dtype), a._ctx)


for _alias, _target in {"Reshape": "reshape", "broadcast_plus": "broadcast_add",
                        "max_axis": "max", "min_axis": "min", "true_divide": "divide",
                        "softmin": "softmin", "broadcast_axes": "broadcast_axis",
                        "choose_element_0index": "pick",
                        "pad": None, "argmax_channel": "argmax_channel"}.items():
    if _target is None:
        continue
    globals()[_alias] = globals()[_target]
    if _alias not in __all__:
        __all__.append(_alias)
for _m in ("argmax_channel", "broadcast_axes", "softmin"):
    if not hasattr(NDArray, _m):
        setattr(NDArray, _m, globals()[_m])


_DOCS = {
    "reshape": "``data`` reshaped to ``shape`` with MXNet's special codes (see "
               "``NDArray.reshape``).",
    "transpose": "Permute the axes (reverse them when ``axes`` is empty).",
    "swapaxes": "Swap axes ``dim1`` and ``dim2``.",
    "expand_dims": "Insert an axis of size 1 at ``axis``.",
    "squeeze": "Remove axes of size 1 (all of them, or those in ``axis``, which must be 1).",
    "flatten": "Collapse every axis but the first: ``(n, ...)`` becomes ``(n, -1)``.",
    "slice_axis": "Slice ``[begin, end)`` along one ``axis`` (negative indices count from the "
                  "end; ``end=None`` is the end).",
    "slice_like": "Slice ``data`` to the shape of ``shape_like`` on ``axes`` (all by default).",
    "broadcast_to": "Broadcast to ``shape`` (a 0 keeps that input dimension).",
    "broadcast_like": "Broadcast ``lhs`` to the shape of ``rhs``.",
    "broadcast_axis": "Broadcast size-1 ``axis`` (one or several) to ``size``.",
    "tile": "Repeat the whole array ``reps`` times per axis.",
    "repeat": "Repeat each element ``repeats`` times along ``axis`` (of the flattened array "
              "when None).",
    "flip": "Reverse the order of elements along ``axis``.",
    "one_hot": "One-hot encode integer ``indices`` with ``depth`` classes; out-of-range "
               "indices give an all-``off_value`` row.",
    "where": "Elements of ``x`` where ``condition`` is non-zero, else of ``y``; a 1-D "
             "condition selects whole rows.",
    "sort": "Sorted values along ``axis`` (ascending unless ``is_ascend=False``).",
    "argsort": "Indices that sort along ``axis``, as ``dtype`` (float32 by default).",
    "batch_dot": "Batched matrix product of 3-D arrays, with optional transposes.",
    "softmin": "Softmax of ``-data`` along ``axis``.",
    "zeros_like": "An array of zeros with ``data``'s shape, dtype and context.",
    "ones_like": "An array of ones with ``data``'s shape, dtype and context.",
    "full_like": "An array filled with ``fill_value``, with ``data``'s shape, dtype and "
                 "context.",
    "shape_array": "The shape of ``data`` as an int64 array.",
    "size_array": "The number of elements of ``data`` as a one-element int64 array.",
    "cast": "``data`` converted to ``dtype``.",
    "identity": "A copy of ``data``.",
    "isnan": "1 where ``data`` is NaN, else 0 (in ``data``'s dtype).",
    "isinf": "1 where ``data`` is infinite, else 0 (in ``data``'s dtype).",
    "isfinite": "1 where ``data`` is finite, else 0 (in ``data``'s dtype).",
    "maximum": "Elementwise maximum of two arrays or an array and a scalar.",
    "minimum": "Elementwise minimum of two arrays or an array and a scalar.",
}
for _n, _d in _DOCS.items():
    _f = globals().get(_n)
    if _f is not None and not (_f.__doc__ or "").strip():
        try:
            _f.__doc__ = _d
        except AttributeError:
            pass
        inner = getattr(_f, "__wrapped__", None)
        if inner is not None and not (inner.__doc__ or "").strip():
            inner.__doc__ = _d
