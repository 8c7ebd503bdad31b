"""Record mx.io.LibSVMIter batches from real MXNet 1.9.1.

    /tmp/mxref/bin/python tools/gen_libsvm_fixtures.py

Writes the input files (tests/fixtures/libsvm/*.t) and, for each case, MXNet's batches over
three epochs (dense data, label, pad, index) into tests/fixtures/libsvm/cases.json.
"""
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "libsvm")

SMALL = ("1 0:1.5 2:2.0\n0 1:3.0\n2 0:-1 1:2 3:4.5\n1\n3 2:7\n-1 3:1 0:2\n1 1:1\n")
SMALL_LABEL = ("0 0:1 1:2\n1 1:1\n2 0:5\n3\n4 1:3\n5 0:1 1:1\n6 0:2\n")


def big_files():
    rng = random.Random(15)
    data, label = [], []
    for i in range(23):
        cols = sorted(rng.sample(range(10), rng.randint(0, 4)))
        feats = " ".join(f"{c}:{rng.randint(-20, 20) / 4}" for c in cols)
        data.append(f"{rng.randint(0, 4)} {feats}".rstrip())
        lcols = sorted(rng.sample(range(3), rng.randint(0, 3)))
        label.append(f"{i} " + " ".join(f"{c}:{rng.randint(1, 9)}" for c in lcols))
    return "\n".join(data) + "\n", "\n".join(label) + "\n"


CASES = [
    dict(data_libsvm="small.t", data_shape=(4,), batch_size=3),
    dict(data_libsvm="small.t", data_shape=(4,), batch_size=7),
    dict(data_libsvm="small.t", data_shape=(4,), batch_size=1),
    dict(data_libsvm="small.t", data_shape=(4,), batch_size=3, label_libsvm="small_label.t",
         label_shape=(2,)),
    dict(data_libsvm="small.t", data_shape=(4,), batch_size=2, num_parts=2, part_index=0),
    dict(data_libsvm="small.t", data_shape=(4,), batch_size=2, num_parts=2, part_index=1),
    dict(data_libsvm="small.t", data_shape=(4,), batch_size=2, num_parts=3, part_index=0),
    dict(data_libsvm="small.t", data_shape=(4,), batch_size=2, num_parts=3, part_index=1),
    dict(data_libsvm="small.t", data_shape=(4,), batch_size=2, num_parts=3, part_index=2),
    dict(data_libsvm="small_crlf.t", data_shape=(4,), batch_size=3, num_parts=2, part_index=1),
    dict(data_libsvm="big.t", data_shape=(10,), batch_size=5),
    dict(data_libsvm="big.t", data_shape=(10,), batch_size=4, label_libsvm="big_label.t",
         label_shape=(3,)),
] + [dict(data_libsvm="big.t", data_shape=(10,), batch_size=3, label_libsvm="big_label.t",
          label_shape=(3,), num_parts=4, part_index=k) for k in range(4)] + [
    dict(data_libsvm="big.t", data_shape=(10,), batch_size=4, num_parts=4, part_index=k)
    for k in range(4)]


def main():
    import mxnet as mx
    os.makedirs(OUT, exist_ok=True)
    big, big_label = big_files()
    files = {"small.t": SMALL, "small_label.t": SMALL_LABEL, "big.t": big,
             "big_label.t": big_label, "small_crlf.t": SMALL.replace("\n", "\r\n")}
    for name, text in files.items():
        with open(os.path.join(OUT, name), "w", newline="") as f:
            f.write(text)
    records = []
    for case in CASES:
        kw = dict(case)
        for key in ("data_libsvm", "label_libsvm"):
            if key in kw:
                kw[key] = os.path.join(OUT, kw[key])
        it = mx.io.LibSVMIter(**kw)
        epochs = []
        try:
            for _ in range(3):
                batches = []
                for b in it:
                    d, lab = b.data[0], b.label[0]
                    assert d.stype == "csr"
                    batches.append(dict(data=d.asnumpy().tolist(),
                                        label=lab.asnumpy().tolist(), label_stype=lab.stype,
                                        pad=int(b.pad), index=[int(i) for i in b.index]))
                epochs.append(batches)
                it.reset()
        except mx.base.MXNetError:
            # e.g. a part of the label file holds fewer lines than that part of the data file
            records.append(dict(kwargs=case, error=True))
            continue
        records.append(dict(kwargs=case, provide_data=list(it.provide_data[0].shape),
                            provide_label=list(it.provide_label[0].shape), epochs=epochs))
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump(records, f, indent=0)


if __name__ == "__main__":
    main()
