"""Small C libraries compiled on first use and cached: one builder for all of neogluon's kernels.

The optimizer kernels, the SGLD noise kernel, the KVStore copy kernel and the max-pooling kernel
are C sources held as strings. Each is compiled once per machine with the system C compiler
(``$CC``, else ``cc``/``gcc``) into ``$NEOGLUON_CACHE_DIR`` (default ``~/.cache/neogluon``) under
a name keyed by the source, the flags, the compiler and the CPU's instruction-set flags, written
atomically (concurrent processes see a whole file or none), and loaded with ctypes. A library
that cannot be built leaves its callers on their torch code (same numbers, slower).

Shared by the kernels: ``PARALLEL_C`` (prepended to their sources: ``ng_run_parallel`` runs a
function over per-thread jobs, inline where a thread cannot start) and ``untraced_cpu``
(whether tensors may be handed to a kernel as raw pointers).
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import threading
import warnings

import torch


def cache_dir() -> str:
    return os.environ.get("NEOGLUON_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "neogluon")


def cpu_signature() -> str:
    """What compiled code may depend on: the machine and its instruction-set flags."""
    sig = platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    sig += line
                    break
    except OSError:
        pass
    return sig


def compile_c(cc, flags, out, c_path):
    """Run the compiler; returns (ok, stderr)."""
    p = subprocess.run([cc, *flags, "-o", out, c_path, "-lm"], capture_output=True,
                       text=True, timeout=300)
    return p.returncode == 0, p.stderr


def build(stem: str, source: str, flag_sets, what: str, tag: str = "") -> ctypes.CDLL:
    """Compile ``source`` with the first of ``flag_sets`` that works and load it.

    The result is cached as ``<cache>/<stem>_<key>.so``; ``tag`` tells apart builds of one
    source that the flags alone do not (test variants). Raises OSError naming ``what`` when
    no compiler is found or no flag set compiles.
    """
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise OSError(f"no C compiler found for the {what} (set $CC)")
    flag_sets = [list(f) for f in flag_sets]
    key = hashlib.sha256((source + repr(flag_sets) + tag + cpu_signature() + cc)
                         .encode()).hexdigest()[:16]
    d = cache_dir()
    os.makedirs(d, exist_ok=True)
    so = os.path.join(d, f"{stem}_{key}.so")
    if not os.path.exists(so):
        with tempfile.TemporaryDirectory() as tmp:
            c_path = os.path.join(tmp, f"{stem}.c")
            with open(c_path, "w") as f:
                f.write(source)
            out = os.path.join(tmp, f"{stem}.so")
            ok, err = False, ""
            for flags in flag_sets:
                ok, err = compile_c(cc, flags, out, c_path)
                if ok:
                    break
            if not ok:
                raise OSError(f"compiling the {what} failed: {err[-2000:]}")
            fd, tmp_so = tempfile.mkstemp(dir=d, suffix=".so.tmp")
            os.close(fd)
            shutil.copyfile(out, tmp_so)
            os.chmod(tmp_so, 0o644)
            os.replace(tmp_so, so)  # atomic
    return ctypes.CDLL(so)


# C helper for the kernels' sources (prepend it): run one function over per-thread jobs.
PARALLEL_C = r"""
#include <stddef.h>
#include <pthread.h>

/* fn(jobs) on this thread and fn(jobs + stride * t), t = 1 .. n - 1, on threads of their own
   (up to 64); a job whose thread cannot start runs here after the first. */
static void ng_run_parallel(void *(*fn)(void *), void *jobs, size_t stride, int n) {
  pthread_t th[64];
  int started = 0;
  for (int t = 1; t < n; ++t) {
    if (t >= 64 || pthread_create(&th[t], 0, fn, (char *)jobs + stride * t) != 0) break;
    started = t;
  }
  fn(jobs);
  for (int t = started + 1; t < n; ++t) fn((char *)jobs + stride * t);
  for (int t = 1; t <= started; ++t) pthread_join(th[t], 0);
}
"""


def untraced_cpu(*tensors) -> bool:
    """Whether a kernel may take these tensors' raw pointers: plain CPU ``torch.Tensor``s
    (no subclass), and nothing tracing or intercepting torch calls (TorchScript tracing,
    dispatch modes such as make_fx/FakeTensor, functorch transforms)."""
    return (all(type(t) is torch.Tensor and t.device.type == "cpu" for t in tensors)
            and not torch.jit.is_tracing() and torch._C._len_torch_dispatch_stack() == 0
            and not torch._C._are_functorch_transforms_active())


class LazyLibrary:
    """A library built by ``builder()`` at its first use, once per process (thread-safe).

    ``get()`` returns the loaded library, or None when it cannot be built here; then
    ``warning`` (if given) is issued once as a RuntimeWarning with the reason. ``enabled`` is
    the callers' on/off switch (tests, benchmarks): initially off when the environment
    variable ``switch`` is "0".
    """

    def __init__(self, builder, warning: str | None = None, switch: str | None = None):
        self._builder = builder
        self._warning = warning
        self._lib = None
        self._tried = False
        self._lock = threading.Lock()
        self.enabled = not switch or os.environ.get(switch, "1") != "0"

    def set_enabled(self, flag) -> bool:
        """Turn the library's use on or off; returns the old setting."""
        old, self.enabled = self.enabled, bool(flag)
        return old

    def get(self):
        if self._lib is not None or self._tried:
            return self._lib
        with self._lock:
            if not self._tried:
                try:
                    self._lib = self._builder()
                except (OSError, subprocess.SubprocessError) as e:
                    if self._warning:
                        warnings.warn(f"neogluon: {self._warning} ({e})", RuntimeWarning,
                                      stacklevel=3)
                    self._lib = None
                self._tried = True
        return self._lib
