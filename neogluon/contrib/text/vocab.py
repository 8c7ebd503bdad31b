"""Token indexing: :class:`Vocabulary`."""
from __future__ import annotations

import collections

from ...base import MXNetError

__all__ = ["Vocabulary"]

UNKNOWN_IDX = 0


class _TextArgError(MXNetError, AssertionError):
    """A bad argument or input line; also an AssertionError, which MXNet 1.9.1 raises there."""


class Vocabulary:
    """Index the unknown token (always index 0), the reserved tokens (next, in the given
    order) and the keys of a counter (by decreasing frequency, ties in ascending key order).

    Parameters
    ----------
    counter : collections.Counter, optional
        Token frequencies; its keys are indexed subject to ``most_freq_count`` and
        ``min_freq``.
    most_freq_count : int, optional
        At most this many counter keys are indexed (reserved tokens not counted).
    min_freq : int, default 1
        Keys seen fewer times are left out.
    unknown_token : hashable, default '<unk>'
        What any token not in the vocabulary maps to.
    reserved_tokens : list, optional
        Always indexed (e.g. padding, BOS, EOS); no duplicates, not ``unknown_token``.

    Examples
    --------
    >>> v = Vocabulary(collections.Counter(['a', 'b', 'b']), reserved_tokens=['<pad>'])
    >>> v.idx_to_token
    ['<unk>', '<pad>', 'b', 'a']
    >>> v.to_indices(['b', 'zzz'])
    [2, 0]
    """

    def __init__(self, counter=None, most_freq_count=None, min_freq=1, unknown_token="<unk>",
                 reserved_tokens=None):
        if min_freq <= 0:
            raise _TextArgError(f"Vocabulary: min_freq must be positive, got {min_freq}")
        if reserved_tokens is not None:
            reserved = set(reserved_tokens)
            if unknown_token in reserved:
                raise _TextArgError(f"Vocabulary: reserved_tokens contains the unknown_token "
                                 f"{unknown_token!r}")
            if len(reserved) != len(reserved_tokens):
                dup = [t for t, n in collections.Counter(reserved_tokens).items() if n > 1]
                raise _TextArgError(f"Vocabulary: duplicate reserved tokens {dup}")
        self._unknown_token = unknown_token
        self._reserved_tokens = None if reserved_tokens is None else list(reserved_tokens)
        self._idx_to_token = [unknown_token] + list(reserved_tokens or [])
        self._token_to_idx = {t: i for i, t in enumerate(self._idx_to_token)}
        if counter is not None:
            self._index_counter(counter, most_freq_count, min_freq)

    def _index_counter(self, counter, most_freq_count, min_freq):
        if not isinstance(counter, collections.Counter):
            raise _TextArgError(f"Vocabulary: counter must be a collections.Counter, got "
                             f"{type(counter).__name__}")
        special = set(self._idx_to_token)
        # The cap counts the special tokens once, as MXNet does (a counter key equal to a
        # reserved token takes a slot of the cap without being added).
        cap = len(special) + (len(counter) if most_freq_count is None else most_freq_count)
        ranked = sorted(counter.items(), key=lambda kv: kv[0])
        ranked.sort(key=lambda kv: kv[1], reverse=True)
        for token, freq in ranked:
            if freq < min_freq or len(self._idx_to_token) == cap:
                break
            if token not in special:
                self._token_to_idx[token] = len(self._idx_to_token)
                self._idx_to_token.append(token)

    def __len__(self):
        return len(self._idx_to_token)

    @property
    def token_to_idx(self):
        """dict: token -> index."""
        return self._token_to_idx

    @property
    def idx_to_token(self):
        """list: index -> token."""
        return self._idx_to_token

    @property
    def unknown_token(self):
        return self._unknown_token

    @property
    def reserved_tokens(self):
        return self._reserved_tokens

    def to_indices(self, tokens):
        """Index of a token, or list of indices of a list of tokens (unknown tokens -> 0)."""
        single = not isinstance(tokens, list)
        seq = [tokens] if single else tokens
        out = [self._token_to_idx.get(t, UNKNOWN_IDX) for t in seq]
        return out[0] if single else out

    def to_tokens(self, indices):
        """Token of an index, or list of tokens of a list of indices.

        Raises
        ------
        ValueError
            For an index that is not an int or is past the end (MXNet raises ValueError too).
        """
        single = not isinstance(indices, list)
        seq = [indices] if single else indices
        last = len(self._idx_to_token) - 1
        out = []
        for idx in seq:
            if not isinstance(idx, int) or idx > last:
                raise ValueError(f"Token index {idx!r} in the provided `indices` is invalid "
                                 f"(the vocabulary has {last + 1} tokens).")
            out.append(self._idx_to_token[idx])
        return out[0] if single else out


# Names MXNet 1.9.1's module of the same path exposes (programs import them from here).
from . import _constants as C  # noqa: E402,F401
