"""nd's multi-tensor / two-phase optimizer operators and nd.contrib's AdamW operators.

Expected numbers were printed by MXNet 1.9.1 (mx.nd.* / mx.nd.contrib.*) for these inputs.
"""
import numpy as np
import pytest

import neogluon as mx
from neogluon.base import MXNetError

W = [[0.5, -0.2], [0.1, 0.3]]
G = [[0.4, -0.3], [0.2, 0.1]]
M = [[0.1, 0.2], [0.3, 0.4]]
V = [[0.2, 0.1], [0.3, 0.05]]


def nd(x, dtype="float32"):
    return mx.nd.array(x, dtype=dtype)


def close(a, b, rtol=1e-6, atol=0.0):
    np.testing.assert_allclose(a.asnumpy() if hasattr(a, "asnumpy") else a, b, rtol=rtol,
                               atol=atol)


def test_multi_sgd_update_matches_mxnet_bits():
    w0, w1, g = nd(W), nd(W) * 2, nd(G)
    r = mx.nd.multi_sgd_update(w0, g, w1, g, lrs=(0.1, 0.2), wds=(0.01, 0.0), num_weights=2,
                               clip_gradient=0.35, rescale_grad=1.5, out=[w0, w1])
    assert r[0] is w0 and r[1] is w1
    np.testing.assert_array_equal(w0.asnumpy(), np.float32(
        [[0.4645000100135803, -0.1648000031709671], [0.06989999860525131, 0.2847000062465668]]))
    np.testing.assert_array_equal(w1.asnumpy(), np.float32(
        [[0.9300000071525574, -0.33000001311302185], [0.14000000059604645, 0.5700000524520874]]))
    # without out: new arrays, the weights stay
    w = nd(W)
    r = mx.nd.multi_sgd_update(w, g, lrs=[0.1], wds=[0.0])
    close(w, W)
    assert isinstance(r, list) and r[0].shape == (2, 2)


def test_multi_sgd_mom_and_mp_update():
    w, m = nd(W), nd(M)
    mx.nd.multi_sgd_mom_update(w, nd(G), m, lrs=(0.1,), wds=(0.01,), momentum=0.9,
                               num_weights=1, out=[w])
    np.testing.assert_array_equal(w.asnumpy(), np.float32(
        [[0.5494999885559082, 0.01019999384880066], [0.3499000370502472, 0.6497000455856323]]))
    np.testing.assert_array_equal(m.asnumpy(), np.float32(
        [[0.0494999922811985, 0.2101999968290329], [0.24990002810955048, 0.349700003862381]]))
    w16, w32, m = nd(W, "float16"), nd(W), nd(M)
    mx.nd.multi_mp_sgd_mom_update(w16, nd(G, "float16"), m, w32, lrs=(0.1,), wds=(0.01,),
                                  momentum=0.9, num_weights=1, out=[w16])
    assert w16.dtype == np.float16
    close(w16, [[0.54931640625, 0.0102081298828125], [0.349853515625, 0.64990234375]])
    close(w32, [[0.5495097637176514, 0.010204881429672241],
                [0.3499048948287964, 0.6497024297714233]])
    close(m, [[0.04950975999236107, 0.21020488440990448],
              [0.24990490078926086, 0.3497024476528168]])


def test_preloaded_multi_sgd_update():
    w0, w1, g = nd(W), nd(W) * 2, nd(G)
    mx.nd.preloaded_multi_sgd_update(w0, g, w1, g, nd([0.1, 0.2]), nd([0.01, 0.0]),
                                     num_weights=2, out=[w0, w1])
    close(w0, [[0.4594999849796295, -0.16979999840259552],
               [0.07989999651908875, 0.2897000014781952]])
    close(w1, [[0.9200000166893005, -0.3400000035762787],
               [0.1599999964237213, 0.5800000429153442]])


def test_multi_sgd_bad_arguments():
    w, g = nd(W), nd(G)
    with pytest.raises(MXNetError, match="lrs has 2 entries for 1 weights"):
        mx.nd.multi_sgd_update(w, g, lrs=(0.1, 0.2), wds=(0.0,), out=[w])
    with pytest.raises(MXNetError, match="expected 2 arrays"):
        mx.nd.multi_sgd_update(w, g, w, lrs=(0.1,), wds=(0.0,), num_weights=1)
    with pytest.raises(MXNetError, match="gradient 0 has shape"):
        mx.nd.multi_sgd_update(w, nd([1.0]), lrs=(0.1,), wds=(0.0,))
    with pytest.raises(TypeError, match="input 1 must be an NDArray"):
        mx.nd.multi_sgd_update(w, 3.0, lrs=(0.1,), wds=(0.0,))


