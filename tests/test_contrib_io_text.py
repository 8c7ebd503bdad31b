"""mx.contrib.io.DataLoaderIter, mx.contrib.text, gluon.contrib.data.text and the local-first
test_utils data helpers, against MXNet 1.9.1's recorded behaviour
(tools/gen_contrib_text_fixtures.py -> tests/fixtures/contrib_text/contrib_text.json)."""
import collections
import json
import os
import zipfile

import numpy as np
import pytest

import neogluon as mx
from neogluon.base import MXNetError
from neogluon.contrib import text
from neogluon.gluon.contrib.data import text as gtext

with open(os.path.join(os.path.dirname(__file__), "fixtures", "contrib_text",
                       "contrib_text.json")) as _f:
    FX = json.load(_f)


def _items(counter):
    return sorted([[k, v] for k, v in counter.items()])


# --------------------------------------------------------------------- contrib.text.utils
def test_count_tokens_matches_mxnet():
    for case in FX["count"]:
        assert _items(text.utils.count_tokens_from_str(**case["args"])) == case["counts"]


def test_count_tokens_updates_counter():
    c = collections.Counter({"a": 5})
    out = text.utils.count_tokens_from_str("a b a", counter_to_update=c)
    assert out is c and c == collections.Counter({"a": 7, "b": 1})


# --------------------------------------------------------------------- contrib.text.vocab
def test_vocabulary_matches_mxnet():
    counter = text.utils.count_tokens_from_str(FX["corpus"])
    for case in FX["vocab"]:
        v = text.vocab.Vocabulary(counter, **case["args"])
        assert v.idx_to_token == case["idx_to_token"], case["args"]
        assert len(v) == case["len"]
        assert v.to_indices(FX["query"]) == case["to_indices"]
        assert v.to_indices("cat") == case["to_indices_single"]
        assert v.to_tokens(list(range(len(v)))[::-1]) == case["to_tokens"]
        assert all(v.token_to_idx[t] == i for i, t in enumerate(v.idx_to_token))


def test_vocabulary_properties_and_errors():
    v = text.vocab.Vocabulary(reserved_tokens=["<pad>"])
    assert v.idx_to_token == ["<unk>", "<pad>"] and v.unknown_token == "<unk>"
    assert v.reserved_tokens == ["<pad>"] and text.vocab.Vocabulary().reserved_tokens is None
    with pytest.raises(MXNetError, match="min_freq"):
        text.vocab.Vocabulary(min_freq=0)
    with pytest.raises(MXNetError, match="unknown_token"):
        text.vocab.Vocabulary(reserved_tokens=["<unk>"])
    with pytest.raises(MXNetError, match="duplicate"):
        text.vocab.Vocabulary(reserved_tokens=["a", "a"])
    with pytest.raises(MXNetError, match="Counter"):
        text.vocab.Vocabulary({"a": 1})
    with pytest.raises(ValueError, match="invalid"):
        v.to_tokens(5)
    with pytest.raises(ValueError, match="invalid"):
        v.to_tokens([0, 1.0])


# ----------------------------------------------------------------- contrib.text.embedding
@pytest.fixture
def embed_files(tmp_path):
    paths = {}
    for name, body in FX["embed_files"].items():
        paths[name] = tmp_path / (name + ".txt")
        paths[name].write_text(body)
    return paths


def _small_vocab():
    return text.vocab.Vocabulary(collections.Counter(["b", "b", "a", "z", "B"]),
                                 reserved_tokens=["<pad>"])


