"""Event handlers of the Fit API: what the Estimator does around each batch and epoch.

A handler subclasses one or more of :class:`TrainBegin`, :class:`EpochBegin`,
:class:`BatchBegin`, :class:`BatchEnd`, :class:`EpochEnd`, :class:`TrainEnd` and implements the
matching methods; ``batch_end`` and ``epoch_end`` return True to stop training. Handlers run in
ascending ``priority`` (default 0).
"""
import math
import os
import re
import time
import warnings

import numpy as np

from .... import _fileio
from ....metric import CompositeEvalMetric, EvalMetric
from ....metric import Loss as metric_loss
from .utils import _check_metrics

__all__ = ["TrainBegin", "TrainEnd", "EpochBegin", "EpochEnd", "BatchBegin", "BatchEnd",
           "StoppingHandler", "MetricHandler", "ValidationHandler", "LoggingHandler",
           "CheckpointHandler", "EarlyStoppingHandler", "GradientUpdateHandler"]


class EventHandler:
    """Base of all event handlers."""


class _PeriodError(ValueError, AssertionError):
    """A checkpoint period that does not fit the training length (MXNet asserts)."""


class _MissingCheckpoint(FileNotFoundError, AssertionError):
    """A checkpoint file that is not there (MXNet asserts)."""


def _check_event_handlers(handlers):
    if isinstance(handlers, EventHandler):
        return [handlers]
    handlers = list(handlers or [])
    bad = [h for h in handlers if not isinstance(h, EventHandler)]
    if bad:
        raise ValueError("handlers must be an EventHandler or a list of EventHandler, "
                         f"got: {bad!r}")
    return handlers


class TrainBegin(EventHandler):
    """Handler called once when training starts."""

    def train_begin(self, estimator, *args, **kwargs):
        pass


class TrainEnd(EventHandler):
    """Handler called once when training ends."""

    def train_end(self, estimator, *args, **kwargs):
        pass


class EpochBegin(EventHandler):
    """Handler called at the start of every epoch (and of every evaluation)."""

    def epoch_begin(self, estimator, *args, **kwargs):
        pass


class EpochEnd(EventHandler):
    """Handler called at the end of every epoch; return True to stop training."""

    def epoch_end(self, estimator, *args, **kwargs):
        return False


class BatchBegin(EventHandler):
    """Handler called before every batch, with ``batch=``."""

    def batch_begin(self, estimator, *args, **kwargs):
        pass


class BatchEnd(EventHandler):
    """Handler called after every batch, with ``batch``, ``pred``, ``label`` and ``loss``;
    return True to stop training."""

    def batch_end(self, estimator, *args, **kwargs):
        return False


class StoppingHandler(TrainBegin, BatchEnd, EpochEnd):
    """Stop when the maximum number of epochs or batches is reached.

    Parameters
    ----------
    max_epoch : int, optional
    max_batch : int, optional
    """

    def __init__(self, max_epoch=None, max_batch=None):
        self.max_epoch = max_epoch
        self.max_batch = max_batch
        self.current_batch = 0
        self.current_epoch = 0
        self.stop_training = False

    def train_begin(self, estimator, *args, **kwargs):
        self.max_epoch = estimator.max_epoch
        self.max_batch = estimator.max_batch
        self.current_batch = 0
        self.current_epoch = 0
        self.stop_training = False

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.current_batch == self.max_batch:
            self.stop_training = True
        return self.stop_training

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.current_epoch == self.max_epoch:
            self.stop_training = True
        return self.stop_training


class MetricHandler(EpochBegin, BatchEnd):
    """Reset metrics at each epoch and update them after each batch.

    :class:`~neogluon.metric.Loss` metrics are updated with the batch's loss; the others with
    its labels and predictions.

    Parameters
    ----------
    metrics : list of EvalMetric
    priority : float, default -1000
        Runs early, so that later handlers see updated metrics.
    """

    def __init__(self, metrics, priority=-1000):
        self.metrics = _check_metrics(metrics)
        self.priority = priority

    def epoch_begin(self, estimator, *args, **kwargs):
        for metric in self.metrics:
            metric.reset()

    def batch_end(self, estimator, *args, **kwargs):
        pred, label, loss = kwargs["pred"], kwargs["label"], kwargs["loss"]
        for metric in self.metrics:
            if isinstance(metric, metric_loss):
                metric.update(0, loss)
            else:
                metric.update(label, pred)


