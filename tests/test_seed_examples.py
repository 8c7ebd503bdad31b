"""The examples of ../shared/seeds/004_786ea5ba066b9f45.txt (Gluon package docs), run with
``import neogluon as mx`` in place of ``import mxnet as mx`` (the Trainer ones excepted)."""
import numpy as np

import neogluon as mx
from neogluon import autograd, gluon
from neogluon.gluon import nn


def test_sequential_with_name_scope():
    num_outputs = 10
    net = gluon.nn.Sequential()
    with net.name_scope():
        net.add(gluon.nn.Dense(256, activation="relu"))  # 1st layer (256 nodes)
        net.add(gluon.nn.Dense(256, activation="relu"))  # 2nd hidden layer
        net.add(gluon.nn.Dense(num_outputs))
    net.initialize()
    data = mx.nd.random.uniform(shape=(4, 20))
    label = mx.nd.array([0, 1, 2, 3])
    softmax_cross_entropy = gluon.loss.SoftmaxCrossEntropyLoss()
    with autograd.record():
        output = net(data)  # the forward iteration
        loss = softmax_cross_entropy(output, label)
        loss.backward()
    assert output.shape == (4, 10) and loss.shape == (4,)
    assert net[0].weight.grad().shape == (256, 20)


def test_dynamic_graph_recursion():
    class Tree:
        def __init__(self, children=()):
            self.children = list(children)

    class TreeNet(gluon.Block):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.leaf = nn.Dense(3, in_units=3)

        def forward(self, F, inputs, tree):
            children_outputs = [self.forward(F, inputs, child) for child in tree.children]
            out = self.leaf(inputs)
            for c in children_outputs:
                out = out + c
            return out

    net = TreeNet()
    net.initialize()
    x = mx.nd.ones((1, 3))
    small = net.forward(mx.nd, x, Tree())
    big = net.forward(mx.nd, x, Tree([Tree(), Tree([Tree()])]))
    np.testing.assert_allclose(big.asnumpy(), 4 * small.asnumpy(), rtol=1e-6)


def test_hybrid_sequential_hybridize():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(256, activation="relu"))
        net.add(nn.Dense(128, activation="relu"))
        net.add(nn.Dense(2))
    net.initialize()
    x = mx.nd.random.uniform(shape=(5, 7))
    y0 = net(x)
    net.hybridize()
    y1 = net(x)
    y2 = net(x)
    np.testing.assert_array_equal(y0.asnumpy(), y1.asnumpy())
    np.testing.assert_array_equal(y0.asnumpy(), y2.asnumpy())


def test_block_model_example():
    from neogluon.gluon import Block, nn
    from neogluon import ndarray as F

    class Model(Block):
        def __init__(self, **kwargs):
            super(Model, self).__init__(**kwargs)
            # use name_scope to give child Blocks appropriate names.
            with self.name_scope():
                self.dense0 = nn.Dense(20)
                self.dense1 = nn.Dense(20)

        def forward(self, x):
            x = F.relu(self.dense0(x))
            return F.relu(self.dense1(x))

    model = Model()
    model.initialize(ctx=mx.cpu(0))
    out = model(F.zeros((10, 10), ctx=mx.cpu(0)))
    assert out.shape == (10, 20)
    dense0 = nn.Dense(20)
    dense1 = nn.Dense(20, params=dense0.collect_params())
    assert dense1.weight is dense0.weight


def test_hybridblock_model_example():
    from neogluon.gluon import HybridBlock, nn

    class Model(HybridBlock):
        def __init__(self, **kwargs):
            super(Model, self).__init__(**kwargs)
            # use name_scope to give child Blocks appropriate names.
            with self.name_scope():
                self.dense0 = nn.Dense(20)
                self.dense1 = nn.Dense(20)

        def hybrid_forward(self, F, x):
            x = F.relu(self.dense0(x))
            return F.relu(self.dense1(x))

    model = Model()
    model.initialize(ctx=mx.cpu(0))
    model.hybridize()
    out = model(mx.nd.zeros((10, 10), ctx=mx.cpu(0)))
    assert out.shape == (10, 20)


