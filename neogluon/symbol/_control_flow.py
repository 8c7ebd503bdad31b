"""Symbolic control flow: ``mx.sym.contrib.foreach`` / ``while_loop`` / ``cond`` and
``mx.sym._internal._CachedOp``.

As in MXNet 1.9.1, each control-flow call traces the Python functions it is given once, on
fresh variables, inside ``AttrScope(__subgraph_name__=<unique name>)``, and records one graph
node (``_foreach``, ``_while_loop``, ``_cond``) that holds the traced computations as
subgraphs (``node.subgraphs``, Symbols). Nodes the functions use but did not create (symbols
from outside) are cut from the subgraphs: they become subgraph variables named after the
outer output (``<node>_output``, or the variable's name) and inputs of the control-flow node.
The node's attributes (``in_data_locs``, ``cond_input_locs``...) say which subgraph input
each node input feeds, as MXNet writes them, so the graphs round-trip through MXNet's JSON.

Evaluation runs the subgraphs with the nd operators (the loop in Python, as MXNet's
imperative versions do), so autograd differentiates through it like any other nd code. Shape
and type inference run the subgraphs' inference with the shapes the node's inputs and outputs
have, both ways, until nothing changes.

``_CachedOp(*inputs, subgraph=json)`` is a node computing a whole JSON graph on its inputs
(given in the graph's ``list_inputs()`` order); its outputs are named
``<node>_<graph output>`` and the graph's auxiliary states stay auxiliary states.
"""
from __future__ import annotations

import copy

from ..attribute import AttrScope
from ..base import MXNetError, MXNetValueError
from ..name import NameManager
from . import symbol as _s
from .symbol import Symbol, _Node

CONTROL_OPS = ("_foreach", "_while_loop", "_cond")
GRAPH_OPS = CONTROL_OPS + ("_CachedOp",)
_SG_KEY = "__subgraph_name__"


class _Invalid(MXNetError, AssertionError):
    """Malformed control-flow arguments (MXNet's contrib module asserts: AssertionError)."""


# ---------------------------------------------------------------------------- helpers
def _flatten(args, what):
    """``(flat list of Symbols, format)`` of a Symbol or nested lists of Symbols (a Symbol's
    format is its number of outputs when it has several, else 0), as MXNet's contrib
    module flattens them."""
    if isinstance(args, Symbol):
        n = len(args.list_outputs())
        return [args], n if n > 1 else 0
    if not isinstance(args, (list, tuple)):
        raise _Invalid(f"{what} must be a (nested) list of Symbol, but got {args!r} of type "
                         f"{type(args).__name__}")
    flat, fmts = [], []
    for a in args:
        f, m = _flatten(a, what)
        flat.extend(f)
        fmts.append(m)
    return flat, fmts


def _regroup(args, fmt):
    if isinstance(fmt, int):
        if fmt == 0:
            return args[0], args[1:]
        return args[:fmt], args[fmt:]
    if not isinstance(args, (list, tuple)):
        raise _Invalid(f"output must be (nested) list of Symbol, but got {args!r}")
    ret = []
    for f in fmt:
        res, args = _regroup(args, f)
        ret.append(res)
    return ret, args


def _check_symbols(flat, what):
    for s in flat:
        if not isinstance(s, Symbol):
            raise _Invalid(f"{what} should be a symbol or a nested list of symbols, got "
                             f"{type(s).__name__}")


def _uniq_name(sym):
    """The name of the subgraph variable standing for ``sym`` (``<name>-<output index>``)."""
    node, i = sym._outputs[0]
    return f"{node.name}-{i}"


def _unique_subgraph_name(name):
    """``name`` numbered by how many subgraphs had it (``foreach0``, ``foreach1``...), under
    the enclosing subgraph's name when nested (``outer0$foreach0``), counted in
    ``AttrScope._subgraph_names`` as MXNet counts them."""
    outer = AttrScope._active().get(None).get(_SG_KEY, "")
    if outer:
        name = f"{outer}${name}"
    AttrScope._subgraph_names[name] += 1
    return f"{name}{AttrScope._subgraph_names[name] - 1}"


def _sg_name(node):
    return (node.attrs if node.is_var else node.extra).get(_SG_KEY, "")


def _identity(sym):
    return _s._op_function("identity")(sym)


def _graph_of(outputs, sub_name):
    """A Group of ``outputs`` where every output that is an input of the group or was not
    made inside the subgraph goes through ``identity`` (a subgraph's outputs are operators of
    its own)."""
    all_inputs = set(_s.Group(list(outputs)).list_inputs()) if outputs else set()
    flat = []
    for o in outputs:
        if o.name in all_inputs or _sg_name(o._outputs[0][0]) != sub_name:
            flat.append(_identity(o))
        else:
            flat.append(o)
    return _s.Group(flat) if flat else Symbol([])


