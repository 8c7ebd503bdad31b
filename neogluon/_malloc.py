"""Keep freed CPU memory in the process for reuse: ``static_alloc`` for torch's CPU tensors.

MXNet's ``hybridize(static_alloc=True)`` allocates a graph's memory once and reuses it every
step. torch's CPU tensors come from the C library's ``malloc``; glibc hands large blocks
back to the operating system when they are freed (``munmap``, or trimming the heap's top), so
the next step's allocations of the same sizes fault their pages in again, each one zeroed by
the kernel. On a small convolutional net (LeNet, batch 64, one thread) that was 500-900 page
faults and 2-4 ms of system time per training step of ~12 ms; on ResNet-18 (64x64, batch 16)
1,500-2,400 faults and 7-9 ms per step.

``keep_freed_memory()`` sets glibc's ``M_MMAP_MAX`` to 0 (every block comes from the heap,
where freed blocks are reused: glibc caps ``M_MMAP_THRESHOLD`` at 32 MiB, so without it a
larger block, such as a 75 MB activation of d2l's ResNet-18 at 96x96 and batch 128, is mapped
fresh and faulted in at every allocation; glibc still maps memory when the heap cannot grow),
``M_MMAP_THRESHOLD`` to its maximum, ``M_TRIM_THRESHOLD`` high (the heap's top is not given
back) and a ``M_TOP_PAD`` margin. The process then keeps its peak CPU memory until it exits,
which is what ``static_alloc`` asks for and what a training loop gains from. It is applied by
the first ``hybridize(static_alloc=True)`` and by the first ``autograd.backward`` of CPU arrays
(training, where every step allocates the same buffers again: d2l's ResNet-18 step went from
~180,000 page faults and 0.45 s of system time of ~3.4 s to ~20,000 and 0.03 s, its peak
memory 8% higher; MXNet 1.9.1's own CPU allocator faults ~165,000 pages a step there). A
process that never trains keeps glibc's defaults. ``NEOGLUON_KEEP_MEMORY=1`` applies it at
import, ``NEOGLUON_KEEP_MEMORY=0`` never. Elsewhere than glibc it does nothing.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform
import threading

_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD, _M_MMAP_MAX = -1, -2, -3, -4
_SETTINGS = ((_M_MMAP_THRESHOLD, 32 << 20), (_M_TRIM_THRESHOLD, 1 << 30),
             (_M_TOP_PAD, 64 << 20), (_M_MMAP_MAX, 0))
_lock = threading.Lock()
_applied = None  # None: not tried; True/False: the outcome


def _mode():
    return os.environ.get("NEOGLUON_KEEP_MEMORY", "").strip()


def keep_freed_memory() -> bool:
    """Apply the settings once per process; returns whether they are in force."""
    global _applied
    if _applied is not None:
        return _applied
    with _lock:
        if _applied is None:
            _applied = False
            if _mode() != "0" and platform.libc_ver()[0] == "glibc":
                try:
                    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
                    _applied = all(libc.mallopt(k, v) == 1 for k, v in _SETTINGS)
                except (OSError, AttributeError):
                    _applied = False
    return _applied


if _mode() == "1":
    keep_freed_memory()
