"""MXNet's older ``nd.*`` operators: the optimizer update operators (``sgd_update``,
``adam_update``, ...), ``fill_element_0index`` and ``onehot_encode``.

The update operators follow MXNet 1.9.1's formulas in the weight's dtype: the weight is
written to ``out`` (a new array when ``out`` is None), the optimizer states passed in are
updated in place, as MXNet's operators mutate them.
"""
from __future__ import annotations

import torch

from ..base import MXNetError
from .ndarray import NDArray, _new, _assign_out

__all__ = ["fill_element_0index", "onehot_encode", "sgd_update", "sgd_mom_update",
           "nag_mom_update", "signsgd_update", "signum_update", "adam_update",
           "rmsprop_update", "rmspropalex_update", "ftml_update", "ftrl_update",
           "mp_sgd_update", "mp_sgd_mom_update", "mp_nag_mom_update"]


def _tensor(x, op, what):
    if not isinstance(x, NDArray):
        raise TypeError(f"{op}: {what} must be an NDArray, got {type(x).__name__}")
    return x.tostype("default")._t.detach()


def _check_shapes(op, **arrays):
    shapes = {k: tuple(v.shape) for k, v in arrays.items()}
    first = next(iter(shapes.values()))
    if any(s != first for s in shapes.values()):
        raise MXNetError(f"{op}: the inputs must have the same shape, got {shapes}")


@torch.no_grad()
def _clip(g, clip):
    if clip is not None and clip > 0:
        return g.clamp(-clip, clip)
    return g


def _write_state(arr, value):
    """The optimizer state ``arr`` (an operator input MXNet mutates) takes ``value``."""
    with torch.no_grad():
        arr._t.copy_(value)


def _result(weight, new_w, out):
    return _assign_out(_new(new_w, weight._ctx), out)


def _sparse_twin(name, *arrays):
    """The sparse module's operator ``name`` when an input is sparse (lazy updates and
    row_sparse weights live there), else None."""
    if any(getattr(a, "stype", "default") != "default" for a in arrays):
        from . import sparse
        return getattr(sparse, name)
    return None


@torch.no_grad()
def sgd_update(weight, grad, lr, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0,
               lazy_update=True, out=None, name=None):
    """SGD step: ``w = (1 - lr*wd)*w - lr*clip(rescale_grad*grad)``.

    Parameters
    ----------
    weight, grad : NDArray
    lr : float
        Learning rate.
    wd : float
        Weight decay.
    rescale_grad : float
        Gradient scale.
    clip_gradient : float
        Clip the scaled gradient to ``[-clip_gradient, clip_gradient]`` (off when <= 0).
    lazy_update : bool
        Only used with row_sparse gradients.
    out : NDArray, optional
        Where the new weight goes (usually ``weight`` itself).
    """
    twin = _sparse_twin("sgd_update", weight, grad)
    if twin is not None:
        return twin(weight, grad, lr, **{k: v for k, v in locals().items()
                                if k not in ("weight", "grad", "lr", "twin")})
    w, g = _tensor(weight, "sgd_update", "weight"), _tensor(grad, "sgd_update", "grad")
    _check_shapes("sgd_update", weight=w, grad=g)
    g = _clip(rescale_grad * g, clip_gradient)
    return _result(weight, (1 - lr * wd) * w - lr * g, out)