def _foreach_graph(sym_out, sym_states, sub_name):
    """MXNet's foreach rule: outputs get ``identity`` when they are inputs or outside the
    subgraph; states also when they share a name with an output."""
    everything = list(sym_out) + list(sym_states)
    all_inputs = set(_s.Group(everything).list_inputs()) if everything else set()
    out_names = {o.name for o in sym_out}
    flat = []
    for o in sym_out:
        inside = _sg_name(o._outputs[0][0]) == sub_name
        flat.append(_identity(o) if o.name in all_inputs or not inside else o)
    for s in sym_states:
        inside = _sg_name(s._outputs[0][0]) == sub_name
        flat.append(_identity(s) if s.name in all_inputs or s.name in out_names or not inside
                    else s)
    return _s.Group(flat) if flat else Symbol([])


def _entry_name(node, i):
    if node.is_var:
        return node.name
    vis = _s._visible(node)
    return vis[i] if i < len(vis) else f"{node.name}_output{i}"


def _cut(graph, sub_name):
    """``(subgraph, {cut variable name: outer entry})``: ``graph``'s nodes made inside the
    subgraph ``sub_name`` (copied), every input coming from elsewhere replaced by a variable
    named after it."""
    copies, cut_vars, cut = {}, {}, {}
    for node in graph._order():
        if node.is_var or _sg_name(node) != sub_name:
            continue
        ins = []
        for src, i in node.inputs:
            if id(src) in copies:
                ins.append((copies[id(src)], i))
            elif src.is_var and _sg_name(src) == sub_name:
                copies[id(src)] = src      # a variable made inside: kept
                ins.append((src, i))
            else:
                key = (id(src), i)
                v = cut_vars.get(key)
                if v is None:
                    name = _entry_name(src, i)
                    v = cut_vars[key] = _Node("null", name, {})
                    cut[name] = (src, i)
                ins.append((v, 0))
        c = _Node.__new__(_Node)
        for slot in _Node.__slots__:
            setattr(c, slot, getattr(node, slot))
        c.inputs = ins
        copies[id(node)] = c
    heads = []
    for node, i in graph._outputs:
        if id(node) not in copies:
            raise _Invalid(f"control flow: the output {node.name!r} of the subgraph "
                             f"{sub_name!r} is not computed inside it")
        heads.append((copies[id(node)], i))
    return Symbol(heads), cut


def _input_names(sub, what):
    names = sub.list_inputs()
    if len(set(names)) != len(names):
        raise _Invalid(f"{what}: the inputs of the subgraph don't have unique names: {names}")
    return names


def _scope_extra(op):
    """The current AttrScope's attributes for a new ``op`` node (``__key__`` ones only: the
    others would be operator arguments, which these operators do not take)."""
    extra, plain = _s._scoped_attrs(None)
    if plain:
        raise MXNetError(f"operator {op!r}: attribute(s) {sorted(plain)} from the AttrScope are "
                         "not arguments of the operator; user attributes are written __name__")
    return extra


def _make_graph_node(op, subgraphs, entries, attrs, name=None):
    """A node of ``op`` holding ``subgraphs`` with inputs ``entries``; ``attrs`` as MXNet
    writes them (num_args counts the subgraphs too)."""
    attrs = dict(attrs)
    attrs["num_args"] = len(entries) + len(subgraphs)
    raw = {k: str(list(v)) if isinstance(v, (list, tuple)) else str(v)
           for k, v in attrs.items()}
    extra = _scope_extra(op)
    node_name = NameManager.current.get(name, op.lower())
    node = _Node(op, node_name, attrs, entries, raw=raw, extra=extra,
                 subgraphs=list(subgraphs))
    return node


class _OuterInputs:
    """The inputs of a control-flow node, each outer entry once, in order of first use."""

    def __init__(self):
        self.entries = []
        self.loc = {}
        self.var_copies = {}

    def add(self, entry):
        key = (id(entry[0]), entry[1])
        loc = self.loc.get(key)
        if loc is None:
            loc = self.loc[key] = len(self.entries)
            self.entries.append(entry)
        return loc

    def copy_var(self, sub, name):
        """The outer input for a variable the traced function made itself (MXNet passes a
        copy of it, by name, into the enclosing graph)."""
        node = next(n for n in sub._order() if n.is_var and n.name == name)
        c = self.var_copies.get(id(node))
        if c is None:
            c = self.var_copies[id(node)] = _Node("null", node.name, dict(node.attrs))
        return (c, 0)


