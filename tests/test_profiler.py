"""mx.profiler on torch.profiler: MXNet 1.9.1's API surface and misuse errors (recorded by
tools/gen_profiler_fixtures.py), a Chrome trace of a Gluon training loop with scopes merged in,
pause/resume, aggregate stats, atomic dumps, the dump at exit."""
import inspect
import json
import os
import subprocess
import sys

import pytest

import neogluon as mx
from neogluon import autograd, gluon
from neogluon import profiler
from neogluon.base import MXNetError

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(REPO, "tests", "fixtures", "profiler", "api.json")
with open(FIX) as _f:
    API = json.load(_f)


@pytest.fixture(autouse=True)
def fresh_profiler():
    profiler._reset()
    yield
    profiler._reset()


def _load(path):
    with open(path) as f:
        trace = json.load(f)
    assert isinstance(trace["traceEvents"], list)
    return trace["traceEvents"]


def _names(events, ph=None):
    return [e["name"] for e in events if ph is None or e.get("ph") == ph]


def _train(net, trainer, steps, task=None, counter=None):
    loss = gluon.loss.L2Loss()
    x, y = mx.nd.ones((8, 3)), mx.nd.zeros((8, 4))
    for _ in range(steps):
        if task is not None:
            task.start()
        with autograd.record():
            out = loss(net(x), y)
        out.backward()
        trainer.step(8)
        if task is not None:
            task.stop()
        if counter is not None:
            counter += 1


def _net():
    net = gluon.nn.Dense(4)
    net.initialize()
    return net, gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})


# ------------------------------------------------------------------------- API surface (fixture)
def test_api_surface_matches_mxnet():
    assert mx.profiler is profiler
    for name, sig in API["functions"].items():
        assert str(inspect.signature(getattr(profiler, name))) == sig, name
    for cls, methods in API["classes"].items():
        for meth, sig in methods.items():
            assert str(inspect.signature(getattr(getattr(profiler, cls), meth))) == sig, (cls, meth)


@pytest.mark.parametrize("case,call", [
    ("set_config_unknown_kw", lambda: profiler.set_config(foo=1)),
    ("set_config_positional", lambda: profiler.set_config("x")),
    ("set_config_bad_bool", lambda: profiler.set_config(profile_all="maybe")),
    ("set_config_bad_float", lambda: profiler.set_config(dump_period="abc")),
    ("set_state_bad", lambda: profiler.set_state("go")),
    ("set_state_bad_process", lambda: profiler.set_state("run", profile_process="x")),
    ("dumps_bad_format", lambda: profiler.dumps(format="xml")),
    ("dumps_bad_sort_by", lambda: profiler.dumps(sort_by="foo")),
    ("dumps_bad_ascending", lambda: profiler.dumps(ascending="x")),
    ("marker_bad_scope", lambda: profiler.Marker(profiler.Domain("d"), "m").mark("foo")),
    ("counter_bad_value", lambda: profiler.Counter(profiler.Domain("d"), "c").set_value("abc")),
    ("stop_unstarted_task", lambda: profiler.Task(profiler.Domain("d"), "t").stop()),
])
def test_misuse_raises_what_mxnet_raises(case, call):
    want = API["errors"][case]
    if want["raises"] is None:
        call()
        return
    with pytest.raises(Exception) as info:
        call()
    kinds = {c.__name__ for c in type(info.value).__mro__}
    assert want["raises"] in kinds, (case, type(info.value).__mro__)
    if want["raises"] != "TypeError":   # Python's own signature error otherwise
        assert isinstance(info.value, MXNetError), case


def test_error_messages_name_the_culprit():
    with pytest.raises(MXNetError, match="(?s)Cannot find argument 'foo'.*profile_all"):
        profiler.set_config(foo=1)
    with pytest.raises(MXNetError, match="'go'"):
        profiler.set_state("go")
    with pytest.raises(MXNetError, match="xml"):
        profiler.dumps(format="xml")
    with pytest.raises(MXNetError, match="'foo'"):
        profiler.Marker(profiler.Domain("d"), "m").mark("foo")
    with pytest.raises(MXNetError, match="domain"):
        profiler.Task("not a domain", "t")
    with pytest.raises(MXNetError, match="filename"):
        profiler.set_config(filename="")
    with pytest.raises(MXNetError, match="mode"):
        profiler.profiler_set_config(mode="everything")


