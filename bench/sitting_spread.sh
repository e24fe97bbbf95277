#!/usr/bin/env bash
# What one sitting cannot see: a golden's launches are recorded back to back, so their spread is the
# launch-to-launch noise within one sitting; a later night adds how much the whole machine moved in
# between (load, page cache, frequency, a neighbour). This runs SITTINGS sittings of LAUNCHES fresh
# launches each (`flashproof run --launches`), PAUSE seconds apart, and prints per figure:
#   within   1.4826 x MAD of the launch medians inside a sitting (median over sittings), % of the median
#   between  the sitting-to-sitting standard deviation beyond what `within` explains:
#            sqrt(max(0, sd(sitting medians)^2 - within^2 / LAUNCHES)), sd robust (1.4826 x MAD), %
# `between` is what golden/noise_band.h adds to a golden's band (sitting_sigma_rel). Prints figures;
# not a test.
#
# usage: bench/sitting_spread.sh [--case CASE.json] [--sittings S] [--launches N] [--pause SECONDS] [--out DIR]
# env:   FLASHPROOF_BUILD_DIR (default build/)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FP=${FLASHPROOF_BUILD_DIR:-$ROOT/build}/flashproof
case_file=$ROOT/cases/chat-tiny-short.json
sittings=6
launches=3
pause=60
out=$ROOT/results/bench-sittings-$(date -u +%Y%m%dT%H%M%SZ)
while [ $# -gt 0 ]; do
  case $1 in
    --case) case_file=$2; shift 2 ;;
    --sittings) sittings=$2; shift 2 ;;
    --launches) launches=$2; shift 2 ;;
    --pause) pause=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 64 ;;
  esac
done
mkdir -p "$out"
name=$(basename "$case_file" .json)
for s in $(seq 1 "$sittings"); do
  [ "$s" -gt 1 ] && sleep "$pause"
  echo "sitting $s of $sittings: $(uptime | sed 's/.*load/load/')" | tee -a "$out/sittings.txt"
  "$FP" run "$case_file" --launches "$launches" --results "$out/s$s" --golden "$out/golden" --record-missing-answers --quiet \
    >"$out/s$s.txt" 2>&1
done
python3 - "$out" "$name" "$launches" <<'PY'
import glob, json, statistics, sys
out, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
def med(v): return statistics.median(v)
def mad(v):
    m = med(v); return med([abs(x - m) for x in v])
sittings = []
for path in sorted(glob.glob(f"{out}/s*/*/{name}/*/result.json")):
    if path.split("/")[-2] in ("latest", "previous"): continue  # links to a run already counted
    sittings.append(json.load(open(path))["figures"])
figs = sorted({k for s in sittings for k in s})
print(f"case {name}: {len(sittings)} sittings of {n} launches")
print(f"{'figure':34} {'median':>10} {'within %':>9} {'between %':>10} {'sitting medians (% of the median)'}")
for f in figs:
    per = [s[f]["launch_medians"] for s in sittings if f in s and len(s[f]["launch_medians"]) >= 2]
    if len(per) < 3: continue
    grand = med([x for p in per for x in p])
    if grand == 0: continue
    within = med([1.4826 * mad(p) for p in per])
    meds = [med(p) for p in per]
    sd_m = 1.4826 * mad(meds)
    between = max(0.0, sd_m ** 2 - within ** 2 / n) ** 0.5
    print(f"{f:34} {grand:10.4g} {100 * within / abs(grand):9.2f} {100 * between / abs(grand):10.2f} "
          + " ".join(f"{100 * (m - grand) / abs(grand):+.1f}" for m in meds))
PY
