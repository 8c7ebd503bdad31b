"""MXNet 1.9.1's private opset-12 converters; empty here (see the package)."""
