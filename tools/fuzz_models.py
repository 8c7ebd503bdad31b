"""Fuzz neogluon's model-file loaders with mutated files (issue 34's error contract).

Builds valid seed files (an exported ResNet-like HybridBlock, ``nd.save`` dicts and lists of
several dtypes, MXNet-written ``.params`` and ``.states`` fixtures, neogluon Trainer states for
SGD-momentum and Adam, a Module checkpoint), mutates them (truncation, byte flips, forged
lengths/counts/dims in binary headers, structural JSON mutations: wrong types, deleted keys,
dangling references, cycles, huge shapes, bad dtypes, unknown ops) and runs every loader on
them in this process. Each outcome is one of

- ``ok``: the file loaded;
- ``MXNetError``: refused with ``neogluon.base.MXNetError`` naming the file;
- ``expected-type``: MXNet's own deliberate type (``AssertionError`` / ``ValueError`` for a
  parameter-name, shape or dtype mismatch in ``load_parameters`` and ``ParameterDict.load``),
  naming the file;
- ``INTERNAL``: anything else, or an error whose message does not name the file, or a model /
  trainer changed by a load that failed.

Usage::

    PYTHONPATH=. python tools/fuzz_models.py --n 2000 [--seed 0] [--kinds nd_load,symbol]

Exits 1 when any outcome is INTERNAL (listed with type and message). Runs on CPU; no
MXNet needed (the MXNet-written seeds are the committed fixtures under tests/fixtures/).
"""
from __future__ import annotations

import argparse
import collections
import copy
import io
import json
import os
import random
import struct
import sys
import tempfile
import warnings
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIXTURES = os.path.join(ROOT, "tests", "fixtures")

KINDS = ["nd_load", "load_parameters", "params_load", "trainer_states", "symbol",
         "imports", "checkpoint", "module_load"]

_INTERESTING_INTS = [0, 1, 2, 3, -1, -2, 7, 32, 33, 255, 256, 2 ** 31 - 1, -2 ** 31,
                     2 ** 32 - 1, 2 ** 32, 2 ** 40, 2 ** 62, 2 ** 63 - 1, 10 ** 12]


# ------------------------------------------------------------------------------ seeds
def _mx():
    import neogluon as mx
    return mx


def _resnet_like(mx, prefix="resnetlike_"):
    nn = mx.gluon.nn

    class Residual(mx.gluon.HybridBlock):
        def __init__(self, channels, **kw):
            super().__init__(**kw)
            with self.name_scope():
                self.conv1 = nn.Conv2D(channels, 3, padding=1, use_bias=False)
                self.bn1 = nn.BatchNorm()
                self.conv2 = nn.Conv2D(channels, 3, padding=1, use_bias=False)
                self.bn2 = nn.BatchNorm()

        def hybrid_forward(self, F, x):
            y = F.Activation(self.bn1(self.conv1(x)), act_type="relu")
            y = self.bn2(self.conv2(y))
            return F.Activation(x + y, act_type="relu")

    class Net(mx.gluon.HybridBlock):
        def __init__(self, **kw):
            super().__init__(**kw)
            with self.name_scope():
                self.stem = nn.Conv2D(4, 3, padding=1)
                self.bn = nn.BatchNorm()
                self.block = Residual(4)
                self.pool = nn.GlobalAvgPool2D()
                self.fc = nn.Dense(3)

        def hybrid_forward(self, F, x):
            x = F.Activation(self.bn(self.stem(x)), act_type="relu")
            return self.fc(self.pool(self.block(x)))

    net = Net(prefix=prefix)
    net.initialize(mx.init.Xavier(), ctx=mx.cpu())
    net.hybridize()
    net(mx.nd.ones((1, 3, 6, 6)))
    return net


def _mlp(mx):
    net = mx.gluon.nn.Sequential(prefix="mlp_")
    with net.name_scope():
        net.add(mx.gluon.nn.Dense(5, in_units=4, activation="tanh"))
        net.add(mx.gluon.nn.Dense(3, in_units=5))
    net.initialize(mx.init.Uniform(0.5), ctx=mx.cpu())
    return net


