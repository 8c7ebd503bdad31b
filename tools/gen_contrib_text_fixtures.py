"""Record mx.contrib.text / mx.contrib.io / gluon.contrib.data.text behaviour from real
MXNet 1.9.1 on small inputs defined here (they are stored in the fixture too).

    /tmp/mxref/bin/python tools/gen_contrib_text_fixtures.py
    # writes tests/fixtures/contrib_text/contrib_text.json
"""
import collections
import json
import os
import tempfile
import warnings

import numpy as np

import mxnet as mx
from mxnet.contrib import text
import mxnet.gluon.contrib.data.text as gtext

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "contrib_text")

CORPUS = ("the cat sat on the mat .\nThe dog ate the cat 's food .\n\n"
          "a b b c c c d d d d e e e e e\nzeta alpha alpha beta beta\n")

COUNT_CASES = [
    {"source_str": " Life is great ! \n life is good . \n", "token_delim": " ",
     "seq_delim": "\n", "to_lower": True},
    {"source_str": " Life is great ! \n life is good . \n", "token_delim": " ",
     "seq_delim": "\n", "to_lower": False},
    {"source_str": "*Life*is*great*!*\n*life*is*good*.*\n", "token_delim": "\\*",
     "seq_delim": "\n", "to_lower": True},
    {"source_str": "a|b||c;d|a;;b", "token_delim": "\\|", "seq_delim": ";", "to_lower": False},
]

VOCAB_CASES = [
    {},
    {"most_freq_count": 3},
    {"min_freq": 2},
    {"min_freq": 3, "most_freq_count": 1},
    {"reserved_tokens": ["<pad>", "<bos>"]},
    {"reserved_tokens": ["the", "<pad>"], "most_freq_count": 4},
    {"unknown_token": "<UNK>", "reserved_tokens": ["<eos>"], "min_freq": 2},
    {"most_freq_count": 0},
    {"most_freq_count": 1000},
]
QUERY = ["the", "cat", "The", "unseen", "<pad>", "e", "zeta", "<unk>", "<UNK>", "alpha"]

EMBED_FILES = {
    "basic": "a 0.1 0.2 0.3\nb 1 2 3\nc -1.5 2.25 7\nB 9 8 7\n",
    "with_unknown": "<unk> 0.5 0.5 0.5\nx 1 1 1\ny 2 2 2\n",
    "header_dup": "3 3\nhello 1 2 3\nworld 4 5 6\nhello 7 8 9\n",
    "tab": "p\t1\t2\nq\t3\t4\n",
}


def counter_items(c):
    return sorted([[k, v] for k, v in c.items()])


