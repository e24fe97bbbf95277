#!/usr/bin/env bash
# On the device, after run_device.sh (which unpacked sid's llama-server with the CUDA backend into
# FP_WORK and built the probe): runs flashproof itself on the cases in tests/gpu/llama-cuda/cases/
# (two expect fused attention on CUDA0 and pass; live-cuda-hd48-fa-on must fail: a silent CPU fallback),
# then an A/B of the realistic case, through sid's loader, with the probe attached by the harness (FLASHPROOF_PROBE_LIB).
# usage: harness_device.sh BUNDLE OUTDIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
B=$(cd "$1" && pwd); O=$2
W=${FP_WORK:-/tmp/fp-llama-cuda}
mkdir -p "$O"
. "$here/flashproof_env.sh" || { rc=$?; [ $rc = 1 ] && exit 0; exit 1; }  # no flashproof in the bundle: nothing to run
{ echo "suite: $root"; fp gpus 2>&1; } >"$W/harness.txt"
for c in "$here"/cases/*.json; do
  n=$(basename "$c" .json)
  echo "== flashproof run $n" >>"$W/harness.txt"
  (cd "$root" && fp run "$c" --out "$W/harness/$n" --results "$W/harness-results" --golden "$W/harness-golden" \
     --record-missing-answers) >>"$W/harness.txt" 2>&1
  echo "exit $?" >>"$W/harness.txt"
  tar -C "$W" -czf "$O/harness.tar.gz" harness.txt harness 2>/dev/null
done
# A/B of the realistic case on the GPU (FP_AB_REPETITIONS launches per arm; 0 skips it).
ab_reps=${FP_AB_REPETITIONS:-3}
if [ "$ab_reps" -gt 0 ]; then
  echo "== flashproof ab live-cuda-realistic-fa-on ($ab_reps launches per arm)" >>"$W/harness.txt"
  (cd "$root" && fp ab "$here/cases/live-cuda-realistic-fa-on.json" --out "$W/harness/ab-live-cuda-realistic-fa-on"      --results "$W/harness-results" --repetitions "$ab_reps" --sustained-s 5 --quiet) >"$W/harness/ab.stdout" 2>&1
  echo "exit $?" >>"$W/harness.txt"
  tar -C "$W" -czf "$O/harness.tar.gz" harness.txt harness 2>/dev/null
fi
cat "$W/harness.txt" >&2
