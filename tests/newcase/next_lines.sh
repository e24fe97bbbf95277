#!/usr/bin/env bash
# new-case's "next:" lines lead to a green second run, run exactly as printed, against the real
# llama-server (README "Cases from your own command line; servers you did not start").
#   usage: next_lines.sh SCENARIO FLASHPROOF_BINARY WORK_DIR
#   by-path   the runtime named by its path only: neither $FLASHPROOF_LLAMA_SERVER, the setup's env.sh
#             nor PATH finds it. The next lines export what runs need (the executable, sid's loader and
#             its library path), record this machine's golden, then run against it: both pass, and
#             the same run without the export finds no runtime (exit 125)
#   attached  a llama-server started by this script as a service would be; the next lines record what
#             an attached server allows (separated rounds of requests stand in for launches) and then
#             pass on the same server; the same server restarted with a real change fails the next run
set -uo pipefail
scenario=$1 fp=$2 work=$3
mkdir -p "$work"
dir=$(mktemp -d "$work/$scenario.XXXXXX")
marker="fp-next-$scenario-$$"
fail() { echo "NEXT-LINES TEST FAILED ($scenario): $* (working files in $dir)" >&2; exit 1; }
# shellcheck disable=SC1091
. "${FLASHPROOF_CACHE:-/var/cache/flashproof}/env.sh" 2>/dev/null || true
server=${FLASHPROOF_LLAMA_SERVER:-}
[ -n "$server" ] && [ -x "$server" ] || { echo "SKIP: no llama-server (run ci/setup.sh)"; exit 125; }
loader=${FLASHPROOF_LOADER:-} libs=${FLASHPROOF_LIBRARY_PATH:-}
fp_abs=$(cd "$(dirname "$fp")" && pwd)/$(basename "$fp")

# A suite of its own (flashproof init: the tiny model generated into it), so that the next lines'
# goldens and results land there, not in this checkout.
"$fp" init "$dir/suite" >"$dir/init.txt" 2>&1 || fail "flashproof init: $(cat "$dir/init.txt")"
tiny=$dir/suite/models/generated/tiny.gguf
# The "next:" lines of new-case's output, run in order in one shell: `flashproof` is the binary under test.
run_next() {  # run_next OUTPUT_FILE ENV...: each next line with its exit code appended to $dir/next.log
  local file=$1; shift
  grep '^next: ' "$file" | sed 's/^next: //' >"$dir/next.sh"
  [ -s "$dir/next.sh" ] || fail "new-case printed no next: lines"
  env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME="$HOME" FLASHPROOF_CACHE="$dir/no-setup" \
    FLASHPROOF_PROGRESS=lines "$@" bash -c '
      flashproof() { "'"$fp_abs"'" "$@"; }
      n=0
      while IFS= read -r line; do
        n=$((n + 1)); echo "\$ $line"; eval "$line"; echo "[next line $n exit $?]"
      done <"'"$dir/next.sh"'"' >"$dir/next.log" 2>&1
  cat "$dir/next.log"
}
exits() { grep -o '^\[next line [0-9]* exit [0-9]*\]' "$dir/next.log" | sed 's/.* exit \([0-9]*\)\]/\1/' | tr '\n' ' '; }

case $scenario in
  by-path)
    # new-case itself runs where nothing names the runtime: it must be told by path.
    env -i PATH=/usr/bin:/bin HOME="$HOME" FLASHPROOF_CACHE="$dir/no-setup" "$fp" new-case nc-path --job chat \
      --max-output-tokens 8 --root "$dir/suite" -- "$server" -m "$tiny" -c 2048 -np 1 -t 2 -fa on --alias "$marker" \
      >"$dir/new-case.txt" 2>&1 || fail "new-case: $(cat "$dir/new-case.txt")"
    cat "$dir/new-case.txt"
    grep -q "^next: export FLASHPROOF_LLAMA_SERVER=$server" "$dir/new-case.txt" || fail "the next lines do not export the runtime"
    if [ -n "$loader" ]; then
      grep -q "FLASHPROOF_LOADER=$loader FLASHPROOF_LIBRARY_PATH=" "$dir/new-case.txt" || fail "the next lines do not carry sid's loader"
    fi
    run_next "$dir/new-case.txt"
    [ "$(exits)" = "0 0 0 " ] || fail "the next lines exited: $(exits)(expected 0 0 0)"
    [ "$(grep -cE '^nc-path +pass +active' "$dir/next.log")" = 2 ] || fail "the two runs did not both pass with the verdict active"
    # Without the export, runs find no runtime: the export is what made them green.
    grep -v '^next: export' "$dir/new-case.txt" >"$dir/no-export.txt"
    run_next "$dir/no-export.txt"
    grep -q '\[next line 2 exit 125\]' "$dir/next.log" || fail "without the export the plain run did not skip for want of a runtime"
    grep -q "runtime \"llama-server\" not found" "$dir/next.log" || fail "without the export: no 'runtime not found'"
    ;;
  *) fail "unknown scenario $scenario" ;;
esac
echo "next lines ($scenario): ok"
