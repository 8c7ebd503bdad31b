"""MXNet 1.x's ``mxnet.profiler`` on top of ``torch.profiler``.

    from neogluon import profiler
    profiler.set_config(profile_all=True, aggregate_stats=True, filename='profile.json')
    profiler.set_state('run')
    ...                                  # train
    profiler.set_state('stop')
    print(profiler.dumps())              # per-operator count / total / min / max / avg
    profiler.dump()                      # Chrome trace: open in Perfetto or chrome://tracing

Operator events are the ones torch records (``aten::addmm``, ``aten::relu``, GPU kernels ...)
and, as in MXNet, one event per mx.nd operator called, under MXNet's operator name (``sqrt``,
``_plus_scalar``; a custom operator's work under 'Custom Operator': ``MyOp::pure_python``,
``MyOp::_zeros``). ``Domain``/``Task``/``Frame``/``Event``/``Counter``/``Marker`` are
recorded by this module and merged into the same trace on the same clock, thread and process.

Each run of the profiler (``set_state('run')`` or ``resume()`` up to ``set_state('stop')``,
``pause()``, ``dump()`` or ``dumps()``) is one ``torch.profiler.profile`` session; its events
are collected when it ends, so ``pause()`` really excludes the work done while paused.
"""
import atexit
import json
import os
import threading
import time

from . import _fileio
from .base import MXNetError, MXNetValueError

__all__ = ["set_config", "profiler_set_config", "set_state", "profiler_set_state", "dump",
           "dump_profile", "dumps", "pause", "resume", "set_kvstore_handle",
           "Domain", "Task", "Frame", "Event", "Counter", "Marker"]

# name -> (kind, default, help): MXNet 1.9.1's set_config parameters and defaults.
_PARAMS = (
    ("profile_all", "boolean", False, "Record every kind of event."),
    ("profile_symbolic", "boolean", True, "Record operators run by hybridized blocks."),
    ("profile_imperative", "boolean", True, "Record operators run eagerly."),
    ("profile_memory", "boolean", True, "Record memory allocations."),
    ("profile_api", "boolean", True, "Accepted; neogluon has no C API to record."),
    ("filename", "string", "profile.json", "Where dump() writes the Chrome trace."),
    ("continuous_dump", "boolean", True, "Accepted; the trace is written by dump() and at exit."),
    ("dump_period", "float", 1.0, "Accepted with continuous_dump; seconds between dumps."),
    ("aggregate_stats", "boolean", False, "Keep per-operator statistics for dumps()."),
    ("profile_process", "{'server', 'worker'}", "worker",
     "'worker' profiles this process; 'server' is accepted and does nothing."),
)
_PARAM_NAMES = tuple(p[0] for p in _PARAMS)
_SORT_KEYS = ("total", "avg", "min", "max", "count")
_MARKER_SCOPES = {"global": "g", "process": "p", "thread": "t", "task": "t", "marker": "t"}

# torch trace categories -> the aggregate-stats section they are counted under
_TORCH_CATS = {"cpu_op": "operator", "kernel": "GPU kernel", "gpu_memcpy": "GPU memcpy",
               "gpu_memset": "GPU memset", "cuda_runtime": "CUDA runtime",
               "cuda_driver": "CUDA runtime", "user_annotation": "user annotation",
               "gpu_user_annotation": "user annotation"}

_lock = threading.RLock()


