"""ONNX import: an ONNX model file -> an ``mx.sym`` graph and its parameters.

The behaviour of MXNet 1.9.1's ``mx.contrib.onnx`` importer (``import_model``,
``get_model_metadata``, ``import_to_gluon``), written anew for neogluon:

* every ONNX node becomes neogluon symbol operators (``mx.sym.Convolution``,
  ``FullyConnected``, ``BatchNorm``...), the main one named by the node's name;
* every initializer (and ``Constant`` node) a tensor operand uses becomes a variable of the
  same name whose value is in ``arg_params`` -- or in ``aux_params`` where MXNet keeps it as an
  auxiliary state (BatchNorm's running mean and variance);
* an initializer that an operator takes as an attribute (Reshape's shape, Pad's pads, Slice's
  starts...) is read at import time and is not a parameter, as in MXNet;
* small integer computations on constants and on static shapes (``Shape`` -> ``Gather`` ->
  ``Concat`` -> ``Reshape``, as exporters write ``flatten``) are folded at import time. A
  reshape target that holds a dimension only known when the model runs (a variable batch) is
  written with MXNet's reshape codes (``0`` copies the dimension, ``-1`` infers one).

Where MXNet 1.9.1's translation disagrees with the ONNX operator (ReduceX's default
``keepdims=1``, AveragePool's ``count_include_pad=0``, LpNormalization, Multinomial's
log-probabilities, Softmax before opset 13...), the ONNX definition is followed: the imported
graph computes what onnxruntime computes.
"""
from __future__ import annotations

import os

import numpy as np

from ..base import MXNetError

__all__ = ["import_model", "get_model_metadata", "import_to_gluon", "supported_operators"]

_BIG = 2 ** 62  # |start|/|end| at least this is "to the end" in ONNX's Slice


class OnnxMissingError(MXNetError, ImportError):
    """Raised when the ``onnx`` package is not installed (an MXNetError and an ImportError)."""


def _need_onnx(what):
    try:
        import onnx  # noqa: F401
        from onnx import numpy_helper  # noqa: F401
    except ImportError:
        raise OnnxMissingError(
            f"{what} needs the 'onnx' package (ONNX's protobuf model format), which is not "
            "installed: pip install onnx") from None
    return onnx


def _load(model_file, what):
    onnx = _need_onnx(what)
    if not isinstance(model_file, (str, bytes, os.PathLike)):
        if hasattr(model_file, "graph"):    # already an onnx.ModelProto
            return model_file, "<ModelProto>"
        raise MXNetError(f"{what}: model_file must be a path to an ONNX file, got "
                         f"{type(model_file).__name__}")
    path = os.fspath(model_file)
    if isinstance(path, bytes):
        path = path.decode()
    if not os.path.isfile(path):
        raise MXNetError(f"{what}: ONNX model file '{path}' does not exist")
    try:
        model = onnx.load_model(path)
    except Exception as err:  # noqa: BLE001 - protobuf's DecodeError and friends
        raise MXNetError(f"{what}: '{path}' is not a readable ONNX model "
                         f"({type(err).__name__}: {err})") from None
    if not model.graph.node and not model.graph.output:
        raise MXNetError(f"{what}: '{path}' holds no ONNX graph (an empty or foreign file)")
    return model, path


def _opset(model):
    versions = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
    if versions:
        return max(versions)
    return max([o.version for o in model.opset_import] or [1])


def _np_dtype(elem_type):
    from onnx import helper
    return np.dtype(helper.tensor_dtype_to_np_dtype(int(elem_type)))


def _to_array(tensor):
    from onnx import numpy_helper
    return np.asarray(numpy_helper.to_array(tensor))


# ----------------------------------------------------------------------------- metadata
def _dims(value_info):
    tt = value_info.type.tensor_type
    if not tt.HasField("shape"):
        return ()
    return tuple(d.dim_value for d in tt.shape.dim)


def _metadata(graph):
    params = {t.name for t in graph.initializer}
    inputs = [(i.name, _dims(i), i.type.tensor_type.elem_type)
              for i in graph.input if i.name not in params]
    outputs = [(o.name, _dims(o)) for o in graph.output]
    return {"input_tensor_data": inputs, "output_tensor_data": outputs}


# ----------------------------------------------------------------------------- values
class _Dyn:
    """A dimension known only when the model runs: dimension ``axis`` of tensor ``src``
    (both None once arithmetic has mixed it with something else)."""
    __slots__ = ("src", "axis")

    def __init__(self, src=None, axis=None):
        self.src, self.axis = src, axis

    def _unknown(self, *_):
        return _Dyn()

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _unknown
    __floordiv__ = __rfloordiv__ = __truediv__ = __rtruediv__ = __mod__ = __neg__ = _unknown

    def __repr__(self):
        return f"<dim {self.axis} of {self.src}>" if self.src else "<dim ?>"


def _has_dyn(arr):
    return arr.dtype == object and any(isinstance(v, _Dyn) for v in arr.flat)


class _Val:
    """An ONNX tensor during import: a symbol, a value known at import time, or both."""
    __slots__ = ("name", "sym", "const", "param")

    def __init__(self, name, sym=None, const=None, param=False):
        self.name, self.sym, self.const, self.param = name, sym, const, param


class _Node:
    __slots__ = ("op", "name", "attrs", "inputs", "outputs", "opset", "proto")

    def __init__(self, proto, attrs, inputs, opset):
        self.proto = proto
        self.op = proto.op_type
        self.name = proto.name.strip() or None
        self.attrs = attrs
        self.inputs = inputs
        self.outputs = list(proto.output)
        self.opset = opset

    def kw(self):
        return {"name": self.name} if self.name else {}

    def inp(self, i):
        return self.inputs[i] if i < len(self.inputs) else None


def _parse_attrs(node):
    from onnx import helper, AttributeProto
    out = {}
    for a in node.attribute:
        if a.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS):
            raise _Unsupported("it has a subgraph attribute "
                               f"'{a.name}' (control flow is not imported)")
        v = helper.get_attribute_value(a)
        if isinstance(v, bytes):
            v = v.decode("utf-8")
        elif a.type == AttributeProto.TENSOR:
            v = _to_array(v)
        elif isinstance(v, list):
            v = tuple(x.decode("utf-8") if isinstance(x, bytes) else x for x in v)
        out[a.name] = v
    return out


class _Unsupported(Exception):
    pass


# ----------------------------------------------------------------------------- converters
_CONVERT = {}
_FOLD = {}


def _op(*names):
    def deco(fn):
        for n in names:
            _CONVERT[n] = fn
        return fn
    return deco


def _fold(*names):
    def deco(fn):
        for n in names:
            _FOLD[n] = fn
        return fn
    return deco


def _sym():
    from .. import symbol
    return symbol


