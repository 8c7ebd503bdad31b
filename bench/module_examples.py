"""MXNet 1.9.1's own symbolic example scripts, unmodified, on neogluon and on MXNet (issue 30).

Usage: python bench/module_examples.py [--cases mnist-mlp,mnist-lenet,cifar-resnet,lstm]
           [--rounds 2] [--threads 1] [--epochs N] [--data DIR] [--no-write]

The scripts are examples/mxnet_symbolic/ (MXNet's example/image-classification/train_mnist.py
and train_cifar10.py with common/fit.py, and example/rnn/bucketing/lstm_bucketing.py). Each
case runs a script as a whole process, once under MXNet 1.9.1 (``/tmp/mxref/bin/python
script.py``) and once under neogluon (``.venv/bin/python -m neogluon.run script.py``), with the
same arguments, in the same working directory, on the same locally made data
(tools/make_example_data.py), ``--rounds`` times, the order alternating from round to round
(MXNet first, then neogluon first, ...) so that a slow phase of this shared host does not
favour one side.

The figures come from the scripts' own log lines: ``Epoch[k] Time cost=S`` (the Module's
per-epoch wall time: the training pass over the data, with its data loading and metric
updates) and the last ``Validation-accuracy`` / ``Validation-perplexity``. Per process, the
steady epoch time is the median over epochs 1.. (epoch 0 also binds the graph; it is reported
on its own); per round the ratio is MXNet's steady epoch time over neogluon's (above 1:
neogluon is faster); the table gives the median ratio over the rounds. Results go to the
``module_examples`` section of bench/RESULTS.md.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "RESULTS.md")
SECTION = "module_examples"
MXREF = "/tmp/mxref/bin/python"
EXAMPLES = os.path.join(ROOT, "examples", "mxnet_symbolic")
MAKE_DATA = os.path.join(ROOT, "tools", "make_example_data.py")

IMAGE_CLS = os.path.join(EXAMPLES, "image-classification")
CASES = {
    # name: (script, arguments, default epochs, metric)
    "mnist-mlp": (os.path.join(IMAGE_CLS, "train_mnist.py"), ["--network", "mlp"], 3,
                  "accuracy"),
    "mnist-lenet": (os.path.join(IMAGE_CLS, "train_mnist.py"), ["--network", "lenet"], 2,
                    "accuracy"),
    "cifar-resnet": (os.path.join(IMAGE_CLS, "train_cifar10.py"),
                     ["--network", "resnet", "--num-layers", "20"], 3, "accuracy"),
    # The script's own defaults (lr 0.01, no momentum) barely move the perplexity in two
    # epochs; with momentum both libraries learn the corpus (MXNet: about 26, then 15).
    "lstm": (os.path.join(EXAMPLES, "rnn", "bucketing", "lstm_bucketing.py"),
             ["--lr", "0.05", "--mom", "0.9"], 2, "perplexity"),
}
# The data the benchmark trains on (tools/make_example_data.py's options): MNIST-shaped digits
# at half MNIST's size (a LeNet epoch stays near a minute on one core), CIFAR-10-shaped colour
# digits, and a grammar corpus of 8,000 sentences.
DATA_ARGS = ["--mnist-train", "30000", "--mnist-test", "5000", "--cifar-train", "10000",
             "--cifar-test", "2000", "--text-train", "8000", "--text-test", "800"]

_TIME_RE = re.compile(r"Epoch\[(\d+)\] Time cost=([0-9.]+)")
_VAL_RE = re.compile(r"Epoch\[(\d+)\] Validation-(accuracy|perplexity)=([0-9.eE+-]+|nan|inf)")


def parse_log(text: str) -> dict:
    """Epoch times and validation values from a script's log.

    Returns {"epoch_s": [seconds of epoch 0, 1, ...], "val": {"accuracy": [...], ...}}."""
    epoch_s = {}
    for m in _TIME_RE.finditer(text):
        epoch_s[int(m.group(1))] = float(m.group(2))
    val = {}
    for m in _VAL_RE.finditer(text):
        val.setdefault(m.group(2), {})[int(m.group(1))] = float(m.group(3))
    return {"epoch_s": [epoch_s[k] for k in sorted(epoch_s)],
            "val": {k: [v[e] for e in sorted(v)] for k, v in val.items()}}


def steady_epoch_s(epoch_s):
    """Median epoch time over epochs 1.. (epoch 0 alone when there is only one)."""
    if not epoch_s:
        return None
    return statistics.median(epoch_s[1:]) if len(epoch_s) > 1 else epoch_s[0]


def script_command(lib: str, script: str, args) -> list:
    if lib == "mxnet":
        return [MXREF, script] + list(args)
    return [sys.executable, "-m", "neogluon.run", script] + list(args)


def script_env(threads: int) -> dict:
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads),
               MXNET_CPU_WORKER_NTHREADS=str(threads), PYTHONUNBUFFERED="1")
    # (train_mnist.py reads its idx files with NumPy 1's np.fromstring on bytes: neogluon.run
    # puts that back, neogluon/_numpy1.py; MXNet's venv has NumPy 1.23)
    paths = [ROOT] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def run_script(lib, script, args, cwd, threads, timeout):
    """Run one script to its end; returns (parsed log, seconds, return code, log tail)."""
    tic = time.perf_counter()
    try:
        proc = subprocess.run(script_command(lib, script, args), cwd=cwd, env=script_env(threads),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=timeout)
        out, rc = proc.stdout, proc.returncode
    except subprocess.TimeoutExpired as err:
        out = err.stdout or ""
        out = out.decode("utf-8", "replace") if isinstance(out, bytes) else out
        rc = "timeout"
    return parse_log(out), time.perf_counter() - tic, rc, out[-3000:]


def make_data(data_dir):
    subprocess.run([sys.executable, MAKE_DATA, data_dir] + DATA_ARGS, check=True)


def _fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


def run_case(name, rounds, threads, epochs, data_dir, timeout):
    script, extra, default_epochs, metric = CASES[name]
    args = extra + ["--num-epochs", str(epochs or default_epochs)]
    runs = {"mxnet": [], "neogluon": []}
    ratios = []
    for r in range(rounds):
        order = ("mxnet", "neogluon") if r % 2 == 0 else ("neogluon", "mxnet")
        steady = {}
        for lib in order:
            parsed, secs, rc, tail = run_script(lib, script, args, data_dir, threads, timeout)
            ok = rc == 0 and parsed["epoch_s"]
            vals = parsed["val"].get(metric, [])
            runs[lib].append(dict(ok=bool(ok), rc=rc, seconds=secs, epoch_s=parsed["epoch_s"],
                                  final=vals[-1] if vals else None))
            steady[lib] = steady_epoch_s(parsed["epoch_s"]) if ok else None
            print(f"{name} round {r} {lib}: rc={rc} epochs={parsed['epoch_s']} "
                  f"{metric}={vals}", flush=True)
            if not ok:
                print(tail, flush=True)
        if steady["mxnet"] and steady["neogluon"]:
            ratios.append(steady["mxnet"] / steady["neogluon"])
    return dict(name=name, args=args, metric=metric, runs=runs, ratios=ratios)


def summarise(res):
    row = {"case": res["name"], "args": " ".join(res["args"]), "metric": res["metric"]}
    for lib in ("mxnet", "neogluon"):
        good = [r for r in res["runs"][lib] if r["ok"]]
        row[lib + "_ok"] = f"{len(good)}/{len(res['runs'][lib])}"
        row[lib + "_steady"] = statistics.median(steady_epoch_s(r["epoch_s"]) for r in good) \
            if good else None
        row[lib + "_first"] = statistics.median(r["epoch_s"][0] for r in good) if good else None
        finals = [r["final"] for r in good if r["final"] is not None]
        row[lib + "_final"] = finals
    row["ratio"] = statistics.median(res["ratios"]) if res["ratios"] else None
    return row


def section_text(rows, command, threads):
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"## {SECTION}", "",
        f"Command: `{command}` -- {now}; Python {platform.python_version()} on "
        f"{platform.machine()}, {os.cpu_count()} CPU(s) (shared); {threads} thread(s) for both "
        f"(OMP/MKL/MXNET_CPU_WORKER_NTHREADS). MXNet 1.9.1's example scripts, unmodified "
        f"(examples/mxnet_symbolic/), each a whole process: `/tmp/mxref/bin/python script.py "
        f"ARGS` against `.venv/bin/python -m neogluon.run script.py ARGS`, alternating, same "
        f"data (tools/make_example_data.py {' '.join(DATA_ARGS)}).",
        "",
        "Epoch times are the scripts' own `Time cost` lines; *steady* is the median over "
        "epochs 1.. of a run (epoch 0 also binds), median over runs; *MXNet / neogluon* is the "
        "median over rounds of the per-round ratio of steady epoch times (above 1: neogluon "
        "faster). *final* lists the last epoch's validation value of each run.",
        "",
        "| case | arguments | runs ok (MXNet, neogluon) | MXNet steady s/epoch | neogluon "
        "steady s/epoch | MXNet / neogluon | epoch 0 s (MXNet, neogluon) | final MXNet | "
        "final neogluon |",
        "| --- | --- | --- | ---: | ---: | ---: | --- | --- | --- |",
    ]
    for r in rows:
        digits = 4 if r["metric"] == "accuracy" else 2
        fin = lambda xs: ", ".join(f"{x:.{digits}f}" for x in xs) or "-"  # noqa: E731
        lines.append(
            f"| {r['case']} | `{r['args']}` | {r['mxnet_ok']}, {r['neogluon_ok']} | "
            f"{_fmt(r['mxnet_steady'])} | {_fmt(r['neogluon_steady'])} | "
            f"{_fmt(r['ratio'])}x | {_fmt(r['mxnet_first'], 1)}, {_fmt(r['neogluon_first'], 1)} "
            f"| {r['metric']} {fin(r['mxnet_final'])} | {fin(r['neogluon_final'])} |")
    return "\n".join(lines) + "\n"


def write_section(body):
    """Replace this benchmark's section of bench/RESULTS.md (re-read just before, atomic)."""
    text = open(RESULTS).read() if os.path.exists(RESULTS) else "# Benchmark results\n\n"
    head = f"## {SECTION}\n"
    start = text.find(head)
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + body.rstrip("\n") + "\n"
    else:
        nxt = text.find("\n## ", start + len(head))
        end = len(text) if nxt < 0 else nxt + 1
        text = text[:start] + body.rstrip("\n") + "\n" + ("\n" if nxt >= 0 else "") + \
            text[end:]
    tmp = RESULTS + f".tmp{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, RESULTS)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=None,
                    help="epochs per run (default: per case, 2 or 3)")
    ap.add_argument("--data", default=os.path.join(tempfile.gettempdir(),
                                                   "neogluon-module-examples-data"),
                    help="where the locally made data go (made once, then reused)")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per script run")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    if not os.path.exists(MXREF):
        print(f"module_examples: {MXREF} not found; the benchmark compares against MXNet 1.9.1")
        return 0
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        ap.error(f"unknown case(s) {unknown}; choose from {list(CASES)}")
    make_data(args.data)
    rows = [summarise(run_case(c, args.rounds, args.threads, args.epochs, args.data,
                               args.timeout)) for c in cases]
    command = "python bench/module_examples.py " + " ".join(argv if argv is not None
                                                             else sys.argv[1:])
    body = section_text(rows, command.strip(), args.threads)
    print(body)
    if not args.no_write:
        write_section(body)
    return 0 if all(r["ratio"] is not None for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
