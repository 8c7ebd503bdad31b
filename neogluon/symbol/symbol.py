"""``mx.sym``: MXNet 1.x's symbolic graphs, as lazy expressions over neogluon's nd operators.

A :class:`Symbol` is a list of outputs of graph nodes. A node is either a variable (``op`` is
``'null'``) or an operator call that records the operator's MXNet name, its symbol inputs and
its attributes. Any ``nd`` operator ``X`` has a symbolic twin ``mx.sym.X`` made on the fly:
calling it records a node, and evaluating the node calls ``nd.X`` again, so the symbolic and
the imperative results are the same computation.

What is here: variables with their attributes, operators, arithmetic, ``Group``, indexing
multi-output symbols, the ``list_*`` queries, ``get_internals``/``get_children``, attributes,
shape and type inference (the common operators' output shapes come from direct shape rules,
the others' from running them on torch ``meta`` tensors; parameter shapes of the layer
operators come from shape rules), MXNet's JSON graph format (``tojson``/``save``/
``load``/``load_json``; MXNet 1.9.1's files load and neogluon's load in MXNet) and an eager
evaluator (:meth:`Symbol.eval`); control-flow nodes (``_foreach``, ``_while_loop``, ``_cond``,
``_CachedOp``) hold their subgraphs as Symbols (:mod:`neogluon.symbol._control_flow`).
Executors (``bind``, ``simple_bind``) live in :mod:`neogluon.gluon._executor`. What is not
here: symbolic gradients, subgraph backends.
"""
from __future__ import annotations

import ast
import inspect
import json
import math
import os
import weakref

import numpy as np
import torch

from .. import _fileio
from .. import util as _util
from ..base import MXNET_API_VERSION_INT, MXNetError, NotImplementedForSymbol
from ..context import Context, cpu, current_context
from .. import ndarray as _nd
from ..ndarray.ndarray import NDArray, _new
from ..name import NameManager
from ..attribute import AttrScope
from . import _import_ops  # noqa: F401  (registers the nd operators imported graphs need)
from . import _shape_rules
from . import _partial_shapes
from ._json_check import check_graph as _check_graph
from ..ndarray import quantization as _quant
from ..base import bfloat16 as _np_bfloat16
from ..ndarray import quantized_ops as _quant_ops

__all__ = ["Symbol", "var", "Variable", "Group", "load", "load_json", "zeros", "ones", "full",
           "arange", "pow", "power", "maximum", "minimum", "hypot", "eval_symbol"]

# MXNet's type codes (__dtype__) and storage type codes (__storage_type__).
_DTYPE_TO_CODE = {"float32": 0, "float64": 1, "float16": 2, "uint8": 3, "int32": 4, "int8": 5,
                  "int64": 6, "bool": 7, "int16": 8, "uint16": 9, "uint32": 10, "uint64": 11,
                  "bfloat16": 12}
_CODE_TO_DTYPE = {v: k for k, v in _DTYPE_TO_CODE.items()}
_STYPE_TO_CODE = {"default": 0, "row_sparse": 1, "csr": 2}
_CODE_TO_STYPE = {v: k for k, v in _STYPE_TO_CODE.items()}

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "_op_table.json")) as _f:
    _TABLE = json.load(_f)
_ALIAS = _TABLE["aliases"]          # alias -> canonical operator name
_OPS = _TABLE["ops"]                # canonical name -> {"inputs": [...], ...}
_ALIASES_OF = {}
for _a, _c in _ALIAS.items():
    _ALIASES_OF.setdefault(_c, []).append(_a)

# Inputs an operator mutates (they become auxiliary states), by canonical name.
_MUTATE = {"BatchNorm": (3, 4), "_contrib_SyncBatchNorm": (3, 4),
           "_contrib_quantized_batch_norm": (3, 4),
           "_contrib_BatchNormWithReLU": (3, 4), "BatchNorm_v1": (3, 4),
           "IdentityAttachKLSparseReg": (1,)}
# Auxiliary states of MXNet's older OperatorProperty operators: MXNet's operator info (the
# table above) lists their arguments only, and composing the operator adds the states as
# variables ``<node>_<state>`` after them.
_OPS["IdentityAttachKLSparseReg"] = dict(_OPS["IdentityAttachKLSparseReg"],
                                         inputs=["data", "moving_avg"])
_OPS["BatchNorm_v1"] = dict(_OPS["BatchNorm_v1"],
                            inputs=["data", "gamma", "beta", "moving_mean", "moving_var"])


def _dtype_name(dtype):
    if dtype is None:
        return None
    if isinstance(dtype, torch.dtype):
        return str(dtype).replace("torch.", "")
    if isinstance(dtype, str) and dtype == "bfloat16":  # numpy has no bfloat16
        return dtype
    if isinstance(dtype, np.dtype) and dtype == _np_bfloat16:   # (MXNet's spelling of it)
        return "bfloat16"
    return np.dtype(dtype).name


# ---------------------------------------------------------------------------- graph nodes
class _Node:
    """One node: a variable (op 'null') or an operator call."""
    __slots__ = ("op", "name", "attrs", "raw", "extra", "inputs", "input_names", "nout",
                 "path", "variadic", "subgraphs")

    def __init__(self, op, name, attrs=None, inputs=(), input_names=None, extra=None,
                 path=None, variadic=False, raw=None, subgraphs=None):
        self.op = op
        self.name = name
        self.attrs = attrs if attrs is not None else {}   # variables: str values
        self.raw = raw                                     # loaded op attrs as written
        self.extra = extra if extra is not None else {}   # user attributes (str)
        self.inputs = list(inputs)                         # [(node, index)]
        self.input_names = input_names
        self.path = path
        self.variadic = variadic
        self.subgraphs = subgraphs                         # fused nodes: the graphs they hold
        self.nout = _num_outputs(op, self.attrs) if op != "null" else 1

    @property
    def is_var(self):
        return self.op == "null"


def _num_outputs(op, attrs):
    """(total outputs, visible output suffixes) of an operator node."""
    if op in ("SliceChannel",):
        n = int(attrs.get("num_outputs", 1))
        return n
    if op == "_split_v2":
        ind = attrs.get("indices")
        sec = attrs.get("sections", 0)
        if sec:
            return int(sec)
        return len(tuple(ind)) + (0 if tuple(ind) and tuple(ind)[0] == 0 else 1) if ind else 1
    if op == "split_v2":   # (mx.sym.split_v2's record: nd.split_v2's own arguments)
        ios = attrs.get("indices_or_sections")
        if isinstance(ios, int) and not isinstance(ios, bool):
            return ios
        if isinstance(ios, (tuple, list)):
            return len(ios) + 1
        return 1
    if op in ("topk",) and attrs.get("ret_typ") == "both":
        return 2
    if op in ("moments", "_linalg_gelqf", "_linalg_syevd", "_linalg_slogdet"):
        return 2   # (mean, var), (Q, L), (U, lambda), (sign, logabsdet)
    if op == "RNN":
        if _truthy(attrs.get("state_outputs", False)):
            return 3 if attrs.get("mode") == "lstm" else 2
        return 1
    if op == "_gluon_rnn":
        return 1 + int(attrs.get("num_states", 1))
    if op in _DETECTION_NOUT:  # detection operators (ndarray/detection_ops.py)
        return _DETECTION_NOUT[op](attrs)
    if op in _QUANT_NOUT:  # quantized operators (ndarray/quantization.py): codes, min, max
        return _QUANT_NOUT[op](attrs)
    if op == "Custom":  # as many as the registered CustomOpProp lists
        from ..operator import _symbol_output_names
        return len(_symbol_output_names(attrs))
    if op in _cf.CONTROL_OPS:
        return _cf.num_outputs(op, attrs)
    return 1


_DETECTION_NOUT = {"_contrib_bipartite_matching": lambda a: 2,
                   "_contrib_MultiBoxTarget": lambda a: 3,
                   "_contrib_Proposal": lambda a: 2 if _truthy(a.get("output_score")) else 1,
                   "_contrib_MultiProposal": lambda a: 2 if _truthy(a.get("output_score")) else 1}


_QUANT_NOUT = {"_contrib_quantize_v2": lambda a: 3, "_contrib_quantized_pooling": lambda a: 3,
               "_contrib_quantized_concat": lambda a: 3, "_contrib_quantized_flatten": lambda a: 3,
               "_sg_mkldnn_conv": lambda a: 3 if _truthy(a.get("quantized", False)) else 1,
               "_sg_mkldnn_fully_connected":
                   lambda a: 3 if _truthy(a.get("quantized", False)) and
                   not _truthy(a.get("enable_float_output", False)) else 1,
               "_contrib_requantize": lambda a: 3,
               "_contrib_quantize": lambda a: 3, "_contrib_quantize_asym": lambda a: 3,
               "_contrib_quantized_act": lambda a: 3,
               "_contrib_quantized_batch_norm": lambda a: 3,
               "_contrib_quantized_conv": lambda a: 3,
               "_contrib_quantized_fully_connected": lambda a: 3,
               "_contrib_quantized_elemwise_add": lambda a: 3,
               "_contrib_quantized_elemwise_mul":
                   lambda a: 1 if _truthy(a.get("enable_float_output", False)) else 3,
               "_contrib_quantized_embedding": lambda a: 3,
               "_contrib_quantized_rnn":
                   lambda a: 3 if _truthy(a.get("state_outputs", False)) else 1}
# Operators of quantized graphs: float32 parameters, their own output types, errors named
# by node.
_QUANT_OPS = set(_QUANT_NOUT) | {"_contrib_dequantize"}
_SG_OPS = ("_sg_mkldnn_conv", "_sg_mkldnn_fully_connected")
def _calib(a):
    return a.get("min_calib_range") is not None and a.get("max_calib_range") is not None


# Output types of the unfused quantized operators (ndarray/quantized_ops.py).
_QUANT_OUT_TYPES = {
    "_contrib_quantize": lambda a, t: ["int8" if a.get("out_type", "uint8") == "int8" else
                                       "uint8", "float32", "float32"],
    "_contrib_quantize_asym": lambda a, t: ["uint8", "float32", "float32"],
    "_contrib_quantized_act": lambda a, t: ["int8", "float32", "float32"],
    "_contrib_quantized_batch_norm": lambda a, t: ["int8", "float32", "float32"],
    "_contrib_quantized_conv": lambda a, t: ["int32", "float32", "float32"],
    "_contrib_quantized_fully_connected": lambda a, t: ["int32", "float32", "float32"],
    "_contrib_quantized_elemwise_add":
        lambda a, t: [(t[0] if t[0] == t[1] else "int8") if _calib(a) else "int32",
                      "float32", "float32"],
    "_contrib_quantized_elemwise_mul":
        lambda a, t: ["float32"] if _truthy(a.get("enable_float_output", False)) else
        ["int8" if _calib(a) else "int32", "float32", "float32"],
    "_contrib_quantized_embedding": lambda a, t: ["int8", "float32", "float32"],
    "_contrib_quantized_rnn": lambda a, t: ["float32", "float32", "float32"],
}
# Inputs that are int8 codes (weight, bias), by position.
_QUANT_INT8_INPUTS = {
    "_contrib_quantized_conv":
        lambda a: (1,) if _truthy(a.get("no_bias", False)) else (1, 2),
    "_contrib_quantized_fully_connected":
        lambda a: (1,) if _truthy(a.get("no_bias", False)) else (1, 2),
    "_contrib_quantized_embedding": lambda a: (1,),
}
# quantized operators whose outputs MXNet names output, min_output, max_output
_QUANT_MINMAX_NAMES = {"_contrib_quantized_pooling", "_contrib_quantized_concat",
                       "_contrib_quantized_flatten", "_contrib_quantized_act",
                       "_contrib_quantized_batch_norm", "_contrib_quantized_conv",
                       "_contrib_quantized_fully_connected", "_contrib_quantized_elemwise_add",
                       "_contrib_quantized_elemwise_mul", "_contrib_quantized_embedding"}


def _mutated(node):
    """Positions of the inputs ``node`` updates (they are auxiliary states)."""
    if node.op == "_sg_mkldnn_conv":
        if not _truthy(node.attrs.get("with_bn", False)):
            return ()
        base = 2 + (0 if _truthy(node.attrs.get("no_bias", False)) else 1)
        return (base + 2, base + 3)
    if node.op == "Custom":  # the CustomOpProp's list_auxiliary_states(), after its arguments
        from ..operator import _symbol_aux_count
        n = len(node.inputs)
        return tuple(range(max(0, n - _symbol_aux_count(node.attrs)), n))
    if node.op == "_CachedOp" and node.subgraphs:   # its graph's auxiliary states
        return _cf.mutated(node)
    return _MUTATE.get(node.op, ())


def _truthy(v):
    if isinstance(v, str):
        return v.lower() in ("true", "1")
    return bool(v)


def _visible(node):
    """Names of a node's visible outputs (MXNet hides BatchNorm's mean/var by default)."""
    op, a, n = node.op, node.attrs, node.nout
    if op == "null":
        return [node.name]
    if op in ("BatchNorm", "_contrib_SyncBatchNorm", "BatchNorm_v1"):
        if _truthy(a.get("output_mean_var", False)):
            return [f"{node.name}_output", f"{node.name}_mean", f"{node.name}_var"]
        return [f"{node.name}_output"]
    if op in ("LayerNorm", "GroupNorm") and _truthy(a.get("output_mean_var", False)):
        return [f"{node.name}_output", f"{node.name}_mean", f"{node.name}_std"]
    if op == "Custom":
        from ..operator import _symbol_output_names
        return [f"{node.name}_{o}" for o in _symbol_output_names(a)][:n]
    if op == "RNN" and n > 1:
        return [f"{node.name}_output", f"{node.name}_state_output",
                f"{node.name}_statecell_output"][:n]
    if op in _QUANT_MINMAX_NAMES and n == 3:
        return [f"{node.name}_output", f"{node.name}_min_output", f"{node.name}_max_output"]
    if op == "_contrib_quantize_asym":
        return [f"{node.name}_output", f"{node.name}_scale", f"{node.name}_shift"]
    if op == "_contrib_quantized_rnn" and n == 3:   # (MXNet's spelling)
        return [f"{node.name}_output", f"{node.name}_state_output",
                f"{node.name}_statecell_ouput"]
    if op == "_sg_mkldnn_conv" and n == 3:
        return [f"{node.name}_output", f"{node.name}_output_min", f"{node.name}_output_max"]
    if op == "_CachedOp" and node.subgraphs:
        return _cf.visible(node)
    if n == 1:
        return [f"{node.name}_output"]
    return [f"{node.name}_output{i}" for i in range(n)]


def _n_visible(node):
    return len(_visible(node))


def _topo(entries):
    """Nodes reachable from ``entries`` in MXNet's order (depth first, inputs in order)."""
    order, seen = [], set()
    for head, _ in entries:
        if id(head) in seen:
            continue
        stack = [(head, 0)]
        while stack:
            node, i = stack.pop()
            if i == 0 and id(node) in seen:
                continue
            if i < len(node.inputs):
                stack.append((node, i + 1))
                child = node.inputs[i][0]
                if id(child) not in seen:
                    stack.append((child, 0))
            else:
                if id(node) not in seen:
                    seen.add(id(node))
                    order.append(node)
    return order


def _aux_nodes(order):
    aux = set()
    for node in order:
        for pos in _mutated(node):
            if pos < len(node.inputs) and node.inputs[pos][0].is_var:
                aux.add(id(node.inputs[pos][0]))
    return aux


# ---------------------------------------------------------------------------- attributes
def _attr_str(key, v):
    if key == "dtype" and v is not None and not isinstance(v, str):
        return _dtype_name(v)
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, (np.generic,)):
        return str(v.item())
    if isinstance(v, list):
        return str(tuple(v))
    if isinstance(v, Context):
        return str(v)
    return str(v)


def _parse_attr(s):
    """A Python value from an attribute string of MXNet's JSON ("(3, 3)", "True", "relu")."""
    if not isinstance(s, str):
        return s
    low = s.strip()
    if low in ("True", "true"):
        return True
    if low in ("False", "false"):
        return False
    if low == "None":
        return None
    if low in ("inf", "-inf", "nan"):
        return float(low)
    try:
        return ast.literal_eval(low)
    except (ValueError, SyntaxError, MemoryError, TypeError, RecursionError):
        return s


# ---------------------------------------------------------------------------- Symbol
# Attributes MXNet stores as ``__key__`` and also lists under ``key`` (its kHiddenKeys).
_HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage",
                "profiler_scope")


def _stored_key(key):
    """The key an attribute is stored under: a hidden key given plainly (``lr_mult``) is
    kept as ``__lr_mult__``, as MXNet stores it."""
    return f"__{key}__" if key in _HIDDEN_KEYS else key


def _scoped_attrs(attr):
    """``attr`` (a creating call's ``attr=``) merged over the current :class:`AttrScope`'s
    attributes, split as MXNet splits them for an operator node: ``({stored key: str}`` for
    hidden and ``__key__`` attributes, ``{key: value}`` for the other keys, which MXNet takes
    as operator arguments``)``."""
    stored, args = {}, {}
    for key, value in AttrScope._active().get(attr).items():
        key = _stored_key(key)
        if key.startswith("__") and key.endswith("__"):
            stored[key] = str(value)
        else:
            args[key] = value
    return stored, args


