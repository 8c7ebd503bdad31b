"""Sparse scenarios, shared by tools/gen_sparse_fixtures.py (run in MXNet 1.9.1) and
tests/test_sparse.py (run in neogluon). Each code string leaves its result in ``out``."""

PRELUDE = '''
import numpy as np
nd = mx.nd
autograd = mx.autograd
rs = np.random.RandomState(7)
def R():
    return nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [0, 2]), shape=(4, 2))
def R2():
    return nd.sparse.row_sparse_array(([[5, 6], [7, 8]], [1, 2]), shape=(4, 2))
def C():
    return nd.sparse.csr_matrix(([1, 2, 3], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 3))
def C2():
    return nd.sparse.csr_matrix(([4, 5], [2, 0], [0, 1, 1, 2]), shape=(3, 3))
def D():
    return nd.array([[1, 2], [3, 4], [5, 6], [7, 8]])
def rand_dense(m, n, density, seed):
    r = np.random.RandomState(seed)
    a = r.uniform(-1, 1, size=(m, n)).astype("float32")
    a[r.uniform(size=(m, n)) > density] = 0
    return a
def rand_rows(m, n, density, seed):
    r = np.random.RandomState(seed)
    a = r.uniform(-1, 1, size=(m, n)).astype("float32")
    a[r.uniform(size=m) > density] = 0
    return a
BIGC = rand_dense(30, 40, 0.1, 1)
BIGW = np.random.RandomState(2).uniform(-1, 1, size=(40, 6)).astype("float32")
BIGR = rand_rows(40, 6, 0.3, 3)
'''


def namespace(mx):
    ns = {"mx": mx, "GLUON_PRELUDE": GLUON_PRELUDE, "SAVE_PRELUDE": SAVE_PRELUDE}
    exec(PRELUDE, ns)  # noqa: S102 - our own source
    return ns


