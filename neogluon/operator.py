"""``mx.operator``: operators written in Python (MXNet 1.x's CustomOp API).

    class Sqr(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            self.assign(out_data[0], req[0], in_data[0] * in_data[0])
        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            self.assign(in_grad[0], req[0], 2 * in_data[0] * out_grad[0])

    @mx.operator.register("sqr")
    class SqrProp(mx.operator.CustomOpProp):
        def create_operator(self, ctx, shapes, dtypes):
            return Sqr()

    y = mx.nd.Custom(x, op_type="sqr")          # or F.Custom(...) in hybrid_forward

How it runs here: ``nd.Custom`` builds the registered property class with the keyword
arguments as strings (as MXNet does), asks it for the output shapes and dtypes, allocates the
outputs and calls the operator's ``forward`` on NDArrays with autograd paused. The call is one
``torch.autograd.Function``: when autograd records, torch's backward pass calls the
operator's ``backward`` with ``req`` 'write' for the inputs that need a gradient and 'null' for
the others. Auxiliary states are passed to ``forward``/``backward`` as the arrays given, so an
operator updates them in place, as in MXNet.
"""
from __future__ import annotations

import threading

import numpy as np
import torch

from .base import MXNetError
from . import profiler as _profiler

__all__ = ["CustomOp", "CustomOpProp", "register", "Custom", "get_all_registered_operators",
           "get_operator_arguments", "OperatorArguments", "PythonOp", "NumpyOp", "NDArrayOp",
           # (MXNet's module has no __all__: programs get these from its star import)
           "ctypes", "NDArrayHandle", "NDArray", "py_str"]

# MXNet's dtype ids, which ``create_operator`` receives (``in_dtypes``).
_NP_TO_MX_ID = {np.dtype("float32"): 0, np.dtype("float64"): 1, np.dtype("float16"): 2,
                np.dtype("uint8"): 3, np.dtype("int32"): 4, np.dtype("int8"): 5,
                np.dtype("int64"): 6, np.dtype("bool"): 7}


class CustomOp:
    """Base class of operators implemented in Python."""

    def __init__(self):
        pass

    def forward(self, is_train, req, in_data, out_data, aux):
        """Compute ``out_data`` from ``in_data`` (write them with :meth:`assign`)."""

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        """Compute ``in_grad`` from ``out_grad`` (write them with :meth:`assign`)."""

    def assign(self, dst, req, src):
        """Store ``src`` into ``dst`` as ``req`` says: 'null' (nothing), 'write'/'inplace'
        (overwrite) or 'add' (accumulate)."""
        if req == "null":
            return
        if req in ("write", "inplace"):
            dst[:] = src
        elif req == "add":
            dst[:] += src
        else:
            raise MXNetError(f"CustomOp.assign: unknown req {req!r} (expected 'null', 'write', "
                             "'inplace' or 'add')")