# ---------------------------------------------------------------------------- foreach
def foreach(body, data, init_states, name="foreach"):
    """Symbolic foreach: ``out, states = body(data_slice, states)`` over axis 0 of ``data``.

    Parameters
    ----------
    body : callable
        ``body(data, states) -> (outputs, new_states)`` on Symbols (``data`` has the nesting
        of ``data``, ``states`` that of ``init_states``).
    data : Symbol or nested list of Symbols
    init_states : Symbol or nested list of Symbols
    name : str
        Base of the subgraph's name.

    Returns
    -------
    (outputs, states): the outputs stacked along a new axis 0 and the final states, with the
    nesting ``body`` returned them in.
    """
    flat_data, data_fmt = _flatten(data, "foreach input")
    _check_symbols(flat_data, "data")
    flat_states, state_fmt = _flatten(init_states, "foreach states")
    _check_symbols(flat_states, "init_states")
    sub_name = _unique_subgraph_name(name)
    with AttrScope(**{_SG_KEY: sub_name}):
        in_eles = [_s.var(_uniq_name(s)) for s in flat_data]
        in_eles, _ = _regroup(in_eles, data_fmt)
        states = [_s.var(_uniq_name(s)) for s in flat_states]
        states, _ = _regroup(states, copy.deepcopy(state_fmt))
        sym_out, sym_states = body(in_eles, states)
        sym_out, out_fmt = _flatten(sym_out, "foreach output")
        sym_states, new_state_fmt = _flatten(sym_states, "foreach loop_vars")
        if new_state_fmt != state_fmt:
            raise _Invalid("foreach: the input and output loop_vars have different format")
        _check_symbols(sym_out, "the output")
        _check_symbols(sym_states, "the output states")
        n_out, n_states = len(sym_out), len(sym_states)
        graph = _foreach_graph(sym_out, sym_states, sub_name)
    sub, cut = _cut(graph, sub_name)
    names = _input_names(sub, "foreach")
    data_names = [_uniq_name(s) for s in flat_data]
    state_names = [_uniq_name(s) for s in flat_states]
    ins = _OuterInputs()
    in_data_locs, in_state_locs, remain_locs = [], [], []
    for dname in data_names:
        if dname not in names:
            raise _Invalid("foreach: the data arrays have to be used in the loop body")
        in_data_locs.append(names.index(dname))
    for sname in state_names:
        if sname not in names:
            raise _Invalid("foreach: the state arrays have to be used in the loop body")
        in_state_locs.append(names.index(sname))
    entries = [_s._entry(s, "foreach") for s in flat_data + flat_states]
    for j, n in enumerate(names):
        if n in cut:
            entries.append(cut[n])
            remain_locs.append(j)
        elif n not in data_names and n not in state_names:
            entries.append(ins.copy_var(sub, n))
            remain_locs.append(j)
    node = _make_graph_node("_foreach", [sub], entries, {
        "in_data_locs": in_data_locs, "in_state_locs": in_state_locs,
        "num_out_data": n_out, "num_outputs": n_out + n_states, "remain_locs": remain_locs})
    outs, _ = _regroup([Symbol([(node, i)]) for i in range(n_out)], out_fmt)
    states, _ = _regroup([Symbol([(node, n_out + i)]) for i in range(n_states)], state_fmt)
    return outs, states


# ---------------------------------------------------------------------------- while_loop
def _trace(graph_vars, fn, sub_name, uniq=True):
    """Trace ``fn`` on new variables standing for ``graph_vars`` inside the subgraph scope:
    ``(graph, fn's result)``, ``fn`` returning ``(outputs, states, out_fmt, var_fmt)``."""
    sub_name = _unique_subgraph_name(sub_name)
    with AttrScope(**{_SG_KEY: sub_name}):
        flat, fmt = _flatten(graph_vars, "while loop_vars")
        new_vars = [_s.var(_uniq_name(s) if uniq else s.name) for s in flat]
        new_vars, _ = _regroup(new_vars, fmt)
        res = fn(new_vars)
        outputs = list(res[0]) + list(res[1])
        graph = _graph_of(outputs, sub_name)
    return graph, sub_name, res


def _union(graphs, named_vars):
    """The node inputs of several traced subgraphs: ``(inputs, [input locations per
    graph])``; ``named_vars`` maps the subgraph variable names standing for outer symbols
    to those symbols."""
    ins = _OuterInputs()
    all_locs = []
    for sub, cut in graphs:
        locs = []
        for n in _input_names(sub, "control flow"):
            if n in named_vars:
                entry = _s._entry(named_vars[n], "control flow")
            elif n in cut:
                entry = cut[n]
            else:
                entry = ins.copy_var(sub, n)
            locs.append(ins.add(entry))
        all_locs.append(locs)
    return ins.entries, all_locs


