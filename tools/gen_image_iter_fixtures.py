"""Record mx.image.ImageIter batches and augmenter pipelines from real MXNet 1.9.1 on the
PNGs in tests/fixtures/image_iter (tests/image_iter_cases.py scenarios).

    /tmp/mxref/bin/python tools/gen_image_iter_fixtures.py
"""
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import mxnet as mx  # noqa: E402
from image_iter_cases import ROOT, records  # noqa: E402

with tempfile.TemporaryDirectory() as tmp:
    recs = records(mx, os.path.join(tmp, "images.lst"))
with open(os.path.join(ROOT, "expected.json"), "w") as f:
    json.dump(recs, f, indent=0)
