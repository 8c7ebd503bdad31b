"""Write tests/fixtures/trainer/* from MXNet 1.9.1 (run with /tmp/mxref/bin/python).

The scenarios live in tests/trainer_scenarios.py and are written against the MXNet API, so
the tests run the same code with neogluon. Arrays go to trainer.npz, everything else
(update_on_kvstore choices, store types, learning rates, errors) to trainer.json.
"""
import json
import os
import sys
import tempfile

import numpy as np
import mxnet as mx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import trainer_scenarios as S  # noqa: E402
from fixture_record import Recorder  # noqa: E402

OUT = os.path.join(HERE, "..", "tests", "fixtures", "trainer")


def main():
    os.makedirs(OUT, exist_ok=True)
    rec = Recorder()
    for name, case in S.basic_cases():
        rec.put(f"basic.{name}", S.run_basic(mx, case))
    for uok in (None, False):
        rec.put(f"lr_mult.{uok}", S.lr_mult(mx, uok))
        rec.put(f"lr_scheduler.{uok}", S.lr_scheduler(mx, uok))
        rec.put(f"compression.{uok}", S.compression(mx, uok))
    rec.put("lr_scheduler.1ctx", S.lr_scheduler(mx, None, nctx=1))
    with tempfile.TemporaryDirectory() as tmp:
        for opt in ("sgd", "adam"):
            for uok in (None, False):
                rec.put(f"save_load.{opt}.{uok}",
                        S.save_load(mx, os.path.join(tmp, "states"), opt, uok))
            rec.put(f"save_load.{opt}.1ctx",
                    S.save_load(mx, os.path.join(tmp, "states"), opt, None, nctx=1))
    for nctx in (1, 2):
        for uok in ((None,) if nctx == 1 else (None, False)):
            rec.put(f"stale.{nctx}.{uok}", S.stale(mx, nctx, uok))
        rec.put(f"grad_req.{nctx}", S.grad_req(mx, nctx))
    for nctx, uok in ((1, None), (2, None), (2, False)):
        rec.put(f"deferred.{nctx}.{uok}", S.deferred(mx, nctx, uok))
    rec.put("custom_store", S.custom_store(mx))
    rec.put("user_stores", S.user_stores(mx))
    rec.put("sparse_rules", S.sparse_rules(mx))
    rec.put("clip", S.clip_between(mx))
    rec.put("rescale", S.rescale(mx))
    rec.put("tutorial", S.tutorial(mx))
    rec.put("constructor_errors", S.constructor_errors(mx))
    rules = []
    for nctx, kv, uok, env in S.rules_cases():
        r = S.rules(mx, nctx, kv, uok, env)
        r.update(nctx=nctx, kvstore=kv, uok_arg=uok, env=env)
        rules.append(r)
    rec.meta["rules"] = rules
    np.savez_compressed(os.path.join(OUT, "trainer.npz"), **rec.arrays)
    with open(os.path.join(OUT, "trainer.json"), "w") as f:
        json.dump(rec.meta, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
