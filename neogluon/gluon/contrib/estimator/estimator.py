"""The Estimator: MXNet 1.9.1's Fit API, a training loop driven by event handlers."""
import copy
import logging
import numbers
import sys
import warnings

from ....context import Context, cpu, gpu, num_gpus
from ....metric import Loss as metric_loss
from .batch_processor import BatchProcessor
from .event_handler import (BatchBegin, BatchEnd, EpochBegin, EpochEnd, GradientUpdateHandler,
                            LoggingHandler, MetricHandler, StoppingHandler, TrainBegin,
                            TrainEnd, ValidationHandler, _check_event_handlers)
from .utils import _check_handler_metric_ref, _check_metrics, _suggest_metric_for_loss

__all__ = ["Estimator"]


class ContextUnavailableError(ValueError, AssertionError):
    """A context given to the Estimator is not on this machine.

    An AssertionError as in MXNet 1.9.1 (which asserts), and a ValueError as the bad
    argument it is.
    """


def _data_loader_type():
    from ...data import DataLoader
    return DataLoader


class Estimator:
    """Train and evaluate a Gluon network with a few lines, extended by event handlers.

    Parameters
    ----------
    net : gluon.Block
        The network to train.
    loss : gluon.loss.Loss
        The training loss.
    train_metrics : EvalMetric or list of EvalMetric, optional
        Metrics computed on the training data. By default: accuracy for
        ``SoftmaxCrossEntropyLoss``, plus the running loss. Names get a ``'training '`` prefix.
    val_metrics : EvalMetric or list of EvalMetric, optional
        Metrics computed on validation data (default: copies of the training metrics). Names
        get a ``'validation '`` prefix.
    initializer : Initializer, optional
        Used when ``net`` is not initialized yet.
    trainer : gluon.Trainer, optional
        Default: SGD with learning rate 0.001 (with a warning).
    context : Context or list of Context, optional
        Where to train; the batch is split across several contexts. Default: gpu(0) when a
        GPU exists, else cpu().
    val_net : gluon.Block, optional
        A network for validation (usually sharing ``net``'s parameters).
    val_loss : gluon.loss.Loss, optional
        The validation loss (default: ``loss``).
    batch_processor : BatchProcessor, optional
        Custom ``fit_batch``/``evaluate_batch``.

    Attributes
    ----------
    logger : logging.Logger
        Where the handlers log, to stdout at INFO level. Add handlers to it to log elsewhere.
    """

    logger = None

    def __init__(self, net, loss, train_metrics=None, val_metrics=None, initializer=None,
                 trainer=None, context=None, val_net=None, val_loss=None, batch_processor=None):
        self.net = net
        self.loss = self._check_loss(loss)
        self._train_metrics = _check_metrics(train_metrics)
        self._val_metrics = _check_metrics(val_metrics)
        self._add_default_training_metrics()
        self._add_validation_metrics()
        self.val_loss = self.loss if val_loss is None else self._check_loss(val_loss)
        self.val_net = self.net if val_net is None else val_net

        self.logger = logging.Logger(name="Estimator", level=logging.INFO)
        self.logger.addHandler(logging.StreamHandler(sys.stdout))

        self.context = self._check_context(context)
        self._initialize(initializer)
        self.trainer = self._check_trainer(trainer)
        self.batch_processor = self._check_batch_processor(batch_processor)
        self.max_epoch = None
        self.max_batch = None
        self.batch_axis = 0
        self._train_data = None

    # ------------------------------------------------------------------ checks
    @staticmethod
    def _check_loss(loss):
        from ...loss import Loss as gluon_loss
        if not isinstance(loss, gluon_loss):
            raise ValueError(f"loss must be a Loss, refer to gluon.loss.Loss: {loss!r}")
        return loss

    @staticmethod
    def _check_context(context):
        gpus = num_gpus()
        available_gpus = [gpu(i) for i in range(gpus)]
        if context:
            if isinstance(context, Context):
                context = [context]
            elif isinstance(context, (list, tuple)) and all(isinstance(c, Context)
                                                            for c in context):
                context = list(context)
            else:
                raise ValueError("context must be a Context or a list of Context, for example "
                                 "mx.cpu() or [mx.gpu(0), mx.gpu(1)], refer to mxnet.Context: "
                                 f"{context!r}")
            for ctx in context:
                if not (ctx in available_gpus or str(ctx).startswith("cpu")):
                    raise ContextUnavailableError(
                        f"{ctx} is not available, please make sure your context is "
                        "in one of: mx.cpu(), " + ", ".join(str(c) for c in available_gpus))
            return context
        if gpus > 0:
            if gpus > 1:
                warnings.warn("You have multiple GPUs, gpu(0) will be used by default. To "
                              "utilize all your GPUs, specify context as a list of gpus, e.g. "
                              "context=[mx.gpu(0), mx.gpu(1)] ")
            return [gpu(0)]
        return [cpu()]

    @staticmethod
    def _check_batch_processor(batch_processor):
        if batch_processor is None:
            return BatchProcessor()
        if not (callable(getattr(batch_processor, "fit_batch", None))
                and callable(getattr(batch_processor, "evaluate_batch", None))):
            raise ValueError("Customized Batch Processor must contain fit_batch() and "
                             "evaluate_batch() methods")
        return batch_processor

    def _is_initialized(self):
        params = self.net.collect_params()
        for name in params:
            try:
                params[name].list_ctx()
            except RuntimeError:
                return False
        return True

    def _initialize(self, initializer):
        if not self._is_initialized():
            if initializer:
                self.net.initialize(init=initializer, ctx=self.context)
            else:
                self.net.initialize(ctx=self.context)
        elif initializer:
            warnings.warn("Network already fully initialized, skipping initialization. You "
                          "don't need to pass initializer if you already initialized your "
                          "net. You can use net.initialize(init=your_initializer, "
                          "force_reinit=True) to force re-initialize.")

    def _check_trainer(self, trainer):
        from ...trainer import Trainer
        if not trainer:
            warnings.warn("No trainer specified, default SGD optimizer with learning rate "
                          "0.001 is used.")
            return Trainer(self.net.collect_params(), "sgd", {"learning_rate": 0.001})
        if not isinstance(trainer, Trainer):
            raise ValueError("Trainer must be a Gluon Trainer instance, refer to "
                             f"gluon.Trainer: {trainer!r}")
        return trainer

    def _get_data_and_label(self, batch, ctx, batch_axis=0):
        return BatchProcessor()._get_data_and_label(batch, ctx, batch_axis)

    # ------------------------------------------------------------------ metrics
    def _add_default_training_metrics(self):
        if not self._train_metrics:
            suggested = _suggest_metric_for_loss(self.loss)
            if suggested:
                self._train_metrics = [suggested]
            loss_name = getattr(self.loss, "name", None) or type(self.loss).__name__.lower()
            self._train_metrics.append(metric_loss(loss_name.rstrip("1234567890")))
        for metric in self._train_metrics:
            # The prefix tells handlers training metrics from validation ones.
            metric.name = "training " + metric.name

    def _add_validation_metrics(self):
        if not self._val_metrics:
            self._val_metrics = [copy.deepcopy(m) for m in self._train_metrics]
        for metric in self._val_metrics:
            if "training" in metric.name:
                metric.name = metric.name.replace("training", "validation")
            else:
                metric.name = "validation " + metric.name

    @property
    def train_metrics(self):
        """The training metrics (a list)."""
        return self._train_metrics

    @property
    def val_metrics(self):
        """The validation metrics (a list)."""
        return self._val_metrics

    # ------------------------------------------------------------------ loops
    def _check_loader(self, data, what):
        if not isinstance(data, _data_loader_type()):
            raise ValueError(f"Estimator only support input as Gluon DataLoader ({what} is "
                             f"{type(data).__name__}). Alternatively, you can transform your "
                             "DataIter or any NDArray into Gluon DataLoader. Refer to "
                             "gluon.data.DataLoader")

    def evaluate(self, val_data, batch_axis=0, event_handlers=None):
        """Evaluate the model on ``val_data``, updating ``val_metrics``.

        Parameters
        ----------
        val_data : DataLoader
        batch_axis : int, default 0
        event_handlers : EventHandler or list of EventHandler, optional
            A MetricHandler and a LoggingHandler on the validation metrics are added unless
            given.
        """
        self._check_loader(val_data, "val_data")
        for metric in self.val_metrics:
            metric.reset()
        handlers = self._prepare_default_validation_handlers(event_handlers)
        _, epoch_begin, batch_begin, batch_end, epoch_end, _ = \
            self._categorize_handlers(handlers)
        for handler in epoch_begin:
            handler.epoch_begin(self)
        for batch in val_data:
            for handler in batch_begin:
                handler.batch_begin(self, batch=batch)
            _, label, pred, loss = self.batch_processor.evaluate_batch(self, batch, batch_axis)
            for handler in batch_end:
                handler.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
        for handler in epoch_end:
            handler.epoch_end(self)

    def fit(self, train_data, val_data=None, epochs=None, event_handlers=None, batches=None,
            batch_axis=0):
        """Train for ``epochs`` epochs or ``batches`` batches (exactly one of them).

        Parameters
        ----------
        train_data : DataLoader
        val_data : DataLoader, optional
            When given, a ValidationHandler evaluates on it after every epoch.
        epochs : int, optional
        event_handlers : EventHandler or list of EventHandler, optional
            A StoppingHandler, a GradientUpdateHandler, a MetricHandler, a LoggingHandler
            (and a ValidationHandler with ``val_data``) are added unless given.
        batches : int, optional
        batch_axis : int, default 0
        """
        self._check_loader(train_data, "train_data")
        if (not epochs) == (not batches):
            raise ValueError("Fit only support exactly one type of iteration, train by number "
                             "of epochs or number of batches. Please specify one and only one "
                             "of: epochs or batches.")
        for what, value in (("epochs", epochs), ("batches", batches)):
            if value is not None and (isinstance(value, bool)
                                      or not isinstance(value, numbers.Integral) or value < 0):
                raise ValueError(f"{what} must be a positive integer, got {value!r}")
        self.max_epoch = epochs
        self.max_batch = batches
        self.batch_axis = batch_axis
        self._train_data = train_data

        handlers = self._prepare_default_handlers(val_data, event_handlers)
        train_begin, epoch_begin, batch_begin, batch_end, epoch_end, train_end = \
            self._categorize_handlers(handlers)

        for handler in train_begin:
            handler.train_begin(self)
        while True:
            for handler in epoch_begin:
                handler.epoch_begin(self)
            for batch in train_data:
                for handler in batch_begin:
                    handler.batch_begin(self, batch=batch)
                _, label, pred, loss = self.batch_processor.fit_batch(self, batch, batch_axis)
                # Every handler runs, even after one asks to stop.
                results = [handler.batch_end(self, batch=batch, pred=pred, label=label,
                                             loss=loss) for handler in batch_end]
                if any(results):
                    break
            results = [handler.epoch_end(self) for handler in epoch_end]
            if any(results):
                break
        for handler in train_end:
            handler.train_end(self)

    # ------------------------------------------------------------------ handlers
    def _prepare_default_handlers(self, val_data, event_handlers):
        handlers = _check_event_handlers(event_handlers)
        added = [StoppingHandler(self.max_epoch, self.max_batch)]
        if not any(isinstance(h, GradientUpdateHandler) for h in handlers):
            added.append(GradientUpdateHandler())
        if not any(isinstance(h, MetricHandler) for h in handlers):
            added.append(MetricHandler(metrics=self.train_metrics))
        if not any(isinstance(h, ValidationHandler) for h in handlers) and val_data:
            added.append(ValidationHandler(val_data=val_data, eval_fn=self.evaluate))
        if not any(isinstance(h, LoggingHandler) for h in handlers):
            added.append(LoggingHandler(metrics=self.train_metrics))
        mixing = bool(handlers) and bool(added)
        handlers.extend(added)
        if mixing:
            known = set(self.train_metrics + self.val_metrics)
            for handler in handlers:
                _check_handler_metric_ref(handler, known)
        handlers.sort(key=lambda h: getattr(h, "priority", 0))
        return handlers

    def _prepare_default_validation_handlers(self, event_handlers):
        handlers = _check_event_handlers(event_handlers)
        added = []
        if not any(isinstance(h, MetricHandler) for h in handlers):
            added.append(MetricHandler(metrics=self.val_metrics))
        if not any(isinstance(h, LoggingHandler) for h in handlers):
            added.append(LoggingHandler(metrics=self.val_metrics))
        mixing = bool(handlers) and bool(added)
        handlers.extend(added)
        if mixing:
            known = set(self.val_metrics)
            for handler in handlers:
                _check_handler_metric_ref(handler, known)
        handlers.sort(key=lambda h: getattr(h, "priority", 0))
        return handlers

    @staticmethod
    def _categorize_handlers(event_handlers):
        """Split handlers into the six event lists, so that no empty method is called."""
        kinds = (TrainBegin, EpochBegin, BatchBegin, BatchEnd, EpochEnd, TrainEnd)
        return tuple([h for h in event_handlers if isinstance(h, kind)] for kind in kinds)
