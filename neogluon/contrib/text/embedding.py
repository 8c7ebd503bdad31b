"""Token embeddings: pre-trained vectors loaded from local files.

neogluon never downloads: :class:`GloVe` and :class:`FastText` read the file from
``embedding_root/<glove|fasttext>/<pretrained_file_name>`` (MXNet's cache layout) and raise
:class:`MXNetError` saying where to put it when it is missing. :class:`CustomEmbedding`
reads any ``token v1 v2 ... vk`` text file.
"""
from __future__ import annotations

import logging
import os
import warnings
import zipfile

import numpy as np

from ...base import MXNetError, MXNetValueError, data_dir
from ... import ndarray as nd
from ...gluon.utils import _copy_to_file, check_sha1
from . import vocab

__all__ = ["register", "create", "get_pretrained_file_names", "GloVe", "FastText",
           "CustomEmbedding", "CompositeEmbedding"]

UNKNOWN_IDX = vocab.UNKNOWN_IDX
_TextArgError = vocab._TextArgError

_REGISTRY = {}


def register(embedding_cls):
    """Class decorator: make ``embedding_cls`` available to :func:`create` under its
    lower-cased class name."""
    if not (isinstance(embedding_cls, type) and issubclass(embedding_cls, _TokenEmbedding)):
        raise _TextArgError(f"register: {embedding_cls!r} is not a token embedding class")
    name = embedding_cls.__name__.lower()
    if name in _REGISTRY and _REGISTRY[name] is not embedding_cls:
        warnings.warn(f"New token embedding {embedding_cls.__module__}."
                      f"{embedding_cls.__name__} registered with name {name} is overriding "
                      f"existing token embedding {_REGISTRY[name].__module__}."
                      f"{_REGISTRY[name].__name__}", UserWarning, stacklevel=2)
    _REGISTRY[name] = embedding_cls
    return embedding_cls


