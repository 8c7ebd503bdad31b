"""model_zoo.vision against MXNet 1.9.1: parameter names/shapes and outputs for fixed weights."""
import numpy as np
import pytest

import neogluon as mx
from neogluon import autograd, nd
from neogluon.gluon.model_zoo import vision

from gluon_fixture_utils import det, fixture_json, fixture_path, reset_names

ZOO = fixture_json()["model_zoo"]
OUTS = np.load(fixture_path("model_zoo_out.npz"))


def _build(name):
    reset_names()
    net = getattr(vision, name)(classes=10)
    net.initialize()
    side = 224 if name == "alexnet" else 32
    x = nd.array(det((1, 3, side, side), 1))
    with autograd.predict_mode():
        net(x)
    return net, x


@pytest.mark.parametrize("name", ["resnet18_v1", "resnet50_v1", "resnet18_v2",
                                  "mobilenet1_0", "vgg11", "alexnet"])
def test_names_and_shapes(name):
    net, _ = _build(name)
    got = [[k, list(v.shape)] for k, v in net.collect_params().items()]
    assert net.prefix == ZOO[name]["prefix"]
    assert got == ZOO[name]["params"]


@pytest.mark.parametrize("name", ["resnet18_v1", "resnet18_v2", "mobilenet1_0"])
def test_output_for_fixed_weights(name):
    net, x = _build(name)
    for j, (k, v) in enumerate(net.collect_params().items()):
        val = det(v.shape, j) * (1.0 / np.sqrt(max(1, np.prod(v.shape[1:]))))
        if "running_var" in k or "gamma" in k:
            val = np.abs(val) + 0.5
        v.set_data(nd.array(val))
    with autograd.predict_mode():
        y = net(x).asnumpy()
    np.testing.assert_allclose(y, OUTS[name], rtol=2e-3, atol=2e-4)
    net.hybridize()
    with autograd.predict_mode():
        net(x)
        y2 = net(x).asnumpy()
    np.testing.assert_array_equal(y, y2)


def test_get_model_and_pretrained_error(tmp_path):
    net = vision.get_model("mobilenet0.25", classes=3)
    assert isinstance(net, vision.MobileNet)
    with pytest.raises(ValueError, match="is not supported"):
        vision.get_model("resnet7_v1")
    with pytest.raises(mx.MXNetError, match=r"resnet18_v1-a0666292\.params"):
        vision.resnet18_v1(pretrained=True, root=str(tmp_path))


def test_pretrained_loads_local_file(tmp_path):
    reset_names()
    src = vision.resnet18_v1(classes=4, thumbnail=True)
    src.initialize()
    src(nd.ones((1, 3, 8, 8)))
    src.save_parameters(str(tmp_path / "resnet18_v1-a0666292.params"))
    net = vision.resnet18_v1(classes=4, thumbnail=True, pretrained=True, root=str(tmp_path))
    np.testing.assert_array_equal(net.output.weight.data().asnumpy(),
                                  src.output.weight.data().asnumpy())