def test_sum_sq_lars_all_finite():
    close(mx.nd.multi_sum_sq(nd(W), nd(G), num_arrays=2), [0.39, 0.29999998])
    lrs = mx.nd.multi_lars(nd([0.1, 0.2, 0.3, 0.4]), nd([4., 0., 1., 9.]), nd([1., 1., 0., 4.]),
                           nd([0.01, 0., 0.1, 0.2]), eta=0.5, eps=1e-3, rescale_grad=2.0)
    close(lrs, [0.04948046, 0.2, 0.3, 0.13040644])
    assert mx.nd.all_finite(nd(W)).asnumpy().tolist() == [1.0]
    assert mx.nd.all_finite(nd([1, np.inf])).asnumpy().tolist() == [0.0]
    assert mx.nd.multi_all_finite(nd(W), nd(G), num_arrays=2).asnumpy().tolist() == [1.0]
    assert mx.nd.multi_all_finite(nd(W), nd([np.nan]), num_arrays=2).asnumpy().tolist() == [0.]
    o = mx.nd.zeros((1,))
    mx.nd.all_finite(nd(W), init_output=False, out=o)   # leaves the flag as it was
    assert o.asnumpy().tolist() == [0.0]


def test_lamb_phases():
    w, mean, var = nd(W), nd(M), nd(M) * 0.5
    g = mx.nd.lamb_update_phase1(w, nd(G), mean, var, t=3, wd=0.01, rescale_grad=2.0,
                                 clip_gradient=0.5, bias_correction=True)
    close(g, [[0.13122597336769104, 0.0809832289814949],
              [0.16268664598464966, 0.17471764981746674]], rtol=1e-5)
    close(mean, [[0.14000001549720764, 0.12999998033046722],
                 [0.3100000321865082, 0.3799999952316284]])
    close(var, [[0.050199996680021286, 0.10014999657869339],
                [0.15001000463962555, 0.1998399943113327]])
    r1, r2 = w.norm(), g.norm()
    close(mx.nd.lamb_update_phase2(w, g, r1, r2, lr=0.1),
          [[0.47116485238075256, -0.2177949845790863], [0.06425178050994873, 0.2616081237792969]])
    close(mx.nd.lamb_update_phase2(w, g, r1, r2, lr=0.1, upper_bound=0.1),
          [[0.4953826665878296, -0.20284947752952576], [0.09427570551633835, 0.29385238885879517]])
    close(mx.nd.lamb_update_phase2(w, g, r1, r2, lr=0.1, lower_bound=5),
          [[0.26913395524024963, -0.34247392416000366], [-0.1862148642539978, -0.00738099217414856]],
          rtol=1e-5)
    close(mx.nd.lamb_update_phase2(w, g, r1 * 0, r2, lr=0.1),
          [[0.4868774116039276, -0.20809832215309143], [0.08373133838176727, 0.28252825140953064]])


def test_adamw_update_and_skip():
    # rescale_grad 0, NaN, inf: the update is skipped, weight and states unchanged
    for bad in (0.0, np.nan, np.inf):
        w, m, v = nd(W), nd(M), nd(V)
        mx.nd.contrib.adamw_update(w, nd(G), m, v, nd([bad]), lr=0.1, eta=0.5, wd=0.01,
                                   clip_gradient=0.5, out=w)
        close(w, W)
        close(m, M)
        close(v, V)
    w, m, v = nd(W), nd(M), nd(V)
    r = mx.nd.contrib.adamw_update(w, nd(G), m, v, nd([-1.0]), lr=0.1, eta=0.5, wd=0.01,
                                   clip_gradient=0.5)
    close(w, W)   # no out: a new array
    close(r, [[0.4919092655181885, -0.2322055846452713], [0.07666833698749542, 0.22020630538463593]])
    close(m, [[0.049999985843896866, 0.21000000834465027], [0.25, 0.3499999940395355]])
    close(v, [[0.19995999336242676, 0.09998999536037445], [0.2997400164604187, 0.049959998577833176]])
    # a Python number for rescale_grad works as in MXNet
    w, m, v = nd(W), nd(M), nd(V)
    mx.nd.contrib.adamw_update(w, nd(G), m, v, np.nan, lr=0.1, eta=0.5, wd=0.01, out=w)
    close(w, W)
    with pytest.raises(TypeError):
        mx.nd.contrib.adamw_update(w, nd(G), m, v, nd([1.0]), lr=0.1, wd=0.01)  # no eta
    with pytest.raises(MXNetError, match="grad has shape"):
        mx.nd.contrib.adamw_update(w, nd([1.0, 2.0]), m, v, nd([1.0]), lr=0.1, eta=1.0)