class CustomOpProp:
    """Base class of the property classes that describe a :class:`CustomOp`.

    Parameters
    ----------
    need_top_grad : bool
        Whether ``backward`` uses the gradient of the outputs (False for loss layers).
    """

    def __init__(self, need_top_grad=True):
        self.need_top_grad_ = need_top_grad

    def infer_shape(self, in_shape):
        """(input shapes, output shapes, aux shapes); by default every output has the first
        input's shape and there are no auxiliary states (as in MXNet: an operator with aux
        states overrides this)."""
        return in_shape, (in_shape[0],) * len(self.list_outputs()), ()

    def infer_type(self, in_type):
        """(input dtypes, output dtypes, aux dtypes); by default the first input's dtype."""
        return (in_type, [in_type[0]] * len(self.list_outputs()),
                [in_type[0]] * len(self.list_auxiliary_states()))

    def infer_storage_type(self, in_stype):
        """Storage types; only 'default' is supported."""
        for i, stype in enumerate(in_stype):
            if stype != "default":
                raise MXNetError(f"Custom: input {i} has storage type {stype!r}; the default "
                                 "infer_storage_type supports only 'default'")
        return (in_stype, ["default"] * len(self.list_outputs()),
                ["default"] * len(self.list_auxiliary_states()))

    def infer_storage_type_backward(self, ograd_stype, in_stype, out_stype, igrad_stype,
                                    aux_stype):
        """Storage types of the backward pass; only 'default' is supported."""
        n = lambda s: ["default"] * len(s)  # noqa: E731
        return n(ograd_stype), n(in_stype), n(out_stype), n(igrad_stype), n(aux_stype)

    def list_outputs(self):
        """Names of the outputs (default ``['output']``)."""
        return ["output"]

    def list_arguments(self):
        """Names of the inputs (default ``['data']``)."""
        return ["data"]

    def list_auxiliary_states(self):
        """Names of the auxiliary states (default none)."""
        return []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """The arrays ``backward`` needs (MXNet uses it to free memory early)."""
        deps = []
        if self.need_top_grad_:
            deps.extend(out_grad)
        deps.extend(in_data)
        deps.extend(out_data)
        return deps

    def create_operator(self, ctx, in_shapes, in_dtypes):
        """The :class:`CustomOp` that computes this operator."""
        return CustomOp()


_registry_lock = threading.Lock()
_REGISTRY: dict = {}


def register(reg_name):
    """Class decorator: register a :class:`CustomOpProp` subclass as ``op_type=reg_name``."""
    if not isinstance(reg_name, str) or not reg_name:
        raise MXNetError(f"operator.register: the name must be a non-empty string, "
                         f"got {reg_name!r}")

    def do_register(prop_cls):
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise MXNetError(f"operator.register({reg_name!r}): {prop_cls!r} is not a "
                             "subclass of CustomOpProp")
        with _registry_lock:
            _REGISTRY[reg_name] = prop_cls
        return prop_cls
    return do_register


def get_all_registered_operators():
    """Names of the registered operators, as MXNet lists them: every operator of
    MXNet 1.9.1's table (``Activation``, ``Convolution``, ``_contrib_box_nms`` ...) and their
    aliases (``concat``, ``flatten`` ...). Custom operators run through the single ``Custom``
    operator, as in MXNet, so their ``register`` names are not listed.

    Returns
    -------
    list of str
    """
    from .symbol.symbol import _TABLE
    names = set(_TABLE["ops"]) | set(_TABLE["aliases"])
    return sorted(names)


from ._op_arguments import OperatorArguments, get_operator_arguments  # noqa: E402,F401


# ---------------------------------------------------------------------------- running one
def _as_list(x, what, op_type):
    try:
        return list(x)
    except TypeError:
        raise MXNetError(f"Custom {op_type!r}: {what} must return a list, got "
                         f"{type(x).__name__}") from None


def _split3(ret, what, op_type, n_aux):
    ret = _as_list(ret, what, op_type)
    if len(ret) == 2:
        return list(ret[0]), list(ret[1]), []
    if len(ret) == 3:
        return list(ret[0]), list(ret[1]), list(ret[2])
    raise MXNetError(f"Custom {op_type!r}: {what} must return 2 or 3 lists, got {len(ret)}")


def _check_count(got, want, what, op_type):
    if len(got) != want:
        raise MXNetError(f"Custom {op_type!r}: expecting {want} entries in the {what} returned "
                         f"by the property class, got {len(got)}")


class _user_code:
    """Errors raised by the user's operator become MXNetError naming the operator and method
    (MXNet reports them as 'Error in CustomOp.forward')."""

    def __init__(self, op_type, where):
        self.op_type, self.where = op_type, where

    def __enter__(self):
        return self

    def __exit__(self, etype, e, tb):
        if e is None or isinstance(e, MXNetError) or not isinstance(e, Exception):
            return False
        raise MXNetError(f"Error in {self.where} of custom operator {self.op_type!r}: "
                         f"{etype.__name__}: {e}") from e


