"""``mxnet._numpy_op_doc``: MXNet keeps the documentation of its registered ``_np_*``
operators here; neogluon registers no such C operators (mx.np's functions are Python and carry
their own docstrings), so the module has nothing to list."""
