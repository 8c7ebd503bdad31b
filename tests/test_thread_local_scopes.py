"""Thread-local scopes as MXNet 1.9.1 keeps them: NameManager.current and
_NumpyArrayScope._current are per thread, also when a program assigns to them."""
import threading

import neogluon as mx
from neogluon.name import NameManager, Prefix
from neogluon.util import _NumpyArrayScope


def _in_thread(fn):
    out = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    return out[0]


def test_name_manager_current_assignment_is_per_thread():
    old = NameManager.current
    try:
        mine = NameManager()
        NameManager.current = mine            # MXNet's deprecated class-level setter
        assert NameManager.current is mine
        # another thread keeps its own manager, and a Prefix scope there still names
        assert _in_thread(lambda: NameManager.current) is not mine

        def named():
            with Prefix("spawned_"):
                return NameManager.current.get(None, "hello")
        assert _in_thread(named) == "spawned_hello0"
        with Prefix("p_"):
            assert NameManager.current.get(None, "x") == "p_x0"
        assert NameManager.current is mine
    finally:
        NameManager.current = old


def test_numpy_array_scope_is_per_thread():
    assert not mx.is_np_array()
    scopes = [_NumpyArrayScope(False), _in_thread(lambda: _NumpyArrayScope(True))]
    assert not scopes[0]._is_np_array and scopes[1]._is_np_array
    with mx.np_array(True):
        assert mx.is_np_array()
        assert _NumpyArrayScope._current.value._is_np_array
        assert _in_thread(mx.is_np_array) is False
        with mx.np_array(False):
            assert not mx.is_np_array()
        assert mx.is_np_array()
    assert not mx.is_np_array()
