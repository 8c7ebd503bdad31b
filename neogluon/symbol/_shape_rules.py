"""Direct output-shape rules for symbolic shape inference.

Shape inference (``symbol._Inference``) finds an operator's output shapes by running the nd
function that computes it on torch ``meta`` tensors (zero tensors where meta is refused). That
is general but costs 0.1-10 ms per node (torch's meta kernels and decompositions in Python;
the first use imports torch._dynamo, seconds). The common operators' output shapes follow
from their input shapes and attributes by a few lines of arithmetic, which this module writes
down: one rule per nd function, written against that function's signature and computing what
it computes.

A rule answers only where it is sure the nd function would succeed with the same result:
anything it does not model (an unusual attribute, a dtype other than float32/float64, a
channel-last layout, an input it would refuse) makes it answer None, and inference runs the
operator on meta tensors as before, so results and error messages are the meta path's.
tests/test_symbol_shape_rules.py holds every rule equal to the meta path on many operator,
attribute and shape combinations.

Which nd function a node calls, and with which arguments, is worked out once per node
(:func:`prepare`) the way ``symbol._call_node`` calls it. Rules are keyed by the *original*
nd function objects: a node whose path resolves to anything else (a function patched by AMP
or by the user) gets no rule.
"""
from __future__ import annotations

import inspect
import numbers
import os
import sys

__all__ = ["prepare", "outputs", "rules_active"]

# Input dtypes the rules handle (every input one dtype): the output dtype is the input's.
_FLOAT = frozenset(("float32", "float64"))


class _Slot:
    """Stands for input ``i`` while a node's call is bound to its nd function's signature."""
    __slots__ = ("i",)

    def __init__(self, i):
        self.i = i


class Spec:
    """How one node calls its nd function, prepared for a rule.

    ``static`` holds the bound arguments that are attributes; ``tensors`` the (parameter,
    input position) pairs; ``varpos`` the variadic parameter and its input positions;
    ``path`` and ``base`` the nd path and the function it resolved to (checked again at each
    inference, so a function patched later gets no rule).
    """
    __slots__ = ("rule", "static", "tensors", "varpos", "path", "base", "attrs")

    def __init__(self, rule, static=None, tensors=(), varpos=None, path=None, base=None,
                 attrs=None):
        self.rule = rule
        self.static = static
        self.tensors = tensors
        self.varpos = varpos
        self.path = path
        self.base = base
        self.attrs = attrs


# ---------------------------------------------------------------------------- helpers
def _is_int(v):
    t = type(v)
    if t is int:
        return True
    return t is not bool and isinstance(v, numbers.Integral)


def _is_real(v):
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _tup(v, n, default):
    """nn_ops._tuple: () means the default, an int repeats; None when it would fail."""
    if v is None or v == () or v == []:
        return (default,) * n
    if _is_int(v):
        return (int(v),) * n
    if type(v) is tuple and len(v) == n and all(type(a) is int for a in v):
        return v
    if not isinstance(v, (tuple, list)) or not all(_is_int(a) for a in v):
        return None
    v = tuple(int(a) for a in v)
    return v if len(v) == n else None


def _ints(v):
    if type(v) is tuple and all(type(a) is int for a in v):
        return v
    if isinstance(v, (tuple, list)) and all(_is_int(a) for a in v):
        return tuple(int(a) for a in v)
    return None


def _axis(a, nd):
    """``a`` normalised into [0, nd), or None when out of range (torch's dim rule)."""
    if not _is_int(a) or not -nd <= a < nd:
        return None
    return a % nd


def _bcast(x, y):
    """numpy/torch broadcasting of two shapes, or None."""
    n = max(len(x), len(y))
    x = (1,) * (n - len(x)) + tuple(x)
    y = (1,) * (n - len(y)) + tuple(y)
    out = []
    for a, b in zip(x, y):
        if a == b or b == 1:
            out.append(a)
        elif a == 1:
            out.append(b)
        else:
            return None
    return tuple(out)


def _channel_first(layout, nd):
    """True when ``layout`` is None or the channel-first layout of an nd-D kernel."""
    if layout is None:
        return True
    return {"NCW": 1, "NCHW": 2, "NCDHW": 3}.get(layout) == nd


def _same(a, dt):
    return [a["data"]]


