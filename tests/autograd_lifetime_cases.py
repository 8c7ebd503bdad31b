"""Autograd lifetime cases shared by tools/gen_autograd_lifetime_fixtures.py (run on MXNet
1.9.1) and tests/test_autograd_lifetimes.py (run on neogluon).

Each case takes the library module (``mxnet`` or ``neogluon``) and returns a JSON-able result
(gradients, values), or raises. What MXNet 1.9.1 does in each, in short: a backward (or
``autograd.grad``) without ``retain_graph`` frees the graph it differentiated, and every array
that graph computed becomes a constant: a second backward from it fails, and later recorded
computation that uses it sends no gradient into the old graph. Arrays the backward did not
reach keep their history. Each case's comment says what MXNet gives.
"""
from __future__ import annotations

import numpy as np


def _l(a):
    return a.asnumpy().tolist()


def _var(mx, values, req="write"):
    x = mx.nd.array(values)
    x.attach_grad(req)
    return x


# ------------------------------------------------------------------ backward twice
def backward_twice(mx):
    # MXNet: error ("Cannot differentiate node because it is not in a computational graph")
    x = _var(mx, [1., 2.])
    with mx.autograd.record():
        y = (x * x).sum()
    y.backward()
    y.backward()


def backward_twice_nothing_saved(mx):
    # MXNet: error too, although x + 1 keeps nothing for backward (torch alone would allow it)
    x = _var(mx, [1., 2.])
    with mx.autograd.record():
        y = (x + 1).sum()
    y.backward()
    y.backward()


def backward_retain_then_backward(mx):
    # MXNet: fine, the gradient written twice
    x = _var(mx, [1., 2.])
    with mx.autograd.record():
        y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    return _l(x.grad)


# ------------------------------------------------------------------ results used again
def output_in_new_record(mx):
    # MXNet: h is a constant: w gets h, x keeps its first gradient
    x, w = _var(mx, [1., 2.]), _var(mx, [3., 4.])
    with mx.autograd.record():
        h = x * x
        y = h.sum()
    y.backward()
    with mx.autograd.record():
        z = (h * w).sum()
    z.backward()
    return [_l(x.grad), _l(w.grad), float(z.asscalar())]


def output_in_new_record_no_variable(mx):
    # MXNet: error: z is computed from constants only, nothing was recorded
    x = _var(mx, [1., 2.])
    with mx.autograd.record():
        h = x * x
        y = (h * 3).sum()
    y.backward()
    with mx.autograd.record():
        z = (h * h).sum()
    z.backward()


def output_in_new_record_retained(mx):
    # MXNet: with retain_graph=True the gradient flows into the old graph (x gets it)
    x, w = _var(mx, [1., 2.]), _var(mx, [3., 4.])
    with mx.autograd.record():
        h = x * x
        y = h.sum()
    y.backward(retain_graph=True)
    with mx.autograd.record():
        z = (h * w).sum()
    z.backward()
    return [_l(x.grad), _l(w.grad)]


def head_in_new_record(mx):
    # MXNet: error (the head is a constant, z = y * 2 records nothing)
    x = _var(mx, [1., 2.])
    with mx.autograd.record():
        y = (x * x).sum()
    y.backward()
    with mx.autograd.record():
        z = y * 2
    z.backward()


def head_as_addend(mx):
    # MXNet: y1 adds as a constant: x.grad is 3 (not 5)
    x = _var(mx, [1., 2.])
    with mx.autograd.record():
        y1 = (x * 2).sum()
    y1.backward()
    with mx.autograd.record():
        y2 = (x * 3).sum() + y1
    y2.backward()
    return [_l(x.grad), float(y2.asscalar())]


def add_req_with_constant(mx):
    # MXNet: grad_req='add' accumulates 2x, then h (a constant) = [1, 4]
    x = _var(mx, [1., 2.], "add")
    with mx.autograd.record():
        h = x * x
        y = h.sum()
    y.backward()
    with mx.autograd.record():
        z = (h * x).sum()
    z.backward()
    return _l(x.grad)


def backward_inside_record(mx):
    # MXNet: h is a constant right after the backward, even inside the same record scope
    x = _var(mx, [1., 2.])
    with mx.autograd.record():
        h = x * x
        y = h.sum()
        y.backward()
        z = (h * x).sum()
    z.backward()
    return _l(x.grad)


