"""``mx.contrib.text``: token counting, vocabularies and token embeddings."""
from . import utils
from . import vocab
from . import embedding

__all__ = ["utils", "vocab", "embedding"]
