"""Distributed training (issue 14): gluon.Trainer on the 'dist_sync' store with 2 and 4 worker
processes on this machine, against one process doing the same total work.

Usage::

    python bench/dist_bench.py                       # 2 and 4 workers, mlp + resnet18, 2 rounds
    python bench/dist_bench.py --codec               # the 2bit codec's own cost
    python bench/dist_bench.py --workers 2 --models mlp --rounds 1 --no-write

What it measures, per model, number of workers N and store configuration (``sharded``:
``update_on_kvstore=True``, the ZeRO-1-style sharded optimizer; ``allreduce``:
``update_on_kvstore=False``; each with and without ``compression_params={'type': '2bit',
'threshold': 0.5}``, and each with ``NEOGLUON_DIST_OVERLAP=1``, the reduction of gradient
buckets during backward):

- collective calls per training step and the bytes this worker sends per step, from the store's
  own ``comm_stats`` (deltas over the timed steps), split by operation (the store's ``_collective``
  is wrapped in the worker to count bytes and time per operation; nothing in the store changes);
- the step time (forward + backward + ``trainer.step``; the median over the timed steps of the
  slowest rank's step), and how much of it the collectives took;
- the optimizer-state bytes each rank holds (the store's Updater and the Trainer's own);
- the same step in ONE process with the global batch (N x the per-worker batch), with one thread
  and with two threads, measured in the same round.

It also measures gloo on its own in every job: one-element all_reduce and all_gather (per-call
latency), and the time and loopback bytes of a 16 MiB all_reduce, reduce-scatter and
all-gather. ``--codec`` times the 2bit codec alone. Workers start through torchrun
(``python -m torch.distributed.run``) with OMP_NUM_THREADS=1 and one torch thread each; every
job runs under a hard timeout. Results go to the "Distributed training (issue 14)" section of
bench/RESULTS.md (``--no-write`` to skip).
"""
from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "RESULTS.md")
SECTION = "Distributed training (issue 14)"
CONFIGS = (
    # name, update_on_kvstore, compression, NEOGLUON_DIST_OVERLAP (reduce during backward)
    ("sharded", True, None, False),
    ("sharded+2bit", True, "2bit", False),
    ("allreduce", False, None, False),
    ("allreduce+2bit", False, "2bit", False),
    ("sharded+overlap", True, None, True),
    ("allreduce+overlap", False, None, True),
)
MODELS = ("mlp", "lenet", "resnet18")


# ---------------------------------------------------------------------- models and one step
def make_net(name):
    import neogluon as mx
    from neogluon.gluon import nn
    mx.random.seed(0)
    if name == "mlp":
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Dense(256, activation="relu"), nn.Dense(256, activation="relu"),
                    nn.Dense(10))
        shape = (784,)
    elif name == "lenet":
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Conv2D(6, 5, activation="relu"), nn.MaxPool2D(2, 2),
                    nn.Conv2D(16, 5, activation="relu"), nn.MaxPool2D(2, 2),
                    nn.Dense(120, activation="relu"), nn.Dense(84, activation="relu"),
                    nn.Dense(10))
        shape = (1, 28, 28)
    elif name == "resnet18":
        from neogluon.gluon.model_zoo import vision
        net = vision.resnet18_v1(classes=10)
        shape = (3, 32, 32)
    else:
        raise ValueError(name)
    net.initialize(mx.init.Xavier())
    return net, shape


def make_data(shape, batch, seed):
    import numpy as np
    from neogluon import nd
    rng = np.random.RandomState(seed)
    x = nd.array(rng.uniform(size=(batch,) + shape).astype("float32"))
    y = nd.array(rng.randint(0, 10, size=(batch,)).astype("float32"))
    return x, y


def nbytes_of(state):
    """Bytes of an optimizer state (NDArray, tuple/list of them, or None)."""
    from neogluon.ndarray.ndarray import NDArray
    if state is None:
        return 0
    if isinstance(state, NDArray):
        t = state._t
        return t.numel() * t.element_size()
    if isinstance(state, (tuple, list)):
        return sum(nbytes_of(s) for s in state)
    if hasattr(state, "numel") and hasattr(state, "element_size"):
        return state.numel() * state.element_size()
    return 0


