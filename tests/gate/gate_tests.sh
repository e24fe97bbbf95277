#!/usr/bin/env bash
# Integration tests of goldens per machine, accept and the upgrade gate, against the real
# llama-server on the tiny model (tests/gate/CMakeLists.txt registers one CTest test per function).
#
# usage: gate_tests.sh TEST FLASHPROOF WORKDIR
# `record` (the CTest fixture setup) records a golden for chat-tiny-short into WORKDIR/base (3 fresh
# launches); every other test copies it into its own folder WORKDIR/<test>, so nothing depends on this
# CPU model or on the committed golden/. Timing is never judged against that golden (it was recorded
# minutes ago, in the same CTest run): the runs that must pass use a copy of the case whose gated
# figure's minimum effect is 1000% (lenient_case), so they exercise the comparison without depending
# on this machine's noise; `stricter` makes the golden unattainable instead. Timing regressions are
# the side-by-side gate's tests. Exit 0 pass, 1 fail (with the reason), 125 skipped (no llama-server).
# A failing test keeps its folder and prints its path.
set -uo pipefail

test_name=$1
FP=$2
WORK=$3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CASE=$ROOT/cases/chat-tiny-short.json
REPS=(--repetitions 3 --warmup 0)
GOLDEN_LAUNCHES=3
BASE=$WORK/base
T=$WORK/$test_name

