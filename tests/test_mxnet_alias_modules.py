"""`import mxnet.X` under the alias gives neogluon.X itself, never a second copy; the top-level
`mxnet` is a module of its own (MXNet's name and `__version__`) that shares neogluon's namespace
both ways."""
import os
import subprocess
import sys
import textwrap


def test_alias_submodules_are_the_neogluon_modules(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""
        import sys
        import mxnet as mx
        from mxnet.test_utils import assert_almost_equal
        import mxnet.gluon.data
        import neogluon, neogluon.base
        assert mx is sys.modules['mxnet'] and mx is not neogluon
        assert mx.base.MXNetError is neogluon.base.MXNetError
        assert mx.MXNetError is neogluon.MXNetError and mx.nd is neogluon.nd
        dup = [k for k in sys.modules if k.startswith('mxnet.')
               and sys.modules[k] is not sys.modules.get('neogluon' + k[5:])]
        assert not dup, dup
        try:
            mx.image.imdecode(b'', to_rgb=0)
        except mx.base.MXNetError:
            print('ok')
    """))
    out = subprocess.run([sys.executable, "-m", "neogluon.run", str(script)],
                         capture_output=True, text=True, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


NAMESPACE = textwrap.dedent("""
    import sys, importlib, pickle
    import mxnet as mx
    import neogluon
    from unittest import mock

    # identity and versions
    assert mx.__name__ == "mxnet" and neogluon.__name__ == "neogluon"
    assert mx.__version__ == "1.9.1" and neogluon.__mxnet_version__ == "1.9.1"
    assert neogluon.__version__ == VERSION != "1.9.1"
    assert neogluon.__neogluon_version__ == neogluon.__version__
    assert mx.__spec__.name == "mxnet" and mx.__path__ == neogluon.__path__

    # reads: the same objects
    for name in ("nd", "ndarray", "autograd", "MXNetError", "cpu", "Context", "base", "gluon",
                 "kv", "init", "np", "npx", "sym", "metric", "optimizer"):
        assert getattr(mx, name) is getattr(neogluon, name), name
    from mxnet import nd, gluon
    from mxnet.gluon import nn
    import mxnet.ndarray as ndarray
    assert nd is neogluon.nd and gluon is neogluon.gluon and nn is neogluon.gluon.nn
    assert ndarray is neogluon.ndarray

    # writes and deletes go both ways
    mx.through_mxnet = 1
    assert neogluon.through_mxnet == 1
    neogluon.through_mxnet = 2
    assert mx.through_mxnet == 2
    del neogluon.through_mxnet
    assert not hasattr(mx, "through_mxnet") and not hasattr(neogluon, "through_mxnet")
    neogluon.through_neogluon = 3
    del mx.through_neogluon
    assert not hasattr(neogluon, "through_neogluon")
    with mock.patch("mxnet.cpu", lambda *a: "patched"):
        assert neogluon.cpu() == "patched"
    with mock.patch.object(neogluon, "current_context", lambda: "patched too"):
        assert mx.current_context() == "patched too"
    assert mx.cpu is neogluon.cpu and mx.current_context is neogluon.current_context
    # the module's own attributes stay its own
    mx.__version__ = "1.6.0"
    assert neogluon.__version__ == VERSION
    mx.__version__ = "1.9.1"

    # dir(), from-import-*, a missing name
    assert set(dir(neogluon)) <= set(dir(mx)) and "gluon" in dir(mx)
    a, b = {}, {}
    exec("from mxnet import *", a)
    exec("from neogluon import *", b)
    assert set(a) == set(b) and a["nd"] is neogluon.nd, set(a) ^ set(b)
    try:
        mx.no_such_name
    except AttributeError as e:
        assert "module 'mxnet' has no attribute 'no_such_name'" in str(e), e
    else:
        raise AssertionError("no AttributeError")

    # the import system's spec stays each module's own
    import mxnet.nd
    assert neogluon.ndarray.__spec__.name == "neogluon.ndarray"
    assert importlib.util.find_spec("mxnet").name == "mxnet"
    assert importlib.reload(mx) is mx and mx.__version__ == "1.9.1" and mx.nd is neogluon.nd

    # pickles made through the alias name neogluon's classes
    x = pickle.loads(pickle.dumps(mx.nd.array([1, 2])))
    assert type(x) is neogluon.nd.NDArray and x.asnumpy().tolist() == [1.0, 2.0]
    print("ok")
""")


def test_mxnet_module_shares_neogluons_namespace(tmp_path):
    import tomllib
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(repo, "pyproject.toml"), "rb") as f:
        version = tomllib.load(f)["project"]["version"]
    script = tmp_path / "prog.py"
    script.write_text("VERSION = %r\n" % version + NAMESPACE)
    out = subprocess.run([sys.executable, "-m", "neogluon.run", str(script)],
                         capture_output=True, text=True, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
    # the same through `import neogluon.mxnet_alias` in a plain interpreter
    script.write_text("VERSION = %r\nimport neogluon.mxnet_alias\n" % version + NAMESPACE)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         cwd=str(tmp_path), env=dict(os.environ, PYTHONPATH=repo))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_neogluon_version_is_the_package_version():
    import importlib.metadata
    import tomllib
    import neogluon
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(repo, "pyproject.toml"), "rb") as f:
        version = tomllib.load(f)["project"]["version"]
    assert neogluon.__version__ == version != "1.9.1"
    assert neogluon.__neogluon_version__ == version
    assert neogluon.__mxnet_version__ == "1.9.1"
    try:
        installed = importlib.metadata.version("neogluon")
    except importlib.metadata.PackageNotFoundError:
        installed = None
    assert installed in (None, version)
