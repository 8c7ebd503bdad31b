"""Utilities for Gluon: splitting batches across devices, global-norm clipping, downloads.

Behaviour follows MXNet 1.9.1's ``mxnet.gluon.utils``; the download uses ``requests`` as MXNet
does (the standard library's ``urllib`` where requests is not installed) and writes through a temporary file in the destination directory, so that
a reader never sees a half-written or unverified file.
"""
from __future__ import annotations

import collections
import hashlib
import os
import shutil
import ssl
import urllib.error
import urllib.request
import uuid
import warnings
import weakref

import numpy as np
import torch

from ..base import MXNetError
from ..ndarray.ndarray import NDArray, _new, _run, array as _nd_array

__all__ = ["split_data", "split_and_load", "clip_global_norm", "check_sha1", "download",
           "replace_file"]

# Seconds a stalled connection may stay silent before the attempt counts as failed (and is
# retried); MXNet has no limit, which lets a dead server hang a training script forever.
_SOCKET_TIMEOUT = 60.0
_CHUNK = 1 << 20


def split_data(data, num_slice, batch_axis=0, even_split=True):
    """Split an NDArray into ``num_slice`` slices along ``batch_axis``.

    Parameters
    ----------
    data : NDArray
        A batch of data.
    num_slice : int
        Number of slices wanted.
    batch_axis : int, default 0
        The axis to split along.
    even_split : bool, default True
        Require every slice to have the same size. When True and ``num_slice`` does not divide
        ``data.shape[batch_axis]``, a ``ValueError`` is raised. When False, the first
        ``size % num_slice`` slices get one extra element (slices may be empty).

    Returns
    -------
    list of NDArray
        Always a list, even when ``num_slice`` is 1. The slices are views of ``data``.
    """
    if not isinstance(num_slice, (int, np.integer)) or num_slice < 1:
        raise ValueError(f"num_slice must be a positive integer, got {num_slice!r}")
    shape = data.shape
    if not -len(shape) <= batch_axis < len(shape):
        raise ValueError(f"batch_axis {batch_axis} is out of range for data with shape {shape}")
    size = shape[batch_axis]
    if even_split and size % num_slice != 0:
        raise ValueError(
            f"data with shape {shape} cannot be evenly split into {num_slice} slices along "
            f"axis {batch_axis}. Use a batch size that's multiple of {num_slice} or set "
            "even_split=False to allow uneven partitioning of data.")
    each, extra = divmod(size, num_slice)
    sizes = [each + 1] * extra + [each] * (num_slice - extra)
    if data.stype != "default":
        # Sparse batches are sliced by rows with data[begin:end], as MXNet does.
        if batch_axis != 0:
            raise MXNetError(f"split_data: a {data.stype} array can only be split along axis 0, "
                             f"got batch_axis={batch_axis}")
        bounds = np.cumsum([0] + sizes).tolist()
        return [data[bounds[i]:bounds[i + 1]] for i in range(num_slice)]
    ctx = data._ctx
    parts = _run(torch.split, data._t, sizes, batch_axis)
    return [_new(p, ctx) for p in parts]


def split_and_load(data, ctx_list, batch_axis=0, even_split=True):
    """Split an NDArray into ``len(ctx_list)`` slices and copy each onto one context.

    Parameters
    ----------
    data : NDArray or array-like
        A batch of data (anything else is first converted with ``nd.array`` on
        ``ctx_list[0]``).
    ctx_list : list of Context
        The contexts, one per slice.
    batch_axis : int, default 0
        The axis to split along.
    even_split : bool, default True
        Require every slice to have the same size (see :func:`split_data`).

    Returns
    -------
    list of NDArray
        Slice ``i`` lives on ``ctx_list[i]``.
    """
    if not isinstance(data, NDArray):
        # MXNet 1.x's nd.array makes float32 from any non-NDArray source.
        data = _nd_array(data, ctx=ctx_list[0], dtype="float32")
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    slices = split_data(data, len(ctx_list), batch_axis, even_split)
    return [s.as_in_context(c) for s, c in zip(slices, ctx_list)]


def _sumsq(arr, device, dtype):
    if arr.stype != "default":
        arr = arr.tostype("default")
    t = arr._t.detach()
    if not t.is_floating_point():
        raise MXNetError(f"clip_global_norm: arrays must be floating point, got an array of "
                         f"dtype {arr.dtype.__name__} with shape {arr.shape}")
    t = t.reshape(-1)
    return torch.dot(t, t).to(device, dtype)


