"""hybridize() that compiles: a captured forward pass run as one torch.compile'd function.

How it works
------------
A hybridized block first captures its forward pass per input signature (block.py: the op
list of ``_Graph``) and replays it. With compilation on, that op list, as a function of the
input and parameter tensors, is traced to an ATen graph with ``make_fx`` (fake tensors, so
no data is touched) and handed to Inductor (``compile_fx``: AOTAutograd + Inductor), which
also compiles the backward pass. The compiled function is called with the tensors directly:
there is no Dynamo and no guard evaluation per call; the graph's own signature (input shapes,
dtypes, context, training mode) and, per call, whether autograd records and which tensors
need gradients select the compiled variant.

What is compiled
    One compiled function per (block, input signature, recording, requires_grad pattern).
    A new input shape is a new signature: it is captured, replayed, and compiled in turn, up
    to ``NEOGLUON_COMPILE_MAX_SHAPES`` (default 8) signatures per block; later signatures are
    replayed (one warning). ``static_shape=True`` skips the per-call stride check (inputs are
    otherwise made contiguous before the call).

When it is compiled: the mode
    ``NEOGLUON_COMPILE`` (environment, read at import), :func:`set_compile_mode`, or
    ``hybridize(compile=...)`` per block:

    * ``'off'`` (default) - capture and replay only, no torch.compile.
    * ``'sync'``   - compile on the second call of a signature, in the calling thread.
    * ``'auto'``   - replay; after ``NEOGLUON_COMPILE_AFTER`` (default 3) replays of a
      signature compile it in a background thread and switch over when it is ready.

Anything that cannot be traced or compiled (an op that reads values, a random generator
Inductor cannot take, a side effect it cannot keep) makes that block replay from then on,
with one warning naming the block and the reason. Inductor's on-disk caches (FX graph
cache, AOTAutograd cache; directory ``TORCHINDUCTOR_CACHE_DIR``) make a second run of the
same script compile in seconds rather than tens of seconds.

BatchNorm's moving statistics are updated by a hook on its output in the imperative pass;
in a compiled graph the batch statistics become extra outputs and the same update runs from
a hook on the block's first output that takes gradients (so at the same point of backward).
"""
from __future__ import annotations

import os
import threading
import warnings

import torch

from .. import autograd
from . import _cudagraph
from ..base import MXNetError

__all__ = ["set_compile_mode", "get_compile_mode", "MODES"]

MODES = ("off", "sync", "auto")


def _env_mode():
    m = os.environ.get("NEOGLUON_COMPILE", "off").strip().lower() or "off"
    aliases = {"0": "off", "eager": "off", "false": "off", "no": "off", "replay": "off",
               "1": "auto", "on": "auto", "true": "auto", "background": "auto"}
    m = aliases.get(m, m)
    if m not in MODES:
        warnings.warn(f"NEOGLUON_COMPILE={m!r} is not one of {MODES}; using 'off'")
        m = "off"
    return m


_MODE = [_env_mode()]
_AFTER = int(os.environ.get("NEOGLUON_COMPILE_AFTER", "3"))
_MAX_SHAPES = int(os.environ.get("NEOGLUON_COMPILE_MAX_SHAPES", "8"))


def check_mode(mode):
    if mode is None:
        return None
    if mode is True:
        return "auto"
    if mode is False:
        return "off"
    m = str(mode).lower()
    if m == "eager":
        m = "off"
    if m not in MODES:
        raise MXNetError(f"hybridize: compile={mode!r} is not one of {MODES}")
    return m


def set_compile_mode(mode):
    """Set the process-wide compile mode ('off', 'sync' or 'auto'); returns the previous one.

    A block hybridized with ``compile=...`` keeps its own mode."""
    prev = _MODE[0]
    _MODE[0] = check_mode(mode)
    return prev


def get_compile_mode():
    return _MODE[0]


def mode_of(block):
    m = getattr(block, "_compile_mode", None)
    return _MODE[0] if m is None else m


# ------------------------------------------------------------------ tracing helpers
_MOVING_CODE = None


