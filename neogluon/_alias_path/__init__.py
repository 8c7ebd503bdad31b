"""Holds the `mxnet` shim package that neogluon.run puts on child processes' path (see
neogluon/_alias_path/mxnet/__init__.py); nothing here is imported as neogluon._alias_path."""
