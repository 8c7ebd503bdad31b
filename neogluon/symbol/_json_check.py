"""The structure of MXNet's JSON symbol graph, checked once before a graph is built.

Every symbol loader (``sym.load``, ``sym.load_json``, ``SymbolBlock.imports``,
``model.load_checkpoint``, ``Module.load``) parses the JSON and hands it here first, so a
malformed file is refused with one :class:`~neogluon.base.MXNetError` naming the node (index
and name) and the field at fault, instead of failing somewhere inside graph construction.

What is checked (MXNet's ``nnvm`` JSON, all versions neogluon reads):

- the graph is an object with a ``nodes`` list and a non-empty ``heads`` list; ``arg_nodes``
  and ``node_row_ptr``, when present, are lists of node indices / non-decreasing offsets;
  ``attrs`` is an object;
- each node is an object whose ``op`` and ``name`` are strings, whose ``inputs`` are
  ``[node, output(, version)]`` entries of non-negative integers naming an *earlier* node (a
  later node or the node itself is a cycle, an index past the end is dangling), and whose
  ``attrs`` / ``attr`` / ``param`` are objects of strings (all three fields MXNet requires:
  ``op``, ``name``, ``inputs``);
- a variable's well-known attributes parse: ``__shape__`` a tuple of dims >= -1,
  ``__dtype__`` one of MXNet's dtype codes, ``__storage_type__`` a storage code,
  ``__lr_mult__`` / ``__wd_mult__`` numbers;
- ``subgraphs`` (control-flow and fused nodes) are graphs, checked the same way.
"""
from __future__ import annotations

import ast

from ..base import MXNetError

_MAX_DEPTH = 16          # nesting of subgraphs
_MAX_DIM = 2 ** 40       # a declared dimension beyond this cannot be a real model's
_STYPE_CODES = (-1, 0, 1, 2)


def _err(where, msg):
    return MXNetError(f"{where}{msg}")


def _node_label(i, d):
    name = d.get("name") if isinstance(d, dict) else None
    return f"node {i} ({name!r})" if isinstance(name, str) else f"node {i}"


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _check_entry(e, n, limit, what, where):
    """An ``[node, output(, version)]`` entry pointing below ``limit`` (of ``n`` nodes)."""
    if not isinstance(e, list) or not 1 <= len(e) <= 3 or not all(_is_int(x) for x in e):
        raise _err(where, f"{what} is {e!r}, not a [node, output, version] list of integers")
    src = e[0]
    if src < 0 or src >= n:
        raise _err(where, f"{what} refers to node {src}, but the graph has {n} nodes "
                          "(a dangling reference)")
    if src >= limit:
        raise _err(where, f"{what} refers to node {src}, which does not come before it "
                          "(a cycle or a forward reference)")
    if len(e) > 1 and not 0 <= e[1] < 2 ** 31:
        raise _err(where, f"{what} names output {e[1]} of node {src}")


def _parse_shape(v):
    try:
        t = ast.literal_eval(v.strip()) if isinstance(v, str) else v
    except (ValueError, SyntaxError, MemoryError, TypeError, RecursionError):
        return None
    if not isinstance(t, (tuple, list)) or not all(_is_int(x) and -1 <= x <= _MAX_DIM
                                                   for x in t) or len(t) > 32:
        return None
    return tuple(t)


def _check_var_attrs(attrs, where):
    from .symbol import _CODE_TO_DTYPE
    shape = attrs.get("__shape__")
    if shape is not None and _parse_shape(shape) is None:
        raise _err(where, f"attribute __shape__={shape!r} is not a shape (a tuple of at most "
                          f"32 dimensions, each from -1 to {_MAX_DIM})")
    for key, codes in (("__dtype__", _CODE_TO_DTYPE), ("__storage_type__", _STYPE_CODES)):
        v = attrs.get(key)
        if v is None:
            continue
        try:
            code = int(str(v).strip())
        except ValueError:
            code = None
        if code not in codes or (key == "__dtype__" and code < 0):
            raise _err(where, f"attribute {key}={v!r} is not one of MXNet's "
                              f"{'dtype' if key == '__dtype__' else 'storage type'} codes "
                              f"{sorted(codes)}")
    for key in ("__lr_mult__", "__wd_mult__"):
        v = attrs.get(key)
        if v is None:
            continue
        try:
            float(v)
        except (TypeError, ValueError):
            raise _err(where, f"attribute {key}={v!r} is not a number") from None