# Scalar operators Symbol arithmetic records under their own names ('_lesser_scalar0').
_SCALAR_NAMED = frozenset({"_equal_scalar", "_not_equal_scalar", "_greater_scalar",
                           "_greater_equal_scalar", "_lesser_scalar", "_lesser_equal_scalar",
                           "_rpower_scalar"})


class Symbol:
    """A symbolic expression: one or more outputs of a graph of operators and variables."""
    __slots__ = ("_outputs", "__weakref__")

    def __init__(self, outputs):
        self._outputs = list(outputs)

    # -- identity and structure --------------------------------------------------------
    @property
    def name(self):
        """The node's name (None for a group of several nodes' outputs)."""
        nodes = {id(n) for n, _ in self._outputs}
        if len(nodes) != 1:
            return None
        return self._outputs[0][0].name

    def __repr__(self):
        name = self.name
        if name is None:
            return "<Symbol group [" + ", ".join(n.name for n, _ in self._outputs) + "]>"
        return f"<Symbol {name}>"

    def __len__(self):
        return len(self._outputs)

    def __iter__(self):
        return (Symbol([o]) for o in self._outputs)

    def __hash__(self):
        return id(self)

    def __bool__(self):
        # A symbol has no value to test (MXNet raises too); `if sym is not None` is meant.
        raise NotImplementedForSymbol(self.__bool__, "bool")

    __nonzero__ = __bool__

    def __getitem__(self, index):
        outs = self.list_outputs()
        if isinstance(index, str):
            idx = [i for i, n in enumerate(outs) if n == index]
            if not idx:
                raise ValueError(f"There is no output named {index!r}; outputs are {outs}")
            if len(idx) > 1:
                raise ValueError(f"There are multiple outputs with name {index!r}")
            index = idx[0]
        if isinstance(index, slice):
            return Symbol(self._outputs[index])
        if not isinstance(index, (int, np.integer)):
            raise TypeError("Symbol only supports integer index to fetch i-th output")
        if index >= len(self._outputs) or index < -len(self._outputs):
            raise IndexError(f"index {index} out of range for a symbol with "
                             f"{len(self._outputs)} outputs")
        return Symbol([self._outputs[index]])

    def __copy__(self):
        return Symbol(self._outputs)

    def __deepcopy__(self, memo):
        return load_json(self.tojson())

    def __getstate__(self):
        return {"json": self.tojson()}

    def __setstate__(self, state):
        self._outputs = load_json(state["json"])._outputs

    def _order(self):
        return _topo(self._outputs)

    def list_outputs(self):
        """Names of the outputs (``<node>_output`` for operators, the name for variables)."""
        res = []
        for node, i in self._outputs:
            vis = _visible(node)
            out = vis[i] if i < len(vis) else f"{node.name}_output{i}"
            res.append(out[1:] if node.name == "" and not node.is_var else out)
        return res

    def list_arguments(self):
        """Names of the variables that are not auxiliary states, in graph order."""
        order = self._order()
        aux = _aux_nodes(order)
        return [n.name for n in order if n.is_var and id(n) not in aux]

    def list_auxiliary_states(self):
        """Names of the variables an operator updates (BatchNorm's moving statistics)."""
        order = self._order()
        aux = _aux_nodes(order)
        return [n.name for n in order if n.is_var and id(n) in aux]

    def list_inputs(self):
        """Names of all variables (arguments and auxiliary states), in graph order."""
        return [n.name for n in self._order() if n.is_var]

    def get_internals(self):
        """A group of every node's visible outputs, in graph order."""
        outs = []
        for node in self._order():
            outs.extend((node, i) for i in range(_n_visible(node)))
        return Symbol(outs)

    def get_children(self):
        """The inputs of this symbol's node as a group, or None for a variable."""
        node = self._outputs[0][0]
        if not node.inputs:
            return None
        return Symbol(node.inputs)

    # -- attributes ----------------------------------------------------------------------
    def attr(self, key):
        """The attribute ``key`` of this symbol's node as a string, or None."""
        node = self._outputs[0][0]
        if len({id(n) for n, _ in self._outputs}) != 1:
            return None
        return self._shown_attrs(node).get(key)

    @classmethod
    def _shown_attrs(cls, node):
        """The attributes ``attr``/``list_attr``/``attr_dict`` show: the node's, with each
        hidden key (``__lr_mult__`` ...) also under its plain name, as MXNet lists them (the
        JSON file has the hidden form only)."""
        d = cls._node_attrs(node)
        for k in _HIDDEN_KEYS:
            v = d.get(f"__{k}__")
            if v is not None:
                d.setdefault(k, v)
        return d

    @staticmethod
    def _node_attrs(node):
        if node.is_var:
            d = dict(node.attrs)
        elif node.raw is not None:
            d = dict(node.raw)
        else:
            d = {k: _attr_str(k, v) for k, v in node.attrs.items()}
        d.update(node.extra)
        return d

    def list_attr(self, recursive=False):
        """This node's attributes as strings (``recursive`` is not supported, as in MXNet)."""
        if recursive:
            raise DeprecationWarning("Symbol.list_attr with recursive=True has been deprecated. "
                                     "Please use attr_dict instead.")
        return self._shown_attrs(self._outputs[0][0])

    def attr_dict(self):
        """``{node name: {key: value}}`` for every node that has attributes."""
        res = {}
        for node in self._order():
            d = self._shown_attrs(node)
            if d:
                res[node.name] = d
        return res

    def _set_attr(self, **kwargs):
        for k, v in kwargs.items():
            if not isinstance(v, str):
                raise ValueError("Set Attr only accepts string values")
            k = _stored_key(k)
            node = self._outputs[0][0]
            if node.is_var:
                node.attrs[k] = v
            else:
                node.extra[k] = v

    # -- arithmetic ----------------------------------------------------------------------
    def _bin(self, other, op, scalar_op, hint, rscalar_op=None, reverse=False):
        if isinstance(other, Symbol):
            a, b = (other, self) if reverse else (self, other)
            return _make_node(op, [a, b], {}, hint=hint)
        if isinstance(other, (int, float, np.number, np.bool_)):
            sop = rscalar_op if reverse and rscalar_op else scalar_op
            # (MXNet calls _PlusScalar, _MulScalar...: '_plusscalar0'; the comparisons and
            # the reversed power by their own names: '_lesser_scalar0')
            hint = sop if sop in _SCALAR_NAMED else "_" + sop.strip("_").replace("_", "")
            return _make_node(sop, [self], {"scalar": other}, hint=hint)
        if isinstance(other, NDArray):
            raise TypeError("type NDArray not supported with Symbol arithmetic: mixing "
                            "Symbols and NDArrays is not allowed")
        raise TypeError(f"type {type(other).__name__} not supported")

    def __add__(self, o):
        return self._bin(o, "elemwise_add", "_plus_scalar", "_plus")

    __radd__ = __add__

    def __sub__(self, o):
        return self._bin(o, "elemwise_sub", "_minus_scalar", "_minus")

    def __rsub__(self, o):
        return self._bin(o, "elemwise_sub", "_minus_scalar", "_minus", "_rminus_scalar", True)

    def __mul__(self, o):
        return self._bin(o, "elemwise_mul", "_mul_scalar", "_mul")

    __rmul__ = __mul__

    def __truediv__(self, o):
        return self._bin(o, "elemwise_div", "_div_scalar", "_div")

    def __rtruediv__(self, o):
        return self._bin(o, "elemwise_div", "_div_scalar", "_div", "_rdiv_scalar", True)

    __div__ = __truediv__
    __rdiv__ = __rtruediv__

    def __mod__(self, o):
        return self._bin(o, "_mod", "_mod_scalar", "_mod")

    def __rmod__(self, o):
        return self._bin(o, "_mod", "_mod_scalar", "_mod", "_rmod_scalar", True)

    def __pow__(self, o):
        return self._bin(o, "_power", "_power_scalar", "_power")

    def __rpow__(self, o):
        return self._bin(o, "_power", "_power_scalar", "_power", "_rpower_scalar", True)

    def __neg__(self):
        return self._bin(-1.0, None, "_mul_scalar", "_mul")

    def __abs__(self):
        return _op_function("abs")(self)

    def __eq__(self, o):
        return self._bin(o, "_equal", "_equal_scalar", "_equal")

    def __ne__(self, o):
        return self._bin(o, "_not_equal", "_not_equal_scalar", "_notequal")

    def __gt__(self, o):
        return self._bin(o, "_greater", "_greater_scalar", "_greater")

    def __ge__(self, o):
        return self._bin(o, "_greater_equal", "_greater_equal_scalar", "_greaterequal")

    def __lt__(self, o):
        return self._bin(o, "_lesser", "_lesser_scalar", "_lesser")

    def __le__(self, o):
        return self._bin(o, "_lesser_equal", "_lesser_equal_scalar", "_lesserequal")

    def __iadd__(self, o):
        raise NotImplementedForSymbol(self.__iadd__, "+=", o, 1)

    def __isub__(self, o):
        raise NotImplementedForSymbol(self.__isub__, "-=", o)

    def __imul__(self, o):
        raise NotImplementedForSymbol(self.__imul__, "*=", o)

    def __itruediv__(self, o):
        raise NotImplementedForSymbol(self.__itruediv__, "/=", o)

    __idiv__ = __itruediv__

    # -- fluent methods: x.sum(), x.reshape(...), ... --------------------------------------
    def __getattr__(self, name):
        if name.startswith("__") or name in _NOT_OPS:
            raise AttributeError(f"'Symbol' object has no attribute {name!r}")
        if hasattr(NDArray, name) and callable(getattr(_nd, name, None)):
            fn = _op_function(name)

            def method(*args, **kwargs):
                return fn(self, *args, **kwargs)
            method.__name__ = name
            return method
        raise AttributeError(f"'Symbol' object has no attribute {name!r}")

    def as_np_ndarray(self):
        """This symbol, for mx.np's functions (``sym.np.*``): neogluon's symbols evaluate to
        arrays that both front-ends accept, so there is one symbol type."""
        return self

    def as_nd_ndarray(self):
        """This symbol (see :meth:`as_np_ndarray`)."""
        return self

    def astype(self, dtype):
        """Cast to ``dtype`` (MXNet's ``Cast``)."""
        return _op_function("cast")(self, dtype=dtype)

    # -- inference -----------------------------------------------------------------------
    def infer_shape(self, *args, **kwargs):
        """Shapes of the arguments, outputs and auxiliary states from some input shapes.

        Parameters
        ----------
        *args : tuple
            Shapes of the arguments, in :meth:`list_arguments` order (None for unknown).
        **kwargs : tuple
            Shapes by argument name.

        Returns
        -------
        (arg_shapes, out_shapes, aux_shapes) : lists of tuples, or (None, None, None) when
        some shape cannot be inferred.
        """
        res = self._infer_shape(args, kwargs, partial=False)
        return res

    def infer_shape_partial(self, *args, **kwargs):
        """Like :meth:`infer_shape`, but unknown shapes are returned as ``()`` or with 0s."""
        return self._infer_shape(args, kwargs, partial=True)

    def _infer_shape(self, args, kwargs, partial):
        shapes = _named_args(self, args, kwargs, "infer_shape")
        for k, v in shapes.items():
            if v is not None and not isinstance(v, (tuple, list)):
                raise TypeError(f"infer_shape: the shape of {k!r} must be a tuple, got {v!r}")
        if not _util.is_np_shape():
            return self._infer_legacy_shapes(shapes, partial)
        # NumPy shape semantics: -1 marks an unknown dimension and None an unknown shape.
        # Inference works with MXNet's legacy marks (0 and ()); a partial result is written
        # back with -1 when some given dimension was -1 (so a zero size given without any -1
        # stays 0, while in a result that has both, the zero sizes read as unknown).
        marks_unknown = any(v is not None and any(int(d) < 0 for d in v)
                            for v in shapes.values()) or any(
            any(int(d) < 0 for d in (_var_shape(n) or ())) for n in _plan(self).var_nodes)
        shapes = {k: v if v is None else tuple(max(int(d), 0) for d in v)
                  for k, v in shapes.items()}
        res = self._infer_legacy_shapes(shapes, partial)
        if not partial or res[0] is None:
            return res

        def np_shape(shape):
            if not shape:
                return None
            return tuple(-1 if marks_unknown and d == 0 else d for d in shape)
        return tuple([np_shape(x) for x in part] for part in res)

    def _infer_legacy_shapes(self, shapes, partial):
        """:meth:`_infer_shape` with MXNet's legacy shapes (0: unknown dimension)."""
        plan = _plan(self)
        key = _shape_key(plan, "shape", partial, shapes)
        if key is not None:
            res = _cache_get(plan, key)
            if res is not None:
                return res
        info = _Inference(self, shapes, {}).run()

        def shp(node, i=0):
            s = info.shape.get((id(node), i))
            if s is None:
                return None
            return tuple(int(d) for d in s)
        arg_nodes, aux_nodes = plan.arg_nodes, plan.aux_nodes
        args_s = [shp(n) for n in arg_nodes]
        outs_s = [shp(n, i) for n, i in self._outputs]
        aux_s = [shp(n) for n in aux_nodes]
        if partial:
            def part(node, i=0):
                s = info.partial.get((id(node), i))
                return tuple(int(d) for d in s) if s is not None else ()
            res = ([part(n) for n in arg_nodes], [part(n, i) for n, i in self._outputs],
                   [part(n) for n in aux_nodes])
            if key is not None:
                _cache_put(plan, key, res)
            return res
        if any(s is None for s in args_s + outs_s + aux_s):
            unknown = [n.name for n, s in zip(arg_nodes + aux_nodes, args_s + aux_s)
                       if s is None]
            import warnings
            warnings.warn("Cannot decide shape for the following arguments (0s in shape "
                          f"means unknown dimensions). Consider providing them as input: "
                          f"{unknown}", stacklevel=4)
            return None, None, None
        if key is not None:
            _cache_put(plan, key, (args_s, outs_s, aux_s))
        return args_s, outs_s, aux_s

    def infer_type(self, *args, **kwargs):
        """Data types of the arguments, outputs and auxiliary states from some input types.

        Returns
        -------
        (arg_types, out_types, aux_types) : lists of numpy type classes, or
        (None, None, None) when some type cannot be inferred.
        """
        return self._infer_type(args, kwargs, partial=False)

    def infer_type_partial(self, *args, **kwargs):
        """Like :meth:`infer_type`; unknown types are None."""
        return self._infer_type(args, kwargs, partial=True)

    def _infer_type(self, args, kwargs, partial):
        plan = _plan(self)
        types = _named_args(self, args, kwargs, "infer_type")
        types = {k: _dtype_name(v) for k, v in types.items() if v is not None}
        key = _shape_key(plan, "type", partial, types)
        if key is not None:
            res = _cache_get(plan, key)
            if res is not None:
                return res
        info = _Inference(self, {}, types, types_only=True).run()

        def t(node, i=0):
            d = info.dtype.get((id(node), i))
            if d == "bfloat16":
                return _np_bfloat16  # MXNet's structured bfloat16 dtype, as NDArray.dtype
            return np.dtype(d).type if d is not None else None
        a = [t(n) for n in plan.arg_nodes]
        o = [t(n, i) for n, i in self._outputs]
        x = [t(n) for n in plan.aux_nodes]
        if not partial and any(v is None for v in a + o + x):
            return None, None, None
        if key is not None:
            _cache_put(plan, key, (a, o, x))
        return a, o, x

    # -- evaluation ----------------------------------------------------------------------
    def eval(self, ctx=None, **kwargs):
        """Evaluate eagerly with NDArray values for the variables.

        Parameters
        ----------
        ctx : Context, optional
            Where creation operators (``zeros``...) put their results.
        **kwargs : NDArray
            A value for each variable, by name.

        Returns
        -------
        list of NDArray, one per output.
        """
        return _evaluate(self, kwargs, ctx=ctx)

    # -- serialisation -------------------------------------------------------------------
    def tojson(self):
        """The graph in MXNet's JSON format (loadable by MXNet 1.9.1's ``mx.sym.load``), laid
        out byte for byte as MXNet writes it."""
        return self._tojson()

    def _tojson(self, var_shapes=None):
        """:meth:`tojson`, writing ``var_shapes[name]`` as the ``__shape__`` of the variables
        it names (None: no shape), as ``HybridBlock.export`` does for Parameters."""
        nodes, arg_nodes, row_ptr, heads = self._graph_desc(var_shapes)
        graph = _Struct([("nodes", [_Struct(d.items()) for d in nodes]),
                         ("arg_nodes", arg_nodes), ("node_row_ptr", row_ptr),
                         ("heads", heads),
                         ("attrs", _graph_attrs())])
        return _MXJSONWriter().dump(graph)

    def _graph_desc(self, var_shapes=None):
        """``(nodes, arg_nodes, node_row_ptr, heads)`` of MXNet's JSON graph (a control-flow
        node's subgraphs nested in its node)."""
        order = self._order()
        index = {id(n): i for i, n in enumerate(order)}
        nodes, arg_nodes, row_ptr = [], [], [0]
        for i, n in enumerate(order):
            d = {"op": n.op, "name": n.name}
            attrs = self._node_attrs(n)
            if var_shapes and n.is_var and n.name in var_shapes:
                shape = var_shapes[n.name]
                if shape is None:
                    attrs.pop("__shape__", None)
                else:
                    attrs["__shape__"] = str(tuple(int(v) for v in shape))
            if attrs:
                d["attrs"] = attrs
            mut = _mutated(n) if n.op == "_CachedOp" else _MUTATE.get(n.op, ())
            d["inputs"] = [[index[id(c)], int(j), 1 if (k in mut and c.is_var) else 0]
                           for k, (c, j) in enumerate(n.inputs)]
            if n.subgraphs and n.op != "_CachedOp":   # (_CachedOp: in its attribute)
                d["subgraphs"] = [_struct_graph(g if isinstance(g, dict) else
                                                _subgraph_desc(g)) for g in n.subgraphs]
            nodes.append(d)
            if n.is_var:
                arg_nodes.append(i)
            row_ptr.append(row_ptr[-1] + _total_outputs(n))
        heads = [[index[id(n)], int(j), 0] for n, j in self._outputs]
        return nodes, arg_nodes, row_ptr, heads

    def save(self, fname, remove_amp_cast=True):
        """Write :meth:`tojson` to ``fname`` (atomically, with the permissions the umask
        gives, as MXNet's file has)."""
        if not isinstance(fname, str):
            raise TypeError("fname need to be string")
        sym = _without_amp_cast(self) if remove_amp_cast else self
        text = sym.tojson().encode()
        _fileio.write_bytes(fname, text)

    def debug_str(self):
        """A readable listing of the graph's nodes."""
        lines = []
        for n in self._order():
            if n.is_var:
                lines.append(f"Variable:{n.name}")
            else:
                ins = ", ".join(f"{c.name}[{j}]" for c, j in n.inputs)
                lines.append(f"Op:{n.op}, Name={n.name}\nInputs:\n\t{ins}")
        return "\n".join(lines)

    # -- executors ---------------------------------------------------------------------------
    # The executors run on the captured-graph machinery of hybridize (neogluon/gluon/
    # _executor.py), a layer above this one: imported when first used, as MXNet's symbol
    # module imports its executor.
    def bind(self, ctx, args, args_grad=None, grad_req="write", aux_states=None,
             group2ctx=None, shared_exec=None):
        """Bind arrays to the arguments: an :class:`~neogluon.executor.Executor`.

        Parameters
        ----------
        ctx : Context
        args : list of NDArray or dict of str to NDArray
            Every argument (``list_arguments()`` order for a list).
        args_grad : list or dict of NDArray, optional
            Gradient buffers; with a dict only the arguments named get gradients.
        grad_req : {'write', 'add', 'null'}, list or dict, default 'write'
        aux_states : list or dict of NDArray, optional
            Every auxiliary state (required when the symbol has any).
        group2ctx : dict of str to Context, optional
            Where the nodes of each ``ctx_group`` attribute run.
        shared_exec : Executor, optional
            Accepted for MXNet compatibility (arrays are shared by passing them).
        """
        from ..gluon._executor import bind
        return bind(self, ctx, args, args_grad, grad_req, aux_states, group2ctx, shared_exec)

    def simple_bind(self, ctx, grad_req="write", type_dict=None, stype_dict=None,
                    group2ctx=None, shared_arg_names=None, shared_exec=None,
                    shared_buffer=None, **kwargs):
        """Infer the shapes and dtypes of every array from the given input shapes, allocate
        them (zeros) and bind: an :class:`~neogluon.executor.Executor`.

        Parameters
        ----------
        ctx : Context
        grad_req : {'write', 'add', 'null'}, list or dict, default 'write'
        type_dict : dict of str to dtype, optional
        stype_dict : dict of str to str, optional
            Storage types ('default', 'row_sparse', 'csr') by argument name.
        group2ctx : dict of str to Context, optional
            Where the arrays and nodes of each ``ctx_group`` live.
        shared_arg_names : list of str, optional
            Arguments whose arrays (and gradient buffers) are taken from ``shared_exec``.
        shared_exec : Executor, optional
            Also shares its auxiliary states of the same names and shapes.
        shared_buffer : dict of str to NDArray, optional
            Arrays reused (or viewed, when smaller) for the other arguments by name; new
            arrays are added to it.
        **kwargs : tuple of int
            Input shapes by name.
        """
        from ..gluon._executor import simple_bind
        return simple_bind(self, ctx, grad_req, type_dict, stype_dict, group2ctx,
                           shared_arg_names, shared_exec, shared_buffer, **kwargs)

    _bind = bind
    _simple_bind = simple_bind

    def gradient(self, wrt):
        """Not provided: neogluon differentiates with autograd, not symbolically."""
        raise MXNetError("Symbol.gradient is not provided by neogluon; use autograd")

    # -- composition ---------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        """A copy of this symbol with variables replaced by symbols (``net(fc3_data=x)``).

        Parameters
        ----------
        *args : Symbol
            Inputs of an atomic symbol (:meth:`_gen_atomic_symbol`), in order.
        name : str, optional
            New name of the node of the first output.
        **kwargs : Symbol
            Replacements of variables (arguments or auxiliary states), by name.
        """
        composed = Symbol(self._outputs)
        composed._compose(*args, **kwargs)
        return composed

    def _compose(self, *args, **kwargs):
        """:meth:`__call__` in place: this symbol becomes the composed one."""
        name = kwargs.pop("name", None)
        if args and kwargs:
            raise TypeError("compose only accept input Symbols either as positional or "
                            "keyword arguments, not both")
        for value in list(args) + list(kwargs.values()):
            if not isinstance(value, Symbol):
                raise TypeError(f"Compose expect `Symbol` as arguments, got "
                                f"{type(value).__name__}")
        atomic = _atomic_node(self)
        if atomic is not None:
            self._outputs = _compose_atomic(atomic, args, kwargs, name)._outputs
            return
        if args:
            raise MXNetError(f"compose: {len(args)} positional input(s) given; a symbol that "
                             "is not atomic is composed with keyword arguments only (variable "
                             f"name=Symbol), its variables being {self.list_inputs()}")
        inputs = self.list_inputs()
        unknown = [k for k in kwargs if k not in inputs]
        if unknown:
            raise MXNetError(f"compose: keyword argument(s) {unknown} name no variable of the "
                             f"symbol; its variables are {inputs}")
        for k, v in kwargs.items():
            _entry(v, f"compose ({k})")   # one output each
        # (the operator nodes are copies: the original symbol keeps its graph)
        composed = _substitute(self, kwargs)
        if name:
            head = composed._outputs[0][0]
            if head.is_var:   # (variables are shared with the original: renamed in a copy)
                copy = _Node("null", name, dict(head.attrs))
                composed = Symbol([(copy if n is head else n, i) for n, i in composed._outputs])
            else:
                head.name = name
        self._outputs = composed._outputs

    def _gen_atomic_symbol(self):
        """The operator of this symbol's (first output's) node alone, with its attributes and
        no inputs: a symbol to compose with inputs (``atomic(data, weight)``)."""
        node = self._outputs[0][0]
        if node.is_var:
            raise MXNetError(f"_gen_atomic_symbol: {node.name!r} is a variable, not an "
                             "operator")
        atom = _Node.__new__(_Node)
        for slot in _Node.__slots__:
            setattr(atom, slot, getattr(node, slot))
        atom.name = ""
        atom.attrs = dict(node.attrs)
        atom.extra = dict(node.extra)
        atom.inputs = []
        atom.input_names = None
        return Symbol([(atom, i) for i in range(_n_visible(atom))])


def _graph_attrs():
    """The graph-level attributes MXNet writes: its version, and ``is_np_shape`` while NumPy
    shape semantics is on (a file whose 0s are zero sizes, not unknown ones)."""
    attrs = {"mxnet_version": ["int", MXNET_API_VERSION_INT]}
    if _util.is_np_shape():
        attrs["is_np_shape"] = ["int", 1]
    return attrs


class _Struct(list):
    """An object whose keys are written in this order, always over several lines."""


class _MXJSONWriter:
    """JSON laid out byte for byte as MXNet's (dmlc's) writer lays it out: structures over
    several lines, maps over several lines when they have more than one key (keys sorted),
    arrays of plain values on one line up to 10 items, ``", "`` then a new line between the
    items of a multi-line scope, two spaces of indent per level."""

    def __init__(self):
        self.parts = []
        self.scopes = []      # [multi_line, count]

    def dump(self, value):
        self.value(value)
        return "".join(self.parts)

    def _sep(self):
        if not self.scopes or self.scopes[-1][0]:
            self.parts.append("\n" + " " * (2 * len(self.scopes)))

    def _begin(self, ch, multi):
        self.parts.append(ch)
        self.scopes.append([multi, 0])

    def _end(self, ch):
        multi, n = self.scopes.pop()
        if multi and n:
            self._sep()
        self.parts.append(ch)

    def _next(self):
        top = self.scopes[-1]
        if top[1]:
            self.parts.append(", ")
        self._sep()
        top[1] += 1

    def value(self, v):
        if isinstance(v, _Struct):
            self._begin("{", True)
            for k, x in v:
                self._next()
                self.parts.append(_json_str(k) + ": ")
                self.value(x)
            self._end("}")
        elif isinstance(v, dict):
            self._begin("{", len(v) > 1)
            for k in sorted(v):
                self._next()
                self.parts.append(_json_str(k) + ": ")
                self.value(v[k])
            self._end("}")
        elif isinstance(v, (list, tuple)):
            self._begin("[", len(v) > 10 or any(isinstance(x, (_Struct, dict)) for x in v))
            for x in v:
                self._next()
                self.value(x)
            self._end("]")
        elif isinstance(v, str):
            self.parts.append(_json_str(v))
        elif isinstance(v, bool):
            self.parts.append("true" if v else "false")
        else:
            self.parts.append(str(int(v)))


def _subgraph_desc(sym):
    """A subgraph Symbol as the graph dict a node's ``subgraphs`` entry holds."""
    nodes, arg_nodes, row_ptr, heads = sym._graph_desc()
    return {"nodes": nodes, "arg_nodes": arg_nodes, "node_row_ptr": row_ptr, "heads": heads}


