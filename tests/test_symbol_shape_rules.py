"""Symbolic shape inference's direct shape rules (neogluon/symbol/_shape_rules.py) against
the general path they stand in for: running the operator's nd function on meta tensors
(zero tensors where meta is refused).

For many operator, attribute and shape combinations (hypothesis draws them, bad ones
included) a rule must either decline (None: the meta path runs) or give exactly the meta
path's output shapes and dtypes, and never answer where the meta path fails. Graph-level
tests hold whole inferences (partial shapes with 0s, both-ways flow, errors and their
messages, infer_type, the result cache) equal with the rules on and off, and check that the
model graphs GluonCV's transforms infer run no operator on meta tensors at all.
"""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import neogluon as mx
from neogluon import autograd
from neogluon.base import MXNetError
from neogluon.symbol import _shape_rules, symbol as symmod

SETTINGS = settings(max_examples=80, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.filter_too_much])
PER_OP = settings(SETTINGS, max_examples=30)


# ---------------------------------------------------------------------------- harness
def _sym_fn(path):
    fn = mx.sym
    for part in path.split("."):
        fn = getattr(fn, part)
    return fn


def _meta(node, shapes, types):
    """The general path: the operator run on meta tensors (zeros as a fallback)."""
    outs = symmod._Inference(mx.sym.var("unused"), {}, {})._run(node, shapes, types)
    return [(tuple(o.shape), symmod._dtype_name(o._t.dtype)) for o in outs]


def _build(path, tensors, attrs, varpos=False):
    """(symbol, {input var name: shape}) for ``path`` called on variables.

    ``tensors``: {parameter: shape} (keyword inputs), or a list of shapes (``varpos``)."""
    if varpos:
        names = [f"in{i}" for i in range(len(tensors))]
        ins = [mx.sym.var(n) for n in names]
        sym = _sym_fn(path)(*ins, **attrs)
        return sym, dict(zip(names, tensors))
    ins = {k: mx.sym.var(f"in_{k}") for k in tensors}
    sym = _sym_fn(path)(**ins, **attrs)
    return sym, {f"in_{k}": v for k, v in tensors.items()}


def _node_inputs(node, by_name):
    return [by_name[src.name] for src, _ in node.inputs]


def check(path, tensors, attrs, dtype="float32", varpos=False, sym_fn=None):
    """Compare rule and meta path on the node (as built, and as loaded from its JSON) in
    training and predict mode; True when the rule answered."""
    try:
        if sym_fn is not None:
            sym, by_name = sym_fn()
        else:
            sym, by_name = _build(path, tensors, attrs, varpos)
    except (TypeError, ValueError, MXNetError):
        assume(False)
    node = sym._outputs[0][0]
    nodes = [node]
    try:
        nodes.append(mx.sym.load_json(sym.tojson())._outputs[0][0])
    except (MXNetError, ValueError, TypeError, SyntaxError):
        pass
    answered = False
    for nd in nodes:
        shapes = _node_inputs(nd, by_name)
        types = [dtype] * len(shapes)
        spec = _shape_rules.prepare(nd, len(shapes))
        fast = _shape_rules.outputs(spec, shapes, types, {}) if spec is not None else None
        if fast is None:
            continue
        answered = True
        for mode in (autograd.predict_mode, autograd.train_mode):
            with mode():
                try:
                    slow = _meta(nd, shapes, types)
                except MXNetError as err:
                    raise AssertionError(
                        f"{path} {attrs} {shapes}: the rule answered {fast} where the "
                        f"operator fails: {err}") from None
            assert fast == slow, (path, attrs, shapes, fast, slow)
    return answered


def maybe(draw, good, bad, p_bad=0.15):
    """``good`` mostly; sometimes a value drawn from ``bad`` (an edge or invalid case)."""
    # (the bad range sits mid-way: hypothesis favours the ends of an integer range)
    if 40 <= draw(st.integers(0, 99)) < 40 + round(100 * p_bad):
        return draw(bad)
    return good


def shape(draw, ndim, lo=1, hi=6):
    return tuple(draw(st.integers(lo, hi)) for _ in range(ndim))


def tuple_or_int(nd, lo, hi):
    """An attribute per spatial axis as MXNet takes it: (), an int, or nd ints."""
    return st.one_of(st.just(()), st.integers(lo, hi),
                     st.lists(st.integers(lo, hi), min_size=nd, max_size=nd).map(tuple))


def any_tuple(nd, lo, hi):
    """... or a tuple of the wrong length."""
    return st.one_of(tuple_or_int(nd, lo, hi),
                     st.lists(st.integers(lo, hi), min_size=1, max_size=4).map(tuple))


