"""Run MXNet 1.9.1's own unit tests (../shared/mxnet-tests) against neogluon through the
``mxnet`` alias, and print a per-file table and a closing ``N passed, M failed`` line.

    python conformance/run.py [--jobs 2] [--timeout 900] [--all] [FILE ...]

The files are MXNet's unittest/ files (``test_x.py``) and its train/ tests (``train/test_x.py``,
run on data that tools/make_example_data.py makes locally). The target is every test that
passes on MXNet 1.9.1 itself here (mxnet_baseline.json, made by tools/gen_conformance_baseline.py).
Tests in skips.txt are skipped with their reason; tests in slow_tests.txt (slow on MXNet itself)
are skipped unless --all is given. The exit status is 1 when a target test fails that
known_failures.txt does not list, 0 otherwise.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from suite import (ALL_FILES, ROOT, UNITTEST_DIR, copy_suite, ensure_train_data,  # noqa: E402
                   outcomes_from_junit, prepare_run_dir, split_name)
from neogluon_conformance_plugin import (SLOW_ENV, load_baseline, load_skips,  # noqa: E402
                                         load_slow, skip_reason, slow_reason)


# The files that take longest (minutes, mostly MXNet's own big-array tests) start first, so that
# two workers finish close together (longest-processing-time-first scheduling).
SLOW_FIRST = ["test_numpy_op.py", "test_gluon.py", "test_optimizer.py", "test_random.py", "test_ndarray.py",
              "test_sparse_ndarray.py", "test_gluon_data.py", "test_gluon_data_vision.py",
              "test_module.py", "train/test_dtype.py", "train/test_resnet_aug.py"]


def load_known_failures() -> set:
    path = os.path.join(HERE, "known_failures.txt")
    if not os.path.exists(path):
        return set()
    with open(path) as f:
        return {line.split("#")[0].strip() for line in f
                if line.strip() and not line.startswith("#")}


def run_file(name: str, timeout: int, python: str, seed, data_dir=None) -> dict:
    folder, base = split_name(name)
    with tempfile.TemporaryDirectory() as tmp:
        copy_suite(os.path.join(tmp, "suite"))
        work_dir = prepare_run_dir(os.path.join(tmp, "suite"), name, data_dir)
        xml = os.path.join(tmp, "report.xml")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([HERE, ROOT, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        env.setdefault("OMP_NUM_THREADS", "1")
        env["MXNET_HOME"] = tmp
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        if seed is not None:
            # common.py's with_seed() and setup_module() read these: one seed makes a run
            # repeatable, so CI's verdict does not depend on the draw.
            env["MXNET_TEST_SEED"] = env["MXNET_MODULE_SEED"] = str(seed)
        cmd = [python, "-m", "neogluon.run", "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "-p", "neogluon_conformance_plugin", "--timeout", "1200", "--durations=10",
               f"--junitxml={xml}", "-o", "junit_family=xunit1", base]
        log_name = name.replace("/", "_").replace(".py", ".log")
        log_path = os.path.join(ROOT, "conformance", "logs", log_name)
        os.makedirs(os.path.dirname(log_path), exist_ok=True)
        timed_out = False
        with open(log_path, "w") as log:
            try:
                subprocess.run(cmd, cwd=work_dir, env=env, timeout=timeout, stdout=log,
                               stderr=subprocess.STDOUT)
            except subprocess.TimeoutExpired:
                timed_out = True
        prefix = "" if folder == "unittest" else folder + "/"
        result = outcomes_from_junit(xml, prefix) if os.path.exists(xml) else \
            {"passed": set(), "failed": set(), "skipped": set()}
        result["timed_out"] = timed_out
        return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2, help="files run at once")
    ap.add_argument("--timeout", type=int, default=2400, help="hard limit per file, seconds")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--json", help="write per-test outcomes here")
    ap.add_argument("--seed", type=int, default=20231,
                    help="MXNET_TEST_SEED/MXNET_MODULE_SEED for every test (default %(default)s)")
    ap.add_argument("--random-seeds", action="store_true",
                    help="draw seeds per test as MXNet's own CI does (results may vary by run)")
    ap.add_argument("--ctx", default="cpu", choices=("cpu", "gpu"), help="default context of the tests: cpu, or gpu "
                    "(mx.gpu(0), as MXNet's own GPU suite runs them)")
    ap.add_argument("--all", action="store_true",
                    help="run the tests in slow_tests.txt too (slow on MXNet itself)")
    ap.add_argument("files", nargs="*", help="test_x.py (unittest/) or train/test_x.py")
    args = ap.parse_args(argv)
    if not os.path.isdir(UNITTEST_DIR):
        print(f"conformance: {UNITTEST_DIR} not found; nothing to run")
        return 0
    os.environ["NEOGLUON_TEST_CONTEXT"] = args.ctx
    if args.all:
        os.environ[SLOW_ENV] = "1"
    files = args.files or ALL_FILES
    baseline, skips, known = load_baseline(), load_skips(), load_known_failures()
    slow = load_slow()
    data_dir = None
    if any(split_name(n)[0] != "unittest" for n in files):
        data_dir = ensure_train_data()
    order = sorted(files, key=lambda n: SLOW_FIRST.index(n) if n in SLOW_FIRST else len(SLOW_FIRST))
    with cf.ThreadPoolExecutor(args.jobs) as pool:
        futures = {name: pool.submit(run_file, name, args.timeout, args.python,
                                     None if args.random_seeds else args.seed, data_dir)
                   for name in order}
        results = {name: fut.result() for name, fut in futures.items()}

    rows, new_failures, fixed = [], [], []
    totals = dict(target=0, passed=0, failed=0, skipped=0)
    for name in files:
        target = set(baseline.get(name, {}).get("passed", ()))
        res = results[name]
        skipped = {t for t in target if skip_reason(t, skips) is not None
                   or slow_reason(t, slow) is not None}
        run_target = target - skipped
        passed = run_target & res["passed"]
        # A target test that did not report (collection error, crash, time-out) counts as failed.
        failed = run_target - passed
        row = dict(file=name, target=len(target), passed=len(passed), failed=len(failed),
                   skipped=len(skipped), timed_out=res["timed_out"])
        rows.append(row)
        for k in totals:
            totals[k] += row[k]
        new_failures += sorted(failed - known)
        fixed += sorted(known & passed)
    width = max(len(r["file"]) for r in rows)
    print(f"{'file':<{width}}  tests  passed  failed  skipped")
    for r in rows:
        note = "  (timed out)" if r["timed_out"] else ""
        print(f"{r['file']:<{width}}  {r['target']:5d}  {r['passed']:6d}  {r['failed']:6d}  "
              f"{r['skipped']:7d}{note}")
    print(f"{'total':<{width}}  {totals['target']:5d}  {totals['passed']:6d}  "
          f"{totals['failed']:6d}  {totals['skipped']:7d}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({n: {k: sorted(v) if isinstance(v, set) else v for k, v in r.items()}
                       for n, r in results.items()}, f, indent=1)
    if fixed:
        print(f"\n{len(fixed)} test(s) in known_failures.txt now pass; remove them from it:")
        for t in fixed:
            print("  " + t)
    if new_failures:
        print(f"\n{len(new_failures)} target test(s) failed that known_failures.txt does not list:")
        for t in new_failures:
            print("  " + t)
    print(f"\nconformance: {totals['passed']} passed, {totals['failed']} failed, "
          f"{totals['skipped']} skipped")
    return 1 if new_failures else 0


if __name__ == "__main__":
    sys.exit(main())
