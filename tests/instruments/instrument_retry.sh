#!/usr/bin/env bash
# An instrument that breaks the run it observes is taken off, and the level says why (issue 25),
# end to end through `flashproof run` against the real llama-server wrapped in a TEST DOUBLE that
# aborts only under one instrument (tests/instruments/aborting_runtime.py: the runtime's assertion
# text on stderr, then SIGABRT), and against the replay double for the probe CUPTI refused.
#   usage: instrument_retry.sh SCENARIO FLASHPROOF_BINARY REPLAY_RUNTIME WORK_DIR
# Scenarios:
#   probe-dies-at-injection  CPU; the process dies before it is ready whenever the kernel probe's tally
#                            variable is set (FLASHPROOF_TEST_DOUBLE_GPU=1 stands in for a GPU): one
#                            extra launch without the probe, the verdict from log and placement passes,
#                            level 3 says why, the probed check does not run
#   sched-debug-required     CPU; aborts on its first request under GGML_SCHED_DEBUG, and the case
#                            requires placement (expect.evidence): fails "no evidence", saying why
#   crash-without-instruments  CPU; aborts on its first request in every launch: "the runtime crashed
#                            with no instrument on", incomplete (exit 2), never a fallback
#   probe-refused            replay double; CUPTI refused the probe: the run did not break, no launch
#                            is added, level 3 says "refused"
#   probed-check-dies        replay double (recorded H200 log and tally) wrapped by the aborting double:
#                            the timed configuration dies at injection under the probe (the probed
#                            check), not in the evidence pass: the check is "not run" with the runtime's
#                            words, no launch added (the timed runs ran that launch without the probe)
#   vulkan-partial-offload   lavapipe, the real runtime, the H200's configuration (the realistic model,
#                            -fa on -ngl 2 of 4 layers), where build 11669 aborts under GGML_VK_PERF_LOGGER
#                            on lavapipe too: with the known breakages taken out of a copy of the runtime
#                            data the logger is launched, the runtime aborts, and one extra launch
#                            without it gives "not active" (partial offload), level 3 quoting the abort.
#                            (The shipped known breakage, which never launches the logger there, is
#                            checked by the case cases/vulkan-tiny-partial-ngl2.)
set -uo pipefail
scenario=$1 fp=$2 replay=$3 work=$4
root=$(cd "$(dirname "$0")/../.." && pwd)
double=$root/tests/instruments/aborting_runtime.py
mkdir -p "$work"
dir=$(mktemp -d "$work/$scenario.XXXXXX")
fail() { echo "INSTRUMENT RETRY TEST FAILED ($scenario): $* (files kept in $dir)" >&2; exit 1; }
result=""
has() { grep -qE -- "$1" "$result" || { cat "$result"; fail "result lacks: $1"; }; }
lacks() { ! grep -qE -- "$1" "$result" || { cat "$result"; fail "result has: $1"; }; }
tiny=$root/fixtures/models/generated/tiny.gguf
[ -f "$tiny" ] || { echo "SKIP: models not generated (flashproof make-model fixtures/models/*.json)"; exit 125; }
env_file=${FLASHPROOF_CACHE:-/var/cache/flashproof}/env.sh
sha() { sha256sum "$1" | cut -d' ' -f1; }

# write_case NAME EXPECT_BACKEND EVIDENCE_JSON EXTRA_ENV_JSON EXTRA_ARGV_JSON_ITEMS [MODEL]
write_case() {
  local model=${6:-$tiny}
  cat >"$dir/$1.json" <<JSON
{
  "name": "$1", "job": "extraction", "runtime": "llama-server",
  "model": {"path": "$model", "sha256": "$(sha "$model")"},
  "shape": {"context": 2048, "prompt_set": "placement", "max_output_tokens": 4},
  "launch": {"argv": ["{runtime}", "-m", "{model}", "--host", "{host}", "--port", "{port}", "-c", "{context}",
                       "-np", "1", "-t", "2", "--seed", "{seed}", "-fa", "{flag}"$5],
             "env": {$4}},
  "flag": {"on": "on", "off": "off", "use": "on"},
  "expect": {"fused_attention": true, "backend": "$2"$3},
  "plan": {"warmup": 0, "repetitions": 1, "timeout_s": 600, "ready_timeout_s": 300}
}
JSON
  echo "$dir/$1.json"
}
run_case() {  # run_case CASE [OUT]: $rc, $out, $result
  local o=$dir/${2:-run}
  out=$("$fp" run "$1" --results "$dir/results" --golden "$dir/golden" --record-missing-answers --out "$o" --quiet 2>&1); rc=$?
  result=$o/result.txt
  [ -f "$result" ] || { echo "$out"; fail "no result file (exit $rc)"; }
}
expect_exit() { [ "$rc" = "$1" ] || { echo "$out"; cat "$result"; fail "exit $rc, expected $1"; }; }
double_env() {  # the executable variable at the double, which starts the real one through its loader
  [ -f "$env_file" ] || { echo "SKIP: no llama-server ($env_file: ci/setup.sh)"; exit 125; }
  export FLASHPROOF_LLAMA_SERVER=$double FLASHPROOF_LOADER= FLASHPROOF_LIBRARY_PATH=
}
assert_words="./src/ggml-vulkan/ggml-vulkan.cpp:14327: GGML_ASSERT\(ctx->compute_ctx.expired\(\)\) failed"

