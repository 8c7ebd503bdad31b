"""gluon.utils against MXNet 1.9.1 fixtures (tools/gen_utils_fixtures.py) and a local server."""
import hashlib
import http.server
import io
import json
import os
import threading
import time
import warnings

import numpy as np
import pytest

import neogluon as mx
from neogluon import autograd, gluon, nd
from neogluon.gluon import utils


@pytest.fixture(scope="module")
def fx():
    base = os.path.join(os.path.dirname(__file__), "fixtures", "utils")
    with open(os.path.join(base, "utils.json")) as f:
        meta = json.load(f)
    return meta, np.load(os.path.join(base, "utils.npz"))


# ---------------------------------------------------------------- split_data / split_and_load
def test_split_data_matches_mxnet(fx):
    meta, arr = fx
    for i, case in enumerate(meta["split"]):
        x = nd.array(arr[f"split{i}_in"])
        if "error" in case:
            with pytest.raises(ValueError) as err:
                utils.split_data(x, case["num"], case["axis"], case["even"])
            assert str(err.value) == case["message"]
            continue
        parts = utils.split_data(x, case["num"], case["axis"], case["even"])
        assert isinstance(parts, list)
        assert [list(p.shape) for p in parts] == case["shapes"]
        for j, p in enumerate(parts):
            np.testing.assert_array_equal(p.asnumpy(), arr[f"split{i}_out{j}"])


def test_split_and_load_matches_mxnet(fx):
    meta, _ = fx
    ref = meta["split_and_load_numpy"]
    out = utils.split_and_load(np.arange(8, dtype=np.float64).reshape(4, 2),
                               [mx.cpu(0), mx.cpu(1)])
    assert [np.dtype(o.dtype).name for o in out] == ref["dtypes"]
    assert [str(o.context) for o in out] == ref["ctx"]
    assert [o.asnumpy().tolist() for o in out] == ref["values"]
    ref = meta["split_and_load_single"]
    out = utils.split_and_load(nd.arange(6).reshape((3, 2)), [mx.cpu(3)])
    assert len(out) == 1 and list(out[0].shape) == ref["shape"]
    assert str(out[0].context) == ref["ctx"]
    ref = meta["split_and_load_error"]
    with pytest.raises(ValueError) as err:
        utils.split_and_load(nd.arange(6).reshape((3, 2)), [mx.cpu(0), mx.cpu(1)])
    assert str(err.value) == ref["message"]
    out = utils.split_and_load(nd.arange(6).reshape((3, 2)), [mx.cpu(0), mx.cpu(1)],
                               even_split=False)
    assert [o.shape for o in out] == [(2, 2), (1, 2)]


def test_split_data_keeps_gradient_path():
    x = nd.arange(8).reshape((4, 2))
    x.attach_grad()
    with autograd.record():
        parts = utils.split_data(x, 2)
        loss = (parts[0] * 2).sum() + (parts[1] * 3).sum()
    loss.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [[2, 2], [2, 2], [3, 3], [3, 3]])


def test_split_data_bad_arguments():
    x = nd.zeros((4, 2))
    with pytest.raises(ValueError, match="num_slice"):
        utils.split_data(x, 0)
    with pytest.raises(ValueError, match="batch_axis 2"):
        utils.split_data(x, 2, batch_axis=2)


# ---------------------------------------------------------------- clip_global_norm
def test_clip_global_norm_matches_mxnet(fx):
    meta, arr = fx
    for i, case in enumerate(meta["clip"]):
        nds = [nd.array(arr[f"clip{i}_in{j}"]) for j in range(len(case["shapes"]))]
        norm = utils.clip_global_norm(nds, case["max_norm"], check_isfinite=case["check"])
        if case["norm_type"] == "NDArray":
            assert isinstance(norm, nd.NDArray) and list(norm.shape) == case["norm_shape"]
            norm = norm.asnumpy()[0]
        else:
            assert type(norm).__name__ == case["norm_type"]
        np.testing.assert_allclose(norm, case["norm"], rtol=1e-6)
        for j, a in enumerate(nds):
            np.testing.assert_allclose(a.asnumpy(), arr[f"clip{i}_out{j}"], rtol=1e-6, atol=1e-7)