CASES = [
    # ------------------------------------------------------------ creation
    ("rsp_tuple", "out = R()"),
    ("rsp_tuple_noshape", "out = nd.sparse.row_sparse_array(([[1, 2]], [1]))"),
    ("rsp_np_f64", "out = nd.sparse.row_sparse_array((np.array([[1, 2]], dtype='float64'), [1]), shape=(3, 2))"),
    ("rsp_dtype_arg", "out = nd.sparse.row_sparse_array(([[1, 2]], [1]), shape=(3, 2), dtype='float16')"),
    ("rsp_shape_only", "out = nd.sparse.row_sparse_array((3, 4))"),
    ("rsp_from_dense_np", "out = nd.sparse.row_sparse_array(np.array([[0, 1.], [0, 0], [2, 0]]))"),
    ("rsp_from_dense_nd", "out = nd.sparse.row_sparse_array(nd.array([[0, 1.], [0, 0], [2, 0]]))"),
    ("rsp_from_rsp", "out = nd.sparse.row_sparse_array(R())"),
    ("rsp_3d", "out = nd.sparse.row_sparse_array((np.arange(12).reshape(2, 3, 2).astype('float32'), [1, 3]), shape=(5, 3, 2))"),
    ("rsp_bad_len", "out = nd.sparse.row_sparse_array(([[1, 2]], [1, 2]), shape=(3, 2))"),
    ("rsp_bad_rowshape", "out = nd.sparse.row_sparse_array(([[1, 2, 3], [3, 4, 5]], [0, 2]), shape=(4, 2))"),
    ("rsp_data_aux", "r = R(); out = [r.data, r.indices, r.stype, r.shape[0], len(r), r._aux_type(0)]"),
    ("csr_tuple", "out = C()"),
    ("csr_tuple_noshape", "out = nd.sparse.csr_matrix(([1, 2, 3], [0, 2, 1], [0, 2, 2, 3]))"),
    ("csr_shape_only", "out = nd.sparse.csr_matrix((3, 4))"),
    ("csr_from_dense_np", "out = nd.sparse.csr_matrix(np.array([[0, 1.], [2, 0], [0, 0]]))"),
    ("csr_from_dense_nd", "out = nd.sparse.csr_matrix(nd.array([[0, 1.], [2, 0], [0, 0]]))"),
    ("csr_from_csr", "out = nd.sparse.csr_matrix(C())"),
    ("csr_bad_len", "out = nd.sparse.csr_matrix(([1, 2, 3], [0, 2], [0, 2, 2, 3]), shape=(3, 3))"),
    ("csr_data_aux", "c = C(); out = [c.data, c.indices, c.indptr, c.stype, c._aux_types]"),
    ("zeros_rsp", "out = nd.sparse.zeros('row_sparse', (3, 2))"),
    ("zeros_rsp_int32", "out = nd.sparse.zeros('row_sparse', (3, 2), dtype='int32')"),
    ("zeros_csr", "out = nd.sparse.zeros('csr', (3, 2))"),
    ("zeros_default", "out = nd.sparse.zeros('default', (3, 2))"),
    ("nd_zeros_stype", "out = nd.zeros((3, 2), stype='row_sparse')"),
    ("zeros_like_rsp", "out = nd.sparse.zeros_like(R())"),
    ("sparse_array_rsp", "out = nd.sparse.array(R())"),
    ("sparse_array_dense_err", "out = nd.sparse.array(np.array([[0, 1.], [2, 0]]))"),
    ("empty_rsp", "out = nd.sparse.empty('row_sparse', (2, 2))"),
    # ------------------------------------------------------------ casting
    ("cast_d2rsp", "out = nd.array([[1, 2], [0, 0], [3, 4]]).tostype('row_sparse')"),
    ("cast_d2csr", "out = nd.array([[1, 2], [0, 0], [3, 4]]).tostype('csr')"),
    ("cast_rsp2d", "out = R().tostype('default')"),
    ("cast_csr2d", "out = C().tostype('default')"),
    ("cast_rsp2csr", "out = R().tostype('csr')"),
    ("cast_csr2rsp", "out = C().tostype('row_sparse')"),
    ("cast_rsp2rsp", "out = R().tostype('row_sparse')"),
    ("cast_bad", "out = R().tostype('foo')"),
    ("cast_3d_rsp", "out = nd.array(np.arange(24).reshape(2, 3, 4), dtype='float32').tostype('row_sparse')"),
    ("cast_3d_csr", "out = nd.zeros((2, 3, 4)).tostype('csr')"),
    ("cast_storage_fn", "out = nd.sparse.cast_storage(nd.array(BIGC), 'csr')"),
    ("cast_big_rsp", "out = nd.array(BIGR).tostype('row_sparse')"),
    # ------------------------------------------------------------ copies, contexts, dtypes
    ("astype_rsp", "out = R().astype('float64')"),
    ("astype_csr", "out = C().astype('int32')"),
    ("copy_rsp", "out = R().copy()"),
    ("copyto_ctx", "out = R().copyto(mx.cpu(1))"),
    ("copyto_ctx_ctx", "out = str(C().copyto(mx.cpu(1)).context)"),
    ("as_in_context", "out = str(R().as_in_context(mx.cpu(1)).context)"),
    ("copyto_dense", "out = R().copyto(nd.zeros((4, 2)))"),
    ("copyto_rsp", "out = R().copyto(nd.sparse.zeros('row_sparse', (4, 2)))"),
    ("dense_copyto_rsp", "out = nd.array([[0, 0], [1, 1], [0, 0], [2, 2]]).copyto(nd.sparse.zeros('row_sparse', (4, 2)))"),
    ("copyto_csr2rsp", "out = C().copyto(nd.sparse.zeros('row_sparse', (3, 3)))"),
    ("asnumpy_rsp", "out = R().asnumpy().tolist()"),
    ("repr_rsp", "out = repr(R()).strip()"),
    ("repr_csr", "out = repr(C()).strip()"),
    # ------------------------------------------------------------ indexing and assignment
    ("rsp_getitem_all", "r = R(); out = r[:]"),
    ("rsp_getitem_int", "out = R()[1]"),
    ("rsp_getitem_slice", "out = R()[1:3]"),
    ("csr_getitem_int", "out = C()[2]"),
    ("csr_getitem_slice", "out = C()[1:3]"),
    ("csr_getitem_big_slice", "out = nd.array(BIGC).tostype('csr')[5:17]"),
    ("rsp_setitem_dense", "r = R(); r[:] = nd.array([[0, 0], [1, 1], [0, 0], [2, 2]]); out = r"),
    ("rsp_setitem_scalar", "r = R(); r[:] = 3; out = r"),
    ("rsp_setitem_zero", "r = R(); r[:] = 0; out = r"),
    ("rsp_setitem_rsp", "r = R(); r[:] = R2(); out = r"),
    ("rsp_setitem_np", "r = R(); r[:] = np.array([[0, 0], [1, 1], [0, 0], [0, 0]]); out = r"),
    ("zeros_like_out", "r = R(); nd.zeros_like(r, out=r); out = r"),
    ("rsp_reshape_err", "out = R().reshape((2, 4))"),
    ("rsp_size_err", "out = R().size"),
    ("retain", "out = nd.sparse.retain(R(), nd.array([0, 3], dtype='int64'))"),
    ("retain_big", "out = nd.sparse.retain(nd.array(BIGR).tostype('row_sparse'), nd.array([0, 3, 5, 17, 39], dtype='int64'))"),
    # ------------------------------------------------------------ arithmetic
    ("rsp_add_rsp", "out = R() + R2()"),
    ("rsp_sub_rsp", "out = R() - R2()"),
    ("rsp_mul_rsp", "out = R() * R2()"),
    ("rsp_div_rsp", "out = R() / R2()"),
    ("rsp_add_dense", "out = R() + D()"),
    ("rsp_sub_dense", "out = R() - D()"),
    ("rsp_mul_dense", "out = R() * D()"),
    ("rsp_div_dense", "out = R() / D()"),
    ("dense_add_rsp", "out = D() + R()"),
    ("dense_sub_rsp", "out = D() - R()"),
    ("dense_mul_rsp", "out = D() * R()"),
    ("rsp_add_scalar", "out = R() + 2"),
    ("rsp_sub_scalar", "out = R() - 2"),
    ("scalar_sub_rsp", "out = 2 - R()"),
    ("rsp_mul_scalar", "out = R() * 2.5"),
    ("scalar_mul_rsp", "out = 2 * R()"),
    ("rsp_div_scalar", "out = R() / 2"),
    ("scalar_div_rsp", "out = 2 / R()"),
    ("rsp_pow", "out = R() ** 2"),
    ("rsp_neg", "out = -R()"),
    ("rsp_add_csr", "out = nd.sparse.row_sparse_array(([[1, 2, 3]], [0]), shape=(3, 3)) + C()"),
    ("csr_add_rsp", "out = C() + nd.sparse.row_sparse_array(([[1, 2, 3]], [0]), shape=(3, 3))"),
    ("rsp_iadd_rsp", "r = R(); r += R2(); out = r"),
    ("rsp_imul_scalar", "r = R(); r *= 2; out = r"),
    ("rsp_iadd_dense", "r = R(); r += D(); out = r"),
    ("rsp_isub_rsp", "r = R(); r -= R2(); out = r"),
    ("csr_add_csr", "out = C() + C2()"),
    ("csr_sub_csr", "out = C() - C2()"),
    ("csr_mul_csr", "out = C() * C2()"),
    ("csr_mul_self", "out = C() * C()"),
    ("csr_div_csr", "out = C() / C2()"),
    ("csr_add_dense", "out = C() + nd.ones((3, 3))"),
    ("csr_mul_dense", "out = C() * nd.array(np.arange(9).reshape(3, 3), dtype='float32')"),
    ("csr_mul_scalar", "out = C() * 2"),
    ("csr_div_scalar", "out = C() / 2"),
    ("csr_add_scalar", "out = C() + 2"),
    ("sparse_add_fn", "out = nd.sparse.add(R(), R2())"),
    ("sparse_elemwise_add", "out = nd.sparse.elemwise_add(R(), R2())"),
    ("sparse_multiply_fn", "out = nd.sparse.multiply(R(), D())"),
    ("big_rsp_add", "out = nd.array(BIGR).tostype('row_sparse') + nd.array(rand_rows(40, 6, 0.3, 9)).tostype('row_sparse')"),
    ("big_csr_add", "out = nd.array(BIGC).tostype('csr') + nd.array(rand_dense(30, 40, 0.1, 11)).tostype('csr')"),
    ("compare_rsp", "out = R() == R2()"),
    # ------------------------------------------------------------ unary and reductions
    ("sq_rsp", "out = nd.sparse.square(R())"),
    ("sqrt_rsp", "out = nd.sparse.sqrt(R())"),
    ("sqrt_csr", "out = nd.sparse.sqrt(C())"),
    ("abs_rsp", "out = nd.sparse.abs(-R())"),
    ("sign_rsp", "out = nd.sparse.sign(-R())"),
    ("relu_rsp", "out = nd.sparse.relu(R() * -1)"),
    ("clip_rsp", "out = nd.sparse.clip(R(), 0, 2)"),
    ("clip_rsp_pos", "out = nd.sparse.clip(R(), 1.5, 2)"),
    ("tanh_rsp", "out = nd.sparse.tanh(R())"),
    ("exp_rsp", "out = nd.exp(R())"),
    ("sum_rsp", "out = nd.sum(R())"),
    ("norm_rsp", "out = nd.norm(R())"),
    ("add_n_rsp", "out = nd.sparse.add_n(R(), R2(), R())"),
    ("add_n_mixed", "out = nd.sparse.add_n(R(), D())"),
    ("add_n_big", "out = nd.sparse.add_n(*[nd.array(rand_rows(40, 6, 0.2, s)).tostype('row_sparse') for s in range(4)])"),
    # ------------------------------------------------------------ dot
    ("dot_csr_dense", "out = nd.sparse.dot(C(), nd.array(np.arange(6).reshape(3, 2), dtype='float32'))"),
    ("dot_csrT_dense", "out = nd.sparse.dot(C(), nd.array(np.arange(6).reshape(3, 2), dtype='float32'), transpose_a=True)"),
    ("dot_csr_denseT", "out = nd.sparse.dot(C(), nd.array(np.arange(6).reshape(2, 3), dtype='float32'), transpose_b=True)"),
    ("dot_csr_rsp", "out = nd.sparse.dot(C(), nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [0, 2]), shape=(3, 2)))"),
    ("dot_csrT_rsp", "out = nd.sparse.dot(C(), nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [0, 2]), shape=(3, 2)), transpose_a=True)"),
    ("dot_dense_csr", "out = nd.sparse.dot(nd.array(np.arange(6).reshape(2, 3), dtype='float32'), C())"),
    ("dot_dense_csrT", "out = nd.sparse.dot(nd.array(np.arange(6).reshape(2, 3), dtype='float32'), C(), transpose_b=True)"),
    ("dot_nd_dot_csr", "out = nd.dot(C(), nd.ones((3, 2)))"),
    ("dot_big", "out = nd.sparse.dot(nd.array(BIGC).tostype('csr'), nd.array(BIGW))"),
    ("dot_big_T", "out = nd.sparse.dot(nd.array(BIGC).tostype('csr'), nd.array(BIGW[:30]), transpose_a=True)"),
    ("dot_big_rsp", "out = nd.sparse.dot(nd.array(BIGC).tostype('csr'), nd.array(BIGR).tostype('row_sparse'))"),
    ("dot_big_T_rsp", "out = nd.sparse.dot(nd.array(BIGC).tostype('csr'), nd.array(BIGR[:30]).tostype('row_sparse'), transpose_a=True)"),
    ("dot_shape_err", "out = nd.sparse.dot(C(), nd.ones((4, 2)))"),
    ("dot_rsp_dense", "out = nd.sparse.dot(R(), nd.ones((2, 3)))"),
    # ------------------------------------------------------------ autograd
    ("grad_attach_rsp_dense_op",
     "x = nd.array([[0, 0], [1, 0], [0, 0]]); x.attach_grad(stype='row_sparse')\n"
     "with autograd.record():\n    y = x * nd.array([[0, 0], [0, 1], [0, 0]])\n"
     "y.backward(); out = x.grad"),
    ("grad_attach_csr",
     "x = nd.array([[0, 0], [1, 0], [0, 0]]); x.attach_grad(stype='csr')\n"
     "with autograd.record():\n    y = x * 2\n"
     "y.backward(); out = x.grad"),
    ("grad_embedding_sparse",
     "w = nd.array(np.arange(12).reshape(4, 3), dtype='float32'); w.attach_grad(stype='row_sparse')\n"
     "with autograd.record():\n"
     "    y = nd.Embedding(nd.array([3, 1, 3]), w, input_dim=4, output_dim=3, sparse_grad=True)\n"
     "y.backward(nd.array(np.arange(9).reshape(3, 3), dtype='float32')); out = w.grad"),
    ("grad_embedding_sparse_2d",
     "w = nd.array(rs.uniform(size=(10, 4)), dtype='float32'); w.attach_grad(stype='row_sparse')\n"
     "with autograd.record():\n"
     "    y = nd.Embedding(nd.array([[3, 1], [7, 3], [9, 9]]), w, input_dim=10, output_dim=4, sparse_grad=True)\n"
     "    z = (y * y).sum()\n"
     "z.backward(); out = w.grad"),
    ("grad_embedding_sparse_dense_buf_err",
     "w = nd.array(np.arange(12).reshape(4, 3), dtype='float32'); w.attach_grad()\n"
     "with autograd.record():\n"
     "    y = nd.Embedding(nd.array([3, 1, 3]), w, input_dim=4, output_dim=3, sparse_grad=True)\n"
     "y.backward(); out = w.grad"),
    ("grad_dot_csr_dense_rsp_grad",
     "c = nd.sparse.csr_matrix(([1, 2, 3], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 4))\n"
     "w = nd.array(np.arange(8).reshape(4, 2), dtype='float32'); w.attach_grad(stype='row_sparse')\n"
     "with autograd.record():\n    y = nd.sparse.dot(c, w)\n"
     "y.backward(nd.array([[1, 2], [3, 4], [5, 6]])); out = w.grad"),
    ("grad_dot_csr_dense_dense_grad",
     "c = nd.sparse.csr_matrix(([1, 2, 3], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 4))\n"
     "w = nd.array(np.arange(8).reshape(4, 2), dtype='float32'); w.attach_grad()\n"
     "with autograd.record():\n    y = nd.sparse.dot(c, w)\n"
     "y.backward(nd.array([[1, 2], [3, 4], [5, 6]])); out = w.grad"),
    ("grad_dot_big_rsp_grad",
     "c = nd.array(BIGC).tostype('csr'); w = nd.array(BIGW); w.attach_grad(stype='row_sparse')\n"
     "with autograd.record():\n    y = nd.sparse.dot(c, w)\n    z = (y * y).sum()\n"
     "z.backward(); out = w.grad"),
    ("grad_dot_csr_rsp_var",
     "c = nd.sparse.csr_matrix(([1, 2, 3], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 4))\n"
     "w = nd.array(np.arange(8).reshape(4, 2), dtype='float32').tostype('row_sparse'); w.attach_grad()\n"
     "with autograd.record():\n    y = nd.sparse.dot(c, w)\n"
     "y.backward(nd.array([[1, 2], [3, 4], [5, 6]])); out = [w.grad, y]"),
    ("grad_dot_csr_rsp_var_partial_rows",
     "c = nd.sparse.csr_matrix(([1, 2, 3], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 4))\n"
     "w = nd.sparse.row_sparse_array(([[1, 2], [3, 4], [5, 6]], [0, 1, 2]), shape=(4, 2)); w.attach_grad()\n"
     "with autograd.record():\n    y = nd.sparse.dot(c, w)\n"
     "y.backward(); out = [w.grad, y]"),
    ("grad_rsp_var_init", "w = R(); w.attach_grad(); out = w.grad"),
    ("grad_rsp_var_dense_op",
     "w = nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [0, 3]), shape=(4, 2)); w.attach_grad()\n"
     "with autograd.record():\n    y = w * 2\n"
     "y.backward(); out = w.grad.asnumpy()[[0, 3]]"),
    ("grad_add_req",
     "w = nd.array(np.arange(12).reshape(4, 3), dtype='float32'); w.attach_grad(grad_req='add', stype='row_sparse')\n"
     "for ids in ([3, 1], [0, 3]):\n"
     "    with autograd.record():\n"
     "        y = nd.Embedding(nd.array(ids), w, input_dim=4, output_dim=3, sparse_grad=True)\n"
     "    y.backward()\n"
     "out = w.grad"),
]


