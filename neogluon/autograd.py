"""Imperative autograd with MXNet 1.x semantics, on torch's autograd engine.

Outside ``record()`` no graph is built: an op whose inputs require grad runs with torch's
grad mode off. Inside it, torch records as usual. ``backward`` computes the gradients of every
array that had ``attach_grad`` (or ``mark_variables``) and writes them into their persistent
gradient buffers according to ``grad_req``, marking exactly those buffers fresh.
"""
from __future__ import annotations

import contextvars
import threading
import weakref
from typing import Sequence

import torch

from . import _malloc
from .base import MXNetError

__all__ = ["record", "pause", "train_mode", "predict_mode", "is_recording", "is_training",
           "set_recording", "set_training", "backward", "grad", "mark_variables", "Function",
           "get_symbol"]


class _State(threading.local):
    recording = False
    training = False


_state = _State()
# Writes into arrays outside record() go around torch's version counter, so that a graph
# recorded earlier reads the new values at backward() (MXNet's behaviour) instead of failing.
# Code that spots changes by version counters (the dist store's backward overlap) also checks
# this count of such writes, which every one of them increments.
_UNVERSIONED_WRITES = [0]
_is_grad_enabled = torch.is_grad_enabled
_set_grad_enabled = torch._C._set_grad_enabled
class _VarRegistry:
    """Arrays with an attached gradient, held weakly so that dropping a model frees them.

    A dict of weak references keyed by id: iterating it costs much less than a WeakSet,
    and backward walks it on every call.
    """
    __slots__ = ("_refs",)

    def __init__(self):
        self._refs = {}

    def add(self, arr):
        k = id(arr)
        if k not in self._refs:
            refs = self._refs
            self._refs[k] = weakref.ref(arr, lambda _r, k=k: refs.pop(k, None))

    def discard(self, arr):
        self._refs.pop(id(arr), None)

    def __contains__(self, arr):
        r = self._refs.get(id(arr))
        return r is not None and r() is arr

    def __iter__(self):
        for r in list(self._refs.values()):
            v = r()
            if v is not None:
                yield v

    def __len__(self):
        return len(self._refs)

    def clear(self):
        self._refs.clear()


_variables = _VarRegistry()


def is_recording() -> bool:
    """Whether operations are being recorded for ``backward``."""
    return _state.recording


def is_training() -> bool:
    """Whether layers such as Dropout and BatchNorm run in training mode."""
    return _state.training


def set_recording(is_recording: bool) -> bool:  # noqa: D401 - MXNet's name
    """Set recording on or off; returns the previous value."""
    prev = _state.recording
    _state.recording = rec = bool(is_recording)
    if rec is not prev:
        _count_recording(rec)
    if is_recording:
        # inside pause() or torch.no_grad() torch would otherwise build no graph
        _set_grad_enabled(True)
    return prev


def set_training(train_mode: bool) -> bool:
    """Set training mode on or off; returns the previous value."""
    prev = _state.training
    _state.training = bool(train_mode)
    return prev


class _RecordingStateScope:
    __slots__ = ("_enter_rec", "_enter_train", "_prev_rec", "_prev_train", "_prev_grad")

    def __init__(self, is_record, train_mode):
        self._enter_rec = is_record
        self._enter_train = train_mode
        self._prev_rec = self._prev_train = self._prev_grad = None

    def __enter__(self):
        self._prev_grad = _is_grad_enabled()
        st = _state
        if self._enter_rec is not None:
            self._prev_rec = prev = st.recording
            st.recording = rec = bool(self._enter_rec)
            _set_grad_enabled(rec)
            if rec is not prev:
                _count_recording(rec)
        if self._enter_train is not None:
            self._prev_train = st.training
            st.training = bool(self._enter_train)
        return self

    def __exit__(self, *exc):
        st = _state
        if self._enter_rec is not None:
            cur = st.recording
            st.recording = prev = self._prev_rec
            if cur is not prev:
                _count_recording(prev)
        if self._enter_train is not None:
            st.training = self._prev_train
        _set_grad_enabled(self._prev_grad)


