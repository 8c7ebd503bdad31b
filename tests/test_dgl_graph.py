"""nd.contrib.dgl_*: MXNet 1.9.1's graph operators for DGL, against values MXNet 1.9.1 gives
for deterministic cases (every neighbour sampled), and the structure of random samples."""
import numpy as np

import neogluon as mx


def _graph():
    data = np.arange(1, 21, dtype=np.int64)
    indices = np.array([1, 2, 3, 4, 0, 2, 3, 4, 0, 1, 3, 4, 0, 1, 2, 4, 0, 1, 2, 3], np.int64)
    indptr = np.array([0, 4, 8, 12, 16, 20], np.int64)
    return mx.nd.sparse.csr_matrix((data, indices, indptr), shape=(5, 5))


def _parts(c):
    return (c.indptr.asnumpy().tolist(), c.indices.asnumpy().tolist(),
            c.data.asnumpy().tolist())


def test_uniform_sample_all_neighbours_and_compact_match_mxnet():
    seed = mx.nd.array([1], dtype=np.int64)
    vid, sub, layer = mx.nd.contrib.dgl_csr_neighbor_uniform_sample(
        _graph(), seed, num_args=2, num_hops=1, num_neighbor=4, max_num_vertices=5)
    assert vid.asnumpy().tolist() == [0, 1, 2, 3, 4, 5]
    assert sub.shape == (5, 5) and sub.dtype == np.int64
    assert _parts(sub) == ([0, 0, 4, 4, 4, 4], [0, 2, 3, 4], [5, 6, 7, 8])
    assert layer.asnumpy().tolist() == [1, 0, 1, 1, 1]
    compact = mx.nd.contrib.dgl_graph_compact(sub, vid, graph_sizes=5, return_mapping=False)
    assert compact.shape == (5, 5)
    assert _parts(compact) == ([0, 0, 4, 4, 4, 4], [0, 2, 3, 4], [0, 1, 2, 3])


def test_sampling_structure_and_non_uniform_probabilities():
    mx.random.seed(3)
    prob = mx.nd.array([0.9, 0.8, 0.2, 0.4, 0.1])
    seed = mx.nd.array([0, 4], dtype=np.int64)
    vid, sub, p, layer = mx.nd.contrib.dgl_csr_neighbor_non_uniform_sample(
        _graph(), prob, seed, num_args=3, num_hops=2, num_neighbor=2, max_num_vertices=4)
    assert vid.shape == (5,) and p.shape == (4,) and layer.shape == (4,)
    n = int(vid.asnumpy()[-1])
    verts = vid.asnumpy()[:n]
    assert 2 <= n <= 4 and list(verts) == sorted(verts) and {0, 4} <= set(verts.tolist())
    np.testing.assert_allclose(p.asnumpy()[:n], prob.asnumpy()[verts], rtol=1e-6)
    assert (layer.asnumpy()[:n] <= 2).all()
    sub.check_format(full_check=True)
    ptr = sub.indptr.asnumpy()
    assert (ptr[n:] == ptr[n]).all()
    # every sampled edge is an edge of the graph, between sampled vertices
    dense = _graph().asnumpy()
    s = sub.asnumpy()
    for i, v in enumerate(verts):
        for u in np.nonzero(s[i])[0]:
            assert u in verts and s[i, u] == dense[v, u]


def test_subgraph_and_adjacency_match_mxnet():
    b = mx.nd.sparse.csr_matrix((np.arange(1, 8), np.array([0, 3, 0, 2, 1, 1, 2]),
                                 np.array([0, 2, 4, 5, 7])), shape=(4, 4)).astype(np.int64)
    new1, new2, map1, map2 = mx.nd.contrib.dgl_subgraph(
        b, mx.nd.array([0, 1, 2], dtype=np.int64), mx.nd.array([1, 3], dtype=np.int64),
        return_mapping=True)
    assert _parts(new1) == ([0, 1, 3, 4], [0, 0, 2, 1], [0, 1, 2, 3])
    assert _parts(map1) == ([0, 1, 3, 4], [0, 0, 2, 1], [1, 3, 4, 5])
    assert _parts(new2) == ([0, 0, 1], [0], [0]) and _parts(map2) == ([0, 0, 1], [0], [6])
    one = mx.nd.contrib.dgl_subgraph(b, mx.nd.array([0, 1, 2], dtype=np.int64),
                                     return_mapping=False)
    assert one.stype == "csr" and one.shape == (3, 3)
    adj = mx.nd.contrib.dgl_adjacency(b)
    assert adj.dtype == np.float32 and adj.stype == "csr"
    assert _parts(adj) == (b.indptr.asnumpy().tolist(), b.indices.asnumpy().tolist(), [1.0] * 7)
