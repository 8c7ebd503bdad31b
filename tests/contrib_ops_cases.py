"""Non-detection ``nd.contrib`` operators that GluonCV/GluonNLP models call, run the same way on
MXNet 1.9.1 (tools/gen_contrib_ops_fixtures.py writes tests/fixtures/contrib_ops/) and on
neogluon (tests/test_contrib_ops.py). ``CASES`` lists (name, op, inputs, kwargs); every case
records the output and the gradients of its float inputs for a fixed head gradient."""
import numpy as np


def _rand(seed, shape):
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype("float32")


def _cases():
    cases = []
    x = _rand(1, (2, 3, 5, 6))
    y = _rand(2, (1, 2, 4, 7))
    like = np.zeros((1, 1, 3, 8), "float32")
    for ac in (True, False):
        for data, tag in ((x, "x"), (y, "y")):
            for h, w in ((3, 9), (10, 12), (1, 1), (data.shape[2], data.shape[3]), (2, 13)):
                cases.append((f"bilinear_size_{tag}_{h}x{w}_ac{int(ac)}", "BilinearResize2D",
                              [data], {"height": h, "width": w, "align_corners": ac}))
            for sh, sw in ((2, 3), (0.5, 0.5), (0.3, 0.7), (1.5, 2.5)):
                for mode in ("size", "odd_scale"):
                    cases.append((f"bilinear_{mode}_{tag}_{sh}_{sw}_ac{int(ac)}",
                                  "BilinearResize2D", [data],
                                  {"scale_height": sh, "scale_width": sw, "mode": mode,
                                   "align_corners": ac}))
            for mode in ("to_even_down", "to_even_up", "to_odd_down", "to_odd_up"):
                cases.append((f"bilinear_{mode}_{tag}_ac{int(ac)}", "BilinearResize2D", [data],
                              {"mode": mode, "align_corners": ac}))
            cases.append((f"bilinear_like_{tag}_ac{int(ac)}", "BilinearResize2D",
                          [data, like], {"mode": "like", "align_corners": ac}))
    p = _rand(3, (2, 3, 7, 9))
    for size in ((), 1, 3, (2, 4), (5, 5), (7, 9), (10, 12), (1, 9)):
        cases.append((f"adaptive_avg_{size}", "AdaptiveAvgPooling2D", [p],
                      {"output_size": size}))
    heads, hd, seq, batch = 2, 5, 4, 3
    qkv = _rand(4, (seq, batch, heads * 3 * hd))
    att = _rand(5, (batch * heads, seq, seq))
    cases.append(("selfatt_qk", "interleaved_matmul_selfatt_qk", [qkv], {"heads": heads}))
    cases.append(("selfatt_valatt", "interleaved_matmul_selfatt_valatt", [qkv, att],
                  {"heads": heads}))
    qlen = 3
    q = _rand(6, (qlen, batch, heads * hd))
    kv = _rand(7, (seq, batch, heads * 2 * hd))
    att2 = _rand(8, (batch * heads, qlen, seq))
    cases.append(("encdec_qk", "interleaved_matmul_encdec_qk", [q, kv], {"heads": heads}))
    cases.append(("encdec_valatt", "interleaved_matmul_encdec_valatt", [kv, att2],
                  {"heads": heads}))
    cases.append(("selfatt_qk_1head", "interleaved_matmul_selfatt_qk",
                  [_rand(9, (2, 2, 3 * 4))], {"heads": 1}))
    cases.append(("div_sqrt_dim", "div_sqrt_dim", [_rand(10, (2, 3, 8))], {}))
    cases.append(("arange_like_axis", "arange_like", [_rand(11, (2, 5))],
                  {"axis": 1, "start": 2.0, "step": 0.5}))
    cases.append(("arange_like_repeat", "arange_like", [_rand(11, (2, 6))],
                  {"repeat": 2, "start": 1.0}))
    d = _rand(12, (4, 3, 2, 2))
    gamma = np.array([1.0, 0.5, 2.0], "float32")
    beta = np.array([0.0, 0.1, -0.2], "float32")
    mean = np.array([0.1, 0.0, -0.1], "float32")
    var = np.array([1.0, 2.0, 0.5], "float32")
    for fg in (True, False):
        cases.append((f"syncbn_fg{int(fg)}", "SyncBatchNorm", [d, gamma, beta, mean, var],
                      {"key": "bn0", "fix_gamma": fg, "eps": 1e-3, "momentum": 0.8}))
    # One value per channel (batch 1 after global pooling): MXNet normalises it to beta.
    cases.append(("syncbn_one_value", "SyncBatchNorm",
                  [_rand(15, (1, 3, 1, 1)), gamma, beta, mean, var],
                  {"key": "bn2", "fix_gamma": False}))
    cases.append(("syncbn_global", "SyncBatchNorm", [d, gamma, beta, mean, var],
                  {"key": "bn1", "use_global_stats": True, "fix_gamma": False}))
    sm = _rand(13, (4, 3, 5))
    lens = np.array([[5, 2, 3], [1, 5, 4], [2, 2, 2], [3, 4, 5]], "int32")
    cases.append(("nd.softmax_length_3d", "nd.softmax", [sm, lens],
                  {"use_length": True, "axis": -1}))
    cases.append(("nd.softmax_length_2d", "nd.softmax", [sm[:, 0, :], lens[:, 0]],
                  {"use_length": True}))
    for tag, ls, rs, kw in (
            ("neg", (4, 6), (2, 2, 5), {"lhs_begin": -2, "lhs_end": -1, "rhs_begin": 0,
                                        "rhs_end": 2}),
            ("head", (4, 6), (2, 2, 7), {"lhs_begin": 0, "lhs_end": 1, "rhs_end": 2}),
            ("rhs_neg", (6, 4), (5, 2, 3), {"lhs_begin": 0, "lhs_end": 1, "rhs_begin": -2}),
            ("all", (4, 6), (3, 8), {})):
        cases.append((f"nd.reshape_like_{tag}", "nd.reshape_like",
                      [_rand(14, ls), np.zeros(rs, "float32")], kw))
    return cases