def test_custom_embedding_matches_mxnet(embed_files):
    toks = ["a", "b", "nope", "B", "hello", "x", "p", "<unk>"]
    for case in FX["embed"]:
        with pytest.warns(UserWarning) if case["file"] == "header_dup" else _nullctx():
            emb = text.embedding.CustomEmbedding(
                str(embed_files[case["file"]]), elem_delim=case["elem_delim"],
                vocabulary=_small_vocab() if case["vocab"] else None)
        assert emb.idx_to_token == case["idx_to_token"]
        assert emb.vec_len == case["vec_len"] and len(emb) == len(case["idx_to_token"])
        np.testing.assert_allclose(emb.idx_to_vec.asnumpy(), case["idx_to_vec"], rtol=1e-6)
        np.testing.assert_allclose(emb.get_vecs_by_tokens(toks).asnumpy(), case["vecs"],
                                   rtol=1e-6)
        np.testing.assert_allclose(
            emb.get_vecs_by_tokens(toks, lower_case_backup=True).asnumpy(),
            case["vecs_lower"], rtol=1e-6)
        np.testing.assert_allclose(emb.get_vecs_by_tokens(toks[0]).asnumpy(),
                                   case["vec_single"], rtol=1e-6)
        known = case["updated_tokens"]
        new = mx.nd.array(np.arange(len(known) * emb.vec_len, dtype=np.float32)
                          .reshape(len(known), emb.vec_len) + 100)
        emb.update_token_vectors(known, new)
        emb.update_token_vectors("<unk>", mx.nd.ones(emb.vec_len) * -3)
        np.testing.assert_allclose(emb.idx_to_vec.asnumpy(), case["after_update"], rtol=1e-6)


class _nullctx:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_composite_embedding_matches_mxnet(embed_files):
    e1 = text.embedding.CustomEmbedding(str(embed_files["basic"]))
    e2 = text.embedding.CustomEmbedding(str(embed_files["with_unknown"]))
    comp = text.embedding.CompositeEmbedding(_small_vocab(), [e1, e2])
    exp = FX["composite"]
    assert comp.idx_to_token == exp["idx_to_token"] and comp.vec_len == exp["vec_len"]
    np.testing.assert_allclose(comp.idx_to_vec.asnumpy(), exp["idx_to_vec"], rtol=1e-6)
    single = text.embedding.CompositeEmbedding(_small_vocab(), e1)
    assert single.vec_len == 3


def test_embedding_bad_input(embed_files, tmp_path):
    emb = text.embedding.CustomEmbedding(str(embed_files["basic"]),
                                         init_unknown_vec=mx.nd.ones)
    np.testing.assert_array_equal(emb.idx_to_vec[0].asnumpy(), [1, 1, 1])
    with pytest.raises(ValueError, match="unknown"):
        emb.update_token_vectors("nope", mx.nd.ones(3))
    with pytest.raises(MXNetError, match="shape"):
        emb.update_token_vectors(["a", "b"], mx.nd.ones((2, 4)))
    with pytest.raises(MXNetError, match="NDArray"):
        emb.update_token_vectors("a", [1, 2, 3])
    with pytest.raises(MXNetError, match="not a file"):
        text.embedding.CustomEmbedding(str(tmp_path / "missing.txt"))
    bad = tmp_path / "bad.txt"
    bad.write_text("a 1 2\nb 1 2 3\n")
    with pytest.raises(MXNetError, match="line 2"):
        text.embedding.CustomEmbedding(str(bad))
    bad.write_text("a 1 x\n")
    with pytest.raises(MXNetError, match="non-numeric"):
        text.embedding.CustomEmbedding(str(bad))
    with pytest.raises(MXNetError, match="Vocabulary"):
        text.embedding.CompositeEmbedding({"a": 1}, emb)


def test_registry_and_pretrained_names():
    names = text.embedding.get_pretrained_file_names()
    assert set(names) >= {"glove", "fasttext"}
    assert "glove.6B.50d.txt" in text.embedding.get_pretrained_file_names("glove")
    assert "wiki.simple.vec" in names["fasttext"] and len(names["fasttext"]) == 327
    with pytest.raises(KeyError):
        text.embedding.get_pretrained_file_names("nope")
    with pytest.raises(MXNetError, match="Cannot find token embedding"):
        text.embedding.create("nope")

    @text.embedding.register
    class MyEmbed(text.embedding._TokenEmbedding):
        pretrained_file_names = ("mine.txt",)

        def __init__(self, pretrained_file_name="mine.txt"):
            super().__init__()
            self.name = pretrained_file_name

    assert isinstance(text.embedding.create("MyEmbed"), MyEmbed)
    assert text.embedding.get_pretrained_file_names("myembed") == ["mine.txt"]