class _Importer:
    def __init__(self, model, path, what):
        self.model, self.path, self.what = model, path, what
        self.graph = model.graph
        self.opset = _opset(model)
        self.vals = {}
        self.params = {}      # name -> numpy value of every parameter variable made
        self.shapes = {}
        self.node = None
        self._shape_info()

    # -- shapes (for the few translations that need a rank or a static dimension)
    def _shape_info(self):
        import onnx
        graph = self.graph
        try:
            inferred = onnx.shape_inference.infer_shapes(self.model, strict_mode=False).graph
        except Exception:  # noqa: BLE001 - shapes are a help, not a requirement
            inferred = graph
        for vi in list(inferred.input) + list(inferred.value_info) + list(inferred.output):
            tt = vi.type.tensor_type
            if tt.HasField("shape"):
                self.shapes[vi.name] = tuple(
                    d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim)
        for t in graph.initializer:
            self.shapes[t.name] = tuple(t.dims)

    def shape(self, v):
        if v is None:
            return None
        if v.const is not None:
            return tuple(np.shape(v.const))
        return self.shapes.get(v.name)

    def rank(self, v):
        s = self.shape(v)
        return None if s is None else len(s)

    def need_rank(self, v, why):
        r = self.rank(v)
        if r is None:
            raise MXNetError(f"the rank of input '{v.name}' is not known ({why}); run "
                             "onnx.shape_inference on the model or give its inputs shapes")
        return r

    def static_shape(self, v):
        s = self.shape(v)
        if s is None or any(d is None for d in s):
            return None
        return s

    # -- values
    def sym(self, v):
        if v is None:
            return None
        if v.sym is None:
            arr = v.const
            if arr.dtype == object:
                raise MXNetError(f"tensor '{v.name}' is computed from a dimension known only "
                                 "when the model runs; export the model with fixed input "
                                 "shapes")
            if arr.ndim == 0:          # MXNet keeps scalar initializers as shape (1,)
                arr = arr.reshape(1)
            self.params[v.name] = arr
            kw = {} if arr.dtype == np.float32 else {"dtype": arr.dtype}
            v.sym = _sym().Variable(v.name, shape=arr.shape, **kw)
        return v.sym

    def const(self, v, what="this operand"):
        if v is None:
            return None
        if v.const is None:
            raise MXNetError(f"{what} ('{v.name}') must be a constant (an initializer or a "
                             "Constant node) to be imported; it is computed by the graph")
        return v.const

    def ints(self, v, what):
        arr = self.const(v, what)
        if _has_dyn(arr):
            raise MXNetError(f"{what} ('{v.name}') depends on a dimension known only when the "
                             "model runs; export the model with fixed input shapes")
        return tuple(int(x) for x in np.asarray(arr).reshape(-1))

    def syms(self, node):
        return [self.sym(v) for v in node.inputs]

    # -- the graph
    def run(self):
        S = _sym()
        graph = self.graph
        for t in graph.initializer:
            if not t.name.strip():
                raise MXNetError(f"{self.what}: {self.path}: an initializer has no name")
            self.vals[t.name] = _Val(t.name, const=_to_array(t), param=True)
        for i in graph.input:
            if i.name not in self.vals:
                self.vals[i.name] = _Val(i.name, sym=S.Variable(i.name))
        for proto in graph.node:
            self._node(proto)
        outs = []
        for o in graph.output:
            v = self.vals.get(o.name)
            if v is None:
                raise MXNetError(f"{self.what}: {self.path}: graph output '{o.name}' is not "
                                 "made by any node")
            try:
                outs.append(self.sym(v))
            except MXNetError as err:
                raise MXNetError(f"{self.what}: {self.path}: graph output '{o.name}': "
                                 f"{err}") from None
        out = outs[0] if len(outs) == 1 else S.Group(outs)
        from .. import ndarray as nd
        args = set(out.list_arguments())
        auxs = set(out.list_auxiliary_states())
        arg_params = {k: nd.array(v, dtype=v.dtype) for k, v in self.params.items() if k in args}
        aux_params = {k: nd.array(v, dtype=v.dtype) for k, v in self.params.items() if k in auxs}
        return out, arg_params, aux_params

    def _where(self, proto):
        name = proto.name.strip() or "(unnamed)"
        return (f"{self.what}: {self.path}: node '{name}' (op {proto.op_type}"
                + (f", domain {proto.domain}" if proto.domain not in ("", "ai.onnx") else "")
                + ")")

    def _node(self, proto):
        where = self._where(proto)
        if proto.domain not in ("", "ai.onnx") or (
                proto.op_type not in _CONVERT and proto.op_type not in _FOLD):
            raise MXNetError(f"{where}: operator {proto.op_type} is not supported by "
                             "neogluon's ONNX importer (see "
                             "mx.contrib.onnx.supported_operators())")
        inputs = []
        for name in proto.input:
            if not name:
                inputs.append(None)
                continue
            v = self.vals.get(name)
            if v is None:
                raise MXNetError(f"{where}: its input '{name}' is not a graph input, an "
                                 "initializer or the output of an earlier node")
            inputs.append(v)
        try:
            attrs = _parse_attrs(proto)
        except _Unsupported as err:
            raise MXNetError(f"{where}: not supported: {err}") from None
        node = _Node(proto, attrs, inputs, self.opset)
        self.node = node
        try:
            results = None
            present = [v for v in inputs if v is not None]
            if proto.op_type in ("Shape", "Size") or (
                    proto.op_type in _FOLD and all(v.const is not None for v in present) and (
                        proto.op_type in ("ConstantOfShape", "Constant")
                        or all(v.const.dtype.kind in "biuO" for v in present))):
                try:
                    results = _FOLD[proto.op_type](self, node)
                except (_Unsupported, NotImplementedError):
                    results = None
                if results is not None:
                    results = [r if isinstance(r, _Val) else
                               _Val(None, const=np.asarray(r)) for r in results]
            if results is None:
                if proto.op_type not in _CONVERT:
                    raise MXNetError("its inputs are computed by the graph; only constant "
                                     "inputs can be imported")
                results = _CONVERT[proto.op_type](self, node)
        except MXNetError as err:
            msg = str(err)
            raise MXNetError(msg if msg.startswith(self.what) else f"{where}: {msg}") from None
        except _Unsupported as err:
            raise MXNetError(f"{where}: not supported: {err}") from None
        except Exception as err:  # noqa: BLE001 - any failure names the node
            raise MXNetError(f"{where}: could not be imported: {type(err).__name__}: "
                             f"{err}") from None
        self._bind_outputs(node, results, where)

    def _bind_outputs(self, node, results, where):
        S = _sym()
        if isinstance(results, (S.Symbol, _Val)):
            results = [results]
            if isinstance(results[0], S.Symbol) and len(results[0].list_outputs()) > 1:
                results = list(results[0])
        for i, name in enumerate(node.outputs):
            if not name:
                continue
            if i >= len(results) or results[i] is None:
                self.vals[name] = _Missing(name, where)
                continue
            r = results[i]
            if isinstance(r, _Val):
                if r.name is None or (r.sym is None and not r.param):
                    r.name = name
                self.vals[name] = r
            else:
                self.vals[name] = _Val(name, sym=r)


class _Missing(_Val):
    """An optional node output the translation does not produce (Dropout's mask...)."""

    def __init__(self, name, where):
        super().__init__(name)
        self.const = None
        self.sym = None
        self.where = where

    def __getattribute__(self, item):
        if item in ("sym", "const") and object.__getattribute__(self, "where") is not None:
            raise MXNetError(f"{object.__getattribute__(self, 'where')}: its output "
                             f"'{object.__getattribute__(self, 'name')}' is used but is not "
                             "imported (only the operator's main outputs are)")
        return object.__getattribute__(self, item)


# ------------------------------------------------------------------ small helpers
def _pairs(pads, n):
    """ONNX pads (all begins, then all ends) -> (begins, ends) over n axes."""
    if not pads:
        return (0,) * n, (0,) * n
    pads = tuple(int(p) for p in pads)
    if len(pads) != 2 * n:
        raise MXNetError(f"pads {pads} do not have 2 values for each of the {n} axes")
    return pads[:n], pads[n:]


def _pad_nd(imp, x, rank, begins, ends, mode="constant", value=0.0, name=None):
    """Pad any axes of a rank-`rank` tensor with mx.sym.pad (4-D/5-D, spatial axes only)."""
    S = _sym()
    begins, ends = list(begins), list(ends)
    if any(b < 0 for b in begins + ends):
        raise _Unsupported("negative pads (cropping)")
    if not any(begins + ends):
        return x
    lead = 0
    if rank < 4:
        lead = 4 - rank
    elif rank > 5:
        raise _Unsupported(f"padding a rank-{rank} tensor")
    begins, ends = [0] * lead + begins, [0] * lead + ends
    if any(begins[:2]) or any(ends[:2]):
        raise _Unsupported("padding the first two axes of a 4-D/5-D tensor (MXNet's pad "
                           "pads the spatial axes)")
    y = x
    for _ in range(lead):
        y = S.expand_dims(y, axis=0)
    width = tuple(v for pair in zip(begins, ends) for v in pair)
    kw = {"constant_value": float(value)} if mode == "constant" else {}
    kw2 = {"name": name} if name and not lead else {}
    y = S.pad(y, mode=mode, pad_width=width, **kw, **kw2)
    if lead:
        for i in range(lead):
            y = S.squeeze(y, axis=0, **({"name": name} if name and i == lead - 1 else {}))
    return y


def _bcast_legacy(imp, node, a, b):
    """Opset < 7 Add/Sub/Mul/Div with broadcast=1, axis: B aligned from `axis` of A."""
    if not node.attrs.get("broadcast", 0) or "axis" not in node.attrs:
        return b
    ra = imp.need_rank(node.inputs[0], "legacy broadcast")
    rb = imp.need_rank(node.inputs[1], "legacy broadcast")
    axis = int(node.attrs["axis"]) % ra
    bshape = imp.shape(node.inputs[1])
    if bshape is None or any(d is None for d in bshape):
        raise MXNetError("legacy broadcast needs the second operand's shape")
    target = (1,) * axis + tuple(bshape) + (1,) * (ra - axis - rb)
    return _sym().reshape(b, shape=target)


# ----------------------------------------------------------------- constant folding
@_fold("Identity")
def _f_identity(imp, node):
    return [node.inputs[0]]


@_fold("Constant")
def _f_constant(imp, node):
    a = node.attrs
    if "value" in a:
        arr = np.asarray(a["value"])
    elif "value_float" in a:
        arr = np.asarray(a["value_float"], dtype=np.float32)
    elif "value_floats" in a:
        arr = np.asarray(a["value_floats"], dtype=np.float32)
    elif "value_int" in a:
        arr = np.asarray(a["value_int"], dtype=np.int64)
    elif "value_ints" in a:
        arr = np.asarray(a["value_ints"], dtype=np.int64)
    else:
        raise _Unsupported(f"Constant with attributes {sorted(a)}")
    return [_Val(node.outputs[0], const=arr, param=True)]


@_fold("Shape")
def _f_shape(imp, node):
    v = node.inputs[0]
    s = imp.shape(v)
    if s is None:
        return None
    dims = np.array([d if d is not None else _Dyn(v.name, i) for i, d in enumerate(s)],
                    dtype=object)
    start = int(node.attrs.get("start", 0))
    end = node.attrs.get("end")
    dims = dims[start:(int(end) if end is not None else None)]
    if not _has_dyn(dims):
        dims = dims.astype(np.int64)
    return [dims]


