"""MXNet 1.9.1's graph operators for DGL (``nd.contrib.dgl_*``), on CSR matrices whose values
are edge ids: neighbourhood sampling (``dgl_csr_neighbor_uniform_sample``,
``dgl_csr_neighbor_non_uniform_sample``), ``dgl_graph_compact``, induced subgraphs
(``dgl_subgraph``) and ``dgl_adjacency``.

The sampled vertex arrays are ``max_num_vertices + 1`` long with the vertex count last, and
their per-vertex arrays ``max_num_vertices`` long, as in MXNet; the slots past the count are
0 here (MXNet leaves them uninitialised). Sampling draws from torch's default generator, so
``mx.random.seed`` makes it repeatable (MXNet's own draws cannot be reproduced).
"""
from __future__ import annotations

from collections import deque

import numpy as np
import torch

from ..base import MXNetError

__all__ = ["dgl_csr_neighbor_uniform_sample", "dgl_csr_neighbor_non_uniform_sample",
           "dgl_graph_compact", "dgl_subgraph", "dgl_adjacency"]


def _csr_parts(graph, op):
    if getattr(graph, "stype", "default") != "csr":
        raise MXNetError(f"{op}: the graph must be a CSR matrix (CSRNDArray), as in MXNet")
    return (graph.indptr.asnumpy().astype(np.int64), graph.indices.asnumpy().astype(np.int64),
            graph.data.asnumpy())


def _csr(data, indices, indptr, shape, dtype, ctx):
    from . import sparse as _sparse
    return _sparse.csr_matrix((np.asarray(data, dtype=dtype), np.asarray(indices, np.int64),
                               np.asarray(indptr, np.int64)), shape=shape, dtype=dtype, ctx=ctx)


def _array(values, dtype, ctx):
    from .ndarray import array
    return array(np.asarray(values, dtype=dtype), ctx=ctx, dtype=dtype)


def _pick(candidates, k, weights):
    """``k`` of ``candidates`` without replacement (all of them when there are no more),
    uniformly or in proportion to ``weights``; in the candidates' order."""
    n = len(candidates)
    if n <= k:
        return list(candidates)
    if weights is None:
        chosen = torch.randperm(n)[:k]
    else:
        w = torch.as_tensor(np.asarray(weights, np.float64))
        if not bool((w > 0).any()):
            w = torch.ones(n, dtype=torch.float64)
        k = min(k, int((w > 0).sum()))
        chosen = torch.multinomial(w, k, replacement=False)
    return [candidates[i] for i in sorted(chosen.tolist())]


def _sample_one(indptr, indices, data, seeds, num_hops, num_neighbor, max_num_vertices, prob):
    """Breadth-first sampling from ``seeds``: a vertex of layer < num_hops gets up to
    ``num_neighbor`` of its neighbours sampled (each new one joins at the next layer) until
    ``max_num_vertices`` vertices are in. Returns (sorted vertices, their layers, their rows
    as (columns, edge ids) with edges to vertices in the sample only)."""
    layer = {}
    queue = deque()
    for s in seeds:
        s = int(s)
        if s not in layer and len(layer) < max_num_vertices:
            layer[s] = 0
            queue.append(s)
    picked = {}
    while queue and len(layer) < max_num_vertices:
        v = queue.popleft()
        if layer[v] >= num_hops:
            continue
        lo, hi = indptr[v], indptr[v + 1]
        cand = list(range(lo, hi))
        weights = None if prob is None else [prob[indices[e]] for e in cand]
        edges = _pick(cand, num_neighbor, weights)
        picked[v] = edges
        for e in edges:
            u = int(indices[e])
            if u not in layer and len(layer) < max_num_vertices:
                layer[u] = layer[v] + 1
                queue.append(u)
    vertices = sorted(layer)
    rows = []
    for v in vertices:
        edges = [e for e in picked.get(v, ()) if int(indices[e]) in layer]
        edges.sort(key=lambda e: indices[e])
        rows.append(([int(indices[e]) for e in edges], [data[e] for e in edges]))
    return vertices, [layer[v] for v in vertices], rows


