"""NDArray behaviour against MXNet 1.9.1: the same code snippets ran in MXNet to make the
fixtures (tools/gen_nd_fixtures.py) and run here in neogluon."""
import pytest

from nd_cases import compare, load_snippets, run_snippet

GROUPS = ["creation", "arith", "unary", "reduce", "shape", "index", "linalg", "context",
          "autograd", "random", "misc"]
CASES = [(g, c) for g in GROUPS for c in load_snippets(g)]


@pytest.mark.parametrize("group,case", CASES, ids=[f"{g}-{c['name']}" for g, c in CASES])
def test_snippet_matches_mxnet(group, case):
    got = run_snippet(case["code"])
    compare(got, case["result"], case.get("tol"))
