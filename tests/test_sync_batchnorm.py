"""gluon.contrib.nn.SyncBatchNorm: statistics of the whole batch of a step, across the workers
of a dist job (gloo) and across the replicas of one process whose forwards run in threads;
the numbers must equal nn.BatchNorm over the concatenated batch (outputs, gradients, running
statistics)."""
import os
import sys
import threading

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dist_util import run_workers  # noqa: E402

import neogluon as mx  # noqa: E402
from neogluon import autograd, gluon  # noqa: E402


def _data():
    rng = np.random.RandomState(0)
    x_all = rng.randn(8, 3, 4, 5).astype("float32") * 2 + 1
    w_all = rng.randn(8, 3, 4, 5).astype("float32")
    gamma = rng.rand(3).astype("float32") + 0.5
    beta = rng.randn(3).astype("float32")
    return x_all, w_all, gamma, beta


def _reference(steps=2):
    """Plain BatchNorm over the whole batch, same steps as the workers."""
    x_all, w_all, gamma, beta = _data()
    layer = gluon.nn.BatchNorm(in_channels=3, momentum=0.8)
    layer.initialize()
    layer.gamma.set_data(mx.nd.array(gamma))
    layer.beta.set_data(mx.nd.array(beta))
    ref = {}
    for step in range(steps):
        x = mx.nd.array(x_all * (step + 1))
        x.attach_grad()
        with autograd.record():
            y = layer(x)
            loss = (y * mx.nd.array(w_all)).sum()
        loss.backward()
        ref[f"y{step}"] = y.asnumpy()
        ref[f"dx{step}"] = x.grad.asnumpy()
        ref[f"dgamma{step}"] = layer.gamma.grad().asnumpy()
        ref[f"dbeta{step}"] = layer.beta.grad().asnumpy()
        ref[f"rmean{step}"] = layer.running_mean.data().asnumpy()
        ref[f"rvar{step}"] = layer.running_var.data().asnumpy()
    ref["infer"] = layer(mx.nd.array(x_all)).asnumpy()
    return ref


def _close(a, b, what):
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4, err_msg=what)


@pytest.mark.parametrize("mode", ["imperative", "hybrid"])
def test_dist_two_workers_equal_batchnorm_over_whole_batch(tmp_path, mode):
    run_workers("sync_batchnorm.py", 2, str(tmp_path), mode, timeout=120)
    got = [dict(np.load(tmp_path / f"rank{r}.npz")) for r in range(2)]
    ref = _reference()
    for step in range(2):
        for k in ("y", "dx"):
            _close(np.concatenate([g[f"{k}{step}"] for g in got]), ref[f"{k}{step}"],
                   f"{k} step {step}")
        for k in ("dgamma", "dbeta"):  # each worker's share; the kvstore sums them
            _close(got[0][f"{k}{step}"] + got[1][f"{k}{step}"], ref[f"{k}{step}"],
                   f"{k} step {step}")
        for k in ("rmean", "rvar"):
            for g in got:
                _close(g[f"{k}{step}"], ref[f"{k}{step}"], f"{k} step {step}")
    # Inference uses the (synchronised) running statistics.
    _close(np.concatenate([g["infer"] for g in got]), ref["infer"], "inference")
    # Without synchronisation the slices' statistics differ from the whole batch's.
    assert not np.allclose(got[0]["rmean0"], got[0]["rmean0"] * 0 + _slice_mean(0, 3))


def _slice_mean(lo, hi):
    x_all = _data()[0]
    return 0.2 * x_all[lo:hi].mean(axis=(0, 2, 3))


def test_in_process_replicas_in_threads_equal_batchnorm():
    x_all, w_all, gamma, beta = _data()
    ctxs = [mx.cpu(0), mx.cpu(1)]
    layer = gluon.contrib.nn.SyncBatchNorm(in_channels=3, num_devices=2, momentum=0.8)
    layer.initialize(ctx=ctxs)
    layer.gamma.set_data(mx.nd.array(gamma))
    layer.beta.set_data(mx.nd.array(beta))
    ref = _reference()
    for step in range(2):
        xs = [mx.nd.array(x_all[:3] * (step + 1), ctx=ctxs[0]),
              mx.nd.array(x_all[3:] * (step + 1), ctx=ctxs[1])]
        ws = [mx.nd.array(w_all[:3], ctx=ctxs[0]), mx.nd.array(w_all[3:], ctx=ctxs[1])]
        losses, ys, errors = [None, None], [None, None], []

        def run(i):
            try:
                x = xs[i]
                x.attach_grad()
                with autograd.record():
                    ys[i] = layer(x)
                    losses[i] = (ys[i] * ws[i]).sum()
            except Exception as e:  # pragma: no cover - reported below
                errors.append(e)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors, errors
        autograd.backward(losses)
        _close(np.concatenate([y.asnumpy() for y in ys]), ref[f"y{step}"], f"y {step}")
        _close(np.concatenate([x.grad.asnumpy() for x in xs]), ref[f"dx{step}"], f"dx {step}")
        dg = sum(g.asnumpy() for g in layer.gamma.list_grad())
        db = sum(g.asnumpy() for g in layer.beta.list_grad())
        _close(dg, ref[f"dgamma{step}"], f"dgamma {step}")
        _close(db, ref[f"dbeta{step}"], f"dbeta {step}")
        for rm in layer.running_mean.list_data():
            _close(rm.asnumpy(), ref[f"rmean{step}"], f"rmean {step}")
        for rv in layer.running_var.list_data():
            _close(rv.asnumpy(), ref[f"rvar{step}"], f"rvar {step}")


def test_main_thread_replicas_warn_and_use_own_slice():
    x_all = _data()[0]
    layer = gluon.contrib.nn.SyncBatchNorm(in_channels=3, num_devices=2)
    layer.initialize()
    with pytest.warns(UserWarning, match="main thread"):
        with autograd.record():
            y = layer(mx.nd.array(x_all[:3]))
    plain = gluon.nn.BatchNorm(in_channels=3)
    plain.initialize()
    with autograd.record():
        z = plain(mx.nd.array(x_all[:3]))
    _close(y.asnumpy(), z.asnumpy(), "own slice")


def test_one_device_is_plain_batchnorm_and_bad_gamma_is_named():
    x = mx.nd.array(_data()[0])
    layer = gluon.contrib.nn.SyncBatchNorm(num_devices=1)
    layer.initialize()
    with autograd.record():
        y = layer(x)
    plain = gluon.nn.BatchNorm()
    plain.initialize()
    with autograd.record():
        z = plain(x)
    _close(y.asnumpy(), z.asnumpy(), "one device")
    with pytest.raises(mx.base.MXNetError, match="gamma"):
        with autograd.record():
            mx.nd.contrib.SyncBatchNorm(x, mx.nd.ones((2,)), mx.nd.zeros((3,)),
                                        mx.nd.zeros((3,)), mx.nd.ones((3,)), ndev=2, key="k")


def test_missing_replica_times_out_with_the_layer_named(monkeypatch):
    monkeypatch.setenv("NEOGLUON_KVSTORE_TIMEOUT", "0.5")
    layer = gluon.contrib.nn.SyncBatchNorm(in_channels=3, num_devices=2)
    layer.initialize()
    errors = []

    def run():
        try:
            with autograd.record():
                layer(mx.nd.array(_data()[0][:3]))
        except mx.base.MXNetError as e:
            errors.append(str(e))

    t = threading.Thread(target=run)
    t.start()
    t.join(30)
    assert not t.is_alive()
    assert len(errors) == 1 and layer.prefix in errors[0] and "1 of num_devices=2" in errors[0]