def test_dumps_is_empty_without_aggregate_stats(tmp_path):
    profiler.set_config(filename=str(tmp_path / "p.json"))
    profiler.set_state("run")
    mx.nd.ones((3, 3)).wait_to_read()
    profiler.set_state("stop")
    assert profiler.dumps() == API["errors"]["dumps_without_aggregate_stats"]["value"] == ""


def test_set_config_parses_like_mxnet_and_applies_while_running(tmp_path):
    profiler.set_config(profile_all="1", aggregate_stats="true", dump_period="0.5",
                        filename=tmp_path / "p.json")
    cfg = profiler._st.config
    assert cfg["profile_all"] is True and cfg["aggregate_stats"] is True
    assert cfg["dump_period"] == 0.5 and cfg["filename"] == str(tmp_path / "p.json")
    profiler.set_state("run")
    with profiler.Event("before"):
        pass
    profiler.set_config(filename=str(tmp_path / "q.json"))    # MXNet allows it while running
    with profiler.Event("after"):
        pass
    profiler.dump()
    assert {"before", "after"} <= set(_names(_load(tmp_path / "q.json")))
    assert not (tmp_path / "p.json").exists()


# ------------------------------------------------------------------------- trace of a Gluon loop
def test_gluon_training_loop_trace(tmp_path):
    path = tmp_path / "profile.json"
    profiler.set_config(profile_all=True, aggregate_stats=True, filename=str(path))
    net, trainer = _net()
    dom = profiler.Domain("train")
    task, frame = dom.new_task("step"), dom.new_frame("epoch")
    counter, marker = dom.new_counter("iters", 0), dom.new_marker("done")
    profiler.set_state("run")
    frame.start()
    _train(net, trainer, 3, task=task, counter=counter)
    frame.stop()
    marker.mark("global")
    with profiler.Event("evaluate"):
        net(mx.nd.ones((2, 3))).wait_to_read()
    profiler.set_state("stop")
    profiler.dump()
    assert not [p for p in os.listdir(tmp_path) if p != "profile.json"]  # no temp file left

    events = _load(path)
    ops = [e for e in events if e.get("ph") == "X" and e["name"] == "aten::addmm"]
    assert len(ops) >= 4                     # 3 training forwards + 1 evaluation
    steps = [e for e in events if e["name"] == "step"]
    assert len(steps) == 3 and all(e["ph"] == "X" and e["cat"] == "train" for e in steps)
    assert [e["name"] for e in events if e.get("cat") == "train,frame"] == ["epoch"]
    assert [e for e in events if e["name"] == "evaluate"][0]["cat"] == "event"
    counts = [e["args"]["iters"] for e in events if e["name"] == "iters" and e["ph"] == "C"]
    assert counts == [1, 2, 3]      # created (value 0) before the profiler ran: not recorded
    marks = [e for e in events if e["name"] == "done"]
    assert len(marks) == 1 and marks[0]["ph"] == "i" and marks[0]["s"] == "g"
    # one clock, one process and thread: each step holds one forward addmm
    pid, tid = os.getpid(), steps[0]["tid"]
    assert all(e["pid"] == pid for e in steps + ops)
    for s in steps:
        inside = [o for o in ops if s["ts"] <= o["ts"] and o["ts"] + o["dur"] <= s["ts"] + s["dur"]]
        assert inside and all(o["tid"] == tid for o in inside)
    assert all(e["ts"] > 1e15 for e in events if "ts" in e)   # epoch microseconds

    table = profiler.dumps()
    assert "operator" in table and "aten::addmm" in table
    row = [line for line in table.splitlines() if line.startswith("step ")][0].split()
    assert row[1] == "3" and float(row[2]) > 0         # count, total ms


