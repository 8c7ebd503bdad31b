"""Record MXNet 1.9.1's ``contrib.RROIAlign`` (rotated ROI align) on CPU.

    /tmp/mxref/bin/python tools/gen_rroi_align_fixtures.py
    # writes tests/fixtures/rroi_align/cases.npz

Cases: rois in and out of the image (partly and wholly), rotations of 0..360 degrees, tiny
rois (width/height clamped to 1), adaptive and fixed sampling ratios, float64 data, and the
symbol form; ``<case>/data``, ``<case>/rois``, ``<case>/out`` and ``<case>/attrs`` (JSON).
"""
import json
import os

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "tests", "fixtures", "rroi_align")
rng = np.random.RandomState(8710)
arrays = {}


def case(name, data, rois, **attrs):
    out = mx.nd.contrib.RROIAlign(mx.nd.array(data, dtype=data.dtype),
                                  mx.nd.array(rois, dtype=rois.dtype), **attrs).asnumpy()
    arrays[f"{name}/data"] = data
    arrays[f"{name}/rois"] = rois
    arrays[f"{name}/out"] = out
    arrays[f"{name}/attrs"] = np.array(json.dumps(attrs))


N, C, H, W = 2, 3, 16, 16
data = rng.uniform(-2, 2, (N, C, H, W)).astype(np.float32)
R = 12
dlen = 224
rois = np.concatenate([rng.randint(0, N, (R, 1)), rng.uniform(0, dlen, (R, 2)),
                       rng.uniform(0, dlen, (R, 2)), rng.uniform(0, 360, (R, 1))],
                      1).astype(np.float32)
rois[0, 1:] = (-40, -40, 30, 30, 10)        # wholly outside
rois[1, 1:] = (112, 112, 3, 2, 45)          # tiny: width/height clamped to 1
rois[2, 1:] = (0, 224, 100, 60, 0)          # partly outside, no rotation
rois[3, 1:] = (223.9, 223.9, 50, 80, 90)    # at the far edge
case("adaptive", data, rois, pooled_size=(3, 4), spatial_scale=H / dlen)
case("ratio2", data, rois, pooled_size=(2, 2), spatial_scale=H / dlen, sampling_ratio=2)
case("ratio1_scale1", data[:, :, :8, :12].copy(),
     np.array([[1, 5, 3, 6, 4, 30], [0, 0.5, 7.5, 20, 2, -75]], np.float32),
     pooled_size=(2, 3), spatial_scale=1.0, sampling_ratio=1)
case("float64", data.astype(np.float64), rois.astype(np.float64), pooled_size=(3, 3),
     spatial_scale=H / dlen)
# the test_operator.py scenario (arange data)
d2 = np.arange(5 * 3 * 16 * 16, dtype=np.float32).reshape(5, 3, 16, 16)
r2 = np.concatenate([rng.randint(0, 5, (7, 1)), rng.uniform(0, dlen, (7, 4)),
                     rng.uniform(0, 180, (7, 1))], 1).astype(np.float32)
case("arange", d2, r2, pooled_size=(3, 4), spatial_scale=16 / dlen)

os.makedirs(OUT, exist_ok=True)
np.savez_compressed(os.path.join(OUT, "cases.npz"), **arrays)