# ------------------------------------------------------------------ autograd lifetimes
# MXNet frees the graph that a backward without retain_graph differentiated: every array that
# graph computed drops its history and acts as a constant in later recorded computation (no
# error, no gradient into the old graph), which is what truncated BPTT loops that never
# detach their state rely on. torch instead keeps the old nodes linked into any new graph
# that uses those arrays, and fails at the next backward (saved tensors freed), or, for nodes
# that saved nothing, sends gradient into the old graph.
#
# neogluon does what MXNet does: while some thread records, ``_new`` (and the few places that
# build arrays inline) put a weak reference to each array whose tensor has a history into
# ``_tracked``; after a backward/grad without retain_graph, ``_consume`` looks at the tracked
# arrays still alive (in a training loop: the loss, the outputs, an RNN's state), walks the
# differentiated graph from its heads only as far as needed to find them, and gives each one
# reached a detached tensor in place. Arrays the backward did not reach keep their history.
# Cost: nothing per op while no thread records (a module global test in ``_new``); one weak
# reference per recorded op; per backward, a pass over the tracked references and a walk of
# at most the differentiated graph (stopping once every live array is found).
_tracked = []
_tracked_limit = [1024]
_recording_threads = [0]
# The module namespaces holding a ``_TRACK`` flag (ndarray.ndarray's): True while any thread
# records, so that ``_new`` tests one global when nothing records.
_TRACK_HOLDERS = []


def _count_recording(rec):
    """A thread's recording flag changed to ``rec``: keep the count of recording threads and
    the ``_TRACK`` flags in step. (A thread that ends while recording leaves the count high,
    which only costs the tracking test.)"""
    n = _recording_threads[0] + (1 if rec else -1)
    if n < 0:
        n = 0
    _recording_threads[0] = n
    for g in _TRACK_HOLDERS:
        g["_TRACK"] = n > 0
    if len(_tracked) > _tracked_limit[0]:
        _compact_tracked()


def _compact_tracked():
    """Drop the references to arrays that are gone or have no history left; a record scope
    that never reaches a backward must not grow ``_tracked`` without bound."""
    snap = _take_tracked()
    live = []
    for r in snap:
        a = r()
        if a is not None and getattr(a._t, "grad_fn", None) is not None:
            live.append(r)
    _tracked.extend(live)
    _tracked_limit[0] = max(1024, 2 * len(_tracked))


def _take_tracked():
    """Empty ``_tracked`` and return what it held. (Another thread may append meanwhile:
    what it appends stays.)"""
    snap = _tracked[:]
    del _tracked[:len(snap)]
    return snap


def _track(arr):
    """Track ``arr`` (an array whose tensor got a history outside ``_new``: an in-place write
    of a recorded value)."""
    _tracked.append(weakref.ref(arr))


def _wanted():
    """The live tracked arrays with a history, by node: {grad_fn: [weak references]}
    (``_tracked`` is emptied)."""
    want = {}   # grad_fn -> weak references to the live arrays it computed
    for r in _take_tracked():
        a = r()
        if a is None:
            continue
        gf = getattr(a._t, "grad_fn", None)
        if gf is None:
            continue
        refs = want.get(gf)
        if refs is None:
            want[gf] = [r]
        else:
            refs.append(r)
    return want


class _Armed:
    """Before a backward without retain_graph: a pre-hook on the node of each live tracked
    array (a training loop has a few: the loss, the outputs, an RNN's state) records whether
    the backward ran it, and so does one on each of that node's inputs. A node the backward
    ran is in the differentiated graph, so its arrays become constants without walking that
    graph; so do the arrays of a node that did not run but whose inputs all did (an output
    the loss does not use, computed from the graph: what ``_derived_from`` finds). Only the
    other arrays (not reached, or pruned by a backward restricted to some variables) are
    looked for by the walk in ``_consume``; the results are the walk's in every case."""
    __slots__ = ("want", "fired", "handles")

    def __init__(self):
        self.want = _wanted() if _tracked else {}
        self.fired = fired = set()
        self.handles = []
        acc = _ACC_TYPE[0] if _ACC_TYPE else _accumulate_grad_type()
        armed = set()
        for gf in self.want:
            if getattr(gf, "register_prehook", None) is None:
                continue
            # the node and its inputs (an output the loss does not use, computed from nodes
            # the backward ran, is then a constant too: see _consume)
            for node in [gf] + [n for n, _ in gf.next_functions
                                if n is not None and type(n) is not acc]:
                key = id(node)
                if key not in armed:
                    armed.add(key)
                    self.handles.append(node.register_prehook(
                        lambda grads, key=key: fired.add(key)))

    def disarm(self):
        for h in self.handles:
            h.remove()
        self.handles = []

    def restore(self):
        """The backward failed: the arrays stay tracked as they were."""
        self.disarm()
        for refs in self.want.values():
            _tracked.extend(refs)
        self.want = {}


