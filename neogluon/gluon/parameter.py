"""Parameter, Constant and ParameterDict: the weights of Gluon Blocks, as in MXNet 1.x.

Each initialised Parameter holds one independent NDArray per Context (``_data``) and, unless
``grad_req='null'``, one gradient buffer per Context (``_grad``) attached with
``autograd.mark_variables``; backward writes into those buffers in place, so references to them
stay valid across steps.
"""
from __future__ import annotations

import os
import warnings
import weakref
from collections import OrderedDict

import numpy as np
import torch

from .. import autograd
from .. import initializer
from .. import util as _util
from ..base import MXNetError, MXNetValueError, to_torch_dtype
from ..context import Context, cpu, current_context
from ..ndarray.ndarray import NDArray, _new

__all__ = ["DeferredInitializationError", "Parameter", "Constant", "ParameterDict",
           "tensor_types"]

tensor_types = (NDArray,)


class DeferredInitializationError(MXNetError):
    """Error for unfinished deferred initialization."""


def _shape_is_known(shape):
    if shape is None:
        return False
    return all(d > 0 for d in shape)


def _indent(s, num_spaces):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * num_spaces + line for line in lines)


def _brief_print_list(lst, limit=7):
    lst = list(lst)
    if len(lst) > limit:
        return (_brief_print_list(lst[:limit // 2], limit) + ", ..., "
                + _brief_print_list(lst[-limit // 2:], limit))
    return ", ".join(f"'{x}'" for x in lst)


def _np_dtype(dtype):
    if isinstance(dtype, torch.dtype):
        from ..base import to_numpy_dtype
        return np.dtype(to_numpy_dtype(dtype))
    return np.dtype(dtype)


def _atomic_nd_save(filename, data):
    """``nd.save`` (which writes atomically)."""
    from ..ndarray import save as nd_save
    nd_save(filename, data)


def _nd_load(filename):
    from ..ndarray import load as nd_load
    return nd_load(os.fspath(filename))


class Parameter:
    """A container holding the weights of a Block, one copy per Context.

    Parameters
    ----------
    name : str
        Name of this parameter.
    grad_req : {'write', 'add', 'null'}, default 'write'
        How gradients are stored: overwritten, accumulated, or not computed at all.
    shape : int or tuple of int, optional
        Shape; dimensions left at 0 are inferred on the first forward pass (deferred
        initialisation, allowed when ``allow_deferred_init``).
    dtype : numpy.dtype or str, default numpy.float32
    lr_mult, wd_mult : float, default 1.0
        Multipliers of the learning rate and weight decay for this parameter.
    init : Initializer or str, optional
        Initializer of this parameter; overrides the one given to ``initialize``.
    allow_deferred_init : bool, default False
    differentiable : bool, default True
        False forces ``grad_req='null'``.
    stype, grad_stype : {'default', 'row_sparse', 'csr'}
        Storage types of the data and of the gradient.
    """

    # NumPy mode: the mx.nd view of the (mx.np) data array that neogluon's layers compute
    # on; gluon.block keeps it while it still shows that array
    _nd_twin = None

    def __init__(self, name, grad_req="write", shape=None, dtype=np.float32, lr_mult=1.0,
                 wd_mult=1.0, init=None, allow_deferred_init=False, differentiable=True,
                 stype="default", grad_stype="default"):
        self._var = None
        self._data = None
        self._grad = None
        self._ctx_list = None
        self._ctx_map = None
        self._trainer_ref = None
        self._deferred_init = ()
        self._differentiable = differentiable
        self._allow_deferred_init = allow_deferred_init
        self._grad_req = None
        if isinstance(shape, int):
            shape = (shape,)
        self._shape = tuple(shape) if shape is not None else None
        self.name = name
        self._dtype = dtype
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.grad_req = grad_req
        self.init = init
        valid = ("default", "row_sparse", "csr")
        if grad_stype not in valid:
            raise AssertionError(f"grad_stype for Parameter '{name}' must be one of 'default', "
                                 f"'row_sparse', or 'csr', but got '{grad_stype}'")
        if stype not in valid:
            raise AssertionError(f"stype for Parameter '{name}' must be one of 'default', "
                                 f"'row_sparse', or 'csr', but got '{stype}'")
        self._grad_stype = grad_stype
        self._stype = stype

    def __repr__(self):
        return f"Parameter {self.name} (shape={self.shape}, dtype={self.dtype})"

    # ------------------------------------------------------------------ attributes
    @property
    def grad_req(self):
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req):
        if req not in ("write", "add", "null"):
            raise AssertionError(f"grad_req must be one of 'write', 'add', or 'null', but got "
                                 f"'{req}'")
        if not self._differentiable:
            req = "null"
        if self._grad_req == req:
            return
        self._grad_req = req
        if req == "null" and self._grad is not None:
            self._grad = None
            self._data = [d.detach() for d in self._data]
            self._np_arrays()
        elif self._data is not None:
            self._init_grad()

    @property
    def dtype(self):
        """The data type; assigning it casts the parameter."""
        return self._dtype

    @dtype.setter
    def dtype(self, dtype):
        self.cast(dtype)

    @property
    def shape(self):
        """The shape; unknown dimensions are 0, or -1 while NumPy shape semantics is on
        (``npx.set_np()``), as in MXNet: a parameter cannot have a zero-size dimension, so
        there a 0 would read as a real size."""
        shape = self._shape
        if shape is not None and 0 in shape and _util.is_np_shape():
            return tuple(-1 if d == 0 else d for d in shape)
        return shape

    @shape.setter
    def shape(self, new_shape):
        if new_shape is not None:
            new_shape = tuple(new_shape)
        if self._shape is None:
            self._shape = new_shape
            return
        if not (len(self._shape) == len(new_shape)
                and all(j in (-1, 0, i) for i, j in zip(new_shape, self._shape))):
            raise AssertionError(f"Expected shape {new_shape} is incompatible with given shape "
                                 f"{self._shape} for Parameter '{self.name}'.")
        self._shape = new_shape

    @property
    def stype(self):
        return self._stype

    # ------------------------------------------------------------------ trainer link
    @property
    def _trainer(self):
        """The Trainer that updates this parameter, or None (MXNet's attribute).

        Held through a weak reference, so that a Trainer the program has dropped (with its
        optimizer states and store buffers) is freed even while its parameters live on.
        """
        ref = self._trainer_ref
        return ref() if ref is not None else None

    @_trainer.setter
    def _trainer(self, trainer):
        self._trainer_ref = weakref.ref(trainer) if trainer is not None else None

    def _set_trainer(self, trainer):
        """Set the Trainer that updates this parameter (None unsets it)."""
        current = self._trainer
        if (self._stype != "default" and current is not None and trainer is not None
                and current is not trainer):
            raise RuntimeError(
                f"Failed to set the trainer for Parameter '{self.name}' because it was already "
                f"set. More than one trainers for a {self._stype} Parameter is not supported.")
        self._trainer = trainer

    def _get_trainer(self):
        return self._trainer

    def _notify_trainer_of_load(self):
        trainer = self._get_trainer()
        if trainer is None:
            return
        if getattr(trainer, "_kv_initialized", False) and getattr(
                trainer, "_update_on_kvstore", False):
            if self not in getattr(trainer, "_params_to_init", ()):
                trainer._reset_kvstore()

    # ------------------------------------------------------------------ lookup
    def _check_and_get(self, arr_list, ctx):
        if arr_list is not None:
            if ctx is list:
                return arr_list
            if ctx is None:
                if len(arr_list) == 1:
                    return arr_list[0]
                ctx = current_context()
            idx = self._ctx_map.get((ctx.device_typeid & 1, ctx.device_id))
            if idx is not None:
                return arr_list[idx]
            raise RuntimeError(f"Parameter '{self.name}' was not initialized on context {ctx}. "
                               f"It was only initialized on {self._ctx_list}.")
        if self._deferred_init:
            raise DeferredInitializationError(
                f"Parameter '{self.name}' has not been initialized yet because initialization "
                "was deferred. Actual initialization happens during the first forward pass. "
                "Please pass one batch of data through the network before accessing Parameters. "
                "You can also avoid deferred initialization by specifying in_units, "
                "num_features, etc., for network layers.")
        raise RuntimeError(
            f"Parameter '{self.name}' has not been initialized. Note that you should initialize "
            "parameters and create Trainer with Block.collect_params() instead of Block.params "
            "because the later does not include Parameters of nested child Blocks")

    def data(self, ctx=None):
        """This parameter's array on ``ctx`` (the only one when ``ctx`` is None).

        Raises
        ------
        DeferredInitializationError
            When initialisation waits for the first forward pass.
        RuntimeError
            When the parameter is not initialised, or not on ``ctx``.
        """
        if self._stype != "default":
            raise RuntimeError(
                f"Cannot return a copy of Parameter '{self.name}' on ctx {ctx} via data() "
                f"because its storage type is {self._stype}. Please use row_sparse_data() "
                "instead.")
        arrs = self._data
        if ctx is None and arrs is not None and len(arrs) == 1:
            return arrs[0]
        return self._check_and_get(arrs, ctx)

    def list_data(self):
        """The arrays on all contexts, in the order of initialisation."""
        if self._stype != "default":
            raise RuntimeError(
                f"Cannot return copies of Parameter '{self.name}' on all contexts via "
                f"list_data() because its storage type is {self._stype}. Please use "
                "row_sparse_data() instead.")
        return self._check_and_get(self._data, list)

    def grad(self, ctx=None):
        """The gradient buffer on ``ctx``."""
        if self._data is not None and self._grad is None:
            raise RuntimeError(f"Cannot get gradient array for Parameter '{self.name}' because "
                               "grad_req='null'")
        return self._check_and_get(self._grad, ctx)

    def list_grad(self):
        """The gradient buffers on all contexts."""
        if self._data is not None and self._grad is None:
            raise RuntimeError(f"Cannot get gradient array for Parameter '{self.name}' because "
                               "grad_req='null'")
        return self._check_and_get(self._grad, list)

    def list_ctx(self):
        """The contexts this parameter is (or will be, when deferred) initialised on."""
        if self._data is None:
            if self._deferred_init:
                return self._deferred_init[1]
            raise RuntimeError(f"Parameter '{self.name}' has not been initialized")
        return self._ctx_list

    def _get_row_sparse(self, arr_list, ctx, row_id):
        if not isinstance(row_id, NDArray):
            raise TypeError(f"row_id must have NDArray type, but {type(row_id)} is given")
        trainer = self._get_trainer()
        if trainer is None:
            raise RuntimeError(f"Cannot get row_sparse data for Parameter '{self.name}' when no "
                               "Trainer is created with it.")
        results = self._check_and_get(arr_list, ctx)
        trainer._row_sparse_pull(self, results, row_id)
        return results

    def row_sparse_data(self, row_id):
        """A copy of a 'row_sparse' parameter holding the rows in ``row_id``, on its context."""
        if self._stype != "row_sparse":
            raise RuntimeError(
                f"Cannot return a copy of Parameter {self.name} via row_sparse_data() because "
                f"its storage type is {self._stype}. Please use data() instead.")
        return self._get_row_sparse(self._data, row_id.context, row_id)

    def list_row_sparse_data(self, row_id):
        """Copies of a 'row_sparse' parameter on all contexts, holding the rows in ``row_id``."""
        if self._stype != "row_sparse":
            raise RuntimeError(
                f"Cannot return copies of Parameter '{self.name}' on all contexts via "
                f"list_row_sparse_data() because its storage type is {self._stype}. Please use "
                "data() instead.")
        return self._get_row_sparse(self._data, list, row_id)

    # ------------------------------------------------------------------ initialisation
    def initialize(self, init=None, ctx=None, default_init=initializer.Uniform(),
                   force_reinit=False):
        """Create the data (and gradient) arrays on ``ctx``.

        Parameters
        ----------
        init : Initializer, optional
            Overrides ``self.init`` and ``default_init``.
        ctx : Context or list of Context, default current context
            One independent copy is made per context.
        default_init : Initializer, default Uniform()
            Used when both ``init`` and ``self.init`` are None.
        force_reinit : bool, default False
            Re-initialise a parameter that already is.
        """
        if self._data is not None and not force_reinit:
            warnings.warn(f"Parameter '{self.name}' is already initialized, ignoring. Set "
                          "force_reinit=True to re-initialize.", stacklevel=2)
            return
        self._data = self._grad = None
        if ctx is None:
            ctx = [current_context()]
        if isinstance(ctx, Context):
            ctx = [ctx]
        if init is None:
            init = default_init if self.init is None else self.init
        if not _shape_is_known(self.shape):
            if self._allow_deferred_init:
                self._deferred_init = (init, ctx, default_init, None)
                return
            raise ValueError(f"Cannot initialize Parameter '{self.name}' because it has "
                             f"invalid shape: {self.shape}.")
        self._deferred_init = (init, ctx, default_init, None)
        self._finish_deferred_init()

    def _finish_deferred_init(self):
        if not self._deferred_init:
            return
        init, ctx, default_init, data = self._deferred_init
        self._deferred_init = ()
        if not _shape_is_known(self.shape):
            raise AssertionError(
                f"Cannot initialize Parameter '{self.name}' because it has invalid shape: "
                f"{self.shape}. Please specify in_units, in_channels, etc for `Block`s.")
        with autograd.pause():
            if data is None:
                dev = ctx[0].torch_device if ctx else torch.device("cpu")
                t = torch.zeros(self.shape, dtype=to_torch_dtype(self.dtype), device=dev)
                data = _new(t, ctx[0] if ctx else cpu())
                initializer.create(default_init)(
                    initializer.InitDesc(self.name, {"__init__": init}), data)
                if self._stype != "default":
                    data = data.tostype(self._stype)
            self._init_impl(data, ctx)

    def _init_impl(self, data, ctx_list):
        self._ctx_list = list(ctx_list)
        cmap = {}
        for i, c in enumerate(self._ctx_list):
            cmap[(c.device_typeid & 1, c.device_id)] = i
        self._ctx_map = cmap
        self._data = [_copy_to(data, c) for c in self._ctx_list]
        self._init_grad()
        self._np_arrays()

    def _init_grad(self):
        if self.grad_req == "null":
            self._grad = None
            return
        if self._grad_stype != "default":
            from .. import ndarray as nd
            self._grad = [nd.zeros(d.shape, ctx=d.context, dtype=d.dtype,
                                   stype=self._grad_stype) for d in self._data]
        else:
            self._grad = [_new(torch.zeros_like(d._t, requires_grad=False), d._ctx)
                          for d in self._data]
        autograd.mark_variables(self._check_and_get(self._data, list), self._grad,
                                self.grad_req)
        self._np_arrays()

    def _np_arrays(self):
        """In NumPy-array mode (``npx.set_np()``) a Parameter's data and gradient are
        ``mx.np.ndarray`` (the same objects, re-classed: both classes share one layout)."""
        if not _util.is_np_array():
            return
        from ..numpy.multiarray import ndarray
        for arrs in (self._data, self._grad):
            for a in arrs or ():
                if type(a) is NDArray:
                    a.__class__ = ndarray

    def _reduce(self):
        """The average of the copies, on cpu (what gets saved)."""
        ctx = cpu()
        if self._stype == "default":
            block = self.list_data()
            with torch.no_grad():
                if len(block) > 1:
                    acc = block[0]._t.detach().to("cpu", copy=True)
                    for w in block[1:]:
                        acc += w._t.detach().to("cpu")
                    acc /= len(block)
                    return _new(acc, ctx)
                return _new(block[0]._t.detach().to("cpu", copy=True), ctx)
        from .. import ndarray as nd
        all_rows = nd.arange(0, self.shape[0], dtype="int64", ctx=ctx)
        data = nd.zeros(self.shape, stype="row_sparse", ctx=ctx)
        self._get_trainer()._row_sparse_pull(self, data, all_rows, full_idx=True)
        return data

    def _check_load(self, data, ctx, cast_dtype=False, dtype_source="current", source=None):
        """Raise the error ``_load_init`` would raise, without changing anything (naming
        the file ``source`` when given)."""
        src = f" (file '{source}')" if source else ""
        if cast_dtype and dtype_source not in ("current", "saved"):
            raise AssertionError(f"dtype_source must be 'current' or 'saved', got "
                                 f"{dtype_source!r}")
        if not isinstance(data, NDArray):
            raise TypeError(f"Parameter '{self.name}' can only be loaded from an NDArray, got "
                            f"{type(data).__name__}")
        if self.shape:
            if len(self.shape) != len(data.shape) or any(
                    s not in (-1, 0, d) for s, d in zip(self.shape, data.shape)):
                raise AssertionError(
                    f"Failed loading Parameter '{self.name}' from saved params: shape "
                    f"incompatible expected {self.shape} vs saved {data.shape}{src}")
        if self.dtype and not cast_dtype and _np_dtype(self.dtype).type != data.dtype:
            raise AssertionError(
                f"Failed loading Parameter '{self.name}' from saved params: dtype incompatible "
                f"expected {self.dtype} vs saved {data.dtype}{src}. Set cast_dtype=True to cast "
                "the dtype of saved params.")
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data is None:
            if self._deferred_init and ctx is not None and set(ctx) != set(
                    self._deferred_init[1]):
                raise AssertionError(
                    f"Failed to load Parameter '{self.name}' on {ctx} because it was previous "
                    f"initialized on {self.list_ctx()}.")
        elif ctx is not None and set(ctx) != set(self.list_ctx()):
            raise AssertionError(
                f"Failed to load Parameter '{self.name}' on {ctx} because it was previous "
                f"initialized on {self.list_ctx()}.")

    def _load_init(self, data, ctx, cast_dtype=False, dtype_source="current"):
        """(Re)initialise from loaded ``data``.

        Parameters
        ----------
        data : NDArray
        ctx : Context or list of Context or None
        cast_dtype : bool
            Cast instead of failing when dtypes differ.
        dtype_source : {'current', 'saved'}
            With ``cast_dtype``: keep the parameter's dtype, or take the saved one.
        """
        self._check_load(data, ctx, cast_dtype, dtype_source)
        if self.shape:
            self.shape = tuple(d if s <= 0 else s for s, d in zip(self.shape, data.shape))
        if self.dtype and cast_dtype and _np_dtype(self.dtype).type != data.dtype:
            if dtype_source == "current":
                data = data.astype(self.dtype, copy=False)
            else:
                self.dtype = data.dtype
        if self._stype != data.stype:
            data = data.tostype(self._stype)
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data is None:
            if self._deferred_init:
                ctx = self._deferred_init[1]
            elif ctx is None:
                ctx = [cpu()]
            self._init_impl(data, ctx)
        else:
            self.set_data(data)
        self._deferred_init = ()

    def reset_ctx(self, ctx):
        """Move the parameter to other contexts (one copy each), keeping its value."""
        if ctx is None:
            ctx = [current_context()]
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data:
            data = self._reduce()
            with autograd.pause():
                self._init_impl(data, ctx)
        elif self._deferred_init:
            init, _, default_init, data = self._deferred_init
            self._deferred_init = (init, ctx, default_init, data)
        else:
            raise ValueError(f"Cannot reset context for Parameter '{self.name}' because it "
                             "has not been initialized.")

    def set_data(self, data):
        """Set this parameter's value on every context.

        Parameters
        ----------
        data : NDArray or array-like
        """
        if not isinstance(data, NDArray):
            from .. import ndarray as nd
            data = nd.array(data, dtype=self.dtype)
        self.shape = data.shape
        if self._data is None:
            if not self._deferred_init:
                raise AssertionError(f"Parameter '{self.name}' has not been initialized")
            self._deferred_init = self._deferred_init[:3] + (data,)
            return
        self._notify_trainer_of_load()
        src = data._t.detach()
        with torch.no_grad():
            for arr in self._data:
                if arr.stype != "default":
                    if arr.shape != data.shape:
                        raise MXNetError(f"set_data: Parameter '{self.name}' has shape "
                                         f"{arr.shape}, data has shape {data.shape}")
                    arr[:] = data  # sparse storage converts (a dense _t would be a copy)
                    continue
                t = arr._t
                if t.shape != src.shape:
                    raise MXNetError(f"set_data: Parameter '{self.name}' has shape "
                                     f"{tuple(t.shape)}, data has shape {tuple(src.shape)}")
                # Outside record() the copy leaves torch's version counter alone: a graph
                # recorded before reads the new value at backward(), as in MXNet (sn_gan's
                # spectral norm sets its power-iteration vector under autograd.pause()).
                if autograd.is_recording():
                    t.copy_(src)
                else:
                    autograd._UNVERSIONED_WRITES[0] += 1
                    t.data.copy_(src)

    def zero_grad(self):
        """Set the gradient buffers to 0 (nothing happens when there are none)."""
        if self._grad is None:
            return
        with torch.no_grad():
            for g in self._grad:
                if g.stype == "default":
                    g._t.zero_()
                else:
                    g._assign(g.zeros_like())  # MXNet's zeros_like(out=g): no stored rows

    def var(self):
        """The ``mx.sym`` variable standing for this Parameter (named by its name).

        The variable carries the shape (0 for unknown dimensions), dtype, lr/wd multipliers,
        initializer and storage type; the same Symbol is returned while those are unchanged.
        """
        from .. import symbol
        key = (self.name, self._shape, str(self.dtype), self.lr_mult, self.wd_mult,
               id(self.init), self._stype)
        if self._var is None or self._var[0] != key:
            self._var = (key, symbol.var(self.name, shape=self._shape, dtype=self.dtype,
                                         lr_mult=self.lr_mult, wd_mult=self.wd_mult,
                                         init=self.init, stype=self._stype))
        return self._var[1]

    def cast(self, dtype):
        """Cast data and gradients to ``dtype``."""
        self._dtype = dtype
        if self._data is None:
            return
        td = to_torch_dtype(dtype)
        with autograd.pause():
            self._data = [d.astype(dtype) if d.stype != "default" else
                          _new(d._t.detach().to(td), d._ctx) for d in self._data]
            if self._grad is None:
                return
            self._grad = [g.astype(dtype) if g.stype != "default" else
                          _new(g._t.detach().to(td), g._ctx) for g in self._grad]
            autograd.mark_variables(self._data, self._grad, self.grad_req)
            self._np_arrays()


def _copy_to(data, ctx):
    if data.stype != "default":
        return data.copyto(ctx)
    t = data._t.detach().to(ctx.torch_device, copy=True)
    return _new(t, ctx)


class _ConstantInit(initializer.Initializer):
    def __init__(self, value):
        super().__init__()
        self._value = value

    def _init_weight(self, _, arr):
        with torch.no_grad():
            arr._t.copy_(self._value._t.detach().to(arr._t.device, arr._t.dtype))


class Constant(Parameter):
    """A parameter whose value autograd and the Trainer never change.

    ``set_data`` still changes it.

    Parameters
    ----------
    name : str
    value : array-like or NDArray
    """

    def __init__(self, name, value):
        if not isinstance(value, NDArray):
            from .. import ndarray as nd
            value = nd.array(value)
        self.value = value
        super().__init__(name, grad_req="null", shape=value.shape, dtype=value.dtype,
                         init=_ConstantInit(value))

    def __repr__(self):
        return f"Constant {self.name} (shape={self.shape}, dtype={self.dtype})"

    @property
    def grad_req(self):
        return "null"

    @grad_req.setter
    def grad_req(self, req):
        if req != "null":
            warnings.warn(f'Constant parameter "{self.name}" does not support grad_req other '
                          f'than "null", and new value "{req}" is ignored.')


class ParameterDict:
    """An ordered dictionary of Parameters, with a name prefix and optional sharing.

    Parameters
    ----------
    prefix : str, default ''
        Prepended to the names of the parameters created by :meth:`get`.
    shared : ParameterDict, optional
        :meth:`get` looks names up there before creating a new parameter.
    """

    def __init__(self, prefix="", shared=None):
        self._prefix = prefix
        self._params = OrderedDict()
        self._shared = shared

    def __repr__(self):
        name = self._prefix + " " if self._prefix else ""
        content = "\n".join(_indent(f"  {v}", 2) for v in self.values())
        return f"{name}(\n{content}\n)"

    def __getitem__(self, key):
        return self._params[key]

    def __iter__(self):
        return iter(self._params)

    def __len__(self):
        return len(self._params)

    def __contains__(self, key):
        return key in self._params

    def items(self):
        return self._params.items()

    def keys(self):
        return self._params.keys()

    def values(self):
        return self._params.values()

    @property
    def prefix(self):
        """The prefix prepended to the names of the parameters :meth:`get` creates."""
        return self._prefix

    def _get_impl(self, name):
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._shared._params[name]
        return None

    def get(self, name, **kwargs):
        """The Parameter named ``prefix + name``: found here, in ``shared``, or created.

        Parameters
        ----------
        name : str
        **kwargs
            Arguments of :class:`Parameter`; for an existing parameter they must agree with
            its attributes (a 0 in a shape matches any size and gets filled in).
        """
        name = self.prefix + name
        param = self._get_impl(name)
        if param is None:
            param = Parameter(name, **kwargs)
            self._params[name] = param
            return param
        for k, v in kwargs.items():
            if hasattr(param, k) and getattr(param, k) is not None:
                existing = getattr(param, k)
                if k == "shape":
                    if isinstance(v, int):
                        v = (v,)
                    if len(v) == len(existing):
                        merged = []
                        ok = True
                        for d1, d2 in zip(v, existing):
                            if d1 != d2 and d1 > 0 and d2 > 0:
                                ok = False
                                break
                            merged.append(d2 if d1 in (0, -1) else d1)
                        if ok:
                            param._shape = tuple(merged)
                            continue
                elif k == "dtype" and np.dtype(v) == np.dtype(existing):
                    continue
                if v is not None and v != existing:
                    raise AssertionError(
                        f"Cannot retrieve Parameter '{name}' because desired attribute does "
                        f"not match with stored for attribute '{k}': desired '{v}' vs stored "
                        f"'{getattr(param, k)}'.")
            else:
                setattr(param, k, v)
        return param

    def get_constant(self, name, value=None):
        """The Constant named ``prefix + name``: found here, in ``shared``, or created."""
        name = self.prefix + name
        param = self._get_impl(name)
        if param is None:
            if value is None:
                raise KeyError(f"No constant named '{name}'. Please specify value if you want "
                               "to create a new constant.")
            param = Constant(name, value)
            self._params[name] = param
        elif value is not None:
            if not isinstance(param, Constant):
                raise AssertionError(f"Parameter '{name}' already exists but it is not a "
                                     "constant.")
            if isinstance(value, NDArray):
                value = value.asnumpy()
            value = np.asarray(value)
            if not (param.shape == value.shape and (param.value.asnumpy() == value).all()):
                raise AssertionError(f"Constant '{name}' already exists but it's value doesn't "
                                     "match new value")
        return param

    def update(self, other):
        """Copy all Parameters of ``other`` into this dict."""
        for k, v in other.items():
            if k in self._params and self._params[k] is not v:
                raise AssertionError("Cannot update self with other because they have "
                                     f"different Parameters with the same name '{k}'")
        for k, v in other.items():
            self._params[k] = v

    def initialize(self, init=initializer.Uniform(), ctx=None, verbose=False,
                   force_reinit=False):
        """Initialise every parameter (see :meth:`Parameter.initialize`).

        Parameters
        ----------
        init : Initializer
            Default initializer for parameters whose ``init`` is None.
        ctx : Context or list of Context
        verbose : bool
        force_reinit : bool
        """
        if verbose and hasattr(init, "set_verbosity"):
            init.set_verbosity(verbose=verbose)
        for v in self.values():
            v.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self):
        """Set all gradient buffers to 0."""
        dense = []
        for p in self.values():
            if p.grad_req == "null" or p._grad is None:
                continue
            for g in p._grad:
                if g.stype == "default":
                    dense.append(g._t)
                else:
                    g._assign(g.zeros_like())  # MXNet's zeros_like(out=g): no stored rows
        if dense:
            with torch.no_grad():
                torch._foreach_zero_(dense)

    def reset_ctx(self, ctx):
        """Move every parameter to ``ctx``."""
        for p in self.values():
            p.reset_ctx(ctx)

    def list_ctx(self):
        """All contexts the parameters are initialised on."""
        s = set()
        for p in self.values():
            s.update(p.list_ctx())
        return list(s)

    def setattr(self, name, value):
        """Set attribute ``name`` (grad_req, lr_mult, ...) of every parameter to ``value``."""
        for p in self.values():
            setattr(p, name, value)

    def save(self, filename, strip_prefix=""):
        """Save the parameters, by full name (minus ``strip_prefix``), in MXNet's format.

        Parameters
        ----------
        filename : str
        strip_prefix : str, default ''
        """
        arg_dict = {}
        for param in self.values():
            if not param.name.startswith(strip_prefix):
                raise ValueError(
                    f"Prefix '{strip_prefix}' is to be striped before saving, but Parameter's "
                    f"name '{param.name}' does not start with '{strip_prefix}'. this may be due "
                    "to your Block shares parameters from other Blocks or you forgot to use "
                    "'with name_scope()' when creating child blocks.")
            arg_dict[param.name[len(strip_prefix):]] = param._reduce()
        _atomic_nd_save(filename, arg_dict)

    def load(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
             restore_prefix="", cast_dtype=False, dtype_source="current"):
        """Load parameters from a file written by :meth:`save` (or MXNet).

        On any error nothing is changed.

        Parameters
        ----------
        filename : str
        ctx : Context or list of Context, optional
        allow_missing : bool, default False
            Skip parameters the file lacks instead of failing.
        ignore_extra : bool, default False
            Skip names in the file that this dict lacks instead of failing.
        restore_prefix : str, default ''
            Prepended to the names in the file.
        cast_dtype : bool, default False
        dtype_source : {'current', 'saved'}
        """
        if restore_prefix:
            for name in self.keys():
                if not name.startswith(restore_prefix):
                    raise AssertionError(
                        f"restore_prefix is '{restore_prefix}' but Parameters name '{name}' does "
                        f"not start with '{restore_prefix}'.")
        loaded = _nd_load(filename)
        if not isinstance(loaded, dict):
            raise MXNetValueError(f"file '{filename}' holds a list of arrays without names; "
                                  "ParameterDict.load needs named parameters")
        self.load_dict(loaded, ctx, allow_missing, ignore_extra, restore_prefix, filename,
                       cast_dtype, dtype_source)

    def load_dict(self, param_dict, ctx=None, allow_missing=False, ignore_extra=False,
                  restore_prefix="", filename=None, cast_dtype=False, dtype_source="current"):
        """Load parameters from a dict of name to NDArray (``arg:``/``aux:`` prefixes allowed).

        On any error nothing is changed.
        """
        lprefix = len(restore_prefix)
        if isinstance(param_dict, dict):
            loaded = [(k[4:] if k.startswith(("arg:", "aux:")) else k, v)
                      for k, v in param_dict.items()]
        else:
            loaded = list(param_dict)
        arg_dict = {restore_prefix + k: v for k, v in loaded}
        where = f"file: {filename}" if filename else "param_dict"
        if not allow_missing:
            for name in self.keys():
                if name not in arg_dict:
                    raise AssertionError(
                        f"Parameter '{name[lprefix:]}' is missing in {where}, which contains "
                        f"parameters: {_brief_print_list(arg_dict.keys())}. Please make sure "
                        "source and target networks have the same prefix.")
        todo = []
        for name, value in arg_dict.items():
            if name not in self._params:
                if not ignore_extra:
                    raise AssertionError(
                        f"Parameter '{name[lprefix:]}' loaded from {where} is not present in "
                        f"ParameterDict, choices are: {_brief_print_list(self._params.keys())}. "
                        "Set ignore_extra to True to ignore. Please make sure source and target "
                        "networks have the same prefix.")
                continue
            self._params[name]._check_load(value, ctx, cast_dtype, dtype_source, filename)
            todo.append((self._params[name], value))
        for param, value in todo:
            param._load_init(value, ctx, cast_dtype=cast_dtype, dtype_source=dtype_source)
