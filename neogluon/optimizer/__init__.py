"""``mx.optimizer``: MXNet 1.9.1's optimizers with MXNet's numbers, multi-tensor on torch."""
from .optimizer import (Optimizer, Updater, get_updater, create, register, Test)
from .sgd import SGD, ccSGD, NAG, Signum, LARS, LBSGD, DCASGD, SGLD
from .adam import Adam, AdamW, Adamax, Nadam, LAMB, FTML
from .adaptive import AdaGrad, AdaDelta, RMSProp, Ftrl
from . import contrib
from .contrib import GroupAdaGrad

__all__ = ["Optimizer", "Updater", "get_updater", "create", "register", "Test", "SGD", "ccSGD",
           "NAG", "Signum", "LARS", "LBSGD", "DCASGD", "SGLD", "Adam", "AdamW", "Adamax",
           "Nadam", "LAMB", "FTML", "AdaGrad", "AdaDelta", "RMSProp", "Ftrl", "GroupAdaGrad",
           "contrib"]
from .optimizer import NDabs  # noqa: E402,F401  (MXNet exports nd.abs here under this name)
