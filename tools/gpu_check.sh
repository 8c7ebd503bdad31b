#!/bin/bash
# The GPU checks, as one command for a lent GPU machine (the device tool), run from the repo
# root after tools/gpu_prepare.sh made .gpu_suite/ here (pass it in the call's carry).
# A session gets ~15 minutes of device time in all and 10 per command: the whole script is
# sized to ~8 minutes on an H200, in two phases.
#
#   A (at the same time):
#     - every CUDA test file of the project (tests/test_cuda*.py, tests/test_rtc.py; they skip
#       without a GPU, so CI never runs them): training numbers GPU vs CPU, CUDA graphs
#       (static and plain hybridize's automatic ones), AMP without host syncs, the
#       optimizers' multi-tensor paths, the fused LSTM cell, kernel counts per step
#     - MXNet's unit tests with mx.gpu(0) as the default context (conformance/run.py --ctx gpu)
#   B (one after another, alone on the GPU):
#     - bench/cuda_train.py --preset issue32: ms per training step of ResNet-18/64, ResNet-50/224
#       (batch 32 and 128) and the LSTM LM, neogluon imperative / plain hybridize (with and
#       without automatic graphs) / static CUDA graphs / AMP fp16 against torch eager and
#       torch.autocast; then the old lenet/resnet18 rows
#     - bench/optimizer_step.py --device cuda: Trainer.step against torch's fused/foreach
#     - (PROFILE=1) bench/cuda_profile.py: phase times, syncs, kernels of a step
# Results go to $OUT (default /tmp/gpu_out): env.txt, test_cuda.log, conformance.txt,
# conformance_logs.tgz, bench_issue32.json, bench.json, bench.log, optimizer_step_cuda.*,
# profile.* (PROFILE=1). Phase switches: SKIP_TESTS=1, SKIP_CONF=1, SKIP_BENCH=1.
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

# ---- phase A ----
if [ -z "${SKIP_CONF:-}" ] && [ -d .gpu_suite/mxnet-tests ]; then
  ( NEOGLUON_MXNET_TESTS=$PWD/.gpu_suite/mxnet-tests timeout ${CONF_TIMEOUT:-200} \
      $PY conformance/run.py --ctx gpu --jobs 12 --timeout $(( ${CONF_TIMEOUT:-200} - 15 )) \
      $CONF_FILES >"$OUT/conformance.txt" 2>&1
    tar czf "$OUT/conformance_logs.tgz" conformance/logs ) &
  CONF=$!
fi
if [ -z "${SKIP_TESTS:-}" ]; then
  # -n: pytest-xdist where installed (the files are independent), else one process
  XDIST=$($PY -c "import xdist" 2>/dev/null && echo "-n 3")
  timeout ${TEST_TIMEOUT:-240} $PY -m pytest -q -rA -p no:cacheprovider --timeout 150 $XDIST \
      tests/test_cuda*.py tests/test_rtc.py >"$OUT/test_cuda.log" 2>&1
  echo "test_cuda rc=$?" >>"$OUT/test_cuda.log"
fi
[ -n "${CONF:-}" ] && wait $CONF

# ---- phase B ----
if [ -z "${SKIP_BENCH:-}" ]; then
  timeout ${BENCH32_TIMEOUT:-200} $PY bench/cuda_train.py --preset issue32 --steps 10 \
      --rounds 2 --warmup 4 --json "$OUT/bench_issue32.json" >"$OUT/bench.log" 2>&1
  echo "bench issue32 rc=$?" >>"$OUT/bench.log"
  timeout ${OPTBENCH_TIMEOUT:-90} $PY bench/optimizer_step.py --device cuda --rounds 5 \
      --steps 5 --no-write --markdown --json "$OUT/optimizer_step_cuda.json" \
      >"$OUT/optimizer_step_cuda.log" 2>&1
  echo "optimizer_step rc=$?" >>"$OUT/optimizer_step_cuda.log"
  timeout ${BENCH_TIMEOUT:-90} $PY bench/cuda_train.py --models ${BENCH_MODELS:-lenet,resnet18} \
      ${BENCH_CONFIGS:+--configs "$BENCH_CONFIGS"} --json "$OUT/bench.json" >>"$OUT/bench.log" 2>&1
  echo "bench rc=$?" >>"$OUT/bench.log"
fi
if [ -n "${PROFILE:-}" ]; then
  timeout ${PROFILE_TIMEOUT:-150} $PY bench/cuda_profile.py \
      --json "$OUT/profile.json" --table "$OUT/profile_ops.txt" >"$OUT/profile.log" 2>&1
fi

# ---- summary (the command's output tail) ----
tail -n 5 "$OUT/test_cuda.log" "$OUT/conformance.txt" 2>/dev/null
grep -E "^(FAILED|ERROR)" "$OUT/test_cuda.log" 2>/dev/null | head -20
tail -n 25 "$OUT/optimizer_step_cuda.log" 2>/dev/null
cat "$OUT"/bench*.json 2>/dev/null | $PY -c "
import json,sys
txt=sys.stdin.read()
dec=json.JSONDecoder(); i=0
while i < len(txt):
    txt_i=txt[i:].lstrip()
    if not txt_i: break
    obj,n=dec.raw_decode(txt_i); i=len(txt)-len(txt_i)+n
    for m,rows in obj['results'].items():
        for c,r in rows.items(): print(m, c, r.get('ms_per_step'), r.get('vs_torch_eager'), r.get('vs_torch_autocast'), r.get('error','')[:80], r.get('first_step_s'))
"
