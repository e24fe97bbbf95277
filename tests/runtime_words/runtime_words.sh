#!/usr/bin/env bash
# What the runtime itself says, end to end through `flashproof run` against the real llama-server
# (issue 46). The runtime is wrapped in a TEST DOUBLE that rewrites only its log
# (tests/runtime_words/rewriting_runtime.py); requests, answers, metrics and timings are the real
# runtime's.
#   usage: runtime_words.sh SCENARIO FLASHPROOF_BINARY WORK_DIR
# Scenarios:
#   degraded      the H200 build's words injected into the CPU run (system_info's FA_QUANTS and ARCHS,
#                 ggml-cuda's "converting K and V to f16 instead (slow)" for the launch's q5_1 pair;
#                 the CPU build prints neither itself): the verdict is "active, degraded" with the
#                 runtime's line, cause and remedy naming the build's pairs; a case that requires
#                 "degraded": false fails on it; the fingerprint and result.txt carry the build's pairs
#   long-records  20000 bytes inside the "flash_attn = enabled" record and every "(FLASH_ATTN)" node
#                 record: read whole, the verdict is active with every node counted (std::regex's
#                 record cuts lost both: "no evidence", "node format changed?")
#   gauges        the unchanged runtime: --metrics is turned on for the timed runs, its gauges are
#                 scraped and shown beside flashproof's own counts (output tokens equal)
set -uo pipefail
scenario=$1 fp=$2 work=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$work"
dir=$(mktemp -d "$work/$scenario.XXXXXX")
fail() { echo "RUNTIME WORDS TEST FAILED ($scenario): $* (files kept in $dir)" >&2; exit 1; }
tiny=$root/fixtures/models/generated/tiny.gguf
[ -f "$tiny" ] || { echo "SKIP: models not generated (flashproof make-model fixtures/models/*.json)"; exit 125; }
[ -f "${FLASHPROOF_CACHE:-/var/cache/flashproof}/env.sh" ] || { echo "SKIP: no llama-server (ci/setup.sh)"; exit 125; }
export FLASHPROOF_LLAMA_SERVER=$root/tests/runtime_words/rewriting_runtime.py FLASHPROOF_LOADER= FLASHPROOF_LIBRARY_PATH=
result=""
has() { grep -qF -- "$1" "$result" || { cat "$result"; fail "result lacks: $1"; }; }
lacks() { ! grep -qF -- "$1" "$result" || { cat "$result"; fail "result has: $1"; }; }

# write_case NAME EXPECT_EXTRA_JSON EXTRA_ARGV_JSON_ITEMS REPETITIONS
write_case() {
  cat >"$dir/$1.json" <<JSON
{
  "name": "$1", "job": "extraction", "runtime": "llama-server",
  "model": {"path": "$tiny", "sha256": "$(sha256sum "$tiny" | cut -d' ' -f1)"},
  "shape": {"context": 2048, "prompt_set": "placement", "max_output_tokens": 4},
  "launch": {"argv": ["{runtime}", "-m", "{model}", "--host", "{host}", "--port", "{port}", "-c", "{context}",
                       "-np", "1", "-t", "2", "--seed", "{seed}", "-fa", "{flag}"$3]},
  "flag": {"on": "on", "off": "off", "use": "on"},
  "expect": {"fused_attention": true, "backend": "CPU", "evidence": ["log", "placement"]$2},
  "plan": {"warmup": 0, "repetitions": $4, "timeout_s": 300, "ready_timeout_s": 120}
}
JSON
  echo "$dir/$1.json"
}
# run CASE: flashproof run, the exit code in $rc, result.txt in $result
run() {
  local o=$dir/out-$(basename "$1" .json)
  "$fp" run "$1" --results "$dir/results" --golden "$dir/golden" --record-missing-answers --out "$o" --quiet >"$o.stdout" 2>&1
  rc=$?
  result=$o/result.txt
  [ -f "$result" ] || { cat "$o.stdout"; fail "no result.txt (exit $rc)"; }
}

