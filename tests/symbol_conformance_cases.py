"""Symbol graphs for partial shape and type inference, written against the MXNet API:
tools/gen_symbol_conformance_fixtures.py records MXNet 1.9.1's answers,
tests/test_symbol_conformance_fixes.py compares neogluon's.

Each builder takes ``mx`` and returns ``(symbol, keyword arguments of the inference call)``.
"""


def _v(mx, name):
    return mx.sym.var(name)


# ---------------------------------------------------------------- infer_shape_partial
def _shape_cases():
    def c(name, build):
        return name, build
    return [
        c("dot", lambda mx: (mx.sym.dot(_v(mx, "x"), _v(mx, "y")), {"x": (0, 3, 4), "y": (4, 5)})),
        c("dot_tb", lambda mx: (mx.sym.dot(_v(mx, "x"), _v(mx, "y"), transpose_b=True),
                                {"x": (0, 3, 4), "y": (5, 4)})),
        c("dot_ta", lambda mx: (mx.sym.dot(_v(mx, "x"), _v(mx, "y"), transpose_a=True),
                                {"x": (4, 0), "y": (4, 5)})),
        c("batch_dot", lambda mx: (mx.sym.batch_dot(_v(mx, "x"), _v(mx, "y")),
                                   {"x": (0, 3, 4), "y": (0, 4, 5)})),
        c("batch_dot_unknown_k", lambda mx: (mx.sym.batch_dot(_v(mx, "x"), _v(mx, "y")),
                                             {"x": (0, 3, 4), "y": (0, 0, 5)})),
        c("batch_dot_tb", lambda mx: (mx.sym.batch_dot(_v(mx, "x"), _v(mx, "y"),
                                                       transpose_b=True),
                                      {"x": (0, 3, 4), "y": (0, 5, 4)})),
        c("embedding", lambda mx: (mx.sym.Embedding(_v(mx, "x"), _v(mx, "w"), input_dim=100,
                                                    output_dim=10), {"x": (0, 5), "w": (100, 10)})),
        c("embedding_weight", lambda mx: (mx.sym.Embedding(_v(mx, "x"), input_dim=100,
                                                           output_dim=10, name="emb"),
                                          {"x": (0, 5)})),
        c("transpose", lambda mx: (mx.sym.transpose(_v(mx, "x"), axes=(0, 3, 2, 1)),
                                   {"x": (0, 3, 224, 224)})),
        c("transpose_default", lambda mx: (mx.sym.transpose(_v(mx, "x")), {"x": (0, 3, 4)})),
        c("swapaxes", lambda mx: (mx.sym.swapaxes(_v(mx, "x"), dim1=0, dim2=2),
                                  {"x": (0, 3, 4)})),
        c("pick", lambda mx: (mx.sym.pick(_v(mx, "x"), _v(mx, "i"), axis=1),
                              {"x": (0, 3, 3), "i": (0, 3)})),
        c("pick_keepdims", lambda mx: (mx.sym.pick(_v(mx, "x"), _v(mx, "i"), axis=1,
                                                   keepdims=True),
                                       {"x": (0, 3, 3), "i": (0, 3)})),
        c("pick_index_from_data", lambda mx: (mx.sym.pick(_v(mx, "x"), _v(mx, "i"), axis=1),
                                              {"x": (0, 3, 3)})),
        c("where_cond_unknown", lambda mx: (mx.sym.where(_v(mx, "c"), _v(mx, "x"), _v(mx, "y")),
                                            {"c": (0, 2), "x": (0, 2), "y": (0, 2)})),
        c("where_cond_partial", lambda mx: (mx.sym.where(_v(mx, "c"), _v(mx, "x"), _v(mx, "y")),
                                            {"c": (0,), "x": (2, 2), "y": (2, 2)})),
        c("where_full_cond", lambda mx: (mx.sym.where(_v(mx, "c"), _v(mx, "x"), _v(mx, "y")),
                                         {"c": (2, 2), "x": (0, 2), "y": (2, 0)})),
        c("where_vector_cond", lambda mx: (mx.sym.where(_v(mx, "c"), _v(mx, "x"), _v(mx, "y")),
                                           {"c": (2,), "x": (0, 3), "y": (2, 0)})),
        c("where_only_cond", lambda mx: (mx.sym.where(_v(mx, "c"), _v(mx, "x"), _v(mx, "y")),
                                         {"c": (2, 3)})),
        c("slicechannel_squeeze", lambda mx: (mx.sym.SliceChannel(
            _v(mx, "x"), num_outputs=10, axis=1, squeeze_axis=True), {"x": (0, 10)})),
        c("slicechannel", lambda mx: (mx.sym.SliceChannel(_v(mx, "x"), num_outputs=3),
                                      {"x": (0, 15, 0)})),
        c("split_v2", lambda mx: (mx.sym.split_v2(_v(mx, "x"), indices_or_sections=3, axis=1),
                                  {"x": (0, 15, 0)})),
        c("conv", lambda mx: (mx.sym.Convolution(_v(mx, "x"), num_filter=21, kernel=(3, 3),
                                                 pad=(1, 1), name="conv"),
                              {"x": (0, 10, 0, 0)})),
        c("conv_stride", lambda mx: (mx.sym.Convolution(_v(mx, "x"), num_filter=21,
                                                        kernel=(3, 3), stride=(2, 2),
                                                        name="conv"),
                                     {"x": (0, 10, 32, 0)})),
        c("conv_channels_unknown", lambda mx: (mx.sym.Convolution(
            _v(mx, "x"), num_filter=21, kernel=(3, 3), name="conv"), {"x": (2, 0, 32, 32)})),
        c("concat", lambda mx: (mx.sym.Concat(_v(mx, "x"), _v(mx, "y"), dim=1),
                                {"x": (0, 10), "y": (0, 5)})),
        c("concat_shared_dims", lambda mx: (mx.sym.Concat(_v(mx, "x"), _v(mx, "y"), dim=1),
                                            {"x": (0, 0), "y": (2, 5)})),
        c("concat_axis0", lambda mx: (mx.sym.Concat(_v(mx, "x"), _v(mx, "y"), dim=0),
                                      {"x": (0, 3), "y": (2, 0)})),
        c("pooling", lambda mx: (mx.sym.Pooling(_v(mx, "x"), kernel=(2, 2), stride=(2, 2)),
                                 {"x": (0, 3, 8, 8)})),
        c("global_pooling", lambda mx: (mx.sym.Pooling(_v(mx, "x"), kernel=(2, 2),
                                                       global_pool=True),
                                        {"x": (0, 3, 0, 8)})),
        c("reshape_known", lambda mx: (mx.sym.reshape(_v(mx, "x"), shape=(2, -1)),
                                       {"x": (0, 3, 4)})),
        c("expand_dims", lambda mx: (mx.sym.expand_dims(_v(mx, "x"), axis=1), {"x": (0, 3)})),
        c("sum", lambda mx: (mx.sym.sum(_v(mx, "x"), axis=1), {"x": (0, 3, 4)})),
        c("broadcast", lambda mx: (mx.sym.broadcast_add(_v(mx, "x"), _v(mx, "y")),
                                   {"x": (0, 3), "y": (1, 3)})),
        c("softmax_output", lambda mx: (mx.sym.SoftmaxOutput(_v(mx, "x"), name="sm"),
                                        {"x": (0, 10)})),
        c("batchnorm", lambda mx: (mx.sym.BatchNorm(_v(mx, "x"), name="bn"),
                                   {"x": (0, 3, 4, 4)})),
        c("slice_axis", lambda mx: (mx.sym.slice_axis(_v(mx, "x"), axis=1, begin=0, end=2),
                                    {"x": (0, 3, 4)})),
        c("elemwise_both_ways", lambda mx: (_v(mx, "x") + _v(mx, "y"),
                                            {"x": (0, 3), "y": (2, 0)})),
        c("fc", lambda mx: (mx.sym.FullyConnected(_v(mx, "x"), num_hidden=5, name="fc"),
                            {"x": (0, 3)})),
        c("identity_like_rhs", lambda mx: (mx.sym._internal._identity_with_attr_like_rhs(
            _v(mx, "x"), _v(mx, "y")), {"x": (0, 3), "y": (2, 0)})),
        c("sliced_sum_backward", lambda mx: (
            mx.sym.SliceChannel(mx.sym.var("a", shape=(0, 15, 0)), num_outputs=3)[1] +
            mx.sym.var("c", shape=(3, 5, 2)), {})),
        c("conv_backward", lambda mx: (
            mx.sym.Convolution(mx.sym.var("a", shape=(0, 10, 0, 0)), num_filter=21,
                               kernel=(3, 3), pad=(1, 1), name="conv") +
            mx.sym.var("c", shape=(5, 21, 32, 32)), {})),
        c("concat_backward", lambda mx: (
            mx.sym.var("d", shape=(2, 0)) + mx.sym.Concat(mx.sym.var("a", shape=(0, 10)),
                                                          mx.sym.var("b", shape=(0, 5)),
                                                          dim=1), {})),
        c("declared_then_given", lambda mx: (mx.sym.var("a", shape=(2, 3)) + _v(mx, "b"),
                                             {"a": (5, 6)})),
        c("declared_then_partly_given", lambda mx: (mx.sym.var("a", shape=(2, 3)) +
                                                    _v(mx, "b"), {"a": (0, 7)})),
    ]


