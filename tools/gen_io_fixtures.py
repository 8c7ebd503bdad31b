"""Record mx.io iterator behaviour from real MXNet 1.9.1 (tests/io_cases.py scenarios).

    /tmp/mxref/bin/python tools/gen_io_fixtures.py     # writes tests/fixtures/io/*.json
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import mxnet as mx  # noqa: E402
from io_cases import ndarrayiter_records  # noqa: E402

OUT = os.path.join(HERE, "..", "tests", "fixtures", "io")
os.makedirs(OUT, exist_ok=True)
with open(os.path.join(OUT, "ndarrayiter.json"), "w") as f:
    json.dump(ndarrayiter_records(mx), f, indent=0)
