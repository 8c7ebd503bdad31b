#!/bin/bash
# The GPU checks, as one command for a lent GPU machine (the device tool), run from the repo
# root after tools/gpu_prepare.sh made .gpu_suite/ here (pass it in the call's carry):
#   1. tests/test_cuda.py and tests/test_rtc.py (skip without a GPU; CI has none; test_rtc's
#      launch tests also skip without cuda-python, which the GPU machine may lack)
#   2. MXNet's unit tests with mx.gpu(0) as the default context (conformance/run.py --ctx gpu),
#      at the same time as 1
#   3. bench/cuda_profile.py: phase times, host-device syncs and kernel counts of a step
#   4. bench/cuda_train.py: neogluon against torch eager / torch.compile on the GPU
# Results go to $OUT (default /tmp/gpu_out): env.txt, test_cuda.log, conformance.txt,
# conformance_logs.tgz, profile.json, profile_ops.txt, bench.json, bench.log.
set -u
OUT=${OUT:-/tmp/gpu_out}
mkdir -p "$OUT"
# .gpu_suite/site: a stand-in nose package (nose.tools as shipped; nose itself does not
# import on Python 3.12) for MXNet's test files.
export PYTHONPATH=$PWD:$PWD/.gpu_suite/site PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
PY=${PY:-python3}
CONF_FILES=${CONF_FILES:-"test_gluon_trainer.py test_optimizer.py test_gluon.py test_autograd.py \
test_loss.py test_init.py test_kvstore.py test_gluon_rnn.py test_ndarray.py test_sparse_ndarray.py \
test_random.py test_contrib_optimizer.py test_gluon_contrib.py test_metric.py"}
{ date; nvidia-smi -L; nproc; command -v cc gcc; $PY -c "import torch, numpy; print(torch.__version__, numpy.__version__, torch.cuda.get_device_name(0))"; } >"$OUT/env.txt" 2>&1

if [ -d .gpu_suite/mxnet-tests ]; then
  ( NEOGLUON_MXNET_TESTS=$PWD/.gpu_suite/mxnet-tests timeout ${CONF_TIMEOUT:-240} \
      $PY conformance/run.py --ctx gpu --jobs 14 --timeout $(( ${CONF_TIMEOUT:-240} - 15 )) \
      $CONF_FILES >"$OUT/conformance.txt" 2>&1
    tar czf "$OUT/conformance_logs.tgz" conformance/logs ) &
  CONF=$!
fi
timeout ${TEST_TIMEOUT:-200} $PY -m pytest -q -rA -p no:cacheprovider --timeout 150 \
    tests/test_cuda.py tests/test_rtc.py >"$OUT/test_cuda.log" 2>&1
echo "test_cuda rc=$?" >>"$OUT/test_cuda.log"
[ -n "${CONF:-}" ] && wait $CONF
[ -z "${SKIP_PROFILE:-}" ] && timeout ${PROFILE_TIMEOUT:-150} $PY bench/cuda_profile.py \
    --json "$OUT/profile.json" --table "$OUT/profile_ops.txt" >"$OUT/profile.log" 2>&1
[ -n "${SKIP_BENCH:-}" ] && exit 0
timeout ${BENCH_TIMEOUT:-240} $PY bench/cuda_train.py --models ${BENCH_MODELS:-lenet,resnet18} \
    ${BENCH_CONFIGS:+--configs "$BENCH_CONFIGS"} --json "$OUT/bench.json" >"$OUT/bench.log" 2>&1
echo "bench rc=$?" >>"$OUT/bench.log"
if [ -z "${BENCH_MODELS:-}" ]; then
  timeout ${BENCH224_TIMEOUT:-90} $PY bench/cuda_train.py --models resnet18_224 \
      --configs "neogluon imperative,neogluon replay,neogluon cudagraph,torch eager" \
      --json "$OUT/bench224.json" >>"$OUT/bench.log" 2>&1
fi
tail -5 "$OUT/test_cuda.log" "$OUT/conformance.txt" 2>/dev/null
cat "$OUT"/bench*.json 2>/dev/null | $PY -c "
import json,sys
txt=sys.stdin.read()
dec=json.JSONDecoder(); i=0
while i < len(txt):
    txt_i=txt[i:].lstrip()
    if not txt_i: break
    obj,n=dec.raw_decode(txt_i); i=len(txt)-len(txt_i)+n
    for m,rows in obj['results'].items():
        for c,r in rows.items(): print(m, c, r.get('ms_per_step'), r.get('vs_torch_eager'), r.get('error','')[:80], r.get('first_step_s'))
"