def _struct_graph(desc):
    """A subgraph (a fused node's) in the key order MXNet writes graphs and nodes."""
    if isinstance(desc, _Struct):
        return desc
    def node(d):
        items = [("op", d.get("op", "null")), ("name", d.get("name", ""))]
        if d.get("attrs"):
            items.append(("attrs", dict(d["attrs"])))
        items.append(("inputs", [list(e) for e in d.get("inputs", [])]))
        if d.get("subgraphs"):
            items.append(("subgraphs", [_struct_graph(g) for g in d["subgraphs"]]))
        return _Struct(items)
    items = [("nodes", [node(n) for n in desc.get("nodes", [])])]
    for key in ("arg_nodes", "node_row_ptr", "heads"):
        if key in desc:
            items.append((key, desc[key]))
    return _Struct(items)


def _json_str(s):
    out = ['"']
    for ch in str(s):
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _without_amp_cast(sym):
    """``sym`` with MXNet's AMP cast nodes (``amp_cast``, ``amp_multicast``) taken out, as
    ``save(remove_amp_cast=True)`` writes it."""
    order = sym._order()
    if not any(n.op in ("amp_cast", "amp_multicast") for n in order):
        return sym
    new = {}

    def src(entry):
        node, i = entry
        rep = new[id(node)]
        if isinstance(rep, list):
            return rep[i]
        return (rep, i)
    for node in order:
        if node.op == "amp_cast":
            new[id(node)] = [src(node.inputs[0])]
            continue
        if node.op == "amp_multicast":
            new[id(node)] = [src(e) for e in node.inputs]
            continue
        if node.is_var:
            new[id(node)] = node
            continue
        c = _Node.__new__(_Node)
        for slot in _Node.__slots__:
            setattr(c, slot, getattr(node, slot))
        c.inputs = [src(e) for e in node.inputs]
        new[id(node)] = c
    return Symbol([src(e) for e in sym._outputs])


def _atomic_node(sym):
    """The node of an atomic symbol (an operator node without inputs, as
    :meth:`Symbol._gen_atomic_symbol` makes), else None."""
    nodes = {id(n) for n, _ in sym._outputs}
    node = sym._outputs[0][0]
    if len(nodes) != 1 or node.is_var or node.inputs:
        return None
    meta = _OPS.get(node.op, {})
    return node if meta.get("inputs") or meta.get("variadic") else None


def _compose_atomic(node, args, kwargs, name):
    """The operator of an atomic node called on ``args``/``kwargs`` (missing inputs become
    variables, as when the operator is called)."""
    attrs = dict(node.attrs)
    num_args = _OPS.get(node.op, {}).get("num_args")
    if num_args and args:
        attrs.pop(num_args, None)    # (counted again from the inputs given)
    path = node.path or _nd_path(node.op)
    fn = _op_function(path)
    return fn(*args, name=name or node.name or None, attr=dict(node.extra), **attrs,
              **kwargs)



_NOT_OPS = {"shape", "dtype", "context", "ctx", "stype", "size", "ndim", "handle", "grad",
            "asnumpy", "asscalar", "wait_to_read", "attach_grad", "backward", "copyto",
            "as_in_context", "copy", "tostype", "item", "tolist", "T"}


def _max_outputs(node):
    """How many outputs of a loaded node an entry may name (hidden ones included)."""
    if node.variadic:
        return 2 ** 31
    return max(node.nout, _total_outputs(node))


def _total_outputs(node):
    """Outputs of a node, hidden ones included, as the ``node_row_ptr`` of MXNet 1.9.1's
    files counts them (the pip builds, with MKL-DNN, give max pooling a workspace output)."""
    op, a = node.op, node.attrs
    if op in ("BatchNorm", "_contrib_SyncBatchNorm", "BatchNorm_v1", "LayerNorm", "GroupNorm",
              "InstanceNorm"):
        return 3
    if op in ("Dropout", "L2Normalization", "LRN", "sort"):
        return 2
    if op == "LeakyReLU" and a.get("act_type") == "rrelu":
        return 2
    if op == "topk" and a.get("ret_typ", "indices") in ("value", "both"):
        return 2
    if op == "Pooling" and a.get("pool_type", "max") == "max":
        kernel = a.get("kernel", ())
        kernel = (kernel,) if isinstance(kernel, int) else tuple(kernel or ())
        layout = a.get("layout")
        if 1 <= len(kernel) <= 3 and (layout in (None, "None") or str(layout).startswith("NC")):
            return 2
    return node.nout


def _named_args(sym, args, kwargs, what):
    plan = _plan(sym)
    res = {}
    if args:
        names = [n.name for n in plan.arg_nodes]
        if len(args) > len(names):
            raise MXNetError(f"{what}: {len(args)} positional values for {len(names)} arguments")
        for n, v in zip(names, args):
            if v is not None:
                res[n] = v
    for k, v in kwargs.items():
        if k not in plan.inputs:
            continue  # MXNet ignores names that are not arguments
        res[k] = v
    return res