def _consume(heads_t, armed=None):
    """After a backward without retain_graph from ``heads_t``: every tracked array the
    differentiated graph computed becomes a constant (a detached tensor in place)."""
    if armed is not None:
        armed.disarm()
        want = armed.want
        fired = armed.fired
        if fired:
            for gf in list(want):
                if id(gf) not in fired:
                    # not run: an array computed only from nodes the backward ran (all its
                    # inputs ran; none is a variable) is a constant, as the walk and
                    # _derived_from below would find; anything else goes to the walk
                    nf = gf.next_functions
                    if not nf or not all(n is None or id(n) in fired for n, _ in nf) or \
                            all(n is None for n, _ in nf):
                        continue
                for r in want.pop(gf):
                    a = r()
                    if a is not None:
                        a._t = a._t.detach()
        # arrays tracked since arming (by hooks of the backward itself) join the walk
        if _tracked:
            for gf, refs in _wanted().items():
                want.setdefault(gf, []).extend(refs)
    else:
        if not _tracked:
            return
        want = _wanted()
    if not want:
        return
    left = len(want)
    acc = _ACC_TYPE[0] if _ACC_TYPE else _accumulate_grad_type()
    seen = set()
    stack = []
    for h in heads_t:
        gf = h.grad_fn
        if gf is not None and gf not in seen:
            seen.add(gf)
            stack.append(gf)
    # (Each node visited costs about 2 us, most of it torch making its Python object.)
    while stack:
        node = stack.pop()
        refs = want.pop(node, None)
        if refs is not None:
            for r in refs:
                a = r()
                if a is not None:
                    a._t = a._t.detach()
            left -= 1
            if not left:
                break
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in seen and type(nxt) is not acc:
                seen.add(nxt)
                stack.append(nxt)
    if left:
        # The walk covered the whole differentiated graph (``seen``) without reaching these
        # arrays. One computed only from that graph's results (the state outputs of an RNN
        # layer whose output alone went into the loss: MXNet's one RNN node computed both, so
        # they are constants there) becomes a constant too; one with history of its own, down
        # to a variable, keeps it.
        for node, refs in list(want.items()):
            if _derived_from(node, seen, acc):
                del want[node]
                for r in refs:
                    a = r()
                    if a is not None:
                        a._t = a._t.detach()
    # what the backward did not reach keeps its history (and its place here)
    for refs in want.values():
        _tracked.extend(refs)
    if len(_tracked) > _tracked_limit[0]:
        _compact_tracked()


_ACC_TYPE = []


def _accumulate_grad_type():
    """torch's node class for a leaf (a variable) in a graph."""
    if not _ACC_TYPE:
        leaf = torch.zeros(1, requires_grad=True)
        _ACC_TYPE.append(type((leaf * 1).grad_fn.next_functions[0][0]))
    return _ACC_TYPE[0]


def _derived_from(node, consumed, acc):
    """Whether the history below ``node`` reaches the ``consumed`` graph and no variable
    outside it: then only constants flow into it."""
    hit = False
    seen = {node}
    stack = [node]
    while stack:
        cur = stack.pop()
        for nxt, _ in cur.next_functions:
            if nxt is None or nxt in seen:
                continue
            if type(nxt) is acc:
                return False        # a variable of its own (consumed graph or not)
            if nxt in consumed:
                hit = True
                continue
            seen.add(nxt)
            stack.append(nxt)
    return hit


def record(train_mode: bool = True):
    """Scope in which operations are recorded for gradient computation.

    Parameters
    ----------
    train_mode : bool
        Whether layers run in training mode (Dropout active, BatchNorm uses batch statistics).
    """
    return _RecordingStateScope(True, train_mode)


def pause(train_mode: bool = False):
    """Scope in which recording stops (inside a ``record()`` scope)."""
    return _RecordingStateScope(False, train_mode)


def train_mode():
    """Scope that sets training mode without changing recording."""
    return _RecordingStateScope(None, True)


def predict_mode():
    """Scope that sets inference mode without changing recording."""
    return _RecordingStateScope(None, False)


def _as_list(x):
    if isinstance(x, (list, tuple)):
        return list(x), True
    return [x], False


_NDArray = None


def _nd_class():
    global _NDArray
    if _NDArray is None:
        from .ndarray.ndarray import NDArray
        _NDArray = NDArray
    return _NDArray


def _reshaped_head_grad(g, h):
    """A head gradient whose shape differs from its head's: MXNet does not check the shape
    and reads the head's number of elements from the gradient's memory, in row-major order.
    Here: its first elements, zeros past its end (where MXNet reads undefined memory)."""
    import torch
    n = 1
    for d in h.shape:
        n *= int(d)
    flat = g.reshape(-1)
    if flat.numel() >= n:
        flat = flat[:n]
    else:
        flat = torch.cat([flat, flat.new_zeros(n - flat.numel())])
    return flat.reshape(tuple(h.shape))


