"""The Gluon ecosystem through the ``mxnet`` alias (issue 20).

Without GluonCV/GluonNLP installed: the alias's GluonCV compatibility step (on a stand-in
``gluoncv`` package), ``mxnet.symbol.contrib`` as a module, MXNet's pool-based
``_MultiWorkerIter``, ``model_store._model_sha1`` and ``mx.contrib.amp.amp``.
With them installed (``pip install --no-deps gluoncv==0.10.5.post0 gluonnlp==0.10.0``), their
models build with ``pretrained=False``, run forward and backward and take a Trainer step, and
give MXNet 1.9.1's outputs for fixed inputs and parameters (tests/fixtures/ecosystem, from
tools/gen_ecosystem_fixtures.py); otherwise those tests skip.
"""
import multiprocessing
import multiprocessing.pool
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import neogluon as mx
from neogluon import nd

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run_alias(code, cwd, extra_path=None, timeout=600):
    env = dict(os.environ)
    env.pop("NEOGLUON_SHADOW_MXNET", None)
    env["PYTHONPATH"] = os.pathsep.join(([str(extra_path)] if extra_path else []) + [REPO])
    script = os.path.join(str(cwd), "prog.py")
    with open(script, "w") as f:
        f.write(textwrap.dedent(code))
    return subprocess.run([sys.executable, "-m", "neogluon.run", script], capture_output=True,
                          text=True, cwd=str(cwd), env=env, timeout=timeout)


FAKE_CHECK = '''
def _require_mxnet_version(v, max_v="2.0.0"):
    import mxnet as mx
    from packaging.version import Version as V
    if not (V(v) <= V(mx.__version__) < V(max_v)):
        raise RuntimeError("Legacy mxnet")

def _require_pytorch_version(v, max_v="2.0.0"):
    import torch
    raise RuntimeError("Legacy torch==%s detected" % torch.__version__)
'''


def test_gluoncv_torch_check_only_step(tmp_path):
    site = tmp_path / "site"
    (site / "gluoncv").mkdir(parents=True)
    (site / "gluoncv" / "__init__.py").write_text("")
    (site / "gluoncv" / "check.py").write_text(FAKE_CHECK)
    r = _run_alias("""
        import mxnet, neogluon, importlib.metadata
        print("version", mxnet.__version__, neogluon.__version__ ==
              importlib.metadata.version("neogluon") != "1.9.1")
        from gluoncv import check
        check._require_mxnet_version("1.4.0")          # unchanged, passes at 1.9.1
        try:
            check._require_mxnet_version("1.4.0", "1.9.0")
        except RuntimeError:
            print("mxnet check still refuses")
        try:
            check._require_pytorch_version("1.4.0", "2.0.0")
        except ImportError as e:
            print("torch check: ImportError")
    """, tmp_path, site)
    assert r.returncode == 0, r.stderr
    assert "version 1.9.1 True" in r.stdout
    assert "mxnet check still refuses" in r.stdout
    assert "torch check: ImportError" in r.stdout
    # Without the alias the module is left as it is.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), REPO]))
    plain = subprocess.run([sys.executable, "-c", "from gluoncv import check\n"
                            "check._require_pytorch_version('1.4.0')"],
                           capture_output=True, text=True, env=env, cwd=str(tmp_path))
    assert plain.returncode != 0 and "RuntimeError: Legacy torch" in plain.stderr