@_fold("Size")
def _f_size(imp, node):
    s = imp.static_shape(node.inputs[0])
    return None if s is None else [np.asarray(int(np.prod(s)), dtype=np.int64)]


def _c(node, i):
    v = node.inp(i)
    return None if v is None else v.const


@_fold("Gather")
def _f_gather(imp, node):
    return [np.take(_c(node, 0), _c(node, 1).astype(np.int64),
                    axis=int(node.attrs.get("axis", 0)))]


@_fold("Unsqueeze")
def _f_unsqueeze(imp, node):
    x = _c(node, 0)
    axes = node.attrs.get("axes") if node.opset < 13 else imp.ints(node.inputs[1], "axes")
    rank = x.ndim + len(axes)
    for a in sorted(int(a) % rank for a in axes):
        x = np.expand_dims(x, a)
    return [x]


@_fold("Squeeze")
def _f_squeeze(imp, node):
    x = _c(node, 0)
    axes = node.attrs.get("axes") if node.opset < 13 else (
        imp.ints(node.inputs[1], "axes") if node.inp(1) is not None else None)
    return [np.squeeze(x, axis=None if axes is None else tuple(int(a) for a in axes))]


@_fold("Concat")
def _f_concat(imp, node):
    parts = [v.const for v in node.inputs if v is not None]
    dtype = object if any(p.dtype == object for p in parts) else None
    out = np.concatenate([p.astype(object) if dtype else p for p in parts],
                         axis=int(node.attrs["axis"]))
    return [out]


@_fold("Add", "Sub", "Mul", "Div")
def _f_arith(imp, node):
    a, b = _c(node, 0), _c(node, 1)
    if node.op == "Div":
        if a.dtype.kind in "iu" and b.dtype.kind in "iu":
            out = np.trunc(a / b).astype(a.dtype)
        else:
            out = a // b if a.dtype == object else a / b
    else:
        out = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply}[node.op](a, b)
    return [out]


@_fold("Cast")
def _f_cast(imp, node):
    x = _c(node, 0)
    if x.dtype == object:
        return [x]
    return [x.astype(_np_dtype(node.attrs["to"]))]


@_fold("Slice")
def _f_slice(imp, node):
    x = _c(node, 0)
    starts, ends, axes, steps = _slice_args(imp, node, x.ndim)
    idx = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        idx[a] = slice(s, e, st)
    return [x[tuple(idx)]]


@_fold("Reshape")
def _f_reshape(imp, node):
    x = _c(node, 0)
    shape = list(imp.ints(node.inputs[1], "shape"))
    shape = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return [x.reshape(shape)]


@_fold("ConstantOfShape")
def _f_const_of_shape(imp, node):
    shape = imp.ints(node.inputs[0], "shape")
    value = node.attrs.get("value", np.zeros(1, np.float32))
    value = np.asarray(value).reshape(-1)
    return [_Val(None, const=np.full(shape, value[0], dtype=value.dtype), param=True)]


@_fold("Range")
def _f_range(imp, node):
    a, b, d = (_c(node, i).reshape(()) for i in range(3))
    return [np.arange(a, b, d, dtype=_c(node, 0).dtype)]


@_fold("Equal", "Less", "Greater", "Not", "Where", "Expand", "Transpose", "Neg", "Abs",
       "Max", "Min", "Tile")
def _f_misc(imp, node):
    vals = [_c(node, i) for i in range(len(node.inputs))]
    if any(v.dtype == object for v in vals):
        return None
    op = node.op
    if op == "Equal":
        return [np.equal(*vals)]
    if op == "Less":
        return [np.less(*vals)]
    if op == "Greater":
        return [np.greater(*vals)]
    if op == "Not":
        return [np.logical_not(vals[0])]
    if op == "Where":
        return [np.where(*vals)]
    if op == "Expand":
        return [vals[0] * np.ones(tuple(vals[1].reshape(-1)), dtype=vals[0].dtype)]
    if op == "Transpose":
        return [np.transpose(vals[0], node.attrs.get("perm"))]
    if op == "Neg":
        return [-vals[0]]
    if op == "Abs":
        return [np.abs(vals[0])]
    if op == "Max":
        return [np.maximum.reduce(vals)]
    if op == "Min":
        return [np.minimum.reduce(vals)]
    if op == "Tile":
        return [np.tile(vals[0], tuple(vals[1].reshape(-1)))]
    return None


# --------------------------------------------------------------- elementwise ops
_UNARY = {
    "Abs": "abs", "Neg": "negative", "Tanh": "tanh", "Ceil": "ceil", "Floor": "floor",
    "Sigmoid": "sigmoid", "Relu": "relu", "Reciprocal": "reciprocal", "Sqrt": "sqrt",
    "Exp": "exp", "Log": "log", "Cos": "cos", "Sin": "sin", "Tan": "tan", "Acos": "arccos",
    "Asin": "arcsin", "Atan": "arctan", "Softsign": "softsign", "Not": "logical_not",
    "Erf": "erf", "Sign": "sign", "Sinh": "sinh", "Cosh": "cosh",
    "Asinh": "arcsinh", "Acosh": "arccosh", "Atanh": "arctanh", "IsNaN": "isnan",
}


@_op(*_UNARY)
def _c_unary(imp, node):
    return getattr(_sym(), _UNARY[node.op])(imp.sym(node.inputs[0]), **node.kw())


@_op("Round")
def _c_round(imp, node):
    """ONNX rounds halves to even (MXNet's round rounds them away from zero, rint down)."""
    S = _sym()
    x = imp.sym(node.inputs[0])
    f = S.floor(x)
    d = x - f
    odd = f - S.floor(f * 0.5) * 2.0
    half = 1.0 - (d > 0.5) - (d < 0.5)
    return S.broadcast_add(f, (d > 0.5) + half * odd, **node.kw())


@_op("Identity")
def _c_identity(imp, node):
    return _sym().identity(imp.sym(node.inputs[0]), **node.kw())


_BINARY = {"Add": "broadcast_add", "Sub": "broadcast_sub", "Mul": "broadcast_mul",
           "Div": "broadcast_div", "Pow": "broadcast_power", "Less": "broadcast_lesser",
           "Greater": "broadcast_greater", "Equal": "broadcast_equal",
           "LessOrEqual": "broadcast_lesser_equal",
           "GreaterOrEqual": "broadcast_greater_equal", "And": "broadcast_logical_and",
           "Or": "broadcast_logical_or", "Xor": "broadcast_logical_xor",
           "Mod": "broadcast_mod"}
_SCALAR = {"Add": ("__add__", "__radd__"), "Sub": ("__sub__", "__rsub__"),
           "Mul": ("__mul__", "__rmul__"), "Div": ("__truediv__", "__rtruediv__"),
           "Pow": ("__pow__", "__rpow__")}


@_op(*_BINARY)
def _c_binary(imp, node):
    S = _sym()
    va, vb = node.inputs[0], node.inputs[1]
    if node.op == "Mod" and node.attrs.get("fmod", 0):
        raise _Unsupported("Mod with fmod=1")
    # A one-element constant against a computed tensor: MXNet's scalar operator (no parameter)
    if node.op in _SCALAR and not node.attrs.get("broadcast", 0):
        for const_v, other, pos in ((vb, va, 0), (va, vb, 1)):
            if (const_v.const is not None and other.const is None
                    and const_v.const.size == 1 and const_v.const.dtype != object
                    and (const_v.const.ndim == 0 or (imp.rank(other) or 0) >= const_v.const.ndim)
                    and not (const_v.param and const_v.name in imp.model_init_names())):
                scalar = const_v.const.reshape(()).item()
                return getattr(imp.sym(other), _SCALAR[node.op][pos])(scalar)
    a, b = imp.sym(va), imp.sym(vb)
    b = _bcast_legacy(imp, node, a, b)
    return getattr(S, _BINARY[node.op])(a, b, **node.kw())


def _model_init_names(self):
    names = getattr(self, "_init_names", None)
    if names is None:
        names = self._init_names = {t.name for t in self.graph.initializer}
    return names


_Importer.model_init_names = _model_init_names


def _same_shapes(imp, vals):
    shapes = [imp.static_shape(v) for v in vals]
    return all(s is not None for s in shapes) and len(set(shapes)) == 1


@_op("Sum")
def _c_sum(imp, node):
    S = _sym()
    xs = imp.syms(node)
    if len(xs) == 1:
        return S.identity(xs[0], **node.kw())
    if _same_shapes(imp, node.inputs):
        return S.add_n(*xs, **node.kw())
    out = xs[0]
    for i, x in enumerate(xs[1:]):
        out = S.broadcast_add(out, x, **(node.kw() if i == len(xs) - 2 else {}))
    return out


@_op("Mean")
def _c_mean(imp, node):
    S = _sym()
    xs = imp.syms(node)
    out = xs[0]
    for x in xs[1:]:
        out = S.broadcast_add(out, x)
    return out / float(len(xs)) if len(xs) > 1 else S.identity(out, **node.kw())


