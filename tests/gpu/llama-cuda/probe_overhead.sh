#!/usr/bin/env bash
# The CUPTI probe's cost inside llama-server on the device, after run_device.sh has unpacked the
# bundle and built the probe (it reads FP_WORK/library-path and FP_WORK/probe-path). The timed
# configuration (-fa on, -lv 4, realistic model) is launched REPS times with the probe attached and
# REPS times without, alternating which goes first; each launch answers REQUESTS identical
# /completion requests (1002 prompt tokens, 32 out); the first of each launch is dropped (warm-up).
# Prints the medians of the server's prompt_ms and decode ms per token and the client's wall time
# per arm, and the start-up (launch to /health) per arm. Why it matters: flashproof keeps the probe
# out of the timed runs; this is what it would cost there.
# usage: probe_overhead.sh OUTDIR [REPS] [REQUESTS]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
O=$1 REPS=${2:-5} REQ=${3:-21}
W=${FP_WORK:-/tmp/fp-llama-cuda}
L=$W/prefix/usr/lib/x86_64-linux-gnu
LIBS=$(cat "$W/library-path") || exit 1
probe=$(cat "$W/probe-path") || exit 1
mkdir -p "$W/overhead" "$O"
port=18600
launch() {  # ARM REP
  local arm=$1 rep=$2 envs=(CUDA_CACHE_PATH="$W/jit-cache" CUDA_CACHE_MAXSIZE=4294967296 CUDA_MODULE_LOADING=LAZY)
  [ "$arm" = probe ] && envs+=(CUDA_INJECTION64_PATH="$probe" FLASHPROOF_KERNEL_TALLY="$W/overhead/$arm-$rep.kernels.tsv")
  port=$((port + 1))
  env "${envs[@]}" "$L/ld-linux-x86-64.so.2" --library-path "$LIBS" "$W/prefix/usr/bin/llama-server" \
    -m "$W/realistic.gguf" --host 127.0.0.1 --port "$port" -ngl 99 -c 4096 -np 1 --seed 42 -fa on -lv 4 \
    >"$W/overhead/$arm-$rep.log" 2>&1 &
  local pid=$!
  python3 "$here/ask.py" --port "$port" --pid "$pid" --prompt-file "$root/fixtures/prompts/documents/operations_manual.txt" \
    --chars 1000 --n-predict 32 --requests "$REQ" --ready-timeout 300 --out "$W/overhead/$arm-$rep.json" 2>/dev/null
  kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
}
for rep in $(seq "$REPS"); do
  if ((rep % 2)); then launch probe "$rep"; launch none "$rep"; else launch none "$rep"; launch probe "$rep"; fi
done
python3 - "$W/overhead" "$REPS" <<'PY' | tee "$W/overhead/summary.txt"
import json, statistics, sys, glob
d, reps = sys.argv[1], int(sys.argv[2])
def load(arm):
    prompt, tok, wall, ready = [], [], [], []
    for f in sorted(glob.glob(f"{d}/{arm}-*.json")):
        r = json.load(open(f))
        if r.get("error"): print(f"{f}: {r['error']}"); continue
        ready.append(r["ready_s"] * 1000)
        for q in r["requests"][1:]:
            t = q["timings"]; prompt.append(t["prompt_ms"]); tok.append(t["predicted_per_token_ms"]); wall.append(q["wall_ms"])
    return prompt, tok, wall, ready
a, b = load("none"), load("probe")
names = ["prompt_ms (server)", "decode ms/token (server)", "request wall ms (client)", "launch to /health ms"]
print(f"probe overhead in llama-server: {reps} launches per arm, alternating; first request of each launch dropped")
for i, n in enumerate(names):
    x, y = statistics.median(a[i]), statistics.median(b[i])
    print(f"  {n:28s} without {x:9.3f}  with probe {y:9.3f}  ({(y / x - 1) * 100:+.1f}%, n {len(a[i])}/{len(b[i])})")
PY
tar -C "$W" -czf "$O/overhead.tar.gz" overhead