def _head_grads(heads, head_grads):
    if head_grads is None:
        return [None] * len(heads)
    NDArray = _nd_class()
    head_grads, _ = _as_list(head_grads)
    if len(head_grads) != len(heads):
        raise ValueError(f"heads and head_grads must have the same length, got {len(heads)} "
                         f"and {len(head_grads)}")
    out = []
    for h, g in zip(heads, head_grads):
        if g is None:
            out.append(None)
            continue
        if not isinstance(g, NDArray):
            raise TypeError(f"head_grads must be NDArrays, got {type(g).__name__}")
        if g.shape != h.shape and h.stype == "default" and g.stype == "default":
            out.append(_reshaped_head_grad(g._t, h))
            continue
        if g.shape != h.shape:
            t = _head_t(h)
            if getattr(getattr(t.grad_fn, "_forward_cls", None), "ignores_head_grad", False):
                # an operator whose backward is zeros whatever the head gradient
                # (Proposal, MultiProposal...): MXNet never reads, nor checks, it
                out.append(torch.zeros_like(t))
                continue
            raise MXNetError(f"head_grads shape {g.shape} does not match head shape {h.shape}")
        if h.stype != "default":
            from .ndarray.sparse import _head_grad
            out.append(_head_grad(h, g))
            continue
        out.append(g._t)
    return out


def _check_heads(heads):
    NDArray = _NDArray or _nd_class()
    for h in heads:
        if not isinstance(h, NDArray):
            raise TypeError(f"heads must be NDArrays, got {type(h).__name__}")
        t = _head_t(h)
        if not t.requires_grad:
            raise MXNetError(
                "Cannot differentiate node because it is not in a computational graph. "
                "You need to set is_recording to true or use autograd.record() to save "
                "computational graphs for backward. If you want to differentiate the same "
                "graph twice, you need to pass retain_graph=True to backward.")
        gf = t.grad_fn
        if gf is not None and _FREED in gf.metadata:
            raise MXNetError(
                "the graph of this head was freed by an earlier backward; pass "
                "retain_graph=True to backward to differentiate the same graph twice")


# Key set in a head's grad_fn metadata by a backward without retain_graph. torch keeps a graph
# whose nodes saved no tensors (x + 1) usable after backward; MXNet frees every graph it
# differentiated, so a second backward through the same head fails there, and here too.
_FREED = "neogluon_graph_freed"


def _mark_freed(heads_t):
    for t in heads_t:
        gf = t.grad_fn
        if gf is not None:
            gf.metadata[_FREED] = True


def _fill(h, g):
    return torch.ones_like(h) if g is None else g


# The C++ engine entry torch.autograd.grad ends in; called directly, backward skips that
# wrapper's per-call argument normalisation (a few tens of microseconds), which matters for
# small models. The public function is the fallback when these internals are missing.
_engine = getattr(getattr(getattr(torch.autograd, "variable", None), "Variable", None),
                  "_execution_engine", None)
_stash_tls = getattr(torch._C, "_stash_obj_in_tls", None)
_unstash_tls = getattr(torch._C, "_remove_obj_from_tls", None)


# Gradient hooks that fired during a backward and want work done once it is over (BatchNorm's
# moving statistics: ndarray.nn_ops._Fold); the list is emptied by _after_backward.
_AFTER = []
# one entry per backward running in some thread (list append/pop are atomic)
_IN_FLIGHT = []
# Held while a backward's end takes the queue and does its work: two backwards ending at once
# in two threads would otherwise both take (and fold) the same entries, or update one layer's
# moving statistics at the same time (torch releases the GIL inside each kernel).
_AFTER_LOCK = threading.Lock()


def _after_backward(retained):
    """Run the work the backward's hooks queued (called when the engine returns; ``retained``:
    the graph was kept for another backward). The queue is process-wide (a CUDA backward runs
    its hooks on the engine's device thread): while another thread's backward still runs, the
    queued work is done but the scratch it read is kept as is (treated as retained). A hook
    fires only after its backward entered ``_IN_FLIGHT``, so taking the queue and looking at
    ``_IN_FLIGHT`` under one lock never zeroes the scratch of a backward still running."""
    with _AFTER_LOCK:
        _IN_FLIGHT.pop()
        if _AFTER:
            from .ndarray.nn_ops import _fold_queued
            _fold_queued(_AFTER, retained or bool(_IN_FLIGHT))


def _engine_grad(outputs, grad_outputs, inputs, retain_graph):
    _IN_FLIGHT.append(1)
    if _engine is None or _stash_tls is None or _unstash_tls is None:
        try:
            return torch.autograd.grad(outputs, inputs, grad_outputs,
                                       retain_graph=retain_graph, allow_unused=True)
        finally:
            _after_backward(retain_graph)
    _stash_tls("context", contextvars.copy_context())
    try:
        return _engine.run_backward(tuple(outputs), tuple(grad_outputs), retain_graph, False,
                                    tuple(inputs), True, False)
    finally:
        _unstash_tls("context")
        _after_backward(retain_graph)