# ---------------------------------------------------------------------------- variables
def var(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None, init=None,
        stype=None, profiler_scope=None, **kwargs):
    """A placeholder variable.

    Parameters
    ----------
    name : str
    attr : dict of str to str, optional
        Extra attributes.
    shape : tuple, optional
    lr_mult, wd_mult : float, optional
    dtype : str or numpy dtype, optional
    init : Initializer or str, optional
    stype : {'default', 'row_sparse', 'csr'}, optional
    **kwargs
        More attributes; their names must look like ``__name__``.

    Returns
    -------
    Symbol
    """
    if not isinstance(name, str):
        raise TypeError("Expect a string for variable `name`")
    if attr is not None and not isinstance(attr, dict):
        raise TypeError("attr must be a dict of str to str")
    # The current AttrScope's attributes, then attr's; every key is kept (hidden ones as
    # __key__), plain keys included: on a variable they are user attributes.
    attrs = {_stored_key(k): str(v) for k, v in AttrScope._active().get(attr).items()}
    if shape is not None:
        if isinstance(shape, int):
            shape = (shape,)
        attrs["__shape__"] = str(tuple(shape))
    if lr_mult is not None:
        attrs["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        attrs["__wd_mult__"] = str(wd_mult)
    if dtype is not None:
        dn = _dtype_name(dtype)
        if dn not in _DTYPE_TO_CODE:
            raise TypeError(f"var {name!r}: unsupported dtype {dtype!r}")
        attrs["__dtype__"] = str(_DTYPE_TO_CODE[dn])
    if init is not None:
        attrs["__init__"] = init if isinstance(init, str) else init.dumps()
    if stype is not None:
        if stype not in _STYPE_TO_CODE:
            raise ValueError(f"var {name!r}: unknown stype {stype!r}")
        attrs["__storage_type__"] = str(_STYPE_TO_CODE[stype])
    if profiler_scope is not None:
        attrs["__profiler_scope__"] = profiler_scope
    for k, v in kwargs.items():
        if k.startswith("__") and k.endswith("__"):
            attrs[k] = str(v)
        else:
            raise ValueError(f"Attribute name={k} is not supported. Additional attributes must "
                             "start and end with double underscores, e.g, __yourattr__")
    return Symbol([(_Node("null", name, attrs), 0)])


Variable = var


def Group(symbols):
    """One symbol holding the outputs of several symbols, in order."""
    if isinstance(symbols, Symbol):   # a symbol of several outputs: each of them
        symbols = list(symbols)
    if not symbols or any(not isinstance(s, Symbol) for s in symbols):
        raise TypeError("Expected a list of symbols as input")
    outs = []
    for s in symbols:
        outs.extend(s._outputs)
    return Symbol(outs)


def _var_shape(node):
    s = node.attrs.get("__shape__")
    if s is None:
        return None
    shape = _SHAPE_STRS.get(s)
    if shape is None:
        shape = tuple(_parse_attr(s))
        if len(_SHAPE_STRS) > 4096:
            _SHAPE_STRS.clear()
        _SHAPE_STRS[s] = shape
    return shape


_SHAPE_STRS = {}   # declared shape string -> tuple (inference reads them at every call)


def _var_dtype(node):
    d = node.attrs.get("__dtype__")
    if d is None:
        return None
    try:
        return _CODE_TO_DTYPE[int(d)]
    except (ValueError, KeyError):
        return _dtype_name(d)


def _var_stype(node):
    s = node.attrs.get("__storage_type__")
    if s is None:
        return "default"
    try:
        return _CODE_TO_STYPE.get(int(s), "default")
    except ValueError:
        return s


# ---------------------------------------------------------------------------- operators
_SIG_CACHE = {}


def _signature(fn):
    s = _SIG_CACHE.get(fn)
    if s is None:
        try:
            s = inspect.signature(fn)
        except (TypeError, ValueError):
            s = False
        _SIG_CACHE[fn] = s
    return s


def _entry(sym, opname):
    if not isinstance(sym, Symbol):
        raise TypeError(f"{opname}: expected a Symbol, got {type(sym).__name__}")
    if len(sym._outputs) != 1:
        raise MXNetError(f"{opname}: an input symbol has {len(sym._outputs)} outputs; pass "
                         "one output (index it) as an operator input")
    return sym._outputs[0]


def _make_node(op, inputs, attrs, hint=None, name=None, path=None, input_names=None,
               variadic=False, extra=None):
    extra, plain = _scoped_attrs(extra)
    if plain:
        raise MXNetError(f"operator {op!r}: attribute(s) {sorted(plain)} (from attr= or the "
                         "AttrScope) are not arguments of the operator; user attributes are "
                         "written __name__")
    name = NameManager.current.get(name, hint or op.lower())
    entries = [_entry(s, op) for s in inputs]
    node = _Node(op, name, attrs, entries, input_names=input_names, path=path,
                 variadic=variadic, extra=extra)
    n = _n_visible(node)
    return Symbol([(node, i) for i in range(n)])


def _canonical(path):
    """The MXNet operator name recorded for the nd function at ``path``."""
    if path.startswith("_internal."):   # MXNet's internal operators keep their own names
        return _canonical(path[len("_internal."):])
    if "." in path:
        ns, fname = path.rsplit(".", 1)
        for cand in (f"_{ns}_{fname}", f"{ns}_{fname}"):
            if cand in _OPS:
                return cand
            if cand in _ALIAS:
                return _ALIAS[cand]
        return f"_{ns}_{fname}"
    if path in _OPS:
        return path
    return _ALIAS.get(path, path)


# Parameters an operator takes only for performance or placement, ignored when evaluating.
_IGNORABLE = {"workspace", "cudnn_tune", "cudnn_off", "num_args", "ctx", "name", "out",
              "__layout__"}

# Inputs created automatically when an operator is called without them.
_AUTO_INPUTS = {
    "FullyConnected": ("weight", "bias"), "Convolution": ("weight", "bias"),
    "Deconvolution": ("weight", "bias"), "Convolution_v1": ("weight", "bias"),
    "BatchNorm": ("gamma", "beta", "moving_mean", "moving_var"),
    "LayerNorm": ("gamma", "beta"), "InstanceNorm": ("gamma", "beta"),
    "GroupNorm": ("gamma", "beta"), "Embedding": ("weight",),
    "_contrib_quantized_conv": ("data", "weight", "bias", "min_data", "max_data", "min_weight",
                                "max_weight", "min_bias", "max_bias"),
    "_contrib_quantized_fully_connected": ("data", "weight", "bias", "min_data", "max_data",
                                           "min_weight", "max_weight", "min_bias", "max_bias"),
    "_contrib_quantized_rnn": ("state_cell", "min_data", "max_data"),
}


def _auto_inputs(canon, attrs):
    names = list(_AUTO_INPUTS.get(canon, ()))
    if "bias" in names:
        default_no_bias = canon == "Deconvolution"
        if _truthy(attrs.get("no_bias", default_no_bias)):
            names = [n for n in names if n not in ("bias", "min_bias", "max_bias")]
    if canon == "LeakyReLU" and attrs.get("act_type") == "prelu":
        names = ["gamma"]
    if canon == "RNN":   # MXNet adds <name>_state_cell for an LSTM, <name>_sequence_length
        if attrs.get("mode") == "lstm":
            names.append("state_cell")
        if _truthy(attrs.get("use_sequence_length", False)):
            names.append("sequence_length")
    return names


def _make_op(fn, path, args, kwargs):
    canon = _canonical(path)
    fname = path.rsplit(".", 1)[-1]
    name = kwargs.pop("name", None)
    user_attr = kwargs.pop("attr", None)
    kwargs.pop("out", None)
    # MXNet stores these operator keywords as hidden attributes ('lr_mult' -> '__lr_mult__'),
    # which the variables the call creates inherit.
    attr = {}
    for k in _HIDDEN_KEYS:
        if k in kwargs:
            attr[f"__{k}__"] = str(kwargs.pop(k))
    # keywords written __key__ (__layout__='TNC') are attributes of the node, as in MXNet
    for k in [k for k in kwargs if k.startswith("__") and k.endswith("__")]:
        attr[k] = str(kwargs.pop(k))
    sig = _signature(fn)
    if not sig:
        raise MXNetError(f"mx.sym.{path}: the operator's arguments cannot be inspected")
    # attr= over the current AttrScope: hidden and __key__ entries are node attributes; MXNet
    # passes any other key to the operator as an argument (a string it parses).
    scoped, plain = _scoped_attrs(user_attr)
    attr.update(scoped)
    if plain:
        takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD
                        for p in sig.parameters.values())
        for k, v in plain.items():
            if k not in sig.parameters and not takes_any:
                raise MXNetError(f"mx.sym.{path}: attribute {k!r} (from attr= or the AttrScope) "
                                 "is not an argument of the operator; user attributes are "
                                 f"written __{k}__")
            kwargs[k] = _parse_attr(v) if isinstance(v, str) else v
    try:
        bound = sig.bind_partial(*args, **kwargs)
    except TypeError as err:
        raise TypeError(f"mx.sym.{path}: {err}") from None
    inputs, names, attrs = {}, {}, {}
    variadic = []
    params = sig.parameters
    for pname, val in bound.arguments.items():
        kind = params[pname].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            if len(val) == 1 and isinstance(val[0], (list, tuple)):
                val = tuple(val[0])
            for v in val:
                if not isinstance(v, Symbol):
                    raise TypeError(f"mx.sym.{path}: positional inputs must be Symbols, got "
                                    f"{type(v).__name__}")
                variadic.append(v)
        elif kind is inspect.Parameter.VAR_KEYWORD:
            for k, v in val.items():
                if isinstance(v, Symbol):
                    inputs[k] = v
                else:
                    attrs[k] = v
        elif isinstance(val, Symbol):
            inputs[pname] = val
        elif val is None and (pname in _OPS.get(canon, {}).get("inputs", ()) or
                              pname in _TENSOR_PARAMS):
            continue  # an optional tensor input left out (bias=None), not an attribute
        elif isinstance(val, NDArray):
            raise TypeError(f"mx.sym.{path}: argument {pname!r} is an NDArray; symbols and "
                            "NDArrays cannot be mixed")
        else:
            attrs[pname] = val
    node_name = NameManager.current.get(name, fname.lower())
    # A variable the call creates for a missing input gets all of the node's attributes
    # (its arguments as strings and the user's), as MXNet's composition copies them.
    inherited = {k: _attr_str(k, v) for k, v in attrs.items()}
    inherited.update(attr)
    auto = _auto_inputs(canon, attrs)
    if not variadic:
        # Required tensor inputs left out become variables too ('convolution0_data').
        tensor_inputs = _OPS.get(canon, {}).get("inputs", ())
        auto = [p for p in params if p in tensor_inputs and p not in attrs and
                params[p].default is inspect.Parameter.empty and
                params[p].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD] + \
            [a for a in auto if a not in params or params[a].default is not
             inspect.Parameter.empty]
    for iname in auto:
        if iname not in inputs:
            inputs[iname] = Symbol([(_Node("null", f"{node_name}_{iname}", dict(inherited)), 0)])
    if variadic:
        # In the signature's order: evaluation passes the inputs positionally, so a named
        # input before *args (fn(data, *arrays)) must stay in front of the variadic ones.
        order = list(params)
        star = next(i for i, p in enumerate(order)
                    if params[p].kind is inspect.Parameter.VAR_POSITIONAL)
        ins = [inputs[k] for k in order[:star] if k in inputs] + variadic + \
            [inputs[k] for k in order[star + 1:] if k in inputs]
        in_names = None
        meta = _OPS.get(canon, {})
        if meta.get("num_args") and meta["num_args"] not in attrs:
            attrs[meta["num_args"]] = len(variadic)
    else:
        order = [k for k in params if k in inputs] + [k for k in inputs if k not in params]
        ins = [inputs[k] for k in order]
        in_names = order
    entries = [_entry(s, path) for s in ins]
    _set_input_var_attrs(canon, attrs, entries)
    node = _Node(canon, node_name, attrs, entries, input_names=in_names, path=path,
                 variadic=bool(variadic), extra=attr)
    n = _n_visible(node)
    return Symbol([(node, i) for i in range(n)])


_ZERO_INIT, _ONE_INIT = '["zero", {}]', '["one", {}]'
# Initializers some operators give the variables at these input positions when composed
# (MXNet's FSetInputVarAttrOnCompose): a variable that has its own __init__ keeps it.
_COMPOSE_INIT = {"BatchNorm": {3: _ZERO_INIT, 4: _ONE_INIT},
                 "BatchNorm_v1": {3: _ZERO_INIT, 4: _ONE_INIT},
                 "_contrib_SyncBatchNorm": {3: _ZERO_INIT, 4: _ONE_INIT},
                 "_contrib_BatchNormWithReLU": {3: _ZERO_INIT, 4: _ONE_INIT},
                 "IdentityAttachKLSparseReg": {1: _ZERO_INIT}}


def _set_input_var_attrs(canon, attrs, entries):
    inits = _COMPOSE_INIT.get(canon)
    if canon == "LeakyReLU" and attrs.get("act_type") == "prelu":
        inits = {1: '["Constant", {"value": 0.25}]'}
    elif canon == "UpSampling" and attrs.get("sample_type") == "bilinear":
        inits = {1: '["bilinear", {}]'}
    if not inits:
        return
    for pos, init in inits.items():
        if pos < len(entries) and entries[pos][0].is_var:
            entries[pos][0].attrs.setdefault("__init__", init)


_TENSOR_PARAMS = {"bias", "gamma", "beta", "weight", "sequence_length", "length",
                  "state_cell", "data"}
_HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage",
                "profiler_scope")
_NOT_OP_FUNCS = {"array", "empty", "load", "save", "load_frombuffer", "save_tobuffer",
                 "from_numpy", "from_torch", "to_torch", "from_dlpack", "to_dlpack_for_read",
                 "to_dlpack_for_write", "waitall", "NDArray", "infer_reshape", "zeros", "ones",
                 "full", "arange", "eye", "linspace", "empty"}
_FUNC_CACHE = {"contrib.rand_zipfian": None}   # (filled below: Python-level functions)


def _sym_rand_zipfian(true_classes, num_sampled, range_max, ctx=None):
    """Symbolic ``contrib.rand_zipfian``: as MXNet's, a composition of operators returning
    three symbols (sampled classes, expected counts of the true and of the sampled
    classes), where the nd function returns three arrays."""
    log_range = math.log(range_max + 1)
    draw = _op_function("random.uniform")(low=0, high=log_range, shape=(num_sampled,),
                                           dtype="float64")
    sampled = (draw.exp() - 1).astype("int64") % range_max

    def expected(classes):
        c = classes.astype("float64")
        return ((c + 2.0) / (c + 1.0)).log() / log_range * num_sampled
    return sampled, expected(true_classes), expected(sampled)


def _op_function(path):
    """The symbolic twin of the nd operator at ``path`` ('FullyConnected', 'contrib.x')."""
    f = _FUNC_CACHE.get(path)
    if f is not None:
        return f
    target = _resolve_path(_nd, path)
    if target is None or not callable(target) or isinstance(target, type):
        raise AttributeError(f"neogluon.symbol has no operator {path!r}")

    def op(*args, **kwargs):
        return _make_op(target, path, args, kwargs)
    op.__name__ = path.rsplit(".", 1)[-1]
    op.__qualname__ = op.__name__
    op.__doc__ = (f"Symbolic ``{path}``: records a node; evaluating it calls "
                  f"``nd.{path}``.\n\n" + (target.__doc__ or ""))
    _FUNC_CACHE[path] = op
    return op


def _resolve_path(root, path):
    target = root
    for p in path.split("."):
        target = getattr(target, p, None)
        if target is None:
            if path in ("_gluon_rnn", "RNN", "_rnn_param_concat") and root is _nd:
                from ..gluon.rnn import _op  # noqa: F401  (registers nd._gluon_rnn, nd.RNN)
                return getattr(_nd, path, None)
            return None
    return target


class _Namespace:
    """``mx.sym.contrib``, ``mx.sym.random``...: the twins of ``nd.<namespace>``."""

    def __init__(self, ns):
        self._ns = ns

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        target = _resolve_path(_nd, f"{self._ns}.{name}")
        if target is not None and type(target).__name__ == "module":
            return _Namespace(f"{self._ns}.{name}")   # sym.np.linalg, sym.np.random...
        try:
            return _op_function(f"{self._ns}.{name}")
        except AttributeError:
            raise AttributeError(f"neogluon.symbol.{self._ns} has no operator {name!r}") \
                from None

    def __dir__(self):
        mod = _resolve_path(_nd, self._ns)
        return [n for n in dir(mod) if not n.startswith("_")] if mod else []


# Creation operators: no symbol inputs, recorded under MXNet's internal names.
def zeros(shape, dtype=None, **kwargs):
    """A symbol of zeros (``_zeros``)."""
    return _creation("_zeros", "_zeros", {"shape": _shape_tuple(shape), "dtype": dtype}, kwargs)


def ones(shape, dtype=None, **kwargs):
    """A symbol of ones (``_ones``)."""
    return _creation("_ones", "_ones", {"shape": _shape_tuple(shape), "dtype": dtype}, kwargs)


def full(shape, val, dtype=None, **kwargs):
    """A symbol filled with ``val`` (``_full``)."""
    return _creation("_full", "_full", {"shape": _shape_tuple(shape), "dtype": dtype,
                                       "value": float(val)}, kwargs)


def arange(start, stop=None, step=1.0, repeat=1, infer_range=False, name=None, dtype=None):
    """A symbol of evenly spaced values (``_arange``)."""
    return _creation("_arange", "_arange", {"start": start, "stop": stop, "step": step,
                                           "repeat": repeat, "infer_range": infer_range,
                                           "dtype": dtype},
                     {"name": name})


def eye(N, M=0, k=0, dtype=None, **kwargs):
    """A symbol of an ``N`` x ``M`` (``M`` 0: ``N``) matrix with ones on diagonal ``k``
    (``_eye``)."""
    return _creation("_eye", "_eye", {"N": N, "M": M, "k": k, "dtype": dtype}, kwargs)


def linspace(start, stop, num, endpoint=True, name=None, dtype=None):
    """A symbol of ``num`` evenly spaced values from ``start`` to ``stop`` (included when
    ``endpoint``) (``_linspace``)."""
    return _creation("_linspace", "_linspace", {"start": start, "stop": stop, "num": num,
                                               "endpoint": endpoint, "dtype": dtype},
                     {"name": name})


def _shape_tuple(shape):
    return (shape,) if isinstance(shape, int) else tuple(shape)


def _creation(op, hint, attrs, kwargs):
    name = kwargs.pop("name", None)
    attr = dict(kwargs.pop("attr", None) or {})
    kwargs.pop("ctx", None)
    for k in [k for k in kwargs if k.startswith("__") and k.endswith("__")]:
        attr.setdefault(k, kwargs.pop(k))   # (node attributes, as in MXNet)
    attrs.update(kwargs)
    if attrs.get("dtype") is None:
        attrs["dtype"] = "float32"
    else:
        attrs["dtype"] = _dtype_name(attrs["dtype"])
    return _make_node(op, [], attrs, hint=hint, name=name,
                      extra={k: str(v) for k, v in (attr or {}).items()})


