"""Record deformable-convolution outputs and gradients from real MXNet 1.9.1.

    /tmp/mxref/bin/python tools/gen_contrib_fixtures.py   # writes tests/fixtures/contrib/deformable.npz

Offsets are large enough that many taps fall outside the image, so the border rules show.
MXNet computes the modulated version's backward only on GPU: only its forward is recorded.
"""
import mxnet as mx, numpy as np
rng = np.random.RandomState(0)
res = {}
cases = [dict(kernel=(3,3), stride=(1,1), dilate=(1,1), pad=(1,1), G=1, Gd=1, N=2, C=4, H=6, W=7, F=3),
         dict(kernel=(3,2), stride=(2,1), dilate=(1,2), pad=(0,1), G=2, Gd=2, N=1, C=4, H=7, W=6, F=4)]
for ci, cs in enumerate(cases):
    kh, kw = cs['kernel']
    Ho = (cs['H'] + 2*cs['pad'][0] - (cs['dilate'][0]*(kh-1)+1))//cs['stride'][0]+1
    Wo = (cs['W'] + 2*cs['pad'][1] - (cs['dilate'][1]*(kw-1)+1))//cs['stride'][1]+1
    x = rng.randn(cs['N'], cs['C'], cs['H'], cs['W']).astype('f')
    off = (rng.randn(cs['N'], 2*cs['Gd']*kh*kw, Ho, Wo)*2.5).astype('f')
    off[:, :, 0, 0] = 0.5; off[:, :, -1, -1] = 1.5
    mask = rng.rand(cs['N'], cs['Gd']*kh*kw, Ho, Wo).astype('f')
    w = rng.randn(cs['F'], cs['C']//cs['G'], kh, kw).astype('f')
    b = rng.randn(cs['F']).astype('f')
    kw_ = dict(kernel=cs['kernel'], stride=cs['stride'], dilate=cs['dilate'], pad=cs['pad'], num_filter=cs['F'], num_group=cs['G'], num_deformable_group=cs['Gd'])
    X, O, M, Wt, B = [mx.nd.array(a) for a in (x, off, mask, w, b)]
    for a in (X, O, M, Wt, B): a.attach_grad()
    with mx.autograd.record():
        y1 = mx.nd.contrib.DeformableConvolution(data=X, offset=O, weight=Wt, bias=B, **kw_)
    y1.backward(mx.nd.ones_like(y1))
    res[f'{ci}/y1'] = y1.asnumpy(); res[f'{ci}/gx1'] = X.grad.asnumpy(); res[f'{ci}/go1'] = O.grad.asnumpy(); res[f'{ci}/gw1'] = Wt.grad.asnumpy()
    y2 = mx.nd.contrib.ModulatedDeformableConvolution(data=X, offset=O, mask=M, weight=Wt, bias=B, **kw_)
    res[f'{ci}/y2'] = y2.asnumpy()
    for k, v in dict(x=x, off=off, mask=mask, w=w, b=b).items(): res[f'{ci}/{k}'] = v
import os
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'fixtures', 'contrib')
os.makedirs(out, exist_ok=True)
np.savez(os.path.join(out, 'deformable.npz'), **res)
