"""Write tests/fixtures/utils/* from MXNet 1.9.1 (run with /tmp/mxref/bin/python).

Scenarios for gluon.utils: split_data / split_and_load shapes, values and errors, and
clip_global_norm's returned norm, clipped arrays and warnings.
"""
import json
import os
import warnings

import numpy as np
import mxnet as mx
from mxnet import gluon, nd

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "utils")


def download_semantics():
    """How many requests MXNet's download makes for a URL that always fails or whose content
    has the wrong hash, per ``retries``, and what it raises (a local server, no network)."""
    import http.server
    import tempfile
    import threading
    hits = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):  # noqa: N802
            hits[self.path] = hits.get(self.path, 0) + 1
            if self.path.startswith("/missing"):
                self.send_error(404)
                return
            body = b"some bytes"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    out = {}
    with tempfile.TemporaryDirectory() as d:
        for kind in ("missing", "wrong"):
            for retries in (0, 1, 2, 3, 5):
                path = f"/{kind}/r{retries}.bin"
                try:
                    gluon.utils.download(base + path, path=d, retries=retries,
                                         sha1_hash="0" * 40)
                    err = None
                except Exception as e:  # noqa: BLE001 - record what MXNet raises
                    err = type(e).__name__
                out[f"{kind}_{retries}"] = {"hits": hits.get(path, 0), "error": err,
                                            "left": sorted(os.listdir(d))}
    srv.shutdown()
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.RandomState(42)
    arrays = {}
    meta = {"split": [], "clip": []}

    split_cases = [((10, 3), 3, 0, False), ((12, 3), 3, 0, True), ((4, 7), 3, 1, False),
                   ((4, 6), 3, 1, True), ((2, 3), 4, 0, False), ((10, 3), 3, 0, True),
                   ((5, 4, 2), 2, -1, True), ((6,), 1, 0, True), ((3, 5), 2, 1, True)]
    for i, (shape, num, axis, even) in enumerate(split_cases):
        x = rng.randn(*shape).astype(np.float32)
        arrays[f"split{i}_in"] = x
        case = {"shape": shape, "num": num, "axis": axis, "even": even}
        try:
            parts = gluon.utils.split_data(nd.array(x), num, axis, even)
            case["shapes"] = [p.shape for p in parts]
            for j, p in enumerate(parts):
                arrays[f"split{i}_out{j}"] = p.asnumpy()
        except Exception as err:  # noqa: BLE001 - record what MXNet raises
            case["error"] = type(err).__name__
            case["message"] = str(err)
        meta["split"].append(case)

    # split_and_load on numpy input: dtype and contexts
    out = gluon.utils.split_and_load(np.arange(8, dtype=np.float64).reshape(4, 2),
                                     [mx.cpu(0), mx.cpu(1)])
    meta["split_and_load_numpy"] = {"dtypes": [np.dtype(o.dtype).name for o in out],
                                    "ctx": [str(o.context) for o in out],
                                    "values": [o.asnumpy().tolist() for o in out]}
    out = gluon.utils.split_and_load(nd.arange(6).reshape((3, 2)), [mx.cpu(3)])
    meta["split_and_load_single"] = {"shape": out[0].shape, "ctx": str(out[0].context)}
    try:
        gluon.utils.split_and_load(nd.arange(6).reshape((3, 2)), [mx.cpu(0), mx.cpu(1)])
    except Exception as err:  # noqa: BLE001
        meta["split_and_load_error"] = {"error": type(err).__name__, "message": str(err)}

    clip_cases = [([(3, 4), (5,), (2, 2, 2)], 1.0, True), ([(3, 4), (5,)], 100.0, True),
                  ([(10,)], 0.5, False), ([(2, 3), (4,)], 2.0, True)]
    for i, (shapes, max_norm, check) in enumerate(clip_cases):
        xs = [rng.randn(*s).astype(np.float32) for s in shapes]
        for j, x in enumerate(xs):
            arrays[f"clip{i}_in{j}"] = x
        nds = [nd.array(x) for x in xs]
        norm = gluon.utils.clip_global_norm(nds, max_norm, check_isfinite=check)
        case = {"shapes": shapes, "max_norm": max_norm, "check": check,
                "norm_type": type(norm).__name__}
        if isinstance(norm, nd.NDArray):
            case["norm_shape"] = norm.shape
            norm = norm.asnumpy()[0]
        case["norm"] = float(norm)
        for j, a in enumerate(nds):
            arrays[f"clip{i}_out{j}"] = a.asnumpy()
        meta["clip"].append(case)

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        nds = [nd.array([np.nan, 1.0]), nd.array([2.0])]
        norm = gluon.utils.clip_global_norm(nds, 1.0)
        meta["clip_nan"] = {"norm_is_nan": bool(np.isnan(norm)),
                            "warnings": [str(x.message) for x in w],
                            "categories": [x.category.__name__ for x in w],
                            "out": [np.where(np.isnan(a.asnumpy()), -999.0, a.asnumpy()).tolist()
                                    for a in nds]}
    try:
        gluon.utils.clip_global_norm([], 1.0)
    except Exception as err:  # noqa: BLE001
        meta["clip_empty_error"] = type(err).__name__

    meta["download"] = download_semantics()

    np.savez(os.path.join(OUT, "utils.npz"), **arrays)
    with open(os.path.join(OUT, "utils.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