def _live_variables(among=None):
    """(variables, their leaf tensors) for backward: attached, not 'null', differentiable;
    every registered variable, or those of ``among`` (an executor's own arrays)."""
    vs, ts = [], []
    if among is None:
        among = [r() for r in list(_variables._refs.values())]
    for v in among:
        if v is None:
            continue
        ag = v._ag
        if ag is None or ag.grad_req == "null":
            continue
        s = getattr(v, "_sdata", None)
        t = v._t if s is None else s
        if t.requires_grad:
            vs.append(v)
            ts.append(t)
        elif type(t) is not torch.Tensor and getattr(t, "_carrier", None) is not None:
            vs.append(v)  # an integer variable: its float twin is the leaf
            ts.append(t._carrier)
    return vs, ts


#: Objects told about each ``backward``: ``begin()`` before the engine runs, ``end(ok)`` after
#: the gradient buffers are written. The distributed Trainer's gradient-bucket overlap uses it
#: to know that the gradient hooks it sees belong to a ``backward`` (not to ``autograd.grad``).
_BACKWARD_LISTENERS = []


def backward(heads, head_grads=None, retain_graph: bool = False, train_mode: bool = True):
    if _BACKWARD_LISTENERS:
        return _backward_with_listeners(heads, head_grads, retain_graph, train_mode)
    return _backward(heads, head_grads, retain_graph, train_mode)


def _backward_with_listeners(heads, head_grads, retain_graph, train_mode):
    listeners = list(_BACKWARD_LISTENERS)
    for lst in listeners:
        lst.begin()
    ok = False
    try:
        _backward(heads, head_grads, retain_graph, train_mode)
        ok = True
    finally:
        for lst in listeners:
            lst.end(ok)


def _backward(heads, head_grads=None, retain_graph: bool = False, train_mode: bool = True,
              variables=None):
    """Compute the gradients of ``heads`` with respect to every attached variable.

    Gradients are written into each variable's buffer: overwritten for ``grad_req='write'``,
    accumulated for ``'add'``. Variables not reached keep their buffer and stay not fresh.

    Parameters
    ----------
    heads : NDArray or list of NDArray
        Output(s) recorded inside ``autograd.record()``.
    head_grads : NDArray or list of NDArray, optional
        Gradient(s) of some loss with respect to ``heads`` (ones by default).
    retain_graph : bool
        Keep the graph so that it can be differentiated again.
    train_mode : bool
        Accepted for MXNet compatibility; operators decide their mode when they run.
    variables : list of NDArray, optional
        Only these attached arrays get gradients (an executor's arguments); by default every
        registered variable does.
    """
    heads, _ = _as_list(heads)
    _check_heads(heads)
    hg = _head_grads(heads, head_grads)
    variables, leaves = _live_variables(variables)
    heads_t = [_head_t(h) for h in heads]
    if _malloc._applied is None and heads_t and heads_t[0].is_cpu:
        _malloc.keep_freed_memory()   # training on the CPU: keep freed memory for reuse
    grads_out = [torch.ones_like(h) if g is None else (g if g.dtype is h.dtype else g.to(h.dtype))
                 for h, g in zip(heads_t, hg)]
    armed = None if retain_graph else _Armed()
    try:
        if not variables:
            _IN_FLIGHT.append(1)
            try:
                torch.autograd.backward(heads_t, grads_out, retain_graph=retain_graph)
            finally:
                _after_backward(retain_graph)
            if not retain_graph:
                _mark_freed(heads_t)
                _consume(heads_t, armed)
            return
        grads = _engine_grad(heads_t, grads_out, leaves, retain_graph)
    except RuntimeError as err:
        if armed is not None:
            armed.restore()
        if "backward through the graph a second time" in str(err):
            raise MXNetError(
                "the graph was freed by an earlier backward; pass retain_graph=True to "
                "backward to differentiate the same graph twice") from None
        raise MXNetError(f"backward failed: {err}") from None
    except BaseException:
        if armed is not None:
            armed.restore()
        raise
    if not retain_graph:
        _mark_freed(heads_t)
        _consume(heads_t, armed)
    # A fresh gradient that nothing else shares becomes the buffer's storage instead of being
    # copied into it: the buffer tensor and its NDArray stay the same objects. ``buf.data = g``
    # (torch's set_data: a metadata swap, not an aten call; torch's own AccumulateGrad issues a
    # detach to adopt a first gradient) rather than ``buf.set_(g)``. A buffer that is a slice
    # of a larger one (the Trainer's flat gradient buckets), or one that views were taken of
    # (``g = x.grad[1:]`` before the backward: MXNet writes the buffer they share), is
    # written in place.
    taken = {t.untyped_storage().data_ptr() for t in grads_out}
    strided = torch.strided
    from .ndarray.ndarray import _DENSE_TYPES as _DENSE
    prev = _is_grad_enabled()
    _set_grad_enabled(False)
    try:
        for v, g in zip(variables, grads):
            if g is None:
                continue
            ag = v._ag
            gbuf = ag.grad
            if g.layout is not strided or (type(gbuf) not in _DENSE and gbuf.stype != "default") \
                    or (type(v) not in _DENSE and v.stype != "default"):
                from .ndarray.sparse import _write_grad
                _write_grad(v, g)
                ag.fresh = True
                continue
            buf = gbuf._t
            if g.dtype is not buf.dtype:
                g = g.to(buf.dtype)  # (an integer variable's gradient comes as float64)
            if ag.grad_req == "add":
                buf.add_(g)
            elif (g.dtype is buf.dtype and g.shape == buf.shape and _whole(buf) and _whole(g)
                  and g.device == buf.device):
                # (A view that spans its whole storage, such as the transpose of a transpose
                # linear's weight gradient comes back as, is adopted too; so a buffer that is
                # such a view is replaced again.)
                ptr = g.untyped_storage().data_ptr()
                if ptr in taken or _viewed(buf):
                    buf.copy_(g)
                else:
                    taken.add(ptr)
                    buf.data = g
            else:
                buf.copy_(g)
            ag.fresh = True
    finally:
        _set_grad_enabled(prev)