fail() {
  echo "FAIL ($test_name): $*"
  echo "working files kept in $T"
  exit 1
}
expect_rc() {  # expect_rc WANT GOT WHAT
  [ "$2" -eq "$1" ] || fail "$3: expected exit $1, got $2 (output in $T/out.txt)"
}
expect_out() {  # expect_out REGEX [FILE]
  grep -Eq -- "$1" "${2:-$T/out.txt}" || fail "output does not match: $1 (see ${2:-$T/out.txt})"
}
reject_out() {
  if grep -Eq -- "$1" "${2:-$T/out.txt}"; then fail "output must not match: $1 (see ${2:-$T/out.txt})"; fi
}
fp() { "$FP" "$@" >"$T/out.txt" 2>&1; local rc=$?; cat "$T/out.txt"; return $rc; }
json_edit() {  # json_edit FILE PYTHON-EXPRESSION-ON-d
  python3 - "$1" "$2" <<'PY' || fail "cannot edit $1"
import json, sys
path, expr = sys.argv[1], sys.argv[2]
with open(path) as f:
    d = json.load(f)
exec(expr)
with open(path, "w") as f:
    json.dump(d, f, indent=2)
    f.write("\n")
PY
}
fingerprint_id() { ls "$BASE/golden"; }
# A copy of the fixture golden, its machine.other_load at most the busy limit (25%, golden/compare.h
# kBusyGoldenLimit): recorded on a busy CI machine it would make every comparison "UNTRUSTWORTHY
# GOLDEN"; kept (not removed), a busier night is still "BUSIER" and not judged. These tests are about
# the comparison and the gates; the machine rules have their own (fault:busy-golden, unit tests).
fresh() {
  [ -f "$BASE/golden/$(fingerprint_id)/chat-tiny-short.json" ] || fail "the fixture golden is missing: run gate:record first"
  rm -rf "$T"
  mkdir -p "$T"
  cp -a "$BASE/golden" "$T/golden"
  json_edit "$T/golden/$(fingerprint_id)/chat-tiny-short.json" '
m = d["figures"].get("machine.other_load")
if m and m["median"] > 0.25: m["median"] = 0.25'
}
# Makes every gated timing figure of a golden unattainable: lower-is-better medians tiny,
# higher-is-better huge, no launch-to-launch spread. Memory figures (gated too) are left as recorded:
# their failure line ("MEMORY ...") would otherwise come first. The machine as recorded is made the
# slowest possible and its load is left out, so that a busy CI machine never turns the regression
# into "BUSIER" or "SLOWER MACHINE" (not judged tonight), nor a busy recording into "UNTRUSTWORTHY GOLDEN":
# this test is about the comparison, not the machine rules.
make_strict() {
  json_edit "$1" '
m = d["figures"]
m.pop("machine.other_load", None)
if "machine.reference_ms" in m: m["machine.reference_ms"]["median"] = 1e9
if "machine.throughput_ms" in m: m["machine.throughput_ms"]["median"] = 1e9
for name, f in d["figures"].items():
    if f["gate"] and not name.startswith("memory."):
        f["median"] = 0.001 if f["direction"] == "lower_is_better" else 1e9
        f["spread"] = 0.0'
}
# Writes $T/cases/chat-tiny-short.json: the case with a minimum effect of 1000% on its gated figure
# and on every guard (the figures a user feels that the job does not gate: 25% by default), so that
# a run against the fixture golden cannot fail on this machine's timing noise; prints its path. (CI
# once failed `history_diff` on the ttft_ms guard: a single launch's TTFT 8.9 -> 16.4 ms, +84%, on
# a shared 2-core machine.)
lenient_case() {
  mkdir -p "$T/cases"
  cp "$CASE" "$T/cases/chat-tiny-short.json"
  json_edit "$T/cases/chat-tiny-short.json" '
p = d.setdefault("plan", {})
p["min_effect"] = {"ttft_ms_p95": 10}
p["guards"] = {f: 10 for f in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms", "prompt_tokens_per_s", "decode_tokens_per_s", "throughput_tokens_per_s")}'
  echo "$T/cases/chat-tiny-short.json"
}
# Turns the fixture golden into the golden of an older runtime build (11000) and removes this one,
# so the gate has a previous fingerprint to compare with.
simulate_older_build() {
  local id old
  id=$(fingerprint_id)
  old=${id%-b*}-b11000
  mv "$T/golden/$id" "$T/golden/$old"
  for f in "$T/golden/$old/fingerprint.json" "$T/golden/$old/chat-tiny-short/fingerprint.json"; do
    json_edit "$f" '
d["runtime_build"] = "11000"
d["runtime_build_log"] = "11000"
d["runtime_version"] = d["runtime_version"].replace("11669", "11000")
d["id"] = d["id"].replace("-b11669", "-b11000")'
  done
  json_edit "$T/golden/$old/chat-tiny-short.json" 'd["fingerprint"] = d["fingerprint"].replace("-b11669", "-b11000")'
  echo "$old"
}

t_record() {
  rm -rf "$BASE"
  mkdir -p "$BASE"
  T=$BASE
  fp run "$CASE" --golden "$BASE/golden" --results "$BASE/results" --record-missing --launches $GOLDEN_LAUNCHES "${REPS[@]}"
  expect_rc 0 $? "run --record-missing"
  expect_out "timed runs: launch $GOLDEN_LAUNCHES of $GOLDEN_LAUNCHES"
  local id
  id=$(fingerprint_id)
  [ -n "$id" ] || fail "no fingerprint folder in $BASE/golden"
  for f in fingerprint.json chat-tiny-short.json chat-tiny-short/fingerprint.json chat-tiny-short/verdict.json; do
    [ -s "$BASE/golden/$id/$f" ] || fail "the recorded golden lacks $f"
  done
  [[ $id =~ -b[0-9]+$ ]] || fail "fingerprint id $id does not end with the runtime build (-b<build>)"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["model_sha256"] and d["launch"] and d["runtime_build"] and d["cpu_model"], d' \
    "$BASE/golden/$id/chat-tiny-short/fingerprint.json" || fail "the case fingerprint lacks a field"
  # the golden holds launches: schema 4, n = launches, a spread of launch medians, a kernel set ({} on a CPU)
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); n=int(sys.argv[2]); assert d["schema_version"] == 4 and "kernel_families" in d and d["spread_kind"] == "mad_of_launch_medians", d; assert all(f["n"] == n and f["spread"] >= 0 for f in d["figures"].values()), d' \
    "$BASE/golden/$id/chat-tiny-short.json" $GOLDEN_LAUNCHES || fail "the golden does not hold $GOLDEN_LAUNCHES launches"
  local run
  run=$(dirname "$(ls "$BASE"/results/*/chat-tiny-short/*/result.json | head -1)")
  [ -s "$run/timed.log" ] && [ -s "$run/launch-$GOLDEN_LAUNCHES/timed.log" ] || fail "no timed.log per launch in $run"
  [ -L "$BASE/results/$id/chat-tiny-short/latest" ] || fail "no latest link in the case's results folder"
  grep -q "chat-tiny-short" "$BASE/results/history.tsv" || fail "the run is not in history.tsv"
}

