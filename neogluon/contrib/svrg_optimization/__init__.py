"""``mx.contrib.svrg_optimization``: stochastic variance-reduced gradient training for
``mx.mod.Module`` (``svrg_module.SVRGModule``) and its optimizers
(``svrg_optimizer._SVRGOptimizer``, ``svrg_optimizer._AssignmentOptimizer``, registered as
MXNet 1.9.1 registers them), as MXNet 1.9.1's package."""
from . import svrg_module
from . import svrg_optimizer
