"""Seeded random generators: one per torch device, reset by ``mx.random.seed``."""
from __future__ import annotations

import torch

__all__ = ["seed", "uniform", "normal", "randint", "shuffle", "exponential", "gamma",
           "poisson", "multinomial", "generator"]

_generators: dict = {}
_seed_all = [None]      # the last seed(s) for every device: devices first used later get it


def generator(device: torch.device) -> torch.Generator:
    """The neogluon generator for one torch device (created on first use)."""
    key = (device.type, device.index if device.type == "cuda" else None)
    gen = _generators.get(key)
    if gen is None:
        gen = torch.Generator(device=device)
        if _seed_all[0] is None:
            gen.seed()
        else:
            gen.manual_seed(_seed_all[0])
        _generators[key] = gen
    return gen


def _snapshot():
    """The state of every generator random operators draw from (neogluon's per-device ones
    and torch's default CPU and CUDA ones), for :func:`_restore`."""
    gens = {k: g.get_state() for k, g in _generators.items()}
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() and \
        torch.cuda.is_initialized() else None
    return gens, torch.get_rng_state(), cuda


def _restore(snap):
    """Put the generators back to a :func:`_snapshot` (so that a computation replays with the
    same random draws)."""
    gens, cpu, cuda = snap
    for k, state in gens.items():
        g = _generators.get(k)
        if g is not None:
            g.set_state(state)
    torch.set_rng_state(cpu)
    if cuda is not None:
        torch.cuda.set_rng_state_all(cuda)


def seed(seed_state: int, ctx="all") -> None:
    """Seed the generators so that results repeat from run to run.

    Parameters
    ----------
    seed_state : int
        The seed.
    ctx : Context or 'all'
        Seed only that context's device, or every device (the default). torch's global
        generator is seeded too, so that layers built on torch (dropout's masks) repeat.
    """
    if not isinstance(seed_state, int):
        raise ValueError(f"seed_state must be an int, got {type(seed_state).__name__}")
    if ctx == "all":
        _seed_all[0] = seed_state
        torch.manual_seed(seed_state)
        for key in list(_generators):
            _generators[key].manual_seed(seed_state)
        generator(torch.device("cpu")).manual_seed(seed_state)
    else:
        dev = ctx.torch_device
        generator(dev).manual_seed(seed_state)
        if dev.type == "cuda":
            torch.cuda.manual_seed(seed_state)
        else:
            torch.manual_seed(seed_state)


def __getattr__(name):
    # mx.random.uniform & co. are nd.random's samplers; imported lazily to keep layering.
    if name in ("uniform", "normal", "randint", "shuffle", "exponential", "gamma", "poisson",
                "multinomial", "randn", "negative_binomial", "generalized_negative_binomial"):
        from .ndarray import random as _ndr
        return getattr(_ndr, name)
    raise AttributeError(name)


# Names MXNet 1.9.1's module of the same path exposes (programs import them from here).
from .base import integer_types  # noqa: E402,F401
from .context import Context  # noqa: E402,F401