@_op("Max", "Min")
def _c_maxmin(imp, node):
    S = _sym()
    fn = S.broadcast_maximum if node.op == "Max" else S.broadcast_minimum
    xs = imp.syms(node)
    if len(xs) == 1:
        return S.identity(xs[0], **node.kw())
    out = xs[0]
    for i, x in enumerate(xs[1:]):
        out = fn(out, x, **(node.kw() if i == len(xs) - 2 else {}))
    return out


@_op("Where")
def _c_where(imp, node):
    S = _sym()
    c, x, y = node.inputs
    shapes = [imp.static_shape(v) for v in (c, x, y)]
    syms = [imp.sym(v) for v in (c, x, y)]
    if any(s is None for s in shapes):
        if len({imp.rank(v) for v in (c, x, y)}) != 1:
            raise MXNetError("Where with operands of unknown, different shapes")
        return S.where(*syms, **node.kw())
    out = np.broadcast_shapes(*shapes)
    syms = [s if sh == out else S.broadcast_to(S.reshape(s, shape=(1,) * (len(out) - len(sh))
                                                         + sh), shape=out)
            for s, sh in zip(syms, shapes)]
    return S.where(*syms, **node.kw())


@_op("Clip")
def _c_clip(imp, node):
    if node.opset < 11:
        lo = node.attrs.get("min", -np.inf)
        hi = node.attrs.get("max", np.inf)
    else:
        bounds = []
        for i, what in ((1, "min"), (2, "max")):
            v = node.inp(i)
            bounds.append(None if v is None else
                          float(imp.const(v, f"Clip's {what}").reshape(-1)[0]))
        lo, hi = bounds
        lo = -np.inf if lo is None else lo
        hi = np.inf if hi is None else hi
    return _sym().clip(imp.sym(node.inputs[0]), a_min=float(lo), a_max=float(hi), **node.kw())


@_op("Cast")
def _c_cast(imp, node):
    return _sym().cast(imp.sym(node.inputs[0]), dtype=_np_dtype(node.attrs["to"]), **node.kw())


@_op("CastLike")
def _c_castlike(imp, node):
    dt = node.inputs[1].const.dtype if node.inputs[1].const is not None else None
    if dt is None:
        raise MXNetError("CastLike's target must be a constant")
    return _sym().cast(imp.sym(node.inputs[0]), dtype=dt, **node.kw())


# --------------------------------------------------------------- activations
@_op("LeakyRelu")
def _c_leaky(imp, node):
    return _sym().LeakyReLU(imp.sym(node.inputs[0]), act_type="leaky",
                            slope=float(node.attrs.get("alpha", 0.01)), **node.kw())


@_op("Elu")
def _c_elu(imp, node):
    return _sym().LeakyReLU(imp.sym(node.inputs[0]), act_type="elu",
                            slope=float(node.attrs.get("alpha", 1.0)), **node.kw())


@_op("Selu")
def _c_selu(imp, node):
    S = _sym()
    alpha = float(node.attrs.get("alpha", 1.67326319217681884765625))
    gamma = float(node.attrs.get("gamma", 1.05070102214813232421875))
    x = imp.sym(node.inputs[0])
    if abs(alpha - 1.6732632) < 1e-6 and abs(gamma - 1.0507010) < 1e-6:
        return S.LeakyReLU(x, act_type="selu", **node.kw())
    neg = (S.exp(S.minimum(x, 0.0)) - 1.0) * alpha
    return S.broadcast_add(S.relu(x), neg) * gamma


@_op("PRelu")
def _c_prelu(imp, node):
    S = _sym()
    x, slope = node.inputs
    s, rx = imp.shape(slope), imp.rank(x)
    g = imp.sym(slope)
    if s is not None and rx is not None and rx >= 2 and len(s) <= rx:
        full = (1,) * (rx - len(s)) + tuple(s)
        # a per-channel slope ((C,), (C, 1, 1)...): MXNet's prelu, with gamma of shape (C,)
        if full[0] == 1 and all(d == 1 for d in full[2:]) and full[1] not in (None, 1):
            if len(s) != 1:
                g = S.reshape(g, shape=(-1,))
            return S.LeakyReLU(imp.sym(x), g, act_type="prelu", **node.kw())
    xs = imp.sym(x)
    return S.broadcast_add(S.relu(xs), S.broadcast_mul(S.minimum(xs, 0.0), g), **node.kw())


@_op("HardSigmoid")
def _c_hardsigmoid(imp, node):
    return _sym().hard_sigmoid(imp.sym(node.inputs[0]), alpha=float(node.attrs.get("alpha", 0.2)),
                               beta=float(node.attrs.get("beta", 0.5)), **node.kw())


@_op("HardSwish")
def _c_hardswish(imp, node):
    x = imp.sym(node.inputs[0])
    return _sym().broadcast_mul(x, _sym().hard_sigmoid(x, alpha=1.0 / 6, beta=0.5), **node.kw())


@_op("Softplus")
def _c_softplus(imp, node):
    return _sym().Activation(imp.sym(node.inputs[0]), act_type="softrelu", **node.kw())


@_op("Gelu")
def _c_gelu(imp, node):
    if node.attrs.get("approximate", "none") != "none":
        raise _Unsupported("Gelu with approximate='tanh'")
    return _sym().LeakyReLU(imp.sym(node.inputs[0]), act_type="gelu", **node.kw())


def _flatten2d(imp, v, axis):
    """Collapse tensor `v` to 2-D around `axis` (ONNX Flatten / old Softmax coercion)."""
    S = _sym()
    x = imp.sym(v)
    r = imp.rank(v)
    if r is not None:
        axis = axis % r if axis < 0 else axis
    if axis == 0:
        return S.reshape(x, shape=(1, -1))
    if axis == 1:
        return S.reshape(x, shape=(0, -1))
    s = imp.shape(v)
    if s is not None and all(d is not None for d in s[:axis]):
        return S.reshape(x, shape=(int(np.prod(s[:axis])), -1))
    if s is not None and all(d is not None for d in s[axis:]):
        return S.reshape(x, shape=(-1, int(np.prod(s[axis:]))))
    if axis == 2:
        return S.reshape(x, shape=(-3, -1))
    raise MXNetError(f"flattening at axis {axis} needs the input's static shape")


def _coerced(imp, node, fn, default_axis):
    """softmax-like ops: axis semantics before opset 13 (2-D coercion) and after."""
    S = _sym()
    v = node.inputs[0]
    axis = int(node.attrs.get("axis", default_axis if node.opset < 13 else -1))
    r = imp.rank(v)
    if node.opset >= 13 or (r is not None and axis % r == r - 1) or axis == -1:
        return fn(imp.sym(v), axis, node.kw())
    flat = _flatten2d(imp, v, axis)
    return S.reshape_like(fn(flat, -1, {}), imp.sym(v), **node.kw())


@_op("Softmax")
def _c_softmax(imp, node):
    return _coerced(imp, node, lambda x, a, kw: _sym().softmax(x, axis=a, **kw), 1)


@_op("LogSoftmax")
def _c_log_softmax(imp, node):
    return _coerced(imp, node, lambda x, a, kw: _sym().log_softmax(x, axis=a, **kw), 1)


@_op("Hardmax")
def _c_hardmax(imp, node):
    S = _sym()

    def hard(x, a, kw):
        n = imp.shape(node.inputs[0])
        depth = None
        if n is not None:
            depth = n[a] if node.opset >= 13 or a != -1 else None
            if node.opset < 13:
                rest = n[int(node.attrs.get("axis", 1)):]
                depth = int(np.prod(rest)) if all(d is not None for d in rest) else None
            elif depth is not None:
                depth = int(depth)
        if depth is None:
            raise MXNetError("Hardmax needs the size of its axis")
        oh = S.one_hot(S.argmax(x, axis=a), depth=depth)
        if node.opset >= 13 and a not in (-1, len(n) - 1):
            perm = list(range(len(n)))
            perm.insert(a % len(n), perm.pop(-1))
            oh = S.transpose(oh, axes=tuple(perm))
        return S.cast(oh, dtype="float32", **kw) if kw else oh
    return _coerced(imp, node, hard, 1)