def _moving_code():
    global _MOVING_CODE
    if _MOVING_CODE is None:
        from ..ndarray import nn_ops
        _MOVING_CODE = nn_ops._moving_update(None, None, None, None, 0.0).__code__
    return _MOVING_CODE


class _Unsupported(Exception):
    pass


class _HookCollector(torch.overrides.TorchFunctionMode):
    """Keeps ``Tensor.register_hook`` calls made while tracing (thread-local mode)."""

    def __init__(self):
        super().__init__()
        self.hooks = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is torch.Tensor.register_hook:
            self.hooks.append((args[0], args[1] if len(args) > 1 else kwargs["hook"]))
            return None
        return func(*args, **(kwargs or {}))


def _replay(graph, env_inputs, env_params, ctx):
    """graph._prog run on NDArrays (the same loop as _Graph.run, parameters given)."""
    from .block import _run_program
    env = [None] * graph._nenv
    for s, a in zip(graph.inputs, env_inputs):
        env[s] = a
    for (s, _), a in zip(graph.params, env_params):
        env[s] = a
    _run_program(graph._prog, env)
    return [env[s] for s in graph.out_slots]


# Compile the backward graph now, not lazily at the first backward: a failure then lands
# here (and the block replays) instead of in loss.backward(), and 'auto' compiles both in its
# background thread.
_EAGER_BW = {"force_non_lazy_backward_lowering": True}


def tensor_program(graph, ctx):
    """The captured op list as a function of tensors: ``fn(*inputs, *params)`` returns
    ``(outputs, plans)``; ``outputs`` are the graph's outputs followed by two tensors (batch
    mean, batch variance) per BatchNorm whose moving statistics the imperative pass would
    update from a gradient hook, and ``plans`` says how (``_GraphCompile._moving_hooks``).
    Those hooks are collected, not registered: whoever runs the function registers them."""
    from ..ndarray.ndarray import _new
    nin = len(graph.inputs)

    def fn(*ts):
        ids = {id(t): i for i, t in enumerate(ts)}
        ins = [_new(t, ctx) for t in ts[:nin]]
        ps = [_new(t, ctx) for t in ts[nin:]]
        with _HookCollector() as hc:
            outs = _replay(graph, ins, ps, ctx)
        res = [o._t for o in outs]
        plans = []
        nout = len(res)
        for _tensor, hook in hc.hooks:
            code = getattr(hook, "__code__", None)
            if code is not _moving_code():
                raise _Unsupported(f"a gradient hook ({getattr(hook, '__qualname__', hook)}) "
                                   "cannot be kept in a compiled graph")
            cells = dict(zip(code.co_freevars, (c.cell_contents for c in hook.__closure__)))
            mm, mv = ids.get(id(cells["mm"])), ids.get(id(cells["mv"]))
            if mm is None or mv is None:
                raise _Unsupported("BatchNorm moving statistics are not parameters")
            plans.append((mm, mv, len(res), len(res) + 1, cells["momentum"]))
            res += [cells["mean"], cells["var"]]
        return res, (nout, plans)
    return fn


