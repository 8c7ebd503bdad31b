"""``mx.nd.linalg``: MXNet 1.9.1's linear-algebra operators (``gemm``, ``potrf``, ``trsm``, ...).

Every operator works on the last two axes of its inputs and batches over the leading ones
(``gemm``/``gemm2`` take the row axis as ``axis``). The results and the gradients are MXNet's:
triangular inputs read only their triangle (and get gradients only there), ``syevd`` returns
eigenvectors as rows with MXNet's sign rule, ``gelqf`` returns ``(Q, L)`` and ``slogdet``
``(sign, logabsdet)``. Gradients come from torch's autograd over the same formulas. MXNet also
exposes each operator as ``nd.linalg_<name>``; so does neogluon.
"""
from __future__ import annotations

import torch

from ..base import MXNetError
from .ndarray import NDArray, _new, _run, _assign_out

__all__ = ["gemm", "gemm2", "potrf", "potri", "trmm", "trsm", "sumlogdiag", "syrk", "gelqf",
           "syevd", "inverse", "det", "slogdet", "extractdiag", "makediag", "extracttrian",
           "maketrian"]


def _in(x, op, what="A", min_ndim=2):
    if not isinstance(x, NDArray):
        raise MXNetError(f"linalg.{op}: {what} must be an NDArray, got {type(x).__name__}")
    if x.ndim < min_ndim:
        raise MXNetError(f"linalg.{op}: {what} must have at least {min_ndim} dimensions, got "
                         f"shape {x.shape}")
    return x._t


def _square(t, op, what="A"):
    if t.shape[-1] != t.shape[-2]:
        raise MXNetError(f"linalg.{op}: {what} must be square matrices, got shape "
                         f"{tuple(t.shape)}")


def _call(op, fn, *args):
    """Run ``fn`` under neogluon's grad-mode rule; a torch failure becomes MXNetError naming
    the operator."""
    try:
        return _run(fn, *args)
    except MXNetError:
        raise
    except torch.linalg.LinAlgError as err:
        raise MXNetError(f"linalg.{op}: {str(err).splitlines()[0]}") from None
    except RuntimeError as err:
        raise MXNetError(f"linalg.{op}: {str(err).splitlines()[0]}") from None


def _out(r, like, out):
    return _assign_out(_new(r, like._ctx), out)


def _vec(r):
    """A single matrix's scalar result as shape (1,), as MXNet 1.x returns it."""
    return r.reshape(1) if r.dim() == 0 else r


def _tri(t, lower):
    return torch.tril(t) if lower else torch.triu(t)


def _t2(t):
    return t.transpose(-1, -2)


# ------------------------------------------------------------------ products
def _rows_last(ts, axis, op):
    """Move the row axis ``axis`` of each input to position -2 (MXNet's ``axis`` option)."""
    nd_ = ts[0].dim()
    ax = axis + nd_ if axis < 0 else axis
    if not 0 <= ax < nd_ - 1:
        raise MXNetError(f"linalg.{op}: axis {axis} must be a row axis before the last axis of "
                         f"a {nd_}-d input")
    if ax == nd_ - 2:
        return ts, None
    return [t.movedim(ax, -2) for t in ts], ax


def _product(op, a, b, transpose_a, transpose_b, alpha):
    if a.dim() != b.dim():
        raise MXNetError(f"linalg.{op}: A and B must have the same number of dimensions, got "
                         f"shapes {tuple(a.shape)} and {tuple(b.shape)}")
    opa = _t2(a) if transpose_a else a
    opb = _t2(b) if transpose_b else b
    if opa.shape[-1] != opb.shape[-2] or opa.shape[:-2] != opb.shape[:-2]:
        raise MXNetError(f"linalg.{op}: incompatible matrix dimensions for multiplication: "
                         f"A {tuple(a.shape)} (transpose_a={transpose_a}), B {tuple(b.shape)} "
                         f"(transpose_b={transpose_b})")
    r = torch.matmul(opa, opb)
    return r if alpha == 1.0 else r * alpha


