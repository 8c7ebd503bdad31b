"""``mxnet.numpy_extension._op`` (and ``mxnet.ndarray.numpy_extension._op``): MXNet's module of
the npx operators. Here they are mx.npx's own functions, looked up on the package."""
import importlib as _importlib

__all__ = ['activation', 'arange_like', 'batch_dot', 'batch_flatten', 'batch_norm',
           'cast', 'constraint_check', 'convolution', 'deconvolution', 'dropout',
           'embedding', 'erf', 'erfinv', 'fully_connected', 'gamma', 'gammaln',
           'gather_nd', 'layer_norm', 'leaky_relu', 'log_softmax', 'multibox_detection',
           'multibox_prior', 'multibox_target', 'nonzero', 'one_hot', 'pick', 'pooling',
           'relu', 'reshape', 'reshape_like', 'rnn', 'roi_pooling', 'sequence_mask',
           'shape_array', 'sigmoid', 'slice', 'smooth_l1', 'softmax', 'topk']


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    npx = _importlib.import_module(__name__.rpartition(".")[0])
    try:
        return getattr(npx, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
