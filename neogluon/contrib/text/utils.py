"""Text helpers: counting tokens."""
from __future__ import annotations

import collections
import re

__all__ = ["count_tokens_from_str"]


def count_tokens_from_str(source_str, token_delim=" ", seq_delim="\n", to_lower=False,
                          counter_to_update=None):
    """Count the tokens of ``source_str``.

    ``token_delim`` and ``seq_delim`` are regular expressions (escape special characters,
    e.g. ``'\\*'``); the string is split on either and empty pieces are dropped.

    Parameters
    ----------
    source_str : str
    token_delim : str, default ' '
    seq_delim : str, default '\\n'
    to_lower : bool, default False
        Count lower-cased tokens.
    counter_to_update : collections.Counter, optional
        Updated in place and returned; a new Counter otherwise.

    Returns
    -------
    collections.Counter

    Examples
    --------
    >>> count_tokens_from_str(' Life is great ! \\n life is good . \\n', ' ', '\\n', True)
    Counter({'life': 2, 'is': 2, 'great': 1, '!': 1, 'good': 1, '.': 1})
    """
    tokens = [t for t in re.split(f"{token_delim}|{seq_delim}", source_str) if t]
    if to_lower:
        tokens = [t.lower() for t in tokens]
    if counter_to_update is None:
        return collections.Counter(tokens)
    counter_to_update.update(tokens)
    return counter_to_update
