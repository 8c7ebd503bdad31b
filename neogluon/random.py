"""Seeded random generators: one per torch device, reset by ``mx.random.seed``."""
from __future__ import annotations

import torch

__all__ = ["seed", "uniform", "normal", "randint", "shuffle", "exponential", "gamma",
           "poisson", "multinomial", "generator"]

_generators: dict = {}
_seed_all = [None]      # the last seed(s) for every device: devices first used later get it

# MXNet starts its generators from a fixed seed, so an unseeded MXNet program draws the same
# numbers on every run (its initial weights, dropout masks, samplers). neogluon does the same:
# at import every generator random operators draw from (neogluon's per-device ones and torch's
# global ones, which dropout uses) starts from _DEFAULT_SEED. NEOGLUON_SEED=<int> picks another
# start; NEOGLUON_SEED=random seeds each process differently (torch's own default).
_DEFAULT_SEED = 0


def _start_seed(env=None):
    """The seed generators start from (None: seeded randomly per process)."""
    import os
    raw = (os.environ.get("NEOGLUON_SEED", "") if env is None else env).strip()
    if not raw:
        return _DEFAULT_SEED
    if raw.lower() == "random":
        return None
    try:
        return int(raw, 0)
    except ValueError:
        raise ValueError(f"NEOGLUON_SEED must be an integer or 'random', got {raw!r}") from None


def _seed_at_import():
    start = _start_seed()
    if start is not None:
        seed(start)


def _follow_torch_seed(worker_id=None):
    """Seed neogluon's generators from torch's (a DataLoader worker's ``worker_init_fn``:
    torch gives every worker its own seed, so each worker draws its own numbers instead of
    the copy of the parent's generators it started with)."""
    start = torch.initial_seed() % (2 ** 63)
    _seed_all[0] = start
    for gen in _generators.values():
        gen.manual_seed(start)


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

_seed_at_import()