def test_clip_global_norm_nonfinite_warns(fx):
    meta, _ = fx
    ref = meta["clip_nan"]
    nds = [nd.array([np.nan, 1.0]), nd.array([2.0])]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        norm = utils.clip_global_norm(nds, 1.0)
    assert np.isnan(norm) == ref["norm_is_nan"]
    assert [str(x.message) for x in w] == ref["warnings"]
    assert [x.category.__name__ for x in w] == ref["categories"]
    assert w[0].filename == __file__  # stacklevel points at the caller
    got = [np.where(np.isnan(a.asnumpy()), -999.0, a.asnumpy()).tolist() for a in nds]
    assert got == ref["out"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        utils.clip_global_norm([nd.array([np.inf])], 1.0, check_isfinite=False)
    with pytest.raises(AssertionError):
        utils.clip_global_norm([], 1.0)


def test_clip_global_norm_in_place_and_multi_context():
    a = nd.array([3.0, 0.0], ctx=mx.cpu(0))
    b = nd.array([[4.0]], ctx=mx.cpu(1))
    keep = a
    norm = utils.clip_global_norm([a, b], 1.0)
    assert keep is a
    np.testing.assert_allclose(norm, 5.0)
    np.testing.assert_allclose(a.asnumpy(), [0.6, 0.0], rtol=1e-6)
    np.testing.assert_allclose(b.asnumpy(), [[0.8]], rtol=1e-6)
    assert b.context == mx.cpu(1)
    # gradients of parameters (attached variables) are clipped in place too
    w = nd.array([6.0, 8.0])
    w.attach_grad()
    with autograd.record():
        y = (w * w).sum()
    y.backward()
    g = w.grad
    norm = utils.clip_global_norm([w.grad], 10.0)
    np.testing.assert_allclose(norm, 20.0)
    assert g is w.grad
    np.testing.assert_allclose(w.grad.asnumpy(), [6.0, 8.0], rtol=1e-6)


def test_clip_global_norm_rejects_integer_arrays():
    with pytest.raises(mx.MXNetError, match="floating point"):
        utils.clip_global_norm([nd.array([1, 2], dtype="int32")], 1.0)


# ---------------------------------------------------------------- check_sha1 / download
def test_check_sha1(tmp_path):
    p = tmp_path / "f.bin"
    p.write_bytes(b"neogluon" * 1000)
    assert utils.check_sha1(str(p), hashlib.sha1(b"neogluon" * 1000).hexdigest())
    assert not utils.check_sha1(str(p), hashlib.sha1(b"other").hexdigest())


PAYLOAD = os.urandom(200_000)
PAYLOAD_SHA1 = hashlib.sha1(PAYLOAD).hexdigest()


class _Handler(http.server.BaseHTTPRequestHandler):
    hits = {}
    lock = threading.Lock()

    def log_message(self, *args):  # keep test output quiet
        pass

    def do_GET(self):  # noqa: N802 - http.server's name
        with self.lock:
            n = self.hits[self.path] = self.hits.get(self.path, 0) + 1
        if self.path.startswith("/missing"):
            self.send_error(404)
            return
        if self.path.startswith("/flaky") and n <= 2:
            self.send_error(503)
            return
        body = b"not the right content" if self.path.startswith("/wrong") else PAYLOAD
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        slow = self.path.startswith("/slow")
        for i in range(0, len(body), 50_000):
            self.wfile.write(body[i:i + 50_000])
            if slow:
                time.sleep(0.01)


@pytest.fixture(scope="module")
def server():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.daemon_threads = True
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}", _Handler.hits
    srv.shutdown()
    srv.server_close()
    thread.join(5)


def _leftovers(d):
    return sorted(os.listdir(d))