t_pass() {
  fresh
  local id
  id=$(fingerprint_id)
  fp run "$(lenient_case)" --golden "$T/golden" --results "$T/results" "${REPS[@]}"
  expect_rc 0 $? "a run against its own machine's golden"
  expect_out "pass"
  expect_out "answers? .*3/3 match|3/3 match"
  # the comparison ran, per launch, with the case's minimum effect, and the recorded verdict held
  local result
  result=$(ls "$T"/results/*/chat-tiny-short/*/result.txt | head -1)
  expect_out "^golden\.[0-9]+ = pass \[gate\] ttft_ms_p95: pass: .*golden median [0-9.e+-]+ \($GOLDEN_LAUNCHES launches, launch-to-launch spread .*measured median [0-9.e+-]+ \(1 launch\), min effect 1000%" "$result"
  expect_out "^golden\.[0-9]+ = verdict as recorded: active" "$result"
  expect_out "^golden\.status = compared$" "$result"
}

t_stricter() {
  fresh
  local id
  id=$(fingerprint_id)
  make_strict "$T/golden/$id/chat-tiny-short.json"
  cp "$T/golden/$id/chat-tiny-short.json" "$T/strict.json"
  fp run "$CASE" --golden "$T/golden" --results "$T/results" "${REPS[@]}"
  expect_rc 1 $? "a run against a golden stricter than the machine"
  # figure, golden, measured, tolerance and the files to compare
  expect_out "FAIL chat-tiny-short: figure [a-z_0-9]+: regressed: worse by [0-9.e+-]+ .*golden median 0.001 \($GOLDEN_LAUNCHES launches, launch-to-launch spread 0 = 0%\), measured median [0-9.e+-]+ \(1 launch\), min effect 5%.*\(compare $T/golden/$id/chat-tiny-short.json with $T/results/$id/chat-tiny-short/[^ ]+/result.txt\)"
  cmp -s "$T/strict.json" "$T/golden/$id/chat-tiny-short.json" || fail "the golden was rewritten by a failing run"
}

t_gate_build() {
  fresh
  local old
  old=$(simulate_older_build)
  fp gate "$(lenient_case)" --golden "$T/golden" --results "$T/results" "${REPS[@]}"
  expect_rc 0 $? "the gate after a (simulated) runtime build change, same answers"
  expect_out "^baseline: $old \(the newest other fingerprint"
  expect_out "^  runtime_version: .*11000.* -> .*11669"
  expect_out "^  runtime_build: 11000 -> 11669$"
  expect_out "^verdict: active \(CPU [0-9]+\) -> active \(CPU [0-9]+\)$"
  expect_out "compared with the goldens of fingerprint $old"
  expect_out "^upgrade gate: PASS"
  ls "$T/results/"*/gate-*.txt >/dev/null 2>&1 || fail "no gate report file under $T/results/<id>/"
  [ ! -e "$T/golden/${old%-b11000}-b11669" ] || fail "the gate wrote goldens for the new fingerprint"
}

t_gate_lost_kernel() {
  fresh
  local old
  old=$(simulate_older_build)
  # the same case, launched with the flag off: the new "build" lost the fused kernel
  mkdir -p "$T/cases"
  cp "$CASE" "$T/cases/chat-tiny-short.json"
  json_edit "$T/cases/chat-tiny-short.json" 'd["flag"]["use"] = "off"'
  fp gate "$T/cases/chat-tiny-short.json" --golden "$T/golden" --results "$T/results" "${REPS[@]}"
  expect_rc 1 $? "the gate when fused attention is lost"
  expect_out "PROBLEM LOST: fused attention is not active"
  expect_out "PROBLEM verdict changed: active \(CPU [0-9]+\) -> not active"
  expect_out "^upgrade gate: FAIL"
}

