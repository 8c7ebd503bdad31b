"""``mx.metric``: online evaluation metrics, as in MXNet 1.9.1.

Every metric accumulates over calls to :meth:`EvalMetric.update` and reports with
:meth:`EvalMetric.get`. Metrics keep two sets of statistics: the *local* ones, cleared by
:meth:`EvalMetric.reset_local` (for example at each logging interval), and the *global* ones,
cleared only by :meth:`EvalMetric.reset`.

Inputs are lists of :class:`~neogluon.nd.NDArray` (a single array is accepted too); numpy arrays
and torch tensors also work. Where MXNet computes a metric in numpy, neogluon does the same;
Accuracy, Loss and Perplexity count on the arrays' own device with torch. tests/test_metric.py
compares every metric with values recorded from MXNet 1.9.1.
"""
from __future__ import annotations

import json
import math
from collections import OrderedDict

import numpy
import torch

from .base import numeric_types, string_types
from .ndarray.ndarray import NDArray

__all__ = ["EvalMetric", "CompositeEvalMetric", "Accuracy", "TopKAccuracy", "F1", "MCC",
           "Perplexity", "MAE", "MSE", "RMSE", "CrossEntropy", "NegativeLogLikelihood",
           "PearsonCorrelation", "PCC", "Loss", "Torch", "Caffe", "CustomMetric", "np",
           "create", "register", "alias", "check_label_shapes"]

_ARRAY_TYPES = (NDArray, numpy.ndarray, torch.Tensor)


class _UnknownMetricError(ValueError, AssertionError):
    """Raised by :func:`create` for a bad name; MXNet raises AssertionError there, and a
    ValueError is what a reader expects, so both ``except`` clauses catch it."""


def _to_numpy(x):
    if isinstance(x, NDArray):
        return x.asnumpy()
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    return numpy.asarray(x)


def _to_torch(x, device=None):
    if isinstance(x, NDArray):
        t = x._t.detach()
    elif isinstance(x, torch.Tensor):
        t = x.detach()
    else:
        t = torch.as_tensor(numpy.asarray(x))
    if device is not None and t.device != device:
        t = t.to(device)
    return t


def _shape(x):
    return tuple(x.shape)


def check_label_shapes(labels, preds, wrap=False, shape=False):
    """Check that labels and predictions agree in number (or in shape).

    Parameters
    ----------
    labels, preds : list of NDArray, or NDArray
        The labels and the predictions.
    wrap : bool, default False
        Wrap a single array into a one-element list.
    shape : bool, default False
        Compare the arrays' shapes instead of the lists' lengths.

    Returns
    -------
    tuple
        ``(labels, preds)``, wrapped if asked.

    Raises
    ------
    ValueError
        When the lengths (or shapes) differ.
    """
    if shape:
        label_shape, pred_shape = _shape(labels), _shape(preds)
    else:
        label_shape, pred_shape = len(labels), len(preds)
    if label_shape != pred_shape:
        raise ValueError(f"Shape of labels {label_shape} does not match shape of "
                         f"predictions {pred_shape}")
    if wrap:
        if isinstance(labels, _ARRAY_TYPES):
            labels = [labels]
        if isinstance(preds, _ARRAY_TYPES):
            preds = [preds]
    return labels, preds


def _wrap(labels, preds):
    # Wrap before comparing lengths: a lone array's len() is its first dimension, not 1.
    if isinstance(labels, _ARRAY_TYPES):
        labels = [labels]
    if isinstance(preds, _ARRAY_TYPES):
        preds = [preds]
    return check_label_shapes(labels, preds)


def _pair(name, value):
    names = name if isinstance(name, list) else [name]
    values = value if isinstance(value, list) else [value]
    return list(zip(names, values))