backward.__doc__ = _backward.__doc__


_use_count = getattr(torch._C, "_storage_Use_Count", None)


def _viewed(t):
    """Whether another tensor shares ``t``'s storage (a view of the gradient buffer that
    must see the new gradient): the storage's reference count beyond ``t`` and the Python
    storage object made to read it. Without the counter (older torch) no view is assumed."""
    if _use_count is None:
        return False
    return _use_count(t.untyped_storage()._cdata) > 2


def _whole(t):
    """Whether tensor ``t`` is contiguous and spans its whole storage (not a slice of a
    larger buffer, such as the Trainer's gradient buckets)."""
    return t.is_contiguous() and (t._base is None or (
        t.storage_offset() == 0 and
        t.untyped_storage().nbytes() == t.numel() * t.element_size()))


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph: bool = False,
         train_mode: bool = True):
    """Return the gradients of ``heads`` with respect to ``variables`` (no buffer is touched).

    With ``create_graph=True`` the returned gradients are themselves recorded, so they can be
    differentiated again (higher-order gradients).
    """
    from .ndarray.ndarray import NDArray, _new
    heads, _ = _as_list(heads)
    variables, was_list = _as_list(variables)
    _check_heads(heads)
    for v in variables:
        if not isinstance(v, NDArray):
            raise TypeError(f"variables must be NDArrays, got {type(v).__name__}")
    hg = _head_grads(heads, head_grads)
    if retain_graph is None:
        retain_graph = create_graph
    heads_t = [_head_t(h) for h in heads]
    with torch.enable_grad() if create_graph else torch.no_grad():
        _IN_FLIGHT.append(1)
        try:
            grads = torch.autograd.grad(heads_t, [_leaf(v) for v in variables],
                                        [_fill(h, g) for h, g in zip(heads_t, hg)],
                                        retain_graph=retain_graph, create_graph=create_graph,
                                        allow_unused=True)
        except RuntimeError as err:
            raise MXNetError(f"autograd.grad failed: {err}") from None
        finally:
            _after_backward(retain_graph)
    if not retain_graph:
        _mark_freed(heads_t)
        _consume(heads_t)
    out = []
    for v, g in zip(variables, grads):
        if v.stype != "default" or (g is not None and g.layout is not torch.strided):
            from .ndarray.sparse import _grad_result
            out.append(_grad_result(v, g))
            continue
        if g is None:
            g = torch.zeros_like(v._t)
        elif g._is_zerotensor():   # (torch's symbolic zeros: a real array for the program)
            g = torch.zeros(g.shape, dtype=g.dtype, device=g.device)
        if create_graph and not g.requires_grad:
            g = _link_to(g, _leaf(v))
        out.append(_new(g, v._ctx))
    return out


class _ZeroLink(torch.autograd.Function):
    """``g`` unchanged, recorded as depending on a variable with a zero gradient."""

    @staticmethod
    def forward(ctx, g, v):
        ctx.v_meta = (v.shape, v.dtype, v.device)
        return g.clone()

    @staticmethod
    def backward(ctx, gg):
        shape, dtype, device = ctx.v_meta
        return gg, torch.zeros(shape, dtype=dtype, device=device)


