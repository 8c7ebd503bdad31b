"""Shared facts about the conformance suite: where it lives, which files it has, how a junit
report becomes per-test outcomes. Used by conformance/run.py and tools/gen_conformance_baseline.py."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("NEOGLUON_MXNET_TESTS",
                        os.path.join(os.path.dirname(ROOT), "shared", "mxnet-tests"))
UNITTEST_DIR = os.path.join(SHARED, "unittest")

HANDED_FILES = [
    "test_autograd.py", "test_contrib_autograd.py", "test_contrib_optimizer.py",
    "test_exc_handling.py", "test_gluon.py", "test_gluon_batch_processor.py",
    "test_gluon_contrib.py", "test_gluon_data.py", "test_gluon_data_vision.py",
    "test_gluon_estimator.py", "test_gluon_event_handler.py", "test_gluon_model_zoo.py",
    "test_gluon_rnn.py", "test_gluon_save.py", "test_gluon_trainer.py", "test_gluon_utils.py",
    "test_image.py", "test_init.py", "test_kvstore.py", "test_kvstore_custom.py", "test_loss.py",
    "test_metric.py", "test_ndarray.py", "test_optimizer.py", "test_random.py",
    "test_sparse_ndarray.py", "test_test_utils.py",
]

# MXNet 1.x's symbolic half (executors, Module, the legacy mx.rnn, attributes, visualisation,
# SVRG), handed over with issue 30.
SYMBOLIC_FILES = [
    "test_attr.py", "test_contrib_svrg_module.py", "test_contrib_svrg_optimizer.py",
    "test_executor.py", "test_infer_shape.py", "test_infer_type.py", "test_model_parallel.py",
    "test_module.py", "test_multi_device_exec.py", "test_rnn.py", "test_symbol.py", "test_viz.py",
]

# tests/python/train: small end-to-end trainings. They run from inside train/ (their common.py
# puts ../common on the path) and read MNIST/CIFAR-10 from data/ there, which
# tools/make_example_data.py makes locally (they would download it). Their ids carry the
# folder ("train/test_autograd.py::test_autograd"): unittest/ has files of the same names.
TRAIN_DIR_NAME = "train"
TRAIN_FILES = [
    "train/test_autograd.py", "train/test_bucketing.py", "train/test_conv.py",
    "train/test_dtype.py", "train/test_mlp.py", "train/test_resnet_aug.py",
    "train/test_sparse_fm.py",
]

# The rest of MXNet 1.9.1's unit tests but the NumPy interface's (issue 31): the operator
# suite, its contrib/sparse/higher-order/control-flow files, io, recordio, profiler, engine,
# runtime, dlpack, subgraph and the small contrib operator files.
OPERATOR_FILES = [
    "test_base.py", "test_contrib_control_flow.py", "test_contrib_hawkesll.py",
    "test_contrib_intgemm.py", "test_contrib_io.py", "test_contrib_krprod.py",
    "test_contrib_operator.py", "test_contrib_stes_op.py", "test_contrib_text.py",
    "test_dgl_graph.py", "test_dlpack.py", "test_dynamic_shape.py", "test_engine.py",
    "test_engine_import.py", "test_extensions.py", "test_higher_order_grad.py", "test_io.py",
    "test_metric_perf.py", "test_operator.py", "test_predictor.py", "test_profiler.py",
    "test_recordio.py", "test_runtime.py", "test_sparse_operator.py", "test_subgraph.py",
    "test_subgraph_op.py", "test_thread_local.py", "test_tvm_op.py",
]

# MXNet's NumPy interface (issue 33): mx.np arrays, operators, NumPy-mode Gluon and NumPy's
# dispatch protocols.
NUMPY_FILES = [
    "test_numpy_ndarray.py", "test_numpy_op.py", "test_numpy_gluon.py",
    "test_numpy_interoperability.py",
]

ALL_FILES = HANDED_FILES + SYMBOLIC_FILES + OPERATOR_FILES + NUMPY_FILES + TRAIN_FILES

# The sizes of the locally made data for the train tests: MNIST's own (test_mlp checks that a
# prediction over the test set has 10,000 rows); CIFAR-10 smaller than the real 50,000/10,000
# (the tests train one epoch and check accuracy > 0.08, which any size shows).
TRAIN_DATA_ARGS = ["--what", "mnist,cifar", "--mnist-train", "60000", "--mnist-test", "10000",
                   "--cifar-train", "10000", "--cifar-test", "2000"]


def split_name(name: str):
    """"train/test_x.py" -> ("train", "test_x.py"); "test_x.py" -> ("unittest", "test_x.py")."""
    folder, sep, base = name.rpartition("/")
    return (folder, base) if sep else ("unittest", name)


def copy_suite(dest: str) -> str:
    """Copy the handed suite (tests, harness, data files) to ``dest``; return its unittest dir.

    MXNet's tests write files into their working directory (``tmp.params``, exported models,
    ``data/``). Each file runs in a fresh copy, so runs neither leave files in the shared,
    read-only suite nor see files an earlier run or another file left there. ``common/`` and
    ``train/`` come along: the unit tests import from both (test_module.py imports
    train/test_bucketing.py)."""
    unittest_dir = os.path.join(dest, "unittest")
    os.makedirs(unittest_dir)
    for entry in os.listdir(UNITTEST_DIR):
        if entry.endswith(".py") or entry == "legacy_ndarray.v0":
            shutil.copy2(os.path.join(UNITTEST_DIR, entry), unittest_dir)
    for folder in ("common", TRAIN_DIR_NAME):
        src = os.path.join(SHARED, folder)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(dest, folder),
                            ignore=shutil.ignore_patterns("__pycache__", "data"))
    return unittest_dir


def data_python() -> str:
    """The interpreter that runs tools/make_example_data.py: it needs numpy, torch, scikit-learn
    and neogluon, which the project's venv has (the MXNet reference venv need not)."""
    venv = os.path.join(ROOT, ".venv", "bin", "python")
    return venv if os.path.exists(venv) else sys.executable


