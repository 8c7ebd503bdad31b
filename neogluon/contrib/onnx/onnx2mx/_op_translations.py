"""MXNet 1.9.1's private per-operator ONNX translation functions; neogluon's importer has its
own (:mod:`neogluon.onnx._import`)."""