# ---------------------------------------------------------------------------- nn_ops
def _fully_connected(a, dt):
    x, w = a["data"], a["weight"]
    nh, flatten, no_bias, bias = a["num_hidden"], a["flatten"], a["no_bias"], a["bias"]
    if flatten and len(x) != 2:
        x = (x[0], _prod(x[1:]))
    if len(w) != 2 or x[-1] != w[-1]:
        return None
    if nh is not None and (not _is_int(nh) or w[0] != nh):
        return None
    if not (no_bias or bias is None) and tuple(bias) != (w[0],):
        return None
    return [tuple(x[:-1]) + (w[0],)]


_ACTS = frozenset(("relu", "sigmoid", "tanh", "softrelu", "softsign"))


def _activation(a, dt):
    return [a["data"]] if a["act_type"] in _ACTS else None


def _conv_common(a, deconv):
    x, w = a["data"], a["weight"]
    kernel = a["kernel"]
    if not kernel:
        return None
    kernel = _ints(kernel)
    if kernel is None:
        return None
    nd = len(kernel)
    if nd not in (1, 2, 3) or len(x) != nd + 2 or len(w) != nd + 2:
        return None
    if not _channel_first(a["layout"], nd):
        return None
    stride, dilate, pad = _tup(a["stride"], nd, 1), _tup(a["dilate"], nd, 1), _tup(a["pad"], nd, 0)
    g, nf = a["num_group"], a["num_filter"]
    if stride is None or dilate is None or pad is None or not _is_int(g) or g <= 0 or \
            (nf is not None and not _is_int(nf)):
        return None
    if any(s <= 0 for s in stride) or any(d <= 0 for d in dilate) or any(p < 0 for p in pad):
        return None
    if tuple(w[2:]) != kernel or any(k <= 0 for k in kernel):
        return None
    return x, w, kernel, nd, stride, dilate, pad, g, nf


def _convolution(a, dt):
    c = _conv_common(a, False)
    if c is None:
        return None
    x, w, kernel, nd, stride, dilate, pad, g, nf = c
    ch = x[1]
    if ch % g or w[1] * g != ch or (nf is not None and w[0] != nf) or w[0] % g:
        return None
    if not (a["no_bias"] or a["bias"] is None) and tuple(a["bias"]) != (w[0],):
        return None
    out = []
    for i in range(nd):
        o = (x[2 + i] + 2 * pad[i] - dilate[i] * (kernel[i] - 1) - 1) // stride[i] + 1
        if o <= 0:
            return None
        out.append(o)
    return [(x[0], w[0]) + tuple(out)]


def _deconvolution(a, dt):
    c = _conv_common(a, True)
    if c is None:
        return None
    x, w, kernel, nd, stride, dilate, pad, g, nf = c
    adj = _tup(a["adj"], nd, 0)
    if adj is None or any(v < 0 for v in adj):
        return None
    ch = x[1]
    if w[0] != ch or ch % g or (nf is not None and w[1] * g != nf):
        return None
    nout = w[1] * g
    if not (a["no_bias"] or a["bias"] is None) and tuple(a["bias"]) != (nout,):
        return None
    target = a["target_shape"]
    pad, adj = list(pad), list(adj)
    if target and any(int(s) != 0 for s in target):
        target = _tup(target, nd, 0)
        if target is None:
            return None
        for i in range(nd):
            full = stride[i] * (x[2 + i] - 1) + dilate[i] * (kernel[i] - 1) + 1
            if full < target[i]:
                return None
            total = full - target[i]
            adj[i] = total % 2
            pad[i] = (total + 1) // 2
    out = []
    for i in range(nd):
        if adj[i] >= stride[i] and adj[i] >= dilate[i]:
            return None   # torch: output padding must be smaller than stride or dilation
        o = (x[2 + i] - 1) * stride[i] - 2 * pad[i] + dilate[i] * (kernel[i] - 1) + adj[i] + 1
        if o <= 0:
            return None
        out.append(o)
    return [(x[0], nout) + tuple(out)]


