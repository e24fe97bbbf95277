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
  local left; left=$(leftovers | paste -sd' ')
  pkill -KILL -f -- "$marker"  # the test's own runtimes: not left to the next test either
  fail "runtime processes left behind: $left"
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

# Issue 47's corpus: helpers for the scenarios below.
g2="$dir/golden-recorded"  # goldens a scenario records (the sentinel golden stays untouched)
run_rec() { out=$("$fp" run "$@" 2>&1); rc=$?; }
# An operator's wrapper that does not exec: llama-server a grandchild of flashproof, its output piped
# through cat. FLASHPROOF_LLAMA_SERVER names it; the loader of the sid prefix is the wrapper's business.
wrapper() {
  local env_file=${FLASHPROOF_CACHE:-/var/cache/flashproof}/env.sh
  [ -f "$env_file" ] || { echo "SKIP: no llama-server ($env_file: ci/setup.sh)"; exit 125; }
  cat >"$dir/wrapped-llama-server" <<SH
#!/bin/sh
. "$env_file"
if [ -n "\$FLASHPROOF_LOADER" ]; then
  "\$FLASHPROOF_LOADER" --library-path "\$FLASHPROOF_LIBRARY_PATH" "\$FLASHPROOF_LLAMA_SERVER" "\$@" 2>&1 | cat
else
  "\$FLASHPROOF_LLAMA_SERVER" "\$@" 2>&1 | cat
fi
SH
  chmod +x "$dir/wrapped-llama-server"
  export FLASHPROOF_LLAMA_SERVER="$dir/wrapped-llama-server" FLASHPROOF_LOADER= FLASHPROOF_LIBRARY_PATH=
}
# The runtime behind the wrapper: the process with the marker on its command line that is not the
# wrapper script (llama-server, or the sid prefix's loader running it).
wrapped_server() {
  local p
  for p in $(leftovers); do ps -o comm= -p "$p" | grep -qE '^(llama-server|ld-linux)' && echo "$p"; done | head -1
}
long_tiny_plan='{"warmup":0,"repetitions":500,"timeout_s":300,"ready_timeout_s":30}'
utf8_ok() { python3 -c 'import sys; sys.stdin.buffer.read().decode("utf-8")' <<<"$1"; }