def _neighbor_sample(op, csr_matrix, probability, seed_arrays, num_hops, num_neighbor,
                     max_num_vertices):
    indptr, indices, data = _csr_parts(csr_matrix, op)
    num_hops, num_neighbor = int(num_hops), int(num_neighbor)
    max_num_vertices = int(max_num_vertices)
    if not seed_arrays:
        raise MXNetError(f"{op}: give at least one array of seed vertices")
    if max_num_vertices < 1:
        raise MXNetError(f"{op}: max_num_vertices must be positive, got {max_num_vertices}")
    nrows, ncols = csr_matrix.shape
    prob = None
    if probability is not None:
        prob = probability.asnumpy().astype(np.float64).reshape(-1)
        if prob.size != nrows:
            raise MXNetError(f"{op}: the probability vector has {prob.size} entries for a "
                             f"graph of {nrows} vertices")
    ctx = csr_matrix.context
    ids, csrs, probs, layers = [], [], [], []
    for seeds in seed_arrays:
        s = seeds.asnumpy().reshape(-1).astype(np.int64)
        if s.size and (s.min() < 0 or s.max() >= nrows):
            raise MXNetError(f"{op}: seed vertices must be in [0, {nrows})")
        vertices, lay, rows = _sample_one(indptr, indices, data, s, num_hops, num_neighbor,
                                          max_num_vertices, prob)
        n = len(vertices)
        vid = np.zeros(max_num_vertices + 1, np.int64)
        vid[:n] = vertices
        vid[-1] = n
        ids.append(_array(vid, np.int64, ctx))
        lay_arr = np.zeros(max_num_vertices, np.int64)
        lay_arr[:n] = lay
        layers.append(_array(lay_arr, np.int64, ctx))
        ptr = np.zeros(max_num_vertices + 1, np.int64)
        ptr[1:n + 1] = np.cumsum([len(r[0]) for r in rows])
        ptr[n + 1:] = ptr[n]
        cols = [c for r in rows for c in r[0]]
        vals = [x for r in rows for x in r[1]]
        csrs.append(_csr(vals, cols, ptr, (max_num_vertices, ncols), data.dtype, ctx))
        if prob is not None:
            p = np.zeros(max_num_vertices, np.float32)
            p[:n] = prob[vertices]
            probs.append(_array(p, np.float32, ctx))
    return ids + csrs + probs + layers


def dgl_csr_neighbor_uniform_sample(csr_matrix, *seed_arrays, num_hops=1, num_neighbor=2,
                                    max_num_vertices=100, num_args=None, out=None, name=None):
    """Sample subgraphs of ``csr_matrix`` around each array of seed vertices, picking up to
    ``num_neighbor`` neighbours of a vertex uniformly, for ``num_hops`` hops.

    Returns, for k seed arrays, 3k arrays: k vertex arrays (sorted vertex ids, then the
    count last), k CSR matrices of shape ``(max_num_vertices, graph columns)`` (row i: the
    sampled edges of vertex i, by original vertex id, valued by edge id), k layer arrays.
    """
    return _neighbor_sample("dgl_csr_neighbor_uniform_sample", csr_matrix, None, seed_arrays,
                            num_hops, num_neighbor, max_num_vertices)


def dgl_csr_neighbor_non_uniform_sample(csr_matrix, probability, *seed_arrays, num_hops=1,
                                        num_neighbor=2, max_num_vertices=100, num_args=None,
                                        out=None, name=None):
    """As :func:`dgl_csr_neighbor_uniform_sample`, neighbours picked in proportion to
    ``probability`` (one weight a vertex). Returns 4k arrays: vertices, CSR matrices, the
    sampled vertices' probabilities, layers."""
    return _neighbor_sample("dgl_csr_neighbor_non_uniform_sample", csr_matrix, probability,
                            seed_arrays, num_hops, num_neighbor, max_num_vertices)