class _CustomFunction(torch.autograd.Function):
    """One custom operator call: forward and backward run the user's CustomOp."""

    @staticmethod
    def forward(fctx, run, *in_tensors):
        outs = run.forward(in_tensors)
        fctx.run = run
        fctx.save_for_backward(*in_tensors, *outs)
        fctx.n_in = len(in_tensors)
        diff = [o for o in outs if not o.is_floating_point()]
        if diff:
            fctx.mark_non_differentiable(*diff)
        return tuple(outs)

    @staticmethod
    def backward(fctx, *out_grads):
        saved = fctx.saved_tensors
        ins, outs = saved[:fctx.n_in], saved[fctx.n_in:]
        need = fctx.needs_input_grad[1:]
        # MXNet writes an input's gradient straight into a variable marked grad_req='add'
        # and so tells the operator 'add'; the buffer here starts at zero, torch accumulates.
        need = [("add" if a else "write") if n else "null"
                for n, a in zip(need, fctx.run.add_req)]
        grads = fctx.run.backward(ins, outs, out_grads, need)
        return (None,) + tuple(grads)


class _Run:
    def __init__(self, op_type, op, ctx, out_specs, aux, train):
        self.op_type, self.op, self.ctx = op_type, op, ctx
        self.out_specs, self.aux, self.train = out_specs, aux, train

    def _wrap(self, t):
        from .ndarray.ndarray import _new
        return _new(t, self.ctx)

    def forward(self, in_tensors):
        from . import autograd
        in_data = [self._wrap(t.detach()) for t in in_tensors]
        out_data = [self._wrap(torch.zeros(shape, dtype=dtype, device=self.ctx.torch_device))
                    for shape, dtype in self.out_specs]
        with autograd.pause(train_mode=self.train), self.ctx, _user_code(
                self.op_type, "CustomOp.forward"), _profiler._CustomOpScope(self.op_type):
            self.op.forward(is_train=self.train, req=["write"] * len(out_data),
                            in_data=in_data, out_data=out_data, aux=self.aux)
        return [o._t.detach() for o in out_data]

    def backward(self, ins, outs, out_grads, need):
        from . import autograd
        in_data = [self._wrap(t.detach()) for t in ins]
        out_data = [self._wrap(t.detach()) for t in outs]
        out_grad = [self._wrap(g.detach() if g is not None else torch.zeros_like(o))
                    for g, o in zip(out_grads, outs)]
        in_grad = [self._wrap(torch.zeros_like(t)) for t in ins]
        req = list(need)
        with autograd.pause(train_mode=self.train), self.ctx, _user_code(
                self.op_type, "CustomOp.backward"), _profiler._CustomOpScope(self.op_type, True):
            self.op.backward(req=req, out_grad=out_grad, in_data=in_data, out_data=out_data,
                             in_grad=in_grad, aux=self.aux)
        return [g._t.detach() if n != "null" else None for g, n in zip(in_grad, need)]


def _prop_for(op_type, kwargs):
    if op_type is None:
        raise MXNetError("Custom: the op_type argument (the name given to "
                         "mx.operator.register) is required")
    prop_cls = _REGISTRY.get(op_type)
    if prop_cls is None:
        raise MXNetError(f"Cannot find custom operator {op_type!r}: register its "
                         "CustomOpProp with @mx.operator.register(...) first")
    # As in MXNet, the property class gets every keyword argument as a string.
    try:
        return prop_cls(**{k: str(v) for k, v in kwargs.items()})
    except TypeError as e:
        raise MXNetError(f"Custom {op_type!r}: {prop_cls.__name__}(...) refused the keyword "
                         f"arguments {sorted(kwargs)}: {e}") from None