# Cases where neogluon infers more than MXNet 1.9.1 (MXNet leaves the output unknown; the
# dimensions neogluon gives follow from the known ones): the test checks that neogluon's
# answer refines MXNet's.
def _refined_cases():
    return [
        ("flatten", lambda mx: (mx.sym.Flatten(_v(mx, "x")), {"x": (0, 3, 4)})),
        ("reshape_copy_dim", lambda mx: (mx.sym.reshape(_v(mx, "x"), shape=(0, -1)),
                                         {"x": (0, 3, 4)})),
        ("take", lambda mx: (mx.sym.take(_v(mx, "x"), _v(mx, "y")),
                             {"x": (10, 4), "y": (0, 3)})),
        ("one_hot", lambda mx: (mx.sym.one_hot(_v(mx, "x"), depth=5), {"x": (0, 3)})),
    ]


# Under NumPy shape semantics (mx.np_shape(True)): -1 unknown, None an unknown shape.
def _np_shape_cases():
    return [
        ("np_dot", lambda mx: (mx.sym.dot(_v(mx, "x"), _v(mx, "y")), {"x": (-1, 3, 4),
                                                                       "y": (4, 5)})),
        ("np_unknown", lambda mx: (mx.sym.sin(_v(mx, "x")), {})),
        ("np_slicechannel", lambda mx: (mx.sym.SliceChannel(_v(mx, "x"), num_outputs=3),
                                        {"x": (-1, 15, -1)})),
        ("np_zero_size", lambda mx: (mx.sym.sin(_v(mx, "x")), {"x": (0, 3)})),
        ("np_fc", lambda mx: (mx.sym.FullyConnected(_v(mx, "x"), num_hidden=5, name="fc"),
                              {"x": (-1, 3)})),
        ("np_batch_dot_unknown_k", lambda mx: (mx.sym.batch_dot(_v(mx, "x"), _v(mx, "y")),
                                               {"x": (-1, 3, 4), "y": (-1, -1, 5)})),
    ]