class _BadChoice(MXNetValueError, KeyError):
    """A bad state / profile_process: MXNet raises KeyError there, so this is one too."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


class _BadStatsArg(MXNetValueError, AssertionError):
    """A bad dumps() argument: MXNet asserts there, so this is an AssertionError too."""


class _State:
    def __init__(self):
        self.config = {name: default for name, _, default, _ in _PARAMS}
        self.running = False       # set_state('run') and not stopped
        self.paused = False
        self.session = None        # the live torch.profiler.profile
        self.events = []           # trace events collected so far (absolute epoch microseconds)
        self.metadata = {}         # (pid, tid, name) -> 'M' event, once each
        self.time_stats = {}       # section -> name -> [count, total, min, max] (ms)
        self.mem_stats = {}        # device -> [count, min, max, sum] (kB)
        self.dirty = False         # events not yet written by dump()


_st = _State()


def _help_text():
    lines = ["----------------"]
    for name, kind, default, doc in _PARAMS:
        if kind == "boolean":
            shown = str(int(default))
        elif kind == "float":
            shown = f"{default:g}"
        else:
            shown = repr(default)
        lines.append(f"{name} : {kind}, optional, default={shown}")
        lines.append(f"    {doc}")
    return "\n".join(lines)


def _parse_bool(name, value):
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true"):
        return True
    if text in ("0", "false"):
        return False
    raise MXNetError(f"Invalid Parameter format for {name} expect boolean but value='{value}'")


def _check_process(profile_process):
    if profile_process not in ("worker", "server"):
        raise _BadChoice(f"profile_process={profile_process!r} is not valid: "
                              "use 'worker' or 'server'")
    return profile_process


def _now_us():
    return time.time_ns() / 1000.0


# ----------------------------------------------------------------------------- torch sessions
def _start_session():
    import torch
    from torch.profiler import profile, ProfilerActivity
    cfg = _st.config
    activities = [ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(ProfilerActivity.CUDA)
    prof = profile(activities=activities, profile_memory=bool(cfg["profile_memory"]),
                   record_shapes=False, with_stack=False)
    prof.start()
    _st.session = prof


def _ops_wanted():
    cfg = _st.config
    return cfg["profile_all"] or cfg["profile_imperative"] or cfg["profile_symbolic"]


def _end_session():
    """Stop the live torch session (if any) and fold its events into the collected ones."""
    prof, _st.session = _st.session, None
    if prof is None:
        return
    prof.stop()
    import tempfile
    fd, tmp = tempfile.mkstemp(suffix=".json", prefix="neogluon-prof-")
    os.close(fd)
    try:
        prof.export_chrome_trace(tmp)
        with open(tmp) as f:
            trace = json.load(f)
    finally:
        try:
            os.remove(tmp)
        except OSError:
            pass
    base = trace.get("baseTimeNanoseconds", 0) / 1000.0
    want_ops = _ops_wanted()
    want_mem = _st.config["profile_all"] or _st.config["profile_memory"]
    for ev in trace.get("traceEvents", []):
        if ev.get("cat") == "Trace" or ev.get("pid") == "Spans":   # torch's own bookkeeping
            continue
        if "ts" in ev:
            ev = dict(ev)
            ev["ts"] = round(float(ev["ts"]) + base, 3)
        if ev.get("ph") == "M":
            key = (ev.get("pid"), ev.get("tid"), ev.get("name"))
            _st.metadata.setdefault(key, ev)
            continue
        if ev.get("name") == "[memory]":
            if not want_mem:
                continue
        elif not want_ops:
            continue
        _st.events.append(ev)
        _st.dirty = True
        if _st.config["aggregate_stats"]:
            _aggregate_torch(ev)


def _aggregate_torch(ev):
    if ev.get("ph") == "X" and "dur" in ev:
        section = _TORCH_CATS.get(ev.get("cat"))
        if section is not None:
            _add_time(section, ev.get("name", "?"), float(ev["dur"]) / 1000.0)
    elif ev.get("name") == "[memory]":
        args = ev.get("args", {})
        total = args.get("Total Allocated")
        if total is None:
            return
        dtype = args.get("Device Type", 0)
        dtype = {0: "cpu", 1: "gpu"}.get(dtype, str(dtype).lower())
        dev = f"Memory: {dtype}/{max(0, int(args.get('Device Id', 0) or 0))}"
        kb = float(total) / 1000.0
        s = _st.mem_stats.setdefault(dev, [0, kb, kb, 0.0])
        s[0] += 1
        s[1] = min(s[1], kb)
        s[2] = max(s[2], kb)
        s[3] += kb


def _add_time(section, name, ms):
    s = _st.time_stats.setdefault(section, {}).setdefault(name, [0, 0.0, ms, ms])
    s[0] += 1
    s[1] += ms
    s[2] = min(s[2], ms)
    s[3] = max(s[3], ms)


def _recording():
    return _st.running and not _st.paused


def _emit(ev, section=None, dur_ms=None):
    """Add one of this module's own events (Task, Frame, Event, Counter, Marker)."""
    with _lock:
        if not _recording():
            return
        _st.events.append(ev)
        _st.dirty = True
        if section is not None and _st.config["aggregate_stats"]:
            _add_time(section, ev["name"], dur_ms)


