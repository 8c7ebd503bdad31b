"""The LSTM cell fusion (neogluon/gluon/_fuse.py) on a GPU: the fused entry runs on CUDA
tensors with the numbers of the operators, and under a CUDA graph capture (static_alloc +
static_shape) it hands over to the operators. Skips without CUDA (tools/gpu_check.sh)."""
import numpy as np
import pytest
import torch

import neogluon as mx
from neogluon import autograd, gluon
from neogluon.gluon import _fuse

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


class _Unrolled(gluon.HybridBlock):
    def __init__(self, hidden):
        super().__init__()
        with self.name_scope():
            self.cell = gluon.rnn.HybridSequentialRNNCell()
            for k in range(2):
                c = gluon.rnn.LSTMCell(hidden, input_size=4 if k == 0 else hidden)
                self.cell.add(gluon.rnn.ZoneoutCell(c, zoneout_states=0.2) if k else c)

    def hybrid_forward(self, F, x):
        out, st = self.cell.unroll(6, x, layout="NTC", merge_outputs=True)
        return out, st[-1]


def _run(fuse, static):
    prev = _fuse.set_enabled(fuse)
    try:
        ctx = mx.gpu(0)
        mx.random.seed(3)
        net = _Unrolled(64)
        net.initialize(mx.init.Xavier(), ctx=ctx)
        net.hybridize(static_alloc=static, static_shape=static)
        x = mx.nd.array(np.random.RandomState(0).uniform(-2, 2, (16, 6, 4)), ctx=ctx)
        x.attach_grad()
        res = []
        for it in range(3):
            mx.random.seed(10 + it)
            with autograd.record():
                out, c = net(x)
                loss = (out * out).sum() + c.sum()
            loss.backward()
            res += [out.asnumpy(), c.asnumpy(), x.grad.asnumpy()]
            res += [p.grad(ctx).asnumpy() for p in net.collect_params().values()]
        return res
    finally:
        _fuse.set_enabled(prev)


@pytest.mark.parametrize("static", [False, True])
def test_cuda_fused_lstm_matches_operators(static):
    ref = _run(False, static)
    got = _run(True, static)
    for u, v in zip(ref, got):
        assert np.array_equal(u, v), float(np.abs(u - v).max())
