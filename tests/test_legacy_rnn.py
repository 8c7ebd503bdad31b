"""MXNet 1.x's legacy symbolic RNN package ``mx.rnn`` (cells, BucketSentenceIter,
encode_sentences, RNN checkpoints) against MXNet 1.9.1 fixtures
(tools/gen_legacy_rnn_fixtures.py; the scenarios are in tests/legacy_rnn_cases.py)."""
import json
import os
import random
import shutil
import warnings

import numpy as np
import pytest

import neogluon as mx
from neogluon.base import MXNetError

import legacy_rnn_cases as C
from fixture_record import resolve

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "legacy_rnn")


@pytest.fixture(scope="module")
def ref():
    with open(os.path.join(FIX, "legacy_rnn.json")) as f:
        meta = json.load(f)
    with np.load(os.path.join(FIX, "legacy_rnn.npz")) as z:
        arrays = {k: z[k] for k in z.files}
    return resolve(meta, arrays)


def fresh(fn, *args):
    with mx.name.NameManager():
        return fn(mx, *args)


def assert_same(got, want, where=""):
    """Deep comparison; arrays to float32 rounding."""
    if isinstance(want, np.ndarray):
        got = np.asarray(got)
        assert got.shape == want.shape, f"{where}: shape {got.shape} != {want.shape}"
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6, err_msg=where)
    elif isinstance(want, dict):
        assert isinstance(got, dict), where
        assert sorted(got) == sorted(want), f"{where}: keys {sorted(got)} != {sorted(want)}"
        for k in want:
            assert_same(got[k], want[k], f"{where}.{k}")
    elif isinstance(want, list):
        got = list(got)
        assert len(got) == len(want), f"{where}: {got} != {want}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{where}[{i}]")
    else:
        assert got == want, f"{where}: {got!r} != {want!r}"


