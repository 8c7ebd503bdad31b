"""Block, HybridBlock and SymbolBlock: Gluon's model containers, as in MXNet 1.x.

Hybridisation in neogluon
-------------------------
MXNet turns a hybridized block into a symbolic graph. neogluon instead runs the first forward
pass of a hybridized block under a *tracer*: ``F`` is a proxy of ``nd`` and the arrays are
NDArrays that remember which recorded op made them, so the pass computes the real result while
recording a flat list of operator calls. Later calls with the same input signature replay that
list directly (no Block dispatch, hooks or parameter lookups by name).

Symbols are separate: calling a block on ``mx.sym`` inputs runs ``hybrid_forward`` with
``F = mx.sym`` and returns a Symbol (what ``export`` writes as MXNet's ``-symbol.json``, and
what ``SymbolBlock`` evaluates through the nd operators).

When a forward cannot be captured (values read back into Python, in-place writes, arrays that
did not come from the inputs or parameters), the block warns once and keeps running
imperatively. Any structural change (new children, cast, hybridize again) drops the graphs.
"""
from __future__ import annotations

import json
import re
import sys as _sys
import threading
import types
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Mapping

import numpy as np

from .. import _fileio, _malloc, autograd
from .. import initializer
from .. import name as _name
from .. import util as _util
from .. import symbol as _sym
from ..symbol.symbol import Symbol as _Symbol, _evaluate
from .. import ndarray as _nd
from ..base import MXNetError, MXNetValueError
from ..context import Context, current_context
from ..ndarray.ndarray import NDArray, _new
from ..ndarray.ops import split as _split_fn, _split_views as _split_views_fn
from ..numpy.multiarray import ndarray as _npndarray, _same_seq
from ..numpy import _hooks as _np_hooks
from .utils import HookHandle
from . import _compile, _cudagraph, _fuse
from .parameter import (Parameter, ParameterDict, DeferredInitializationError, _indent,
                        _brief_print_list, _atomic_nd_save, _nd_load)

__all__ = ["Block", "HybridBlock", "SymbolBlock", "HookHandle"]


# ---------------------------------------------------------------------------- naming
class _NameManager:
    """Names of blocks made outside any ``name_scope``: MXNet takes them from the current
    ``mx.name`` manager (shared with symbols), so ``with mx.name.Prefix('p_'):`` gives
    ``p_dense0`` and a fresh ``with mx.name.NameManager():`` counts from 0 again."""

    @property
    def counter(self):
        return _name.NameManager.current._counter

    def get(self, hint):
        return _name.NameManager.current.get(None, hint)


_NAMES = _NameManager()


class _BlockScope:
    """The scope that ``with block.name_scope():`` opens, collecting child names."""
    _current = threading.local()

    def __init__(self, block):
        self._block = block
        self._counter = {}
        self._old_scope = None
        self._name_scopes = []

    @staticmethod
    def create(prefix, params, hint):
        current = getattr(_BlockScope._current, "value", None)
        if current is None:
            if prefix is None:
                prefix = _NAMES.get(hint) + "_"
            if params is None:
                params = ParameterDict(prefix)
            else:
                params = ParameterDict(params.prefix, params)
            return prefix, params
        if prefix is None:
            count = current._counter.get(hint, 0)
            prefix = f"{hint}{count}_"
            current._counter[hint] = count + 1
        if params is None:
            parent = current._block.params
            params = ParameterDict(parent.prefix + prefix, parent._shared)
        else:
            params = ParameterDict(params.prefix, params)
        return current._block.prefix + prefix, params

    def __enter__(self):
        if self._block._empty_prefix:
            return self
        self._old_scope = getattr(_BlockScope._current, "value", None)
        _BlockScope._current.value = self
        # Symbols made inside the scope are named after the block ('dense0_fwd').
        scope = _name.Prefix(self._block.prefix)
        scope.__enter__()
        self._name_scopes.append(scope)
        return self

    def __exit__(self, ptype, value, trace):
        if self._block._empty_prefix:
            return
        self._name_scopes.pop().__exit__(ptype, value, trace)
        _BlockScope._current.value = self._old_scope


# Bumped whenever any block's structure changes, so cached graphs of ancestors notice too.
_STRUCTURE = [0]


def _bump():
    _STRUCTURE[0] += 1


def _first_ctx(args):
    for a in args:
        if isinstance(a, NDArray):
            return a._ctx
        if isinstance(a, (list, tuple)):
            c = _first_ctx(a)
            if c is not None:
                return c
    return None


