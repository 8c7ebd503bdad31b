"""Helpers shared by the Estimator and its event handlers."""
from ....metric import Accuracy, CompositeEvalMetric, EvalMetric


def _check_metrics(metrics):
    """Flatten ``metrics`` (a metric, a composite or a list) into a list of metrics."""
    if isinstance(metrics, CompositeEvalMetric):
        return [m for child in metrics.metrics for m in _check_metrics(child)]
    if isinstance(metrics, EvalMetric):
        return [metrics]
    metrics = list(metrics or [])
    bad = [m for m in metrics if not isinstance(m, EvalMetric)]
    if bad:
        raise ValueError("metrics must be a Metric or a list of Metric, refer to "
                         f"mxnet.metric.EvalMetric: got {bad!r}")
    return metrics


def _check_metric_known(handler, metric, known_metrics):
    if metric not in known_metrics:
        raise ValueError(
            f"Event handler {type(handler).__name__} refers to a metric instance {metric} "
            "outside of the known training and validation metrics. Please use the metrics "
            "from estimator.train_metrics and estimator.val_metrics instead.")


def _check_handler_metric_ref(handler, known_metrics):
    # Handlers hold metrics in attributes whose names contain 'metric' (MXNet's convention).
    for attribute in dir(handler):
        if "metric" not in attribute:
            continue
        reference = getattr(handler, attribute)
        if not reference or callable(reference):
            continue
        if isinstance(reference, list):
            for metric in reference:
                _check_metric_known(handler, metric, known_metrics)
        elif isinstance(reference, EvalMetric):
            _check_metric_known(handler, reference, known_metrics)


def _suggest_metric_for_loss(loss):
    from ...loss import SoftmaxCrossEntropyLoss
    if isinstance(loss, SoftmaxCrossEntropyLoss):
        return Accuracy()
    return None


# Names MXNet 1.9.1's module of the same path exposes (programs import them from here).
from ...loss import SoftmaxCrossEntropyLoss  # noqa: E402,F401
