"""Fixture of tests/symbol_control_flow_cases.py from MXNet 1.9.1: symbolic foreach,
while_loop and cond graphs (JSON, names, shapes, types, executor outputs and gradients,
errors) and _CachedOp over a JSON graph.

    /tmp/mxref/bin/python tools/gen_symbol_control_flow_fixtures.py
    # -> tests/fixtures/symbol_control_flow.json
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import mxnet as mx  # noqa: E402
import symbol_control_flow_cases  # noqa: E402

OUT = os.path.join(HERE, "..", "tests", "fixtures", "symbol_control_flow.json")


def main():
    res = symbol_control_flow_cases.run(mx)
    with open(OUT, "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
