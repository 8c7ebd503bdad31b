"""Reading MXNet 1.x's pickled optimizer states without running MXNet's pickle.

MXNet's ``Updater.get_states`` (and so ``KVStore.save_optimizer_states`` and
``Trainer.save_states``) writes ``pickle.dumps(states)``, or ``pickle.dumps((states,
optimizer))`` with ``dump_optimizer=True``. ``states`` maps a key (the Parameter's index) to
``None``, an ``mxnet.ndarray.ndarray.NDArray`` or a tuple of them; an NDArray pickles as
``NDArray(None)`` followed by ``__setstate__({'handle': bytearray(...)})``, the bytes being one
array record of MXNet's ``.params`` format. The optimizer pickles as its class (for instance
``mxnet.optimizer.optimizer.SGD``) and its ``__dict__`` without ``param_dict``: plain numbers,
strings, dicts of them, and its ``lr_scheduler`` (``mxnet.lr_scheduler.FactorScheduler`` etc.,
again a class and a ``__dict__``).

A pickle is a program: loading one with :func:`pickle.loads` may call any function it names.
This module loads it with an :class:`pickle.Unpickler` whose ``find_class`` hands out only
inert placeholders for the few globals above (and ``bytearray`` of bytes); any other global
(``os.system``, ``builtins.eval``, a torch class, a user's own optimizer) stops the load with
an :class:`MXNetError` naming it, before anything is called. The placeholders only record what
the pickle gave them. A second pass then checks that record and builds neogluon objects from
it: NDArrays through ``nd.load``'s record reader, and neogluon's optimizer and scheduler
classes with the attributes their MXNet counterparts have (other attributes are ignored).
"""
from __future__ import annotations

import io
import math
import pickle
import pickletools
import warnings

from ..base import MXNetError

__all__ = ["is_pickle", "load_mxnet_states"]


def is_pickle(blob) -> bool:
    """Whether ``blob`` starts like a pickle of protocol 2 or later (what MXNet writes)."""
    return bytes(blob[:1]) == b"\x80"


# ---------------------------------------------------------------------------- placeholders
class _Refused(pickle.UnpicklingError):
    """A global outside the allow-list: the load stops before anything is called."""

    def __init__(self, module, name):
        super().__init__(f"{module}.{name}")
        self.qualname = f"{module}.{name}"


class _Bad(pickle.UnpicklingError):
    """An allowed global used in a way MXNet never writes."""


class _NDArrayRecord:
    """What ``mxnet.ndarray.ndarray.NDArray`` stands for while unpickling: the raw record."""

    __slots__ = ("raw", "done")

    def __init__(self, handle=None):
        if handle is not None:
            raise _Bad("mxnet.ndarray.ndarray.NDArray called with an argument (MXNet pickles "
                       "NDArray(None) and sets its state)")
        self.raw = None
        self.done = False

    def __setstate__(self, state):
        if self.done or not isinstance(state, dict) or set(state) != {"handle"}:
            raise _Bad("an NDArray's pickled state is not {'handle': bytes}")
        raw = state["handle"]
        if raw is not None and not isinstance(raw, (bytes, bytearray)):
            raise _Bad(f"an NDArray's pickled handle is a {type(raw).__name__}, not bytes")
        self.raw = None if raw is None else bytes(raw)
        self.done = True


class _Instance:
    """What an allowed MXNet class (optimizer, scheduler) stands for: its name and __dict__."""

    _mx_global = ""

    def __setstate__(self, state):
        if "_mx_state" in self.__dict__ or not isinstance(state, dict):
            raise _Bad(f"{self._mx_global}: its pickled state is not a dict")
        self.__dict__["_mx_state"] = state


def _bytearray(data=b""):
    """``builtins.bytearray`` as MXNet's pickles use it: a copy of bytes, nothing else."""
    if not isinstance(data, (bytes, bytearray)):
        raise _Bad(f"builtins.bytearray called with a {type(data).__name__}, not bytes")
    return bytearray(data)


