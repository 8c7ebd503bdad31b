"""Write RecordIO files and packed headers with real MXNet 1.9.1 (tests/test_recordio.py
checks neogluon writes the same bytes and reads these).

    /tmp/mxref/bin/python tools/gen_recordio_fixtures.py   # writes tests/fixtures/recordio/*
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import mxnet as mx  # noqa: E402
from recordio_cases import PAYLOADS, HEADERS  # noqa: E402

OUT = os.path.join(HERE, "..", "tests", "fixtures", "recordio")
os.makedirs(OUT, exist_ok=True)
rec = mx.recordio.MXIndexedRecordIO(os.path.join(OUT, "cases.idx"),
                                    os.path.join(OUT, "cases.rec"), "w")
for i, p in enumerate(PAYLOADS):
    rec.write_idx(i, p)
rec.close()
with open(os.path.join(OUT, "packs.bin"), "wb") as f:
    for h, s in HEADERS:
        packed = mx.recordio.pack(mx.recordio.IRHeader(*h), s)
        f.write(len(packed).to_bytes(4, "little") + packed)