def _build(graph, ctx, examples, training, recording):
    """(compiled callable, number of graph outputs, moving-stat plans)."""
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch._inductor.compile_fx import compile_fx
    from torch._guards import TracingContext, tracing
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv
    import torch._functorch.config as fconfig
    prog = tensor_program(graph, ctx)
    meta = [(0, [])]

    def fn(*ts):
        res, meta[0] = prog(*ts)
        return res

    st = autograd._state
    prev = (st.recording, st.training)
    st.recording, st.training = recording, training
    try:
        with torch.enable_grad() if recording else torch.no_grad():
            gm = make_fx(fn, tracing_mode="fake")(*examples)
            # A tracing context with a shape environment lets Inductor's FX-graph cache and
            # the AOTAutograd cache key the graph (without one both are bypassed).
            # With a shape environment AOTAutograd also runs its pass that turns symbolic
            # Python floats into tensors; this graph has none (shapes and scalars are baked
            # in), and the pass trips over some graphs (ResNet-18: KeyError on a symbol), so
            # it is switched off for this call (TENSORIFY_PYTHON_SCALARS is read per call).
            # Should the cached path fail anyway, compile once more without the cache.
            prev_env = os.environ.get("TENSORIFY_PYTHON_SCALARS")
            os.environ["TENSORIFY_PYTHON_SCALARS"] = "0"
            try:
                # static_shapes: a shape env alone would make every size symbolic (dynamic
                # kernels, symbols in the backward graph).
                fake = FakeTensorMode(shape_env=ShapeEnv(), static_shapes=True)
                with tracing(TracingContext(fake)), fconfig.patch(**_EAGER_BW):
                    compiled = compile_fx(gm, list(examples))
            except Exception:  # noqa: BLE001 - retried below; a second failure propagates
                compiled = None
            finally:
                if prev_env is None:
                    os.environ.pop("TENSORIFY_PYTHON_SCALARS", None)
                else:
                    os.environ["TENSORIFY_PYTHON_SCALARS"] = prev_env
            if compiled is None:
                with fconfig.patch(**_EAGER_BW):
                    compiled = compile_fx(gm, list(examples))
    finally:
        st.recording, st.training = prev
    return compiled, meta[0][0], meta[0][1]


class _Variant:
    __slots__ = ("state", "fn", "nout", "plans", "calls", "graphed")

    def __init__(self):
        self.state = "new"      # new -> pending -> ready | failed
        self.fn = None
        self.nout = 0
        self.plans = ()
        self.calls = 0
        self.graphed = None     # CUDA graphs: None (not tried), a _cudagraph.Graphed, False

    def eager(self, prog):
        """Run the captured program itself (no compilation; for CUDA graphs)."""
        def run(*ts):
            res, (self.nout, plans) = prog(*ts)
            self.plans = tuple(plans)
            return res
        self.fn = run
        self.state = "ready"

    def with_meta(self, *ts):
        return self.fn(*ts), (self.nout, self.plans)