def main():
    rec = {"corpus": CORPUS, "count": [], "vocab": [], "query": QUERY,
           "embed_files": EMBED_FILES, "embed": [], "wikitext": [], "loaderiter": []}
    for case in COUNT_CASES:
        c = text.utils.count_tokens_from_str(**case)
        rec["count"].append({"args": case, "counts": counter_items(c)})
    counter = text.utils.count_tokens_from_str(CORPUS)
    for case in VOCAB_CASES:
        v = text.vocab.Vocabulary(counter, **case)
        rec["vocab"].append({"args": case, "idx_to_token": v.idx_to_token, "len": len(v),
                             "to_indices": v.to_indices(QUERY),
                             "to_indices_single": v.to_indices("cat"),
                             "to_tokens": v.to_tokens(list(range(len(v)))[::-1])})
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, body in EMBED_FILES.items():
            paths[name] = os.path.join(tmp, name + ".txt")
            with open(paths[name], "w") as f:
                f.write(body)
        small_vocab = text.vocab.Vocabulary(collections.Counter(["b", "b", "a", "z", "B"]),
                                            reserved_tokens=["<pad>"])
        cases = [("basic", " ", False), ("with_unknown", " ", False),
                 ("header_dup", " ", False), ("tab", "\t", False), ("basic", " ", True)]
        for name, delim, with_vocab in cases:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                emb = text.embedding.CustomEmbedding(
                    paths[name], elem_delim=delim,
                    vocabulary=small_vocab if with_vocab else None)
            toks = ["a", "b", "nope", "B", "hello", "x", "p", "<unk>"]
            entry = {"file": name, "elem_delim": delim, "vocab": with_vocab,
                     "idx_to_token": emb.idx_to_token, "vec_len": emb.vec_len,
                     "idx_to_vec": emb.idx_to_vec.asnumpy().tolist(),
                     "vecs": emb.get_vecs_by_tokens(toks).asnumpy().tolist(),
                     "vecs_lower": emb.get_vecs_by_tokens(toks, lower_case_backup=True)
                     .asnumpy().tolist(),
                     "vec_single": emb.get_vecs_by_tokens(toks[0]).asnumpy().tolist()}
            known = [t for t in emb.idx_to_token[1:3]]
            if known:
                new = mx.nd.array(np.arange(len(known) * emb.vec_len, dtype=np.float32)
                                  .reshape(len(known), emb.vec_len) + 100)
                emb.update_token_vectors(known, new)
                emb.update_token_vectors("<unk>", mx.nd.ones(emb.vec_len) * -3)
                entry["updated_tokens"] = known
                entry["after_update"] = emb.idx_to_vec.asnumpy().tolist()
            rec["embed"].append(entry)
        e1 = text.embedding.CustomEmbedding(paths["basic"])
        e2 = text.embedding.CustomEmbedding(paths["with_unknown"])
        comp = text.embedding.CompositeEmbedding(small_vocab, [e1, e2])
        rec["composite"] = {"idx_to_token": comp.idx_to_token, "vec_len": comp.vec_len,
                            "idx_to_vec": comp.idx_to_vec.asnumpy().tolist()}

        # WikiText2 on a small local file (MXNet's sha1 check bypassed: it is not the real
        # file, and nothing must be downloaded)
        gtext.check_sha1 = lambda *a, **k: True
        root = os.path.join(tmp, "wt2")
        os.makedirs(root)
        for fname, body in (("wiki.train.tokens", " = Title = \n\n" + CORPUS * 2),
                            ("wiki.valid.tokens", "the cat unseen words here .\n b a\n")):
            with open(os.path.join(root, fname), "w") as f:
                f.write(body)
        rec["wikitext_files"] = {"wiki.train.tokens": " = Title = \n\n" + CORPUS * 2,
                                 "wiki.valid.tokens": "the cat unseen words here .\n b a\n"}
        train = gtext.WikiText2(root=root, segment="train", seq_len=5)
        valid = gtext.WikiText2(root=root, segment="validation", vocab=train.vocabulary,
                                seq_len=3)
        for name, ds in (("train", train), ("validation", valid)):
            rec["wikitext"].append({
                "segment": name, "len": len(ds),
                "data": np.stack([ds[i][0].asnumpy() for i in range(len(ds))]).tolist(),
                "label": np.stack([ds[i][1].asnumpy() for i in range(len(ds))]).tolist(),
                "dtype": str(ds[0][0].dtype.__name__ if hasattr(ds[0][0].dtype, "__name__")
                             else ds[0][0].dtype),
                "idx_to_token": ds.vocabulary.idx_to_token,
                "frequencies": counter_items(ds.frequencies)})

    # DataLoaderIter over a 10-sample dataset, batch 4, the last batch kept (pad 2)
    data = np.arange(30, dtype=np.float32).reshape(10, 3)
    label = np.arange(10, dtype=np.int32)
    for dtype in ("float32", "float16"):
        loader = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(data, label),
                                          batch_size=4, last_batch="keep")
        it = mx.contrib.io.DataLoaderIter(loader, dtype=dtype)
        epochs = []
        for _ in range(2):
            batches = []
            for b in it:
                n = 4 - b.pad
                batches.append({"data": b.data[0].asnumpy()[:n].astype(np.float64).tolist(),
                                "label": b.label[0].asnumpy()[:n].astype(np.float64).tolist(),
                                "pad": b.pad, "index": b.index,
                                "shape": list(b.data[0].shape),
                                "label_shape": list(b.label[0].shape),
                                "dtype": str(np.dtype(b.data[0].dtype))})
            epochs.append(batches)
            it.reset()
        rec["loaderiter"].append({
            "dtype": dtype, "epochs": epochs,
            "provide_data": [[d.name, list(d.shape), str(np.dtype(d.dtype))]
                             for d in it.provide_data],
            "provide_label": [[d.name, list(d.shape), str(np.dtype(d.dtype))]
                              for d in it.provide_label]})

    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, "contrib_text.json")
    with open(path + ".tmp", "w") as f:
        json.dump(rec, f, indent=0)
    os.replace(path + ".tmp", path)
    print("wrote", path)


if __name__ == "__main__":
    main()
