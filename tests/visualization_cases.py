"""Networks for mx.viz written against the MXNet API: tools/gen_visualization_fixtures.py
prints and plots them with MXNet 1.9.1, tests/test_visualization.py with neogluon.

Every builder takes ``mx`` (the framework module) and returns a Symbol; names are fixed or
come from a fresh NameManager, so both frameworks name every node alike.
"""


def viz_test(mx):
    """The network of MXNet's unittest/test_viz.py (an FC on a 4-D pooling output)."""
    data = mx.sym.Variable("data")
    bias = mx.sym.Variable("fc1_bias", lr_mult=1.0)
    emb1 = mx.sym.Embedding(data=data, name="emb1", input_dim=100, output_dim=28)
    conv1 = mx.sym.Convolution(data=emb1, name="conv1", num_filter=32, kernel=(3, 3),
                               stride=(2, 2))
    bn1 = mx.sym.BatchNorm(data=conv1, name="bn1")
    act1 = mx.sym.Activation(data=bn1, name="relu1", act_type="relu")
    mp1 = mx.sym.Pooling(data=act1, name="mp1", kernel=(2, 2), stride=(2, 2), pool_type="max")
    fc1 = mx.sym.FullyConnected(data=mp1, bias=bias, name="fc1", num_hidden=10, lr_mult=0)
    fc2 = mx.sym.FullyConnected(data=fc1, name="fc2", num_hidden=10, wd_mult=0.5)
    return mx.sym.SliceChannel(data=fc2, num_outputs=10, name="slice_1", squeeze_axis=0)


def mlp(mx):
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data=data, name="fc1", num_hidden=128)
    net = mx.sym.Activation(data=net, name="relu1", act_type="relu")
    net = mx.sym.FullyConnected(data=net, name="fc2", num_hidden=64)
    net = mx.sym.Activation(data=net, name="relu2", act_type="relu")
    net = mx.sym.FullyConnected(data=net, name="fc3", num_hidden=10)
    return mx.sym.SoftmaxOutput(data=net, name="softmax")


