#!/usr/bin/env bash
# On the device, after run_device.sh (sid's llama-server with the CUDA backend unpacked into FP_WORK)
# with flashproof in the bundle (bundle_harness.sh): several models on one GPU (issue 40, README
# "Headroom"). A second llama-server, the neighbour, is started here on the same GPU (the Llama-3.1-8B
# shape from fixtures/models/shapes/llama-3.1-8b.json, generated here; without that recipe or where it
# cannot be generated, the realistic model with a context of 4M cells to occupy about 17 GiB), and
# live-cuda-realistic-fa-on runs once (1 round, no warm-up) in four ways:
#   1 alone         neighbour not started; deployed 131072, names no neighbour   -> fits (PASS: exit 0)
#   2 beside        neighbour running; the case names it (matched by --port)   -> found running, listed
#                   among the GPU's other processes, counted in NVML's free memory; deployed 131072 fits
#   3 too-long      neighbour running; deployed context halfway between what fits beside it (2) and
#                   what fits alone (1)                                         -> fails saying by how much
#   4 reserved      neighbour stopped; the case names it with its memory        -> reserved, fails too
# Each run's headroom.* and failure lines, the neighbour's memory as nvidia-smi and NVML see it, and
# the two context fits' difference in MiB beside the neighbour's memory go to OUTDIR/neighbours.txt;
# cases and result folders to OUTDIR/neighbours.tar.gz. Under 4 minutes: the model generated in at
# most 90 s, each run at most 100 s, no run started after FP_DEADLINE_S (default 200) seconds.
# usage: neighbours_device.sh BUNDLE OUTDIR   (exit status = number of FAILs)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
B=$(cd "$1" && pwd); O=$2
W=${FP_WORK:-/tmp/fp-llama-cuda}
N=$W/neighbours
DEADLINE=${FP_DEADLINE_S:-200}
t0=$(date +%s)
rm -rf "$N" && mkdir -p "$N/cases" "$O"
. "$here/flashproof_env.sh" || exit 1
# fp (flashproof_env.sh) is a shell function; `timeout` needs the command itself.
fp_cmd=("$L/ld-linux-x86-64.so.2" --library-path "$L:$W/fpbin/lib:$W/drv" "$W/fpbin/flashproof")
T=$O/neighbours.txt
: >"$T"
say() { printf '[%4ds] %s\n' "$(($(date +%s) - t0))" "$*" | tee -a "$T" >&2; }
fails=0
port=18590
neighbour_pid=
stop_neighbour() {
  [ -n "$neighbour_pid" ] || return 0
  kill -TERM "$neighbour_pid" 2>/dev/null
  for _ in $(seq 40); do kill -0 "$neighbour_pid" 2>/dev/null || break; sleep 0.5; done
  kill -KILL "$neighbour_pid" 2>/dev/null
  wait "$neighbour_pid" 2>/dev/null
  neighbour_pid=
}
finish() {
  stop_neighbour
  tar -C "$N" -czf "$O/neighbours.tar.gz" cases runs neighbour.log 2>/dev/null
  say "done: $fails FAIL(s)"
  exit "$fails"
}
trap finish EXIT
say "$(nvidia-smi --query-gpu=name,memory.total,memory.free --format=csv,noheader)"

# --- the neighbour's model ---------------------------------------------------------------------------
nmodel= nctx=8192
if [ -f "$root/fixtures/models/shapes/llama-3.1-8b.json" ]; then
  s=$(date +%s)
  if (cd "$root" && timeout 90 "${fp_cmd[@]}" make-model fixtures/models/shapes/llama-3.1-8b.json) >>"$T" 2>&1; then
    nmodel=$root/$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["output"])' "$root/fixtures/models/shapes/llama-3.1-8b.json")
    say "neighbour model: llama-3.1-8b shape, $(du -h "$nmodel" | cut -f1), generated in $(($(date +%s) - s)) s"
  else
    say "could not generate the llama-3.1-8b shape in 90 s (see above): the realistic model with a large context instead"
  fi
fi
if [ -z "$nmodel" ]; then
  nmodel=$root/fixtures/models/generated/realistic.gguf nctx=4194304  # 4096 bytes per token: 16 GiB of KV cache
  say "neighbour model: realistic.gguf at -c $nctx"
fi
start_neighbour() {
  CUDA_CACHE_PATH=$W/jit-cache CUDA_MODULE_LOADING=LAZY "$L/ld-linux-x86-64.so.2" --library-path "$FLASHPROOF_LIBRARY_PATH" \
    "$FLASHPROOF_LLAMA_SERVER" -m "$nmodel" --host 127.0.0.1 --port "$port" -c "$nctx" -np 1 -ngl 99 -fa on >"$N/neighbour.log" 2>&1 &
  neighbour_pid=$!
  for _ in $(seq 240); do
    python3 -c 'import sys, urllib.request; urllib.request.urlopen("http://127.0.0.1:%s/health" % sys.argv[1], timeout=2)' "$port" \
      >/dev/null 2>&1 && return 0
    kill -0 "$neighbour_pid" 2>/dev/null || { say "the neighbour exited:"; tail -20 "$N/neighbour.log" | tee -a "$T" >&2; return 1; }
    sleep 0.5
  done
  say "the neighbour was not ready in 120 s"; return 1
}
neighbour_mib() {  # its memory on the GPU as nvidia-smi sees it (MiB)
  nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits | awk -F', *' -v p="$neighbour_pid" '$1==p {print $2}'
}