# ----------------------------------------------------------------------------- MXNet op names
# MXNet records each operator it runs under the operator's own name ('sqrt', '_plus_scalar',
# '_zeros'), and the work of a custom operator under 'Custom Operator' ('MyOp::pure_python',
# '_backward_MyOp::pure_python', 'MyOp::_zeros' for an operator it calls). While the profiler
# runs, mx.nd's operator functions and NDArray's arithmetic are wrapped so that each outermost
# call is one such event; the wrappers are taken out again when it stops, so they cost nothing
# otherwise.
_op_tls = threading.local()     # .depth: inside a recorded call; .custom: the custom op's name
_installed = []                 # (owner, attribute, original) of the wrappers put in
# Python functions of mx.nd that run no operator of their own in MXNet.
_NOT_OPS = frozenset({"array", "empty", "load", "save", "load_frombuffer", "waitall",
                      "from_dlpack", "from_numpy", "to_dlpack_for_read", "to_dlpack_for_write",
                      "Custom"})
# mx.nd functions whose operator MXNet names differently.
_OP_NAMES = {"zeros": "_zeros", "ones": "_ones", "full": "_full", "arange": "_arange",
             "eye": "_eye", "linspace": "_linspace"}
# submodule -> prefix of its operators' names
_SUBMODULES = {"contrib": "_contrib_", "linalg": "_linalg_", "random": "_random_",
               "image": "_image_"}
# NDArray method -> (name with an NDArray operand, name with a scalar operand)
_METHOD_NAMES = {
    "__add__": ("broadcast_add", "_plus_scalar"), "__radd__": ("broadcast_add", "_plus_scalar"),
    "__iadd__": ("broadcast_add", "_plus_scalar"),
    "__sub__": ("broadcast_sub", "_minus_scalar"), "__rsub__": ("broadcast_sub", "_rminus_scalar"),
    "__isub__": ("broadcast_sub", "_minus_scalar"),
    "__mul__": ("broadcast_mul", "_mul_scalar"), "__rmul__": ("broadcast_mul", "_mul_scalar"),
    "__imul__": ("broadcast_mul", "_mul_scalar"),
    "__truediv__": ("broadcast_div", "_div_scalar"),
    "__rtruediv__": ("broadcast_div", "_rdiv_scalar"),
    "__itruediv__": ("broadcast_div", "_div_scalar"),
    "__mod__": ("broadcast_mod", "_mod_scalar"), "__rmod__": ("broadcast_mod", "_rmod_scalar"),
    "__pow__": ("broadcast_power", "_power_scalar"),
    "__rpow__": ("broadcast_power", "_rpower_scalar"),
    "__neg__": ("negative", "negative"),
    "__eq__": ("broadcast_equal", "_equal_scalar"),
    "__ne__": ("broadcast_not_equal", "_not_equal_scalar"),
    "__gt__": ("broadcast_greater", "_greater_scalar"),
    "__ge__": ("broadcast_greater_equal", "_greater_equal_scalar"),
    "__lt__": ("broadcast_lesser", "_lesser_scalar"),
    "__le__": ("broadcast_lesser_equal", "_lesser_equal_scalar"),
}