def multi_output_sibling(mx):
    # MXNet: split is one node; the backward through p frees it, so q is a constant too
    x = _var(mx, [1., 2., 3., 4.])
    with mx.autograd.record():
        p, q = mx.nd.split(x * x, num_outputs=2, axis=0)
        a = p.sum()
    a.backward()
    w = _var(mx, [1., 1.])
    with mx.autograd.record():
        z = (q * w).sum()
    z.backward()
    return [_l(x.grad), _l(w.grad)]


def multi_output_sibling_of_variable(mx):
    x = _var(mx, [1., 2., 3., 4.])
    with mx.autograd.record():
        p, q = mx.nd.split(x, num_outputs=2, axis=0)
        a = (p * p).sum()
    a.backward()
    w = _var(mx, [1., 1.])
    with mx.autograd.record():
        z = (q * w).sum()
    z.backward()
    return [_l(x.grad), _l(w.grad)]


# ------------------------------------------------------------------ not reached
def unreached_sibling_in_new_record(mx):
    # MXNet: b (same record scope, not reached by a.backward) keeps its history
    x = _var(mx, [1., 2.])
    with mx.autograd.record():
        a = (x * 2).sum()
        b = x * x
    a.backward()
    g1 = _l(x.grad)
    with mx.autograd.record():
        c = (b * 3).sum()
    c.backward()
    return [g1, _l(x.grad)]


def unreached_sibling_head(mx):
    # MXNet: a second head of the same scope, not reached, can be differentiated
    x = _var(mx, [1., 2.])
    with mx.autograd.record():
        a = (x * 2).sum()
        b = (x * x).sum()
    a.backward()
    b.backward()
    return _l(x.grad)


def sibling_sharing_consumed(mx):
    # MXNet: error ("There are no inputs in computation graph that require gradients"): b's
    # only path to x went through h, which a.backward freed
    x = _var(mx, [1., 2.])
    with mx.autograd.record():
        h = x * x
        a = (h * 2).sum()
        b = (h * 3).sum()
    a.backward()
    b.backward()


def sibling_sharing_consumed_new_record(mx):
    # MXNet: error, as above
    x = _var(mx, [1., 2.])
    with mx.autograd.record():
        h = x * x
        a = (h * 2).sum()
        b = h * 3
    a.backward()
    with mx.autograd.record():
        c = (b * 1).sum()
    c.backward()


def earlier_scope_reused(mx):
    # MXNet: error: h (recorded in an earlier scope) was freed by a.backward
    x = _var(mx, [1., 2.])
    with mx.autograd.record():
        h = x * x
    with mx.autograd.record():
        a = (h * 2).sum()
    a.backward()
    with mx.autograd.record():
        b = (h * 3).sum()
    b.backward()


def view_of_consumed(mx):
    # MXNet 1.9.1: internal error ("The any container is empty requested=...AGInfo"), a bug.
    # neogluon: v was computed from h only, which the backward freed: v is a constant, so w
    # gets its gradient and x keeps the first one.
    x = _var(mx, [[1., 2.], [3., 4.]])
    w = _var(mx, [3., 4.])
    with mx.autograd.record():
        h = x * x
        v = h[0]
        y = h.sum()
    y.backward()
    with mx.autograd.record():
        z = (v * w).sum()
    z.backward()
    return [_l(x.grad), _l(w.grad)]


def partly_consumed(mx):
    # MXNet 1.9.1: internal error (as view_of_consumed). neogluon: error too (b still has a
    # history of its own through u, and the part through h was freed).
    x, u = _var(mx, [1., 2.]), _var(mx, [3., 4.])
    with mx.autograd.record():
        h = x * x
        a = h.sum()
        b = (h * 2 + u * u).sum()
    a.backward()
    b.backward()
    return [_l(x.grad), _l(u.grad)]


# ------------------------------------------------------------------ detach, pause, attach
def detach_before_backward(mx):
    # MXNet: h keeps its history, h.detach() is a constant
    x, w = _var(mx, [1., 2.]), _var(mx, [3., 4.])
    with mx.autograd.record():
        h = x * x
    d = h.detach()
    with mx.autograd.record():
        z = (h * w).sum() + (d * w).sum()
    z.backward()
    return [_l(x.grad), _l(w.grad)]


def has_detach_inplace(mx):
    # MXNet 1.9.1's NDArray has no detach_ (only detach, which returns a new array)
    return hasattr(mx.nd.ones(1), "detach_")


