"""Cost of the autograd lifetimes rule (issue 31) on small training steps.

    OMP_NUM_THREADS=1 .venv/bin/python bench/autograd_lifetimes.py [--rounds 30] [--steps 20]

After a backward without ``retain_graph`` the arrays that backward differentiated become
constants (MXNet's behaviour, see ``autograd._consume``); to find them, arrays made while
recording are tracked weakly. This times a training step (``record`` + forward + loss +
``backward`` + ``trainer.step``) with the mechanism on and off, taking turns in rounds in one
process, by this thread's CPU time: a 3-layer MLP (784-256-256-10, batch 64) imperative and
hybridized, and a truncated-BPTT LSTM step (the state carried over without ``detach``).
"Off" stops the tracking (no array is tracked, so a backward has nothing to look at); the
one global test ``_new`` makes per op remains in both.

Reported per case: best-of-rounds and median ms per step for each setting, and the median of
the per-round ratios on/off.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)

import neogluon as mx  # noqa: E402
from neogluon import autograd, gluon, nd  # noqa: E402
from neogluon.ndarray import ndarray as _nd_mod  # noqa: E402


def _set_tracking(on):
    """Turn the tracking of recorded arrays on (as shipped) or off."""
    holders = autograd._TRACK_HOLDERS
    g = vars(_nd_mod)
    if on:
        if g not in holders:
            holders.append(g)
    else:
        while g in holders:
            holders.remove(g)
        g["_TRACK"] = False
        del autograd._tracked[:]


def mlp_step(hybrid):
    mx.random.seed(0)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(256, activation="relu"), gluon.nn.Dense(256, activation="relu"),
            gluon.nn.Dense(10))
    net.initialize(mx.init.Xavier())
    if hybrid:
        net.hybridize(static_alloc=True, static_shape=True)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01,
                                                          "momentum": 0.9})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    x = nd.random.uniform(shape=(64, 784))
    y = nd.array(np.random.RandomState(0).randint(0, 10, size=(64,)))

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(64)
    return step


def lstm_step(hybrid):
    mx.random.seed(0)
    vocab, hidden, batch, steps = 32, 64, 8, 10

    class LM(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.emb = gluon.nn.Embedding(vocab, hidden)
                self.rnn = gluon.rnn.LSTM(hidden, input_size=hidden)
                self.out = gluon.nn.Dense(vocab, flatten=False, in_units=hidden)

        def hybrid_forward(self, F, x, h, c):
            y, (h, c) = self.rnn(self.emb(x), [h, c])
            return self.out(y), h, c

    net = LM()
    net.initialize(mx.init.Xavier())
    if hybrid:
        net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    rng = np.random.RandomState(0)
    x = nd.array(rng.randint(0, vocab, size=(steps, batch)))
    y = nd.array(rng.randint(0, vocab, size=(steps, batch)))
    state = net.rnn.begin_state(batch_size=batch)

    def step():
        nonlocal state
        if _EXPLICIT[0]:
            state = [s.detach() for s in state]
        for s in state:
            s.detach()          # the idiom: a no-op, the state stays what it was
        with autograd.record():
            out, h, c = net(x, *state)
            loss = loss_fn(out, y).mean()
        state = [h, c]
        loss.backward()
        trainer.step(1)
    return step


CASES = {"mlp": lambda: mlp_step(False), "mlp_hybrid": lambda: mlp_step(True),
         "lstm_bptt": lambda: lstm_step(False), "lstm_bptt_hybrid": lambda: lstm_step(True)}


# The LSTM step only trains with the rule on (without it the second backward fails): its
# "off" turns run the explicit-detach form, ``state = [s.detach() for s in state]``.
_EXPLICIT = [False]


def _time(step, n):
    t0 = time.thread_time()
    for _ in range(n):
        step()
    return (time.thread_time() - t0) * 1e3 / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--steps", type=int, default=20, help="steps per turn")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    report = {}
    for name in args.cases.split(","):
        step = CASES[name]()
        for _ in range(10):
            step()
        times = {"on": [], "off": []}
        for r in range(args.rounds):
            for mode in (("on", "off") if r % 2 == 0 else ("off", "on")):
                _set_tracking(mode == "on")
                _EXPLICIT[0] = True
                step()          # (untimed: cuts the state the other setting left)
                _EXPLICIT[0] = mode == "off"
                times[mode].append(_time(step, args.steps))
        _set_tracking(True)
        ratios = [a / b for a, b in zip(times["on"], times["off"])]
        report[name] = {m: {"best_ms": round(min(v), 4), "median_ms": round(statistics.median(v), 4)}
                        for m, v in times.items()}
        report[name]["on/off median ratio"] = round(statistics.median(ratios), 4)
        print(name, json.dumps(report[name]), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