# ---------------------------------------------------------------------------- Block
class Block:
    """Base class of all layers and models.

    Assign child Blocks and Parameters as attributes to register them. Names follow MXNet:
    a block made outside any ``name_scope`` gets ``<alias><n>_`` from a global per-class
    counter; inside a parent's ``name_scope()`` it gets the parent's prefix plus a per-parent
    counter.

    Parameters
    ----------
    prefix : str, optional
        Prefix of this block's name and of its parameters' names.
    params : ParameterDict, optional
        Parameters to share (looked up before new ones are created).
    """

    # NumPy-array mode: a layer of neogluon's own (``_builtin``) computes on nd views of its
    # inputs; containers and user blocks (``_np_passthrough`` or defined outside neogluon)
    # see the mx.np arrays themselves. Every block's outputs are mx.np arrays in that mode.
    # A container of neogluon's (``_np_container``: Sequential, HybridSequential) whose blocks
    # are all such layers or such containers computes on nd views as one layer does: the
    # arrays convert once at its boundary (decided once per change of the block structure).
    _builtin = False
    _np_passthrough = False
    _np_container = False
    _np_nd_cache = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        own = cls.__module__.startswith("neogluon.")
        cls._builtin = own and not cls._np_passthrough
        if not own:
            cls._np_container = False   # a user's subclass may compute with mx.np semantics

    def _np_nd_ok(self):
        """Whether this container can run on nd views in NumPy mode (see ``_np_container``)."""
        c = self._np_nd_cache
        if c is not None and c[0] == _STRUCTURE[0]:
            return c[1]
        ok = all(ch._builtin or (ch._np_container and ch._np_nd_ok())
                 for ch in self._children.values())
        self._np_nd_cache = (_STRUCTURE[0], ok)
        return ok

    def __init__(self, prefix=None, params=None):
        self._empty_prefix = prefix == ""
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix[:-1] if self._prefix.endswith("_") else self._prefix
        self._scope = _BlockScope(self)
        self._children = OrderedDict()
        self._reg_params = {}
        self._forward_hooks = OrderedDict()
        self._forward_pre_hooks = OrderedDict()

    def __repr__(self):
        modstr = "\n".join(f"  ({key}): {_indent(repr(block), 2)}"
                           for key, block in self.__dict__.items() if isinstance(block, Block))
        return f"{type(self).__name__}(\n{modstr}\n)"

    def __setattr__(self, name, value):
        if hasattr(self, name):
            existing = getattr(self, name)
            if isinstance(existing, (Parameter, Block)) and not isinstance(value, type(existing)):
                raise TypeError(f"Changing attribute type for {name} from {type(existing)} to "
                                f"{type(value)}is not allowed.")
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            if name in self._reg_params:
                raise AssertionError(
                    f"Overriding Parameter attribute {name} is not allowed. If you want to share "
                    "parameters between blocks, please set 'params' at Block construction "
                    "instead.")
            self._reg_params[name] = value
            _bump()
        object.__setattr__(self, name, value)

    def _check_container_with_block(self):
        children = set(id(c) for c in self._children.values())

        def find(data):
            if isinstance(data, (list, tuple)):
                return any(find(e) for e in data)
            if isinstance(data, dict):
                return any(find(v) for v in data.values())
            if isinstance(data, Block):
                return id(data) not in children
            return False

        for k, v in self.__dict__.items():
            if isinstance(v, (list, tuple, dict)) and not (k.startswith("__") or k == "_children"):
                if find(v):
                    warnings.warn(
                        f'"{type(self).__name__}.{k}" is an unregistered container with Blocks. '
                        "Note that Blocks inside the list, tuple or dict will not be registered "
                        "automatically. Make sure to register them using register_child() or "
                        "switching to nn.Sequential/nn.HybridSequential instead. ", stacklevel=3)

    def _alias(self):
        return type(self).__name__.lower()

    @property
    def prefix(self):
        """Prefix of this Block."""
        return self._prefix

    @property
    def name(self):
        """Name of this Block (its prefix without the trailing '_')."""
        return self._name

    def name_scope(self):
        """A ``with`` scope in which child Blocks get names under this Block's prefix."""
        return self._scope

    @property
    def params(self):
        """This Block's own ParameterDict (children's parameters not included)."""
        return self._params

    def collect_params(self, select=None):
        """A ParameterDict of this Block's and its descendants' parameters.

        Parameters
        ----------
        select : str, optional
            A regular expression; only parameters whose full name matches it (``re.match``)
            are returned, e.g. ``'.*weight|.*bias'``.
        """
        self._check_container_with_block()
        ret = ParameterDict(self._params.prefix)
        if not select:
            ret.update(self.params)
        else:
            pattern = re.compile(select)
            ret.update({n: v for n, v in self.params.items() if pattern.match(n)})
        for cld in self._children.values():
            ret.update(cld.collect_params(select=select))
        return ret

    def _collect_params_with_prefix(self, prefix=""):
        if prefix:
            prefix += "."
        ret = {prefix + key: val for key, val in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def save_parameters(self, filename, deduplicate=False):
        """Save the parameters, keyed by their structural names (``0.weight``, ``conv.bias``).

        Parameters
        ----------
        filename : str
        deduplicate : bool, default False
            Save a parameter shared by several children only once.
        """
        params = self._collect_params_with_prefix()
        if deduplicate:
            reverse = {v: k for k, v in params.items()}
            params = {v: k for k, v in reverse.items()}
        _atomic_nd_save(filename, {key: val._reduce() for key, val in params.items()})

    def save_params(self, filename):
        """Deprecated: use :meth:`save_parameters` (this saves full names minus the prefix)."""
        warnings.warn("save_params is deprecated. Please use save_parameters. Note that if you "
                      "want load from SymbolBlock later, please use export instead. For "
                      "details, see https://mxnet.apache.org/tutorials/gluon/save_load_params.html")
        try:
            self.collect_params().save(filename, strip_prefix=self.prefix)
        except ValueError as e:
            raise ValueError(f"{e}\nsave_params is deprecated. Using save_parameters may resolve "
                             "this error.") from None

    def load_parameters(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
                        cast_dtype=False, dtype_source="current"):
        """Load parameters saved by :meth:`save_parameters` (or by MXNet).

        Files with full parameter names (from ``save_params`` or ``ParameterDict.save``) are
        accepted too. On any error the block is left unchanged.

        Parameters
        ----------
        filename : str
        ctx : Context or list of Context, optional
        allow_missing : bool, default False
        ignore_extra : bool, default False
        cast_dtype : bool, default False
        dtype_source : {'current', 'saved'}
        """
        loaded = _nd_load(filename)
        if not isinstance(loaded, dict):
            raise MXNetValueError(f"file '{filename}' holds a list of arrays without names; "
                                  "load_parameters needs named parameters")
        params = self._collect_params_with_prefix()
        if not loaded and not params:
            return
        if not any("." in k for k in loaded.keys()):
            del loaded
            self.collect_params().load(filename, ctx, allow_missing, ignore_extra, self.prefix,
                                       cast_dtype=cast_dtype, dtype_source=dtype_source)
            return
        if not allow_missing:
            params_inv = defaultdict(list)
            for k, v in params.items():
                params_inv[v].append(k)
            for name, param in params.items():
                if not any(p in loaded for p in params_inv[param]):
                    raise AssertionError(
                        f"Parameter '{name}' is missing in file '{filename}', which contains "
                        f"parameters: {_brief_print_list(loaded.keys())}. Set allow_missing=True "
                        "to ignore missing parameters.")
        todo = []
        for name in loaded:
            if not ignore_extra and name not in params:
                raise ValueError(
                    f"Parameter '{name}' loaded from file '{filename}' is not present in "
                    f"ParameterDict, which contains parameters "
                    f"{_brief_print_list(self._params.keys())}. Set ignore_extra=True to ignore. ")
            if name in params:
                params[name]._check_load(loaded[name], ctx, cast_dtype, dtype_source,
                                         filename)
                todo.append((params[name], loaded[name]))
        for param, value in todo:
            param._load_init(value, ctx, cast_dtype=cast_dtype, dtype_source=dtype_source)

    def load_params(self, filename, ctx=None, allow_missing=False, ignore_extra=False):
        """Deprecated: use :meth:`load_parameters`."""
        warnings.warn("load_params is deprecated. Please use load_parameters.")
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)

    def save(self, prefix):
        """Save the model's structure and parameters: ``<prefix>-model.json`` and
        ``<prefix>-model.params``, as MXNet 1.9.1's ``Block.save`` does.

        The JSON holds one entry per block, keyed by its lower-cased class name and its
        position in a depth-first walk (``hybridsequential0``, ``dense1``...), with the block's
        name (``orig_name``), the names its parent gives its children (``children``) and, for
        HybridBlocks, ``hybridized``. neogluon stores no cached graph: ``hybridized`` is always
        ``false`` (a hybridized block captures its graph again on its first call after
        :meth:`load`). The parameters are written by :meth:`save_parameters`.

        Parameters
        ----------
        prefix : str
            Path prefix of the two files.
        """
        model = {}

        def describe(blk, index, structure):
            entry = {"orig_name": blk.name}
            structure[type(blk).__name__.lower() + str(index[0])] = entry
            if isinstance(blk, HybridBlock):
                entry["hybridized"] = False
            children = {}
            entry["children"] = children
            for ch_name, child in blk._children.items():
                index[0] += 1
                children[child.name] = ch_name
                describe(child, index, entry)

        describe(self, [0], model)
        json_file, params_file = prefix + "-model.json", prefix + "-model.params"
        self.save_parameters(params_file)
        _fileio.write_text(json_file, json.dumps(model))

    def load(self, prefix):
        """Load a model saved by :meth:`save` (by neogluon or by MXNet 1.9.1).

        The block must have been built the same way as the saved one (same classes, created
        in the same order): blocks get back their saved names, their parameters are re-keyed
        under those names, children get back their saved names, and the parameters are loaded
        from ``<prefix>-model.params``. A cached graph stored by MXNet for a hybridized block
        is ignored; that block is left hybridized and captures its graph again on its first
        call. If anything fails (missing file, a block the file does not describe, parameters
        that do not match) the block is left as it was.

        Parameters
        ----------
        prefix : str
            Path prefix of ``<prefix>-model.json`` and ``<prefix>-model.params``.
        """
        json_file = prefix + "-model.json"
        with open(json_file) as f:
            try:
                model = json.load(f)
            except ValueError as err:
                raise ValueError(f"'{json_file}' is not a valid model file: {err}") from None
        saved = []  # (block, name, params, children, active) to restore on failure

        def restore(blk, index, structure, path):
            key = type(blk).__name__.lower() + str(index[0])
            entry = structure.get(key) if isinstance(structure, dict) else None
            if not isinstance(entry, dict) or not isinstance(entry.get("orig_name"), str) \
                    or not isinstance(entry.get("children"), dict):
                found = [k for k, v in structure.items() if isinstance(v, dict)] \
                    if isinstance(structure, dict) else []
                raise ValueError(
                    f"Block.load: '{json_file}' does not match this model: block {path} "
                    f"('{blk.name}', {type(blk).__name__}) should be saved as '{key}', but "
                    f"the file has {found} there. The model must be built as the saved one.")
            saved.append((blk, blk._name, OrderedDict(blk.params._params),
                          OrderedDict(blk._children),
                          getattr(blk, "_active", None)))
            blk._name = entry["orig_name"]
            if isinstance(blk, HybridBlock) and entry.get("hybridized"):
                blk._active = True
                blk._clear_cached_op()
            plen = len(blk.params._prefix)
            for p in list(blk.params.keys()):
                param = blk.params._params.pop(p)
                blk.params._params[blk.name + "_" + p[plen:]] = param
            for ch_name, child in blk._children.items():
                index[0] += 1
                restore(child, index, entry, f"{path}.{ch_name}")
            children = entry["children"]
            order = list(blk._children.items())
            for ch_name, child in order:
                if child.name not in children:
                    raise ValueError(
                        f"Block.load: '{json_file}' does not match this model: block {path} "
                        f"has a child '{child.name}' ({type(child).__name__}) that the file "
                        f"does not list (it lists {sorted(children)})")
            blk._children.clear()
            for ch_name, child in order:
                blk._children[children[child.name]] = child

        try:
            restore(self, [0], model, type(self).__name__)
            self.load_parameters(prefix + "-model.params")
        except BaseException:
            for blk, name, params, children, active in reversed(saved):
                blk._name = name
                blk.params._params.clear()
                blk.params._params.update(params)
                blk._children.clear()
                blk._children.update(children)
                if active is not None and blk._active != active:
                    blk._active = active
                    blk._clear_cached_op()
            raise
        _bump()

    def register_child(self, block, name=None):
        """Register ``block`` as a child (attributes that are Blocks are registered already)."""
        if name is None:
            name = str(len(self._children))
        self._children[name] = block
        _bump()

    def register_forward_pre_hook(self, hook):
        """Call ``hook(block, inputs)`` before each forward; returns a :class:`HookHandle`."""
        handle = HookHandle()
        handle.attach(self._forward_pre_hooks, hook)
        return handle

    def register_forward_hook(self, hook):
        """Call ``hook(block, inputs, outputs)`` after each forward; returns a HookHandle."""
        handle = HookHandle()
        handle.attach(self._forward_hooks, hook)
        return handle

    def apply(self, fn):
        """Apply ``fn(block)`` to every descendant, then to this block; returns this block."""
        for cld in self._children.values():
            cld.apply(fn)
        fn(self)
        return self

    def initialize(self, init=initializer.Uniform(), ctx=None, verbose=False,
                   force_reinit=False):
        """Initialise the parameters of this block and its descendants.

        Same as ``self.collect_params().initialize(...)``.

        Parameters
        ----------
        init : Initializer, default Uniform()
            Used for parameters whose own ``init`` is None.
        ctx : Context or list of Context, optional
        verbose : bool, default False
        force_reinit : bool, default False
        """
        self.collect_params().initialize(init, ctx, verbose, force_reinit)

    def hybridize(self, active=True, **kwargs):
        """Hybridize the HybridBlock descendants (see :meth:`HybridBlock.hybridize`)."""
        for cld in self._children.values():
            cld.hybridize(active, **kwargs)

    def cast(self, dtype):
        """Cast the parameters of this block and its descendants to ``dtype``."""
        for child in self._children.values():
            child.cast(dtype)
        for _, param in self.params.items():
            param.cast(dtype)
        _bump()

    def __call__(self, *args):
        if _np_mode():
            # NumPy-array mode: neogluon's own layers compute on mx.nd views of the mx.np
            # inputs (their code is written for nd semantics) and hand back mx.np arrays.
            # Blocks such a layer calls while it computes (Dense's Activation...) run on its
            # nd arrays as in nd mode: one conversion at the outermost layer's boundary,
            # none per nested layer. The usual case (one mx.np input, one nd output) switches
            # views inline: one object each way, no helper calls.
            scope = _ND_SCOPE
            if scope.inside:
                if self._builtin or self._np_container and self._np_nd_ok():
                    return self._call(*args)
                return self._np_inside_nd(scope, args)
            if self._builtin or self._np_container and self._np_nd_ok():
                if len(args) == 1 and type(args[0]) is _npndarray:
                    a = args[0]
                    v = _object_new(NDArray)
                    v._t, v._ctx, v._ag = a._t, a._ctx, a._ag
                    args = (v,)
                else:
                    args = _nd_in(args)
                scope.inside = True
                try:
                    out = self._call(*args)
                finally:
                    scope.inside = False
                if type(out) is NDArray:
                    r = _object_new(_npndarray)
                    r._t, r._ctx, r._ag = out._t, out._ctx, out._ag
                    return r
                return _np_out(out)
            out = self._call(*args)
            if type(out) is not _npndarray:
                _check_np_out(out)
            return out
        return self._call(*args)

    def _np_inside_nd(self, scope, args):
        """A block of the user's that one of neogluon's layers calls while computing on nd
        arrays (a cell inside a wrapper cell): it sees mx.np arrays and must return them, as
        at the top level; the layer gets nd arrays back."""
        scope.inside = False
        try:
            out = self._call(*_np_out(list(args)))
        finally:
            scope.inside = True
        _check_np_out(out)
        return _same_seq(out, _nd_in(out)) if isinstance(out, (list, tuple)) else \
            _nd_in([out])[0]

    def _call(self, *args):
        if self._forward_pre_hooks:
            for hook in list(self._forward_pre_hooks.values()):
                hook(self, args)
        out = self.forward(*args)
        if self._forward_hooks:
            for hook in list(self._forward_hooks.values()):
                hook(self, args, out)
        return out

    def forward(self, *args):
        """Override to compute the output from NDArray inputs."""
        raise NotImplementedError

    def register_op_hook(self, callback, monitor_all=False):
        """Operator-level monitoring hooks are not available in neogluon."""
        for cld in self._children.values():
            cld.register_op_hook(callback, monitor_all)

    def summary(self, *inputs):
        """Print a table of the layers, their output shapes and parameter counts.

        The block must be initialised and not hybridized.
        """
        summary = OrderedDict()
        seen = set()
        hooks = []

        def shape_str(args):
            def conv(a):
                if isinstance(a, NDArray):
                    return a.shape
                if isinstance(a, (list, tuple)):
                    return [conv(i) for i in a]
                return a
            shapes = conv(args)
            if isinstance(shapes, list):
                return str(shapes)[1:-1]
            return str(shapes)

        def register(block):
            if isinstance(block, HybridBlock) and block._active:
                raise AssertionError(f'"{block.name}" must not be hybridized to print summary.')

            def hook(blk, _, outputs):
                key = f"{type(blk).__name__}-{len(summary)}"
                entry = summary[key] = OrderedDict()
                entry["output_shape"] = shape_str(outputs)
                n = trainable = shared = 0
                for p in blk.params.values():
                    size = p.data().size
                    n += size
                    trainable += 0 if p.grad_req == "null" else size
                    if p in seen:
                        shared += size
                    else:
                        seen.add(p)
                entry["trainable"] = trainable
                entry["shared"] = shared
                entry["n_params"] = n

            from .nn.basic_layers import Sequential, HybridSequential
            if not isinstance(block, (Sequential, HybridSequential)):
                hooks.append(block.register_forward_hook(hook))

        summary["Input"] = OrderedDict(output_shape=shape_str(list(inputs)) if len(inputs) > 1
                                       else shape_str(inputs[0]),
                                       n_params=0, trainable=0, shared=0)
        try:
            self.apply(register)
            self(*inputs)
            fmt = "{:>20}  {:>42} {:>15}"
            print("-" * 80)
            print(fmt.format("Layer (type)", "Output Shape", "Param #"))
            print("=" * 80)
            total = trainable = shared = 0
            for layer, e in summary.items():
                print(fmt.format(layer, str(e["output_shape"]), e["n_params"]))
                total += e["n_params"]
                trainable += e["trainable"]
                shared += e["shared"]
            print("=" * 80)
            print("Parameters in forward computation graph, duplicate included")
            print("   Total params: " + str(total))
            print("   Trainable params: " + str(trainable))
            print("   Non-trainable params: " + str(total - trainable))
            print("Shared params in forward computation graph: " + str(shared))
            print("Unique parameters in model: " + str(total - shared))
            print("-" * 80)
        finally:
            for h in hooks:
                h.detach()


