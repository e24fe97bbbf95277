#!/usr/bin/env bash
# On the device, after run_device.sh (sid's llama-server with the CUDA backend unpacked into FP_WORK,
# the probe built) and with flashproof in the bundle (bundle_harness.sh): checks issue 13's kernel set,
# evidence at the job's load and per-process tallies live. Each step prints PASS or FAIL; the exit
# status is the number of FAILs.
#   1. a golden of live-cuda-realistic-fa-on from 3 launches: its kernel set (evidence pass and one
#      probed check per launch) is in the golden file;
#   2. the same case against it: every kernel family "same", no KERNEL or EVIDENCE LOST failure;
#   3. a kernel swap: the same case launched with -ub 1 (one token per micro-batch: no mma kernel) fails
#      "KERNEL SWAP: fattn-mma kernels ..." in `run`, in the golden gate and in `flashproof diff`;
#   4. evidence lost: the case without the probe library fails "EVIDENCE LOST: level 3 (kernels)";
#   5. evidence at the job's load: a batch case (-np 4, 4 prompts at once) passes with its evidence
#      pass and probed check at "4 requests at once";
#   6. per-process tallies: a parent and a spawned child process, both running CUDA through PyTorch,
#      leave one tally each (kernels.<pid>.tsv), merged by `flashproof explain` ("2 processes").
# usage: kernelset_device.sh BUNDLE OUTDIR   (writes OUTDIR/kernelset.txt and OUTDIR/kernelset.tar.gz)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
B=$(cd "$1" && pwd); O=$2
W=${FP_WORK:-/tmp/fp-llama-cuda}
K=$W/kernelset
rm -rf "$K" && mkdir -p "$K/cases" "$K/swap" "$O"
. "$here/flashproof_env.sh" || exit 1
fp_here() { (cd "$root" && fp "$@"); }
T=$O/kernelset.txt
: >"$T"
fails=0
say() { echo "$*" | tee -a "$T" >&2; }
check() {  # check NAME EXPECTED_RC FILE PATTERN...
  local name=$1 want=$2 file=$3 rc; shift 3
  rc=$(cat "$file.rc")
  local ok=1
  [ "$rc" = "$want" ] || ok=0
  for p in "$@"; do grep -qE -- "$p" "$file" || { ok=0; say "  missing in $file: $p"; }; done
  if [ $ok = 1 ]; then say "PASS $name (exit $rc)"; else say "FAIL $name (exit $rc, expected $want)"; fails=$((fails + 1)); fi
}
step() {  # step FILE COMMAND...: runs flashproof, keeps its output and exit status
  local f=$1; shift
  say "== flashproof $*"
  fp_here "$@" >"$f" 2>&1
  echo $? >"$f.rc"
  cat "$f" >>"$T"
}

case=tests/gpu/llama-cuda/cases/live-cuda-realistic-fa-on.json
G=$K/golden R=$K/results

