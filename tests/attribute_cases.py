"""Symbols built under mx.AttrScope and with attr=, written against the MXNet API:
tools/gen_attribute_fixtures.py records their attributes and JSON with MXNet 1.9.1,
tests/test_attribute.py compares neogluon's. Every builder takes ``mx`` and returns a Symbol
(names fixed or from a fresh NameManager)."""


def scoped_layers(mx):
    """A scope's hidden and user keys on variables, operators, the variables an operator
    creates, arithmetic and scalar nodes."""
    with mx.name.NameManager():
        data = mx.sym.Variable("data")
        with mx.AttrScope(ctx_group="dev1", __data__="great"):
            fc = mx.sym.FullyConnected(data, num_hidden=10, name="fc")
            v = mx.sym.Variable("v")
            out = (fc + v) * 2
        return mx.sym.Activation(out, act_type="relu", name="act")


def nested_scopes(mx):
    """Inner scopes merge over outer ones; attr= wins over the scope, lr_mult= over attr=."""
    with mx.name.NameManager():
        with mx.AttrScope(__group__="4", lr_mult="0.1"):
            a = mx.sym.Variable("a")
            with mx.AttrScope(__group__="5", __init_bias__="0.0"):
                b = mx.sym.Variable("b", attr={"lr_mult": "2"})
                c = mx.sym.Variable("c", attr={"lr_mult": "2"}, lr_mult=3)
                fc = mx.sym.FullyConnected(a, weight=b, bias=c, num_hidden=4, name="fc",
                                           attr={"__group__": "6"})
            z = mx.sym.zeros((2, 3))
        return mx.sym.Group([fc, z])


def op_attr_keys(mx):
    """attr= on an operator: a hidden key given plainly, a user key, an operator keyword."""
    data = mx.sym.Variable("data", attr={"mood": "angry"})
    return mx.sym.Convolution(data=data, name="conv", kernel=(1, 1), num_filter=1,
                              attr={"__mood__": "so so", "wd_mult": "x"}, lr_mult=1)


def variable_keys(mx):
    """A variable's attr=: hidden keys stored as __key__, other keys kept; _set_attr too."""
    v = mx.sym.Variable("v", attr={"lr_mult": "3", "ctx_group": "g", "x": "y",
                                   "force_mirroring": "True"}, wd_mult=0.5,
                        shape=(2, 3), dtype="float16", __extra__="e")
    v._set_attr(mirror_stage="1", __more__="m")
    return v


def compose_inits(mx):
    """Initializers BatchNorm, PReLU and IdentityAttachKLSparseReg give their inputs; a
    variable with its own __init__ keeps it; layer arguments copied to created variables."""
    with mx.name.NameManager():
        data = mx.sym.Variable("data")
        mean = mx.sym.Variable("mean")
        var = mx.sym.Variable("var", init=mx.init.Constant(2.0))
        bn = mx.sym.BatchNorm(data, moving_mean=mean, moving_var=var, name="bn",
                              fix_gamma=False, eps=1e-3)
        bn2 = mx.sym.BatchNorm(bn, name="bn2")
        act = mx.sym.LeakyReLU(bn2, act_type="prelu", name="prelu")
        conv = mx.sym.Convolution(act, kernel=(3, 3), num_filter=4, no_bias=True,
                                  layout="NCHW", name="conv")
        emb = mx.sym.Embedding(mx.sym.Variable("idx"), input_dim=5, output_dim=3,
                               dtype="float16", name="emb")
        reg = mx.sym.IdentityAttachKLSparseReg(conv, name="reg")
        return mx.sym.Group([reg, emb, mx.sym.SoftmaxOutput(reg, name="sm", grad_scale=2)])


BUILDERS = {"scoped_layers": scoped_layers, "nested_scopes": nested_scopes,
            "op_attr_keys": op_attr_keys, "variable_keys": variable_keys,
            "compose_inits": compose_inits}
