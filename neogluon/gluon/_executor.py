"""Symbolic executors: ``Symbol.bind``, ``Symbol.simple_bind`` and :class:`Executor`.

An executor is a Symbol with arrays bound to its arguments, gradient buffers and auxiliary
states, as in MXNet 1.x. It runs on the machinery ``hybridize`` already uses: the graph is
evaluated by a private :class:`HybridBlock` (``_GraphRunner``) whose inputs are every
argument and auxiliary array, so the first forward pass of a shape is captured into an op
list and later ones replay it (with ``NEOGLUON_COMPILE`` / ``set_compile_mode`` it is
compiled with Inductor, and on a GPU it is recorded as CUDA graphs, as a
``hybridize(static_alloc=True, static_shape=True)`` block is: an executor's memory is static
by nature).

Gradients: the arguments whose ``grad_req`` is not ``'null'`` enter the graph through
private aliases (new leaf tensors over the same storage) attached to the executor's gradient
buffers, and ``backward`` differentiates with respect to exactly those: the executor never
marks the caller's arrays, and a plain ``autograd.backward`` elsewhere never writes into an
executor's buffers. ``'write'`` overwrites a buffer (zeros where the graph gives no
gradient, as MXNet writes them), ``'add'`` accumulates.

Outputs: ``Executor.outputs`` are the same NDArray objects from one forward pass to the next
(MXNet's outputs are fixed buffers), so a reference taken earlier sees the new values.

Forward passes with ``is_train=False`` record nothing. MXNet still allows a ``backward``
after one (its graph is static); here that backward first runs the same inference-mode
forward again with recording on, then differentiates it.
"""
from __future__ import annotations

import operator

import numpy as np
import torch

from .. import autograd
from .. import random as _random
from ..base import MXNetError, MXNetValueError
from ..context import Context
from ..ndarray.ndarray import NDArray, _new
from ..symbol import symbol as _symmod
from ..symbol import _control_flow as _cf
from .block import HybridBlock, _STRUCTURE, _np_mode
from . import _compile, _cudagraph

__all__ = ["Executor", "bind", "simple_bind"]

_GRAD_REQS = ("write", "add", "null")

# Operators whose backward ignores the gradient arriving at their output: a head computed by
# one of them needs no head gradient (MXNet's loss layers; BlockGrad sends none).
_LOSS_HEADS = frozenset({
    "SoftmaxOutput", "Softmax", "LinearRegressionOutput", "LogisticRegressionOutput",
    "MAERegressionOutput", "SVMOutput", "MakeLoss", "make_loss", "BlockGrad",
    "stop_gradient", "_sparse_LinearRegressionOutput", "_sparse_LogisticRegressionOutput",
    "_sparse_MAERegressionOutput"})


class _UnknownArgument(MXNetError, TypeError):
    """An argument name the symbol does not have (MXNet raises TypeError)."""


