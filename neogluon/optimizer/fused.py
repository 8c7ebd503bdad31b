"""Fast paths on torch's fused multi-tensor optimizer kernels, with MXNet's numbers.

torch's fused kernels (``torch._fused_sgd_``, ``_fused_adam_``, ``_fused_adamw_``) update a
whole list of tensors in one pass at close to memory bandwidth, but their maths are torch's:

* torch's SGD momentum buffer ``B`` holds gradients (``B = mu*B + g + wd*w; w -= lr*B``) while
  MXNet's holds steps (``mom = mu*mom - lr*wd*w - lr*rescale*g; w += mom``).
* torch applies ``rescale_grad`` only by rewriting the gradients in place (``grad_scale``),
  which MXNet does not do.
* torch's Adam adds ``eps`` to ``sqrt(v)/sqrt(1-beta2^t)``; MXNet adds it to ``sqrt(v)``.

All three are reconciled exactly (up to float round-off) by keeping the state scaled by a
known factor ``f`` (internal = MXNet value * f) and choosing the kernel's arguments per step:

* SGD with momentum: ``f = -1/(lr*rescale)``; a change of ``lr*rescale`` since the last step is
  folded into the kernel's momentum argument (``mu' = -mu/(c*f_old)``), so a learning-rate
  schedule costs no extra pass. The gradient enters unscaled, with ``lr' = lr*rescale`` and
  ``wd' = wd/rescale``.
* NAG with momentum has no fused path: MXNet's momentum decay reads the already-updated weight,
  which torch's Nesterov kernel cannot express, so it runs on ``_foreach`` (NAG without momentum
  is SGD and uses the SGD kernel).
* Adam/AdamW: ``f = 1/rescale`` for the mean and ``1/rescale^2`` for the variance, and
  ``eps' = eps/(rescale*sqrt(1-beta2^t))``.

The factors live in the Updater (``Updater._scales``: index -> (tensors, factors)); whenever
states are read (``Updater.states``, ``get_states``) or a non-fused path is about to run they
are normalised back to MXNet's layout. Gradients are never modified. Gradient clipping is not
expressible in these kernels, so optimizers with ``clip_gradient`` take the ``_foreach`` path.
"""
from __future__ import annotations

import math

import torch

_FAST_DTYPES = (torch.float32, torch.float64)
_ENABLED = True


def enabled():
    return _ENABLED


def set_enabled(flag):
    """Turn the fused fast paths on or off (for tests and benchmarks); returns the old value."""
    global _ENABLED
    old = _ENABLED
    _ENABLED = bool(flag)
    return old


def usable(ws):
    """Whether torch's fused kernels apply to these weights."""
    if not _ENABLED or not ws:
        return False
    t0 = ws[0]
    return t0.dtype in _FAST_DTYPES and t0.device.type in ("cpu", "cuda")


def normalize_states(states, scales):
    """Bring every scaled state back to MXNet's layout (in place) and forget the factors."""
    _normalize(list(scales), scales)


def _normalize(indices, scales):
    """Normalise ``indices``: one ``_foreach_div_`` per distinct factor (normally one or
    two), not one op per tensor."""
    by_f = {}
    for idx in indices:
        entry = scales.pop(idx, None)
        if entry is None:
            continue
        tensors, factors = entry
        for t, f in zip(tensors, factors):
            if f != 1.0:
                by_f.setdefault((f, t.device, t.dtype), []).append(t)
    with torch.no_grad():
        for (f, _, _), ts in by_f.items():
            torch._foreach_div_(ts, f)


def make_exact(indices, scales):
    """Normalise the given indices before a non-fused update touches their states."""
    if scales:
        _normalize(indices, scales)


def factor_of(idx, scales, slot=0):
    entry = scales.get(idx) if scales is not None else None
    return 1.0 if entry is None else entry[1][slot]