def pause_inside_record(mx):
    # MXNet: what pause() computes is a constant
    x = _var(mx, [1., 2.])
    with mx.autograd.record():
        h = x * x
        with mx.autograd.pause():
            p = h * 2
        y = (h + p).sum()
    y.backward()
    return _l(x.grad)


def consumed_in_pause(mx):
    # MXNet: a freed array reads normally under pause()
    x = _var(mx, [1., 2.])
    with mx.autograd.record():
        h = x * x
        y = h.sum()
    y.backward()
    with mx.autograd.pause():
        p = h * 2
    return _l(p)


def record_inside_pause(mx):
    x = _var(mx, [1., 2.])
    with mx.autograd.record():
        with mx.autograd.pause():
            with mx.autograd.record():
                y = (x * x).sum()
    y.backward()
    return _l(x.grad)


def attach_grad_on_recorded(mx):
    # MXNet: attach_grad makes h a new variable: the gradient stops there, x gets none
    x = _var(mx, [1., 2.])
    with mx.autograd.record():
        h = x * x
    h.attach_grad()
    with mx.autograd.record():
        y = (h * 3).sum()
    y.backward()
    return [_l(x.grad), _l(h.grad)]


def attach_grad_after_record(mx):
    # MXNet: the graph recorded before attach_grad still reaches x; h.grad stays zero
    x = _var(mx, [1., 2.])
    with mx.autograd.record():
        h = x * x
        y = (h * 3).sum()
    h.attach_grad()
    y.backward()
    return [_l(x.grad), _l(h.grad)]


def attach_grad_on_consumed(mx):
    x = _var(mx, [1., 2.])
    with mx.autograd.record():
        h = x * x
        y = (h * 3).sum()
    y.backward()
    h.attach_grad()
    with mx.autograd.record():
        z = (h * h).sum()
    z.backward()
    return [_l(x.grad), _l(h.grad)]


def attach_grad_inside_record(mx):
    x = _var(mx, [1., 2.])
    with mx.autograd.record():
        h = x * x
        h.attach_grad()
        y = (h * 3).sum()
    y.backward()
    return [_l(x.grad), _l(h.grad)]


# ------------------------------------------------------------------ autograd.grad
def grad_twice(mx):
    # MXNet: error (grad without retain_graph frees the graph too)
    x = _var(mx, [1., 2.])
    with mx.autograd.record():
        y = (x * x * x).sum()
    mx.autograd.grad(y, [x])
    mx.autograd.grad(y, [x])


def grad_retained_then_grad(mx):
    x = _var(mx, [1., 2.])
    with mx.autograd.record():
        y = (x * x * x).sum()
    g = mx.autograd.grad(y, [x], retain_graph=True)
    g2 = mx.autograd.grad(y, [x])
    return [_l(g[0]), _l(g2[0])]


def grad_then_backward(mx):
    # MXNet: error
    x = _var(mx, [1., 2.])
    with mx.autograd.record():
        y = (x * x * x).sum()
    mx.autograd.grad(y, [x])
    y.backward()


def grad_output_in_new_record(mx):
    # MXNet: h is a constant after grad() without retain_graph; grad() writes no buffer
    x, w = _var(mx, [1., 2.]), _var(mx, [3., 4.])
    with mx.autograd.record():
        h = x * x
        y = h.sum()
    g = mx.autograd.grad(y, [x])
    with mx.autograd.record():
        z = (h * w).sum()
    z.backward()
    return [_l(g[0]), _l(x.grad), _l(w.grad)]


def grad_create_graph(mx):
    # MXNet: create_graph keeps the graph (retain_graph defaults to it): z.backward
    # differentiates the gradient's graph, then y's own graph is still there
    x = _var(mx, [1., 2.])
    with mx.autograd.record():
        y = mx.nd.sin(x)
        g = mx.autograd.grad(y, [x], create_graph=True)[0]
        z = mx.nd.sin(g)
    z.backward()
    r = _l(x.grad)
    y.backward()
    return [r, _l(x.grad)]


def grad_create_graph_not_retained(mx):
    # MXNet: the gradient's graph works; y's graph is gone (error at y.backward)
    x = _var(mx, [1., 2.])
    with mx.autograd.record():
        y = mx.nd.sin(x)
        g = mx.autograd.grad(y, [x], create_graph=True, retain_graph=False)[0]
        z = mx.nd.sin(g)
    z.backward()
    y.backward()


def grad_create_graph_not_retained_first(mx):
    # the part of the case above before its error
    x = _var(mx, [1., 2.])
    with mx.autograd.record():
        y = mx.nd.sin(x)
        g = mx.autograd.grad(y, [x], create_graph=True, retain_graph=False)[0]
        z = mx.nd.sin(g)
    z.backward()
    return _l(x.grad)