@torch.no_grad()
def sgd_mom_update(weight, grad, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0,
                   clip_gradient=-1.0, lazy_update=True, out=None, name=None):
    """SGD with momentum: ``mom = momentum*mom - lr*wd*w - lr*clip(rescale_grad*grad)``,
    ``w = w + mom``; ``mom`` is updated in place.

    Parameters
    ----------
    weight, grad, mom : NDArray
    lr, momentum, wd, rescale_grad, clip_gradient : float
        As in :func:`sgd_update`; ``momentum`` is the decay of ``mom``.
    lazy_update : bool
    out : NDArray, optional
    """
    twin = _sparse_twin("sgd_mom_update", weight, grad, mom)
    if twin is not None:
        return twin(weight, grad, mom, lr, **{k: v for k, v in locals().items()
                                if k not in ("weight", "grad", "mom", "lr", "twin")})
    op = "sgd_mom_update"
    w, g, m = (_tensor(weight, op, "weight"), _tensor(grad, op, "grad"),
               _tensor(mom, op, "mom"))
    _check_shapes(op, weight=w, grad=g, mom=m)
    g = _clip(rescale_grad * g, clip_gradient)
    m_new = momentum * m - lr * wd * w - lr * g
    _write_state(mom, m_new)
    return _result(weight, w + m_new, out)


@torch.no_grad()
def nag_mom_update(weight, grad, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0,
                   clip_gradient=-1.0, out=None, name=None):
    """Nesterov momentum: ``g = clip(rescale_grad*grad) + wd*w``,
    ``mom = momentum*mom - lr*g``, ``w = w + momentum*mom - lr*g``; ``mom`` is updated in
    place. (With ``out=weight`` MXNet 1.9.1 computes ``mom``'s weight-decay term from the
    already updated weight; here it uses the weight passed in, as with any other ``out``.)

    Parameters
    ----------
    weight, grad, mom : NDArray
    lr, momentum, wd, rescale_grad, clip_gradient : float
    out : NDArray, optional
    """
    op = "nag_mom_update"
    w, g, m = (_tensor(weight, op, "weight"), _tensor(grad, op, "grad"),
               _tensor(mom, op, "mom"))
    _check_shapes(op, weight=w, grad=g, mom=m)
    g = _clip(rescale_grad * g, clip_gradient) + wd * w
    m_new = momentum * m - lr * g
    _write_state(mom, m_new)
    return _result(weight, w + momentum * m_new - lr * g, out)


@torch.no_grad()
def signsgd_update(weight, grad, lr, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0,
                   out=None, name=None):
    """signSGD: ``w = (1 - lr*wd)*w - lr*sign(grad)``.

    Parameters
    ----------
    weight, grad : NDArray
    lr, wd, rescale_grad, clip_gradient : float
    out : NDArray, optional
    """
    w, g = _tensor(weight, "signsgd_update", "weight"), _tensor(grad, "signsgd_update", "grad")
    _check_shapes("signsgd_update", weight=w, grad=g)
    return _result(weight, (1 - lr * wd) * w - lr * torch.sign(g), out)


@torch.no_grad()
def signum_update(weight, grad, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0,
                  clip_gradient=-1.0, wd_lh=0.0, out=None, name=None):
    """Signum: ``mom = momentum*mom - (1-momentum)*(wd*w + clip(rescale_grad*grad))``,
    ``w = (1 - lr*wd_lh)*w + lr*sign(mom)``; ``mom`` is updated in place.

    Parameters
    ----------
    weight, grad, mom : NDArray
    lr, momentum, wd, rescale_grad, clip_gradient : float
    wd_lh : float
        The decoupled weight decay of Loshchilov and Hutter.
    out : NDArray, optional
    """
    op = "signum_update"
    w, g, m = (_tensor(weight, op, "weight"), _tensor(grad, op, "grad"),
               _tensor(mom, op, "mom"))
    _check_shapes(op, weight=w, grad=g, mom=m)
    g = _clip(rescale_grad * g, clip_gradient)
    m_new = momentum * m - (1 - momentum) * wd * w - (1 - momentum) * g
    _write_state(mom, m_new)
    return _result(weight, (1 - lr * wd_lh) * w + lr * torch.sign(m_new), out)


