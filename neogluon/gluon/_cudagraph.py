"""CUDA graphs for hybridized blocks on a GPU.

Two modes (``HybridBlock._cuda_graphs``, set at ``hybridize``):

* ``'static'`` - ``hybridize(static_alloc=True, static_shape=True)``: each input signature is
  recorded on its second call; MXNet's static_alloc semantics (below).
* ``'auto'`` - plain ``hybridize()``: :class:`AutoPolicy` records a signature once it was
  run ``AUTO_AFTER`` (3) times in a row, keeps at most ``AUTO_CACHE`` (4) recorded
  signatures per block (least recently used goes), and stops recording new ones after
  ``AUTO_MISSES`` (8) misses (a signature left before it was recorded, an eviction) or
  ``AUTO_FAILURES`` (2) failed recordings, or while more than ``AUTO_MEMORY`` of the
  device's memory is allocated (:func:`room`). The graphs keep plain hybridize's semantics (``plain=True`` in :class:`Graphed`): every
  gradient, the parameters' too, comes back as a fresh tensor (one multi-tensor copy per
  backward), a stale backward (``retain_graph``) or ``create_graph=True`` recomputes the
  block eagerly instead of raising, and a graph that cannot be recorded is dropped without a
  warning (a debug log on ``neogluon.gluon._cudagraph``). ``NEOGLUON_AUTO_CUDA_GRAPHS=0`` or
  ``hybridize(cuda_graphs=False)`` turns the automatic mode off; ``NEOGLUON_CUDA_GRAPHS=0``
  turns both off.

Both modes put the random generators back after recording (its warm-up passes draw), so
that a graphed call draws what an ungraphed one would. The rest of this docstring describes
the static mode.

A hybridized block's captured graph, as a function of tensors (the eager op list, or its
torch.compile'd form when ``compile=`` is on), is recorded once per input signature into a
``torch.cuda.CUDAGraph`` - and, while autograd records, its backward into a second graph
that shares the first one's memory pool. Later calls copy the new inputs into the graph's
input buffers and replay: one launch instead of one per kernel, which is what bounds small
models on a fast GPU. MXNet 1.9.1 does the same for static_alloc + static_shape CachedOps
(behind ``MXNET_ENABLE_CUDA_GRAPHS``); here it is on by default and
``NEOGLUON_CUDA_GRAPHS=0`` turns it off.

What keeps the numbers right
    * Parameters are read in place (the graph reads their storage, which the optimizer
      updates in place); a Parameter whose array was replaced (``set_data``, a load) is
      copied into the graph's buffer before each replay.
    * Outputs and the inputs' gradients are copied out of the graph's memory, so a later
      replay never changes an array the caller holds. The parameters' gradients are written
      by the backward graph into buffers of their own (not in the graphs' pool), which become
      the Parameters' gradient buffers and are overwritten by each backward, as MXNet's
      static_alloc does. BatchNorm's moving statistics are updated inside the backward
      graph too (eagerly they are updated by a hook when the gradient flows back).
    * A replay overwrites the activations the previous replay saved for its backward. A
      forward of the same graph while an earlier one still waits for its backward therefore
      runs without the graph; a backward of a graph that was replayed again since raises
      MXNetError instead of returning wrong gradients.
    * The recorded backward is not itself differentiable: ``create_graph=True`` through a
      graphed block raises (higher-order gradients need ``NEOGLUON_CUDA_GRAPHS=0``).
    * Recording fails for graphs that synchronize with the host (an op that reads a value)
      or use what a CUDA graph cannot hold: then that graph runs without CUDA graphs, with one
      warning naming the block.
"""
from __future__ import annotations

import logging
import os
import warnings
import weakref
from collections import OrderedDict

import torch

from ..base import MXNetError
from ..ndarray.nn_ops import _fold_moving

_WARMUP = 2
_log = logging.getLogger(__name__)

