"""Run every benchmark in bench/ and report which ran (``make bench``).

Each ``bench/<name>.py`` is a standalone script that measures neogluon against its baselines
(plain PyTorch, and MXNet 1.9.1 when ``/tmp/mxref`` holds it) and rewrites its own section of
bench/RESULTS.md. This runner starts them one after the other, each in a fresh interpreter (so
one benchmark's threads, caches or crash cannot touch the next), and then rewrites the
``run_all`` section of bench/RESULTS.md with what ran, how long it took and how it ended.

Usage::

    python bench/run_all.py                 # every benchmark
    python bench/run_all.py --list          # what would run
    python bench/run_all.py trainer_step    # only the named ones
    python bench/run_all.py --timeout 900   # seconds allowed per benchmark
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "RESULTS.md")
SECTION = "run_all"
MXREF = "/tmp/mxref/bin/python"


def discover():
    """Benchmark scripts in bench/, sorted: every ``*.py`` but this runner and ``_*.py``."""
    me = os.path.basename(__file__)
    return sorted(f[:-3] for f in os.listdir(HERE)
                  if f.endswith(".py") and f != me and not f.startswith("_"))


def run_one(name, timeout):
    """Run bench/<name>.py; returns (status, seconds, tail of its output)."""
    cmd = [sys.executable, os.path.join(HERE, name + ".py")]
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    tic = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as err:
        out = err.stdout or ""
        if isinstance(out, bytes):
            out = out.decode("utf-8", "replace")
        return "timed out", time.perf_counter() - tic, out
    status = "ok" if proc.returncode == 0 else f"failed (exit {proc.returncode})"
    return status, time.perf_counter() - tic, proc.stdout


def _section_text(rows, command):
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    mx = "yes" if os.path.exists(MXREF) else "no (MXNet columns are skipped)"
    lines = [f"## {SECTION}", "",
             f"Command: `{command}` -- {now}; Python {platform.python_version()} on "
             f"{platform.machine()}, {os.cpu_count()} CPU(s); MXNet 1.9.1 oracle available: "
             f"{mx}.", "",
             "| benchmark | status | seconds |", "| --- | --- | ---: |"]
    for name, status, secs in rows:
        lines.append(f"| {name} | {status} | {secs:.1f} |")
    lines.append("")
    lines.append("Each benchmark's figures are in its own section below.")
    return "\n".join(lines) + "\n"


def write_section(rows, command):
    """Replace (or add, at the top) the run_all section of RESULTS.md; other sections are
    left byte for byte as they are. The file is re-read right before writing, because the
    benchmarks themselves edit it."""
    text = open(RESULTS).read() if os.path.exists(RESULTS) else "# Benchmark results\n\n"
    new = _section_text(rows, command)
    lines = text.splitlines(keepends=True)
    start = next((i for i, l in enumerate(lines) if l.strip() == f"## {SECTION}"), None)
    if start is None:
        # after the title line(s), before the first section
        first = next((i for i, l in enumerate(lines) if l.startswith("## ")), len(lines))
        head = "".join(lines[:first])
        if head and not head.endswith("\n\n"):
            head = head.rstrip("\n") + "\n\n"
        out = head + new + "\n" + "".join(lines[first:])
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")),
                   len(lines))
        out = "".join(lines[:start]) + new + ("\n" if end < len(lines) else "") \
            + "".join(lines[end:])
    tmp = RESULTS + f".tmp{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(out)
    os.replace(tmp, RESULTS)


def main(argv=None):
    p = argparse.ArgumentParser(description="Run every benchmark in bench/.")
    p.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    p.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    p.add_argument("--timeout", type=float, default=1800.0,
                   help="seconds allowed per benchmark (default: 1800)")
    p.add_argument("--no-write", action="store_true",
                   help="do not update the run_all section of RESULTS.md")
    args = p.parse_args(argv)
    found = discover()
    if args.list:
        print("\n".join(found) if found else "(no benchmarks in bench/)")
        return 0
    unknown = [n for n in args.names if n not in found]
    if unknown:
        p.error(f"unknown benchmark(s) {', '.join(unknown)}; found: {', '.join(found) or 'none'}")
    if args.timeout <= 0:
        p.error("--timeout must be positive")
    names = args.names or found
    if not names:
        print("no benchmarks found in bench/")
        return 1
    rows = []
    for name in names:
        print(f"==> {name}", flush=True)
        status, secs, out = run_one(name, args.timeout)
        tail = out.strip().splitlines()[-15:]
        for line in tail:
            print(f"    {line}")
        print(f"<== {name}: {status} in {secs:.1f}s", flush=True)
        rows.append((name, status, secs))
    command = "python bench/run_all.py" + ("".join(" " + n for n in args.names))
    if not args.no_write:
        write_section(rows, command)
    print("\nsummary:")
    for name, status, secs in rows:
        print(f"  {name:<24} {status:<20} {secs:8.1f}s")
    failed = [n for n, s, _ in rows if s != "ok"]
    if failed:
        print(f"{len(failed)} benchmark(s) did not finish cleanly: {', '.join(failed)}")
        return 1
    print(f"all {len(rows)} benchmark(s) ran; results in {os.path.relpath(RESULTS, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