# --- the case, four ways -----------------------------------------------------------------------------
# case_with NAME HEADROOM_JSON: live-cuda-realistic-fa-on with that "headroom" block
case_with() {
  python3 - "$here/cases/live-cuda-realistic-fa-on.json" "$N/cases/$1.json" "$1" "$2" <<'PY'
import json, sys
src, out, name, headroom = sys.argv[1:]
c = json.load(open(src))
c["name"] = name
c["headroom"] = json.loads(headroom)
json.dump(c, open(out, "w"), indent=2)
PY
}
# run NAME WANT_EXIT: one run; its headroom and failure lines into the record
run() {
  local n=$1 want=$2 rc
  if [ $(($(date +%s) - t0)) -gt "$DEADLINE" ]; then say "FAIL $n: not run, past the deadline of $DEADLINE s"; fails=$((fails + 1)); return 1; fi
  (cd "$root" && timeout 100 "${fp_cmd[@]}" run "$N/cases/$n.json" --out "$N/runs/$n" --golden "$N/golden" --record-missing-answers \
     --repetitions 1 --warmup 0 --quiet) >"$N/$n.out" 2>&1
  rc=$?
  say "== $n: flashproof exit $rc (want $want)"
  grep -E '^(verdict|headroom\.(kv_bytes|memory_left|context_fit|others|neighbour|deployed)|failure)' "$N/runs/$n/result.txt" 2>/dev/null | tee -a "$T" >&2
  if [ "$rc" -ne "$want" ]; then tail -15 "$N/$n.out" | tee -a "$T" >&2; say "FAIL $n"; fails=$((fails + 1)); return 1; fi
}
# judge NAME PYTHON_CONDITION: PASS when the condition holds on result.json (r, h = r["headroom"], d = h["deployed"])
judge() {
  if python3 - "$N/runs/$1/result.json" "$2" >>"$T" 2>&1 <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1])); h = r["headroom"]; d = h.get("deployed") or {}
ok = eval(sys.argv[2])
if not ok: print("  condition failed: " + sys.argv[2])
sys.exit(0 if ok else 1)
PY
  then say "PASS $1"; else say "FAIL $1"; fails=$((fails + 1)); fi
}
fit_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["headroom"]["deployed"]["fits_tokens"])' "$N/runs/$1/result.json"; }
shortfall='re.match(r"deployed context \d+ does not fit beside .+: \d+ tokens fit, short by \d+ tokens \([\d.]+ MiB of KV cache at \d+ bytes/token\)", r["failures"][0]) and d["short_by_tokens"] == d["deployed_context"] - d["fits_tokens"]'

case_with alone '{"deployed_context": 131072}'
run alone 0 && judge alone 'd["checked"] and d["fits"] and h["others"][0]["listed"]'
alone_fit=$(fit_of alone 2>/dev/null)

start_neighbour || { say "FAIL the neighbour did not start"; fails=$((fails + 1)); exit; }
used=$(neighbour_mib)
declared=$(( (${used:-16384} + 1023) / 1024 * 1024 ))
say "neighbour: pid $neighbour_pid, port $port, nvidia-smi ${used:-?} MiB; the case declares $declared MiB"
nb="{\"name\": \"llama-8b\", \"match\": \"--port $port\", \"mib\": $declared}"
case_with beside "{\"deployed_context\": 131072, \"neighbours\": [$nb]}"
run beside 0 && judge beside 'd["fits"] and h["neighbours"][0]["state"] == "running" and any(p["neighbour"] == "llama-8b" for p in h["others"][0]["processes"])'
beside_fit=$(fit_of beside 2>/dev/null)
if [ -n "$alone_fit" ] && [ -n "$beside_fit" ]; then
  say "context fit alone $alone_fit, beside the neighbour $beside_fit: $((alone_fit - beside_fit)) tokens = $(python3 -c "print(round(($alone_fit - $beside_fit) * 4096 / 2**20, 1))") MiB at 4096 bytes/token; the neighbour holds ${used:-?} MiB (nvidia-smi)"
  tight=$(( beside_fit + (alone_fit - beside_fit) / 2 ))
else
  tight=$(( 131072 * 64 ))
fi
case_with too-long "{\"deployed_context\": $tight, \"neighbours\": [$nb]}"
run too-long 1 && judge too-long "$shortfall and h['neighbours'][0]['state'] == 'running'"

stop_neighbour
case_with reserved "{\"deployed_context\": $tight, \"neighbours\": [$nb]}"
run reserved 1 && judge reserved "$shortfall and h['neighbours'][0]['state'] == 'not running' and h['neighbours'][0]['reserved_mib'] == $declared"