def _kv_cases():
    """KVStore scenarios, for 'local' and 'device'."""
    out = []
    base = [
        ("rsp_pull", "kv.init(3, R()); o = nd.sparse.zeros('row_sparse', (4, 2))\n"
                     "kv.row_sparse_pull(3, out=o, row_ids=nd.array([2, 1, 2], dtype='int64')); out = o"),
        ("rsp_pull_two_outs_one_rowid",
         "kv.init(3, R()); o = [nd.sparse.zeros('row_sparse', (4, 2)), nd.sparse.zeros('row_sparse', (4, 2), ctx=mx.cpu(1))]\n"
         "kv.row_sparse_pull(3, out=o, row_ids=nd.array([3, 0], dtype='int64')); out = o + [str(o[1].context)]"),
        ("rsp_pull_two_outs_two_rowids",
         "kv.init(3, R()); o = [nd.sparse.zeros('row_sparse', (4, 2)), nd.sparse.zeros('row_sparse', (4, 2), ctx=mx.cpu(1))]\n"
         "kv.row_sparse_pull(3, out=o, row_ids=[nd.array([3, 0], dtype='int64'), nd.array([1], dtype='int64')]); out = o"),
        ("rsp_pull_str_keys",
         "kv.init(['a', 'b'], [R(), R2()]); o = [nd.sparse.zeros('row_sparse', (4, 2)), nd.sparse.zeros('row_sparse', (4, 2))]\n"
         "kv.row_sparse_pull(['a', 'b'], out=o, row_ids=[nd.array([0, 1], dtype='int64'), nd.array([1, 2], dtype='int64')]); out = o"),
        ("pull_rsp_not_ignored",
         "kv.init(3, R()); o = nd.sparse.zeros('row_sparse', (4, 2)); kv.pull(3, out=o, ignore_sparse=False); out = o"),
        ("pull_rsp_ignored",
         "kv.init(3, R()); o = nd.sparse.row_sparse_array(([[9, 9]], [1]), shape=(4, 2)); kv.pull(3, out=o); out = o"),
        ("pull_rsp_into_dense", "kv.init(3, R()); o = nd.zeros((4, 2)); kv.pull(3, out=o); out = o"),
        ("push_two_rsp",
         "kv.init(3, R()); kv.push(3, [R(), R2().copyto(mx.cpu(1))]); o = nd.sparse.zeros('row_sparse', (4, 2))\n"
         "kv.row_sparse_pull(3, out=o, row_ids=nd.array([0, 1, 2, 3], dtype='int64')); out = o"),
        ("push_two_rsp_pull_all",
         "kv.init(3, R()); kv.push(3, [R(), R2().copyto(mx.cpu(1))]); o = nd.sparse.zeros('row_sparse', (4, 2))\n"
         "kv.pull(3, out=o, ignore_sparse=False); out = o"),
        ("push_dense_to_rsp_key_then_rsp_pull",
         "kv.init(3, R()); kv.push(3, nd.ones((4, 2))); o = nd.sparse.zeros('row_sparse', (4, 2))\n"
         "kv.row_sparse_pull(3, out=o, row_ids=nd.array([0], dtype='int64')); out = o"),
        ("rsp_pull_dense_out_err",
         "kv.init(3, R()); o = nd.zeros((4, 2)); kv.row_sparse_pull(3, out=o, row_ids=nd.array([0], dtype='int64')); out = o"),
        ("rsp_pull_dense_key_err",
         "kv.init(5, nd.ones((4, 2))); o = nd.sparse.zeros('row_sparse', (4, 2))\n"
         "kv.row_sparse_pull(5, out=o, row_ids=nd.array([0], dtype='int64')); out = o"),
        ("rsp_pull_no_rowids_err",
         "kv.init(3, R()); o = nd.sparse.zeros('row_sparse', (4, 2)); kv.row_sparse_pull(3, out=o); out = o"),
        ("push_rsp_to_dense_key_pull_dense",
         "kv.init(5, nd.ones((4, 2))); kv.push(5, [R(), R2().copyto(mx.cpu(1))]); o = nd.zeros((4, 2)); kv.pull(5, out=o); out = o"),
        ("push_rsp_to_dense_key_pull_rsp",
         "kv.init(5, nd.ones((4, 2))); kv.push(5, [R(), R2().copyto(mx.cpu(1))])\n"
         "o = [nd.sparse.zeros('row_sparse', (4, 2)), nd.sparse.zeros('row_sparse', (4, 2))]; kv.pull(5, out=o, ignore_sparse=False); out = o"),
        ("push_rsp_dense_key_sgd",
         "kv.init(6, nd.array(np.arange(8).reshape(4, 2), dtype='float32'))\n"
         "kv.set_optimizer(mx.optimizer.create('sgd', learning_rate=0.1, momentum=0.9, wd=0.1))\n"
         "for _ in range(2):\n    kv.push(6, [R(), R2().copyto(mx.cpu(1))])\n"
         "o = nd.zeros((4, 2)); kv.pull(6, out=o); out = o"),
        ("push_rsp_rsp_key_sgd",
         "kv.init(7, nd.array(np.arange(8).reshape(4, 2), dtype='float32').tostype('row_sparse'))\n"
         "kv.set_optimizer(mx.optimizer.create('sgd', learning_rate=0.1, momentum=0.9, wd=0.1))\n"
         "for _ in range(2):\n    kv.push(7, [R(), R2().copyto(mx.cpu(1))])\n"
         "o = nd.sparse.zeros('row_sparse', (4, 2)); kv.row_sparse_pull(7, out=o, row_ids=nd.array([0, 1, 2, 3], dtype='int64')); out = o"),
        ("push_rsp_rsp_key_adam",
         "kv.init(7, nd.array(np.arange(8).reshape(4, 2), dtype='float32').tostype('row_sparse'))\n"
         "kv.set_optimizer(mx.optimizer.create('adam', learning_rate=0.1, wd=0.1))\n"
         "for _ in range(2):\n    kv.push(7, [R(), R2().copyto(mx.cpu(1))])\n"
         "o = nd.sparse.zeros('row_sparse', (4, 2)); kv.row_sparse_pull(7, out=o, row_ids=nd.array([1, 3], dtype='int64')); out = o"),
        ("pushpull_rsp", "kv.init(3, R()); v = [R(), R2()]; kv.pushpull(3, v); out = v"),
        ("init_csr", "kv.init(9, C()); o = nd.zeros((3, 3)); kv.pull(9, out=o); out = o"),
    ]
    for kind in ("local", "device"):
        for name, code in base:
            out.append((f"kv_{kind}_{name}", f"kv = mx.kv.create('{kind}')\n" + code))
    return out


