"""MXNet 1.9.1's private opset-13 converters; empty here (see the package)."""
OPSET_VERSION = 13