def while_loop(cond, func, loop_vars, max_iterations=None, name="while_loop"):
    """Symbolic while loop: while ``cond(*loop_vars)`` (at most ``max_iterations`` times),
    ``step_output, loop_vars = func(*loop_vars)``.

    Returns
    -------
    (outputs, states): the step outputs stacked along axis 0 (``max_iterations`` rows; rows
    past the last step are zeros) and the final loop variables.
    """
    def to_int(v, what):
        if hasattr(v, "asscalar"):
            v = v.asscalar()
        try:
            return int(v)
        except (TypeError, ValueError):
            raise MXNetValueError(f"Cannot convert {what} to python int") from None

    def cond_wrapper(vars_):
        result = cond(*vars_)
        if not isinstance(result, Symbol):
            raise MXNetValueError("Return of cond must be a Symbol")
        return [], [result], [], []

    def func_wrapper(vars_):
        step_output, new_loop_vars = func(*vars_)
        step_output = [] if step_output is None else step_output
        new_loop_vars = [] if new_loop_vars is None else new_loop_vars
        if isinstance(step_output, tuple):
            step_output = list(step_output)
        if isinstance(new_loop_vars, tuple):
            new_loop_vars = list(new_loop_vars)
        step_output, out_fmt = _flatten(step_output, "while output")
        new_loop_vars, var_fmt = _flatten(new_loop_vars, "while loop_vars")
        if len(vars_) != len(new_loop_vars):
            raise MXNetValueError("The number of loop_vars should be consistent during the loop")
        return step_output, new_loop_vars, out_fmt, var_fmt

    flat_vars, var_fmt = _flatten(loop_vars, "while loop_vars")
    _check_symbols(flat_vars, "loop_vars")
    if max_iterations is None:
        raise MXNetValueError("max_iterations should be specified")
    max_iterations = to_int(max_iterations, "max_iteration")
    if len(loop_vars) == 0:
        raise MXNetValueError("loop_vars should contain at least one element")
    cond_graph, cond_name, _ = _trace(loop_vars, cond_wrapper, name + "_cond")
    if len(cond_graph._outputs) != 1:
        raise MXNetValueError("while_loop: cond must return a single output")
    func_graph, func_name, (outputs, states, out_fmt, _) = \
        _trace(loop_vars, func_wrapper, name + "_func")
    n_out, n_outputs = len(outputs), len(outputs) + len(states)
    cond_sub, cond_cut = _cut(cond_graph, cond_name)
    func_sub, func_cut = _cut(func_graph, func_name)
    by_uniq = {_uniq_name(s): s for s in flat_vars}
    inputs, (cond_locs, func_locs) = _union([(cond_sub, cond_cut), (func_sub, func_cut)],
                                            by_uniq)
    func_names = func_sub.list_inputs()
    var_locs = []
    for k, s in enumerate(flat_vars, 1):
        u = _uniq_name(s)
        if u not in func_names:
            raise MXNetValueError(f"The {k}-th loop_var doesn't involve into the computation")
        var_locs.append(func_names.index(u))
    node = _make_graph_node("_while_loop", [cond_sub, func_sub], inputs, {
        "cond_input_locs": cond_locs, "func_input_locs": func_locs,
        "func_var_locs": var_locs, "max_iterations": max_iterations,
        "num_out_data": n_out, "num_outputs": n_outputs})
    outs, _ = _regroup([Symbol([(node, i)]) for i in range(n_out)], out_fmt)
    final, _ = _regroup([Symbol([(node, i)]) for i in range(n_out, n_outputs)], var_fmt)
    return outs, final


# ---------------------------------------------------------------------------- cond
def cond(pred, then_func, else_func, name="cond"):
    """Symbolic if-then-else: ``then_func()`` where the scalar ``pred`` is true, else
    ``else_func()``; both return the same number of Symbols (nested lists allowed).

    Returns
    -------
    Symbol or nested list of Symbols: the chosen branch's outputs.
    """
    def branch(fn):
        def run(_):
            outs, fmt = _flatten(fn(), "cond outputs")
            return outs, [], fmt, None
        return run

    pred_graph, pred_name, (pred_outs, _, _, _) = _trace([], branch(lambda: pred),
                                                       name + "_pred", uniq=False)
    if len(pred_outs) != 1:
        raise MXNetValueError("pred should always be a single output")
    then_graph, then_name, (then_outs, _, then_fmt, _) = _trace([], branch(then_func),
                                                               name + "_then", uniq=False)
    else_graph, else_name, (else_outs, _, _, _) = _trace([], branch(else_func),
                                                       name + "_else", uniq=False)
    if len(then_outs) != len(else_outs):
        raise MXNetValueError("Number of outputs differs between then-branch and else-branch")
    subs = [_cut(pred_graph, pred_name), _cut(then_graph, then_name),
            _cut(else_graph, else_name)]
    inputs, (cond_locs, then_locs, else_locs) = _union(subs, {})
    n = len(then_outs)
    node = _make_graph_node("_cond", [s for s, _ in subs], inputs, {
        "cond_input_locs": cond_locs, "else_input_locs": else_locs, "num_outputs": n,
        "then_input_locs": then_locs})
    outs, _ = _regroup([Symbol([(node, i)]) for i in range(n)], then_fmt)
    return outs


