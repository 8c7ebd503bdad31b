"""AMP float16 on a CUDA GPU (issue 32): the step's host syncs and cast kernels, checked with
torch's own tools where CPU tests (tests/test_amp_perf.py) can only stand in. Skipped without
CUDA; tools/gpu_check.sh runs it on a lent GPU."""
import warnings

import numpy as np
import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.fixture
def amp_fp16():
    from neogluon import amp
    amp._uninstall()
    amp.init(target_dtype="float16")
    try:
        yield amp
    finally:
        amp._uninstall()


def _step(hybridize, use_amp=True):
    import neogluon as mx
    from neogluon import amp, autograd, gluon, nd
    ctx = mx.gpu(0)
    mx.random.seed(0)
    net = gluon.model_zoo.vision.resnet18_v1(classes=10)
    net.initialize(mx.init.Xavier(), ctx=ctx)
    if hybridize:
        net.hybridize()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01, "momentum": 0.9})
    if use_amp:
        amp.init_trainer(tr)
    lossf = gluon.loss.SoftmaxCrossEntropyLoss()
    x = nd.random.uniform(shape=(8, 3, 32, 32), ctx=ctx)
    y = nd.array(np.random.RandomState(0).randint(0, 10, (8,)), ctx=ctx)

    def fwd_bwd():
        with autograd.record():
            loss = lossf(net(x), y)
            if use_amp:
                with amp.scale_loss(loss, tr) as scaled:
                    autograd.backward(scaled)
            else:
                autograd.backward(loss)

    def step():
        fwd_bwd()
        tr.step(8)
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    return step, fwd_bwd, net


def _syncs(fn):
    """How many host syncs ``fn`` makes (torch's sync debug mode, warnings counted)."""
    torch.cuda.synchronize()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            fn()
        finally:
            torch.cuda.set_sync_debug_mode(0)
    torch.cuda.synchronize()
    return sum("synchroniz" in str(x.message) for x in w)


@pytest.mark.parametrize("hybridize", [False, True])
def test_amp_adds_no_sync_but_the_skip_decision(hybridize):
    """AMP's casts, cast cache, scale_loss and the overflow check add no host sync to a
    float32 step; the step's one added read is Trainer.step's skip-or-update decision."""
    from neogluon import amp
    amp._uninstall()
    step32, fb32, _ = _step(hybridize, use_amp=False)
    base_fb, base_step = _syncs(fb32), _syncs(step32)
    amp.init(target_dtype="float16")
    try:
        step16, fb16, _ = _step(hybridize)
        assert _syncs(fb16) <= base_fb
        assert _syncs(step16) <= base_step + 1
    finally:
        amp._uninstall()


def test_overflow_check_is_device_side(amp_fp16):
    from neogluon import amp
    gs = [torch.ones(5, device="cuda"), torch.ones(3, device="cuda", dtype=torch.float16)]
    torch.cuda.set_sync_debug_mode("error")
    try:
        found = amp._found_inf(gs)
    finally:
        torch.cuda.set_sync_debug_mode(0)
    assert found.device.type == "cuda" and found.item() == 0.0
    gs[1][0] = float("inf")
    assert amp._found_inf(gs).item() == 1.0


class _CountCasts(torch.utils._python_dispatch.TorchDispatchMode):
    """Casts between floating types, as aten sees them (below autograd, one per kernel)."""

    def __init__(self):
        super().__init__()
        self.n = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func.overloadpacket is torch.ops.aten._to_copy and isinstance(out, torch.Tensor) \
                and args[0].dtype.is_floating_point and out.dtype != args[0].dtype:
            self.n += 1
        return out


def test_fp16_weight_casts_once_per_step(amp_fp16):
    step, fwd_bwd, net = _step(False)
    nweights = sum(1 for name in net.collect_params() if name.endswith("weight"))
    with _CountCasts() as c:
        fwd_bwd()
    # Each convolution/dense weight and the dense bias once forward and their gradients once
    # back, the input once and the loss's input back to float32: torch.autocast's count with
    # its per-step weight cache (46 for ResNet-18's 21 weights).
    assert c.n <= 2 * (nweights + 1) + 2, (c.n, nweights)