CASES += _kv_cases()


GLUON_PRELUDE = """
gluon = mx.gluon
W0 = np.random.RandomState(5).uniform(-1, 1, size=(6, 3)).astype('float32')
BATCHES = [[0, 2, 2], [5, 2], [1, 4, 0]]
def ctxs(n):
    return [mx.cpu(i) for i in range(n)]
def emb_run(opt, opt_params, n_ctx=1, kvstore='device', update_on_kvstore=None, steps=3):
    emb = gluon.nn.Embedding(6, 3, sparse_grad=True)
    emb.initialize(ctx=ctxs(n_ctx))
    emb.weight.set_data(nd.array(W0))
    tr = gluon.Trainer(emb.collect_params(), opt, opt_params, kvstore=kvstore,
                       update_on_kvstore=update_on_kvstore)
    res = []
    for b in BATCHES[:steps]:
        with autograd.record():
            losses = []
            for c in ctxs(n_ctx):
                y = emb(nd.array(b, ctx=c))
                losses.append((y * y).sum())
        autograd.backward(losses)
        tr.step(len(b))
        res.append(emb.weight.data(mx.cpu(0)).copy())
    g = emb.weight.grad(mx.cpu(0))
    return res + [g.stype, g.indices, str(tr._kvstore.type) if tr._kvstore else None,
                  tr._update_on_kvstore]
def sparse_weight_run(opt, opt_params, n_ctx=1, kvstore='device', update_on_kvstore=None):
    w = gluon.Parameter('w', shape=(6, 3), stype='row_sparse', grad_stype='row_sparse')
    w.initialize(ctx=ctxs(n_ctx))
    w.set_data(nd.array(W0))
    tr = gluon.Trainer([w], opt, opt_params, kvstore=kvstore, update_on_kvstore=update_on_kvstore)
    res = []
    for b in BATCHES:
        cols = sorted(set(b))
        x = nd.sparse.csr_matrix((np.arange(1, len(cols) + 1, dtype='float32'), cols, [0, len(cols)]), shape=(1, 6))
        row_id = nd.array(cols, dtype='int64')
        with autograd.record():
            losses = []
            for c in ctxs(n_ctx):
                wr = w.row_sparse_data(row_id.as_in_context(c))
                y = nd.sparse.dot(x.as_in_context(c), wr)
                losses.append((y * y).sum())
        autograd.backward(losses)
        tr.step(1)
        res.append(w.row_sparse_data(nd.arange(0, 6, dtype='int64')).copy())
    g = w.grad(mx.cpu(0))
    return res + [g.stype, g.indices, str(tr._kvstore.type) if tr._kvstore else None,
                  tr._update_on_kvstore]
def kv_choice(stype, grad_stype, n_ctx, kvstore, update_on_kvstore):
    p = gluon.Parameter('p', shape=(4, 2), stype=stype, grad_stype=grad_stype)
    p.initialize(ctx=ctxs(n_ctx))
    tr = gluon.Trainer([p], 'sgd', {'learning_rate': 0.1}, kvstore=kvstore,
                       update_on_kvstore=update_on_kvstore)
    tr._init_kvstore()
    return [str(tr._kvstore.type) if tr._kvstore else None, tr._update_on_kvstore, tr._distributed]
"""


