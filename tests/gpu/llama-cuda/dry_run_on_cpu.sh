#!/usr/bin/env bash
# A dry run of a device script on this CPU, before it costs device time: the work folder laid out as
# run_device.sh's setup leaves it (the prefix, library-path, probe-path), but with ci/setup.sh's sid
# prefix (the CPU build of the same llama.cpp) in place of the bundle's CUDA prefix, and a bundle of
# this build's flashproof (bundle_harness.sh). No GPU is used: the kernel probe cannot attach, so
# kernel figures are missing, but every step's command line, the wrappers, the timeouts and the
# packing run as on the device. CTest `device-scripts:figures-dry-run` runs it (tests/device_scripts).
# usage (repository root, after cmake --build build):
#   FP_FIGURES_CONTEXT=2048 bash tests/gpu/llama-cuda/dry_run_on_cpu.sh figures_device.sh /tmp/dry-out ab gate:hostslow
# The model: fixtures/models/tiny.json's shape, written to FP_WORK (device scripts delete their model at
# the end), given to the scripts as FP_FIGURES_RECIPE.
# env: FP_WORK (default /tmp/fp-dry-run; emptied first), FP_DRY_FLASHPROOF (default build/flashproof)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
script=$1; out=$2; shift 2
env_file=${FLASHPROOF_CACHE:-/var/cache/flashproof}/env.sh
[ -f "$env_file" ] || { echo "SKIP: no $env_file (ci/setup.sh installs the sid llama.cpp)"; exit 125; }
. "$env_file"
export FP_WORK=${FP_WORK:-/tmp/fp-dry-run}
rm -rf "$FP_WORK"; mkdir -p "$FP_WORK/bundle"
bash "$here/bundle_harness.sh" "${FP_DRY_FLASHPROOF:-$root/build/flashproof}" "$FP_WORK/bundle" 2>/dev/null ||
  { echo "bundle_harness.sh failed" >&2; exit 1; }
ln -s "$FLASHPROOF_PREFIX" "$FP_WORK/prefix"
echo "$FLASHPROOF_LIBRARY_PATH" >"$FP_WORK/library-path"
echo "$FP_WORK/no-probe-on-a-cpu.so" >"$FP_WORK/probe-path"
python3 - "$root" "$FP_WORK" <<'PY'
import json, sys
root, work = sys.argv[1], sys.argv[2]
r = json.load(open(root + "/fixtures/models/tiny.json"))
r.pop("sha256", None)
r.update(name="dry-run", output=work + "/dry-run.gguf")
json.dump(r, open(work + "/dry-run.json", "w"), indent=2)
PY
export FP_FIGURES_RECIPE=${FP_FIGURES_RECIPE:-$FP_WORK/dry-run.json}
exec bash "$here/$script" "$FP_WORK/bundle" "$out" "$@"
