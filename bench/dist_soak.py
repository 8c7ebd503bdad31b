"""Soak test of distributed jobs that survive a lost worker (issue 34 C). Opt-in, not in CI.

    python bench/dist_soak.py                       # one long job
    python bench/dist_soak.py --repeat 10           # the issue's targets, 10 trials each

One long job (default): 2 workers of tests/dist_workers/elastic_train.py under
``neogluon.launch --max-restarts 1``, ``--steps`` steps, a checkpoint set every
``--save-every`` steps, rank 1 killed (SIGKILL) at a step near the middle; the restarted group
loads the newest complete set and finishes. Reports the workers' RSS over the steps (logged every
50 steps: is it flat?) and whether the final weights equal those of an uninterrupted run resumed
from the same set (and of an uninterrupted run from step 0), computed by the same workers.

``--repeat N``: (a) N jobs with --max-restarts 1 where a random rank is SIGKILLed at a random
point: a random delay (up to two steps' time, measured by an uninterrupted job) after the start
of a random step, so in a step or in a save; every job must restart, finish
and its final weights equal the uninterrupted run resumed from the set it restarted from;
(b) N jobs where a random rank is SIGKILLed in the middle of a distributed save (after its
``save_states``, after rank 0 wrote the parameters, or halfway through the manifest): the newest
complete set must then be the previous one, and it must load.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
SCRIPT = os.path.join(ROOT, "tests", "dist_workers", "elastic_train.py")
PY = sys.executable


def env():
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("TORCHELASTIC", "DMLC_")) and k not in
         ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
    e.update({"OMP_NUM_THREADS": "1", "NEOGLUON_KVSTORE_TIMEOUT": "60",
              "PYTHONPATH": ROOT + os.pathsep + e.get("PYTHONPATH", "")})
    return e


LAUNCHER = ["--launcher", "local"]


def launch(workdir, extra, restarts=1, timeout=1800):
    ck, out = os.path.join(workdir, "ck"), os.path.join(workdir, "w")
    cmd = [PY, "-m", "neogluon.launch", "-n", "2", "--kill-timeout", "2"] + LAUNCHER
    if restarts is not None:
        cmd += ["--max-restarts", str(restarts)]
    cmd += [PY, SCRIPT, ck, out] + [str(x) for x in extra]
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env(),
                       cwd=ROOT)
    res = []
    dec = json.JSONDecoder()
    for part in p.stdout.split("RESULT ")[1:]:
        try:
            res.append(dec.raw_decode(part)[0])
        except ValueError:
            pass
    return p, res, time.time() - t0, ck, out


def restarted(p, res):
    """Whether the group was restarted (the local launcher says so; torchrun's agent logs
    differently, so also: the workers that finished were a later attempt)."""
    return "restarting the group" in p.stderr or any(r.get("attempt", 0) > 0 for r in res)


def npz(path):
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


def max_diff(a, b):
    if a.keys() != b.keys():
        return float("inf")
    return max(float(np.abs(a[k].astype(np.float64) - b[k]).max()) for k in a)


def compare(out):
    final = npz(out + ".npz")
    resumed = npz(out + ".resumed.npz") if os.path.exists(out + ".resumed.npz") else None
    scratch = npz(out + ".scratch.npz")
    return (max_diff(final, resumed) if resumed is not None else None,
            max_diff(final, scratch))


def rss_summary(path):
    rows = [tuple(map(int, line.split())) for line in open(path) if line.strip()]
    out = {}
    for attempt, rank, step, kb in rows:
        out.setdefault((attempt, rank), []).append((step, kb))
    lines = []
    for (attempt, rank), pts in sorted(out.items()):
        pts.sort()
        kbs = [kb for _, kb in pts]
        half = kbs[len(kbs) // 2:]
        lines.append(f"attempt {attempt} rank {rank}: steps {pts[0][0]}..{pts[-1][0]}, RSS MiB "
                     f"first {kbs[0] / 1024:.1f}, at half-way {kbs[len(kbs) // 2] / 1024:.1f}, "
                     f"last {kbs[-1] / 1024:.1f}, max {max(kbs) / 1024:.1f}; second half "
                     f"grew {(half[-1] - half[0]) / 1024:+.2f} MiB over {len(half)} samples")
    return lines, out


def soak(a):
    with tempfile.TemporaryDirectory(prefix="dist-soak-") as d:
        rss = os.path.join(d, "rss.log")
        kill_step = a.steps // 2 + a.save_every // 2       # between two sets
        p, res, secs, ck, out = launch(d, ["--steps", a.steps, "--save-every", a.save_every,
                                           "--kill-rank", 1, "--kill-step", kill_step,
                                           "--rss-log", rss, "--check"])
        print(f"job: rc {p.returncode}, {secs:.0f} s wall, restarted: {restarted(p, res)}")
        if p.returncode != 0:
            print(p.stderr[-4000:])
            return 1
        for r in res:
            print("  RESULT", r)
        d_res, d_scr = compare(out)
        print(f"final weights vs uninterrupted run resumed from the same set: max |diff| "
              f"{d_res}; vs uninterrupted run from step 0: {d_scr}")
        lines, _ = rss_summary(rss)
        for line in lines:
            print("  " + line)
        ok = d_res == 0.0 and all(r["ranks_agree"] for r in res)
        print("PASS" if ok else "FAIL")
        return 0 if ok else 1


def repeat(a):
    rng = random.Random(a.seed)
    steps, every = a.repeat_steps, a.repeat_save_every
    with tempfile.TemporaryDirectory(prefix="dist-soak-") as d:
        # calibration: an uninterrupted job measures the training time
        p, res, secs, _, _ = launch(os.path.join(d, "cal"), ["--steps", steps, "--save-every",
                                                             every], restarts=None)
        assert p.returncode == 0, p.stderr[-3000:]
        train_s = max(r["train_seconds"] for r in res)
        print(f"calibration: {steps} steps trained in {train_s:.1f} s ({secs:.0f} s wall)")
        ok_a = 0
        for i in range(a.repeat if "a" in a.parts else 0):
            rank = rng.randint(0, 1)
            seed = rng.randrange(1 << 30)
            span = 2000.0 * train_s / steps       # two steps' time (a step and a save)
            wr = random.Random(seed)              # what the worker will draw
            kill_step = wr.randrange(0, steps)
            delay_ms = wr.uniform(0, span)
            w = os.path.join(d, f"a{i}")
            p, res, secs, ck, out = launch(w, ["--steps", steps, "--save-every", every,
                                               "--kill-rank", rank, "--kill-random-ms",
                                               f"{span:.3f}", "--seed", seed, "--check"])
            again = restarted(p, res)
            good = again and p.returncode == 0 and len(res) == 2 and \
                all(r["ranks_agree"] for r in res)
            d_res = d_scr = None
            if good:
                d_res, d_scr = compare(out)
                ref = d_res if res[0]["resumed_after"] is not None else d_scr
                good = ref == 0.0
            ok_a += good
            print(f"(a) {i + 1}: kill rank {rank} {delay_ms:.0f} ms into step {kill_step}: rc "
                  f"{p.returncode}, restarted {again}, resumed after step "
                  f"{res[0]['resumed_after'] if res else '?'}, |diff| vs resumed-from-same-set "
                  f"{d_res}, vs from-scratch {d_scr}, {secs:.0f} s: "
                  f"{'ok' if good else 'FAIL'}")
            if not good:
                print(p.stderr[-3000:])
        if "a" in a.parts:
            print(f"(a) kill -9 at random points with --max-restarts 1: {ok_a}/{a.repeat} "
                  f"finished and matched")
        from neogluon import gluon
        from neogluon.contrib import checkpoint
        ok_b = 0
        for i in range(a.repeat if "b" in a.parts else 0):
            rank = rng.randint(0, 1)
            point = "states" if rank == 1 else rng.choice(["states", "params", "manifest"])
            save_step = rng.randrange(every, steps, every)
            w = os.path.join(d, f"b{i}")
            p, res, secs, ck, out = launch(w, ["--steps", steps, "--save-every", every,
                                               "--kill-rank", rank, "--kill-save-step",
                                               save_step, "--kill-save-point", point],
                                           restarts=None)
            latest = checkpoint.latest_checkpoint(ck)
            step = latest.step if latest else None
            loaded = None
            if latest is not None:
                net = gluon.nn.HybridSequential()
                net.add(gluon.nn.Dense(16, activation="tanh", in_units=6),
                        gluon.nn.Dense(3, in_units=16))
                net.initialize()
                tr = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.05})
                loaded = checkpoint.load_checkpoint(ck, net, tr)
            good = p.returncode != 0 and step == save_step - every and loaded == step
            ok_b += good
            print(f"(b) {i + 1}: kill rank {rank} at '{point}' of the save of step {save_step}: "
                  f"job rc {p.returncode}, newest complete set: step {step}, loaded: {loaded}, "
                  f"{secs:.0f} s: {'ok' if good else 'FAIL'}")
            if not good:
                print(p.stderr[-3000:])
        if "b" in a.parts:
            print(f"(b) kill -9 during a distributed save: {ok_b}/{a.repeat} left the previous "
                  f"set loadable")
        return 0 if ok_a == a.repeat * ("a" in a.parts) and \
            ok_b == a.repeat * ("b" in a.parts) else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--save-every", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=0)
    ap.add_argument("--repeat-steps", type=int, default=60)
    ap.add_argument("--repeat-save-every", type=int, default=10)
    ap.add_argument("--seed", type=int, default=34)
    ap.add_argument("--parts", default="ab", help="with --repeat: a (random kills), b (kills in "
                    "a save), or ab")
    ap.add_argument("--launcher", default="local", choices=["local", "torchrun"],
                    help="neogluon.launch's own restarts, or torchrun's elastic agent")
    a = ap.parse_args()
    LAUNCHER[1] = a.launcher
    print(f"dist_soak ({a.launcher} launcher): "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{os.cpu_count()} CPU(s), load average {os.getloadavg()[0]:.1f}")
    sys.exit(repeat(a) if a.repeat else soak(a))


if __name__ == "__main__":
    main()