# 1-2: the golden and a run against it.
step "$K/1.txt" run "$case" --launches 3 --record-missing --golden "$G" --results "$R" --quiet
check "golden recorded from 3 launches" 0 "$K/1.txt"
gfile=$(ls "$G"/*/live-cuda-realistic-fa-on.json 2>/dev/null | head -1)
cp -f "$gfile" "$K/golden-live-cuda-realistic-fa-on.json" 2>/dev/null
python3 -c 'import json,sys; k=json.load(open(sys.argv[1]))["kernel_families"]; print(k); assert "fattn-mma" in k and k["fattn-mma"]["n"] == 4, k' \
  "$gfile" >>"$T" 2>&1 && say "PASS golden holds the kernel set from 4 probed launches" || { say "FAIL golden kernel set"; fails=$((fails + 1)); }
# (Timing against a 3-launch golden may still flag a figure: what this step checks is the kernel set.)
step "$K/2.txt" run "$case" --golden "$G" --results "$R" --out "$K/run-same"
if grep -E "^golden\.[0-9]+ = kernels: fattn-mma: .* \(same;" "$K/run-same/result.txt" >/dev/null &&
   ! grep -E "^failure\.[0-9]+ = (KERNEL|EVIDENCE LOST)" "$K/run-same/result.txt" >/dev/null; then
  say "PASS same case against its golden: kernel families same (exit $(cat "$K/2.txt.rc"))"
else
  say "FAIL same case against its golden: kernel set or evidence differs"; fails=$((fails + 1))
fi

# 3: a kernel swap, the same case name with -ub 1.
python3 - "$root/$case" "$K/swap/live-cuda-realistic-fa-on.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["launch"]["argv"] += ["-ub", "1"]
json.dump(c, open(sys.argv[2], "w"), indent=2)
PY
step "$K/3.txt" run "$K/swap/live-cuda-realistic-fa-on.json" --golden "$G" --results "$R" --out "$K/run-swap"
check "kernel swap against the golden" 1 "$K/3.txt" "KERNEL SWAP: fattn-mma(, [a-z-]+)* kernels (replaced by|lost)"
id=$(basename "$(dirname "$gfile")")
step "$K/3g.txt" gate "$K/swap/live-cuda-realistic-fa-on.json" --golden "$G" --results "$R" --baseline "$id" --quiet
check "golden gate names the swap" 1 "$K/3g.txt" "PROBLEM KERNEL SWAP: fattn-mma"
step "$K/3d.txt" diff "$K/run-same" "$K/run-swap"
check "diff names the swap" 1 "$K/3d.txt" "CHANGED KERNEL SWAP: fattn-mma"

# 4: evidence lost, the probe library gone.
FLASHPROOF_PROBE_LIB=/nonexistent/libflashproof_probe.so step "$K/4.txt" run "$case" --golden "$G" --results "$R" --out "$K/run-noprobe"
check "evidence lost without the probe" 1 "$K/4.txt" "EVIDENCE LOST: level 3 \(kernels\)"

# 5: the job's load, a batch case of 4 prompts with 4 slots.
python3 - "$root/$case" "$K/cases/live-cuda-realistic-batch.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["name"] = "live-cuda-realistic-batch"
c["job"] = "batch"
c["shape"]["prompt_set"] = "batch"
c["shape"].pop("long_prompt", None)
argv = c["launch"]["argv"]
argv[argv.index("-np") + 1] = "4"
json.dump(c, open(sys.argv[2], "w"), indent=2)
PY
step "$K/5.txt" run "$K/cases/live-cuda-realistic-batch.json" --golden "$G" --results "$R" --record-missing-answers --out "$K/run-batch"
check "batch case at its load" 0 "$K/5.txt"
grep -E "^signals.evidence_load = 4 requests at once" "$K/run-batch/result.txt" >/dev/null &&
  grep -E "^signals.probed_check = attention (kernels|path) identical .*load: 4 requests at once" "$K/run-batch/result.txt" >/dev/null &&
  say "PASS evidence and probed check at 4 requests at once" || { say "FAIL load not in result.txt"; fails=$((fails + 1)); }
grep -E "^(kernels|signals|verdict)\." "$K/run-batch/result.txt" >>"$T"

# 6: two CUDA processes, one tally each, merged.
mkdir -p "$K/mp"
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  # A file, not stdin: a spawned child imports the parent's main module by its path.
  cat >"$K/mp/two_processes.py" <<'PY'
import multiprocessing as mp
import torch
def work():
    x = torch.randn(256, 256, device="cuda"); (x @ x).sum().item()
if __name__ == "__main__":
    work()
    ctx = mp.get_context("spawn")
    p = ctx.Process(target=work); p.start(); p.join()
    print("child exit", p.exitcode)
PY
  CUDA_INJECTION64_PATH=$FLASHPROOF_PROBE_LIB FLASHPROOF_KERNEL_TALLY=$K/mp/kernels.%p.tsv python3 "$K/mp/two_processes.py" >>"$T" 2>&1
  ls "$K/mp" >>"$T"
  : >"$K/mp/empty.log"
  step "$K/6.txt" explain --runtime llama-server --log "$K/mp/empty.log" --kernels "$K/mp/kernels.tsv"
  grep -E "^kernels: .*kernels\.[0-9]+\.tsv \+ .*kernels\.[0-9]+\.tsv \(2 processes\)" "$K/6.txt" >/dev/null &&
    say "PASS two processes, two tallies, merged" || { say "FAIL per-process tallies"; fails=$((fails + 1)); }
else
  say "SKIP per-process tallies: no PyTorch with CUDA here"
fi

say "kernelset: $fails failure(s)"
tar -C "$K" -czf "$O/kernelset.tar.gz" --exclude='*.gguf' . 2>/dev/null
exit "$fails"
