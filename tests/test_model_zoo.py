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


def _zoo2():
    import json
    import os
    here = os.path.join(os.path.dirname(__file__), "fixtures", "model_zoo")
    with open(os.path.join(here, "models.json")) as f:
        meta = json.load(f)
    return meta, np.load(os.path.join(here, "outputs.npz"))


ZOO2, OUTS2 = _zoo2()


@pytest.mark.parametrize("name", sorted(ZOO2))
def test_more_models_names_shapes_and_outputs(name):
    # DenseNet, Inception v3, MobileNetV2, SqueezeNet (tools/gen_model_zoo_fixtures.py)
    rec = ZOO2[name]
    reset_names()
    net = getattr(vision, name)(classes=10)
    net.initialize()
    side = rec["side"]
    x = nd.array(det((1, 3, side, side), 1))
    with autograd.predict_mode():
        net(x)
    params = list(net.collect_params().items())
    assert net.prefix == rec["prefix"]
    assert [[k, list(v.shape)] for k, v in params] == rec["params"]
    for j, (k, v) in enumerate(params):
        val = det(v.shape, j) * (1.0 / np.sqrt(max(1, np.prod(v.shape[1:]))))
        if "running_var" in k or "gamma" in k:
            val = np.abs(val) + 0.5
        v.set_data(nd.array(val))
    with autograd.predict_mode():
        y = net(x).asnumpy()
    np.testing.assert_allclose(y, OUTS2[name], rtol=2e-3, atol=2e-4)


def test_get_model_knows_every_mxnet_model_name(tmp_path):
    names = ["densenet121", "densenet161", "densenet169", "densenet201", "squeezenet1.0",
             "squeezenet1.1", "inceptionv3", "mobilenetv2_1.0", "mobilenetv2_0.75",
             "mobilenetv2_0.5", "mobilenetv2_0.25"]
    for n in names:
        assert isinstance(vision.get_model(n, classes=4), mx.gluon.HybridBlock)
    with pytest.raises(mx.MXNetError, match=r"mobilenetv2_0\.25-ae8f9392\.params"):
        vision.get_model("mobilenetv2_0.25", pretrained=True, root=str(tmp_path))
    with pytest.raises(mx.MXNetError, match=r"squeezenet1\.1-33ba0f93\.params"):
        vision.get_model("squeezenet1.1", pretrained=True, root=str(tmp_path))
    with pytest.raises(AssertionError, match="SqueezeNet version"):
        vision.SqueezeNet("2.0")
