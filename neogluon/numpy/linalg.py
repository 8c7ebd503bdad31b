"""``mx.np.linalg``: NumPy's linear algebra on torch.linalg (differentiable)."""
import numpy as _onp
import torch

from ..ndarray.ndarray import _run
from .multiarray import _wrap
from ._op import _as_tensor, _ctx, _promote

__all__ = ["norm", "svd", "inv", "det", "slogdet", "solve", "eigh", "eig", "eigvals",
           "eigvalsh", "pinv", "qr", "cholesky", "tensorinv", "tensorsolve", "lstsq",
           "matrix_rank", "matrix_power", "multi_dot", "cond"]


def _float(t):
    return t if t.is_floating_point() else t.to(torch.float32)


def _w(fn, *arrays, **kw):
    ts = [_float(_as_tensor(a)) for a in arrays]
    r = _run(fn, *ts, **kw)
    ctx = _ctx(*arrays)
    if isinstance(r, tuple):
        return tuple(_wrap(x, ctx) for x in r)
    return _wrap(r, ctx)


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002
    """NumPy's norm (MXNet also takes ``ord='inf'`` / ``'-inf'`` as strings)."""
    if ord in ("inf", "-inf"):
        ord = float(ord)  # noqa: A001
    t = _float(_as_tensor(x))
    if isinstance(axis, (tuple, list)) and len(axis) == 1:
        axis = axis[0]
    if ord in ("fro", "nuc") and (isinstance(axis, int) or (axis is None and t.dim() == 1)):
        raise ValueError(f"norm: invalid norm order {ord!r} for vectors")
    if axis is None and ord is None:
        r = _run(lambda v: torch.linalg.vector_norm(v.reshape(-1)), t)
        if keepdims:
            r = r.reshape((1,) * t.dim())
        return _wrap(r, _ctx(x))
    if isinstance(axis, int) or (axis is None and t.dim() == 1):
        return _wrap(_run(torch.linalg.vector_norm, t, 2 if ord is None else ord,
                          dim=axis, keepdim=keepdims), _ctx(x))
    axis = tuple(axis) if axis is not None else (-2, -1)
    if ord is None:
        ord = "fro"  # noqa: A001
    return _wrap(_run(torch.linalg.matrix_norm, t, ord, dim=axis, keepdim=keepdims), _ctx(x))


def svd(a):
    u, s, vh = _w(lambda t: torch.linalg.svd(t, full_matrices=False), a)
    return u, s, vh


def inv(a):
    return _w(torch.linalg.inv, a)


def det(a):
    return _w(torch.linalg.det, a)


def slogdet(a):
    return _w(torch.linalg.slogdet, a)


def solve(a, b):
    ta, tb = _float(_as_tensor(a)), _float(_as_tensor(b))
    if tb.dim() == 1 or (tb.dim() == ta.dim() - 1 and tuple(tb.shape) == tuple(ta.shape[:-1])):
        r = _run(lambda x, y: torch.linalg.solve(x, y.unsqueeze(-1)).squeeze(-1), ta, tb)
    else:
        r = _run(torch.linalg.solve, ta, tb)
    return _wrap(r, _ctx(a, b))


def eigh(a, UPLO="L"):
    return _result(_onp.linalg.eigh, _w(torch.linalg.eigh, a, UPLO=UPLO))


def _result(np_fn, parts):
    """``parts`` in the result type the installed NumPy's ``np_fn`` gives (a plain tuple on
    NumPy 1.x, a named EigResult/EighResult/... on NumPy 2)."""
    probe = np_fn(_onp.eye(1))
    cls = type(probe)
    return tuple(parts) if cls is tuple else cls(*parts)


def eigvalsh(a, UPLO="L"):
    return _w(torch.linalg.eigvalsh, a, UPLO=UPLO)


def eig(a):
    w, v = torch.linalg.eig(_float(_as_tensor(a)).detach())
    if bool((w.imag != 0).any()):
        raise ValueError("eig: complex eigenvalues are not supported by mx.np arrays")
    return _result(_onp.linalg.eig, (_wrap(w.real, _ctx(a)), _wrap(v.real, _ctx(a))))


def eigvals(a):
    return eig(a)[0]


def pinv(a, rcond=1e-15, hermitian=False):
    t = _float(_as_tensor(a))
    rc = _as_tensor(rcond).to(t.dtype).to(t.device) if not isinstance(rcond, float) else rcond
    if isinstance(rc, torch.Tensor):
        rc = rc.unsqueeze(-1)   # one per matrix; broadcast over the singular values
        r = _run(lambda v: _pinv_rcond(v, rc, hermitian), t)
    else:
        r = _run(lambda v: torch.linalg.pinv(v, rtol=rc, hermitian=hermitian), t)
    return _wrap(r, _ctx(a))


def _pinv_rcond(v, rc, hermitian):
    u, s, vh = torch.linalg.svd(v, full_matrices=False)
    cutoff = rc * s.amax(dim=-1, keepdim=True)
    sinv = torch.where(s > cutoff, 1.0 / s, torch.zeros_like(s))
    return (vh.transpose(-2, -1) * sinv.unsqueeze(-2)) @ u.transpose(-2, -1)


def qr(a, mode="reduced"):
    return _w(lambda t: torch.linalg.qr(t, mode=mode), a)


def cholesky(a, upper=False):
    return _w(lambda t: torch.linalg.cholesky(t, upper=upper), a)


def matrix_rank(M, tol=None, hermitian=False):
    t = _float(_as_tensor(M)).detach()
    return _wrap(torch.linalg.matrix_rank(t, atol=tol, hermitian=hermitian), _ctx(M))


def matrix_power(a, n):
    return _w(lambda t: torch.linalg.matrix_power(t, n), a)


def multi_dot(arrays, out=None):
    ts = [_float(_as_tensor(a)) for a in arrays]
    r = _wrap(_run(torch.linalg.multi_dot, ts), _ctx(*arrays))
    if out is not None:
        out[...] = r
        return out
    return r


def lstsq(a, b, rcond="warn"):
    ta, tb = _float(_as_tensor(a)).detach(), _float(_as_tensor(b)).detach()
    x, res, rank, sv = _onp.linalg.lstsq(ta.cpu().numpy(), tb.cpu().numpy(),
                                         rcond=None if rcond == "warn" else rcond)
    ctx = _ctx(a, b)
    from .multiarray import array
    return (array(x, dtype=x.dtype, ctx=ctx), array(res, dtype=x.dtype, ctx=ctx), int(rank),
            array(sv, dtype=x.dtype, ctx=ctx))


def tensorinv(a, ind=2):
    t = _float(_as_tensor(a))
    return _wrap(_run(torch.linalg.tensorinv, t, ind=ind), _ctx(a))


def tensorsolve(a, b, axes=None):
    ta, tb = _float(_as_tensor(a)), _float(_as_tensor(b))
    dt = _promote(ta.dtype, tb.dtype)
    ta, tb = ta.to(dt), tb.to(dt)
    if axes is not None:
        axes = [x % ta.dim() for x in axes]
        ta = ta.permute([d for d in range(ta.dim()) if d not in axes] + axes)
    xshape = tuple(ta.shape[-(ta.dim() - tb.dim()):])   # (NumPy's slice, -0 included)
    n = 1
    for d in xshape:
        n *= d
    r = _run(lambda m, v: torch.linalg.solve(m.reshape(-1, n), v.reshape(-1)).reshape(xshape),
             ta, tb)
    return _wrap(r, _ctx(a, b))


def cond(x, p=None):
    return _w(lambda t: torch.linalg.cond(t, p), x)
