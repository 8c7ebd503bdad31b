"""Train a Gluon network on handwritten digits: the neogluon demo (``make demo``).

The data are scikit-learn's bundled 8x8 digits (1,797 images, no download). The script is
ordinary MXNet Gluon code -- ``nn.HybridSequential``, ``hybridize``, ``gluon.data.DataLoader``,
``gluon.Trainer`` with an lr schedule, ``autograd.record`` -- running on neogluon.

Every epoch it saves ``save_parameters`` and ``save_states`` checkpoints (atomically). Run it
again and it resumes from the last checkpoint; a resumed run ends with exactly the weights of an
uninterrupted one, because the shuffling and the random state of every epoch derive from
``--seed`` and the epoch number alone.

Run ``python -m neogluon.examples.digits --help`` for the options.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time

import numpy as np

from .._fileio import atomic_write, write_text

STATE_FILE = "demo_state.json"
STATE_VERSION = 1
# Options that change the numbers: a checkpoint only resumes under the same values.
_RUN_KEYS = ("model", "optimizer", "lr", "batch_size", "seed")
_CTX_RE = re.compile(r"^(cpu|gpu)(?::(\d+))?$")


# ---------------------------------------------------------------------------- command line
def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _seed(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 0 <= value < 2 ** 31:
        raise argparse.ArgumentTypeError(f"must be between 0 and 2**31-1, got {value}")
    return value


def _learning_rate(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (math.isfinite(value) and 0 < value <= 10):
        raise argparse.ArgumentTypeError(f"must be a number in (0, 10], got {text}")
    return value


def _contexts(text):
    """'cpu:0,cpu:1' -> ['cpu:0', 'cpu:1'] after checking each entry (GPUs must exist)."""
    import neogluon as mx
    items = [t.strip().lower() for t in text.split(",")]
    if not text.strip() or any(not t for t in items):
        raise argparse.ArgumentTypeError(f"expected a comma-separated list like cpu:0,cpu:1, "
                                         f"got {text!r}")
    out = []
    for item in items:
        m = _CTX_RE.match(item)
        if not m:
            raise argparse.ArgumentTypeError(
                f"{item!r} is not a context: use cpu, cpu:N, gpu or gpu:N")
        kind, idx = m.group(1), int(m.group(2) or 0)
        if kind == "gpu" and idx >= mx.num_gpus():
            raise argparse.ArgumentTypeError(
                f"{item} is not available: this machine has {mx.num_gpus()} GPU(s)")
        name = f"{kind}:{idx}"
        if name in out:
            raise argparse.ArgumentTypeError(f"context {name} is listed twice")
        out.append(name)
    return out


def build_parser():
    """The demo's argument parser."""
    p = argparse.ArgumentParser(
        prog="python -m neogluon.examples.digits",
        description="Train a small hybridized Gluon network on scikit-learn's handwritten "
                    "digits with neogluon. Checkpoints every epoch; a second run resumes.",
        epilog="Examples: --epochs 5 --optimizer sgd --lr 0.1 | --ctx cpu:0,cpu:1 | "
               "--out runs/a --no-resume")
    p.add_argument("--epochs", type=_positive_int, default=12,
                   help="total number of epochs to train; a resumed run trains the rest (default: 12)")
    p.add_argument("--batch-size", type=_positive_int, default=64,
                   help="mini-batch size, split across the contexts (default: 64)")
    p.add_argument("--optimizer", type=str.lower, choices=("sgd", "adam"), default="adam",
                   help="adam, or sgd with momentum 0.9 (default: adam)")
    p.add_argument("--lr", type=_learning_rate, default=None,
                   help="initial learning rate (default: 0.005 for adam, 0.1 for sgd); "
                        "it decays by 0.85 every epoch")
    p.add_argument("--ctx", type=_contexts, default="cpu:0",
                   help="comma-separated contexts; several train data-parallel through the "
                        "kvstore, e.g. cpu:0,cpu:1 or gpu:0,gpu:1 (default: cpu:0)")
    p.add_argument("--model", type=str.lower, choices=("cnn", "mlp"), default="cnn",
                   help="network: a small CNN or an MLP (default: cnn)")
    p.add_argument("--out", default="demo_out",
                   help="output folder for checkpoints, the plot and the run state (default: "
                        "./demo_out)")
    p.add_argument("--no-resume", action="store_true",
                   help="start over even if the output folder holds a checkpoint")
    p.add_argument("--seed", type=_seed, default=42,
                   help="random seed for initialization, shuffling and the train/test split "
                        "(default: 42)")
    p.add_argument("--threads", type=_positive_int, default=1,
                   help="CPU threads for torch; the model is small, and one thread is the "
                        "fastest on a busy machine (default: 1)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    p.add_argument("--no-plot", action="store_true", help="do not write the PNG plot")
    return p


def parse_args(argv=None):
    """Parse and cross-check the options (exits with a usage message on bad input)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.lr is None:
        args.lr = 0.005 if args.optimizer == "adam" else 0.1
    if args.batch_size < len(args.ctx):
        parser.error(f"argument --batch-size: {args.batch_size} is smaller than the number of "
                     f"contexts ({len(args.ctx)}); each context needs at least one sample")
    out = os.path.abspath(args.out)
    if os.path.exists(out) and not os.path.isdir(out):
        parser.error(f"argument --out: {args.out!r} exists and is not a folder")
    parent = out
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.access(parent, os.W_OK):
        parser.error(f"argument --out: cannot write into {parent!r}")
    args.out = out
    return args


# ---------------------------------------------------------------------------- data and model
def load_data(seed):
    """Digits as float32 images (N, 1, 8, 8) in [0, 1] and int labels; 80/20 stratified
    split (the split depends on ``seed`` only)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    digits = load_digits()
    x = (digits.images / 16.0).astype("float32")[:, None, :, :]
    y = digits.target.astype("float32")
    return train_test_split(x, y, test_size=0.2, random_state=seed, stratify=y)


def build_net(kind):
    """A small CNN (about 57k parameters) or MLP for 8x8 digits."""
    from neogluon.gluon import nn
    # A fixed prefix and a name scope give the parameters the same names in every build, so
    # the Trainer's (name-sorted) parameter order, and with it the states file, match.
    net = nn.HybridSequential(prefix="digits_")
    with net.name_scope():
        if kind == "cnn":
            net.add(nn.Conv2D(32, kernel_size=3, padding=1, activation="relu"),
                    nn.MaxPool2D(pool_size=2),
                    nn.Conv2D(64, kernel_size=3, padding=1, activation="relu"),
                    nn.MaxPool2D(pool_size=2),
                    nn.Flatten(),
                    nn.Dense(128, activation="relu"),
                    nn.Dense(10))
        else:
            net.add(nn.Flatten(), nn.Dense(128, activation="relu"),
                    nn.Dense(64, activation="relu"), nn.Dense(10))
    return net


class EpochShuffle:
    """A sampler whose order depends on (seed, epoch) only, so a resumed run sees the very
    batches an uninterrupted one would."""

    def __init__(self, length, seed):
        self._length = length
        self._seed = seed
        self.epoch = 0

    def __iter__(self):
        rng = np.random.RandomState((self._seed * 7919 + self.epoch) % (2 ** 32))
        return iter(rng.permutation(self._length).tolist())

    def __len__(self):
        return self._length


# ---------------------------------------------------------------------------- checkpoints
def _ckpt_paths(out, epoch):
    base = os.path.join(out, "checkpoints", f"epoch-{epoch:04d}")
    return base + ".params", base + ".states"


def read_state(out):
    """The run state saved beside the checkpoints, or None when there is none."""
    path = os.path.join(out, STATE_FILE)
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            state = json.load(f)
        if state.get("version") != STATE_VERSION or not isinstance(state.get("epoch"), int):
            raise ValueError("unknown layout")
    except (OSError, ValueError) as err:
        raise SystemExit(f"error: cannot read {path} ({err}); pass --no-resume to start over "
                         "or choose another --out") from None
    return state


def _prune(out, keep_epoch, keep=2):
    folder = os.path.join(out, "checkpoints")
    for name in os.listdir(folder):
        m = re.match(r"^epoch-(\d{4})\.(params|states)$", name)
        if m and int(m.group(1)) <= keep_epoch - keep:
            os.remove(os.path.join(folder, name))


def _clear(out):
    folder = os.path.join(out, "checkpoints")
    if os.path.isdir(folder):
        for name in os.listdir(folder):
            if re.match(r"^epoch-\d{4}\.(params|states)$", name):
                os.remove(os.path.join(folder, name))
    state = os.path.join(out, STATE_FILE)
    if os.path.exists(state):
        os.remove(state)


# ---------------------------------------------------------------------------- plotting
def write_plot(history, path):
    """Train/test loss and accuracy per epoch, as a PNG (matplotlib, Agg backend)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    epochs = [h["epoch"] for h in history]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    ax1.plot(epochs, [h["train_loss"] for h in history], "o-", label="train")
    ax1.plot(epochs, [h["test_loss"] for h in history], "s-", label="test")
    ax1.set_xlabel("epoch")
    ax1.set_ylabel("softmax cross-entropy")
    ax1.set_title("loss")
    ax1.legend()
    ax2.plot(epochs, [100 * h["train_acc"] for h in history], "o-", label="train")
    ax2.plot(epochs, [100 * h["test_acc"] for h in history], "s-", label="test")
    ax2.set_xlabel("epoch")
    ax2.set_ylabel("accuracy (%)")
    ax2.set_title("accuracy")
    ax2.legend()
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
    fig.suptitle("neogluon: digits")
    fig.tight_layout()
    atomic_write(path, lambda p: fig.savefig(p, dpi=100, format="png"))
    plt.close(fig)


# ---------------------------------------------------------------------------- training
def _evaluate(net, loader, ctxs, loss_fn):
    import neogluon as mx
    from neogluon import gluon
    acc, loss = mx.metric.Accuracy(), mx.metric.Loss()
    for data, label in loader:
        xs = gluon.utils.split_and_load(data, ctxs, even_split=False)
        ys = gluon.utils.split_and_load(label, ctxs, even_split=False)
        xs, ys = zip(*[(x, y) for x, y in zip(xs, ys) if x.shape[0]])
        outs = [net(x) for x in xs]
        loss.update(None, [loss_fn(o, y) for o, y in zip(outs, ys)])
        acc.update(ys, outs)
    return loss.get()[1], acc.get()[1]


def _say(msg, quiet=False):
    if not quiet:
        print(msg, flush=True)


def run(args):
    """Train (or resume) as ``args`` say; returns a summary dict."""
    import neogluon as mx
    from neogluon import autograd, gluon

    import torch
    torch.set_num_threads(args.threads)
    out = args.out
    os.makedirs(os.path.join(out, "checkpoints"), exist_ok=True)
    ctxs = [mx.gpu(int(c.split(":")[1])) if c.startswith("gpu") else mx.cpu(int(c.split(":")[1]))
            for c in args.ctx]
    config = {k: getattr(args, k) for k in _RUN_KEYS}

    state = None if args.no_resume else read_state(out)
    if args.no_resume:
        _clear(out)
    if state is not None:
        diff = [k for k in _RUN_KEYS if state["config"].get(k) != config[k]]
        if diff:
            opts = ", ".join(f"--{k.replace('_', '-')} {state['config'][k]}" for k in diff)
            raise SystemExit(f"error: {out} holds a checkpoint trained with {opts}; rerun with "
                             "those options, pass --no-resume to start over, or choose another "
                             "--out")

    x_train, x_test, y_train, y_test = load_data(args.seed)
    train_ds = gluon.data.ArrayDataset(x_train, y_train)
    test_ds = gluon.data.ArrayDataset(x_test, y_test)
    sampler = EpochShuffle(len(train_ds), args.seed)
    # A last batch smaller than the number of contexts would leave a context without data.
    remainder = len(train_ds) % args.batch_size
    last_batch = "discard" if 0 < remainder < len(ctxs) else "keep"
    train_loader = gluon.data.DataLoader(train_ds, batch_size=args.batch_size, sampler=sampler,
                                         last_batch=last_batch)
    test_loader = gluon.data.DataLoader(test_ds, batch_size=256)
    steps_per_epoch = len(train_loader)

    mx.random.seed(args.seed)
    net = build_net(args.model)
    net.initialize(mx.init.Xavier(magnitude=2.24), ctx=ctxs)
    net.hybridize()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    schedule = mx.lr_scheduler.FactorScheduler(step=steps_per_epoch, factor=0.85,
                                               base_lr=args.lr)
    opt_params = {"learning_rate": args.lr, "lr_scheduler": schedule}
    if args.optimizer == "sgd":
        opt_params.update(momentum=0.9, wd=1e-4)
    trainer = gluon.Trainer(net.collect_params(), args.optimizer, opt_params)

    history, start = [], 0
    if state is not None:
        params_file, states_file = _ckpt_paths(out, state["epoch"])
        for path in (params_file, states_file):
            if not os.path.exists(path):
                raise SystemExit(f"error: {STATE_FILE} points to {path}, which is missing; "
                                 "pass --no-resume to start over")
        net.load_parameters(params_file, ctx=ctxs)
        trainer.load_states(states_file)
        history = state["history"]
        start = state["epoch"]
        if start >= args.epochs:
            _say(f"Resuming from checkpoint {params_file}: all {start} epoch(s) are done "
                 f"(--epochs {args.epochs}), so this run only evaluates. Pass a larger --epochs "
                 "to train further, or --no-resume to start over.")
        else:
            _say(f"Resuming from checkpoint {params_file}: {start} epoch(s) done, training "
                 f"epochs {start + 1}-{args.epochs}.")
    else:
        where = ", ".join(str(c) for c in ctxs)
        if len(ctxs) > 1:
            where += " (data-parallel: gradients summed through the kvstore)"
        _say(f"Training a hybridized {args.model.upper()} on {len(train_ds)} digits (testing "
             f"on {len(test_ds)}) with {args.optimizer}, lr {args.lr:g}, on {where}.")

    progress = None
    if not args.no_progress:
        try:
            from tqdm.auto import tqdm as progress
        except ImportError:
            progress = None

    epoch_times = []
    for epoch in range(start, args.epochs):
        # The random state and the order of every epoch depend on (seed, epoch) only.
        mx.random.seed((args.seed * 1000003 + epoch) % (2 ** 31))
        sampler.epoch = epoch
        train_loss, train_acc = mx.metric.Loss(), mx.metric.Accuracy()
        tic = time.time()
        batches = train_loader
        bar = None
        if progress is not None:
            bar = progress(train_loader, total=steps_per_epoch, leave=False, dynamic_ncols=True,
                           desc=f"epoch {epoch + 1}/{args.epochs}", file=sys.stderr)
            batches = bar
        for data, label in batches:
            xs = gluon.utils.split_and_load(data, ctxs, even_split=False)
            ys = gluon.utils.split_and_load(label, ctxs, even_split=False)
            with autograd.record():
                outs = [net(x) for x in xs]
                losses = [loss_fn(o, y) for o, y in zip(outs, ys)]
            autograd.backward(losses)
            trainer.step(data.shape[0])
            train_loss.update(None, losses)
            train_acc.update(ys, outs)
            if bar is not None:
                bar.set_postfix(loss=f"{train_loss.get()[1]:.4f}",
                                acc=f"{train_acc.get()[1]:.4f}",
                                lr=f"{trainer.learning_rate:.2e}", refresh=False)
        if bar is not None:
            bar.close()
        test_loss, test_acc = _evaluate(net, test_loader, ctxs, loss_fn)
        epoch_times.append(time.time() - tic)
        history.append({"epoch": epoch + 1, "train_loss": train_loss.get()[1],
                        "train_acc": train_acc.get()[1], "test_loss": test_loss,
                        "test_acc": test_acc, "seconds": epoch_times[-1]})
        _say(f"epoch {epoch + 1:>3}/{args.epochs}: train loss {history[-1]['train_loss']:.4f} "
             f"acc {100 * history[-1]['train_acc']:.2f}% | test loss {test_loss:.4f} "
             f"acc {100 * test_acc:.2f}% | {epoch_times[-1]:.2f}s")

        params_file, states_file = _ckpt_paths(out, epoch + 1)
        # parameters and states are written atomically by neogluon itself
        net.save_parameters(params_file)
        trainer.save_states(states_file)
        # The state file is written last: it only ever names complete checkpoints.
        write_text(os.path.join(out, STATE_FILE), json.dumps(
            {"version": STATE_VERSION, "epoch": epoch + 1, "config": config,
             "history": history}, indent=1), fsync=True)
        _prune(out, epoch + 1)

    if start >= args.epochs:
        test_loss, test_acc = _evaluate(net, test_loader, ctxs, loss_fn)
    else:
        test_acc = history[-1]["test_acc"]
    # after the first forward pass, so that deferred shapes are known
    n_params = sum(int(np.prod(p.shape)) for p in net.collect_params().values())
    plot = None
    if history and not args.no_plot:
        plot = os.path.join(out, "training.png")
        write_plot(history, plot)
    summary = {"test_accuracy": test_acc, "parameters": n_params,
               "epochs_trained_now": len(epoch_times), "resumed_from": start if state else None,
               "seconds_per_epoch": (sum(epoch_times) / len(epoch_times)) if epoch_times else None,
               "checkpoint": _ckpt_paths(out, history[-1]["epoch"])[0]
               if history else None, "plot": plot, "history": history}
    _print_summary(summary, len(test_ds))
    return summary


def _print_summary(s, n_test):
    lines = ["", "Summary",
             f"  test accuracy   : {100 * s['test_accuracy']:.2f}% on {n_test} held-out digits"]
    if s["seconds_per_epoch"] is not None:
        lines.append(f"  time per epoch  : {s['seconds_per_epoch']:.2f} s "
                     f"(mean of {s['epochs_trained_now']} epoch(s) run now)")
    lines.append(f"  parameters      : {s['parameters']:,}")
    if s["resumed_from"]:
        lines.append(f"  resumed from    : epoch {s['resumed_from']}")
    if s["checkpoint"]:
        lines.append(f"  last checkpoint : {s['checkpoint']} (+ .states)")
    if s["plot"]:
        lines.append(f"  plot            : {s['plot']}")
    if s["test_accuracy"] < 0.95:
        lines.append("  note: test accuracy is below 95%; train longer (--epochs).")
    print("\n".join(lines), flush=True)


def main(argv=None):
    """Entry point: parse ``argv`` (default: sys.argv) and run; returns the summary dict."""
    args = parse_args(argv)
    try:
        return run(args)
    except KeyboardInterrupt:
        state = read_state(args.out)
        done = f"epoch {state['epoch']}" if state else "no epoch yet"
        print(f"\nInterrupted. The last complete checkpoint is {done}; run the same command "
              "again to resume from it.", file=sys.stderr)
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