def clip_global_norm(arrays, max_norm, check_isfinite=True):
    """Rescale arrays in place so that their global 2-norm is at most ``max_norm``.

    The global norm is ``sqrt(sum_i ||a_i||^2)``; every array is multiplied by
    ``min(1, max_norm / (norm + 1e-8))``.

    Parameters
    ----------
    arrays : list of NDArray
        The arrays (typically gradients) to rescale, possibly on several contexts.
    max_norm : float
        The largest global norm allowed.
    check_isfinite : bool, default True
        Check that the norm is finite and warn when it is not. This copies the norm to the
        host (a synchronisation point).

    Returns
    -------
    float or NDArray
        The global norm before clipping: a numpy float32 when ``check_isfinite`` is True,
        otherwise an NDArray of shape (1,) on the first array's context.
    """
    assert len(arrays) > 0, "clip_global_norm needs at least one array"
    ctx = arrays[0].context
    first = getattr(arrays[0], "_sdata", None)  # a sparse array's stored values
    first = arrays[0]._t if first is None else first
    dev = first.device
    dtype = first.dtype
    with torch.no_grad():
        total = torch.stack([_sumsq(a, dev, dtype) for a in arrays]).sum().sqrt().reshape(1)
        norm = _new(total, ctx)
        if check_isfinite:
            value = norm.asscalar()
            if not np.isfinite(value):
                warnings.warn(UserWarning("nan or inf is detected. Clipping results will be "
                                          "undefined."), stacklevel=2)
        scale = torch.clamp(max_norm / (total + 1e-8), max=1.0)
        for a in arrays:
            t = getattr(a, "_sdata", None)  # scale a sparse array's values in place
            t = a._t if t is None else t
            s = scale if t.device == dev else scale.to(t.device)
            t.mul_(s.to(t.dtype))
    if check_isfinite:
        return value
    return norm


def _copy_to_file(src, dest):
    """Stream the file object ``src`` into ``dest`` atomically (a temporary name, then a
    rename), as archive members are extracted."""
    tmp = f"{dest}.part{os.getpid()}"
    with open(tmp, "wb") as out:
        while True:
            block = src.read(1 << 20)
            if not block:
                break
            out.write(block)
    os.replace(tmp, dest)


def check_sha1(filename, sha1_hash):
    """Whether the SHA-1 of a file's content equals ``sha1_hash`` (hex digits).

    Parameters
    ----------
    filename : str
        Path to the file.
    sha1_hash : str
        Expected SHA-1 hash in hexadecimal digits.

    Returns
    -------
    bool
    """
    h = hashlib.sha1()
    with open(filename, "rb") as f:
        for block in iter(lambda: f.read(_CHUNK), b""):
            h.update(block)
    return h.hexdigest() == sha1_hash


def replace_file(src, dst):
    """Atomically move ``src`` onto ``dst`` (both on one file system).

    On failure ``src`` is removed and an ``OSError`` names both paths.
    """
    try:
        os.replace(src, dst)
    except OSError as err:
        try:
            os.remove(src)
        except OSError:
            pass
        raise OSError(f"Moving downloaded temp file - {src}, to {dst} failed: {err}. "
                      "Please retry the download.") from None


def _fetch(url, tmp, verify_ssl):
    try:
        import requests
    except ImportError:
        requests = None
    if requests is not None:
        # MXNet downloads with requests: programs that configure or patch ``requests.get``
        # (proxies, mocks in tests) see the same calls here.
        resp = requests.get(url, stream=True, verify=verify_ssl, timeout=_SOCKET_TIMEOUT)
        if resp.status_code != 200:
            raise RuntimeError(f"Failed downloading url {url}: HTTP status {resp.status_code}")
        with open(tmp, "wb") as f:
            for chunk in resp.iter_content(chunk_size=_CHUNK):
                if chunk:
                    f.write(chunk)
        return
    context = None
    if url.lower().startswith("https") and not verify_ssl:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    try:
        resp = urllib.request.urlopen(url, timeout=_SOCKET_TIMEOUT, context=context)
    except urllib.error.HTTPError as err:
        raise RuntimeError(f"Failed downloading url {url}: HTTP status {err.code}") from None
    with resp:
        status = getattr(resp, "status", 200)
        if status != 200:
            raise RuntimeError(f"Failed downloading url {url}: HTTP status {status}")
        with open(tmp, "wb") as f:
            shutil.copyfileobj(resp, f, _CHUNK)


