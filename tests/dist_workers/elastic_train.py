"""A training script that follows the documented restart recipe (docs/distributed.md):
load the newest complete checkpoint set if there is one, then train, saving a set every
``--save-every`` steps. Started by ``neogluon.launch --max-restarts`` (tests/test_dist_elastic.py,
bench/dist_soak.py).

Faults it can inject into its own first attempt (TORCHELASTIC_RESTART_COUNT=0):
``--kill-rank R --kill-step S``: rank R SIGKILLs itself right after the set of step S is saved;
``--kill-save-step S --kill-rank R``: rank R SIGKILLs itself in the middle of saving step S,
before the set is published: right after its ``save_states`` (``--kill-save-point states``, any
rank), after writing the parameters (``params``, rank 0) or halfway through writing the manifest
(``manifest``, rank 0);
``--kill-random-ms T --kill-rank R``: rank R SIGKILLs itself a random delay in [0, T) ms after
the start of a random step (both seeded by ``--seed``), wherever it is then (in the step, in a
save); at the end of training at the latest.

At the end every rank checks that its weights are identical to the other ranks'; rank 0 writes
``<out>.npz`` (the final weights) and, with ``--check``, reruns in the same processes, without
faults, (a) the run resumed from the set it started from and (b) the whole run from scratch,
and writes their final weights too.
"""
import argparse
import json
import os
import random
import signal
import sys

import numpy as np

import neogluon as mx
from neogluon import autograd, gluon
from neogluon.contrib import checkpoint

ap = argparse.ArgumentParser()
ap.add_argument("ckpt")
ap.add_argument("out")
ap.add_argument("--steps", type=int, default=8)
ap.add_argument("--save-every", type=int, default=2)
ap.add_argument("--kvstore", default="dist_sync")
ap.add_argument("--optimizer", default="adam")
ap.add_argument("--uok", default="default", choices=["default", "true", "false"])
ap.add_argument("--kill-rank", type=int, default=-1)
ap.add_argument("--kill-step", type=int, default=-1)
ap.add_argument("--kill-save-step", type=int, default=-1)
ap.add_argument("--kill-save-point", default="states", choices=["states", "params", "manifest"])
ap.add_argument("--kill-random-ms", type=float, default=0.0)
ap.add_argument("--seed", type=int, default=0)
ap.add_argument("--hidden", type=int, default=16)
ap.add_argument("--rss-log", default="")
ap.add_argument("--check", action="store_true")
args = ap.parse_args()

ATTEMPT = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0") or 0)
UOK = {"default": None, "true": True, "false": False}[args.uok]
BATCH = 8


def build():
    mx.random.seed(7)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(args.hidden, activation="tanh", in_units=6),
            gluon.nn.Dense(3, in_units=args.hidden))
    net.initialize(mx.init.Xavier())
    return net


def batch(step, rank):
    rs = np.random.RandomState(1000 * step + rank)
    return (mx.nd.array(rs.randn(BATCH, 6).astype("float32")),
            mx.nd.array(rs.randint(0, 3, BATCH).astype("float32")))


LOSS = gluon.loss.SoftmaxCrossEntropyLoss()


def train_step(net, trainer, step, rank):
    x, y = batch(step, rank)
    with autograd.record():
        loss = LOSS(net(x), y)
    loss.backward()
    trainer.step(BATCH)


def weights(net):
    return {f"p{i}": v.data().asnumpy() for i, v in enumerate(net.collect_params().values())}


def rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _die(*_):
    os.kill(os.getpid(), signal.SIGKILL)