# ---------------------------------------------------------------------------- tracing
def _np_mode():
    return _util.is_np_array()


_object_new = object.__new__


def _nd_view(a):
    if type(a) is NDArray or not isinstance(a, NDArray):
        return a
    v = _object_new(NDArray)
    v._t = a._t
    v._ctx = a._ctx
    v._ag = a._ag
    return v


def _nd_in(args):
    out = []
    for a in args:
        ta = type(a)
        if ta is _npndarray:   # the usual case, inline
            v = _object_new(NDArray)
            v._t, v._ctx, v._ag = a._t, a._ctx, a._ag
            a = v
        elif ta is NDArray or a is None:
            pass
        elif ta is _TracedNPArray:
            a = _retraced(a, _TracedNDArray)
        elif isinstance(a, NDArray) and ta is not _TracedNDArray and a.stype == "default":
            a = _nd_view(a)
        elif isinstance(a, (list, tuple)):
            a = type(a)(_nd_in(a))
        out.append(a)
    return out


def _check_np_out(out):
    """In NumPy-array mode a block must return mx.np arrays (MXNet raises TypeError)."""
    if isinstance(out, NDArray):
        if not isinstance(out, _npndarray):
            raise TypeError("Block's output ndarrays/symbols must be of type "
                            "`mxnet.numpy.ndarray` or `mxnet.symbol.numpy._Symbol`, while got "
                            f"output type {type(out)}")
    elif isinstance(out, (list, tuple)):
        for o in out:
            _check_np_out(o)


def _np_out(out):
    if type(out) is NDArray:
        return out.as_np_ndarray()
    if type(out) is _TracedNDArray:
        # recorded, so that the replayed graph converts as well
        return out.as_np_ndarray()
    if isinstance(out, (list, tuple)):
        return _same_seq(out, [_np_out(o) for o in out])
    return out


class _TraceState(threading.local):
    tracer = None


class _NDScope(threading.local):
    # True while one of neogluon's layers computes on nd views in NumPy mode (Block.__call__)
    inside = False


_ND_SCOPE = _NDScope()


_TRACE = _TraceState()


class _CaptureError(Exception):
    pass


class _Ref:
    __slots__ = ("slot",)

    def __init__(self, slot):
        self.slot = slot


class _TracedNDArray(NDArray):
    """An NDArray that knows which graph slot holds it (only exists during a capture)."""
    __slots__ = ("_slot",)

    def __repr__(self):
        # ``print(x)`` in hybrid_forward: while the forward pass is captured MXNet's x is a
        # Symbol and prints as one, without reading values (which would end the capture).
        tr = _TRACE.tracer
        if tr is None or tr.depth:
            return NDArray.__repr__(self)
        return f"<Symbol {tr.slot_name(self._slot)}>"

    __str__ = __repr__


class _TracedNPArray(_npndarray):
    """An mx.np array that knows which graph slot holds it (only exists during a capture)."""
    __slots__ = ("_slot",)

    def __repr__(self):
        tr = _TRACE.tracer
        if tr is None or tr.depth:
            return _npndarray.__repr__(self)
        return f"<_Symbol {tr.slot_name(self._slot)}>"

    __str__ = __repr__


_TRACED = (_TracedNDArray, _TracedNPArray)


def _retraced(a, cls):
    """The same traced array (tensor, slot) as the other class: nd view <-> np view."""
    b = object.__new__(cls)
    b._t = a._t
    b._ctx = a._ctx
    b._ag = a._ag
    b._slot = a._slot
    return b


def _traced(arr, slot):
    a = object.__new__(_TracedNPArray if isinstance(arr, _npndarray) else _TracedNDArray)
    a._t = arr._t
    a._ctx = arr._ctx
    a._ag = arr._ag
    a._slot = slot
    return a


_NOT_TRACED = {"__init__", "__new__", "__repr__", "__str__", "__getattribute__", "__setattr__",
               "__hash__", "__reduce__", "__reduce_ex__", "__dir__", "__class__", "__sizeof__",
               "__init_subclass__", "__subclasshook__", "__format__", "__delattr__",
               "__getstate__", "__len__", "__iter__", "__array__", "__dlpack__",
               "__dlpack_device__", "_operand", "_binary", "_rbinary", "_inplace", "_compare",
               "wait_to_read", "wait_to_write", "attach_grad", "backward", "__eq__", "__ne__",
               "__lt__", "__le__", "__gt__", "__ge__"}
_VALUE_READS = {"asnumpy", "asscalar", "item", "__bool__", "__float__", "__int__", "__index__",
                "tolist", "__complex__", "__format__"}
_IN_PLACE = {"__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__idiv__",
             "__imod__", "copyto", "__ifloordiv__", "__ipow__", "fill"}


def _make_traced_method(name, base_cls=NDArray, kind="method"):
    base = getattr(base_cls, name)
    if name in _VALUE_READS or name in _IN_PLACE:
        what = ("reads values back into Python" if name in _VALUE_READS
                else "writes in place")

        def m(self, *args, **kwargs):
            tr = _TRACE.tracer
            if tr is not None and not tr.depth:
                tr.fail(f"NDArray.{name}() {what}")
            return base(self, *args, **kwargs)
    else:
        def m(self, *args, **kwargs):
            tr = _TRACE.tracer
            if tr is None or tr.depth:
                return base(self, *args, **kwargs)
            tr.depth += 1
            try:
                out = base(self, *args, **kwargs)
            finally:
                tr.depth -= 1
            return tr.record((kind, name), (self,) + args, kwargs, out)
    m.__name__ = name
    return m


def _install_traced_methods():
    for name in dir(NDArray):
        if name in _NOT_TRACED:
            continue
        attr = getattr(NDArray, name, None)
        if callable(attr) and not isinstance(attr, type):
            setattr(_TracedNDArray, name, _make_traced_method(name))
    for cmp in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
        setattr(_TracedNDArray, cmp, _make_traced_method(cmp))

    def _T(self):
        tr = _TRACE.tracer
        if tr is None or tr.depth:
            return NDArray.T.fget(self)
        tr.depth += 1
        try:
            out = NDArray.T.fget(self)
        finally:
            tr.depth -= 1
        return tr.record(("method", "transpose"), (self,), {}, out)
    _TracedNDArray.T = property(_T)
    _TracedNDArray.__hash__ = NDArray.__hash__
    # mx.np arrays: their own (NumPy-semantics) methods, recorded as "npmethod"
    for name in dir(_npndarray):
        if name in _NOT_TRACED or name in ("grad", "T", "device", "_inplace_op"):
            continue
        attr = getattr(_npndarray, name, None)
        if callable(attr) and not isinstance(attr, type):
            setattr(_TracedNPArray, name, _make_traced_method(name, _npndarray, "npmethod"))
    for cmp in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
        setattr(_TracedNPArray, cmp, _make_traced_method(cmp, _npndarray, "npmethod"))
    _TracedNPArray.__hash__ = NDArray.__hash__


_install_traced_methods()


class _FProxyNames(Mapping):
    """``F.__dict__`` / ``F.contrib.__dict__`` while capturing: the names of the module the
    proxy stands for (GluonCV tests ``'box_decode' in F.contrib.__dict__`` to pick the fused
    operator, and on ``mx.sym`` the answer is yes), with each value read through the proxy."""

    def __init__(self, proxy, names):
        self._proxy = proxy
        self._names = names

    def __getitem__(self, name):
        if name not in self._names:
            raise KeyError(name)
        return getattr(self._proxy, name)

    def __contains__(self, name):
        return name in self._names

    def __iter__(self):
        return iter(list(self._names))

    def __len__(self):
        return len(self._names)


