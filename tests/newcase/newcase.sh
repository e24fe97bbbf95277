#!/usr/bin/env bash
# Cases from the operator's own command line, and servers flashproof did not start, against the real
# llama-server (README "Cases from your own command line; servers you did not start").
#   usage: newcase.sh SCENARIO FLASHPROOF_BINARY WORK_DIR
#   from-command  new-case turns a real llama-server command line into a case, which then runs and passes
#   attached      a llama-server started by this script as a service would be (--log-file, --api-key,
#                 verbose scheduler output): attached runs pass on placement, fail with the reason when
#                 a required level is unavailable, report 401 and 404 with the server's answer, follow a
#                 log command, and never write the API key anywhere
set -uo pipefail
scenario=$1 fp=$2 work=$3 rc=-1 out=""
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$work"
dir=$(mktemp -d "$work/$scenario.XXXXXX")
marker="fp-newcase-$scenario-$$"   # on every runtime's command line (as --alias), to find leftovers
tiny="$root/fixtures/models/generated/tiny.gguf"

fail() { echo "NEWCASE TEST FAILED ($scenario): $*" >&2; exit 1; }
leftovers() { pgrep -f -- "$marker" | grep -v "^$$\$" || true; }
expect() {  # expect EXIT_CODE PATTERN... on $rc and $out
  local want=$1; shift
  [ "$rc" = "$want" ] || { echo "$out" >&2; fail "exit $rc, expected $want"; }
  for p in "$@"; do grep -qE -- "$p" <<<"$out" || { echo "$out" >&2; fail "output lacks: $p"; }; done
}
fp_do() { out=$("$fp" "$@" 2>&1); rc=$?; printf '%s\n' "$out" >>"$dir/flashproof-output.txt"; }
run_case() { fp_do run "$1" --repetitions 1 --warmup 0 --quiet --record-missing-answers --golden "$dir/golden" --results "$dir/results"; }
result_of() { find "$dir/results" -path "*/$1/*" -name result.txt | sort | tail -1; }

[ -f "$tiny" ] || { echo "SKIP: models not generated (flashproof make-model fixtures/models/*.json)"; exit 125; }
# shellcheck disable=SC1091
. "${FLASHPROOF_CACHE:-/var/cache/flashproof}/env.sh" 2>/dev/null || true
server=${FLASHPROOF_LLAMA_SERVER:-}
[ -n "$server" ] && [ -x "$server" ] || { echo "SKIP: no llama-server (run ci/setup.sh)"; exit 125; }