class EvalMetric:
    """Base class of all evaluation metrics.

    Parameters
    ----------
    name : str
        Name of this metric instance, shown by :meth:`get`.
    output_names : list of str, optional
        Names of the predictions :meth:`update_dict` uses (default: all of them).
    label_names : list of str, optional
        Names of the labels :meth:`update_dict` uses (default: all of them).
    **kwargs
        Constructor arguments recorded by :meth:`get_config`. ``has_global_stats=True`` makes
        the metric keep global statistics apart from the local ones.
    """

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop("has_global_stats", False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self):
        return f"EvalMetric: {dict(self.get_name_value())}"

    def get_config(self):
        """The configuration that :func:`create` rebuilds this metric from.

        Returns
        -------
        dict
        """
        config = dict(self._kwargs)
        config.update({"metric": type(self).__name__, "name": self.name,
                       "output_names": self.output_names, "label_names": self.label_names})
        return config

    def update_dict(self, label, pred):
        """Update with dicts of named labels and predictions.

        Parameters
        ----------
        label : dict of str to NDArray
        pred : dict of str to NDArray
        """
        if self.output_names is not None:
            pred = [pred[n] for n in self.output_names]
        else:
            pred = list(pred.values())
        if self.label_names is not None:
            label = [label[n] for n in self.label_names]
        else:
            label = list(label.values())
        self.update(label, pred)

    def update(self, labels, preds):
        """Accumulate one batch of labels and predictions.

        Parameters
        ----------
        labels : list of NDArray
        preds : list of NDArray
        """
        raise NotImplementedError()

    def _add(self, value, count):
        if isinstance(value, numpy.generic):
            # MXNet (on NumPy 1.x) sums these in float64: a float32 batch value meeting the
            # Python float 0.0 became float64. NumPy 2 would keep float32 and lose precision
            # over many batches, so the sums are float64 explicitly.
            value = numpy.float64(value)
        self.sum_metric += value
        self.global_sum_metric += value
        self.num_inst += count
        self.global_num_inst += count

    def reset(self):
        """Clear the local and the global statistics."""
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self):
        """Clear the local statistics only."""
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self):
        """The current (local) value.

        Returns
        -------
        tuple
            ``(name, value)``; the value is NaN before the first update.
        """
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, self.sum_metric / self.num_inst)

    def get_global(self):
        """The value over everything since the last :meth:`reset`.

        Returns
        -------
        tuple
            ``(name, value)``.
        """
        if not self._has_global_stats:
            return self.get()
        if self.global_num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, self.global_sum_metric / self.global_num_inst)

    def get_name_value(self):
        """The local value as a list of ``(name, value)`` pairs."""
        return _pair(*self.get())

    def get_global_name_value(self):
        """The global value as a list of ``(name, value)`` pairs."""
        if not self._has_global_stats:
            return self.get_name_value()
        return _pair(*self.get_global())


# ---------------------------------------------------------------------------- registry
_REGISTRY: dict = {}


def register(klass, name=None):
    """Register a metric class under ``name`` (default: its class name), case-insensitively.

    Parameters
    ----------
    klass : type
        A subclass of :class:`EvalMetric`.
    name : str, optional

    Returns
    -------
    type
        ``klass``, so that this works as a decorator.
    """
    if not (isinstance(klass, type) and issubclass(klass, EvalMetric)):
        raise TypeError(f"Can only register subclass of EvalMetric, got {klass!r}")
    key = (name or klass.__name__).lower()
    if key in _REGISTRY and _REGISTRY[key] is not klass:
        import warnings
        warnings.warn(f"New metric {klass.__module__}.{klass.__name__} registered with name "
                      f"{key} is overriding existing metric "
                      f"{_REGISTRY[key].__module__}.{_REGISTRY[key].__name__}",
                      UserWarning, stacklevel=2)
    _REGISTRY[key] = klass
    return klass


def alias(*aliases):
    """Decorator registering a metric class under extra names."""
    def deco(klass):
        for a in aliases:
            register(klass, a)
        return klass
    return deco


