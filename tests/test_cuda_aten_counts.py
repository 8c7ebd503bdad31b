"""Issue 32 on a GPU: an imperative neogluon training step launches no more CUDA kernels (and
issues no more aten calls) than the same network in torch eager, and BatchNorm's reused
scratch and batched moving-statistic fold give MXNet's numbers there too (cuDNN's kernel
writes the batch statistics with exponential-average factor 1).

Skips without CUDA (tools/gpu_check.sh runs it on a lent GPU machine). The measurement is
bench/aten_counts.py's (``counts(model, config, device='cuda')``).
"""
import os
import sys

import numpy as np
import pytest
import torch

import neogluon as mx
from neogluon import autograd, gluon, nd

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import aten_counts  # noqa: E402


@pytest.mark.parametrize("model", ["resnet18", "bnmlp"])
def test_cuda_step_launches_no_more_kernels_than_torch_eager(model):
    t = aten_counts.counts(model, "torch/eager", device="cuda")
    n = aten_counts.counts(model, "neogluon/imperative", device="cuda")
    nk, tk = sum(n["kernels"].values()), sum(t["kernels"].values())
    assert nk <= tk, (nk, tk, aten_counts._diff(n["kernels"], t["kernels"])[:10])
    assert sum(n["top"].values()) <= sum(t["top"].values())


def test_cuda_lstm_lm_kernels_bound():
    # as on the CPU (tests/test_aten_counts.py): MXNet's float index inputs, clipping and the
    # per-sample loss cost a few launches torch's program does not have; the optimizer saves
    # two (one _fused_sgd_ against three _foreach launches)
    t = aten_counts.counts("lstm", "torch/eager", device="cuda")
    n = aten_counts.counts("lstm", "neogluon/imperative", device="cuda")
    nk, tk = sum(n["kernels"].values()), sum(t["kernels"].values())
    assert nk <= tk + 8, (nk, tk, aten_counts._diff(n["kernels"], t["kernels"])[:12])


def test_cuda_batchnorm_moving_stats_match_the_cpu():
    rng = np.random.RandomState(0)
    xs = [rng.randn(6, 4, 3, 3).astype("float32") for _ in range(3)] + \
        [rng.randn(1, 4, 1, 1).astype("float32")]   # (one value per channel: NaN unbiased var)
    stats = []
    for ctx in (mx.cpu(), mx.gpu(0)):
        bn = gluon.nn.BatchNorm(in_channels=4)
        bn.initialize(ctx=ctx)
        for xn in xs + xs[:1]:
            with autograd.record():
                y = bn(nd.array(xn, ctx=ctx))
            y.backward()
            del y
        stats.append((bn.running_mean.data().asnumpy(), bn.running_var.data().asnumpy()))
    np.testing.assert_allclose(stats[1][0], stats[0][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(stats[1][1], stats[0][1], rtol=1e-5, atol=1e-6)
    assert np.isfinite(stats[1][1]).all()