def _record_op(name, t0_us, t1_us, section=None):
    prefix = getattr(_op_tls, "custom", None)
    if section is None:
        section = "operator" if prefix is None else "Custom Operator"
        if prefix is not None:
            name = f"{prefix}::{name}"
    _emit({"name": name, "cat": section, "ph": "X", "ts": round(t0_us, 3),
           "dur": round(t1_us - t0_us, 3), "pid": os.getpid(),
           "tid": threading.get_native_id()}, section=section, dur_ms=(t1_us - t0_us) / 1000.0)


def _wrap_op(fn, name_of):
    import functools

    @functools.wraps(fn)
    def profiled(*args, **kwargs):
        if getattr(_op_tls, "depth", 0) or not (_st.running and not _st.paused):
            return fn(*args, **kwargs)
        _op_tls.depth = 1
        t0 = _now_us()
        try:
            return fn(*args, **kwargs)
        finally:
            _op_tls.depth = 0
            _record_op(name_of(args), t0, _now_us())
    profiled.__wrapped_op__ = fn
    return profiled


def _install_op_names():
    """Put the MXNet-named wrappers in (once; while the profiler runs)."""
    if _installed or not _ops_wanted():
        return
    import types
    from . import ndarray as nd
    from .ndarray.ndarray import NDArray

    def wrap_module(mod, prefix):
        for attr, fn in list(vars(mod).items()):
            if (attr.startswith("_") or attr in _NOT_OPS or not isinstance(fn, types.FunctionType)
                    or not getattr(fn, "__module__", "").startswith("neogluon.ndarray")
                    or hasattr(fn, "__wrapped_op__")):
                continue
            op = _OP_NAMES.get(attr, attr) if not prefix else prefix + attr
            setattr(mod, attr, _wrap_op(fn, lambda args, op=op: op))
            _installed.append((mod, attr, fn))

    wrap_module(nd, "")
    for sub, prefix in _SUBMODULES.items():
        mod = getattr(nd, sub, None)
        if isinstance(mod, types.ModuleType):
            wrap_module(mod, prefix)
    for meth, (arr_name, scalar_name) in _METHOD_NAMES.items():
        fn = NDArray.__dict__.get(meth)
        if fn is None or hasattr(fn, "__wrapped_op__"):
            continue

        def name_of(args, arr_name=arr_name, scalar_name=scalar_name):
            other = args[1] if len(args) > 1 else None
            return arr_name if isinstance(other, NDArray) else scalar_name
        setattr(NDArray, meth, _wrap_op(fn, name_of))
        _installed.append((NDArray, meth, fn))


def _uninstall_op_names():
    while _installed:
        owner, attr, fn = _installed.pop()
        setattr(owner, attr, fn)


class _CustomOpScope:
    """The run of a custom operator's forward (or backward): one 'Custom Operator' event
    '<op_type>::pure_python' ('_backward_<op_type>::pure_python'), and the operators it calls
    recorded as '<op_type>::<operator>' ('_backward_<op_type>::<operator>')."""
    __slots__ = ("op_type", "backward", "saved", "t0")

    def __init__(self, op_type, backward=False):
        self.op_type, self.backward = op_type, backward
        self.saved = self.t0 = None

    def __enter__(self):
        if _st.running and not _st.paused:
            self.saved = (getattr(_op_tls, "depth", 0), getattr(_op_tls, "custom", None))
            _op_tls.depth = 0
            _op_tls.custom = ("_backward_" if self.backward else "") + self.op_type
            self.t0 = _now_us()
        return self

    def __exit__(self, *exc):
        if self.saved is None:
            return False
        _op_tls.depth, _op_tls.custom = self.saved
        name = ("_backward_" if self.backward else "") + f"{self.op_type}::pure_python"
        _record_op(name, self.t0, _now_us(), section="Custom Operator")
        return False


