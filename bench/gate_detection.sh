#!/usr/bin/env bash
# Detection table of the side-by-side gate on this machine, with the gate's defaults: how often a
# real slowdown of the candidate is called a regression, how often identical builds are called "no
# regression", and the blocks and wall time each trial took. Prints figures; not a test.
#
# Slowdowns, all real (bench/README.md section 3):
#   same        the same prefix on both sides (A/A)
#   cpu-2 ...   the candidate's timed launches under a CPU quota of 98/95/90/80% of the machine
#               (`gate --candidate-cpu-share`, cgroup-v1 cpu controller)
#   reduced     the prefix without the CPU backend variant ggml loads here (ci/reduced-prefix.sh)
#
# usage: bench/gate_detection.sh [--trials N] [--case CASE.json] [--conditions "same cpu-5 ..."]
#                                [--load] [--out DIR] [-- extra gate options]
#   --load  runs a background load during every trial: a CPU-bound process on one core that works
#           for a random 0.2-2 s and sleeps as long, over and over (a noisy neighbour, not a constant)
# env: FLASHPROOF_BUILD_DIR (default build/), FLASHPROOF_CACHE (default /var/cache/flashproof)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FP=${FLASHPROOF_BUILD_DIR:-$ROOT/build}/flashproof
trials=10
case_file=$ROOT/cases/chat-tiny-short.json
conditions="same cpu-2 cpu-5 cpu-10 cpu-20 reduced"
load=0
out=$ROOT/results/bench-gate-$(date -u +%Y%m%dT%H%M%SZ)
extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --trials) trials=$2; shift 2 ;;
    --case) case_file=$2; shift 2 ;;
    --conditions) conditions=$2; shift 2 ;;
    --load) load=1; shift ;;
    --out) out=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "unknown option $1" >&2; exit 64 ;;
  esac
done
. "${FLASHPROOF_CACHE:-/var/cache/flashproof}/env.sh"
PREFIX=$FLASHPROOF_PREFIX
mkdir -p "$out"
REDUCED=$out/reduced-prefix
case " $conditions " in *" reduced "*) bash "$ROOT/ci/reduced-prefix.sh" "$PREFIX" "$REDUCED" >"$out/reduced.txt" || exit 2; cat "$out/reduced.txt" ;; esac

load_pid=
start_load() {
  ( while :; do
      t=$(awk -v r=$RANDOM 'BEGIN{printf "%.2f", 0.2 + 1.8 * r / 32767}')
      timeout "$t" sh -c 'while :; do :; done'
      sleep "$t"
    done ) &
  load_pid=$!
}
stop_load() { [ -n "$load_pid" ] && kill -- -"$load_pid" 2>/dev/null; pkill -P "$load_pid" 2>/dev/null; kill "$load_pid" 2>/dev/null; load_pid=; }
trap stop_load EXIT
if [ "$load" = 1 ]; then set -m; start_load; set +m; fi

echo "case $(basename "$case_file"), $trials trials per condition, load $load, $(nproc) CPUs, $(date -u +%FT%TZ)" | tee "$out/table.txt"
printf '%-10s %6s %12s %14s %11s %10s %10s %10s\n' condition trials regression "no regression" unresolved incomplete blocks "minutes" | tee -a "$out/table.txt"
for cond in $conditions; do
  args=(--baseline-runtime "$PREFIX")
  case $cond in
    same) args+=(--candidate-runtime "$PREFIX") ;;
    reduced) args+=(--candidate-runtime "$REDUCED") ;;
    cpu-*) pct=${cond#cpu-}; args+=(--candidate-runtime "$PREFIX" --candidate-cpu-share "$(awk -v p="$pct" 'BEGIN{printf "%.3f", 1 - p / 100}')") ;;
    *) echo "unknown condition $cond" >&2; exit 64 ;;
  esac
  reg=0 nreg=0 unres=0 inc=0 blocks=0 secs=0
  for t in $(seq 1 "$trials"); do
    d=$out/$cond/$t
    mkdir -p "$d"
    s=$(date +%s.%N)
    "$FP" gate "$case_file" "${args[@]}" --results "$d/results" --quiet "${extra[@]}" >"$d/out.txt" 2>&1
    rc=$?
    e=$(date +%s.%N)
    case $rc in 0) nreg=$((nreg + 1)) ;; 1) reg=$((reg + 1)) ;; 3) unres=$((unres + 1)) ;; *) inc=$((inc + 1)) ;; esac
    b=$(sed -n 's/^blocks: \([0-9]*\) in.*/\1/p' "$d/out.txt" | head -1)
    blocks=$((blocks + ${b:-0}))
    secs=$(awk -v a="$secs" -v s="$s" -v e="$e" 'BEGIN{print a + e - s}')
    echo "  $cond trial $t: exit $rc, ${b:-?} blocks, $(awk -v s="$s" -v e="$e" 'BEGIN{printf "%.0f", e - s}') s; $(grep -E '^  ttft_ms: ' "$d/out.txt" | head -1 | cut -c1-110)" >>"$out/trials.txt"
  done
  printf '%-10s %6d %12s %14s %11s %10s %10.1f %10.1f\n' "$cond" "$trials" "$reg" "$nreg" "$unres" "$inc" \
    "$(awk -v b="$blocks" -v n="$trials" 'BEGIN{print b / n}')" "$(awk -v s="$secs" -v n="$trials" 'BEGIN{print s / n / 60}')" | tee -a "$out/table.txt"
done
echo "per trial: $out/trials.txt; gate outputs: $out/<condition>/<trial>/out.txt"
