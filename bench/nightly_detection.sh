#!/usr/bin/env bash
# Nightly detection table with the defaults (docs/upgrade-gate.md "Nightly"): a golden recorded from
# 5 launches, then NIGHTS rounds of nightly runs (`flashproof run --launches 3`, ci/nightly.sh's
# default) against it, all into one results history so the band learns from the nights as a real
# nightly's would. Each round runs every condition once:
#   same      the same build: any failure is a false alarm
#   reduced   the prefix without ggml's best CPU backend variants (ci/reduced-prefix.sh; llama-bench
#             prompt -15..-25%, decode -26% here): must fail every night
#   cpu-5     the same build under a 95% CPU quota (`run --cpu-share 0.95`: 5% fewer CPU cycles)
#   memory    the same build with a KV cache KV_FACTOR times as large (a wrapper appends -c
#             KV_FACTOR x context; default 2): memory growth must fail, named (the tolerance is the
#             larger of 2% and 16 MiB: a tiny model's 1 MiB KV cache needs --kv-factor 32 to show)
# Prints per condition: nights, failed nights, the figures that failed, minutes; the false alarms
# over the same-build nights; and per condition the correlation (Pearson, Spearman) of each machine
# reference (machine.reference_ms, machine.throughput_ms) with cpu_ms_per_token over the nights
# (each night's values in nights.txt and nights.tsv). Prints figures; not a test. Meant to run unattended (an hour or more).
#
# usage: bench/nightly_detection.sh [--case CASE.json] [--nights N] [--launches N] [--conditions "same reduced cpu-5 memory"]
#                                   [--kv-factor F] [--out DIR]
# env:   FLASHPROOF_BUILD_DIR (default build/), FLASHPROOF_CACHE (default /var/cache/flashproof)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FP=${FLASHPROOF_BUILD_DIR:-$ROOT/build}/flashproof
case_file=$ROOT/cases/completion-realistic-long.json
nights=10
launches=3
conditions="same reduced cpu-5 memory"
kv_factor=2
out=$ROOT/results/bench-nightly-$(date -u +%Y%m%dT%H%M%SZ)
while [ $# -gt 0 ]; do
  case $1 in
    --case) case_file=$2; shift 2 ;;
    --nights) nights=$2; shift 2 ;;
    --launches) launches=$2; shift 2 ;;
    --conditions) conditions=$2; shift 2 ;;
    --kv-factor) kv_factor=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 64 ;;
  esac
done
. "${FLASHPROOF_CACHE:-/var/cache/flashproof}/env.sh"
PREFIX=$FLASHPROOF_PREFIX
LIB=$PREFIX/usr/lib/x86_64-linux-gnu
mkdir -p "$out"
cd "$ROOT"
name=$(basename "$case_file" .json)
REDUCED=$out/reduced-prefix
case " $conditions " in *" reduced "*) bash "$ROOT/ci/reduced-prefix.sh" "$PREFIX" "$REDUCED" >"$out/reduced.txt" || exit 2 ;; esac
# The memory condition: the same build, its KV cache for twice the case's context (the last -c wins).
context=$(sed -n 's/.*"context": *\([0-9]*\).*/\1/p' "$case_file" | head -1)
cat >"$out/bigger-kv.sh" <<WRAP
#!/bin/sh
exec "$FLASHPROOF_LOADER" --library-path "$FLASHPROOF_LIBRARY_PATH" "$FLASHPROOF_LLAMA_SERVER" "\$@" -c $((kv_factor * ${context:-4096}))
WRAP
chmod +x "$out/bigger-kv.sh"

golden=$out/golden
results=$out/results
echo "case $name, golden from 5 launches, $nights nights x ($conditions), $launches launches a night, $(nproc) CPUs, $(date -u +%FT%TZ), $(uptime | sed 's/.*load/load/')" | tee "$out/table.txt"
"$FP" run "$case_file" --record-missing --launches 5 --golden "$golden" --results "$out/golden-run" --quiet >"$out/golden.txt" 2>&1 ||
  { echo "recording the golden failed: $out/golden.txt"; tail -20 "$out/golden.txt"; exit 2; }