def _link_to(g, leaf):
    """A gradient computed with ``create_graph=True`` that does not depend on its variable
    (the operator is linear there: radians, clip, Dropout, abs...) is still a node of the
    graph in MXNet, so differentiating it again gives zeros instead of failing: the same
    values, linked to the variable with a zero gradient."""
    if not (leaf.requires_grad and leaf.is_floating_point() and g.is_floating_point()):
        return g
    return _ZeroLink.apply(g, leaf)


class _AutogradInfo:
    """What an array with an attached gradient carries: its buffer, grad_req, fresh flag."""
    __slots__ = ("grad", "grad_req", "fresh")

    def __init__(self, grad, grad_req):
        self.grad = grad
        self.grad_req = grad_req
        self.fresh = False


_GRAD_REQS = ("write", "add", "null")


class _GradReqError(ValueError, KeyError):
    """MXNet raises KeyError for an unknown grad_req; this is also a ValueError."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


def _leaf(v):
    """The torch tensor autograd differentiates for variable ``v``: a sparse array's stored
    values, else the array's tensor."""
    s = getattr(v, "_sdata", None)
    return v._t if s is None else s


def _head_t(h):
    """The torch tensor backward starts from for head ``h``: a sparse head's dense shadow when
    it has one (its gradient then reaches every position, as in MXNet), else as ``_leaf``."""
    s = getattr(h, "_sdata", None)
    if s is None:
        t = h._t
        if type(t) is torch.Tensor or getattr(t, "_carrier", None) is None:
            return t
        return t._carrier  # an integer head: its float twin is in the graph
    shadow = getattr(h, "_shadow", None)
    return s if shadow is None else shadow


def _attach(arr, grad_req="write", grad_buf=None, register=True):
    """Make ``arr`` a variable whose gradient goes to ``grad_buf`` (a new zero array when
    None). ``register=False`` keeps it out of the process-wide set that a plain
    ``autograd.backward`` differentiates (an executor's private aliases)."""
    if arr.stype != "default":
        from .ndarray.sparse import _attach_sparse_var
        return _attach_sparse_var(arr, grad_req, grad_buf, register)
    if grad_req not in _GRAD_REQS:
        raise _GradReqError(f"grad_req must be one of {_GRAD_REQS}, got {grad_req!r}")
    from .ndarray.ndarray import _new
    t = arr._t
    if t.requires_grad or t.grad_fn is not None:
        t = t.detach()
    differentiable = t.is_floating_point() or t.is_complex()
    if grad_req != "null" and differentiable:
        t.requires_grad_(True)
    elif grad_req != "null":
        # MXNet differentiates integer (and bool) arrays too; torch needs a float twin (see
        # _intgrad)
        from .ndarray._intgrad import make_variable
        t = make_variable(t)
    arr._t = t
    if grad_buf is None and grad_req != "null":  # MXNet gives no buffer for 'null'
        with torch.no_grad():
            grad_buf = _new(torch.zeros_like(t), arr._ctx)
    # An array marked again is already in the set; adding it anew would compare NDArrays
    # with ==, which is elementwise.
    known = arr._ag is not None
    arr._ag = _AutogradInfo(grad_buf, grad_req)
    if not known and register:
        _variables.add(arr)


def mark_variables(variables, gradients, grad_reqs="write"):
    """Mark arrays as variables whose gradients go into the given buffers."""
    variables, _ = _as_list(variables)
    gradients, _ = _as_list(gradients)
    if len(variables) != len(gradients):
        raise ValueError("variables and gradients must have the same length, got "
                         f"{len(variables)} and {len(gradients)}")
    if isinstance(grad_reqs, str):
        grad_reqs = [grad_reqs] * len(variables)
    for v, g, r in zip(variables, gradients, grad_reqs):
        _attach(v, r, g)


