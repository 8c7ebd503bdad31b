"""``mx.contrib.tensorboard``: training metrics as TensorBoard scalars.

MXNet 1.x wrote the event files through ``mxboard``, which is no longer maintained; neogluon
writes them with PyTorch's :class:`torch.utils.tensorboard.SummaryWriter`, which needs the
``tensorboard`` package (``pip install tensorboard``). View them with
``tensorboard --logdir <logging_dir>``.
"""
from __future__ import annotations

import importlib.util
import os

from ..base import MXNetError

__all__ = ["LogMetricsCallback"]


def _summary_writer_class():
    # torch.utils.tensorboard imports the tensorboard package at its own import and fails
    # with a message about versions; say plainly which package is missing instead.
    if importlib.util.find_spec("tensorboard") is None:
        raise MXNetError("mx.contrib.tensorboard.LogMetricsCallback needs the 'tensorboard' "
                         "package, which is not installed (pip install tensorboard)")
    from torch.utils.tensorboard import SummaryWriter
    return SummaryWriter


class LogMetricsCallback:
    """Batch-end or epoch-end callback that writes each metric of ``param.eval_metric`` as a
    TensorBoard scalar, at step ``param.epoch``.

    Events are flushed to disk after each call, so a running TensorBoard sees them at once.
    Event files are append-only logs read while they grow, so they are not written
    atomically.

    Parameters
    ----------
    logging_dir : str
        Folder of the event files (made if missing).
    prefix : str, optional
        Scalars are named ``'<prefix>-<metric name>'`` instead of ``'<metric name>'``. Give
        training and validation callbacks different ``logging_dir``\\s and the same names to
        plot them as two curves of one chart, or different prefixes to keep them apart.

    Raises
    ------
    MXNetError
        When the ``tensorboard`` package is not installed.

    Examples
    --------
    >>> model.fit(train, eval_data=val,
    ...           batch_end_callback=mx.contrib.tensorboard.LogMetricsCallback('logs/train'),
    ...           eval_end_callback=mx.contrib.tensorboard.LogMetricsCallback('logs/eval'))
    """

    def __init__(self, logging_dir, prefix=None):
        if not isinstance(logging_dir, (str, os.PathLike)):
            raise MXNetError(f"LogMetricsCallback: logging_dir must be a folder path, got "
                             f"{logging_dir!r}")
        if prefix is not None and not isinstance(prefix, str):
            raise MXNetError(f"LogMetricsCallback: prefix must be a string or None, got "
                             f"{prefix!r}")
        self.prefix = prefix
        self.summary_writer = _summary_writer_class()(os.fspath(logging_dir))

    def __call__(self, param):
        try:
            epoch, metric = param.epoch, param.eval_metric
        except AttributeError:
            raise MXNetError(f"LogMetricsCallback expects a BatchEndParam (epoch, nbatch, "
                             f"eval_metric, locals), got {type(param).__name__}") from None
        if metric is None:
            return
        for name, value in metric.get_name_value():
            if self.prefix is not None:
                name = f"{self.prefix}-{name}"
            self.summary_writer.add_scalar(name, value, global_step=epoch)
        self.summary_writer.flush()

    def close(self):
        """Flush and close the event file."""
        self.summary_writer.close()
