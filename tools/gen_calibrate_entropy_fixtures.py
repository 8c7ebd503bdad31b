"""Record MXNet 1.9.1's nd.contrib.calibrate_entropy on a few seeded histograms.

    /tmp/mxref/bin/python tools/gen_calibrate_entropy_fixtures.py

Writes tests/fixtures/quantization/calibrate_entropy.json: per case the seed, the data's law,
the bin count and range, num_quantized_bins, and MXNet's (threshold, divergence).
"""
import json
import os

import numpy as np

CASES = [("normal", 0, 2001, 4.0, 255), ("normal", 1, 1001, 3.0, 255),
         ("laplace", 2, 2001, 8.0, 255), ("relu", 3, 4001, 5.0, 511)]


def data(law, seed):
    rng = np.random.RandomState(seed)
    if law == "normal":
        return rng.randn(20000).astype("float32")
    if law == "laplace":
        return rng.laplace(size=20000).astype("float32")
    return np.maximum(rng.randn(20000), 0).astype("float32")


def main():
    import mxnet as mx
    out = []
    for law, seed, bins, rng_, nq in CASES:
        h, e = np.histogram(data(law, seed), bins=bins, range=(-rng_, rng_))
        th, div = mx.nd.contrib.calibrate_entropy(mx.nd.array(h), mx.nd.array(e),
                                                  num_quantized_bins=nq)
        out.append(dict(law=law, seed=seed, bins=bins, range=rng_, num_quantized_bins=nq,
                        threshold=float(th.asnumpy()[0]), divergence=float(div.asnumpy()[0])))
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests",
                        "fixtures", "quantization", "calibrate_entropy.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