def grad_created_in_new_record(mx):
    # MXNet: the gradient (recorded, create_graph) used in a later scope still has history
    x = _var(mx, [1., 2.])
    with mx.autograd.record():
        y = mx.nd.sin(x)
        g = mx.autograd.grad(y, [x], create_graph=True)[0]
    with mx.autograd.record():
        z = mx.nd.sin(g) * x
    z.backward()
    return _l(x.grad)


CASES = {f.__name__: f for f in [
    backward_twice, backward_twice_nothing_saved, backward_retain_then_backward,
    output_in_new_record, output_in_new_record_no_variable, output_in_new_record_retained,
    head_in_new_record, head_as_addend, add_req_with_constant, backward_inside_record,
    multi_output_sibling, multi_output_sibling_of_variable,
    unreached_sibling_in_new_record, unreached_sibling_head, sibling_sharing_consumed,
    sibling_sharing_consumed_new_record, earlier_scope_reused, view_of_consumed,
    partly_consumed,
    detach_before_backward, has_detach_inplace, pause_inside_record, consumed_in_pause,
    record_inside_pause, attach_grad_on_recorded, attach_grad_after_record,
    attach_grad_on_consumed, attach_grad_inside_record,
    grad_twice, grad_retained_then_grad, grad_then_backward, grad_output_in_new_record,
    grad_create_graph, grad_create_graph_not_retained, grad_create_graph_not_retained_first,
    grad_created_in_new_record]}

# Cases where MXNet 1.9.1 fails with an internal error (a bug, not a rule); neogluon's
# behaviour is asserted on its own in the tests.
MXNET_BUGS = {"view_of_consumed", "partly_consumed"}


# ------------------------------------------------------------------ truncated BPTT
V, H, B, T, STEPS = 8, 6, 2, 5, 4


def bptt(mx, cell, hybrid, detach):
    """A small RNN language model trained by truncated BPTT, the state carried between
    batches (``hybrid``: False, True or 'static' for static_alloc/static_shape):
    ``detach='dropped'`` is the tutorial idiom (``for s in state: s.detach()``, a
    no-op), ``'explicit'`` cuts it (``state = [s.detach() for s in state]``), ``'none'`` does
    neither. Returns the losses and each parameter's sum after training."""
    gluon, nd, autograd = mx.gluon, mx.nd, mx.autograd

    class RNNModel(gluon.HybridBlock):
        def __init__(self, **kw):
            super().__init__(**kw)
            with self.name_scope():
                layer = {"lstm": gluon.rnn.LSTM, "gru": gluon.rnn.GRU}.get(cell, gluon.rnn.RNN)
                self.rnn = layer(H, input_size=V)
                self.dense = gluon.nn.Dense(V, in_units=H)

        def hybrid_forward(self, F, inputs, state):
            X = F.one_hot(F.transpose(inputs), V)
            Y, state = self.rnn(X, state)
            return self.dense(Y.reshape((-1, H))), state

    net = RNNModel()
    net.initialize()
    rng = np.random.RandomState(0)
    for p in net.collect_params().values():
        p.set_data(nd.array(rng.uniform(-0.3, 0.3, p.shape)))
    if hybrid == "static":
        net.hybridize(static_alloc=True, static_shape=True)
    elif hybrid:
        net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 1.0})
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    corpus = rng.randint(0, V, size=(B, STEPS * T + 1))
    state = net.rnn.begin_state(batch_size=B)
    losses = []
    for i in range(STEPS):
        X = nd.array(corpus[:, i * T:(i + 1) * T])
        Y = nd.array(corpus[:, i * T + 1:(i + 1) * T + 1])
        if detach == "explicit":
            state = [s.detach() for s in state]
        elif detach == "dropped":
            for s in state:
                s.detach()
        with autograd.record():
            y_hat, state = net(X, state)
            l = loss(y_hat, nd.transpose(Y).reshape((-1,))).mean()
        l.backward()
        trainer.step(1)
        losses.append(float(l.asscalar()))
    return {"losses": losses,
            "param_sums": [float(p.data().sum().asscalar())
                           for p in net.collect_params().values()]}


BPTT_CASES = [(cell, hybrid, detach) for cell in ("lstm", "gru", "rnn")
              for hybrid in (False, True) for detach in ("dropped", "explicit")]