def _latin1(text, encoding="latin1"):
    """``_codecs.encode``, with which protocol-2 pickles write bytes: str to latin-1 only."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise _Bad("_codecs.encode used for something else than bytes written as latin-1")
    return text.encode("latin-1")


def _numpy_dtype(name, align=False, copy=True):
    """``numpy.dtype`` for the numeric types a pickled numpy scalar may carry."""
    import numpy as np
    if not isinstance(name, str) or name.lstrip("<>=|") not in _NUMERIC_DTYPES:
        raise _Bad(f"numpy.dtype({name!r}) is not a numeric type")
    return _DType(np.dtype(name))


_NUMERIC_DTYPES = {"b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8",
                   "?", "bool"}


class _DType:
    """A numeric numpy dtype; ``__setstate__`` takes the byte order numpy pickles with it."""

    __slots__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = dtype

    def __setstate__(self, state):
        if not isinstance(state, tuple) or len(state) < 2 or state[1] not in "<>|=":
            raise _Bad("a pickled numpy dtype has an unexpected state")
        if state[1] in "<>":
            self.dtype = self.dtype.newbyteorder(state[1])


def _numpy_scalar(dtype, data):
    """``numpy.core.multiarray.scalar`` for numeric dtypes: the Python number."""
    import numpy as np
    if not isinstance(dtype, _DType) or not isinstance(data, bytes) or \
            len(data) != dtype.dtype.itemsize:
        raise _Bad("a pickled numpy scalar is not a numeric dtype and its bytes")
    return np.frombuffer(data, dtype=dtype.dtype)[0].item()


class _Call:
    """An allowed function, as the unpickler sees it: callable, and nothing can be set on it
    (a pickle's BUILD on a bare function would set attributes on this module's function)."""

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *args):
        return self.fn(*args)

    def __setstate__(self, state):
        raise _Bad(f"the pickle sets a state on the function {self.fn.__name__}")


def _class(module, name):
    return type(name, (_Instance,), {"_mx_global": f"{module}.{name}", "__module__": __name__})


# MXNet 1.9.1's optimizers (as mxnet.optimizer.optimizer.<Name>, or the package alias) and
# schedulers: the names a pickle may use, mapped to neogluon's classes by name later.
_OPTIMIZERS = ("SGD", "ccSGD", "NAG", "Signum", "FTML", "LARS", "LBSGD", "LAMB", "DCASGD",
               "SGLD", "Adam", "AdaGrad", "RMSProp", "AdaDelta", "Ftrl", "Adamax", "Nadam",
               "Test")
_SCHEDULERS = ("LRScheduler", "FactorScheduler", "MultiFactorScheduler", "PolyScheduler",
               "CosineScheduler")

_ALLOWED = {("mxnet.ndarray.ndarray", "NDArray"): _NDArrayRecord,
            ("mxnet.ndarray", "NDArray"): _NDArrayRecord,
            ("builtins", "bytearray"): _Call(_bytearray),
            ("__builtin__", "bytearray"): _Call(_bytearray),
            ("_codecs", "encode"): _Call(_latin1),
            ("numpy", "dtype"): _Call(_numpy_dtype),
            ("numpy.core.multiarray", "scalar"): _Call(_numpy_scalar),
            ("numpy._core.multiarray", "scalar"): _Call(_numpy_scalar)}
for _n in _OPTIMIZERS:
    for _m in ("mxnet.optimizer.optimizer", "mxnet.optimizer"):
        _ALLOWED[(_m, _n)] = _class(_m, _n)
for _m in ("mxnet.optimizer.contrib", "mxnet.optimizer"):
    _ALLOWED[(_m, "GroupAdaGrad")] = _class(_m, "GroupAdaGrad")
for _n in _SCHEDULERS:
    _ALLOWED[("mxnet.lr_scheduler", _n)] = _class("mxnet.lr_scheduler", _n)
del _n, _m


class _RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        target = _ALLOWED.get((module, name))
        if target is None:
            raise _Refused(module, name)
        return target

    def persistent_load(self, pid):
        raise _Bad("the pickle holds a persistent id, which MXNet's states never do")


# ---------------------------------------------------------------------------- loading
def load_mxnet_states(blob, who="Updater.set_states"):
    """Read MXNet's pickled Updater states.

    Returns
    -------
    (states, optimizer)
        ``states``: dict key -> state (NDArrays on their saved CPU/GPU context, as ``nd.load``
        places them); ``optimizer``: a neogluon optimizer, or None when the pickle has none.

    Raises
    ------
    MXNetError
        For a global outside the allow-list (naming it; nothing it names has been called),
        a malformed or truncated pickle, or content MXNet does not write.
    """
    try:
        data = bytes(blob)
        # Walk the opcodes first: pickletools reads each declared length against the bytes
        # that are there, so a forged length is refused before the unpickler allocates it.
        for _ in pickletools.genops(data):
            pass
        obj = _RestrictedUnpickler(io.BytesIO(data)).load()
    except _Refused as err:
        raise MXNetError(
            f"{who}: refusing to load this pickle: it references the global "
            f"'{err.qualname}', which is not part of MXNet's optimizer states (only "
            "NDArrays, numbers, tuples, dicts and MXNet's built-in optimizer and "
            "learning-rate scheduler classes are read; nothing in the pickle was run)"
        ) from None
    except _Bad as err:
        raise MXNetError(f"{who}: not an MXNet optimizer-states pickle: {err}") from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError,
            KeyError, IndexError, RecursionError, UnicodeDecodeError, OverflowError) as err:
        raise MXNetError(f"{who}: cannot read this pickle of MXNet optimizer states (truncated "
                         f"or corrupt: {type(err).__name__}: {err})") from None
    try:
        return _convert(obj, who)
    except RecursionError:
        raise MXNetError(f"{who}: the pickled states are nested too deeply") from None


def _convert(obj, who):
    ctx = _Converter(who)
    if isinstance(obj, tuple) and len(obj) == 2:  # MXNet's test for the dumped optimizer
        raw_states, raw_opt = obj
        optimizer = ctx.optimizer(raw_opt)
    else:
        raw_states, optimizer = obj, None
    if not isinstance(raw_states, dict):
        raise MXNetError(f"{who}: the pickle holds a {type(raw_states).__name__}, not MXNet's "
                         "dict of optimizer states")
    states = {}
    for key, value in raw_states.items():
        if not isinstance(key, (int, str)) or isinstance(key, bool):
            raise MXNetError(f"{who}: a state's key is a {type(key).__name__} ({key!r}); "
                             "MXNet's keys are Parameter indices or names")
        states[key] = ctx.state(value, f"the state of key {key!r}")
    return states, optimizer


class _Converter:
    def __init__(self, who):
        self.who = who

    def fail(self, msg):
        raise MXNetError(f"{self.who}: {msg}")

    def ndarray(self, rec, where):
        from ..ndarray.io import _load_record
        if not rec.done or rec.raw is None:
            self.fail(f"{where}: an NDArray without data")
        try:
            return _load_record(rec.raw)
        except MXNetError as err:
            self.fail(f"{where}: {err}")

    def state(self, s, where):
        if s is None:
            return None
        if isinstance(s, _NDArrayRecord):
            return self.ndarray(s, where)
        if isinstance(s, (tuple, list)):
            out = [self.state(x, f"{where}[{i}]") for i, x in enumerate(s)]
            return tuple(out) if isinstance(s, tuple) else out
        self.fail(f"{where} is a {type(s).__name__}; MXNet's states are NDArrays, None or "
                  "tuples of them")

    def plain(self, v, where):
        """A value of numbers, strings, None and (nested) tuples, lists and dicts of them."""
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if isinstance(v, (tuple, list)):
            out = [self.plain(x, where) for x in v]
            return tuple(out) if isinstance(v, tuple) else out
        if isinstance(v, dict):
            return {self.plain(k, where): self.plain(x, where) for k, x in v.items()}
        self.fail(f"{where} holds a {type(v).__name__}, where MXNet keeps plain values")

    def counts(self, v, where):
        if not isinstance(v, dict) or not all(
                isinstance(k, (int, str)) and isinstance(c, int) and not isinstance(c, bool)
                for k, c in v.items()):
            self.fail(f"{where} is not a dict of update counts")
        return dict(v)

    def optimizer(self, raw):
        from . import optimizer as _opt
        if not isinstance(raw, _Instance) or "_mx_state" not in raw.__dict__ or \
                not raw._mx_global.startswith("mxnet.optimizer."):
            self.fail(f"the dumped optimizer is a {type(raw).__name__}, not one of MXNet's "
                      "optimizers")
        name = raw._mx_global.rsplit(".", 1)[1]
        cls = _opt.Optimizer.opt_registry.get(name.lower())
        if cls is None or cls.__name__ != name or \
                not cls.__module__.startswith("neogluon.optimizer"):
            self.fail(f"optimizer {raw._mx_global} has no neogluon counterpart")
        state = raw._mx_state
        where = raw._mx_global
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            template = cls()
        known = vars(template)
        opt = cls.__new__(cls)
        opt.__dict__.update(known)
        ignored = []
        for k, v in state.items():
            if not isinstance(k, str):
                self.fail(f"{where}: an attribute name is a {type(k).__name__}")
            if k == "param_dict":
                continue
            if k not in known:
                ignored.append(k)
                continue
            if k == "lr_scheduler":
                v = self.scheduler(v)
            elif k == "_all_index_update_counts":
                if not isinstance(v, dict) or not v:
                    self.fail(f"{where}._all_index_update_counts is not a dict of devices")
                v = {dev: self.counts(c, f"{where}._all_index_update_counts[{dev!r}]")
                     for dev, c in v.items()}
            elif k == "_index_update_count":
                continue  # linked below
            elif k == "cumgrads":  # LBSGD's accumulated gradients
                v = self.cumgrads(v, where)
            else:
                v = self.plain(v, f"{where}.{k}")
            setattr(opt, k, v)
        # MXNet's _index_update_count is one of the per-device dicts (the current device's)
        current = state.get("_index_update_count")
        dev = next((d for d, c in state.get("_all_index_update_counts", {}).items()
                    if c is current), None)
        if dev is not None:
            opt._index_update_count = opt._all_index_update_counts[dev]
        elif current is not None:
            opt._index_update_count = self.counts(current, f"{where}._index_update_count")
        else:
            opt._index_update_count = opt._all_index_update_counts.setdefault(0, {})
        for k in ("lr", "wd", "rescale_grad"):
            v = getattr(opt, k, None)
            if v is not None and (not isinstance(v, (int, float)) or isinstance(v, bool)
                                  or not math.isfinite(v)):
                self.fail(f"{where}.{k} is {v!r}, not a finite number")
        opt.param_dict = {}
        if ignored:
            warnings.warn(f"{self.who}: ignored attributes {sorted(ignored)} of the pickled "
                          f"{where}, which neogluon's {name} does not have", stacklevel=4)
        return opt

    def cumgrads(self, v, where):
        if not isinstance(v, dict):
            self.fail(f"{where}.cumgrads is not a dict")
        out = {}
        for k, entry in v.items():
            if not isinstance(entry, dict) or set(entry) != {"cum_grad", "num_cums"}:
                self.fail(f"{where}.cumgrads[{k!r}] is not {{'cum_grad', 'num_cums'}}")
            cum = entry["cum_grad"]
            if isinstance(cum, _NDArrayRecord):
                cum = self.ndarray(cum, f"{where}.cumgrads[{k!r}]")._t
            elif not isinstance(cum, (int, float)):
                self.fail(f"{where}.cumgrads[{k!r}] holds a {type(cum).__name__}")
            out[k] = {"cum_grad": cum, "num_cums": self.plain(entry["num_cums"], where)}
        return out

    def scheduler(self, raw):
        from .. import lr_scheduler as _lrs
        if raw is None:
            return None
        if not isinstance(raw, _Instance) or "_mx_state" not in raw.__dict__ or \
                not raw._mx_global.startswith("mxnet.lr_scheduler."):
            self.fail(f"the optimizer's lr_scheduler is a {type(raw).__name__}, not one of "
                      "MXNet's schedulers")
        name = raw._mx_global.rsplit(".", 1)[1]
        cls = getattr(_lrs, name)
        sched = cls.__new__(cls)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            template = {"FactorScheduler": lambda: cls(step=1),
                        "MultiFactorScheduler": lambda: cls(step=[1]),
                        "PolyScheduler": lambda: cls(max_update=1),
                        "CosineScheduler": lambda: cls(max_update=1)}.get(name, cls)()
        known = vars(template)
        sched.__dict__.update(known)
        for k, v in raw._mx_state.items():
            if not isinstance(k, str):
                self.fail(f"{raw._mx_global}: an attribute name is a {type(k).__name__}")
            if k in known:
                setattr(sched, k, self.plain(v, f"{raw._mx_global}.{k}"))
        return sched


# ---------------------------------------------------------------------------- writing
class _MXNDArrayRef:
    """Stands for ``mxnet.ndarray.ndarray.NDArray`` in a pickle this module writes."""


class _MXWriter(pickle._Pickler):   # the Python pickler: its save_global can be overridden
    """A pickler that names ``mxnet.ndarray.ndarray.NDArray`` without importing MXNet."""

    def save_global(self, obj, name=None):
        if obj is _MXNDArrayRef:
            self.write(pickle.GLOBAL + b"mxnet.ndarray.ndarray\nNDArray\n")
            self.memoize(obj)
            return
        super().save_global(obj, name)

    def reducer_override(self, obj):
        from ..ndarray.ndarray import NDArray
        if isinstance(obj, NDArray):
            from ..context import cpu
            from ..ndarray.io import _record
            rec = _record(obj.as_in_context(cpu()), "<optimizer states>")
            return _MXNDArrayRef, (None,), {"handle": bytearray(rec)}
        return NotImplemented


def dump_mxnet_states(states, who="save_optimizer_states"):
    """MXNet's ``Updater.get_states()`` bytes for ``states`` (dict key -> None, an NDArray or
    a tuple/list of them): a pickle that MXNet 1.9.1 loads (its NDArrays as
    ``mxnet.ndarray.ndarray.NDArray`` with their ``.params`` record as the handle bytes).
    Only those objects and plain numbers are written; anything else raises MXNetError."""
    from ..ndarray.ndarray import NDArray

    def check(v, where):
        if v is None or isinstance(v, (NDArray, bool, int, float, str)):
            return
        if isinstance(v, (tuple, list)):
            for i, x in enumerate(v):
                check(x, f"{where}[{i}]")
            return
        raise MXNetError(f"{who}: cannot write a state of type {type(v).__name__} ({where}) in "
                         "MXNet's format")

    if not isinstance(states, dict):
        raise MXNetError(f"{who}: the states must be a dict, got {type(states).__name__}")
    for k, v in states.items():
        check(v, f"key {k!r}")
    buf = io.BytesIO()
    _MXWriter(buf, protocol=2).dump(dict(states))
    return buf.getvalue()