class _FProxy:
    """Stands in for ``nd`` as ``F`` while a forward pass is captured."""

    def __init__(self, tracer, path=()):
        self._tracer = tracer
        self._path = path

    def _module(self):
        target = _nd
        for p in self._path:
            target = getattr(target, p)
        return target

    @property
    def __dict__(self):   # noqa: PLE0237 - the instance keeps its own attributes all the same
        return _FProxyNames(self, vars(self._module()))

    def __getattr__(self, name):
        target = _nd
        for p in self._path + (name,):
            target = getattr(target, p)
        path = self._path + (name,)
        if not callable(target) or isinstance(target, type):
            if isinstance(target, types.ModuleType):   # (also while _CapturingModule)
                return _FProxy(self._tracer, path)
            return target
        tracer = self._tracer

        def call(*args, **kwargs):
            if tracer.depth:
                return target(*args, **kwargs)
            if path[:-1] == ("contrib",) and name in ("foreach", "while_loop", "cond"):
                # (MXNet builds the symbolic operator here, naming its subgraphs)
                from ..symbol._control_flow import note_traced_call
                note_traced_call(name, args, kwargs)
            tracer.depth += 1
            try:
                out = target(*args, **kwargs)
            finally:
                tracer.depth -= 1
            return tracer.record(("nd", ".".join(path)), args, kwargs, out)
        return call


def _has_traced(args, kwargs):
    for a in args:
        if isinstance(a, _TRACED):
            return True
        if isinstance(a, (list, tuple)) and any(isinstance(b, _TRACED) for b in a):
            return True
    return any(isinstance(v, _TRACED) for v in kwargs.values())


class _CapturingModule(types.ModuleType):
    """The class of ``nd`` and its public submodules while a forward pass is captured.

    With MXNet, ``hybrid_forward`` code that picks its operator module from the type of an
    input (GluonTS's ``getF(x)``: ``mx.nd`` for an NDArray, ``mx.sym`` for a Symbol) gets
    ``mx.sym`` while the block is hybridized, so those calls are part of the graph. Here the
    captured inputs are NDArrays, so the same code reaches ``mx.nd`` directly, not through
    ``F``: an operator that the captured code takes from ``mx.nd`` (``mx.nd.random``,
    ``mx.nd.linalg``, ...) is recorded as if it had been taken from ``F`` (``mx.nd.zeros``
    too, as ``mx.sym.zeros`` is a node of MXNet's graph). Operators neogluon's own code looks
    up (parameter initialisation during the first call, ...) are recorded only where they get
    a captured array; calls from other threads and calls made inside an operator are never
    recorded.
    Outside a capture the modules have their ordinary class."""

    def __getattribute__(self, name):
        attr = types.ModuleType.__getattribute__(self, name)
        tr = _TRACE.tracer
        if (tr is None or tr.depth or name[:2] == "__" or not callable(attr)
                or isinstance(attr, (type, types.ModuleType))):
            return attr
        path = _CAPTURED_MODULES.get(types.ModuleType.__getattribute__(self, "__name__"))
        if path is None:
            return attr
        op = ".".join(path + (name,))
        # who looked the operator up: code outside neogluon (``F = getF(x); F.zeros``, also
        # when neogluon calls it later, as RNN cells' ``begin_state(func=F.zeros)``) or
        # neogluon itself
        internal = _sys._getframe(1).f_globals.get("__name__", "").startswith("neogluon")

        def call(*args, **kwargs):
            t = _TRACE.tracer
            if t is None or t.depth or (internal and not _has_traced(args, kwargs)):
                return attr(*args, **kwargs)
            t.depth += 1
            try:
                out = attr(*args, **kwargs)
            finally:
                t.depth -= 1
            return t.record(("nd", op), args, kwargs, out)
        call.__name__ = name
        call.__wrapped__ = attr
        return call


# module name -> its path below nd (as _resolve_op looks operators up)
_CAPTURED_MODULES = {"neogluon.ndarray": ()}
for _sub in ("random", "linalg", "contrib", "image", "sparse", "op", "_internal"):
    if isinstance(getattr(_nd, _sub, None), types.ModuleType):
        _CAPTURED_MODULES[getattr(_nd, _sub).__name__] = (_sub,)
_MODULE_CAPTURE = {"depth": 0, "saved": []}
_MODULE_CAPTURE_LOCK = threading.Lock()


def _modules_capturing(on):
    """Give ``nd`` and its submodules the capturing class (nested captures count)."""
    import sys
    with _MODULE_CAPTURE_LOCK:
        st = _MODULE_CAPTURE
        if on:
            st["depth"] += 1
            if st["depth"] == 1:
                st["saved"] = []
                for mname in _CAPTURED_MODULES:
                    m = sys.modules.get(mname)
                    if m is not None and type(m) is types.ModuleType:
                        m.__class__ = _CapturingModule
                        st["saved"].append(m)
        else:
            st["depth"] -= 1
            if st["depth"] == 0:
                for m in st["saved"]:
                    m.__class__ = types.ModuleType
                st["saved"] = []


def _encode(value, tracer):
    """JSON-able description of an op argument, with array slots as {'@': slot}."""
    if isinstance(value, _TRACED):
        return {"@": value._slot}
    if isinstance(value, NDArray):
        raise _CaptureError("an NDArray that is neither an input, a parameter nor the result of "
                            "an F operator was used")
    if value is None or isinstance(value, (bool, int, float, str)):
        if isinstance(value, float) and not np.isfinite(value):
            return {"float": repr(value)}
        return value
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    if isinstance(value, tuple):
        return {"tuple": [_encode(v, tracer) for v in value]}
    if isinstance(value, list):
        return [_encode(v, tracer) for v in value]
    if isinstance(value, dict):
        return {"dict": {str(k): _encode(v, tracer) for k, v in value.items()}}
    if isinstance(value, slice):
        return {"slice": [_encode(value.start, tracer), _encode(value.stop, tracer),
                          _encode(value.step, tracer)]}
    if value is Ellipsis:
        return {"ellipsis": True}
    if isinstance(value, type) and issubclass(value, np.generic):
        return {"dtype": np.dtype(value).name}
    if isinstance(value, np.dtype):
        return {"dtype": value.name}
    if isinstance(value, Context):
        return {"ctx": [value.device_type, value.device_id]}
    raise _CaptureError(f"an argument of type {type(value).__name__} cannot be recorded")


def _decode(value, env):
    if isinstance(value, dict):
        if "@" in value:
            return env[value["@"]]
        if "tuple" in value:
            return tuple(_decode(v, env) for v in value["tuple"])
        if "dict" in value:
            return {k: _decode(v, env) for k, v in value["dict"].items()}
        if "slice" in value:
            return slice(*[_decode(v, env) for v in value["slice"]])
        if "ellipsis" in value:
            return Ellipsis
        if "dtype" in value:
            return np.dtype(value["dtype"]).type
        if "float" in value:
            return float(value["float"])
        if "ctx" in value:
            return Context(*value["ctx"])
        raise MXNetError(f"graph file: unknown argument encoding {value!r}")
    if isinstance(value, list):
        return [_decode(v, env) for v in value]
    return value


def _has_ref(enc):
    if isinstance(enc, dict):
        return "@" in enc or any(_has_ref(v) for v in enc.values())
    if isinstance(enc, list):
        return any(_has_ref(v) for v in enc)
    return False


class _Tracer:
    def __init__(self):
        self.nodes = []
        self.nslots = 0
        self.inputs = []
        self.params = []  # (slot, Parameter)
        self.param_slots = {}
        self.failed = None
        self.depth = 0
        self.blocks = []
        self.block_ids = set()
        self.F = _FProxy(self)

    def fail(self, reason):
        if self.failed is None:
            self.failed = reason

    def slot_name(self, slot):
        """A name for what a slot holds, as MXNet names the symbol: ``data`` (``data0``,
        ``data1``, ... with several inputs), the parameter's name, or the operator's."""
        if slot in self.inputs:
            return "data" if len(self.inputs) == 1 else f"data{self.inputs.index(slot)}"
        for s, p in self.params:
            if s == slot:
                return p.name
        for node in reversed(self.nodes):
            if slot in node["out"]:
                return node["op"][-1].split(".")[-1]
        return "symbol"

    def new_slot(self):
        s = self.nslots
        self.nslots += 1
        return s

    def add_input(self, arr):
        s = self.new_slot()
        self.inputs.append(s)
        return _traced(arr, s)

    def param(self, p, arr):
        s = self.param_slots.get(id(p))
        if s is None:
            s = self.new_slot()
            self.param_slots[id(p)] = s
            self.params.append((s, p))
        return _traced(arr, s)

    def _wrap(self, out, slots):
        if isinstance(out, NDArray):
            s = self.new_slot()
            slots.append(s)
            return _traced(out, s)
        if isinstance(out, (list, tuple)):
            return _same_seq(out, [self._wrap(o, slots) for o in out])
        return out

    def record(self, op, args, kwargs, out):
        if self.failed is not None:
            return out
        try:
            enc_args = [_encode(a, self) for a in args]
            enc_kwargs = {k: _encode(v, self) for k, v in kwargs.items()}
        except _CaptureError as err:
            self.fail(str(err))
            return out
        if kwargs.get("out") is not None:
            self.fail("an operator with out= writes in place")
            return out
        slots = []
        wrapped = self._wrap(out, slots)
        structure = _structure(out)
        self.nodes.append({"op": list(op), "args": enc_args, "kwargs": enc_kwargs,
                           "out": slots, "structure": structure})
        return wrapped


def _np_record(path, fn, args, kwargs):
    """mx.np / mx.npx functions called while a forward pass is captured are graph nodes."""
    tr = _TRACE.tracer
    if tr is None or tr.depth:
        return fn(*args, **kwargs)
    tr.depth += 1
    try:
        out = fn(*args, **kwargs)
    finally:
        tr.depth -= 1
    return tr.record(("np", path), args, kwargs, out)


_np_hooks.HOOK[0] = _np_record


def _structure(out):
    if isinstance(out, NDArray):
        return 0
    if isinstance(out, (list, tuple)):
        return {"list" if isinstance(out, list) else "tuple": [_structure(o) for o in out]}
    return None


def _flatten_out(out, tracer, flat):
    if isinstance(out, _TRACED):
        flat.append(out._slot)
        return 0
    if isinstance(out, NDArray):
        raise _CaptureError("an output is not the result of an F operator")
    if isinstance(out, (list, tuple)):
        # (a hybridized block returns its nested outputs as lists, tuples included, as
        # MXNet's cached op regroups them)
        return {"list": [_flatten_out(o, tracer, flat) for o in out]}
    raise _CaptureError(f"an output of type {type(out).__name__} cannot be recorded")