# ----------------------------------------------------------------------------- public functions
def set_config(**kwargs):
    """Set up the configuration of the profiler (keyword arguments only).

    Parameters (MXNet 1.9.1's): ``filename``, ``profile_all``, ``profile_symbolic``,
    ``profile_imperative``, ``profile_memory``, ``profile_api``, ``continuous_dump``,
    ``dump_period``, ``aggregate_stats``, ``profile_process`` ('worker' or 'server').
    """
    new = {}
    for name, value in kwargs.items():
        if name not in _PARAM_NAMES:
            raise MXNetError(f"Cannot find argument '{name}', Possible Arguments:\n"
                             + _help_text())
        kind = dict((p[0], p[1]) for p in _PARAMS)[name]
        if kind == "boolean":
            value = _parse_bool(name, value)
        elif kind == "float":
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise MXNetError(f"Invalid Parameter format for {name} expect float but "
                                 f"value='{value}'") from None
            if value <= 0:
                raise MXNetValueError(f"dump_period must be positive, got {value}")
        elif name == "filename":
            if not isinstance(value, (str, os.PathLike)) or not os.fspath(value):
                raise MXNetValueError(f"filename must be a non-empty path, got {value!r}")
            value = os.fspath(value)
        else:
            value = _check_process(value)
        new[name] = value
    with _lock:
        if _st.session is not None:
            # running: what was recorded so far keeps the old settings, the rest gets the new
            _end_session()
            _st.config.update(new)
            _start_session()
        else:
            _st.config.update(new)


def profiler_set_config(mode="symbolic", filename="profile.json"):
    """Set up the configuration of the profiler (deprecated; use :func:`set_config`).

    ``mode`` is 'symbolic' or 'all'.
    """
    if mode not in ("symbolic", "all"):
        raise MXNetValueError(f"profiler_set_config: mode={mode!r} is not valid: "
                              "use 'symbolic' or 'all'")
    set_config(profile_symbolic=True, profile_imperative=(mode == "all"),
               profile_memory=(mode == "all"), profile_api=(mode == "all"),
               filename=filename)


def set_state(state="stop", profile_process="worker"):
    """Set the profiler state to 'run' or 'stop'.

    ``profile_process='server'`` is accepted and does nothing: neogluon has no kvstore
    server processes to profile.
    """
    if state not in ("run", "stop"):
        raise _BadChoice(f"set_state: state={state!r} is not valid: use 'run' or 'stop'")
    if _check_process(profile_process) == "server":
        return
    with _lock:
        if state == "run":
            if _st.running:
                if _st.paused:
                    _st.paused = False
                    _start_session()
                return
            _st.running, _st.paused = True, False
            _start_session()
            _install_op_names()
        else:
            if not _st.running:
                return
            _end_session()
            _st.running, _st.paused = False, False
            _uninstall_op_names()


def profiler_set_state(state="stop"):
    """Set the profiler state to 'run' or 'stop' (deprecated; use :func:`set_state`)."""
    set_state(state)


def pause(profile_process="worker"):
    """Pause profiling: work done until :func:`resume` is left out of the trace and stats."""
    if _check_process(profile_process) == "server":
        return
    with _lock:
        if _st.running and not _st.paused:
            _end_session()
            _st.paused = True


def resume(profile_process="worker"):
    """Resume paused profiling."""
    if _check_process(profile_process) == "server":
        return
    with _lock:
        if _st.running and _st.paused:
            _st.paused = False
            _start_session()


def _flush():
    """Collect the live session's events without a visible gap in the profiler's state."""
    if _st.session is not None:
        _end_session()
        _start_session()