def _create_registered(*args, **kwargs):
    if args:
        name, args = args[0], args[1:]
    else:
        if "metric" not in kwargs:
            raise _UnknownMetricError("create() needs a metric name, instance or config")
        name = kwargs.pop("metric")
    if isinstance(name, EvalMetric):
        if args or kwargs:
            raise _UnknownMetricError(
                f"metric {name.name!r} is already an instance. Additional arguments are invalid")
        return name
    if isinstance(name, dict):
        return _create_registered(**name, **kwargs)
    if not isinstance(name, string_types):
        raise _UnknownMetricError(f"metric must be of string type, got {name!r}")
    if name.startswith("["):
        name, config = json.loads(name)
        return _create_registered(name, **config)
    if name.startswith("{"):
        return _create_registered(**json.loads(name))
    key = name.lower()
    if key not in _REGISTRY:
        raise _UnknownMetricError(
            f"{key} is not registered. Please register with metric.register first; "
            f"known metrics: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[key](*args, **kwargs)


def create(metric, *args, **kwargs):
    """Create a metric from a name, an instance, a list, a config, or a function.

    Parameters
    ----------
    metric : str, EvalMetric, list, dict or callable
        - a registered name (``'acc'``, ``'top_k_accuracy'``, ``'ce'`` ...), case-insensitive;
        - an :class:`EvalMetric`, returned as is;
        - a list of any of these, combined into a :class:`CompositeEvalMetric`;
        - a config dict (or its JSON text) as :meth:`EvalMetric.get_config` returns;
        - a function ``feval(label, pred)`` on numpy arrays, wrapped in :class:`CustomMetric`.
    *args, **kwargs
        Passed to the metric's constructor.

    Returns
    -------
    EvalMetric
    """
    if callable(metric) and not isinstance(metric, EvalMetric) and not isinstance(metric, type):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, list):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    return _create_registered(metric, *args, **kwargs)