def _flatten_in(args):
    """The arrays in nested lists/tuples of inputs, and the structure to rebuild them."""
    flat = []

    def walk(a):
        if isinstance(a, NDArray):
            flat.append(a)
            return 0
        if a is None:
            return None
        if isinstance(a, (list, tuple)):
            return {"list" if isinstance(a, list) else "tuple": [walk(i) for i in a]}
        raise ValueError("When hybridized, the input of HybridBlock must be (nested) list of "
                         f"NDArray or None, but got {a} of type {type(a)}")
    fmt = walk(tuple(args))
    return flat, fmt


def _rebuild(fmt, values, pos):
    if fmt == 0:
        return values[pos], pos + 1
    if isinstance(fmt, dict):
        kind, items = next(iter(fmt.items()))
        res = []
        for f in items:
            v, pos = _rebuild(f, values, pos)
            res.append(v)
        return (res if kind == "list" else tuple(res)), pos
    return None, pos


def _untrace(out):
    if isinstance(out, _TRACED):
        a = _new(out._t, out._ctx)
        a._ag = out._ag
        if type(out) is _TracedNPArray:
            a.__class__ = _npndarray
        return a
    if isinstance(out, (list, tuple)):
        return [_untrace(o) for o in out]    # lists, as the replays return (see _flatten_out)
    return out


def _resolve_op(op):
    kind, name = op
    if kind == "npmethod":
        fn = getattr(_npndarray, name, None)
        if fn is None:
            raise MXNetError(f"graph: mx.np.ndarray has no method {name!r}")
        return fn
    if kind == "np":
        import importlib
        mod, _, fname = name.rpartition(".")
        fn = getattr(importlib.import_module("neogluon." + mod), fname, None)
        if fn is None:
            raise MXNetError(f"graph: neogluon.{name} does not exist")
        return fn
    if kind == "method":
        fn = getattr(NDArray, name, None)
        if fn is None and name == "transpose":
            fn = NDArray.transpose
        if fn is None:
            raise MXNetError(f"graph: NDArray has no method {name!r}")
        return fn
    if name == "_gluon_rnn" and not hasattr(_nd, name):
        from .rnn import _op  # noqa: F401  (registers nd._gluon_rnn)
    target = _nd
    for p in name.split("."):
        target = getattr(target, p, None)
        if target is None:
            raise MXNetError(f"graph: neogluon.nd has no operator {name!r}")
    return target


class _Graph:
    """A recorded forward pass: inputs, parameter slots, a list of op calls and outputs."""

    def __init__(self, nnodes_slots, inputs, params, nodes, out_slots, out_fmt):
        self.nslots = nnodes_slots
        self.inputs = inputs
        self.params = params          # list of (slot, Parameter)
        self.nodes = nodes
        self.out_slots = out_slots
        self.out_fmt = out_fmt
        self.blocks = []
        self.snapshot = []
        self.version = None
        self._compile()

    def _compile(self):
        # Each node becomes (kind, fn, args, kwargs, outputs, structure): kind 0 when every
        # positional argument is an array slot, 1 when some are constants, 3 when keyword
        # arguments are array slots too (graphs from symbols pass every input by name), 2
        # when arrays sit inside containers (decoded on every call). Kind 4 (added by
        # _fuse.fuse_lstm_cells afterwards) is a fused LSTM cell that reads and writes env.
        prog = []
        views_ok = self._views_ok()
        for node in self.nodes:
            fn = _resolve_op(node["op"])
            if fn is _split_fn and views_ok(node):
                fn = _split_views_fn
            args = node["args"]
            kwargs = node["kwargs"]
            out = node["out"]
            structure = node["structure"]
            outs = out[0] if structure == 0 else out
            isref = [isinstance(a, dict) and "@" in a and len(a) == 1 for a in args]
            simple = all(r or not isinstance(a, (dict, list)) for r, a in zip(isref, args)) \
                and not any(_has_ref(v) for v in kwargs.values())
            if simple:
                kw = {k: _decode(v, None) for k, v in kwargs.items()}
                if all(isref):
                    prog.append((0, fn, tuple(a["@"] for a in args), kw, outs, structure))
                else:
                    tmpl = [None if r else a for r, a in zip(isref, args)]
                    pos = [(j, a["@"]) for j, (r, a) in enumerate(zip(isref, args)) if r]
                    prog.append((1, fn, (tmpl, pos), kw, outs, structure))
            elif all(r or not isinstance(a, (dict, list)) for r, a in zip(isref, args)) and \
                    all(_is_bare_ref(v) or not _has_ref(v) for v in kwargs.values()):
                tmpl = [None if r else a for r, a in zip(isref, args)]
                pos = [(j, a["@"]) for j, (r, a) in enumerate(zip(isref, args)) if r]
                kwc = {k: _decode(v, None) for k, v in kwargs.items() if not _is_bare_ref(v)}
                kwr = [(k, v["@"]) for k, v in kwargs.items() if _is_bare_ref(v)]
                prog.append((3, fn, (tmpl, pos), (kwc, kwr), outs, structure))
            else:
                prog.append((2, fn, args, kwargs, outs, structure))
        # zoneout masks (where of a Dropout of ones), FullyConnected layers sharing a weight
        # (one transpose) and LSTM cells' pointwise parts as one entry each (kind 4; see
        # _fuse.py); the first pass leaves None where it took nodes
        self._nenv = self.nslots    # env length; share_fc_transposes adds slots
        prog = _fuse.fuse_dropout_masks(self, prog)
        prog = _fuse.share_fc_transposes(self, prog)
        prog = _fuse.fuse_lstm_cells(self, prog)
        self._prog = [e for e in prog if e is not None]

    def _views_ok(self):
        """Which split nodes may give views of their input instead of copies: those whose
        input is an intermediate value of this graph (not an input, a parameter or an
        output) in a graph where no node writes into a value (no ``out=``), so that
        nothing can show through the views (MXNet's split copies; only a user's later write
        into the input or a parameter could tell the difference)."""
        fixed = set(self.inputs) | {s for s, _ in self.params} | set(self.out_slots)
        writes = any("out" in n["kwargs"] for n in self.nodes)

        def ok(node):
            if writes or node["kwargs"].get("out") is not None:
                return False
            a = node["args"][0] if node["args"] else node["kwargs"].get("data")
            return isinstance(a, dict) and len(a) == 1 and "@" in a and a["@"] not in fixed
        return ok

    def run(self, inputs, ctx):
        env = [None] * self._nenv
        for s, a in zip(self.inputs, inputs):
            env[s] = a
        for s, p in self.params:
            env[s] = _param_data(p, ctx)
        _run_program(self._prog, env)
        vals = [env[s] for s in self.out_slots]
        return _rebuild(self.out_fmt, vals, 0)[0]

    def to_json(self, input_names):
        slot_name = {}
        for s, n in zip(self.inputs, input_names):
            slot_name[s] = n
        params = []
        for s, p in self.params:
            params.append({"slot": s, "name": p.name, "shape": list(p.shape),
                           "dtype": np.dtype(p.dtype).name,
                           "kind": "arg" if p._differentiable else "aux"})
        return json.dumps({
            "format": "neogluon-graph", "version": 1,
            "note": "neogluon's own graph description; not MXNet symbol JSON",
            "nslots": self.nslots,
            "inputs": [{"slot": s, "name": slot_name[s]} for s in self.inputs],
            "params": params, "nodes": self.nodes,
            "outputs": self.out_slots, "output_format": self.out_fmt}, indent=1)


def _param_data(p, ctx):
    """``p.data(ctx)``, with a shortcut for the common single-context case."""
    d = p._data
    if d is not None and len(d) == 1 and p._stype == "default":
        a = d[0]
        c = a._ctx
        if c is ctx or c == ctx:
            return a
    return p.data(ctx)


def _snapshot(blocks):
    """What a captured graph depends on: each block's children and parameters."""
    return [(tuple(map(id, b._children.values())), tuple(map(id, b._reg_params.values())),
             b._active) for b in blocks]


def _is_bare_ref(v):
    return isinstance(v, dict) and len(v) == 1 and "@" in v


def _run_program(prog, env):
    """Run a captured graph's op list, reading and writing the slot list ``env``."""
    for kind, fn, a, kw, outs, structure in prog:
        if kind == 0:
            if kw:
                res = fn(*[env[i] for i in a], **kw)
            else:
                res = fn(*[env[i] for i in a])
        elif kind == 1:
            args = list(a[0])
            for j, i in a[1]:
                args[j] = env[i]
            res = fn(*args, **kw)
        elif kind == 3:
            args = list(a[0])
            for j, i in a[1]:
                args[j] = env[i]
            kwargs = dict(kw[0])
            for k, i in kw[1]:
                kwargs[k] = env[i]
            res = fn(*args, **kwargs)
        elif kind == 4:
            fn(env)     # a fused entry (_fuse.py) writes its outputs itself
            continue
        else:
            res = fn(*[_decode(v, env) for v in a],
                     **{k: _decode(v, env) for k, v in kw.items()})
        if structure == 0:
            env[outs] = res
        elif outs:
            flat = []
            _flat_values(res, flat)
            for s, v in zip(outs, flat):
                env[s] = v


def _flat_values(res, flat):
    if isinstance(res, NDArray):
        flat.append(res)
    elif isinstance(res, (list, tuple)):
        for r in res:
            _flat_values(r, flat)


# ---------------------------------------------------------------------------- HybridBlock
class _CaptureFailure:
    """A failed capture: the structure counter then, the blocks it ran through and their
    snapshot. A plain object rather than a tuple, so that the unregistered-container check does
    not mistake the blocks it holds for a user's container."""

    __slots__ = ("structure", "blocks", "snapshot")

    def __init__(self, structure, blocks, snapshot):
        self.structure, self.blocks, self.snapshot = structure, blocks, snapshot