def state_bytes(trainer):
    """Optimizer-state bytes this process holds: the store's Updater and the Trainer's."""
    total = 0
    kv = trainer._kvstore
    upd = getattr(kv, "_updater", None) if kv else None
    if upd is not None and hasattr(upd, "states"):
        total += sum(nbytes_of(s) for s in upd.states.values())
    for u in getattr(trainer, "_updaters", []) or []:
        if u is not upd and hasattr(u, "states"):
            total += sum(nbytes_of(s) for s in u.states.values())
    return total


def trained_params(net):
    ps = [p for p in net.collect_params().values() if p.grad_req != "null"]
    return len(ps), sum(p.data().size for p in ps)


def loopback_bytes():
    """Bytes received on the loopback interface so far (every process on the host)."""
    try:
        with open("/proc/net/dev") as f:
            for line in f:
                name, _, rest = line.partition(":")
                if name.strip() == "lo":
                    return int(rest.split()[0])
    except OSError:
        pass
    return None


def run_steps(net, trainer, x, y, batch, warmup, steps, between=None):
    """Train ``warmup + steps`` steps; per timed step: (forward+backward, trainer.step) seconds."""
    from neogluon import autograd, gluon
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    times = []
    for i in range(warmup + steps):
        if i == warmup and between is not None:
            between()
        t0 = time.perf_counter()
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        t1 = time.perf_counter()
        trainer.step(batch)
        t2 = time.perf_counter()
        if i >= warmup:
            times.append((t1 - t0, t2 - t1))
    return times


# ---------------------------------------------------------------------- worker (one rank)
def instrument(kv):
    """Wrap the store's ``_collective`` to count calls, bytes and seconds per operation."""
    orig = kv._collective
    per_op = {}

    def wrapped(what, keys, fn, *args, nbytes=0, sent=None):
        t = time.perf_counter()
        try:
            return orig(what, keys, fn, *args, nbytes=nbytes, sent=sent)
        finally:
            d = per_op.setdefault(what, [0, 0, 0.0])
            d[0] += 1
            d[1] += int(sent if sent is not None else nbytes)
            d[2] += time.perf_counter() - t

    kv._collective = wrapped
    orig_seg = getattr(kv, "_segments", None)
    if orig_seg is not None:
        # the sharded update on gloo: one reduce to / broadcast from each owner, issued
        # together and waited for together (not through _collective)
        def seg_wrapped(what, keys, lay, reduce):
            c0, b0 = kv.comm_stats["calls"], kv.comm_stats["bytes_sent"]
            t = time.perf_counter()
            try:
                return orig_seg(what, keys, lay, reduce)
            finally:
                name = "reduce to owners" if reduce else "broadcast from owners"
                d = per_op.setdefault(name, [0, 0, 0.0])
                d[0] += kv.comm_stats["calls"] - c0
                d[1] += kv.comm_stats["bytes_sent"] - b0
                d[2] += time.perf_counter() - t

        kv._segments = seg_wrapped
    return per_op


