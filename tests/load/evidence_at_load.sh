#!/usr/bin/env bash
# Evidence at the job's load (issue 13), against the real llama-server: the batch case's evidence pass
# sends its whole round at once (4 prompts, 4 slots), not one stream, so its placement evidence
# covers graphs of 4 sequences in flight. Checks: the run passes; result.txt says
# "signals.evidence_load = 4 requests at once (the batch job's round)" and the verdict used placement;
# the evidence log shows all 4 slots processing before the first one is released, and FLASH_ATTN node
# records scheduled while all 4 were in flight.
#   usage: evidence_at_load.sh FLASHPROOF_BINARY WORK_DIR
set -uo pipefail
fp=$1 work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$work"
dir=$(mktemp -d "$work/run.XXXXXX")
fail() { echo "EVIDENCE-AT-LOAD TEST FAILED: $* (files kept in $dir)" >&2; exit 1; }

[ -f "$root/fixtures/models/generated/tiny.gguf" ] ||
  { echo "SKIP: tiny model not generated (flashproof make-model fixtures/models/tiny.json)"; exit 125; }
server=${FLASHPROOF_LLAMA_SERVER:-${FLASHPROOF_PREFIX:-/var/cache/flashproof/sid-prefix}/usr/bin/llama-server}
[ -e "$server" ] || { echo "SKIP: no llama-server at $server (run ci/setup.sh)"; exit 125; }

"$fp" run "$root/cases/batch-tiny.json" --repetitions 1 --warmup 0 --results "$dir/results" --golden "$dir/golden" \
  --record-missing-answers --out "$dir/run" --quiet >"$dir/stdout" 2>&1
rc=$?
cat "$dir/stdout"
[ $rc -eq 0 ] || fail "flashproof run cases/batch-tiny.json exited $rc"
r=$dir/run/result.txt
grep -qx "signals.evidence_load = 4 requests at once (the batch job's round)" "$r" || fail "result.txt does not state the load: $(grep evidence_load "$r")"
grep -q "^verdict.levels_used = .*placement" "$r" || fail "the verdict did not use placement: $(grep levels_used "$r")"
python3 - "$dir/run/evidence.log" <<'PY' || fail "the evidence log does not show placement at 4 requests in flight (above)"
import re, sys
text = open(sys.argv[1], errors="replace").read()
# Records, not lines: the scheduler writes several into one physical line.
events = [(m.start(), m.group(0)) for m in re.finditer(
    r"launch_slot_: id +\d+ \| task \d+ \| processing task|release: id +\d+ \| task \d+ \| stop processing|\(FLASH_ATTN\)", text)]
launched, first_release, fourth_at = set(), None, None
for pos, ev in events:
    if ev.startswith("launch_slot_"):
        launched.add(re.search(r"id +(\d+)", ev).group(1))
        if len(launched) == 4 and fourth_at is None:
            fourth_at = pos
    elif ev.startswith("release") and first_release is None:
        first_release = pos
if fourth_at is None or (first_release is not None and first_release < fourth_at):
    print(f"slots processing before the first release: {sorted(launched)}"); sys.exit(1)
nodes = sum(1 for pos, ev in events if ev == "(FLASH_ATTN)" and fourth_at < pos < (first_release or len(text)))
print(f"4 slots in flight; {nodes} FLASH_ATTN node records scheduled while all 4 were in flight")
sys.exit(0 if nodes > 0 else 1)
PY
echo "PASS: evidence at the batch job's load (files in $dir)"
rm -rf "$dir"
