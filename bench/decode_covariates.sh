#!/usr/bin/env bash
# Which machine reference explains the launch-to-launch spread of the runtime's decode and prompt
# speed on this machine (issue 22: the completion case's inter-token figure is the one the gate
# cannot decide)? N rounds of: bench/machine_references (the gate's compute reference, matrix-vector
# passes over 20 and 96 MiB), llama-bench of the sid prefix on the realistic model (-fa 1, prompt
# 512 and decode 32 at depth 1024, 3 repetitions: the runtime's own timings, a fresh process each
# round as each gate launch is), the references again. Then per reference (the mean of its two
# timings around the round) against each llama-bench figure's time per token, on logs: r, the
# least-squares slope, the figure's spread and what is left of it after the reference.
# Run it on a quiet machine: it is the machine's own drift that it measures.
#   usage: bench/decode_covariates.sh [ROUNDS] [OUT_FILE]   (default 80 rounds, about 5 minutes)
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-80} out=${2:-/tmp/decode-covariates.txt}
refs=$here/build/bench/machine_references
[ -x "$refs" ] || { echo "build it first: cmake --build build --target machine_references" >&2; exit 64; }
source "${FLASHPROOF_CACHE:-/var/cache/flashproof}/env.sh" || exit 64
model=$here/fixtures/models/generated/realistic.gguf
: >"$out"
for i in $(seq 1 "$rounds"); do
  before=$("$refs")
  ts=$("$FLASHPROOF_LOADER" --library-path "$FLASHPROOF_LIBRARY_PATH" "$FLASHPROOF_PREFIX/usr/bin/llama-bench" \
        -m "$model" -t 2 -fa 1 -p 512 -n 32 -d 1024 -r 3 -o csv 2>/dev/null |
        python3 -c 'import csv,sys; print(" ".join(r["avg_ts"] for r in csv.DictReader(sys.stdin)))')
  after=$("$refs")
  echo "$i $(date +%s) $before $after $ts" >>"$out"
done
python3 - "$out" <<'PY'
import math, sys
rows = [list(map(float, l.split()[2:])) for l in open(sys.argv[1]) if len(l.split()) == 10]
def mean2(k): return [(r[k] + r[k + 3]) / 2 for r in rows]
refs = {"compute (the gate's)": mean2(0), "matvec 20 MiB": mean2(1), "matvec 96 MiB": mean2(2)}
figs = {"prompt ms/token": [1 / r[6] for r in rows], "decode ms/token": [1 / r[7] for r in rows]}
def fit(x, y):
    x = [math.log(v) for v in x]; y = [math.log(v) for v in y]
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y)); sxx = sum((a - mx) ** 2 for a in x); syy = sum((b - my) ** 2 for b in y)
    r = sxy / math.sqrt(sxx * syy); sd = math.sqrt(syy / (len(y) - 1))
    return r, sxy / sxx, sd, sd * math.sqrt(1 - r * r)
print(f"{len(rows)} rounds ({sys.argv[1]})")
for fn, y in figs.items():
    for rn, x in refs.items():
        r, slope, sd, rest = fit(x, y)
        print(f"{fn:16s} vs {rn:22s} r {r:5.2f}  slope {slope:5.2f}  spread {100*sd:5.1f}%  left after it {100*rest:5.1f}%")
PY
