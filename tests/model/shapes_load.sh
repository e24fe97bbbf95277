#!/usr/bin/env bash
# Every recipe of fixtures/models/shapes/ loads in the real llama.cpp here: each recipe's metadata
# and vocabulary (name, general.name, vocabulary size, weight type, context) unchanged, its layers cut
# to one of 64 wide so the file is a few MB, generated and loaded by the sid prefix's llama-bench
# (one prompt pass of 8 tokens). A runtime that refuses a file for its metadata refuses the full
# shape the same way on a GPU, minutes into a device call: llama.cpp b11669 refused a file named
# "phi-3" whose vocabulary lacked Phi-3's "<|end|>" (fixtures/models/shapes/phi-3-mini.json, gguf_name).
#   usage: shapes_load.sh FLASHPROOF_BINARY WORK_DIR
set -uo pipefail
fp=$1 work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck disable=SC1091
. "${FLASHPROOF_CACHE:-/var/cache/flashproof}/env.sh" 2>/dev/null || true
bench=${FLASHPROOF_PREFIX:-}/usr/bin/llama-bench
[ -n "${FLASHPROOF_PREFIX:-}" ] && [ -x "$bench" ] || { echo "SKIP: no llama-bench in the sid prefix (run ci/setup.sh)"; exit 125; }
mkdir -p "$work"
dir=$(mktemp -d "$work/shapes.XXXXXX")
fails=0 n=0
for recipe in "$root"/fixtures/models/shapes/*.json; do
  name=$(basename "$recipe" .json)
  small=$dir/$name.json
  python3 - "$recipe" "$small" "$dir/$name.gguf" <<'PY' || { echo "FAIL $name: could not cut the recipe"; fails=$((fails + 1)); continue; }
import json, sys
r = json.load(open(sys.argv[1]))
r.pop("head_dim", None); r.pop("sha256", None)
r.update(n_layer=1, n_embd=64, n_head=1, n_head_kv=1, n_ff=256, output=sys.argv[3])
json.dump(r, open(sys.argv[2], "w"))
PY
  out=$("$fp" make-model "$small" --root "$root" --threads 2 2>&1) || { echo "FAIL $name: make-model: $out"; fails=$((fails + 1)); continue; }
  log=$("$FLASHPROOF_LOADER" --library-path "$FLASHPROOF_LIBRARY_PATH" "$bench" -m "$dir/$name.gguf" -p 8 -n 0 -r 1 -t 2 2>&1)
  rc=$?
  n=$((n + 1))
  if [ $rc -ne 0 ] || ! grep -q '| *pp8 *|' <<<"$log"; then
    echo "FAIL $name: llama-bench exit $rc: $(grep -E 'error loading model|error:' <<<"$log" | head -2 | tr '\n' ' ')"
    fails=$((fails + 1))
  else
    echo "ok   $name: $(grep -oE 'sha256 [0-9a-f]{12}' <<<"$out") loaded, general.name and vocabulary as the full shape's"
  fi
  rm -f "$dir/$name.gguf"
done
[ "$n" -gt 0 ] || { echo "FAIL: no recipe under fixtures/models/shapes"; exit 1; }
echo "shape recipes: $((n - fails)) of $n load in llama.cpp (work files in $dir)"
[ "$fails" -eq 0 ]