def sgd(indices, ws, gs, moms, lr, wd, momentum, rescale, scales):
    """MXNet's SGD (with or without momentum) on ``torch._fused_sgd_``. Returns False when
    the fast path does not apply (the caller then runs the exact ``_foreach`` path)."""
    c = lr * rescale
    if scales is None or not (rescale > 0 and c > 0 and math.isfinite(c)) or not usable(ws):
        return False
    if momentum == 0 or moms[0] is None:
        torch._fused_sgd_(ws, gs, [], weight_decay=wd / rescale, momentum=0.0, lr=c,
                          dampening=0.0, nesterov=False, maximize=False, is_first_step=False)
        return True
    if momentum < 0:
        return False
    by_f = {}
    for p, idx in enumerate(indices):
        by_f.setdefault(factor_of(idx, scales), []).append(p)
    f_new = -1.0 / c
    for f_old, pos in by_f.items():
        w = [ws[p] for p in pos]
        m = [moms[p] for p in pos]
        if f_old > 0:
            # A buffer in MXNet's layout (first step, or after its states were read): the
            # kernel's momentum argument would be negative, which the CUDA kernel refuses.
            # Scale it to the new factor first (one pass, only then).
            torch._foreach_mul_(m, f_new / f_old)
            f_old = f_new
        torch._fused_sgd_(w, [gs[p] for p in pos], m, weight_decay=wd / rescale,
                          momentum=-momentum / (c * f_old), lr=c, dampening=0.0,
                          nesterov=False, maximize=False, is_first_step=False)
        for p in pos:
            scales[indices[p]] = ((moms[p],), (f_new,))
    return True


def _rescale_to(indices, tensors_per_slot, targets, scales):
    """Make each index's state slots carry the target factors (a pass only when needed, one
    ``_foreach_mul_`` per distinct ratio)."""
    targets = tuple(targets)
    by_ratio = {}
    for p, idx in enumerate(indices):
        entry = scales.get(idx)
        olds = entry[1] if entry is not None else (1.0,) * len(targets)
        ts = tuple(slot[p] for slot in tensors_per_slot)
        if olds != targets:
            for t, fo, fn in zip(ts, olds, targets):
                if fo != fn:
                    by_ratio.setdefault(fn / fo, []).append(t)
        scales[idx] = (ts, targets)
    for ratio, ts in by_ratio.items():
        torch._foreach_mul_(ts, ratio)


def device_path():
    """A context manager that sends CPU tensors down the path CUDA tensors take (torch's
    fused and ``_foreach`` multi-tensor ops instead of the compiled CPU kernels), so that
    tests on a CPU-only machine exercise exactly the code a GPU runs."""
    from . import _ckernels
    return _DevicePath(_ckernels)


class _DevicePath:
    def __init__(self, ck):
        self._ck = ck

    def __enter__(self):
        self._old = (set_enabled(True), self._ck.set_enabled(False))
        return self

    def __exit__(self, *exc):
        set_enabled(self._old[0])
        self._ck.set_enabled(self._old[1])
        return False


_step_cache = {}


def _step_tensor(t, device):
    key = (t, device)
    st = _step_cache.get(key)
    if st is None:
        if len(_step_cache) > 256:
            _step_cache.clear()
        st = torch.tensor(float(t), dtype=torch.float32, device=device)
        _step_cache[key] = st
    return st


def adam(indices, ws, gs, means, vars_, lr_bc, wd, t, beta1, beta2, eps, rescale, scales,
         decoupled=False):
    """MXNet's Adam (or neogluon's AdamW when ``decoupled``) on torch's fused kernels.

    ``lr_bc`` is MXNet's bias-corrected learning rate; torch's own bias correction (from the
    same betas) is divided out of the learning rate and ``eps`` so the result is MXNet's.
    """
    if scales is None or not (rescale > 0 and math.isfinite(1.0 / rescale)) or not usable(ws):
        return False
    if not (lr_bc > 0 and math.isfinite(lr_bc)):
        return False
    bc1 = 1.0 - beta1 ** t
    bc2 = 1.0 - beta2 ** t
    if bc1 <= 0 or bc2 <= 0:
        return False
    _rescale_to(indices, (means, vars_), (1.0 / rescale, 1.0 / (rescale * rescale)), scales)
    sq2 = math.sqrt(bc2)
    lr_t = lr_bc * bc1 / sq2
    eps_t = eps / (rescale * sq2)
    step = _step_tensor(t, ws[0].device)
    steps = [step] * len(ws)
    if decoupled:
        torch._fused_adamw_(ws, gs, means, vars_, [], steps, lr=lr_t, beta1=beta1, beta2=beta2,
                            weight_decay=lr_bc * wd / lr_t, eps=eps_t, amsgrad=False,
                            maximize=False)
    else:
        torch._fused_adam_(ws, gs, means, vars_, [], steps, lr=lr_t, beta1=beta1, beta2=beta2,
                           weight_decay=wd / rescale, eps=eps_t, amsgrad=False, maximize=False)
    return True