# ---------------------------------------------------------------------------- _internal
def _sym_internal(op):
    """``mx.sym._internal._foreach`` / ``_while_loop`` / ``_cond``: the node over given
    subgraph Symbols and inputs, with MXNet's attributes."""
    n_graphs = {"_foreach": 1, "_while_loop": 2, "_cond": 3}[op]

    def make(*args, name=None, **attrs):
        graphs, inputs = args[:n_graphs], args[n_graphs:]
        if len(graphs) != n_graphs or not all(isinstance(g, Symbol) for g in graphs):
            raise MXNetError(f"{op}: the first {n_graphs} argument(s) must be the subgraph "
                             "Symbol(s)")
        entries = [_s._entry(s, op) for s in inputs]
        attrs.pop("num_args", None)
        node = _make_graph_node(op, graphs, entries, attrs, name=name)
        return Symbol([(node, i) for i in range(node.nout)])
    make.__name__ = op
    return make


def cached_op(*args, subgraph=None, name=None, **kwargs):
    """``mx.sym._internal._CachedOp(*inputs, subgraph=json)``: one node computing the JSON
    graph ``subgraph`` on ``inputs`` (in the graph's ``list_inputs()`` order)."""
    if kwargs:
        raise MXNetError(f"_CachedOp: unknown argument(s) {sorted(kwargs)}")
    if not isinstance(subgraph, str):
        raise MXNetError("_CachedOp: subgraph must be the JSON text of a symbol graph "
                         f"(Symbol.tojson()), got {type(subgraph).__name__}")
    sub = _s.load_json(subgraph)
    names = sub.list_inputs()
    if len(args) != len(names):
        raise MXNetError(f"_CachedOp: the subgraph has {len(names)} inputs "
                         f"({', '.join(names)}) but {len(args)} were given")
    entries = [_s._entry(a, "_CachedOp") for a in args]
    node = _Node("_CachedOp", NameManager.current.get(name, "_cachedop"),
                 {"subgraph": subgraph}, entries, raw={"subgraph": subgraph},
                 extra=_scope_extra("_CachedOp"),
                 subgraphs=[sub])
    node.nout = len(sub._outputs)
    return Symbol([(node, i) for i in range(node.nout)])


INTERNAL = {"_foreach": _sym_internal("_foreach"), "_while_loop": _sym_internal("_while_loop"),
            "_cond": _sym_internal("_cond"), "_CachedOp": cached_op}


# ---------------------------------------------------------------------------- structure
def num_outputs(op, attrs):
    if op in CONTROL_OPS:
        return int(attrs.get("num_outputs", 1))
    return 1


def visible(node):
    """Output names of a _CachedOp node: ``<node>_<subgraph output>``."""
    return [f"{node.name}_{o}" for o in node.subgraphs[0].list_outputs()]


def mutated(node):
    """Inputs of a _CachedOp node that are auxiliary states of its subgraph."""
    sub = node.subgraphs[0]
    aux = set(sub.list_auxiliary_states())
    return tuple(j for j, n in enumerate(sub.list_inputs()) if n in aux)


def contains(symbol, ops):
    """Whether ``symbol``'s graph (subgraphs included) has a node of one of ``ops``."""
    stack = [symbol]
    while stack:
        sym = stack.pop()
        for node in sym._order():
            if node.op in ops:
                return True
            if node.subgraphs and node.op in GRAPH_OPS:
                stack.extend(g for g in node.subgraphs if isinstance(g, Symbol))
    return False


# ---------------------------------------------------------------------------- evaluation
def _names(sub):
    return [n.name for n in _s._plan(sub).var_nodes]


def _run(sub, values, F, ctx):
    return _s._evaluate(sub, dict(zip(_names(sub), values)), F=F, ctx=ctx)


def _scalar_true(x, what):
    if x.size != 1:
        raise MXNetError(f"{what} must be a scalar (one element), got shape {x.shape}")
    return bool(x.asscalar())


