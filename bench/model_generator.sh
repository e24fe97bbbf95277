#!/usr/bin/env bash
# The model generator's time, throughput and peak memory (issue 40): `flashproof make-model` on a
# recipe, once per thread count, each time into an empty file; GNU time's wall clock and maximum RSS
# beside the generator's own figures, sha256sum of the file beside the sha256 it reports (the same
# bytes for every thread count).
#   usage: bench/model_generator.sh FLASHPROOF RECIPE [THREADS...]   (default threads: 1 and nproc)
#   e.g.   bench/model_generator.sh build/flashproof fixtures/models/shapes/llama-3.2-1b.json 1 2
# The model is deleted afterwards. Prints one line per thread count.
set -euo pipefail
fp=$1 recipe=$2; shift 2
threads=("$@"); ((${#threads[@]})) || threads=(1 "$(nproc)")
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["output"])' "$recipe")
for t in "${threads[@]}"; do
  rm -f "$root/$out"
  sync
  line=$( { /usr/bin/time -f 'time: wall %e s, max RSS %M KiB' "$fp" make-model "$recipe" --root "$root" --threads "$t"; } 2>&1)
  sha=$(sha256sum "$root/$out" | cut -d' ' -f1)
  reported=$(grep -oE 'sha256 [0-9a-f]{64}' <<<"$line" | cut -d' ' -f2)
  echo "threads $t: $(grep -v '^time:' <<<"$line" | sed 's/.*bytes sha256 [0-9a-f]* //'); $(grep '^time:' <<<"$line"); sha256sum $( [ "$sha" = "$reported" ] && echo agrees || echo "DIFFERS ($sha)")"
  echo "  sha256 $reported"
done
rm -f "$root/$out"
