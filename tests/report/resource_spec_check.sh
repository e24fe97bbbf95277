#!/usr/bin/env bash
# GPUs as CTest resources, on a machine without GPUs: a hand-written resource spec with two GPUs,
# and a scratch project that registers cases through the real flashproof_add_cases()
# (cmake/FlashproofCases.cmake, what find_package(flashproof) provides).
#  1. flashproof_add_cases gives a CUDA case RESOURCE_GROUPS gpus:1 and no CPU lock, a CPU case the CPU lock;
#  2. four tests declaring gpus:1 under `ctest -j4 --resource-spec-file` each see one GPU through
#     `flashproof gpus --assigned` (what the harness hands the runtime as CUDA_VISIBLE_DEVICES), both
#     GPUs are used, two run at once, and never two on one GPU at the same time;
#  3. the CUDA case, run for real here, is skipped with its reason (no GPU), never passed.
# usage: resource_spec_check.sh FLASHPROOF REPO_ROOT WORK_DIR
set -uo pipefail
FP=$1 ROOT=$2 WORK=$3
fail() { echo "FAIL: $*"; echo "working files kept in $WORK"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK/proj/cases" "$WORK/log" || exit 1

cat >"$WORK/spec.json" <<'JSON'
{"version": {"major": 1, "minor": 0},
 "local": [{"gpus": [{"id": "0", "slots": 1}, {"id": "1", "slots": 1}]}]}
JSON

# Two cases from the real chat case: one expecting CUDA0, one the CPU.
model=$(python3 -c "import json;print(json.load(open('$ROOT/cases/chat-tiny-short.json'))['model']['path'])")
for kind in gpu cpu; do
  python3 - "$ROOT/cases/chat-tiny-short.json" "$WORK/proj/cases/$kind-case.json" "$kind" "$ROOT/$model" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["name"] = sys.argv[3] + "-case"
c["model"]["path"] = sys.argv[4]; c["model"].pop("recipe", None)
if sys.argv[3] == "gpu": c["expect"]["backend"] = "CUDA0"
json.dump(c, open(sys.argv[2], "w"), indent=2)
PY
done

cat >"$WORK/proj/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(resource_check NONE)
enable_testing()
add_executable(flashproof::flashproof IMPORTED)
set_target_properties(flashproof::flashproof PROPERTIES IMPORTED_LOCATION "$FP")
set(FLASHPROOF_EXPECT_FAILURE_SCRIPT "$ROOT/tests/expect_failure.cmake")
include("$ROOT/cmake/FlashproofCases.cmake")
flashproof_add_cases(DIR cases)
foreach(i 1 2 3 4)
  add_test(NAME hold:\${i} COMMAND bash "$ROOT/tests/report/hold_gpu.sh" "$FP" "$WORK/log/\${i}")
  set_tests_properties(hold:\${i} PROPERTIES RESOURCE_GROUPS "gpus:1" LABELS hold)
endforeach()
CMAKE
cmake -S "$WORK/proj" -B "$WORK/build" >"$WORK/configure.log" 2>&1 || { cat "$WORK/configure.log"; fail "configure"; }

# 1. The registration.
ctest --test-dir "$WORK/build" --show-only=json-v1 >"$WORK/tests.json" || fail "ctest --show-only"
python3 - "$WORK/tests.json" <<'PY' || fail "registration (above)"
import json, sys
tests = {t["name"]: {p["name"]: p["value"] for p in t.get("properties", [])} for t in json.load(open(sys.argv[1]))["tests"]}
ok = True
def check(cond, what):
    global ok
    print(("ok   " if cond else "FAIL ") + what); ok &= cond
for name in ("case:gpu-case", "golden:gpu-case"):
    p = tests[name]
    groups = p.get("RESOURCE_GROUPS", [])
    check(groups and groups[0]["requirements"] == [{".type": "gpus", "slots": 1}], f"{name} declares RESOURCE_GROUPS gpus:1: {groups}")
    check("RESOURCE_LOCK" not in p, f"{name} takes no CPU lock")
    check("gpu" in p.get("LABELS", []), f"{name} labelled gpu")
    check(p.get("SKIP_RETURN_CODE") == 125, f"{name} SKIP_RETURN_CODE 125")
    check(any(e == "FLASHPROOF_CTEST=1" for e in p.get("ENVIRONMENT", [])), f"{name} prints CTest measurements")
p = tests["case:cpu-case"]
check(p.get("RESOURCE_LOCK") == ["runtime-cpu"] and "RESOURCE_GROUPS" not in p, "case:cpu-case takes the CPU lock, no GPU")
check(all(l in p.get("LABELS", []) for l in ("cpu", "llama-server", "chat", "model-tiny", "case")), f"case:cpu-case labels {p.get('LABELS')}")
check(p.get("TIMEOUT", 0) == 120 * 2 + 60, f"case:cpu-case timeout from plan.timeout_s: {p.get('TIMEOUT')}")
sys.exit(0 if ok else 1)
PY

# 2. Four GPU tests on two GPUs, four at a time.
ctest --test-dir "$WORK/build" -L hold -j4 --resource-spec-file "$WORK/spec.json" >"$WORK/hold.log" 2>&1 ||
  { cat "$WORK/hold.log"; fail "the GPU tests under the resource spec"; }
python3 - "$WORK/log" <<'PY' || fail "GPU allocation (above)"
import glob, sys
runs = []
for f in sorted(glob.glob(sys.argv[1] + "/*")):
    first, end = open(f).read().split("\n")[:2]
    gpu, start = first.split()
    runs.append((gpu, float(start), float(end)))
    print(f"test {f[-1]}: CUDA_VISIBLE_DEVICES={gpu} {float(start):.2f}..{float(end):.2f}")
ok = len(runs) == 4 and {r[0] for r in runs} == {"0", "1"}
clash = [(a, b) for a in runs for b in runs if a < b and a[0] == b[0] and a[1] < b[2] and b[1] < a[2]]
parallel = [(a, b) for a in runs for b in runs if a < b and a[0] != b[0] and a[1] < b[2] and b[1] < a[2]]
print("both GPUs used:", ok, "| two tests on one GPU at once:", len(clash), "| pairs run in parallel:", len(parallel))
sys.exit(0 if ok and not clash and parallel else 1)
PY

# 3. The CUDA case here: skipped with the reason, never passed.
ctest --test-dir "$WORK/build" -R '^case:gpu-case$' -FA '.*' --resource-spec-file "$WORK/spec.json" --output-on-failure -V \
  >"$WORK/gpu-case.log" 2>&1
grep -Eq 'case:gpu-case .*(\*\*\*Skipped|Not Run)' "$WORK/gpu-case.log" || { tail -30 "$WORK/gpu-case.log"; fail "case:gpu-case was not skipped"; }
grep -o 'SKIP: .*' "$WORK/gpu-case.log" | head -1
grep -q 'SKIP: ' "$WORK/gpu-case.log" || fail "the skip gave no reason"
echo "resource spec check: pass"
