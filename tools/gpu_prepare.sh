#!/bin/bash
# Prepare, on this (CPU) machine, what tools/gpu_check.sh needs on a lent GPU machine:
# .gpu_suite/ (ignored through .git/info/exclude; pass it in the device call's carry):
#   mxnet-tests/  a copy of ../shared/mxnet-tests (the GPU machine only gets the repo)
#   site/nose/    nose.tools from this venv under a stand-in nose package: nose itself does
#                 not import on the GPU machine's Python 3.12, and MXNet's test files only
#                 use nose.tools (and nose.runmodule under __main__).
set -eu
cd "$(dirname "$0")/.."
grep -qx '/.gpu_suite/' .git/info/exclude 2>/dev/null || echo '/.gpu_suite/' >>.git/info/exclude
rm -rf .gpu_suite && mkdir -p .gpu_suite/site/nose
cp -r ../shared/mxnet-tests .gpu_suite/
tools=$(.venv/bin/python -c "import nose.tools, os; print(os.path.dirname(nose.tools.__file__))")
cp -r "$tools" .gpu_suite/site/nose/tools
cat >.gpu_suite/site/nose/__init__.py <<'PY'
"""Stand-in nose package: nose.tools only (see tools/gpu_prepare.sh)."""


def runmodule(*args, **kwargs):
    raise SystemExit("run these tests with pytest")
PY
find .gpu_suite -name __pycache__ -prune -exec rm -rf {} +
du -sh .gpu_suite