@register
@alias("composite")
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together.

    Parameters
    ----------
    metrics : list, optional
        Child metrics (anything :func:`create` accepts).
    name : str, default 'composite'
    output_names, label_names : list of str, optional
        See :class:`EvalMetric`.
    """

    def __init__(self, metrics=None, name="composite", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.metrics = [create(m) for m in (metrics or [])]

    def add(self, metric):
        """Add a child metric (anything :func:`create` accepts)."""
        self.metrics.append(create(metric))

    def get_metric(self, index):
        """The child metric at ``index``."""
        try:
            return self.metrics[index]
        except IndexError:
            raise ValueError(f"Metric index {index} is out of range 0 and "
                             f"{len(self.metrics)}") from None

    def update_dict(self, labels, preds):  # pylint: disable=arguments-renamed
        if self.label_names is not None:
            labels = OrderedDict(i for i in labels.items() if i[0] in self.label_names)
        if self.output_names is not None:
            preds = OrderedDict(i for i in preds.items() if i[0] in self.output_names)
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels, preds):
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self):
        for metric in getattr(self, "metrics", ()):
            metric.reset()

    def reset_local(self):
        for metric in getattr(self, "metrics", ()):
            metric.reset_local()

    def _collect(self, getter):
        names, values = [], []
        for metric in self.metrics:
            name, value = getter(metric)
            names.extend([name] if isinstance(name, string_types) else name)
            values.extend([value] if isinstance(value, numeric_types) else value)
        return (names, values)

    def get(self):
        return self._collect(lambda m: m.get())

    def get_global(self):
        return self._collect(lambda m: m.get_global())

    def get_config(self):
        config = super().get_config()
        config["metrics"] = [m.get_config() for m in self.metrics]
        return config


# ---------------------------------------------------------------------------- classification
@register
@alias("acc")
class Accuracy(EvalMetric):
    """Classification accuracy: the fraction of predictions equal to the label.

    Predictions are class indices (same shape as the labels) or scores, reduced by argmax
    over ``axis``.

    Parameters
    ----------
    axis : int, default 1
        The class axis of score predictions.
    name : str, default 'accuracy'
    output_names, label_names : list of str, optional
    """

    def __init__(self, axis=1, name="accuracy", output_names=None, label_names=None):
        super().__init__(name, axis=axis, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.axis = axis

    def update(self, labels, preds):
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            # Counting on the prediction's own device saves a copy of the scores to host.
            p = _to_torch(pred)
            lab = _to_torch(label, p.device)
            if tuple(p.shape) != tuple(lab.shape):
                p = torch.argmax(p, dim=self.axis)
            # MXNet compares int32 casts (a float truncates toward zero); an integer array
            # already holds those values (argmax's int64 needs no cast)
            p = p.reshape(-1)
            if p.is_floating_point() or p.dtype is torch.bool:
                p = p.to(torch.int32)
            lab = lab.reshape(-1)
            if lab.is_floating_point() or lab.dtype is torch.bool:
                lab = lab.to(torch.int32)
            check_label_shapes(lab, p)
            correct = int((p == lab).sum())
            self._add(correct, p.numel())


@register
@alias("top_k_accuracy", "top_k_acc")
class TopKAccuracy(EvalMetric):
    """Top-k accuracy: a prediction counts when the label is among the k highest scores.

    Parameters
    ----------
    top_k : int, default 1
        Must be greater than 1 (use :class:`Accuracy` otherwise).
    name : str, default 'top_k_accuracy' (``'_<k>'`` is appended)
    output_names, label_names : list of str, optional
    """

    def __init__(self, top_k=1, name="top_k_accuracy", output_names=None, label_names=None):
        super().__init__(name, top_k=top_k, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.top_k = top_k
        if not self.top_k > 1:
            raise AssertionError("Please use Accuracy if top_k is no more than 1")
        self.name += f"_{self.top_k}"

    def update(self, labels, preds):
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            scores = _to_numpy(pred).astype("float32")
            if scores.ndim > 2:
                raise AssertionError("Predictions should be no more than 2 dims, got shape "
                                     f"{scores.shape}")
            # argpartition, as MXNet, so that ties resolve the same way.
            top = numpy.argpartition(scores, -self.top_k)
            lab = _to_numpy(label).astype("int32")
            check_label_shapes(lab, top)
            n = top.shape[0]
            if top.ndim == 1:
                correct = int((top.flat == lab.flat).sum())
            else:
                k_cls = top.shape[1]
                correct = 0
                for j in range(min(k_cls, self.top_k)):
                    correct += int((top[:, k_cls - 1 - j].flat == lab.flat).sum())
            self._add(correct, n)


class _BinaryStats:
    """True/false positive/negative counts, local and global, for binary classifiers."""

    _FIELDS = ("tp", "fp", "fn", "tn")

    def __init__(self):
        self.reset_stats()

    def update_binary_stats(self, label, pred):
        pred = _to_numpy(pred)
        label = _to_numpy(label).astype("int32")
        pred_label = numpy.argmax(pred, axis=1)
        check_label_shapes(label, pred)
        if len(numpy.unique(label)) > 2:
            raise ValueError(f"{self.owner} currently only supports binary classification; "
                             f"labels hold {len(numpy.unique(label))} classes")
        pred_pos = pred_label == 1
        label_pos = label == 1
        counts = {"tp": int((pred_pos & label_pos).sum()),
                  "fp": int((pred_pos & ~label_pos).sum()),
                  "fn": int((~pred_pos & label_pos).sum()),
                  "tn": int((~pred_pos & ~label_pos).sum())}
        for k, v in counts.items():
            self.local[k] += v
            self.glob[k] += v

    owner = "metric"

    @staticmethod
    def _precision(c):
        d = c["tp"] + c["fp"]
        return float(c["tp"]) / d if d > 0 else 0.0

    @staticmethod
    def _recall(c):
        d = c["tp"] + c["fn"]
        return float(c["tp"]) / d if d > 0 else 0.0

    @classmethod
    def _fscore(cls, c):
        p, r = cls._precision(c), cls._recall(c)
        return 2 * p * r / (p + r) if p + r > 0 else 0.0

    @staticmethod
    def _mcc(c):
        if not sum(c.values()):
            return 0.0
        tp, fp, fn, tn = (float(c[k]) for k in ("tp", "fp", "fn", "tn"))
        denom = 1.0
        # MXNet replaces zero factors by one so that a degenerate batch scores 0, not NaN.
        for t in (tp + fp, tp + fn, tn + fp, tn + fn):
            if t != 0.0:
                denom *= t
        return (tp * tn - fp * fn) / math.sqrt(denom)

    def score(self, use_global=False):
        return self._fscore(self.glob if use_global else self.local)

    # MXNet's names for the counts and scores (``F1().metrics.true_positives`` ...)
    true_positives = property(lambda self: self.local["tp"])
    false_positives = property(lambda self: self.local["fp"])
    false_negatives = property(lambda self: self.local["fn"])
    true_negatives = property(lambda self: self.local["tn"])
    global_true_positives = property(lambda self: self.glob["tp"])
    global_false_positives = property(lambda self: self.glob["fp"])
    global_false_negatives = property(lambda self: self.glob["fn"])
    global_true_negatives = property(lambda self: self.glob["tn"])
    precision = property(lambda self: self._precision(self.local))
    recall = property(lambda self: self._recall(self.local))
    fscore = property(lambda self: self._fscore(self.local))
    global_precision = property(lambda self: self._precision(self.glob))
    global_recall = property(lambda self: self._recall(self.glob))
    global_fscore = property(lambda self: self._fscore(self.glob))
    total_examples = property(lambda self: sum(self.local.values()))
    global_total_examples = property(lambda self: sum(self.glob.values()))

    def matthewscc(self, use_global=False):
        return self._mcc(self.glob if use_global else self.local)

    def total(self, use_global=False):
        return sum((self.glob if use_global else self.local).values())

    def local_reset_stats(self):
        self.local = dict.fromkeys(self._FIELDS, 0)

    def reset_stats(self):
        self.local_reset_stats()
        self.glob = dict.fromkeys(self._FIELDS, 0)


class _BinaryMetric(EvalMetric):
    """Shared machinery of F1 and MCC ('macro': mean of per-batch scores; 'micro': one score
    over all counts)."""

    def __init__(self, name, output_names, label_names, average):
        if average not in ("macro", "micro"):
            raise ValueError(f"average must be 'macro' or 'micro', got {average!r}")
        self.average = average
        self._stats = _BinaryStats()
        self._stats.owner = type(self).__name__
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def _score(self, use_global):
        raise NotImplementedError

    def update(self, labels, preds):
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            self._stats.update_binary_stats(label, pred)
        if self.average == "macro":
            self._add(self._score(False), 1)
            self._stats.reset_stats()
        else:
            self.num_inst = self._stats.total()
            self.global_num_inst = self._stats.total(True)
            self.sum_metric = self._score(False) * self.num_inst
            self.global_sum_metric = self._score(True) * self.global_num_inst

    def reset(self):
        super().reset()
        self._stats.reset_stats()

    def reset_local(self):
        super().reset_local()
        self._stats.local_reset_stats()


@register
class F1(_BinaryMetric):
    """F1 score (harmonic mean of precision and recall) of a binary classifier.

    Predictions are scores of shape (n, 2); class 1 is the positive class.

    Parameters
    ----------
    name : str, default 'f1'
    output_names, label_names : list of str, optional
    average : {'macro', 'micro'}, default 'macro'
        'macro' averages the per-batch scores; 'micro' computes one score over all batches.
    """

    def __init__(self, name="f1", output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average)

    @property
    def metrics(self):
        return self._stats

    def _score(self, use_global):
        return self._stats.score(use_global)


@register
class MCC(_BinaryMetric):
    """Matthews correlation coefficient of a binary classifier.

    Zero factors in the denominator are replaced by one, as in MXNet.

    Parameters
    ----------
    name : str, default 'mcc'
    output_names, label_names : list of str, optional
    average : {'macro', 'micro'}, default 'macro'
    """

    def __init__(self, name="mcc", output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average)

    def _score(self, use_global):
        return self._stats.matthewscc(use_global)


@register
class Perplexity(EvalMetric):
    """Perplexity: ``exp`` of the mean negative log-probability of the labels.

    Parameters
    ----------
    ignore_label : int or None
        Label value to leave out of the count (None keeps every entry).
    axis : int, default -1
        The class axis of the predictions.
    name : str, default 'perplexity'
    output_names, label_names : list of str, optional
    """

    def __init__(self, ignore_label, axis=-1, name="perplexity", output_names=None,
                 label_names=None):
        super().__init__(name, ignore_label=ignore_label, output_names=output_names,
                         label_names=label_names, has_global_stats=True)
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels, preds):
        labels, preds = _wrap(labels, preds)
        loss = 0.0
        num = 0
        for label, pred in zip(labels, preds):
            p = _to_torch(pred)
            lab = _to_torch(label, p.device)
            if p.dim() == 0 or lab.numel() * p.shape[-1] != p.numel():
                raise AssertionError(f"shape mismatch: {tuple(lab.shape)} vs. {tuple(p.shape)}")
            lab = lab.reshape(-1)
            scores = torch.movedim(p, self.axis, -1).reshape(-1, p.shape[self.axis])
            picked = scores.gather(1, lab.to(torch.int64).clamp(0, scores.shape[1] - 1)
                                   .unsqueeze(1)).squeeze(1)
            if self.ignore_label is not None:
                ignore = (lab == self.ignore_label).to(picked.dtype)
                num -= int(ignore.sum())
                picked = picked * (1 - ignore) + ignore
            loss -= float(torch.log(torch.clamp(picked, min=1e-10)).sum())
            num += picked.numel()
        self._add(loss, num)

    def get(self):
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.sum_metric / self.num_inst))

    def get_global(self):
        if self.global_num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.global_sum_metric / self.global_num_inst))


# ---------------------------------------------------------------------------- regression
def _as_columns(label, pred):
    label, pred = _to_numpy(label), _to_numpy(pred)
    if label.ndim == 1:
        label = label.reshape(label.shape[0], 1)
    if pred.ndim == 1:
        pred = pred.reshape(pred.shape[0], 1)
    return label, pred


class _Regression(EvalMetric):
    """Per-batch mean error, averaged over batches (as MXNet: each batch counts once)."""

    def __init__(self, name, output_names, label_names):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    @staticmethod
    def _batch(label, pred):
        raise NotImplementedError

    def update(self, labels, preds):
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            label, pred = _as_columns(label, pred)
            self._add(self._batch(label, pred), 1)


@register
class MAE(_Regression):
    """Mean absolute error.

    Parameters
    ----------
    name : str, default 'mae'
    output_names, label_names : list of str, optional
    """

    def __init__(self, name="mae", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _batch(label, pred):
        return numpy.abs(label - pred).mean()


@register
class MSE(_Regression):
    """Mean squared error.

    Parameters
    ----------
    name : str, default 'mse'
    output_names, label_names : list of str, optional
    """

    def __init__(self, name="mse", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _batch(label, pred):
        return ((label - pred) ** 2.0).mean()


@register
class RMSE(_Regression):
    """Root mean squared error (per batch, then averaged over batches).

    Parameters
    ----------
    name : str, default 'rmse'
    output_names, label_names : list of str, optional
    """

    def __init__(self, name="rmse", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _batch(label, pred):
        return numpy.sqrt(((label - pred) ** 2.0).mean())


class _LogLoss(EvalMetric):
    def __init__(self, eps, name, output_names, label_names):
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.eps = eps

    def update(self, labels, preds):
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            label = _to_numpy(label).ravel()
            pred = _to_numpy(pred)
            n = pred.shape[0]
            if label.shape[0] != n:
                raise AssertionError(f"{type(self).__name__}: {label.shape[0]} labels for "
                                     f"{n} predictions")
            prob = pred[numpy.arange(n, dtype=numpy.int64), numpy.int64(label)]
            self._add((-numpy.log(prob + self.eps)).sum(), n)


@register
@alias("ce")
class CrossEntropy(_LogLoss):
    """Cross entropy of predicted probabilities (not logits) and class labels.

    Parameters
    ----------
    eps : float, default 1e-12
        Added to the probabilities before the log.
    name : str, default 'cross-entropy'
    output_names, label_names : list of str, optional
    """

    def __init__(self, eps=1e-12, name="cross-entropy", output_names=None, label_names=None):
        super().__init__(eps, name, output_names, label_names)


@register
@alias("nll_loss")
class NegativeLogLikelihood(_LogLoss):
    """Negative log-likelihood of predicted probabilities and class labels.

    Parameters
    ----------
    eps : float, default 1e-12
    name : str, default 'nll-loss'
    output_names, label_names : list of str, optional
    """

    def __init__(self, eps=1e-12, name="nll-loss", output_names=None, label_names=None):
        super().__init__(eps, name, output_names, label_names)


@register
@alias("pearsonr")
class PearsonCorrelation(EvalMetric):
    """Pearson correlation between predictions and labels.

    Parameters
    ----------
    name : str, default 'pearsonr'
    output_names, label_names : list of str, optional
    average : {'macro', 'micro'}, default 'macro'
        'macro' averages per-batch correlations; 'micro' computes one correlation over all
        values seen, with Welford's online updates.
    """

    def __init__(self, name="pearsonr", output_names=None, label_names=None, average="macro"):
        if average not in ("macro", "micro"):
            raise ValueError(f"average must be 'macro' or 'micro', got {average!r}")
        self.average = average
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def reset_micro(self):
        """Clear the running moments of the 'micro' average."""
        # (count, mean, sum of squared deviations) of labels and of predictions, and the
        # running co-moment of the two.
        self._lab = (0, 0.0, 0.0)
        self._prd = (0, 0.0, 0.0)
        self._comoment = 0.0

    def reset(self):
        super().reset()
        if self.average == "micro":
            self.reset_micro()

    @staticmethod
    def update_variance(new_values, *aggregate):
        """Welford's update of ``(count, mean, m2)`` with a batch of values.

        The mean moves once per batch by the sum of the deviations over the new count (as
        MXNet does), and m2 grows by the products of old and new deviations.
        """
        count, mean, m_2 = aggregate
        count = count + len(new_values)
        before = new_values - mean
        mean = mean + numpy.sum(before / count)
        m_2 = m_2 + numpy.sum(before * (new_values - mean))
        return count, mean, m_2

    def update_cov(self, label, pred):
        """Add a batch to the co-moment; the label mean is already updated, the prediction
        mean not yet (MXNet's order)."""
        self._comoment += numpy.sum((label - self._lab[1]) * (pred - self._prd[1]))

    def update(self, labels, preds):
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            check_label_shapes(label, pred, False, True)
            label = _to_numpy(label).ravel().astype(numpy.float64)
            pred = _to_numpy(pred).ravel().astype(numpy.float64)
            if self.average == "macro":
                self._add(numpy.corrcoef(pred, label)[0, 1], 1)
                continue
            self.num_inst += 1
            self.global_num_inst += 1
            self._lab = self.update_variance(label, *self._lab)
            self.update_cov(label, pred)
            self._prd = self.update_variance(pred, *self._prd)

    def _micro(self):
        n = self._lab[0]
        std_l = numpy.sqrt(self._lab[2] / (n - 1))
        std_p = numpy.sqrt(self._prd[2] / (n - 1))
        return self._comoment / ((n - 1) * std_p * std_l)

    def get(self):
        if self.num_inst == 0:
            return (self.name, float("nan"))
        if self.average == "macro":
            return (self.name, self.sum_metric / self.num_inst)
        return (self.name, self._micro())

    def get_global(self):
        if self.average == "macro":
            return super().get_global()
        # The running moments are never reset locally, so they already are the global value.
        # (MXNet 1.9.1 reports 0.0 here, a bug.)
        if self.global_num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, self._micro())


