"""Fixtures for ``mx.operator`` custom operators and ``mx.registry`` (tests/custom_op_cases.py)
from MXNet 1.9.1.

    /tmp/mxref/bin/python tools/gen_custom_op_fixtures.py   # writes tests/fixtures/custom_op/
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import mxnet as mx  # noqa: E402
import custom_op_cases  # noqa: E402

OUT = os.path.join(HERE, "..", "tests", "fixtures", "custom_op")


def main():
    res = custom_op_cases.run_cases(mx)
    try:
        mx.nd.Custom(mx.nd.ones((2,)), op_type="t_not_registered")
        mx.nd.waitall()
        res["unregistered"] = None
    except Exception as e:  # noqa: BLE001 - recorded
        res["unregistered"] = type(e).__name__
    res["registry"] = custom_op_cases.run_registry_cases(mx)
    res["symbol"] = custom_op_cases.run_symbol_cases(mx)
    res["symbol_multi"] = custom_op_cases.run_symbol_multi_cases(mx)
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "custom_op.json"), "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
