"""Record mxnet.profiler's API surface and misuse errors from real MXNet 1.9.1.

    /tmp/mxref/bin/python tools/gen_profiler_fixtures.py   # writes tests/fixtures/profiler/api.json
"""
import inspect
import json
import os
import tempfile

import mxnet as mx  # noqa: F401
from mxnet import profiler as p

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "profiler")
os.makedirs(OUT, exist_ok=True)

FUNCS = ["set_config", "profiler_set_config", "set_state", "profiler_set_state", "dump",
         "dump_profile", "dumps", "pause", "resume", "set_kvstore_handle"]
CLASSES = ["Domain", "Task", "Frame", "Event", "Counter", "Marker"]


def sig(f):
    return str(inspect.signature(f))


api = {"functions": {n: sig(getattr(p, n)) for n in FUNCS}, "classes": {}}
for c in CLASSES:
    cls = getattr(p, c)
    methods = {m: sig(getattr(cls, m)) for m in sorted(vars(cls))
               if callable(getattr(cls, m)) and (not m.startswith("_") or m in
                                                 ("__init__", "__iadd__", "__isub__"))}
    api["classes"][c] = methods


def outcome(f):
    try:
        f()
        return {"raises": None}
    except Exception as e:  # noqa: BLE001
        return {"raises": type(e).__name__, "message": str(e).splitlines()[0][:200]}


d = p.Domain("dom")
errors = {
    "set_config_unknown_kw": outcome(lambda: p.set_config(foo=1)),
    "set_config_positional": outcome(lambda: p.set_config("x")),
    "set_config_bad_bool": outcome(lambda: p.set_config(profile_all="maybe")),
    "set_config_bad_float": outcome(lambda: p.set_config(dump_period="abc")),
    "set_state_bad": outcome(lambda: p.set_state("go")),
    "set_state_bad_process": outcome(lambda: p.set_state("run", profile_process="x")),
    "dumps_bad_format": outcome(lambda: p.dumps(format="xml")),
    "dumps_bad_sort_by": outcome(lambda: p.dumps(sort_by="foo")),
    "dumps_bad_ascending": outcome(lambda: p.dumps(ascending="x")),
    "marker_bad_scope": outcome(lambda: p.Marker(d, "m").mark("foo")),
    "counter_bad_value": outcome(lambda: p.Counter(d, "c").set_value("abc")),
    "stop_unstarted_task": outcome(lambda: p.Task(d, "t").stop()),
}
tmp = os.path.join(tempfile.mkdtemp(), "p.json")
p.set_config(filename=tmp)
p.set_state("run")
p.set_state("stop")
errors["dumps_without_aggregate_stats"] = {"value": p.dumps()}
api["errors"] = errors
with open(os.path.join(OUT, "api.json"), "w") as f:
    json.dump(api, f, indent=1, sort_keys=True)