def Custom(*data, op_type=None, out=None, name=None, **kwargs):
    """Run the custom operator registered as ``op_type`` on ``data`` (inputs, then auxiliary
    states, in the order of ``list_arguments()`` + ``list_auxiliary_states()``; inputs may
    also be given by name). Other keyword arguments go to the property class as strings.

    Returns one NDArray, or a list when the operator has several outputs.
    """
    from .ndarray.ndarray import NDArray, _run, _assign_out
    from .context import current_context
    from . import autograd

    arrays = {k: v for k, v in kwargs.items() if isinstance(v, NDArray)}
    params = {k: v for k, v in kwargs.items() if not isinstance(v, NDArray)}
    prop = _prop_for(op_type, params)
    arg_names = list(prop.list_arguments())
    aux_names = list(prop.list_auxiliary_states())
    out_names = list(prop.list_outputs())
    names = arg_names + aux_names
    inputs = list(data)
    for i, a in enumerate(inputs):
        if not isinstance(a, NDArray):
            raise MXNetError(f"Custom {op_type!r}: input {i} must be an NDArray, got "
                             f"{type(a).__name__}")
    for k in arrays:
        if k not in names:
            raise MXNetError(f"Custom {op_type!r}: unknown input {k!r} (arguments "
                             f"{arg_names}, auxiliary states {aux_names})")
    if arrays:
        filled = inputs + [None] * (len(names) - len(inputs))
        for k, v in arrays.items():
            i = names.index(k)
            if i < len(inputs):
                raise MXNetError(f"Custom {op_type!r}: input {k!r} given twice")
            filled[i] = v
        inputs = filled
    if len(inputs) != len(names) or any(a is None for a in inputs):
        raise MXNetError(f"Custom {op_type!r}: expects {len(names)} inputs "
                         f"({arg_names + aux_names}), got {len(inputs)}")
    args, aux = inputs[:len(arg_names)], inputs[len(arg_names):]
    ctx = args[0].context if args else (aux[0].context if aux else current_context())

    in_shapes = [list(a.shape) for a in args]
    with _user_code(op_type, "infer_shape"):
        shape_ret = prop.infer_shape([list(s) for s in in_shapes])
    ishape, oshape, ashape = _split3(shape_ret, "infer_shape", op_type, len(aux))
    _check_count(ishape, len(args), "input shapes", op_type)
    _check_count(oshape, len(out_names), "output shapes", op_type)
    _check_count(ashape, len(aux), "auxiliary state shapes", op_type)
    for i, (got, want) in enumerate(zip(ishape, in_shapes)):
        if tuple(got) != tuple(want):
            raise MXNetError(f"Custom {op_type!r}: infer_shape changed the shape of input "
                             f"{arg_names[i]!r} from {tuple(want)} to {tuple(got)}")
    for i, (got, a) in enumerate(zip(ashape, aux)):
        if tuple(got) != tuple(a.shape):
            raise MXNetError(f"Custom {op_type!r}: auxiliary state {aux_names[i]!r} has shape "
                             f"{a.shape}, infer_shape says {tuple(got)}")
    in_types = [np.dtype(a.dtype).type for a in args]
    with _user_code(op_type, "infer_type"):
        type_ret = prop.infer_type(list(in_types))
    itype, otype, atype = _split3(type_ret, "infer_type", op_type, len(aux))
    _check_count(otype, len(out_names), "output types", op_type)
    out_specs = []
    for i, (s, t) in enumerate(zip(oshape, otype)):
        try:
            shape = tuple(int(d) for d in s)
            dtype = torch.from_numpy(np.zeros(0, dtype=np.dtype(t))).dtype
        except (TypeError, ValueError) as e:
            raise MXNetError(f"Custom {op_type!r}: output {out_names[i]!r} has an invalid "
                             f"shape {s!r} or dtype {t!r}: {e}") from None
        out_specs.append((shape, dtype))
    with _user_code(op_type, "create_operator"):
        op = prop.create_operator(ctx, in_shapes, [_NP_TO_MX_ID.get(np.dtype(t), -1)
                                                   for t in in_types])
    if not isinstance(op, CustomOp):
        raise MXNetError(f"Custom {op_type!r}: create_operator returned "
                         f"{type(op).__name__}, not a CustomOp")
    run = _Run(op_type, op, ctx, out_specs, aux, autograd.is_training())
    run.add_req = [getattr(getattr(a, "_ag", None), "grad_req", None) == "add" for a in args]
    outs = _run(_CustomFunction.apply, run, *[a._t for a in args])
    from .ndarray.ndarray import _new
    res = [_new(t, ctx) for t in outs]
    if len(res) == 1:
        return _assign_out(res[0], out)
    if out is not None:
        for o, r in zip(out, res):
            o[:] = r
        return out
    return res


