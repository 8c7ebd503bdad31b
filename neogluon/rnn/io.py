"""``mx.rnn.io``: MXNet 1.x's helpers to feed sentences to the legacy RNN cells:
:func:`encode_sentences` (words to integer ids) and :class:`BucketSentenceIter` (batches of
same-length padded sentences, labels shifted one step, for ``BucketingModule``)."""
from __future__ import annotations

import bisect
import random

import numpy as np

from .. import ndarray
from ..base import MXNetError, MXNetValueError
from ..io import DataBatch, DataDesc, DataIter

__all__ = ["encode_sentences", "BucketSentenceIter"]


class _UnknownTokenError(MXNetError, AssertionError):
    """A word missing from a fixed vocabulary (MXNet 1.9.1 raised AssertionError)."""


def encode_sentences(sentences, vocab=None, invalid_label=-1, invalid_key="\n",
                     start_label=0, unknown_token=None):
    """Replace each word of each sentence by its integer id.

    Parameters
    ----------
    sentences : list of list of str
    vocab : dict of str to int, optional
        Ids of known words; updated in place with the words added. Without it a new
        vocabulary is built, starting as ``{invalid_key: invalid_label}``.
    invalid_label : int, default -1
        Id reserved for padding / end of sentence; never given to a word.
    invalid_key : str, default '\\n'
        The word that stands for ``invalid_label`` in a new vocabulary.
    start_label : int, default 0
        First id given to a new word.
    unknown_token : str, optional
        Words not in ``vocab`` are encoded as this token, which gets one new id on first
        use. Without it, such a word is an error when ``vocab`` is given (and gets a new
        id of its own when the vocabulary is built here).

    Returns
    -------
    encoded : list of list of int
    vocab : dict of str to int
    """
    next_id = start_label
    new_vocab = vocab is None
    if new_vocab:
        vocab = {invalid_key: invalid_label}
    encoded = []
    for sentence in sentences:
        ids = []
        for word in sentence:
            if word not in vocab:
                if not (new_vocab or unknown_token):
                    raise _UnknownTokenError(
                        f"encode_sentences: word {word!r} is not in the vocabulary (pass "
                        "unknown_token= to map unknown words to one token)")
                if unknown_token:
                    word = unknown_token
                # the unknown token keeps the id it got first (MXNet 1.9.1 gave it a new
                # id at every unknown word, so earlier encodings pointed nowhere)
                if word not in vocab:
                    if next_id == invalid_label:
                        next_id += 1
                    vocab[word] = next_id
                    next_id += 1
            ids.append(vocab[word])
        encoded.append(ids)
    return encoded, vocab


