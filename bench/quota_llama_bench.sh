#!/usr/bin/env bash
# An outside figure for what the gate's 5% CPU quota (`gate --candidate-cpu-share 0.95`,
# bench/gate_detection.sh's cpu-5) does to the shipped completion case's work, by llama.cpp's own
# llama-bench (nothing of flashproof's clients or statistics): rounds of the same llama-bench run
# plain and inside a cgroup-v1 CPU quota of SHARE of the machine per 100 ms period, in alternating
# order, each a fresh process. Prompt: -p N (the case's 3000-character document, about 2900 tokens of
# the realistic model); decode: -n 32 at depth N (the case's answers follow that prompt).
# Prints each round's tokens/s and the median log-ratio quota/plain per test. Prints figures; not a test.
# usage: bench/quota_llama_bench.sh [ROUNDS (default 5)] [SHARE (default 0.95)] [PROMPT_TOKENS (default 2900)]
# env: FLASHPROOF_CACHE (default /var/cache/flashproof; its env.sh names the sid prefix), root for the cgroup
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-5}; share=${2:-0.95}; ptok=${3:-2900}
. "${FLASHPROOF_CACHE:-/var/cache/flashproof}/env.sh"
model=$ROOT/fixtures/models/generated/realistic.gguf
[ -f "$model" ] || { echo "quota_llama_bench: $model missing: build/flashproof models generate (or ci/default-run.sh) first" >&2; exit 2; }
cpu_mount=$(awk '$3 == "cgroup" && $4 ~ /(^|,)cpu(,|$)/ {print $2; exit}' /proc/self/mounts)
[ -n "$cpu_mount" ] || { echo "quota_llama_bench: no cgroup-v1 cpu controller mounted (/proc/self/mounts)" >&2; exit 2; }
cg=$cpu_mount/flashproof-quota-bench-$$
mkdir "$cg"
trap 'rmdir "$cg" 2>/dev/null || true' EXIT
ncpu=$(nproc)
echo 100000 >"$cg/cpu.cfs_period_us"
awk -v s="$share" -v n="$ncpu" 'BEGIN{printf "%d\n", s * n * 100000}' >"$cg/cpu.cfs_quota_us"
bench() {  # $1: plain|quota; prints "pp_ts tg_ts"
  local cmd=("$FLASHPROOF_LOADER" --library-path "$FLASHPROOF_LIBRARY_PATH" "$FLASHPROOF_PREFIX/usr/bin/llama-bench"
    -m "$model" -t "$ncpu" -fa on -r 1 -o json -p "$ptok" -n 0 -d 0)
  local cmd2=("$FLASHPROOF_LOADER" --library-path "$FLASHPROOF_LIBRARY_PATH" "$FLASHPROOF_PREFIX/usr/bin/llama-bench"
    -m "$model" -t "$ncpu" -fa on -r 1 -o json -p 0 -n 32 -d "$ptok")
  local pp tg
  if [ "$1" = quota ]; then
    pp=$(sh -c 'echo $$ >"$0/tasks"; exec "$@"' "$cg" "${cmd[@]}" 2>/dev/null)
    tg=$(sh -c 'echo $$ >"$0/tasks"; exec "$@"' "$cg" "${cmd2[@]}" 2>/dev/null)
  else
    pp=$("${cmd[@]}" 2>/dev/null); tg=$("${cmd2[@]}" 2>/dev/null)
  fi
  python3 -c 'import json,sys; print(json.loads(sys.argv[1])[0]["avg_ts"], json.loads(sys.argv[2])[0]["avg_ts"])' "$pp" "$tg"
}
echo "llama-bench, $model, -t $ncpu -fa on: prompt -p $ptok, decode -n 32 at depth $ptok; quota $share of $ncpu CPU(s) per 100 ms; $rounds rounds"
res=()
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then a=$(bench plain); b=$(bench quota); else b=$(bench quota); a=$(bench plain); fi
  echo "round $r: plain pp $(cut -d' ' -f1 <<<"$a") tg $(cut -d' ' -f2 <<<"$a") t/s; quota pp $(cut -d' ' -f1 <<<"$b") tg $(cut -d' ' -f2 <<<"$b") t/s"
  res+=("$a $b")
done
printf '%s\n' "${res[@]}" | python3 -c '
import math, statistics as st, sys
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
for name, i in (("prompt (time per token)", 0), ("decode at depth (time per token)", 1)):
    d = [math.log(r[i] / r[i + 2]) for r in rows]  # time per token: plain t/s over quota t/s
    print(f"{name}: quota slower by {100 * math.expm1(st.median(d)):+.1f}% (median of {len(d)} rounds; rounds {min(100 * math.expm1(x) for x in d):+.1f} .. {max(100 * math.expm1(x) for x in d):+.1f}%)")
'
