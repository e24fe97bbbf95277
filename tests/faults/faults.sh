#!/usr/bin/env bash
# Fault scenarios against the real llama-server (and, where the real one cannot produce the fault, a
# named stand-in). Each checks flashproof's exit code and message, that the result is marked
# incomplete where one was written, that goldens are untouched, and that no runtime process is left.
#   usage: faults.sh SCENARIO FLASHPROOF_BINARY WORK_DIR
set -uo pipefail
scenario=$1 fp=$2 work=$3 rc=-1 out=""
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$work"
dir=$(mktemp -d "$work/$scenario.XXXXXX")
marker="fp-fault-$scenario-$$"   # on every runtime's command line (as --alias), to find leftovers
golden="$dir/golden"
mkdir -p "$golden/sentinel" && echo keep >"$golden/sentinel/file"

fail() { echo "FAULT TEST FAILED ($scenario): $*" >&2; exit 1; }
leftovers() { pgrep -f -- "$marker" | grep -v "^$$\$" || true; }
check_no_leftovers() {
  for _ in $(seq 1 50); do [ -z "$(leftovers)" ] && return 0; sleep 0.1; done
  ps -o pid,stat,args -p "$(leftovers | paste -sd,)" >&2
  fail "runtime processes left behind: $(leftovers | paste -sd' ')"
}
check_golden_untouched() {
  [ "$(find "$golden" -type f | wc -l)" = 1 ] && [ "$(cat "$golden/sentinel/file")" = keep ] || fail "the golden folder changed"
}
expect() {  # expect EXIT_CODE PATTERN... on $rc, and on $out plus the result file when there is one
  local want=$1; shift
  [ "$rc" = "$want" ] || { echo "$out" >&2; fail "exit $rc, expected $want"; }
  local r; r=$(latest_result 2>/dev/null); [ -n "$r" ] && out="$out
$(cat "$r")"
  for p in "$@"; do grep -qE -- "$p" <<<"$out" || { echo "$out" >&2; fail "output lacks: $p"; }; done
}
sha() { sha256sum "$1" | cut -d' ' -f1; }
tiny="$root/fixtures/models/generated/tiny.gguf"
realistic="$root/fixtures/models/generated/realistic.gguf"
[ -f "$tiny" ] && [ -f "$realistic" ] || { echo "SKIP: models not generated (flashproof make-model fixtures/models/*.json)"; exit 125; }

# write_case NAME MODEL_PATH [plan JSON] [extra argv JSON items] [shape JSON]
write_case() {
  local name=$1 model=$2 plan=${3:-'{"warmup":0,"repetitions":1,"timeout_s":60,"ready_timeout_s":20}'} extra=${4:-}
  local shape=${5:-'{"context":2048,"prompt_set":"chat","max_output_tokens":8}'}
  cat >"$dir/$name.json" <<JSON
{
  "name": "$name", "job": "chat", "runtime": "llama-server",
  "model": {"path": "$model", "sha256": "$(sha "$model")"},
  "shape": $shape,
  "launch": {"argv": ["{runtime}", "-m", "{model}", "--host", "{host}", "--port", "{port}", "-c", "{context}",
                       "-np", "1", "-t", "2", "-fa", "{flag}", "--alias", "$marker"$extra]},
  "flag": {"on": "on", "off": "off", "use": "on"},
  "expect": {"fused_attention": true, "backend": "CPU"},
  "plan": $plan
}
JSON
  echo "$dir/$name.json"
}
run_fp() { out=$("$fp" run "$@" --golden "$golden" --results "$dir/results" 2>&1); rc=$?; }
latest_result() { find "$dir/results" -name result.txt 2>/dev/null | head -1; }
# Long streamed answers on the realistic model, so that a fault lands in the middle of one.
long_shape='{"context":4096,"prompt_set":"code","max_output_tokens":1024}'
slow_plan='{"warmup":0,"repetitions":50,"timeout_s":300,"ready_timeout_s":30,"stall_timeout_s":5}'

# Waits until the timed runs are under way (their log exists), or fails.
wait_for_timed() {
  for _ in $(seq 1 600); do
    [ -n "$(find "$dir/results" -name timed.log 2>/dev/null)" ] && { sleep 1.5; return 0; }
    kill -0 "$1" 2>/dev/null || fail "flashproof ended before the timed runs"
    sleep 0.1
  done
  fail "the timed runs never started"
}

