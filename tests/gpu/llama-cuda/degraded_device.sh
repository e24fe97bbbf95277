#!/usr/bin/env bash
# "Active, degraded" on the device (issue 46): Debian's CUDA build converts a K/V pair it compiled no
# vector kernel for (q5_1, q4_1) to f16 and says so once. Runs run_device.sh's configurations with the
# probe (the conversion line, FA_QUANTS, the conversion kernels' share of GPU time), then llama-bench
# beside them, the peer: decode and prefill with each pair against the compiled ones, at a short and
# a long context depth (converting the whole cache each step costs the most at depth).
#
# usage (repository root, on the device, after make_bundle.sh and bundle_harness.sh here):
#   bash tests/gpu/llama-cuda/degraded_device.sh .gpu-bundle $OUT
# Writes $OUT/explain-<config>.txt (flashproof explain on each quiet run, when the bundle has
# flashproof: bundle_harness.sh), $OUT/llama-bench.md, and what run_device.sh writes. About 3 minutes of device time
# after the machine's start (the first server JIT-compiles the PTX: about 30 s).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
B=$(cd "$1" && pwd); O=$2
W=${FP_WORK:-/tmp/fp-llama-cuda}
mkdir -p "$O"
FP_DEADLINE_S=${FP_DEADLINE_S:-300} bash "$here/run_device.sh" "$B" "$O" fa_on fa_on_q5_1 fa_on_q4_1 || echo "run_device.sh: exit $?"
root_dir=$root
if . "$here/flashproof_env.sh"; then have_fp=1; else have_fp=0; fi  # fp, the library path, the models
root=$root_dir
LIBS=$(cat "$W/library-path")
for c in fa_on fa_on_q5_1 fa_on_q4_1; do
  [ $have_fp = 1 ] && [ -f "$W/runs/$c.quiet.log.gz" ] || continue
  (cd "$root" && fp explain --runtime llama-server --log "$W/runs/$c.quiet.log.gz" --kernels "$W/runs/$c.quiet.kernels.tsv" \
    --expect-backend CUDA0) >"$O/explain-$c.txt" 2>&1
  grep -E "^verdict:|DEGRADED|cost:|this build compiles|remedy:" "$O/explain-$c.txt" | sed "s/^/$c: /"
done
{
  echo "# llama-bench, -fa 1, realistic model, one GPU (the peer: decode and prefill per K/V pair, at depth 0 and 8192)"
  for kv in f16 q8_0 q4_0 q5_1 q4_1; do
    timeout 120 "$L/ld-linux-x86-64.so.2" --library-path "$LIBS" "$W/prefix/usr/bin/llama-bench" -m "$W/realistic.gguf" -ngl 99 -fa 1 \
      -ctk "$kv" -ctv "$kv" -p 512 -n 128 -d 0,8192 -r 3 -o md 2>&1 | grep -E '^\|' | sed "s/^/$kv /"
  done
} | tee "$O/llama-bench.md"