class ValidationHandler(TrainBegin, BatchEnd, EpochEnd):
    """Run ``eval_fn`` on validation data every ``epoch_period`` epochs (or ``batch_period``
    batches).

    Parameters
    ----------
    val_data : DataLoader
    eval_fn : callable
        Usually ``estimator.evaluate``; called as ``eval_fn(val_data=..., batch_axis=...,
        event_handlers=...)``.
    epoch_period : int, default 1
    batch_period : int, optional
    priority : float, default -1000
    event_handlers : list of EventHandler, optional
        Passed on to ``eval_fn``.
    """

    def __init__(self, val_data, eval_fn, epoch_period=1, batch_period=None, priority=-1000,
                 event_handlers=None):
        self.val_data = val_data
        self.eval_fn = eval_fn
        self.epoch_period = epoch_period
        self.batch_period = batch_period
        self.current_batch = 0
        self.current_epoch = 0
        self.priority = priority
        self.event_handlers = event_handlers

    def train_begin(self, estimator, *args, **kwargs):
        self.current_batch = 0
        self.current_epoch = 0

    def _run(self, estimator):
        self.eval_fn(val_data=self.val_data, batch_axis=estimator.batch_axis,
                     event_handlers=self.event_handlers)

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.batch_period and self.current_batch % self.batch_period == 0:
            self._run(estimator)

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.epoch_period and self.current_epoch % self.epoch_period == 0:
            self._run(estimator)


def _fmt(value):
    return "%.4f" % value