class HybridBlock(Block):
    """A Block whose forward is written once, as ``hybrid_forward(F, x, *args, **params)``.

    ``F`` is ``neogluon.nd``; the block's registered parameters arrive as keyword arguments
    holding their arrays on the input's context. Children must be HybridBlocks.
    After :meth:`hybridize` the forward pass is captured once per input signature and replayed
    (see the module notes); the numbers and gradients are those of the imperative pass.
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._cached_graph = ()
        self._graphs = {}
        self._active = False
        self._flags = []
        self._capture_failed = None
        self._graph_version = None
        self._bad_static = False
        self._arg_format = None
        self._compile_mode = None
        self._compile_failed = None
        self._compile_sigs = 0
        self._cuda_graphs = False
        self._cudagraph_failed = None
        self._autograph = None

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if isinstance(value, HybridBlock):
            self._clear_cached_op()

    def _clear_cached_op(self):
        self._cached_graph = ()
        self._graphs = {}
        self._capture_failed = None
        self._arg_format = None
        self._compile_failed = None
        self._compile_sigs = 0
        self._cudagraph_failed = None
        self._autograph = None

    def register_child(self, block, name=None):
        if not isinstance(block, HybridBlock):
            raise ValueError(
                f"Children of HybridBlock must also be HybridBlock, but {block} has type "
                f"{type(block)}. If you are using Sequential, please try HybridSequential "
                "instead.")
        super().register_child(block, name)
        self._clear_cached_op()

    def hybridize(self, active=True, backend=None, clear=True, static_alloc=False,
                  static_shape=False, inline_limit=2, forward_bulk_size=None,
                  backward_bulk_size=None, **kwargs):
        """Turn capture-and-replay on or off, for this block and its descendants.

        Parameters
        ----------
        active : bool, default True
        backend : None
            neogluon has no subgraph backends; anything but None raises MXNetError.
        clear : bool, default True
            Drop this block's captured graphs (and the argument structure they were made
            for). Children are always cleared, as in MXNet.
        static_alloc, static_shape : bool
            Replay already reuses the captured graph. ``static_alloc=True`` makes the process
            keep the CPU memory it frees for reuse (``neogluon/_malloc.py``: no page faults
            per step; peak memory stays allocated), as MXNet's static memory does. As in
            MXNet 1.9.1, ``static_shape=True`` without ``static_alloc=True`` makes the first
            call raise MXNetError.
        inline_limit, forward_bulk_size, backward_bulk_size : int, optional
            MXNet CachedOp tuning; accepted and recorded in ``_flags``, no effect here.
        **kwargs
            Backend options (only meaningful with a backend). neogluon's own
            ``compile='off'|'sync'|'auto'`` runs the captured graph through torch.compile
            (Inductor); default: ``NEOGLUON_COMPILE`` / ``set_compile_mode`` (see
            ``neogluon/gluon/_compile.py``). neogluon's ``cuda_graphs=None|True|False``: on
            a GPU, plain hybridize records an input signature as CUDA graphs once it has run
            a few times in a row (``static_alloc=True, static_shape=True``: from its second
            call); False turns that off for this block and its children, None (default)
            follows ``NEOGLUON_AUTO_CUDA_GRAPHS`` / ``NEOGLUON_CUDA_GRAPHS`` (see
            ``neogluon/gluon/_cudagraph.py``).
        """
        if backend is not None:
            raise MXNetError(f"hybridize: neogluon has no subgraph backend {backend!r}; "
                             "use backend=None")
        self._active = active
        self._compile_mode = _compile.check_mode(kwargs.pop("compile", None))
        cuda_graphs = kwargs.pop("cuda_graphs", None)
        self._flags = [("static_alloc", static_alloc), ("static_shape", static_shape),
                       ("inline_limit", inline_limit)]
        if forward_bulk_size is not None:
            self._flags.append(("forward_bulk_size", forward_bulk_size))
        if backward_bulk_size is not None:
            self._flags.append(("backward_bulk_size", backward_bulk_size))
        # MXNet's CachedOp refuses this pair when the block is first called, not here.
        self._bad_static = bool(static_shape) and not static_alloc
        self._cuda_graphs = _cudagraph.mode_for(static_alloc, static_shape, cuda_graphs)
        if static_alloc and active:
            # as MXNet's static_alloc: memory once allocated stays with the process
            _malloc.keep_freed_memory()
        if clear:
            self._clear_cached_op()
        _bump()
        if active and (self._forward_hooks or self._forward_pre_hooks):
            warnings.warn(f'"{self}" is being hybridized while still having forward hook/'
                          f'pre-hook. If "{self}" is a child of HybridBlock, the hooks will not '
                          "take effect.")
        more = {} if cuda_graphs is None else {"cuda_graphs": cuda_graphs}
        super().hybridize(active, static_alloc=static_alloc, static_shape=static_shape,
                          inline_limit=inline_limit, forward_bulk_size=forward_bulk_size,
                          backward_bulk_size=backward_bulk_size, **more)

    def cast(self, dtype):
        self._clear_cached_op()
        super().cast(dtype)

    def optimize_for(self, x, *args, backend=None, clear=False, static_alloc=False,
                     static_shape=False, **kwargs):
        """Hybridize and capture the forward pass for these inputs now.

        neogluon has no subgraph backends: ``backend`` must be None.
        """
        if backend is not None:
            raise MXNetError(f"optimize_for: neogluon has no subgraph backend {backend!r}; "
                             "use backend=None")
        if clear or not self._active:
            self.hybridize(True, static_alloc=static_alloc, static_shape=static_shape)
        self(x, *args)

    def infer_shape(self, *args):
        """Fill in the unknown dimensions of this block's parameters from the inputs.

        Built-in layers implement this directly; for other blocks the forward pass is run on
        symbols (``F = mx.sym``) and the parameter shapes come from symbolic shape inference.
        """
        try:
            flat, fmt = _flatten_in(args)
            names, out = self._symbolic_graph(len(flat), fmt)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                arg_s, _, aux_s = out.infer_shape(**{n: a.shape for n, a in zip(names, flat)})
        except Exception as err:  # noqa: BLE001 - any failure means: cannot infer
            arg_s, why = None, f" ({err})"
        else:
            why = ""
        if arg_s is not None:
            sdict = dict(zip(out.list_arguments(), arg_s))
            sdict.update(zip(out.list_auxiliary_states(), aux_s))
            for p in self.collect_params().values():
                if p.name in sdict:
                    p.shape = sdict[p.name]
            return
        raise ValueError(
            f"Deferred initialization failed because shape cannot be inferred: "
            f"{type(self).__name__} '{self.name}' has parameters with unknown shape "
            f"({', '.join(f'{p.name} {p.shape}' for p in self.params.values() if p._deferred_init)}"
            f") that neither its infer_shape() nor symbolic shape inference could infer{why}; "
            "give the shapes explicitly")

    def infer_type(self, *args):
        """Set the dtype of this block's parameters to the first input's dtype."""
        for p in self.collect_params().values():
            p.dtype = args[0].dtype

    def _deferred_infer_shape(self, *args):
        try:
            self.infer_shape(*args)
        except (AssertionError, MXNetError) as e:
            raise ValueError(f"Deferred initialization failed because shape cannot be "
                             f"inferred. {e}") from None

    def _param_arrays(self, ctx, x, args):
        reg = self._reg_params
        if not reg:
            return {}
        try:
            res = {k: _param_data(v, ctx) for k, v in reg.items()}
            if type(x) is NDArray and type(next(iter(res.values()))) is not NDArray:
                # mx.np parameters of a layer running on nd inputs: nd views of them, kept
                # by each Parameter while they still show its array (same tensor, context
                # and autograd record)
                for k, a in res.items():
                    p = reg[k]
                    tw = p._nd_twin
                    if (tw is None or tw._t is not a._t or tw._ag is not a._ag
                            or tw._ctx is not a._ctx):
                        tw = _nd_view(a)
                        if type(a) is _npndarray:
                            p._nd_twin = tw
                    res[k] = tw
            return res
        except DeferredInitializationError:
            self._deferred_infer_shape(x, *args)
            for v in self.params.values():
                v._finish_deferred_init()
            for v in reg.values():
                v._finish_deferred_init()
            return {k: v.data(ctx) for k, v in reg.items()}

    def forward(self, x, *args):
        """Run ``hybrid_forward`` with this block's parameters.

        With NDArray inputs ``F`` is ``nd`` and the parameters are arrays; with Symbol inputs
        ``F`` is ``mx.sym``, the parameters are variables named by the Parameters' names, and
        the result is a Symbol. Mixing the two raises ValueError.
        """
        if (type(x) is not NDArray or args) and _has_symbol(x, args):
            return self._forward_symbol(x, args)
        tr = _TRACE.tracer
        if tr is not None:
            return self._forward_traced(tr, x, args)
        if self._active:
            return self._call_cached(x, args)
        ctx = x._ctx if type(x) is NDArray or type(x) is _npndarray else \
            _first_ctx((x,) + args)
        if ctx is None:
            raise ValueError("In HybridBlock, there must be one NDArray in the input. Please "
                             "check the type of the args.\n")
        params = self._param_arrays(ctx, x, args)
        if ctx == current_context():
            return self.hybrid_forward(_nd, x, *args, **params)
        with ctx:
            return self.hybrid_forward(_nd, x, *args, **params)

    def _forward_symbol(self, x, args):
        params = {k: v.var() for k, v in self._reg_params.items()}
        with self.name_scope():
            return self.hybrid_forward(_sym, x, *args, **params)

    def _symbolic_graph(self, flat_count, in_fmt):
        """This block's forward pass as a Symbol over inputs 'data' (or 'data0', 'data1'...)."""
        names = ["data"] if flat_count == 1 else [f"data{i}" for i in range(flat_count)]
        inputs = [_sym.var(n) for n in names]
        rebuilt = _rebuild(in_fmt, inputs, 0)[0]
        out = self._forward_symbol(rebuilt[0], tuple(rebuilt[1:]))
        outs = []

        def walk(o):
            if isinstance(o, _sym.Symbol):
                outs.append(o)
            elif isinstance(o, (list, tuple)):
                for i in o:
                    walk(i)
            else:
                raise ValueError(f"the forward pass returned {type(o).__name__}, not Symbols")
        walk(out)
        return names, (outs[0] if len(outs) == 1 else _sym.Group(outs))

    def _forward_traced(self, tr, x, args):
        if id(self) not in tr.block_ids:
            tr.block_ids.add(id(self))
            tr.blocks.append(self)
        ctx = _first_ctx((x,) + args)
        params = self._param_arrays(ctx, x, args)
        params = {k: tr.param(self._reg_params[k], v) for k, v in params.items()}
        with ctx:
            return self.hybrid_forward(tr.F, x, *args, **params)

    def _signature(self, flat, ctx):
        return (tuple((a.shape, a._t.dtype) if a is not None else None for a in flat), ctx,
                autograd.is_training())

    def _call_cached(self, x, args):
        if self._bad_static:
            raise MXNetError("Check failed: config_.static_alloc: static_alloc must be True "
                             f"when static_shape is True (block {self.name}: hybridize with "
                             "static_alloc=True, static_shape=True)")
        allargs = (x,) + args
        flat, fmt = _flatten_in(allargs)
        ctx = x._ctx if isinstance(x, NDArray) else _first_ctx(flat)
        if ctx is None:
            raise ValueError("In HybridBlock, there must be one NDArray in the input. Please "
                             "check the type of the args.\n")
        if len(flat) > 1:
            ctxs = {a._ctx for a in flat if a is not None}
            if len(ctxs) > 1:
                raise ValueError(
                    "Find multiple contexts in the input, After hybridized, the HybridBlock "
                    "only supports one input context. You can print the ele.ctx in the input "
                    f"arguments to inspect their contexts. Find all contexts = {ctxs}")
        self._check_arg_format(fmt)
        key = self._signature(flat, ctx) + (repr(fmt),)
        g = self._graphs.get(key)
        if g is not None and g.version != _STRUCTURE[0]:
            # Something changed somewhere: keep the graph if the blocks it ran are unchanged.
            if _snapshot(g.blocks) == g.snapshot:
                g.version = _STRUCTURE[0]
            else:
                self._graphs.pop(key)
                self._cached_graph = ()
                g = None
        if g is not None:
            mode = self._compile_mode or _compile._MODE[0]
            if mode != "off" or _cudagraph.wanted(self, ctx):
                out = _compile.call(self, g, key, flat, ctx, mode)
                if out is not None:
                    return out
            self._last_run = g
            if ctx == current_context():
                return g.run(flat, ctx)
            with ctx:
                return g.run(flat, ctx)
        failed = self._capture_failed
        if failed is not None:
            if failed.structure == _STRUCTURE[0] or _snapshot(failed.blocks) == failed.snapshot:
                failed.structure = _STRUCTURE[0]
                return self._imperative(x, args, ctx)
        return self._capture(flat, fmt, ctx, key)

    def _check_arg_format(self, fmt):
        """Hold a hybridized block to the argument structure of its first call, as MXNet's
        CachedOp does: which arguments are arrays, None or nested lists. Arguments left to
        their default (trailing ``None``) may be passed or omitted."""
        top = [-1 if f is None else f for f in fmt["tuple"]]
        stored = self._arg_format
        if stored is None:
            self._arg_format = top
            return
        if top == stored:
            return
        short, long_ = (top, stored) if len(top) < len(stored) else (stored, top)
        if len(top) != len(stored) and long_[:len(short)] == short and all(
                f == -1 for f in long_[len(short):]):
            return

        def show(f):
            return [0 if i == 0 else i if i == -1 else "list" for i in f]
        raise ValueError("The argument structure of HybridBlock does not match the cached "
                         f"version. Stored format = {show(stored)}, input format = {show(top)}"
                         " (0: an NDArray, -1: None)")

    def _imperative(self, x, args, ctx):
        params = self._param_arrays(ctx, x, args)
        with ctx:
            return self.hybrid_forward(_nd, x, *args, **params)

    def _capture(self, flat, fmt, ctx, key):
        in_fmt = fmt
        if getattr(self, "_declared_shapes", None) is None:
            # the shapes MXNet's export writes: its Parameter variables are made (and kept)
            # at the first hybridized call, before deferred shapes are known (0 dims)
            self._declared_shapes = {p.name: p.shape for p in self.collect_params().values()}
        tr = _Tracer()
        traced = [tr.add_input(a) for a in flat]
        rebuilt = _rebuild(fmt, traced, 0)[0]
        _TRACE.tracer = tr
        _modules_capturing(True)
        try:
            out = self._forward_traced(tr, rebuilt[0], tuple(rebuilt[1:]))
        finally:
            _TRACE.tracer = None
            _modules_capturing(False)
        graph = None
        if tr.failed is None:
            try:
                flat = []
                fmt = _flatten_out(out, tr, flat)
                graph = _Graph(tr.nslots, tr.inputs, tr.params, tr.nodes, flat, fmt)
            except (_CaptureError, MXNetError) as err:
                tr.fail(str(err))
        if graph is None:
            warnings.warn(f"{type(self).__name__} '{self.name}': hybridize could not capture the "
                          f"forward pass ({tr.failed}); running it imperatively instead.",
                          stacklevel=4)
            self._capture_failed = _CaptureFailure(_STRUCTURE[0], tr.blocks, _snapshot(tr.blocks))
            self._cached_graph = ()
        else:
            graph.blocks = tr.blocks
            graph.in_fmt = in_fmt
            graph.snapshot = _snapshot(tr.blocks)
            graph.version = _STRUCTURE[0]
            if len(self._graphs) >= 16:
                self._graphs.pop(next(iter(self._graphs)))
            self._graphs[key] = graph
            self._cached_graph = (tr.inputs, graph)
        return _untrace(out)

    def export(self, path, epoch=0, remove_amp_cast=True):
        """Write ``path-symbol.json`` and ``path-%04d.params`` (MXNet's formats).

        The symbol file is MXNet's JSON graph of this block's forward pass, made by running
        ``hybrid_forward`` on symbols (inputs ``data``, or ``data0``, ``data1``... for several);
        the parameter file has ``arg:``/``aux:`` keys. Both load in MXNet 1.9.1
        (``SymbolBlock.imports``) and in neogluon. The block must have been hybridized and run
        forward once. A forward pass that cannot run on symbols (it reads values into Python,
        say) is written as neogluon's own graph description instead, with a warning: only
        neogluon reads that file.
        """
        if not self._cached_graph:
            raise RuntimeError("Please first call block.hybridize() and then run forward with "
                               "this block at least once before calling export.")
        text, sym, graph = self._graph_text()
        if sym is not None and remove_amp_cast:
            text = _sym.symbol._without_amp_cast(sym)._tojson(
                getattr(self, "_declared_shapes", None))
        data = text.encode()
        _fileio.write_bytes(f"{path}-symbol.json", data)
        arg_dict = {}
        if sym is not None:
            arg_names = set(sym.list_arguments())
            aux_names = set(sym.list_auxiliary_states())
            for p in self.collect_params().values():
                if p.name in arg_names:
                    arg_dict[f"arg:{p.name}"] = p._reduce()
                elif p.name in aux_names:
                    arg_dict[f"aux:{p.name}"] = p._reduce()
        else:
            for _, p in graph.params:
                kind = "arg" if p._differentiable else "aux"
                arg_dict[f"{kind}:{p.name}"] = p._reduce()
        _nd.save("%s-%04d.params" % (path, epoch), arg_dict)   # atomic

    def _graph_text(self):
        """(symbol file text, Symbol or None, captured graph) of the cached forward pass."""
        _, graph = self._cached_graph
        n = len(graph.inputs)
        try:
            _, sym = self._symbolic_graph(n, getattr(graph, "in_fmt", {"tuple": [0] * n}))
            text = sym._tojson(getattr(self, "_declared_shapes", None))
        except Exception as err:  # noqa: BLE001 - fall back to neogluon's graph file
            warnings.warn(f"export: the forward pass of {type(self).__name__} '{self.name}' "
                          f"cannot run on symbols ({err}); writing neogluon's own graph "
                          "description, which MXNet cannot read", stacklevel=3)
            sym = None
            names = ["data"] if n == 1 else [f"data{i}" for i in range(n)]
            text = graph.to_json(names)
        return text, sym, graph

    def hybrid_forward(self, F, x, *args, **kwargs):
        """Override: compute the output with ``F`` operators (``F`` is ``neogluon.nd``)."""
        raise NotImplementedError


