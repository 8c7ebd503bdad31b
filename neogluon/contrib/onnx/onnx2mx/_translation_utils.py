"""MXNet 1.9.1's private helpers of its ONNX translation functions; neogluon's importer has its
own (:mod:`neogluon.onnx._import`)."""