def create(embedding_name, **kwargs):
    """An instance of the registered embedding ``embedding_name`` (case-insensitive), built
    with ``kwargs`` (e.g. ``pretrained_file_name``, ``embedding_root``, ``vocabulary``)."""
    if isinstance(embedding_name, _TokenEmbedding):
        if kwargs:
            raise _TextArgError("create: embedding_name is already an instance; further "
                                "arguments are invalid")
        return embedding_name
    if not isinstance(embedding_name, str):
        raise _TextArgError(f"create: embedding_name must be a str, got {embedding_name!r}")
    name = embedding_name.lower()
    if name not in _REGISTRY:
        raise _TextArgError(f"Cannot find token embedding {embedding_name}: it is not "
                            f"registered. Valid token embeddings: "
                            f"{', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name](**kwargs)


def get_pretrained_file_names(embedding_name=None):
    """The valid ``pretrained_file_name`` values of ``embedding_name``, or, for None, a
    dict of every registered embedding name to its list.

    Raises
    ------
    KeyError
        For an unknown ``embedding_name`` (as MXNet).
    """
    if embedding_name is not None:
        if embedding_name not in _REGISTRY:
            raise KeyError(f"Cannot find `embedding_name` {embedding_name}. Use "
                           f"`get_pretrained_file_names(embedding_name=None).keys()` to get "
                           f"all the valid embedding names.")
        return list(_REGISTRY[embedding_name]._pretrained_names())
    return {name: list(cls._pretrained_names()) for name, cls in _REGISTRY.items()}


class _TokenEmbedding(vocab.Vocabulary):
    """A vocabulary whose tokens carry vectors (``idx_to_vec``, one row per index; row 0 is
    the unknown token's vector)."""

    # The valid pretrained_file_name values. A subclass written for MXNet may give them as
    # the keys of ``pretrained_file_name_sha1`` (file name -> SHA-1) instead.
    pretrained_file_names = ()

    @classmethod
    def _pretrained_names(cls):
        sha1 = getattr(cls, "pretrained_file_name_sha1", None)
        return tuple(sha1) if sha1 else tuple(cls.pretrained_file_names)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._vec_len = None
        self._idx_to_vec = None

    # -- loading -----------------------------------------------------------------------
    def _load_embedding(self, pretrained_file_path, elem_delim, init_unknown_vec,
                        encoding="utf8"):
        path = os.path.expanduser(pretrained_file_path)
        if not os.path.isfile(path):
            raise MXNetValueError(f"pretrained_file_path {pretrained_file_path!r} is not a file "
                             f"(a pre-trained token embedding file is needed)")
        logging.info("Loading pre-trained token embedding vectors from %s", path)
        vec_len = None
        rows = []
        seen = set()
        unknown_vec = None
        with open(path, "r", encoding=encoding) as f:
            for line_num, line in enumerate(f, 1):
                elems = line.rstrip().split(elem_delim)
                if len(elems) <= 1:
                    raise _TextArgError(f"{path}, line {line_num}: expected a token followed "
                                     f"by vector elements separated by {elem_delim!r}")
                token = elems[0]
                try:
                    vec = [float(x) for x in elems[1:]]
                except ValueError as err:
                    raise MXNetValueError(f"{path}, line {line_num}: token {token!r} has a "
                                     f"non-numeric vector element ({err})") from None
                if token == self.unknown_token and unknown_vec is None:
                    unknown_vec = vec
                    seen.add(token)
                elif token in seen:
                    warnings.warn(f"At line {line_num} of the pre-trained token embedding "
                                  f"file: the embedding vector for token {token} has been "
                                  f"loaded and a duplicate embedding for the same token is "
                                  f"seen and skipped.")
                elif len(vec) == 1:
                    warnings.warn(f"At line {line_num} of the pre-trained text embedding "
                                  f"file: token {token} with 1-dimensional vector {vec} is "
                                  f"likely a header and is skipped.")
                else:
                    if vec_len is None:
                        vec_len = len(vec)
                    elif len(vec) != vec_len:
                        raise _TextArgError(f"{path}, line {line_num}: token {token!r} has "
                                         f"{len(vec)} elements but the previous tokens "
                                         f"have {vec_len}")
                    rows.append(vec)
                    self._token_to_idx[token] = len(self._idx_to_token)
                    self._idx_to_token.append(token)
                    seen.add(token)
        if vec_len is None:
            if unknown_vec is None:
                raise _TextArgError(f"{path}: no embedding vector found")
            vec_len = len(unknown_vec)
        self._vec_len = vec_len
        # rows for the unknown and reserved tokens first (zeros), then the loaded ones
        n_special = len(self._idx_to_token) - len(rows)
        table = np.zeros((len(self._idx_to_token), vec_len), dtype=np.float32)
        if rows:
            table[n_special:] = np.asarray(rows, dtype=np.float32)
        if unknown_vec is not None:
            if len(unknown_vec) != vec_len:
                raise _TextArgError(f"{path}: the unknown token's vector has {len(unknown_vec)} "
                                 f"elements, the others {vec_len}")
            table[UNKNOWN_IDX] = unknown_vec
        else:
            init = init_unknown_vec(shape=vec_len)
            table[UNKNOWN_IDX] = init.asnumpy() if hasattr(init, "asnumpy") else np.asarray(init)
        self._idx_to_vec = nd.array(table)

    def _index_tokens_from_vocabulary(self, vocabulary):
        self._token_to_idx = dict(vocabulary.token_to_idx)
        self._idx_to_token = list(vocabulary.idx_to_token)
        self._unknown_token = vocabulary.unknown_token
        self._reserved_tokens = (None if vocabulary.reserved_tokens is None
                                 else list(vocabulary.reserved_tokens))

    def _set_idx_to_vec_by_embeddings(self, token_embeddings, vocab_len, vocab_idx_to_token):
        width = sum(e.vec_len for e in token_embeddings)
        table = np.zeros((vocab_len, width), dtype=np.float32)
        col = 0
        for embed in token_embeddings:
            end = col + embed.vec_len
            table[0, col:end] = embed.idx_to_vec[0].asnumpy()
            if vocab_len > 1:
                table[1:, col:end] = embed.get_vecs_by_tokens(
                    list(vocab_idx_to_token[1:])).asnumpy()
            col = end
        self._vec_len = width
        self._idx_to_vec = nd.array(table)

    def _build_embedding_for_vocabulary(self, vocabulary):
        if vocabulary is None:
            return
        if not isinstance(vocabulary, vocab.Vocabulary):
            raise _TextArgError(f"vocabulary must be a mx.contrib.text.vocab.Vocabulary, got "
                             f"{type(vocabulary).__name__}")
        self._set_idx_to_vec_by_embeddings([self], len(vocabulary), vocabulary.idx_to_token)
        self._index_tokens_from_vocabulary(vocabulary)

    # -- public ------------------------------------------------------------------------
    @property
    def vec_len(self):
        """int: the length of each vector."""
        return self._vec_len

    @property
    def idx_to_vec(self):
        """NDArray of shape (len(self), vec_len): the vector of each index."""
        return self._idx_to_vec

    def get_vecs_by_tokens(self, tokens, lower_case_backup=False):
        """The vector of a token (1-D), or of each token of a list (2-D); unknown tokens get
        row 0. With ``lower_case_backup``, a token not found as is is looked up lower-cased."""
        single = not isinstance(tokens, list)
        seq = [tokens] if single else tokens
        if lower_case_backup:
            idx = [self._token_to_idx[t] if t in self._token_to_idx
                   else self._token_to_idx.get(t.lower(), UNKNOWN_IDX) for t in seq]
        else:
            idx = [self._token_to_idx.get(t, UNKNOWN_IDX) for t in seq]
        vecs = nd.Embedding(nd.array(idx), self._idx_to_vec, self._idx_to_vec.shape[0],
                            self._idx_to_vec.shape[1])
        return vecs[0] if single else vecs

    def update_token_vectors(self, tokens, new_vectors):
        """Replace the vectors of ``tokens`` (known tokens; name ``unknown_token``
        explicitly to change row 0) by the rows of ``new_vectors``."""
        if self._idx_to_vec is None:
            raise _TextArgError("update_token_vectors: idx_to_vec has not been set")
        if not isinstance(new_vectors, nd.NDArray):
            raise _TextArgError(f"update_token_vectors: new_vectors must be an NDArray, got "
                             f"{type(new_vectors).__name__}")
        if not isinstance(tokens, list) or len(tokens) == 1:
            if new_vectors.ndim not in (1, 2):
                raise _TextArgError("update_token_vectors: new_vectors must be 1-D or 2-D for a "
                                 "single token")
            if not isinstance(tokens, list):
                tokens = [tokens]
            if new_vectors.ndim == 1:
                new_vectors = new_vectors.reshape((1, -1))
        elif new_vectors.ndim != 2:
            raise _TextArgError("update_token_vectors: new_vectors must be 2-D for several tokens")
        if tuple(new_vectors.shape) != (len(tokens), self.vec_len):
            raise _TextArgError(f"update_token_vectors: new_vectors has shape "
                             f"{tuple(new_vectors.shape)}, expected ({len(tokens)}, "
                             f"{self.vec_len})")
        indices = []
        for token in tokens:
            if token not in self._token_to_idx:
                raise ValueError(f"Token {token} is unknown. To update the embedding vector for "
                                 f"an unknown token, please specify it explicitly as the "
                                 f"`unknown_token` {self._idx_to_token[UNKNOWN_IDX]} in "
                                 f"`tokens`. This is to avoid unintended updates.")
            indices.append(self._token_to_idx[token])
        # rows written in place (no copy of the whole table); for a token given twice,
        # which of its rows is kept is unspecified (as in MXNet)
        self._idx_to_vec[nd.array(indices, ctx=self._idx_to_vec.context, dtype="int64")] = \
            new_vectors.astype(self._idx_to_vec.dtype).as_in_context(self._idx_to_vec.context)

    @classmethod
    def _check_pretrained_file_names(cls, pretrained_file_name):
        names = cls._pretrained_names()
        if pretrained_file_name not in names:
            name = cls.__name__.lower()
            raise KeyError(f"Cannot find pretrained file {pretrained_file_name} for token "
                           f"embedding {name}. Valid pretrained files for embedding {name}: "
                           f"{', '.join(names)}")

    @classmethod
    def _local_pretrained_file(cls, embedding_root, pretrained_file_name):
        """The file in ``embedding_root/<class>/``, extracted from a local archive there
        when only that exists; MXNetError when neither is there (no download)."""
        folder = os.path.join(os.path.expanduser(embedding_root), cls.__name__.lower())
        path = os.path.join(folder, pretrained_file_name)
        if os.path.isfile(path):
            expected = (getattr(cls, "pretrained_file_name_sha1", None) or {}).get(
                pretrained_file_name)
            if expected and not check_sha1(path, expected):
                warnings.warn(f"{path}: its SHA-1 is not the published file's; it is used "
                              f"as is (MXNet would download the file again)")
            return path
        archive = os.path.join(folder, cls._archive_name(pretrained_file_name))
        if os.path.isfile(archive):
            _extract_member(archive, pretrained_file_name, path)
            if os.path.isfile(path):
                return path
        raise MXNetError(
            f"{cls.__name__}: the pre-trained file {pretrained_file_name!r} is not in "
            f"{folder!r}, and neogluon does not download it (no network access assumed). "
            f"Put the file (or its archive {os.path.basename(archive)!r}) at {path!r}, pass "
            f"embedding_root=, or load any local file with "
            f"mx.contrib.text.embedding.CustomEmbedding(path).")

    # MXNet's name for the step (which downloads there); neogluon's only reads local files
    _get_pretrained_file = _local_pretrained_file

    @classmethod
    def _archive_name(cls, pretrained_file_name):
        return os.path.splitext(pretrained_file_name)[0] + ".zip"


def _extract_member(archive, member_name, dest):
    """Write the member of zip ``archive`` whose base name is ``member_name`` to ``dest``
    (atomically)."""
    with zipfile.ZipFile(archive) as zf:
        for member in zf.namelist():
            if os.path.basename(member) == member_name:
                with zf.open(member) as src:
                    _copy_to_file(src, dest)
                return


_GLOVE_FILES = ("glove.42B.300d.txt", "glove.6B.50d.txt", "glove.6B.100d.txt",
                "glove.6B.200d.txt", "glove.6B.300d.txt", "glove.840B.300d.txt",
                "glove.twitter.27B.25d.txt", "glove.twitter.27B.50d.txt",
                "glove.twitter.27B.100d.txt", "glove.twitter.27B.200d.txt")
_GLOVE_ARCHIVES = ("glove.42B.300d.zip", "glove.6B.zip", "glove.840B.300d.zip",
                   "glove.twitter.27B.zip")


@register
class GloVe(_TokenEmbedding):
    """GloVe vectors (https://nlp.stanford.edu/projects/glove/) from a local file.

    Parameters
    ----------
    pretrained_file_name : str, default 'glove.840B.300d.txt'
        One of :func:`get_pretrained_file_names` ``('glove')``.
    embedding_root : str, default ``$MXNET_HOME/embeddings``
        The file is read from ``embedding_root/glove/pretrained_file_name`` (or extracted from
        the archive MXNet downloads, e.g. ``glove.6B.zip``, in that folder). Never downloaded.
    init_unknown_vec : callable, default nd.zeros
        ``init_unknown_vec(shape=vec_len)`` gives the unknown token's vector when the file has
        none.
    vocabulary : Vocabulary, optional
        Index only this vocabulary's tokens (others in the file are dropped).
    """

    pretrained_file_names = _GLOVE_FILES

    @classmethod
    def _archive_name(cls, pretrained_file_name):
        # the archive MXNet downloads: the one named after the corpus (second dot-field)
        corpus = pretrained_file_name.split(".")[1]
        return {a.split(".")[1]: a for a in _GLOVE_ARCHIVES}[corpus]

    def __init__(self, pretrained_file_name="glove.840B.300d.txt",
                 embedding_root=os.path.join(data_dir(), "embeddings"),
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        GloVe._check_pretrained_file_names(pretrained_file_name)
        super().__init__(**kwargs)
        path = GloVe._local_pretrained_file(embedding_root, pretrained_file_name)
        self._load_embedding(path, " ", init_unknown_vec)
        self._build_embedding_for_vocabulary(vocabulary)


_FASTTEXT_LANGS = (
    "aa ab ace ady af ak als am ang an arc ar arz ast as av ay azb az bar bat_smg ba bcl "
    "be bg bh bi bjn bm bn bo bpy br bs bug bxr ca cbk_zam cdo ceb ce cho chr ch chy ckb "
    "co crh cr csb cs cu cv cy da de diq dsb dv dz ee el eml en eo es et eu ext fa ff "
    "fiu_vro fi fj fo frp frr fr fur fy gag gan ga gd glk gl gn gom got gu gv hak ha haw "
    "he hif hi ho hr hsb ht hu hy hz ia id ie ig ii ik ilo io is it iu jam ja jbo jv kaa "
    "kab ka kbd kg ki kj kk kl km kn koi ko krc kr ksh ks ku kv kw ky lad la lbe lb lez "
    "lg lij li lmo ln lo lrc ltg lt lv mai map_bms mdf mg mhr mh min mi mk ml mn mo mrj "
    "mr ms mt multi.ar multi.bg multi.ca multi.cs multi.da multi.de multi.el multi.en "
    "multi.es multi.et multi.fi multi.fr multi.he multi.hr multi.hu multi.id multi.it "
    "multi.mk multi.nl multi.no multi.pl multi.pt multi.ro multi.ru multi.sk multi.sl "
    "multi.sv multi.tr multi.uk multi.vi mus mwl my myv mzn nah nap na nds_nl nds ne "
    "-news-300d-1M-subword -news-300d-1M new ng nl nn no nov nrm nso nv ny oc olo om or "
    "os pag pam pap pa pcd pdc pfl pih pi pl pms pnb pnt ps pt qu rm rmy rn roa_rup "
    "roa_tara ro rue ru rw sah sa scn sco sc sd se sg sh simple si sk sl sm sn so sq srn "
    "sr ss stq st su sv sw szl ta tcy tet te tg th ti tk tl tn to tpi tr ts tt tum tw ty "
    "tyv udm ug uk ur uz vec vep ve vi vls vo war wa wo wuu xal xh xmf yi yo za zea "
    "zh_classical zh_min_nan zh zh_yue zu ").split()
_FASTTEXT_FILES = ("crawl-300d-2M.vec",) + tuple(
    f"wiki{lang}.vec" if lang.startswith("-") else f"wiki.{lang}.vec" for lang in _FASTTEXT_LANGS)


@register
class FastText(_TokenEmbedding):
    """fastText vectors (https://fasttext.cc/) from a local ``.vec`` file.

    Parameters
    ----------
    pretrained_file_name : str, default 'wiki.simple.vec'
        One of :func:`get_pretrained_file_names` ``('fasttext')``.
    embedding_root : str, default ``$MXNET_HOME/embeddings``
        The file is read from ``embedding_root/fasttext/pretrained_file_name`` (or extracted
        from ``<name>.zip`` in that folder). Never downloaded.
    init_unknown_vec : callable, default nd.zeros
    vocabulary : Vocabulary, optional
    """

    pretrained_file_names = _FASTTEXT_FILES

    def __init__(self, pretrained_file_name="wiki.simple.vec",
                 embedding_root=os.path.join(data_dir(), "embeddings"),
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        FastText._check_pretrained_file_names(pretrained_file_name)
        super().__init__(**kwargs)
        path = FastText._local_pretrained_file(embedding_root, pretrained_file_name)
        self._load_embedding(path, " ", init_unknown_vec)
        self._build_embedding_for_vocabulary(vocabulary)


class CustomEmbedding(_TokenEmbedding):
    """Vectors from a local text file of lines ``token<d>v1<d>v2...<d>vk``.

    A line whose token is ``unknown_token`` gives row 0; a repeated token is skipped (with a
    warning), so is a line with a single value (taken for a header).

    Parameters
    ----------
    pretrained_file_path : str
    elem_delim : str, default ' '
    encoding : str, default 'utf8'
    init_unknown_vec : callable, default nd.zeros
    vocabulary : Vocabulary, optional
        Index only this vocabulary's tokens.
    """

    def __init__(self, pretrained_file_path, elem_delim=" ", encoding="utf8",
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        super().__init__(**kwargs)
        self._load_embedding(pretrained_file_path, elem_delim, init_unknown_vec, encoding)
        self._build_embedding_for_vocabulary(vocabulary)


class CompositeEmbedding(_TokenEmbedding):
    """The tokens of ``vocabulary``, each with the concatenation of its vectors in
    ``token_embeddings`` (one embedding or a list)."""

    def __init__(self, vocabulary, token_embeddings):
        if not isinstance(vocabulary, vocab.Vocabulary):
            raise _TextArgError(f"CompositeEmbedding: vocabulary must be a Vocabulary, got "
                             f"{type(vocabulary).__name__}")
        if not isinstance(token_embeddings, list):
            token_embeddings = [token_embeddings]
        for embed in token_embeddings:
            if not isinstance(embed, _TokenEmbedding):
                raise _TextArgError(f"CompositeEmbedding: token_embeddings must hold token "
                                 f"embeddings, got {type(embed).__name__}")
        self._index_tokens_from_vocabulary(vocabulary)
        self._set_idx_to_vec_by_embeddings(token_embeddings, len(self), self.idx_to_token)


# Names MXNet 1.9.1's module of the same path exposes (programs import them from here).
from . import _constants as C  # noqa: E402,F401
from ... import base, registry  # noqa: E402,F401
from ...util import is_np_array  # noqa: E402,F401
