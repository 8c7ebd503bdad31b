"""``import mxnet`` for processes that ``python -m neogluon.run`` starts indirectly.

``neogluon.run`` puts this directory on PYTHONPATH, so that child processes which start a fresh
interpreter (multiprocessing's spawn and forkserver methods: DataLoader workers on macOS, and
on Linux from Python 3.14) and re-import the program's main module also get neogluon for
``import mxnet``. In the process that ``neogluon.run`` itself runs, the alias finder answers
first and this package is never imported. It is on the path only when ``neogluon.run`` was
asked to run the program on neogluon.
"""
import sys

from neogluon import mxnet_alias

# The finder makes every ``mxnet.X`` the module ``neogluon.X``. The import that is executing
# this file then returns ``sys.modules['mxnet']``: the alias's ``mxnet`` module (neogluon's
# namespace, MXNet's ``__version__``), the same one the parent process has.
mxnet_alias.install(shadow=True)
sys.modules[__name__] = mxnet_alias._mxnet_module()