t_gate_model() {
  fresh
  # a second model file: the tiny recipe with another seed
  mkdir -p "$T/model"
  cp "$ROOT/fixtures/models/tiny.json" "$T/model/tiny.json"
  json_edit "$T/model/tiny.json" 'd["seed"] = 7; d.pop("sha256", None)'
  "$FP" make-model "$T/model/tiny.json" --root "$T/model" >"$T/model.txt" 2>&1 || fail "make-model: $(cat "$T/model.txt")"
  local model sha
  model=$T/model/fixtures/models/generated/tiny.gguf
  sha=$(sha256sum "$model" | cut -d' ' -f1)
  mkdir -p "$T/cases"
  cp "$CASE" "$T/cases/chat-tiny-short.json"
  json_edit "$T/cases/chat-tiny-short.json" "d['model'] = {'path': '$model', 'sha256': '$sha'}"
  fp gate "$T/cases/chat-tiny-short.json" --golden "$T/golden" --results "$T/results" "${REPS[@]}"
  expect_rc 1 $? "the gate with another model file (other weights, other answers)"
  expect_out "^baseline: $(fingerprint_id) \(no other fingerprint"
  expect_out "^what changed for this case:"
  expect_out "^  model_sha256: [0-9a-f]{64} -> $sha$"
  expect_out "PROBLEM answer [^ ]+ differs from its reference"
  expect_out "^upgrade gate: FAIL"
}

t_accept() {
  fresh
  local run id g
  id=$(fingerprint_id)
  run=$(dirname "$(ls "$BASE"/results/*/chat-tiny-short/*/result.json | head -1)")
  g=$T/accepted
  # CI set: refused, nothing written
  CI=true "$FP" accept "$run" --golden "$g" --yes >"$T/out.txt" 2>&1
  expect_rc 3 $? "accept with CI set"
  expect_out "refusing: CI is set"
  [ ! -e "$g" ] || fail "accept wrote $g with CI set"
  # shown but not confirmed (no terminal, no --yes): nothing written
  env -u CI "$FP" accept "$run" --golden "$g" </dev/null >"$T/out.txt" 2>&1
  expect_rc 0 $? "accept without --yes"
  expect_out "nothing written"
  [ ! -e "$g" ] || fail "accept wrote $g without confirmation"
  # --only figures: exactly the figures shown, no answers
  env -u CI "$FP" accept "$run" --golden "$g" --only figures --yes >"$T/out.txt" 2>&1
  expect_rc 0 $? "accept --only figures --yes"
  cat "$T/out.txt"
  local shown written
  shown=$(sed -n 's/^  [+~=] \([A-Za-z_0-9.]*\) .*median.*/\1/p' "$T/out.txt" | sort | tr '\n' ' ')
  written=$(python3 -c 'import json,sys; print(" ".join(sorted(json.load(open(sys.argv[1]))["figures"])) + " ")' "$g/$id/chat-tiny-short.json")
  [ -n "$shown" ] && [ "$shown" = "$written" ] || fail "accept showed figures [$shown] but wrote [$written]"
  [ ! -e "$g/$id/chat-tiny-short/answers" ] || fail "accept --only figures wrote answers"
  reject_out "^answers"
  # then the answers: shown as added, written, and a second accept has nothing to change
  env -u CI "$FP" accept "$run" --golden "$g" --only answers --yes >"$T/out.txt" 2>&1
  expect_rc 0 $? "accept --only answers --yes"
  local added files
  added=$(grep -c '^  added ' "$T/out.txt")
  files=$(ls "$g/$id/chat-tiny-short/answers" | wc -l)
  [ "$added" -gt 0 ] && [ "$added" -eq "$files" ] || fail "accept showed $added added answers, wrote $files files"
  env -u CI "$FP" accept "$run" --golden "$g" --yes >"$T/out.txt" 2>&1
  expect_rc 0 $? "a second accept"
  expect_out "nothing to change"
  # a removed figure is shown as removed
  json_edit "$g/$id/chat-tiny-short.json" 'd["figures"]["old_figure_ms"] = dict(next(iter(d["figures"].values())))'
  env -u CI "$FP" accept "$run" --golden "$g" --only figures </dev/null >"$T/out.txt" 2>&1
  expect_out "^  - old_figure_ms +removed: this run did not measure it"
}

