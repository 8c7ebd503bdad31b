"""Record which of MXNet 1.9.1's own unit tests pass on MXNet 1.9.1 itself, on this machine.

That set is the conformance suite's denominator (see conformance/README.md). Needs the reference
venv (python3 -m venv /tmp/mxref && /tmp/mxref/bin/pip install mxnet==1.9.1 'numpy<1.24' pytest
pytest-xdist nose mock scipy requests).

    python tools/gen_conformance_baseline.py [--python /tmp/mxref/bin/python] [FILE ...]

Writes conformance/mxnet_baseline.json: {file: {"passed": [...], "failed": [...], "skipped": [...]}}.
Named files are re-run and merged into the existing baseline.
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
from suite import HANDED_FILES, UNITTEST_DIR, outcomes_from_junit  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default="/tmp/mxref/bin/python")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per file")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    out_path = os.path.join(ROOT, "conformance", "mxnet_baseline.json")
    baseline = {}
    if os.path.exists(out_path):
        with open(out_path) as f:
            baseline = json.load(f)
    files = args.files or HANDED_FILES
    for name in files:
        with tempfile.TemporaryDirectory() as tmp:
            xml = os.path.join(tmp, "r.xml")
            cmd = [args.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
                   f"--junitxml={xml}", name]
            env = dict(os.environ, MXNET_HOME=tmp)
            try:
                subprocess.run(cmd, cwd=UNITTEST_DIR, env=env, timeout=args.timeout,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                print(f"{name}: timed out", file=sys.stderr)
            result = outcomes_from_junit(xml) if os.path.exists(xml) else {}
        baseline[name] = {k: sorted(v) for k, v in result.items()}
        counts = {k: len(v) for k, v in result.items()}
        print(name, counts, flush=True)
        tmp_path = out_path + ".tmp"
        with open(tmp_path, "w") as f:
            json.dump(baseline, f, indent=1, sort_keys=True)
            f.write("\n")
        os.replace(tmp_path, out_path)


if __name__ == "__main__":
    main()
