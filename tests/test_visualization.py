"""mx.viz: print_summary's table and plot_network's digraph, against MXNet 1.9.1's
(tests/fixtures/visualization/viz.json, written by tools/gen_visualization_fixtures.py from
the networks of tests/visualization_cases.py)."""
import contextlib
import io
import json
import os
import sys
import warnings

import numpy as np
import pytest

import neogluon as mx
from neogluon.base import MXNetError

import visualization_cases as C

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "visualization",
                   "viz.json")
with open(FIX) as _f:
    REF = json.load(_f)


def _summary(sym, **kwargs):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        mx.viz.print_summary(sym, **kwargs)
    return buf.getvalue()


def _positions(kwargs):
    line_length = kwargs.get("line_length", 120)
    positions = kwargs.get("positions", [.44, .64, .74, 1.])
    if positions[-1] <= 1:
        positions = [int(line_length * p) for p in positions]
    return positions


def _with_true_counts(text, counts, positions):
    """MXNet's table with each weighted layer's Param # replaced by its true count (MXNet
    1.9.1 miscounts some layers: see neogluon/visualization.py) and the total updated."""
    lo, hi = positions[1], positions[2]
    lines = text.split("\n")
    total = 0
    for k, line in enumerate(lines):
        if line.startswith("Total params: "):
            continue
        layer = line[:positions[0]].strip()
        if "(" in layer and line[lo:hi].strip().isdigit():
            name = layer[:layer.index("(")]
            count = counts.get(name, int(line[lo:hi]))
            total += count
            field = str(count)[:hi - lo]
            lines[k] = line[:lo] + field + " " * (hi - lo - len(field)) + line[hi:]
    return "\n".join(f"Total params: {total}" if line.startswith("Total params: ") else line
                     for line in lines)


@pytest.mark.parametrize("case", [c[0] for c in C.SUMMARY_CASES])
def test_print_summary_prints_mxnets_table(case):
    rec = REF["summary"][case]
    kwargs = dict(rec["kwargs"])
    if "shape" in kwargs:
        kwargs["shape"] = {k: tuple(v) for k, v in kwargs["shape"].items()}
    got = _summary(C.BUILDERS[rec["builder"]](mx), **kwargs)
    expected = rec["text"]
    if "true_counts" in rec:
        expected = _with_true_counts(expected, rec["true_counts"], _positions(kwargs))
    assert got == expected


def test_print_summary_is_mxnets_text_where_mxnet_counts_right():
    # mlp and convnet: every count of MXNet's table is the true one, so the text is MXNet's
    for case in ("mlp", "mlp_narrow", "mlp_fractions", "convnet", "branches"):
        rec = REF["summary"][case]
        kwargs = dict(rec["kwargs"], shape={k: tuple(v) for k, v in
                                            rec["kwargs"]["shape"].items()})
        assert _summary(C.BUILDERS[rec["builder"]](mx), **kwargs) == rec["text"], case


def test_print_summary_counts_the_true_parameters_where_mxnet_miscounts():
    # an FC on a 4-D input (MXNet counted its channels only), a layer whose data is a
    # variable other than the first node (MXNet counted its bias only)
    text = _summary(C.viz_test(mx), shape={"data": (1, 3, 28)})
    row = next(line for line in text.splitlines() if line.startswith("fc1(FullyConnected)"))
    assert row.split()[2] == str(32 * 6 * 6 * 10 + 10)
    sym = C.lstmish(mx)
    shapes = {"x0": (4, 5), "x1": (4, 5), "h0": (4, 8), "c0": (4, 8)}
    text = _summary(sym, shape=shapes)
    arg_shapes = dict(zip(sym.list_arguments(), sym.infer_shape(**shapes)[0]))
    n_params = sum(int(np.prod(s)) for n, s in arg_shapes.items()
                   if n.endswith(("_weight", "_bias")))
    # every FC counted once per use: the shared i2h/h2h weights twice
    per_use = n_params + (5 * 32 + 32) + (8 * 32 + 32)
    assert text.splitlines()[-2] == f"Total params: {per_use}"