def dgl_graph_compact(*graph_data, graph_sizes=None, return_mapping=False, out=None,
                      name=None):
    """Compact sampled CSR matrices (first the k matrices, then their k vertex arrays) to
    ``(n, n)`` matrices over the first n = ``graph_sizes[i]`` sampled vertices: columns become
    positions in the vertex array, values new edge ids 0, 1, ... With ``return_mapping`` the k
    matrices valued by the original edge ids follow."""
    if len(graph_data) % 2 or not graph_data:
        raise MXNetError("dgl_graph_compact: give the sampled CSR matrices, then as many vertex "
                         f"arrays; got {len(graph_data)} arrays")
    k = len(graph_data) // 2
    if graph_sizes is None:
        raise MXNetError("dgl_graph_compact: graph_sizes is required")
    sizes = np.asarray(graph_sizes, dtype=np.int64).reshape(-1)
    if sizes.size != k:
        raise MXNetError(f"dgl_graph_compact: graph_sizes has {sizes.size} entries for {k} "
                         "graphs")
    compact, mapping = [], []
    for g, ids, n in zip(graph_data[:k], graph_data[k:], sizes.tolist()):
        indptr, indices, data = _csr_parts(g, "dgl_graph_compact")
        vid = ids.asnumpy().reshape(-1).astype(np.int64)
        if n < 0 or n > min(len(vid), len(indptr) - 1):
            raise MXNetError(f"dgl_graph_compact: graph size {n} exceeds the sampled graph")
        pos = {int(v): i for i, v in enumerate(vid[:n])}
        ptr = indptr[:n + 1] - indptr[0]
        cols = indices[indptr[0]:indptr[n]]
        try:
            new_cols = np.array([pos[int(c)] for c in cols], np.int64)
        except KeyError as err:
            raise MXNetError(f"dgl_graph_compact: vertex {err.args[0]} has an edge but is not "
                             "among the sampled vertices") from None
        ctx = g.context
        compact.append(_csr(np.arange(len(cols)), new_cols, ptr, (n, n), data.dtype, ctx))
        if return_mapping:
            mapping.append(_csr(data[indptr[0]:indptr[n]], new_cols, ptr, (n, n), data.dtype,
                                ctx))
    res = compact + mapping
    return res[0] if len(res) == 1 else res


def dgl_subgraph(graph, *data, return_mapping=False, num_args=None, out=None, name=None):
    """The subgraph of ``graph`` induced by each array of vertices: row/column i is vertex
    ``v[i]``, values new edge ids 0, 1, ... With ``return_mapping`` the matrices valued by the
    original edge ids follow (all k new ones first, then the k mappings)."""
    indptr, indices, values = _csr_parts(graph, "dgl_subgraph")
    if not data:
        raise MXNetError("dgl_subgraph: give at least one array of vertices")
    nrows = graph.shape[0]
    subs, maps = [], []
    for arr in data:
        vid = arr.asnumpy().reshape(-1).astype(np.int64)
        if vid.size and (vid.min() < 0 or vid.max() >= nrows):
            raise MXNetError(f"dgl_subgraph: vertices must be in [0, {nrows})")
        pos = {int(v): i for i, v in enumerate(vid)}
        ptr, cols, orig = [0], [], []
        for v in vid:
            for e in range(indptr[v], indptr[v + 1]):
                j = pos.get(int(indices[e]))
                if j is not None:
                    cols.append(j)
                    orig.append(values[e])
            ptr.append(len(cols))
        n = len(vid)
        subs.append(_csr(np.arange(len(cols)), cols, ptr, (n, n), values.dtype, graph.context))
        if return_mapping:
            maps.append(_csr(orig, cols, ptr, (n, n), values.dtype, graph.context))
    res = subs + maps
    return res[0] if len(res) == 1 else res


def dgl_adjacency(data, out=None, name=None):
    """The adjacency matrix of a graph stored as CSR edge ids: the same sparsity pattern,
    every stored value 1 (float32)."""
    indptr, indices, _ = _csr_parts(data, "dgl_adjacency")
    r = _csr(np.ones(len(indices), np.float32), indices, indptr, data.shape, np.float32,
             data.context)
    if out is not None:
        out[:] = r
        return out
    return r
