"""Write tests/fixtures/attribute/attrs.json from MXNet 1.9.1 (run with
/tmp/mxref/bin/python): for each builder of tests/attribute_cases.py, the symbol's
attr_dict(), list_attr() and tojson()."""
import json
import os
import sys
import warnings

import mxnet as mx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import attribute_cases as C  # noqa: E402

OUT = os.path.join(HERE, "..", "tests", "fixtures", "attribute")


def main():
    res = {}
    for name, build in sorted(C.BUILDERS.items()):
        sym = build(mx)
        rec = {"attr_dict": sym.attr_dict(), "json": sym.tojson()}
        if len(sym.list_outputs()) == 1:
            rec["list_attr"] = sym.list_attr()
        res[name] = rec
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "attrs.json"), "w") as f:
        json.dump({"mxnet": mx.__version__, "cases": res}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        main()
