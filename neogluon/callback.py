"""``mx.callback``: the epoch-end and batch-end callbacks of MXNet 1.x's ``fit`` loops.

Epoch-end callbacks (:func:`do_checkpoint`, :func:`module_checkpoint`) are called as
``callback(epoch, symbol, arg_params, aux_params)``. Batch-end callbacks (:class:`Speedometer`,
:class:`ProgressBar`, :func:`log_train_metric`, :class:`LogValidationMetricsCallback`) receive
one :class:`mx.model.BatchEndParam <neogluon.model.BatchEndParam>` (``epoch``, ``nbatch``,
``eval_metric``, ``locals``).

Every callback reports through the root logger at INFO level with the same text as MXNet 1.9.1,
so scripts that parse training logs (``Epoch[0] Batch [0-50]\\tSpeed: ... samples/sec\\t
accuracy=...``) keep working.
"""
from __future__ import annotations

import logging
import math
import numbers
import os
import time

from .base import MXNetError
from .model import save_checkpoint

__all__ = ["module_checkpoint", "do_checkpoint", "log_train_metric", "Speedometer",
           "ProgressBar", "LogValidationMetricsCallback"]


def _positive_int(value, what, owner):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise MXNetError(f"{owner}: {what} must be a positive integer, got {value!r}")
    return int(value)


def _period(period, owner):
    # MXNet treats any period below 1 as 1 (checkpoint every epoch).
    if isinstance(period, bool) or not isinstance(period, numbers.Real):
        raise MXNetError(f"{owner}: period must be a number of epochs, got {period!r}")
    return int(max(1, period))


def _batch_fields(param, owner):
    """``(epoch, nbatch, eval_metric)`` of a BatchEndParam-like object, or a clear error."""
    try:
        return param.epoch, param.nbatch, param.eval_metric
    except AttributeError:
        raise MXNetError(f"{owner} expects a BatchEndParam (epoch, nbatch, eval_metric, "
                         f"locals), got {type(param).__name__}") from None


def _name_value_args(name_value):
    """Flatten ``[(name, value), ...]`` into the ``name, value, ...`` arguments of a
    ``'\\t%s=%f' * n`` format."""
    args = []
    for name, value in name_value:
        args.extend((name, value))
    return args


