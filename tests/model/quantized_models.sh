#!/usr/bin/env bash
# The generator's weights as llama.cpp reads and serves them (issue 40): the same bytes whatever the
# thread count; q8_0, q4_0 and q4_K files that llama.cpp's own reader (python3-gguf from the sid
# prefix) dequantizes to the f16 file's weights within a quantization step; and each quantized model
# served by the real llama-server through a case drafted by `flashproof new-case` from its command
# line, run, passed, with fused attention proven active.
#   usage: quantized_models.sh FLASHPROOF_BINARY WORK_DIR
set -uo pipefail
fp=$1 work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
recipe=$root/tests/model/small-256.json
mkdir -p "$work"
dir=$(mktemp -d "$work/quantized.XXXXXX")
marker="fp-quantized-$$"
fail() { echo "QUANTIZED MODELS TEST FAILED: $*" >&2; exit 1; }
leftovers() { pgrep -f -- "$marker" | grep -v "^$$\$" || true; }

# shellcheck disable=SC1091
. "${FLASHPROOF_CACHE:-/var/cache/flashproof}/env.sh" 2>/dev/null || true
[ -n "${FLASHPROOF_GGUF_PYTHONPATH:-}" ] && [ -d "$FLASHPROOF_GGUF_PYTHONPATH/gguf" ] || { echo "SKIP: no python3-gguf in the sid prefix (run ci/setup.sh)"; exit 125; }
server=${FLASHPROOF_LLAMA_SERVER:-}
[ -n "$server" ] && [ -x "$server" ] || { echo "SKIP: no llama-server (run ci/setup.sh)"; exit 125; }

make() {  # make THREADS [--weight-type T]: prints the sha256 the generator reports
  local out
  out=$("$fp" make-model "$recipe" --root "$root" --threads "$@" 2>&1) || fail "make-model $*: $out"
  echo "$out" >>"$dir/make-model.txt"
  grep -oE 'sha256 [0-9a-f]{64}' <<<"$out" | cut -d' ' -f2
}
gen=$root/fixtures/models/generated/test
rm -f "$gen"/small-256*.gguf
a=$(make 1) && rm -f "$gen/small-256.gguf" && b=$(make 3)
[ -n "$a" ] && [ "$a" = "$b" ] || fail "f16 bytes depend on the thread count: $a (1 thread) vs $b (3 threads)"
for t in q8_0 q4_0 q4_k; do
  a=$(make 1 --weight-type $t) && rm -f "$gen/small-256-$t.gguf" && b=$(make 2 --weight-type $t)
  [ -n "$a" ] && [ "$a" = "$b" ] || fail "$t bytes depend on the thread count: $a vs $b"
  [ "$(sha256sum "$gen/small-256-$t.gguf" | cut -d' ' -f1)" = "$b" ] || fail "$t: the sha256 reported is not the file's"
done
cat "$dir/make-model.txt"

PYTHONPATH=$FLASHPROOF_GGUF_PYTHONPATH /usr/bin/python3 "$root/tests/model/check_gguf.py" "$gen/small-256.gguf" \
  q8_0="$gen/small-256-q8_0.gguf" q4_0="$gen/small-256-q4_0.gguf" q4_k="$gen/small-256-q4_k.gguf" || fail "llama.cpp's reader disagrees (above)"

for t in q8_0 q4_0 q4_k; do
  model=$gen/small-256-$t.gguf
  out=$("$fp" new-case "q-$t" --job chat --max-output-tokens 8 --out "$dir/q-$t.json" -- \
        "$server" -m "$model" -c 2048 -np 1 -t 2 -fa on --alias "$marker" 2>&1) || { echo "$out"; fail "new-case $t"; }
  grep -q 'model facts = llama, 2 layers, head size 64' <<<"$out" || { echo "$out"; fail "new-case $t: the model's facts"; }
  out=$("$fp" run "$dir/q-$t.json" --repetitions 1 --warmup 0 --quiet --record-missing-answers --golden "$dir/golden" --results "$dir/results" 2>&1)
  rc=$?
  echo "$out"
  [ $rc = 0 ] || fail "run $t: exit $rc"
  grep -qE "q-$t +pass +active \(CPU [0-9]+\)" <<<"$out" || fail "run $t: not passed active"
done
[ -z "$(leftovers)" ] || fail "runtime processes left behind: $(leftovers)"
rm -f "$gen"/small-256*.gguf
echo "quantized models: q8_0, q4_0 and q4_K read back by llama.cpp's reader and served active by llama-server"