def gemm(A, B, C, transpose_a=False, transpose_b=False, alpha=1.0, beta=1.0, axis=-2,
         out=None, name=None):
    """``alpha * op(A) @ op(B) + beta * C``, where ``op`` transposes when asked; ``axis`` is
    the axis of the matrix rows (the columns are the last axis)."""
    ts = [_in(A, "gemm"), _in(B, "gemm", "B"), _in(C, "gemm", "C")]
    ts, moved = _rows_last(ts, axis, "gemm")
    a, b, c = ts

    def f():
        r = _product("gemm", a, b, transpose_a, transpose_b, float(alpha))
        if tuple(r.shape) != tuple(c.shape):
            raise MXNetError(f"linalg.gemm: C has shape {tuple(C.shape)}, the product has "
                             f"shape {tuple(r.shape)}")
        r = r + c * float(beta)
        return r if moved is None else r.movedim(-2, moved)
    return _out(_call("gemm", f), A, out)


def gemm2(A, B, transpose_a=False, transpose_b=False, alpha=1.0, axis=-2, out=None, name=None):
    """``alpha * op(A) @ op(B)``; ``axis`` as in :func:`gemm`."""
    ts, moved = _rows_last([_in(A, "gemm2"), _in(B, "gemm2", "B")], axis, "gemm2")
    a, b = ts

    def f():
        r = _product("gemm2", a, b, transpose_a, transpose_b, float(alpha))
        return r if moved is None else r.movedim(-2, moved)
    return _out(_call("gemm2", f), A, out)


def syrk(A, transpose=False, alpha=1.0, out=None, name=None):
    """``alpha * A @ A.T`` (``alpha * A.T @ A`` with ``transpose=True``)."""
    a = _in(A, "syrk")
    return _out(_call("syrk", lambda: (torch.matmul(_t2(a), a) if transpose
                                       else torch.matmul(a, _t2(a))) * float(alpha)), A, out)


def trmm(A, B, transpose=False, rightside=False, lower=True, alpha=1.0, out=None, name=None):
    """``alpha * op(T) @ B`` (or ``alpha * B @ op(T)`` with ``rightside``), ``T`` the lower
    (or upper) triangle of ``A``; the other triangle of ``A`` is not read."""
    a, b = _in(A, "trmm"), _in(B, "trmm", "B")
    _square(a, "trmm")

    def f():
        t = _tri(a, lower)
        if transpose:
            t = _t2(t)
        n = a.shape[-1]
        if (b.shape[-1] if rightside else b.shape[-2]) != n:
            raise MXNetError(f"linalg.trmm: B {tuple(B.shape)} does not fit the {n}x{n} "
                             f"triangular matrix (rightside={rightside})")
        r = torch.matmul(b, t) if rightside else torch.matmul(t, b)
        return r if alpha == 1.0 else r * float(alpha)
    return _out(_call("trmm", f), A, out)


def trsm(A, B, transpose=False, rightside=False, lower=True, alpha=1.0, out=None, name=None):
    """The solution ``X`` of ``op(T) @ X = alpha * B`` (or ``X @ op(T) = alpha * B`` with
    ``rightside``), ``T`` the lower (or upper) triangle of ``A``."""
    a, b = _in(A, "trsm"), _in(B, "trsm", "B")
    _square(a, "trsm")

    def f():
        t = _tri(a, lower)
        upper = not lower
        if transpose:
            t, upper = _t2(t), lower
        n = a.shape[-1]
        if (b.shape[-1] if rightside else b.shape[-2]) != n:
            raise MXNetError(f"linalg.trsm: B {tuple(B.shape)} does not fit the {n}x{n} "
                             f"triangular matrix (rightside={rightside})")
        rhs = b if alpha == 1.0 else b * float(alpha)
        return torch.linalg.solve_triangular(t, rhs, upper=upper, left=not rightside)
    return _out(_call("trsm", f), A, out)