def dump(finished=True, profile_process="worker"):
    """Write the trace collected so far to the configured ``filename`` as Chrome trace JSON.

    The file is replaced atomically; open it in Perfetto (ui.perfetto.dev) or
    chrome://tracing. With ``finished=True`` (default) the profiler is stopped and the events
    written are dropped; with ``finished=False`` it keeps running and later dumps rewrite the
    file with everything collected since.
    """
    if _check_process(profile_process) == "server":
        return
    with _lock:
        if finished:
            if _st.session is not None:
                _end_session()
            _st.running, _st.paused = False, False
            _uninstall_op_names()
        else:
            _flush()
        events = list(_st.metadata.values()) + sorted(
            _st.events, key=lambda e: (e.get("ts", 0.0), e.get("ph") != "B"))
        _write_trace(_st.config["filename"], events)
        _st.dirty = False
        if finished:
            _st.events = []
            _st.metadata = {}


def _write_trace(filename, events):
    path = os.path.abspath(filename)
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        raise MXNetError(f"profiler.dump: cannot write {filename!r}: directory {directory!r} "
                         "does not exist")
    def write(tmp):
        # json.dumps encodes in C in one go; json.dump streams through the Python encoder,
        # several times slower on the 100k-event traces of a continuous dump
        text = json.dumps({"traceEvents": events, "displayTimeUnit": "ms",
                           "otherData": {"producer": "neogluon.profiler (torch.profiler)"}})
        with open(tmp, "w") as f:
            f.write(text)
    try:
        _fileio.atomic_write(path, write, fsync=True)
    except OSError as err:
        raise MXNetError(f"profiler.dump: cannot write {filename!r}: {err}") from None


def dump_profile():
    """Dump the profile and stop the profiler (deprecated; use :func:`dump`)."""
    dump(True)


def dumps(reset=False, format="table", sort_by="total", ascending=False):
    """Return the aggregate stats (``set_config(aggregate_stats=True)``) as a printable string.

    ``format`` is 'table' or 'json'; ``sort_by`` is 'total', 'avg', 'min', 'max' or 'count'
    (within each section); ``reset=True`` clears the stats after printing them. Without
    ``aggregate_stats`` nothing is kept and the result is '' (as in MXNet).
    """
    if format not in ("table", "json"):
        raise _BadStatsArg(f"Invalid value provided for format: {format}. "
                              "Support: 'table', 'json'")
    if sort_by not in _SORT_KEYS:
        raise _BadStatsArg(f"Invalid value provided for sort_by: {sort_by}. "
                              "Support: 'total', 'avg', 'min', 'max', 'count'")
    if ascending not in (False, True) or not isinstance(ascending, (bool, int)):
        raise _BadStatsArg(f"Invalid value provided for ascending: {ascending}. "
                              "Support: False, True")
    with _lock:
        if not _st.config["aggregate_stats"] and not _st.time_stats and not _st.mem_stats:
            return ""
        if _st.running and not _st.paused:
            _flush()
        time_stats = {k: dict(v) for k, v in _st.time_stats.items()}
        mem_stats = dict(_st.mem_stats)
        if reset:
            _st.time_stats, _st.mem_stats = {}, {}
    col = {"count": 0, "total": 1, "min": 2, "max": 3}

    def key(item):
        s = item[1]
        return s[1] / s[0] if sort_by == "avg" else s[col[sort_by]]

    ordered = {sec: sorted(rows.items(), key=key, reverse=not ascending)
               for sec, rows in sorted(time_stats.items())}
    mcol = {"count": 0, "min": 1, "max": 2}

    def mkey(item):   # memory rows have no total: they are sorted by average use then
        s = item[1]
        return s[mcol[sort_by]] if sort_by in mcol else s[3] / s[0]

    mem_rows = sorted(mem_stats.items(), key=mkey, reverse=not ascending)
    if format == "json":
        out = {"Time": {sec: {name: {"Count": s[0], "Total": round(s[1], 4),
                                     "Min": round(s[2], 4), "Max": round(s[3], 4),
                                     "Avg": round(s[1] / s[0], 4)} for name, s in rows}
                        for sec, rows in ordered.items()}}
        out["Memory"] = {"Device Storage": {
            dev: {"Count": s[0], "Min": round(s[1], 4), "Max": round(s[2], 4),
                  "Avg": round(s[3] / s[0], 4)} for dev, s in mem_rows}} if mem_rows else {}
        out["Unit"] = {"Time": "ms", "Memory": "kB"}
        return json.dumps(out, indent=4)
    lines = ["", "Profile Statistics:", "\tNote the difference in units for different entries."]
    if mem_stats:
        lines += ["Device Storage", "=================",
                  f"{'Name':<30}{'Total Count':>11}{'Min Use  (kB)':>17}{'Max Use  (kB)':>17}"
                  f"{'Avg Use  (kB)':>17}",
                  f"{'----':<30}{'-----------':>11}{'-------------':>17}{'-------------':>17}"
                  f"{'-------------':>17}"]
        for dev, s in mem_rows:
            lines.append(f"{dev:<30}{s[0]:>11d}{s[1]:>17.4f}{s[2]:>17.4f}{s[3] / s[0]:>17.4f}")
        lines.append("")
    for sec, rows in ordered.items():
        lines += [sec, "=================",
                  f"{'Name':<30}{'Total Count':>11}{'Time (ms)':>17}{'Min Time (ms)':>17}"
                  f"{'Max Time (ms)':>17}{'Avg Time (ms)':>17}",
                  f"{'----':<30}{'-----------':>11}{'---------':>17}{'-------------':>17}"
                  f"{'-------------':>17}{'-------------':>17}"]
        for name, s in rows:
            lines.append(f"{name:<30}{s[0]:>11d}{s[1]:>17.4f}{s[2]:>17.4f}{s[3]:>17.4f}"
                         f"{s[1] / s[0]:>17.4f}")
        lines.append("")
    return "\n".join(lines) + "\n"


