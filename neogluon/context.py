"""Devices: ``mx.cpu(i)``, ``mx.gpu(i)`` and the current-context stack."""
from __future__ import annotations

import threading

import torch

from .base import MXNetError

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus", "gpu_memory_info"]


class _UnknownDevice(MXNetError, KeyError):
    """MXNet raises KeyError for an unknown device type; this is also an MXNetError."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


class _ContextMeta(type):
    # MXNet's ``Context.default_ctx``: the current default context, readable and settable on
    # the class (scripts assign it to change the default for the thread).
    @property
    def default_ctx(cls):
        return current_context()

    @default_ctx.setter
    def default_ctx(cls, ctx):
        if not isinstance(ctx, Context):
            raise TypeError(f"default_ctx must be a Context, got {type(ctx).__name__}")
        Context._default.value = ctx


class _InstanceDefaultCtx:
    def __get__(self, obj, owner=None):
        return current_context()


class Context(metaclass=_ContextMeta):
    """A device an array lives on.

    ``cpu(i)`` for every ``i`` is a distinct context that lives on torch's CPU device, so a
    Parameter initialised on ``[cpu(0), cpu(1)]`` holds two independent copies, as in MXNet.
    ``gpu(i)`` maps to ``cuda:i``.
    """

    __slots__ = ("device_typeid", "device_id", "_torch_device", "_old_ctx")
    devtype2str = {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu_shared"}
    devstr2type = {"cpu": 1, "gpu": 2, "cpu_pinned": 3, "cpu_shared": 5}
    _default = threading.local()
    default_ctx = _InstanceDefaultCtx()

    def __init__(self, device_type, device_id: int = 0):
        if isinstance(device_type, Context):
            self.device_typeid = device_type.device_typeid
            self.device_id = device_type.device_id
        else:
            if device_type not in Context.devstr2type:
                raise _UnknownDevice(f"unknown device type {device_type!r}; expected one of "
                                 f"{sorted(Context.devstr2type)}")
            self.device_typeid = Context.devstr2type[device_type]
            self.device_id = int(device_id)
        self._torch_device = None
        self._old_ctx = None

    @property
    def device_type(self) -> str:
        return Context.devtype2str[self.device_typeid]

    @property
    def torch_device(self) -> torch.device:
        """The torch device this context's arrays live on (checked on first use)."""
        dev = self._torch_device
        if dev is None:
            if self.device_typeid == 2:
                n = num_gpus()
                if self.device_id >= n:
                    raise MXNetError(
                        f"{self} is not available: this machine has {n} CUDA GPU(s)"
                        + ("" if torch.cuda.is_available() else
                           " (torch was built without CUDA or no driver was found)"))
                dev = torch.device("cuda", self.device_id)
            else:
                dev = torch.device("cpu")
            self._torch_device = dev
        return dev

    def __hash__(self):
        return hash((self.device_typeid, self.device_id))

    def __eq__(self, other):
        return (isinstance(other, Context) and self.device_typeid == other.device_typeid
                and self.device_id == other.device_id)

    def __str__(self):
        return f"{self.device_type}({self.device_id})"

    __repr__ = __str__

    def __enter__(self):
        # A stack, not one slot: the same Context object is often entered again while
        # already active (arrays share their Context; nested blocks enter it again).
        stack = self._old_ctx
        if stack is None:
            stack = self._old_ctx = []
        stack.append(current_context())
        Context._default.value = self
        return self

    def __exit__(self, *exc):
        Context._default.value = self._old_ctx.pop()

    def empty_cache(self):
        """Release cached GPU memory (no-op on CPU)."""
        if self.device_typeid == 2 and torch.cuda.is_available():
            torch.cuda.empty_cache()


def cpu(device_id: int = 0) -> Context:
    """The CPU context ``cpu(device_id)``."""
    return Context("cpu", device_id)


def cpu_pinned(device_id: int = 0) -> Context:
    """A CPU context for page-locked memory (stored as ordinary CPU memory here)."""
    return Context("cpu_pinned", device_id)


def gpu(device_id: int = 0) -> Context:
    """The GPU context ``gpu(device_id)``, which maps to torch's ``cuda:device_id``."""
    return Context("gpu", device_id)


def num_gpus() -> int:
    """Number of CUDA GPUs torch can see."""
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def gpu_memory_info(device_id: int = 0):
    """(free, total) bytes of GPU ``device_id``."""
    gpu(device_id).torch_device  # raises a clear error when there is no such GPU
    return torch.cuda.mem_get_info(device_id)


def current_context() -> Context:
    """The context new arrays go to by default (``cpu(0)`` unless inside ``with ctx:``)."""
    ctx = getattr(Context._default, "value", None)
    if ctx is None:
        ctx = Context._default.value = Context("cpu", 0)
    return ctx


_CPU_DEVICE = torch.device("cpu")


def context_of_device(device: torch.device) -> Context:
    """The Context an array on a torch device is reported as."""
    if device.type == "cuda":
        return Context("gpu", device.index or 0)
    return Context("cpu", 0)


# Names MXNet 1.9.1's module of the same path exposes (programs import them from here).
from .base import classproperty, with_metaclass  # noqa: E402,F401
