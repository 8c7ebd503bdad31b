"""One training step on a GPU against the CPU, judged by float64 (tests/device_compare.py).

ResNet-18 v1 (model zoo, 32x32, batch 4), a two-layer gluon.rnn.LSTM and a BatchNorm/Dropout
MLP (the dropout mask fed as an input so both devices drop the same units) take one step
(forward, backward, SGD momentum 0.9 + wd) from the same weights and data on the GPU in
float32 with TF32 off, on the CPU in float32 and on the CPU in float64. For every parameter
and auxiliary state (BatchNorm's moving mean and variance) the GPU's distance to float64 may
exceed twice the CPU float32's own only within a small absolute floor; the failure message
names the worst offender. CI has no GPU: this file skips there (the harness itself is tested
on CPU in tests/test_device_compare.py).
"""
import pytest
import torch

import neogluon as mx

import device_compare as dc

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.fixture(autouse=True)
def no_tf32():
    old = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = old


@pytest.mark.parametrize("hybridize", [False, True], ids=["imperative", "hybridized"])
@pytest.mark.parametrize("name", ["resnet18", "lstm", "mlp"])
def test_gpu_step_within_twice_the_cpu_error(name, hybridize):
    ref, cpu, gpu = dc.run_case(name, mx.gpu(0), dict(hybridize=hybridize))
    report = dc.judge(ref, cpu, gpu)
    print(f"{name} ({'hybridized' if hybridize else 'imperative'}): {dc.describe(report)}")
    assert not report["offenders"], f"{name}: {dc.describe(report)}"
