"""CUDA graphs for ``hybridize(static_alloc=True, static_shape=True)`` on a GPU.

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

import os
import warnings
import weakref

import torch

from ..base import MXNetError
from ..ndarray.nn_ops import _fold_moving

_WARMUP = 2


def enabled():
    return os.environ.get("NEOGLUON_CUDA_GRAPHS", "1").strip().lower() not in (
        "0", "off", "false", "no")


def wanted(block, ctx):
    """Whether ``block``'s graphs on ``ctx`` run as CUDA graphs (decided at ``hybridize``)."""
    return ctx.device_typeid == 2 and getattr(block, "_cuda_graphs", False)


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

    def __init__(self, fn, ts, nparams, recording, name="block"):
        self.name = name
        self.recording = recording
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
        self.param_gbuf = ([torch.empty_like(s) if i >= nin and s.requires_grad else None
                            for i, s in enumerate(self.static_in)] if recording else [])
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
        self.gen = 0
        self.pending = None          # weakref to the _Token of a forward awaiting backward
        self._fn = self._function()

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

    def _function(self):
        owner = self
        nout = self.nout
        req = set(self.req)

        class _Replay(torch.autograd.Function):
            @staticmethod
            def forward(ctx, *ts):
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

            @staticmethod
            @torch.autograd.function.once_differentiable
            def backward(ctx, *gs):
                if ctx.gen != owner.gen:
                    raise MXNetError(
                        f"{owner.name}: this CUDA-graphed hybridized block (static_alloc + "
                        "static_shape) was called again before the backward of an earlier "
                        "call; its saved activations are gone. Run backward before the next "
                        "call, or set NEOGLUON_CUDA_GRAPHS=0")
                owner.pending = None
                for buf, i in zip(owner.static_gout, owner.req):
                    g = gs[i]
                    if g is None:
                        buf.zero_()
                    else:
                        buf.copy_(g)
                owner.bwd.replay()
                res = [None] * len(owner.static_in)
                for j, g in zip(owner.gin_index, owner.static_gin):
                    if g is not None:
                        res[j] = g if j >= owner.nin else g.clone()
                return tuple(res)

        return _Replay.apply


def capture(block, fn, ts, nparams, recording):
    """A :class:`Graphed` for ``fn`` on example tensors ``ts``, or None (with one warning for
    the block) when the graph cannot be recorded."""
    try:
        return Graphed(fn, ts, nparams, recording, f"{type(block).__name__} '{block.name}'")
    except Exception as err:  # noqa: BLE001 - any failure: run this graph without CUDA graphs
        torch.cuda.synchronize(ts[0].device)
        if getattr(block, "_cudagraph_failed", None) is None:
            why = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            block._cudagraph_failed = why
            warnings.warn(f"{type(block).__name__} '{block.name}': could not record a CUDA "
                          f"graph ({type(err).__name__}: {why[:300]}); this graph runs "
                          "without CUDA graphs.", RuntimeWarning, stacklevel=3)
        return None