case $scenario in
  not-found)
    FLASHPROOF_LLAMA_SERVER=/nonexistent/llama-server run_fp "$(write_case nf "$tiny")"
    expect 2 '/nonexistent/llama-server' 'not an executable'
    ;;
  not-executable)
    printf 'data' >"$dir/llama-server"; chmod -x "$dir/llama-server"
    FLASHPROOF_LLAMA_SERVER="$dir/llama-server" run_fp "$(write_case ne "$tiny")"
    expect 2 "$dir/llama-server" 'not an executable'
    ;;
  missing-model)
    c=$(write_case mm "$tiny"); sed -i "s#\"path\": \"$tiny\"#\"path\": \"$dir/absent.gguf\"#" "$c"
    run_fp "$c"
    # A model that is not on this machine skips the case (CTest SKIP_RETURN_CODE), with the reason.
    expect 125 'field "model.path"' 'absent.gguf' 'no such file'
    ;;
  truncated-model)
    head -c 100000 "$tiny" >"$dir/truncated.gguf"
    run_fp "$(write_case tm "$dir/truncated.gguf")"
    expect 2 'exited with status [0-9]+ before it was ready' 'failed to load model' 'incomplete|evidence pass failed'
    grep -q '^status = incomplete' "$(latest_result)" || fail "result not marked incomplete"
    ;;
  not-gguf)
    head -c 4096 /dev/urandom >"$dir/random.gguf"
    run_fp "$(write_case ng "$dir/random.gguf")"
    expect 2 'before it was ready' 'failed to load model'
    ;;
  port-taken)
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    python3 -c "import socket,time; s=socket.socket(); s.bind(('127.0.0.1',$port)); s.listen(); time.sleep(60)" &
    holder=$!; sleep 0.5
    # A second --port wins in llama-server: it must fail to bind, even after flashproof's retry.
    run_fp "$(write_case pt "$tiny" '' ", \"--port\", \"$port\"")"
    kill $holder
    expect 2 "couldn't bind HTTP server socket" 'before it was ready'
    ;;
  never-ready)
    # The real llama-server becomes ready in well under a second: a stand-in that never answers.
    printf '#!/bin/sh\n[ "$1" = --version ] && { echo "version: 0.0.0 (build 1, commit stand-in)"; exit 0; }\necho "stand-in runtime: loading forever"\nexec sleep 600\n' >"$dir/hang"
    chmod +x "$dir/hang"
    FLASHPROOF_LLAMA_SERVER="$dir/hang" run_fp "$(write_case nr "$tiny" '{"warmup":0,"repetitions":1,"timeout_s":60,"ready_timeout_s":2}')"
    expect 2 'not ready within 2 s' 'loading forever'
    ;;
  killed-mid-stream)
    "$fp" run "$(write_case km "$realistic" "$slow_plan" '' "$long_shape")" --golden "$golden" --results "$dir/results" >"$dir/out" 2>&1 &
    pid=$!; wait_for_timed $pid
    pkill -KILL -f -- "$marker"
    wait $pid; rc=$?; out=$(cat "$dir/out")
    expect 2 'timed runs' 'killed by signal 9|Connection|connect|closed|failed'
    grep -q '^status = incomplete' "$(latest_result)" || fail "result not marked incomplete"
    ;;
  stopped-mid-stream)
    "$fp" run "$(write_case sm "$realistic" "$slow_plan" '' "$long_shape")" --golden "$golden" --results "$dir/results" >"$dir/out" 2>&1 &
    pid=$!; wait_for_timed $pid
    pkill -STOP -f -- "$marker"
    wait $pid; rc=$?; out=$(cat "$dir/out")
    expect 2 'timed runs' '[Nn]o (data|byte)|stall|timed? ?out'
    grep -q '^status = incomplete' "$(latest_result)" || fail "result not marked incomplete"
    ;;
  harness-interrupted)
    "$fp" run "$(write_case hi "$realistic" "$slow_plan" '' "$long_shape")" --golden "$golden" --results "$dir/results" >"$dir/out" 2>&1 &
    pid=$!; wait_for_timed $pid
    kill -INT $pid
    wait $pid; rc=$?; out=$(cat "$dir/out")
    expect 130 'interrupted'
    grep -q '^status = incomplete' "$(latest_result)" || fail "result not marked incomplete"
    ;;
  harness-killed)
    # What CTest does to a test past its TIMEOUT: SIGKILL, no chance to clean up. The runtime must die
    # with the harness (PR_SET_PDEATHSIG).
    "$fp" run "$(write_case hk "$realistic" "$slow_plan" '' "$long_shape")" --golden "$golden" --results "$dir/results" >"$dir/out" 2>&1 &
    pid=$!; wait_for_timed $pid
    [ -n "$(leftovers)" ] || fail "no runtime was running to begin with"
    kill -KILL $pid; wait $pid 2>/dev/null; rc=$?
    ;;
  *) echo "unknown scenario $scenario"; exit 2 ;;
esac
check_no_leftovers
check_golden_untouched
echo "fault $scenario: handled as expected (exit $rc); no runtime left; goldens untouched"
rm -rf "$dir"