# ------------------------------------------------------------------ factorizations
def potrf(A, lower=True, out=None, name=None):
    """The Cholesky factor of symmetric positive-definite ``A``: lower ``L`` with
    ``A = L @ L.T`` (upper ``U`` with ``A = U.T @ U`` when ``lower=False``); only that
    triangle of ``A`` is read and the other triangle of the result is zero."""
    a = _in(A, "potrf")
    _square(a, "potrf")

    def f():
        try:
            return torch.linalg.cholesky(a, upper=not lower)
        except torch.linalg.LinAlgError:
            raise MXNetError("linalg.potrf: the Cholesky factorization failed: the input "
                             f"(shape {tuple(A.shape)}) is not symmetric positive definite"
                             ) from None
    return _out(_call("potrf", f), A, out)


def potri(A, lower=True, out=None, name=None):
    """``inverse(L @ L.T)`` from the Cholesky factor ``L`` in the lower triangle of ``A``
    (``inverse(U.T @ U)`` from the upper one with ``lower=False``)."""
    a = _in(A, "potri")
    _square(a, "potri")
    return _out(_call("potri", lambda: torch.cholesky_inverse(_tri(a, lower), upper=not lower)),
                A, out)


def gelqf(A, out=None, name=None):
    """LQ factorization ``A = L @ Q`` of ``A`` with as many rows as columns or fewer: returns
    ``(Q, L)``, ``Q`` with orthonormal rows and ``L`` lower triangular (LAPACK's signs)."""
    a = _in(A, "gelqf")
    if a.shape[-2] > a.shape[-1]:
        raise MXNetError(f"linalg.gelqf: A {tuple(A.shape)} must have at least as many columns "
                         "as rows")

    def f():
        q, r = torch.linalg.qr(_t2(a), mode="reduced")
        return _t2(q), _t2(r)
    q, l_ = _call("gelqf", f)
    return [_new(q, A._ctx), _new(l_, A._ctx)]


def syevd(A, out=None, name=None):
    """Eigendecomposition of symmetric ``A`` (its lower triangle is read): returns ``(U, lam)``
    with ``A = U.T @ diag(lam) @ U``, eigenvalues ascending, eigenvectors as the rows of ``U``,
    each signed so that its entry of largest magnitude (the first such) is positive."""
    a = _in(A, "syevd")
    _square(a, "syevd")

    def f():
        # The value is the lower triangle mirrored; the gradient is that of (A + A.T) / 2,
        # a symmetric matrix, as MXNet's syevd backward gives.
        half = (a + _t2(a)) * 0.5
        sym = half + (torch.tril(a) + _t2(torch.tril(a, -1)) - half).detach()
        lam, v = torch.linalg.eigh(sym)
        u = _t2(v)
        k = u.detach().abs().argmax(dim=-1, keepdim=True)
        sign = torch.where(torch.gather(u.detach(), -1, k) < 0, -1.0, 1.0).to(u.dtype)
        return u * sign, lam
    u, lam = _call("syevd", f)
    return [_new(u, A._ctx), _new(lam, A._ctx)]


def inverse(A, out=None, name=None):
    """The inverse of each square matrix."""
    a = _in(A, "inverse")
    _square(a, "inverse")

    def f():
        try:
            return torch.linalg.inv(a)
        except torch.linalg.LinAlgError:
            raise MXNetError(f"linalg.inverse: the input (shape {tuple(A.shape)}) is "
                             "singular") from None
    return _out(_call("inverse", f), A, out)


def det(A, out=None, name=None):
    """The determinant of each square matrix."""
    a = _in(A, "det")
    _square(a, "det")
    return _out(_vec(_call("det", torch.linalg.det, a)), A, out)


