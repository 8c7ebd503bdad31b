"""GluonTS 0.14 MXNet models trained and evaluated on MXNet 1.9.1 or on neogluon (issue 31).

Usage (one process per model and seed; the same file runs on both sides, unchanged):
    OMP_NUM_THREADS=1 MXNET_CPU_WORKER_NTHREADS=1 /tmp/gtsref/bin/python \\
        bench/gluonts_models.py --data DATA.jsonl --model deepar --seed 1 [--json out.json]
    OMP_NUM_THREADS=1 /tmp/gtsng/bin/python -m neogluon.run \\
        bench/gluonts_models.py --data DATA.jsonl --model deepar --seed 1
    python bench/gluonts_models.py --driver --data DATA.jsonl --seeds 1,2,3 \\
        --ref-python /tmp/gtsref/bin/python --ng-python /tmp/gtsng/bin/python --out runs.json
    python bench/gluonts_models.py --table runs.json more_runs.json

DATA.jsonl comes from bench/gluonts_data.py (written once, read by both sides). Each run
seeds numpy, Python's random and mx.random, trains ``--epochs`` epochs of
``--batches`` batches (Trainer(hybridize=True), GluonTS's default), forecasts the last
``prediction_length`` points of every series and scores them with gluonts.evaluation's
Evaluator (MASE, sMAPE, mean_wQuantileLoss). Seconds per epoch are taken by a GluonTS
trainer Callback (epoch start to epoch end: the data pipeline, forward, backward and
update); the first epoch (it contains the first forward and hybridization) is reported
apart from the median of the others. The driver alternates MXNet and neogluon runs for each
model and seed and prints a table of accuracy (mean and range over seeds, per side) and
the per-seed s/epoch ratio MXNet / neogluon (> 1: neogluon faster).
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

MODELS = ("deepar", "simplefeedforward", "mqcnn", "nbeats")
PRED = 24


def build(name, freq, trainer):
    if name == "deepar":
        from gluonts.mx import DeepAREstimator
        return DeepAREstimator(freq=freq, prediction_length=PRED, context_length=2 * PRED,
                               num_layers=2, num_cells=40, trainer=trainer, batch_size=32)
    if name == "simplefeedforward":
        from gluonts.mx import SimpleFeedForwardEstimator
        return SimpleFeedForwardEstimator(prediction_length=PRED, context_length=2 * PRED,
                                          num_hidden_dimensions=[40, 40], trainer=trainer,
                                          batch_size=32)
    if name == "mqcnn":
        from gluonts.mx import MQCNNEstimator
        return MQCNNEstimator(freq=freq, prediction_length=PRED, context_length=4 * PRED,
                              trainer=trainer, batch_size=32)
    if name == "nbeats":
        from gluonts.mx import NBEATSEstimator
        return NBEATSEstimator(freq=freq, prediction_length=PRED, context_length=2 * PRED,
                               num_stacks=6, widths=[256], trainer=trainer, batch_size=32)
    raise SystemExit("unknown model %r" % name)


def run_one(a):
    import numpy as np
    import mxnet as mx
    from gluonts.dataset.common import ListDataset
    from gluonts.evaluation import Evaluator, make_evaluation_predictions
    from gluonts.mx.trainer import Trainer
    from gluonts.mx.trainer.callback import Callback

    class EpochTimer(Callback):
        def __init__(self):
            self.t0, self.times = None, []

        def on_train_epoch_start(self, training_network):
            self.t0 = time.perf_counter()

        def on_train_epoch_end(self, epoch_no, epoch_loss, training_network, trainer):
            self.times.append(time.perf_counter() - self.t0)
            self.last_loss = float(epoch_loss)
            return True

    with open(a.data) as f:
        rows = [json.loads(line) for line in f]
    freq = a.freq
    full = ListDataset([{"start": r["start"], "target": r["target"]} for r in rows], freq=freq)
    train = ListDataset([{"start": r["start"], "target": r["target"][:-PRED]} for r in rows],
                        freq=freq)
    random.seed(a.seed)
    np.random.seed(a.seed)
    mx.random.seed(a.seed)
    timer = EpochTimer()
    trainer = Trainer(epochs=a.epochs, num_batches_per_epoch=a.batches, learning_rate=1e-3,
                      callbacks=[timer], hybridize=True)
    est = build(a.model, freq, trainer)
    t0 = time.perf_counter()
    predictor = est.train(train)
    train_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    fit, tss = make_evaluation_predictions(full, predictor=predictor, num_samples=100)
    fcs, tss = list(fit), list(tss)
    predict_s = time.perf_counter() - t0
    agg, _ = Evaluator(quantiles=(0.1, 0.5, 0.9), num_workers=None)(tss, fcs)
    res = {"model": a.model, "seed": a.seed, "mxnet": getattr(mx, "__file__", ""),
           "neogluon": "neogluon" in str(getattr(mx, "__file__", "")) or hasattr(mx, "_neogluon_alias")
           or "neogluon" in sys.modules,
           "epoch_s": timer.times, "first_epoch_s": timer.times[0],
           "epoch_s_median": statistics.median(timer.times[1:] or timer.times),
           "train_s": train_s, "predict_s": predict_s, "final_loss": timer.last_loss,
           "MASE": agg["MASE"], "sMAPE": agg["sMAPE"],
           "mean_wQuantileLoss": agg["mean_wQuantileLoss"]}
    out = json.dumps(res)
    print(out, flush=True)
    if a.json:
        with open(a.json, "w") as f:
            f.write(out)


def driver(a):
    here = os.path.abspath(__file__)
    root = os.path.dirname(os.path.dirname(here))
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads), MKL_NUM_THREADS=str(a.threads),
               MXNET_CPU_WORKER_NTHREADS=str(a.threads), TQDM_DISABLE="1")
    ng_env = dict(env, PYTHONPATH=(a.ng_path or root) + os.pathsep + env.get("PYTHONPATH", ""))
    sides = {"mxnet": ([a.ref_python, here], env),
             "neogluon": ([a.ng_python, "-m", "neogluon.run", here], ng_env)}
    models = a.models.split(",")
    seeds = [int(s) for s in a.seeds.split(",")]
    results = []
    for model in models:
        for i, seed in enumerate(seeds):
            order = ["mxnet", "neogluon"] if i % 2 == 0 else ["neogluon", "mxnet"]
            for side in order:
                cmd, e = sides[side]
                args = cmd + ["--data", a.data, "--model", model, "--seed", str(seed),
                              "--epochs", str(a.epochs), "--batches", str(a.batches),
                              "--freq", a.freq]
                p = subprocess.run(args, env=e, capture_output=True, text=True)
                line = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
                if p.returncode or not line:
                    r = {"model": model, "seed": seed, "side": side, "error":
                         (p.stderr or p.stdout)[-3000:]}
                    print("FAILED %s %s seed %d:\n%s" % (side, model, seed, r["error"]),
                          file=sys.stderr, flush=True)
                else:
                    r = json.loads(line[-1])
                    r["side"] = side
                    print("%-9s %-18s seed %d  %.3f s/epoch (first %.2f)  MASE %.4f  "
                          "sMAPE %.4f  wQL %.4f" % (side, model, seed, r["epoch_s_median"],
                                                     r["first_epoch_s"], r["MASE"],
                                                     r["sMAPE"], r["mean_wQuantileLoss"]),
                          flush=True)
                results.append(r)
                if a.out:
                    with open(a.out, "w") as f:
                        json.dump(results, f, indent=1)
    print()
    print(table(results, models))


def table(results, models):
    def ok(side, model):
        return [r for r in results if r.get("side") == side and r["model"] == model
                and "error" not in r]

    def span(vals, fmt="%.3f"):
        if not vals:
            return "failed"
        return (fmt + " (" + fmt + "-" + fmt + ")") % (statistics.mean(vals), min(vals),
                                                         max(vals))

    lines = ["| model | metric | MXNet 1.9.1 mean (min-max) | neogluon mean (min-max) |",
             "| --- | --- | --- | --- |"]
    for m in models:
        for key in ("MASE", "sMAPE", "mean_wQuantileLoss", "final_loss"):
            lines.append("| %s | %s | %s | %s |" % (m, key, span([r[key] for r in ok("mxnet", m)]),
                                                   span([r[key] for r in ok("neogluon", m)])))
    lines += ["", "| model | MXNet s/epoch | neogluon s/epoch | ratio MXNet / neogluon per seed"
              " (median) | first epoch MXNet / neogluon s | predict MXNet / neogluon s |",
              "| --- | ---: | ---: | --- | --- | --- |"]
    for m in models:
        mx_, ng = ok("mxnet", m), ok("neogluon", m)
        if not mx_ or not ng:
            lines.append("| %s | - | - | failed | - | - |" % m)
            continue
        by = {r["seed"]: r for r in ng}
        ratios = [r["epoch_s_median"] / by[r["seed"]]["epoch_s_median"] for r in mx_
                  if r["seed"] in by]
        lines.append("| %s | %.3f | %.3f | %s (%.2fx) | %.2f / %.2f | %.2f / %.2f |" % (
            m, statistics.median(r["epoch_s_median"] for r in mx_),
            statistics.median(r["epoch_s_median"] for r in ng),
            ", ".join("%.2fx" % x for x in ratios), statistics.median(ratios),
            statistics.median(r["first_epoch_s"] for r in mx_),
            statistics.median(r["first_epoch_s"] for r in ng),
            statistics.median(r["predict_s"] for r in mx_),
            statistics.median(r["predict_s"] for r in ng)))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--model", default="deepar", choices=MODELS)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batches", type=int, default=50)
    ap.add_argument("--freq", default="H")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json")
    ap.add_argument("--out", help="driver: write all runs' JSON here")
    ap.add_argument("--driver", action="store_true")
    ap.add_argument("--table", nargs="+", metavar="RUNS.json",
                    help="print the tables for the runs saved by one or more --out files")
    ap.add_argument("--ref-python", default="/tmp/gtsref/bin/python")
    ap.add_argument("--ng-python", default="/tmp/gtsng/bin/python")
    ap.add_argument("--ng-path", help="driver: directory holding the neogluon package "
                    "(default: this checkout)")
    a = ap.parse_args()
    if a.table:
        runs = []
        for path in a.table:
            with open(path) as f:
                runs += json.load(f)
        models = [m for m in MODELS if any(r["model"] == m for r in runs)]
        print(table(runs, models))
    elif a.driver:
        driver(a)
    else:
        run_one(a)


if __name__ == "__main__":
    main()