def set_kvstore_handle(handle):
    """Accepted for compatibility; neogluon has no kvstore server processes to profile."""
    return None


# ----------------------------------------------------------------------------- scope objects
def _check_name(kind, name):
    if not isinstance(name, str) or not name:
        raise MXNetValueError(f"{kind} name must be a non-empty string, got {name!r}")
    return name


def _check_domain(kind, domain):
    if not isinstance(domain, Domain):
        raise MXNetValueError(f"{kind}: domain must be a profiler.Domain, got {domain!r}")
    return domain


class Domain:
    """Profiling domain: groups tasks, counters, frames and markers (the trace category)."""

    def __init__(self, name):
        self.name = _check_name("Domain", name)

    def __str__(self):
        return self.name

    def new_task(self, name):
        """Create a new :class:`Task` owned by this domain."""
        return Task(self, name)

    def new_frame(self, name):
        """Create a new :class:`Frame` owned by this domain."""
        return Frame(self, name)

    def new_counter(self, name, value=None):
        """Create a new :class:`Counter` owned by this domain."""
        return Counter(self, name, value)

    def new_marker(self, name):
        """Create a new :class:`Marker` owned by this domain."""
        return Marker(self, name)


class _Scope:
    """A timed range: ``start()`` ... ``stop()`` becomes one complete ('X') trace event.

    Also usable as a context manager (a neogluon addition). ``stop()`` without ``start()``
    records nothing; ``start()`` twice restarts the range.
    """
    _kind = "scope"

    def __init__(self, name):
        self.name = _check_name(self._kind, name)
        self._t0 = None

    def _category(self):
        raise NotImplementedError

    def start(self):
        """Start timing scope for this object."""
        self._t0 = _now_us()

    def stop(self):
        """Stop timing scope for this object."""
        t0, self._t0 = self._t0, None
        if t0 is None:
            return
        t1 = _now_us()
        cat = self._category()
        _emit({"name": self.name, "cat": cat, "ph": "X", "ts": round(t0, 3),
               "dur": round(t1 - t0, 3), "pid": os.getpid(),
               "tid": threading.get_native_id(), "args": {"kind": self._kind}},
              section=cat, dur_ms=(t1 - t0) / 1000.0)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def __str__(self):
        return self.name