def test_download_to_dir_and_file(server, tmp_path, capsys):
    base, hits = server
    out = utils.download(f"{base}/data/a.bin", path=str(tmp_path))
    assert out == os.path.join(str(tmp_path), "a.bin")
    assert open(out, "rb").read() == PAYLOAD
    target = tmp_path / "sub" / "b.bin"
    out = utils.download(f"{base}/data/a.bin", path=str(target), sha1_hash=PAYLOAD_SHA1)
    assert out == str(target) and target.read_bytes() == PAYLOAD
    assert _leftovers(tmp_path) == ["a.bin", "sub"] and _leftovers(tmp_path / "sub") == ["b.bin"]
    assert "Downloading" in capsys.readouterr().out


def test_download_skips_existing_and_replaces_bad_hash(server, tmp_path):
    base, hits = server
    target = tmp_path / "c.bin"
    target.write_bytes(b"old")
    n = hits.get("/skip/c.bin", 0)
    utils.download(f"{base}/skip/c.bin", path=str(target))
    assert target.read_bytes() == b"old" and hits.get("/skip/c.bin", 0) == n
    # a hash that the existing file does not have forces a fresh download
    utils.download(f"{base}/skip/c.bin", path=str(target), sha1_hash=PAYLOAD_SHA1)
    assert target.read_bytes() == PAYLOAD
    target.write_bytes(b"old")
    utils.download(f"{base}/skip/c.bin", path=str(target), overwrite=True)
    assert target.read_bytes() == PAYLOAD


def test_download_retries_then_succeeds(server, tmp_path, capsys):
    base, hits = server
    out = utils.download(f"{base}/flaky/d.bin", path=str(tmp_path), retries=3)
    assert open(out, "rb").read() == PAYLOAD
    assert hits["/flaky/d.bin"] == 3
    assert capsys.readouterr().out.count("retrying") == 2
    assert _leftovers(tmp_path) == ["d.bin"]


def test_download_gives_up_after_retries(server, tmp_path):
    base, hits = server
    with pytest.raises(RuntimeError, match="Failed downloading url .*missing/e.bin"):
        utils.download(f"{base}/missing/e.bin", path=str(tmp_path), retries=3)
    assert hits["/missing/e.bin"] == 3
    with pytest.raises(RuntimeError):
        utils.download(f"{base}/missing/e2.bin", path=str(tmp_path), retries=0)
    assert hits["/missing/e2.bin"] == 1
    assert _leftovers(tmp_path) == []
    with pytest.raises(AssertionError, match="at least 0"):
        utils.download(f"{base}/missing/e3.bin", path=str(tmp_path), retries=-1)


def test_download_hash_mismatch_leaves_nothing(server, tmp_path):
    base, hits = server
    with pytest.raises(UserWarning, match="content hash does not match"):
        utils.download(f"{base}/wrong/f.bin", path=str(tmp_path), sha1_hash=PAYLOAD_SHA1,
                       retries=2)
    assert hits["/wrong/f.bin"] == 2
    assert _leftovers(tmp_path) == []


def test_download_verify_ssl_false_warns(server, tmp_path):
    base, _ = server
    with pytest.warns(UserWarning, match="verify_ssl=False"):
        utils.download(f"{base}/data/g.bin", path=str(tmp_path), verify_ssl=False)
    assert (tmp_path / "g.bin").read_bytes() == PAYLOAD


def test_concurrent_downloads_leave_one_good_copy(server, tmp_path):
    base, _ = server
    target = str(tmp_path / "h.bin")
    errors = []

    def work():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                utils.download(f"{base}/slow/h.bin", path=target, sha1_hash=PAYLOAD_SHA1,
                               overwrite=True)
        except Exception as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    seen = []
    while any(t.is_alive() for t in threads):
        # a reader never observes a partial file at the destination
        if os.path.exists(target):
            seen.append(open(target, "rb").read() == PAYLOAD)
        time.sleep(0.005)
    for t in threads:
        t.join()
    assert not errors
    assert all(seen)
    assert _leftovers(tmp_path) == ["h.bin"]
    assert utils.check_sha1(target, PAYLOAD_SHA1)