def _gluon_cases():
    out = []
    for opt, params in (("sgd", "{'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.1}"),
                        ("adam", "{'learning_rate': 0.05, 'wd': 0.1}"),
                        ("sgd_nolazy", "{'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.1, 'lazy_update': False}"),
                        ("adagrad", "{'learning_rate': 0.1}")):
        name = opt.split("_")[0]
        out.append((f"gluon_emb_{opt}", f"out = emb_run('{name}', {params})"))
        for kv in ("device", "local"):
            for upd in (None, True, False):
                out.append((f"gluon_emb_{opt}_2ctx_{kv}_{upd}",
                            f"out = emb_run('{name}', {params}, n_ctx=2, kvstore='{kv}', update_on_kvstore={upd})"))
        out.append((f"gluon_sparse_w_{opt}", f"out = sparse_weight_run('{name}', {params})"))
        out.append((f"gluon_sparse_w_{opt}_2ctx_local",
                    f"out = sparse_weight_run('{name}', {params}, n_ctx=2, kvstore='local')"))
    out.append(("gluon_sparse_w_upd_false_err",
                "out = sparse_weight_run('sgd', {'learning_rate': 0.1}, update_on_kvstore=False)"))
    for st, gst in (("default", "default"), ("default", "row_sparse"), ("row_sparse", "row_sparse"),
                    ("row_sparse", "default")):
        for n in (1, 2):
            for kv in ("device", "local", None):
                for upd in (None, True, False):
                    kvs = repr(kv)
                    out.append((f"gluon_kvchoice_{st}_{gst}_{n}_{kv}_{upd}",
                                f"out = kv_choice('{st}', '{gst}', {n}, {kvs}, {upd})"))
    # Parameter checks
    out += [
        ("param_bad_stype", "out = gluon.Parameter('p', shape=(2, 2), stype='foo')"),
        ("param_bad_grad_stype", "out = gluon.Parameter('p', shape=(2, 2), grad_stype='foo')"),
        ("param_rsp_data_err", "p = gluon.Parameter('p', shape=(4, 2), stype='row_sparse'); p.initialize(); out = p.data()"),
        ("param_rsp_list_data_err", "p = gluon.Parameter('p', shape=(4, 2), stype='row_sparse'); p.initialize(); out = p.list_data()"),
        ("param_rsp_no_trainer_err", "p = gluon.Parameter('p', shape=(4, 2), stype='row_sparse'); p.initialize(); out = p.row_sparse_data(nd.array([0]))"),
        ("param_dense_row_sparse_data_err", "p = gluon.Parameter('p', shape=(4, 2)); p.initialize(); out = p.row_sparse_data(nd.array([0]))"),
        ("param_two_trainers_err",
         "p = gluon.Parameter('p', shape=(4, 2), stype='row_sparse'); p.initialize()\n"
         "t1 = gluon.Trainer([p], 'sgd'); t2 = gluon.Trainer([p], 'sgd'); out = None"),
        ("param_grad_stype_init", "p = gluon.Parameter('p', shape=(4, 2), grad_stype='row_sparse'); p.initialize(); out = [p.grad(), p.data().stype]"),
        ("param_zero_grad_rsp",
         "emb = gluon.nn.Embedding(6, 3, sparse_grad=True); emb.initialize()\n"
         "with autograd.record():\n    y = emb(nd.array([1, 4]))\n"
         "y.backward(); before = emb.weight.grad().copy(); emb.weight.zero_grad(); out = [before, emb.weight.grad()]"),
        ("param_dict_zero_grad_rsp",
         "emb = gluon.nn.Embedding(6, 3, sparse_grad=True); emb.initialize()\n"
         "with autograd.record():\n    y = emb(nd.array([1, 4]))\n"
         "y.backward(); emb.collect_params().zero_grad(); out = emb.weight.grad()"),
        ("param_rsp_row_sparse_data",
         "p = gluon.Parameter('p', shape=(6, 3), stype='row_sparse'); p.initialize(); p.set_data(nd.array(W0))\n"
         "t = gluon.Trainer([p], 'sgd'); out = [p.row_sparse_data(nd.array([4, 1], dtype='int64')), p.list_row_sparse_data(nd.array([2], dtype='int64'))]"),
        ("emb_sparse_grad_repr", "out = repr(gluon.nn.Embedding(6, 3, sparse_grad=True))"),
        ("emb_sparse_grad_weight_stypes", "e = gluon.nn.Embedding(6, 3, sparse_grad=True); out = [e.weight._stype, e.weight._grad_stype]"),
    ]
    return out