class _GraphCompile:
    """Compiled variants of one captured graph."""

    def __init__(self, block, graph, training):
        self.block = block
        self.graph = graph
        self.training = training
        self.variants = {}
        self.static = dict(block._flags).get("static_shape", False)
        self.cuda_graphs = False

    def __call__(self, flat, ctx, mode):
        from .block import _param_data, _rebuild
        from ..ndarray.ndarray import _new
        g = self.graph
        ts = [a._t for a in flat]
        if not self.static:
            ts = [t if t.is_contiguous() else t.contiguous() for t in ts]
        ts += [_param_data(p, ctx)._t for _, p in g.params]
        rec = autograd._state.recording
        key = (rec, tuple([t.requires_grad for t in ts]))
        v = self.variants.get(key)
        if v is None:
            if len(self.variants) >= 4:
                return None
            v = self.variants[key] = _Variant()
        if v.state != "ready":
            if v.state == "new":
                v.calls += 1
                if mode == "off":
                    v.eager(tensor_program(g, ctx))
                elif mode == "sync":
                    self._compile(v, ts, ctx, rec)
                elif v.calls > _AFTER:
                    v.state = "pending"
                    ex = [t.detach().requires_grad_(t.requires_grad) for t in ts]
                    th = threading.Thread(target=self._compile, args=(v, ex, ctx, rec, True),
                                          name="neogluon-compile", daemon=True)
                    th.start()
            if v.state != "ready":
                return None
        outs = None
        moving_done = False
        gr = None
        if self.cuda_graphs == "auto":
            gr = self._auto(v, ts, rec)
        elif self.cuda_graphs and v.graphed is not False:
            gr = v.graphed
            if gr is None:
                gr = v.graphed = _cudagraph.capture(self.block, v.with_meta, ts,
                                                    len(g.params), rec) or False
        if gr:
            if not (rec and gr.busy()):
                outs = gr(ts)
                moving_done = gr.moving_in_graph   # (its backward graph updates them)
        if outs is None:
            if mode == "off":
                return None     # (the plain replay is faster than the program's hooks)
            outs = v.fn(*ts)
        if v.plans and rec and not moving_done:
            self._moving_hooks(v, ts, outs)
        res = [_new(t, ctx) for t in outs[:v.nout]]
        return _rebuild(g.out_fmt, res, 0)[0]

    def _auto(self, v, ts, rec):
        """The automatic mode (plain hybridize): the variant's graph, once the block's
        policy (``_cudagraph.AutoPolicy``) has it recorded, or None."""
        block = self.block
        policy = block.__dict__.get("_autograph")
        if policy is None:
            policy = block._autograph = _cudagraph.AutoPolicy()
        act = policy.step(v)
        if act == "replay":
            return v.graphed
        if act == "record":
            if not _cudagraph.room(ts[0].device):
                return None
            gr = _cudagraph.capture(block, v.with_meta, ts, len(self.graph.params), rec,
                                    auto=True)
            policy.recorded(v, gr)
            return gr
        return None

    @staticmethod
    def _moving_hooks(v, ts, outs):
        from ..ndarray.nn_ops import _moving_update
        head = next((o for o in outs[:v.nout] if o.requires_grad), None)
        if head is None:
            return
        hooks = [_moving_update(ts[mm], ts[mv], outs[m].detach(), outs[s].detach(), mom)
                 for mm, mv, m, s, mom in v.plans]

        def hook(grad):
            for h in hooks:
                h(grad)
        head.register_hook(hook)

    def _compile(self, v, examples, ctx, rec, background=False):
        try:
            if background:
                # warnings.catch_warnings is process-wide: not from a second thread. A nicer
                # scheduling priority lets the training thread go first on a busy machine.
                try:
                    os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
                except (AttributeError, OSError):
                    pass
                fn, nout, plans = _build(self.graph, ctx, examples, self.training, rec)
            else:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fn, nout, plans = _build(self.graph, ctx, examples, self.training, rec)
        except Exception as err:  # noqa: BLE001 - any failure means: replay this block
            v.state = "failed"
            _fail(self.block, err)
            return
        v.fn, v.nout, v.plans = fn, nout, tuple(plans)
        v.state = "ready"


def _fail(block, err):
    if getattr(block, "_compile_failed", None) is not None:
        return
    why = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    block._compile_failed = why
    warnings.warn(f"{type(block).__name__} '{block.name}': hybridize(compile=...) could not "
                  f"compile the forward pass ({type(err).__name__}: {why[:300]}); this block "
                  "runs its captured graph uncompiled instead.", RuntimeWarning, stacklevel=2)


def call(block, graph, key, flat, ctx, mode):
    """Run ``graph`` compiled, or return None for the caller to replay it."""
    if mode == "off":
        cg = _cudagraph.wanted(block, ctx)
        if not cg or getattr(block, "_cudagraph_failed", None) is not None:
            return None
        if cg == "auto":
            pol = block.__dict__.get("_autograph")
            if pol is not None and pol.gave_up and not pol.cache:
                return None     # (a block that gave up and holds no graph: plain replay)
    if getattr(block, "_compile_failed", None) is not None:
        return None
    gc = graph.__dict__.get("_ng_compile")
    if gc is None:
        nsig = getattr(block, "_compile_sigs", 0)
        if nsig >= _MAX_SHAPES:
            if mode == "off":
                return None     # (CUDA graphs only: the automatic mode gives up quietly)
            if nsig == _MAX_SHAPES:
                warnings.warn(f"{type(block).__name__} '{block.name}': more than {_MAX_SHAPES} "
                              "input signatures; new ones run uncompiled "
                              "(NEOGLUON_COMPILE_MAX_SHAPES)", RuntimeWarning, stacklevel=3)
                block._compile_sigs = nsig + 1
            return None
        block._compile_sigs = nsig + 1
        gc = graph._ng_compile = _GraphCompile(block, graph, key[2])
        gc.cuda_graphs = _cudagraph.wanted(block, ctx)
    return gc(flat, ctx, mode)