case $scenario in
  reused-out)
    # A second run into the folder of an earlier one is refused: its log is neither appended to nor read.
    c=$(write_case ro "$tiny"); o=$dir/out
    run_rec "$c" --out "$o" --golden "$g2" --results "$dir/results" --record-missing-answers
    [ "$rc" = 0 ] || { echo "$out" >&2; fail "the first run exited $rc"; }
    grep -q '^verdict.backend = CPU 30$' "$o/result.txt" || fail "the first run's verdict is not CPU 30"
    before=$(sha "$o/evidence.log")$(sha "$o/result.txt")
    run_rec "$c" --out "$o" --golden "$g2" --results "$dir/results" --record-missing-answers
    expect 2 "$o already holds an earlier run or other files \(.*evidence.log.*\)" "rm -r $o" "or give --out a new folder"
    [ "$(sha "$o/evidence.log")$(sha "$o/result.txt")" = "$before" ] || fail "the earlier run's files changed"
    ;;
  shared-out)
    # Two runs at once on one --out: the second is refused at once, naming the lock and the first's pid.
    c=$(write_case so "$tiny" "$long_tiny_plan"); o=$dir/out
    "$fp" run "$c" --out "$o" --golden "$g2" --results "$dir/results" --record-missing-answers >"$dir/first" 2>&1 &
    first=$!
    for _ in $(seq 1 600); do [ -f "$o/timed.log" ] && break; kill -0 $first || fail "the first run ended early"; sleep 0.1; done
    run_rec "$c" --out "$o" --golden "$g2" --results "$dir/results" --record-missing-answers
    expect 2 "$o is in use by another flashproof run \(pid $first, which holds the lock $o/.flashproof.lock\)"
    kill -INT $first; wait $first
    grep -q '^verdict.backend = CPU 30$' "$o/result.txt" || fail "the first run's verdict is not its own: $(grep '^verdict' "$o/result.txt")"
    ;;
  busy-golden)
    # A golden recorded while two busy loops share the machine is kept and said to be busy, with its
    # figure; a real 4x slowdown then fails against it (UNTRUSTWORTHY GOLDEN), never passes, however
    # busy the machine is for it (on a loaded machine it read "better by 73%" before).
    c=$(write_case bg "$tiny" '{"warmup":0,"repetitions":1,"timeout_s":120,"ready_timeout_s":60}')
    hogs=()
    for _ in 1 2; do sh -c 'while :; do :; done' & hogs+=($!); done
    trap 'kill ${hogs[*]} 2>/dev/null' EXIT
    run_rec "$c" --golden "$g2" --results "$dir/results" --record-missing --launches 3
    kill "${hogs[@]}"; wait "${hogs[@]}" 2>/dev/null; trap - EXIT
    [ "$rc" = 0 ] || { echo "$out" >&2; fail "the busy recording exited $rc"; }
    grep -qE "BUSY RECORDING: .*bg.json was recorded while other processes took [0-9.]+% of the machine's CPU time \(machine.other_load [0-9.]+, above the 25%" <<<"$out" ||
      { echo "$out" >&2; fail "the recording did not say it was busy"; }
    run_rec "$c" --golden "$g2" --results "$dir/results" --cpu-share 0.25
    if [ "$rc" = 2 ] && grep -q -- '--cpu-share' <<<"$out"; then echo "SKIP: no CPU quota here (cgroup v1 cpu controller): $out"; exit 125; fi
    expect 1 'UNTRUSTWORTHY GOLDEN: the golden was recorded on a busy machine: other processes took [0-9.]+% of its CPU time'
    ;;
  wrapper-killed)
    # flashproof SIGKILLed while a wrapper that does not exec serves: PR_SET_PDEATHSIG reaches only the
    # wrapper; the launch guardian kills the rest of its group (llama-server and cat).
    wrapper
    "$fp" run "$(write_case wk "$tiny" "$long_tiny_plan")" --golden "$golden" --results "$dir/results" >"$dir/out" 2>&1 &
    pid=$!; wait_for_timed $pid
    [ -n "$(wrapped_server)" ] || fail "no runtime was running behind the wrapper"
    kill -KILL $pid; wait $pid 2>/dev/null; rc=$?
    ;;
  wrapper-crash)
    # The runtime, a grandchild behind a wrapper that does not exec, crashes with SIGSEGV: its own
    # end is named (issue 44), not only the connection errors or the wrapper's status 0.
    kernel=$(uname -r | cut -d. -f1-2)
    [ "$(printf '%s\n6.15\n' "$kernel" | sort -V | head -1)" = 6.15 ] ||
      { echo "SKIP: Linux $kernel cannot tell a non-child's exit status (PIDFD_INFO_EXIT, Linux 6.15)"; exit 125; }
    wrapper
    "$fp" run "$(write_case wc "$tiny" "$long_tiny_plan")" --golden "$golden" --results "$dir/results" >"$dir/out" 2>&1 &
    pid=$!; wait_for_timed $pid
    server=$(wrapped_server); [ -n "$server" ] || fail "no runtime was running behind the wrapper"
    kill -SEGV "$server"
    wait $pid; rc=$?; out=$(cat "$dir/out")
    expect 2 "the runtime killed by signal 11 \(Segmentation fault\) \[llama-server \(pid $server\), in the process group of wrapped-llama-server \(pid [0-9]+\), which flashproof started and which did not exec it\]"
    ;;
  vanished-model)
    # A deployed model deleted after this machine recorded the case's golden: a failure naming both.
    cp "$tiny" "$dir/deployed.gguf"
    c=$(write_case vm "$dir/deployed.gguf")
    run_rec "$c" --golden "$g2" --results "$dir/results" --record-missing-answers
    [ "$rc" = 0 ] || { echo "$out" >&2; fail "the recording run exited $rc"; }
    rm "$dir/deployed.gguf"
    run_rec "$c" --golden "$g2" --results "$dir/results"
    expect 2 "no such file: $dir/deployed.gguf" "but this machine has a golden for case \"vm\" \($g2/[^)]+/vm\)" 'a failure, not a skip'
    ;;
  answer-bytes)
    # References that broke the harness (exit 134): one whose quoted window ended inside "é", one
    # replaced by a folder. Quotes are whole characters; the folder is named, not read as "".
    c=$(write_case an "$tiny")
    run_rec "$c" --golden "$g2" --results "$dir/results" --record-missing-answers
    [ "$rc" = 0 ] || { echo "$out" >&2; fail "the recording run exited $rc"; }
    answers=$(find "$g2" -type d -name answers)
    mapfile -t refs < <(find "$answers" -name '*.txt' | sort)
    [ "${#refs[@]}" -ge 2 ] || fail "fewer than 2 reference answers in $answers"
    python3 - "${refs[0]}" <<'PY'