CASES = _cases()
# Inputs that are not differentiated (like-shape, BatchNorm moving statistics).
NO_GRAD = {("BilinearResize2D", 1), ("SyncBatchNorm", 3), ("SyncBatchNorm", 4),
           ("nd.softmax", 1), ("nd.reshape_like", 1)}


def _op(mx, op):
    """``nd.contrib.<op>``, or ``nd.<name>`` for ``op = "nd.<name>"``."""
    if op.startswith("nd."):
        return getattr(mx.nd, op[3:])
    return getattr(mx.nd.contrib, op)


def run_case(mx, case, train=True):
    """(output, [gradients or None], [aux after]) as numpy arrays."""
    name, op, inputs, kwargs = case
    nd = mx.nd
    arrs = [nd.array(a, dtype=a.dtype) for a in inputs]
    if kwargs.get("mode") == "like":
        # MXNet 1.9.1's backward of mode='like' frees memory twice and kills the process:
        # forward only.
        return _op(mx, op)(*arrs, **kwargs).asnumpy(), [None] * len(arrs), []
    for i, a in enumerate(arrs):
        if (op, i) not in NO_GRAD:
            a.attach_grad()
    with mx.autograd.record(train_mode=train):
        out = _op(mx, op)(*arrs, **kwargs)
    head = nd.array(np.random.RandomState(99).uniform(-1, 1, out.shape).astype("float32"))
    out.backward(head)
    grads = [a.grad.asnumpy() if (op, i) not in NO_GRAD else None
             for i, a in enumerate(arrs)]
    aux = [a.asnumpy() for i, a in enumerate(arrs) if (op, i) in NO_GRAD]
    return out.asnumpy(), grads, aux


def run_control_flow(mx):
    """nd.contrib.foreach / while_loop / cond: nesting of outputs, values, gradients."""
    nd = mx.nd
    res = {}
    x = nd.array(np.arange(12, dtype="float32").reshape(4, 3))

    def body(d, s):
        s2 = s[0] + d
        return [s2 * 2, [s2.sum()]], [s2]
    outs, st = nd.contrib.foreach(body, x, [nd.zeros(3)])
    res["foreach_nested"] = [outs[0].asnumpy().tolist(), outs[1][0].asnumpy().tolist(),
                             st[0].asnumpy().tolist()]
    o2, st2 = nd.contrib.foreach(lambda d, s: (d[0] * s, s + 1), [x, x], nd.ones(3))
    res["foreach_list_data"] = [o2.asnumpy().tolist(), st2.asnumpy().tolist()]
    outs, lv = nd.contrib.while_loop(lambda i, s: i < 3,
                                     lambda i, s: ([i * 2, s], [i + 1, s + i]),
                                     [nd.array([0]), nd.array([1])], max_iterations=5)
    res["while_loop"] = [[list(o.shape) for o in outs], outs[0][:3].asnumpy().tolist(),
                         outs[1][:3].asnumpy().tolist(), [v.asnumpy().tolist() for v in lv]]
    res["cond"] = [nd.contrib.cond(nd.array([0]), lambda: nd.array([1]),
                                   lambda: nd.array([2])).asnumpy().tolist(),
                   nd.contrib.cond(nd.array([3]), lambda: nd.array([1]),
                                   lambda: nd.array([2])).asnumpy().tolist()]
    x.attach_grad()
    with mx.autograd.record():
        o, s = nd.contrib.foreach(lambda d, s: (d * s, s + d), x, nd.ones(3))
        loss = o.sum() + s.sum()
    loss.backward()
    res["foreach_grad"] = x.grad.asnumpy().tolist()
    return res