case $scenario in
  probe-dies-at-injection)
    double_env
    export FLASHPROOF_TEST_DOUBLE_GPU=1 FP_ABORT_UNDER=FLASHPROOF_KERNEL_TALLY FP_ABORT_AT=start
    export FP_ABORT_TEXT="terminate called after throwing an instance of 'std::runtime_error'"
    run_case "$(write_case probe-dies CPU '' '' '')"
    expect_exit 0
    has "^verdict = active$"
    has "^verdict.levels_used = log; placement$"
    has "^instruments.off.1 = the kernel probe taken off: the runtime aborts with FLASHPROOF_KERNEL_TALLY=.* on this case \(killed by signal 6 \(Aborted\), before it was ready\): terminate called after throwing an instance of 'std::runtime_error'$"
    has "^verdict.levels_unavailable = .*level 3 kernels: the kernel probe taken off: the runtime aborts"
    has "^instruments.extra_launches = 1$"
    has "^instruments.retry.1 = launch 1 without the kernel probe: completed$"
    has "^instruments.on = scheduler debug \(GGML_SCHED_DEBUG=2\); verbose logging \(-v, LLAMA_ARG_LOG_VERBOSITY=5\)$"
    has "^signals.probed_check = not run: the evidence pass ran without the kernel probe: the kernel probe taken off"
    [ -f "$dir/run/instrument-retry/launch-1/evidence.log" ] || fail "the broken launch's log was not kept"
    grep -q "terminate called after throwing" "$dir/run/instrument-retry/launch-1/evidence.log" || fail "the broken launch's log lacks the runtime's words"
    ;;
  sched-debug-required)
    double_env
    export FP_ABORT_UNDER=GGML_SCHED_DEBUG
    run_case "$(write_case sched-required CPU ', "evidence": ["log", "placement"]' '' '')"
    expect_exit 1
    has "^verdict = no evidence$"
    has "^failure\.[0-9]+ = fused attention expected active on CPU, evidence says no evidence: .*level 2 placement is required and yielded nothing: scheduler debug taken off: the runtime aborts with GGML_SCHED_DEBUG=2 on this case \(killed by signal 6 \(Aborted\), during the evidence requests\): $assert_words"
    has "^instruments.extra_launches = 1$"
    lacks "not active"
    ;;
  crash-without-instruments)
    double_env
    export FP_ABORT_UNDER=always
    run_case "$(write_case crashes CPU '' '' '')"
    expect_exit 2
    has "^status = incomplete$"
    has "^failure\.1 = evidence pass failed: the runtime crashed with no instrument on: it aborts \(killed by signal 6 \(Aborted\), during the evidence requests\): $assert_words \(2 extra launches took flashproof's instruments off one at a time: launch 1 without scheduler debug: the runtime aborts .*; launch 2 without scheduler debug, verbose logging: the runtime aborts"
    lacks "^verdict = not active"
    lacks "taken off"
    lacks "^instruments\."
    ;;
  probe-refused)
    [ -f "$root/fixtures/models/generated/realistic.gguf" ] || { echo "SKIP: realistic model not generated"; exit 125; }
    export FLASHPROOF_LLAMA_SERVER=$replay FLASHPROOF_LOADER= FLASHPROOF_LIBRARY_PATH= FLASHPROOF_TEST_DOUBLE_GPU=1
    echo "# flashproof-probe v2 status=refused state=final pid=1 cupti=130001 reason=cuptiSubscribe: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (CUptiResult 39)" \
      >"$dir/refused.kernels.tsv"
    python3 - "$root/fixtures/replay/cases/replay-h200-mid-fa-on.json" "$dir/replay-h200-mid-fa-on.json" "$dir/refused.kernels.tsv" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["launch"]["env"]["FLASHPROOF_REPLAY_KERNELS"] = sys.argv[3]