#: the automatic mode's policy (AutoPolicy): record after this many calls of one signature
#: in a row, keep this many recorded signatures per block, stop after this many misses
AUTO_AFTER = int(os.environ.get("NEOGLUON_AUTO_CUDA_GRAPHS_AFTER", "3"))
AUTO_CACHE = 4
AUTO_MISSES = 8
AUTO_FAILURES = 2
#: the automatic mode records no new graph while more than this fraction of the device's
#: memory is allocated (a graph keeps its activations' memory while it is cached; eagerly
#: it is freed after each backward)
AUTO_MEMORY = float(os.environ.get("NEOGLUON_AUTO_CUDA_GRAPHS_MEMORY", "0.5"))
_TOTAL = {}

_OFF = ("0", "off", "false", "no")


def enabled():
    """``NEOGLUON_CUDA_GRAPHS`` (default on): every CUDA graph, static and automatic."""
    return os.environ.get("NEOGLUON_CUDA_GRAPHS", "1").strip().lower() not in _OFF


def auto_enabled():
    """``NEOGLUON_AUTO_CUDA_GRAPHS`` (default on): the automatic mode of plain hybridize."""
    return os.environ.get("NEOGLUON_AUTO_CUDA_GRAPHS", "1").strip().lower() not in _OFF


def mode_for(static_alloc, static_shape, cuda_graphs=None):
    """The CUDA-graph mode ``hybridize`` gives a block: 'static', 'auto' or False.

    ``cuda_graphs`` is hybridize's keyword: None follows the environment, False turns CUDA
    graphs off for the block, True asks for them (``NEOGLUON_CUDA_GRAPHS=0`` still wins)."""
    if cuda_graphs not in (None, True, False):
        raise MXNetError(f"hybridize: cuda_graphs={cuda_graphs!r} must be None, True or False")
    if cuda_graphs is False or not enabled():
        return False
    if static_alloc and static_shape:
        return "static"
    return "auto" if cuda_graphs or auto_enabled() else False


def room(dev):
    """Whether the automatic mode may record a graph on ``dev`` now (``AUTO_MEMORY``)."""
    if dev.type != "cuda":
        return True
    idx = dev.index if dev.index is not None else torch.cuda.current_device()
    total = _TOTAL.get(idx)
    if total is None:
        total = _TOTAL[idx] = torch.cuda.get_device_properties(idx).total_memory
    return torch.cuda.memory_allocated(idx) < AUTO_MEMORY * total


def _on_cuda(ctx):
    """Whether ``ctx`` is a CUDA context (the one device check of this module; the CPU tests
    of the automatic mode's policy pretend here, and only here, that a CPU context is one)."""
    return ctx.device_typeid == 2


def wanted(block, ctx):
    """The CUDA-graph mode (``'static'``, ``'auto'``) of ``block``'s graphs on ``ctx``, or
    False (decided at ``hybridize``; CPU contexts never)."""
    mode = getattr(block, "_cuda_graphs", False)
    return mode if mode and _on_cuda(ctx) else False


def _generators(dev):
    """The generators a graph on ``dev`` may draw from: torch's default one for the device
    (torch's dropout) and neogluon's own (samplers, Dropout with axes)."""
    from .. import random as _random
    gens = [torch.cuda.default_generators[dev.index if dev.index is not None else
                                          torch.cuda.current_device()]]
    gen = _random._generators.get(("cuda", dev.index))
    if gen is not None:
        gens.append(gen)
    return gens


def _register_generators(graph, dev):
    """Let the graph draw from neogluon's own generator for this device (Dropout with
    axes, samplers): each replay then draws new numbers, as an eager call would."""
    register = getattr(graph, "register_generator_state", None)
    from .. import random as _random
    gen = _random._generators.get(("cuda", dev.index))
    if register is not None and gen is not None:
        register(gen)


class _Token:
    """Lives as long as the autograd graph of one graphed forward (kept on its ctx)."""
    __slots__ = ("__weakref__",)


