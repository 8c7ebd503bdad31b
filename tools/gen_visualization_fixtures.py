"""Write tests/fixtures/visualization/viz.json from MXNet 1.9.1 (run with
/tmp/mxref/bin/python).

For each case of tests/visualization_cases.py: the text ``mx.viz.print_summary`` prints, with
the true parameter count of every weighted layer (from the shapes MXNet infers for the
layer's weight, bias, gamma and beta); and the calls ``mx.viz.plot_network`` makes on a
recording stand-in for ``graphviz.Digraph``.
"""
import contextlib
import io
import json
import os
import sys

import numpy as np
import mxnet as mx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import visualization_cases as C  # noqa: E402

OUT = os.path.join(HERE, "..", "tests", "fixtures", "visualization")

# Inputs that hold a weighted layer's trained parameters, by position.
PARAM_INPUTS = {"Convolution": (1, 2), "FullyConnected": (1, 2), "BatchNorm": (1, 2),
                "Embedding": (1,)}


def true_counts(sym, shape):
    """{layer name: number of trained parameters} of the weighted layers."""
    arg_shapes, _, _ = sym.infer_shape(**shape)
    by_name = dict(zip(sym.list_arguments(), arg_shapes))
    nodes = json.loads(sym.tojson())["nodes"]
    res = {}
    for node in nodes:
        positions = PARAM_INPUTS.get(node["op"])
        if positions is None:
            continue
        count = 0
        for pos in positions:
            if pos < len(node["inputs"]):
                src = nodes[node["inputs"][pos][0]]
                count += int(np.prod(by_name[src["name"]]))
        res[node["name"]] = count
    return res


def summaries():
    res = {}
    for case, builder, kwargs in C.SUMMARY_CASES:
        sym = C.BUILDERS[builder](mx)
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            mx.viz.print_summary(sym, **kwargs)
        rec = {"builder": builder, "kwargs": kwargs, "text": buf.getvalue()}
        if "shape" in kwargs:
            rec["true_counts"] = true_counts(sym, kwargs["shape"])
        res[case] = rec
    return res


def plots():
    res = {}
    sys.modules["graphviz"] = C.fake_graphviz_module()
    for case, builder, kwargs in C.PLOT_CASES:
        sym = C.BUILDERS[builder](mx)
        call = dict(kwargs)
        if "dtype" in call:
            call["dtype"] = {k: np.dtype(v).type for k, v in call["dtype"].items()}
        dot = mx.viz.plot_network(sym, **call)
        res[case] = {"builder": builder, "kwargs": kwargs, "calls": dot.calls}
    return res


def main():
    os.makedirs(OUT, exist_ok=True)
    out = {"mxnet": mx.__version__, "summary": summaries(), "plot": plots()}
    with open(os.path.join(OUT, "viz.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
