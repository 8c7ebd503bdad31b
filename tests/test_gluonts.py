"""GluonTS 0.14's MXNet models through the ``mxnet`` alias (issue 31).

Skips unless ``gluonts`` is importable (``pip install --no-deps gluonts==0.14.4`` plus
``toolz~=0.10``, ``pydantic<2``, ``pandas<2.2``, ``tqdm``; see docs/ecosystem.md). Trains a
tiny SimpleFeedForward and a tiny DeepAR for one epoch of a few batches, hybridized as
GluonTS's Trainer does by default, forecasts and evaluates, in a subprocess started with
``python -m neogluon.run``; the hybridized networks must be captured (no "could not capture"
fallback) and the loss must be finite. The accuracy / speed comparison with MXNet 1.9.1 is
bench/gluonts_models.py (bench/RESULTS.md).
"""
import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

pytestmark = pytest.mark.skipif(importlib.util.find_spec("gluonts") is None,
                                reason="gluonts is not installed")

PROG = """
import json, math, warnings
import numpy as np
import mxnet as mx
import neogluon
assert mx.nd is neogluon.nd
from gluonts.dataset.common import ListDataset
from gluonts.evaluation import Evaluator, make_evaluation_predictions
from gluonts.mx import DeepAREstimator, SimpleFeedForwardEstimator
from gluonts.mx.trainer import Trainer

rs = np.random.RandomState(0)
t = np.arange(120)
data = [{"start": "2021-01-01 00:00:00",
         "target": (10 + 3 * np.sin(2 * np.pi * t / 24 + i) + rs.randn(120)).tolist()}
        for i in range(8)]
full = ListDataset(data, freq="H")
train = ListDataset([dict(d, target=d["target"][:-12]) for d in data], freq="H")
mx.random.seed(0)
np.random.seed(0)
out = {}
for name, est in [
        ("sff", SimpleFeedForwardEstimator(prediction_length=12, context_length=24,
                                           num_hidden_dimensions=[8],
                                           trainer=Trainer(epochs=1, num_batches_per_epoch=3))),
        ("deepar", DeepAREstimator(freq="H", prediction_length=12, context_length=12,
                                   num_layers=1, num_cells=8, batch_size=8,
                                   trainer=Trainer(epochs=1, num_batches_per_epoch=2)))]:
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        predictor = est.train(train)
    fallback = [str(i.message) for i in w if "could not capture" in str(i.message)]
    fit, tss = make_evaluation_predictions(full, predictor=predictor, num_samples=20)
    agg, _ = Evaluator(quantiles=(0.5,), num_workers=None)(list(tss), list(fit))
    out[name] = {"fallback": fallback, "MASE": agg["MASE"]}
print("RESULT " + json.dumps(out))
"""


def test_gluonts_models_train_and_forecast(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(PROG))
    env = dict(os.environ, PYTHONPATH=REPO, OMP_NUM_THREADS="1")
    env.pop("NEOGLUON_SHADOW_MXNET", None)
    r = subprocess.run([sys.executable, "-m", "neogluon.run", str(script)], capture_output=True,
                       text=True, cwd=str(tmp_path), env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-4000:]
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
    assert line, r.stdout[-2000:] + r.stderr[-2000:]
    import json
    res = json.loads(line[-1][len("RESULT "):])
    for name, v in res.items():
        assert not v["fallback"], (name, v["fallback"])
        assert v["MASE"] == v["MASE"] and 0 < v["MASE"] < 50, (name, v)
