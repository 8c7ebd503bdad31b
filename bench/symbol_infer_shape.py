"""Symbol.infer_shape / infer_type timings on model graphs (issue 20: GluonCV's train
transforms call infer_shape once per image).

Usage: python bench/symbol_infer_shape.py [--graphs resnet50,densenet121,...] [--repeat 20]
                                          [--json out.json] [--no-mxnet]

Runs under neogluon's venv (``import mxnet`` goes to neogluon through ``neogluon.mxnet_alias``)
and, unless --no-mxnet, runs itself again under MXNet 1.9.1 (/tmp/mxref/bin/python) and prints
both. Each graph is built in a fresh process (so the first call is a real first call: no
cache of an earlier graph helps) and timed:

  build       making the graph (``net(mx.sym.var('data'))``), for scale
  first       the first ``infer_shape`` on the new symbol
  repeat      the median of --repeat further calls with the same input shapes
  other       the median of calls alternating between two other input shapes
  fresh       the median of calls with a new input shape each time (the last axis grows by
              one at each call; the batch/time axis for the LSTMs), as GluonCV's transforms
              see one image size after another
  type_first / type_repeat   the same for ``infer_type`` (float32 data)

Graphs:
  resnet50      model zoo resnet50_v1, data (1, 3, 224, 224), the whole network's output
  resnet50_feat the model zoo resnet50_v1's ``features`` children up to the last stage
                (as a detection backbone), data (1, 3, 600, 800)
  frcnn_feat    GluonCV faster_rcnn_resnet50_v1b_voc's ``features`` (when gluoncv imports),
                data (1, 3, 600, 800), as FasterRCNNDefaultTrainTransform uses it
  densenet121   model zoo densenet121 (BatchNorm, Pooling, Concat), data (1, 3, 224, 224)
  inception_v3  model zoo inception_v3, data (1, 3, 299, 299)
  lstm          gluon.rnn.LSTM(256, num_layers=2) unrolled by hybridization on (T, N, C) =
                (35, 8, 128): one RNN operator with begin states zeros((L, 0, H))
  lstm_cells    two LSTMCell layers unrolled 35 steps (many small FullyConnected/slice/
                elementwise nodes), data (8, 35, 128)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MXREF = "/tmp/mxref/bin/python"

GRAPHS = ["resnet50", "resnet50_feat", "frcnn_feat", "densenet121", "inception_v3", "lstm",
          "lstm_cells"]


def _import_mx():
    try:
        import neogluon  # noqa: F401
    except ImportError:
        import mxnet as mx   # MXNet 1.9.1
        return mx, "mxnet"
    import neogluon.mxnet_alias  # noqa: F401
    import mxnet as mx
    return mx, "neogluon"


def build(mx, name):
    """(symbol, {input: shape}, {input: other shapes...}) for a graph name, or None."""
    data = mx.sym.var("data")
    vision = mx.gluon.model_zoo.vision
    if name == "resnet50":
        net = vision.resnet50_v1()
        return net(data), (1, 3, 224, 224), [(2, 3, 224, 224), (1, 3, 256, 320)]
    if name == "resnet50_feat":
        net = vision.resnet50_v1()
        feat = mx.gluon.nn.HybridSequential()
        for child in list(net.features._children.values())[:7]:
            feat.add(child)
        return feat(data), (1, 3, 600, 800), [(1, 3, 512, 683), (1, 3, 600, 900)]
    if name == "frcnn_feat":
        import numpy as np
        # GluonCV 0.10.5 uses np.float / np.int (removed in numpy 1.24) in Faster R-CNN
        for alias, typ in (("float", float), ("int", int), ("bool", bool)):
            if alias not in np.__dict__:
                setattr(np, alias, typ)
        try:
            import gluoncv
        except Exception:  # noqa: BLE001 - optional
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            net = gluoncv.model_zoo.get_model("faster_rcnn_resnet50_v1b_voc", pretrained=False,
                                              pretrained_base=False)
        return net.features(data), (1, 3, 600, 800), [(1, 3, 512, 683), (1, 3, 600, 900)]
    if name == "densenet121":
        net = vision.densenet121()
        return net(data), (1, 3, 224, 224), [(2, 3, 224, 224), (1, 3, 256, 256)]
    if name == "inception_v3":
        net = vision.inception_v3()
        return net(data), (1, 3, 299, 299), [(2, 3, 299, 299), (1, 3, 320, 320)]
    if name == "lstm":
        layer = mx.gluon.rnn.LSTM(256, num_layers=2, input_size=128)
        return layer(data), (35, 8, 128), [(20, 8, 128), (35, 4, 128)]
    if name == "lstm_cells":
        cell = mx.gluon.rnn.SequentialRNNCell()
        cell.add(mx.gluon.rnn.LSTMCell(256, input_size=128))
        cell.add(mx.gluon.rnn.LSTMCell(256, input_size=256))
        outs, _ = cell.unroll(35, data, layout="NTC", merge_outputs=True)
        return outs, (8, 35, 128), [(4, 35, 128), (16, 35, 128)]
    raise ValueError(name)


def _median_time(fn, n):
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def worker(name, repeat):
    mx, impl = _import_mx()
    t0 = time.perf_counter()
    res = build(mx, name)
    t_build = time.perf_counter() - t0
    if res is None:
        return {"graph": name, "impl": impl, "skipped": "not available"}
    sym, shape, others = res
    out = {"graph": name, "impl": impl, "build_s": t_build,
           "nodes": len(json.loads(sym.tojson())["nodes"])}
    t0 = time.perf_counter()
    r = sym.infer_shape(data=shape)
    out["first_s"] = time.perf_counter() - t0
    out["out_shapes"] = [list(s) for s in r[1]]
    out["repeat_s"] = _median_time(lambda: sym.infer_shape(data=shape), repeat)
    k = [0]

    def other():
        sym.infer_shape(data=others[k[0] % len(others)])
        k[0] += 1
    out["other_s"] = _median_time(other, repeat)
    # new input shapes at every call (GluonCV: each image's own size): no cached result helps
    base = list(others[0])
    axis = 0 if name.startswith("lstm") else -1   # the time/batch axis, or the width

    def fresh():
        base[axis] += 1
        sym.infer_shape(data=tuple(base))
    out["fresh_s"] = _median_time(fresh, repeat)
    t0 = time.perf_counter()
    sym.infer_type(data="float32")
    out["type_first_s"] = time.perf_counter() - t0
    out["type_repeat_s"] = _median_time(lambda: sym.infer_type(data="float32"), repeat)
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--graphs", default=",".join(GRAPHS))
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--json")
    p.add_argument("--no-mxnet", action="store_true")
    p.add_argument("--worker")
    args = p.parse_args()
    if args.worker:
        print("RESULT " + json.dumps(worker(args.worker, args.repeat)))
        return
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"),
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    pythons = [("neogluon", sys.executable)]
    if not args.no_mxnet and os.path.exists(MXREF):
        pythons.append(("mxnet", MXREF))
    results = []
    for graph in args.graphs.split(","):
        for impl, py in pythons:
            cmd = [py, os.path.abspath(__file__), "--worker", graph, "--repeat", str(args.repeat)]
            envi = dict(env)
            if impl == "mxnet":
                envi["PYTHONPATH"] = ""   # so neogluon is not importable: real MXNet
            proc = subprocess.run(cmd, capture_output=True, text=True, env=envi, cwd="/tmp")
            line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
            if line is None:
                r = {"graph": graph, "impl": impl, "error": proc.stderr[-2000:]}
            else:
                r = json.loads(line[7:])
            results.append(r)
            if "first_s" in r:
                print(f"{graph:14s} {impl:9s} nodes {r['nodes']:5d}  build {r['build_s']*1e3:8.1f} ms"
                      f"  infer_shape first {r['first_s']*1e3:8.2f} ms  repeat "
                      f"{r['repeat_s']*1e3:7.2f} ms  other shapes {r['other_s']*1e3:7.2f} ms"
                      f"  new shapes {r['fresh_s']*1e3:7.2f} ms"
                      f"  infer_type first {r['type_first_s']*1e3:7.2f} ms  repeat "
                      f"{r['type_repeat_s']*1e3:6.2f} ms", flush=True)
            else:
                print(f"{graph:14s} {impl:9s} {r.get('skipped') or r.get('error')}", flush=True)
    by = {}
    for r in results:
        by.setdefault(r["graph"], {})[r["impl"]] = r
    for g, d in by.items():
        if "neogluon" in d and "mxnet" in d and "out_shapes" in d["neogluon"] \
                and "out_shapes" in d["mxnet"] and d["neogluon"]["out_shapes"] != d["mxnet"]["out_shapes"]:
            print(f"MISMATCH {g}: neogluon {d['neogluon']['out_shapes']} mxnet "
                  f"{d['mxnet']['out_shapes']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
