"""Run an unmodified ``import mxnet`` program on neogluon.

    python -m neogluon.run script.py [args ...]
    python -m neogluon.run -m pytest -q test_gluon_trainer.py
    python -m neogluon.run --shadow script.py      # even where a real MXNet is installed

``mxnet`` is a module that shares the neogluon package's namespace and reports MXNet's
``__version__`` ("1.9.1"), and every ``mxnet.*`` module below it is the same module object as
its ``neogluon.*`` twin (see :mod:`neogluon.mxnet_alias`). The program sees the ``sys.argv``
it would see when run with ``python script.py`` / ``python -m module``. The NumPy 1 names
MXNet-era programs use and NumPy 2 removed are put back first (``neogluon/_numpy1.py``;
``NEOGLUON_NUMPY1_COMPAT=0`` turns that off).
"""
from __future__ import annotations

import os
import runpy
import sys

_USAGE = ("usage: python -m neogluon.run [--shadow] script.py [args ...]\n"
          "       python -m neogluon.run [--shadow] -m module [args ...]")


def _set_first_path_entry(entry) -> None:
    # ``python -m neogluon.run`` put the current directory first on sys.path; the program gets
    # the entry its own ``python ...`` command line would have put there instead.
    if sys.path and sys.path[0] in ("", os.getcwd()):
        sys.path[0] = entry
    else:
        sys.path.insert(0, entry)


def _add_shim_path(shim) -> None:
    # spawn/forkserver children get the parent's sys.path, so the shim goes there too, right
    # after the program's own entry and ahead of site-packages (with --shadow it must win over
    # an installed MXNet there as well). In this process the alias finder answers before any
    # path entry is consulted, so the entry changes nothing here.
    if shim not in sys.path:
        sys.path.insert(1, shim)


def main(argv=None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    shadow = False
    while args and args[0] in ("--shadow", "-h", "--help"):
        if args[0] == "--shadow":
            shadow = True
            args.pop(0)
        else:
            print(_USAGE)
            raise SystemExit(0)
    if not args:
        print(_USAGE, file=sys.stderr)
        raise SystemExit(2)
    if shadow:
        os.environ["NEOGLUON_SHADOW_MXNET"] = "1"

    from . import mxnet_alias
    if not mxnet_alias.install(shadow=shadow):
        print("neogluon.run: a real MXNet is installed and would be imported; "
              "pass --shadow to run on neogluon anyway", file=sys.stderr)
        raise SystemExit(2)

    if os.environ.get("NEOGLUON_NUMPY1_COMPAT", "1").strip().lower() not in ("0", "off",
                                                                             "false", "no"):
        # MXNet 1.x programs were written for NumPy 1 (np.float, np.fromstring on bytes...)
        from . import _numpy1
        _numpy1.install()

    # Child interpreters (multiprocessing's spawn/forkserver) re-import the main module and so
    # ``import mxnet`` again; the shim package on PYTHONPATH gives them the alias as well.
    shim = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_alias_path")
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if shim not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([shim] + paths)

    if args[0] == "-m":
        if len(args) < 2:
            print("neogluon.run: -m needs a module name\n" + _USAGE, file=sys.stderr)
            raise SystemExit(2)
        module = args[1]
        sys.argv = [module] + args[2:]
        # As ``python -m`` does, the current directory comes first on the path.
        _set_first_path_entry(os.getcwd())
        _add_shim_path(shim)
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    else:
        script = args[0]
        if not os.path.exists(script):
            print(f"neogluon.run: can't open file {script!r}: no such file", file=sys.stderr)
            raise SystemExit(2)
        sys.argv = args
        # As ``python script.py`` does: the script's directory (symlinks resolved), and not the
        # current directory, comes first on the path.
        _set_first_path_entry(os.path.dirname(os.path.realpath(script)))
        _add_shim_path(shim)
        runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