declare -A failed runs secs figs
for n in $(seq 1 "$nights"); do
  for cond in $conditions; do
    env_args=() run_args=()
    case $cond in
      same) ;;
      reduced) env_args=(FLASHPROOF_LLAMA_SERVER="$REDUCED/usr/bin/llama-server" FLASHPROOF_LOADER="$REDUCED/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
                         FLASHPROOF_LIBRARY_PATH="$REDUCED/usr/lib/x86_64-linux-gnu:$REDUCED/usr/lib/x86_64-linux-gnu/llama") ;;
      cpu-*) run_args=(--cpu-share "$(awk -v p="${cond#cpu-}" 'BEGIN{printf "%.3f", 1 - p / 100}')") ;;
      memory) env_args=(FLASHPROOF_LLAMA_SERVER="$out/bigger-kv.sh" FLASHPROOF_LOADER= FLASHPROOF_LIBRARY_PATH=) ;;
      *) echo "unknown condition $cond" >&2; exit 64 ;;
    esac
    s=$(date +%s)
    env "${env_args[@]}" "$FP" run "$case_file" --launches "$launches" --golden "$golden" --results "$results" --quiet "${run_args[@]}" \
      >"$out/$cond-$n.txt" 2>&1
    rc=$?
    e=$(date +%s)
    runs[$cond]=$(( ${runs[$cond]:-0} + 1 ))
    secs[$cond]=$(( ${secs[$cond]:-0} + e - s ))
    res=$(ls -d "$results"/*/"$name"/latest 2>/dev/null | head -1)
    why=$(grep -E '^failure\.[0-9]+ = ' "$res/result.txt" 2>/dev/null | sed -E 's/^failure\.[0-9]+ = //; s/^figure //' |
          sed -E 's/^(GUARD |MEMORY )?([A-Za-z0-9_.]+)[: ].*/\2/' | sort -u | tr '\n' ' ')
    [ "$rc" -eq 1 ] && failed[$cond]=$(( ${failed[$cond]:-0} + 1 )) && figs[$cond]="${figs[$cond]:-} $why"
    # The machine beside the runtime: the two reference workloads (how fast the cores were: one
    # thread's latency chain, multiply-adds on all CPUs at a barrier), the runtime's own CPU time per
    # token and the other load, each the night's median.
    fig() { sed -n "s/^figure\.$1\.p50 = //p" "$res/result.txt" 2>/dev/null | head -1; }
    ref=$(fig machine.reference_ms) thr=$(fig machine.throughput_ms) cpu=$(fig cpu_ms_per_token)
    echo "night $n $cond: exit $rc, $((e - s)) s; failed: ${why:-none}; reference $ref ms, throughput $thr ms," \
      "cpu/token $cpu ms, other load $(fig machine.other_load); $(uptime | sed 's/.*load/load/')" >>"$out/nights.txt"
    printf '%s\t%s\t%s\t%s\t%s\n' "$n" "$cond" "${ref:--}" "${thr:--}" "${cpu:--}" >>"$out/nights.tsv"
  done
done
printf '%-10s %7s %7s %9s  %s\n' condition nights failed minutes "figures that failed (count)" | tee -a "$out/table.txt"
for cond in $conditions; do
  counted=$(tr ' ' '\n' <<<"${figs[$cond]:-}" | grep -v '^$' | sort | uniq -c | awk '{printf "%s(%d) ", $2, $1}')
  printf '%-10s %7d %7d %9.1f  %s\n' "$cond" "${runs[$cond]:-0}" "${failed[$cond]:-0}" \
    "$(awk -v s="${secs[$cond]:-0}" -v n="${runs[$cond]:-1}" 'BEGIN{print s / n / 60}')" "${counted:-}" | tee -a "$out/table.txt"
done
echo "false alarms: ${failed[same]:-0} of ${runs[same]:-0} same-build nights; per night: $out/nights.txt; outputs $out/<condition>-<night>.txt" | tee -a "$out/table.txt"
# Does a reference move with the runtime's CPU time per token from night to night? Per condition
# (a build changes cpu/token, not the machine), Pearson and Spearman over the nights.
python3 - "$out/nights.tsv" <<'PY' | tee -a "$out/table.txt"
import sys
def pearson(x, y):
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx, syy = sum((a - mx) ** 2 for a in x), sum((b - my) ** 2 for b in y)
    return sxy / (sxx * syy) ** 0.5 if sxx > 0 and syy > 0 else float("nan")
def ranks(v):  # ties get their mean rank
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]: j += 1
        for k in range(i, j + 1): r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r
rows = {}
for line in open(sys.argv[1]):
    n, cond, ref, thr, cpu = line.rstrip("\n").split("\t")
    rows.setdefault(cond, []).append((ref, thr, cpu))
print("correlation with cpu_ms_per_token over the nights (Pearson, Spearman):")
for cond, rs in rows.items():
    out = []
    for label, col in (("machine.reference_ms", 0), ("machine.throughput_ms", 1)):
        pairs = [(float(r[col]), float(r[2])) for r in rs if r[col] != "-" and r[2] != "-"]
        if len(pairs) < 3:
            out.append(f"{label} n/a ({len(pairs)} nights)")
            continue
        x, y = [p[0] for p in pairs], [p[1] for p in pairs]
        out.append(f"{label} {pearson(x, y):+.2f}, {pearson(ranks(x), ranks(y)):+.2f} ({len(pairs)} nights)")
    print(f"  {cond:10} " + "; ".join(out))
PY
echo "history --changes over these nights:" | tee -a "$out/table.txt"
"$FP" history --changes --results "$results" "$name" | tee -a "$out/table.txt"