@register
class PCC(EvalMetric):
    """Multiclass generalisation of the Matthews correlation coefficient, from a confusion
    matrix that grows with the classes seen.

    Parameters
    ----------
    name : str, default 'pcc'
    output_names, label_names : list of str, optional
    has_global_stats : bool, default True
    """

    def __init__(self, name="pcc", output_names=None, label_names=None, has_global_stats=True):
        self.k = 2
        super().__init__(name=name, output_names=output_names, label_names=label_names,
                         has_global_stats=has_global_stats)

    def _grow(self, inc):
        self.lcm = numpy.pad(self.lcm, ((0, inc), (0, inc)), "constant")
        self.gcm = numpy.pad(self.gcm, ((0, inc), (0, inc)), "constant")
        self.k += inc

    @staticmethod
    def _calc_mcc(cmat):
        n = cmat.sum()
        x = cmat.sum(axis=1)
        y = cmat.sum(axis=0)
        cov_xx = numpy.sum(x * (n - x))
        cov_yy = numpy.sum(y * (n - y))
        if cov_xx == 0 or cov_yy == 0:
            return float("nan")
        cov_xy = numpy.sum(cmat.diagonal() * n - x * y)
        return cov_xy / (cov_xx * cov_yy) ** 0.5

    def update(self, labels, preds):
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            label = _to_numpy(label).astype("int32")
            pred = _to_numpy(pred)
            pred = pred.argmax(axis=1) if pred.shape != label.shape else pred.astype("int32")
            n = max(pred.max(), label.max())
            if n >= self.k:
                self._grow(int(n) + 1 - self.k)
            bcm = numpy.zeros((self.k, self.k))
            numpy.add.at(bcm, (pred.ravel(), label.ravel()), 1)
            self.lcm += bcm
            self.gcm += bcm
        self.num_inst += 1
        self.global_num_inst += 1

    @property
    def sum_metric(self):
        return self._calc_mcc(self.lcm) * self.num_inst

    @sum_metric.setter
    def sum_metric(self, value):
        pass  # derived from the confusion matrix

    @property
    def global_sum_metric(self):
        return self._calc_mcc(self.gcm) * self.global_num_inst

    @global_sum_metric.setter
    def global_sum_metric(self, value):
        pass

    def reset(self):
        self.global_num_inst = 0
        self.gcm = numpy.zeros((self.k, self.k))
        self.reset_local()

    def reset_local(self):
        self.num_inst = 0
        self.lcm = numpy.zeros((self.k, self.k))