def _arm_save_kill(net, trainer):
    if args.kill_save_point == "states":
        orig = trainer.save_states
        trainer.save_states = lambda fname: (orig(fname), _die())
    elif args.kill_save_point == "params":
        orig_p = net.save_parameters
        net.save_parameters = lambda fname, *a, **k: (orig_p(fname, *a, **k), _die())
    else:
        from neogluon import _fileio

        def half_then_die(path, text, fsync=False):
            def write(tmp):
                with open(tmp, "w") as f:
                    f.write(text[:len(text) // 2])
                    f.flush()
                _die()
            _fileio.atomic_write(path, write, fsync)
        checkpoint.write_text = half_then_die


def run(ckpt_dir, faults, rss_log=None):
    """Train from the newest set in ckpt_dir (or from scratch: ckpt_dir None); returns
    (net, the step it started after or None)."""
    net = build()
    trainer = gluon.Trainer(net.collect_params(), args.optimizer,
                            {"learning_rate": 0.05, "wd": 1e-3}, kvstore=args.kvstore,
                            update_on_kvstore=UOK)
    kv = trainer._kvstore_params["kvstore"]
    rank = kv.rank
    start = checkpoint.load_checkpoint(ckpt_dir, net, trainer) if ckpt_dir else None
    first = 0 if start is None else start + 1
    kill_at = delay = None
    if faults and args.kill_random_ms > 0 and rank == args.kill_rank:
        rnd = random.Random(args.seed)
        kill_at = rnd.randrange(first, args.steps)
        delay = rnd.uniform(0, args.kill_random_ms) / 1000.0
    if args.check and ckpt_dir == args.ckpt and start is not None and rank == 0:
        # keep the set this run started from, for the reference run of --check
        import shutil
        ck = checkpoint.latest_checkpoint(ckpt_dir)
        os.makedirs(ckpt_dir + ".ref", exist_ok=True)
        for p in (ck.params, ck.states, ck.manifest):
            shutil.copy(p, ckpt_dir + ".ref")
    for step in range(first, args.steps):
        if step == kill_at:
            # a separate process delivers the SIGKILL (independent of this process's GIL)
            import subprocess
            subprocess.Popen(["/bin/sh", "-c", f"sleep {delay:.4f}; kill -9 {os.getpid()}"])
        train_step(net, trainer, step, rank)
        if ckpt_dir and step % args.save_every == 0:
            save_kill = faults and rank == args.kill_rank and step == args.kill_save_step
            if save_kill:
                _arm_save_kill(net, trainer)
            checkpoint.save_checkpoint(ckpt_dir, step, net, trainer, keep=2,
                                       extra={"attempt": ATTEMPT})
        if faults and rank == args.kill_rank and step == args.kill_step:
            os.kill(os.getpid(), signal.SIGKILL)
        if rss_log is not None and step % 50 == 0:
            rss_log.write(f"{ATTEMPT} {rank} {step} {rss_kb()}\n")
            rss_log.flush()
    if kill_at is not None:
        _die()            # the timer had not fired yet: die here, at the end of training
    return net, kv, start


def main():
    faults = ATTEMPT == 0
    rss = open(args.rss_log, "a") if args.rss_log else None
    import time
    t0 = time.time()
    net, kv, start = run(args.ckpt, faults, rss)
    train_seconds = time.time() - t0
    w = weights(net)
    # every rank ends with the same weights
    flat = mx.nd.array(np.concatenate([v.ravel() for v in w.values()]).astype("float32"))
    total = flat.copy()
    kv = mx.kv.create("dist_sync")          # a plain store (no optimizer): push sums
    kv.init(0, mx.nd.zeros(flat.shape))
    kv.push(0, flat)
    kv.pull(0, out=total)
    same = bool(np.array_equal(total.asnumpy(), kv.num_workers * flat.asnumpy()))
    out = {"rank": kv.rank, "attempt": ATTEMPT, "resumed_after": start, "ranks_agree": same,
           "train_seconds": round(train_seconds, 3)}
    if kv.rank == 0:
        np.savez(args.out + ".tmp.npz", **w)
        os.replace(args.out + ".tmp.npz", args.out + ".npz")
    if args.check:
        # (a) the run resumed from the same set, uninterrupted; (b) the run from scratch
        if start is not None:
            ref_net, _, ref_start = run(args.ckpt + ".ref", False)
            assert ref_start == start, (ref_start, start)
            if kv.rank == 0:
                np.savez(args.out + ".resumed.npz", **weights(ref_net))
        scratch, _, _ = run(None, False)
        if kv.rank == 0:
            np.savez(args.out + ".scratch.npz", **weights(scratch))
    sys.stdout.flush()
    os.write(1, ("RESULT " + json.dumps(out) + "\n").encode())   # one write: no interleaving


if __name__ == "__main__":
    main()