def test_multi_and_mp_adamw_update():
    ws = [nd(W), nd(W) * 2]
    gs = [nd(G), nd(G) * 2]
    ms = [nd(M), nd(M)]
    vs = [nd(V), nd(V)]
    mx.nd.contrib.multi_adamw_update(ws, gs, ms, vs, nd([1.5]), lrs=[0.1, 0.2], wds=[0.01, 0.02],
                                     etas=[0.5, 0.7], out=ws)
    # the single-weight operator gives the same numbers
    for k, (lr, wd, eta) in enumerate([(0.1, 0.01, 0.5), (0.2, 0.02, 0.7)]):
        w, m, v = nd(W) * (k + 1), nd(M), nd(V)
        mx.nd.contrib.adamw_update(w, nd(G) * (k + 1), m, v, nd([1.5]), lr=lr, eta=eta, wd=wd,
                                   out=w)
        np.testing.assert_array_equal(ws[k].asnumpy(), w.asnumpy())
        np.testing.assert_array_equal(ms[k].asnumpy(), m.asnumpy())
    w16, w32, m, v = nd(W, "float16"), nd(W), nd(M), nd(V)
    mx.nd.contrib.mp_adamw_update(w16, nd(G, "float16"), m, v, w32, nd([1.0]), lr=0.1, eta=0.5,
                                  wd=0.01, out=w16)
    w, m2, v2 = nd(W), nd(M), nd(V)
    mx.nd.contrib.adamw_update(w, nd(G), m2, v2, nd([1.0]), lr=0.1, eta=0.5, wd=0.01, out=w)
    close(w32, w.asnumpy(), rtol=1e-3)
    np.testing.assert_array_equal(w16.asnumpy(), w32.asnumpy().astype(np.float16))
    with pytest.raises(MXNetError, match="etas has 1 entries for 2 weights"):
        mx.nd.contrib.multi_adamw_update(ws, gs, ms, vs, 1.0, lrs=[0.1, 0.2], wds=[0, 0],
                                         etas=[1.0], out=ws)


def test_group_adagrad_update_row_sparse_and_dense():
    w, h = nd(W), mx.nd.zeros((2, 1))
    mx.nd.contrib.group_adagrad_update(w, nd(G), h, lr=0.1, rescale_grad=2.0, clip_gradient=0.5,
                                       epsilon=1e-5, out=w)
    # history: mean over the row of the clipped, rescaled gradient squared
    close(h, [[0.25], [(0.4 ** 2 + 0.2 ** 2) / 2]])
    close(w, [[0.5 - 0.1 * 0.5 / np.sqrt(0.25 + 1e-5), -0.2 + 0.1 * 0.5 / np.sqrt(0.25 + 1e-5)],
              [0.1 - 0.1 * 0.4 / np.sqrt(0.1 + 1e-5), 0.3 - 0.1 * 0.2 / np.sqrt(0.1 + 1e-5)]],
          rtol=1e-5)
    w2, h2 = nd(W), mx.nd.zeros((2, 1))
    g = nd([[0.0, 0.0], [0.2, 0.1]]).tostype("row_sparse")
    mx.nd.contrib.group_adagrad_update(w2, g, h2, lr=0.1, out=w2)
    close(w2[0], W[0])  # only the gradient's rows change
    assert h2.asnumpy()[0, 0] == 0.0


@pytest.mark.parametrize("name,kw", [("sgd", {}), ("sgd", {"momentum": 0.9}), ("adam", {}),
                                     ("rmsprop", {}), ("ftml", {})])
def test_optimizer_on_csr_arrays_is_the_dense_update(name, kw):
    # MXNet runs its update operators on csr inputs through dense copies (storage fallback)
    from neogluon.test_utils import rand_ndarray
    w = rand_ndarray((3, 4), "csr", density=1)
    g = rand_ndarray((3, 4), "csr", density=0.5)
    wd_, gd = w.tostype("default"), g.tostype("default")
    o1, o2 = mx.optimizer.create(name, **kw), mx.optimizer.create(name, **kw)
    s1, s2 = o1.create_state(0, w), o2.create_state(0, wd_)
    o1.update(0, w, g, s1)
    o2.update(0, wd_, gd, s2)
    assert w.stype == "csr"
    np.testing.assert_allclose(w.asnumpy(), wd_.asnumpy(), rtol=1e-6)


def test_multi_lamb_update_matches_mxnet():
    ws = [nd(W), nd(W) * 3]
    ms = [nd(M), nd(M)]
    vs = [nd(M) * 0.5, nd(M) * 0.2]
    mx.nd.contrib.multi_lamb_update(ws, [nd(G), nd(G) * 2], ms, vs, step_count=[3, 1],
                                    lrs=[0.1, 0.2], wds=[0.01, 0.0], rescale_grad=2.0,
                                    clip_gradient=0.5, upper_bound=1.0, out=ws)
    close(ws[0], [[0.47116485238075256, -0.2177949845790863],
                  [0.06425178050994873, 0.2616081237792969]])
    close(ws[1], [[1.4127293825149536, -0.6574797034263611],
                  [0.18435528874397278, 0.7746755480766296]])
    close(ms[1], [[0.14000001549720764, 0.12999998033046722],
                  [0.320000022649765, 0.4000000059604645]])
    w16, w32 = [nd(W, "float16")], [nd(W)]
    mx.nd.contrib.multi_mp_lamb_update(w16, [nd(G, "float16")], [nd(M)], [nd(M)], w32,
                                       step_count=[2], lrs=[0.1], wds=[0.01], out=w16)
    close(w16[0], [[0.47216796875, -0.2210693359375], [0.0655517578125, 0.261474609375]])
    close(w32[0], [[0.47210919857025146, -0.22110199928283691],
                   [0.06554320454597473, 0.2614055573940277]])
