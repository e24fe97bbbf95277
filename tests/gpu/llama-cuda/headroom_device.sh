#!/usr/bin/env bash
# On the device, after run_device.sh (sid's llama-server with the CUDA backend unpacked into FP_WORK)
# with flashproof in the bundle (bundle_harness.sh): the headroom on the H200 (README "Headroom").
# live-cuda-realistic-fa-on in three configurations, each run once by flashproof; for each, its
# headroom.* lines beside llama.cpp's own `llama_kv_cache: size = ...` and `CUDA0 KV buffer size = ...`
# lines, and nvidia-smi's free memory right after (tests/headroom/kv_check.py: PASS when flashproof's
# KV cache for the context it ran equals the runtime's, and the memory left on CUDA0 was measured):
#   f16-c4096     f16 K/V, -c 4096, -np 1 (the case as it is)
#   q8-c16384     K/V q8_0, -c 16384
#   q4-c16384-np4 K/V q4_0, -c 16384, -np 4
# usage: headroom_device.sh BUNDLE OUTDIR   (writes OUTDIR/headroom.txt; exit status = number of FAILs)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
B=$(cd "$1" && pwd); O=$2
W=${FP_WORK:-/tmp/fp-llama-cuda}
H=$W/headroom
rm -rf "$H" && mkdir -p "$H/cases" "$O"
. "$here/flashproof_env.sh" || exit 1
T=$O/headroom.txt
: >"$T"
say() { echo "$*" | tee -a "$T" >&2; }
config() {  # config NAME CONTEXT NP EXTRA...
  local name=$1 ctx=$2 np=$3; shift 3
  python3 - "$here/cases/live-cuda-realistic-fa-on.json" "$H/cases/headroom-$name.json" "$name" "$ctx" "$np" "$@" <<'PY'
import json, sys
src, out, name, ctx, np, *extra = sys.argv[1:]
c = json.load(open(src))
c["name"] = "headroom-" + name
c["shape"]["context"] = int(ctx)
argv = c["launch"]["argv"]
argv[argv.index("-np") + 1] = np
c["launch"]["argv"] = argv + extra
json.dump(c, open(out, "w"), indent=2)
PY
}
config f16-c4096 4096 1
config q8-c16384 16384 1 -ctk q8_0 -ctv q8_0
config q4-c16384-np4 16384 4 -ctk q4_0 -ctv q4_0
say "$(nvidia-smi --query-gpu=name,memory.total,memory.free --format=csv,noheader)"
fails=0
for c in "$H"/cases/*.json; do
  n=$(basename "$c" .json)
  (cd "$root" && fp run "$c" --out "$H/runs/$n" --golden "$H/golden" --record-missing-answers --repetitions 1 --warmup 0 --quiet) \
    >"$H/$n.out" 2>&1
  rc=$?
  say "== $n: flashproof exit $rc; nvidia-smi free now: $(nvidia-smi --query-gpu=memory.free --format=csv,noheader | head -1)"
  [ "$rc" -eq 0 ] || { tail -20 "$H/$n.out" | tee -a "$T" >&2; fails=$((fails + 1)); continue; }
  if python3 "$root/tests/headroom/kv_check.py" "$H/runs/$n/result.txt" "$H/runs/$n/timed.log" >>"$T" 2>&1; then
    say "PASS $n"
  else
    say "FAIL $n"; fails=$((fails + 1))
  fi
done
tar -C "$H" -czf "$O/headroom.tar.gz" runs cases 2>/dev/null
cat "$T"
exit "$fails"