def test_download_default_path_is_cwd(server, tmp_path, monkeypatch):
    base, _ = server
    monkeypatch.chdir(tmp_path)
    assert utils.download(f"{base}/data/i.bin") == "i.bin"
    assert (tmp_path / "i.bin").read_bytes() == PAYLOAD
    with pytest.raises(AssertionError, match="file-name"):
        utils.download(f"{base}/data/")


def test_utils_reexported_from_gluon():
    assert gluon.utils.split_and_load is utils.split_and_load
    assert set(utils.__all__) >= {"split_data", "split_and_load", "clip_global_norm",
                                  "check_sha1", "download"}


@pytest.mark.skipif(mx.num_gpus() == 0, reason="needs a CUDA GPU")
def test_split_and_load_and_clip_on_gpu():
    x = nd.arange(12).reshape((6, 2))
    parts = utils.split_and_load(x, [mx.cpu(0), mx.gpu(0)])
    assert [p.context for p in parts] == [mx.cpu(0), mx.gpu(0)]
    np.testing.assert_array_equal(parts[1].asnumpy(), x.asnumpy()[3:])
    a = nd.array([3.0, 0.0], ctx=mx.gpu(0))
    b = nd.array([[4.0]], ctx=mx.cpu(0))
    norm = utils.clip_global_norm([a, b], 1.0)
    np.testing.assert_allclose(norm, 5.0, rtol=1e-6)
    np.testing.assert_allclose(a.asnumpy(), [0.6, 0.0], rtol=1e-6)
    np.testing.assert_allclose(b.asnumpy(), [[0.8]], rtol=1e-6)


def test_download_attempts_match_mxnet(fx, server, tmp_path, capsys):
    """Attempts per ``retries`` and the errors raised are MXNet's (recorded against a local
    server). Unlike MXNet, a download whose hash does not match is not left in place."""
    meta, _ = fx
    base, hits = server
    for kind in ("missing", "wrong"):
        for retries in (0, 1, 2, 3, 5):
            ref = meta["download"][f"{kind}_{retries}"]
            path = f"/{kind}/cmp{retries}.bin"
            exc = RuntimeError if ref["error"] == "RuntimeError" else UserWarning
            with pytest.raises(exc):
                utils.download(base + path, path=str(tmp_path), retries=retries,
                               sha1_hash="0" * 40)
            assert hits[path] == ref["hits"], (kind, retries)
    assert os.listdir(tmp_path) == []


def test_download_goes_through_requests_get(monkeypatch, tmp_path):
    # MXNet downloads with requests.get; programs (and MXNet's own tests) patch it.
    requests = pytest.importorskip("requests")
    calls = []

    class _Resp(requests.Response):
        def __init__(self):
            super().__init__()
            self.status_code = 200
            self.raw = io.BytesIO(b"MOCK CONTENT" * 100)

    def fake_get(url, **kwargs):
        calls.append((url, kwargs.get("verify")))
        return _Resp()

    monkeypatch.setattr(requests, "get", fake_get)
    out = utils.download("https://example.invalid/README.md", path=str(tmp_path),
                         verify_ssl=False)
    assert calls == [("https://example.invalid/README.md", False)]
    with open(out, "rb") as f:
        assert f.read() == b"MOCK CONTENT" * 100


def test_download_without_requests_uses_urllib(monkeypatch, server, tmp_path):
    import sys
    monkeypatch.setitem(sys.modules, "requests", None)
    base, _ = server
    out = utils.download(f"{base}/data/nr.bin", path=str(tmp_path))
    with open(out, "rb") as f:
        assert f.read() == PAYLOAD
    with pytest.raises(RuntimeError, match="HTTP status 404"):
        utils.download(f"{base}/missing/nr2.bin", path=str(tmp_path), retries=1)