class LoggingHandler(TrainBegin, TrainEnd, EpochBegin, EpochEnd, BatchBegin, BatchEnd):
    """Log training progress, and optionally draw a tqdm progress bar per epoch.

    Parameters
    ----------
    log_interval : int or 'epoch', default 'epoch'
        Log every epoch, or every ``log_interval`` batches.
    metrics : list of EvalMetric, optional
        Metrics shown in the logs and on the progress bar.
    priority : float, default inf
        Runs last, after the metrics are updated.
    progress_bar : bool, default False
        Show a tqdm bar during each training epoch with the running metric values (a
        neogluon extension; MXNet 1.9.1 only logs). Needs the ``tqdm`` package.
    """

    def __init__(self, log_interval="epoch", metrics=None, priority=np.inf, progress_bar=False):
        if isinstance(log_interval, bool) or (not isinstance(log_interval, int)
                                              and log_interval != "epoch"):
            raise ValueError("log_interval must be either an integer or string 'epoch'")
        self.metrics = _check_metrics(metrics)
        self.batch_index = 0
        self.current_epoch = 0
        self.processed_samples = 0
        self.priority = priority
        self.log_interval = log_interval
        self.log_interval_time = 0
        self.progress_bar = bool(progress_bar)
        self._bar = None
        self.train_start = self.epoch_start = self.batch_start = time.time()

    def _is_training(self):
        # The Estimator prefixes training metric names with 'training'.
        return any("training" in m.name for m in self.metrics)

    def train_begin(self, estimator, *args, **kwargs):
        self.train_start = time.time()
        trainer = estimator.trainer
        estimator.logger.info("Training begin: using optimizer %s with current learning rate "
                              "%.4f ", type(trainer.optimizer).__name__, trainer.learning_rate)
        if estimator.max_epoch:
            estimator.logger.info("Train for %d epochs.", estimator.max_epoch)
        else:
            estimator.logger.info("Train for %d batches.", estimator.max_batch)
        self.current_epoch = 0
        self.batch_index = 0
        self.processed_samples = 0
        self.log_interval_time = 0

    def train_end(self, estimator, *args, **kwargs):
        self._close_bar()
        train_time = time.time() - self.train_start
        msg = "Train finished using total %ds with %d epochs. " % (train_time,
                                                                   self.current_epoch)
        for metric in self.metrics:
            name, value = metric.get()
            msg += "%s: %s, " % (name, _fmt(value))
        estimator.logger.info(msg.rstrip(", "))

    def batch_begin(self, estimator, *args, **kwargs):
        if isinstance(self.log_interval, int):
            self.batch_start = time.time()

    def batch_end(self, estimator, *args, **kwargs):
        batch = kwargs.get("batch")
        if isinstance(self.log_interval, int):
            batch_time = time.time() - self.batch_start
            msg = "[Epoch %d][Batch %d]" % (self.current_epoch, self.batch_index)
            self.processed_samples += batch[0].shape[0]
            msg += "[Samples %s] " % self.processed_samples
            self.log_interval_time += batch_time
            if self.batch_index % self.log_interval == 0:
                msg += "time/interval: %.3fs " % self.log_interval_time
                self.log_interval_time = 0
                for metric in self.metrics:
                    name, value = metric.get()
                    msg += "%s: %s, " % (name, _fmt(value))
                estimator.logger.info(msg.rstrip(", "))
        if self._bar is not None:
            self._bar.update(1)
            post = {}
            for metric in self.metrics:
                for name, value in metric.get_name_value():
                    post[name.replace("training ", "")] = "%.4f" % value
            self._bar.set_postfix(post, refresh=False)
        self.batch_index += 1

    def _open_bar(self, estimator):
        self._close_bar()
        try:
            from tqdm.auto import tqdm
        except ImportError:  # the bar is a nicety; logging goes on without it
            warnings.warn("LoggingHandler(progress_bar=True) needs the tqdm package")
            self.progress_bar = False
            return
        data = getattr(estimator, "_train_data", None)
        try:
            total = len(data)
        except TypeError:
            total = None
        if estimator.max_batch:
            total = min(total or estimator.max_batch, estimator.max_batch)
        self._bar = tqdm(total=total, desc="Epoch %d" % self.current_epoch, leave=True,
                         dynamic_ncols=True)

    def _close_bar(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def epoch_begin(self, estimator, *args, **kwargs):
        is_training = self._is_training()
        self.epoch_start = time.time()
        if is_training:
            estimator.logger.info("[Epoch %d] Begin, current learning rate: %.4f",
                                  self.current_epoch, estimator.trainer.learning_rate)
            if self.progress_bar:
                self._open_bar(estimator)
        else:
            estimator.logger.info("Validation Begin")

    def epoch_end(self, estimator, *args, **kwargs):
        self._close_bar()
        epoch_time = time.time() - self.epoch_start
        msg = "[Epoch %d] Finished in %.3fs, " % (self.current_epoch, epoch_time)
        for metric in self.metrics:
            name, value = metric.get()
            msg += "%s: %s, " % (name, _fmt(value))
        estimator.logger.info(msg.rstrip(", "))
        self.current_epoch += 1
        self.batch_index = 0


def _monitor_op(monitor, mode, who):
    """np.greater or np.less for ``mode``; 'auto' picks greater for accuracy and F1."""
    if mode not in ("auto", "min", "max"):
        warnings.warn(f"{who} mode {mode} is unknown, fallback to auto mode. {who} will use "
                      "max mode for f1 and accuracy metric comparison and use min mode "
                      "otherwise", RuntimeWarning)
        mode = "auto"
    if mode == "min":
        return np.less
    if mode == "max":
        return np.greater
    name = monitor.get()[0].lower()
    # MXNet 1.9.1 means to do this but always picks `greater` (an `'acc' or ...` typo);
    # neogluon follows the documented rule, so a monitored loss is minimised.
    if "acc" in name or "f1" in name:
        warnings.warn(f"`greater` operator will be used to determine if {monitor.get()[0]} "
                      "has improved. Please specify `mode='min'` to use the `less` operator. "
                      "Specify `mode='max' to disable this warning.`")
        return np.greater
    warnings.warn(f"`less` operator will be used to determine if {monitor.get()[0]} has "
                  "improved. Please specify `mode='max'` to use the `greater` operator. "
                  "Specify `mode='min' to disable this warning.`")
    return np.less


_CKPT_RE = re.compile(r"^(?P<prefix>.*)-epoch(?P<epoch>\d+)batch(?P<batch>\d+)\.params$")


class CheckpointHandler(TrainBegin, BatchEnd, EpochEnd):
    """Save parameters and trainer states periodically, and resume from them.

    Files are ``{model_prefix}-epoch{E}batch{B}.params`` and ``.states`` in ``model_dir``
    (and ``{model_prefix}-best.*`` with ``save_best``), written atomically.

    Parameters
    ----------
    model_dir : str
        Folder for the checkpoints (created when missing).
    model_prefix : str, default 'model'
    monitor : EvalMetric, optional
        The metric that decides the best model (with ``save_best``).
    verbose : int, default 0
        1 logs every save.
    save_best : bool, default False
    mode : {'auto', 'min', 'max'}, default 'auto'
        How ``monitor`` improves; 'auto' maximises accuracy and F1 and minimises the rest.
    epoch_period : int, default 1
        Save every this many epochs.
    batch_period : int, optional
        Save every this many batches.
    max_checkpoints : int, default 5
        Older checkpoints beyond this number are deleted (the best one is not counted).
    resume_from_checkpoint : bool, default False
        At train begin, load the latest checkpoint in ``model_dir`` (if any) and train only
        the remaining epochs or batches.
    """

    def __init__(self, model_dir, model_prefix="model", monitor=None, verbose=0,
                 save_best=False, mode="auto", epoch_period=1, batch_period=None,
                 max_checkpoints=5, resume_from_checkpoint=False):
        self.monitor = monitor
        self.verbose = verbose
        os.makedirs(model_dir, exist_ok=True)
        self.model_dir = model_dir
        self.model_prefix = model_prefix
        self.save_best = save_best
        if self.save_best and not isinstance(self.monitor, EvalMetric):
            raise ValueError("To save best model only, please provide one of the metric "
                             "objects from estimator.train_metrics and estimator.val_metrics "
                             "as monitor.")
        self.epoch_period = epoch_period
        self.batch_period = batch_period
        self.current_batch = 0
        self.current_epoch = 0
        self.max_checkpoints = max_checkpoints
        self.resume_from_checkpoint = resume_from_checkpoint
        self.saved_checkpoints = []
        self.trained_epoch = -1
        self.trained_batch = -1
        if self.save_best:
            self.monitor_op = _monitor_op(self.monitor, mode, "CheckpointHandler")
            self.best = np.inf if self.monitor_op is np.less else -np.inf

    def train_begin(self, estimator, *args, **kwargs):
        self.current_epoch = 0
        self.current_batch = 0
        if self.save_best:
            self.best = np.inf if self.monitor_op is np.less else -np.inf
        if self.resume_from_checkpoint:
            error_msg = ("CheckpointHandler: when resuming, save checkpoints with the same type "
                         "of period used for training: train by epochs and set only "
                         "epoch_period, or train by batches and set only batch_period.")
            if estimator.max_batch and (not self.batch_period or self.epoch_period):
                raise _PeriodError(error_msg)
            if estimator.max_epoch and (not self.epoch_period or self.batch_period):
                raise _PeriodError(error_msg)
            self._resume_from_checkpoint(estimator)

    def batch_end(self, estimator, *args, **kwargs):
        if self.current_batch == 0:
            self._save_symbol(estimator)
        if self.batch_period and (self.current_batch + 1) % self.batch_period == 0:
            self._save_checkpoint(estimator)
        self.current_batch += 1

    def epoch_end(self, estimator, *args, **kwargs):
        if self.epoch_period and (self.current_epoch + 1) % self.epoch_period == 0:
            self._save_checkpoint(estimator)
        self.current_epoch += 1

    def _save_checkpoint(self, estimator):
        # Numbering continues from the resumed checkpoint, so files never collide.
        if self.resume_from_checkpoint and self.trained_epoch >= 0:
            epoch_no = self.current_epoch + self.trained_epoch + 1
            batch_no = self.current_batch + self.trained_batch + (0 if estimator.max_epoch
                                                                   else 1)
        else:
            epoch_no, batch_no = self.current_epoch, self.current_batch
        prefix = "%s-epoch%dbatch%d" % (self.model_prefix, epoch_no, batch_no)
        self._save_params_and_trainer(estimator, prefix)
        if self.verbose > 0:
            estimator.logger.info("[Epoch %d] CheckpointHandler: trained total %d batches, "
                                  "saving model at %s with prefix: %s", self.current_epoch,
                                  self.current_batch + 1, self.model_dir, prefix)
        if not self.save_best:
            return
        monitor_name, monitor_value = self.monitor.get()
        if isinstance(monitor_value, list) or math.isnan(monitor_value):
            warnings.warn(RuntimeWarning(
                f"Skipping save best because {monitor_name} is not updated, make sure you pass "
                "one of the metric objects estimator.train_metrics and estimator.val_metrics "
                "as monitor"))
        elif self.monitor_op(monitor_value, self.best):
            best_prefix = self.model_prefix + "-best"
            self._save_params_and_trainer(estimator, best_prefix)
            if self.verbose > 0:
                estimator.logger.info("[Epoch %d] CheckpointHandler: %s improved from %0.5f to "
                                      "%0.5f, updating best model at %s with prefix: %s",
                                      self.current_epoch, monitor_name, self.best,
                                      monitor_value, self.model_dir, best_prefix)
            self.best = monitor_value
        elif self.verbose > 0:
            estimator.logger.info("[Epoch %d] CheckpointHandler: %s did not improve from "
                                  "%0.5f, skipping updating best model", self.current_epoch,
                                  monitor_name, self.best)

    def _save_symbol(self, estimator):
        symbol_file = os.path.join(self.model_dir, self.model_prefix + "-symbol.json")
        cached = getattr(estimator.net, "_cached_graph", None)
        if cached:
            # What HybridBlock.export writes: MXNet's symbol JSON (or, for a forward pass
            # that cannot run on symbols, neogluon's graph description).
            _fileio.write_text(symbol_file, estimator.net._graph_text()[0])
        else:
            estimator.logger.info(
                "Model architecture(symbol file) is not saved, please use HybridBlock to "
                "construct your model, and call net.hybridize() before passing to Estimator "
                "in order to save model architecture as %s.", symbol_file)

    def _save_params_and_trainer(self, estimator, file_prefix):
        param_file = os.path.join(self.model_dir, file_prefix + ".params")
        trainer_file = os.path.join(self.model_dir, file_prefix + ".states")
        estimator.net.save_parameters(param_file)
        estimator.trainer.save_states(trainer_file)
        if "best" not in file_prefix:
            if file_prefix in self.saved_checkpoints:
                self.saved_checkpoints.remove(file_prefix)
            self.saved_checkpoints.append(file_prefix)
        while len(self.saved_checkpoints) > self.max_checkpoints:
            old = self.saved_checkpoints.pop(0)
            for ext in (".params", ".states"):
                path = os.path.join(self.model_dir, old + ext)
                if os.path.exists(path):
                    os.remove(path)

    def _list_checkpoints(self):
        """(epoch, batch, prefix) of every checkpoint of this model in model_dir, sorted."""
        found = []
        for fname in os.listdir(self.model_dir):
            m = _CKPT_RE.match(fname)
            if m and m.group("prefix") == self.model_prefix:
                found.append((int(m.group("epoch")), int(m.group("batch")), fname[:-7]))
            elif fname.startswith(self.model_prefix + "-epoch") and fname.endswith(".params"):
                raise ValueError(
                    f"Error parsing checkpoint file {fname!r}, please check your checkpoints "
                    "have the format: {model_name}-epoch{epoch_number}batch{batch_number}"
                    ".params, there should also be a .states file for each .params file")
        return sorted(found)

    def _resume_from_checkpoint(self, estimator):
        found = self._list_checkpoints()
        self.saved_checkpoints = [p for _, _, p in found]
        if not found:
            self.trained_epoch = self.trained_batch = -1
            what = ("%d batches" % estimator.max_batch if estimator.max_batch
                    else "%d epochs" % estimator.max_epoch)
            estimator.logger.info("CheckpointHandler: No checkpoint found, training from "
                                  "scratch for %s", what)
            return
        self.trained_epoch = max(e for e, _, _ in found)
        self.trained_batch = max(b for e, b, _ in found if e == self.trained_epoch)
        msg = ("CheckpointHandler: Checkpoint resumed from epoch %d batch %d, continue to "
               "train for " % (self.trained_epoch, self.trained_batch))
        if estimator.max_epoch:
            if self.trained_epoch >= estimator.max_epoch - 1:
                raise ValueError(
                    "Found checkpoint with maximum number of epoch %d reached, please specify "
                    "resume_from_checkpoint=False (default value) if you want to train from "
                    "scratch." % estimator.max_epoch)
            estimator.max_epoch = estimator.max_epoch - self.trained_epoch - 1
            msg += "%d epochs " % estimator.max_epoch
        if estimator.max_batch:
            if self.trained_batch >= estimator.max_batch - 1:
                raise ValueError(
                    "Found checkpoint with maximum number of batch %d reached, please specify "
                    "resume_from_checkpoint=False (default value) if you want to train from "
                    "scratch." % self.trained_batch)
            estimator.max_batch = estimator.max_batch - self.trained_batch - 1
            msg += "%d batches " % estimator.max_batch
        prefix = "%s-epoch%dbatch%d" % (self.model_prefix, self.trained_epoch,
                                        self.trained_batch)
        param_file = os.path.join(self.model_dir, prefix + ".params")
        trainer_file = os.path.join(self.model_dir, prefix + ".states")
        for path in (param_file, trainer_file):
            if not os.path.exists(path):
                raise _MissingCheckpoint(f"Failed to load checkpoint, {path} does not exist")
        estimator.net.load_parameters(param_file, ctx=estimator.context)
        estimator.trainer.load_states(trainer_file)
        estimator.logger.warning(msg)


class EarlyStoppingHandler(TrainBegin, EpochEnd, TrainEnd):
    """Stop training when a monitored metric stops improving.

    Parameters
    ----------
    monitor : EvalMetric
        One of ``estimator.train_metrics`` or ``estimator.val_metrics``.
    min_delta : float, default 0
        The smallest change that counts as an improvement.
    patience : int, default 0
        Epochs without improvement to wait before stopping.
    mode : {'auto', 'min', 'max'}, default 'auto'
        'auto' maximises accuracy and F1 and minimises everything else.
    baseline : float, optional
        The value to beat at first.
    """

    def __init__(self, monitor, min_delta=0, patience=0, mode="auto", baseline=None):
        if not isinstance(monitor, EvalMetric):
            raise ValueError("Please provide one of the metric objects from "
                             "estimator.train_metrics and estimator.val_metrics as monitor.")
        if isinstance(monitor, CompositeEvalMetric):
            raise ValueError("CompositeEvalMetric is not supported for EarlyStoppingHandler, "
                             "please specify a simple metric instead.")
        self.monitor = monitor
        self.baseline = baseline
        self.patience = patience
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False
        self.monitor_op = _monitor_op(monitor, mode, "EarlyStopping")
        self.min_delta = min_delta if self.monitor_op is np.greater else -min_delta
        self.best = None

    def train_begin(self, estimator, *args, **kwargs):
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False
        if self.baseline is not None:
            self.best = self.baseline
        else:
            self.best = np.inf if self.monitor_op is np.less else -np.inf

    def epoch_end(self, estimator, *args, **kwargs):
        monitor_name, monitor_value = self.monitor.get()
        if math.isnan(monitor_value):
            warnings.warn(RuntimeWarning(
                f"{monitor_name} is not updated, make sure you pass one of the metric objects "
                "from estimator.train_metrics and estimator.val_metrics as monitor."))
        elif self.monitor_op(monitor_value - self.min_delta, self.best):
            self.best = monitor_value
            self.wait = 0
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = self.current_epoch
                self.stop_training = True
        self.current_epoch += 1
        return self.stop_training

    def train_end(self, estimator, *args, **kwargs):
        if self.stopped_epoch > 0:
            estimator.logger.info("[Epoch %d] EarlyStoppingHanlder: early stopping due to %s "
                                  "not improving", self.stopped_epoch, self.monitor.get()[0])


class GradientUpdateHandler(BatchEnd):
    """Apply the gradients after each batch: ``trainer.step(batch_size)``.

    Parameters
    ----------
    priority : float, default -2000
        Runs first at batch end.
    """

    def __init__(self, priority=-2000):
        self.priority = priority

    def batch_end(self, estimator, *args, **kwargs):
        loss = kwargs["loss"]
        if not isinstance(loss, list):
            loss = [loss]
        batch_size = sum(l.shape[0] for l in loss)
        estimator.trainer.step(batch_size)