def perturb(draw, shp):
    """``shp`` with one dimension changed, or one dimension more or fewer."""
    kind = draw(st.sampled_from(["dim", "more", "fewer"]))
    shp = list(shp)
    if kind == "dim" and shp:
        i = draw(st.integers(0, len(shp) - 1))
        shp[i] = max(1, shp[i] + draw(st.sampled_from([-1, 1, 2])))
    elif kind == "more":
        shp.append(draw(st.integers(1, 3)))
    elif len(shp) > 1:
        shp.pop()
    return tuple(shp)


# ---------------------------------------------------------------------------- layers
@SETTINGS
@given(st.data())
def test_convolution_rule_equals_meta(data):
    d = data.draw
    nd = d(st.integers(1, 3))
    g = d(st.sampled_from([1, 1, 2, 3]))
    c, nf = g * d(st.integers(1, 2)), g * d(st.integers(1, 3))
    kernel = shape(d, nd, 1, 3)
    x = (d(st.integers(1, 2)), c) + shape(d, nd, 2, 8)
    w = (nf, c // g) + kernel
    w = maybe(d, w, st.just(perturb(d, w)), 0.1)
    x = maybe(d, x, st.just(perturb(d, x)), 0.05)
    no_bias = d(st.booleans())
    tensors = {"data": x, "weight": w}
    if not no_bias or d(st.booleans()):
        tensors["bias"] = maybe(d, (nf,), st.sampled_from([(nf + 1,), (1,), (nf, 1)]), 0.1)
    attrs = dict(kernel=maybe(d, kernel, st.sampled_from([(), kernel + (1,), (2,) * nd]), 0.05),
                 stride=maybe(d, d(tuple_or_int(nd, 1, 3)), any_tuple(nd, 0, 3), 0.1),
                 dilate=maybe(d, d(tuple_or_int(nd, 1, 2)), any_tuple(nd, 0, 2), 0.1),
                 pad=maybe(d, d(tuple_or_int(nd, 0, 2)), any_tuple(nd, -1, 3), 0.1),
                 num_filter=maybe(d, nf, st.sampled_from([nf + 1, None]), 0.1),
                 num_group=maybe(d, g, st.sampled_from([1, 2, 4]), 0.05),
                 no_bias=no_bias,
                 layout=maybe(d, d(st.sampled_from([None, {1: "NCW", 2: "NCHW", 3: "NCDHW"}[nd]])),
                              st.sampled_from(["NCHW", "NHWC"]), 0.1))
    check("Convolution", tensors, attrs, dtype=d(st.sampled_from(["float32", "float64"])))


@SETTINGS
@given(st.data())
def test_deconvolution_rule_equals_meta(data):
    d = data.draw
    nd = d(st.integers(1, 3))
    g = d(st.sampled_from([1, 1, 2]))
    c, nf = g * d(st.integers(1, 2)), g * d(st.integers(1, 3))
    kernel = shape(d, nd, 1, 4)
    x = (d(st.integers(1, 2)), c) + shape(d, nd, 1, 6)
    w = maybe(d, (c, nf // g) + kernel, st.just(perturb(d, (c, nf // g) + kernel)), 0.1)
    no_bias = d(st.booleans())
    tensors = {"data": x, "weight": w}
    if not no_bias:
        tensors["bias"] = maybe(d, (nf,), st.just((nf + 1,)), 0.1)
    attrs = dict(kernel=kernel, stride=d(tuple_or_int(nd, 1, 3)),
                 dilate=d(tuple_or_int(nd, 1, 2)), pad=d(tuple_or_int(nd, 0, 2)),
                 adj=maybe(d, (), tuple_or_int(nd, 0, 2), 0.4),
                 target_shape=maybe(d, (), st.just(shape(d, nd, 1, 14)), 0.3),
                 num_filter=maybe(d, nf, st.sampled_from([nf + 1, None]), 0.1), num_group=g,
                 no_bias=no_bias, layout=maybe(d, None, st.sampled_from(["NCHW", "NHWC"]), 0.1))
    check("Deconvolution", tensors, attrs)


@SETTINGS
@given(st.data())
def test_pooling_rule_equals_meta(data):
    d = data.draw
    nd = d(st.integers(1, 3))
    x = maybe(d, (d(st.integers(1, 2)), d(st.integers(1, 3))) + shape(d, nd, 1, 9),
              st.just(shape(d, d(st.integers(1, 6)), 1, 5)), 0.05)
    kernel = shape(d, nd, 1, 4)
    attrs = dict(kernel=maybe(d, kernel, st.sampled_from([(), (2,) * (nd + 1)]), 0.05),
                 pool_type=maybe(d, d(st.sampled_from(["max", "avg", "sum", "lp"])),
                                 st.just("median"), 0.05),
                 global_pool=maybe(d, False, st.just(True), 0.2),
                 pooling_convention=maybe(d, d(st.sampled_from(["valid", "full", "same"])),
                                          st.just("ceil"), 0.05),
                 stride=maybe(d, d(tuple_or_int(nd, 1, 3)), any_tuple(nd, 0, 3), 0.1),
                 pad=maybe(d, tuple(d(st.integers(0, max(0, k - 1))) for k in kernel),
                           st.one_of(any_tuple(nd, 0, 2),
                                     st.lists(st.integers(0, 2), min_size=nd + 1,
                                              max_size=2 * nd + 2).map(tuple)), 0.2),
                 count_include_pad=d(st.sampled_from([None, True, False])),
                 layout=maybe(d, None, st.sampled_from(["NCHW", "NHWC", "NCW"]), 0.1))
    if attrs["pooling_convention"] == "same" and d(st.booleans()):
        attrs["pad"] = ()
    if attrs["pool_type"] == "lp" or d(st.booleans()):
        attrs["p_value"] = d(st.sampled_from([1, 2, 3, None]))
    check("Pooling", {"data": x}, attrs)


@SETTINGS
@given(st.data())
def test_fully_connected_rule_equals_meta(data):
    d = data.draw
    x = shape(d, d(st.integers(1, 4)), 1, 5)
    nh = d(st.integers(1, 6))
    flatten = d(st.booleans())
    fin = int(np.prod(x[1:])) if flatten and len(x) != 2 else x[-1]
    if flatten and len(x) == 1:
        fin = 1
    w = maybe(d, (nh, fin), st.just(perturb(d, (nh, fin))))
    no_bias = d(st.booleans())
    tensors = {"data": x, "weight": w}
    if not no_bias or d(st.booleans()):
        tensors["bias"] = maybe(d, (nh,), st.sampled_from([(nh + 1,), (1,), (nh, 1)]))
    attrs = dict(num_hidden=maybe(d, nh, st.sampled_from([nh + 1, None])), flatten=flatten,
                 no_bias=no_bias)
    check("FullyConnected", tensors, attrs, dtype=d(st.sampled_from(["float32", "float64"])))


@pytest.mark.parametrize("op", ["BatchNorm", "LayerNorm", "InstanceNorm"])
@PER_OP
@given(data=st.data())
def test_normalisation_rules_equal_meta(op, data):
    d = data.draw
    x = shape(d, d(st.integers(1, 5)), 1, 5)
    if op == "BatchNorm":
        axis = maybe(d, 1, st.integers(-4, 4), 0.4)
        c = x[axis % len(x)]
        p = maybe(d, (c,), st.sampled_from([(c + 1,), (1, c), (c, 1)]))
        tensors = {"data": x, "gamma": p, "beta": (c,), "moving_mean": (c,),
                   "moving_var": maybe(d, (c,), st.just((c, 1)))}
        attrs = dict(axis=axis, fix_gamma=d(st.booleans()),
                     use_global_stats=d(st.booleans()), output_mean_var=d(st.booleans()))
    elif op == "LayerNorm":
        axis = maybe(d, -1, st.integers(-4, 4), 0.5)
        c = x[axis % len(x)]
        tensors = {"data": x, "gamma": maybe(d, (c,), st.sampled_from([(c + 1,), (1, c)])),
                   "beta": (c,)}
        attrs = dict(axis=axis, output_mean_var=d(st.booleans()))
    else:
        c = x[1] if len(x) > 1 else 1
        tensors = {"data": x, "gamma": maybe(d, (c,), st.just((c + 1,))), "beta": (c,)}
        attrs = {}
    check(op, tensors, attrs)


@pytest.mark.parametrize("op", ["Activation", "LeakyReLU", "Dropout", "softmax",
                                "log_softmax", "clip", "UpSampling"])
@PER_OP
@given(data=st.data())
def test_activation_rules_equal_meta(op, data):
    d = data.draw
    x = shape(d, d(st.integers(1, 4)), 1, 5)
    tensors = {"data": x}
    if op == "Activation":
        attrs = dict(act_type=maybe(d, d(st.sampled_from(
            ["relu", "sigmoid", "tanh", "softrelu", "softsign"])), st.just("gelu"), 0.1))
    elif op == "LeakyReLU":
        act = d(st.sampled_from(["leaky", "prelu", "elu", "selu", "gelu", "rrelu", "swish"]))
        attrs = dict(act_type=act, slope=d(st.sampled_from([0.25, 0.1, 1])))
        if act == "prelu":
            c = x[1] if len(x) > 1 else 1
            tensors["gamma"] = d(st.sampled_from([(c,), (1,), (c + 1,), (1, c)]))
        if act == "rrelu":
            attrs.update(lower_bound=d(st.sampled_from([0.1, 0.3])),
                         upper_bound=d(st.sampled_from([0.2, 0.4])))
    elif op == "Dropout":
        attrs = dict(p=d(st.sampled_from([0.0, 0.5, 1.0, 1.5])),
                     mode=d(st.sampled_from(["training", "always", "never"])),
                     axes=maybe(d, (), st.lists(st.integers(-5, 5), max_size=2).map(tuple), 0.4))
    elif op in ("softmax", "log_softmax"):
        attrs = dict(axis=d(st.integers(-5, 4)),
                     temperature=d(st.sampled_from([None, 1.0, 2.5])))
    elif op == "clip":
        attrs = dict(a_min=d(st.sampled_from([0, -1.5, 0.5])), a_max=d(st.sampled_from([1, 6.0])))
    else:
        x = maybe(d, shape(d, 4, 1, 4), st.just(x), 0.2)
        check("UpSampling", [x], dict(scale=d(st.sampled_from([1, 2, 3])),
                                      sample_type="nearest", num_args=1), varpos=True)
        return
    check(op, tensors, attrs, dtype=d(st.sampled_from(["float32", "float64"])))


@SETTINGS
@given(st.data())
def test_rnn_rule_equals_meta(data):
    d = data.draw
    mode = d(st.sampled_from(["lstm", "gru", "rnn_tanh", "rnn_relu"]))
    t, n, c = d(st.integers(1, 4)), d(st.integers(1, 3)), d(st.integers(1, 5))
    h, layers = d(st.integers(1, 4)), d(st.integers(1, 2))
    dirs = 2 if d(st.booleans()) else 1
    gates = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}[mode]
    proj = d(st.sampled_from([None, None, 1, 2])) if mode == "lstm" else None
    if proj is not None and proj >= h:
        proj = None
    size, width = 0, c
    for _ in range(layers):
        size += dirs * (gates * h * width + gates * h * (proj or h) + 2 * gates * h +
                        (proj * h if proj else 0))
        width = (proj or h) * dirs
    tensors = {"data": maybe(d, (t, n, c), st.just((t, n))),
               "parameters": maybe(d, (size,), st.just((size + 1,))),
               "state": maybe(d, (layers * dirs, n, proj or h), st.just((layers * dirs, n + 1, h)))}
    if mode == "lstm":
        tensors["state_cell"] = maybe(d, (layers * dirs, n, h), st.just((1, n, h)))
    attrs = dict(state_size=h, num_layers=layers, mode=mode, bidirectional=dirs == 2,
                 state_outputs=d(st.booleans()), projection_size=proj,
                 p=d(st.sampled_from([0.0, 0.3])))
    check("RNN", tensors, attrs)


# ---------------------------------------------------------------------------- shapes
@pytest.mark.parametrize("op", ["reshape", "transpose", "swapaxes", "expand_dims", "squeeze",
                                "flatten", "split", "SliceChannel", "slice", "slice_axis",
                                "broadcast_to", "tile", "repeat", "cast", "sum", "mean", "max",
                                "prod", "nansum"])
@PER_OP
@given(data=st.data())
def test_shape_op_rules_equal_meta(op, data):
    d = data.draw
    x = shape(d, d(st.integers(1, 4)), 1, 6)
    nd = len(x)
    ax = st.integers(-nd - 1, nd)
    if op == "reshape":
        code = st.sampled_from([0, -1, -2, -3, -4, 1, 2, 3, 4, 6, 12])
        attrs = dict(shape=tuple(d(st.lists(code, min_size=1, max_size=5))),
                     reverse=d(st.booleans()))
        if d(st.booleans()):
            attrs["shape"] = d(st.sampled_from([(-1,), (0, -1), (-3, -2), (x[0], -1), x[::-1],
                                                (-4, 1, -1, -2), -1, 6]))
    elif op == "transpose":
        attrs = dict(axes=maybe(d, tuple(d(st.permutations(range(nd)))),
                                st.lists(st.integers(-nd, nd), max_size=nd + 1).map(tuple)))
    elif op == "swapaxes":
        attrs = dict(dim1=d(ax), dim2=d(ax))
    elif op == "expand_dims":
        attrs = dict(axis=d(st.integers(-nd - 2, nd + 1)))
    elif op == "squeeze":
        x = tuple(1 if d(st.booleans()) else v for v in x)
        attrs = dict(axis=d(st.one_of(st.none(), ax, st.lists(ax, max_size=2).map(tuple))))
    elif op == "flatten":
        attrs = {}
    elif op in ("split", "SliceChannel"):
        attrs = dict(num_outputs=d(st.integers(1, 4)), axis=d(ax),
                     squeeze_axis=d(st.booleans()))
        if d(st.booleans()):
            x = tuple(v * attrs["num_outputs"] if i == attrs["axis"] % (nd + 1) else v
                      for i, v in enumerate(x))
        if attrs["num_outputs"] == 1 and d(st.booleans()):
            x = tuple(1 if i == attrs["axis"] % (nd + 1) else v for i, v in enumerate(x))
    elif op == "slice":
        k = d(st.integers(1, nd + 1))
        opt = st.one_of(st.none(), st.integers(-8, 8))
        attrs = dict(begin=tuple(d(st.lists(opt, min_size=k, max_size=k))),
                     end=tuple(d(st.lists(opt, min_size=k, max_size=k))))
        if d(st.booleans()):
            attrs["step"] = tuple(d(st.lists(st.one_of(st.none(), st.integers(-2, 3)),
                                             min_size=k, max_size=k)))
    elif op == "slice_axis":
        attrs = dict(axis=d(ax), begin=d(st.integers(-7, 7)),
                     end=d(st.one_of(st.none(), st.integers(-7, 7))))
    elif op == "broadcast_to":
        attrs = dict(shape=tuple(v if v != 1 else d(st.sampled_from([0, 1, 3]))
                                 for v in maybe(d, x, st.just(perturb(d, x)))))
    elif op == "tile":
        attrs = dict(reps=d(st.one_of(st.integers(0, 3),
                                      st.lists(st.integers(0, 3), max_size=5).map(tuple))))
    elif op == "repeat":
        attrs = dict(repeats=d(st.integers(0, 3)), axis=d(st.one_of(st.none(), ax)))
    elif op == "cast":
        attrs = dict(dtype=d(st.sampled_from(["float16", "float64", "int32", np.int64,
                                              "uint8", "bool", "float32"])))
    else:
        attrs = dict(axis=d(st.one_of(st.none(), st.just(()), ax,
                                      st.lists(ax, max_size=3).map(tuple))),
                     keepdims=d(st.booleans()), exclude=d(st.booleans()))
    check(op, {"data": x}, attrs, dtype=d(st.sampled_from(["float32", "float64"])))


@pytest.mark.parametrize("op", ["concat", "Concat", "stack", "add_n", "elemwise_add",
                                "elemwise_mul", "broadcast_add", "broadcast_mul",
                                "broadcast_div", "broadcast_maximum", "broadcast_equal",
                                "broadcast_lesser", "broadcast_mod", "broadcast_hypot", "where",
                                "slice_like", "broadcast_like", "_rnn_param_concat"])
@PER_OP
@given(data=st.data())
def test_multi_input_rules_equal_meta(op, data):
    d = data.draw
    nd = d(st.integers(1, 4))
    x = shape(d, nd, 1, 5)
    n_in = d(st.integers(1, 4))

    def variant(base):
        kind = d(st.sampled_from(["same", "same", "ones", "other"]))
        if kind == "same":
            return base
        if kind == "ones":
            return tuple(1 if d(st.booleans()) else v for v in base)
        return maybe(d, perturb(d, base), st.just(shape(d, d(st.integers(1, 4)), 1, 5)), 0.3)
    if op in ("concat", "Concat", "stack", "add_n", "_rnn_param_concat"):
        axis = d(st.integers(-nd - 1, nd))
        shapes = []
        for _ in range(n_in):
            s = list(x)
            if op in ("concat", "Concat", "_rnn_param_concat") and -nd <= axis < nd and \
                    d(st.booleans()):
                s[axis] = d(st.integers(1, 4))
            shapes.append(maybe(d, tuple(s), st.just(variant(x)), 0.1))
        if op == "_rnn_param_concat":
            shapes = [(int(np.prod(s)),) for s in shapes] if d(st.booleans()) else shapes
            check("_rnn_param_concat", shapes, dict(dim=0, num_args=n_in),
                  varpos=True)
            return
        key = "axis" if op == "stack" else "dim"
        attrs = {} if op == "add_n" else {key: axis}
        check(op, shapes, attrs, varpos=True)
        return
    if op == "where":
        c = d(st.sampled_from([x, x[:1], variant(x)]))
        check(op, {"condition": c, "x": x, "y": variant(x)}, {})
        return
    if op == "slice_like":
        check(op, {"data": x, "shape_like": variant(x)},
              dict(axes=d(st.one_of(st.just(()), st.lists(st.integers(-nd - 1, nd),
                                                            max_size=2).map(tuple)))))
        return
    if op == "broadcast_like":
        check(op, {"lhs": tuple(1 if d(st.booleans()) else v for v in x),
                   "rhs": variant(x)}, {})
        return
    check(op, {"lhs": x, "rhs": variant(x)}, {}, dtype=d(st.sampled_from(["float32", "float64"])))


UNARY = ["sqrt", "rsqrt", "square", "exp", "expm1", "log", "log2", "log10", "log1p", "sign",
         "relu", "sigmoid", "tanh", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh",
         "cosh", "arcsinh", "arccosh", "arctanh", "floor", "ceil", "round", "rint", "trunc",
         "fix", "abs", "negative", "reciprocal", "erf", "erfinv", "gamma", "gammaln",
         "softsign", "cbrt", "rcbrt", "degrees", "radians", "logical_not", "zeros_like",
         "ones_like", "stop_gradient", "BlockGrad", "identity"]


@pytest.mark.parametrize("op", UNARY)
def test_unary_rules_equal_meta(op):
    for x in [(3,), (2, 5), (1, 2, 3, 4)]:
        assert check(op, {"data": x}, {})


SCALAR = [("__add__", 2), ("__sub__", 1.5), ("__rsub__", 3), ("__mul__", 2.0),
          ("__truediv__", 4), ("__rtruediv__", 1), ("__mod__", 3), ("__rmod__", 2),
          ("__pow__", 2), ("__rpow__", 2.0), ("__eq__", 1), ("__ne__", 0), ("__gt__", 0.5),
          ("__ge__", 1), ("__lt__", 2), ("__le__", 0)]


@pytest.mark.parametrize("method,scalar", SCALAR)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_scalar_rules_equal_meta(method, scalar, dtype):
    def build():
        v = mx.sym.var("x")
        return getattr(v, method)(scalar), {"x": (2, 3)}
    assert check(method, None, None, dtype=dtype, sym_fn=build)
    for fn in ("maximum", "minimum"):
        def build2(fn=fn):
            return getattr(mx.sym, fn)(mx.sym.var("x"), scalar), {"x": (4,)}
        check(fn, None, None, dtype=dtype, sym_fn=build2)


@pytest.mark.parametrize("make", [lambda: mx.sym.zeros((2, 3)),
                                  lambda: mx.sym.ones((4,), dtype="float64"),
                                  lambda: mx.sym.full((2, 2), 3.5, dtype="int32"),
                                  lambda: mx.sym.zeros((0, 5), dtype=np.float16)])
def test_creation_rules_equal_meta(make):
    sym = make()
    node = sym._outputs[0][0]
    spec = _shape_rules.prepare(node, 0)
    fast = _shape_rules.outputs(spec, [], [], {})
    assert fast is not None and fast == _meta(node, [], [])


def test_rules_decline_other_dtypes_and_patched_functions(monkeypatch):
    v = mx.sym.var("x")
    node = mx.sym.relu(v)._outputs[0][0]
    spec = _shape_rules.prepare(node, 1)
    assert _shape_rules.outputs(spec, [(2, 3)], ["float32"], {}) == [((2, 3), "float32")]
    assert _shape_rules.outputs(spec, [(2, 3)], ["float16"], {}) is None
    assert _shape_rules.outputs(spec, [(2, 3)], ["int32"], {}) is None
    # a user's (or AMP's) replacement of the nd function: its own result counts
    s = mx.sym.expand_dims(mx.sym.var("y"), axis=1)
    assert s.infer_shape(y=(2, 3))[1] == [(2, 1, 3)]
    spec = _shape_rules.prepare(s._outputs[0][0], 1)
    assert _shape_rules.outputs(spec, [(2, 3)], ["float32"], {}) == [((2, 1, 3), "float32")]
    monkeypatch.setattr(mx.nd, "expand_dims",
                        lambda data, axis, **kw: mx.nd.concat(data, data, dim=0))
    assert _shape_rules.outputs(spec, [(2, 3)], ["float32"], {}) is None
    assert _shape_rules.prepare(s._outputs[0][0], 1) is None
    assert s.infer_shape(y=(5, 3))[1] == [(10, 3)]


# ---------------------------------------------------------------------------- graphs
def _infer_all(sym, calls):
    """Every call's result (or error type and message), with no inference cached."""
    symmod._PLANS.clear()
    res = []
    for method, kwargs in calls:
        try:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                out = getattr(sym, method)(**kwargs)
            res.append((out, [str(x.message) for x in w]))
        except Exception as err:  # noqa: BLE001 - compared as they are
            res.append((type(err).__name__, str(err)))
    return res


def _both_ways(make, calls, monkeypatch):
    sym = make()
    with_rules = _infer_all(sym, calls)
    monkeypatch.setattr(_shape_rules, "ENABLED", False)
    without = _infer_all(sym, calls)
    monkeypatch.setattr(_shape_rules, "ENABLED", True)
    assert with_rules == without
    return with_rules


CHAIN_OPS = ["Convolution", "Pooling", "BatchNorm", "Activation", "FullyConnected", "Flatten",
             "Concat", "elemwise_add", "Reshape", "transpose", "SliceChannel", "Dropout",
             "softmax", "LeakyReLU", "zeros_add", "expand_dims", "slice_axis", "sum"]


def _chain(ops, seed):
    """A small graph of ``ops`` applied one after another to ``data`` (some branching)."""
    rng = np.random.RandomState(seed)

    def make():
        x = mx.sym.var("data")
        prev = x
        for i, op in enumerate(ops):
            k = int(rng.randint(1, 4))
            if op == "Convolution":
                x = mx.sym.Convolution(x, kernel=(k, k), num_filter=int(rng.randint(1, 5)),
                                       pad=(int(rng.randint(0, 2)),) * 2, name=f"c{i}")
            elif op == "Pooling":
                x = mx.sym.Pooling(x, kernel=(k, k), stride=(k, k),
                                   pool_type=str(rng.choice(["max", "avg"])),
                                   global_pool=bool(rng.rand() < 0.2), name=f"p{i}")
            elif op == "BatchNorm":
                x = mx.sym.BatchNorm(x, name=f"bn{i}")
            elif op == "Activation":
                x = mx.sym.Activation(x, act_type="relu")
            elif op == "FullyConnected":
                x = mx.sym.FullyConnected(x, num_hidden=int(rng.randint(1, 6)), name=f"fc{i}",
                                          flatten=bool(rng.rand() < 0.7))
            elif op == "Flatten":
                x = mx.sym.Flatten(x)
            elif op == "Concat":
                x = mx.sym.Concat(x, prev, dim=int(rng.randint(0, 2)))
            elif op == "elemwise_add":
                x = x + prev
            elif op == "Reshape":
                x = mx.sym.Reshape(x, shape=[(0, -1), (-1,), (-3, -2), (0, 0, -1)][k - 1])
            elif op == "transpose":
                x = mx.sym.transpose(x)
            elif op == "SliceChannel":
                x = mx.sym.SliceChannel(x, num_outputs=k, axis=1)[k - 1]
            elif op == "Dropout":
                x = mx.sym.Dropout(x, p=0.5)
            elif op == "softmax":
                x = mx.sym.softmax(x, axis=-1)
            elif op == "LeakyReLU":
                x = mx.sym.LeakyReLU(x, act_type=str(rng.choice(["leaky", "prelu"])),
                                     name=f"lr{i}")
            elif op == "zeros_add":
                x = x + mx.sym.zeros((0,) * k)   # sized from the other operand (both ways)
            elif op == "expand_dims":
                x = mx.sym.expand_dims(x, axis=1)
            elif op == "slice_axis":
                x = mx.sym.slice_axis(x, axis=1, begin=0, end=k)
            elif op == "sum":
                x = mx.sym.sum(x, axis=1, keepdims=bool(rng.rand() < 0.5))
            prev = x if rng.rand() < 0.5 else prev
        return mx.sym.Group([x, mx.sym.var("other") * 2])
    return make


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.sampled_from(CHAIN_OPS), min_size=1, max_size=5),
       seed=st.integers(0, 1000),
       data=st.lists(st.integers(0, 6), min_size=1, max_size=4).map(tuple),
       other=st.one_of(st.none(), st.lists(st.integers(0, 3), max_size=3).map(tuple)))