SHAPE_CASES = _shape_cases()
REFINED_CASES = _refined_cases()
NP_SHAPE_CASES = _np_shape_cases()


# ---------------------------------------------------------------- infer_type(_partial)
def _type_cases():
    def t(name, build):
        return name, build
    d, i = "d", "i"
    return [
        t("cast_mlp", lambda mx: (mx.sym.SoftmaxOutput(mx.sym.FullyConnected(
            mx.sym.Cast(_v(mx, "data"), dtype="float32"), num_hidden=8, name="fc"),
            name="sm"), {})),
        t("fc_unknown", lambda mx: (mx.sym.FullyConnected(_v(mx, "data"), num_hidden=3,
                                                          name="fc"), {})),
        t("fc_weight_f16", lambda mx: (mx.sym.FullyConnected(_v(mx, "data"), num_hidden=3,
                                                             name="fc"),
                                       {"fc_weight": "float16"})),
        t("zeros_plus", lambda mx: (mx.sym.zeros((2, 3)) + _v(mx, "data"), {})),
        t("embedding", lambda mx: (mx.sym.Embedding(_v(mx, d), input_dim=3, output_dim=4,
                                                    name="e"), {d: "int32"})),
        t("embedding_f16", lambda mx: (mx.sym.Embedding(_v(mx, i), input_dim=3, output_dim=2,
                                                        dtype="float16", name="e"),
                                       {i: "int32"})),
        t("embedding_weight_f16", lambda mx: (mx.sym.Embedding(_v(mx, i), _v(mx, "w"),
                                                               input_dim=3, output_dim=2),
                                              {i: "int32", "w": "float16"})),
        t("batch_take", lambda mx: (mx.sym.batch_take(_v(mx, d), _v(mx, i)), {d: "float32"})),
        t("batch_take_unknown", lambda mx: (mx.sym.batch_take(_v(mx, d), _v(mx, i)), {})),
        t("shape_array", lambda mx: (mx.sym.shape_array(_v(mx, d)), {d: "float16"})),
        t("shape_array_unknown", lambda mx: (mx.sym.shape_array(_v(mx, d)), {})),
        t("batchnorm_f16", lambda mx: (mx.sym.BatchNorm(_v(mx, d), output_mean_var=True,
                                                        name="bn"), {d: "float16"})),
        t("batchnorm_f64", lambda mx: (mx.sym.BatchNorm(_v(mx, d), name="bn"),
                                       {d: "float64"})),
        t("batchnorm_from_gamma", lambda mx: (mx.sym.BatchNorm(_v(mx, d), gamma=_v(mx, "g"),
                                                               name="bn"), {"g": "float32"})),
        t("pick_index", lambda mx: (mx.sym.pick(_v(mx, d), _v(mx, i)), {i: "int32"})),
        t("take_index", lambda mx: (mx.sym.take(_v(mx, d), _v(mx, i)), {i: "int32"})),
        t("gather_nd", lambda mx: (mx.sym.gather_nd(_v(mx, d), _v(mx, i)), {d: "float16"})),
        t("sequence_mask", lambda mx: (mx.sym.SequenceMask(_v(mx, d), _v(mx, i),
                                                           use_sequence_length=True),
                                       {d: "float16"})),
        t("softmax_output", lambda mx: (mx.sym.SoftmaxOutput(_v(mx, d), _v(mx, i)),
                                        {d: "float16"})),
        t("softmax_output_label", lambda mx: (mx.sym.SoftmaxOutput(_v(mx, d), _v(mx, i)),
                                              {i: "int32"})),
        t("topk_both", lambda mx: (mx.sym.topk(_v(mx, d), ret_typ="both", k=1),
                                   {d: "float16"})),
        t("topk_value", lambda mx: (mx.sym.topk(_v(mx, d), ret_typ="value", k=1),
                                    {d: "float16"})),
        t("topk_indices", lambda mx: (mx.sym.topk(_v(mx, d), k=1), {d: "float16"})),
        t("argsort", lambda mx: (mx.sym.argsort(_v(mx, d)), {d: "float16"})),
        t("one_hot", lambda mx: (mx.sym.one_hot(_v(mx, i), depth=3), {i: "int32"})),
        t("backward_through_relu", lambda mx: (mx.sym.relu(_v(mx, d)) + mx.sym.var(
            "h", dtype="float16"), {})),
        t("cast_stops_backward", lambda mx: (mx.sym.Cast(_v(mx, d), dtype="float32") +
                                             _v(mx, "h"), {"h": "float32"})),
        t("uniform", lambda mx: (mx.sym.random.uniform(shape=(2,)), {})),
        t("uniform_f64", lambda mx: (mx.sym.random.uniform(shape=(2,), dtype="float64"), {})),
        t("sample_uniform", lambda mx: (mx.sym.sample_uniform(_v(mx, d), _v(mx, i)),
                                        {d: "float16"})),
        t("where", lambda mx: (mx.sym.where(_v(mx, "c"), _v(mx, d), _v(mx, "y")),
                               {d: "float16"})),
        t("where_cond_only", lambda mx: (mx.sym.where(_v(mx, i), _v(mx, d), _v(mx, d)),
                                         {i: "int32"})),
        t("elemwise_unknown", lambda mx: (_v(mx, d) + _v(mx, "y"), {})),
        t("ctc_loss", lambda mx: (mx.sym.ctc_loss(_v(mx, d), _v(mx, i)), {d: "float32"})),
        t("scatter_nd", lambda mx: (mx.sym.scatter_nd(_v(mx, d), _v(mx, i), shape=(2,)),
                                    {d: "float16"})),
    ]


TYPE_CASES = _type_cases()