def _pool_out(n, k, s, p, convention):
    if convention == "valid":
        return (n + 2 * p - k) // s + 1
    if convention == "full":
        return -((-(n + 2 * p - k)) // s) + 1
    return -(-n // s)


def _pooling(a, dt):
    x = a["data"]
    pool_type, conv = a["pool_type"], a["pooling_convention"]
    if pool_type not in ("max", "avg", "sum", "lp") or conv not in ("valid", "full", "same"):
        return None
    nd = len(x) - 2
    if nd not in (1, 2, 3) or not _channel_first(a["layout"], nd):
        return None
    if a["p_value"] is not None:
        int(a["p_value"])   # Pooling takes int() of it whatever the pool type
    if a["global_pool"]:
        return [tuple(x[:2]) + (1,) * nd]
    kernel = _ints(a["kernel"]) if a["kernel"] else None
    if kernel is None or len(kernel) != nd or any(k <= 0 for k in kernel):
        return None
    stride = _tup(a["stride"], nd, 1)
    pad = a["pad"]
    if isinstance(pad, (tuple, list)) and len(pad) > nd:
        pad = tuple(pad)[:nd]
    pad = _tup(pad, nd, 0)
    if stride is None or pad is None or any(s <= 0 for s in stride) or any(p < 0 for p in pad):
        return None
    if any(p >= k for p, k in zip(pad, kernel)):
        return None
    if conv == "same" and any(pad):
        return None
    outs = tuple(_pool_out(x[2 + i], kernel[i], stride[i], pad[i], conv) for i in range(nd))
    if any(o <= 0 for o in outs):
        return None
    return [tuple(x[:2]) + outs]


def _leaky_relu(a, dt):
    x, act = a["data"], a["act_type"]
    if act in ("leaky", "elu"):
        return [x] if _is_real(a["slope"]) else None
    if act in ("selu", "gelu"):
        return [x]
    if act == "prelu":
        g = a["gamma"]
        if g is None:
            return None
        n = _prod(g)
        if n != 1 and (len(x) < 2 or n != x[1]):
            return None
        return [x]
    if act == "rrelu":
        lo, hi = a["lower_bound"], a["upper_bound"]
        if not (_is_real(lo) and _is_real(hi)) or lo > hi:
            return None
        return [x, x]
    return None


def _batch_norm(a, dt):
    x = a["data"]
    ax = a["axis"]
    if not _is_int(ax) or len(x) < 2:
        return None
    c = x[ax % len(x)]
    params = [a["gamma"], a["beta"], a["moving_mean"], a["moving_var"]]
    if any(tuple(p) != (c,) for p in params):
        return None
    if a["output_mean_var"]:
        return [x, (c,), (c,)]
    return [x]


def _layer_norm(a, dt):
    x, ax = a["data"], a["axis"]
    if not _is_int(ax):
        return None
    ax = ax % len(x)
    n = x[ax]
    if tuple(a["gamma"]) != (n,) or tuple(a["beta"]) != (n,):
        return None
    if a["output_mean_var"]:
        stat = tuple(x[:ax]) + (1,) + tuple(x[ax + 1:])
        return [x, stat, stat]
    return [x]


def _instance_norm(a, dt):
    x = a["data"]
    if len(x) < 3 or tuple(a["gamma"]) != (x[1],) or tuple(a["beta"]) != (x[1],):
        return None
    if _prod(x[2:]) == 1:
        return None   # torch: more than one spatial element
    return [x]


def _dropout(a, dt):
    x, p, mode, axes = a["data"], a["p"], a["mode"], a["axes"]
    if mode not in ("training", "always") or not _is_real(p) or not 0.0 <= p <= 1.0:
        return None
    if axes:
        if not isinstance(axes, (tuple, list)) or any(_axis(v, len(x)) is None for v in axes):
            return None
    return [x]


def _upsampling(a, dt):
    data = a["data"]
    if a["sample_type"] != "nearest" or len(data) != 1:
        return None
    x, scale = data[0], a["scale"]
    if len(x) != 4 or not _is_int(scale) or scale <= 0:
        return None
    return [(x[0], x[1], x[2] * scale, x[3] * scale)]


# ---------------------------------------------------------------------------- ops
def _clip(a, dt):
    return [a["data"]] if _is_real(a["a_min"]) and _is_real(a["a_max"]) else None


def _reshape(a, dt):
    from ..ndarray.ndarray import infer_reshape
    shape = a["shape"]
    if _is_int(shape):
        shape = (shape,)   # data.reshape(-1)
    if a["kwargs"] or not isinstance(shape, (tuple, list)) or not all(_is_int(v) for v in shape):
        return None
    return [tuple(int(d) for d in infer_reshape(a["data"], tuple(shape), a["reverse"]))]


def _transpose(a, dt):
    x, axes = a["data"], a["axes"]
    nd = len(x)
    if not axes:
        return [tuple(reversed(x))]
    axes = _ints(axes)
    if axes is None or len(axes) != nd:
        return None
    norm = [_axis(v, nd) for v in axes]
    if None in norm or len(set(norm)) != nd:
        return None
    return [tuple(x[i] for i in norm)]


def _swapaxes(a, dt):
    x = list(a["data"])
    i, j = _axis(a["dim1"], len(x)), _axis(a["dim2"], len(x))
    if i is None or j is None:
        return None
    x[i], x[j] = x[j], x[i]
    return [tuple(x)]


def _expand_dims(a, dt):
    x, ax = a["data"], a["axis"]
    nd = len(x)
    if not _is_int(ax) or not -nd - 1 <= ax <= nd:
        return None
    ax = ax % (nd + 1)
    return [tuple(x[:ax]) + (1,) + tuple(x[ax:])]


def _squeeze(a, dt):
    x, axis = a["data"], a["axis"]
    nd = len(x)
    if axis is None:
        out = tuple(d for d in x if d != 1)
    else:
        axes = (axis,) if _is_int(axis) else _ints(axis)
        if axes is None:
            return None
        norm = [_axis(v, nd) for v in axes]
        if None in norm or len(set(norm)) != len(norm) or any(x[i] != 1 for i in norm):
            return None
        out = tuple(d for i, d in enumerate(x) if i not in norm)
    return [out or (1,)]


def _flatten(a, dt):
    x = a["data"]
    return [(x[0], _prod(x[1:]))]


def _split(a, dt):
    x, n, axis = a["data"], a["num_outputs"], a["axis"]
    if not _is_int(n) or n <= 0:
        return None
    ax = _axis(axis, len(x))
    if ax is None or x[ax] % n:
        return None
    part = list(x)
    part[ax] = x[ax] // n
    if a["squeeze_axis"] and part[ax] == 1:
        del part[ax]
    return [tuple(part)] * n


def _slice(a, dt):
    x, begin, end, step = a["data"], a["begin"], a["end"], a["step"]
    if not isinstance(begin, (tuple, list)) or not isinstance(end, (tuple, list)):
        return None
    step = step or [None] * len(begin)
    if not isinstance(step, (tuple, list)) or len(begin) > len(x):
        return None
    if not (len(begin) == len(end) == len(step)):
        return None
    out = list(x)
    for i, (b, e, s) in enumerate(zip(begin, end, step)):
        for v in (b, e, s):
            if v is not None and not _is_int(v):
                return None
        if s is not None and s <= 0:
            return None
        out[i] = len(range(*slice(b, e, s).indices(x[i])))
        if out[i] == 0:
            return None
    return [tuple(out)]


def _slice_axis(a, dt):
    x, axis, begin, end = a["data"], a["axis"], a["begin"], a["end"]
    ax = _axis(axis, len(x))
    if ax is None or not _is_int(begin) or (end is not None and not _is_int(end)):
        return None
    n = x[ax]
    end = n if end is None else end
    b = begin % n if begin < 0 else begin
    e = end % n if end < 0 else end
    if not 0 <= b <= n or e - b < 0 or e > n or e - b == 0:
        return None
    out = list(x)
    out[ax] = e - b
    return [tuple(out)]


def _slice_like(a, dt):
    x, like, axes = a["data"], a["shape_like"], a["axes"]
    nd = len(x)
    axes = range(nd) if not axes else axes
    out = list(x)
    for v in axes:
        i = _axis(v, nd)
        if i is None or _axis(v, len(like)) is None:
            return None
        out[i] = min(like[v], x[i])
    return [tuple(out)]


def _softmax(a, dt):
    x = a["data"]
    if a["dtype"] is not None or _axis(a["axis"], len(x)) is None:
        return None
    if a.get("use_length") or a.get("length") is not None:
        return None
    t = a["temperature"]
    if t is not None and not _is_real(t):
        return None
    return [x]


def _concat(a, dt, key="dim"):
    shapes = a["data"]
    if not shapes:
        return None
    nd = len(shapes[0])
    ax = _axis(a[key], nd)
    if ax is None or any(len(s) != nd for s in shapes):
        return None
    for s in shapes[1:]:
        if any(s[i] != shapes[0][i] for i in range(nd) if i != ax):
            return None
    out = list(shapes[0])
    out[ax] = sum(s[ax] for s in shapes)
    return [tuple(out)]


def _stack(a, dt):
    shapes = a["data"]
    if not shapes or any(tuple(s) != tuple(shapes[0]) for s in shapes):
        return None
    x = tuple(shapes[0])
    ax = a["axis"]
    if not _is_int(ax) or not -len(x) - 1 <= ax <= len(x):
        return None
    ax = ax % (len(x) + 1)
    return [x[:ax] + (len(shapes),) + x[ax:]]


def _add_n(a, dt):
    shapes = a["args"]
    if not shapes:
        return None
    out = tuple(shapes[0])
    for s in shapes[1:]:
        out = _bcast(out, s)
        if out is None:
            return None
    return [out]


def _elemwise(a, dt):
    return [a["lhs"]] if tuple(a["lhs"]) == tuple(a["rhs"]) else None


def _broadcast(a, dt):
    if not isinstance(a["lhs"], tuple) or not isinstance(a["rhs"], tuple):
        return None   # a scalar operand: not a graph input
    out = _bcast(a["lhs"], a["rhs"])
    return [out] if out is not None else None


def _reduce(a, dt):
    x, axis, exclude = a["data"], a["axis"], a["exclude"]
    nd = len(x)
    if axis is None or axis == ():
        axes = tuple(range(nd))
    else:
        raw = (axis,) if _is_int(axis) else _ints(axis)
        if raw is None:
            return None
        axes = tuple(_axis(v, nd) for v in raw)
        if None in axes or len(set(axes)) != len(axes):
            return None
    if exclude:
        axes = tuple(i for i in range(nd) if i not in axes)
    if not axes:
        return [x]
    if a["keepdims"]:
        out = tuple(1 if i in axes else d for i, d in enumerate(x))
    else:
        out = tuple(d for i, d in enumerate(x) if i not in axes)
    return [out or (1,)]


def _cast(a, dt):
    from ..base import to_torch_dtype
    from .symbol import _dtype_name
    return [(a["data"], _dtype_name(to_torch_dtype(a["dtype"])))]


def _where(a, dt):
    c, x, y = a["condition"], a["x"], a["y"]
    if tuple(x) != tuple(y):
        return None
    if tuple(c) != tuple(x) and not (len(c) == 1 and c[0] == x[0]):
        return None
    return [x]


def _broadcast_to(a, dt):
    x, shape = a["data"], _ints(a["shape"])
    if shape is None or len(shape) != len(x):
        return None
    out = tuple(s if s != 0 else x[i] for i, s in enumerate(shape))
    if any(d != o and d != 1 for d, o in zip(x, out)) or any(o <= 0 for o in out):
        return None
    return [out]


def _broadcast_like(a, dt):
    if a["lhs_axes"] is not None and a["rhs_axes"] is not None:
        return None
    x, like = a["lhs"], a["rhs"]
    if len(like) != len(x) or any(d != o and d != 1 for d, o in zip(x, like)):
        return None
    return [tuple(like)]


def _tile(a, dt):
    x, reps = a["data"], a["reps"]
    reps = (reps,) if _is_int(reps) else _ints(reps)
    if reps is None or any(r <= 0 for r in reps):
        return None
    n = max(len(x), len(reps))
    x = (1,) * (n - len(x)) + tuple(x)
    reps = (1,) * (n - len(reps)) + tuple(reps)
    return [tuple(d * r for d, r in zip(x, reps))]


def _repeat(a, dt):
    x, r, axis = a["data"], a["repeats"], a["axis"]
    if not _is_int(r) or r <= 0:
        return None
    if axis is None:
        return [(_prod(x) * r,)]
    ax = _axis(axis, len(x))
    if ax is None:
        return None
    out = list(x)
    out[ax] *= r
    return [tuple(out)]


def _rnn(a, dt):
    """nd.RNN (gluon/rnn/_op.py): data (T, N, C), one flat parameter vector, begin states."""
    from ..gluon.rnn._op import _GATES
    x, params, mode = a["data"], a["parameters"], a["mode"]
    if mode not in _GATES or len(x) != 3 or a["use_sequence_length"]:
        return None
    h, layers, proj = a["state_size"], a["num_layers"], a["projection_size"]
    if not _is_int(h) or not _is_int(layers) or h <= 0 or layers <= 0:
        return None
    if proj is not None and proj != 0 and not _is_int(proj):
        return None
    proj = int(proj) if proj else None
    if proj is not None and proj >= h:
        return None
    g = _GATES[mode]
    dirs = 2 if a["bidirectional"] else 1
    size, width = 0, x[2]
    for _ in range(layers):
        per = g * h * width + g * h * (proj or h) + (proj * h if proj else 0) + 2 * g * h
        size += dirs * per
        width = (proj or h) * dirs
    if _prod(params) != size:
        return None
    hs = (layers * dirs, x[1], proj or h)
    cs = (layers * dirs, x[1], h)
    if tuple(a["state"]) != hs:
        return None
    outs = [(x[0], x[1], (proj or h) * dirs), hs]
    if mode == "lstm":
        if a["state_cell"] is None or tuple(a["state_cell"]) != cs:
            return None
        outs.append(cs)
    elif a["state_cell"] is not None:
        return None
    return outs if a["state_outputs"] else outs[:1]


def _rnn_param_concat(a, dt):
    shapes = a["data"]
    return _concat({"data": shapes, "dim": a["dim"]}, dt)


# ---------------------------------------------------------------------------- tables
_UNARY = ("sqrt", "rsqrt", "square", "exp", "expm1", "log", "log2", "log10", "log1p", "sign",
          "relu", "sigmoid", "tanh", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh",
          "cosh", "arcsinh", "arccosh", "arctanh", "floor", "ceil", "round", "rint", "trunc",
          "fix", "abs", "negative", "reciprocal", "erf", "erfinv", "gamma", "gammaln",
          "softsign", "cbrt", "rcbrt", "degrees", "radians", "logical_not", "zeros_like",
          "ones_like", "stop_gradient", "identity")
_BROADCAST = ("add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "modulo",
              "hypot", "broadcast_add", "broadcast_sub", "broadcast_minus", "broadcast_mul",
              "broadcast_div", "broadcast_power", "broadcast_maximum", "broadcast_minimum",
              "broadcast_mod", "broadcast_hypot", "equal", "not_equal", "greater",
              "greater_equal", "lesser", "lesser_equal", "broadcast_equal",
              "broadcast_not_equal", "broadcast_greater", "broadcast_greater_equal",
              "broadcast_lesser", "broadcast_lesser_equal")
_ELEMWISE = ("elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div")
_REDUCE = ("sum", "mean", "max", "min", "prod", "nansum", "nanprod")

# Operators computed by symbol._IMPL (no nd path): scalar arithmetic keeps the array's shape
# and dtype; creation operators take their shape and dtype from their attributes.
_SCALAR_OPS = ("_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar",
               "_div_scalar", "_rdiv_scalar", "_mod_scalar", "_rmod_scalar", "_power_scalar",
               "_rpower_scalar", "_equal_scalar", "_not_equal_scalar", "_greater_scalar",
               "_greater_equal_scalar", "_lesser_scalar", "_lesser_equal_scalar",
               "_maximum_scalar", "_minimum_scalar")
_CREATION_OPS = ("_zeros", "_ones", "_full")

_FN_RULES = None     # original nd function -> rule
_rnn_pending = [True]


def _build():
    from ..ndarray import ops, nn_ops
    from ..ndarray import ndarray as nda
    table = {
        nn_ops.FullyConnected: _fully_connected, nn_ops.Activation: _activation,
        nn_ops.Convolution: _convolution, nn_ops.Deconvolution: _deconvolution,
        nn_ops.Pooling: _pooling, nn_ops.LeakyReLU: _leaky_relu,
        nn_ops.BatchNorm: _batch_norm, nn_ops.LayerNorm: _layer_norm,
        nn_ops.InstanceNorm: _instance_norm, nn_ops.Dropout: _dropout,
        nn_ops.UpSampling: _upsampling,
        ops.clip: _clip, ops.reshape: _reshape, ops.transpose: _transpose,
        ops.swapaxes: _swapaxes, ops.expand_dims: _expand_dims, ops.squeeze: _squeeze,
        ops.flatten: _flatten, ops.split: _split, ops.slice: _slice,
        ops.slice_axis: _slice_axis, ops.slice_like: _slice_like, ops.softmax: _softmax,
        ops.log_softmax: lambda a, dt: _softmax(dict(a, use_length=False, length=None), dt),
        nda.concat: _concat, nda.stack: _stack, ops.add_n: _add_n, ops.cast: _cast,
        ops.where: _where, ops.broadcast_to: _broadcast_to,
        ops.broadcast_like: _broadcast_like, ops.tile: _tile, ops.repeat: _repeat,
    }
    for name in _UNARY:
        table[getattr(ops, name)] = _same
    for name in _BROADCAST:
        fn = getattr(ops, name, None)
        if fn is not None:
            table[fn] = _broadcast
    for name in _ELEMWISE:
        table[getattr(ops, name)] = _elemwise
    for name in _REDUCE:
        table[getattr(ops, name)] = _reduce
    return table


def _scalar_rule(attrs, shapes, dt):
    from .symbol import _parse_attr
    if len(shapes) != 1:
        return None
    v = _parse_attr(attrs.get("scalar", 0))
    if not isinstance(v, (int, float)):   # _scalar() takes float() of it
        return None
    return [(shapes[0], dt)]


def _creation_rule(attrs, shapes, dt):
    from ..base import to_torch_dtype
    from .symbol import _parse_attr, _dtype_name
    if shapes:
        return None
    a = {k: _parse_attr(v) for k, v in attrs.items()}
    if set(a) - {"shape", "dtype", "value", "ctx"}:
        return None
    shape = a.get("shape", ())
    shape = (shape,) if _is_int(shape) else _ints(shape)
    if shape is None or any(d < 0 for d in shape):
        return None
    if "value" in a and not _is_real(a["value"]):
        return None
    dtype = _dtype_name(to_torch_dtype(a.get("dtype") or "float32"))
    return [(shape, dtype)]


def _impl_spec(node):
    if node.op in _SCALAR_OPS:
        return Spec(_scalar_rule, attrs=node.attrs)
    if node.op in _CREATION_OPS:
        return Spec(_creation_rule, attrs=node.attrs)
    return None


def prepare(node, n_inputs):
    """The :class:`Spec` for computing ``node``'s outputs by a rule, or None (meta path).

    Mirrors ``symbol._call_node``: the nd function from the node's path (or its operator's),
    attributes it does not take refused, inputs bound by name or by position.
    """
    global _FN_RULES
    from . import symbol as S
    if node.op in S._IMPL and node.path is None:
        return _impl_spec(node)
    if _FN_RULES is None:
        _FN_RULES = _build()
    if _rnn_pending[0]:
        rnn_op = sys.modules.get("neogluon.gluon.rnn._op")
        if rnn_op is not None:   # (imported with the first graph that has these nodes)
            _FN_RULES[rnn_op.RNN] = _rnn
            _FN_RULES[rnn_op._rnn_param_concat] = _rnn_param_concat
            _rnn_pending[0] = False
    try:
        path = node.path or S._nd_path(node.op)
    except Exception:  # noqa: BLE001 - the meta path reports it
        return None
    base = S._resolve_path(S._nd, path)
    try:
        rule = _FN_RULES.get(base)
    except TypeError:   # unhashable
        return None
    if rule is None:
        return None
    sig = S._signature(base)
    if not sig:
        return None
    pnames = sig.parameters
    accepts_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in pnames.values())
    kwargs = {}
    for k, v in node.attrs.items():
        if k not in pnames and not accepts_any:
            if k in S._IGNORABLE:
                continue
            return None
        if k == "ctx":
            continue
        kwargs[k] = v
    names = node.input_names
    if names is None and not node.variadic and node.op in S._OPS:
        cand = S._OPS[node.op]["inputs"][:n_inputs]
        if all(c in pnames for c in cand):
            names = cand
    if names and not node.variadic:
        if len(names) < n_inputs:
            return None
        names = tuple(names[:n_inputs])
    else:
        names = None
    key = (base, names, n_inputs, tuple(kwargs))
    template = _TEMPLATES.get(key)
    if template is None:
        template = _TEMPLATES[key] = _template(sig, names, n_inputs, kwargs)
    if template is False:
        return None
    static = dict(template[0])
    kwdict = template[3]
    if kwdict is not None:
        static[kwdict] = {}
    for k, v in kwargs.items():
        if kwdict is not None and k in template[4]:
            static[kwdict][k] = v
        else:
            static[k] = v
    return Spec(rule, static, template[1], template[2], path, base)


_TEMPLATES = {}   # (function, input names, inputs, attribute names) -> how the call binds


class _Kw:
    __slots__ = ()


def _template(sig, names, n_inputs, kwargs):
    """How a call with ``n_inputs`` inputs (by ``names``, else by position) and attributes
    named like ``kwargs`` binds to ``sig``: (defaults of the other parameters, tensor
    parameters, variadic parameter, VAR_KEYWORD parameter, attribute names it takes), or
    False when binding fails (the call would raise TypeError)."""
    slots = [_Slot(i) for i in range(n_inputs)]
    marks = {k: _Kw() for k in kwargs}
    try:
        if names is not None:
            bound = sig.bind(**dict(zip(names, slots)), **marks)
        else:
            bound = sig.bind(*slots, **marks)
    except TypeError:
        return False
    bound.apply_defaults()
    pnames = sig.parameters
    defaults, tensors, varpos, kwdict, kwkeys, used = {}, [], None, None, (), 0
    for pname, val in bound.arguments.items():
        kind = pnames[pname].kind
        if isinstance(val, _Slot):
            tensors.append((pname, val.i))
            used += 1
        elif kind is inspect.Parameter.VAR_POSITIONAL:
            if not all(isinstance(v, _Slot) for v in val):
                return False
            varpos = (pname, tuple(v.i for v in val))
            used += len(val)
        elif kind is inspect.Parameter.VAR_KEYWORD:
            kwdict, kwkeys = pname, frozenset(val)
            defaults[pname] = {}
        elif isinstance(val, _Kw):
            pass   # the node's attribute, filled per node
        else:
            defaults[pname] = val
    if used != n_inputs:
        return False
    for pname in pnames:   # tensor parameters left out (bias=None) read as None
        defaults.setdefault(pname, None)
    return defaults, tuple(tensors), varpos, kwdict, kwkeys


# NEOGLUON_SHAPE_RULES=0 turns the rules off (every operator runs on meta tensors); tests
# compare both ways through this flag.
ENABLED = os.environ.get("NEOGLUON_SHAPE_RULES", "1") != "0"


def rules_active():
    """Whether rules apply: they are ENABLED and AMP is not initialised (AMP patches nd
    functions and NDArray arithmetic)."""
    if not ENABLED:
        return False
    amp = sys.modules.get("neogluon.amp")
    return not (amp is not None and getattr(getattr(amp, "_state", None), "installed", None))


def outputs(spec, shapes, dtypes, live):
    """``[(shape, dtype)]`` for the node's outputs, or None to run it on meta tensors.

    ``shapes`` and ``dtypes``: the inputs' (all known); ``live``: a dict the caller keeps
    for one inference, caching whether each nd path still resolves to its original
    function.
    """
    dt = dtypes[0] if dtypes else "float32"
    for t in dtypes:
        if t != dt:
            return None
    if spec.static is None:   # an _IMPL operator
        if shapes and dt not in _FLOAT:
            return None
        try:
            return spec.rule(spec.attrs, shapes, dt)
        except Exception:  # noqa: BLE001 - the meta path decides
            return None
    if dt not in _FLOAT:
        return None
    ok = live.get(spec.path)
    if ok is None:
        from . import symbol as S
        ok = live[spec.path] = S._resolve_path(S._nd, spec.path) is spec.base
    if not ok:
        return None
    a = dict(spec.static)
    for pname, i in spec.tensors:
        a[pname] = shapes[i]
    if spec.varpos is not None:
        a[spec.varpos[0]] = [shapes[i] for i in spec.varpos[1]]
    try:
        res = spec.rule(a, dt)
    except Exception:  # noqa: BLE001 - the meta path decides
        return None
    if res is None or spec.rule is _cast:
        return res
    return [(r, dt) for r in res]
