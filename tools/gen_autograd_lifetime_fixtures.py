"""Generate the autograd lifetime fixtures from real MXNet 1.9.1.

Run with the oracle interpreter:

    /tmp/mxref/bin/python tools/gen_autograd_lifetime_fixtures.py
    # writes tests/fixtures/autograd/lifetimes.json

For each case of ``tests/autograd_lifetime_cases.py``: its result, or that MXNet raised (and
the first line of its message); for each truncated-BPTT configuration, the losses and the
parameter sums. ``tests/test_autograd_lifetimes.py`` replays the same cases in neogluon.
"""
from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "autograd")
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import autograd_lifetime_cases as cases  # noqa: E402


def _message(err):
    lines = [ln for ln in str(err).splitlines() if "Check failed" in ln]
    return (lines[-1] if lines else str(err).splitlines()[0])[:300]


def main():
    import mxnet as mx
    out = {"mxnet": mx.__version__, "cases": {}, "bptt": {}}
    for name, fn in cases.CASES.items():
        try:
            out["cases"][name] = {"result": fn(mx)}
        except Exception as err:  # noqa: BLE001 - recording what MXNet raises
            out["cases"][name] = {"error": type(err).__name__, "message": _message(err)}
    for cell, hybrid, detach in cases.BPTT_CASES:
        key = f"{cell}/{'hybrid' if hybrid else 'imperative'}/{detach}"
        out["bptt"][key] = cases.bptt(mx, cell, hybrid, detach)
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "lifetimes.json"), "w") as f:
        json.dump(out, f, indent=1)
    print(f"{len(out['cases'])} cases, {len(out['bptt'])} bptt runs")


if __name__ == "__main__":
    main()