def slogdet(A, out=None, name=None):
    """``(sign, logabsdet)`` of the determinant of each square matrix."""
    a = _in(A, "slogdet")
    _square(a, "slogdet")
    sign, logabs = _call("slogdet", torch.linalg.slogdet, a)
    return [_new(_vec(sign), A._ctx), _new(_vec(logabs), A._ctx)]


def sumlogdiag(A, out=None, name=None):
    """``sum(log(diag(A)))`` of each square matrix."""
    a = _in(A, "sumlogdiag")
    _square(a, "sumlogdiag")
    return _out(_vec(_call("sumlogdiag",
                           lambda: torch.log(torch.diagonal(a, 0, -2, -1)).sum(-1))), A, out)


# ------------------------------------------------------------------ diagonals and triangles
def extractdiag(A, offset=0, out=None, name=None):
    """The ``offset``-th diagonal of each square matrix (above the main one for ``offset``
    > 0)."""
    a = _in(A, "extractdiag")
    _square(a, "extractdiag")
    return _out(_call("extractdiag", lambda: torch.diagonal(a, int(offset), -2, -1)), A, out)


def makediag(A, offset=0, out=None, name=None):
    """Square matrices with the last axis of ``A`` on their ``offset``-th diagonal, zero
    elsewhere."""
    a = _in(A, "makediag", min_ndim=1)
    return _out(_call("makediag", lambda: torch.diag_embed(a, int(offset), -2, -1)), A, out)


def _trian_layout(n, offset, lower):
    """Indices of the triangle MXNet packs: it transposes for an upper triangle (``offset`` >
    0, or 0 with ``lower=False``), then takes the lower triangle of the block that starts
    ``|offset|`` rows down, row by row."""
    k = abs(int(offset))
    upper = offset > 0 or (offset == 0 and not lower)
    rows, cols = torch.tril_indices(n - k, n - k)
    return rows + k, cols, upper


def extracttrian(A, offset=0, lower=True, out=None, name=None):
    """The lower (or upper) triangle of each square matrix from its ``offset``-th diagonal,
    packed into a vector in MXNet's order."""
    a = _in(A, "extracttrian")
    _square(a, "extracttrian")
    n = a.shape[-1]
    if abs(int(offset)) >= n:
        raise MXNetError(f"linalg.extracttrian: offset {offset} is out of range for {n}x{n} "
                         "matrices")
    rows, cols, upper = _trian_layout(n, offset, lower)
    rows, cols = rows.to(a.device), cols.to(a.device)
    return _out(_call("extracttrian", lambda: (_t2(a) if upper else a)[..., rows, cols]),
                A, out)


def maketrian(A, offset=0, lower=True, out=None, name=None):
    """The inverse of :func:`extracttrian`: square matrices whose triangle is filled from the
    last axis of ``A`` (zero elsewhere)."""
    a = _in(A, "maketrian", min_ndim=1)
    m = a.shape[-1]
    s = int(round(((8 * m + 1) ** 0.5 - 1) / 2))
    if s * (s + 1) // 2 != m:
        raise MXNetError(f"linalg.maketrian: the last axis ({m}) is not a triangular number")
    n = s + abs(int(offset))
    rows, cols, upper = _trian_layout(n, offset, lower)
    rows, cols = rows.to(a.device), cols.to(a.device)

    def f():
        z = a.new_zeros(tuple(a.shape[:-1]) + (n, n))
        r = _fill(z, rows, cols, a)
        return _t2(r) if upper else r
    return _out(_call("maketrian", f), A, out)


def _fill(z, rows, cols, vals):
    """``z`` with ``vals`` (last axis) scattered to ``(rows, cols)`` of each matrix."""
    flat = z.reshape(-1, z.shape[-2] * z.shape[-1])
    idx = (rows * z.shape[-1] + cols).expand(flat.shape[0], -1)
    return flat.scatter(1, idx, vals.reshape(flat.shape[0], -1)).reshape(z.shape)