CASES += [(n, "exec(GLUON_PRELUDE)\n" + c) for n, c in _gluon_cases()]


CASES += [
    ("split_and_load_csr_even",
     "out = mx.gluon.utils.split_and_load(nd.array(BIGC).tostype('csr')[:4], [mx.cpu(0), mx.cpu(1)])\n"
     "out = out + [str(o.context) for o in out]"),
    ("split_and_load_csr_uneven",
     "out = mx.gluon.utils.split_and_load(nd.array(BIGC).tostype('csr')[:7], [mx.cpu(0), mx.cpu(1), mx.cpu(2)], even_split=False)"),
    ("split_and_load_csr_uneven_err",
     "out = mx.gluon.utils.split_and_load(nd.array(BIGC).tostype('csr')[:7], [mx.cpu(0), mx.cpu(1)])"),
    ("split_data_csr", "out = mx.gluon.utils.split_data(C(), 3)"),
    ("split_and_load_rsp_err", "out = mx.gluon.utils.split_and_load(R(), [mx.cpu(0), mx.cpu(1)])"),
]


SAVE_PRELUDE = """
import os, tempfile
TMP = tempfile.mkdtemp()
def resume_emb(opt, params, n_ctx=1, kvstore='device', update_on_kvstore=None, sparse_w=False):
    def build():
        if sparse_w:
            p = gluon.Parameter('w', shape=(6, 3), stype='row_sparse', grad_stype='row_sparse')
        else:
            p = gluon.Parameter('w', shape=(6, 3), grad_stype='row_sparse')
        p.initialize(ctx=ctxs(n_ctx))
        return p
    def run(p, tr, b):
        cols = sorted(set(b))
        x = nd.sparse.csr_matrix((np.arange(1, len(cols) + 1, dtype='float32'), cols, [0, len(cols)]), shape=(1, 6))
        with autograd.record():
            losses = []
            for c in ctxs(n_ctx):
                wr = p.row_sparse_data(nd.array(cols, dtype='int64', ctx=c)) if sparse_w else p.data(c)
                y = nd.sparse.dot(x.as_in_context(c), wr)
                losses.append((y * y).sum())
        autograd.backward(losses)
        tr.step(1)
    p = build(); p.set_data(nd.array(W0))
    tr = gluon.Trainer([p], opt, params, kvstore=kvstore, update_on_kvstore=update_on_kvstore)
    for b in BATCHES[:2]:
        run(p, tr, b)
    fs = os.path.join(TMP, 'tr.states')
    tr.save_states(fs)
    cur = p.row_sparse_data(nd.arange(0, 6, dtype='int64')).copy() if sparse_w else p.data().copy()
    p2 = build(); p2.set_data(cur)
    tr2 = gluon.Trainer([p2], opt, params, kvstore=kvstore, update_on_kvstore=update_on_kvstore)
    tr2.load_states(fs)
    run(p2, tr2, BATCHES[2])
    return p2.row_sparse_data(nd.arange(0, 6, dtype='int64')) if sparse_w else p2.data()
def save_load(src_stype, dst_stype):
    p = gluon.Parameter('w', shape=(6, 3), stype=src_stype); p.initialize(); p.set_data(nd.array(W0))
    if src_stype != 'default':
        tr = gluon.Trainer([p], 'sgd')
    d = gluon.ParameterDict(); d._params['w'] = p
    f = os.path.join(TMP, 'p.params')
    d.save(f)
    raw = nd.load(f)
    q = gluon.Parameter('w', shape=(6, 3), stype=dst_stype)
    d2 = gluon.ParameterDict(); d2._params['w'] = q
    d2.load(f)
    if dst_stype != 'default':
        tr2 = gluon.Trainer([q], 'sgd')
        val = q.row_sparse_data(nd.arange(0, 6, dtype='int64'))
    else:
        val = q.data()
    return [raw['w'], val]
"""

