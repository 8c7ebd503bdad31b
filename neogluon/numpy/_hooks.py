"""The hook through which a capturing HybridBlock sees mx.np / mx.npx calls.

Gluon (the layer above) sets ``HOOK[0]`` to a function ``(path, fn, args, kwargs) -> result``
that records the call when a forward pass is being captured and otherwise just calls ``fn``.
Until then the functions run directly.
"""
import functools

from ..base import MXNetError

HOOK = [None]


def hooked(fn, path):
    """``fn`` (an mx.np / mx.npx function) routed through :data:`HOOK`; ``path`` names it
    below the neogluon package (``numpy.dot``, ``numpy_extension.relu``...)."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        h = HOOK[0]
        try:
            if h is None:
                return fn(*args, **kwargs)
            return h(path, fn, args, kwargs)
        except RuntimeError as err:
            if isinstance(err, (MXNetError, NotImplementedError, RecursionError)):
                raise
            # a torch kernel's complaint (shapes that do not fit, an unsupported dtype) as
            # MXNetError naming the function, as MXNet's operators report it
            msg = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise MXNetError(f"mx.{path.replace('numpy_extension', 'npx').replace('numpy', 'np')}"
                             f": {msg}") from None
    call.__wrapped_np__ = fn
    return call


def hook_module(namespace, names, prefix):
    """Replace each function ``names`` in ``namespace`` (a module's globals) by its hooked
    form."""
    for n in names:
        fn = namespace.get(n)
        if callable(fn) and not isinstance(fn, type) and not hasattr(fn, "__wrapped_np__"):
            namespace[n] = hooked(fn, f"{prefix}.{n}")