def test_glove_fasttext_local_files(tmp_path):
    root = tmp_path / "emb"
    with pytest.raises(MXNetError, match="does not download") as err:
        text.embedding.create("glove", pretrained_file_name="glove.6B.50d.txt",
                              embedding_root=str(root))
    assert str(root / "glove" / "glove.6B.50d.txt") in str(err.value)
    with pytest.raises(KeyError, match="Valid pretrained files"):
        text.embedding.GloVe(pretrained_file_name="glove.bad.txt", embedding_root=str(root))
    (root / "glove").mkdir(parents=True)
    (root / "glove" / "glove.6B.50d.txt").write_text("the 1 2\n, 3 4\n")
    g = text.embedding.create("GloVe", pretrained_file_name="glove.6B.50d.txt",
                              embedding_root=str(root))
    assert g.idx_to_token == ["<unk>", "the", ","] and g.vec_len == 2
    # from the archive MXNet downloads (glove.6B.zip holds every 6B file)
    with zipfile.ZipFile(root / "glove" / "glove.6B.zip", "w") as zf:
        zf.writestr("glove.6B.100d.txt", "a 1 1 1\n")
    g = text.embedding.GloVe("glove.6B.100d.txt", embedding_root=str(root),
                             vocabulary=text.vocab.Vocabulary(collections.Counter(["a", "q"])))
    assert g.idx_to_token == ["<unk>", "a", "q"]
    np.testing.assert_array_equal(g.idx_to_vec.asnumpy(), [[0, 0, 0], [1, 1, 1], [0, 0, 0]])
    with pytest.raises(MXNetError, match="wiki.simple.vec"):
        text.embedding.FastText(embedding_root=str(root))
    (root / "fasttext").mkdir()
    (root / "fasttext" / "wiki.simple.vec").write_text("2 3\nx 1 2 3\ny 4 5 6\n")
    with pytest.warns(UserWarning, match="header"):
        ft = text.embedding.FastText(embedding_root=str(root))
    assert ft.idx_to_token == ["<unk>", "x", "y"] and ft.vec_len == 3


# ------------------------------------------------------------------ gluon.contrib.data.text
def test_wikitext2_matches_mxnet(tmp_path):
    root = tmp_path / "wt2"
    root.mkdir()
    for name, body in FX["wikitext_files"].items():
        (root / name).write_text(body)
    train = gtext.WikiText2(root=str(root), segment="train", seq_len=5)
    valid = gtext.WikiText2(root=str(root), segment="validation", vocab=train.vocabulary,
                            seq_len=3)
    for ds, exp in zip((train, valid), FX["wikitext"]):
        assert len(ds) == exp["len"]
        data = np.stack([ds[i][0].asnumpy() for i in range(len(ds))])
        label = np.stack([ds[i][1].asnumpy() for i in range(len(ds))])
        assert data.dtype == np.int32 and str(data.dtype) == exp["dtype"]
        np.testing.assert_array_equal(data, exp["data"])
        np.testing.assert_array_equal(label, exp["label"])
        assert ds.vocabulary.idx_to_token == exp["idx_to_token"]
        assert _items(ds.frequencies) == exp["frequencies"]
    assert mx.gluon.contrib.data.text.WikiText103 is gtext.WikiText103