@torch.no_grad()
def adam_update(weight, grad, mean, var, lr, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.0,
                rescale_grad=1.0, clip_gradient=-1.0, lazy_update=True, out=None, name=None):
    """Adam step without bias correction (the optimizer folds it into ``lr``):
    ``g = clip(rescale_grad*grad + wd*w)``, ``mean = beta1*mean + (1-beta1)*g``,
    ``var = beta2*var + (1-beta2)*g**2``, ``w = w - lr*mean/(sqrt(var) + epsilon)``.

    Parameters
    ----------
    weight, grad, mean, var : NDArray
        ``mean`` and ``var`` are updated in place.
    lr, beta1, beta2, epsilon, wd, rescale_grad, clip_gradient : float
    lazy_update : bool
    out : NDArray, optional
    """
    twin = _sparse_twin("adam_update", weight, grad, mean, var)
    if twin is not None:
        return twin(weight, grad, mean, var, lr, **{k: v for k, v in locals().items()
                                if k not in ("weight", "grad", "mean", "var", "lr", "twin")})
    op = "adam_update"
    w, g = _tensor(weight, op, "weight"), _tensor(grad, op, "grad")
    m, v = _tensor(mean, op, "mean"), _tensor(var, op, "var")
    _check_shapes(op, weight=w, grad=g, mean=m, var=v)
    g = _clip(rescale_grad * g + wd * w, clip_gradient)
    m_new = beta1 * m + (1 - beta1) * g
    v_new = beta2 * v + (1 - beta2) * g * g
    _write_state(mean, m_new)
    _write_state(var, v_new)
    return _result(weight, w - lr * m_new / (torch.sqrt(v_new) + epsilon), out)


@torch.no_grad()
def rmsprop_update(weight, grad, n, lr, gamma1=0.95, epsilon=1e-8, wd=0.0, rescale_grad=1.0,
                   clip_gradient=-1.0, clip_weights=-1.0, out=None, name=None):
    """RMSProp (Tieleman & Hinton): ``g = clip(rescale_grad*grad + wd*w)``,
    ``n = (1-gamma1)*g**2 + gamma1*n``, ``w = w - lr*g/(sqrt(n) + epsilon)``, then the weight
    is clipped to ``clip_weights`` when that is positive.

    Parameters
    ----------
    weight, grad, n : NDArray
        ``n`` is updated in place.
    lr, gamma1, epsilon, wd, rescale_grad, clip_gradient, clip_weights : float
    out : NDArray, optional
    """
    op = "rmsprop_update"
    w, g, s = _tensor(weight, op, "weight"), _tensor(grad, op, "grad"), _tensor(n, op, "n")
    _check_shapes(op, weight=w, grad=g, n=s)
    g = _clip(rescale_grad * g + wd * w, clip_gradient)
    s_new = (1 - gamma1) * g * g + gamma1 * s
    _write_state(n, s_new)
    w_new = _clip(w - lr * g / (torch.sqrt(s_new) + epsilon), clip_weights)
    return _result(weight, w_new, out)


@torch.no_grad()
def rmspropalex_update(weight, grad, n, g, delta, lr, gamma1=0.95, gamma2=0.9, epsilon=1e-8,
                       wd=0.0, rescale_grad=1.0, clip_gradient=-1.0, clip_weights=-1.0,
                       out=None, name=None):
    """RMSProp with momentum (Graves 2013): ``gr = clip(rescale_grad*grad + wd*w)``,
    ``n = (1-gamma1)*gr**2 + gamma1*n``, ``g = (1-gamma1)*gr + gamma1*g``,
    ``delta = gamma2*delta - lr*gr/sqrt(n - g**2 + epsilon)``, ``w = w + delta``.

    Parameters
    ----------
    weight, grad, n, g, delta : NDArray
        ``n``, ``g`` and ``delta`` are updated in place.
    lr, gamma1, gamma2, epsilon, wd, rescale_grad, clip_gradient, clip_weights : float
    out : NDArray, optional
    """
    op = "rmspropalex_update"
    w, gr = _tensor(weight, op, "weight"), _tensor(grad, op, "grad")
    sn, sg, sd = _tensor(n, op, "n"), _tensor(g, op, "g"), _tensor(delta, op, "delta")
    _check_shapes(op, weight=w, grad=gr, n=sn, g=sg, delta=sd)
    gr = _clip(rescale_grad * gr + wd * w, clip_gradient)
    n_new = (1 - gamma1) * gr * gr + gamma1 * sn
    g_new = (1 - gamma1) * gr + gamma1 * sg
    d_new = gamma2 * sd - lr * gr / torch.sqrt(n_new - g_new * g_new + epsilon)
    _write_state(n, n_new)
    _write_state(g, g_new)
    _write_state(delta, d_new)
    return _result(weight, _clip(w + d_new, clip_weights), out)