def ensure_train_data() -> str:
    """Make (once; later calls find it) the train tests' data; return the folder holding
    ``data/``. NEOGLUON_CONFORMANCE_DATA chooses the folder (default: under the system's
    temporary directory). Raises RuntimeError when the generator fails (e.g. no scikit-learn)."""
    out = os.environ.get("NEOGLUON_CONFORMANCE_DATA",
                         os.path.join(tempfile.gettempdir(), "neogluon-conformance-data"))
    cmd = [data_python(), os.path.join(ROOT, "tools", "make_example_data.py"), out]
    proc = subprocess.run(cmd + TRAIN_DATA_ARGS, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"tools/make_example_data.py failed ({proc.returncode}): "
                           f"{proc.stderr.strip()[-2000:]}")
    return out


def prepare_run_dir(suite_dir: str, name: str, data_dir=None) -> str:
    """The working directory of one file's run inside a copied suite: unittest/ for a unit
    test file; train/ for a train test, with ``data`` linked to the locally made data."""
    folder, _ = split_name(name)
    run_dir = os.path.join(suite_dir, folder)
    if folder == TRAIN_DIR_NAME and data_dir is not None:
        # Folders are made and files linked one by one, so that what a test writes there
        # (ImageRecordIter's mean.bin) stays in this run's copy.
        src_root = os.path.join(data_dir, "data")
        for here, dirs, files in os.walk(src_root):
            target = os.path.join(run_dir, "data", os.path.relpath(here, src_root))
            os.makedirs(target, exist_ok=True)
            for f in files:
                if not f.startswith("."):
                    os.symlink(os.path.join(here, f), os.path.join(target, f))
    return run_dir


def outcomes_from_junit(path: str, prefix: str = "") -> dict:
    """Map a pytest junit XML report to {"passed"|"failed"|"skipped": set(test ids)}.

    A test id is ``file.py::name[param]`` (the class, if any, as ``file.py::Class::name``),
    after ``prefix`` (``"train/"`` for the train tests)."""
    out = {"passed": set(), "failed": set(), "skipped": set()}
    tree = ET.parse(path)
    for case in tree.iter("testcase"):
        classname = case.get("classname", "")
        name = case.get("name", "")
        parts = classname.split(".")
        if not classname:
            # a file that failed to import: no class name, the module's name as the test's
            test_id = prefix + name.rsplit(".", 1)[-1] + ".py::<collection>"
        else:
            # classname is "test_file" or "test_file.Class"
            file_part = prefix + parts[0] + ".py"
            test_id = "::".join([file_part] + parts[1:] + [name])
        if case.find("skipped") is not None:
            out["skipped"].add(test_id)
        elif case.find("failure") is not None or case.find("error") is not None:
            out["failed"].add(test_id)
        else:
            out["passed"].add(test_id)
    # A test that errored in teardown after passing shows twice; failure wins.
    out["passed"] -= out["failed"]
    return out
