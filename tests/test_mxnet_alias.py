"""`python -m neogluon.run` and neogluon.mxnet_alias: `import mxnet` gives neogluon's API (a thin
`mxnet` module over the neogluon package, with MXNet's `__version__`), programs see the
argv/path/__name__ they would see under plain `python`, and a real MXNet is never shadowed
unless asked (simulated by a fake `mxnet` package on PYTHONPATH)."""
import os
import subprocess
import sys
import textwrap

import tomllib

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(REPO, "pyproject.toml"), "rb") as _f:
    NEOGLUON_VERSION = tomllib.load(_f)["project"]["version"]


def _run(args, cwd, extra_path=None, env=None):
    environ = dict(os.environ)
    environ.pop("NEOGLUON_SHADOW_MXNET", None)
    paths = ([extra_path] if extra_path else []) + [REPO]
    environ["PYTHONPATH"] = os.pathsep.join(paths)
    environ.update(env or {})
    return subprocess.run([sys.executable] + args, capture_output=True, text=True, cwd=str(cwd),
                          env=environ, timeout=300)


@pytest.fixture
def fake_mxnet(tmp_path):
    """A directory holding a fake 'real' MXNet package."""
    root = tmp_path / "site"
    (root / "mxnet").mkdir(parents=True)
    (root / "mxnet" / "__init__.py").write_text("FAKE_REAL_MXNET = True\n")
    (root / "mxnet" / "gluon.py").write_text("FAKE = True\n")
    return root


PROBE = textwrap.dedent("""
    import sys
    import mxnet
    import mxnet.gluon
    import neogluon
    print("on_neogluon", getattr(mxnet, "nd", None) is neogluon.nd and
          getattr(mxnet, "MXNetError", None) is neogluon.MXNetError)
    print("gluon_same", mxnet.gluon is neogluon.gluon)
    print("versions", getattr(mxnet, "__version__", None), neogluon.__version__)
    print("fake", getattr(mxnet, "FAKE_REAL_MXNET", False))
    print("argv", sys.argv[1:])
    print("name", __name__)
""")


def _fields(stdout):
    return dict(line.split(" ", 1) for line in stdout.strip().splitlines() if " " in line)


