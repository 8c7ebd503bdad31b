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
        print("version", mxnet.__version__, neogluon.__neogluon_version__ ==
              importlib.metadata.version("neogluon"))
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
