"""Runnable examples shipped with neogluon.

``python -m neogluon.examples.digits`` (what ``make demo`` runs) trains a small hybridized CNN
on scikit-learn's bundled handwritten digits, with checkpoints, resume and a plot.
"""