TRAINER_OPTS = {"sgd_mom": ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01}),
                "adam": ("adam", {"learning_rate": 0.01, "wd": 0.001})}


def _trainer(mx, net, key):
    name, params = TRAINER_OPTS[key]
    return mx.gluon.Trainer(net.collect_params(), name, dict(params),
                            update_on_kvstore=False)


def _train_step(mx, net, trainer):
    x = mx.nd.array(np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4))
    with mx.autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward()
    trainer.step(8)


def build_seeds(workdir):
    """Write the seed files under ``workdir``; returns {kind: [(name, bytes), ...]} plus the
    objects the loaders need."""
    mx = _mx()
    mx.random.seed(0)          # (initial weights: the same seed files on every run)
    np.random.seed(0)
    os.makedirs(workdir, exist_ok=True)
    seeds = collections.defaultdict(list)

    def rd(p):
        with open(p, "rb") as f:
            data = f.read()
        return _fixed_zip(data) if data.startswith(b"PK") else data

    # -- nd files: dicts and lists of several dtypes, sparse, MXNet-written fixtures
    rng = np.random.RandomState(0)
    d = {f"a_{dt}": mx.nd.array(rng.uniform(-3, 3, size=(2, 3)).astype(dt), dtype=dt)
         for dt in ("float32", "float64", "float16", "int32", "int8", "uint8", "int64")}
    p = os.path.join(workdir, "seed_dict.nd")
    mx.nd.save(p, d)
    seeds["nd"].append(("dict", rd(p)))
    mx.nd.save(p, [mx.nd.arange(6).reshape((2, 3)), mx.nd.ones((4,), dtype="float16"),
                   mx.nd.zeros((1, 2, 2), dtype="int32")])
    seeds["nd"].append(("list", rd(p)))
    dense = mx.nd.array([[0, 1, 0], [2, 0, 3]])
    mx.nd.save(p, {"rsp": dense.tostype("row_sparse"), "csr": dense.tostype("csr")})
    seeds["nd"].append(("sparse", rd(p)))
    for f in ("mx_dict.params", "mx_list.params", "mx_single.params", "mx_sparse.params"):
        fp = os.path.join(FIXTURES, "nd", f)
        if os.path.exists(fp):
            seeds["nd"].append((f, rd(fp)))

    # -- a ResNet-like HybridBlock: export (symbol + params) and save_parameters
    net = _resnet_like(mx)
    prefix = os.path.join(workdir, "seed_net")
    net.export(prefix, 0)
    seeds["symbol"].append(("resnetlike", rd(prefix + "-symbol.json")))
    seeds["export_params"].append(("resnetlike", rd(prefix + "-0000.params")))
    net.save_parameters(p)
    seeds["block_params"].append(("resnetlike", rd(p)))
    net.collect_params().save(p)
    seeds["dict_params"].append(("resnetlike", rd(p)))

    # -- Trainer states: neogluon's format (SGD-momentum, Adam) and MXNet's pickles
    for key in TRAINER_OPTS:
        mlp = _mlp(mx)
        tr = _trainer(mx, mlp, key)
        _train_step(mx, mlp, tr)
        sp = os.path.join(workdir, f"seed_{key}.states")
        tr.save_states(sp)
        seeds[f"states_{key}"].append(("neogluon", rd(sp)))
        fp = os.path.join(FIXTURES, "states", f"trainer_{key}_local.states")
        if os.path.exists(fp):
            seeds[f"states_{key}"].append(("mxnet", rd(fp)))

    # -- a Module checkpoint with optimizer states
    data = mx.sym.var("data")
    fc1 = mx.sym.FullyConnected(data, num_hidden=6, name="fc1")
    act = mx.sym.Activation(fc1, act_type="relu", name="relu1")
    bn = mx.sym.BatchNorm(act, name="bn1")
    fc2 = mx.sym.FullyConnected(bn, num_hidden=3, name="fc2")
    out = mx.sym.SoftmaxOutput(fc2, name="softmax")
    mod = mx.mod.Module(out, data_names=["data"], label_names=["softmax_label"],
                        context=mx.cpu())
    mod.bind(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4,))])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1,
                                                          "momentum": 0.9})
    batch = mx.io.DataBatch([mx.nd.ones((4, 5))], [mx.nd.array([0, 1, 2, 0])])
    mod.forward_backward(batch)
    mod.update()
    mprefix = os.path.join(workdir, "seed_mod")
    mod.save_checkpoint(mprefix, 1, save_optimizer_states=True)
    seeds["mod_symbol"].append(("module", rd(mprefix + "-symbol.json")))
    seeds["mod_params"].append(("module", rd(mprefix + "-0001.params")))
    seeds["mod_states"].append(("module", rd(mprefix + "-0001.states")))
    return seeds