case $scenario in
  from-command)
    # The command an operator runs, with what a case must not keep (a log file, a fixed port and host).
    fp_do new-case nc --job chat --max-output-tokens 8 --out "$dir/nc.json" -- \
      "$server" -m "$tiny" --host 0.0.0.0 --port 8080 -c 2048 -np 1 -t 2 -fa on --alias "$marker" --log-file "$dir/ignored.log"
    echo "$out"
    expect 0 'wrote .*/nc.json' 'model facts = llama, [0-9]+ layers, head size [0-9]+, trained context [0-9]+' \
      'launch.argv = \{port\}' 'launch.argv = without --log-file' 'expect.backend = CPU' 'model.sha256 = [0-9a-f]{64}' \
      'flag = on "on", off "off", use on' 'runtime version = '
    grep -q '"{model}"' "$dir/nc.json" && grep -q '"{port}"' "$dir/nc.json" && grep -q '"{host}"' "$dir/nc.json" &&
      grep -q '"{flag}"' "$dir/nc.json" && grep -q '"{context}"' "$dir/nc.json" || fail "placeholders missing: $(cat "$dir/nc.json")"
    argv=$(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["launch"]["argv"]))' "$dir/nc.json")
    ! grep -q -- '--log-file\|8080\|0\.0\.0\.0' <<<"$argv" || fail "the launch kept what it must not: $argv"
    fp_do new-case nc --job chat --out "$dir/nc.json" -- "$server" -m "$tiny"
    expect 2 'exists; --force replaces it'
    run_case "$dir/nc.json"
    echo "$out"
    expect 0 'nc +pass +active \(CPU [0-9]+\)'
    # The requests named the model by its alias (the server answers to it).
    grep -q "^launch.timed = .*--alias $marker" "$(result_of nc)" || fail "no result for nc"
    ;;

  attached)
    key="fp-test-key-$$-$RANDOM"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    cmd=("$server")
    [ -n "${FLASHPROOF_LOADER:-}" ] && cmd=("$FLASHPROOF_LOADER" --library-path "$FLASHPROOF_LIBRARY_PATH" "$server")
    # Started as a service would be: its own session, a log file, an API key, verbose scheduler output.
    GGML_SCHED_DEBUG=2 setsid "${cmd[@]}" -m "$tiny" --host 127.0.0.1 --port "$port" -c 2048 -np 1 -t 2 -fa on -v \
      --alias "$marker" --api-key "$key" --log-file "$dir/server.log" >"$dir/server.stdout" 2>&1 &
    server_pid=$!
    trap 'kill -TERM -- -$server_pid 2>/dev/null; wait $server_pid 2>/dev/null' EXIT
    for _ in $(seq 1 300); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
    curl -sf "http://127.0.0.1:$port/health" >/dev/null || { tail "$dir/server.stdout"; fail "the hand-started server never became ready"; }
    ep="http://127.0.0.1:$port"

    FP_TEST_KEY=$key fp_do new-case att --job chat --max-output-tokens 8 --out "$dir/att.json" --endpoint "$ep" \
      --model "$marker" --api-key-env FP_TEST_KEY --log "$dir/server.log" --require placement
    echo "$out"
    expect 0 'attach.api_key_env = FP_TEST_KEY' 'attach.log_file = ' 'expect.evidence = placement'
    FP_TEST_KEY=$key run_case "$dir/att.json"
    echo "$out"
    expect 0 'att +pass +active \(CPU [0-9]+\) \[placement\]'
    r=$(result_of att)
    for p in '^cold.ready_ms = not measured: attached' '^attach.log = log file ' '^verdict = active' \
             '^verdict.levels_unavailable = .*only at start-up, before this run began' '^runtime.build = [0-9]+'; do
      grep -qE -- "$p" "$r" || { cat "$r" >&2; fail "result lacks: $p"; }
    done

    # A required level the log window cannot give fails, with the reason: never a pass on what is there.
    FP_TEST_KEY=$key fp_do new-case att-log --job chat --max-output-tokens 8 --out "$dir/att-log.json" --endpoint "$ep" \
      --model "$marker" --api-key-env FP_TEST_KEY --log "$dir/server.log" --require log,placement
    FP_TEST_KEY=$key run_case "$dir/att-log.json"
    expect 1 'level 1 log is required and yielded nothing' 'only at start-up, before this run began'

    # The log from a command (as journalctl -fu / docker logs -f / kubectl logs -f), stopped at the end.
    FP_TEST_KEY=$key fp_do new-case att-cmd --job chat --max-output-tokens 8 --out "$dir/att-cmd.json" --endpoint "$ep" \
      --model "$marker" --api-key-env FP_TEST_KEY --require placement --log-command tail -n 20 -F "$dir/server.log"
    FP_TEST_KEY=$key run_case "$dir/att-cmd.json"
    expect 0 'att-cmd +pass +active \(CPU [0-9]+\) \[placement\]'
    grep -q "^attach.note.1 = dropped the [0-9]* bytes" "$(result_of att-cmd)" || fail "the command's replay was not dropped"
    sleep 0.3
    ! pgrep -f -- "tail -n 20 -F $dir/server.log" >/dev/null || fail "the log command was left running"

    # No log at all: every level unavailable, said plainly; the case fails on "no evidence".
    FP_TEST_KEY=$key fp_do new-case att-nolog --job chat --max-output-tokens 8 --out "$dir/att-nolog.json" --endpoint "$ep" \
      --model "$marker" --api-key-env FP_TEST_KEY
    FP_TEST_KEY=$key run_case "$dir/att-nolog.json"
    expect 1 'no evidence' 'attached without a log'

    # The server's own errors, with status and body: a wrong key (401), an unknown endpoint (404).
    FP_TEST_KEY=wrong-$key run_case "$dir/att.json"
    expect 2 'HTTP 401: "Invalid API Key"; body: \{'
    run_case "$dir/att.json"
    expect 2 '\$FP_TEST_KEY is not set'
    mkdir -p "$dir/wrong-path"
    sed "s#\"endpoint\": \"$ep\"#\"endpoint\": \"$ep/no-such-prefix\"#" "$dir/att.json" >"$dir/wrong-path/att.json"
    FP_TEST_KEY=$key run_case "$dir/wrong-path/att.json"
    expect 2 "$ep/no-such-prefix/.*HTTP 404"

    # The key is in no file flashproof wrote (cases, results, logs) and in none of its output.
    written=("$dir"/*.json "$dir/results" "$dir/wrong-path" "$dir/flashproof-output.txt")
    if grep -rqF -- "$key" "${written[@]}"; then
      grep -rlF -- "$key" "${written[@]}" >&2; fail "the API key was written"
    fi
    ;;
  *) fail "unknown scenario $scenario" ;;
esac
for _ in $(seq 1 30); do [ -z "$(leftovers)" ] || [ "$scenario" = attached ] && break; sleep 0.1; done
[ "$scenario" = attached ] || [ -z "$(leftovers)" ] || fail "runtime processes left behind: $(leftovers)"
echo "newcase $scenario: ok"