class BucketSentenceIter(DataIter):
    """Batches of encoded sentences grouped by length (bucketing), for language models: each
    sentence is padded with ``invalid_label`` to its bucket's length, and its label is the
    sentence shifted one step left (the next word), padded the same way.

    Every batch holds ``batch_size`` sentences of one bucket; its ``bucket_key`` is the
    bucket's length. ``reset()`` (also run at construction) shuffles the batches' order with
    Python's ``random`` and the sentences within each bucket with ``numpy.random``, as MXNet
    does, so seeding both repeats an epoch. Sentences longer than the largest bucket are
    dropped (with a printed warning), and so are the last ``len(bucket) % batch_size``
    sentences of each bucket in an epoch.

    Parameters
    ----------
    sentences : list of list of int
        Encoded sentences (see :func:`encode_sentences`).
    batch_size : int
    buckets : list of int, optional
        Bucket lengths. By default every sentence length that at least ``batch_size``
        sentences have.
    invalid_label : int, default -1
        Padding value of data and label.
    data_name : str, default 'data'
    label_name : str, default 'softmax_label'
    dtype : str, default 'float32'
    layout : {'NT', 'TN'}, default 'NT'
        ``(batch, time)`` or ``(time, batch)`` batches.
    """

    def __init__(self, sentences, batch_size, buckets=None, invalid_label=-1,
                 data_name="data", label_name="softmax_label", dtype="float32", layout="NT"):
        super().__init__()
        if layout not in ("NT", "TN"):
            raise MXNetValueError(f"BucketSentenceIter: invalid layout {layout!r}: must be "
                                  "'NT' (batch major) or 'TN' (time major)")
        if not buckets:
            counts = np.bincount([len(s) for s in sentences]) if len(sentences) else []
            buckets = [length for length, n in enumerate(counts) if n >= batch_size]
        # sorted copy: MXNet 1.9.1 sorted the caller's list in place
        buckets = sorted(buckets)

        per_bucket = [[] for _ in buckets]
        n_discarded = 0
        for sentence in sentences:
            k = bisect.bisect_left(buckets, len(sentence))
            if k == len(buckets):
                n_discarded += 1
                continue
            padded = np.full((buckets[k],), invalid_label, dtype=dtype)
            padded[:len(sentence)] = sentence
            per_bucket[k].append(padded)
        # buckets no sentence fell into are left out
        buckets = [length for length, rows in zip(buckets, per_bucket) if rows]
        self.data = [np.asarray(rows, dtype=dtype) for rows in per_bucket if rows]
        print("WARNING: discarded %d sentences longer than the largest bucket." % n_discarded)
        if not buckets:
            raise MXNetValueError(
                f"BucketSentenceIter: no bucket holds any of the {len(sentences)} sentences "
                f"(batch_size={batch_size}; without buckets=, a bucket is a length at "
                "least batch_size sentences share)")

        self.batch_size = batch_size
        self.buckets = buckets
        self.data_name = data_name
        self.label_name = label_name
        self.dtype = dtype
        self.invalid_label = invalid_label
        self.nddata = []
        self.ndlabel = []
        self.major_axis = layout.find("N")
        self.layout = layout
        self.default_bucket_key = max(buckets)
        shape = (batch_size, self.default_bucket_key) if self.major_axis == 0 \
            else (self.default_bucket_key, batch_size)
        self.provide_data = [DataDesc(name=data_name, shape=shape, layout=layout)]
        self.provide_label = [DataDesc(name=label_name, shape=shape, layout=layout)]

        # (bucket, first row) of every full batch
        self.idx = [(k, start) for k, rows in enumerate(self.data)
                    for start in range(0, len(rows) - batch_size + 1, batch_size)]
        self.curr_idx = 0
        self.reset()

    def reset(self):
        """Start a new epoch: shuffle the batch order and each bucket's sentences."""
        self.curr_idx = 0
        random.shuffle(self.idx)
        for rows in self.data:
            np.random.shuffle(rows)
        self.nddata = []
        self.ndlabel = []
        for rows in self.data:
            label = np.empty_like(rows)
            label[:, :-1] = rows[:, 1:]
            label[:, -1] = self.invalid_label
            self.nddata.append(ndarray.array(rows, dtype=self.dtype))
            self.ndlabel.append(ndarray.array(label, dtype=self.dtype))

    def next(self):
        """The next batch (a :class:`~mxnet.io.DataBatch` with ``bucket_key`` and its own
        ``provide_data``/``provide_label``).

        Raises
        ------
        StopIteration
            At the end of the epoch.
        """
        if self.curr_idx == len(self.idx):
            raise StopIteration
        k, start = self.idx[self.curr_idx]
        self.curr_idx += 1
        data = self.nddata[k][start:start + self.batch_size]
        label = self.ndlabel[k][start:start + self.batch_size]
        if self.major_axis == 1:
            data, label = data.T, label.T
        return DataBatch([data], [label], pad=0, bucket_key=self.buckets[k],
                         provide_data=[DataDesc(name=self.data_name, shape=data.shape,
                                                layout=self.layout)],
                         provide_label=[DataDesc(name=self.label_name, shape=label.shape,
                                                 layout=self.layout)])