class Graphed:
    """One function of tensors recorded as CUDA graphs (forward; backward when recording).

    ``fn(*ts) -> (outputs, meta)``; ``nout`` leading outputs are the caller's, the rest are
    side outputs (BatchNorm batch statistics) returned as read-only views of graph memory,
    valid until the next replay."""

    def __init__(self, fn, ts, nparams, recording, name="block", plain=False):
        from .. import autograd
        self.name = name
        self.recording = recording
        # plain: plain hybridize's semantics (the automatic mode): fresh gradients for the
        # parameters too, and an eager recompute where the recorded backward cannot serve
        self.plain = plain
        self.fn = fn
        self.training = autograd._state.training
        nin = len(ts) - nparams
        # Inputs get buffers of their own; parameters are aliased (read in place).
        self.static_in = [t.detach().clone() if i < nin else t.detach() for i, t in enumerate(ts)]
        if recording:
            self.static_in = [s.requires_grad_(t.requires_grad)
                              for s, t in zip(self.static_in, ts)]
        dev = ts[0].device
        # The gradients of the parameters are written into buffers of their own, made
        # before any graph (outside the graphs' pool, whose memory a forward replay reuses
        # for its activations): autograd's engine adopts them as the Parameters' gradient
        # buffers, which each backward replay then overwrites in place, as MXNet writes a
        # static_alloc graph's gradients. Inputs' gradients are copied out instead.
        self.nin = nin
        self.param_gbuf = ([torch.empty_like(s) if i >= nin and s.requires_grad and not plain
                            else None for i, s in enumerate(self.static_in)]
                           if recording else [None] * len(ts))
        # The warm-up runs draw random numbers an eager call would not: the generators are
        # put back after recording, so that the first replay draws what the eager call would
        # have drawn (and a graph that draws is known: self.random).
        self.gens = _generators(dev)
        rng0 = [g.get_state() for g in self.gens]
        try:
            self._record(fn, dev, recording)
        finally:
            rng1 = [g.get_state() for g in self.gens]
            self.random = any(not torch.equal(a, b) for a, b in zip(rng0, rng1))
            for g, st in zip(self.gens, rng0):
                g.set_state(st)
        self.gen = 0
        self.pending = None          # weakref to the _Token of a forward awaiting backward
        self._fn = self._function()

    def _record(self, fn, dev, recording):
        stream = torch.cuda.Stream(device=dev)
        stream.wait_stream(torch.cuda.current_stream(dev))
        grad_ctx = torch.enable_grad if recording else torch.no_grad
        with torch.cuda.stream(stream):
            for _ in range(_WARMUP):
                with grad_ctx():
                    outs, _meta = fn(*self.static_in)
                    if recording:
                        self._grads(outs, None)
                del outs
        torch.cuda.current_stream(dev).wait_stream(stream)
        self.fwd = torch.cuda.CUDAGraph()
        _register_generators(self.fwd, dev)
        with grad_ctx(), torch.cuda.graph(self.fwd, stream=stream,
                                          capture_error_mode="thread_local"):
            outs, self.meta = fn(*self.static_in)
        self.static_out = outs
        self.nout = self.meta[0]
        self.req = [i for i, o in enumerate(outs) if o.requires_grad] if recording else []
        self.bwd = None
        self.moving_in_graph = False
        if recording and self.req:
            self.static_gout = [torch.zeros_like(outs[i]) for i in self.req]
            self.bwd = torch.cuda.CUDAGraph()
            _register_generators(self.bwd, dev)
            self.gin_index = [i for i, s in enumerate(self.static_in) if s.requires_grad]
            plans = self._moving_plans()
            with torch.cuda.graph(self.bwd, pool=self.fwd.pool(), stream=stream,
                                  capture_error_mode="thread_local"):
                gin = self._grads(outs, self.static_gout)
                with torch.no_grad():
                    for j, g in zip(self.gin_index, gin):
                        if g is not None and self.param_gbuf[j] is not None:
                            self.param_gbuf[j].copy_(g)
                    # BatchNorm's moving statistics, as the eager hooks update them: part
                    # of the backward graph
                    for mm, mv, m, v, mom in plans:
                        _fold_moving(self.static_in[mm], self.static_in[mv], outs[m].detach(),
                                     outs[v].detach(), mom)
            self.static_gin = [None if g is None else
                               (self.param_gbuf[j] if self.param_gbuf[j] is not None else g)
                               for j, g in zip(self.gin_index, gin)]
            self.moving_in_graph = bool(plans)

    def _moving_plans(self):
        """The BatchNorm moving-statistic updates (``(moving_mean, moving_var, batch mean,
        batch variance, momentum)`` indices) the backward graph can make: those whose moving
        statistics are parameters (read in place), not inputs."""
        plans = tuple(self.meta[1])
        if any(mm < self.nin or mv < self.nin for mm, mv, *_ in plans):
            return ()
        return plans

    def _grads(self, outs, gouts):
        heads = [outs[i] for i in range(len(outs)) if outs[i].requires_grad]
        wrt = [s for s in self.static_in if s.requires_grad]
        if not heads or not wrt:
            return []
        if gouts is None:
            gouts = [torch.ones_like(h) for h in heads]
        return list(torch.autograd.grad(heads, wrt, gouts, allow_unused=True))

    def _copy_in(self, ts):
        for s, t in zip(self.static_in, ts):
            if s.data_ptr() != t.data_ptr():
                s.detach().copy_(t)

    def release(self):
        """Drop the graphs and their memory now (a signature the automatic mode evicts)
        rather than when the garbage collector breaks this object's reference cycle; a
        later backward of one of its forwards (retain_graph) recomputes. Not while a
        forward awaits its backward (the memory goes with that graph then)."""
        if self.busy():
            return False
        self.gen += 1
        self.fwd = self.bwd = None
        self.static_out = self.static_gin = self.static_gout = None
        self.static_in = [None] * len(self.static_in)
        return True

    def busy(self):
        """A graphed forward still waits for its backward: replaying would clobber it."""
        p = self.pending
        return p is not None and p() is not None

    def __call__(self, ts):
        if not self.recording:
            with torch.no_grad():
                self._copy_in(ts)
                self.fwd.replay()
                return [o.clone() if i < self.nout else o.detach()
                        for i, o in enumerate(self.static_out)]
        return list(self._fn(*ts))

    def _rng_state(self):
        return [g.get_state() for g in self.gens]

    def _set_rng(self, states):
        for g, st in zip(self.gens, states):
            g.set_state(st)

    def _backward(self, ctx, gs):
        if ctx.gen != self.gen or (self.plain and torch.is_grad_enabled()):
            if not self.plain:
                raise MXNetError(
                    f"{self.name}: this CUDA-graphed hybridized block (static_alloc + "
                    "static_shape) was called again before the backward of an earlier "
                    "call; its saved activations are gone. Run backward before the next "
                    "call, or set NEOGLUON_CUDA_GRAPHS=0")
            # plain hybridize never refused these: a backward of a graph replayed again
            # since (retain_graph=True) or one that is to be differentiated again
            # (create_graph=True, grad mode is on) recomputes the block eagerly
            if ctx.gen == self.gen:
                self.pending = None
            return self._recompute(ctx, gs)
        self.pending = None
        for buf, i in zip(self.static_gout, self.req):
            g = gs[i]
            if g is None:
                buf.zero_()
            else:
                buf.copy_(g)
        self.bwd.replay()
        res = [None] * len(self.static_in)
        if self.plain:
            # every gradient leaves the graph's memory as a fresh tensor (the engine then
            # writes it into, or adds it to, the Parameter's own buffer as eagerly): one
            # multi-tensor copy instead of a kernel per tensor
            idx = [j for j, g in zip(self.gin_index, self.static_gin) if g is not None]
            src = [g for g in self.static_gin if g is not None]
            dst = _fresh_copies(src)
            for j, g in zip(idx, dst):
                res[j] = g
            return tuple(res)
        for j, g in zip(self.gin_index, self.static_gin):
            if g is not None:
                res[j] = g if j >= self.nin else g.clone()
        return tuple(res)

    def _recompute(self, ctx, gs):
        """The gradients of one graphed forward computed eagerly from its saved inputs (as
        torch's checkpointing does), with the random draws of that forward and, under
        ``create_graph``, recorded. Inputs changed in place since the forward make torch's
        saved-tensor check fail, as eagerly; parameters are read as they are now (what
        changes them between a forward and its backward - an optimizer step between two
        backward passes of one retained graph - gives other gradients than eagerly)."""
        from .. import autograd
        saved = tuple(ctx.saved_tensors) + tuple(ctx.params)
        create = torch.is_grad_enabled()
        st = autograd._state
        prev = (st.recording, st.training)
        now = self._rng_state() if ctx.rng is not None else None
        try:
            st.recording, st.training = True, self.training
            if ctx.rng is not None:
                self._set_rng(ctx.rng)
            with torch.enable_grad():
                outs, _meta = self.fn(*saved)
                heads, hgs = [], []
                for i in self.req:
                    heads.append(outs[i])
                    hgs.append(torch.zeros_like(outs[i]) if gs[i] is None else gs[i])
                wrt = [saved[j] for j in self.gin_index]
                grads = torch.autograd.grad(heads, wrt, hgs, create_graph=create,
                                            allow_unused=True)
            if self.moving_in_graph:
                # (the recorded backward would have folded the batch statistics in)
                with torch.no_grad():
                    for mm, mv, m, v, mom in self._moving_plans():
                        _fold_moving(saved[mm], saved[mv], outs[m].detach(),
                                     outs[v].detach(), mom)
        finally:
            st.recording, st.training = prev
            if now is not None:
                self._set_rng(now)
        res = [None] * len(self.static_in)
        for j, g in zip(self.gin_index, grads):
            res[j] = g
        return tuple(res)

    def _function(self):
        owner = self
        nout = self.nout
        req = set(self.req)
        plain = self.plain

        def replay_backward(ctx, *gs):
            return owner._backward(ctx, gs)

        class _Replay(torch.autograd.Function):
            @staticmethod
            def forward(ctx, *ts):
                if plain:
                    # what an eager recompute needs (_recompute): the inputs (kept, not
                    # copied, as an eager graph keeps them; the parameters without torch's
                    # version check, which their in-place updates - BatchNorm's moving
                    # statistics, the optimizer - would trip) and the generators' states
                    ctx.save_for_backward(*ts[:owner.nin])
                    ctx.params = ts[owner.nin:]
                    ctx.rng = owner._rng_state() if owner.random else None
                owner._copy_in(ts)
                owner.fwd.replay()
                owner.gen += 1
                ctx.gen = owner.gen
                ctx.token = tok = _Token()
                owner.pending = weakref.ref(tok)
                outs = [o.clone() if i < nout else o.detach()
                        for i, o in enumerate(owner.static_out)]
                # what the recorded backward does not differentiate (the side outputs, and
                # outputs that did not depend on a differentiable input)
                fixed = [o for i, o in enumerate(outs) if i not in req]
                if fixed:
                    ctx.mark_non_differentiable(*fixed)
                return tuple(outs)

            # The static mode's recorded backward is not differentiable (create_graph
            # raises); the plain mode's recomputes when asked to be.
            backward = staticmethod(
                replay_backward if plain else
                torch.autograd.function.once_differentiable(replay_backward))

        return _Replay.apply