def module_checkpoint(mod, prefix, period=1, save_optimizer_states=False):
    """Epoch-end callback that saves a Module with ``mod.save_checkpoint`` every ``period``
    epochs.

    Parameters
    ----------
    mod : BaseModule
        The module to save (anything with ``save_checkpoint(prefix, epoch,
        save_optimizer_states)``).
    prefix : str
        Path prefix of the files (``prefix-symbol.json``, ``prefix-%04d.params`` and, with
        optimizer states, ``prefix-%04d.states``).
    period : int, default 1
        Epochs between two checkpoints; values below 1 mean every epoch.
    save_optimizer_states : bool, default False
        Also save the optimizer's states, to resume training.

    Returns
    -------
    callable
        ``callback(epoch, symbol=None, arg_params=None, aux_params=None)``; it saves after
        epoch ``epoch`` (0-based) under the number ``epoch + 1`` when that number is a
        multiple of ``period``.
    """
    if not callable(getattr(mod, "save_checkpoint", None)):
        raise MXNetError(f"module_checkpoint: mod must be a Module with save_checkpoint, got "
                         f"{type(mod).__name__}")
    period = _period(period, "module_checkpoint")

    def _save_module(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            mod.save_checkpoint(prefix, iter_no + 1, save_optimizer_states)
    return _save_module


def do_checkpoint(prefix, period=1):
    """Epoch-end callback that writes a checkpoint with :func:`mx.model.save_checkpoint
    <neogluon.model.save_checkpoint>` every ``period`` epochs.

    The files are MXNet's: ``prefix-symbol.json`` (the graph) and ``prefix-%04d.params``
    (the weights as ``arg:<name>`` / ``aux:<name>``), numbered by completed epochs, so
    :func:`mx.model.load_checkpoint <neogluon.model.load_checkpoint>` and MXNet itself read
    them back. Each file is written atomically.

    Parameters
    ----------
    prefix : str
        Path prefix of the files.
    period : int, default 1
        Epochs between two checkpoints; values below 1 mean every epoch.

    Returns
    -------
    callable
        ``callback(epoch, symbol, arg_params, aux_params)``, to pass as
        ``epoch_end_callback`` to ``fit``.
    """
    if not isinstance(prefix, (str, os.PathLike)):
        raise MXNetError(f"do_checkpoint: prefix must be a path string, got {prefix!r}")
    prefix = os.fspath(prefix)
    period = _period(period, "do_checkpoint")

    def _save(iter_no, sym, arg, aux):
        if (iter_no + 1) % period == 0:
            save_checkpoint(prefix, iter_no + 1, sym, arg, aux)
    return _save


def log_train_metric(period, auto_reset=False):
    """Batch-end callback that logs the training metric every ``period`` batches, one line
    per metric: ``Iter[<epoch>] Batch[<nbatch>] Train-<name>=<value>``.

    Parameters
    ----------
    period : int
        Log at the batches whose index is a multiple of ``period``.
    auto_reset : bool, default False
        Clear the metric's local statistics after each log, so each line covers the batches
        since the previous one.

    Returns
    -------
    callable
        ``callback(BatchEndParam)``.
    """
    period = _positive_int(period, "period", "log_train_metric")

    def _log(param):
        epoch, nbatch, metric = _batch_fields(param, "log_train_metric")
        if nbatch % period != 0 or metric is None:
            return
        for name, value in metric.get_name_value():
            logging.info("Iter[%d] Batch[%d] Train-%s=%f", epoch, nbatch, name, value)
        if auto_reset:
            metric.reset_local()
    return _log


class Speedometer:
    """Batch-end callback that logs the throughput and the training metric every
    ``frequent`` batches.

    The first call of an epoch (a batch index lower than the previous call's starts a new
    epoch) only starts the clock. After that, at every batch index that is a multiple of
    ``frequent``, it logs the samples per second since the last log and the metric, in
    MXNet's words::

        Epoch[0] Batch [50-100]\\tSpeed: 1203.45 samples/sec\\taccuracy=0.912500

    ``Batch [0-100]`` when the metric is not reset (the values cover the epoch so far), and
    ``Iter[0] Batch [100]\\tSpeed: ...`` when there is no metric.

    Parameters
    ----------
    batch_size : int
        Samples per batch.
    frequent : int, default 50
        Batches between two log lines.
    auto_reset : bool, default True
        Clear the metric's local statistics after each log.
    """

    def __init__(self, batch_size, frequent=50, auto_reset=True):
        if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Real) \
                or batch_size <= 0:
            raise MXNetError(f"Speedometer: batch_size must be a positive number, got "
                             f"{batch_size!r}")
        self.batch_size = batch_size
        self.frequent = _positive_int(frequent, "frequent", "Speedometer")
        self.auto_reset = auto_reset
        self.init = False          # the clock runs (a first batch of the epoch was seen)
        self.tic = 0
        self.last_count = 0

    def _speed(self):
        elapsed = time.perf_counter() - self.tic
        if elapsed <= 0:           # a clock too coarse to see the interval
            return float("inf")
        return self.frequent * self.batch_size / elapsed

    def __call__(self, param):
        epoch, count, metric = _batch_fields(param, "Speedometer")
        if count < self.last_count:
            self.init = False      # the batch index went back: a new epoch
        self.last_count = count
        if not self.init:
            self.init = True
            self.tic = time.perf_counter()
            return
        if count % self.frequent != 0:
            return
        speed = self._speed()
        if metric is None:
            logging.info("Iter[%d] Batch [%d]\tSpeed: %.2f samples/sec", epoch, count, speed)
        else:
            name_value = metric.get_name_value()
            values = "\t%s=%f" * len(name_value)
            if self.auto_reset:
                metric.reset_local()
                logging.info("Epoch[%d] Batch [%d-%d]\tSpeed: %.2f samples/sec" + values,
                             epoch, count - self.frequent, count, speed,
                             *_name_value_args(name_value))
            else:
                logging.info("Epoch[%d] Batch [0-%d]\tSpeed: %.2f samples/sec" + values,
                             epoch, count, speed, *_name_value_args(name_value))
        self.tic = time.perf_counter()


class ProgressBar:
    """Batch-end callback that logs a text progress bar of the epoch at each batch:
    ``[=====-----] 50%`` followed by a carriage return.

    Parameters
    ----------
    total : int
        Batches per epoch.
    length : int, default 80
        Width of the bar in characters.
    """

    def __init__(self, total, length=80):
        self.total = _positive_int(total, "total", "ProgressBar")
        if isinstance(length, bool) or not isinstance(length, numbers.Integral) or length < 0:
            raise MXNetError(f"ProgressBar: length must be a non-negative integer, got "
                             f"{length!r}")
        self.bar_len = int(length)

    def __call__(self, param):
        _, count, _ = _batch_fields(param, "ProgressBar")
        fraction = count / float(self.total)
        filled = int(round(self.bar_len * fraction))
        percent = math.ceil(100.0 * fraction)
        bar = "=" * filled + "-" * (self.bar_len - filled)
        logging.info("[%s] %s%s\r", bar, percent, "%")


class LogValidationMetricsCallback:
    """Callback that logs each validation metric at the end of an epoch:
    ``Epoch[<epoch>] Validation-<name>=<value>`` (nothing without a metric)."""

    def __call__(self, param):
        epoch, _, metric = _batch_fields(param, "LogValidationMetricsCallback")
        if not metric:
            return
        for name, value in metric.get_name_value():
            logging.info("Epoch[%d] Validation-%s=%f", epoch, name, value)