def convnet(mx):
    """Convolutions with BatchNorm, a grouped convolution without bias, then Flatten and an
    FC layer (MXNet counts this network's parameters right)."""
    data = mx.sym.Variable("data")
    net = mx.sym.Convolution(data, kernel=(3, 3), pad=(1, 1), num_filter=16, name="conv1")
    net = mx.sym.BatchNorm(net, name="bn1", fix_gamma=False)
    net = mx.sym.Activation(net, act_type="relu", name="relu1")
    net = mx.sym.Pooling(net, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
    net = mx.sym.Convolution(net, kernel=(3, 3), num_filter=32, num_group=2, no_bias=True,
                             name="conv2")
    net = mx.sym.BatchNorm(net, name="bn2")
    net = mx.sym.Activation(net, act_type="relu", name="relu2")
    net = mx.sym.Pooling(net, kernel=(1, 1), global_pool=True, pool_type="avg", name="pool2")
    net = mx.sym.Flatten(net, name="flat")
    net = mx.sym.FullyConnected(net, num_hidden=10, name="fc")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def lstmish(mx):
    """Two steps of an LSTM written with operators: shared weights, state variables as
    layer inputs, a four-way SliceChannel, element-wise arithmetic (auto-named nodes)."""
    hidden = 8
    with mx.name.NameManager():
        wi, bi = mx.sym.Variable("i2h_weight"), mx.sym.Variable("i2h_bias")
        wh, bh = mx.sym.Variable("h2h_weight"), mx.sym.Variable("h2h_bias")
        h, c = mx.sym.Variable("h0"), mx.sym.Variable("c0")
        for t in range(2):
            x = mx.sym.Variable(f"x{t}")
            i2h = mx.sym.FullyConnected(x, weight=wi, bias=bi, num_hidden=4 * hidden,
                                        name=f"t{t}_i2h")
            h2h = mx.sym.FullyConnected(h, weight=wh, bias=bh, num_hidden=4 * hidden,
                                        name=f"t{t}_h2h")
            gates = mx.sym.SliceChannel(i2h + h2h, num_outputs=4, name=f"t{t}_slice")
            in_gate = mx.sym.Activation(gates[0], act_type="sigmoid", name=f"t{t}_i")
            forget = mx.sym.Activation(gates[1], act_type="sigmoid", name=f"t{t}_f")
            cand = mx.sym.Activation(gates[2], act_type="tanh", name=f"t{t}_g")
            out_gate = mx.sym.Activation(gates[3], act_type="sigmoid", name=f"t{t}_o")
            c = forget * c + in_gate * cand
            h = out_gate * mx.sym.Activation(c, act_type="tanh", name=f"t{t}_tc")
        return mx.sym.FullyConnected(h, num_hidden=3, name="out")


def branches(mx):
    """Two convolution branches joined by Concat, a Dropout, a LeakyReLU and a Group of two
    outputs (a head that is not the last node)."""
    data = mx.sym.Variable("data")
    a = mx.sym.Convolution(data, kernel=(1, 1), num_filter=4, name="branch_a")
    b = mx.sym.Convolution(data, kernel=(3, 3), pad=(1, 1), num_filter=6, name="branch_b")
    b = mx.sym.LeakyReLU(b, act_type="leaky", slope=0.1, name="leaky")
    net = mx.sym.Concat(a, b, dim=1, name="concat")
    net = mx.sym.Dropout(net, p=0.5, name="drop")
    net = mx.sym.Pooling(net, kernel=(2, 2), stride=(2, 2), pool_type="avg", name="pool")
    feat = mx.sym.Flatten(net, name="flat")
    out = mx.sym.FullyConnected(feat, num_hidden=5, name="fc")
    return mx.sym.Group([out, mx.sym.Reshape(a, shape=(0, -1), name="side")])


BUILDERS = {"viz_test": viz_test, "mlp": mlp, "convnet": convnet, "lstmish": lstmish,
            "branches": branches}

# (case, builder, print_summary keyword arguments; a shape dict is given as such)
SUMMARY_CASES = [
    ("viz_test_noshape", "viz_test", {}),
    ("viz_test", "viz_test", {"shape": {"data": (1, 3, 28)}}),
    ("mlp_noshape", "mlp", {}),
    ("mlp", "mlp", {"shape": {"data": (32, 100)}}),
    ("mlp_narrow", "mlp", {"shape": {"data": (32, 100)}, "line_length": 80,
                           "positions": [30, 50, 60, 80]}),
    ("mlp_fractions", "mlp", {"shape": {"data": (32, 100)}, "line_length": 64,
                              "positions": [.5, .7, .8, 1.]}),
    ("convnet_noshape", "convnet", {}),
    ("convnet", "convnet", {"shape": {"data": (2, 3, 16, 16)}}),
    ("lstmish", "lstmish", {"shape": {"x0": (4, 5), "x1": (4, 5), "h0": (4, 8),
                                      "c0": (4, 8)}}),
    ("branches", "branches", {"shape": {"data": (2, 3, 8, 8)}}),
]

# (case, builder, plot_network keyword arguments; dtype values are numpy type names)
PLOT_CASES = [
    ("mlp", "mlp", {}),
    ("mlp_shape_dtype", "mlp", {"shape": {"data": (100, 200)}, "dtype": {"data": "float32"},
                                "node_attrs": {"fixedsize": "false"}, "title": "mlp",
                                "save_format": "png"}),
    ("convnet_shape", "convnet", {"shape": {"data": (2, 3, 16, 16)}}),
    ("convnet_weights_shown", "convnet", {"hide_weights": False}),
    ("lstmish_shape", "lstmish", {"shape": {"x0": (4, 5), "x1": (4, 5), "h0": (4, 8),
                                            "c0": (4, 8)}}),
    ("branches_shape", "branches", {"shape": {"data": (2, 3, 8, 8)},
                                    "dtype": {"data": "float16"}}),
]


class RecordingDigraph:
    """Stands in for ``graphviz.Digraph``: records the digraph's name, format, nodes and
    edges as JSON-able lists (so neither framework needs Graphviz to be compared)."""

    def __init__(self, name=None, format=None, **kwargs):  # noqa: A002 - graphviz's keyword
        self.calls = [["Digraph", {"name": name, "format": format, **kwargs}]]

    def node(self, name, label=None, **attrs):
        self.calls.append(["node", {"name": name, "label": label, **attrs}])

    def edge(self, tail_name, head_name, **attrs):
        self.calls.append(["edge", {"tail_name": tail_name, "head_name": head_name,
                                    **attrs}])


def fake_graphviz_module():
    """A module object named ``graphviz`` whose ``Digraph`` is :class:`RecordingDigraph`."""
    import types
    mod = types.ModuleType("graphviz")
    mod.Digraph = RecordingDigraph
    return mod
