#!/usr/bin/env bash
# Detection table of the side-by-side gate on this machine, with the gate's defaults, per case: how
# often identical builds are called "no regression", how often a real slowdown of the candidate is
# called a regression, and the blocks and wall time each trial took, with the load average beside
# every trial. Prints figures; not a test. Runs unattended (bench/README.md section 3).
#
# Slowdowns, all real (bench/README.md section 3):
#   same        the same prefix on both sides (A/A)
#   cpu-2 ...   the candidate's timed launches under a CPU quota of 98/95/90/80% of the machine
#               (`gate --candidate-cpu-share`, cgroup-v1 cpu controller)
#   reduced     the prefix without the CPU backend variant ggml loads here (ci/reduced-prefix.sh)
#
# usage: bench/gate_detection.sh [--trials N] [--case CASE.json]... [--shipped] [--fresh]
#                                [--conditions "same:10 cpu-5:3 ..."] [--load] [--out DIR] [-- extra gate options]
#   --conditions  each NAME or NAME:TRIALS (TRIALS overrides --trials for that condition)
#   --case     a case to run (repeatable); default cases/chat-tiny-short.json unless --shipped/--fresh
#   --shipped  every case in cases/ the gate times (self-test cases, with a "ctest" block, left out)
#   --fresh    a case fresh from `flashproof new-case` (chat, the realistic model, as an operator drafts it)
#   --load     runs a background load during every trial: a CPU-bound process on one core that works
#              for a random 0.2-2 s and sleeps as long, over and over (a noisy neighbour, not a constant)
# The whole table for the lead (bench/README.md says how long it takes):
#   bash bench/gate_detection.sh --shipped --fresh --conditions "same:10 reduced:2 cpu-5:3"
# env: FLASHPROOF_BUILD_DIR (default build/), FLASHPROOF_CACHE (default /var/cache/flashproof)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FP=${FLASHPROOF_BUILD_DIR:-$ROOT/build}/flashproof
trials=10
cases=()
shipped=0
fresh=0
conditions="same cpu-2 cpu-5 cpu-10 cpu-20 reduced"
load=0
out=$ROOT/results/bench-gate-$(date -u +%Y%m%dT%H%M%SZ)
extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --trials) trials=$2; shift 2 ;;
    --case) cases+=("$2"); shift 2 ;;
    --shipped) shipped=1; shift ;;
    --fresh) fresh=1; shift ;;
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
if [ "$shipped" = 1 ]; then
  for c in "$ROOT"/cases/*.json; do grep -q '"ctest"' "$c" || cases+=("$c"); done
fi
if [ "$fresh" = 1 ]; then
  # As an operator drafts a case: their launch command, the job, nothing else.
  "$FP" new-case fresh-chat --job chat --root "$ROOT" --out "$out/fresh/fresh-chat.json" --force -- \
    llama-server -m fixtures/models/generated/realistic.gguf -c 4096 -fa on >"$out/fresh-new-case.txt" 2>&1 ||
    { cat "$out/fresh-new-case.txt"; exit 2; }
  cases+=("$out/fresh/fresh-chat.json")
fi
[ ${#cases[@]} -gt 0 ] || cases=("$ROOT/cases/chat-tiny-short.json")
REDUCED=$out/reduced-prefix
case " $conditions " in *" reduced "*|*" reduced:"*) bash "$ROOT/ci/reduced-prefix.sh" "$PREFIX" "$REDUCED" >"$out/reduced.txt" || exit 2; cat "$out/reduced.txt" ;; esac

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
load1() { cut -d' ' -f1 /proc/loadavg; }

echo "${#cases[@]} case(s), conditions: $conditions (default $trials trials each), background load $load, $(nproc) CPUs, $(date -u +%FT%TZ), build $FP" | tee "$out/table.txt"
printf '%-30s %-9s %6s %5s %7s %6s %5s %6s %9s %8s %11s\n' case condition trials reg "no reg" unres inc blocks "max blk" minutes "load 1-min" | tee -a "$out/table.txt"
for case_file in "${cases[@]}"; do
  name=$(basename "$case_file" .json)
  for item in $conditions; do
    cond=${item%%:*}
    n=$trials
    [ "$item" != "$cond" ] && n=${item#*:}
    args=(--baseline-runtime "$PREFIX")
    case $cond in
      same) args+=(--candidate-runtime "$PREFIX") ;;
      reduced) args+=(--candidate-runtime "$REDUCED") ;;
      cpu-*) pct=${cond#cpu-}; args+=(--candidate-runtime "$PREFIX" --candidate-cpu-share "$(awk -v p="$pct" 'BEGIN{printf "%.3f", 1 - p / 100}')") ;;
      *) echo "unknown condition $cond" >&2; exit 64 ;;
    esac
    reg=0 nreg=0 unres=0 inc=0 blocks=0 maxb=0 secs=0 lmin=999 lmax=0
    for t in $(seq 1 "$n"); do
      d=$out/$name/$cond/$t
      mkdir -p "$d"
      l0=$(load1)
      s=$(date +%s.%N)
      "$FP" gate "$case_file" "${args[@]}" --root "$ROOT" --results "$d/results" --quiet "${extra[@]}" >"$d/out.txt" 2>&1
      rc=$?
      e=$(date +%s.%N)
      l1=$(load1)
      case $rc in 0) nreg=$((nreg + 1)) ;; 1) reg=$((reg + 1)) ;; 3) unres=$((unres + 1)) ;; *) inc=$((inc + 1)) ;; esac
      b=$(sed -n 's/^blocks: \([0-9]*\) in.*/\1/p' "$d/out.txt" | head -1)
      b=${b:-0}
      blocks=$((blocks + b))
      [ "$b" -gt "$maxb" ] && maxb=$b
      secs=$(awk -v a="$secs" -v s="$s" -v e="$e" 'BEGIN{print a + e - s}')
      read -r lmin lmax < <(awk -v a="$lmin" -v b="$lmax" -v x="$l0" -v y="$l1" 'BEGIN{m=a; M=b; if (x<m) m=x; if (y<m) m=y; if (x>M) M=x; if (y>M) M=y; print m, M}')
      {
        echo "$name $cond trial $t: exit $rc, $b blocks, $(awk -v s="$s" -v e="$e" 'BEGIN{printf "%.0f", e - s}') s, load $l0 -> $l1"
        grep -E '^  [a-z_]+: (regression|no regression|unresolved): |looks like a burst|^  budget |stopped early' "$d/out.txt" | cut -c1-200
      } >>"$out/trials.txt"
    done
    printf '%-30s %-9s %6d %5s %7s %6s %5s %6.1f %9s %8.1f %11s\n' "$name" "$cond" "$n" "$reg" "$nreg" "$unres" "$inc" \
      "$(awk -v b="$blocks" -v n="$n" 'BEGIN{print b / n}')" "$maxb" "$(awk -v s="$secs" -v n="$n" 'BEGIN{print s / n / 60}')" \
      "$lmin-$lmax" | tee -a "$out/table.txt"
  done
done
echo "per trial: $out/trials.txt; gate outputs: $out/<case>/<condition>/<trial>/out.txt"