t_corrupt() {
  fresh
  local id golden size
  id=$(fingerprint_id)
  golden=$T/golden/$id/chat-tiny-short.json
  size=$(stat -c %s "$golden")
  head -c $((size / 2)) "$golden" >"$T/truncated.json"
  cp "$T/truncated.json" "$golden"
  # accept: an error naming the file, the file untouched (no run needed)
  run=$(dirname "$(ls "$BASE"/results/*/chat-tiny-short/*/result.json | head -1)")
  env -u CI "$FP" accept "$run" --golden "$T/golden" --yes >"$T/out.txt" 2>&1
  expect_rc 2 $? "accept over a truncated golden"
  expect_out "$golden: not valid JSON"
  cmp -s "$T/truncated.json" "$golden" || fail "accept overwrote the truncated golden"
  # a corrupt fingerprint.json of a candidate baseline: the gate stops before running, naming it
  mkdir -p "$T/golden/other-fingerprint"
  echo '{"cpu_model": "x", "cores": ' >"$T/golden/other-fingerprint/fingerprint.json"
  fp gate "$CASE" --golden "$T/golden" --results "$T/results" "${REPS[@]}"
  expect_rc 2 $? "the gate with a corrupt candidate fingerprint"
  expect_out "$T/golden/other-fingerprint/fingerprint.json: not a valid fingerprint file"
  rm -rf "$T/golden/other-fingerprint"
  # run, even with --record-missing: a failure naming the file, never a pass, never overwritten
  fp run "$CASE" --golden "$T/golden" --results "$T/results" --record-missing "${REPS[@]}"
  expect_rc 1 $? "a run against a truncated golden"
  expect_out "golden unreadable \(left untouched\): $golden: not valid JSON"
  cmp -s "$T/truncated.json" "$golden" || fail "the run overwrote the truncated golden"
}

t_history_diff() {
  # the fixture run and a second run: diff --last and the latest/previous links
  fresh
  cp -a "$BASE/results" "$T/results"
  # the copied history names the fixture's run folders relative to the results root: still valid
  fp run "$(lenient_case)" --golden "$T/golden" --results "$T/results" "${REPS[@]}"
  expect_rc 0 $? "a second run"
  local id
  id=$(fingerprint_id)
  [ -L "$T/results/$id/chat-tiny-short/previous" ] || fail "no previous link after two runs"
  fp diff --last --results "$T/results"
  local rc=$?
  [ $rc -le 1 ] || fail "diff --last: exit $rc"
  expect_out "^verdict and status changes: none"
  expect_out "^figure +old p50 +new p50 +change"
  expect_out "^answers: identical"
  diff "$T/results/$id/chat-tiny-short/previous/result.txt" "$T/results/$id/chat-tiny-short/latest/result.txt" >"$T/plain.diff"
  grep -q '^[<>] figure\.' "$T/plain.diff" || fail "plain diff of the result files shows no figure line"
  fp history --results "$T/results" chat-tiny-short
  expect_out "latest +[0-9T:Z-]+ pass"
  expect_out "previous +[0-9T:Z-]+ pass"
}

case $test_name in
  record | pass | stricter | gate_build | gate_lost_kernel | gate_model | accept | corrupt | history_diff) ;;
  *) echo "unknown test $test_name"; exit 64 ;;
esac
[ -x "$FP" ] || { echo "no flashproof binary at $FP"; exit 1; }
command -v python3 >/dev/null || { echo "SKIP: python3 not found (the tests edit JSON with it; ci/setup.sh installs it)"; exit 125; }
if ! "$FP" fingerprint >/dev/null 2>&1; then
  echo "SKIP: llama-server not found (run ci/setup.sh): $("$FP" fingerprint 2>&1 | tail -1)"
  exit 125
fi
"t_$test_name"
echo "PASS ($test_name)"
