"""Language-modelling datasets (WikiText-2, WikiText-103) read from local files.

neogluon does not download: the dataset's ``wiki.<segment>.tokens`` file must be in ``root``
(MXNet's layout), or the archive MXNet downloads (``wikitext-2-v1.zip`` /
``wikitext-103-v1.zip``) must be there, in which case its token files are extracted into
``root``.
"""
from __future__ import annotations

import os
import zipfile

import numpy as np

from ....base import MXNetError, data_dir
from ....contrib.text import utils as _text_utils
from ....contrib.text import vocab as _text_vocab
from ....ndarray.ndarray import array as _nd_array
from ...data import dataset
from ...utils import _copy_to_file

__all__ = ["WikiText2", "WikiText103"]

EOS_TOKEN = "<eos>"


class _UnknownSegment(MXNetError, KeyError):
    """An unknown ``segment``; also a KeyError, which MXNet 1.9.1 raises there."""

    def __str__(self):  # the message itself, not KeyError's quoted repr of it
        return str(self.args[0]) if self.args else ""


class _LanguageModelDataset(dataset._DownloadedDataset):
    def __init__(self, root, namespace, vocabulary):
        self._vocab = vocabulary
        self._counter = None
        self._namespace = namespace
        super().__init__(root, None)

    @property
    def vocabulary(self):
        """The :class:`mx.contrib.text.vocab.Vocabulary` mapping tokens to the indices."""
        return self._vocab

    @property
    def frequencies(self):
        """collections.Counter of the segment's tokens."""
        return self._counter

    def _build_vocab(self, content):
        if not self._counter:
            self._counter = _text_utils.count_tokens_from_str(content)
        if not self._vocab:
            self._vocab = _text_vocab.Vocabulary(counter=self._counter,
                                                 reserved_tokens=[EOS_TOKEN])


class _WikiText(_LanguageModelDataset):
    _archive = None   # zip file name MXNet downloads
    _files = {"train": "wiki.train.tokens", "validation": "wiki.valid.tokens",
              "test": "wiki.test.tokens"}

    def __init__(self, root, segment, vocab, seq_len, namespace):
        if segment not in self._files:
            raise _UnknownSegment(f"{type(self).__name__}: segment must be one of "
                             f"{sorted(self._files)}, got {segment!r}")
        if not isinstance(seq_len, int) or isinstance(seq_len, bool) or seq_len <= 0:
            raise MXNetError(f"{type(self).__name__}: seq_len must be a positive int, got "
                             f"{seq_len!r}")
        if vocab is not None and not isinstance(vocab, _text_vocab.Vocabulary):
            raise MXNetError(f"{type(self).__name__}: vocab must be a "
                             f"mx.contrib.text.vocab.Vocabulary, got {type(vocab).__name__}")
        self._segment = segment
        self._seq_len = seq_len
        super().__init__(root, namespace, vocab)

    def _read_batch(self, filename):
        with open(filename, "r", encoding="utf8") as fin:
            content = fin.read()
        self._build_vocab(content)
        tokens = []
        for line in content.splitlines():
            words = line.strip().split()
            if words:
                tokens.extend(words)
                tokens.append(EOS_TOKEN)
        ids = self._vocab.to_indices(tokens)
        return np.array(ids[:-1], dtype=np.int32), np.array(ids[1:], dtype=np.int32)

    def _local_file(self):
        name = self._files[self._segment]
        path = os.path.join(self._root, name)
        if os.path.isfile(path):
            return path
        archive = os.path.join(self._root, self._archive)
        if os.path.isfile(archive):
            _extract_basenames(archive, self._root)
            if os.path.isfile(path):
                return path
            raise MXNetError(f"{type(self).__name__}: {archive} holds no {name}")
        raise MXNetError(
            f"{type(self).__name__}: {path!r} is missing and neogluon does not download "
            f"datasets (no network access assumed). Put {name!r} (the {self._segment} "
            f"segment of the {self._namespace} 'tokens' release) or the archive "
            f"{self._archive!r} into {self._root!r}, or pass root= the folder holding it.")

    def _get_data(self):
        data, label = self._read_batch(self._local_file())
        usable = len(data) // self._seq_len * self._seq_len
        self._data = _nd_array(data[:usable].reshape(-1, self._seq_len), dtype=np.int32)
        self._label = _nd_array(label[:usable].reshape(-1, self._seq_len), dtype=np.int32)

    def __getitem__(self, idx):
        return self._data[idx], self._label[idx]

    def __len__(self):
        return len(self._label)


def _extract_basenames(archive, root):
    """Write each regular member of zip ``archive`` into ``root`` under its base name
    (atomically), as MXNet flattens the WikiText archives."""
    with zipfile.ZipFile(archive) as zf:
        for member in zf.namelist():
            name = os.path.basename(member)
            if not name:
                continue
            with zf.open(member) as src:
                _copy_to_file(src, os.path.join(root, name))


class WikiText2(_WikiText):
    """WikiText-2 for language modelling: samples are ``(data, label)`` int32 rows of
    ``seq_len`` token indices, the label being the data shifted by one token. Each line gets
    an ``<eos>`` token; the tail that does not fill a row is dropped.

    Parameters
    ----------
    root : str, default ``$MXNET_HOME/datasets/wikitext-2``
        Folder holding ``wiki.train.tokens``, ``wiki.valid.tokens``, ``wiki.test.tokens``
        (or ``wikitext-2-v1.zip``). Never downloaded.
    segment : {'train', 'validation', 'test'}, default 'train'
    vocab : mx.contrib.text.vocab.Vocabulary, optional
        Built from this segment's tokens (with ``<eos>`` reserved) when None; pass the
        training set's ``vocabulary`` to index the other segments alike.
    seq_len : int, default 35
    """

    _archive = "wikitext-2-v1.zip"

    def __init__(self, root=os.path.join(data_dir(), "datasets", "wikitext-2"),
                 segment="train", vocab=None, seq_len=35):
        super().__init__(root, segment, vocab, seq_len, "wikitext-2")


class WikiText103(_WikiText):
    """WikiText-103; as :class:`WikiText2` with ``root`` default
    ``$MXNET_HOME/datasets/wikitext-103`` and archive ``wikitext-103-v1.zip``."""

    _archive = "wikitext-103-v1.zip"

    def __init__(self, root=os.path.join(data_dir(), "datasets", "wikitext-103"),
                 segment="train", vocab=None, seq_len=35):
        super().__init__(root, segment, vocab, seq_len, "wikitext-103")