def test_graph_inference_equal_with_and_without_rules(ops, seed, data, other, monkeypatch):
    kw = {"data": data} if other is None else {"data": data, "other": other}
    calls = [("infer_shape", kw), ("infer_shape_partial", kw), ("infer_shape", kw),
             ("infer_type", {"data": "float32"}), ("infer_shape_partial", {})]
    _both_ways(_chain(ops, seed), calls, monkeypatch)


def _lstm_cells():
    cell = mx.gluon.rnn.SequentialRNNCell()
    cell.add(mx.gluon.rnn.LSTMCell(8, input_size=4))
    cell.add(mx.gluon.rnn.GRUCell(6, input_size=8))
    outs, _ = cell.unroll(3, mx.sym.var("data"), layout="NTC", merge_outputs=True)
    return outs


MODELS = {
    "resnet18_v1": lambda: mx.gluon.model_zoo.vision.resnet18_v1()(mx.sym.var("data")),
    "squeezenet1.1": lambda: mx.gluon.model_zoo.vision.squeezenet1_1()(mx.sym.var("data")),
    "mobilenet0.25": lambda: mx.gluon.model_zoo.vision.mobilenet0_25()(mx.sym.var("data")),
    "lstm": lambda: mx.gluon.rnn.LSTM(8, num_layers=2, input_size=4,
                                      bidirectional=True)(mx.sym.var("data")),
    "gru_cells": _lstm_cells,
}
MODEL_INPUTS = {"lstm": [(5, 2, 4), (0, 3, 4), (7, 0, 0)], "gru_cells": [(2, 3, 4), (0, 3, 4)],
                "squeezenet1.1": [(1, 3, 224, 224), (2, 3, 200, 240), (0, 3, 224, 224),
                                  (1, 3, 64, 64)]}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_inference_equal_with_and_without_rules(name, monkeypatch):
    shapes = MODEL_INPUTS.get(name, [(1, 3, 64, 64), (2, 3, 48, 80), (0, 3, 64, 64),
                                     (1, 3, 8, 8)])
    calls = []
    for s in shapes:
        calls += [("infer_shape", {"data": s}), ("infer_shape_partial", {"data": s})]
    calls += [("infer_shape", {"data": shapes[0]}), ("infer_type", {"data": "float64"}),
              ("infer_type_partial", {})]
    res = _both_ways(MODELS[name], calls, monkeypatch)
    assert res[0][0][1], res[0]   # output shapes found


