"""The zoneout-mask and shared-FC-transpose replay passes (neogluon/gluon/_fuse.py) on a GPU:
the mask entries hand over to the recorded operators there (CUDA's dropout is a fused kernel
with its own draws), the shared transposes run, and both give the numbers of the graph
without them, with and without static_alloc/static_shape (CUDA graphs). Skips without CUDA
(tools/gpu_check.sh runs it on a lent GPU machine)."""
import numpy as np
import pytest
import torch

import neogluon as mx
from neogluon import autograd, gluon
from neogluon.gluon import _fuse

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


class _Zoneout(gluon.HybridBlock):
    def __init__(self):
        super().__init__()
        with self.name_scope():
            self.cell = gluon.rnn.HybridSequentialRNNCell()
            for k in range(2):
                self.cell.add(gluon.rnn.ZoneoutCell(
                    gluon.rnn.LSTMCell(16, input_size=4 if k == 0 else 16),
                    zoneout_outputs=0.2, zoneout_states=0.3))

    def hybrid_forward(self, F, x):
        out, st = self.cell.unroll(6, x, layout="NTC", merge_outputs=True)
        return out, st[-1]


def _run(on, static):
    prev = (_fuse.set_masks_enabled(on), _fuse.set_fc_share_enabled(on))
    try:
        ctx = mx.gpu(0)
        mx.random.seed(3)
        net = _Zoneout()
        net.initialize(mx.init.Xavier(), ctx=ctx)
        net.hybridize(static_alloc=static, static_shape=static)
        x = mx.nd.array(np.random.RandomState(0).uniform(-2, 2, (8, 6, 4)), ctx=ctx)
        x.attach_grad()
        res = []
        for it in range(4):
            mx.random.seed(10 + it)
            with autograd.record():
                out, c = net(x)
                loss = (out * out).sum() + (c * 3).sum()
            loss.backward()
            res += [out.asnumpy(), c.asnumpy(), x.grad.asnumpy()]
            res += [p.grad(ctx).asnumpy() for p in net.collect_params().values()]
        return res
    finally:
        _fuse.set_masks_enabled(prev[0])
        _fuse.set_fc_share_enabled(prev[1])


@pytest.mark.parametrize("static", [False, True])
def test_cuda_passes_bitwise(static):
    ref = _run(False, static)
    got = _run(True, static)
    assert len(ref) == len(got)
    for u, v in zip(ref, got):
        assert np.array_equal(u, v), float(np.abs(u - v).max())
