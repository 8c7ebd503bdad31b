"""``mx.visualization`` (``mx.viz``): a symbol's layers as a printed table or a Graphviz graph.

:func:`print_summary` prints MXNet 1.x's layer table (name and operator, output shape,
parameter count, previous layers) and the total parameter count; :func:`plot_network`
builds a ``graphviz.Digraph`` of the graph, MXNet's colours, labels and edge annotations
included. ``graphviz`` (the Python package) is optional and needed by :func:`plot_network`
only; rendering the digraph to a file also needs Graphviz's ``dot`` program.

Where the table differs from MXNet 1.9.1's
------------------------------------------
With input shapes given, the parameter counts are the layers' true counts: MXNet 1.9.1
counts a FullyConnected layer's inputs as the size of its data's second axis (a 4-D input
of (N, C, H, W) counted C inputs, not C*H*W), takes the channel count from axis 1 whatever
the layout, and counts no weights for a layer whose data is a variable other than the
graph's first node or one output of a multi-output layer. Without shapes the counts are
MXNet's (weights unknown: the biases only). Everything else is printed as MXNet prints it.
"""
from __future__ import annotations

import copy
import re
import warnings

from .base import MXNetValueError
from .symbol.symbol import Symbol

__all__ = ["print_summary", "plot_network"]


def _str2tuple(text):
    """The digit groups of a shape-like attribute string ('(3, 3)' -> ['3', '3'])."""
    return re.findall(r"\d+", text)


def _truthy(text):
    return str(text).strip().lower() in ("true", "1")


class _Graph:
    """A symbol's nodes in graph order (the order of its JSON file), each as
    ``{"op", "name", "attrs", "inputs": [(node index, output index)]}``, with the indices of
    the nodes that hold its outputs."""

    def __init__(self, symbol):
        order = symbol._order()
        index = {id(node): k for k, node in enumerate(order)}
        self.order = order
        self.index = index
        self.nodes = [{"op": node.op, "name": node.name,
                       "attrs": Symbol._node_attrs(node),
                       "inputs": [(index[id(src)], i) for src, i in node.inputs]}
                      for node in order]
        self.heads = {index[id(node)] for node, _ in symbol._outputs}

    def entry_shapes(self, internals, shapes):
        """``{(node index, output index): shape}`` from the internals' output shapes."""
        return {(self.index[id(node)], i): shape
                for (node, i), shape in zip(internals._outputs, shapes)}