def test_print_summary_errors():
    with pytest.raises(TypeError, match="symbol must be Symbol"):
        mx.viz.print_summary("not a symbol")
    with pytest.raises(MXNetError, match=r"Input shape is incomplete.*'x1'"):
        mx.viz.print_summary(C.lstmish(mx), shape={"x0": (4, 5), "h0": (4, 8),
                                                   "c0": (4, 8)})
    with pytest.raises(ValueError, match="Input shape is incomplete"):   # (MXNet's type)
        mx.viz.print_summary(C.mlp(mx), shape={})


def _plot_calls(sym, kwargs, monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", C.fake_graphviz_module())
    call = dict(kwargs)
    if "shape" in call:
        call["shape"] = {k: tuple(v) for k, v in call["shape"].items()}
    if "dtype" in call:
        call["dtype"] = {k: np.dtype(v).type for k, v in call["dtype"].items()}
    return mx.viz.plot_network(sym, **call).calls


@pytest.mark.parametrize("case", [c[0] for c in C.PLOT_CASES])
def test_plot_network_draws_mxnets_digraph(case, monkeypatch):
    rec = REF["plot"][case]
    calls = _plot_calls(C.BUILDERS[rec["builder"]](mx), rec["kwargs"], monkeypatch)
    assert json.loads(json.dumps(calls)) == rec["calls"]


def test_plot_network_labels_each_output_with_its_own_shape(monkeypatch):
    # MXNet labelled every output of a num_outputs node with the last output's shape
    data = mx.sym.var("data")
    parts = mx.sym.split(data, num_outputs=2, axis=1, name="sp")
    net = mx.sym.Group([mx.sym.relu(parts[0], name="a"), mx.sym.Pooling(
        mx.sym.topk(parts[1], k=2, ret_typ="both", name="tk")[1], kernel=(1,), name="p")])
    calls = _plot_calls(net, {"shape": {"data": (2, 6, 4)}}, monkeypatch)
    edges = {(c[1]["tail_name"], c[1]["head_name"]): c[1]["label"]
             for c in calls if c[0] == "edge"}
    assert edges[("a", "sp")] == "3x4"
    assert edges[("tk", "sp")] == "3x4"
    assert edges[("p", "tk")] == "3x2"
    nodes = {c[1]["name"]: c[1] for c in calls if c[0] == "node"}
    assert nodes["p"]["label"] == "Pooling\nmax, 1/1"   # pool_type left at its default


def test_plot_network_warns_of_repeated_names(monkeypatch):
    # MXNet's unittest/test_viz.py::test_plot_network
    net = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data=net, name="fc", num_hidden=128)
    net = mx.sym.Activation(data=net, name="relu1", act_type="relu")
    net = mx.sym.FullyConnected(data=net, name="fc", num_hidden=10)
    net = mx.sym.SoftmaxOutput(data=net, name="out")
    monkeypatch.setitem(sys.modules, "graphviz", C.fake_graphviz_module())
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        mx.viz.plot_network(net, shape={"data": (100, 200)}, dtype={"data": np.float32},
                            node_attrs={"fixedsize": "false"})
    assert len(w) == 1 and w[0].category is RuntimeWarning
    assert "There are multiple variables with the same name in your graph" in str(w[0].message)
    assert "Repeated names: fc_weight,fc_bias,fc" in str(w[0].message)


def test_plot_network_needs_graphviz(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)   # import graphviz -> ImportError
    with pytest.raises(ImportError, match=r"graphviz library.*'graphviz'.*pip install"):
        mx.viz.plot_network(C.mlp(mx))


def test_plot_network_errors(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", C.fake_graphviz_module())
    with pytest.raises(TypeError, match="symbol must be a Symbol"):
        mx.viz.plot_network(42)
    with pytest.raises(ValueError, match="Input shape is incomplete"):
        mx.viz.plot_network(C.lstmish(mx), shape={"x0": (4, 5)})


def test_plot_network_with_graphviz_installed():
    graphviz = pytest.importorskip("graphviz")
    dot = mx.viz.plot_network(C.convnet(mx), shape={"data": (2, 3, 16, 16)})
    assert isinstance(dot, graphviz.Digraph)
    assert "conv1" in dot.source and "16x16x16" in dot.source


def test_viz_is_visualization():
    assert mx.viz is mx.visualization
    assert mx.viz.print_summary is mx.visualization.print_summary