def to_plain(x):
    """JSON round trip (tuples to lists), leaving arrays alone."""
    if isinstance(x, dict):
        return {str(k): to_plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [to_plain(v) for v in x]
    return x


# ---------------------------------------------------------------------------- graphs
@pytest.mark.parametrize("scenario", C.GRAPH_SCENARIOS, ids=lambda f: f.__name__)
def test_graph_matches_mxnet(ref, scenario):
    """Node names, ops, attributes and wiring, argument and output names, inferred shapes,
    state info, and outputs for fixed weights: as MXNet's cells build them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        got = to_plain(fresh(scenario))
    assert_same(got, ref[f"graph.{scenario.__name__}"], scenario.__name__)


@pytest.mark.parametrize("name", list(C.BOUND_CASES))
def test_bound_graph_matches_mxnet(ref, name):
    """The cells' graphs through simple_bind: forward in training mode and backward."""
    got = fresh(C.bound, name)
    assert_same(got, ref[f"bound.{name}"], name)


def test_mxnet_conformance_names():
    """The names MXNet's own test_rnn.py checks, for the cells it does not cover in the
    fixture scenarios' form."""
    cell = mx.rnn.FusedRNNCell(100, num_layers=3, mode="lstm", prefix="test_",
                               bidirectional=True, dropout=0.5).unfuse()
    outputs, _ = cell.unroll(3, [mx.sym.Variable(f"rnn_t{i}_data") for i in range(3)])
    outputs = mx.sym.Group(outputs)
    assert outputs.list_outputs() == ["test_bi_l2_t0_output", "test_bi_l2_t1_output",
                                      "test_bi_l2_t2_output"]
    shapes = {f"rnn_t{i}_data": (10, 50) for i in range(3)}
    assert outputs.infer_shape(**shapes)[1] == [(10, 200)] * 3


def test_fused_unroll_warns_on_ntc():
    cell = mx.rnn.FusedRNNCell(4, mode="gru")
    with pytest.warns(UserWarning, match="NTC layout detected"):
        cell.unroll(2, mx.sym.Variable("data"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cell.unroll(2, mx.sym.Variable("data"), layout="TNC")


def test_state_outputs_have_lnc_layout():
    cell = mx.rnn.FusedRNNCell(4, mode="rnn_tanh", get_next_state=True)
    _, states = cell.unroll(2, mx.sym.Variable("data"), layout="TNC")
    assert len(states) == 1 and states[0].attr("__layout__") == "LNC"


def test_params_container_and_own_params():
    cell = mx.rnn.LSTMCell(3, prefix="p_")
    assert sorted(cell.params._params) == ["p_h2h_bias", "p_h2h_weight", "p_i2h_bias",
                                           "p_i2h_weight"]
    params = mx.rnn.RNNParams("q_")
    assert params.get("w") is params.get("w", init=mx.init.One())
    assert params.get("w").name == "q_w"


# ---------------------------------------------------------------------------- weights
@pytest.mark.parametrize("name", list(C.FUSED_CONFIGS))
def test_fused_pack_unpack_matches_mxnet(ref, name):
    got = fresh(C.fused_weights, name)
    want = ref[f"fused.{name}"]
    for key in ("size", "unpacked_keys", "packed_keys", "re_unpacked_keys",
                "unfused_arguments"):
        assert got[key] == want[key], key
    for key in ("unpacked", "packed"):
        assert_same(got[key], want[key], key)
    vec = C.det((want["size"],), 21)
    np.testing.assert_array_equal(got["re_packed"], vec)
    np.testing.assert_allclose(got["fused_out"], want["fused_out"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["unfused_out"], want["unfused_out"], rtol=1e-5, atol=1e-6)
    # the unfused stack computes what the fused node computes
    np.testing.assert_allclose(got["fused_out"], got["unfused_out"], rtol=1e-5, atol=1e-6)


def test_cell_pack_unpack_matches_mxnet(ref):
    assert_same(fresh(C.cell_weights), ref["cell_weights"], "cell_weights")


def test_initializers_match_mxnet(ref):
    assert_same(fresh(C.initializers), ref["initializers"], "initializers")


def test_unpack_copies():
    cell = mx.rnn.LSTMCell(2, prefix="c_")
    args = {"c_i2h_weight": mx.nd.ones((8, 3)), "c_i2h_bias": mx.nd.ones((8,)),
            "c_h2h_weight": mx.nd.ones((8, 2)), "c_h2h_bias": mx.nd.ones((8,))}
    unpacked = cell.unpack_weights(args)
    unpacked["c_i2h_f_weight"][:] = 5
    assert args["c_i2h_weight"].asnumpy().max() == 1
    assert sorted(args) == ["c_h2h_bias", "c_h2h_weight", "c_i2h_bias", "c_i2h_weight"]


def test_fused_pack_keeps_dtype():
    cell = mx.rnn.FusedRNNCell(2, mode="gru", prefix="d_")
    vec = mx.nd.array(C.det((3 * 2 * (4 + 2 + 2),), 1), dtype="float64")
    unpacked = cell.unpack_weights({"d_parameters": vec})
    packed = cell.pack_weights(unpacked)["d_parameters"]
    assert packed.dtype == np.float64
    np.testing.assert_array_equal(packed.asnumpy(), vec.asnumpy())


# ---------------------------------------------------------------------------- errors
def test_weight_errors():
    cell = mx.rnn.GRUCell(2, prefix="e_")
    with pytest.raises(KeyError, match="e_i2h_weight") as info:
        cell.unpack_weights({})
    assert isinstance(info.value, MXNetError)
    with pytest.raises(MXNetError, match="e_i2h_z_weight"):
        cell.pack_weights({"e_i2h_r_weight": mx.nd.ones((2, 3))})
    with pytest.raises(MXNetError, match="rows"):
        cell.unpack_weights({"e_i2h_weight": mx.nd.ones((5, 3)), "e_i2h_bias": mx.nd.ones((6,)),
                             "e_h2h_weight": mx.nd.ones((6, 2)), "e_h2h_bias": mx.nd.ones((6,))})
    fused = mx.rnn.FusedRNNCell(2, mode="lstm", prefix="f_")
    with pytest.raises(MXNetError, match="does not fit"):
        fused.unpack_weights({"f_parameters": mx.nd.ones((7,))})
    good = fused.unpack_weights({"f_parameters": mx.nd.ones((4 * 2 * (3 + 2 + 2),))})
    good["f_l0_h2h_o_weight"] = mx.nd.ones((3, 3))
    with pytest.raises(MXNetError, match="f_l0_h2h_o_weight"):
        fused.pack_weights(good)


def test_usage_errors_are_assertion_errors_like_mxnet():
    # MXNet 1.9.1 asserts in these places; neogluon's errors are MXNetError and
    # AssertionError both
    seq = mx.rnn.SequentialRNNCell(params=mx.rnn.RNNParams("all_"))
    with pytest.raises(AssertionError, match="not both") as info:
        seq.add(mx.rnn.LSTMCell(3, prefix="x_"))
    assert isinstance(info.value, MXNetError)
    with pytest.raises(AssertionError):
        mx.rnn.BidirectionalCell(mx.rnn.RNNCell(2, prefix="a_"), mx.rnn.RNNCell(2, prefix="b_"),
                                 params=mx.rnn.RNNParams("p_"))
    with pytest.raises(AssertionError, match="unfuse"):
        mx.rnn.ZoneoutCell(mx.rnn.FusedRNNCell(2))
    with pytest.raises(AssertionError, match="Bidirectional"):
        mx.rnn.ZoneoutCell(mx.rnn.BidirectionalCell(mx.rnn.RNNCell(2, prefix="a_"),
                                                    mx.rnn.RNNCell(2, prefix="b_")))
    base = mx.rnn.RNNCell(2)
    mx.rnn.ResidualCell(base)
    with pytest.raises(AssertionError, match="modifier"):
        base.begin_state()
    with pytest.raises(AssertionError, match="inputs"):
        mx.rnn.RNNCell(2).unroll(3, None)
    with pytest.raises(AssertionError, match="length=3"):
        mx.rnn.RNNCell(2).unroll(3, [mx.sym.Variable("a")])
    with pytest.raises(AssertionError, match="grouped"):
        mx.rnn.RNNCell(2).unroll(2, mx.sym.Group([mx.sym.Variable("a"), mx.sym.Variable("b")]))
    with pytest.raises(AssertionError, match="odd"):
        mx.rnn.ConvRNNCell((1, 3, 8, 8), 4, h2h_kernel=(2, 3))
    with pytest.raises(AssertionError, match="number"):
        mx.rnn.DropoutCell("0.5")
    seq = mx.rnn.SequentialRNNCell()
    seq.add(mx.rnn.BidirectionalCell(mx.rnn.RNNCell(2, prefix="a_"),
                                     mx.rnn.RNNCell(2, prefix="b_")))
    with pytest.raises(AssertionError, match="stepped"):
        seq(mx.sym.Variable("x"), seq.begin_state())


def test_cells_that_cannot_step():
    with pytest.raises(NotImplementedError, match="unroll"):
        mx.rnn.FusedRNNCell(2)(mx.sym.Variable("x"), [])
    with pytest.raises(NotImplementedError, match="unroll"):
        mx.rnn.BidirectionalCell(mx.rnn.RNNCell(2, prefix="a_"),
                                 mx.rnn.RNNCell(2, prefix="b_"))(mx.sym.Variable("x"), [])
    with pytest.raises(NotImplementedError):
        mx.rnn.BaseRNNCell().state_info
    with pytest.raises(MXNetError, match="mode"):
        mx.rnn.FusedRNNCell(2, mode="lstmp")
    with pytest.raises(MXNetError, match="time axis"):
        mx.rnn.RNNCell(2).unroll(2, mx.sym.Variable("x"), layout="NC")


# ------------------------------------------------- where neogluon fixes MXNet 1.9.1's bugs
def test_modifier_cell_in_stack_takes_func():
    # MXNet 1.9.1: TypeError (ModifierCell.begin_state got func twice)
    seq = mx.rnn.SequentialRNNCell()
    seq.add(mx.rnn.ZoneoutCell(mx.rnn.GRUCell(3, prefix="z_"), zoneout_states=0.2))
    seq.add(mx.rnn.ResidualCell(mx.rnn.GRUCell(3, prefix="r_")))
    states = seq.begin_state(func=mx.sym.Variable)
    assert [s.name for s in states] == ["z_begin_state_0", "r_begin_state_0"]
    assert states[0].list_attr() == {"__shape__": "(0, 3)", "__layout__": "NC"}


def test_zoneout_unrolled_twice_restarts_names():
    # MXNet 1.9.1 kept the wrapped cell's counters running (t3.., begin_state_1)
    cell = mx.rnn.ZoneoutCell(mx.rnn.RNNCell(3, prefix="z_"), zoneout_outputs=0.3)
    first, _ = cell.unroll(2, [mx.sym.Variable("a"), mx.sym.Variable("b")])
    second, _ = cell.unroll(2, [mx.sym.Variable("a"), mx.sym.Variable("b")])
    names = lambda outs: [n for n in mx.sym.Group(outs).get_internals().list_outputs()  # noqa
                          if n.startswith("z_")]
    assert names(first) == names(second)
    assert "z_t0_out_output" in names(second) and "z_t2_out_output" not in names(second)


def test_zoneout_on_plain_stack():
    # MXNet 1.9.1: AttributeError (SequentialRNNCell has no _bidirectional)
    seq = mx.rnn.SequentialRNNCell()
    seq.add(mx.rnn.RNNCell(3, prefix="a_"))
    cell = mx.rnn.ZoneoutCell(seq, zoneout_states=0.5)
    outs, _ = cell.unroll(2, [mx.sym.Variable("x0"), mx.sym.Variable("x1")])
    assert mx.sym.Group(outs).infer_shape(x0=(2, 4), x1=(2, 4))[1] == [(2, 3), (2, 3)]
    bi = mx.rnn.SequentialRNNCell()
    bi.add(mx.rnn.BidirectionalCell(mx.rnn.RNNCell(2, prefix="l_"),
                                    mx.rnn.RNNCell(2, prefix="r_")))
    with pytest.raises(AssertionError, match="BidirectionalCell"):
        mx.rnn.ZoneoutCell(bi)


def test_rnn_unroll_is_deprecated_and_works():
    cell = mx.rnn.RNNCell(3, prefix="u_")
    with pytest.warns(UserWarning, match="deprecated"):
        outs, states = mx.rnn.rnn_unroll(cell, 2, [mx.sym.Variable("a"), mx.sym.Variable("b")],
                                         input_prefix="ignored_")
    assert mx.sym.Group(outs).list_outputs() == ["u_t0_out_output", "u_t1_out_output"]


# ---------------------------------------------------------------------------- io
@pytest.mark.parametrize("name", list(C.BUCKET_CASES))
def test_bucket_sentence_iter_matches_mxnet(ref, name, capsys):
    got = to_plain(C.bucket_iter(mx, *C.BUCKET_CASES[name]))
    assert_same(got, ref[f"bucket.{name}"], name)
    assert "WARNING: discarded" in capsys.readouterr().out


def test_bucket_sentence_iter_is_a_data_iter():
    random.seed(0)
    np.random.seed(0)
    it = mx.rnn.BucketSentenceIter(C.sentences_data(), 4)
    assert isinstance(it, mx.io.DataIter)
    assert it.provide_data[0].layout == "NT" and it.provide_label[0].name == "softmax_label"
    n = sum(1 for _ in it)
    assert n == len(it.idx) and n > 0
    with pytest.raises(StopIteration):
        it.next()


def test_bucket_sentence_iter_leaves_buckets_alone():
    buckets = [6, 3, 10]
    mx.rnn.BucketSentenceIter(C.sentences_data(), 2, buckets=buckets)
    assert buckets == [6, 3, 10]   # MXNet 1.9.1 sorted the caller's list


def test_bucket_sentence_iter_errors():
    with pytest.raises(ValueError, match="'NTC'"):
        mx.rnn.BucketSentenceIter(C.sentences_data(), 2, layout="NTC")
    with pytest.raises(MXNetError, match="no bucket"):
        mx.rnn.BucketSentenceIter([[1, 2]], 4)


def test_encode_sentences_matches_mxnet(ref):
    assert_same(to_plain(C.encode(mx)), ref["encode"], "encode")


def test_encode_sentences_unknown_token_has_one_id():
    # MXNet 1.9.1 gave 'UNK' a new id per unknown word, leaving earlier ids dangling
    enc, vocab = mx.rnn.encode_sentences([["x", "a"], ["y"]], vocab={"a": 5},
                                         unknown_token="UNK", start_label=1)
    assert vocab == {"a": 5, "UNK": 1}
    assert enc == [[1, 5], [1]]
    with pytest.raises(AssertionError, match="'x'") as info:
        mx.rnn.encode_sentences([["x"]], vocab={"a": 1})
    assert isinstance(info.value, MXNetError)


# ---------------------------------------------------------------------------- checkpoints
def _ckpt_model():
    cell = mx.rnn.FusedRNNCell(2, num_layers=1, mode="lstm", prefix="ck_")
    with mx.name.NameManager():
        out, _ = cell.unroll(2, mx.sym.Variable("data"), layout="TNC", merge_outputs=True)
        sym = mx.sym.FullyConnected(out, num_hidden=3, name="fc", flatten=False)
    return cell, sym


def test_load_mxnet_rnn_checkpoint(ref, tmp_path):
    for f in ("ckpt-symbol.json", "ckpt-0003.params"):
        shutil.copy(os.path.join(FIX, f), tmp_path / f)
    cell, _ = _ckpt_model()
    sym, args, aux = mx.rnn.load_rnn_checkpoint(cell, str(tmp_path / "ckpt"), 3)
    want = ref["checkpoint"]["arg_params"]
    assert sorted(args) == sorted(want) and aux == {}
    for k in want:
        np.testing.assert_array_equal(args[k].asnumpy(), want[k])
    assert sym.list_arguments() == ["data", "ck_parameters", "fc_weight", "fc_bias"]


def test_save_rnn_checkpoint_writes_mxnet_files(ref, tmp_path):
    cell, sym = _ckpt_model()
    want = ref["checkpoint"]["arg_params"]
    # in the graph's argument order, as MXNet's generator had them (the file keeps the order)
    args = {k: mx.nd.array(want[k]) for k in sym.list_arguments() if k in want}
    prefix = str(tmp_path / "ckpt")
    mx.rnn.save_rnn_checkpoint([cell], prefix, 3, sym, args, {})
    assert "ck_parameters" in args   # the caller's dict is left packed
    saved = mx.nd.load(prefix + "-0003.params")
    mx_saved = mx.nd.load(os.path.join(FIX, "ckpt-0003.params"))
    assert list(saved) == list(mx_saved)
    for k in mx_saved:
        np.testing.assert_array_equal(saved[k].asnumpy(), mx_saved[k].asnumpy())
    with open(prefix + "-0003.params", "rb") as a, \
            open(os.path.join(FIX, "ckpt-0003.params"), "rb") as b:
        assert a.read() == b.read()
    with open(prefix + "-symbol.json") as a, open(os.path.join(FIX, "ckpt-symbol.json")) as b:
        assert json.load(a) == json.load(b)


def test_do_rnn_checkpoint_period(tmp_path):
    cell, sym = _ckpt_model()
    args = {"ck_parameters": mx.nd.ones((4 * 2 * (3 + 2 + 2),)),
            "fc_weight": mx.nd.ones((3, 2)), "fc_bias": mx.nd.zeros((3,))}
    callback = mx.rnn.do_rnn_checkpoint(cell, str(tmp_path / "m"), period=2)
    for epoch in range(4):
        callback(epoch, sym, args, {})
    assert sorted(os.listdir(tmp_path)) == ["m-0002.params", "m-0004.params", "m-symbol.json"]
    _, loaded, _ = mx.rnn.load_rnn_checkpoint(cell, str(tmp_path / "m"), 4)
    np.testing.assert_array_equal(loaded["ck_parameters"].asnumpy(),
                                  args["ck_parameters"].asnumpy())


# ---------------------------------------------------------------------------- package
def test_exports_match_mxnet(ref):
    # MXNet's star imports also leak the modules its files import; those are not exported
    leaked = {"bisect", "functools", "np", "random", "warnings", "string_types",
              "numeric_types", "symbol", "init", "ndarray"}
    want = set(ref["exports"]) - leaked
    missing = want - set(dir(mx.rnn))
    assert not missing
    assert mx.rnn.io.encode_sentences is mx.rnn.encode_sentences
    assert mx.rnn.rnn_cell.LSTMCell is mx.rnn.LSTMCell
    assert mx.rnn.save_checkpoint is mx.model.save_checkpoint