def _infer_internals(symbol, shape, what):
    """``(internals, out_shapes)`` of ``symbol.get_internals()`` from the input shapes in
    ``shape``; an MXNetValueError naming the inputs whose shapes stay unknown."""
    internals = symbol.get_internals()
    if not isinstance(shape, dict):
        raise TypeError(f"{what}: shape must be a dict of input name to shape tuple, got "
                        f"{type(shape).__name__}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, out_shapes, _ = internals.infer_shape(**shape)
    if out_shapes is None:
        args, _, aux = internals.infer_shape_partial(**shape)
        names = internals.list_arguments() + internals.list_auxiliary_states()
        unknown = [n for n, s in zip(names, list(args) + list(aux))
                   if not s or 0 in tuple(s)]
        raise MXNetValueError(f"Input shape is incomplete: {what} cannot infer the shapes of "
                              f"{unknown}; give the shapes of the graph's inputs in shape=")
    return internals, out_shapes


def _layer_params(node, data_shape):
    """The parameter count of a Convolution, FullyConnected, BatchNorm or Embedding node
    whose data input has the full shape ``data_shape`` (0 for other operators)."""
    op, attrs = node["op"], node["attrs"]
    if op == "Convolution":
        layout = attrs.get("layout", "None")
        channel_axis = -1 if layout not in ("None", "") and layout.endswith("C") else 1
        groups = int(attrs.get("num_group", "1"))
        filters = int(attrs["num_filter"])
        count = filters * (int(data_shape[channel_axis]) // groups)
        for k in _str2tuple(attrs["kernel"]):
            count *= int(k)
        return count + (0 if _truthy(attrs.get("no_bias", "False")) else filters)
    if op == "FullyConnected":
        if _truthy(attrs.get("flatten", "True")):
            inputs = 1
            for d in data_shape[1:]:
                inputs *= int(d)
        else:
            inputs = int(data_shape[-1])
        hidden = int(attrs["num_hidden"])
        return inputs * hidden + (0 if _truthy(attrs.get("no_bias", "False")) else hidden)
    if op == "BatchNorm":   # gamma and beta (the moving statistics are not trained)
        return 2 * int(data_shape[int(attrs.get("axis", "1"))])
    if op == "Embedding":
        return int(attrs["input_dim"]) * int(attrs["output_dim"])
    return 0


def _layer_params_unshaped(node):
    """MXNet's count for a layer when no shapes are known: the weights' sizes are unknown,
    so a Convolution or FullyConnected counts its bias only."""
    op, attrs = node["op"], node["attrs"]
    if op == "Convolution":
        return 0 if _truthy(attrs.get("no_bias", "False")) else int(attrs["num_filter"])
    if op == "FullyConnected":
        return 0 if _truthy(attrs.get("no_bias", "False")) else int(attrs["num_hidden"])
    if op == "Embedding":
        return int(attrs["input_dim"]) * int(attrs["output_dim"])
    return 0


def print_summary(symbol, shape=None, line_length=120, positions=[.44, .64, .74, 1.]):
    """Print a table of the symbol's layers: name (operator), output shape without the
    batch axis, parameter count and previous layers, then the total parameter count.

    Parameters
    ----------
    symbol : Symbol
        The network.
    shape : dict of str to tuple, optional
        Input shapes by name. Without them, output shapes are left blank and the weights of
        Convolution and FullyConnected layers are not counted (their sizes are unknown).
    line_length : int, optional
        Width of the table in characters.
    positions : list of float or int, optional
        Right edges of the four columns, as fractions of ``line_length`` when the last one
        is at most 1, else in characters.
    """
    if not isinstance(symbol, Symbol):
        raise TypeError("symbol must be Symbol")
    graph = _Graph(symbol)
    nodes = graph.nodes
    show_shape = shape is not None
    shape_dict, entry_shape = {}, {}
    if show_shape:
        internals, out_shapes = _infer_internals(symbol, shape, "print_summary")
        shape_dict = dict(zip(internals.list_outputs(), out_shapes))
        entry_shape = graph.entry_shapes(internals, out_shapes)
    # The first node (usually the data) is listed as a layer and as a previous layer, as in
    # MXNet, and so are the nodes holding the symbol's outputs.
    heads = graph.heads | {0}
    if positions[-1] <= 1:
        positions = [int(line_length * p) for p in positions]

    def print_row(fields):
        line = ""
        for field, edge in zip(fields, positions):
            line += str(field)
            line = line[:edge]
            line += " " * (edge - len(line))
        print(line)

    def print_layer(k, out_shape):
        node = nodes[k]
        op = node["op"]
        previous = []
        if op != "null":
            for src, _ in node["inputs"]:
                if nodes[src]["op"] != "null" or src in heads:
                    previous.append(nodes[src]["name"])
        if op == "null":
            count = 0
        elif show_shape and node["inputs"] and op in (
                "Convolution", "FullyConnected", "BatchNorm", "Embedding"):
            count = _layer_params(node, entry_shape[node["inputs"][0]])
        elif op == "BatchNorm":
            count = 0   # (MXNet counts BatchNorm only with shapes)
        else:
            count = _layer_params_unshaped(node)
        print_row([f"{node['name']}({op})", "x".join(str(d) for d in out_shape), count,
                   previous[0] if previous else ""])
        for name in previous[1:]:
            print_row(["", "", "", name])
        return count

    print("_" * line_length)
    print_row(["Layer (type)", "Output Shape", "Param #", "Previous Layer"])
    print("=" * line_length)
    total = 0
    for k, node in enumerate(nodes):
        op = node["op"]
        if op == "null" and k > 0:
            continue
        out_shape = []
        if show_shape and (op != "null" or k in heads):
            # (a multi-output layer has no '<name>_output': its shape is left blank, as in
            # MXNet's table)
            key = node["name"] + "_output" if op != "null" else node["name"]
            if key in shape_dict:
                out_shape = shape_dict[key][1:]
        total += print_layer(k, out_shape)
        print(("=" if k == len(nodes) - 1 else "_") * line_length)
    print(f"Total params: {total}")
    print("_" * line_length)


# Fill colours of plot_network's nodes (MXNet's palette).
_COLORS = ("#8dd3c7", "#fb8072", "#ffffb3", "#bebada", "#80b1d3", "#fdb462", "#b3de69",
           "#fccde5")
_WEIGHT_SUFFIXES = ("_weight", "_bias", "_beta", "_gamma", "_moving_var", "_moving_mean",
                    "_running_var", "_running_mean")


def _node_style(node, base):
    """(label, attributes) of one drawn operator node."""
    op, attrs = node["op"], node["attrs"]
    attr = copy.deepcopy(base)
    label = node["name"]
    if op == "Convolution":
        stride = "x".join(_str2tuple(attrs["stride"])) if "stride" in attrs else "1"
        label = (f"Convolution\n{'x'.join(_str2tuple(attrs['kernel']))}/{stride}, "
                 f"{attrs['num_filter']}")
        attr["fillcolor"] = _COLORS[1]
    elif op == "FullyConnected":
        label = f"FullyConnected\n{attrs['num_hidden']}"
        attr["fillcolor"] = _COLORS[1]
    elif op == "BatchNorm":
        attr["fillcolor"] = _COLORS[3]
    elif op == "Activation":
        label = f"Activation\n{attrs['act_type']}"
        attr["fillcolor"] = _COLORS[2]
    elif op == "LeakyReLU":
        label = f"LeakyReLU\n{attrs.get('act_type', 'Leaky')}"
        attr["fillcolor"] = _COLORS[2]
    elif op == "Pooling":
        kernel = "x".join(_str2tuple(attrs["kernel"])) if "kernel" in attrs else "[]"
        stride = "x".join(_str2tuple(attrs["stride"])) if "stride" in attrs else "1"
        label = f"Pooling\n{attrs.get('pool_type', 'max')}, {kernel}/{stride}"
        attr["fillcolor"] = _COLORS[4]
    elif op in ("Concat", "Flatten", "Reshape"):
        attr["fillcolor"] = _COLORS[5]
    elif op == "Softmax":
        attr["fillcolor"] = _COLORS[6]
    else:
        attr["fillcolor"] = _COLORS[7]
        if op == "Custom":
            label = attrs["op_type"]
    return label, attr


def plot_network(symbol, title="plot", save_format="pdf", shape=None, dtype=None,
                 node_attrs={}, hide_weights=True):
    """A ``graphviz.Digraph`` of the graph computing ``symbol``.

    Parameters
    ----------
    symbol : Symbol
        The network.
    title : str, optional
        The digraph's name.
    save_format : str, optional
        The format ``Digraph.render`` writes ('pdf', 'png', 'svg'...).
    shape : dict of str to tuple, optional
        Input shapes by name; edges are then labelled with the shapes they carry (without
        the batch axis).
    dtype : dict of str to numpy dtype, optional
        Input types by name; edges are then labelled with the types they carry.
    node_attrs : dict of str to str, optional
        Graphviz node attributes overriding the defaults (box shape, fixed size, filled).
    hide_weights : bool, optional
        Leave out the variables named like parameters (``*_weight``, ``*_bias``,
        ``*_gamma``, ``*_beta``, ``*_moving_mean``, ...) and their edges.

    Returns
    -------
    graphviz.Digraph

    Raises
    ------
    ImportError
        When the ``graphviz`` Python package is not installed.
    """
    try:
        from graphviz import Digraph
    except ImportError:
        raise ImportError("Draw network requires graphviz library: plot_network needs the "
                          "Python package 'graphviz' (pip install graphviz), and Graphviz's "
                          "'dot' program to render the digraph") from None
    if not isinstance(symbol, Symbol):
        raise TypeError("symbol must be a Symbol")
    graph = _Graph(symbol)
    nodes = graph.nodes
    entry_shape, entry_type = None, None
    if shape is not None:
        internals, out_shapes = _infer_internals(symbol, shape, "plot_network")
        entry_shape = graph.entry_shapes(internals, out_shapes)
    if dtype is not None:
        if not isinstance(dtype, dict):
            raise TypeError("plot_network: dtype must be a dict of input name to type, got "
                            f"{type(dtype).__name__}")
        internals = symbol.get_internals()
        _, out_types, _ = internals.infer_type(**dtype)
        if out_types is None:
            raise MXNetValueError("Input type is incomplete: plot_network cannot infer every "
                                  "type from dtype=; give the types of the graph's inputs")
        entry_type = graph.entry_shapes(internals, out_types)
    names = [node["name"] for node in nodes]
    if len(names) != len(set(names)):
        seen, repeated = set(), []
        for name in names:
            if name in seen and name not in repeated:
                repeated.append(name)
            seen.add(name)
        warnings.warn("There are multiple variables with the same name in your graph, this "
                      "may result in cyclic graph. Repeated names: " + ",".join(repeated),
                      RuntimeWarning, stacklevel=2)
    base = {"shape": "box", "fixedsize": "true", "width": "1.3", "height": "0.8034",
            "style": "filled"}
    base.update(node_attrs)
    dot = Digraph(name=title, format=save_format)
    hidden = set()
    for node in nodes:
        name = node["name"]
        if node["op"] == "null":
            if name.endswith(_WEIGHT_SUFFIXES):
                if hide_weights:
                    hidden.add(name)
                # (shown, the edge to it draws Graphviz's default node: an empty oval)
                continue
            attr = copy.deepcopy(base)
            attr["shape"] = "oval"
            attr["fillcolor"] = _COLORS[0]
            label = name
        else:
            label, attr = _node_style(node, base)
        dot.node(name=name, label=label, **attr)
    for node in nodes:
        if node["op"] == "null":
            continue
        inputs = node["inputs"]
        if node["op"] == "_contrib_BilinearResize2D":
            inputs = inputs[:1]   # (its optional second input only gives a shape)
        for entry in inputs:
            src_name = nodes[entry[0]]["name"]
            if src_name in hidden:
                continue
            attr = {"dir": "back", "arrowtail": "open", "label": ""}
            if entry_shape is not None:
                attr["label"] = "x".join(str(d) for d in entry_shape[entry][1:])
            if entry_type is not None:
                attr["label"] += "(" + entry_type[entry].__name__ + ")"
            dot.edge(tail_name=node["name"], head_name=src_name, **attr)
    return dot