def download(url, path=None, overwrite=False, sha1_hash=None, retries=5, verify_ssl=True):
    """Download a URL to a file.

    Parameters
    ----------
    url : str
        The URL to download.
    path : str, optional
        Destination file, or a directory to put the file in. By default the file goes to the
        current directory, named after the last component of ``url``.
    overwrite : bool, default False
        Download even when the destination exists.
    sha1_hash : str, optional
        Expected SHA-1 (hex). An existing file whose hash differs is downloaded again, and a
        download whose hash differs is rejected (and retried).
    retries : int, default 5
        How many attempts to make in all (at least one) before the last error is raised.
    verify_ssl : bool, default True
        Verify HTTPS certificates. ``False`` warns.

    Returns
    -------
    str
        The path of the downloaded file.

    Notes
    -----
    Each attempt writes to a uniquely named temporary file next to the destination and moves
    it into place with an atomic rename only after its hash checked out, so concurrent
    downloads of one file leave exactly one complete copy and a failed attempt leaves no
    partial file behind.
    """
    if path is None:
        fname = url.split("/")[-1]
        assert fname, ("Can't construct file-name from this URL. Please set the `path` "
                       "option manually.")
    else:
        path = os.path.expanduser(path)
        fname = os.path.join(path, url.split("/")[-1]) if os.path.isdir(path) else path
    assert retries >= 0, f"Number of retries should be at least 0, currently it's {retries}"

    if not verify_ssl:
        warnings.warn("Unverified HTTPS request is being made (verify_ssl=False). Adding "
                      "certificate verification is strongly advised.")

    def _good(p):
        return os.path.exists(p) and (not sha1_hash or check_sha1(p, sha1_hash))

    if not overwrite and _good(fname):
        return fname
    dirname = os.path.dirname(os.path.abspath(fname))
    os.makedirs(dirname, exist_ok=True)
    attempts_left = retries
    while True:
        tmp = f"{fname}.{uuid.uuid4()}"
        try:
            print(f"Downloading {fname} from {url}...")
            _fetch(url, tmp, verify_ssl)
            if sha1_hash and not check_sha1(tmp, sha1_hash):
                raise UserWarning(
                    f"File {fname} is downloaded but the content hash does not match. The "
                    "repo may be outdated or download may be incomplete. If the \"repo_url\" "
                    "is overridden, consider switching to the default repo.")
            if not overwrite and _good(fname):
                # Another process finished the same download first: keep its copy.
                os.remove(tmp)
                warnings.warn(f"File {fname} exists in file system so the downloaded file is "
                              "deleted")
            else:
                replace_file(tmp, fname)
            return fname
        except Exception as err:  # noqa: BLE001 - every failure is retried, as MXNet does
            if os.path.exists(tmp):
                try:
                    os.remove(tmp)
                except OSError:
                    pass
            attempts_left -= 1
            if attempts_left <= 0:
                raise
            print(f"download failed due to {err!r}, retrying, {attempts_left} "
                  f"attempt{'s' if attempts_left > 1 else ''} left")


def _get_repo_url():
    """Base URL of the Gluon dataset and model repository (``MXNET_GLUON_REPO``)."""
    repo = os.environ.get("MXNET_GLUON_REPO",
                          "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/")
    return repo if repo.endswith("/") else repo + "/"


def _get_repo_file_url(namespace, filename):
    """URL of a file in the Gluon repository."""
    return f"{_get_repo_url()}{namespace}/{filename}"


def _indent(s_, num_spaces):
    """Indent every line but the first of ``s_`` by ``num_spaces`` spaces."""
    lines = s_.split("\n")
    if len(lines) == 1:
        return s_
    return "\n".join([lines[0]] + [" " * num_spaces + line for line in lines[1:]])


def _brief_print_list(lst, limit=7):
    """Quoted, comma-separated items of ``lst``, eliding the middle beyond ``limit``."""
    lst = list(lst)
    if len(lst) > limit:
        return (_brief_print_list(lst[:limit // 2], limit) + ", ..., "
                + _brief_print_list(lst[-limit // 2:], limit))
    return ", ".join(f"'{item}'" for item in lst)


class HookHandle:
    """A handle that attaches a hook to a dict of hooks and can detach it again."""

    def __init__(self):
        self._hooks_dict_ref = None
        self._id = None

    def attach(self, hooks_dict, hook):
        assert not self._hooks_dict_ref, "The same handle cannot be attached twice."
        self._id = id(hook)
        hooks_dict[self._id] = hook
        self._hooks_dict_ref = weakref.ref(hooks_dict)

    def detach(self):
        hooks = self._hooks_dict_ref() if self._hooks_dict_ref is not None else None
        if hooks is not None and self._id in hooks:
            del hooks[self._id]

    def __getstate__(self):
        return (self._hooks_dict_ref() if self._hooks_dict_ref is not None else None, self._id)

    def __setstate__(self, state):
        hooks = state[0] if state[0] is not None else collections.OrderedDict()
        # Keep an otherwise unreferenced placeholder alive as long as the handle.
        self._placeholder = hooks if state[0] is None else None
        self._hooks_dict_ref = weakref.ref(hooks)
        self._id = state[1]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.detach()


def shape_is_known(shape):
    """Whether every dimension of ``shape`` is known (MXNet 1.x marks unknown ones with 0)."""
    if shape is None:
        return False
    if len(shape) == 0:
        return False
    for dim in shape:
        if dim == 0:
            return False
        assert dim > 0, f"shape dimension size cannot be less than 0, while received {dim}"
    return True
