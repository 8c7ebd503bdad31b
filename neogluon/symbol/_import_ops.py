"""Formerly the nd operators only imported graphs needed (the regression output layers,
``contrib.AdaptiveAvgPooling2D``, ``contrib.BilinearResize2D``). They are ``nd`` operators
now (``ndarray/nn_legacy.py``, ``ndarray/contrib.py``), registered when ``nd`` is imported;
this module stays for the import in ``symbol.py``."""