def _binary_function(op, scalar_op, rscalar_op, py):
    def f(left, right):
        if isinstance(left, Symbol) and isinstance(right, Symbol):
            return _make_node(op, [left, right], {}, hint=op.strip("_"))
        if isinstance(left, Symbol):
            return _make_node(scalar_op, [left], {"scalar": right},
                              hint=scalar_op.strip("_").replace("_", ""))
        if isinstance(right, Symbol):
            return _make_node(rscalar_op, [right], {"scalar": left},
                              hint=rscalar_op.strip("_").replace("_", ""))
        return py(left, right)
    return f


power = pow = _binary_function("_power", "_power_scalar", "_rpower_scalar",
                               lambda a, b: a ** b)
maximum = _binary_function("_maximum", "_maximum_scalar", "_maximum_scalar", max)
minimum = _binary_function("_minimum", "_minimum_scalar", "_minimum_scalar", min)
hypot = _binary_function("_hypot", "_hypot_scalar", "_hypot_scalar",
                         lambda a, b: float(np.hypot(a, b)))


# ---------------------------------------------------------------------------- load
# Keys MXNet keeps as hidden attributes (``lr_mult`` -> ``__lr_mult__``).
_HIDDEN_ATTRS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage",
                 "profiler_scope")
_CURRENT_VERSION = MXNET_API_VERSION_INT


def _file_version(desc):
    """MXNet version that wrote a graph (``attrs.mxnet_version``; 0.8.0 when absent)."""
    v = (desc.get("attrs") or {}).get("mxnet_version")
    if isinstance(v, (list, tuple)) and len(v) == 2:
        v = v[1]
    try:
        return int(v) if v is not None else 800
    except (TypeError, ValueError):
        raise MXNetError(f"load_json: mxnet_version {v!r} is not a version number") from None


def _op_input_names(op, attrs):
    """The tensor inputs an operator takes with these attributes (None: variadic/unknown)."""
    meta = _OPS.get(op)
    if meta is None or meta.get("variadic"):
        return None
    names = list(meta.get("inputs", []))
    if op == "RNN":
        names = names[:4] if attrs.get("mode") == "lstm" else names[:3]
    elif op in ("LeakyReLU",):
        names = names[:2] if attrs.get("act_type") == "prelu" else names[:1]
    elif "bias" in names and _truthy(_parse_attr(attrs.get(
            "no_bias", "True" if op == "Deconvolution" else "False"))):
        names.remove("bias")
    return names


def _upgrade_node_attrs(node_d, attrs, inputs, nodes):
    """MXNet's pass for files older than the running version: hidden keys written plainly
    (``lr_mult``) become ``__lr_mult__``; ``<input>_<key>`` on an operator moves to that input
    variable. Variables keep the plain key as well (as MXNet 1.9.1 does)."""
    op = node_d.get("op", "null")
    moved = {}
    for k in list(attrs):
        for key in _HIDDEN_ATTRS:
            if k == key:
                if op == "null":
                    attrs[f"__{key}__"] = attrs[k]
                else:
                    attrs[f"__{key}__"] = attrs.pop(k)
                break
            if k.endswith("_" + key) and len(k) > len(key) + 1 and op != "null":
                arg = k[:-len(key) - 1]
                names = _op_input_names(op, {a: v for a, v in attrs.items()}) or []
                if arg in names:
                    idx = names.index(arg)
                    if idx < len(inputs) and nodes[inputs[idx][0]].is_var:
                        moved[(inputs[idx][0], key)] = attrs.pop(k)
                break
    return moved


def load_json(json_str):
    """A Symbol from MXNet's JSON graph format (what :meth:`Symbol.tojson` writes).

    Reads every format MXNet 1.x reads: current files and the older ones it upgrades (op
    parameters under ``param``, attributes under ``attr``, no ``node_row_ptr`` or
    ``mxnet_version``, two-element input entries, auxiliary inputs missing before 0.9,
    plainly written ``lr_mult``/``wd_mult`` keys, argmax's old ``axis=-1``). An operator that
    neogluon cannot compute is reported here, with its node's name.

    Parameters
    ----------
    json_str : str
    """
    if not isinstance(json_str, str):
        raise TypeError("json_str needs to be string")
    return _from_json_text(json_str)


def _from_json_text(text, source=None):
    """The Symbol of a JSON graph text; errors name ``source`` (a file) when given."""
    try:
        try:
            desc = json.loads(text)
        except RecursionError:
            raise MXNetError("load_json: not a JSON symbol graph (nested too deeply)") from None
        except ValueError as err:
            raise MXNetError(f"load_json: not a JSON symbol graph ({err})") from None
        return _from_desc(desc)
    except MXNetError as err:
        if source is None:
            raise
        raise MXNetError(f"symbol file '{source}': {err}") from None


def _from_desc(desc):
    """The Symbol of a parsed JSON graph, after checking its structure."""
    _check_graph(desc, "load_json: ")
    return _load_desc(desc, _file_version(desc))


def _load_desc(desc, version):
    """The Symbol of a parsed JSON graph (or a control-flow node's subgraph) written by
    MXNet ``version``."""
    upgrade = version < _CURRENT_VERSION
    raw_nodes = desc["nodes"]
    row_ptr = desc.get("node_row_ptr")
    nodes = []
    var_attrs = {}
    for i, d in enumerate(raw_nodes):
        if not isinstance(d, dict):
            raise MXNetError(f"load_json: node {i} is not an object")
        op = d.get("op", "null")
        name = d.get("name", f"node{i}")
        sattrs = {}
        for key in ("param", "attr", "attrs"):   # older files: param (op) + attr (user)
            part = d.get(key)
            if isinstance(part, dict):
                sattrs.update({k: str(v) if not isinstance(v, str) else v
                               for k, v in part.items()})
        inputs = []
        for e in d.get("inputs", []):
            if not isinstance(e, (list, tuple)) or not e:
                raise MXNetError(f"load_json: node {name!r} has a malformed input entry {e!r}")
            src = e[0]
            if not isinstance(src, int) or not 0 <= src < i:
                raise MXNetError(f"load_json: node {name!r} has input {src} that is not an "
                                 "earlier node")
            out = int(e[1]) if len(e) > 1 else 0
            if out >= _max_outputs(nodes[src]):
                raise MXNetError(f"load_json: node {i} ({name!r}): input {len(inputs)} is "
                                 f"output {out} of node {src} ({nodes[src].name!r}), which "
                                 f"has {_max_outputs(nodes[src])} outputs")
            inputs.append((src, out))
        if upgrade:
            for (src, key), val in _upgrade_node_attrs(d, sattrs, inputs, nodes).items():
                nodes[src].attrs[f"__{key}__"] = val
                nodes[src].attrs.setdefault(key, val)
            if version < 905 and op in ("argmax", "argmin") and sattrs.get("axis") == "-1":
                del sattrs["axis"]
        if op == "null":
            node = _Node("null", name, dict(sattrs))
            nodes.append(node)
            continue
        if op not in _IMPL and op not in _cf.GRAPH_OPS:
            try:
                _nd_path(op)
            except MXNetError:
                raise MXNetError(f"load_json: operator {op!r} (node {i}, {name!r}) is not "
                                 "supported by neogluon") from None
        in_nodes = [(nodes[src], j) for src, j in inputs]
        if upgrade and version < 900:
            # files before 0.9 leave out the auxiliary inputs (BatchNorm's moving stats)
            names = _op_input_names(op, sattrs)
            if names and len(in_nodes) < len(names):
                for arg in names[len(in_nodes):]:
                    if arg == "sequence_length":
                        break
                    v = _Node("null", f"{name}_{arg}", dict(sattrs))
                    in_nodes.append((v, 0))
        if upgrade and version < 904 and op in _MUTATE:
            for pos, init in zip(_MUTATE[op], ('["zero", {}]', '["one", {}]')):
                if pos < len(in_nodes) and in_nodes[pos][0].is_var:
                    in_nodes[pos][0].attrs.setdefault("__init__", init)
        extra = {k: v for k, v in sattrs.items() if k.startswith("__") and k.endswith("__")}
        params = {k: _parse_attr(v) for k, v in sattrs.items() if k not in extra}
        raw = {k: v for k, v in sattrs.items() if k not in extra}
        subgraphs = d.get("subgraphs") or None
        if op in _cf.CONTROL_OPS:
            subgraphs = _load_subgraphs(op, name, subgraphs, version)
        elif op == "_CachedOp":
            if not isinstance(raw.get("subgraph"), str):
                raise MXNetError(f"load_json: _CachedOp node {name!r} has no subgraph attribute")
            params["subgraph"] = raw["subgraph"]
            subgraphs = [load_json(raw["subgraph"])]
        if op in _SG_OPS:   # a fused node: evaluated with the attributes of what it fuses
            params = _quant.subgraph_attrs(op, params, subgraphs, name, _parse_attr)
        elif op == "_contrib_quantize_v2" and params.get("out_type", "int8") not in (
                "auto", "int8", "uint8"):
            raise MXNetError(f"load_json: operator {op!r} (node {name!r}): out_type "
                             f"{params.get('out_type')!r} is not one of 'auto', 'int8', "
                             "'uint8'")
        _check_attr_values(op, name, i, params)
        node = _Node(op, name, params, in_nodes, extra=extra, raw=raw,
                     variadic=bool(_OPS.get(op, {}).get("variadic")), subgraphs=subgraphs)
        if op == "_CachedOp":
            node.nout = len(subgraphs[0]._outputs)
        _check_attrs(node)
        if isinstance(row_ptr, list) and i + 1 < len(row_ptr):
            total = row_ptr[i + 1] - row_ptr[i]
            if total > node.nout and _total_outputs(node) != total:
                node.nout = total
        nodes.append(node)
    heads = []
    for h in desc["heads"]:
        if not isinstance(h, (list, tuple)) or not h or not isinstance(h[0], int) or \
                not 0 <= h[0] < len(nodes):
            raise MXNetError(f"load_json: head {h} is not a node")
        out = int(h[1]) if len(h) > 1 else 0
        if out >= _max_outputs(nodes[h[0]]):
            raise MXNetError(f"load_json: head {len(heads)} is output {out} of node {h[0]} "
                             f"({nodes[h[0]].name!r}), which has {_max_outputs(nodes[h[0]])} "
                             "outputs")
        heads.append((nodes[h[0]], out))
    if not heads:
        raise MXNetError("load_json: the graph has no heads (outputs)")
    return Symbol(heads)


def _load_subgraphs(op, name, subgraphs, version):
    """The subgraph Symbols of a loaded control-flow node."""
    want = {"_foreach": 1, "_while_loop": 2, "_cond": 3}[op]
    if not isinstance(subgraphs, list) or len(subgraphs) != want:
        raise MXNetError(f"load_json: operator {op!r} (node {name!r}) needs {want} subgraph(s), "
                         f"got {len(subgraphs) if isinstance(subgraphs, list) else 0}")
    res = []
    for g in subgraphs:
        if not isinstance(g, dict) or not isinstance(g.get("nodes"), list) or "heads" not in g:
            raise MXNetError(f"load_json: a subgraph of node {name!r} is not a symbol graph")
        res.append(_load_desc(g, version))
    return res


_ATTR_KINDS = {}


def _attr_kinds(op):
    """{attribute: kind} of an operator's typed parameters (``int``, ``float``, ``boolean``,
    ``Shape(tuple)``), from the argument list ``mx.operator.get_operator_arguments`` gives."""
    kinds = _ATTR_KINDS.get(op)
    if kinds is None:
        from .._op_arguments import get_operator_arguments, _implementation as _op_impl
        kinds = {}
        try:
            args = get_operator_arguments(op)
        except Exception:  # noqa: BLE001 - an operator outside the table: nothing to check
            args = None
        if args is not None:
            for n, t in zip(args.names, args.types):
                kind = t.split(",")[0].split(" or ")[0].strip()
                if kind in ("int", "float", "boolean", "Shape(tuple)"):
                    kinds[n] = kind
            fn = _op_impl(_TABLE["aliases"].get(op, op))
            kinds[None] = tuple(getattr(fn, "_mx_required", ()))
        _ATTR_KINDS[op] = kinds
    return kinds


def _attr_value_ok(kind, v):
    """Whether a parsed attribute value can be of ``kind``. Lenient where neogluon's
    parameter kinds come from defaults (a number parameter may take a tuple, as ``shape`` and
    ``axis`` do; a tuple may hold floats): it refuses what no operator takes, such as
    unparsable strings or nested garbage."""
    def num(x, ints_only=False):
        if isinstance(x, bool):
            return False
        return isinstance(x, int) or (not ints_only and isinstance(x, float))

    if v is None:
        return True
    if kind == "boolean":
        return isinstance(v, bool) or (num(v, True) and v in (0, 1))
    # (int and float alike: a kind taken from an int default may be a float in MXNet,
    # _contrib_box_nms's valid_thresh=0)
    if num(v):
        return True
    return isinstance(v, (tuple, list)) and all(x is None or num(x) for x in v)


def _check_attr_values(op, name, index, params):
    """Refuse, when a graph is loaded, an attribute value of the wrong kind (MXNet parses
    every operator parameter when it loads a graph): ``num_hidden='x'``, ``kernel='(3,a)'``,
    ``dtype='-1'``."""
    kinds = _attr_kinds(op)
    for k in kinds.get(None, ()):
        if params.get(k) is None:
            raise MXNetError(f"load_json: operator {op!r} (node {index}, {name!r}): the "
                             f"required attribute {k} is missing (or None)")
    for k, v in params.items():
        kind = kinds.get(k)
        if kind is not None and not _attr_value_ok(kind, v):
            raise MXNetError(f"load_json: operator {op!r} (node {index}, {name!r}): attribute "
                             f"{k}={v!r} is not a valid {kind}")
        if k == "dtype" and v is not None and v != "None":
            ok = isinstance(v, str) and (v in _DTYPE_TO_CODE or v == "auto")
            if not ok and isinstance(v, str):
                try:
                    ok = np.dtype(v).kind in "biuf"
                except (TypeError, ValueError, SyntaxError):
                    ok = False
            if not ok:
                raise MXNetError(f"load_json: operator {op!r} (node {index}, {name!r}): "
                                 f"attribute dtype={v!r} is not a dtype")


def _check_attrs(node):
    """Refuse, when a graph is loaded, an operator attribute the nd function computing the
    operator does not take (rather than at the first forward pass)."""
    if node.op in _IMPL or node.op in _cf.GRAPH_OPS:
        return
    path = _nd_path(node.op)
    sig = _signature(_resolve_path(_nd, path))
    if not sig:
        return
    pnames = sig.parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in pnames.values()):
        return
    for k, v in node.attrs.items():
        if k not in pnames and k not in _IGNORABLE:
            raise MXNetError(f"load_json: operator {node.op!r} (node {node.name!r}): neogluon's "
                             f"nd.{path} does not take the attribute {k}={v!r}")


def load(fname):
    """Read a symbol file (``-symbol.json``) written by MXNet or by :meth:`Symbol.save`."""
    if not isinstance(fname, str):
        raise TypeError("fname needs to be string")
    return _from_json_text(_read_text(fname), fname)