def _fresh_copies(src):
    """New tensors equal to ``src`` (one multi-tensor copy kernel per dtype group on CUDA)."""
    dst = [torch.empty_like(t) for t in src]
    if dst:
        copy = getattr(torch, "_foreach_copy_", None)
        if copy is not None:
            copy(dst, src)
        else:
            for d, t in zip(dst, src):
                d.copy_(t)
    return dst


def capture(block, fn, ts, nparams, recording, auto=False):
    """A :class:`Graphed` for ``fn`` on example tensors ``ts``, or None when the graph cannot
    be recorded: with one warning for the block in the static mode; with a debug log only in
    the automatic mode (``auto=True``), where the graph keeps plain hybridize's semantics."""
    name = f"{type(block).__name__} '{block.name}'"
    try:
        if not auto:
            return Graphed(fn, ts, nparams, recording, name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return Graphed(fn, ts, nparams, recording, name, plain=True)
    except Exception as err:  # noqa: BLE001 - any failure: run this graph without CUDA graphs
        try:
            torch.cuda.synchronize(ts[0].device)
        except Exception:  # noqa: BLE001 - (a failed capture can leave an error pending)
            pass
        why = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        if auto:
            _log.debug("%s: no CUDA graph for this input signature (%s: %s); it runs "
                       "without one", name, type(err).__name__, why[:300])
            return None
        if getattr(block, "_cudagraph_failed", None) is None:
            block._cudagraph_failed = why
            warnings.warn(f"{name}: could not record a CUDA graph ({type(err).__name__}: "
                          f"{why[:300]}); this graph runs without CUDA graphs.",
                          RuntimeWarning, stacklevel=3)
        return None


class AutoPolicy:
    """When plain ``hybridize()`` records a CUDA graph (one per block, ``block._autograph``).

    A signature is one variant of one captured graph (input shapes, dtypes, context, training
    mode, argument format; then recording and which inputs need gradients): the
    ``_compile._Variant`` object itself. :meth:`step` is told of every call of the block on
    a CUDA context and answers:

    * ``'replay'`` - the signature has a recorded graph (it becomes the most recently used);
    * ``'record'`` - the signature has now run ``AUTO_AFTER`` times in a row: record it
      (making room by dropping the least recently used of ``AUTO_CACHE`` recorded ones),
      unless more than ``AUTO_MEMORY`` of the device's memory is allocated (then it runs
      without a graph and is asked again at its next call);
    * ``'eager'`` - run without a graph: not yet seen often enough in a row, recording it
      failed before (``variant.graphed is False``: never tried again), or the block gave up.

    Misses - a signature left for another before it was recorded, a recorded graph dropped
    for room - count up; at ``AUTO_MISSES`` the block records no new graph (those it has keep
    replaying). So a block whose shapes keep changing costs a few counters per call and
    holds at most ``AUTO_CACHE`` graphs' memory. ``AUTO_FAILURES`` failed recordings (each
    costs a few warm-up passes; what failed - a host sync, an op graphs cannot hold - is
    usually in every signature of the block) make the block give up too.
    """

    __slots__ = ("last", "streak", "cache", "misses", "gave_up", "records", "failures")

    def __init__(self):
        self.last = None
        self.streak = 0
        self.cache = OrderedDict()      # id(variant) -> variant with a recorded graph
        self.misses = 0
        self.gave_up = False
        self.records = 0
        self.failures = 0

    def step(self, v):
        if v is self.last:
            self.streak += 1
        else:
            prev = self.last
            if prev is not None and prev.graphed is None:
                self.misses += 1
            self.last, self.streak = v, 1
        gr = v.graphed
        if gr:
            if id(v) in self.cache:
                self.cache.move_to_end(id(v))
            return "replay"
        if gr is False or self.gave_up:
            return "eager"
        if self.misses >= AUTO_MISSES:
            self.gave_up = True
            return "eager"
        return "record" if self.streak >= AUTO_AFTER else "eager"

    def recorded(self, v, gr):
        """After ``'record'``: ``gr`` the recorded graph, or None when recording failed."""
        if not gr:
            v.graphed = False
            self.failures += 1
            if self.failures >= AUTO_FAILURES:
                self.gave_up = True
            return
        while len(self.cache) >= AUTO_CACHE:
            _, old = self.cache.popitem(last=False)
            release = getattr(old.graphed, "release", None)
            if release is not None:
                release()           # (or, while a backward is pending, after it)
            old.graphed = None
            self.misses += 1
        v.graphed = gr
        self.cache[id(v)] = v
        self.records += 1