def _eval_foreach(node, vals, F, ctx):
    a = node.attrs
    sub = node.subgraphs[0]
    data_locs, state_locs = list(a["in_data_locs"]), list(a["in_state_locs"])
    remain_locs, n_out = list(a["remain_locs"]), int(a["num_out_data"])
    nd_, ns = len(data_locs), len(state_locs)
    data, states, rest = vals[:nd_], list(vals[nd_:nd_ + ns]), vals[nd_ + ns:]
    args = [None] * len(_names(sub))
    for loc, v in zip(remain_locs, rest):
        args[loc] = v
    if not data:
        raise MXNetError(f"_foreach (node {node.name!r}): no data to iterate over")
    length = data[0].shape[0] if data[0].ndim else 0
    for d in data[1:]:
        if (d.shape[0] if d.ndim else 0) != length:
            raise MXNetError(f"_foreach (node {node.name!r}): the data arrays differ in length "
                             f"along axis 0: {[tuple(x.shape) for x in data]}")
    steps = [[] for _ in range(n_out)]
    for t in range(length):
        for loc, d in zip(data_locs, data):
            args[loc] = d[t]
        for loc, s in zip(state_locs, states):
            args[loc] = s
        outs = _run(sub, args, F, ctx)
        for k in range(n_out):
            steps[k].append(outs[k])
        states = outs[n_out:]
    if length == 0:
        raise MXNetError(f"_foreach (node {node.name!r}): the data has no entries along axis 0")
    return [F.stack(*col, axis=0) for col in steps] + list(states)


def _step_shapes(sub, values):
    """Shapes and dtypes of ``sub``'s outputs for inputs like ``values`` (by inference)."""
    names = _names(sub)
    info = _s._Inference(sub, {n: tuple(v.shape) for n, v in zip(names, values)},
                         {n: _s._dtype_name(v.dtype) for n, v in zip(names, values)}).run()
    res = []
    for node, i in sub._outputs:
        shp = info.shape.get((id(node), i))
        if shp is None:
            raise MXNetError("_while_loop: the loop ran no step and the shapes of its outputs "
                             "cannot be inferred")
        res.append((shp, info.dtype.get((id(node), i)) or "float32"))
    return res


def _eval_while(node, vals, F, ctx):
    a = node.attrs
    cond_sub, func_sub = node.subgraphs[0], node.subgraphs[1]
    cond_locs, func_locs = list(a["cond_input_locs"]), list(a["func_input_locs"])
    var_locs, n_out = list(a["func_var_locs"]), int(a["num_out_data"])
    max_it = int(a["max_iterations"])
    vals = list(vals)
    steps = [[] for _ in range(n_out)]
    n = 0
    while n < max_it and _scalar_true(_run(cond_sub, [vals[j] for j in cond_locs], F, ctx)[0],
                                      f"_while_loop (node {node.name!r}): cond's output"):
        outs = _run(func_sub, [vals[j] for j in func_locs], F, ctx)
        for k in range(n_out):
            steps[k].append(outs[k])
        for k, loc in enumerate(var_locs):
            vals[func_locs[loc]] = outs[n_out + k]
        n += 1
    results = []
    if n_out:
        if n == 0:
            shapes = _step_shapes(func_sub, [vals[j] for j in func_locs])[:n_out]
            for shp, dt in shapes:
                results.append(F.zeros((max_it,) + tuple(shp), ctx=ctx, dtype=dt))
        else:
            for col in steps:
                out = F.stack(*col, axis=0)
                if n < max_it:
                    pad = F.zeros((max_it - n,) + tuple(col[0].shape), ctx=col[0].context,
                                  dtype=col[0].dtype)
                    out = F.concat(out, pad, dim=0)
                results.append(out)
    final = [vals[func_locs[loc]] for loc in var_locs]
    return results + final


def _eval_cond(node, vals, F, ctx):
    a = node.attrs
    pred_sub, then_sub, else_sub = node.subgraphs
    pred = _run(pred_sub, [vals[j] for j in a["cond_input_locs"]], F, ctx)[0]
    if _scalar_true(pred, f"_cond (node {node.name!r}): pred"):
        return _run(then_sub, [vals[j] for j in a["then_input_locs"]], F, ctx)
    return _run(else_sub, [vals[j] for j in a["else_input_locs"]], F, ctx)


def _eval_cached(node, vals, F, ctx):
    return _run(node.subgraphs[0], vals, F, ctx)


EVAL = {"_foreach": _eval_foreach, "_while_loop": _eval_while, "_cond": _eval_cond,
        "_CachedOp": _eval_cached}