import sys
p = sys.argv[1]; b = open(p, "rb").read()
open(p, "wb").write(b[:10] + b"Z" * 23 + "é".encode() + b[10:])  # the 24th byte from the difference: inside é
PY
    rm "${refs[1]}"; mkdir "${refs[1]}"
    rm -rf "$dir/results"  # the check run's result is the one read below
    run_rec "$c" --golden "$g2" --results "$dir/results"
    expect 1 'first difference at character 11 \(line 1, column 11\): reference has "Z{23}é' "$(basename "${refs[0]}" .txt) differs" \
      "${refs[1]}: a folder, not a reference answer file"
    utf8_ok "$out" || fail "a quote is not UTF-8"
    run_dir=$(dirname "$(latest_result)")
    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$run_dir/result.json" || fail "result.json is not JSON"
    # accept shows the same diff (CI= : accept refuses under CI; without --yes it writes nothing)
    accept_out=$(CI= "$fp" accept "$run_dir" --golden "$g2" --only answers 2>&1)
    grep -q "${refs[1]}: a folder, not a reference answer file" <<<"$accept_out" || { echo "$accept_out" >&2; fail "accept read a folder as an answer"; }
    rmdir "${refs[1]}"
    accept_out=$(CI= "$fp" accept "$run_dir" --golden "$g2" --only answers 2>&1)
    grep -q 'first difference at character 11' <<<"$accept_out" && utf8_ok "$accept_out" || { echo "$accept_out" >&2; fail "accept's diff is not whole characters"; }
    ;;
  prompt-too-long)
    # A prompt longer than the context: the runtime's own refusal first, no instrument relaunches.
    shape='{"context":256,"prompt_set":"chat","max_output_tokens":8,"long_prompt":{"document":"fixtures/prompts/documents/operations_manual.txt","chars":3000}}'
    run_fp "$(write_case tl "$tiny" '' '' "$shape")"
    expect 2 'evidence pass failed: the runtime refused the evidence requests .*HTTP 400: .*exceeds the available context size \(256 tokens\)'
    grep -qE 'extra launch|hung or refused' <<<"$out" && { echo "$out" >&2; fail "the runtime was relaunched for a refusal"; }
    ;;
  ab-interrupted)
    # SIGINT during the A/B's timed blocks: it stops at once, starts no runtime after the signal, and
    # lists no connection failure of the runtimes it stopped itself.
    c=$(write_case ai "$tiny" '{"warmup":0,"repetitions":50,"timeout_s":120,"ready_timeout_s":30}')
    "$fp" ab "$c" --results "$dir/results" --repetitions 4 --sustained-s 5 --quiet >"$dir/out" 2>&1 &
    pid=$!
    for _ in $(seq 1 600); do [ -n "$(find "$dir/results" -path '*block-1/timed.log' 2>/dev/null)" ] && break; sleep 0.1; done
    sleep 1; kill -INT $pid
    logs_at_signal=$(find "$dir/results" -name '*.log' | sort)
    wait $pid; rc=$?; out=$(cat "$dir/out")
    expect 130 'interrupted by signal 2'
    [ "$(find "$dir/results" -name '*.log' | sort)" = "$logs_at_signal" ] || fail "a runtime was started after the signal"
    grep -qE "Failed to connect|Couldn't connect|Connection reset|a launch failed" <<<"$out" && { echo "$out" >&2; fail "the interrupt is reported as failed requests"; }
    ;;
  gate-interrupted)
    # The side-by-side gate interrupted in its blocks: gate.json says so (not "a launch failed").
    prefix=${FLASHPROOF_PREFIX:-/var/cache/flashproof/sid-prefix}
    [ -d "$prefix/usr/bin" ] || { echo "SKIP: no sid prefix at $prefix (ci/setup.sh)"; exit 125; }
    c=$(write_case gi "$tiny" '{"warmup":0,"repetitions":50,"timeout_s":120,"ready_timeout_s":30}')
    "$fp" gate "$c" --baseline-runtime "$prefix" --candidate-runtime "$prefix" --results "$dir/results" --quiet >"$dir/out" 2>&1 &
    pid=$!
    for _ in $(seq 1 600); do [ -n "$(find "$dir/results" -path '*block-1/timed.log' 2>/dev/null)" ] && break; sleep 0.1; done
    sleep 1; kill -INT $pid
    wait $pid; rc=$?; out=$(cat "$dir/out")
    expect 130 'interrupted by signal 2'
    gate_json=$(find "$dir/results" -name gate.json | head -1)
    [ -n "$gate_json" ] || fail "no gate.json"
    python3 - "$gate_json" <<'PY' || fail "gate.json does not say it was interrupted"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["stopped"].startswith("interrupted by signal 2"), j["stopped"]
assert j["outcome"] == "incomplete", j["outcome"]
PY
    ;;
  golden-disk-full)
    # A golden recording that the disk stops (a full 1 MiB tmpfs as the golden folder): exit 2, the
    # path and the errno, never a fail that reads like a regression.
    mkdir -p "$dir/full"
    mount -t tmpfs -o size=1m tmpfs "$dir/full" 2>/dev/null || { echo "SKIP: cannot mount a tmpfs here (needs root)"; exit 125; }
    trap 'umount "$dir/full" 2>/dev/null' EXIT
    head -c 2m /dev/zero >"$dir/full/filler" 2>/dev/null
    run_rec "$(write_case df "$tiny")" --golden "$dir/full/golden" --results "$dir/results" --record-missing-answers
    umount "$dir/full"; trap - EXIT
    expect 2 'recording the golden failed: .*No space left on device'
    grep -q '^status = incomplete' "$(latest_result)" || fail "result not marked incomplete"
    ;;
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
    expect 125 'field "model.path"' 'absent.gguf' 'no such file' 'the case was never set up here'
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
