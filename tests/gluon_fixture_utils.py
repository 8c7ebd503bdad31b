"""Shared helpers for the gluon tests: fixture loading and MXNet-identical naming state."""
import json
import os

import numpy as np

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "gluon")


def fixture_json():
    with open(os.path.join(FIX, "gluon.json")) as f:
        return json.load(f)


def fixture_path(name):
    return os.path.join(FIX, name)


def reset_names():
    """Start the global per-class name counters from 0, as a fresh MXNet process does."""
    from neogluon.gluon import block
    block._NAMES.counter.clear()


def det(shape, k):
    """The deterministic values tools/gen_gluon_fixtures.py uses."""
    n = int(np.prod(shape)) if shape else 1
    return (np.sin(np.arange(n, dtype=np.float64) * 0.37 + k) * 0.5).astype(
        np.float32).reshape(shape)