def test_wikitext_from_zip_and_errors(tmp_path):
    root = tmp_path / "wt103"
    with pytest.raises(MXNetError, match="does not download") as err:
        gtext.WikiText103(root=str(root), segment="test")
    assert "wiki.test.tokens" in str(err.value) and "wikitext-103-v1.zip" in str(err.value)
    with zipfile.ZipFile(root / "wikitext-103-v1.zip", "w") as zf:
        zf.writestr("wikitext-103/wiki.test.tokens", "a b c\nd e\n")
    ds = gtext.WikiText103(root=str(root), segment="test", seq_len=2)
    assert (root / "wiki.test.tokens").is_file() and len(ds) == 3
    assert ds.vocabulary.idx_to_token[:2] == ["<unk>", "<eos>"]
    with pytest.raises(MXNetError, match="segment"):
        gtext.WikiText2(root=str(root), segment="valid")
    with pytest.raises(KeyError):
        gtext.WikiText2(root=str(root), segment="dev")
    with pytest.raises(MXNetError, match="seq_len"):
        gtext.WikiText2(root=str(root), seq_len=0)
    with zipfile.ZipFile(root / "wikitext-2-v1.zip", "w") as zf:
        zf.writestr("x/readme.txt", "nothing")
    with pytest.raises(MXNetError, match="holds no"):
        gtext.WikiText2(root=str(root), segment="train")
    with pytest.raises(MXNetError, match="Vocabulary"):
        gtext.WikiText2(root=str(root), segment="test", vocab={"a": 1})


def test_interval_sampler_as_mxnet():
    s = mx.gluon.contrib.data.IntervalSampler(13, interval=3)
    assert list(s) == [0, 3, 6, 9, 12, 1, 4, 7, 10, 2, 5, 8, 11] and len(s) == 13
    s = mx.gluon.contrib.data.IntervalSampler(13, interval=3, rollover=False)
    assert list(s) == [0, 3, 6, 9, 12] and len(s) == 13


# ------------------------------------------------------------------ contrib.io.DataLoaderIter
@pytest.mark.parametrize("case", FX["loaderiter"], ids=lambda c: c["dtype"])
def test_dataloaderiter_matches_mxnet(case):
    data = np.arange(30, dtype=np.float32).reshape(10, 3)
    label = np.arange(10, dtype=np.int32)
    loader = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(data, label), batch_size=4,
                                      last_batch="keep")
    it = mx.contrib.io.DataLoaderIter(loader, dtype=case["dtype"])
    assert isinstance(it, mx.io.DataIter) and it.batch_size == 4
    for got, exp in zip((it.provide_data, it.provide_label),
                        (case["provide_data"], case["provide_label"])):
        assert [[d.name, list(d.shape), str(np.dtype(d.dtype))] for d in got] == exp
    for epoch in case["epochs"]:
        batches = list(it)
        assert len(batches) == len(epoch)
        for b, e in zip(batches, epoch):
            n = 4 - b.pad
            assert b.pad == e["pad"] and b.index is None
            assert list(b.data[0].shape) == e["shape"]
            assert list(b.label[0].shape) == e["label_shape"]
            # neogluon keeps `dtype` on padded batches too (MXNet's are float32 there)
            assert str(np.dtype(b.data[0].dtype)) == case["dtype"]
            np.testing.assert_array_equal(b.data[0].asnumpy()[:n], e["data"])
            np.testing.assert_array_equal(b.label[0].asnumpy()[:n], e["label"])
            assert not b.data[0].asnumpy()[n:].any()  # padding rows are zeros
        it.reset()


def test_dataloaderiter_bad_loader():
    with pytest.raises(MXNetError, match="no batch"):
        mx.contrib.io.DataLoaderIter([])
    with pytest.raises(MXNetError, match=r"\(data, label\) pair"):
        mx.contrib.io.DataLoaderIter([mx.nd.ones((2, 3))])