def test_model_graphs_run_no_operator_on_meta_tensors(monkeypatch):
    calls = []
    real = symmod._Inference._run

    def counting(self, node, shapes, types):
        calls.append(node.op)
        return real(self, node, shapes, types)
    monkeypatch.setattr(symmod._Inference, "_run", counting)
    for name in ("resnet18_v1", "squeezenet1.1", "mobilenet0.25", "lstm", "gru_cells"):
        sym = MODELS[name]()
        shape = MODEL_INPUTS.get(name, [(1, 3, 64, 64)])[0]
        assert sym.infer_shape(data=shape)[1]
    v2 = mx.gluon.model_zoo.vision
    for net in (v2.densenet121(), v2.inception_v3(), v2.resnet50_v1()):
        assert net(mx.sym.var("data")).infer_shape(data=(1, 3, 299, 299))[1]
    assert calls == []


def test_result_cache_follows_declared_shapes_and_training_mode():
    x = mx.sym.var("x", shape=(0, 3))
    y = mx.sym.FullyConnected(x, num_hidden=4, name="fc")
    assert y.infer_shape(x=(2, 3))[1] == [(2, 4)]
    assert y.infer_shape(x=(2, 3))[1] == [(2, 4)]       # from the cache
    res = y.infer_shape(x=(2, 3))
    res[1].append("mine")                                # the caller's lists are its own
    assert y.infer_shape(x=(2, 3))[1] == [(2, 4)]
    y.get_internals()["x"]._set_attr(__shape__="(5, 3)")
    # (MXNet 1.9.1: a fully given shape wins over the declared one, a partly given one
    # gives way to it)
    assert y.infer_shape(x=(2, 3))[1] == [(2, 4)]
    assert y.infer_shape(x=(2, 0))[1] == [(5, 4)]
    assert y.infer_shape()[1] == [(5, 4)]
    with autograd.train_mode():
        assert y.infer_shape()[1] == [(5, 4)]


def test_errors_are_the_meta_paths(monkeypatch):
    def make():
        d = mx.sym.var("data")
        c = mx.sym.Convolution(d, kernel=(3, 3), num_filter=4, name="c")
        return mx.sym.Pooling(c, kernel=(5, 5), name="p")
    calls = [("infer_shape", {"data": (1, 2, 5, 5)}), ("infer_shape", {"data": (1, 2, 8, 8)})]
    res = _both_ways(make, calls, monkeypatch)
    assert res[0][0] == "MXNetError" and "Pooling" in res[0][1]
    assert res[1][0][1] == [(1, 4, 2, 2)]


def test_group_symbol_evaluates_twice_with_sized_zeros():
    """_creation_shapes' cache (now in the plan) compared Symbols with == as dict keys."""
    x = mx.sym.var("x")
    g = mx.sym.Group([x + 1, mx.sym.FullyConnected(x, num_hidden=4, no_bias=True, name="fc") +
                      mx.sym.zeros((0, 4))])
    for _ in range(2):
        out = g.eval(x=mx.nd.ones((2, 3)), fc_weight=mx.nd.ones((4, 3)))
        assert out[1].shape == (2, 4) and float(out[1].sum().asscalar()) == 24.0
