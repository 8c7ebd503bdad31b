"""Training-step speed of several configurations in live processes taking turns (issue 17).

Usage: python bench/paired.py [--model resnet18] [--threads 1] [--rounds 20] [--steps 3]
           [--warmup 8] [--configs neogluon/replay,mxnet/hybrid,torch/eager] [--json out.json]
       python bench/paired.py --configs neogluon/replay,neogluon/replay+NEOGLUON_CONV_KERNELS=0

This host's speed drifts by up to 1.6x from one minute to the next, and
``hybridize_compile.py`` compares processes that ran minutes apart. Here every configuration
(``lib/mode`` as in ``hybridize_compile.py``, optionally followed by ``+NAME=VALUE`` environment
settings for that process alone; ``mxnet`` runs in /tmp/mxref's interpreter) is
one process that builds its net, warms up and then waits. The driver tells them in turn to run
``--steps`` steps and report the wall and CPU time they took; the order rotates every round.
Only one process works at a time, and the readings compared within a round are seconds apart,
so a slow phase of the host slows both sides of each ratio.

Reported per configuration: ms per step (wall clock), minimum and median over the rounds; and
for each configuration after the first, the first one's speed relative to it (``x``: how many
times faster the first configuration is), per round: the median and the quartiles over the
rounds, and the ratio of the minima.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import hybridize_compile as hc  # noqa: E402


def serve(lib, mode, name, warmup):
    """Worker: build, warm up, print 'ready', then answer 'run K' lines until 'quit'."""
    if lib == "torch":
        step, sync = hc.torch_step(mode, name), (lambda: None)
    else:
        step, wait_ready, _, sync = hc.gluon_step(lib, mode, name)
        wait_ready()
    for _ in range(warmup):
        step()
    sync()
    print("ready", flush=True)
    for line in sys.stdin:
        cmd = line.split()
        if not cmd or cmd[0] == "quit":
            break
        k = int(cmd[1])
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(k):
            step()
        sync()       # MXNet: the last step's backward and update are still queued
        print(json.dumps({"wall_ms": (time.perf_counter() - w0) * 1000 / k,
                          "cpu_ms": (time.process_time() - c0) * 1000 / k}), flush=True)


def _start(cfg, args):
    """Start a worker for ``lib/mode`` or ``lib/mode+NAME=VALUE+...`` (environment settings
    of that process only: to compare two settings of one library, such as a kernel on and
    off)."""
    name, *settings = cfg.split("+")
    lib, mode = name.split("/")
    python = hc.MXREF if lib == "mxnet" else sys.executable
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads),
               MXNET_CPU_WORKER_NTHREADS=str(args.threads), PYTHONPATH=ROOT)
    for kv in settings:
        k, sep, v = kv.partition("=")
        if not sep or not k:
            raise SystemExit(f"{cfg}: settings after '+' must be NAME=VALUE")
        env[k] = v
    p = subprocess.Popen([python, os.path.abspath(__file__), "--serve", lib, mode, args.model,
                          str(args.warmup)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, env=env, cwd=ROOT)
    line = p.stdout.readline()
    if line.strip() != "ready":
        p.kill()
        raise SystemExit(f"{cfg} did not start (exit {p.wait()})")
    return p


def _quartiles(v):
    v = sorted(v)
    return v[len(v) // 4], statistics.median(v), v[(3 * len(v)) // 4]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="resnet18", choices=sorted(hc.SHAPES))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--steps", type=int, default=3, help="steps per turn")
    ap.add_argument("--warmup", type=int, default=8)
    ap.add_argument("--configs", default="neogluon/replay,mxnet/hybrid,torch/eager")
    ap.add_argument("--json", default="")
    ap.add_argument("--serve", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        lib, mode, name, warmup = args.serve
        serve(lib, mode, name, int(warmup))
        return
    configs = [c for c in args.configs.split(",")
               if not c.startswith("mxnet/") or os.path.exists(hc.MXREF)]
    procs = {}
    try:
        for c in configs:        # one at a time: a start (imports, first steps) is CPU-heavy
            procs[c] = _start(c, args)
        wall = {c: [] for c in configs}
        cpu = {c: [] for c in configs}
        for r in range(args.rounds):
            order = configs[r % len(configs):] + configs[:r % len(configs)]
            for c in order:
                p = procs[c]
                p.stdin.write(f"run {args.steps}\n")
                p.stdin.flush()
                res = json.loads(p.stdout.readline())
                wall[c].append(res["wall_ms"])
                cpu[c].append(res["cpu_ms"])
    finally:
        for p in procs.values():
            try:
                p.stdin.write("quit\n")
                p.stdin.close()
            except OSError:
                pass
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
    base = configs[0]
    report = {"command": " ".join(["python"] + sys.argv), "threads": args.threads,
              "model": args.model, "rounds": args.rounds, "steps_per_turn": args.steps,
              "ms_per_step": {c: {"wall_min": round(min(wall[c]), 1),
                                  "wall_median": round(statistics.median(wall[c]), 1),
                                  "cpu_min": round(min(cpu[c]), 1)} for c in configs},
              f"{base} speed-up": {}}
    for c in configs[1:]:
        per_round = [o / b for o, b in zip(wall[c], wall[base])]
        q1, med, q3 = _quartiles(per_round)
        report[f"{base} speed-up"][c] = {
            "per_round_median": round(med, 3), "quartiles": [round(q1, 3), round(q3, 3)],
            "min_over_min": round(min(wall[c]) / min(wall[base]), 3)}
    hc.emit(report, args.json)


if __name__ == "__main__":
    main()