def _symbol_prop(attrs):
    """The CustomOpProp of a ``Custom`` symbol node with these attributes (None while its
    op_type is not registered)."""
    op_type = attrs.get("op_type")
    if op_type is None or op_type not in _REGISTRY:
        return None
    kwargs = {k: v for k, v in attrs.items()
              if k != "op_type" and not (k.startswith("__") and k.endswith("__"))}
    return _prop_for(op_type, kwargs)


def _symbol_aux_count(attrs):
    """How many of a ``Custom`` node's inputs are auxiliary states (the last ones, as MXNet
    orders them: ``list_arguments()`` then ``list_auxiliary_states()``)."""
    prop = _symbol_prop(attrs)
    if prop is None:
        return 0
    with _user_code(attrs.get("op_type"), "list_auxiliary_states"):
        return len(prop.list_auxiliary_states())


def _symbol_infer_shape(attrs, arg_shapes):
    """``(argument, output, auxiliary)`` shapes from the CustomOpProp's ``infer_shape``, given
    the argument shapes known so far (an unknown one as ``[]``, as MXNet passes it); None when
    the op is not registered or its infer_shape cannot answer for these inputs."""
    prop = _symbol_prop(attrs)
    if prop is None:
        return None
    try:
        ret = prop.infer_shape([list(s) for s in arg_shapes])
        n_aux = len(prop.list_auxiliary_states())
        ishape, oshape, ashape = _split3(ret, "infer_shape", attrs.get("op_type"), n_aux)
        return ([tuple(int(d) for d in s) for s in ishape],
                [tuple(int(d) for d in s) for s in oshape],
                [tuple(int(d) for d in s) for s in ashape])
    except Exception:  # noqa: BLE001 - the user's code could not say: shape stays unknown
        return None


def _symbol_output_names(attrs):
    """The output names (``list_outputs()``) of a ``Custom`` symbol node with these attributes;
    ``['output']`` while its op_type is not registered (e.g. a graph loaded before the
    registration), which is MXNet's default for one output."""
    prop = _symbol_prop(attrs)
    if prop is None:
        return ["output"]
    op_type = attrs.get("op_type")
    with _user_code(op_type, "list_outputs"):
        names = [str(n) for n in prop.list_outputs()]
    if not names:
        raise MXNetError(f"Custom {op_type!r}: list_outputs() returned no outputs")
    return names


