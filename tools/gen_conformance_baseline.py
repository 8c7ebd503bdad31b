"""Record which of MXNet 1.9.1's own unit tests pass on MXNet 1.9.1 itself, on this machine.

That set is the conformance suite's denominator (see conformance/README.md). Needs the reference
venv (python3 -m venv /tmp/mxref && /tmp/mxref/bin/pip install mxnet==1.9.1 'numpy<1.24' pytest
pytest-xdist nose mock scipy requests).

    python tools/gen_conformance_baseline.py [--python /tmp/mxref/bin/python] [FILE ...]
    python tools/gen_conformance_baseline.py --slow-list [--slow-seconds 60] [FILE ...]

Writes conformance/mxnet_baseline.json: {file: {"passed": [...], "failed": [...], "skipped": [...]}}.
Named files (``test_x.py`` for unittest/, ``train/test_x.py`` for train/) are re-run and merged
into the existing baseline. Each file runs in a fresh copy of the suite (the tests write files
into their working directory); the train tests get the locally made data of
tools/make_example_data.py, as conformance/run.py gives them.

With --slow-list, the files run one test at a time (no -n 2, so that the times are each test's
own) and conformance/slow_tests.txt is rewritten for those files: every test that passed on
MXNet and took longer than --slow-seconds, with the seconds it took (``make conformance`` skips
them, ``make conformance-all`` runs them). That mode leaves the baseline as it is (it prints
the tests whose outcome differs from it).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "conformance"))
from suite import (ALL_FILES, copy_suite, ensure_train_data, outcomes_from_junit,  # noqa: E402
                   prepare_run_dir, split_name)
from neogluon_conformance_plugin import load_slow  # noqa: E402

SLOW_PATH = os.path.join(ROOT, "conformance", "slow_tests.txt")
SLOW_HEADER = """\
# Tests of the conformance suite that are slow on MXNet 1.9.1 itself on this machine: each took
# longer than a minute there (the seconds it took follow the id). `make conformance` skips them
# so that the everyday run stays fast; `make conformance-all` (run.py --all) runs them.
# Regenerate: python tools/gen_conformance_baseline.py --slow-list [FILE ...]
"""


def junit_times(path: str, prefix: str) -> dict:
    """{test id: seconds} of the passed tests of a junit report (setup and call together)."""
    times = {}
    passed = outcomes_from_junit(path, prefix)["passed"]
    for case in ET.parse(path).iter("testcase"):
        parts = case.get("classname", "").split(".")
        test_id = "::".join([prefix + parts[0] + ".py"] + parts[1:] + [case.get("name", "")])
        if test_id in passed:
            times[test_id] = times.get(test_id, 0.0) + float(case.get("time", 0) or 0)
    return times


def run_one(name: str, python: str, timeout: int, parallel: bool, data_dir):
    folder, base = split_name(name)
    prefix = "" if folder == "unittest" else folder + "/"
    with tempfile.TemporaryDirectory() as tmp:
        copy_suite(os.path.join(tmp, "suite"))
        work_dir = prepare_run_dir(os.path.join(tmp, "suite"), name, data_dir)
        xml = os.path.join(tmp, "r.xml")
        cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        if parallel:
            cmd += ["-n", "2"]
        cmd += [f"--junitxml={xml}", "-o", "junit_family=xunit1", base]
        env = dict(os.environ, MXNET_HOME=tmp)
        try:
            subprocess.run(cmd, cwd=work_dir, env=env, timeout=timeout,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            print(f"{name}: timed out", file=sys.stderr)
        if not os.path.exists(xml):
            return {}, {}
        return outcomes_from_junit(xml, prefix), junit_times(xml, prefix)


def write_json(path, obj):
    tmp_path = path + ".tmp"
    with open(tmp_path, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp_path, path)


def write_slow_list(slow: dict):
    lines = [SLOW_HEADER]
    for test_id in sorted(slow):
        lines.append(f"{test_id}   # {slow[test_id]:.0f} s\n")
    tmp_path = SLOW_PATH + ".tmp"
    with open(tmp_path, "w") as f:
        f.write("".join(lines))
    os.replace(tmp_path, SLOW_PATH)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default="/tmp/mxref/bin/python")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per file")
    ap.add_argument("--slow-list", action="store_true",
                    help="run the tests one at a time and rewrite slow_tests.txt for the files")
    ap.add_argument("--slow-seconds", type=float, default=60.0)
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    out_path = os.path.join(ROOT, "conformance", "mxnet_baseline.json")
    baseline = {}
    if os.path.exists(out_path):
        with open(out_path) as f:
            baseline = json.load(f)
    files = args.files or ALL_FILES
    data_dir = None
    if any(split_name(n)[0] != "unittest" for n in files):
        data_dir = ensure_train_data()
    slow = load_slow(SLOW_PATH)
    for name in files:
        result, times = run_one(name, args.python, args.timeout, not args.slow_list, data_dir)
        counts = {k: len(v) for k, v in result.items()}
        print(name, counts, flush=True)
        if not args.slow_list:
            # re-read first: another run (other files) may have written since this one began
            if os.path.exists(out_path):
                with open(out_path) as f:
                    baseline = json.load(f)
            baseline[name] = {k: sorted(v) for k, v in result.items()}
            write_json(out_path, baseline)
        else:
            recorded = set(baseline.get(name, {}).get("passed", ()))
            now = set(result.get("passed", ()))
            for test_id in sorted(recorded ^ now):
                state = "passes now" if test_id in now else "did not pass now"
                print(f"  differs from the baseline: {test_id} {state}", flush=True)
            slow = load_slow(SLOW_PATH)  # as above: merge with what others wrote meanwhile
            slow = {t: s for t, s in slow.items() if not t.startswith(name + "::")}
            slow.update({t: s for t, s in times.items() if s > args.slow_seconds})
            write_slow_list(slow)
            longest = sorted(times.items(), key=lambda kv: -kv[1])[:3]
            print("  longest:", ", ".join(f"{t} {s:.0f} s" for t, s in longest), flush=True)


if __name__ == "__main__":
    main()