def test_constant_examples():
    const = mx.gluon.Constant("const", [[1, 2], [3, 4]])
    assert const.shape == (2, 2)

    class Block(gluon.Block):
        def __init__(self, **kwargs):
            super(Block, self).__init__(**kwargs)
            self.const = self.params.get_constant("const", [[1, 2], [3, 4]])

    b = Block()
    b.initialize()
    np.testing.assert_array_equal(b.const.data().asnumpy(), [[1, 2], [3, 4]])


def test_parameter_examples():
    ctx = mx.gpu(0) if mx.num_gpus() > 0 else mx.cpu(0)
    x = mx.nd.zeros((16, 100), ctx=ctx)
    w = mx.gluon.Parameter("fc_weight", shape=(64, 100), init=mx.init.Xavier())
    b = mx.gluon.Parameter("fc_bias", shape=(64,), init=mx.init.Zero())
    w.initialize(ctx=ctx)
    b.initialize(ctx=ctx)
    out = mx.nd.FullyConnected(x, w.data(ctx), b.data(ctx), num_hidden=64)
    assert out.shape == (16, 64)
    weight = mx.gluon.Parameter("weight", shape=(2, 2))
    weight.initialize(ctx=mx.cpu(0))
    assert weight.data().shape == (2, 2) and not weight.grad().asnumpy().any()
    weight.initialize(ctx=[mx.cpu(1), mx.cpu(2)], force_reinit=True)
    np.testing.assert_array_equal(weight.data(mx.cpu(1)).asnumpy(),
                                  weight.data(mx.cpu(2)).asnumpy())


def test_collect_params_regex_and_setattr():
    class Model(gluon.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.conv1 = nn.Conv2D(2, 3, prefix="conv1_")
                self.fc = nn.Dense(2, prefix="fc_")
                self.bn = nn.BatchNorm(prefix="bn_")

    model = Model(prefix="")
    sel = model.collect_params("conv1_weight|conv1_bias|fc_weight|fc_bias")
    assert list(sel.keys()) == ["conv1_weight", "conv1_bias", "fc_weight", "fc_bias"]
    sel = model.collect_params(".*weight|.*bias")
    assert list(sel.keys()) == ["conv1_weight", "conv1_bias", "fc_weight", "fc_bias"]
    model.collect_params().setattr("grad_req", "null")
    model.collect_params().setattr("lr_mult", 0.5)
    assert all(p.grad_req == "null" and p.lr_mult == 0.5
               for p in model.collect_params().values())


def test_export_and_symbolblock_imports(tmp_path):
    net1 = gluon.model_zoo.vision.resnet18_v1(prefix="resnet", pretrained=False)
    net1.initialize()
    net1.hybridize()
    x = mx.nd.random.normal(shape=(1, 3, 32, 32))
    out1 = net1(x)
    path = str(tmp_path / "net1")
    net1.export(path, epoch=1)
    net2 = gluon.SymbolBlock.imports(path + "-symbol.json", ["data"], path + "-0001.params")
    out2 = net2(x)
    np.testing.assert_allclose(out1.asnumpy(), out2.asnumpy(), rtol=1e-6, atol=1e-6)


def test_utils_examples():
    data = mx.nd.arange(12).reshape((6, 2))
    parts = gluon.utils.split_data(data, 3)
    assert [p.shape for p in parts] == [(2, 2)] * 3
    loaded = gluon.utils.split_and_load(data, [mx.cpu(0), mx.cpu(1)])
    assert [p.context for p in loaded] == [mx.cpu(0), mx.cpu(1)]
    arrays = [mx.nd.ones((2,)) * 3, mx.nd.ones((2,)) * 4]
    norm = gluon.utils.clip_global_norm(arrays, 1.0)
    np.testing.assert_allclose(norm, np.sqrt(2 * 9 + 2 * 16), rtol=1e-6)
