"""``mxnet.contrib.text._constants``: constants of the text utilities.

MXNet's module also holds the SHA-1 tables of the GloVe/fastText downloads
(``GLOVE_PRETRAINED_FILE_SHA1`` ...); neogluon's embeddings do not verify those archives
against MXNet's tables, so the tables are not provided.
"""
from .vocab import UNKNOWN_IDX  # noqa: F401

APACHE_REPO_URL = "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/"
