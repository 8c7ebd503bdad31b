"""Fixtures of GluonCV 0.10.5 / GluonNLP 0.10.0 models (tests/ecosystem_cases.py) from MXNet
1.9.1, with both installed in the reference venv (``pip install --no-deps``).

    /tmp/mxref/bin/python tools/gen_ecosystem_fixtures.py   # tests/fixtures/ecosystem/
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "ecosystem", "models.npz")

if __name__ == "__main__":
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    subprocess.check_call([sys.executable, os.path.join(HERE, "..", "tests", "ecosystem_cases.py"),
                           OUT] + sys.argv[1:])
