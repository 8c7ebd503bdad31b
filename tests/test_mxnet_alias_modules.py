"""`import mxnet.X` under the alias gives neogluon.X itself, never a second copy."""
import subprocess
import sys
import textwrap


def test_alias_submodules_are_the_neogluon_modules(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""
        import sys
        import mxnet as mx
        from mxnet.test_utils import assert_almost_equal
        import mxnet.gluon.data
        import neogluon, neogluon.base
        assert mx is neogluon
        assert mx.base.MXNetError is neogluon.base.MXNetError
        dup = [k for k in sys.modules if k.startswith('mxnet.')
               and sys.modules[k] is not sys.modules.get('neogluon' + k[5:])]
        assert not dup, dup
        try:
            mx.image.imdecode(b'', to_rgb=0)
        except mx.base.MXNetError:
            print('ok')
    """))
    out = subprocess.run([sys.executable, "-m", "neogluon.run", str(script)],
                         capture_output=True, text=True, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