case $scenario in
degraded)
  export FP_REWRITE=cuda-degraded
  run "$(write_case degraded-allowed "" ', "-ctk", "q5_1", "-ctv", "q5_1"' 1)"
  [ $rc -eq 0 ] || { cat "$result"; fail "exit $rc, expected 0: degraded is allowed when the case says nothing"; }
  has "verdict = active, degraded"
  has "verdict.backend = CPU "
  has "verdict.degraded.kv = q5_1-q5_1 converted to f16"
  has "verdict.degraded.runtime_says = line "
  has 'no FlashAttention vector kernel compiled for K/V types q5_1-q5_1, converting K and V to f16 instead (slow)'
  has "verdict.degraded.cause = this build of ggml-cuda has no FlashAttention vector kernel for K/V q5_1-q5_1"
  has "verdict.degraded.remedy = a K/V pair this build compiled (q4_0-q4_0, q8_0-q8_0, f16-f16, bf16-bf16)"
  has 'GGML_CUDA_FA_QUANTS'
  has "verdict.degraded.cost = not measured (no kernel tally)"
  has "fingerprint.runtime_fa_pairs = q4_0-q4_0,q8_0-q8_0,f16-f16,bf16-bf16"
  has "fingerprint.runtime_gpu_archs = 500,610,700,750,800,860,890,900"
  grep -q '"degraded": {' "$(dirname "$result")/result.json" || fail "result.json lacks verdict.degraded"
  run "$(write_case degraded-refused ', "degraded": false' ', "-ctk", "q5_1", "-ctv", "q5_1"' 1)"
  [ $rc -eq 1 ] || { cat "$result"; fail "exit $rc, expected 1: the case requires not degraded"; }
  has "failure.1 = expect.degraded false: expected not degraded; active, degraded: this build of ggml-cuda"
  # explain on the same log, no case
  log=$(ls "$dir"/out-degraded-refused/evidence*.log 2>/dev/null | head -1)
  [ -n "$log" ] || fail "no evidence log in $dir/out-degraded-refused"
  "$fp" explain --runtime llama-server --log "$log" --expect-backend CPU >"$dir/explain.txt" 2>&1
  grep -q "^verdict: active, degraded" "$dir/explain.txt" || { cat "$dir/explain.txt"; fail "explain does not say active, degraded"; }
  grep -q "this build compiles: q4_0-q4_0, q8_0-q8_0, f16-f16, bf16-bf16" "$dir/explain.txt" || { cat "$dir/explain.txt"; fail "explain lacks the build's pairs"; }
  ;;
long-records)
  export FP_REWRITE=long-records
  run "$(write_case long-records "" "" 1)"
  [ $rc -eq 0 ] || { cat "$result"; fail "exit $rc, expected 0"; }
  has "verdict = active"
  has "verdict.backend = CPU "
  lacks "EVIDENCE LOST"
  lacks "node format changed"
  lacks "no evidence"
  log=$(ls "$dir"/out-long-records/evidence*.log | head -1)
  awk 'length($0) > 20000 {n++} END {exit !(n >= 2)}' "$log" || fail "the double did not lengthen the records ($log)"
  ;;
gauges)
  run "$(write_case gauges "" "" 2)"
  [ $rc -eq 0 ] || { cat "$result"; fail "exit $rc, expected 0"; }
  has "server_gauges.1 = timed runs: the runtime's gauges at their peak ("
  has " scrapes of /metrics)"
  has "requests processing "
  has "requests deferred (queued) 0"
  has "not exposed by this build: KV cache usage"
  line=$(grep "^server_gauges.2 = " "$result") || fail "no token line"
  out_server=$(sed -n 's/.*, output \([0-9]*\) against \([0-9]*\)$/\1/p' <<<"$line")
  out_own=$(sed -n 's/.*, output \([0-9]*\) against \([0-9]*\)$/\2/p' <<<"$line")
  [ -n "$out_server" ] && [ "$out_server" -gt 0 ] && [ "$out_server" = "$out_own" ] ||
    { cat "$result"; fail "output tokens: the runtime counted '$out_server', flashproof '$out_own'"; }
  lacks "QUEUED"
  grep -q -- '--metrics' "$dir"/out-gauges/timed*.log 2>/dev/null || grep -q "launch.timed = .*--metrics" "$result" || fail "the timed launch lacks --metrics"
  ;;
*) echo "unknown scenario $scenario" >&2; exit 64 ;;
esac
echo "runtime words ($scenario): ok ($dir)"
rm -rf "$dir"