def check_graph(desc, where="", depth=0):
    """Raise MXNetError (message prefixed by ``where``) unless ``desc`` is a well-formed
    symbol graph."""
    if depth > _MAX_DEPTH:
        raise _err(where, f"subgraphs are nested more than {_MAX_DEPTH} deep")
    if not isinstance(desc, dict):
        raise _err(where, f"the graph is a JSON {type(desc).__name__}, not an object with "
                          "'nodes' and 'heads'")
    nodes = desc.get("nodes")
    if not isinstance(nodes, list):
        raise _err(where, "the graph's 'nodes' is missing or not a list" if nodes is None
                   else f"the graph's 'nodes' is a {type(nodes).__name__}, not a list")
    n = len(nodes)
    for key in ("attrs",):
        v = desc.get(key)
        if v is not None and not isinstance(v, dict):
            raise _err(where, f"the graph's '{key}' is a {type(v).__name__}, not an object")
    for i, d in enumerate(nodes):
        label = _node_label(i, d)
        at = f"{where}{label}: "
        if not isinstance(d, dict):
            raise _err(where, f"{label} is a {type(d).__name__}, not an object")
        for key in ("op", "name"):
            v = d.get(key)
            if not isinstance(v, str):
                raise _err(at, f"field '{key}' is missing" if key not in d else
                           f"field '{key}' is {v!r}, not a string")
        ins = d.get("inputs")
        if ins is None and "inputs" not in d:
            raise _err(at, "field 'inputs' is missing")
        if not isinstance(ins, list):
            raise _err(at, f"field 'inputs' is {ins!r}, not a list")
        for k, e in enumerate(ins):
            _check_entry(e, n, i, f"input {k}", at)
        for key in ("attrs", "attr", "param"):
            part = d.get(key)
            if part is None:
                continue
            if not isinstance(part, dict):
                raise _err(at, f"field '{key}' is {part!r}, not an object")
            for k, v in part.items():
                if not isinstance(v, str):
                    raise _err(at, f"{key}[{k!r}] is {v!r}, not a string")
            if d.get("op") == "null":
                _check_var_attrs(part, at)
        subs = d.get("subgraphs")
        if subs is not None:
            if not isinstance(subs, list):
                raise _err(at, f"field 'subgraphs' is {subs!r}, not a list")
            for k, g in enumerate(subs):
                check_graph(g, f"{at}subgraph {k}: ", depth + 1)
    heads = desc.get("heads")
    if not isinstance(heads, list):
        raise _err(where, "the graph's 'heads' is missing or not a list" if heads is None
                   else f"the graph's 'heads' is {heads!r}, not a list")
    if not heads:
        raise _err(where, "the graph has no heads (outputs)")
    for k, e in enumerate(heads):
        _check_entry(e, n, n, f"head {k}", where)
    args = desc.get("arg_nodes")
    if args is not None:
        if not isinstance(args, list):
            raise _err(where, f"the graph's 'arg_nodes' is {args!r}, not a list")
        for k, a in enumerate(args):
            if not _is_int(a) or not 0 <= a < n:
                raise _err(where, f"arg_nodes[{k}] is {a!r}, not the index of one of the "
                                  f"{n} nodes")
    ptr = desc.get("node_row_ptr")
    if ptr is not None:
        if not isinstance(ptr, list) or not all(_is_int(x) and x >= 0 for x in ptr):
            raise _err(where, "the graph's 'node_row_ptr' is not a list of non-negative "
                              "integers")
        if any(b < a for a, b in zip(ptr, ptr[1:])):
            raise _err(where, "the graph's 'node_row_ptr' is not non-decreasing")
