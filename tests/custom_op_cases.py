"""Custom operators (``mx.operator``) run the same way on MXNet 1.9.1 (fixtures, through
tools/gen_custom_op_fixtures.py) and on neogluon (tests/test_custom_op.py).

``run_cases(mx)`` registers the operators on the given ``mx`` and returns a JSON-able dict:
outputs, gradients, and what the property classes and operators were called with."""
import numpy as np

LOG = []


def _register(mx):
    class Sqr(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            LOG.append(["sqr.forward", bool(is_train), list(req)])
            self.assign(out_data[0], req[0], in_data[0] * in_data[0] * self.scale)

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            LOG.append(["sqr.backward", list(req)])
            self.assign(in_grad[0], req[0], 2 * self.scale * in_data[0] * out_grad[0])

    @mx.operator.register("t_sqr")
    class SqrProp(mx.operator.CustomOpProp):
        def __init__(self, scale="1.0", flag="x"):
            super().__init__(need_top_grad=True)
            LOG.append(["sqr.prop", repr(scale), repr(flag)])
            self.scale = float(scale)

        def create_operator(self, ctx, shapes, dtypes):
            LOG.append(["sqr.create", str(ctx), [list(s) for s in shapes],
                        [int(d) for d in dtypes]])
            op = Sqr()
            op.scale = self.scale
            return op

    class Two(mx.operator.CustomOp):
        # out0 = a * b, out1 = sum(a, axis=1); in_grads from both.
        def forward(self, is_train, req, in_data, out_data, aux):
            a, b = in_data
            self.assign(out_data[0], req[0], a * b)
            self.assign(out_data[1], req[1], a.sum(axis=1))

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            LOG.append(["two.backward", list(req)])
            a, b = in_data
            g0, g1 = out_grad
            self.assign(in_grad[0], req[0], g0 * b + g1.reshape((-1, 1)))
            self.assign(in_grad[1], req[1], g0 * a)

    @mx.operator.register("t_two")
    class TwoProp(mx.operator.CustomOpProp):
        def list_arguments(self):
            return ["a", "b"]

        def list_outputs(self):
            return ["prod", "rowsum"]

        def infer_shape(self, in_shape):
            return in_shape, [in_shape[0], [in_shape[0][0]]], []

        def create_operator(self, ctx, shapes, dtypes):
            return Two()

    class Loss(mx.operator.CustomOp):
        # softmax forward; backward (p - onehot(label)) / n, ignoring out_grad.
        def forward(self, is_train, req, in_data, out_data, aux):
            x = in_data[0]
            e = mx.nd.exp(x - x.max(axis=1, keepdims=True))
            self.assign(out_data[0], req[0], e / e.sum(axis=1, keepdims=True))

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            p = out_data[0].asnumpy()
            lab = in_data[1].asnumpy().astype(int)
            g = p.copy()
            g[np.arange(len(lab)), lab] -= 1
            self.assign(in_grad[0], req[0], mx.nd.array(g / len(lab)))
            self.assign(in_grad[1], req[1], mx.nd.zeros_like(in_data[1]))

    @mx.operator.register("t_loss")
    class LossProp(mx.operator.CustomOpProp):
        def __init__(self):
            super().__init__(need_top_grad=False)

        def list_arguments(self):
            return ["data", "label"]

        def infer_shape(self, in_shape):
            return [in_shape[0], [in_shape[0][0]]], [in_shape[0]], []

        def create_operator(self, ctx, shapes, dtypes):
            return Loss()

    class Count(mx.operator.CustomOp):
        # out = data + counter; the aux counter goes up by one per forward.
        def forward(self, is_train, req, in_data, out_data, aux):
            self.assign(out_data[0], req[0], in_data[0] + aux[0])
            aux[0][:] = aux[0] + 1

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            self.assign(in_grad[0], req[0], out_grad[0])

    @mx.operator.register("t_count")
    class CountProp(mx.operator.CustomOpProp):
        def list_auxiliary_states(self):
            return ["counter"]

        def infer_shape(self, in_shape):
            return in_shape, [in_shape[0]], [in_shape[0]]

        def create_operator(self, ctx, shapes, dtypes):
            return Count()

    class ArgMax(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            self.assign(out_data[0], req[0], mx.nd.argmax(in_data[0], axis=1))

    @mx.operator.register("t_argmax")
    class ArgMaxProp(mx.operator.CustomOpProp):
        def infer_shape(self, in_shape):
            return in_shape, [[in_shape[0][0]]], []

        def infer_type(self, in_type):
            return in_type, [np.int32], []

        def create_operator(self, ctx, shapes, dtypes):
            return ArgMax()


def _v(a):
    return {"shape": list(a.shape), "dtype": np.dtype(a.dtype).name,
            "value": a.asnumpy().astype(np.float64).ravel().tolist()}


def run_cases(mx):
    _register(mx)
    nd, autograd = mx.nd, mx.autograd
    rng = np.random.RandomState(0)
    res = {}

    x = nd.array(rng.uniform(-1, 1, (2, 3)).astype("float32"))
    del LOG[:]
    y = nd.Custom(x, op_type="t_sqr", scale=2, flag=True)
    res["sqr_plain"] = {"x": _v(x), "y": _v(y), "log": list(LOG)}

    del LOG[:]
    x.attach_grad()
    with autograd.record():
        y = nd.Custom(x, op_type="t_sqr", scale=1.5)
    y.backward(nd.ones_like(y) * 3)
    res["sqr_grad"] = {"y": _v(y), "grad": _v(x.grad), "log": list(LOG)}

    del LOG[:]
    x.attach_grad(grad_req="add")
    for _ in range(2):
        with autograd.record():
            y = nd.Custom(x, op_type="t_sqr")
        y.backward()
    res["sqr_grad_add"] = {"grad": _v(x.grad), "log": list(LOG)}

    del LOG[:]
    a = nd.array(rng.uniform(-1, 1, (3, 4)).astype("float32"))
    b = nd.array(rng.uniform(-1, 1, (3, 4)).astype("float32"))
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        p, s = nd.Custom(a, b, op_type="t_two")
        loss = (p * 2).sum() + (s * s).sum()
    loss.backward()
    res["two"] = {"a": _v(a), "b": _v(b), "prod": _v(p), "rowsum": _v(s),
                  "ga": _v(a.grad), "gb": _v(b.grad), "log": list(LOG)}

    del LOG[:]
    a.attach_grad()
    with autograd.record():
        p, s = nd.Custom(a, b, op_type="t_two")
    p.backward()
    res["two_one_head"] = {"ga": _v(a.grad), "log": list(LOG)}

    data = nd.array(rng.uniform(-2, 2, (4, 5)).astype("float32"))
    label = nd.array([0, 3, 1, 4])
    data.attach_grad()
    with autograd.record():
        prob = nd.Custom(data, label, op_type="t_loss")
    prob.backward()
    res["loss"] = {"data": _v(data), "prob": _v(prob), "grad": _v(data.grad)}

    cx = nd.array([[1.0, 2.0], [3.0, 4.0]])
    counter = nd.zeros((2, 2))
    outs = [_v(nd.Custom(cx, counter, op_type="t_count")) for _ in range(3)]
    res["aux"] = {"outs": outs, "counter": _v(counter)}

    am = nd.Custom(data, op_type="t_argmax")
    res["argmax"] = {"out": _v(am)}

    class Net(mx.gluon.HybridBlock):
        def __init__(self, **kw):
            super().__init__(**kw)
            with self.name_scope():
                self.dense = mx.gluon.nn.Dense(3, in_units=3)

        def hybrid_forward(self, F, x):
            return F.Custom(self.dense(x), op_type="t_sqr", scale=0.5)

    net = Net()
    net.initialize(mx.init.Constant(0.25))
    net.hybridize()
    hx = nd.array(rng.uniform(-1, 1, (2, 3)).astype("float32"))
    hout = []
    for _ in range(2):
        with autograd.record():
            out = net(hx)
        out.backward()
        hout.append({"out": _v(out), "wgrad": _v(net.dense.weight.grad())})
    res["hybrid"] = {"x": _v(hx), "runs": hout}
    return res


def run_registry_cases(mx):
    """mx.registry: what register/alias/create give, and the errors of misuse."""
    import warnings

    class Base:
        def __init__(self, *args, **kwargs):
            self.args, self.kwargs = list(args), dict(sorted(kwargs.items()))

    register = mx.registry.get_register_func(Base, "thing")
    alias = mx.registry.get_alias_func(Base, "thing")
    create = mx.registry.get_create_func(Base, "thing")

    @alias("sq", "Quad")
    @register
    class Square(Base):
        pass

    out = {}

    def attempt(key, fn):
        try:
            r = fn()
            out[key] = [type(r).__name__, getattr(r, "args", None), getattr(r, "kwargs", None)]
        except Exception as e:  # noqa: BLE001 - recorded
            out[key] = ["error", type(e).__name__]

    attempt("by_name", lambda: create("square", 1, k=2))
    attempt("upper", lambda: create("SQUARE"))
    attempt("alias", lambda: create("quad", 3))
    attempt("kw", lambda: create(thing="sq", k=1))
    attempt("dict", lambda: create({"thing": "sq", "k": 4}))
    attempt("json_list", lambda: create('["sq", {"k": 5}]'))
    attempt("json_dict", lambda: create('{"thing": "square", "k": 6}'))
    inst = Square()
    attempt("instance", lambda: create(inst))
    attempt("instance_args", lambda: create(inst, 1))
    attempt("unknown", lambda: create("nope"))
    attempt("not_str", lambda: create(3))
    attempt("no_name", lambda: create())
    attempt("bad_class", lambda: register(int))
    out["registry"] = sorted(mx.registry.get_registry(Base))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")

        @register
        class square(Base):  # noqa: N801 - same name, lower case
            pass
    out["override_warns"] = len(w)
    attempt("after_override", lambda: create("square"))
    return out


def run_symbol_cases(mx):
    """mx.sym.Custom (single output): the JSON node, shape inference and evaluation."""
    import json
    _register(mx)
    x = mx.sym.var("x")
    y = mx.sym.Custom(x, op_type="t_sqr", scale=2, name="sq")
    arg, out, aux = y.infer_shape(x=(2, 3))
    xv = mx.nd.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]])
    ex = y.eval(ctx=mx.cpu(), x=xv) if hasattr(y, "eval") else None
    return {"nodes": json.loads(y.tojson())["nodes"],
            "shapes": [[list(s) for s in arg], [list(s) for s in out], [list(s) for s in aux]],
            "value": ex[0].asnumpy().tolist() if ex is not None else None}