def test_pause_resume_excludes_work(tmp_path):
    path = tmp_path / "p.json"
    profiler.set_config(profile_all=True, aggregate_stats=True, filename=str(path))
    x = mx.nd.array([[3.0, 1.0, 2.0]])
    dom = profiler.Domain("d")
    profiler.set_state("run")
    mx.nd.ones((2, 2)).wait_to_read()
    profiler.pause()
    mx.nd.sort(x).wait_to_read()
    with profiler.Event("while_paused"):
        pass
    dom.new_counter("c", 5)
    profiler.resume()
    with profiler.Event("after_resume"):
        mx.nd.relu(x).wait_to_read()
    profiler.set_state("stop")
    with profiler.Event("after_stop"):
        mx.nd.sort(x).wait_to_read()
    profiler.dump()
    names = set(_names(_load(path)))
    assert "after_resume" in names and "aten::relu" in names
    assert not names & {"while_paused", "after_stop", "aten::sort", "c"}
    assert "aten::sort" not in profiler.dumps()


def test_dumps_sorting_json_and_reset(tmp_path):
    profiler.set_config(profile_all=True, aggregate_stats=True, filename=str(tmp_path / "p.json"))
    dom = profiler.Domain("bench")
    profiler.set_state("run")
    for name, n in (("few", 1), ("many", 4), ("some", 2)):
        t = dom.new_task(name)
        for _ in range(n):
            with t:
                mx.nd.ones((4, 4)).wait_to_read()
    profiler.set_state("stop")

    def order(text):
        sec = text.split("\nbench\n", 1)[1].split("\n\n", 1)[0]
        return [line.split()[0] for line in sec.splitlines()[3:]]

    assert order(profiler.dumps(sort_by="count")) == ["many", "some", "few"]
    assert order(profiler.dumps(sort_by="count", ascending=True)) == ["few", "some", "many"]
    stats = json.loads(profiler.dumps(format="json"))
    assert set(stats) == {"Time", "Memory", "Unit"} and stats["Unit"]["Time"] == "ms"
    assert stats["Memory"]["Device Storage"]        # profile_memory is on by default
    for sort_by, field in (("count", "Count"), ("min", "Min"), ("max", "Max"), ("avg", "Avg")):
        for asc in (False, True):
            got = json.loads(profiler.dumps(format="json", sort_by=sort_by, ascending=asc))
            for section in list(got["Time"].values()) + list(got["Memory"].values()):
                vals = [row[field] for row in section.values()]
                assert vals == sorted(vals, reverse=not asc), (sort_by, asc)
    many = stats["Time"]["bench"]["many"]
    assert many["Count"] == 4 and many["Min"] <= many["Avg"] <= many["Max"] <= many["Total"]
    assert stats["Time"]["operator"]
    assert "many" in profiler.dumps(reset=True)
    assert "many" not in profiler.dumps()


def test_dump_not_finished_keeps_running_and_atomic_errors(tmp_path):
    path = tmp_path / "p.json"
    profiler.set_config(profile_all=True, filename=str(path))
    profiler.set_state("run")
    with profiler.Event("first"):
        pass
    profiler.dump(finished=False)
    assert "first" in _names(_load(path))
    with profiler.Event("second"):
        pass
    profiler.dump(finished=False)
    names = _names(_load(path))
    assert "first" in names and "second" in names
    profiler.dump()                          # finished: stops the profiler
    with profiler.Event("third"):
        pass
    assert "third" not in _names(_load(path))
    assert sorted(os.listdir(tmp_path)) == ["p.json"]

    profiler.set_config(filename=str(tmp_path / "missing" / "p.json"))
    with pytest.raises(MXNetError, match="missing"):
        profiler.dump()