def _fixed_zip(blob):
    """The same .npz archive with its members' timestamps fixed (np.savez stamps the time
    of writing), so that the seeds and hence every mutation are the same on every run."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(blob)) as zin, zipfile.ZipFile(out, "w") as zout:
        for info in zin.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0))
            fixed.compress_type = info.compress_type
            zout.writestr(fixed, zin.read(info.filename))
    return out.getvalue()


# ------------------------------------------------------------------------------ mutations
def nd_fields(buf):
    """(offset, struct format) of every integer field of a valid ``nd.save`` file."""
    fields = []
    pos = [0]

    def take(fmt):
        size = struct.calcsize(fmt)
        v = struct.unpack_from(fmt, buf, pos[0])
        fields.append((pos[0], fmt))
        pos[0] += size
        return v[0]

    def shape():
        ndim = take("<i")
        dims = []
        for _ in range(max(ndim, 0)):
            dims.append(take("<q"))
        return dims

    flag_size = {0: 4, 1: 8, 2: 2, 3: 1, 4: 4, 5: 1, 6: 8, 7: 1, 8: 2, 12: 2}
    try:
        take("<Q")
        take("<Q")
        count = take("<Q")
        for _ in range(count):
            magic = take("<I")
            if magic not in (0xF993FAC9, 0xF993FACA):
                return fields
            stype = take("<i")
            sshape = shape() if stype else None
            shp = shape()
            take("<i")
            take("<i")
            flag = take("<i")
            aux = []
            for _ in range({0: 0, 1: 1, 2: 2}.get(stype, 0)):
                af = take("<i")
                aux.append((af, shape()))
            n = int(np.prod(sshape if stype else shp)) if (sshape if stype else shp) else \
                (1 if not stype else 0)
            pos[0] += n * flag_size.get(flag, 4)
            for af, s in aux:
                pos[0] += int(np.prod(s)) * flag_size.get(af, 8)
        nn = take("<Q")
        for _ in range(nn):
            ln = take("<Q")
            pos[0] += ln
    except struct.error:
        pass
    return fields


def mutate_bytes(rng, buf, fields=None):
    """One or two random binary mutations of ``buf``."""
    b = bytearray(buf)
    for _ in range(rng.choice([1, 1, 1, 2])):
        op = rng.random()
        if fields and op < 0.45:
            off, fmt = rng.choice(fields)
            size = struct.calcsize(fmt)
            if off + size > len(b):
                continue
            old = struct.unpack_from(fmt, b, off)[0]
            cand = rng.choice(_INTERESTING_INTS + [old + 1, old - 1, old * 2 + 1,
                                                   rng.randrange(0, 64)])
            bits = size * 8
            cand &= (1 << bits) - 1
            b[off:off + size] = cand.to_bytes(size, "little")
        elif op < 0.6:
            if len(b) > 1:
                del b[rng.randrange(0, len(b)):]
        elif op < 0.85:
            for _ in range(rng.randint(1, 4)):
                if b:
                    b[rng.randrange(len(b))] = rng.randrange(256)
        elif op < 0.93:
            if len(b) > 2:
                i = rng.randrange(len(b))
                del b[i:i + rng.randint(1, 16)]
        else:
            i = rng.randrange(len(b) + 1)
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    return bytes(b)


_BAD_VALUES = [None, -1, 0, 1.5, "x", "", [], {}, True, [1, 2], {"a": 1}, 2 ** 64,
               [[0, 0, 0]], "-1", [-1, 0, 0]]
_BAD_ATTRS = ["(", "(3,a)", "(-5, 2)", "(100000000000, 100000000000)", "[1e30]", "", "-1",
              "99", "float33", "None", "(0,)", "((1,2)", "1e400", "nan", "[]", "{}", "True",
              "(2 ** 70,)", "'", "\x00"]
_ATTR_KEYS = ["__shape__", "__dtype__", "__storage_type__", "__init__", "__lr_mult__",
              "kernel", "num_filter", "num_hidden", "stride", "pad", "dtype", "act_type",
              "eps", "axis", "shape", "no_bias", "layout", "global_pool", "pool_type",
              "fix_gamma", "num_group", "flatten"]
_OPS = ["Foo", "Convolution", "FullyConnected", "BatchNorm", "null", "_copy", "elemwise_add",
        "Activation", "_CachedOp", "_foreach", "Reshape", "Cast", "SoftmaxOutput"]


def _json_paths(obj, path=()):
    out = [path]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _json_paths(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _json_paths(v, path + (i,))
    return out


def _get(obj, path):
    for p in path:
        obj = obj[p]
    return obj


def mutate_graph(rng, g):
    """One or two structural mutations of a parsed symbol graph (a deep copy)."""
    g = copy.deepcopy(g)
    for _ in range(rng.choice([1, 1, 2])):
        nodes = g.get("nodes") if isinstance(g, dict) else None
        n = len(nodes) if isinstance(nodes, list) else 0
        op = rng.random()
        if op < 0.2:
            paths = [p for p in _json_paths(g) if p]
            path = rng.choice(paths)
            parent = _get(g, path[:-1])
            if rng.random() < 0.5:
                if isinstance(parent, dict):
                    del parent[path[-1]]
                else:
                    parent.pop(path[-1])
            else:
                parent[path[-1]] = copy.deepcopy(rng.choice(_BAD_VALUES))
        elif op < 0.4 and n:
            node = nodes[rng.randrange(n)]
            if isinstance(node, dict):
                ins = node.get("inputs")
                if isinstance(ins, list) and ins and isinstance(ins[0], list):
                    e = ins[rng.randrange(len(ins))]
                    which = rng.randrange(len(e)) if e else 0
                    if e:
                        e[which] = rng.choice([n, n + 5, -1, nodes.index(node),
                                               rng.randrange(n), 2 ** 40, 1, 5, "0", None])
                else:
                    node["inputs"] = [[rng.randrange(n), 0, 0]]
        elif op < 0.5 and n:
            i = rng.randrange(n)
            j = rng.randrange(i, n)   # an input of a later node: a cycle or a forward ref
            node = nodes[i]
            if isinstance(node, dict):
                node["inputs"] = list(node.get("inputs") or []) + [[j, 0, 0]]
                if node.get("op") == "null":
                    node["op"] = rng.choice(["elemwise_add", "_copy", "Activation"])
        elif op < 0.6:
            key = rng.choice(["heads", "arg_nodes", "node_row_ptr"])
            val = g.get(key) if isinstance(g, dict) else None
            if isinstance(val, list) and val:
                k = rng.randrange(len(val))
                if isinstance(val[k], list) and val[k]:
                    val[k][rng.randrange(len(val[k]))] = rng.choice([n, -1, 2 ** 40, 3, "x",
                                                                     None, 1.5, 100])
                else:
                    val[k] = rng.choice([n, -1, 2 ** 40, 0, "x", None, [0], n + 1, 10 ** 6])
            elif isinstance(g, dict):
                g[key] = rng.choice(_BAD_VALUES)
        elif op < 0.8 and n:
            node = nodes[rng.randrange(n)]
            if isinstance(node, dict):
                attrs = node.setdefault("attrs", {})
                if isinstance(attrs, dict):
                    attrs[rng.choice(_ATTR_KEYS + list(attrs))] = rng.choice(
                        _BAD_ATTRS + [str(rng.randint(-3, 9))])
        elif op < 0.88 and n:
            node = nodes[rng.randrange(n)]
            if isinstance(node, dict):
                node["op"] = rng.choice(_OPS + [rng.choice(_BAD_VALUES)])
        elif op < 0.93 and n:
            node = nodes[rng.randrange(n)]
            if isinstance(node, dict):
                node["name"] = rng.choice(_BAD_VALUES + ["data", nodes[0].get("name")
                                                         if isinstance(nodes[0], dict) else 0])
        elif isinstance(g, dict):
            attrs = g.get("attrs")
            if isinstance(attrs, dict):
                attrs["mxnet_version"] = rng.choice([["int", -1], ["int", "x"], "10901",
                                                     ["int"], None, ["int", 2 ** 70],
                                                     ["int", 905], ["int", 800]])
            else:
                g["attrs"] = rng.choice(_BAD_VALUES)
    return g


def mutate_json_text(rng, text):
    """A mutated symbol file: structural (most) or textual."""
    r = rng.random()
    if r < 0.8:
        try:
            g = json.loads(text)
        except ValueError:
            g = None
        if g is not None:
            return json.dumps(mutate_graph(rng, g)).encode("utf-8")
    raw = text.encode("utf-8") if isinstance(text, str) else text
    if r < 0.9:
        return mutate_bytes(rng, raw)
    b = bytearray(raw)
    b[rng.randrange(len(b)):rng.randrange(len(b))] = rng.choice(
        [b"\xff\xfe", b"[" * 5000, b"\x00", b"{", b"]", b'"', b"1e999", b"NaN"])
    return bytes(b)


def mutate_states(rng, blob):
    """A mutated optimizer-states file: binary, or (neogluon's .npz format) its JSON header
    or arrays restructured."""
    if blob.startswith(b"PK") and rng.random() < 0.6:
        with np.load(io.BytesIO(blob), allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        header = json.loads(arrays["__header__"].tobytes().decode("utf-8"))
        r = rng.random()
        if r < 0.75:
            for _ in range(rng.choice([1, 1, 2])):
                paths = [p for p in _json_paths(header) if p]
                path = rng.choice(paths)
                parent = _get(header, path[:-1])
                if rng.random() < 0.4:
                    if isinstance(parent, dict):
                        del parent[path[-1]]
                    else:
                        parent.pop(path[-1])
                else:
                    parent[path[-1]] = copy.deepcopy(rng.choice(
                        _BAD_VALUES + ["s0", "s99", "opt_x", "float16", "int32",
                                       {"a": "s0"}, {"t": [None]}, {"v": 1}, 1e308, -5]))
        else:
            names = [k for k in arrays if k != "__header__"]
            if names:
                k = rng.choice(names)
                arrays[k] = rng.choice([np.zeros((7,), np.float32), np.zeros((), np.float64),
                                        np.zeros((2, 2), np.int32),
                                        arrays[k].astype(np.float16),
                                        np.zeros((0,), np.float32)])
                if rng.random() < 0.3:
                    del arrays[k]
        arrays["__header__"] = np.frombuffer(json.dumps(header).encode("utf-8"),
                                             dtype=np.uint8)
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        return buf.getvalue()
    return mutate_bytes(rng, blob)


# ------------------------------------------------------------------------------ snapshots
def snap_block(block):
    out = {}
    for name, p in block.collect_params().items():
        if p._data is None:
            out[name] = (None, p.shape, str(p.dtype), p._deferred_init is not None and
                         bool(p._deferred_init))
        else:
            out[name] = ([a.asnumpy().copy() for a in p._data], p.shape, str(p.dtype),
                         p.name)
    return out


def same_snap(a, b):
    if a.keys() != b.keys():
        return False
    for k in a:
        va, vb = a[k], b[k]
        if va[1:] != vb[1:]:
            return False
        if (va[0] is None) != (vb[0] is None):
            return False
        if va[0] is not None:
            if len(va[0]) != len(vb[0]):
                return False
            for x, y in zip(va[0], vb[0]):
                if x.shape != y.shape or x.dtype != y.dtype or not np.array_equal(
                        x, y, equal_nan=True):
                    return False
    return True


def _flat_state(s):
    from neogluon.ndarray.ndarray import NDArray
    if s is None:
        return None
    if isinstance(s, NDArray):
        return ("nd", s.asnumpy().copy(), str(s.dtype))
    if isinstance(s, (tuple, list)):
        return (type(s).__name__, [_flat_state(x) for x in s])
    return ("v", repr(s))


def snap_trainer(trainer):
    opt = trainer._optimizer
    ups = []
    for u in trainer._updaters:
        ups.append((id(u.optimizer), {k: _flat_state(v) for k, v in u.states.items()}))
    cfg = {k: repr(v) for k, v in vars(opt).items() if isinstance(
        v, (int, float, str, bool, type(None)))}
    counts = repr(opt._all_index_update_counts)
    return (id(opt), cfg, counts, ups)


def _eq_state(a, b):
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple) and a and a[0] == "nd":
        return a[2] == b[2] and a[1].shape == b[1].shape and np.array_equal(
            a[1], b[1], equal_nan=True)
    if isinstance(a, tuple) and len(a) == 2 and isinstance(a[1], list):
        return a[0] == b[0] and len(a[1]) == len(b[1]) and all(
            _eq_state(x, y) for x, y in zip(a[1], b[1]))
    return a == b


def same_trainer(a, b):
    if a[:3] != b[:3] or len(a[3]) != len(b[3]):
        return False
    for (ida, sa), (idb, sb) in zip(a[3], b[3]):
        if ida != idb or sa.keys() != sb.keys():
            return False
        if not all(_eq_state(sa[k], sb[k]) for k in sa):
            return False
    return True


# ------------------------------------------------------------------------------ runner
EXPECTED_TYPES = (AssertionError, ValueError)


def classify(err, fname, expected_ok=False):
    """The outcome class of an exception raised by a loader of ``fname``."""
    from neogluon.base import MXNetError
    msg = str(err)
    names_file = fname is None or os.path.basename(fname) in msg
    if isinstance(err, MXNetError):
        if not names_file:
            return "INTERNAL", f"MXNetError without the file name: {msg[:200]}"
        return "MXNetError", None
    if expected_ok and type(err) in EXPECTED_TYPES and "Parameter" in msg:
        if not names_file:
            return "INTERNAL", f"{type(err).__name__} without the file name: {msg[:200]}"
        return "expected-type", None
    return "INTERNAL", f"{type(err).__name__}: {msg[:200]}"


class Fuzzer:
    def __init__(self, workdir, seed=0):
        self.mx = _mx()
        self.workdir = workdir
        self.rng = random.Random(seed)
        self.seeds = build_seeds(os.path.join(workdir, "seeds"))
        self.fields = {}
        for kind in ("nd", "block_params", "dict_params", "export_params", "mod_params"):
            for name, b in self.seeds[kind]:
                self.fields[(kind, name)] = nd_fields(b)
        mx = self.mx
        self.net = _resnet_like(mx)
        self.block_seed = self._path("block_seed.params")
        with open(self.block_seed, "wb") as f:
            f.write(self.seeds["block_params"][0][1])
        self.net.load_parameters(self.block_seed)
        self.trainers = {}
        for key in TRAINER_OPTS:
            mlp = _mlp(mx)
            tr = _trainer(mx, mlp, key)
            _train_step(mx, mlp, tr)   # states exist before each load
            self.trainers[key] = (mlp, tr)

    def _path(self, name):
        return os.path.join(self.workdir, name)

    def _write(self, name, data):
        p = self._path(name)
        with open(p, "wb") as f:
            f.write(data)
        return p

    def _bin(self, kind):
        name, b = self.rng.choice(self.seeds[kind])
        return mutate_bytes(self.rng, b, self.fields.get((kind, name)))

    # one case per call: returns (outcome, detail)
    def case(self, kind):
        return getattr(self, "case_" + kind)()

    def _run(self, fn, fname, expected_ok=False, check=None):
        from neogluon.base import MXNetError  # noqa: F401
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn()
        except RecursionError as err:
            return "INTERNAL", f"RecursionError: {str(err)[:200]}"
        except Exception as err:  # noqa: BLE001 - the fuzzer classifies every exception
            outcome = classify(err, fname, expected_ok)
            if outcome[0] == "INTERNAL" and os.environ.get("FUZZ_TRACEBACK"):
                import traceback
                traceback.print_exc()
            if check is not None and not check():
                return "INTERNAL", (f"state changed by a failed load ({type(err).__name__}: "
                                    f"{str(err)[:150]})")
            return outcome
        return "ok", None

    def case_nd_load(self):
        data = self._bin("nd")
        if self.rng.random() < 0.2:
            return self._run(lambda: self.mx.nd.load_frombuffer(data), "<buffer>")
        p = self._write("fuzz.nd", data)
        return self._run(lambda: self.mx.nd.load(p), p)

    def _block_case(self, loader):
        net = self.net
        before = snap_block(net)
        out = self._run(loader, self._last, expected_ok=True,
                        check=lambda: same_snap(before, snap_block(net)))
        if out[0] == "ok":
            net.load_parameters(self.block_seed)
        return out

    def case_load_parameters(self):
        p = self._last = self._write("fuzz_block.params", self._bin("block_params"))
        return self._block_case(lambda: self.net.load_parameters(p))

    def case_params_load(self):
        p = self._last = self._write("fuzz_dict.params", self._bin("dict_params"))
        return self._block_case(lambda: self.net.collect_params().load(p))

    def case_trainer_states(self):
        key = self.rng.choice(sorted(TRAINER_OPTS))
        name, blob = self.rng.choice(self.seeds[f"states_{key}"])
        p = self._write(f"fuzz_{key}.states", mutate_states(self.rng, blob))
        _, tr = self.trainers[key]
        before = snap_trainer(tr)
        out = self._run(lambda: tr.load_states(p), p,
                        check=lambda: same_trainer(before, snap_trainer(tr)))
        if out[0] == "ok":
            # a successful load replaces the optimizer: start the next case from a fresh one
            mlp = _mlp(self.mx)
            tr = _trainer(self.mx, mlp, key)
            _train_step(self.mx, mlp, tr)
            self.trainers[key] = (mlp, tr)
        return out

    def _sym_text(self, kind="symbol"):
        _, b = self.rng.choice(self.seeds[kind])
        return mutate_json_text(self.rng, b.decode("utf-8"))

    def case_symbol(self):
        data = self._sym_text()
        if self.rng.random() < 0.2:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                text = data.decode("latin-1")
            return self._run(lambda: self.mx.sym.load_json(text), None)
        p = self._write("fuzz-symbol.json", data)
        return self._run(lambda: self.mx.sym.load(p), p)

    def case_imports(self):
        sym_ok = self.seeds["symbol"][0][1]
        par_ok = self.seeds["export_params"][0][1]
        r = self.rng.random()
        sym = self._sym_text() if r < 0.7 else sym_ok
        par = self._bin("export_params") if r >= 0.7 else par_ok
        sp = self._write("fuzz_imp-symbol.json", sym)
        pp = self._write("fuzz_imp-0000.params", par)
        blk = self.mx.gluon.SymbolBlock
        res = self._run(lambda: blk.imports(sp, ["data"], pp), None, expected_ok=True)
        if res[0] in ("MXNetError", "expected-type") or res[0] == "INTERNAL":
            # the error must name the file at fault
            try:
                blk.imports(sp, ["data"], pp)
            except Exception as err:  # noqa: BLE001
                msg = str(err)
                if res[0] != "INTERNAL" and os.path.basename(sp) not in msg and \
                        os.path.basename(pp) not in msg:
                    return "INTERNAL", (f"{type(err).__name__} without the file name: "
                                        f"{msg[:200]}")
        return res

    def _checkpoint_files(self):
        r = self.rng.random()
        sym = self._sym_text("mod_symbol") if r < 0.5 else self.seeds["mod_symbol"][0][1]
        par = self._bin("mod_params") if 0.5 <= r < 0.8 else self.seeds["mod_params"][0][1]
        st = self.seeds["mod_states"][0][1]
        if r >= 0.8:
            st = mutate_states(self.rng, st)
        prefix = self._path("fuzz_ck")
        files = {"sym": self._write("fuzz_ck-symbol.json", sym),
                 "par": self._write("fuzz_ck-0001.params", par),
                 "st": self._write("fuzz_ck-0001.states", st)}
        fault = files["sym"] if r < 0.5 else files["par"] if r < 0.8 else files["st"]
        return prefix, fault, r >= 0.8

    def case_checkpoint(self):
        prefix, fault, states = self._checkpoint_files()
        if states:
            fault = None
        return self._run(lambda: self.mx.model.load_checkpoint(prefix, 1), fault)

    def case_module_load(self):
        """Module.load (names the file at fault); then bind (a model the files describe but
        that cannot run with these shapes: MXNetError, no file to name); then init_optimizer,
        which reads the .states file (names it)."""
        prefix, fault, states = self._checkpoint_files()
        mx = self.mx
        mod = []

        def load():
            mod.append(mx.mod.Module.load(prefix, 1, load_optimizer_states=True,
                                          data_names=["data"], label_names=["softmax_label"],
                                          context=mx.cpu()))
        out = self._run(load, None if states else fault)
        if out[0] != "ok":
            return out
        out = self._run(lambda: mod[0].bind(data_shapes=[("data", (4, 5))],
                                            label_shapes=[("softmax_label", (4,))]), None)
        if out[0] != "ok":
            return out
        return self._run(lambda: mod[0].init_optimizer(
            optimizer="sgd", optimizer_params={"learning_rate": 0.1, "momentum": 0.9}),
            fault if states else None)


def run(n, seed=0, kinds=None, verbose=False, out=sys.stdout):
    kinds = kinds or KINDS
    with tempfile.TemporaryDirectory(prefix="neogluon-fuzz-") as tmp:
        fz = Fuzzer(tmp, seed)
        tally = {}
        bad = []
        for kind in kinds:
            fz.rng = random.Random(f"{seed}-{kind}")
            counts = collections.Counter()
            for i in range(n):
                outcome, detail = fz.case(kind)
                counts[outcome] += 1
                if outcome == "INTERNAL":
                    bad.append((kind, i, detail))
                    if verbose:
                        print(f"  {kind}#{i}: {detail}", file=out)
            tally[kind] = counts
            print(f"{kind:16s} " + "  ".join(
                f"{k}={counts[k]}" for k in ("ok", "MXNetError", "expected-type", "INTERNAL")),
                file=out, flush=True)
        if bad:
            print(f"\n{len(bad)} INTERNAL outcomes:", file=out)
            kinds_seen = collections.Counter(d.split(":")[0] + ":" + d.split(":")[1][:60]
                                             if ":" in d else d for _, _, d in bad)
            for d, c in kinds_seen.most_common(40):
                print(f"  {c:5d}  {d}", file=out)
        return tally, bad


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2000, help="cases per loader kind")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    _, bad = run(args.n, args.seed, args.kinds.split(","), args.verbose)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
