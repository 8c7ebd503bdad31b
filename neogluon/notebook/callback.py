"""``mx.notebook.callback``: training metrics into pandas DataFrames (``PandasLogger``) and
live bokeh charts of them, as MXNet 1.9.1's notebook callbacks.

pandas and bokeh are optional: the module imports without them (``pd`` is then the
placeholder class ``Pandas_Failed_To_Import``, as in MXNet; the class is defined either
way) and ``PandasLogger`` / the charts raise MXNetError naming the missing
package when created.

Two MXNet bugs are not kept: MXNet's ``PandasLogger`` swaps ``batches_per_sec`` and
``records_per_sec`` (it writes the record rate under the batch name), and its ``epoch_cb``
takes no argument although ``fit`` calls an epoch-end callback with ``(epoch, symbol,
arg_params, aux_params)``, so ``callback_args()`` fails in ``fit`` at the first epoch end.
Here the rates are under their names and ``epoch_cb`` takes (and ignores) those arguments.
The bokeh charts (``LiveBokehChart``, ``LiveTimeSeries``, ``LiveLearningCurve``) are not
provided: they raise MXNetError; plot ``PandasLogger``'s frames with matplotlib instead.
"""
import datetime
import time
from collections import defaultdict

from ..base import MXNetError


class Pandas_Failed_To_Import:  # noqa: N801  (MXNet's name)
    """The placeholder that stands for the pandas package (``pd``) when it is not installed.
    MXNet 1.9.1 defines it only then; here it always exists, and ``pd`` is it exactly when
    pandas is missing."""


try:
    import pandas as pd
except ImportError:
    pd = Pandas_Failed_To_Import


def _need_pandas(what):
    if pd.__name__ != "pandas":
        raise MXNetError(f"{what} needs the pandas package, which is not installed "
                         "(pip install pandas)")


class PandasLogger:
    """Logs training statistics into three pandas DataFrames: ``train`` (every ``frequent``
    batches), ``eval`` (each validation pass) and ``epoch`` (timings).

    Parameters
    ----------
    batch_size : int
        Records per batch (for ``records_per_sec``).
    frequent : int
        Batches between two rows of the train frame (default 50).
    """

    def __init__(self, batch_size, frequent=50):
        _need_pandas("PandasLogger")
        if not isinstance(batch_size, int) or batch_size <= 0:
            raise MXNetError(f"PandasLogger: batch_size must be a positive int, got "
                             f"{batch_size!r}")
        if not isinstance(frequent, int) or frequent <= 0:
            raise MXNetError(f"PandasLogger: frequent must be a positive int, got {frequent!r}")
        self.batch_size = batch_size
        self.frequent = frequent
        self._dataframes = {"train": pd.DataFrame(), "eval": pd.DataFrame(),
                            "epoch": pd.DataFrame()}
        self.last_time = time.time()
        self.start_time = datetime.datetime.now()
        self.last_epoch_time = self.start_time

    @property
    def train_df(self):
        """Training metrics, one row every ``frequent`` batches."""
        return self._dataframes["train"]

    @property
    def eval_df(self):
        """Validation metrics, one row per evaluation."""
        return self._dataframes["eval"]

    @property
    def epoch_df(self):
        """Elapsed time and epoch duration, one row per epoch."""
        return self._dataframes["epoch"]

    @property
    def all_dataframes(self):
        """``{'train': ..., 'eval': ..., 'epoch': ...}``."""
        return self._dataframes

    def elapsed(self):
        """Time since the logger was made (a ``datetime.timedelta``)."""
        return datetime.datetime.now() - self.start_time

    def append_metrics(self, metrics, df_name):
        """Add one row (a dict of column -> value) to the frame ``df_name``; new keys become
        new columns."""
        if df_name not in self._dataframes:
            raise MXNetError(f"PandasLogger.append_metrics: no dataframe {df_name!r}; "
                             f"expected one of {sorted(self._dataframes)}")
        frame = self._dataframes[df_name]
        for col in metrics:
            if col not in frame.columns:
                frame[col] = None
        frame.loc[len(frame)] = {c: metrics.get(c) for c in frame.columns}

    def train_cb(self, param):
        """Batch-end callback of ``fit``: a train row every ``frequent`` batches."""
        if param.nbatch % self.frequent == 0:
            self._process_batch(param, "train")

    def eval_cb(self, param):
        """Evaluation-end callback of ``fit``: an eval row."""
        self._process_batch(param, "eval")

    def _process_batch(self, param, df_name):
        now = time.time()
        metrics = {}
        if param.eval_metric is not None:
            metrics = dict(param.eval_metric.get_name_value())
            param.eval_metric.reset()
        spent = now - self.last_time
        batches = self.frequent / spent if spent > 0 else float("inf")
        metrics["batches_per_sec"] = batches
        metrics["records_per_sec"] = batches * self.batch_size
        metrics["elapsed"] = self.elapsed()
        metrics["minibatch_count"] = param.nbatch
        metrics["epoch"] = param.epoch
        self.append_metrics(metrics, df_name)
        self.last_time = now

    def epoch_cb(self, *args):
        """Epoch-end callback of ``fit`` (its arguments are not used): elapsed time and the
        epoch's duration."""
        now = datetime.datetime.now()
        self.append_metrics({"elapsed": self.elapsed(),
                             "epoch_time": now - self.last_epoch_time}, "epoch")
        self.last_epoch_time = now

    def callback_args(self):
        """Keyword arguments for ``fit`` that install the three callbacks."""
        return {"batch_end_callback": self.train_cb, "eval_end_callback": self.eval_cb,
                "epoch_end_callback": self.epoch_cb}


class LiveBokehChart:
    """MXNet's live bokeh chart of a ``PandasLogger`` metric in a notebook: not provided."""

    def __init__(self, *args, **kwargs):
        raise MXNetError(
            f"{type(self).__name__}: neogluon does not provide MXNet's live bokeh charts "
            "(they drive a notebook's bokeh session); log with mx.notebook.callback."
            "PandasLogger and plot its train_df/eval_df with matplotlib or pandas' .plot()")


class LiveTimeSeries(LiveBokehChart):
    """MXNet's live bokeh time series: not provided (see ``LiveBokehChart``)."""


class LiveLearningCurve(LiveBokehChart):
    """MXNet's live bokeh learning curve: not provided (see ``LiveBokehChart``)."""


def args_wrapper(*args):
    """``fit`` keyword arguments gathering the callbacks of several callback objects (each
    with ``callback_args()``): ``{'batch_end_callback': [cb1, cb2], ...}``."""
    out = defaultdict(list)
    for obj in args:
        if not hasattr(obj, "callback_args"):
            raise MXNetError(f"args_wrapper: {obj!r} has no callback_args()")
        for key, value in obj.callback_args().items():
            out[key].append(value)
    return dict(out)