class PythonOp:
    """Base class of MXNet's older Python operators (:class:`NumpyOp`, :class:`NDArrayOp`);
    superseded by :class:`CustomOp`.

    Override ``forward(in_data, out_data)`` and ``backward(out_grad, in_data, out_data,
    in_grad)`` (writing into the output arrays in place), ``infer_shape``,
    ``list_arguments`` and ``list_outputs``. ``get_symbol(*inputs, **kwargs)`` (or calling
    the object) gives the operator's symbol; here each object runs as a registered
    :class:`CustomOp` of its own.

    Parameters
    ----------
    need_top_grad : bool
        Whether ``backward`` uses the gradient of the outputs (False for loss layers).
    """

    _count = 0
    _lock = threading.Lock()

    def __init__(self, need_top_grad=True):
        self.info_ = None
        self.need_top_grad_ = need_top_grad

    def __call__(self, *args, **kwargs):
        return self.get_symbol(*args, **kwargs)

    def get_symbol(self, *args, **kwargs):
        """The symbol that runs this operator on the input symbols ``args``."""
        from . import symbol as _sym
        return _sym.Custom(*args, op_type=self._op_type(), **kwargs)

    def forward(self, in_data, out_data):
        """Write the outputs into ``out_data`` (by default: the first input)."""
        out_data[0][:] = in_data[0]

    def backward(self, out_grad, in_data, out_data, in_grad):
        """Write the input gradients into ``in_grad`` (by default: the output gradient)."""
        in_grad[0][:] = out_grad[0]

    def infer_shape(self, in_shape):
        """(input shapes, output shapes); by default one output shaped as the first input."""
        return in_shape, [in_shape[0]]

    def list_outputs(self):
        """Names of the outputs (default ``['output']``)."""
        return ["output"]

    def list_arguments(self):
        """Names of the inputs (default ``['data']``)."""
        return ["data"]

    def need_top_grad(self):
        """Whether ``backward`` reads the gradient of the outputs."""
        return self.need_top_grad_

    # The arrays forward/backward get: numpy arrays for NumpyOp, NDArrays for NDArrayOp.
    _as_numpy = False

    def _op_type(self):
        if self.info_ is None:
            with PythonOp._lock:
                PythonOp._count += 1
                name = f"_{type(self).__name__}_{PythonOp._count}"
            pyop = self

            class _Op(CustomOp):
                def forward(self, is_train, req, in_data, out_data, aux):
                    pyop._call_user(pyop.forward, req, [in_data], out_data)

                def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
                    pyop._call_user(pyop.backward, req, [out_grad, in_data, out_data],
                                    in_grad)

            class _Prop(CustomOpProp):
                def __init__(self):
                    super().__init__(need_top_grad=pyop.need_top_grad())

                def infer_shape(self, in_shape):
                    ret = pyop.infer_shape(in_shape)
                    ishape, oshape = ret[0], ret[1]
                    return ishape, oshape, ()

                def list_outputs(self):
                    return pyop.list_outputs()

                def list_arguments(self):
                    return pyop.list_arguments()

                def create_operator(self, ctx, in_shapes, in_dtypes):
                    return _Op()

            register(name)(_Prop)
            self.info_ = name
        return self.info_

    def _call_user(self, fn, req, given, outs):
        if self._as_numpy:
            given = [[a.asnumpy() for a in group] for group in given]
            bufs = [o.asnumpy() for o in outs]
            fn(*given, bufs)
            for o, b, r in zip(outs, bufs, req):
                if r != "null":
                    o[:] = b
        else:
            fn(*given, outs)


class NumpyOp(PythonOp):
    """A :class:`PythonOp` whose ``forward``/``backward`` get numpy arrays (CPU)."""

    _as_numpy = True


class NDArrayOp(PythonOp):
    """A :class:`PythonOp` whose ``forward``/``backward`` get NDArrays."""

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """The arrays ``backward`` needs."""
        deps = []
        if self.need_top_grad():
            deps.extend(out_grad)
        deps.extend(in_data)
        deps.extend(out_data)
        return deps

    def infer_type(self, in_type):
        """(input dtypes, output dtypes): the first input's dtype everywhere."""
        return in_type, [in_type[0]] * len(self.list_outputs())


# Names MXNet 1.9.1's module of the same path exposes (programs import them from here).
from . import context, symbol  # noqa: E402,F401
from .base import py_str, NDArrayHandle  # noqa: E402,F401
import ctypes  # noqa: E402,F401
from .ndarray import NDArray  # noqa: E402,F401
from .util import is_np_array  # noqa: E402,F401
