"""Record mx.image.ImageIter batches, augmenter pipelines and mx.io.ImageRecordIter batches
from real MXNet 1.9.1 on the PNGs in tests/fixtures/image_iter (tests/image_iter_cases.py).

    /tmp/mxref/bin/python tools/gen_image_iter_fixtures.py
"""
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402
from image_iter_cases import ROOT, records, record_iter_records  # noqa: E402

with tempfile.TemporaryDirectory() as tmp:
    recs = records(mx, os.path.join(tmp, "images.lst"))
    rec_iter, rec_arrays = record_iter_records(mx, tmp)
with open(os.path.join(ROOT, "expected.json"), "w") as f:
    json.dump(recs, f, indent=0)
with open(os.path.join(ROOT, "record_iter.json"), "w") as f:
    json.dump(rec_iter, f, indent=0)
np.savez(os.path.join(ROOT, "record_iter.npz"), **rec_arrays)