CASES += [(n, "exec(GLUON_PRELUDE)\nexec(SAVE_PRELUDE)\n" + c) for n, c in [
    ("resume_dense_w_sparse_grad_sgd", "out = resume_emb('sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.1})"),
    ("resume_dense_w_sparse_grad_adam", "out = resume_emb('adam', {'learning_rate': 0.05, 'wd': 0.1})"),
    ("resume_dense_w_sparse_grad_adam_2ctx_kv", "out = resume_emb('adam', {'learning_rate': 0.05}, n_ctx=2, update_on_kvstore=True)"),
    ("resume_sparse_w_sgd", "out = resume_emb('sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.1}, sparse_w=True)"),
    ("resume_sparse_w_adam_2ctx", "out = resume_emb('adam', {'learning_rate': 0.05}, n_ctx=2, kvstore='local', sparse_w=True)"),
    ("save_load_rsp_to_dense", "out = save_load('row_sparse', 'default')"),
    ("save_load_dense_to_rsp", "out = save_load('default', 'row_sparse')"),
    ("save_load_rsp_to_rsp", "out = save_load('row_sparse', 'row_sparse')"),
]]


CASES += [
    ("nd_square_rsp", "out = nd.square(R())"),
    ("nd_sqrt_csr", "out = nd.sqrt(C())"),
    ("nd_relu_rsp", "out = nd.relu(-R())"),
    ("nd_abs_csr", "out = nd.abs(-C())"),
    ("nd_sign_rsp", "out = nd.sign(-R())"),
    ("nd_exp_rsp", "out = nd.exp(R())"),
    ("nd_log1p_rsp", "out = nd.log1p(R())"),
    ("nd_sigmoid_rsp", "out = nd.sigmoid(R())"),
    ("fluent_sqrt_rsp", "out = R().sqrt()"),
    ("fluent_square_csr", "out = C().square()"),
    ("nd_clip_rsp", "out = nd.clip(R(), 0, 2)"),
    ("nd_clip_rsp_err", "out = nd.clip(R(), 1.5, 2)"),
    ("nd_add_n_rsp", "out = nd.add_n(R(), R2(), R())"),
    ("nd_add_n_mixed", "out = nd.add_n(R(), D())"),
    ("nd_add_n_csr", "out = nd.add_n(C(), C2())"),
    ("nd_zeros_like_rsp", "out = nd.zeros_like(R())"),
    ("nd_negative_rsp", "out = nd.negative(R())"),
]

CASES += [("param_cast_sparse", "exec(GLUON_PRELUDE)\n"
           "emb = gluon.nn.Embedding(6, 3, sparse_grad=True); emb.initialize(); emb.weight.set_data(nd.array(W0))\n"
           "emb.cast('float64')\n"
           "with autograd.record():\n    y = emb(nd.array([1, 4], dtype='float64'))\n"
           "y.backward(); out = [emb.weight.data(), emb.weight.grad()]"),
          ("param_cast_sparse_weight", "exec(GLUON_PRELUDE)\n"
           "p = gluon.Parameter('w', shape=(6, 3), stype='row_sparse'); p.initialize(); p.set_data(nd.array(W0))\n"
           "p.cast('float64'); t = gluon.Trainer([p], 'sgd'); out = p.row_sparse_data(nd.array([1, 4], dtype='int64'))")]


SPEMB = """
def spemb_run(opt, params, n_ctx=1, kvstore='device'):
    emb = mx.gluon.contrib.nn.SparseEmbedding(6, 3)
    emb.initialize(ctx=ctxs(n_ctx))
    emb.weight.set_data(nd.array(W0))
    tr = gluon.Trainer(emb.collect_params(), opt, params, kvstore=kvstore)
    res = []
    for b in BATCHES:
        with autograd.record():
            losses = []
            for c in ctxs(n_ctx):
                y = emb(nd.array(b, ctx=c))
                losses.append((y * y).sum())
        autograd.backward(losses)
        tr.step(len(b))
        res.append(emb.weight.row_sparse_data(nd.arange(0, 6, dtype='int64')).copy())
    g = emb.weight.grad(mx.cpu(0))
    return res + [g.indices, repr(emb)]
"""

CASES += [(n, "exec(GLUON_PRELUDE)\n" + SPEMB + c) for n, c in [
    ("contrib_sparse_embedding_sgd", "out = spemb_run('sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.1})"),
    ("contrib_sparse_embedding_adam", "out = spemb_run('adam', {'learning_rate': 0.05, 'wd': 0.1})"),
    ("contrib_sparse_embedding_sgd_2ctx", "out = spemb_run('sgd', {'learning_rate': 0.1, 'momentum': 0.9}, n_ctx=2, kvstore='local')"),
    ("contrib_sparse_embedding_adagrad_2ctx", "out = spemb_run('adagrad', {'learning_rate': 0.1}, n_ctx=2)"),
    ("nd_embedding_rsp_weight",
     "w = nd.sparse.row_sparse_array((W0[[1, 3]], [1, 3]), shape=(6, 3)); w.attach_grad()\n"
     "with autograd.record():\n    y = nd.Embedding(nd.array([[3, 1], [1, 1]]), w, input_dim=6, output_dim=3, sparse_grad=True)\n"
     "    z = (y * y).sum()\n"
     "z.backward(); out = [y, w.grad]"),
]]