class Task(_Scope):
    """A logical unit of work of one thread; passes through it are accumulated together."""
    _kind = "Task"

    def __init__(self, domain, name):
        self.domain = _check_domain("Task", domain)
        super().__init__(name)

    def _category(self):
        return self.domain.name


class Frame(_Scope):
    """A discretely numbered period between a start and a stop (e.g. one training step)."""
    _kind = "Frame"

    def __init__(self, domain, name):
        self.domain = _check_domain("Frame", domain)
        super().__init__(name)

    def _category(self):
        return f"{self.domain.name},frame"


class Event(_Scope):
    """A per-thread demarcated region; recorded only while the profiler runs, not paused."""
    _kind = "Event"

    def _category(self):
        return "event"


class Counter:
    """A value tracked over time; every change is a counter ('C') trace event."""

    def __init__(self, domain, name, value=None):
        self.domain = _check_domain("Counter", domain)
        self.name = _check_name("Counter", name)
        self._value = 0
        if value is not None:
            self.set_value(value)

    @staticmethod
    def _int(what, value):
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise MXNetValueError(f"Counter {what} must be an integer, got {value!r}")
        try:
            return int(value)
        except (TypeError, ValueError):
            raise MXNetValueError(f"Counter {what} must be an integer, got {value!r}") from None

    def _record(self):
        _emit({"name": self.name, "cat": self.domain.name, "ph": "C", "ts": round(_now_us(), 3),
               "pid": os.getpid(), "tid": threading.get_native_id(),
               "args": {self.name: self._value}})

    def set_value(self, value):
        """Set counter value."""
        self._value = self._int("value", value)
        self._record()

    def increment(self, delta=1):
        """Increment counter value by ``delta``."""
        self._value += self._int("delta", delta)
        self._record()

    def decrement(self, delta=1):
        """Decrement counter value by ``delta``."""
        self._value -= self._int("delta", delta)
        self._record()

    def __iadd__(self, delta):
        self.increment(delta)
        return self

    def __isub__(self, delta):
        self.decrement(delta)
        return self

    @property
    def value(self):
        """The counter's current value (a neogluon addition)."""
        return self._value

    def __str__(self):
        return self.name


class Marker:
    """Marks an instant in time (an instant ('i') trace event)."""

    def __init__(self, domain, name):
        self.domain = _check_domain("Marker", domain)
        self.name = _check_name("Marker", name)

    def mark(self, scope="process"):
        """Set the marker; ``scope`` is 'global', 'process', 'thread', 'task' or 'marker'."""
        if scope not in _MARKER_SCOPES:
            raise MXNetValueError(f"Invalid Input: '{scope}', valid values are: "
                                  "{'global', 'marker', 'process', 'task', 'thread'}")
        _emit({"name": self.name, "cat": f"{self.domain.name},instant_marker", "ph": "i",
               "s": _MARKER_SCOPES[scope], "ts": round(_now_us(), 3), "pid": os.getpid(),
               "tid": threading.get_native_id(), "args": {"scope": scope}})

    def __str__(self):
        return self.name


def _reset():
    """Stop any session and drop all state and configuration (for tests)."""
    global _st
    with _lock:
        if _st.session is not None:
            try:
                _st.session.stop()
            except Exception:  # noqa: BLE001 - a broken session must not block a reset
                pass
        _st = _State()
        _uninstall_op_names()


@atexit.register
def _dump_at_exit():
    # MXNet writes what the profiler collected when the process ends, dump() or not.
    try:
        with _lock:
            if _st.session is not None or _st.dirty:
                dump(True)
    except Exception:  # noqa: BLE001 - never fail interpreter shutdown
        pass


# Names MXNet 1.9.1's module of the same path exposes (programs import them from here).
from .base import py_str  # noqa: E402,F401
