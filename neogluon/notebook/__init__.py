"""``mx.notebook``: MXNet 1.9.1's training callbacks for Jupyter notebooks (:mod:`.callback`).

``bokeh`` is the bokeh package when it is installed; without it, as in MXNet, the name holds a
placeholder class (``Bokeh_Failed_To_Import``) and only the bokeh charts refuse to start.
"""
try:
    import bokeh  # noqa: F401
except ImportError:
    class Bokeh_Failed_To_Import:  # noqa: N801  (MXNet's name)
        """Stands for the bokeh package, which is not installed."""

    bokeh = Bokeh_Failed_To_Import

from . import callback  # noqa: E402,F401