@torch.no_grad()
def ftml_update(weight, grad, d, v, z, lr, t, beta1=0.6, beta2=0.999, epsilon=1e-8, wd=0.0,
                rescale_grad=1.0, clip_grad=-1.0, out=None, name=None):
    """FTML (Zheng & Kwok 2017): ``g = clip(rescale_grad*grad + wd*w)``,
    ``v = beta2*v + (1-beta2)*g**2``, ``d_t = (1-beta1**t)/lr*(sqrt(v/(1-beta2**t)) + eps)``,
    ``z = beta1*z + (1-beta1)*g - (d_t - beta1*d)*w``, ``d = d_t``, ``w = -z/d_t``.

    Parameters
    ----------
    weight, grad, d, v, z : NDArray
        ``d``, ``v`` and ``z`` are updated in place.
    lr : float
    t : int
        The update count (from 1).
    beta1, beta2, epsilon, wd, rescale_grad, clip_grad : float
    out : NDArray, optional
    """
    op = "ftml_update"
    w, g = _tensor(weight, op, "weight"), _tensor(grad, op, "grad")
    sd, sv, sz = _tensor(d, op, "d"), _tensor(v, op, "v"), _tensor(z, op, "z")
    _check_shapes(op, weight=w, grad=g, d=sd, v=sv, z=sz)
    g = _clip(rescale_grad * g + wd * w, clip_grad)
    v_new = beta2 * sv + (1 - beta2) * g * g
    d_t = (1 - beta1 ** t) / lr * (torch.sqrt(v_new / (1 - beta2 ** t)) + epsilon)
    z_new = beta1 * sz + (1 - beta1) * g - (d_t - beta1 * sd) * w
    _write_state(v, v_new)
    _write_state(z, z_new)
    _write_state(d, d_t)
    return _result(weight, -z_new / d_t, out)


@torch.no_grad()
def ftrl_update(weight, grad, z, n, lr, lamda1=0.01, beta=1.0, wd=0.0, rescale_grad=1.0,
                clip_gradient=-1.0, out=None, name=None):
    """FTRL-Proximal (McMahan et al. 2013): ``g = clip(rescale_grad*grad)``,
    ``z += g - (sqrt(n + g**2) - sqrt(n))*w/lr``, ``n += g**2``,
    ``w = (sign(z)*lamda1 - z) / ((beta + sqrt(n))/lr + wd)`` where ``|z| > lamda1``, else 0.

    Parameters
    ----------
    weight, grad, z, n : NDArray
        ``z`` and ``n`` are updated in place.
    lr, lamda1, beta, wd, rescale_grad, clip_gradient : float
    out : NDArray, optional
    """
    twin = _sparse_twin("ftrl_update", weight, grad, z, n)
    if twin is not None:
        return twin(weight, grad, z, n, lr, **{k: v for k, v in locals().items()
                                if k not in ("weight", "grad", "z", "n", "lr", "twin")})
    op = "ftrl_update"
    w, g = _tensor(weight, op, "weight"), _tensor(grad, op, "grad")
    sz, sn = _tensor(z, op, "z"), _tensor(n, op, "n")
    _check_shapes(op, weight=w, grad=g, z=sz, n=sn)
    g = _clip(rescale_grad * g, clip_gradient)
    z_new = sz + g - (torch.sqrt(sn + g * g) - torch.sqrt(sn)) * w / lr
    n_new = sn + g * g
    w_new = (torch.sign(z_new) * lamda1 - z_new) / ((beta + torch.sqrt(n_new)) / lr + wd)
    w_new = w_new * (z_new.abs() > lamda1).to(w_new.dtype)
    _write_state(z, z_new)
    _write_state(n, n_new)
    return _result(weight, w_new, out)