def test_script_runs_on_neogluon_with_its_argv(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(PROBE + "print('argv0', sys.argv[0])\nprint('path0', sys.path[0])\n")
    out = _run(["-m", "neogluon.run", str(script), "--lr", "0.1", "x y"], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    f = _fields(out.stdout)
    assert f["on_neogluon"] == "True" and f["gluon_same"] == "True" and f["fake"] == "False"
    assert f["versions"] == "1.9.1 " + NEOGLUON_VERSION
    assert f["argv"] == "['--lr', '0.1', 'x y']"
    assert f["argv0"] == str(script) and f["name"] == "__main__"
    assert f["path0"] == str(tmp_path)  # the script's directory, as for `python prog.py`


def test_path_is_the_one_plain_python_gives(tmp_path):
    """`python prog.py` puts the script's directory first and not the current directory;
    `python -m mod` puts the current directory first."""
    (tmp_path / "cwd").mkdir()
    (tmp_path / "scripts").mkdir()
    (tmp_path / "cwd" / "localmod.py").write_text("print('localmod imported')\n")
    (tmp_path / "scripts" / "prog.py").write_text(
        "try:\n    import localmod\nexcept ImportError:\n    print('not importable')\n")
    out = _run(["-m", "neogluon.run", str(tmp_path / "scripts" / "prog.py")], cwd=tmp_path / "cwd")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "not importable"
    out = _run(["-m", "neogluon.run", "-m", "localmod"], cwd=tmp_path / "cwd")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "localmod imported"


def test_module_form_and_exit_status(tmp_path):
    pkg = tmp_path / "mytool"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "__main__.py").write_text(PROBE + "raise SystemExit(3)\n")
    (tmp_path / "single.py").write_text(PROBE)
    out = _run(["-m", "neogluon.run", "-m", "mytool", "a", "--b"], cwd=tmp_path)
    assert out.returncode == 3, out.stderr
    f = _fields(out.stdout)
    assert f["on_neogluon"] == "True" and f["argv"] == "['a', '--b']" and f["name"] == "__main__"
    out = _run(["-m", "neogluon.run", "-m", "single"], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert _fields(out.stdout)["gluon_same"] == "True"


def test_mxnet_modules_are_neogluon_modules(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""
        import mxnet as mx
        from mxnet import gluon, nd, autograd
        from mxnet.gluon import nn
        from mxnet.base import MXNetError
        import mxnet.ndarray as ndarray
        import neogluon
        assert mx.gluon is neogluon.gluon and nn is neogluon.gluon.nn
        assert nd is neogluon.nd and MXNetError is neogluon.MXNetError
        assert mx.MXNetError is neogluon.MXNetError and mx.base is neogluon.base
        assert ndarray is neogluon.ndarray and mx.nd is neogluon.ndarray
        assert mx.test_utils is neogluon.test_utils and mx.runtime is neogluon.runtime
        # `mxnet` itself is a module of its own: MXNet's name and version, neogluon's namespace
        assert mx is not neogluon and mx.__name__ == "mxnet" and mx.__version__ == "1.9.1"
        assert neogluon.__name__ == "neogluon" and neogluon.__version__ != "1.9.1"
        net = nn.Dense(2)
        net.initialize()
        assert isinstance(net(nd.ones((1, 3))), neogluon.nd.NDArray)
        print("ok")
    """))
    out = _run(["-m", "neogluon.run", str(script)], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_importing_a_submodule_keeps_what_its_package_binds_to_that_name(tmp_path):
    # vision/__init__ binds the function alexnet over the submodule alexnet (in MXNet too);
    # the first `import mxnet...vision.alexnet` must not turn vision.alexnet into the module
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""
        import neogluon.gluon.model_zoo.vision as v
        import mxnet.gluon.model_zoo.vision.alexnet
        from mxnet.gluon.model_zoo.vision.alexnet import AlexNet
        import mxnet.gluon.model_zoo.vision.alexnet as named
        import mxnet.gluon.model_zoo.vision.resnet as resnet_module
        import types
        assert callable(v.alexnet) and not isinstance(v.alexnet, types.ModuleType)
        assert named is v.alexnet and isinstance(v.alexnet(), AlexNet)
        assert isinstance(resnet_module, types.ModuleType) and v.resnet is resnet_module
        assert type(v) is types.ModuleType
        v.later = 1
        assert v.later == 1
        print("ok")
    """))
    out = _run(["-m", "neogluon.run", str(script)], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_usage_errors(tmp_path):
    out = _run(["-m", "neogluon.run"], cwd=tmp_path)
    assert out.returncode == 2 and "usage" in out.stderr
    out = _run(["-m", "neogluon.run", "--help"], cwd=tmp_path)
    assert out.returncode == 0 and "usage" in out.stdout
    out = _run(["-m", "neogluon.run", "missing.py"], cwd=tmp_path)
    assert out.returncode == 2 and "missing.py" in out.stderr
    out = _run(["-m", "neogluon.run", "-m"], cwd=tmp_path)
    assert out.returncode == 2 and "-m needs a module name" in out.stderr


def test_real_mxnet_is_not_shadowed_without_shadow(tmp_path, fake_mxnet):
    script = tmp_path / "prog.py"
    script.write_text(PROBE)
    out = _run(["-m", "neogluon.run", str(script)], cwd=tmp_path, extra_path=str(fake_mxnet))
    assert out.returncode == 2
    assert "a real MXNet is installed" in out.stderr and "--shadow" in out.stderr
    assert out.stdout == ""  # the program did not run
    # a plain import of the alias leaves the real one in place, and says so
    code = "import warnings\nwarnings.simplefilter('always')\nimport neogluon.mxnet_alias\n" + PROBE
    out = _run(["-c", code], cwd=tmp_path, extra_path=str(fake_mxnet))
    assert out.returncode == 0, out.stderr
    f = _fields(out.stdout)
    assert f["on_neogluon"] == "False" and f["fake"] == "True"
    assert "NEOGLUON_SHADOW_MXNET" in out.stderr


def test_shadow_makes_neogluon_win(tmp_path, fake_mxnet):
    script = tmp_path / "prog.py"
    script.write_text(PROBE)
    out = _run(["-m", "neogluon.run", "--shadow", str(script), "--x"], cwd=tmp_path,
               extra_path=str(fake_mxnet))
    assert out.returncode == 0, out.stderr
    f = _fields(out.stdout)
    assert f["on_neogluon"] == "True" and f["gluon_same"] == "True" and f["fake"] == "False"
    assert f["versions"] == "1.9.1 " + NEOGLUON_VERSION
    assert f["argv"] == "['--x']"
    # the environment variable does the same for a plain import of the alias
    out = _run(["-c", "import neogluon.mxnet_alias\n" + PROBE], cwd=tmp_path,
               extra_path=str(fake_mxnet), env={"NEOGLUON_SHADOW_MXNET": "1"})
    assert out.returncode == 0, out.stderr
    assert _fields(out.stdout)["on_neogluon"] == "True"


def test_install_shadow_replaces_an_already_imported_real_mxnet(tmp_path, fake_mxnet):
    code = textwrap.dedent("""
        import mxnet
        assert mxnet.FAKE_REAL_MXNET
        import mxnet.gluon
        from neogluon import mxnet_alias
        assert mxnet_alias.real_mxnet_present()
        assert mxnet_alias.install(shadow=True) is True
        import mxnet as again
        import mxnet.gluon as g
        import neogluon, sys
        assert again is sys.modules["mxnet"] and again is not mxnet
        assert not hasattr(again, "FAKE_REAL_MXNET") and again.__version__ == "1.9.1"
        assert again.nd is neogluon.nd and g is neogluon.gluon
        mxnet_alias.uninstall()
        assert not mxnet_alias.installed()
        assert mxnet_alias.install() is True   # mxnet is the alias now: nothing to step aside for
        import mxnet.gluon.nn as nn
        assert sys.modules["mxnet"] is again and nn is neogluon.gluon.nn
        print("ok")
    """)
    out = _run(["-W", "ignore", "-c", code], cwd=tmp_path, extra_path=str(fake_mxnet))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_alias_without_real_mxnet_in_process(tmp_path):
    code = textwrap.dedent("""
        from neogluon import mxnet_alias
        assert mxnet_alias.installed() and not mxnet_alias.real_mxnet_present()
        import mxnet, neogluon, mxnet.ndarray.sparse as sp
        assert sp is neogluon.ndarray.sparse and mxnet.ndarray.sparse is sp
        assert mxnet.__version__ == "1.9.1" and neogluon.__version__ == %r
        assert neogluon.__neogluon_version__ == neogluon.__version__
        assert neogluon.__mxnet_version__ == "1.9.1" == mxnet.__mxnet_version__
        print("ok")
    """) % NEOGLUON_VERSION
    out = _run(["-c", code], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_one_module_object_under_pytest(tmp_path):
    # pytest's assertion rewriter is a finder installed after the alias; without the alias
    # moving back in front it would execute a second copy of neogluon/test_utils.py (its name
    # matches test_*.py) as mxnet.test_utils.
    (tmp_path / "test_probe.py").write_text(textwrap.dedent("""
        import mxnet as mx
        from mxnet.test_utils import *
        import neogluon

        def test_same_objects():
            assert mx.test_utils is neogluon.test_utils
            mx.test_utils.set_default_context(mx.cpu(1))
            try:
                assert default_context() == mx.cpu(1)
            finally:
                mx.test_utils.set_default_context(mx.cpu(0))
    """))
    out = _run(["-m", "neogluon.run", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                "test_probe.py"], cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr


def test_spawned_children_import_neogluon_as_mxnet(tmp_path):
    # spawn and forkserver children start a fresh interpreter and re-import the main module
    # (DataLoader workers on macOS, and on Linux from Python 3.14); `import mxnet` there must
    # give the same `mxnet` module as in the parent, and objects pickled across the alias must
    # arrive as neogluon's classes.
    (tmp_path / "prog.py").write_text(textwrap.dedent("""
        import multiprocessing as mp
        import pickle
        import mxnet as mx
        from mxnet import gluon, nd

        class Squares(gluon.data.Dataset):
            def __len__(self):
                return 4
            def __getitem__(self, i):
                return nd.array([i * i])

        def probe(_):
            import sys
            import mxnet, neogluon
            return (mxnet.__version__, neogluon.__version__, mxnet.nd is neogluon.nd,
                    mxnet.MXNetError is neogluon.base.MXNetError, mxnet.__name__,
                    sys.modules["mxnet"] is mxnet, mxnet is not neogluon)

        def roundtrip(objs):
            x, param, opt = objs
            import neogluon
            assert isinstance(x, neogluon.nd.NDArray) and isinstance(opt, neogluon.optimizer.SGD)
            assert isinstance(param, neogluon.gluon.Parameter)
            return x * 2, param, opt

        if __name__ == "__main__":
            print("parent", mx.__version__)
            with mp.get_context("spawn").Pool(1) as pool:
                print("child", pool.map(probe, [0]))
                p = gluon.Parameter("w", shape=(2,))
                p.initialize(init=mx.init.One())
                opt = mx.optimizer.SGD(learning_rate=0.25, momentum=0.5)
                x, p2, opt2 = pool.apply(roundtrip, ((nd.array([1.5, 2.0]), p, opt),))
                print("pickled", x.asnumpy().tolist(), p2.data().asnumpy().tolist(),
                      opt2.learning_rate, opt2.momentum, type(x).__module__)
            mp.set_start_method("spawn", force=True)
            loader = gluon.data.DataLoader(Squares(), batch_size=4, num_workers=1)
            print("batch", [b.asnumpy().ravel().tolist() for b in loader])
    """))
    out = _run(["-m", "neogluon.run", "prog.py"], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    f = _fields(out.stdout)
    assert f["parent"] == "1.9.1"
    assert f["child"] == "[('1.9.1', %r, True, True, 'mxnet', True, True)]" % NEOGLUON_VERSION
    assert f["pickled"] == "[3.0, 4.0] [1.0, 1.0] 0.25 0.5 neogluon.ndarray.ndarray"
    assert f["batch"] == "[[0.0, 1.0, 4.0, 9.0]]"


def test_runner_gives_numpy1_names_back(tmp_path):
    """MXNet 1.x programs were written for NumPy 1: the runner restores np.fromstring on bytes
    and the removed aliases (np.float, np.asscalar...), unless NEOGLUON_NUMPY1_COMPAT=0."""
    script = tmp_path / "np1.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        a = np.fromstring(b"\\x01\\x02\\x03\\x04", dtype=np.uint8)
        a[0] = 9          # a new array, as NumPy 1's fromstring returned
        print(a.tolist(), np.float is float, np.int is int, np.asscalar(np.array([7])),
              np.isnan(np.NaN), np.product([2, 3]))
    """))
    out = _run(["-m", "neogluon.run", str(script)], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[9,", "2,", "3,", "4]", "True", "True", "7", "True", "6"]
    import numpy as np
    if not hasattr(np, "float"):   # a NumPy 2: without the compat layer the program fails
        off = _run(["-m", "neogluon.run", str(script)], cwd=tmp_path,
                   env={"NEOGLUON_NUMPY1_COMPAT": "0"})
        assert off.returncode != 0