def run_symbol_multi_cases(mx):
    """mx.sym.Custom with two outputs ("t_two"): output names, indexing, shape inference,
    evaluation, the JSON node and a graph that consumes both outputs."""
    import json
    _register(mx)
    a, b = mx.sym.var("a"), mx.sym.var("b")
    y = mx.sym.Custom(a, b, op_type="t_two", name="tw")
    res = {"n": len(y), "outputs": y.list_outputs(), "arguments": y.list_arguments()}
    arg, out, aux = y.infer_shape(a=(2, 3), b=(2, 3))
    res["shapes"] = [[list(s) for s in arg], [list(s) for s in out], [list(s) for s in aux]]
    res["nodes"] = json.loads(y.tojson())["nodes"]
    av = mx.nd.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]])
    bv = mx.nd.array([[0.5, -1.0, 2.0], [3.0, 1.0, -2.0]])
    ex = y.eval(ctx=mx.cpu(), a=av, b=bv)
    res["values"] = [o.asnumpy().tolist() for o in ex]
    z = mx.sym.broadcast_add(y[0], mx.sym.reshape(y[1], shape=(-1, 1))) * 2
    res["z_shapes"] = [list(s) for s in z.infer_shape(a=(2, 3), b=(2, 3))[1]]
    res["z_value"] = z.eval(ctx=mx.cpu(), a=av, b=bv)[0].asnumpy().tolist()
    res["second_outputs"] = y[1].list_outputs()
    res["second_value"] = y[1].eval(ctx=mx.cpu(), a=av, b=bv)[0].asnumpy().tolist()
    return res
