"""Synthetic GluonTS dataset shared by both sides of bench/gluonts_models.py (issue 31).

Usage: python bench/gluonts_data.py OUT.jsonl [--series 300] [--length 600] [--freq H] [--seed 0]

Writes one JSON object per line, ``{"start": ..., "target": [...], "item_id": ...}`` (the
format GluonTS's JsonLinesFile / ``load_datasets`` read). Only numpy is needed, and numpy's
legacy ``RandomState`` streams are the same in numpy 1.x and 2.x, so any interpreter writes
the same file; the benchmark reads the file rather than regenerating, so both sides see the
same bytes. Each series: level * (1 + daily and weekly seasonality with random phase and
amplitude + a small trend) + Gaussian noise, non-negative, levels spread over two decades.
"""
import argparse
import json

import numpy as np


def make(series=300, length=600, freq="H", seed=0):
    rs = np.random.RandomState(seed)
    period = {"H": 24, "D": 7}[freq]
    t = np.arange(length, dtype=np.float64)
    rows = []
    for i in range(series):
        level = 10.0 ** rs.uniform(0.5, 2.5)
        a1, a2 = rs.uniform(0.1, 0.6), rs.uniform(0.0, 0.3)
        p1, p2 = rs.uniform(0, 2 * np.pi, size=2)
        trend = rs.uniform(-0.3, 0.3) / length
        noise = rs.uniform(0.02, 0.15)
        season = (a1 * np.sin(2 * np.pi * t / period + p1)
                  + a2 * np.sin(2 * np.pi * t / (7 * period) + p2))
        y = level * (1.0 + season + trend * t + noise * rs.randn(length))
        y = np.maximum(y, 0.0)
        start = "2021-01-%02d 00:00:00" % (1 + i % 28) if freq == "H" else "2019-%02d-01" % (1 + i % 12)
        rows.append({"start": start, "target": [round(float(v), 4) for v in y],
                     "item_id": "s%03d" % i})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--series", type=int, default=300)
    ap.add_argument("--length", type=int, default=600)
    ap.add_argument("--freq", default="H", choices=["H", "D"])
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    with open(a.out, "w") as f:
        for r in make(a.series, a.length, a.freq, a.seed):
            f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