def get_symbol(x):
    """The recorded computation of ``x`` as a :class:`~neogluon.symbol.Symbol`.

    Its arguments are the arrays the computation started from that take part in autograd
    (variables, Parameters), named ``var0``, ``var1``... in MXNet's order (depth first from
    the output); ``list_arguments``, ``get_internals``, ``tojson`` and the other graph queries
    work on it. The operator nodes are the operations torch recorded (``node_0``,
    ``node_1``..., with op names ``_torch_Mul``, ``_torch_Add``... taken from torch's graph),
    not MXNet operators, and scalars are not kept, so the symbol describes the graph but
    cannot be evaluated.

    Parameters
    ----------
    x : NDArray
        An array computed inside ``autograd.record()``.

    Returns
    -------
    Symbol
    """
    import re
    from .symbol.symbol import Symbol, _Node
    NDArray = _nd_class()
    if not isinstance(x, NDArray):
        raise TypeError(f"get_symbol expects an NDArray, got {type(x).__name__}")
    head = _head_t(x)
    if not head.requires_grad:
        raise MXNetError("get_symbol: the array was not computed inside autograd.record() "
                         "from arrays with an attached gradient, so nothing was recorded")
    made = {}            # id(torch node or leaf tensor) -> _Node
    counters = {"var": 0, "node": 0}
    keep = []            # keeps the torch objects alive while ids are in use

    def leaf_node(t):
        k = id(t)
        if k not in made:
            made[k] = _Node("null", f"var{counters['var']}")
            counters["var"] += 1
            keep.append(t)
        return made[k]

    def op_node(fn):
        # iterative depth-first walk, inputs in order, so names follow MXNet's order
        stack = [(fn, 0, [])]
        while stack:
            cur, i, ins = stack.pop()
            nexts = [e for e in cur.next_functions if e[0] is not None]
            if i < len(nexts):
                child, nr = nexts[i]
                if type(child).__name__ == "AccumulateGrad":
                    ins.append((leaf_node(child.variable), 0))
                elif id(child) in made:
                    node = made[id(child)]
                    node.nout = max(node.nout, nr + 1)
                    ins.append((node, nr))
                else:
                    # walk the child first, then come back to this input
                    stack.append((cur, i, ins))
                    stack.append((child, 0, []))
                    continue
                stack.append((cur, i + 1, ins))
                continue
            if id(cur) not in made:
                op = re.sub(r"Backward\d*$", "", type(cur).__name__).lstrip("_") or "op"
                made[id(cur)] = _Node(f"_torch_{op}", f"node_{counters['node']}",
                                      inputs=ins)
                counters["node"] += 1
                keep.append(cur)
        return made[id(fn)]

    fn = head.grad_fn
    if fn is None:
        return Symbol([(leaf_node(head), 0)])
    out = op_node(fn)
    return Symbol([(out, head.output_nr if out.nout > 1 else 0)])


class Function:
    """A user-defined differentiable function, written MXNet's way.

    Subclass it and define ``forward(self, *inputs)`` and ``backward(self, *output_grads)``,
    both on NDArrays. ``save_for_backward`` keeps arrays for ``backward`` in ``saved_tensors``.
    Each instance is called once per forward, as in MXNet.
    """

    def __init__(self):
        self._saved = ()
        self._used = False

    def save_for_backward(self, *args):
        self._saved = args

    @property
    def saved_tensors(self):
        return self._saved

    def forward(self, *inputs):
        raise NotImplementedError

    def backward(self, *output_grads):
        raise NotImplementedError

    def __call__(self, *inputs):
        from .ndarray.ndarray import NDArray, _new
        if self._used:
            raise MXNetError("each autograd.Function instance can be called only once")
        self._used = True
        fn = self
        ctx = inputs[0]._ctx
        if not _state.recording:
            # Nothing to differentiate later: run forward on its own (no graph, as elsewhere).
            with pause(train_mode=is_training()):
                return self.forward(*[_new(x._t.detach(), x._ctx) for x in inputs])

        class _Bridge(torch.autograd.Function):
            @staticmethod
            def forward(tctx, *ts):
                with pause(train_mode=is_training()):
                    outs = fn.forward(*[_new(t.detach(), ctx) for t in ts])
                single = isinstance(outs, NDArray)
                outs_l = [outs] if single else list(outs)
                tctx.single = single
                return tuple(o._t for o in outs_l) if not single else outs_l[0]._t

            @staticmethod
            def backward(tctx, *gs):
                with pause():
                    igs = fn.backward(*[_new(g, ctx) for g in gs])
                igs_l = [igs] if isinstance(igs, NDArray) else list(igs)
                if len(igs_l) != len(inputs):
                    raise MXNetError(f"{type(fn).__name__}.backward returned {len(igs_l)} "
                                     f"gradients for {len(inputs)} inputs")
                return tuple(g._t for g in igs_l)

        out = _Bridge.apply(*[x._t for x in inputs])
        if isinstance(out, tuple):
            return [_new(o, ctx) for o in out]
        return _new(out, ctx)


def __getattr__(name):
    # MXNet's autograd module imports these at its top; here they are looked up on first use,
    # as ndarray and symbol import this module.
    if name == "NDArray":
        from .ndarray import NDArray
        return NDArray
    if name == "Symbol":
        from .symbol import Symbol
        return Symbol
    if name == "string_types":
        from .base import string_types
        return string_types
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