# ---------------------------------------------------------------------------- inference
def _links(node):
    """How a node's inputs and outputs relate to its subgraphs' inputs and outputs:
    ``[(subgraph, [(input index, 'same'|'slice')] per subgraph input, [(output index or
    None, 'same'|'stack')] per subgraph output, [(subgraph output, subgraph input)] carried
    from one step to the next)]``."""
    a, op = node.attrs, node.op
    if op == "_CachedOp":
        sub = node.subgraphs[0]
        return [(sub, [(j, "same") for j in range(len(node.inputs))],
                 [(i, "same") for i in range(len(sub._outputs))], [])]
    if op == "_foreach":
        sub = node.subgraphs[0]
        n_in = len(_names(sub))
        ins = [None] * n_in
        dl, sl, rl = list(a["in_data_locs"]), list(a["in_state_locs"]), list(a["remain_locs"])
        for j, loc in enumerate(dl):
            ins[loc] = (j, "slice")
        for j, loc in enumerate(sl):
            ins[loc] = (len(dl) + j, "same")
        for j, loc in enumerate(rl):
            ins[loc] = (len(dl) + len(sl) + j, "same")
        n_out = int(a["num_out_data"])
        outs = [(i, "stack") for i in range(n_out)] + \
            [(n_out + k, "same") for k in range(len(sl))]
        carried = [(n_out + k, loc) for k, loc in enumerate(sl)]
        return [(sub, ins, outs, carried)]
    if op == "_while_loop":
        cond_sub, func_sub = node.subgraphs
        n_out = int(a["num_out_data"])
        var_locs = list(a["func_var_locs"])
        cins = [(j, "same") for j in a["cond_input_locs"]]
        fins = [(j, "same") for j in a["func_input_locs"]]
        fouts = [(i, "stack") for i in range(n_out)] + \
            [(n_out + k, "same") for k in range(len(var_locs))]
        carried = [(n_out + k, loc) for k, loc in enumerate(var_locs)]
        return [(cond_sub, cins, [(None, "same")], []), (func_sub, fins, fouts, carried)]
    pred_sub, then_sub, else_sub = node.subgraphs
    n = int(a["num_outputs"])
    same = [(i, "same") for i in range(n)]
    return [(pred_sub, [(j, "same") for j in a["cond_input_locs"]], [(None, "same")], []),
            (then_sub, [(j, "same") for j in a["then_input_locs"]], same, []),
            (else_sub, [(j, "same") for j in a["else_input_locs"]], same, [])]


def _lead(node, inf):
    """The length of a node's stacked outputs (0: unknown)."""
    if node.op == "_while_loop":
        return int(node.attrs["max_iterations"])
    if node.op == "_foreach":
        src, i = node.inputs[0]
        s = inf.shape.get((id(src), i))
        return int(s[0]) if s else 0
    return 0


def _slice_shape(shape):
    """The shape of one step's slice of data of ``shape`` (a 1-D array's slices are (1,),
    as indexing gives them)."""
    shape = tuple(shape)
    return shape[1:] if len(shape) > 1 else (1,)


def _unslice_shape(outer, step):
    """The data shape a step shape tells (None: nothing, for 1-D data)."""
    if outer is not None and len(outer) == 1:
        return None
    return ((int(outer[0]) if outer else 0),) + tuple(step)