HYB = """
def hyb_run(hybridize):
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Embedding(6, 3, sparse_grad=True))
        net.add(gluon.nn.Dense(2, flatten=False))
    net.initialize(mx.init.One())
    net[0].weight.set_data(nd.array(W0))
    if hybridize:
        net.hybridize()
    tr = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1, 'momentum': 0.9})
    res = []
    for b in BATCHES:
        with autograd.record():
            y = net(nd.array(b))
            loss = (y * y).sum()
        loss.backward()
        tr.step(len(b))
        res.append(net[0].weight.grad().indices)
    return res + [net[0].weight.data(), net[1].weight.data()]
"""

CASES += [(n, "exec(GLUON_PRELUDE)\n" + HYB + c) for n, c in [
    ("hybrid_embedding_sparse_grad", "out = hyb_run(True)"),
    ("imperative_embedding_sparse_grad_dense_layer", "out = hyb_run(False)"),
]]

CASES += [
    ("grad_rsp_var_exp",
     "w = nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [0, 3]), shape=(4, 2)); w.attach_grad()\n"
     "with autograd.record():\n    y = nd.exp(w)\n"
     "y.backward(); out = w.grad"),
    ("grad_rsp_var_mixed",
     "c = nd.sparse.csr_matrix(([1, 2], [0, 3], [0, 1, 2]), shape=(2, 4))\n"
     "w = nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [0, 3]), shape=(4, 2)); w.attach_grad()\n"
     "with autograd.record():\n    y = (nd.sparse.dot(c, w) * 3).sum() + (w.tostype('default') * nd.array([[1, 1], [0, 0], [2, 2], [0, 0]])).sum()\n"
     "y.backward(); out = w.grad"),
]

CASES += [
    ("clip_global_norm_sparse",
     "arrs = [R(), nd.array([[3, 4]]), C()]\n"
     "n = mx.gluon.utils.clip_global_norm(arrs, 2.0); out = arrs + [float(n)]"),
]

CASES += [
    ("nd_array_of_rsp", "out = nd.array(R())"),
    ("nd_array_of_csr_f64", "out = nd.array(C(), dtype='float64')"),
]

CASES += [
    ("grad_dot_csr_rsp_var_unstored_rows",
     "c = nd.sparse.csr_matrix(([1, 2, 3, 4], [0, 3, 2, 3], [0, 2, 4]), shape=(2, 4))\n"
     "w = nd.sparse.row_sparse_array(([[1, 2], [3, 4], [5, 6]], [0, 1, 2]), shape=(4, 2)); w.attach_grad()\n"
     "with autograd.record():\n    y = nd.sparse.dot(c, w)\n"
     "y.backward(nd.array([[1, 2], [3, 4]])); out = [w.grad, y]"),
]


UPD = """
W = lambda: nd.array(W0[:4, :2] if False else [[0.5, -0.2], [0.1, 0.3], [-0.4, 0.8], [0.2, 0.2]])
GR = lambda: nd.sparse.row_sparse_array(([[0.3, -0.6], [1.5, 0.2]], [1, 3]), shape=(4, 2))
GD = lambda: GR().tostype('default')
"""

CASES += [(n, UPD + c) for n, c in [
    ("op_sgd_update_rsp", "w = W(); nd.sparse.sgd_update(w, GR(), lr=0.1, wd=0.1, rescale_grad=0.5, out=w); out = w"),
    ("op_sgd_update_rsp_nolazy", "w = W(); nd.sparse.sgd_update(w, GR(), lr=0.1, wd=0.1, lazy_update=False, out=w); out = w"),
    ("op_sgd_update_dense", "w = W(); nd.sparse.sgd_update(w, GD(), lr=0.1, wd=0.1, clip_gradient=0.5, out=w); out = w"),
    ("op_sgd_mom_update_rsp",
     "w = W(); m = nd.ones((4, 2)) * 0.1\nfor _ in range(2):\n    nd.sparse.sgd_mom_update(w, GR(), m, lr=0.1, momentum=0.9, wd=0.1, out=w)\nout = [w, m]"),
    ("op_sgd_mom_update_dense",
     "w = W(); m = nd.ones((4, 2)) * 0.1\nfor _ in range(2):\n    nd.sparse.sgd_mom_update(w, GD(), m, lr=0.1, momentum=0.9, wd=0.1, out=w)\nout = [w, m]"),
    ("op_adam_update_rsp",
     "w = W(); m = nd.zeros((4, 2)); v = nd.zeros((4, 2))\nfor _ in range(2):\n    nd.sparse.adam_update(w, GR(), m, v, lr=0.01, wd=0.1, out=w)\nout = [w, m, v]"),
    ("op_adam_update_dense",
     "w = W(); m = nd.zeros((4, 2)); v = nd.zeros((4, 2))\nfor _ in range(2):\n    nd.sparse.adam_update(w, GD(), m, v, lr=0.01, wd=0.1, clip_gradient=1.0, out=w)\nout = [w, m, v]"),
    ("op_adagrad_update_rsp",
     "w = W(); h = nd.zeros((4, 2))\nfor _ in range(2):\n    nd.sparse.adagrad_update(w, GR(), h, lr=0.1, out=w)\nout = [w, h]"),
    ("op_ftrl_update_dense_states",
     "w = W(); z = nd.zeros((4, 2)); n = nd.zeros((4, 2))\nnd.sparse.ftrl_update(w, GR(), z, n, lr=0.1, wd=0.1, out=w)\nout = [w, z, n]"),
    ("op_ftrl_update_rsp_states",
     "w = W().tostype('row_sparse'); z = nd.sparse.zeros('row_sparse', (4, 2)); n = nd.sparse.zeros('row_sparse', (4, 2))\n"
     "nd.sparse.ftrl_update(w, GR(), z, n, lr=0.1, wd=0.1, out=w)\nout = [w, z, n]"),
    ("op_sparse_namespace_fallback", "out = [nd.sparse.exp(R()), nd.sparse.sum(R())]"),
]]
