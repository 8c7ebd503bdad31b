"""``mx.monitor`` (also ``mx.mon``): statistics of an executor's tensors, for debugging.

A :class:`Monitor` installed on one or more executors collects, every ``interval`` batches,
one statistic per operator output (and, with ``monitor_all``, per operator input) as the
executor runs, then one per argument and auxiliary state when the batch ends::

    mon = mx.mon.Monitor(10, pattern='.*weight|.*output')
    mon.install(executor)            # or module.install_monitor(mon)
    for batch in data:
        mon.tic()
        executor.forward(is_train=True, data=batch.data[0])
        executor.backward()
        mon.toc_print()              # logs 'Batch:      10 fc1_output   0.1234\\t' lines
"""
from __future__ import annotations

import logging
import math
import numbers
import re

from . import autograd
from . import ndarray
from .base import MXNetError
from .ndarray.ndarray import NDArray

__all__ = ["Monitor"]


def _norm_per_element(x):
    """Default statistic: ``norm(x) / sqrt(size(x))``, the root mean square of ``x``."""
    return ndarray.norm(x) / math.sqrt(x.size)


class Monitor:
    """Collect a statistic of the tensors an executor reads and writes.

    Parameters
    ----------
    interval : int
        Collect at one batch in ``interval`` (the batches where :meth:`tic` is called for
        the 1st, ``interval+1``-th, ... time).
    stat_func : callable, optional
        ``stat_func(NDArray) -> NDArray`` (or a list of NDArrays): the statistic to record.
        Defaults to ``norm(x) / sqrt(x.size)``.
    pattern : str, default '.*'
        Regular expression matched (with :func:`re.match`, so from the start) against the
        tensor names: ``'<node>_output'`` for operator outputs, ``'<node>_<input>'`` for
        operator inputs, and the argument and auxiliary state names. For example
        ``'.*weight|.*output'`` keeps weights and outputs.
    sort : bool, default False
        Sort the results by tensor name (otherwise: execution order, then arguments, then
        auxiliary states).
    monitor_all : bool, default False
        Also record every operator's inputs, not only its outputs.
    """

    def __init__(self, interval, stat_func=None, pattern=".*", sort=False, monitor_all=False):
        if isinstance(interval, bool) or not isinstance(interval, numbers.Integral) \
                or interval <= 0:
            raise MXNetError(f"Monitor: interval must be a positive integer, got {interval!r}")
        if stat_func is None:
            stat_func = _norm_per_element
        elif not callable(stat_func):
            raise MXNetError(f"Monitor: stat_func must be callable, got "
                             f"{type(stat_func).__name__}")
        try:
            self.re_prog = re.compile(pattern)
        except (re.error, TypeError) as err:
            raise MXNetError(f"Monitor: pattern {pattern!r} is not a regular expression: "
                             f"{err}") from None
        self.stat_func = stat_func
        self.interval = int(interval)
        self.sort = sort
        self.monitor_all = monitor_all
        self.activated = False     # collecting for the current batch
        self.queue = []            # (step, tensor name, statistic) of the current batch
        self.step = 0              # tic() calls so far
        self.exes = []
        # MXNet exposes the executor callback under this name; code that installs it by
        # hand (exe.set_monitor_callback(mon.stat_helper)) keeps working.
        self.stat_helper = self._record_tensor

    def _statistic(self, array):
        # The executor may hand over arrays that autograd is recording; the statistic must
        # not become part of the graph that backward walks (nor keep it alive).
        with autograd.pause():
            return self.stat_func(array)

    def _record_tensor(self, name, array):
        """The executor's monitor callback: ``callback(name, array)`` for each tensor."""
        if not self.activated:
            return
        if isinstance(name, bytes):
            name = name.decode("utf-8")
        if self.re_prog.match(name):
            self.queue.append((self.step, name, self._statistic(array)))

    def install(self, exe):
        """Install the monitor on an executor (several executors may share one monitor).

        Parameters
        ----------
        exe : Executor
            A bound executor (``Symbol.bind`` / ``simple_bind``), or anything with
            ``set_monitor_callback(callback, monitor_all)``, ``arg_dict`` and ``aux_dict``.
            It replaces a callback installed on ``exe`` before.
        """
        if not callable(getattr(exe, "set_monitor_callback", None)):
            raise MXNetError(f"Monitor.install: expected an Executor (with "
                             f"set_monitor_callback), got {type(exe).__name__}")
        exe.set_monitor_callback(self.stat_helper, self.monitor_all)
        self.exes.append(exe)

    def tic(self):
        """Start a batch: call it before ``forward``. On every ``interval``-th call it clears
        the results and starts collecting."""
        if self.step % self.interval == 0:
            self.queue = []
            self.activated = True
        self.step += 1

    def _parameter_stats(self):
        for exe in self.exes:
            for group in ("arg_dict", "aux_dict"):
                arrays = getattr(exe, group, None) or {}
                for name, array in arrays.items():
                    if self.re_prog.match(name):
                        self.queue.append((self.step, name, self._statistic(array)))

    @staticmethod
    def _format(name, stat):
        values = stat if isinstance(stat, list) else [stat]
        text = ""
        for value in values:
            if not isinstance(value, NDArray):
                raise MXNetError(f"Monitor: stat_func must return an NDArray or a list of "
                                 f"NDArrays; for {name!r} it returned {type(value).__name__}")
            if value.shape == (1,):
                text += str(value.asscalar()) + "\t"
            else:
                text += str(value.asnumpy()) + "\t"
        return text

    def toc(self):
        """End the batch: call it after ``forward``/``backward``.

        Returns
        -------
        list of (int, str, str)
            ``(step, tensor name, statistic text)`` for every tensor recorded in this batch
            (empty on batches not collected). The text holds each statistic followed by a
            tab: the number for a one-element result, numpy's printout otherwise. The
            arguments and auxiliary states of the executors are added here, with their
            values after the batch.
        """
        if not self.activated:
            return []
        self._parameter_stats()
        self.activated = False
        queue, self.queue = self.queue, []
        if self.sort:
            queue.sort(key=lambda entry: entry[1])
        return [(step, name, self._format(name, stat)) for step, name, stat in queue]

    def toc_print(self):
        """End the batch and log its results (root logger, INFO), one line per tensor:
        ``Batch: <step> <name> <statistic>``."""
        for step, name, text in self.toc():
            logging.info("Batch: {:7d} {:30s} {:s}".format(step, name, text))


# Names MXNet 1.9.1's module of the same path exposes (programs import them from here).
from .base import py_str  # noqa: E402,F401
