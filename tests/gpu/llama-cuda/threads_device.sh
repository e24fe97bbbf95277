#!/usr/bin/env bash
# On the device, after run_device.sh (sid's llama-server with its CUDA backend unpacked into FP_WORK):
# why the side-by-side gate's TTFT on the H200 was bimodal, launch by launch (~110 ms or ~150 ms for
# the same prompt). The gate pinned the runtime to CPUs 0-14 and the client to CPU 15, and llama-server
# sized its OpenMP threads from all 16 CPUs. This script launches llama-server again and again, the
# arms interleaved, and times the same 12000-character prompt in each launch (2 warm-up + 5 measured
# /completion requests, 1 token out, the server's own prompt_ms):
#   pin15-t16   taskset 0-14, llama.cpp's default threads (16): what the gate did
#   pin15-t15   taskset 0-14, -t 15: what the gate does now (runtime/thread_args.h)
#   all16-t16   no taskset, default threads: what `flashproof run` does
# usage: threads_device.sh OUTDIR [LAUNCHES_PER_ARM (default 6)]
# Output: OUTDIR/threads/table.txt (one line per launch: arm, median prompt_ms, the 5 values,
# n_threads from the log, then a summary per arm: median and spread of the launch medians) and
# OUTDIR/threads/launches.tar.gz (every launch's log and answers: the device tool returns 8 files).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
O=$1/threads; N=${2:-6}
W=${FP_WORK:-/tmp/fp-llama-cuda}
L=$W/prefix/usr/lib/x86_64-linux-gnu
LIBS=$(cat "$W/library-path") || { echo "threads: run run_device.sh first" >&2; exit 1; }
mkdir -p "$O"
export CUDA_CACHE_PATH=$W/jit-cache CUDA_CACHE_MAXSIZE=4294967296 CUDA_MODULE_LOADING=LAZY
table=$O/table.txt
cpus=$(nproc); last=$((cpus - 1))
echo "llama-server launches on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $cpus CPUs; client on CPU $last" >"$table"
port=18900
one() {  # ARM
  local arm=$1 pre=() extra=()
  case $arm in
    pin15-t16) pre=(taskset -c "0-$((last - 1))") ;;
    pin15-t15) pre=(taskset -c "0-$((last - 1))"); extra=(-t "$last") ;;
    all16-t16) ;;
  esac
  port=$((port + 1))
  local base=$O/$arm-$port
  "${pre[@]}" "$L/ld-linux-x86-64.so.2" --library-path "$LIBS" "$W/prefix/usr/bin/llama-server" -m "$W/realistic.gguf" \
    --host 127.0.0.1 --port "$port" -c 16384 -np 1 -ngl 99 --seed 42 -fa on -lv 4 "${extra[@]}" >"$base.log" 2>&1 &
  local pid=$!
  taskset -c "$last" python3 "$here/ask.py" --port "$port" --prompt-file "$root/fixtures/prompts/documents/operations_manual.txt" \
    --chars 12000 --n-predict 1 --requests 7 --ready-timeout 120 --pid "$pid" --out "$base.json" 2>/dev/null
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  python3 - "$arm" "$base.json" "$base.log" >>"$table" <<'PY'
import json, re, statistics, sys
arm, js, log = sys.argv[1:4]
r = json.load(open(js))
ms = [q['timings']['prompt_ms'] for q in r['requests'][2:] if q.get('timings')]
m = re.search(r'n_threads = (\d+) \(n_threads_batch = (\d+)\) / (\d+)', open(log, errors='replace').read())
thr = f"n_threads {m.group(1)}/{m.group(3)}" if m else "n_threads ?"
med = statistics.median(ms) if ms else float('nan')
print(f"{arm} {med:.1f} [{' '.join(f'{x:.1f}' for x in ms)}] {thr} {r.get('error') or ''}".rstrip())
PY
}
for i in $(seq 1 "$N"); do
  # A different arm first each time: no arm always follows the same one.
  case $((i % 3)) in
    0) order=(pin15-t16 pin15-t15 all16-t16) ;;
    1) order=(pin15-t15 all16-t16 pin15-t16) ;;
    2) order=(all16-t16 pin15-t16 pin15-t15) ;;
  esac
  for arm in "${order[@]}"; do one "$arm"; done
done
python3 - "$table" <<'PY' | tee -a "$table"
import math, statistics, sys
by = {}
for line in open(sys.argv[1]).read().splitlines()[1:]:
    f = line.split()
    try: by.setdefault(f[0], []).append(float(f[1]))
    except (IndexError, ValueError): pass
for arm, v in sorted(by.items()):
    logs = [math.log(x) for x in v if x > 0]
    sd = 100 * statistics.stdev(logs) if len(logs) > 1 else float('nan')
    print(f"summary {arm}: {len(v)} launches, median of launch medians {statistics.median(v):.1f} ms, "
          f"min {min(v):.1f}, max {max(v):.1f}, launch-to-launch sd {sd:.1f}%")
PY
tar -C "$O" -czf "$O/launches.tar.gz" --remove-files $(cd "$O" && ls | grep -E '\.(json|log)$')
