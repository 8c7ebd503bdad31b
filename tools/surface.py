"""How much of MXNet 1.9.1's module/name surface neogluon provides under ``import mxnet``.

    .venv/bin/python tools/surface.py                 # per-package table and totals
    .venv/bin/python tools/surface.py --modules       # one row per module
    .venv/bin/python tools/surface.py --missing       # ... and the names each one lacks
    .venv/bin/python tools/surface.py --json out.json # everything, machine-readable
    .venv/bin/python tools/surface.py --numpy         # the NumPy interface (mx.np, mx.npx,
                                                      # mx.nd.np, mx.sym.np...) instead

The reference is tests/fixtures/surface/mxnet_1_9_1.json, written by
tools/gen_surface_fixture.py on MXNet 1.9.1 (every module of its package and the names each
exposes); the NumPy-interface modules are in tests/fixtures/surface/mxnet_1_9_1_numpy.json,
written by ``gen_surface_fixture.py --numpy``, and counted apart (``--numpy``). Each module is imported as ``mxnet.X`` through :mod:`neogluon.mxnet_alias` (what
``python -m neogluon.run`` installs), and each name is looked up on it. Names and modules that
cannot mean anything on torch (C-API handles, ctypes plumbing, TVM loaders: see
tools/surface_exempt.txt, each with its reason) are left out of both counts.
"""
from __future__ import annotations

import argparse
import fnmatch
import importlib
import json
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "surface", "mxnet_1_9_1.json")
NUMPY_FIXTURE = os.path.join(ROOT, "tests", "fixtures", "surface", "mxnet_1_9_1_numpy.json")
EXEMPT = os.path.join(HERE, "surface_exempt.txt")


def load_fixture(path=FIXTURE):
    with open(path) as f:
        return json.load(f)


def load_exempt(path=EXEMPT):
    """``[(pattern, reason)]``: a pattern is ``module`` (the module, its names and its
    submodules) or ``module:name``; both take fnmatch wildcards."""
    rules = []
    with open(path) as f:
        for raw in f:
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            pattern, sep, reason = line.partition(" -- ")
            if not sep or not reason.strip():
                raise ValueError(f"{path}: every exemption needs ' -- reason': {raw!r}")
            rules.append((pattern.strip(), reason.strip()))
    return rules


def module_exempt(module, rules):
    for pattern, _ in rules:
        if ":" in pattern:
            continue
        if fnmatch.fnmatchcase(module, pattern) or fnmatch.fnmatchcase(module, pattern + ".*"):
            return True
    return False


def name_exempt(module, name, rules):
    key = f"{module}:{name}"
    return any(":" in p and fnmatch.fnmatchcase(key, p) for p, _ in rules)


def _import_alias():
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    from neogluon import mxnet_alias
    if not mxnet_alias.install(shadow=True):
        raise RuntimeError("could not install the mxnet alias")
    return importlib.import_module("mxnet")


def measure(fixture=None, rules=None):
    """``{module: {"imports", "error", "present", "total", "missing", "kind_differs"}}`` for
    every module of the fixture that is not exempt."""
    fixture = load_fixture() if fixture is None else fixture
    rules = load_exempt() if rules is None else rules
    _import_alias()
    results = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for modname, names in sorted(fixture["modules"].items()):
            if module_exempt(modname, rules):
                continue
            wanted = [n for n in names if not name_exempt(modname, n, rules)]
            row = {"imports": False, "error": None, "present": 0, "total": len(wanted),
                   "missing": list(wanted), "kind_differs": []}
            results[modname] = row
            try:
                module = importlib.import_module(modname)
            except BaseException as err:  # noqa: BLE001  (report, never stop the survey)
                row["error"] = f"{type(err).__name__}: {err}"[:200]
                continue
            row["imports"] = True
            missing = []
            for n in wanted:
                try:
                    value = getattr(module, n)
                except BaseException:  # noqa: BLE001  (AttributeError or a failing lazy hook)
                    missing.append(n)
                    continue
                if _kind(value) != names[n] and names[n] in ("module", "class"):
                    row["kind_differs"].append(f"{n} ({names[n]} in MXNet, {_kind(value)})")
            row["missing"] = missing
            row["present"] = len(wanted) - len(missing)
    return results


def _kind(value):
    # the same classification the fixture was recorded with
    from gen_surface_fixture import kind_of
    return kind_of(value)


def package_of(modname):
    parts = modname.split(".")
    return ".".join(parts[:2])


def totals(results):
    mods = len(results)
    imports = sum(r["imports"] for r in results.values())
    total = sum(r["total"] for r in results.values())
    present = sum(r["present"] for r in results.values())
    return {"modules": mods, "modules_importing": imports, "names": total,
            "names_present": present}


def by_package(results):
    packages = {}
    for modname, row in results.items():
        packages.setdefault(package_of(modname), {})[modname] = row
    return {p: totals(rows) for p, rows in sorted(packages.items())}


def _pct(a, b):
    return 100.0 * a / b if b else 100.0


def table(results, per_module=False, show_missing=False):
    lines = []
    rows = ({m: totals({m: r}) for m, r in results.items()} if per_module
            else by_package(results))
    width = max(len(k) for k in rows) + 2
    lines.append(f"{'module' if per_module else 'package':<{width}}{'modules':>10}"
                 f"{'names':>14}{'%':>8}")
    for key, t in rows.items():
        lines.append(f"{key:<{width}}{t['modules_importing']:>4} / {t['modules']:<3}"
                     f"{t['names_present']:>6} / {t['names']:<5}"
                     f"{_pct(t['names_present'], t['names']):>7.1f}")
        if per_module and show_missing:
            row = results[key]
            if row["error"]:
                lines.append(f"    does not import: {row['error']}")
            elif row["missing"]:
                lines.append("    missing: " + ", ".join(row["missing"]))
    t = totals(results)
    lines.append(f"{'TOTAL':<{width}}{t['modules_importing']:>4} / {t['modules']:<3}"
                 f"{t['names_present']:>6} / {t['names']:<5}"
                 f"{_pct(t['names_present'], t['names']):>7.1f}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", action="store_true", help="one row per module")
    parser.add_argument("--missing", action="store_true",
                        help="one row per module, with its missing names")
    parser.add_argument("--json", metavar="PATH", help="write the full results as JSON")
    parser.add_argument("--numpy", action="store_true",
                        help="the NumPy-interface modules (their own fixture)")
    args = parser.parse_args(argv)
    fixture = load_fixture(NUMPY_FIXTURE if args.numpy else FIXTURE)
    results = measure(fixture)
    print(table(results, per_module=args.modules or args.missing, show_missing=args.missing))
    if fixture.get("import_failures"):
        print(f"\n(not counted: {', '.join(fixture['import_failures'])} do not import on "
              "MXNet 1.9.1 itself)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"totals": totals(results), "modules": results}, f, indent=1)


if __name__ == "__main__":
    main()