def _has_symbol(x, args):
    """Whether the inputs are Symbols; ValueError when Symbols and NDArrays are mixed."""
    has_sym = has_nd = False
    stack = [x, *args]
    while stack:
        a = stack.pop()
        if isinstance(a, _Symbol):
            has_sym = True
        elif isinstance(a, NDArray):
            has_nd = True
        elif isinstance(a, (list, tuple)):
            stack.extend(a)
    if has_sym and has_nd:
        raise ValueError("In HybridBlock, we do not support mixed NDArrays and Symbols types "
                         "for the input. Please check the type of the args.\n")
    return has_sym


def _common_prefix(names):
    if not names:
        return ""
    prefix = names[0]
    for name in names:
        i = 0
        while i < len(prefix) and i < len(name) and prefix[i] == name[i]:
            i += 1
        prefix = prefix[:i]
    return prefix


class SymbolBlock(HybridBlock):
    """A block that runs a Symbol graph.

    Parameters
    ----------
    outputs : Symbol or list of Symbol
        The outputs to compute.
    inputs : Symbol or list of Symbol
        The input variables.
    params : ParameterDict, optional
        Parameters to reuse (by name); the graph's other free variables become new
        Parameters whose shapes are inferred from the first input.
    """

    @staticmethod
    def imports(symbol_file, input_names, param_file=None, ctx=None, allow_missing=False,
                ignore_extra=False):
        """Load a model written by :meth:`HybridBlock.export` (MXNet's or neogluon's).

        Parameters
        ----------
        symbol_file : str
            ``path-symbol.json``.
        input_names : str or list of str
            Names of the inputs (``'data'``, or ``'data0'``, ``'data1'``...).
        param_file : str, optional
            ``path-%04d.params``.
        ctx : Context or list of Context, optional
        """
        text = _sym.symbol._read_text(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        try:
            try:
                desc = json.loads(text)
            except RecursionError:
                raise MXNetError("not a symbol file (JSON nested too deeply)") from None
            except ValueError as err:
                raise MXNetError(f"not a symbol file ({err})") from None
            if isinstance(desc, dict) and desc.get("format") == "neogluon-graph":
                ret = SymbolBlock(desc, input_names)
            else:
                sym = _sym.symbol._from_desc(desc)
                if param_file is None:
                    inputs = [_sym.var(i, dtype="float32") for i in input_names]
                else:
                    inputs = [_sym.var(i) for i in input_names]
                ret = SymbolBlock(sym, inputs)
        except MXNetError as err:
            raise MXNetError(f"symbol file '{symbol_file}': {err}") from None
        except AssertionError as err:   # (MXNet's type: a row_sparse parameter)
            raise AssertionError(f"symbol file '{symbol_file}': {err}") from None
        if param_file is not None:
            ret.collect_params().load(param_file, ctx, allow_missing, ignore_extra,
                                      cast_dtype=True, dtype_source="saved")
        return ret

    def __init__(self, outputs, inputs, params=None):
        super().__init__(prefix=None, params=None)
        self._prefix = ""
        self._params = ParameterDict("", params)
        self._graph = None
        if isinstance(outputs, dict):
            self._init_graph_file(outputs, inputs)
            return
        if isinstance(inputs, _Symbol) and len(inputs.list_outputs()) == 1:
            inputs = [inputs]
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            outputs = outputs[0]
        syms, self._in_format = _flatten_sym(inputs, "input")
        out, self._out_format = _flatten_sym(outputs, "output")
        input_names = set()
        for i in syms:
            if len(i.get_internals().list_outputs()) != 1:
                raise AssertionError(f"Input symbols must be variable, but {i} is an output of "
                                     "operators")
            input_names.add(i.name)
        for o in out:
            for j in o.get_internals():
                if j.attr("__storage_type__") == "1":
                    raise AssertionError(f"SymbolBlock doesn't support Parameter '{j.name}' "
                                         "because its storage type is 'row_sparse'.")
        out = _sym.Group(out) if len(out) > 1 else out[0]
        arg_params = out.list_arguments()
        aux_params = out.list_auxiliary_states()
        in_types = {}
        for i in syms:
            t = i.attr("__dtype__")
            if t is not None:
                in_types[i.name] = np.dtype(_sym.symbol._CODE_TO_DTYPE[int(t)]).type
        arg_types, _, aux_types = out.infer_type_partial(**in_types)
        for i, arg in enumerate(arg_params):
            if arg not in input_names:
                self.params.get(arg, allow_deferred_init=True,
                                dtype=arg_types[i] if arg_types[i] is not None else np.float32)
        for i, aux in enumerate(aux_params):
            if aux not in input_names:
                self.params.get(aux, grad_req="null", allow_deferred_init=True,
                                dtype=aux_types[i] if aux_types[i] is not None else np.float32)
        self._symbol = out
        self._input_syms = syms
        self._cached_graph = (syms, out)
        names = list(self._params.keys())
        lp = len(_common_prefix(names)) if len(names) > 1 else 0
        self._reg_params = {k[lp:]: v for k, v in self._params.items()}

    def _init_graph_file(self, desc, inputs):
        # A graph description written by an earlier neogluon export.
        by_name = {i["name"]: i["slot"] for i in desc["inputs"]}
        missing = [n for n in inputs if n not in by_name]
        if missing or len(inputs) != len(by_name):
            raise MXNetError(f"input names {list(inputs)} do not match the graph's inputs "
                             f"{list(by_name)}")
        slot_params = []
        for pd in desc["params"]:
            kw = dict(shape=tuple(pd["shape"]), dtype=pd["dtype"], allow_deferred_init=True)
            if pd["kind"] == "aux":
                kw["grad_req"] = "null"
                kw["differentiable"] = False
            p = self.params.get(pd["name"], **kw)
            slot_params.append((pd["slot"], p))
        self._graph = _Graph(desc["nslots"], [by_name[n] for n in inputs], slot_params,
                             desc["nodes"], desc["outputs"], desc["output_format"])
        self._symbol = None
        self._cached_graph = (self._graph.inputs, self._graph)
        names = list(self._params.keys())
        lp = len(_common_prefix(names)) if len(names) > 1 else 0
        self._reg_params = {k[lp:]: v for k, v in self._params.items()}

    def __repr__(self):
        if self._graph is not None:
            g = self._graph
            return (f"SymbolBlock(\n<graph of {len(g.nodes)} ops> : {len(g.inputs)} -> "
                    f"{len(g.out_slots)}\n)")
        return (f"SymbolBlock(\n{self._symbol} : {len(self._input_syms)} -> "
                f"{len(self._symbol.list_outputs())}\n)")

    def _finish_params(self, flat):
        if not any(p._deferred_init for p in self.params.values()):
            return
        shapes = {s.name: a.shape for s, a in zip(self._input_syms, flat)}
        try:
            arg_s, _, aux_s = self._symbol.infer_shape_partial(**shapes)
        except MXNetError as err:
            raise ValueError(f"Deferred initialization failed because shape cannot be "
                             f"inferred. {err}") from None
        sdict = dict(zip(self._symbol.list_arguments(), arg_s))
        sdict.update(zip(self._symbol.list_auxiliary_states(), aux_s))
        for p in self.params.values():
            if p._deferred_init:
                shape = sdict.get(p.name)
                if shape:
                    p.shape = shape
                p._finish_deferred_init()

    def forward(self, x, *args):
        if self._graph is not None:
            allargs = (x,) + args
            ctx = _first_ctx(allargs)
            for _, p in self._graph.params:
                if p._deferred_init:
                    p._finish_deferred_init()
            with ctx:
                return self._graph.run(allargs, ctx)
        flat, fmt = _flatten_sym([x] + list(args), "input")
        if fmt != self._in_format:
            raise AssertionError("Invalid input format")
        if isinstance(flat[0], _Symbol) or any(isinstance(a, _Symbol) for a in flat):
            if not all(isinstance(a, _Symbol) for a in flat):
                raise ValueError("In HybridBlock, we do not support mixed NDArrays and Symbols "
                                 "types for the input. Please check the type of the args.\n")
            mapping = {s.name: a for s, a in zip(self._input_syms, flat)}
            ret = _sym.symbol._substitute(self._symbol, mapping)
            return _regroup_sym(list(ret), self._out_format)
        ctx = flat[0]._ctx
        self._finish_params(flat)
        tr = _TRACE.tracer
        env = {s.name: a for s, a in zip(self._input_syms, flat)}
        if tr is not None:
            for p in self.params.values():
                env[p.name] = tr.param(p, _param_data(p, ctx))
            F = tr.F
        else:
            for p in self.params.values():
                env[p.name] = p.data(ctx)
            F = _nd
        with ctx:
            outs = _evaluate(self._symbol, env, F=F, ctx=ctx)
        return _regroup_sym(outs, self._out_format)

    def _clear_cached_op(self):
        pass

    def _graph_text(self):
        if self._graph is not None:
            return HybridBlock._graph_text(self)
        return self._symbol.tojson(), self._symbol, None

    def cast(self, dtype):
        Block.cast(self, dtype)

    def reset_ctx(self, ctx):
        """Move every Parameter of this block to ``ctx`` (a Context or a list of them)."""
        for p in self.collect_params().values():
            p.reset_ctx(ctx)

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError


def _flatten_sym(args, inout_str):
    """MXNet's ``_flatten``: a flat list and a format (a Symbol counts its outputs)."""
    if isinstance(args, (NDArray, _Symbol)):
        if isinstance(args, _Symbol):
            n = len(args.list_outputs())
            return [args], (n if n > 1 else 0)
        return [args], 0
    if args is None:
        return [None], -1
    if not isinstance(args, (list, tuple)):
        raise AssertionError(f"HybridBlock {inout_str} must be (nested) list of Symbol or "
                             f"NDArray, but got {args} of type {type(args)}")
    flat, fmts = [], []
    for i in args:
        f, fmt = _flatten_sym(i, inout_str)
        flat.extend(f)
        fmts.append(fmt)
    return flat, fmts


def _regroup_sym(args, fmt):
    def rec(args, fmt):
        if isinstance(fmt, int):
            if fmt == 0:
                return args[0], args[1:]
            if fmt == -1:
                if args[0] is not None:
                    raise ValueError("We do not support passing types that are not None when "
                                     "the initial HybridBlock has received NoneType and has "
                                     "been hybridized. Received arg = {}, fmt = {}."
                                     .format(args[0], fmt))
                return None, args[1:]
            return args[:fmt], args[fmt:]
        ret = []
        for i in fmt:
            res, args = rec(args, i)
            ret.append(res)
        return ret, args
    return rec(args, fmt)[0]


# ------------------------------------------------- MXNet's names for programs that import them
# ``from mxnet.gluon.block import _flatten, _regroup`` (custom HybridBlocks and recurrent cells
# of MXNet-era packages) and the ``symbol``/``ndarray`` modules MXNet's block.py exposes.
symbol = _sym
ndarray = _nd


def _flatten(args, inout_str):
    """MXNet's ``gluon.block._flatten``: ``(flat, fmt)`` for a (nested) list of NDArray,
    Symbol or None. ``flat`` lists the leaves in order; ``fmt`` mirrors the nesting with an
    int per leaf: 0 for an NDArray or a single-output Symbol, the number of outputs of a
    multi-output Symbol, -1 for None.

    Raises ValueError for anything else, naming ``inout_str`` (the block).
    """
    if isinstance(args, NDArray):
        return [args], 0
    if isinstance(args, _Symbol):
        n = len(args.list_outputs())
        return [args], (n if n > 1 else 0)
    if args is None:
        return [None], -1
    if not isinstance(args, (list, tuple)):
        raise ValueError(f"When hybridized, the input of HybridBlock {inout_str} must be "
                         f"(nested) list of Symbol or NDArray, but got {args} of type "
                         f"{type(args)}")
    flat, fmts = [], []
    for item in args:
        leaves, fmt = _flatten(item, inout_str)
        flat.extend(leaves)
        fmts.append(fmt)
    return flat, fmts


def _regroup(args, fmt):
    """MXNet's ``gluon.block._regroup``: the structure ``fmt`` (from :func:`_flatten`) rebuilt
    over the flat ``args``. Nesting comes back as lists; a multi-output Symbol's count ``n``
    takes ``n`` consecutive items as one list; -1 takes a None.

    Raises ValueError for a format below -1, a non-None item where None was recorded, or
    ``args`` that is not a list or tuple where a nested format needs one.
    """
    def take(items, f):
        if isinstance(f, int):
            if f < -1:
                raise ValueError(f"Unsupported encoded format {f}.")
            if f == 0:
                return items[0], items[1:]
            if f == -1:
                if items[0] is not None:
                    raise ValueError("We do not support passing types that are not None when "
                                     "the initial HybridBlock has received NoneType and has "
                                     f"been hybridized. Received arg = {items[0]}, fmt = {f}.")
                return None, items[1:]
            return items[:f], items[f:]
        if not isinstance(items, (list, tuple)):
            raise ValueError("When hybridized, the output of HybridBlock must be (nested) list "
                             f"of Symbol or NDArray, but got {items} of type {type(items)}")
        out = []
        for sub in f:
            value, items = take(items, sub)
            out.append(value)
        return out, items
    return take(args, fmt)[0]