def test_scopes_context_counter_ops_and_aliases(tmp_path):
    path = tmp_path / "old.json"
    profiler.profiler_set_config(mode="all", filename=str(path))
    profiler.profiler_set_state("run")
    dom = profiler.Domain("d")
    c = profiler.Counter(dom, "level", 10)
    c += 5
    c -= 2
    c.increment(3)
    c.decrement()
    c.set_value(7)
    assert c.value == 7 and str(c) == "level" and str(dom) == "d"
    with dom.new_task("ctx") as t:
        assert isinstance(t, profiler.Task)
    profiler.Marker(dom, "m").mark()
    profiler.profiler_set_state("stop")
    profiler.dump_profile()
    events = _load(path)
    assert [e["args"]["level"] for e in events if e["name"] == "level"] == [10, 15, 13, 16, 15, 7]
    assert "ctx" in _names(events, "X")
    assert [e["s"] for e in events if e["name"] == "m"] == ["p"]
    # 'server' is accepted and does nothing: neogluon has no kvstore servers
    profiler.set_state("run", profile_process="server")
    assert not profiler._st.running


def test_unmodified_script_dumps_at_exit(tmp_path):
    """`from mxnet import profiler` through neogluon.run; the profile is written at exit."""
    script = tmp_path / "prog.py"
    script.write_text(
        "import mxnet as mx\nfrom mxnet import profiler\n"
        "profiler.set_config(profile_all=True, filename='exit.json')\n"
        "profiler.set_state('run')\n"
        "mx.nd.dot(mx.nd.ones((4, 4)), mx.nd.ones((4, 4))).wait_to_read()\n")
    env = dict(os.environ, PYTHONPATH=REPO)
    env.pop("NEOGLUON_SHADOW_MXNET", None)
    out = subprocess.run([sys.executable, "-m", "neogluon.run", str(script)], cwd=str(tmp_path),
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "aten::mm" in _names(_load(tmp_path / "exit.json"))


# ------------------------------------------------------------------------- MXNet operator names
class _Twice(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * 2)
        mx.nd.ones((2, 2))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] * 2)


@mx.operator.register("ProfilerTwice")
class _TwiceProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(True)

    def list_arguments(self):
        return ["data"]

    def list_outputs(self):
        return ["output"]

    def infer_shape(self, in_shape):
        return (in_shape[0],), (in_shape[0],), ()

    def create_operator(self, ctx, shapes, dtypes):
        return _Twice()


def test_operators_counted_under_mxnet_names(tmp_path):
    # The counts MXNet 1.9.1 reports for this program (its engine-internal rows such as
    # DeleteVariable and CopyCPU2CPU left out): one event per operator called, a custom
    # operator's own work and the operators it calls under 'Custom Operator'.
    profiler.set_config(profile_all=True, aggregate_stats=True,
                        filename=str(tmp_path / "p.json"))
    profiler.set_state("run")
    a, b = mx.nd.zeros((3, 3)), mx.nd.ones((3, 3))
    mx.nd.sqrt(a)
    d = (a + 1) * 2
    a + b, a - b, 1 - a, mx.nd.dot(a, b), d
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = mx.nd.Custom(x, op_type="ProfilerTwice")
    y.backward()
    stats = json.loads(profiler.dumps(format="json"))["Time"]
    profiler.set_state("stop")
    ops = {k: v["Count"] for k, v in stats["operator"].items()}
    want = {"_zeros": 1, "_ones": 1, "sqrt": 1, "_plus_scalar": 1, "_mul_scalar": 1,
            "broadcast_add": 1, "broadcast_sub": 1, "_rminus_scalar": 1, "dot": 1}
    assert {k: ops.get(k) for k in want} == want
    custom = {k: v["Count"] for k, v in stats["Custom Operator"].items()}
    assert custom == {"ProfilerTwice::pure_python": 1, "ProfilerTwice::_mul_scalar": 1,
                      "ProfilerTwice::_ones": 1, "_backward_ProfilerTwice::pure_python": 1,
                      "_backward_ProfilerTwice::_mul_scalar": 1}
    # stopped: the functions and NDArray's arithmetic are the unwrapped ones again
    assert not hasattr(mx.nd.sqrt, "__wrapped_op__")
    assert not hasattr(mx.nd.NDArray.__add__, "__wrapped_op__")