@register
class Loss(EvalMetric):
    """Mean of loss values: ``update(_, losses)`` averages every element of ``losses``.

    Parameters
    ----------
    name : str, default 'loss'
    output_names, label_names : list of str, optional
    """

    def __init__(self, name="loss", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, _, preds):
        if isinstance(preds, _ARRAY_TYPES):
            preds = [preds]
        for pred in preds:
            t = _to_torch(pred)
            self._add(float(t.sum()), t.numel())


@register
class Torch(Loss):
    """Loss metric under the name 'torch' (kept for MXNet compatibility)."""

    def __init__(self, name="torch", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
class Caffe(Loss):
    """Loss metric under the name 'caffe' (kept for MXNet compatibility)."""

    def __init__(self, name="caffe", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
class CustomMetric(EvalMetric):
    """A metric computed by a function of numpy arrays.

    Parameters
    ----------
    feval : callable
        ``feval(label, pred)`` returning either a number (averaged over calls) or a tuple
        ``(sum_metric, num_inst)``.
    name : str, optional
        Defaults to the function's name (``'custom(<lambda>)'`` for a lambda).
    allow_extra_outputs : bool, default False
        Allow more predictions than labels (e.g. RNN states among the outputs).
    output_names, label_names : list of str, optional
    """

    def __init__(self, feval, name=None, allow_extra_outputs=False, output_names=None,
                 label_names=None):
        if name is None:
            name = getattr(feval, "__name__", type(feval).__name__)
            if "<" in name:
                name = f"custom({name})"
        super().__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs,
                         output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels, preds):
        if isinstance(labels, _ARRAY_TYPES):
            labels = [labels]
        if isinstance(preds, _ARRAY_TYPES):
            preds = [preds]
        if not self._allow_extra_outputs:
            labels, preds = check_label_shapes(labels, preds)
        for pred, label in zip(preds, labels):
            reval = self._feval(_to_numpy(label), _to_numpy(pred))
            if isinstance(reval, tuple):
                self._add(reval[0], reval[1])
            else:
                self._add(reval, 1)

    def get_config(self):
        raise NotImplementedError("CustomMetric cannot be serialized")


def np(numpy_feval, name=None, allow_extra_outputs=False):  # pylint: disable=invalid-name
    """Make a :class:`CustomMetric` from a function of numpy arrays.

    Parameters
    ----------
    numpy_feval : callable
        ``numpy_feval(label, pred)`` returning a number or ``(sum_metric, num_inst)``.
    name : str, optional
        Defaults to the function's name.
    allow_extra_outputs : bool, default False

    Returns
    -------
    CustomMetric
    """
    def feval(label, pred):
        return numpy_feval(label, pred)
    feval.__name__ = getattr(numpy_feval, "__name__", "feval")
    return CustomMetric(feval, name, allow_extra_outputs)


# Names MXNet 1.9.1's module of the same path exposes (programs import them from here).
from . import ndarray, registry  # noqa: E402,F401
