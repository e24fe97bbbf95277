#!/usr/bin/env bash
# figures_device.sh on this CPU with a tiny model, one step of each mode: `ab` (4 blocks), the nightly (its golden
# recorded first) and the side-by-side gate behind the delay proxy with that golden. Each step must end
# with its exit code and its own decision line; the gate must call the 6 ms per connection a
# regression (the tiny model's TTFT is about 10 ms: +50% or more), which shows the proxy wrapper and
# the runtime wrappers chain as on the device.
# usage: figures_dry_run.sh FLASHPROOF_BINARY WORKDIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fp=$1; work=$2
rm -rf "$work"; mkdir -p "$work"
out=$work/out
FP_WORK=$work/fpw FP_DRY_FLASHPROOF=$fp FP_FIGURES_CONTEXT=2048 FP_FIGURES_DEADLINE_S=240 \
  FP_FIGURES_AB_ARGS="--repetitions 4 --rounds 1 --warmup 1 --sustained-s 3 --concurrency 2" \
  bash "$root/tests/gpu/llama-cuda/dry_run_on_cpu.sh" figures_device.sh "$out" ab nightly:same gate:hostslow >"$work/log.txt" 2>&1
rc=$?
[ "$rc" = 125 ] && { cat "$work/log.txt"; exit 125; }
fail() { cat "$work/log.txt" >&2; echo "FAILED: $*" >&2; exit 1; }
[ "$rc" = 0 ] || fail "figures_device.sh exited $rc"
t=$out/figures.txt
[ -f "$t" ] || fail "no $t"
# The A/B's own decision (flag on is faster on this CPU; a busy machine may leave it unresolved).
grep -qE '^ab ab: exit [03], [0-9]+ s, [0-9]+ launches to the decision; (PASS|UNRESOLVED)' "$t" || fail "the ab step: no decision line"
grep -qE '^nightly same: exit 0, .*status = pass' "$t" || fail "the nightly step: no pass"
grep -qE '^gate hostslow: exit 1, .*side-by-side gate: REGRESSION' "$t" || fail "the gate behind the delay proxy: not a regression"
grep -q 'not run' "$t" && fail "a step was not run"
grep -q -- "--golden $work/fpw/figures/golden" "$out/device.txt" || fail "the gate step did not get the nightly's golden"
tar -tzf "$out/figures.tar.gz" >"$work/packed.txt" || fail "figures.tar.gz unreadable"
grep -q 'gate-hostslow/.*gate.json' "$work/packed.txt" || fail "figures.tar.gz lacks the gate's gate.json"
echo "figures_device.sh dry run: every step decided ($(grep -cE '^(ab|nightly|gate) ' "$t") steps)"
