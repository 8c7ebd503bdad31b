"""mx.notebook.callback: PandasLogger's frames filled by Module.fit's callbacks, args_wrapper,
and the bokeh charts refusing with a reason."""
import numpy as np
import pytest

import neogluon as mx
from neogluon.base import MXNetError

pd = pytest.importorskip("pandas")


def _fit(logger, epochs=2):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 5)).astype("float32")
    y = (x[:, 0] > 0).astype("float32")
    train = mx.io.NDArrayIter(x, y, batch_size=8, label_name="softmax_label")
    val = mx.io.NDArrayIter(x[:16], y[:16], batch_size=8, label_name="softmax_label")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2),
                               name="softmax")
    mod = mx.mod.Module(net, context=mx.cpu())
    mod.fit(train, eval_data=val, num_epoch=epochs, optimizer_params={"learning_rate": 0.1},
            **mx.notebook.callback.args_wrapper(logger))


def test_pandas_logger_fills_its_frames_from_fit():
    logger = mx.notebook.callback.PandasLogger(batch_size=8, frequent=4)
    _fit(logger)
    train, ev, epoch = logger.train_df, logger.eval_df, logger.epoch_df
    # 8 batches an epoch, a row at batches 0 and 4, two epochs
    assert list(train["minibatch_count"]) == [0, 4, 0, 4]
    assert list(train["epoch"]) == [0, 0, 1, 1]
    assert {"accuracy", "batches_per_sec", "records_per_sec", "elapsed"} <= set(train.columns)
    rates = train["records_per_sec"] / train["batches_per_sec"]
    assert np.allclose(rates.astype(float), 8.0)
    assert len(ev) == 2 and ev["accuracy"].between(0, 1).all()
    assert len(epoch) == 2 and {"elapsed", "epoch_time"} <= set(epoch.columns)
    assert set(logger.all_dataframes) == {"train", "eval", "epoch"}


def test_args_wrapper_and_refusals():
    a = mx.notebook.callback.PandasLogger(4)
    b = mx.notebook.callback.PandasLogger(4)
    args = mx.notebook.callback.args_wrapper(a, b)
    assert args["batch_end_callback"] == [a.train_cb, b.train_cb]
    with pytest.raises(MXNetError, match="callback_args"):
        mx.notebook.callback.args_wrapper(object())
    with pytest.raises(MXNetError, match="batch_size"):
        mx.notebook.callback.PandasLogger(0)
    with pytest.raises(MXNetError, match="no dataframe"):
        a.append_metrics({"x": 1}, "test")
    for cls in (mx.notebook.callback.LiveLearningCurve, mx.notebook.callback.LiveTimeSeries):
        with pytest.raises(MXNetError, match="bokeh"):
            cls("accuracy")


def test_pandas_placeholder_class():
    """MXNet's ``Pandas_Failed_To_Import``: the class ``pd`` is bound to when pandas does not
    import (reloaded here with pandas hidden); with pandas, ``pd`` is pandas."""
    import importlib
    import sys
    cb = mx.notebook.callback
    assert isinstance(cb.Pandas_Failed_To_Import, type)
    pandas = pytest.importorskip("pandas")
    assert cb.pd is pandas
    saved = sys.modules.get("pandas")
    sys.modules["pandas"] = None      # import pandas -> ImportError
    try:
        importlib.reload(cb)
        assert cb.pd is cb.Pandas_Failed_To_Import
        with pytest.raises(MXNetError, match="pandas"):
            cb.PandasLogger(batch_size=4)
    finally:
        sys.modules["pandas"] = saved
        importlib.reload(cb)
    assert cb.pd is pandas