def _mp(update, weight, grad, weight32, states, kwargs):
    """Run ``update`` on the float32 master copy and write it back to the low-precision
    weight, as MXNet's mp_* operators do."""
    out = kwargs.pop("out", None)
    g32 = NDArray(_tensor(grad, update.__name__, "grad").float(), ctx=grad._ctx)
    new32 = update(weight32, g32, *states, **kwargs)
    _write_state(weight32, new32._t)
    return _assign_out(_new(new32._t.to(weight._t.dtype), weight._ctx), out)


def mp_sgd_update(weight, grad, weight32, lr, **kwargs):
    """:func:`sgd_update` on the float32 master copy ``weight32`` (updated in place) of a
    float16 ``weight``."""
    return _mp(sgd_update, weight, grad, weight32, (), dict(lr=lr, **kwargs))


def mp_sgd_mom_update(weight, grad, mom, weight32, lr, **kwargs):
    """:func:`sgd_mom_update` on the float32 master copy ``weight32`` (updated in place)."""
    return _mp(sgd_mom_update, weight, grad, weight32, (mom,), dict(lr=lr, **kwargs))


def mp_nag_mom_update(weight, grad, mom, weight32, lr, **kwargs):
    """:func:`nag_mom_update` on the float32 master copy ``weight32`` (updated in place)."""
    return _mp(nag_mom_update, weight, grad, weight32, (mom,), dict(lr=lr, **kwargs))


def fill_element_0index(lhs, mhs, rhs, out=None, name=None):
    """A copy of 2-D ``lhs`` with ``lhs[i, rhs[i]] = mhs[i]`` for every row ``i``.

    Parameters
    ----------
    lhs : NDArray
        2-D array.
    mhs : NDArray
        One value per row.
    rhs : NDArray
        One column index per row.
    out : NDArray, optional
    """
    t = _tensor(lhs, "fill_element_0index", "lhs")
    vals = _tensor(mhs, "fill_element_0index", "mhs").to(t.dtype)
    idx = _tensor(rhs, "fill_element_0index", "rhs").long()
    if t.dim() != 2 or vals.shape != (t.shape[0],) or idx.shape != (t.shape[0],):
        raise MXNetError(f"fill_element_0index: lhs must be 2-D and mhs, rhs 1-D with one "
                         f"entry per row; got shapes {lhs.shape}, {mhs.shape}, {rhs.shape}")
    r = t.clone()
    r[torch.arange(t.shape[0], device=t.device), idx] = vals
    return _assign_out(_new(r, lhs._ctx), out)


def onehot_encode(indices, out):
    """Write the one-hot encoding of ``indices`` into 2-D ``out`` (row ``i`` gets a 1 at column
    ``indices[i]``, zeros elsewhere) and return ``out``.

    Parameters
    ----------
    indices : NDArray
        One class index per row of ``out``.
    out : NDArray
        2-D array that receives the encoding.
    """
    idx = _tensor(indices, "onehot_encode", "indices").long()
    if out.ndim != 2 or idx.shape != (out.shape[0],):
        raise MXNetError(f"onehot_encode: out must be 2-D with one row per index; got "
                         f"indices {indices.shape} and out {out.shape}")
    r = torch.zeros(out.shape, dtype=out._t.dtype, device=out._t.device)
    r[torch.arange(out.shape[0], device=r.device), idx] = 1
    out[:] = _new(r, out._ctx)
    return out