# --------------------------------------------------------------- nn layers
def _kernel_attrs(imp, node, spatial):
    a = node.attrs
    kernel = tuple(a.get("kernel_shape", ()))
    stride = tuple(a.get("strides", (1,) * spatial))
    dilate = tuple(a.get("dilations", (1,) * spatial))
    begins, ends = _pairs(a.get("pads"), spatial)
    auto = a.get("auto_pad", "NOTSET")
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        s = imp.shape(node.inputs[0])
        if s is None or any(d is None for d in s[2:]):
            raise MXNetError(f"auto_pad={auto} needs the input's spatial shape")
        begins, ends = [], []
        for d, k, st, dl in zip(s[2:], kernel, stride, dilate):
            out = -(-d // st)
            total = max(0, (out - 1) * st + (k - 1) * dl + 1 - d)
            small, big = total // 2, total - total // 2
            begins.append(small if auto == "SAME_UPPER" else big)
            ends.append(big if auto == "SAME_UPPER" else small)
        begins, ends = tuple(begins), tuple(ends)
    elif auto == "VALID":
        begins, ends = (0,) * spatial, (0,) * spatial
    return kernel, stride, dilate, begins, ends


def _spatial(imp, node, weight=None):
    if weight is not None:
        s = imp.shape(weight)
        if s is not None:
            return len(s) - 2
    k = node.attrs.get("kernel_shape")
    if k:
        return len(k)
    r = imp.rank(node.inputs[0])
    if r is None:
        raise MXNetError("the number of spatial axes is not known")
    return r - 2


@_op("Conv")
def _c_conv(imp, node):
    S = _sym()
    x, w = node.inputs[0], node.inputs[1]
    b = node.inp(2)
    wshape = imp.shape(w)
    if wshape is None or any(d is None for d in wshape):
        raise MXNetError("Conv's weight shape must be known (an initializer)")
    spatial = len(wshape) - 2
    if "kernel_shape" not in node.attrs:
        node.attrs["kernel_shape"] = tuple(wshape[2:])
    kernel, stride, dilate, begins, ends = _kernel_attrs(imp, node, spatial)
    data = imp.sym(x)
    pad = begins
    if begins != ends:       # asymmetric: an explicit pad first, as MXNet's importer does
        data = _pad_nd(imp, data, spatial + 2, (0, 0) + tuple(begins), (0, 0) + tuple(ends))
        pad = (0,) * spatial
    group = int(node.attrs.get("group", 1))
    args = [data, imp.sym(w)] + ([imp.sym(b)] if b is not None else [])
    return S.Convolution(*args, kernel=kernel, stride=stride, dilate=dilate, pad=pad,
                         num_filter=int(wshape[0]), num_group=group, no_bias=b is None,
                         **node.kw())


@_op("ConvTranspose")
def _c_deconv(imp, node):
    S = _sym()
    x, w = node.inputs[0], node.inputs[1]
    b = node.inp(2)
    wshape = imp.shape(w)
    if wshape is None or any(d is None for d in wshape):
        raise MXNetError("ConvTranspose's weight shape must be known (an initializer)")
    spatial = len(wshape) - 2
    a = node.attrs
    if a.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        raise _Unsupported(f"ConvTranspose with auto_pad={a['auto_pad']}")
    kernel = tuple(a.get("kernel_shape", wshape[2:]))
    stride = tuple(a.get("strides", (1,) * spatial))
    dilate = tuple(a.get("dilations", (1,) * spatial))
    begins, ends = _pairs(a.get("pads"), spatial)
    adj = tuple(a.get("output_padding", (0,) * spatial))
    group = int(a.get("group", 1))
    kw = {}
    if "output_shape" in a:
        kw["target_shape"] = tuple(a["output_shape"])[-spatial:]
    sym_pad = tuple(min(p, q) for p, q in zip(begins, ends))
    args = [imp.sym(x), imp.sym(w)] + ([imp.sym(b)] if b is not None else [])
    asym = begins != ends
    out = S.Deconvolution(*args, kernel=kernel, stride=stride, dilate=dilate, pad=sym_pad,
                          adj=adj, num_filter=int(wshape[1]) * group, num_group=group,
                          no_bias=b is None, **kw, **({} if asym else node.kw()))
    if asym:                  # crop what the larger side pads beyond the symmetric part
        for i, (p, q) in enumerate(zip(begins, ends)):
            lo, hi = p - sym_pad[i], q - sym_pad[i]
            if lo or hi:
                out = S.slice_axis(out, axis=2 + i, begin=lo, end=(-hi if hi else None))
        out = S.identity(out, **node.kw())
    return out


@_op("FC")
def _c_fc(imp, node):
    w = node.inputs[1]
    s = imp.shape(w)
    args = imp.syms(node)
    return _sym().FullyConnected(*args, num_hidden=int(s[0]), no_bias=len(args) == 2,
                                 **node.kw())


@_op("Gemm")
def _c_gemm(imp, node):
    S = _sym()
    a = node.attrs
    alpha, beta = float(a.get("alpha", 1.0)), float(a.get("beta", 1.0))
    ta, tb = int(a.get("transA", 0)), int(a.get("transB", 0))
    A, B = node.inputs[0], node.inputs[1]
    C = node.inp(2)
    bshape = imp.shape(B)
    cshape = imp.shape(C) if C is not None else None
    if (not ta and alpha == 1.0 and bshape is not None and None not in bshape
            and (C is None or (beta == 1.0 and cshape is not None and len(cshape) == 1))):
        n = bshape[0] if tb else bshape[1]
        if C is None or cshape[0] == n:
            w = imp.sym(B) if tb else S.transpose(imp.sym(B))
            args = [imp.sym(A), w] + ([imp.sym(C)] if C is not None else [])
            return S.FullyConnected(*args, num_hidden=int(n), no_bias=C is None,
                                    flatten=False, **node.kw())
    out = S.dot(imp.sym(A), imp.sym(B), transpose_a=bool(ta), transpose_b=bool(tb))
    if alpha != 1.0:
        out = out * alpha
    if C is None:
        return S.identity(out, **node.kw())
    c = imp.sym(C)
    if beta != 1.0:
        c = c * beta
    return S.broadcast_add(out, c, **node.kw())


@_op("MatMul")
def _c_matmul(imp, node):
    S = _sym()
    A, B = node.inputs
    ra, rb = imp.rank(A), imp.rank(B)
    a, b = imp.sym(A), imp.sym(B)
    if rb == 2 and ra is not None and ra >= 1:
        return S.dot(a, b, **node.kw())
    if ra == 3 and rb == 3:
        return S.batch_dot(a, b, **node.kw())
    if ra is not None and ra == rb and ra >= 2:
        return S.linalg_gemm2(a, b, **node.kw())
    if ra == 1 and rb == 1:
        return S.dot(a, b, **node.kw())
    raise _Unsupported(f"MatMul of ranks {ra} and {rb}")


@_op("BatchNormalization", "SpatialBN")
def _c_batchnorm(imp, node):
    S = _sym()
    a = node.attrs
    if a.get("training_mode", 0):
        raise _Unsupported("BatchNormalization with training_mode=1")
    eps = float(a.get("epsilon", 1e-5))
    momentum = float(a.get("momentum", 0.9))
    # MXNet's importer: fix_gamma follows is_test (inference graphs: gamma is used)
    fix_gamma = not a.get("is_test", 1) if node.opset < 7 else False
    x, scale, bias, mean, var = imp.syms(node)[:5]
    return S.BatchNorm(x, scale, bias, mean, var, eps=eps, momentum=momentum,
                       fix_gamma=bool(fix_gamma), cudnn_off=eps < 1e-5, **node.kw())


@_op("InstanceNormalization")
def _c_instnorm(imp, node):
    return _sym().InstanceNorm(*imp.syms(node), eps=float(node.attrs.get("epsilon", 1e-5)),
                               **node.kw())


@_op("LayerNormalization")
def _c_layernorm(imp, node):
    S = _sym()
    x, scale = node.inputs[0], node.inputs[1]
    bias = node.inp(2)
    axis = int(node.attrs.get("axis", -1))
    r = imp.rank(x)
    sshape = imp.shape(scale)
    if r is not None:
        axis %= r
    if r is None or axis != r - 1:
        if not (sshape is not None and len(sshape) == 1 and r is not None and axis == r - 1):
            raise _Unsupported(f"LayerNormalization over axes {axis}.. (MXNet's LayerNorm "
                               "normalizes one axis)")
    if bias is None:
        zeros = np.zeros(sshape, dtype=np.float32)
        bias = _Val(f"{node.name or node.outputs[0]}_beta", const=zeros, param=True)
    return S.LayerNorm(imp.sym(x), imp.sym(scale), imp.sym(bias), axis=-1,
                       eps=float(node.attrs.get("epsilon", 1e-5)), **node.kw())


@_op("LRN")
def _c_lrn(imp, node):
    a = node.attrs
    return _sym().LRN(imp.sym(node.inputs[0]), alpha=float(a.get("alpha", 1e-4)),
                      beta=float(a.get("beta", 0.75)), knorm=float(a.get("bias", 1.0)),
                      nsize=int(a["size"]), **node.kw())


@_op("Dropout")
def _c_dropout(imp, node):
    a = node.attrs
    p = float(a.get("ratio", 0.5))
    if node.opset >= 12 and node.inp(1) is not None:
        p = float(imp.const(node.inputs[1], "Dropout's ratio").reshape(-1)[0])
    mode = "always" if a.get("is_test", 1) == 0 and node.opset < 7 else "training"
    return [_sym().Dropout(imp.sym(node.inputs[0]), p=p, mode=mode, **node.kw())]


def _pool(imp, node, pool_type):
    S = _sym()
    a = node.attrs
    spatial = _spatial(imp, node)
    kernel, stride, dilate, begins, ends = _kernel_attrs(imp, node, spatial)
    if any(d != 1 for d in dilate):
        raise _Unsupported("pooling with dilations (MXNet's Pooling has none)")
    if a.get("storage_order", 0):
        raise _Unsupported("MaxPool with storage_order=1")
    kw = {}
    if pool_type == "avg":
        kw["count_include_pad"] = bool(a.get("count_include_pad", 0))
    if pool_type == "lp":
        kw["p_value"] = int(a.get("p", 2))
    conv = "full" if a.get("ceil_mode", 0) else "valid"
    data = imp.sym(node.inputs[0])
    pad = begins
    if begins != ends:
        if pool_type == "avg" and not kw["count_include_pad"]:
            raise _Unsupported("AveragePool with asymmetric pads and count_include_pad=0")
        mode = "edge" if pool_type == "max" else "constant"
        data = _pad_nd(imp, data, spatial + 2, (0, 0) + tuple(begins), (0, 0) + tuple(ends),
                       mode=mode)
        pad = (0,) * spatial
    return S.Pooling(data, kernel=kernel, stride=stride, pad=pad, pool_type=pool_type,
                     pooling_convention=conv, **kw, **node.kw())


@_op("MaxPool")
def _c_maxpool(imp, node):
    return [_pool(imp, node, "max")]


@_op("AveragePool")
def _c_avgpool(imp, node):
    return _pool(imp, node, "avg")


@_op("LpPool")
def _c_lppool(imp, node):
    return _pool(imp, node, "lp")


@_op("GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool")
def _c_global_pool(imp, node):
    kind = {"GlobalAveragePool": "avg", "GlobalMaxPool": "max", "GlobalLpPool": "lp"}[node.op]
    r = imp.rank(node.inputs[0])
    spatial = r - 2 if r is not None else 2
    kw = {"p_value": int(node.attrs.get("p", 2))} if kind == "lp" else {}
    return _sym().Pooling(imp.sym(node.inputs[0]), kernel=(1,) * spatial, global_pool=True,
                          pool_type=kind, **kw, **node.kw())


@_op("MaxRoiPool")
def _c_roipool(imp, node):
    a = node.attrs
    return _sym().ROIPooling(*imp.syms(node), pooled_size=tuple(a["pooled_shape"]),
                             spatial_scale=float(a.get("spatial_scale", 1.0)), **node.kw())


@_op("Pad")
def _c_pad(imp, node):
    a = node.attrs
    mode = a.get("mode", "constant")
    if mode == "wrap":
        raise _Unsupported("Pad with mode='wrap'")
    x = node.inputs[0]
    r = imp.need_rank(x, "Pad")
    if node.opset < 11:
        pads = a.get("pads", a.get("paddings"))
        value = float(a.get("value", 0.0))
    else:
        pads = imp.ints(node.inputs[1], "Pad's pads")
        value = 0.0
        if node.inp(2) is not None:
            value = float(imp.const(node.inputs[2], "Pad's constant_value").reshape(-1)[0])
        if node.inp(3) is not None:      # opset 18: the axes the pads are for
            axes = [ax % r for ax in imp.ints(node.inputs[3], "Pad's axes")]
            n = len(axes)
            full_b, full_e = [0] * r, [0] * r
            for i, ax in enumerate(axes):
                full_b[ax], full_e[ax] = pads[i], pads[n + i]
            pads = tuple(full_b) + tuple(full_e)
    begins, ends = _pairs(pads, r)
    return _pad_nd(imp, imp.sym(x), r, begins, ends, mode=mode, value=value, name=node.name)


# --------------------------------------------------------------- shape & layout
def _reshape_target(imp, node, x, shape):
    """The reshape target as MXNet reshape codes; dimensions known only at run time become
    0 (the same dimension of the input) or -1 (the single inferred one)."""
    if shape.dtype != object:
        shape = [int(d) for d in shape.reshape(-1)]
        if node.attrs.get("allowzero", 0) and 0 in shape:
            raise _Unsupported("Reshape with allowzero=1 and a zero in the shape")
        return tuple(shape)
    out = []
    for i, d in enumerate(shape.reshape(-1)):
        if isinstance(d, _Dyn):
            if d.src == x.name and d.axis == i:
                out.append(0)
            else:
                out.append(None)
        else:
            out.append(int(d))
    unknown = [i for i, d in enumerate(out) if d is None]
    if len(unknown) > 1 or (unknown and -1 in out):
        raise MXNetError("Reshape's target shape holds several dimensions known only when the "
                         "model runs; export the model with fixed input shapes")
    if unknown:
        out[unknown[0]] = -1
    return tuple(out)


@_op("Reshape")
def _c_reshape(imp, node):
    x = node.inputs[0]
    if node.opset < 5:
        shape = np.asarray(node.attrs["shape"], dtype=np.int64)
    else:
        shape = imp.const(node.inputs[1], "Reshape's shape")
    return _sym().reshape(imp.sym(x), shape=_reshape_target(imp, node, x, shape), **node.kw())


@_op("Flatten")
def _c_flatten(imp, node):
    axis = int(node.attrs.get("axis", 1))
    if axis == 1:
        return _sym().Flatten(imp.sym(node.inputs[0]), **node.kw())
    return _sym().identity(_flatten2d(imp, node.inputs[0], axis), **node.kw())


@_op("Transpose")
def _c_transpose(imp, node):
    perm = node.attrs.get("perm")
    kw = {"axes": tuple(int(p) for p in perm)} if perm is not None else {}
    return _sym().transpose(imp.sym(node.inputs[0]), **kw, **node.kw())


@_op("Squeeze")
def _c_squeeze(imp, node):
    if node.opset < 13:
        axes = node.attrs.get("axes")
    else:
        axes = imp.ints(node.inputs[1], "Squeeze's axes") if node.inp(1) is not None else None
    kw = {"axis": tuple(int(a) for a in axes)} if axes else {}
    return _sym().squeeze(imp.sym(node.inputs[0]), **kw, **node.kw())


@_op("Unsqueeze")
def _c_unsqueeze(imp, node):
    S = _sym()
    axes = node.attrs.get("axes") if node.opset < 13 else imp.ints(node.inputs[1],
                                                                   "Unsqueeze's axes")
    axes = [int(a) for a in axes]
    if any(a < 0 for a in axes):
        r = imp.need_rank(node.inputs[0], "Unsqueeze with negative axes") + len(axes)
        axes = [a % r for a in axes]
    out = imp.sym(node.inputs[0])
    axes = sorted(axes)
    for i, a in enumerate(axes):
        out = S.expand_dims(out, axis=a, **(node.kw() if i == len(axes) - 1 else {}))
    return out


@_op("Concat")
def _c_concat(imp, node):
    xs = [imp.sym(v) for v in node.inputs if v is not None]
    return _sym().concat(*xs, dim=int(node.attrs.get("axis", 1)), **node.kw())


@_op("Split")
def _c_split(imp, node):
    S = _sym()
    a = node.attrs
    axis = int(a.get("axis", 0))
    n = len(node.outputs)
    if node.opset < 13:
        sizes = a.get("split")
    else:
        sizes = imp.ints(node.inputs[1], "Split's split") if node.inp(1) is not None else None
    x = imp.sym(node.inputs[0])
    if not sizes or len(set(sizes)) == 1:
        if sizes:
            n = len(sizes)
        dim = (imp.shape(node.inputs[0]) or [None] * (axis + 1))[axis]
        if not sizes and dim is not None and dim % n:
            # opset 18 num_outputs: the last part is smaller (ceil-sized parts)
            step = -(-dim // n)
            sizes = [min(step, dim - i * step) for i in range(n)]
        else:
            out = S.split(x, num_outputs=n, axis=axis, **node.kw())
            return [out[i] for i in range(n)] if n > 1 else [out]
    outs, start = [], 0
    for i, size in enumerate(sizes):
        outs.append(S.slice_axis(x, axis=axis, begin=start, end=start + int(size)))
        start += int(size)
    return outs


def _slice_args(imp, node, rank):
    if node.opset < 10:
        a = node.attrs
        starts, ends = list(a["starts"]), list(a["ends"])
        axes = list(a.get("axes", range(len(starts))))
        steps = [1] * len(starts)
    else:
        starts = list(imp.ints(node.inputs[1], "Slice's starts"))
        ends = list(imp.ints(node.inputs[2], "Slice's ends"))
        axes = (list(imp.ints(node.inputs[3], "Slice's axes")) if node.inp(3) is not None
                else list(range(len(starts))))
        steps = (list(imp.ints(node.inputs[4], "Slice's steps")) if node.inp(4) is not None
                 else [1] * len(starts))
    if rank is not None:
        axes = [a % rank for a in axes]
    elif any(a < 0 for a in axes):
        raise MXNetError("Slice with negative axes needs the input's rank")

    def clamp(v, step, is_end):
        if v >= _BIG or v <= -_BIG or abs(v) >= 2 ** 31 - 1:
            return None
        return v
    starts = [clamp(s, st, False) for s, st in zip(starts, steps)]
    ends = [clamp(e, st, True) for e, st in zip(ends, steps)]
    return starts, ends, axes, steps


@_op("Slice")
def _c_slice(imp, node):
    S = _sym()
    x = node.inputs[0]
    rank = imp.rank(x)
    starts, ends, axes, steps = _slice_args(imp, node, rank)
    shape = imp.shape(x)
    out = imp.sym(x)
    if all(st == 1 for st in steps):
        for i, (s, e, ax) in enumerate(zip(starts, ends, axes)):
            dim = shape[ax] if shape is not None else None
            if dim is not None:        # ONNX clamps, MXNet's slice_axis does not
                if e is not None and e >= dim:
                    e = None
                if s is not None and s < -dim:
                    s = 0
                if s is not None and s >= dim:
                    s = dim
            out = S.slice_axis(out, axis=ax, begin=s or 0, end=e,
                               **(node.kw() if i == len(axes) - 1 else {}))
        return out
    if rank is None:
        raise MXNetError("Slice with steps needs the input's rank")
    begin, end, step = [None] * rank, [None] * rank, [None] * rank
    for s, e, ax, st in zip(starts, ends, axes, steps):
        begin[ax], end[ax], step[ax] = s, e, st
    return S.slice(out, begin=tuple(begin), end=tuple(end), step=tuple(step), **node.kw())


@_op("Gather")
def _c_gather(imp, node):
    S = _sym()
    data, idx = node.inputs
    axis = int(node.attrs.get("axis", 0))
    if idx.const is not None and idx.const.ndim == 0 and idx.const.dtype != object:
        # one index: a slice of that axis, dropped (no index parameter)
        r = imp.need_rank(data, "Gather with one index")
        axis %= r
        i = int(idx.const)
        end = i + 1 if i != -1 else None
        out = S.slice_axis(imp.sym(data), axis=axis, begin=i, end=end)
        return S.squeeze(out, axis=axis, **node.kw())
    return S.take(imp.sym(data), imp.sym(idx), axis=axis, mode="wrap", **node.kw())


@_op("Shape")
def _c_shape(imp, node):
    if "start" in node.attrs or "end" in node.attrs:
        raise _Unsupported("Shape with start/end on a tensor of unknown shape")
    return _sym().shape_array(imp.sym(node.inputs[0]), **node.kw())


@_op("Size")
def _c_size(imp, node):
    return _sym().size_array(imp.sym(node.inputs[0]), **node.kw())


@_op("Expand")
def _c_expand(imp, node):
    S = _sym()
    x = node.inputs[0]
    target = imp.ints(node.inputs[1], "Expand's shape")
    s = imp.shape(x)
    if s is None:
        raise MXNetError("Expand needs the input's rank")
    rank = max(len(s), len(target))
    s2 = (1,) * (rank - len(s)) + tuple(s)
    t2 = (1,) * (rank - len(target)) + tuple(target)
    out_shape = tuple(0 if (ti == 1 and si != 1) else ti for si, ti in zip(s2, t2))
    data = imp.sym(x)
    if rank > len(s):
        data = S.reshape(data, shape=(1,) * (rank - len(s)) + tuple(
            0 if d is None else d for d in s))
    return S.broadcast_to(data, shape=out_shape, **node.kw())


@_op("Tile")
def _c_tile(imp, node):
    return _sym().tile(imp.sym(node.inputs[0]), reps=imp.ints(node.inputs[1], "Tile's repeats"),
                       **node.kw())


@_op("DepthToSpace", "SpaceToDepth")
def _c_depth_space(imp, node):
    if node.attrs.get("mode", "DCR") != "DCR":
        raise _Unsupported(f"{node.op} with mode={node.attrs['mode']}")
    fn = _sym().depth_to_space if node.op == "DepthToSpace" else _sym().space_to_depth
    return fn(imp.sym(node.inputs[0]), block_size=int(node.attrs["blocksize"]), **node.kw())


@_op("Upsample", "Resize")
def _c_resize(imp, node):
    S = _sym()
    a = node.attrs
    x = node.inputs[0]
    mode = a.get("mode", "nearest")
    s = imp.shape(x)
    if s is None or len(s) != 4:
        raise _Unsupported(f"{node.op} of a tensor that is not known to be 4-D (NCHW)")
    if node.op == "Upsample" and node.opset < 9:
        scales = tuple(a["scales"])
    elif node.op == "Upsample" or node.opset == 10:
        scales = tuple(float(v) for v in imp.const(node.inputs[1], "scales").reshape(-1))
    else:
        sc, sz = node.inp(2), node.inp(3)
        if sc is not None and sc.const is not None and sc.const.size:
            scales = tuple(float(v) for v in sc.const.reshape(-1))
        elif sz is not None:
            sizes = imp.ints(sz, "Resize's sizes")
            if s[2] is None or s[3] is None:
                raise MXNetError("Resize to sizes needs the input's spatial shape")
            scales = (1.0, 1.0, sizes[2] / s[2], sizes[3] / s[3])
        else:
            raise MXNetError("Resize needs scales or sizes")
    if scales[0] != 1 or scales[1] != 1:
        raise _Unsupported(f"resizing the batch or channel axes (scales {scales})")
    ctm = a.get("coordinate_transformation_mode", "half_pixel" if node.op == "Resize"
                else "asymmetric")
    if mode == "nearest":
        if scales[2] != scales[3] or scales[2] != int(scales[2]) or scales[2] < 1:
            raise _Unsupported(f"nearest resize by scales {scales[2:]} (MXNet's UpSampling "
                               "takes one integer scale)")
        if node.op == "Resize" and ctm not in ("asymmetric", "half_pixel",
                                               "pytorch_half_pixel", "tf_half_pixel_for_nn"):
            raise _Unsupported(f"nearest Resize with coordinate_transformation_mode={ctm}")
        return S.UpSampling(imp.sym(x), scale=int(scales[2]), sample_type="nearest",
                            num_args=1, **node.kw())
    if mode in ("linear", "bilinear"):
        if ctm not in ("align_corners", "half_pixel", "pytorch_half_pixel"):
            raise _Unsupported(f"linear Resize with coordinate_transformation_mode={ctm}")
        if s[2] is None or s[3] is None:
            raise MXNetError("linear Resize needs the input's spatial shape")
        h, w = int(round(s[2] * scales[2])), int(round(s[3] * scales[3]))
        return S.contrib.BilinearResize2D(imp.sym(x), height=h, width=w,
                                          align_corners=ctm == "align_corners", **node.kw())
    raise _Unsupported(f"{node.op} mode={mode}")


# --------------------------------------------------------------- reductions
_REDUCE = {"ReduceMax": "max", "ReduceMean": "mean", "ReduceMin": "min", "ReduceSum": "sum",
           "ReduceProd": "prod"}


def _reduce_axes(imp, node):
    a = node.attrs
    new_style = node.opset >= 18 or (node.op == "ReduceSum" and node.opset >= 13)
    if new_style:
        axes = imp.ints(node.inputs[1], "the reduction axes") if node.inp(1) is not None else None
        if not axes:
            axes = None
            if a.get("noop_with_empty_axes", 0):
                return "noop"
    else:
        axes = a.get("axes")
        axes = tuple(int(x) for x in axes) if axes else None
    return axes


@_op("ReduceMax", "ReduceMean", "ReduceMin", "ReduceSum", "ReduceProd", "ReduceL1",
     "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare")
def _c_reduce(imp, node):
    S = _sym()
    axes = _reduce_axes(imp, node)
    x = imp.sym(node.inputs[0])
    if axes == "noop":
        return S.identity(x, **node.kw())
    keep = bool(node.attrs.get("keepdims", 1))
    kw = {"axis": tuple(axes) if axes is not None else None, "keepdims": keep}
    if axes is None:
        kw.pop("axis")
    op = node.op
    if op in _REDUCE:
        return getattr(S, _REDUCE[op])(x, **kw, **node.kw())
    if op in ("ReduceL1", "ReduceL2"):
        return S.norm(x, ord=1 if op == "ReduceL1" else 2, **kw, **node.kw())
    if op == "ReduceLogSum":
        return S.log(S.sum(x, **kw), **node.kw())
    if op == "ReduceLogSumExp":
        return S.log(S.sum(S.exp(x), **kw), **node.kw())
    return S.sum(S.square(x), **kw, **node.kw())


@_op("ArgMax", "ArgMin")
def _c_argmax(imp, node):
    S = _sym()
    if node.attrs.get("select_last_index", 0):
        raise _Unsupported(f"{node.op} with select_last_index=1")
    fn = S.argmax if node.op == "ArgMax" else S.argmin
    out = fn(imp.sym(node.inputs[0]), axis=int(node.attrs.get("axis", 0)),
             keepdims=bool(node.attrs.get("keepdims", 1)))
    return S.cast(out, dtype="int64", **node.kw())


@_op("LpNormalization")
def _c_lpnorm(imp, node):
    S = _sym()
    x = imp.sym(node.inputs[0])
    p = int(node.attrs.get("p", 2))
    n = S.norm(x, ord=p, axis=int(node.attrs.get("axis", -1)), keepdims=True)
    return S.broadcast_div(x, n, **node.kw())


@_op("TopK")
def _c_topk(imp, node):
    a = node.attrs
    k = int(a["k"]) if node.opset < 10 else imp.ints(node.inputs[1], "TopK's K")[0]
    out = _sym().topk(imp.sym(node.inputs[0]), axis=int(a.get("axis", -1)), k=k,
                      ret_typ="both", is_ascend=not a.get("largest", 1), dtype="int64",
                      **node.kw())
    return [out[0], out[1]]


@_op("CumSum")
def _c_cumsum(imp, node):
    if node.attrs.get("exclusive", 0) or node.attrs.get("reverse", 0):
        raise _Unsupported("CumSum with exclusive or reverse")
    axis = imp.ints(node.inputs[1], "CumSum's axis")[0]
    return _sym().cumsum(imp.sym(node.inputs[0]), axis=axis, **node.kw())


# --------------------------------------------------------------- recurrent layers
# ONNX's gate order -> MXNet's fused RNN's (LSTM: iofc -> ifco; GRU: zrh -> rzh)
_RNN_GATES = {"LSTM": (4, (0, 2, 3, 1), "lstm"), "GRU": (3, (1, 0, 2), "gru"),
              "RNN": (1, (0,), None)}


@_op("LSTM", "GRU", "RNN")
def _c_rnn(imp, node):
    S = _sym()
    a = node.attrs
    ngates, order, mode = _RNN_GATES[node.op]
    hidden = int(a["hidden_size"])
    direction = a.get("direction", "forward")
    ndir = 2 if direction == "bidirectional" else 1
    acts = tuple(x.lower() for x in a.get("activations", ()))
    if node.op == "RNN":
        act = (acts or ("tanh",))[0]
        if any(x != act for x in acts) or act not in ("tanh", "relu"):
            raise _Unsupported(f"RNN with activations {a.get('activations')}")
        mode = "rnn_" + act
    elif acts and acts != ("sigmoid", "tanh", "tanh") * ndir and acts != (
            "sigmoid", "tanh") * ndir:
        raise _Unsupported(f"{node.op} with activations {a.get('activations')}")
    if "clip" in a:
        raise _Unsupported(f"{node.op} with clip")
    if a.get("input_forget", 0):
        raise _Unsupported("LSTM with input_forget=1")
    if node.op == "GRU" and not a.get("linear_before_reset", 0):
        raise _Unsupported("GRU with linear_before_reset=0 (MXNet's GRU applies the reset "
                           "gate after the recurrent product)")
    for i, what in ((4, "sequence_lens"), (7, "peepholes P")):
        if node.inp(i) is not None:
            raise _Unsupported(f"{node.op} with {what}")
    layout = int(a.get("layout", 0))
    x = imp.sym(node.inputs[0])
    if layout:
        x = S.transpose(x, axes=(1, 0, 2))
    if direction == "reverse":
        x = S.reverse(x, axis=0)
    W, R = imp.sym(node.inputs[1]), imp.sym(node.inputs[2])
    B = imp.sym(node.inp(3)) if node.inp(3) is not None else None

    def regate(mat, d, parts):
        m = S.reshape(S.slice_axis(mat, axis=0, begin=d, end=d + 1), shape=(parts, -1))
        chunks = S.split(m, num_outputs=parts, axis=0) if parts > 1 else [m]
        if parts == ngates:
            chunks = [chunks[k] for k in order]
        else:           # a bias: the input and the recurrent halves, each regated
            chunks = ([chunks[k] for k in order]
                      + [chunks[ngates + k] for k in order])
        return S.reshape(S.concat(*chunks, dim=0) if len(chunks) > 1 else chunks[0],
                         shape=(-1,))
    weights, biases = [], []
    for d in range(ndir):
        weights += [regate(W, d, ngates), regate(R, d, ngates)]
        if B is not None:
            biases.append(regate(B, d, 2 * ngates))
    if B is None:
        biases = [S.zeros(shape=(ndir * 2 * ngates * hidden,))]
    params = S.concat(*(weights + biases), dim=0)

    def state(i):
        v = node.inp(i)
        if v is not None:
            h = imp.sym(v)
            return S.transpose(h, axes=(1, 0, 2)) if layout else h
        first = S.slice_axis(x, axis=0, begin=0, end=1)
        z = S.zeros_like(S.sum(first, axis=2, keepdims=True))
        return S.broadcast_to(z, shape=(ndir, 0, hidden))
    kw = {"state_cell": state(6)} if mode == "lstm" else {}
    out = S.RNN(x, params, state(5), state_size=hidden, num_layers=1,
                bidirectional=ndir == 2, mode=mode, state_outputs=True, **kw)
    y = out[0]
    if direction == "reverse":
        y = S.reverse(y, axis=0)
    y = S.transpose(S.reshape(y, shape=(0, 0, ndir, hidden)),
                    axes=(1, 0, 2, 3) if layout else (0, 2, 1, 3))
    y = S.identity(y, **node.kw())
    states = [out[1]] + ([out[2]] if mode == "lstm" else [])
    if layout:
        states = [S.transpose(h, axes=(1, 0, 2)) for h in states]
    return [y] + states


# --------------------------------------------------------------- random
@_op("RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike")
def _c_random(imp, node):
    S = _sym()
    a = node.attrs
    like = node.op.endswith("Like")
    if like:
        dt = _np_dtype(a["dtype"]) if "dtype" in a else None
        x = imp.sym(node.inputs[0])
        if node.op == "RandomUniformLike":
            out = S.random.uniform_like(x, low=float(a.get("low", 0.0)),
                                        high=float(a.get("high", 1.0)))
        else:
            out = S.random.normal_like(x, loc=float(a.get("mean", 0.0)),
                                       scale=float(a.get("scale", 1.0)))
        return S.cast(out, dtype=dt, **node.kw()) if dt is not None else S.identity(
            out, **node.kw())
    dt = _np_dtype(a.get("dtype", 1))
    shape = tuple(int(d) for d in a["shape"])
    if node.op == "RandomUniform":
        return S.random_uniform(low=float(a.get("low", 0.0)), high=float(a.get("high", 1.0)),
                                shape=shape, dtype=dt, **node.kw())
    return S.random_normal(loc=float(a.get("mean", 0.0)), scale=float(a.get("scale", 1.0)),
                           shape=shape, dtype=dt, **node.kw())


@_op("Multinomial")
def _c_multinomial(imp, node):
    S = _sym()
    a = node.attrs
    probs = S.softmax(imp.sym(node.inputs[0]), axis=-1)   # ONNX gives log-probabilities
    return S.sample_multinomial(probs, shape=int(a.get("sample_size", 1)),
                                dtype=_np_dtype(a.get("dtype", 6)), **node.kw())


# ----------------------------------------------------------------------------- API
def supported_operators():
    """The ONNX operator types (default domain) neogluon's importer translates."""
    return sorted(set(_CONVERT) | set(_FOLD))


def _import(model_file, what):
    model, path = _load(model_file, what)
    return _run_importer(model, path, what)


def _run_importer(model, path, what):
    """The importer's result; an error on a malformed model is an MXNetError naming the
    file (the loaders' error contract)."""
    from .._loaderr import named
    try:
        return _Importer(model, path, what).run()
    except Exception as err:  # noqa: BLE001 - a malformed graph can fail anywhere
        if isinstance(err, OnnxMissingError) or path == "<ModelProto>":
            raise
        raise named(err, path, "ONNX model", what) from err


def import_model(model_file):
    """Import an ONNX model file into a symbol and its parameters.

    Parameters
    ----------
    model_file : str
        Path of the ONNX model file.

    Returns
    -------
    sym : Symbol
        The graph, built from neogluon's ``mx.sym`` operators.
    arg_params : dict of str to NDArray
        The initializers the graph uses as parameters.
    aux_params : dict of str to NDArray
        The auxiliary states (BatchNorm's running mean and variance).
    """
    return _import(model_file, "import_model")


def get_model_metadata(model_file):
    """The names and shapes of an ONNX model's inputs and outputs.

    Returns ``{'input_tensor_data': [(name, shape, elem_type)...],
    'output_tensor_data': [(name, shape)...]}`` as MXNet 1.9.1 does: inputs exclude
    initializers, a dimension without a fixed size is 0, ``elem_type`` is ONNX's
    ``TensorProto`` data type number (1 = float32).
    """
    model, path = _load(model_file, "get_model_metadata")
    try:
        return _metadata(model.graph)
    except Exception as err:  # noqa: BLE001 - the contract: an MXNetError naming the file
        from .._loaderr import named
        raise named(err, path, "ONNX model", "get_model_metadata") from err


def import_to_gluon(model_file, ctx):
    """Import an ONNX model file into a ``gluon.SymbolBlock`` with its parameters loaded
    on ``ctx`` (a Context or a list of them)."""
    from ..gluon import SymbolBlock
    from .. import symbol
    what = "import_to_gluon"
    model, path = _load(model_file, what)
    sym, arg_params, aux_params = _run_importer(model, path, what)
    names = [t[0] for t in _metadata(model.graph)["input_tensor_data"]]
    names = [n for n in names if n in set(sym.list_inputs())] or names
    net = SymbolBlock(outputs=sym, inputs=[symbol.var(n) for n in names])
    params = net.collect_params()
    for src in (arg_params, aux_params):
        for name, value in src.items():
            if name in params:
                params[name].shape = value.shape
                params[name]._load_init(value, ctx, cast_dtype=True, dtype_source="saved")
    return net