class _GradReqError(MXNetError, ValueError, KeyError):
    """A grad_req that is not 'write', 'add' or 'null'."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


def _check_ctx(ctx, what="bind"):
    if not isinstance(ctx, Context):
        raise TypeError(f"{what}: ctx must be a Context, got {type(ctx).__name__}")


def _grad_reqs(grad_req, arg_names, what):
    """One grad_req per argument from a str, a list or a dict ('null' where a dict is
    silent)."""
    if isinstance(grad_req, str):
        reqs = [grad_req] * len(arg_names)
    elif isinstance(grad_req, (list, tuple)):
        if len(grad_req) != len(arg_names):
            raise MXNetValueError(f"{what}: grad_req has {len(grad_req)} entries but the symbol "
                                  f"has {len(arg_names)} arguments ({', '.join(arg_names)})")
        reqs = list(grad_req)
    elif isinstance(grad_req, dict):
        # As MXNet, names that are not arguments are ignored.
        reqs = [grad_req.get(n, "null") for n in arg_names]
    else:
        raise TypeError(f"{what}: grad_req must be a str, a list or a dict, got "
                        f"{type(grad_req).__name__}")
    for n, r in zip(arg_names, reqs):
        if r not in _GRAD_REQS:
            raise _GradReqError(f"{what}: grad_req={r!r} for argument {n!r} is not one of "
                                "'write', 'add' and 'null'")
    return reqs


def _arrays(what, given, names, allow_missing):
    """``given`` (a list in ``names`` order or a dict by name) as a list aligned with
    ``names``, None where missing and allowed."""
    if given is None:
        given = {} if allow_missing else []
    if isinstance(given, (list, tuple)):
        if len(given) != len(names):
            raise MXNetValueError(f"Length of {what} ({len(given)}) does not match the number of "
                                  f"{'arguments' if what.startswith('arg') else 'auxiliary states'}"
                                  f" ({len(names)}: {', '.join(names)})")
        out = list(given)
    elif isinstance(given, dict):
        # As MXNet's bind, a dict is read by the symbol's names: other keys are ignored.
        out = []
        for n in names:
            if n not in given and not allow_missing:
                raise MXNetValueError(f"key `{n}` is missing in `{what}`")
            out.append(given.get(n))
    else:
        raise TypeError(f"{what} must be a list or a dict of NDArrays, got "
                        f"{type(given).__name__}")
    for n, a in zip(names, out):
        if a is not None and not isinstance(a, NDArray):
            raise TypeError(f"{what}[{n!r}] must be an NDArray, got {type(a).__name__}")
    return out


def _shape_str(s):
    return "None" if s is None else str(tuple(s))


def _infer_or_raise(symbol, shapes, what):
    """``symbol.infer_shape(**shapes)``; an MXNetError naming every argument whose shape stays
    unknown (MXNet's message), or the node whose shapes disagree."""
    import warnings
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            arg_s, out_s, aux_s = symbol.infer_shape(**shapes)
    except MXNetError as err:
        given = ", ".join(f"{k}: {_shape_str(v)}" for k, v in shapes.items())
        raise MXNetError(f"{what}: the given shapes ({given}) do not fit the graph: {err}") \
            from None
    if arg_s is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            part = symbol.infer_shape_partial(**shapes)
        names = symbol.list_arguments() + symbol.list_auxiliary_states()
        known = list(part[0]) + list(part[2])
        unknown = [f"{n}: {_shape_str(s) if s else 'None'}" for n, s in zip(names, known)
                   if not s or any(int(d) <= 0 for d in s)]
        raise MXNetError(f"{what}: shape inference cannot decide the shapes of these "
                         f"arguments (0 or None: unknown); give them as inputs: "
                         f"{', '.join(unknown)}")
    return arg_s, out_s, aux_s


class _GraphRunner(HybridBlock):
    """Evaluates one Symbol on its argument and auxiliary arrays (inputs in that order)."""

    def __init__(self, symbol, names):
        super().__init__(prefix="_executor_", params=None)
        self._symbol = symbol
        self._names = names
        self._fast_run = None    # (graph, input tensors, their shapes, training): run_bound
        self._last_run = None

    def hybrid_forward(self, F, *arrays):
        return _symmod._evaluate(self._symbol, dict(zip(self._names, arrays)), F=F)

    def run_bound(self, vals, ctx):
        """``self(*vals)`` for an executor's bound arrays, which are the same arrays call
        after call: when they still hold the very tensors of the last call (so the same
        shapes, dtypes and devices), the graph that call ran runs again directly, without
        the per-call checks of a hybridized block's call (argument structure, contexts,
        signature, graph lookup)."""
        fast = self._fast_run
        if fast is not None:
            g, ts, shapes, training = fast
            if (g.version == _STRUCTURE[0] and training == autograd.is_training()
                    and len(vals) == len(ts)
                    and all(map(operator.is_, [v._t for v in vals], ts))
                    and [t.shape for t in ts] == shapes
                    and not self._forward_pre_hooks and not self._forward_hooks
                    and (self._compile_mode or _compile._MODE[0]) == "off"
                    and not _np_mode()):
                return g.run(vals, ctx)
        self._fast_run = None
        self._last_run = None
        res = self(*vals)
        g = self._last_run
        if (g is not None and type(self)._call_cached is HybridBlock._call_cached
                and not _cudagraph.wanted(self, ctx)
                and all(type(v) is NDArray for v in vals)):
            ts = tuple(v._t for v in vals)
            self._fast_run = (g, ts, [t.shape for t in ts], autograd.is_training())
        return res


def _ctx_group(node):
    """A node's ``ctx_group`` attribute (stored as ``__ctx_group__``, as MXNet stores it)."""
    a = node.attrs
    g = a.get("__ctx_group__", a.get("ctx_group"))
    if g is None and node.extra:
        g = node.extra.get("__ctx_group__", node.extra.get("ctx_group"))
    return g


def _node_ctx_groups(symbol):
    return {id(n): _ctx_group(n) for n in symbol._order()}


def _cse_enabled():
    import os
    return os.environ.get("MXNET_ELIMINATE_COMMON_EXPR", "1").strip() not in ("0", "false")


def _nondeterministic(node):
    op = node.op
    return (op in _symmod._MUTATE or op == "Custom" or op == "Dropout" or "random" in op or
            "sample" in op or op.startswith("_shuffle") or bool(node.subgraphs))


def _eliminate_common_expr(symbol):
    """MXNet's common-subexpression pass: operator nodes with the same operator, attributes
    and inputs are computed once (random, state-mutating and custom operators excepted).
    Outputs that would then be the same entry get a ``_copy`` so that each stays an array
    of its own. Returns ``symbol`` itself when nothing merges."""
    canon = {}         # id(node) -> its replacement node
    seen = {}          # signature -> node
    rebuilt = {}
    changed = False
    for node in symbol._order():
        if node.is_var:
            canon[id(node)] = node
            continue
        ins = [(canon[id(c)], j) for c, j in node.inputs]
        moved = any(a is not c for (a, _), (c, _) in zip(ins, node.inputs))
        if moved:
            c = _symmod._Node.__new__(_symmod._Node)
            for slot in _symmod._Node.__slots__:
                setattr(c, slot, getattr(node, slot))
            c.inputs = ins
            node_now = c
        else:
            node_now = node
        if not _nondeterministic(node):
            sig = (node.op, tuple(sorted((k, str(v)) for k, v in node.attrs.items())),
                   tuple((id(a), j) for a, j in ins), node.nout)
            hit = seen.get(sig)
            if hit is not None:
                canon[id(node)] = hit
                changed = True
                continue
            seen[sig] = node_now
        canon[id(node)] = node_now
        rebuilt[id(node)] = node_now
    if not changed:
        return symbol
    outs, used = [], set()
    for node, i in symbol._outputs:
        n = canon[id(node)]
        key = (id(n), i)
        if key in used:
            cp = _symmod._Node("_copy", f"{n.name}_copy{len(outs)}", {}, [(n, i)])
            outs.append((cp, 0))
        else:
            used.add(key)
            outs.append((n, i))
    return _symmod.Symbol(outs)


def _plan_megabytes(symbol, arg_shapes, arg_types, reqs):
    """The memory a static plan of this graph would hold for its intermediate results, in
    MB, as MXNet's debug string reports it: every operator output, plus, where a gradient
    flows (from an argument that takes one, not stopped by BlockGrad), the gradient of
    that output."""
    import warnings
    names = symbol.list_arguments()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        internals = symbol.get_internals()
        shapes = internals.infer_shape_partial(**{n: s for n, s in zip(names, arg_shapes)})[1]
        types = internals.infer_type_partial(**{n: t for n, t in zip(names, arg_types)})[1]
    size = {}
    for (node, i), s, t in zip(internals._outputs, shapes, types):
        nbytes = int(np.prod(s)) * np.dtype(t or np.float32).itemsize if s else 0
        size[(id(node), i)] = nbytes
    wants = {n for n, r in zip(names, reqs) if r != "null"}
    stops = ("BlockGrad", "stop_gradient")
    order = symbol._order()
    below = {}           # a gradient-taking argument is upstream
    for node in order:
        if node.is_var:
            below[id(node)] = node.name in wants
        else:
            below[id(node)] = node.op not in stops and \
                any(below[id(c)] for c, _ in node.inputs)
    above = {id(n): False for n in order}    # its output's gradient reaches a head
    for node, _ in symbol._outputs:
        above[id(node)] = node.op not in stops
    for node in reversed(order):
        if above[id(node)] and node.op not in stops:
            for c, _ in node.inputs:
                above[id(c)] = True
    # outputs that share their input's memory (MXNet runs these in place)
    views = ("BlockGrad", "stop_gradient", "Reshape", "reshape", "Flatten", "flatten",
             "expand_dims", "squeeze", "identity", "_identity_with_attr_like_rhs")
    total = 0
    for node in order:
        if node.is_var or node.op in views:
            continue
        flows = below[id(node)] and above[id(node)]
        for i in range(node.nout):
            b = size.get((id(node), i), 0)
            total += 2 * b if flows else b
    return int(round(total / (1 << 20)))



def _bytes_names(callback):
    """``callback`` called with each name as UTF-8 bytes, as MXNet's executor calls it."""
    def call(name, array):
        callback(name.encode("utf-8") if isinstance(name, str) else name, array)
    return call

class Executor:
    """A Symbol bound to arrays (made by :meth:`Symbol.bind` / :meth:`Symbol.simple_bind`).

    Attributes
    ----------
    arg_arrays, grad_arrays, aux_arrays : list of NDArray
        The arguments (``list_arguments()`` order), their gradient buffers (None where
        ``grad_req`` is 'null' or no buffer was given) and the auxiliary states.
    outputs : list of NDArray
        The results of the last :meth:`forward` (the same arrays every time).
    """

    def __init__(self, symbol, ctx, arg_arrays, grad_arrays, grad_reqs, aux_arrays,
                 group2ctx=None, out_shapes=None, out_types=None, _shared_outputs=None):
        self._symbol = symbol
        self._ctx = ctx
        self._arg_names = symbol.list_arguments()
        self._aux_names = symbol.list_auxiliary_states()
        self._out_names = symbol.list_outputs()
        self.arg_arrays = list(arg_arrays)
        self.grad_arrays = list(grad_arrays)
        self.aux_arrays = list(aux_arrays)
        self._reqs = list(grad_reqs)
        self._grad_req = dict(zip(self._arg_names, grad_reqs))
        self._group2ctx = dict(group2ctx) if group2ctx else None
        self._monitor_callback = None
        self._monitor_user = None
        self._monitor_all = False
        self._arg_dict = self._grad_dict = self._aux_dict = self._output_dict = None
        # arg index -> (the arg's tensor when made, alias NDArray[, sparse indices])
        self._aliases = {}
        self._heads = None          # the last forward's results (their autograd graph)
        self._recorded = False
        self._last_is_train = False
        self._needs_grad = any(r != "null" and g is not None
                               for r, g in zip(self._reqs, self.grad_arrays))
        # the graph that runs: the bound one after the common-subexpression pass (same
        # arguments, outputs and names)
        self._run_symbol = _eliminate_common_expr(symbol) if _cse_enabled() else symbol
        self._runner = _GraphRunner(self._run_symbol, self._arg_names + self._aux_names)
        # (a graph with while_loop or cond is not captured: values decide, at every forward
        # pass, how many steps run and which branch; it is evaluated node by node)
        if not _cf.contains(self._run_symbol, ("_while_loop", "_cond")):
            if ctx.device_typeid == 2:
                # an executor's memory is static: CUDA graphs as for static_alloc+static_shape
                self._runner.hybridize(True, static_alloc=True, static_shape=True)
            else:
                self._runner.hybridize(True)
        self._placement = None
        if self._group2ctx:
            groups = _node_ctx_groups(self._run_symbol)
            g2c = self._group2ctx
            self._placement = lambda node: g2c.get(groups.get(id(node)))
        # Output buffers: MXNet allocates them at bind; a reshaped executor may share the
        # memory of its parent's (written into, not replaced).
        self._shared_out = _shared_outputs or {}
        self.outputs = []
        if out_shapes is not None:
            for i, (s, t) in enumerate(zip(out_shapes, out_types or [None] * len(out_shapes))):
                if i in self._shared_out:
                    self.outputs.append(self._shared_out[i])
                    continue
                dt = t if t is not None else np.float32
                self.outputs.append(_zeros(s, ctx, dt))

    # ------------------------------------------------------------------ dictionaries
    @property
    def arg_dict(self):
        """Arguments by name."""
        if self._arg_dict is None:
            self._arg_dict = dict(zip(self._arg_names, self.arg_arrays))
        return self._arg_dict

    @property
    def grad_dict(self):
        """Gradient buffers by argument name (only the arguments that have one)."""
        if self._grad_dict is None:
            self._grad_dict = {n: g for n, g in zip(self._arg_names, self.grad_arrays)
                               if g is not None}
        return self._grad_dict

    @property
    def aux_dict(self):
        """Auxiliary states by name."""
        if self._aux_dict is None:
            self._aux_dict = dict(zip(self._aux_names, self.aux_arrays))
        return self._aux_dict

    @property
    def output_dict(self):
        """Outputs by name (``list_outputs()``)."""
        if self._output_dict is None or len(self._output_dict) != len(self.outputs):
            self._output_dict = dict(zip(self._out_names, self.outputs))
        return self._output_dict

    # ------------------------------------------------------------------ running
    def _inputs(self, with_grad):
        """The arrays the graph runs on: aliases attached to the gradient buffers for the
        arguments that take gradients (when ``with_grad``), the arguments themselves
        otherwise, then the auxiliary states."""
        vals = list(self.arg_arrays)
        variables = []
        if with_grad:
            for i, (a, g, r) in enumerate(zip(self.arg_arrays, self.grad_arrays, self._reqs)):
                if r == "null" or g is None:
                    continue
                if type(a) is not NDArray and a.stype != "default":
                    # a sparse alias: the same stored values and indices (as a new leaf), so
                    # that executors bound to the same array keep their own gradients
                    held = self._aliases.get(i)
                    if held is None or held[0] is not a._sdata or held[2] is not a._aux:
                        alias = a._with(a._sdata.detach(), a._aux, a._ctx)
                        autograd._attach(alias, r, g, register=False)
                        held = self._aliases[i] = (a._sdata, alias, a._aux)
                    vals[i] = held[1]
                    variables.append(held[1])
                    continue
                held = self._aliases.get(i)
                if held is None or held[0] is not a._t:
                    alias = _new(a._t.detach(), a._ctx)
                    autograd._attach(alias, r, g, register=False)
                    held = self._aliases[i] = (a._t, alias)
                vals[i] = held[1]
                variables.append(held[1])
        return vals + list(self.aux_arrays), variables

    def _run(self, is_train, record):
        vals, variables = self._inputs(record)
        ctx = self._ctx
        scope = autograd.record(train_mode=is_train) if record else \
            autograd.pause(train_mode=is_train)
        with scope:
            # sparse inputs run eagerly: the captured graph sees dense arrays only, while the
            # operators keep the storage types MXNet's storage-type inference gives; a graph
            # without arguments (sym.ones(...) + sym.zeros(...)) has no input for the cached
            # runner to take its context from: it runs as is too
            sparse = not all(type(v) is NDArray for v in vals) and \
                any(isinstance(v, NDArray) and v.stype != "default" for v in vals)
            if self._monitor_callback is not None or self._placement is not None or sparse \
                    or not vals:
                monitored = self._monitor_callback is not None
                observer = self._observer() if monitored else None
                self._taps = [] if monitored and record else None
                with ctx:
                    res = _symmod._evaluate(self._run_symbol,
                                            dict(zip(self._arg_names + self._aux_names, vals)),
                                            ctx=ctx, placement=self._placement,
                                            observer=observer,
                                            prepare=self._tap if self._taps is not None
                                            else None)
            else:
                with ctx:
                    res = self._runner.run_bound(vals, ctx)
        if isinstance(res, NDArray):
            res = [res]
        self._variables = variables
        return list(res)

    def forward(self, is_train=False, **kwargs):
        """Compute the outputs.

        Parameters
        ----------
        is_train : bool, default False
            Run operators in training mode (Dropout active, BatchNorm on batch statistics)
            and record for :meth:`backward`.
        **kwargs : NDArray or numpy.ndarray
            New values for arguments, copied into ``arg_dict`` first.

        Returns
        -------
        list of NDArray
            :attr:`outputs`.
        """
        if kwargs:
            arg_dict = self.arg_dict
            for name, array in kwargs.items():
                if not isinstance(array, (NDArray, np.ndarray)):
                    raise ValueError("only accept keyword argument of NDArrays and "
                                     f"numpy.ndarray (got {type(array).__name__} for {name!r})")
                if name not in arg_dict:
                    raise _UnknownArgument(f"Unknown argument {name} (the arguments are "
                                           f"{', '.join(self._arg_names)})")
                if arg_dict[name].shape != tuple(array.shape):
                    raise MXNetValueError(f"Shape not match! Argument {name}, need: "
                                          f"{arg_dict[name].shape}, received: "
                                          f"{tuple(array.shape)}")
                arg_dict[name][:] = array
        record = bool(is_train) and self._needs_grad
        # A forward that is not recorded may be redone, recorded, by backward: it must then
        # draw the same random numbers (Dropout's mask with mode='always'), as MXNet's one
        # forward pass does.
        self._rng_before = _random._snapshot() if self._needs_grad and not record else None
        res = self._run(bool(is_train), record)
        self._heads = res
        self._recorded = record
        self._last_is_train = bool(is_train)
        self._publish(res)
        return self.outputs

    def _publish(self, res):
        """Make :attr:`outputs` show ``res``: the same NDArray objects take the new tensors
        (no copy), or, where they are a view shared with another executor, get them
        written in."""
        outs = self.outputs
        if len(outs) != len(res):
            self.outputs = outs = [None] * len(res)
        for i, r in enumerate(res):
            o = outs[i]
            if o is None or type(o) is not type(r) or r.stype != "default":
                outs[i] = r
            elif i in self._shared_out:
                o[:] = r.detach() if hasattr(r, "detach") else r
            else:
                o._t = r._t
        self._output_dict = None

    def backward(self, out_grads=None, is_train=True):
        """Compute the gradients of the arguments into :attr:`grad_arrays`.

        Parameters
        ----------
        out_grads : NDArray, list of NDArray or dict of str to NDArray, optional
            The gradients arriving at the outputs. Outputs computed by a loss operator
            (``SoftmaxOutput``, ``MakeLoss``, the ``*RegressionOutput`` layers...) need none;
            any other output that depends on an argument with a gradient does.
        is_train : bool, default True
            Accepted for MXNet compatibility.
        """
        if self._heads is None:
            # MXNet runs the backward pass over the bound arrays even before any forward:
            # here the forward pass it needs is run first.
            self.forward(is_train=True)
        if not self._needs_grad:
            return
        names = self._out_names
        if out_grads is None:
            out_grads = []
        elif isinstance(out_grads, NDArray):
            out_grads = [out_grads]
        elif isinstance(out_grads, dict):
            unknown = [k for k in out_grads if k not in names]
            if unknown:
                raise _UnknownArgument(f"Executor.backward: out_grads names {unknown}, which "
                                       f"are not outputs ({', '.join(names)})")
            out_grads = [out_grads.get(k) for k in names]
        elif not isinstance(out_grads, (list, tuple)):
            raise TypeError("out_grads must be an NDArray, a list or a dict of NDArrays, got "
                            f"{type(out_grads).__name__}")
        for g in out_grads:
            if g is not None and not isinstance(g, NDArray):
                raise TypeError(f"inputs must be NDArray, got {type(g).__name__}")
        if not self._recorded:
            # MXNet's static graph allows backward after forward(is_train=False): redo that
            # forward with recording on (same mode, same values), keep the outputs shown.
            snap = getattr(self, "_rng_before", None)
            if snap is not None:
                after = _random._snapshot()
                _random._restore(snap)
                try:
                    self._heads = self._run(self._last_is_train, True)
                finally:
                    _random._restore(after)
            else:
                self._heads = self._run(self._last_is_train, True)
            self._recorded = True
        heads, hgs = [], []
        out_nodes = self._run_symbol._outputs
        for i, h in enumerate(self._heads):
            g = out_grads[i] if i < len(out_grads) else None
            t = autograd._head_t(h)
            if not t.requires_grad:
                continue
            if g is None:
                node = out_nodes[i][0] if i < len(out_nodes) else None
                if node is None or not _is_loss_head(node):
                    raise MXNetError(
                        f"Executor.backward: output {i} ({names[i] if i < len(names) else i}) "
                        "is not computed by a loss operator, so its head gradient is required: "
                        "pass out_grads (or end the graph in a loss such as MakeLoss or "
                        "SoftmaxOutput)")
            elif tuple(g.shape) != tuple(h.shape) and getattr(
                    getattr(t.grad_fn, "_forward_cls", None), "ignores_head_grad", False):
                g = _zeros(h.shape, h.context, h.dtype)   # (never read, as in MXNet)
            elif tuple(g.shape) != tuple(h.shape):
                raise MXNetValueError(f"Executor.backward: out_grads[{i}] has shape {g.shape} "
                                      f"but output {names[i]} has shape {h.shape}")
            heads.append(h)
            hgs.append(g)
        variables = self._variables
        for v in variables:
            v._ag.fresh = False
        if heads:
            autograd._backward(heads, hgs, retain_graph=True, variables=variables)
        if self._monitor_callback is not None and getattr(self, "_taps", None):
            self._report_backward()
        # 'write' buffers the graph gave no gradient to hold zeros, as MXNet writes them
        for v in variables:
            ag = v._ag
            if not ag.fresh and ag.grad_req == "write":
                ag.grad[:] = 0

    # ------------------------------------------------------------------ monitor
    def set_monitor_callback(self, callback, monitor_all=False):
        """Call ``callback(name, array)`` for every operator output of each forward pass
        (``'<node>_output'`` names), and with ``monitor_all`` also for every operator input
        (``'<node>_<input>'``), as MXNet's executor does. The names are bytes, as MXNet's C
        callback hands them over (programs decode them with ``mx.base.py_str``); the arrays
        are NDArrays (MXNet passes a raw handle, which has no meaning here)."""
        if callback is not None and not callable(callback):
            raise TypeError("set_monitor_callback: callback must be callable")
        self._monitor_user = callback
        self._monitor_callback = None if callback is None else _bytes_names(callback)
        self._monitor_all = bool(monitor_all)

    def _tap(self, node, vals):
        """Give each differentiable input of ``node`` a view of its own, so that the
        gradient arriving at that node's input can be seen (MXNet's monitor reports each
        backward node's outputs)."""
        out = list(vals)
        taps = []
        for k, v in enumerate(vals):
            if not isinstance(v, NDArray) or v.stype != "default":
                taps.append((v, None))
                continue
            t = v._t
            if type(t) is torch.Tensor and t.requires_grad:
                view = t.view_as(t)
                box = []
                view.register_hook(lambda g, box=box: box.append(g))
                out[k] = _new(view, v._ctx)
                taps.append((v, box))
            else:
                taps.append((v, None))
        self._taps.append((node, taps))
        return out

    def _report_backward(self):
        """After a monitored backward: ``<node>_backward_output[k]`` for each input of every
        operator node the gradient went through (zeros where an input takes none)."""
        cb = self._monitor_callback
        for node, taps in reversed(self._taps or []):
            if not any(box for _, box in taps):
                continue
            single = len(taps) == 1
            for k, (v, box) in enumerate(taps):
                name = f"{node.name}_backward_output" + ("" if single else str(k))
                if box:
                    g = box[0]
                    for extra in box[1:]:
                        g = g + extra
                    cb(name, _new(g.detach(), v._ctx))
                elif isinstance(v, NDArray):
                    cb(name, _zeros(v.shape, v.context, v.dtype))

    def _observer(self):
        cb, every = self._monitor_callback, self._monitor_all

        def observe(node, inputs, outputs):
            if every:
                # (MXNet: a variable input first by its own name, then every input as
                # '<node>_<input name>')
                in_names = _input_names(node, len(inputs))
                for (src, _), n, v in zip(node.inputs, in_names, inputs):
                    if isinstance(v, NDArray):
                        v = v.detach() if hasattr(v, "detach") else v
                        if src.is_var:
                            cb(src.name, v)
                        cb(f"{node.name}_{n}", v)
            for n, v in zip(_symmod._visible(node), outputs):
                if isinstance(v, NDArray):
                    cb(n, v.detach() if hasattr(v, "detach") else v)
        return observe

    # ------------------------------------------------------------------ parameters
    def copy_params_from(self, arg_params, aux_params=None, allow_extra_params=False):
        """Copy values into the bound arguments and auxiliary states (cast to their dtypes).

        Raises ValueError for a name the executor does not have unless
        ``allow_extra_params``."""
        arg_dict = self.arg_dict
        for name, array in arg_params.items():
            if name in arg_dict:
                _copy_into(array, arg_dict[name], f"copy_params_from: {name!r}")
            elif not allow_extra_params:
                raise MXNetValueError(f"Find name {name} that is not in the arguments")
        if aux_params is None:
            return
        aux_dict = self.aux_dict
        for name, array in aux_params.items():
            if name in aux_dict:
                _copy_into(array, aux_dict[name], f"copy_params_from: {name!r}")
            elif not allow_extra_params:
                raise MXNetValueError(f"Find name {name} that is not in the auxiliary states")

    def reshape(self, partial_shaping=False, allow_up_sizing=False, **kwargs):
        """A new executor for other input shapes that shares this one's arrays.

        Arrays whose shape does not change are the same arrays; smaller ones are views of
        the old memory; larger ones are new (only with ``allow_up_sizing``).

        Parameters
        ----------
        partial_shaping : bool
            Allow arguments not named in ``kwargs`` to change shape.
        allow_up_sizing : bool
            Allow new arrays larger than the old ones.
        **kwargs : tuple of int
            New shapes by argument name.
        """
        sym = self._symbol
        for k in kwargs:
            if k not in self._arg_names:
                raise _UnknownArgument(f"reshape: {k!r} is not an argument of the symbol "
                                       f"({', '.join(self._arg_names)})")
        arg_s, out_s, aux_s = _infer_or_raise(sym, {k: tuple(v) for k, v in kwargs.items()},
                                              "reshape")
        _, out_t, _ = sym.infer_type(**{n: a.dtype for n, a in zip(self._arg_names,
                                                                     self.arg_arrays)})

        def resize(kind, name, old, shape, given):
            if old is None:
                return None
            if tuple(old.shape) == tuple(shape):
                return old
            if not given and not partial_shaping:
                raise MXNetValueError(
                    f"Shape of unspecified array {kind}:{name} changed from {old.shape} to "
                    f"{tuple(shape)}. This can cause the new executor to not share parameters "
                    "with the old one. Please check for error in network. If this is "
                    "intended, set partial_shaping=True to suppress this warning.")
            return _resized(old, shape, allow_up_sizing, f"{kind}:{name}")

        args, grads = [], []
        for n, a, g, s in zip(self._arg_names, self.arg_arrays, self.grad_arrays, arg_s):
            args.append(resize("arg", n, a, s, n in kwargs))
            grads.append(resize("grad", n, g, s, n in kwargs))
        auxs = [resize("aux", n, a, s, False)
                for n, a, s in zip(self._aux_names, self.aux_arrays, aux_s)]
        shared = {}
        for i, (o, s) in enumerate(zip(self.outputs, out_s)):
            if o is not None and o.stype == "default" and \
                    int(np.prod(s)) <= o.size:
                shared[i] = _view(o, s) if tuple(o.shape) != tuple(s) else o
        ex = Executor(sym, self._ctx, args, grads, self._reqs, auxs, self._group2ctx,
                      out_shapes=out_s, out_types=out_t, _shared_outputs=shared)
        if self._monitor_callback is not None:
            ex.set_monitor_callback(self._monitor_user, self._monitor_all)
        return ex

    # ------------------------------------------------------------------ introspection
    def debug_str(self):
        """The bound graph, node by node, and how it runs."""
        lines = ["Symbol Outputs:"]
        lines += [f"\toutput[{i}]={n}" for i, n in enumerate(self._out_names)]
        groups = _node_ctx_groups(self._run_symbol)
        for node in self._run_symbol._order():
            if node.is_var:
                lines.append(f"Variable:{node.name}")
                continue
            lines.append("--------------------")
            lines.append(f"Op:{node.op}, Name={node.name}")
            lines.append("Inputs:")
            for k, (src, j) in enumerate(node.inputs):
                lines.append(f"\targ[{k}]={src.name}({j})")
            if node.attrs:
                lines.append("Attrs:")
                for k, v in node.attrs.items():
                    lines.append(f"\t{k}={v}")
            g = groups.get(id(node))
            if g and self._group2ctx and g in self._group2ctx:
                lines.append(f"Context:{self._group2ctx[g]} (ctx_group {g})")
        how = ("evaluated node by node (monitor or ctx_group placement)"
               if self._monitor_callback is not None or self._placement is not None else
               "captured once per input signature and replayed (hybridize machinery)")
        lines.append("--------------------")
        lines.append(f"Execution on {self._ctx}: {how}; gradients for "
                     f"{sum(1 for r, g in zip(self._reqs, self.grad_arrays) if r != 'null' and g is not None)}"
                     f" of {len(self._arg_names)} arguments")
        reqs = [r if g is not None else "null" for r, g in zip(self._reqs, self.grad_arrays)]
        mb = _plan_megabytes(self._run_symbol, [a.shape for a in self.arg_arrays],
                             [a.dtype for a in self.arg_arrays], reqs)
        # The last lines as MXNet writes them (Module's executor group reads the MB figure
        # from the third line from the end): an estimate of the plan's intermediate memory
        # from the inferred shapes, and no temporary-space resources.
        lines.append(f"Total {mb} MB allocated")
        lines.append("Total 0 TempSpace resource requested")
        lines.append("")
        return "\n".join(lines)

    def get_optimized_symbol(self):
        """The symbol this executor runs: the bound one after MXNet's common-subexpression
        pass (``MXNET_ELIMINATE_COMMON_EXPR=0`` at bind turns it off)."""
        return self._run_symbol

    def __repr__(self):
        return (f"<Executor of {self._symbol.name if len(self._out_names) == 1 else 'group'} "
                f"on {self._ctx}: {len(self._arg_names)} arguments, {len(self._out_names)} "
                "outputs>")


def _is_loss_head(node):
    if node.op in _LOSS_HEADS:
        return True
    if node.op == "Custom":
        from .. import operator as _op
        attrs = dict(node.attrs)
        prop_cls = _op._REGISTRY.get(attrs.pop("op_type", None))
        if prop_cls is not None:
            try:
                prop = prop_cls(**{k: str(v) for k, v in attrs.items()})
            except Exception:  # noqa: BLE001 - cannot tell: ask for the head gradient
                return False
            return not getattr(prop, "need_top_grad_", True)
    return False


from .._monitor_names import NAMED_INPUTS as _NAMED_INPUTS  # noqa: E402


def _input_names(node, n):
    """The names MXNet's monitor gives ``node``'s inputs: the operator's input names where
    MXNet 1.9.1 declares them (``arg0``, ``arg1``... for a variadic operator), else
    ``input0``, ``input1``..."""
    generic = [f"input{i}" for i in range(n)]
    if node.op not in _NAMED_INPUTS:
        return generic
    spec = _symmod._OPS.get(node.op)
    if spec and spec.get("variadic") and not (
            node.op == "UpSampling" and node.attrs.get("sample_type") == "bilinear"):
        return [f"arg{i}" for i in range(n)]
    names = list(node.input_names or (spec["inputs"] if spec else []))
    if len(names) < n:
        return generic
    return names[:n]


def _zeros(shape, ctx, dtype, stype="default"):
    from .. import ndarray as nd
    if stype not in (None, "default"):
        return nd.sparse.zeros(stype, shape, ctx=ctx, dtype=dtype)
    return nd.ndarray._zeros_buffer(tuple(shape), ctx=ctx, dtype=dtype)


def _view(arr, shape):
    """The first prod(shape) values of ``arr``'s memory as an array of ``shape`` (a new
    array when ``arr`` is not contiguous, e.g. a channels-last convolution's output)."""
    n = int(np.prod(shape))
    t = arr._t
    if not t.is_contiguous():
        return _zeros(shape, arr._ctx, arr.dtype)
    return _new(t.reshape(-1)[:n].view(tuple(shape)), arr._ctx)


def _resized(old, shape, allow_up_sizing, what):
    n = int(np.prod(shape))
    if old.stype != "default":
        return _zeros(shape, old.context, old.dtype, old.stype)
    if n <= old.size:
        return _view(old, shape)
    if not allow_up_sizing:
        raise MXNetValueError(
            f"New shape of {what} {tuple(shape)} is larger than the original {old.shape}. "
            "First making a big executor and then down sizing it is more efficient than the "
            "reverse. If you really want to up size, set allow_up_sizing=True to enable "
            "allocation of new arrays.")
    return _zeros(shape, old.context, old.dtype)


def _copy_into(src, dst, what):
    """Copy ``src`` (an NDArray, or a numpy array) into the bound array ``dst``, cast to its
    dtype; ``what`` names the value in errors (a shape mismatch names both shapes)."""
    if isinstance(src, np.ndarray):
        from .. import ndarray as nd
        src = nd.array(src, ctx=dst.context, dtype=dst.dtype)
    if not isinstance(src, NDArray):
        raise TypeError(f"{what} must be an NDArray, got {type(src).__name__}")
    if tuple(src.shape) != tuple(dst.shape):
        raise MXNetValueError(f"{what} has shape {src.shape} but the bound array has shape "
                              f"{dst.shape}")
    if src.dtype != dst.dtype and src.stype == "default":
        src = src.astype(dst.dtype)
    src.copyto(dst)


# ---------------------------------------------------------------------- bind / simple_bind
def bind(symbol, ctx, args, args_grad=None, grad_req="write", aux_states=None, group2ctx=None,
         shared_exec=None):
    """:meth:`Symbol.bind`: an :class:`Executor` over the given arrays (see there)."""
    _check_ctx(ctx)
    arg_names = symbol.list_arguments()
    aux_names = symbol.list_auxiliary_states()
    arg_arrays = _arrays("args", args, arg_names, False)
    if args_grad is None:
        grad_arrays = [None] * len(arg_names)
    else:
        grad_arrays = _arrays("args_grad", args_grad, arg_names, isinstance(args_grad, dict))
    reqs = _grad_reqs(grad_req, arg_names, "bind")
    reqs = [r if g is not None else "null" for r, g in zip(reqs, grad_arrays)]
    for n, a, g in zip(arg_names, arg_arrays, grad_arrays):
        if g is not None and tuple(g.shape) != tuple(a.shape):
            raise MXNetValueError(f"bind: the gradient buffer of {n!r} has shape {g.shape} but "
                                  f"the argument has shape {a.shape}")
    if aux_names and aux_states is None:
        raise MXNetValueError(f"bind: the symbol has auxiliary states ({', '.join(aux_names)}); "
                              "pass them as aux_states")
    aux_arrays = _arrays("aux_states", aux_states or [], aux_names, False) if aux_names else []
    shapes = {n: tuple(a.shape) for n, a in zip(arg_names, arg_arrays)}
    shapes.update({n: tuple(a.shape) for n, a in zip(aux_names, aux_arrays)})
    _, out_s, aux_s = _infer_or_raise(symbol, shapes, "bind")
    types = {n: a.dtype for n, a in zip(arg_names, arg_arrays)}
    try:
        _, out_t, _ = symbol.infer_type(**types)
    except MXNetError:
        out_t = None
    return Executor(symbol, ctx, arg_arrays, grad_arrays, reqs, aux_arrays, group2ctx,
                    out_shapes=out_s, out_types=out_t)


def _consumer_grad_stype(node, j, in_stypes):
    """The storage type MXNet's backward pass gives the gradient of input ``j`` of ``node``
    (input storage types ``in_stypes``), or None where no rule is known here."""
    op, a = node.op, node.attrs
    if op == "Embedding" and j == 1:
        return "row_sparse" if _symmod._truthy(a.get("sparse_grad", False)) else "default"
    if op == "_contrib_SparseEmbedding" and j == 1:
        return "row_sparse"
    if op == "dot":
        if j == 1 and in_stypes[0] == "csr" and not _symmod._truthy(a.get("transpose_a", False)):
            return "row_sparse"   # dot(csr, x)'s gradient for x is csr.T @ g: rows of csr
        return "default"
    if op in ("elemwise_add", "elemwise_sub", "_grad_add", "add_n", "ElementWiseSum"):
        # sparse + sparse of one type passes the head gradient on in that type
        kinds = set(in_stypes)
        return kinds.pop() if len(kinds) == 1 and "default" not in kinds else "default"
    if op == "elemwise_mul":
        return "default"
    if op == "cast_storage":
        return a.get("stype", "default")  # the head gradient, which has the output's type
    return None


def _grad_stype(symbol, name, stypes):
    """The storage type of the gradient simple_bind allocates for argument ``name``: what the
    operators reading it give (MXNet's backward storage-type inference), where they agree;
    otherwise row_sparse for a row_sparse argument, else dense."""
    found = set()
    for node in symbol._order():
        if node.is_var:
            continue
        in_stypes = [stypes.get(src.name, "default") if src.is_var else "default"
                     for src, _ in node.inputs]
        for j, (src, _) in enumerate(node.inputs):
            if src.is_var and src.name == name:
                found.add(_consumer_grad_stype(node, j, in_stypes))
    if len(found) == 1 and None not in found:
        return found.pop()
    return "row_sparse" if stypes.get(name) == "row_sparse" else "default"


def simple_bind(symbol, ctx, grad_req="write", type_dict=None, stype_dict=None, group2ctx=None,
                shared_arg_names=None, shared_exec=None, shared_buffer=None, **kwargs):
    """:meth:`Symbol.simple_bind`: infer every shape and dtype from the given ones, allocate
    the arrays (zeros) and bind."""
    _check_ctx(ctx, "simple_bind")
    arg_names = symbol.list_arguments()
    aux_names = symbol.list_auxiliary_states()
    # As MXNet, keywords that name no argument or auxiliary state are ignored (programs pass
    # the operator's own parameters along, e.g. simple_bind(..., axis=axis)).
    kwargs = {k: v for k, v in kwargs.items() if k in arg_names or k in aux_names}
    shapes = {}
    for k, v in kwargs.items():
        if not isinstance(v, (tuple, list)):
            raise TypeError(f"simple_bind: the shape of {k!r} must be a tuple, got {v!r}")
        shapes[k] = tuple(int(d) for d in v)
    arg_s, out_s, aux_s = _infer_or_raise(symbol, shapes, "simple_bind")
    type_dict = dict(type_dict or {})
    for k in type_dict:
        if k not in arg_names and k not in aux_names:
            raise _UnknownArgument(f"simple_bind: type_dict names {k!r}, which is not an "
                                   "argument of the symbol")
    arg_t, out_t, aux_t = symbol.infer_type_partial(**type_dict)
    arg_t = [t or np.float32 for t in arg_t]
    aux_t = [t or np.float32 for t in aux_t]
    out_t = [t or np.float32 for t in out_t]
    stypes = {}
    for node in symbol._order():
        if node.is_var:
            st = _symmod._var_stype(node)
            if st:
                stypes[node.name] = st
    stypes.update(stype_dict or {})
    reqs = _grad_reqs(grad_req, arg_names, "simple_bind")
    groups = {}
    if group2ctx:
        for node in symbol._order():
            if node.is_var:
                g = _ctx_group(node)
                if g in group2ctx:
                    groups[node.name] = group2ctx[g]
    shared_names = set(shared_arg_names or ())
    if shared_exec is not None and not isinstance(shared_exec, Executor):
        raise TypeError(f"simple_bind: shared_exec must be an Executor, got "
                        f"{type(shared_exec).__name__}")
    if shared_buffer is not None and not isinstance(shared_buffer, dict):
        raise TypeError("simple_bind: shared_buffer must be a dict of str to NDArray")

    def alloc(name, shape, dtype, stype, where):
        # the arguments named as shared come from shared_exec (or are new); the others may
        # reuse the buffer's arrays
        if shared_buffer is not None and stype in (None, "default") and \
                name not in shared_names:
            buf = shared_buffer.get(name)
            if buf is not None and buf.dtype == np.dtype(dtype) and buf.stype == "default":
                if tuple(buf.shape) == tuple(shape):
                    return buf
                if int(np.prod(shape)) <= buf.size:
                    return _view(buf, shape)
            arr = _zeros(shape, where, dtype, stype)
            shared_buffer[name] = arr
            return arr
        return _zeros(shape, where, dtype, stype)

    args, grads = [], []
    for n, s, t, r in zip(arg_names, arg_s, arg_t, reqs):
        where = groups.get(n, ctx)
        st = stypes.get(n, "default")
        if shared_exec is not None and n in shared_names and n in shared_exec.arg_dict:
            a = shared_exec.arg_dict[n]
            if tuple(a.shape) != tuple(s):
                raise MXNetValueError(f"simple_bind: shared argument {n!r} has shape {a.shape} in "
                                      f"shared_exec but {tuple(s)} here")
            args.append(a)
            g = shared_exec.grad_dict.get(n) if r != "null" else None
            if r != "null" and g is None:
                g = _zeros(s, where, t, st if st == "row_sparse" else "default")
            grads.append(g)
            continue
        args.append(alloc(n, s, t, st, where))
        if r == "null":
            grads.append(None)
        else:
            grads.append(_zeros(s, where, t, _grad_stype(symbol, n, stypes)))
    auxs = []
    for n, s, t in zip(aux_names, aux_s, aux_t):
        if shared_exec is not None and n in shared_exec.aux_dict and \
                tuple(shared_exec.aux_dict[n].shape) == tuple(s):
            auxs.append(shared_exec.aux_dict[n])
        else:
            auxs.append(_zeros(s, groups.get(n, ctx), t))
    return Executor(symbol, ctx, args, grads, reqs, auxs, group2ctx, out_shapes=out_s,
                    out_types=out_t)