def _read_text(fname):
    """A symbol file's text; MXNetError naming the file if it cannot be read as UTF-8."""
    try:
        with open(fname, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise MXNetError(f"symbol file '{fname}' does not exist") from None
    except IsADirectoryError:
        raise MXNetError(f"symbol file '{fname}' is a directory") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise MXNetError(f"symbol file '{fname}' is not UTF-8 text (byte {err.start})") from None


# ---------------------------------------------------------------------------- evaluation
def _scalar(v):
    v = _parse_attr(v)
    return float(v) if not isinstance(v, bool) else float(v)


def _scalar_op(fn):
    def impl(F, ins, attrs, ctx):
        return fn(ins[0], _scalar(attrs.get("scalar", 0)))
    return impl


def _creation_impl(kind):
    def impl(F, ins, attrs, ctx):
        a = {k: _parse_attr(v) for k, v in attrs.items()}
        dtype = a.get("dtype") or "float32"
        if kind == "arange":
            if "shape" in a and _truthy(a.get("infer_range", False)) and a.get("stop") is None:
                # (infer_range: the length the graph gave it, from ``start`` by ``step``)
                n = int(math.prod(a["shape"]))
                start, step = a.get("start", 0), a.get("step", 1.0)
                repeat = int(a.get("repeat", 1))
                stop = start + step * -(-n // repeat)
                return F.arange(start, stop, step, repeat=repeat, ctx=ctx,
                                dtype=dtype)[:n]
            return F.arange(a.get("start", 0), a.get("stop"), a.get("step", 1.0),
                            repeat=int(a.get("repeat", 1)), ctx=ctx, dtype=dtype)
        shape = a.get("shape", ())
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if kind == "eye":
            return F.eye(int(a["N"]), int(a.get("M", 0)), int(a.get("k", 0)), ctx=ctx,
                         dtype=dtype)
        if kind == "linspace":
            return F.linspace(a["start"], a["stop"], int(a["num"]),
                              endpoint=_truthy(a.get("endpoint", True)), ctx=ctx, dtype=dtype)
        # (F.full for zeros and ones too: shape inference probes these with unknown (0)
        # dimensions, which nd.zeros/nd.ones refuse outside np_shape mode, as in MXNet)
        value = {"zeros": 0.0, "ones": 1.0}.get(kind, a.get("value", 0.0))
        return F.full(shape, value, ctx=ctx, dtype=dtype)
    return impl


def _cmp(name):
    def f(x, s):
        return getattr(x, name)(s)
    return f


_IMPL = {
    "_plus_scalar": _scalar_op(lambda x, s: x + s),
    "_minus_scalar": _scalar_op(lambda x, s: x - s),
    "_rminus_scalar": _scalar_op(lambda x, s: s - x),
    "_mul_scalar": _scalar_op(lambda x, s: x * s),
    "_div_scalar": _scalar_op(lambda x, s: x / s),
    "_rdiv_scalar": _scalar_op(lambda x, s: s / x),
    "_mod_scalar": _scalar_op(lambda x, s: x % s),
    "_rmod_scalar": _scalar_op(lambda x, s: s % x),
    "_power_scalar": _scalar_op(lambda x, s: x ** s),
    "_rpower_scalar": _scalar_op(lambda x, s: s ** x),
    "_equal_scalar": _scalar_op(_cmp("__eq__")),
    "_not_equal_scalar": _scalar_op(_cmp("__ne__")),
    "_greater_scalar": _scalar_op(_cmp("__gt__")),
    "_greater_equal_scalar": _scalar_op(_cmp("__ge__")),
    "_lesser_scalar": _scalar_op(_cmp("__lt__")),
    "_lesser_equal_scalar": _scalar_op(_cmp("__le__")),
    "_zeros": _creation_impl("zeros"),
    "_ones": _creation_impl("ones"),
    "_full": _creation_impl("full"),
    "_arange": _creation_impl("arange"),
    "_eye": _creation_impl("eye"),
    "_linspace": _creation_impl("linspace"),
}


def _binary_impl(path):
    def impl(F, ins, attrs, ctx):
        return _resolve_path(F, path)(ins[0], ins[1])
    return impl


for _op, _path in (("_mod", "modulo"), ("_power", "power"), ("_maximum", "maximum"),
                   ("_minimum", "minimum"), ("_hypot", "hypot"), ("_equal", "equal"),
                   ("_not_equal", "not_equal"), ("_greater", "greater"),
                   ("_greater_equal", "greater_equal"), ("_lesser", "lesser"),
                   ("_lesser_equal", "lesser_equal")):
    _IMPL[_op] = _binary_impl(_path)
for _op, _path in (("_maximum_scalar", "maximum"), ("_minimum_scalar", "minimum"),
                   ("_hypot_scalar", "hypot")):
    _IMPL[_op] = (lambda p: lambda F, ins, attrs, ctx:
                  _resolve_path(F, p)(ins[0], _scalar(attrs.get("scalar", 0))))(_path)

_PATH_CACHE = {}


def _nd_path(op):
    """The nd function path that computes the MXNet operator ``op``."""
    p = _PATH_CACHE.get(op)
    if p is not None:
        return p
    cands = [op] + sorted(_ALIASES_OF.get(op, ()), key=lambda a: (a.startswith("_"), a))
    for prefix, ns in (("_contrib_", "contrib"), ("_random_", "random"),
                       ("_sample_", "random"), ("_linalg_", "linalg"), ("_image_", "image"),
                       ("_sparse_", "sparse")):
        for c in list(cands):
            if c.startswith(prefix):
                cands.append(f"{ns}.{c[len(prefix):]}")
    if op.startswith("_"):   # fused (subgraph) and other internal operators: nd._internal
        cands.append(f"_internal.{op}")
    for c in cands:
        t = _resolve_path(_nd, c)
        if t is not None and callable(t) and not isinstance(t, type):
            _PATH_CACHE[op] = c
            return c
    raise MXNetError(f"operator {op!r} is not supported by neogluon (no nd function computes "
                     "it)")


def _call_node(node, vals, F, ctx):
    if node.subgraphs and node.op in _cf.EVAL:
        return _cf.EVAL[node.op](node, vals, F, ctx)
    impl = _IMPL.get(node.op)
    if impl is not None and node.path is None:
        return impl(F, vals, node.attrs, ctx)
    path = node.path or _nd_path(node.op)
    fn = _resolve_path(F, path)
    if fn is None:
        raise MXNetError(f"operator {node.op!r} (node {node.name!r}): nd.{path} not found")
    base = _resolve_path(_nd, path)
    sig = _signature(base)
    kwargs = {}
    accepts_any = False
    pnames = ()
    if sig:
        pnames = sig.parameters
        accepts_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in pnames.values())
    for k, v in node.attrs.items():
        if sig and k not in pnames and not accepts_any:
            if k in _IGNORABLE:
                continue
            raise MXNetError(f"operator {node.op!r} (node {node.name!r}): neogluon's nd.{path} "
                             f"does not take the attribute {k}={v!r}")
        if k in ("ctx",):
            continue
        kwargs[k] = v
    if "ctx" in pnames and ctx is not None:
        kwargs["ctx"] = ctx
    names = node.input_names
    if names is None and not node.variadic and node.op in _OPS and sig:
        cand = _OPS[node.op]["inputs"][:len(vals)]
        if all(c in pnames for c in cand):
            names = cand
    try:
        if names and not node.variadic:
            return fn(**dict(zip(names, vals)), **kwargs)
        return fn(*vals, **kwargs)
    except MXNetError as err:
        if node.op in _QUANT_OPS and f"node {node.name!r}" not in str(err):
            raise MXNetError(f"operator {node.op!r} (node {node.name!r}): {err}") from None
        raise
    except (TypeError, ValueError, RuntimeError, IndexError) as err:
        raise MXNetError(f"operator {node.op!r} (node {node.name!r}) failed: {err}") from err


def _as_list(out):
    if isinstance(out, (list, tuple)):
        return list(out)
    return [out]


def _evaluate(symbol, args, F=None, ctx=None, placement=None, observer=None, prepare=None):
    """Evaluate ``symbol`` with ``{variable name: NDArray}``; a list, one array per output.

    ``F`` is the namespace operators are taken from (``nd``, or the tracer's proxy while a
    hybridized parent block captures its forward pass). Executors pass two more hooks:
    ``placement(node)`` gives the Context an operator node runs on (its inputs are copied
    there; None: where they are), and ``observer(node, inputs, outputs)`` sees every operator
    node's arrays after it ran (the monitor callback); ``prepare(node, inputs)`` may replace
    a node's input list before it runs (the monitor's per-node gradient taps).
    """
    F = _nd if F is None else F
    if ctx is None:
        ctx = next((v.context for v in args.values() if isinstance(v, NDArray)),
                   current_context())
    env = {}
    order = symbol._order()
    sizes = _creation_shapes(symbol, order, args)
    for node in order:
        if sizes and id(node) in sizes:
            env[id(node)] = _as_list(_call_node(_sized(node, sizes[id(node)]), [], F, ctx))
            continue
        if node.is_var:
            if node.name not in args:
                raise MXNetError(f"Symbol evaluation: no value was given for the variable "
                                 f"{node.name!r}")
            val = args[node.name]
            if not isinstance(val, NDArray):
                raise TypeError(f"Symbol evaluation: the value of {node.name!r} must be an "
                                f"NDArray, got {type(val).__name__}")
            env[id(node)] = [val]
            continue
        vals = []
        for src, i in node.inputs:
            outs = env[id(src)]
            if i >= len(outs):
                raise MXNetError(f"node {node.name!r} reads output {i} of {src.name!r}, which "
                                 f"has {len(outs)}")
            vals.append(outs[i])
        if prepare is not None:
            vals = prepare(node, vals)
        if placement is not None:
            where = placement(node)
            if where is not None:
                vals = [v.as_in_context(where) if isinstance(v, NDArray) else v for v in vals]
                with where:
                    env[id(node)] = _as_list(_call_node(node, vals, F, where))
                if observer is not None:
                    observer(node, vals, env[id(node)])
                continue
        env[id(node)] = _as_list(_call_node(node, vals, F, ctx))
        if observer is not None:
            observer(node, vals, env[id(node)])
    res = []
    for node, i in symbol._outputs:
        outs = env[id(node)]
        if i >= len(outs):
            raise MXNetError(f"output {i} of {node.name!r} was not computed")
        res.append(outs[i])
    return res


def _creation_shapes(symbol, order, args):
    """Full shapes of creation nodes declared with unknown (0) dimensions, by inference from
    the arguments' shapes (MXNet's executors infer them the same way)."""
    pending = [n for n in order if (n.op in _CREATION or _unsized_sampler(n) or
                                    _inferred_range(n)) and
               _full_shape(_parse_attr(n.attrs.get("shape", ()))) is None]
    if not pending:
        return None
    key = tuple(sorted((k, tuple(v.shape), str(v.dtype)) for k, v in args.items()
                       if isinstance(v, NDArray)))
    cache = _plan(symbol).sizes
    res = cache.get(key)
    if res is None:
        shapes = {k: v.shape for k, v in args.items() if isinstance(v, NDArray)}
        info = _Inference(symbol, shapes, {}).run()
        res = {}
        for n in pending:
            shp = info.shape.get((id(n), 0))
            if shp is None:
                raise MXNetError(f"Symbol evaluation: the shape of {n.name!r} "
                                 f"({n.attrs.get('shape')}) cannot be inferred from the inputs")
            res[id(n)] = shp
        if len(cache) > 16:
            cache.clear()
        cache[key] = res
    return res


def _sized(node, shape):
    c = _Node.__new__(_Node)
    for slot in _Node.__slots__:
        setattr(c, slot, getattr(node, slot))
    c.attrs = dict(node.attrs, shape=tuple(shape))
    return c


def eval_symbol(symbol, ctx=None, **kwargs):
    """Evaluate ``symbol`` eagerly (same as :meth:`Symbol.eval`)."""
    return _evaluate(symbol, kwargs, ctx=ctx)


# ---------------------------------------------------------------------------- inference
def _prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _channel_axis(layout, ndim):
    if layout and isinstance(layout, str) and "C" in layout:
        return layout.index("C")
    return 1


def _rule_fc(a, s):
    d = s.get("data")
    h = int(a.get("num_hidden"))
    fin = d[-1] if not _truthy(a.get("flatten", True)) else _prod(d[1:])
    return {"weight": (h, fin), "bias": (h,)}


def _rule_conv(a, s, deconv=False):
    d = s.get("data")
    kernel = tuple(_parse_attr(a.get("kernel", ())))
    g = int(a.get("num_group", 1) or 1)
    nf = int(a.get("num_filter"))
    layout = a.get("layout")
    cax = _channel_axis(layout, len(d))
    c = d[cax]
    if deconv:
        w = (c, nf // g) + kernel
    elif cax == 1:
        w = (nf, c // g) + kernel
    else:
        w = (nf,) + kernel + (c // g,)
    return {"weight": w, "bias": (nf,)}


def _rule_bn(a, s):
    d = s.get("data")
    ax = int(a.get("axis", 1))
    c = (d[ax],)
    return {"gamma": c, "beta": c, "moving_mean": c, "moving_var": c}


def _rule_ln(a, s):
    d = s.get("data")
    c = (d[int(a.get("axis", -1))],)
    return {"gamma": c, "beta": c}


def _rule_in(a, s):
    c = (s.get("data")[1],)
    return {"gamma": c, "beta": c}


def _rule_gn(a, s):
    c = (int(a.get("num_groups", 1)),)
    return {"gamma": c, "beta": c}


def _rule_emb(a, s):
    return {"weight": (int(a.get("input_dim")), int(a.get("output_dim")))}


def _rule_prelu(a, s):
    d = s.get("data")
    return {"gamma": (d[1] if len(d) > 1 else 1,)}


def _rule_rnn(a, s):
    """``RNN``'s flat parameter vector and begin states from the data's (T, N, C) shape."""
    d = s.get("data")
    gates = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}[a.get("mode")]
    h, layers = int(a.get("state_size")), int(a.get("num_layers"))
    dirs = 2 if _truthy(a.get("bidirectional", False)) else 1
    proj = int(a.get("projection_size") or 0)
    size, width = 0, d[2]
    for _ in range(layers):
        per_dir = gates * h * width + gates * h * (proj or h) + 2 * gates * h
        if proj:
            per_dir += proj * h
        size += dirs * per_dir
        width = (proj or h) * dirs
    res = {"parameters": (size,), "state": (layers * dirs, d[1], proj or h)}
    if a.get("mode") == "lstm":
        res["state_cell"] = (layers * dirs, d[1], h)
    if _truthy(a.get("use_sequence_length", False)):
        res["sequence_length"] = (d[1],)
    return res


def _rule_upsampling(a, s):
    if a.get("sample_type") != "bilinear":
        return {}
    scale = int(a.get("scale", 1))
    k = 2 * scale - scale % 2
    return {"weight": (int(a.get("num_filter") or s.get("data")[1]), 1, k, k)}


_RULES = {"_sg_mkldnn_conv": lambda a, s: _quant.sg_param_shapes("_sg_mkldnn_conv", a, s),
          "_sg_mkldnn_fully_connected":
              lambda a, s: _quant.sg_param_shapes("_sg_mkldnn_fully_connected", a, s),
          "RNN": _rule_rnn, "UpSampling": _rule_upsampling, "FullyConnected": _rule_fc, "Convolution": _rule_conv,
          "Deconvolution": lambda a, s: _rule_conv(a, s, True), "BatchNorm": _rule_bn,
          "_contrib_SyncBatchNorm": _rule_bn, "LayerNorm": _rule_ln, "InstanceNorm": _rule_in,
          "GroupNorm": _rule_gn, "Embedding": _rule_emb, "_contrib_SparseEmbedding": _rule_emb, "LeakyReLU": _rule_prelu,
          "Convolution_v1": _rule_conv, "BatchNorm_v1": _rule_bn,
          "IdentityAttachKLSparseReg": lambda a, s: {"moving_avg": (s.get("data")[-1],)},
          "LinearRegressionOutput": lambda a, s: _regression_label_shape(s),
          "LogisticRegressionOutput": lambda a, s: _regression_label_shape(s),
          "MAERegressionOutput": lambda a, s: _regression_label_shape(s),
          "SVMOutput": lambda a, s: {"label": tuple(s.get("data"))[:-1]},
          "SoftmaxOutput": lambda a, s: {} if _softmax_prob_label(s) else
                           {"label": _softmax_label_shape(a, s.get("data"))}}
for _qop in ("_contrib_quantize", "_contrib_quantized_act", "_contrib_quantized_batch_norm",
             "_contrib_quantized_conv", "_contrib_quantized_fully_connected",
             "_contrib_quantized_elemwise_add", "_contrib_quantized_elemwise_mul",
             "_contrib_quantized_embedding"):
    _RULES[_qop] = (lambda op: lambda a, s: _quant_ops.param_shapes(op, a, s))(_qop)


def _softmax_prob_label(s):
    """Whether SoftmaxOutput's label has the data's own shape (probabilities per class),
    which MXNet accepts besides the class-index label."""
    lab, d = s.get("label"), s.get("data")
    return lab is not None and d is not None and _full_shape(tuple(lab)) and \
        tuple(lab) == tuple(d)


def _regression_label_shape(s):
    """The *RegressionOutput label, as MXNet: any given shape with the data's first axis and
    size ((N,) for (N, 1) data); an unknown one is (N,) for (N, 1) data, else the data's."""
    d = tuple(s.get("data"))
    lab = s.get("label")
    if lab is not None and len(lab):
        lab = tuple(lab)
        if _full_shape(lab) and _full_shape(d) and lab[0] == d[0] and _prod(lab) == _prod(d):
            return {}
        return {"label": d}
    if len(d) == 2 and d[1] == 1:
        return {"label": (d[0],)}
    return {"label": d}


def _softmax_label_shape(a, d):
    """SoftmaxOutput's label: the data shape without its last axis, or, with
    ``multi_output``, (batch, product of the axes after the class axis)."""
    d = tuple(d)
    if _truthy(a.get("multi_output", False)):
        return (d[0], _prod(d[2:]) if len(d) > 2 else 1)
    return d[:-1]


_SAME_SHAPE = {"elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "_power",
               "_maximum", "_minimum", "_mod", "_hypot", "_equal", "_not_equal", "_greater",
               "_greater_equal", "_lesser", "_lesser_equal", "add_n", "ElementWiseSum",
               "_grad_add", "_identity_with_attr_like_rhs"}
# Operators whose first output has the shape of their first input.
_UNARY_SAME = {"SoftmaxOutput", "LinearRegressionOutput", "LogisticRegressionOutput",
               "MAERegressionOutput", "SVMOutput",
               "Activation", "relu", "sigmoid", "tanh", "softsign", "Dropout", "BlockGrad",
               "_copy", "negative", "exp", "log", "sqrt", "square", "abs", "clip", "Cast",
               "softmax", "log_softmax", "softmin", "LeakyReLU", "zeros_like", "ones_like",
               "BatchNorm", "LayerNorm", "InstanceNorm", "GroupNorm", "L2Normalization", "erf",
               "rsqrt", "reciprocal", "sign", "round", "floor", "ceil", "expm1", "log1p",
               "hard_sigmoid", "make_loss", "MakeLoss", "SoftmaxActivation", "stop_gradient",
               "identity", "_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar",
               "_div_scalar", "_rdiv_scalar", "_mod_scalar", "_rmod_scalar", "_power_scalar",
               "_rpower_scalar", "_maximum_scalar", "_minimum_scalar", "_hypot_scalar",
               "_equal_scalar", "_not_equal_scalar", "_greater_scalar", "_greater_equal_scalar",
               "_lesser_scalar", "_lesser_equal_scalar", "SequenceMask", "cos", "sin", "gelu",
               "amp_cast"}
_CREATION = {"_zeros", "_ones", "_full"}


def _unsized_sampler(node):
    """A sampler with no inputs whose ``shape`` is left unknown (``()`` or 0s): MXNet infers
    its shape from where its output goes (``randn() + x``)."""
    if node.inputs or not node.op.startswith(("_random_", "_sample_")):
        return False
    shp = _parse_attr(node.attrs.get("shape", "()"))
    shp = (shp,) if isinstance(shp, int) else tuple(shp)
    return _full_shape(shp) is None


def _unsized(node):
    """A creation node (zeros, ones, full) whose declared shape has unknown dimensions."""
    shp = _parse_attr(node.attrs.get("shape", "()"))
    shp = (shp,) if isinstance(shp, int) else tuple(shp)
    return _full_shape(shp) is None


def _inferred_range(node):
    """An ``arange`` with ``infer_range`` and no ``stop``: its length is what the graph
    around it needs (MXNet infers it from where its output goes)."""
    return node.op == "_arange" and _truthy(node.attrs.get("infer_range", False)) and \
        _parse_attr(node.attrs.get("stop", "None")) is None


def _sourceless(node):
    """An operator with no inputs besides the creation ones (samplers, ``arange``, ``eye``):
    its output shape is what running it gives, when its ``shape`` attribute (if any) is
    fully known."""
    if node.inputs or node.is_var or node.op in _CREATION or _inferred_range(node):
        return False
    shp = node.attrs.get("shape")
    if shp is None:
        return True
    shp = _parse_attr(shp)
    shp = (shp,) if isinstance(shp, int) else tuple(shp)
    return _full_shape(shp) is not None


def _full_shape(shape):
    """``shape`` when every dimension is known (MXNet 1.x: 0 is unknown, () too)."""
    if shape is None or len(shape) == 0:
        return None
    if type(shape) is tuple and all(type(d) is int for d in shape):  # (inference's shapes)
        return shape if min(shape) > 0 else None
    if any(int(d) <= 0 for d in shape):
        return None
    return tuple(int(d) for d in shape)


# Inference plans: what shape/type inference needs of a symbol's graph, worked out once per
# Symbol object (GluonCV's train transforms call infer_shape once per image). A graph's nodes
# do not change once a symbol holding them exists; variables' attributes may (_set_attr), and
# are read again at each inference and are part of the result cache's key.
# (By id, with a weak reference: a WeakKeyDictionary compares keys with ==, which for
# Symbols builds an operator node.)
_PLANS = {}   # id(symbol) -> (weak reference to the symbol, _Plan)
_UNPREPARED = object()


class _PlanStep:
    """One operator node's inputs as inference keys, their names for the layer rules, the
    layer rule (_RULES) that applies, and its shape rule (_shape_rules.Spec, prepared on
    first use)."""
    __slots__ = ("keys", "names", "rule", "out0", "spec")

    def __init__(self, node):
        self.keys = [(id(s), i) for s, i in node.inputs]
        names = node.input_names
        if names is None:
            meta = _OPS.get(node.op, {})
            names = meta.get("inputs", []) if not meta.get("variadic") else []
        if node.op == "UpSampling" and node.attrs.get("sample_type") == "bilinear" and \
                len(self.keys) == 2:
            names = ["data", "weight"]    # variadic in the table; bilinear takes a weight
        elif node.op == "_sg_mkldnn_conv":
            names = _quant.sg_conv_input_names(node.attrs)
        elif node.op == "_sg_mkldnn_fully_connected":
            names = _quant.sg_fc_input_names(node.attrs)
        self.names = names
        rule = _RULES.get(node.op)
        if node.op == "LeakyReLU" and node.attrs.get("act_type") != "prelu":
            rule = None
        self.rule = rule
        self.out0 = (id(node), 0)
        self.spec = _UNPREPARED


class _Plan:
    __slots__ = ("outputs", "order", "var_nodes", "ops", "arg_nodes", "aux_nodes", "inputs",
                 "steps", "cacheable", "results", "sizes", "__weakref__")

    def __init__(self, symbol):
        self.outputs = tuple(symbol._outputs)
        self.order = _topo(symbol._outputs)
        aux = _aux_nodes(self.order)
        self.var_nodes = [n for n in self.order if n.is_var]
        self.ops = [n for n in self.order if not n.is_var]
        self.arg_nodes = [n for n in self.var_nodes if id(n) not in aux]
        self.aux_nodes = [n for n in self.var_nodes if id(n) in aux]
        self.inputs = {n.name for n in self.var_nodes}
        self.steps = {}
        # Custom operators' shapes come from user code: their graphs are not cached.
        self.cacheable = not any(n.op == "Custom" for n in self.ops)
        self.results = {}
        self.sizes = {}   # _creation_shapes' cache

    def step(self, node):
        st = self.steps.get(id(node))
        if st is None:
            st = self.steps[id(node)] = _PlanStep(node)
        return st

    def var_key(self):
        """The variables' declared shapes and dtypes (part of the result cache's key)."""
        return tuple((n.attrs.get("__shape__"), n.attrs.get("__dtype__"))
                     for n in self.var_nodes)


def _plan(symbol):
    key = id(symbol)
    entry = _PLANS.get(key)
    if entry is not None and entry[0]() is symbol and entry[1].outputs == tuple(symbol._outputs):
        return entry[1]
    p = _Plan(symbol)

    def drop(ref, key=key):
        cur = _PLANS.get(key)
        if cur is not None and cur[0] is ref:
            del _PLANS[key]
    _PLANS[key] = (weakref.ref(symbol, drop), p)
    return p


def _shape_key(plan, kind, partial, given):
    """The result cache's key for an inference with ``given`` values (None: not cached)."""
    if not plan.cacheable:
        return None
    try:
        if kind == "shape":
            items = tuple(sorted((k, None if v is None else tuple(int(d) for d in v))
                                 for k, v in given.items()))
        else:
            items = tuple(sorted(given.items()))
    except (TypeError, ValueError):
        return None   # the inference reports it
    from ..autograd import _state as ag
    return (kind, bool(partial), bool(ag.training), items, plan.var_key())


def _cache_get(plan, key):
    res = plan.results.get(key)
    if res is None:
        return None
    return tuple(list(part) if part is not None else None for part in res)


def _cache_put(plan, key, res):
    if not plan.cacheable:
        return
    if len(plan.results) >= 64:
        try:
            plan.results.pop(next(iter(plan.results)), None)
        except (StopIteration, RuntimeError):   # (another thread's change)
            pass
    plan.results[key] = tuple(tuple(part) if part is not None else None for part in res)


class _Inference:
    """Shape and type inference.

    Shapes are partial (0 marks an unknown dimension) and flow both ways until nothing
    changes: operators whose inputs are all known give their outputs by their shape rule
    (_shape_rules.py: the common operators), or else by running on meta tensors (zero
    tensors as a fallback); the layer operators' rules give their parameters' shapes;
    element-wise operators make their inputs and output agree, and FullyConnected carries
    the batch dimension back to its data (what MXNet's recurrent cells rely on for
    ``zeros((0, hidden))`` begin states). What does not change between calls on one symbol
    (its nodes in order, each node's inputs and rules) is kept in the symbol's _Plan, with
    the results of recent calls.
    """

    def __init__(self, symbol, shapes, dtypes, types_only=False):
        self.symbol = symbol
        self.plan = _plan(symbol)
        self.given_shapes = shapes
        self.given_dtypes = dtypes
        self.types_only = types_only
        self.shape = {}
        self.dtype = {}
        self.hint = {}
        self.partial = {}
        self.done = set()
        self.live = {}      # nd path -> still its original function (_shape_rules.outputs)
        self.probed = {}    # node id -> the input shapes its outputs were last probed with
        self.rules = _shape_rules.rules_active()

    def run(self):
        plan = self.plan
        for node in plan.var_nodes:
            self._var(node)
        ops = plan.ops
        if self.types_only:
            # Types flow both ways (an output's known type reaches the inputs that share it)
            # until nothing changes; what nothing determines stays unknown (None).
            for _ in range(len(ops) + 2):
                changed = False
                for node in ops:
                    changed |= self._types(node)
                if not changed:
                    break
            return self
        for node in ops:
            if node.op in _CREATION:
                shp = _parse_attr(node.attrs.get("shape", ()))
                shp = (shp,) if isinstance(shp, int) else tuple(shp)
                # (-1, like 0, is an unknown dimension that the graph around it decides)
                shp = tuple(max(int(d), 0) for d in shp)
                self._unify((id(node), 0), shp, node.name)
                dt = node.attrs.get("dtype")
                self.dtype[(id(node), 0)] = _dtype_name(_parse_attr(dt)) if dt not in (
                    None, "None") else "float32"
            elif _inferred_range(node):
                dt = node.attrs.get("dtype")
                self.dtype[(id(node), 0)] = _dtype_name(_parse_attr(dt)) if dt not in (
                    None, "None") else "float32"
        pending = ops
        for _ in range(len(ops) + 2):
            changed = False
            for node in pending:
                changed |= self._step(node)
            if not changed:
                break
            done = self.done   # (a done node's step changes nothing: left out)
            pending = [n for n in pending if id(n) not in done]
        # Shapes known only partially stay hints; the result holds known shapes only.
        self.partial = dict(self.shape)
        for key, shp in list(self.shape.items()):
            if _full_shape(shp) is None:
                self.hint.setdefault(key[0], shp)
                del self.shape[key]
        return self

    def _var(self, node):
        key = (id(node), 0)
        decl = _var_shape(node)
        given = self.given_shapes.get(node.name)
        if given is not None:
            given = tuple(int(d) for d in given)
        # As MXNet: a fully known given shape wins over the declared one (var(shape=...)); a
        # given shape with unknown (0) dimensions gives way to a declared one.
        if given is not None and (decl is None or _full_shape(given) is not None):
            shape = given
        else:
            shape = decl
            if shape is not None and any(int(d) < 0 for d in shape):
                shape = tuple(max(int(d), 0) for d in shape)   # (np_shape: -1 unknown)
        self.hint[id(node)] = shape
        if shape is not None and len(shape):
            self.shape[key] = tuple(int(d) for d in shape)
        dt = self.given_dtypes.get(node.name) or _var_dtype(node)
        if dt is not None:
            self.dtype[key] = dt

    def _unify(self, key, shape, who):
        if shape is None or len(shape) == 0:
            return False
        cur = self.shape.get(key)
        if cur is not None and cur == shape:
            return False
        shape = tuple(int(d) for d in shape)
        if cur is None:
            self.shape[key] = shape
            return True
        if len(cur) != len(shape):
            raise MXNetError(f"infer_shape: shape inconsistent for {who!r}: {cur} and {shape}")
        merged = []
        for x, y in zip(cur, shape):
            if x and y and x != y:
                raise MXNetError(f"infer_shape: shape inconsistent for {who!r}: {cur} and "
                                 f"{shape}")
            merged.append(x or y)
        merged = tuple(merged)
        if merged != cur:
            self.shape[key] = merged
            return True
        return False

    def _step(self, node):
        if id(node) in self.done:
            return False
        if node.op in _cf.GRAPH_OPS and node.subgraphs:
            return _cf.infer_shape_step(self, node)
        ps = self.plan.step(node)
        keys, names, rule = ps.keys, ps.names, ps.rule
        changed = False
        ins = [self.shape.get(k) for k in keys]
        out0 = ps.out0
        if rule is not None:
            by_name = dict(zip(names, ins))
            if by_name.get("data") is not None:
                try:
                    filled = rule(node.attrs, by_name)
                except (TypeError, ValueError, IndexError, KeyError, ZeroDivisionError):
                    filled = {}
                for j, k in enumerate(keys):
                    if j < len(names) and names[j] in filled and names[j] != "data":
                        changed |= self._unify(k, filled[names[j]], node.inputs[j][0].name)
        if node.op in _SAME_SHAPE:
            group = keys + [out0]
            known = [self.shape[k] for k in group if self.shape.get(k) is not None]
            if known and (len(known) < len(group) or any(x != known[0] for x in known)):
                # (all known and equal: nothing to unify)
                for k in group:
                    for shp in known:
                        changed |= self._unify(k, shp, node.name)
        elif node.op in _UNARY_SAME and keys:
            for a, b in ((keys[0], out0), (out0, keys[0])):
                if self.shape.get(a) is not None:
                    changed |= self._unify(b, self.shape[a], node.name)
        elif node.op == "FullyConnected" and keys:
            changed |= self._fc(node, keys[0], out0)
        elif node.op == "Custom" and keys:
            changed |= self._custom(node, keys)
        elif node.op in ("_gluon_rnn", "RNN") and keys:
            # the recurrent layers' states (layers * directions, N, H) take their batch size
            # from the data (T, N, C): begin states are zeros((L * D, 0, H)) in a symbol
            d = self.shape.get(keys[0])
            if node.op == "RNN":
                state_keys = keys[2:4 if node.attrs.get("mode") == "lstm" else 3]
            else:
                state_keys = keys[1:1 + int(node.attrs.get("num_states", 1))]
            if d is not None and len(d) == 3 and d[1]:
                for k in state_keys:
                    st = self.shape.get(k)
                    if st is not None and len(st) == 3:
                        changed |= self._unify(k, (0, d[1], 0), node.name)
        ins = [self.shape.get(k) for k in keys]
        full = [_full_shape(x) for x in ins]
        if keys and any(f is None for f in full):
            # Some input dimensions unknown: what the operator infers from partial shapes
            # (a Convolution's data from its output, SliceChannel/Concat both ways...)
            changed |= self._partial(node, ps, keys)
            ins = [self.shape.get(k) for k in keys]
            full = [_full_shape(x) for x in ins]
        if not keys and _full_shape(self.shape.get(out0)) and (
                (node.op in _CREATION and _unsized(node)) or _inferred_range(node)):
            # declared with unknown (0 or -1) dimensions that the graph has now decided; its
            # type was set with its declared shape (run())
            self.done.add(id(node))
            return True
        if all(f is not None for f in full) and (keys or (
                node.op in _CREATION and _full_shape(self.shape.get(out0))) or
                _sourceless(node)):
            types = [self.dtype.get(k) for k in keys]
            first = next((t for t in types if t is not None), None)
            if node.op in _QUANT_OPS:
                first = "float32"   # parameters and ranges of quantized operators
            for j, k in enumerate(keys):
                if types[j] is None:
                    types[j] = first or "float32"
                    if node.inputs[j][0].is_var:
                        self.dtype[k] = types[j]
            outs = self._outputs(node, ps, full, types)
            if outs is not None:
                self.done.add(id(node))
                for i, (shp, dt) in enumerate(outs):
                    changed |= self._unify((id(node), i), shp, node.name)
                    self.dtype[(id(node), i)] = dt
                changed = True
        return changed

    def _partial(self, node, ps, keys):
        """Apply the operator's partial-shape rule (_partial_shapes.explicit) or, for the
        operators it lists, probe its output shapes; True when a shape was refined."""
        ins = [self.shape.get(k) for k in keys]
        out_keys = [(id(node), i) for i in range(_n_types_out(node))]
        outs = [self.shape.get(k) for k in out_keys]
        new_ins, new_outs = _partial_shapes.explicit(node.op, node.attrs, ins, outs)
        changed = False
        if new_ins is not None or new_outs is not None:
            for k, shp, (src, _) in zip(keys, new_ins or [], node.inputs):
                if shp is not None:
                    changed |= self._unify(k, shp, src.name)
            for k, shp in zip(out_keys, new_outs or []):
                if shp is not None:
                    changed |= self._unify(k, shp, node.name)
            return changed
        if not _partial_shapes.is_probe_op(node.op) or any(s is None for s in ins):
            return False
        if self.probed.get(id(node)) == ins:
            return False
        self.probed[id(node)] = ins
        types = [self.dtype.get(k) or "float32" for k in keys]
        results = []
        for size in _partial_shapes.PROBE_SIZES:
            res = self._probe(node, ps, _partial_shapes.probe_inputs(ins, size), types)
            if res is None:
                return False
            results.append(res)
        for k, shp in zip(out_keys, _partial_shapes.probe_result(*results)):
            if shp is not None and any(shp):
                try:
                    changed |= self._unify(k, shp, node.name)
                except MXNetError:
                    pass   # (a probe only adds what agrees; the full inference reports)
        return changed

    def _probe(self, node, ps, shapes, types):
        """Output shapes of ``node`` for these input shapes, by its shape rule or on meta
        tensors only (the sizes are made up: nothing is allocated); None when it fails."""
        try:
            if self.rules:
                spec = ps.spec
                if spec is _UNPREPARED:
                    spec = ps.spec = _shape_rules.prepare(node, len(shapes))
                if spec is not None:
                    res = _shape_rules.outputs(spec, shapes, types, self.live)
                    if res is not None:
                        return [shp for shp, _ in res]
            vals = [_new(torch.zeros(s, dtype=_torch_dtype(t), device="meta"), cpu())
                    for s, t in zip(shapes, types)]
            with torch.no_grad():
                return [tuple(o.shape) for o in _as_list(_call_node(node, vals, _nd, cpu()))]
        except Exception:  # noqa: BLE001 - a probe that fails teaches nothing
            return None

    def _outputs(self, node, ps, shapes, types):
        """``[(shape, dtype)]`` of ``node``'s outputs from its inputs' full shapes and types:
        by the operator's shape rule (_shape_rules.py) where it has one, else by running it
        on meta tensors."""
        if self.rules:
            spec = ps.spec
            if spec is _UNPREPARED:
                spec = ps.spec = _shape_rules.prepare(node, len(shapes))
            if spec is not None:
                res = _shape_rules.outputs(spec, shapes, types, self.live)
                if res is not None:
                    return res
        outs = self._run(node, shapes, types)
        if outs is None:
            return None
        return [(tuple(o.shape), _dtype_name(o._t.dtype)) for o in outs]

    def _custom(self, node, keys):
        """A Custom node's inputs, auxiliary states and outputs from its CustomOpProp's
        infer_shape, once the first input is known (how MXNet infers the shapes of the
        parameters a Gluon block passes to F.Custom)."""
        from ..operator import _symbol_infer_shape
        n_args = len(keys) - len(_mutated(node))
        args = [self.shape.get(k) for k in keys[:n_args]]
        if not args or _full_shape(args[0]) is None:
            return False
        res = _symbol_infer_shape(node.attrs, [list(_full_shape(s) or ()) for s in args])
        if res is None:
            return False
        ishape, oshape, ashape = res
        changed = False
        for j, (k, shp) in enumerate(zip(keys, list(ishape) + list(ashape))):
            if len(shp):
                changed |= self._unify(k, shp, node.inputs[j][0].name)
        for i, shp in enumerate(oshape[:node.nout]):
            if len(shp):
                changed |= self._unify((id(node), i), shp, node.name)
        return changed

    def _fc(self, node, dkey, okey):
        nh = int(node.attrs.get("num_hidden"))
        flatten = _truthy(node.attrs.get("flatten", True))
        d, o = self.shape.get(dkey), self.shape.get(okey)
        changed = False
        if d is not None:
            changed |= self._unify(okey, (d[0], nh) if flatten else tuple(d[:-1]) + (nh,),
                                   node.name)
            o = self.shape.get(okey)
            if o is not None:
                if flatten:
                    changed |= self._unify(dkey, (o[0],) + tuple(d[1:]), node.name)
                elif len(o) == len(d):
                    changed |= self._unify(dkey, tuple(o[:-1]) + (d[-1],), node.name)
        return changed

    def _types(self, node):
        """Apply ``node``'s type rule (:func:`_type_rule`) once; True when a type was set."""
        if node.op in _cf.GRAPH_OPS and node.subgraphs:
            return _cf.infer_type_step(self, node)
        in_keys = [(id(s), i) for s, i in node.inputs]
        if node.op in _QUANT_OPS:
            in_types = [self.dtype.get(k) for k in in_keys]
            before = [self.dtype.get((id(node), i)) for i in range(node.nout)] + in_types
            self._quant_types(node, in_types)
            after = [self.dtype.get((id(node), i)) for i in range(node.nout)] + \
                [self.dtype.get(k) for k in in_keys]
            return before != after
        keys = {"in": in_keys, "out": [(id(node), i) for i in range(_n_types_out(node))]}

        def key(ref):
            part, j = ref
            return keys[part][j] if j < len(keys[part]) else None
        dtype = self.dtype
        changed = False

        def put(ref, t):
            nonlocal changed
            k = key(ref)
            if k is not None and t is not None and dtype.get(k) is None:
                dtype[k] = t
                changed = True
        groups, fixed, follow = _type_rule(node, [dtype.get(k) for k in in_keys])
        for ref, t in fixed:
            put(ref, t)
        for group in groups:
            known = next((dtype.get(key(r)) for r in group if dtype.get(key(r)) is not None),
                         None)
            if known is not None:
                for r in group:
                    put(r, known)
        for dst, src in follow:
            src_key = key(src)
            put(dst, dtype.get(src_key) if src_key is not None else None)
        return changed

    def _quant_types(self, node, in_types):
        if node.op == "_sg_mkldnn_fully_connected" and \
                _truthy(node.attrs.get("quantized", False)) and \
                not _truthy(node.attrs.get("channel_wise_quantize", False)):
            # weight and bias quantized offline (mx.contrib.quantization): int8 codes
            nb = 1 if _truthy(node.attrs.get("no_bias", False)) else 2
            for j in range(1, 1 + nb):
                src = node.inputs[j][0]
                if in_types[j] is None and src.is_var:
                    self.dtype[(id(src), 0)] = in_types[j] = "int8"
        int8_in = _QUANT_INT8_INPUTS.get(node.op)
        if int8_in is not None:   # int8 weight (and bias) codes of the unfused operators
            for j in int8_in(node.attrs):
                src = node.inputs[j][0] if j < len(node.inputs) else None
                if src is not None and in_types[j] is None and src.is_var:
                    self.dtype[(id(src), 0)] = in_types[j] = "int8"
        for j, (src, i) in enumerate(node.inputs):   # parameters and ranges are float32
            if in_types[j] is None and src.is_var:
                self.dtype[(id(src), 0)] = in_types[j] = "float32"
        op, a = node.op, node.attrs
        if op == "_contrib_quantize_v2":
            cmin, cmax = a.get("min_calib_range"), a.get("max_calib_range")
            signed = _quant._out_signed(a.get("out_type", "int8"), cmin, cmax)
            outs = ["int8" if signed else "uint8", "float32", "float32"]
        elif op == "_contrib_dequantize":
            outs = ["float32"]
        elif op == "_contrib_quantized_concat":
            n = int(a.get("num_args", len(in_types) // 3))
            outs = ["int8" if "int8" in in_types[:n] else "uint8", "float32", "float32"]
        elif op in ("_contrib_quantized_pooling", "_contrib_quantized_flatten"):
            outs = [in_types[0] if in_types else None, "float32", "float32"]
        elif op == "_contrib_requantize":
            cmin, cmax = a.get("min_calib_range"), a.get("max_calib_range")
            signed = _quant._out_signed(a.get("out_type", "int8"), cmin, cmax)
            outs = ["int8" if signed else "uint8", "float32", "float32"]
        elif op in _QUANT_OUT_TYPES:
            outs = _QUANT_OUT_TYPES[op](a, in_types)
        else:
            outs = _quant.sg_output_types(op, a, in_types)
        for i in range(node.nout):
            self.dtype[(id(node), i)] = outs[i] if i < len(outs) else "float32"

    def _run(self, node, shapes, types):
        # meta tensors first (no data touched); some ops refuse them, and some refuse zeros
        # (a multinomial's probabilities): then real zeros, then ones
        for device, fill in (("meta", 0), ("cpu", 0), ("cpu", 1)):
            vals = [_new(torch.full(s, fill, dtype=_torch_dtype(t), device=device), cpu())
                    for s, t in zip(shapes, types)]
            try:
                with torch.no_grad():
                    return _as_list(_call_node(node, vals, _nd, cpu()))
            except Exception as err:  # noqa: BLE001 - meta tensors refuse some ops
                if fill == 1:
                    raise MXNetError(f"infer_shape: operator {node.op!r} (node {node.name!r}) "
                                     f"failed with input shapes {shapes}: {err}") from None
        return None


# Inputs a node's type does not constrain (indices, conditions, shape donors), by operator;
# the others share one type with the outputs.
_TYPE_FREE_INPUTS = {"take": (1,), "pick": (1,), "batch_take": (1,), "gather_nd": (1,),
                     "scatter_nd": (1,), "one_hot": (0,), "where": (0,),
                     "reshape_like": (1,), "slice_like": (1,), "broadcast_like": (1,),
                     "CTCLoss": (1, 2, 3), "shape_array": (0,), "size_array": (0,),
                     "_contrib_index_copy": (1,), "_contrib_boolean_mask": (1,),
                     "_contrib_index_array": (0,), "Cast": (0,), "amp_cast": (0,),
                     "Embedding": (0,), "_contrib_SparseEmbedding": (0,)}
# Inputs that take the data's type when nothing else gives them one (labels, lengths),
# without giving theirs to the data.
_TYPE_FOLLOW_INPUTS = {"SoftmaxOutput": (1,), "LinearRegressionOutput": (1,),
                       "LogisticRegressionOutput": (1,), "MAERegressionOutput": (1,),
                       "SVMOutput": (1,), "softmax_cross_entropy": (1,),
                       "SequenceMask": (1,), "SequenceLast": (1,), "SequenceReverse": (1,)}
# Output types of operators whose dtype argument sets them, when it is left out.
_TYPE_DEFAULT_OUT = {"one_hot": "float32", "argsort": "float32", "Embedding": "float32",
                     "_contrib_SparseEmbedding": "float32",
                     "shape_array": "int64", "size_array": "int64",
                     "_contrib_index_array": "int64", "_random_randint": "int32",
                     "_random_multinomial": "int32", "_sample_multinomial": "int32"}
_BN_OPS = ("BatchNorm", "BatchNorm_v1", "_contrib_SyncBatchNorm", "_contrib_BatchNormWithReLU")


def _n_types_out(node):
    """Outputs of ``node`` that inference types: its visible ones (BatchNorm's mean and
    variance with ``output_mean_var``) or all it computes."""
    return max(node.nout, _n_visible(node))


def _type_rule(node, in_types):
    """How ``node``'s input and output types relate, as MXNet's type inference has them:
    ``(groups, fixed, follow)`` over references ``('in', j)`` / ``('out', i)``: each group
    shares one type, ``fixed`` lists ``(reference, type)``, ``follow`` lists
    ``(reference, source)`` (the reference takes the source's type when it has none)."""
    op, attrs = node.op, node.attrs
    n_in, n_out = len(node.inputs), _n_types_out(node)
    outs = [("out", i) for i in range(n_out)]
    dt = attrs.get("dtype")
    dt = _dtype_name(_parse_attr(dt)) if dt not in (None, "None") else None
    if op == "norm":   # norm names its result's type out_dtype (default: the data's)
        od = attrs.get("out_dtype")
        dt = _dtype_name(_parse_attr(od)) if od not in (None, "None") else None
    if op in _BN_OPS:
        # float16 data keeps float32 parameters and statistics (MXNet's BatchNorm)
        fixed = []
        data_t = in_types[0] if in_types else None
        if data_t is not None:
            param_t = "float32" if data_t in ("float16", "bfloat16") else data_t
            fixed = [(("in", j), param_t) for j in range(1, n_in)] + \
                [(o, param_t) for o in outs[1:]]
        return [[("in", 0), ("out", 0)]], fixed, []
    if op == "topk":
        ret = str(attrs.get("ret_typ", "indices"))
        index_t = dt or "float32"
        if ret == "indices":
            return [], [(("out", 0), index_t)], []
        if ret == "both":
            return [[("in", 0), ("out", 0)]], [(("out", 1), index_t)], []
        return [[("in", 0)] + outs], [], []
    if op == "amp_multicast":
        if in_types and all(t is not None for t in in_types):
            narrow = _truthy(attrs.get("cast_narrow", False))
            floats = [t for t in in_types if t.startswith(("float", "bfloat"))] or in_types
            pick = (min if narrow else max)(floats, key=lambda t: np.dtype(
                t if t != "bfloat16" else "float16").itemsize)
            return [], [(o, pick) for o in outs], []
        return [], [], []
    free = _TYPE_FREE_INPUTS.get(op, ())
    follow_pos = _TYPE_FOLLOW_INPUTS.get(op, ())
    if op == "RNN" and _truthy(attrs.get("use_sequence_length", False)):
        follow_pos = (n_in - 1,)
    shared = [("in", j) for j in range(n_in) if j not in free and j not in follow_pos]
    follow = [(("in", j), ("in", 0)) for j in follow_pos]
    out_t = dt or _TYPE_DEFAULT_OUT.get(op)
    if out_t is None and op.startswith(("_random_", "_sample_")) and \
            not op.endswith("_like") and op != "_random_shuffle":
        out_t = "float32"   # samplers: float32 unless dtype says otherwise
    if out_t is None and not node.inputs:
        out_t = "float32"   # creation operators
    if op in ("Embedding", "_contrib_SparseEmbedding"):   # the weight has the output's type
        if dt is None and len(in_types) > 1 and in_types[1] is not None:
            return [[("in", 1)] + outs], [], []
        return [[("in", 1)] + outs], [(o, out_t) for o in outs], []
    if op == "batch_take":   # indices are int32 unless given
        return [shared + outs], [(("in", 1), "int32")], follow
    if out_t is not None:
        return [shared], [(o, out_t) for o in outs], follow
    return [shared + outs], [], follow


def _torch_dtype(name):
    from ..base import to_torch_dtype
    return to_torch_dtype(name or "float32")



def _substitute(symbol, mapping):
    """A copy of ``symbol`` whose variables named in ``mapping`` are replaced by symbols."""
    new = {}
    for node in symbol._order():
        if node.is_var:
            rep = mapping.get(node.name)
            if rep is not None:
                new[id(node)] = ("sym", _entry(rep, "compose"))
            else:
                new[id(node)] = ("node", node)
            continue
        c = _Node.__new__(_Node)
        for slot in _Node.__slots__:
            setattr(c, slot, getattr(node, slot))
        c.attrs = dict(node.attrs)
        c.extra = dict(node.extra)
        ins = []
        for src, i in node.inputs:
            kind, val = new[id(src)]
            ins.append(val if kind == "sym" else (val, i))
        c.inputs = ins
        new[id(node)] = ("node", c)
    outs = []
    for node, i in symbol._outputs:
        kind, val = new[id(node)]
        outs.append(val if kind == "sym" else (val, i))
    return Symbol(outs)


class CachedOp:
    """A symbol made callable on NDArrays (``nd.CachedOp``): arguments in
    :meth:`Symbol.list_inputs` order, computed eagerly through the nd operators (so autograd
    records it like any other nd code).

    Parameters
    ----------
    sym : Symbol
    flags : sequence of (str, str), optional
        Accepted for compatibility (static_alloc...); they change nothing here.
    """

    def __init__(self, sym, flags=()):
        if not isinstance(sym, Symbol):
            raise TypeError(f"CachedOp needs a Symbol, got {type(sym).__name__}")
        self._sym = sym
        self._names = sym.list_inputs()

    def __call__(self, *args, out=None, **kwargs):
        if kwargs:
            raise TypeError(f"CachedOp got unexpected keyword arguments {sorted(kwargs)}")
        if len(args) != len(self._names):
            raise MXNetError(f"CachedOp: expected {len(self._names)} inputs "
                             f"({', '.join(self._names)}), got {len(args)}")
        res = _evaluate(self._sym, dict(zip(self._names, args)))
        if out is not None:
            outs = out if isinstance(out, (list, tuple)) else [out]
            if len(outs) != len(res):
                raise MXNetError(f"CachedOp: {len(res)} outputs but {len(outs)} out arrays")
            for o, r in zip(outs, res):
                o[:] = r
            return out
        return res[0] if len(res) == 1 else res


def _sym_randn(*shape, **kwargs):
    """Symbolic ``random.randn``: a ``_random_normal`` node of the positional ``shape``
    (empty: inferred from where the output goes), as MXNet's; symbols passed as keywords
    (``data=``) are not inputs of a sampler and are dropped, as MXNet drops them."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    loc = kwargs.pop("loc", 0.0)
    scale = kwargs.pop("scale", 1.0)
    kwargs = {k: v for k, v in kwargs.items() if not isinstance(v, Symbol)}
    return _op_function("random.normal")(loc=loc, scale=scale, shape=tuple(shape), **kwargs)


# Symbolic functions MXNet writes in Python over other operators (not one graph node).
_FUNC_CACHE["contrib.rand_zipfian"] = _sym_rand_zipfian
_FUNC_CACHE["random.randn"] = _sym_randn

from . import _control_flow as _cf  # noqa: E402  (control flow nodes; uses this module)

_FUNC_CACHE["contrib.foreach"] = _cf.foreach
_FUNC_CACHE["contrib.while_loop"] = _cf.while_loop
_FUNC_CACHE["contrib.cond"] = _cf.cond


# Functions MXNet's symbol/symbol.py defines and neogluon makes as operator twins in the
# package (``from mxnet.symbol.symbol import histogram`` gives ``mx.sym.histogram``).
def __getattr__(name):
    if name in ("histogram", "split_v2"):
        from .. import symbol as _package
        return getattr(_package, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}", name=name)
