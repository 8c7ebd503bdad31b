"""The Fit API: ``gluon.contrib.estimator.Estimator`` with event handlers.

Trains a small MLP on scikit-learn's digits with ``Estimator.fit``: validation every epoch,
a tqdm progress bar, checkpoints that a second run resumes from, and early stopping on the
validation accuracy. Run it twice with the same ``--dir`` to see it resume.

Run: ``python examples/estimator_fit.py [--dir est_ckpt] [--epochs 8]``
"""
import argparse
import tempfile

import neogluon as mx
from neogluon import gluon
from neogluon.gluon.contrib.estimator import (CheckpointHandler, EarlyStoppingHandler,
                                               Estimator, LoggingHandler)


def loaders(batch_size=64):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    d = load_digits()
    x = (d.data / 16.0).astype("float32")
    y = d.target.astype("float32")
    xtr, xva, ytr, yva = train_test_split(x, y, test_size=0.2, random_state=0, stratify=y)
    train = gluon.data.DataLoader(gluon.data.ArrayDataset(xtr, ytr), batch_size=batch_size,
                                  shuffle=True)
    val = gluon.data.DataLoader(gluon.data.ArrayDataset(xva, yva), batch_size=256)
    return train, val


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", default=None, help="checkpoint folder (default: a new temp folder)")
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    folder = args.dir or tempfile.mkdtemp(prefix="neogluon_est_")

    mx.random.seed(0)
    net = gluon.nn.HybridSequential(prefix="mlp_")
    with net.name_scope():
        net.add(gluon.nn.Dense(128, activation="relu"), gluon.nn.Dense(10))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.005})
    est = Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(),
                    train_metrics=mx.metric.Accuracy(), trainer=trainer)

    val_acc = est.val_metrics[0]          # 'validation accuracy'
    handlers = [
        LoggingHandler(metrics=est.train_metrics + est.val_metrics,
                       progress_bar=not args.no_progress),
        CheckpointHandler(folder, model_prefix="mlp", monitor=val_acc, save_best=True,
                          mode="max", max_checkpoints=2, resume_from_checkpoint=True),
        EarlyStoppingHandler(val_acc, mode="max", patience=3),
    ]
    train, val = loaders()
    est.fit(train, val_data=val, epochs=args.epochs, event_handlers=handlers)
    name, value = val_acc.get()
    print(f"{name}: {value:.4f}; checkpoints in {folder}")
    return value


if __name__ == "__main__":
    main()