def infer_shape_step(inf, node):
    """One step of shape inference for a control-flow or _CachedOp node (``inf``: the
    running :class:`_Inference`); True when a shape was refined."""
    if id(node) in inf.done:
        return False
    in_keys = [(id(s), i) for s, i in node.inputs]
    out_keys = [(id(node), i) for i in range(node.nout)]
    changed = False
    lead = _lead(node, inf)
    for sub, ins, outs, carried in _links(node):
        names = _names(sub)
        shapes, dtypes = {}, {}
        for name, (j, how) in zip(names, ins):
            s = inf.shape.get(in_keys[j])
            if s is not None and len(s):
                s = _slice_shape(s) if how == "slice" else tuple(s)
                if len(s):
                    shapes[name] = s
            t = inf.dtype.get(in_keys[j])
            if t is not None:
                dtypes[name] = t
        for k, loc in carried:   # a loop variable has its output's shape
            i, _ = outs[k]
            s = inf.shape.get(out_keys[i])
            if names[loc] not in shapes and s is not None and len(s):
                shapes[names[loc]] = tuple(s)
        info = _s._Inference(sub, shapes, dtypes)
        for (snode, si), (i, how) in zip(sub._outputs, outs):   # outputs known outside
            s = inf.shape.get(out_keys[i]) if i is not None else None
            if s is not None and len(s) and not snode.is_var:
                s = tuple(s)[1:] if how == "stack" else tuple(s)
                if len(s):
                    info.shape[(id(snode), si)] = s
            t = inf.dtype.get(out_keys[i]) if i is not None else None
            if t is not None:
                info.dtype[(id(snode), si)] = t
        try:
            info.run()
        except MXNetError as err:
            raise MXNetError(f"infer_shape: operator {node.op!r} (node {node.name!r}): "
                             f"{err}") from None
        sub_in = {n.name: n for n in _s._plan(sub).var_nodes}
        for name, (j, how) in zip(names, ins):
            key = (id(sub_in[name]), 0)
            s = info.partial.get(key)
            if s is not None and len(s):
                if how == "slice":
                    s = _unslice_shape(inf.shape.get(in_keys[j]), s)
                if s is not None:
                    changed |= inf._unify(in_keys[j], s, node.inputs[j][0].name)
            t = info.dtype.get(key)
            if t is not None and inf.dtype.get(in_keys[j]) is None:
                inf.dtype[in_keys[j]] = t
        for (snode, si), (i, how) in zip(sub._outputs, outs):
            s = info.partial.get((id(snode), si))
            t = info.dtype.get((id(snode), si))
            if i is None:
                continue
            if s is not None and len(s):
                if how == "stack":
                    s = (lead,) + tuple(s)
                changed |= inf._unify(out_keys[i], s, node.name)
            if t is not None and inf.dtype.get(out_keys[i]) is None:
                inf.dtype[out_keys[i]] = t
        for k, loc in carried:
            i, _ = outs[k]
            s = inf.shape.get(out_keys[i])
            j, _ = ins[loc]
            if s is not None and len(s):
                changed |= inf._unify(in_keys[j], s, node.inputs[j][0].name)
            s = inf.shape.get(in_keys[j])
            if s is not None and len(s):
                changed |= inf._unify(out_keys[i], s, node.name)
    if all(_s._full_shape(inf.shape.get(k)) is not None for k in in_keys + out_keys):
        inf.done.add(id(node))
    return changed


def infer_type_step(inf, node):
    """One step of type inference for a control-flow or _CachedOp node."""
    in_keys = [(id(s), i) for s, i in node.inputs]
    out_keys = [(id(node), i) for i in range(node.nout)]
    changed = False
    for sub, ins, outs, carried in _links(node):
        names = _names(sub)
        dtypes = {}
        for name, (j, _) in zip(names, ins):
            t = inf.dtype.get(in_keys[j])
            if t is not None:
                dtypes[name] = t
        for k, loc in carried:
            t = inf.dtype.get(out_keys[outs[k][0]])
            if names[loc] not in dtypes and t is not None:
                dtypes[names[loc]] = t
        info = _s._Inference(sub, {}, dtypes, types_only=True)
        for (snode, si), (i, _) in zip(sub._outputs, outs):   # outputs known outside
            t = inf.dtype.get(out_keys[i]) if i is not None else None
            if t is not None and not snode.is_var:
                info.dtype[(id(snode), si)] = t
        info.run()
        sub_in = {n.name: n for n in _s._plan(sub).var_nodes}
        for name, (j, _) in zip(names, ins):
            t = info.dtype.get((id(sub_in[name]), 0))
            if t is not None and inf.dtype.get(in_keys[j]) is None:
                inf.dtype[in_keys[j]] = t
                changed = True
        for (snode, si), (i, _) in zip(sub._outputs, outs):
            t = info.dtype.get((id(snode), si))
            if i is not None and t is not None and inf.dtype.get(out_keys[i]) is None:
                inf.dtype[out_keys[i]] = t
                changed = True
        for k, loc in carried:
            t = inf.dtype.get(out_keys[outs[k][0]])
            j = ins[loc][0]
            if t is not None and inf.dtype.get(in_keys[j]) is None:
                inf.dtype[in_keys[j]] = t
                changed = True
    return changed


# ---------------------------------------------------------------------------- hybridize
_SUBGRAPH_NAMES = {"foreach": ("",), "while_loop": ("_cond", "_func"),
                   "cond": ("_pred", "_then", "_else")}


def note_traced_call(fname, args, kwargs):
    """A hybridized forward pass called ``F.contrib.<fname>``: MXNet builds the symbolic
    operator then, naming its subgraphs (``AttrScope._subgraph_names`` counts them); the
    same names are taken here."""
    suffixes = _SUBGRAPH_NAMES.get(fname)
    if suffixes is None:
        return
    name = kwargs.get("name")
    if name is None:
        import inspect
        from ..ndarray import contrib as _ndc
        try:
            bound = inspect.signature(getattr(_ndc, fname)).bind(*args, **kwargs)
            bound.apply_defaults()
            name = bound.arguments.get("name", fname)
        except TypeError:
            name = fname
    for suffix in suffixes:
        _unique_subgraph_name(f"{name}{suffix}")