def gloo_micro(dist, world):
    """gloo alone: per-call latency, and time and loopback bytes of the three big collectives."""
    import torch
    small = torch.zeros(1)
    out = torch.empty(world)
    res = {}
    for name, fn in (("allreduce_1", lambda: dist.all_reduce(small)),
                     ("allgather_1", lambda: dist.all_gather_into_tensor(out, small))):
        for _ in range(20):
            fn()
        ts = []
        for _ in range(200):
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
        res[name + "_ms"] = statistics.median(ts) * 1e3
    big = torch.zeros(4 * 1024 * 1024)  # 16 MiB
    piece = torch.zeros(big.numel() // world)
    for name, fn in (("allreduce", lambda: dist.all_reduce(big)),
                     ("reduce_scatter", lambda: dist.reduce_scatter_tensor(piece, big)),
                     ("allgather", lambda: dist.all_gather_into_tensor(big, piece))):
        fn()
        ts = []
        dist.barrier()
        lo0 = loopback_bytes()
        for _ in range(5):
            dist.barrier()
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
        dist.barrier()
        lo1 = loopback_bytes()
        res[name + "_16MiB_ms"] = statistics.median(ts) * 1e3
        # minus the barriers' few bytes; every process on the host counts
        res[name + "_16MiB_lo_MB"] = ((lo1 - lo0) / 5 / world / 1e6
                                      if lo0 is not None and lo1 is not None else None)
    return res


def worker(args):
    import torch
    torch.set_num_threads(1)
    import neogluon as mx  # noqa: F401
    from neogluon import gluon
    from neogluon.kvstore.dist import DistKVStore
    import torch.distributed as dist

    # The process group comes from the first distributed store.
    probe = mx.kv.create("dist_sync")
    rank, world = probe.rank, probe.num_workers
    result = {"world": world, "batch": args.batch, "warmup": args.warmup, "steps": args.steps,
              "gloo": gloo_micro(dist, world), "models": {}}
    comp_params = {"type": "2bit", "threshold": 0.5}
    for model in args.models:
        mres = {}
        for cname, uok, comp, overlap in CONFIGS:
            if cname not in args.configs:
                continue
            # the Trainer reads it at every step
            os.environ["NEOGLUON_DIST_OVERLAP"] = "1" if overlap else "0"
            net, shape = make_net(model)
            x, y = make_data(shape, args.batch, 1000 + rank)
            net(x)
            trainer = gluon.Trainer(net.collect_params(), "sgd",
                                    {"learning_rate": 0.01, "momentum": 0.9},
                                    kvstore="dist_sync", update_on_kvstore=uok,
                                    compression_params=comp_params if comp else None)
            kv = trainer._kvstore_params["kvstore"]
            assert isinstance(kv, DistKVStore), kv
            per_op = instrument(kv)
            mark = {}

            def between(kv=kv, per_op=per_op, mark=mark):
                dist.barrier()
                mark["stats"] = (kv.comm_stats["calls"], kv.comm_stats["bytes_sent"])
                mark["per_op"] = {k: list(v) for k, v in per_op.items()}
                mark["lo"] = loopback_bytes()

            steps = args.steps if model != "resnet18" else max(3, args.steps // 2)
            times = run_steps(net, trainer, x, y, args.batch, args.warmup, steps, between)
            dist.barrier()
            lo_end = loopback_bytes()
            calls = (kv.comm_stats["calls"] - mark["stats"][0]) / steps
            sent = (kv.comm_stats["bytes_sent"] - mark["stats"][1]) / steps
            ops = {}
            seen_calls = seen_bytes = 0
            for k, v in per_op.items():
                b = mark["per_op"].get(k, [0, 0, 0.0])
                seen_calls += v[0] - b[0]
                seen_bytes += v[1] - b[1]
                if v[0] - b[0]:
                    ops[k] = {"calls": (v[0] - b[0]) / steps, "bytes": (v[1] - b[1]) / steps,
                              "ms": (v[2] - b[2]) / steps * 1e3}
            if calls * steps > seen_calls:
                # started asynchronously during backward (the overlap), not through
                # _collective: counted in comm_stats, not timed here
                ops["push (async, in backward)"] = {
                    "calls": calls - seen_calls / steps, "bytes": sent - seen_bytes / steps,
                    "ms": 0.0}
            ov = getattr(trainer, "_overlap", None)
            mine = {"times": times, "calls": calls, "sent": sent, "ops": ops,
                    "state_bytes": state_bytes(trainer),
                    "uok": trainer._update_on_kvstore,
                    "overlap_used": getattr(ov, "used", 0),
                    "lo": (lo_end - mark["lo"]) / steps if lo_end is not None and
                    mark["lo"] is not None else None}
            gathered = [None] * world
            dist.all_gather_object(gathered, mine)
            n_params, n_values = trained_params(net)
            per_step = [max(g["times"][i][0] + g["times"][i][1] for g in gathered)
                        for i in range(steps)]
            mres[cname] = {
                "n_params": n_params, "n_values": n_values,
                "step_ms": statistics.median(per_step) * 1e3,
                "step_best_ms": min(per_step) * 1e3,
                "fb_ms": statistics.median(t[0] for g in gathered for t in g["times"]) * 1e3,
                "trainer_step_ms": statistics.median(
                    t[1] for g in gathered for t in g["times"]) * 1e3,
                "calls": [g["calls"] for g in gathered],
                "sent": [g["sent"] for g in gathered],
                "ops": gathered[0]["ops"],
                "coll_ms": statistics.median(sum(o["ms"] for o in g["ops"].values())
                                             for g in gathered),
                "state_bytes": [g["state_bytes"] for g in gathered],
                "uok": gathered[0]["uok"],
                "overlap_used": min(g["overlap_used"] for g in gathered),
                "lo_per_worker": (gathered[0]["lo"] / world
                                  if gathered[0]["lo"] is not None else None),
            }
            # a Trainer with an overlap listens to every backward until it is collected
            del trainer, net, kv, mine, gathered, ov
            gc.collect()
        result["models"][model] = mres
    if rank == 0:
        tmp = args.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(result, f)
        os.replace(tmp, args.out)
    dist.barrier()


# ---------------------------------------------------------------------- one process, same work
def single(args):
    import torch
    torch.set_num_threads(args.threads)
    from neogluon import gluon
    result = {"threads": args.threads, "batch": args.batch, "models": {}}
    for model in args.models:
        net, shape = make_net(model)
        x, y = make_data(shape, args.batch, 7)
        net(x)
        trainer = gluon.Trainer(net.collect_params(), "sgd",
                                {"learning_rate": 0.01, "momentum": 0.9})
        steps = args.steps if model != "resnet18" else max(3, args.steps // 2)
        times = run_steps(net, trainer, x, y, args.batch, args.warmup, steps)
        n_params, n_values = trained_params(net)
        result["models"][model] = {
            "n_params": n_params, "n_values": n_values,
            "step_ms": statistics.median(a + b for a, b in times) * 1e3,
            "step_best_ms": min(a + b for a, b in times) * 1e3,
            "fb_ms": statistics.median(a for a, _ in times) * 1e3,
            "trainer_step_ms": statistics.median(b for _, b in times) * 1e3,
            "state_bytes": state_bytes(trainer),
            "store": repr(trainer._kvstore),
        }
    with open(args.out + ".tmp", "w") as f:
        json.dump(result, f)
    os.replace(args.out + ".tmp", args.out)


def codec(args):
    """One thread: the store's 2bit codec on one model-sized gradient (what each rank computes
    per step besides the collective: quantise + pack its gradient, unpack N pieces)."""
    import torch
    torch.set_num_threads(1)
    from neogluon.kvstore.compression import GradientCompression
    comp = GradientCompression("2bit", 0.5)
    print("| model | values | quantize_ ms | pack ms | unpack ms (one piece) | a copy of the "
          "gradient ms |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for model in args.models:
        net, shape = make_net(model)
        net(make_data(shape, 2, 0)[0])
        n = trained_params(net)[1]
        g = torch.randn(n)
        r = torch.zeros(n)

        def tm(fn, k=5):
            ts = []
            for _ in range(k):
                t = time.perf_counter()
                fn()
                ts.append(time.perf_counter() - t)
            return statistics.median(ts) * 1e3
        q = comp.quantize_(g, r)
        w = comp.pack(q)
        print(f"| {model} | {n} | {tm(lambda: comp.quantize_(g, r)):.1f} "
              f"| {tm(lambda: comp.pack(q)):.1f} | {tm(lambda: comp.unpack(w, n)):.1f} "
              f"| {tm(lambda: g.clone()):.1f} |")


# ---------------------------------------------------------------------- driver
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(threads):
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(threads)
    env["MKL_NUM_THREADS"] = str(threads)
    env.setdefault("NEOGLUON_KVSTORE_TIMEOUT", "120")
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


LOADS = []


def _run(cmd, env, timeout, out):
    LOADS.append(os.getloadavg()[0])
    tic = time.perf_counter()
    try:
        proc = subprocess.run(["timeout", "-k", "10", str(int(timeout))] + cmd, cwd=ROOT,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=timeout + 30)
    except subprocess.TimeoutExpired:
        raise SystemExit(f"timed out: {' '.join(cmd)}")
    if proc.returncode != 0 or not os.path.exists(out):
        sys.stdout.write(proc.stdout[-6000:])
        raise SystemExit(f"failed (exit {proc.returncode}): {' '.join(cmd)}")
    with open(out) as f:
        res = json.load(f)
    os.unlink(out)
    LOADS.append(os.getloadavg()[0])
    res["wall_s"] = time.perf_counter() - tic
    return res


def common_args(args, batch):
    return (["--models"] + list(args.models) + ["--batch", str(batch), "--steps", str(args.steps),
            "--warmup", str(args.warmup)])


def run_dist(args, n, tmpdir):
    out = os.path.join(tmpdir, f"dist{n}.json")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(n),
           "--master-addr", "127.0.0.1", "--master-port", str(free_port()),
           os.path.abspath(__file__), "--worker", "--out", out,
           "--configs"] + list(args.configs) + common_args(args, args.batch)
    return _run(cmd, _env(1), args.timeout, out)


def run_single(args, batch, threads, tmpdir):
    out = os.path.join(tmpdir, f"single{batch}_{threads}.json")
    cmd = [sys.executable, os.path.abspath(__file__), "--single", "--threads", str(threads),
           "--out", out] + common_args(args, batch)
    return _run(cmd, _env(threads), args.timeout, out)


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt_bytes(b):
    if b is None:
        return "-"
    if b >= 1e6:
        return f"{b / 1e6:.2f} MB"
    return f"{b / 1e3:.1f} kB"


def tables(rounds, args):
    """Markdown tables from the rounds (medians over rounds of each round's figure)."""
    lines = []
    mb = 16 * 1024 * 1024 / 1e6
    lines += ["gloo alone, inside each job (16 MiB = a 16.78 MB float32 buffer; all_gather "
              "sends a 1/N piece of it; loopback MB = what `lo` carried per call / N):", "",
              "| workers | all_reduce 1 float ms | all_gather 1 float ms | all_reduce 16 MiB ms "
              "| loopback MB | reduce_scatter 16 MiB ms | loopback MB | all_gather into 16 MiB "
              "ms | loopback MB | ring estimates: all_reduce / reduce_scatter / all_gather MB |",
              "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for n in args.workers:
        g = [r["dist"][str(n)]["gloo"] for r in rounds]

        def m(key, g=g):
            v = median(x.get(key) for x in g)
            return "-" if v is None else f"{v:.2f}" if v < 10 else f"{v:.1f}"
        lines.append(
            f"| {n} | {m('allreduce_1_ms')} | {m('allgather_1_ms')} "
            f"| {m('allreduce_16MiB_ms')} | {m('allreduce_16MiB_lo_MB')} "
            f"| {m('reduce_scatter_16MiB_ms')} | {m('reduce_scatter_16MiB_lo_MB')} "
            f"| {m('allgather_16MiB_ms')} | {m('allgather_16MiB_lo_MB')} "
            f"| {2 * mb * (n - 1) / n:.1f} / {mb * (n - 1) / n:.1f} / {mb * (n - 1) / n:.1f} |")
    lines.append("")
    for model in args.models:
        d0 = rounds[0]["dist"][str(args.workers[0])]["models"][model]
        first = next(iter(d0.values()))
        lines += [f"### {model}: {first['n_params']} trained Parameters, "
                  f"{first['n_values'] / 1e6:.3f} M values ({first['n_values'] * 4 / 1e6:.2f} MB "
                  f"float32), batch {args.batch} per worker", "",
                  "Communication per step and worker:", "",
                  "| workers | store | collective calls | by operation (calls x bytes each) | bytes "
                  "sent (store's estimate) | vs allreduce | loopback bytes | ms in collectives |",
                  "| ---: | --- | ---: | --- | ---: | ---: | ---: | ---: |"]
        time_rows = []
        steps = args.steps if model != "resnet18" else max(3, args.steps // 2)
        for n in args.workers:
            ref = {}
            for cname in args.configs:
                rs = [r["dist"][str(n)]["models"][model][cname] for r in rounds]
                s1 = [r["single"][f"{n}/1"]["models"][model] for r in rounds]
                s2 = [r["single"][f"{n}/2"]["models"][model] for r in rounds]
                c = rs[0]
                calls = median(max(x["calls"]) for x in rs)
                sent = median(max(x["sent"]) for x in rs)
                if cname == "allreduce":
                    ref["sent"] = sent
                ops = ", ".join(f"{'grads' if k == 'push' else 'weights' if k == 'pull' else k}"
                                f" {v['calls']:g} x {fmt_bytes(v['bytes'] / v['calls'])}"
                                for k, v in c["ops"].items())
                if "sent" not in ref or not ref["sent"] or cname == "allreduce":
                    vs = "1x" if cname == "allreduce" else "-"
                elif sent < ref["sent"]:
                    vs = f"{ref['sent'] / sent:.1f}x fewer"
                else:
                    vs = f"{sent / ref['sent']:.2f}x"
                label = cname
                if "overlap" in cname:
                    used = median(x.get("overlap_used", 0) for x in rs)
                    label += f" (steps from the overlap: {used:g} of {args.warmup + steps - 1})"
                lines.append(
                    f"| {n} | {label} | {calls:g} | {ops} | {fmt_bytes(sent)} | {vs} "
                    f"| {fmt_bytes(median(x['lo_per_worker'] for x in rs))} "
                    f"| {median(x['coll_ms'] for x in rs):.1f} |")
                r1 = median(x["step_ms"] / y["step_ms"] for x, y in zip(rs, s1))
                r2 = median(x["step_ms"] / y["step_ms"] for x, y in zip(rs, s2))
                states = c["state_bytes"]
                sref = s1[0]["state_bytes"]
                best = min(x["step_best_ms"] for x in rs)
                b1 = min(y["step_best_ms"] for y in s1)
                b2 = min(y["step_best_ms"] for y in s2)
                time_rows.append(
                    f"| {n} | {cname} | {median(x['step_ms'] for x in rs):.1f} ({best:.1f}) "
                    f"| {median(x['fb_ms'] for x in rs):.1f} "
                    f"| {median(x['trainer_step_ms'] for x in rs):.1f} "
                    f"| {median(y['step_ms'] for y in s1):.1f} ({b1:.1f}) | {r1:.2f}x "
                    f"({best / b1:.2f}x) "
                    f"| {median(y['step_ms'] for y in s2):.1f} ({b2:.1f}) | {r2:.2f}x "
                    f"({best / b2:.2f}x) "
                    f"| {' / '.join(fmt_bytes(b) for b in states)} | {fmt_bytes(sref)} "
                    f"| {max(states) / sref:.2f} |")
        lines += ["", "Step time, ms: median (fastest step of all rounds in brackets); N procs "
                  "/ 1 proc above 1x means the N workers are slower than one process doing the "
                  "same work. Optimizer-state memory per rank:", "",
                  "| workers | store | step | fwd+bwd | trainer.step | 1 process, 1 thread, "
                  "global batch | N procs / 1 proc | 1 process, 2 threads | N procs / 1 proc "
                  "| optimizer state per rank | 1 process | largest rank / 1 process |",
                  "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: "
                  "| ---: |"] + time_rows + [""]
    return lines


def write_section(body):
    text = open(RESULTS).read() if os.path.exists(RESULTS) else "# Benchmark results\n\n"
    lines = text.splitlines(keepends=True)
    start = next((i for i, l in enumerate(lines) if l.strip() == f"## {SECTION}"), None)
    if start is None:
        out = text.rstrip("\n") + "\n\n" + body
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")),
                   len(lines))
        # a hand-written "### Reading" block (dated) stays under the new tables
        keep = next((i for i in range(start + 1, end) if lines[i].startswith("### Reading")),
                    None)
        if keep is not None:
            body = body.rstrip("\n") + "\n\n" + "".join(lines[keep:end]).rstrip("\n") + "\n"
        out = "".join(lines[:start]) + body + ("\n" if end < len(lines) else "") \
            + "".join(lines[end:])
    tmp = RESULTS + f".tmp{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(out)
    os.replace(tmp, RESULTS)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--workers", type=int, nargs="+", default=[2, 4])
    p.add_argument("--models", nargs="+", default=["mlp", "resnet18"], choices=MODELS)
    p.add_argument("--configs", nargs="+", default=[c[0] for c in CONFIGS],
                   choices=[c[0] for c in CONFIGS])
    p.add_argument("--batch", type=int, default=32, help="per-worker batch")
    p.add_argument("--steps", type=int, default=20,
                   help="timed steps (resnet18: half as many)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--timeout", type=float, default=600, help="seconds per job")
    p.add_argument("--no-write", action="store_true")
    p.add_argument("--save", help="also write the raw rounds to this JSON file")
    p.add_argument("--load", help="make the tables from a --save file instead of measuring")
    p.add_argument("--codec", action="store_true",
                   help="only time the 2bit codec on each model's gradient size (one thread)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--single", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        return worker(args)
    if args.single:
        return single(args)
    if args.codec:
        return codec(args)
    if "allreduce" in args.configs:  # the 'vs allreduce' column needs it first
        args.configs = ["allreduce"] + [c for c in args.configs if c != "allreduce"]
    rounds = []
    if args.load:
        with open(args.load) as f:
            saved = json.load(f)
        rounds = saved["rounds"]
        LOADS.extend(saved["loads"])
        args.rounds = len(rounds)
    with tempfile.TemporaryDirectory() as tmpdir:
        for r in range(args.rounds if not args.load else 0):
            rnd = {"dist": {}, "single": {}}
            for n in args.workers:
                for threads in (1, 2):
                    rnd["single"][f"{n}/{threads}"] = run_single(args, n * args.batch, threads,
                                                                 tmpdir)
                    print(f"round {r}: 1 process, {threads} thread(s), batch {n * args.batch}: "
                          + json.dumps({m: round(v["step_ms"], 2) for m, v in
                                        rnd["single"][f"{n}/{threads}"]["models"].items()}),
                          flush=True)
                rnd["dist"][str(n)] = run_dist(args, n, tmpdir)
                print(f"round {r}: {n} workers: " + json.dumps(
                    {m: {c: round(v["step_ms"], 2) for c, v in cs.items()}
                     for m, cs in rnd["dist"][str(n)]["models"].items()}), flush=True)
            rounds.append(rnd)
            if args.save:
                with open(args.save + ".tmp", "w") as f:
                    json.dump({"rounds": rounds, "loads": LOADS}, f)
                os.replace(args.save + ".tmp", args.save)
    rows = tables(rounds, args)
    print("\n".join(rows))
    command = "python bench/dist_bench.py " + " ".join(argv if argv is not None
                                                       else sys.argv[1:])
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    import torch
    head = [f"## {SECTION}", "",
            f"Command: `{command.strip()}` -- {now}; Python {platform.python_version()}, torch "
            f"{torch.__version__}, {os.cpu_count()} CPU(s) shared by all workers; workers "
            f"started by torchrun, OMP_NUM_THREADS=1 and one torch thread per worker, gloo on "
            f"127.0.0.1. Training step = forward + backward + `trainer.step` with "
            f"`gluon.Trainer(..., 'sgd', momentum 0.9, kvstore='dist_sync')`, synthetic data, "
            f"batch {args.batch} per worker; the single-process baseline trains the same model "
            f"on the global batch (N x {args.batch}) with no store. Figures are medians over "
            f"{args.steps} timed steps (resnet18: {max(3, args.steps // 2)}) after "
            f"{args.warmup} warm-up steps, then the median over {args.rounds} rounds; "
            f"ratios are per round (baseline measured in the same round) and then the median. "
            f"Step ms is the slowest rank's step. Bytes are the store's own estimates "
            f"(`comm_stats`: ring all_reduce 2(N-1)/N x size, reduce-scatter (N-1)/N x size, "
            f"all_gather (N-1) x the piece sent); loopback bytes are what the host's `lo` "
            f"interface carried during the timed steps divided by N (every process on the "
            f"host, gloo's framing included). Optimizer state per rank: bytes of the optimizer "
            f"states the rank holds (store's Updater and Trainer's), rank 0 first. "
            f"1-minute load average of the host before and after the jobs: "
            f"{min(LOADS):.1f} to {max(LOADS):.1f} (other sessions' work shares the 2 CPUs).",
            ""]
    body = "\n".join(head + rows) + "\n"
    if not args.no_write:
        write_section(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
