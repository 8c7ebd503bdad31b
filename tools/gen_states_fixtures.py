"""Write tests/fixtures/states/* from MXNet 1.9.1 (run with /tmp/mxref/bin/python).

MXNet's own pickled optimizer states: ``Trainer.save_states`` files (update_on_kvstore True and
False, two CPU contexts) and ``Updater.get_states`` blobs (with and without the dumped
optimizer, float32 and multi-precision float16) for every optimizer in
tests/states_scenarios.OPTIMIZERS. Beside each file: the weights at the save, the state arrays
it holds, and the weights after MXNet resumed from it and trained two more steps.

Output: ``*.states`` (the pickles, as MXNet wrote them), states.npz (arrays) and states.json.
"""
import json
import os
import pickle
import sys

import numpy as np
import mxnet as mx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import states_scenarios as S  # noqa: E402
from fixture_record import Recorder  # noqa: E402

OUT = os.path.join(HERE, "..", "tests", "fixtures", "states")

# multi-precision (float16 weights, float32 master copies) for these
FP16_KEYS = ["sgd_mom", "nag", "adam", "lamb"]
KV_KEYS = ["sgd_mom", "adam", "rmsprop_centered"]
MP_KEYS = ["sgd", "sgd_mom", "nag", "adam", "lamb", "lars", "signum", "rmsprop"]


def write(name, blob):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(blob)


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.remove(os.path.join(OUT, f))
    rec = Recorder()
    for key in S.OPTIMIZERS:
        for uok in (() if key in S.UPDATER_ONLY else (True, False)):
            fname = f"trainer_{key}_{'kv' if uok else 'local'}.states"
            path = os.path.join(OUT, fname)
            mx.random.seed(0)
            first = S.trainer_run(mx, path, key, uok)
            with open(path, "rb") as f:
                states, opt = pickle.loads(f.read())
            mx.random.seed(1)
            again = S.trainer_run(mx, path, key, uok, load=first)
            rec.put(f"trainer.{key}.{uok}", {
                "file": fname, "saved": first["saved"], "straight": first["weights"],
                "states": S.state_arrays(states), "file_attrs": S.optimizer_attrs(opt),
                "resumed": again["weights"], "loaded_attrs": again["loaded_attrs"],
                "loaded_type": again["loaded_type"], "lr_loaded": again["lr_loaded"],
                "lr_end": again["lr_end"]})
        cases = [(dump, "float32", False) for dump in (True, False)]
        if key in MP_KEYS:
            cases += [(dump, "float16", True) for dump in (True, False)]
        for dump, dtype, mp in cases:
            tag = f"{key}.{dtype}.{'mp' if mp else 'plain'}.{'opt' if dump else 'noopt'}"
            fname = f"updater_{tag.replace('.', '_')}.states"
            mx.random.seed(2)
            first = S.updater_run(mx, key, dump, dtype, mp)
            write(fname, first["blob"])
            mx.random.seed(3)
            again = S.updater_resume(mx, key, dump, first["saved"], first["blob"], dtype, mp)
            rec.put(f"updater.{tag}", {
                "file": fname, "key": key, "dump": dump, "dtype": dtype, "mp": mp,
                "saved": first["saved"], "states": first["states"],
                "resumed": again["weights"], "attrs": again["attrs"]})
    for key in FP16_KEYS:
        for uok in (True, False):
            fname = f"trainer_fp16_{key}_{'kv' if uok else 'local'}.states"
            path = os.path.join(OUT, fname)
            first = S.trainer_fp16_run(mx, path, key, uok)
            with open(path, "rb") as f:
                states, _ = pickle.loads(f.read())
            again = S.trainer_fp16_run(mx, path, key, uok, load=first)
            rec.put(f"trainer_fp16.{key}.{uok}", {
                "file": fname, "saved": first["saved"], "straight": first["weights"],
                "states": S.state_arrays(states), "resumed": again["weights"],
                "loaded_attrs": again["loaded_attrs"]})
    for key in KV_KEYS:
        case = rec.meta[f"updater.{key}.float32.plain.opt"]
        saved = [rec.arrays[a["__array__"]] for a in case["saved"]]
        got = S.kvstore_resume(mx, key, os.path.join(OUT, case["file"]), saved)
        rec.put(f"kvstore.{key}", got)
    np.savez_compressed(os.path.join(OUT, "states.npz"), **rec.arrays)
    with open(os.path.join(OUT, "states.json"), "w") as f:
        json.dump({"mxnet": mx.__version__, "cases": rec.meta}, f, sort_keys=True)
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print(f"wrote {len(os.listdir(OUT))} files, {total} bytes, to {OUT}")


if __name__ == "__main__":
    main()