def test_namespace_submodules_import(tmp_path):
    r = _run_alias("""
        import mxnet
        from mxnet.symbol.contrib import SyncBatchNorm, BilinearResize2D
        import mxnet.symbol.contrib as c
        print(type(c).__name__, callable(SyncBatchNorm), c.BilinearResize2D is not None)
        from mxnet.contrib.amp import amp
        print("amp", amp._amp_initialized)
        try:
            import mxnet.symbol.no_such_thing
        except ImportError:
            print("missing ok")
    """, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "module True True" in r.stdout.replace("_NamespaceModule", "module")
    assert "amp False" in r.stdout and "missing ok" in r.stdout


def _square(i):
    return nd.array([i, i * i])


class _Squares:
    def __len__(self):
        return 7

    def __getitem__(self, i):
        return _square(i)


@pytest.mark.parametrize("kind", ["thread", "process"])
def test_multiworker_iter_mxnet_interface(kind):
    from neogluon.gluon.data import dataloader as dl
    from neogluon.gluon.data.sampler import BatchSampler, SequentialSampler
    ds = _Squares()
    bs = BatchSampler(SequentialSampler(len(ds)), 3, "keep")
    if kind == "thread":
        pool = multiprocessing.pool.ThreadPool(2)
        it = dl._MultiWorkerIter(pool, dl.default_batchify_fn, bs,
                                 worker_fn=dl._thread_worker_fn, prefetch=2, dataset=ds)
    else:
        pool = multiprocessing.get_context("fork").Pool(
            2, initializer=dl._worker_initializer, initargs=[ds])
        it = dl._MultiWorkerIter(pool, dl.default_mp_batchify_fn, bs, prefetch=2)
    try:
        assert len(it) == 3
        got = [b.asnumpy() for b in it]
    finally:
        pool.terminate()
    assert [g.shape for g in got] == [(3, 2), (3, 2), (1, 2)]
    np.testing.assert_allclose(np.concatenate(got), [[i, i * i] for i in range(7)])


def test_model_store_sha1_names_file(tmp_path):
    from neogluon.gluon.model_zoo import model_store
    model_store._model_sha1["t_model_xyz"] = "0123456789abcdef0123456789abcdef01234567"
    try:
        assert model_store.short_hash("t_model_xyz") == "01234567"
        path = tmp_path / "t_model_xyz-01234567.params"
        path.write_bytes(b"")
        assert model_store.get_model_file("t_model_xyz", root=str(tmp_path)) == str(path)
    finally:
        del model_store._model_sha1["t_model_xyz"]
    with pytest.raises(ValueError, match="t_model_xyz"):
        model_store.short_hash("t_model_xyz")


# ------------------------------------------------------------- GluonCV / GluonNLP models
import importlib.util  # noqa: E402

_HAVE = all(importlib.util.find_spec(m) is not None for m in ("gluoncv", "gluonnlp"))
FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "ecosystem", "models.npz")
MODEL_CASES = ["cifar_resnet20", "mobilenetv2", "resnet18_v1b", "simple_pose", "bert_small",
               "lstm_lm", "transformer", "bilm", "beam_search"]