c["plan"]["repetitions"] = 1
json.dump(c, open(sys.argv[2], "w"), indent=2)
PY
    cd "$root"  # the replayed recordings are named relative to the checkout
    run_case "$dir/replay-h200-mid-fa-on.json"
    expect_exit 1
    has "^verdict = no evidence$"
    has "level 3 kernels is required and yielded nothing: tally .* has no kernel records \(no evidence: the probe saw nothing; probe status refused: .*CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
    has "^instruments.on = the kernel probe \(.*FLASHPROOF_KERNEL_TALLY=.*\); scheduler debug \(GGML_SCHED_DEBUG=2\); verbose logging"
    has "^instruments.extra_launches = 0$"
    lacks "^instruments.off"
    ;;
  probed-check-dies)
    [ -f "$root/fixtures/models/generated/realistic.gguf" ] || { echo "SKIP: realistic model not generated"; exit 125; }
    export FLASHPROOF_LLAMA_SERVER=$double FLASHPROOF_LOADER= FLASHPROOF_LIBRARY_PATH= FLASHPROOF_TEST_DOUBLE_GPU=1
    export FP_REAL_RUNTIME=$replay FP_ABORT_UNDER=FLASHPROOF_KERNEL_TALLY FP_ABORT_UNLESS=GGML_SCHED_DEBUG FP_ABORT_AT=start
    export FP_ABORT_TEXT="terminate called after throwing an instance of 'std::runtime_error'"
    python3 - "$root/fixtures/replay/cases/replay-h200-mid-fa-on.json" "$dir/replay-h200-mid-fa-on.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["plan"]["repetitions"] = 1
json.dump(c, open(sys.argv[2], "w"), indent=2)
PY
    cd "$root"
    run_case "$dir/replay-h200-mid-fa-on.json"
    expect_exit 0
    has "^verdict = active$"
    has "^verdict.levels_used = log; placement; kernels$"
    has "^instruments.extra_launches = 0$"
    has "^signals.probed_check = not run: the kernel probe taken off: the runtime aborts with .*FLASHPROOF_KERNEL_TALLY=.* on this case \(killed by signal 6 \(Aborted\), before it was ready\): terminate called after throwing an instance of 'std::runtime_error'; the timed runs ran the same launch without it"
    ;;
  vulkan-partial-offload)
    [ -f "$env_file" ] || { echo "SKIP: no llama-server ($env_file: ci/setup.sh)"; exit 125; }
    realistic=$root/fixtures/models/generated/realistic.gguf
    [ -f "$realistic" ] || { echo "SKIP: realistic model not generated"; exit 125; }
    c=$(write_case vk-partial-offload Vulkan0 '' '"GGML_BACKEND_PATH": "libggml-vulkan.so", "GGML_VK_VISIBLE_DEVICES": "0"' \
        ', "-ngl", "2"' "$realistic")
    vulkan_partial_verdict() {
      expect_exit 1
      has "^verdict = not active$"
      has "^verdict.backend = CPU [0-9]+, Vulkan0 [0-9]+$"
      has "^verdict.levels_used = log; placement$"
      has "^verdict.cause.1 = .*not every layer is offloaded to the GPU"
      has "^instruments.on = scheduler debug \(GGML_SCHED_DEBUG=2\); verbose logging \(-v, LLAMA_ARG_LOG_VERBOSITY=5\)$"
    }
    # The known breakages taken out of a copy of the runtime data (they would leave the logger off:
    # cases/vulkan-tiny-partial-ngl2 checks that): the real abort, and the retry.
    mkdir -p "$dir/data"
    cp "$root"/src/runtime/data/*.json "$dir/data/"
    python3 - "$dir/data/llama-server.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["evidence"]["instruments"]["known_breakages"] = []
json.dump(d, open(sys.argv[1], "w"), indent=1)
PY
    FLASHPROOF_DATA_DIR=$dir/data run_case "$c" retry
    [ "$rc" = 125 ] && { echo "$out"; echo "SKIP: no Vulkan0 here"; exit 125; }
    vulkan_partial_verdict
    has "^instruments.off.1 = device timings taken off: the runtime aborts with GGML_VK_PERF_LOGGER=1 on this case \(killed by signal 6 \(Aborted\), during the evidence requests\): $assert_words$"
    has "^instruments.extra_launches = 1$"
    has "^instruments.retry.1 = launch 1 without device timings: completed$"
    # (not at a line start: the scheduler's debug records share physical lines with whatever comes next)
    grep -qE "$assert_words" "$dir/retry/instrument-retry/launch-1/evidence.log" || fail "the aborted launch's log was not kept"
    ;;
  *) echo "unknown scenario $scenario"; exit 2 ;;
esac
grep -E "^(verdict|verdict.backend|verdict.levels_used|instruments\..*|failure\.1) = " "$result" | cut -c1-260
echo "PASS: $scenario (files in $dir)"
rm -rf "$dir"
