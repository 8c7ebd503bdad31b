"""MXNet 1.9.1's private table of ONNX translation functions; neogluon's importer has its own
(``mx.contrib.onnx.supported_operators()``, :mod:`neogluon.onnx._import`)."""
