#!/usr/bin/env bash
# The kernel set and lost evidence against a golden, end to end through the CLI, on the replay TEST
# DOUBLE (recorded H200 logs and tallies; FLASHPROOF_LLAMA_SERVER points at it, FLASHPROOF_TEST_DOUBLE_GPU=1):
#   1. a golden of replay-h200-mid-fa-on from 3 launches holds its kernel set (fattn-mma, -vec, -helpers);
#   2. the same case against it: no KERNEL line;
#   3. the same case name replaying a tally whose mma kernels are renamed to a recorded vec kernel fails
#      "KERNEL SWAP: fattn-mma kernels replaced by fattn-vec kernels" in `run`, the golden gate and `diff`;
#   4. the case whose probe CUPTI refused (no level 3; the copy requires log and placement only, so its
#      verdict stays active) fails "EVIDENCE LOST: level 3 (kernels)".
# Timing figures are the double's sleeps: not what this checks, so exit codes are checked where a
# kernel or evidence failure decides them and the lines are checked everywhere.
#   usage: kernel_set_gate.sh FLASHPROOF_BINARY WORK_DIR
set -uo pipefail
fp=$1 work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$work"
dir=$(mktemp -d "$work/run.XXXXXX")
fail() { echo "KERNEL-SET GATE TEST FAILED: $* (files kept in $dir)" >&2; exit 1; }
has() { grep -qE -- "$2" "$1" || { cat "$1"; fail "$1 lacks: $2"; }; }
lacks() { ! grep -qE -- "$2" "$1" || { cat "$1"; fail "$1 has: $2"; }; }
[ -f "$root/fixtures/models/generated/realistic.gguf" ] || { echo "SKIP: realistic model not generated"; exit 125; }
case=$root/fixtures/replay/cases/replay-h200-mid-fa-on.json
G=$dir/golden R=$dir/results

"$fp" run "$case" --launches 3 --record-missing --golden "$G" --results "$R" --out "$dir/rec" --quiet >"$dir/1.out" 2>&1
gfile=$(ls "$G"/*/replay-h200-mid-fa-on.json 2>/dev/null | head -1)
[ -n "$gfile" ] || { cat "$dir/1.out"; fail "no golden recorded"; }
python3 -c 'import json,sys; k=json.load(open(sys.argv[1]))["kernel_families"]; assert set(k) == {"fattn-mma","fattn-vec","fattn-helpers"} and k["fattn-mma"]["n"] == 4, k' "$gfile" ||
  fail "the golden's kernel set is not fattn-mma, -vec, -helpers from 4 probed launches"

"$fp" run "$case" --golden "$G" --results "$R" --out "$dir/same" --quiet >"$dir/2.out" 2>&1
has "$dir/same/result.txt" "^golden\.[0-9]+ = kernels: fattn-mma: .* \(same;"
lacks "$dir/same/result.txt" "^failure\.[0-9]+ = (KERNEL|EVIDENCE LOST)"

mkdir -p "$dir/swap"
sed -E 's/\tvoid flash_attn_ext_f16<[^\t]*$/\tvoid flash_attn_ext_vec<128, 2, (ggml_type)1, (ggml_type)1, false>(char const*, char const*, float*)/' \
  "$root/fixtures/logs/h200/mid_fa_on.kernels.tsv" >"$dir/swap/mid_fa_on.swapped.kernels.tsv"
python3 - "$case" "$dir/swap/replay-h200-mid-fa-on.json" "$dir/swap/mid_fa_on.swapped.kernels.tsv" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["launch"]["env"]["FLASHPROOF_REPLAY_KERNELS"] = sys.argv[3]
json.dump(c, open(sys.argv[2], "w"), indent=2)
PY
swap="KERNEL SWAP: fattn-mma kernels replaced by fattn-vec kernels: share [0-9.]+% -> 0% / [0-9.]+% -> [0-9.]+%"
"$fp" run "$dir/swap/replay-h200-mid-fa-on.json" --golden "$G" --results "$R" --out "$dir/swapped" --quiet >"$dir/3.out" 2>&1
[ $? -eq 1 ] || { cat "$dir/3.out"; fail "the swapped run did not exit 1"; }
has "$dir/swapped/result.txt" "^failure\.[0-9]+ = $swap"
# result.txt writes the run's folder as {run} (it diffs cleanly); result.json holds the folder itself.
has "$dir/swapped/result.txt" "keep it with .flashproof accept \{run\}."
has "$dir/swapped/result.json" "keep it with .flashproof accept $dir/swapped."
id=$(basename "$(dirname "$gfile")")
"$fp" gate "$dir/swap/replay-h200-mid-fa-on.json" --golden "$G" --results "$R" --baseline "$id" --quiet >"$dir/3g.out" 2>&1
[ $? -eq 1 ] || { cat "$dir/3g.out"; fail "the golden gate did not fail the swap"; }
has "$dir/3g.out" "PROBLEM $swap"
"$fp" diff "$dir/same" "$dir/swapped" >"$dir/3d.out" 2>&1
[ $? -eq 1 ] || { cat "$dir/3d.out"; fail "diff did not exit 1 on the swap"; }
has "$dir/3d.out" "CHANGED $swap"

# CUPTI refused the probe (another profiler held the process): level 3 is silent. The case copy
# requires log and placement only, so the verdict still reads active and only the lost level fails.
mkdir -p "$dir/refused"
echo "# flashproof-probe v2 status=refused state=final pid=1 cupti=130001 reason=cuptiSubscribe: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (CUptiResult 39)" \
  >"$dir/refused/refused.kernels.tsv"
python3 - "$case" "$dir/refused/replay-h200-mid-fa-on.json" "$dir/refused/refused.kernels.tsv" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["launch"]["env"]["FLASHPROOF_REPLAY_KERNELS"] = sys.argv[3]
c["expect"]["evidence"] = ["log", "placement"]
json.dump(c, open(sys.argv[2], "w"), indent=2)
PY
"$fp" run "$dir/refused/replay-h200-mid-fa-on.json" --golden "$G" --results "$R" --out "$dir/noprobe" --quiet >"$dir/4.out" 2>&1
[ $? -eq 1 ] || { cat "$dir/4.out"; fail "the run without level 3 did not exit 1"; }
has "$dir/noprobe/result.txt" "^verdict = active$"
has "$dir/noprobe/result.txt" "^failure\.[0-9]+ = EVIDENCE LOST: level 3 \(kernels\) gave evidence when the golden was recorded \(.*verdict.json\) and none in this run: tally .* has no kernel records \(no evidence: the probe saw nothing; probe status refused"
grep -h -E "^failure" "$dir/swapped/result.txt" "$dir/noprobe/result.txt" | cut -c1-200
echo "PASS: kernel set and lost evidence against the golden (files in $dir)"
rm -rf "$dir"