@pytest.fixture(scope="module")
def neogluon_results(tmp_path_factory):
    # find_spec, not importorskip: importing gluoncv outside the alias fails by design (it
    # wants mxnet, or torch<2), so the import is tried in the child run under the alias.
    if not _HAVE:
        pytest.skip("gluoncv and gluonnlp are not installed (pip install --no-deps "
                    "gluoncv==0.10.5.post0 gluonnlp==0.10.0)")
    out = tmp_path_factory.mktemp("eco") / "neogluon.npz"
    env = dict(os.environ)
    env.pop("NEOGLUON_SHADOW_MXNET", None)
    env["PYTHONPATH"] = REPO
    r = subprocess.run([sys.executable, "-m", "neogluon.run",
                        os.path.join(os.path.dirname(__file__), "ecosystem_cases.py"),
                        str(out)] + MODEL_CASES + ["learn"],
                       capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return dict(np.load(out))


def test_gluoncv_gluonnlp_import_under_alias(tmp_path):
    if not _HAVE:
        pytest.skip("gluoncv and gluonnlp are not installed")
    r = _run_alias("""
        import warnings
        warnings.simplefilter("error", UserWarning)   # no 'both mxnet and torch' warning
        import mxnet, gluoncv, gluonnlp, neogluon
        print(gluoncv._found_mxnet, gluoncv._found_pytorch, mxnet.__version__)
        # what GluonCV's and GluonNLP's modules hold as `mx` is the alias module
        from gluoncv import check
        check._require_mxnet_version("1.4.0", "2.0.0")
        import gluoncv.model_zoo.segbase, gluonnlp.model
        print("their mx", gluoncv.model_zoo.segbase.mx is mxnet,
              gluonnlp.model.attention_cell.mx is mxnet, neogluon.__version__ != "1.9.1")
    """, tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "True False 1.9.1" in r.stdout
    assert "their mx True True True" in r.stdout


@pytest.mark.parametrize("case", MODEL_CASES)
def test_model_matches_mxnet(neogluon_results, case):
    exp = np.load(FIXTURE)
    keys = [k for k in exp.files if k.startswith(case + "/")]
    assert keys, case
    err = neogluon_results.get(f"{case}/error")
    assert err is None, str(err)
    for k in keys:
        got, want = neogluon_results[k], exp[k]
        assert got.shape == want.shape, k
        scale = max(float(np.abs(want).max()), 1e-6)
        # Training-mode BatchNorm over tiny batches and deep chains: float32 summation order.
        np.testing.assert_allclose(got / scale, want / scale, rtol=0, atol=1e-3, err_msg=k)


def test_trainer_learns_on_gluoncv_model(neogluon_results):
    losses = neogluon_results["learn/cifar_losses"]
    assert np.all(np.isfinite(losses))
    assert losses[-1] < 0.5 * losses[0], losses


def test_gluoncv_cifar_training_script_learns(tmp_path):
    if not _HAVE:
        pytest.skip("gluoncv and gluonnlp are not installed")
    env = dict(os.environ)
    env.pop("NEOGLUON_SHADOW_MXNET", None)
    env["PYTHONPATH"] = REPO
    r = subprocess.run([sys.executable, "-m", "neogluon.run",
                        os.path.join(os.path.dirname(__file__), "gluoncv_cifar_script.py")],
                       capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    final = float(r.stdout.strip().splitlines()[-1].split()[-1])
    assert final >= 0.9, r.stdout


def test_zeros_ones_like_ignore_attributes():
    # MXNet 1.9.1's zeros_like/ones_like take no parameters and ignore attributes given to them
    # (checked there: nd.zeros_like(float32 x, dtype='int64') is float32, foo=3 is accepted);
    # GluonCV's CenterNetDecoder passes dtype='int64' on int64 data.
    x = nd.array([[1.5, 2.0]])
    z = nd.zeros_like(x, dtype="int64")
    o = nd.ones_like(x, dtype="int32", foo=3)
    assert z.dtype == np.float32 and o.dtype == np.float32
    np.testing.assert_array_equal(z.asnumpy(), [[0, 0]])
    np.testing.assert_array_equal(o.asnumpy(), [[1, 1]])
    i = nd.array([3, 4], dtype="int64")
    assert nd.zeros_like(i, dtype="int64").dtype == np.int64
    s = mx.sym.zeros_like(mx.sym.var("x"), dtype="int64")
    np.testing.assert_array_equal(s.eval(x=x)[0].asnumpy(), [[0, 0]])


def test_pooling_reads_first_pad_values():
    # MXNet 1.9.1 (checked there) pools with pad[:2] when a 2-D Pooling is given 4 pad values
    # (GluonCV's DropBlock, in ResNeSt): shapes and values below are MXNet's.
    x = nd.array(np.arange(2 * 1 * 6 * 5).reshape(2, 1, 6, 5) % 7)
    y = nd.Pooling(x, pool_type="max", kernel=(3, 3), stride=(1, 1), pad=(1, 1, 1, 1))
    assert y.shape == (2, 1, 6, 5)
    np.testing.assert_array_equal(y.asnumpy().ravel()[:12],
                                  [6, 6, 6, 4, 4, 6, 6, 6, 6, 6, 6, 6])
    y = nd.Pooling(x, pool_type="max", kernel=(3, 3), stride=(1, 1), pad=(1, 2, 1, 2))
    assert y.shape == (2, 1, 6, 7)
    np.testing.assert_array_equal(y.asnumpy().ravel()[:12],
                                  [5, 6, 6, 6, 4, 4, 4, 5, 6, 6, 6, 6])
    y = nd.Pooling(x, pool_type="max", kernel=(3, 3), stride=(1, 1), pad=(2, 1, 0, 0))
    assert y.shape == (2, 1, 8, 5)
    np.testing.assert_array_equal(y.asnumpy().ravel()[:12],
                                  [1, 2, 3, 4, 4, 6, 6, 6, 4, 4, 6, 6])


def test_zoo_sweep_tool_runs_models(tmp_path):
    # tools/gluoncv_zoo_sweep.py: models run in a worker, every stage recorded; ResNeSt-14
    # (DropBlock's 4-value Pooling pad) passes all four stages as the others.
    if not _HAVE:
        pytest.skip("gluoncv and gluonnlp are not installed")
    out = tmp_path / "sweep.json"
    r = subprocess.run([sys.executable, os.path.join(REPO, "tools", "gluoncv_zoo_sweep.py"),
                        "sweep", "cifar_resnet20_v1", "resnest14", "nlp:standard_lstm_lm_200",
                        "--timeout", "300", "--out", str(out)],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    import json
    res = {d["model"]: d for d in json.loads(out.read_text())}
    assert set(res) == {"cifar_resnet20_v1", "resnest14", "nlp:standard_lstm_lm_200"}
    for name, d in res.items():
        assert [d[k] for k in ("build", "forward", "backward", "step")] == ["ok"] * 4, d