# ------------------------------------------------------------ test_utils local-first data
def test_get_cifar10_uses_local_zip(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    names = ["cifar/train.rec", "cifar/test.rec", "cifar/train.lst", "cifar/test.lst"]
    os.makedirs("data")
    with zipfile.ZipFile("data/cifar10.zip", "w") as zf:
        for n in names:
            zf.writestr(n, n)

    def no_network(*a, **k):
        raise AssertionError("no download expected")

    monkeypatch.setattr(mx.test_utils.requests, "get", no_network)
    mx.test_utils.get_cifar10()
    assert all(open(os.path.join("data", n)).read() == n for n in names)
    mx.test_utils.get_cifar10()  # files there: nothing to do


def test_download_offline_message_and_no_partial_file(tmp_path, monkeypatch):
    requests = mx.test_utils.requests

    def refused(*a, **k):
        raise requests.exceptions.ConnectionError("refused")

    monkeypatch.setattr(requests, "get", refused)
    target = tmp_path / "d" / "cifar10.zip"
    with pytest.raises(requests.exceptions.ConnectionError) as err:
        mx.test_utils.download("http://data.mxnet.io/mxnet/data/cifar10.zip",
                               dirname=str(tmp_path / "d"), retries=1)
    note = "".join(getattr(err.value, "__notes__", []))
    assert "without network access" in note and str(target) in note

    class Broken:
        status_code = 200

        def iter_content(self, chunk_size):
            yield b"partial"
            raise requests.exceptions.ConnectionError("cut")

    monkeypatch.setattr(requests, "get", lambda *a, **k: Broken())
    with pytest.raises(requests.exceptions.ConnectionError):
        mx.test_utils.download("http://x/y.bin", fname=str(tmp_path / "y.bin"), retries=1)
    assert os.listdir(tmp_path) == ["d"]  # neither y.bin nor a leftover part file


def test_word_language_model_pipeline(tmp_path):
    """example/gluon/word_language_model's data path: WikiText2 + IntervalSampler +
    DataLoader, the batches transposed to (seq_len, batch)."""
    root = tmp_path / "wt2"
    root.mkdir()
    for name, body in FX["wikitext_files"].items():
        (root / name).write_text(body)
    train = mx.gluon.contrib.data.text.WikiText2(root=str(root), segment="train", seq_len=4)
    batch_size = 3
    nbatch = len(train) // batch_size
    loader = mx.gluon.data.DataLoader(
        train, batch_size=batch_size, last_batch="discard",
        sampler=mx.gluon.contrib.data.IntervalSampler(len(train), nbatch))
    seen = []
    for data, target in loader:
        data, target = data.T, target.T
        assert data.shape == (4, batch_size) and data.dtype == np.int32
        np.testing.assert_array_equal(data.asnumpy()[1:], target.asnumpy()[:-1])
        seen.append(data.asnumpy())
    assert len(seen) == len(train) // batch_size
    # the first batch holds rows 0, nbatch, 2*nbatch: consecutive text per column
    np.testing.assert_array_equal(seen[0][:, 1], train[nbatch][0].asnumpy())
    it = mx.contrib.io.DataLoaderIter(loader, label_name="target", dtype="int32")
    assert it.provide_label[0].name == "target" and len(list(it)) == len(seen)


def test_errors_are_also_mxnet_types(tmp_path):
    """Where MXNet 1.9.1 asserts, the MXNetError is an AssertionError too (scripts and tests
    that catch AssertionError keep working); missing files and bad numbers are ValueErrors."""
    counter = collections.Counter(["a", "b", "b"])
    for kwargs in ({"min_freq": 0}, {"reserved_tokens": ["b", "b"]},
                   {"reserved_tokens": ["<unk>"]}):
        with pytest.raises(AssertionError):
            text.vocab.Vocabulary(counter, **kwargs)
    path = tmp_path / "e.txt"
    for body in ("a 1 2\nc\n", "a 1 2\nb 1 2 3\n"):
        path.write_text(body)
        with pytest.raises(AssertionError):
            text.embedding.CustomEmbedding(str(path))
    path.write_text("a 1 2\nb 3 4\n")
    emb = text.embedding.CustomEmbedding(str(path))
    with pytest.raises(AssertionError):
        emb.update_token_vectors("<unk>", mx.nd.array([[0, 0], [0, 0]]))
    with pytest.raises(AssertionError):
        emb.update_token_vectors("<unk>", mx.nd.array([0]))
    emb.update_token_vectors(["<unk>"], mx.nd.array([5, 5]))
    emb.update_token_vectors("<unk>", mx.nd.array([[6, 6]]))
    np.testing.assert_array_equal(emb.idx_to_vec.asnumpy(), [[6, 6], [1, 2], [3, 4]])
    with pytest.raises(ValueError):
        text.embedding.CustomEmbedding(str(tmp_path / "none.txt"))
    with pytest.raises(AssertionError):
        text.embedding.create("not-registered")
    assert text.embedding.create(emb) is emb


def test_vocabulary_special_tokens_and_tuples(tmp_path):
    counter = collections.Counter(["a", "b", "b", "c", "c", "c", "w$"])
    v = text.vocab.Vocabulary(counter, min_freq=2, unknown_token="a", reserved_tokens=["<pad>"])
    assert v.token_to_idx == {"a": 0, "<pad>": 1, "c": 2, "b": 3}
    v = text.vocab.Vocabulary(counter, most_freq_count=1, min_freq=2,
                              reserved_tokens=["<pad>", "b"])
    assert v.idx_to_token == ["<unk>", "<pad>", "b", "c"]
    pairs = collections.Counter([("a", "a"), ("c", "c"), ("c", "c")])
    v = text.vocab.Vocabulary(pairs, unknown_token=("<unk>", "<unk>"))
    assert v.idx_to_token == [("<unk>", "<unk>"), ("c", "c"), ("a", "a")]
    assert v.to_indices(("c", "c")) == 1 and v.to_indices([("a", "a"), ("x", "y")]) == [2, 0]
    # an embedding's own unknown token, named in the file, gives row 0
    path = tmp_path / "u.txt"
    path.write_text("a 1 2\n<u1> 7 8\n")
    emb = text.embedding.CustomEmbedding(str(path), unknown_token="<u1>",
                                         init_unknown_vec=mx.nd.ones)
    assert emb.idx_to_token == ["<u1>", "a"]
    np.testing.assert_array_equal(emb.get_vecs_by_tokens("zz").asnumpy(), [7, 8])


def test_mxnet_style_embedding_subclass(tmp_path):
    """A subclass written for MXNet: names in pretrained_file_name_sha1, the file through
    _get_pretrained_file (local only here)."""

    @text.embedding.register
    class LocalTest(text.embedding._TokenEmbedding):
        pretrained_file_name_sha1 = {"embedding_test.vec": "0" * 40}

        def __init__(self, embedding_root="embeddings", init_unknown_vec=mx.nd.zeros, **kw):
            name = "embedding_test.vec"
            LocalTest._check_pretrained_file_names(name)
            super().__init__(**kw)
            self._load_embedding(LocalTest._get_pretrained_file(embedding_root, name), " ",
                                 init_unknown_vec)

    assert text.embedding.get_pretrained_file_names("localtest") == ["embedding_test.vec"]
    with pytest.raises(MXNetError, match="does not download"):
        text.embedding.create("localtest", embedding_root=str(tmp_path))
    (tmp_path / "localtest").mkdir()
    (tmp_path / "localtest" / "embedding_test.vec").write_text("hello 1 2 3 4 5\n"
                                                               "world 6 7 8 9 10\n")
    with pytest.warns(UserWarning, match="SHA-1"):
        emb = text.embedding.create("localtest", embedding_root=str(tmp_path))
    assert emb.token_to_idx["hello"] == 1 and emb.token_to_idx["world"] == 2
    np.testing.assert_array_equal(emb.idx_to_vec[2].asnumpy(), np.arange(5) + 6)
